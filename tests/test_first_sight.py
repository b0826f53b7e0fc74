"""The first-sight record: each new source scored by the shipped model before any use."""

import collections
import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.fidelity.published_tables import first_sight as fs
from roofline_sym.fidelity.published_tables import gpu_fits
from roofline_sym.fidelity.published_tables.speedup_table import kernels_path, published

ROOT = Path(__file__).resolve().parents[1]


def _row(source="new-src", **kw):
    row = {"source_id": source, "gpu": "h100", "recipe": "tensorwise", "mode": "inference",
           "workload": "gemm", "M": 8192, "K": 8192, "N": 8192, "measured_speedup": 1.5}
    row.update(kw)
    return row


# -- the shipped record ---------------------------------------------------------------------------
def test_the_record_files_have_their_columns():
    for path, columns in ((fs.record_path(), fs.RECORD_COLUMNS),
                          (fs.rows_path(), fs.ROW_COLUMNS)):
        with open(path, newline="") as f:
            assert tuple(next(csv.reader(f))) == columns, path.name


def test_every_recorded_source_is_in_the_published_data():
    speedups = set(published().source_id)
    with open(kernels_path(), newline="") as f:
        kernels = {r["source_id"] for r in csv.DictReader(f)}
    stored = fs.read_first_sight_rows()
    for rec in fs.read_first_sight():
        assert rec["source"] in speedups | kernels, rec["source"]
        assert rec["source"] in set(stored.table.source_id), rec["source"]
    recorded = [r["source"] for r in fs.read_first_sight()]
    assert len(recorded) == len(set(recorded)), "a source is scored once"
    assert set(stored.table.source_id) == set(recorded)


def test_each_record_is_recomputed_from_its_stored_predictions():
    stored = fs.read_first_sight_rows()
    for rec in fs.read_first_sight():
        again = stored.figures(rec["source"])
        for k in ("rows", "wrong", "decisive"):
            assert rec[k] == again[k], (rec["source"], k)
        for k in ("median", "p90"):  # stored to 4 decimals
            assert rec[k] == pytest.approx(again[k], abs=6e-5), (rec["source"], k)


def test_the_stored_rows_are_the_published_rows_of_their_source():
    t, stored = published(), fs.read_first_sight_rows()

    def key(table, i):
        return (str(table.source_id[i]), str(table.gpu[i]), str(table.recipe[i]),
                str(table.mode[i]), str(table.workload[i]), float(table.M[i]),
                float(table.K[i]), float(table.N[i]), str(table.implementation[i]),
                f"{float(table.measured[i]):.8g}")
    data = collections.Counter(key(t, i) for i in range(len(t)))
    for i in range(len(stored.table)):
        k = key(stored.table, i)
        assert data[k] > 0, k
        data[k] -= 1


def test_the_test_set_is_scored_at_first_sight_and_never_fitted():
    recorded = {r["source"] for r in fs.read_first_sight()}
    assert set(gpu_fits.TEST_SET) <= recorded
    t = published()
    held = np.isin(t.source_id, gpu_fits.TEST_SET)
    assert not (gpu_fits.scored(t) & held).any()
    for spec in gpu_fits.SPECS.values():
        assert not set(gpu_fits.kernel_rows(spec).source_id) & set(gpu_fits.TEST_SET)


# -- scoring ----------------------------------------------------------------------------------------
def test_a_score_is_the_shipped_models_errors():
    # measured speedups placed at known ratios to the shipped prediction p:
    # m = p / 0.8 gives |p/m - 1| = 0.2, m = p / 1.25 gives 0.25, m = p / 1.5 gives 0.5;
    # median 0.25, p90 = 0.25 + 0.8 * (0.5 - 0.25) = 0.45 (numpy's linear percentile)
    shapes = [(8192, 8192, 8192), (1024, 4096, 4096), (16, 8192, 8192)]
    rows = [_row(M=m, K=k, N=n) for m, k, n in shapes]
    p = rs.fidelity.predict_speedups(rows)
    for row, pi, ratio in zip(rows, p, (0.8, 1.25, 1.5)):
        row["measured_speedup"] = float(pi / ratio)
    seen = fs.score_first_sight(rows, date="2026-12-06", model_commit="abc")
    rec = seen.record
    assert rec["source"] == "new-src" and rec["date"] == "2026-12-06"
    assert rec["model_commit"] == "abc" and rec["rows"] == 3
    assert rec["median"] == pytest.approx(0.25) and rec["p90"] == pytest.approx(0.45)
    np.testing.assert_allclose(seen.predicted, p, rtol=1e-12)


def test_a_wrong_verdict_counts_only_where_the_measurement_decides():
    # the shipped model predicts a GEMM-only fp8 speedup above 1 at 8192^3: a
    # measurement of 0.5 is a wrong verdict, one of 0.97 (within 5% of 1) is not decisive
    rows = [_row(measured_speedup=0.5), _row(measured_speedup=0.97, M=4096)]
    assert (rs.fidelity.predict_speedups(rows) > 1).all()
    rec = fs.score_first_sight(rows).record
    assert (rec["wrong"], rec["decisive"]) == (1, 1)


@pytest.mark.parametrize("rows, match", [
    ([_row(), _row(source="other")], "one source"),
    ([_row(measured_speedup="")], "measured speedup"),
    ([_row(M="")], "single shape"),
    ([_row(workload="e2e-train-llama3-8b")], "single shape"),
    ([_row(gpu="z80")], "z80"),
])
def test_a_score_refuses_what_it_cannot_score_whole(rows, match):
    with pytest.raises(ValueError, match=match):
        fs.score_first_sight(rows)


def test_a_score_refuses_a_date_that_is_not_one():
    with pytest.raises(ValueError):
        fs.score_first_sight([_row()], date="yesterday")


# -- the record written ----------------------------------------------------------------------------
def test_append_writes_what_reads_back_and_refuses_a_second_sight(tmp_path):
    record, rows = tmp_path / "first_sight.csv", tmp_path / "first_sight_rows.csv"
    a = fs.score_first_sight([_row("a"), _row("a", M=512, measured_speedup=1.1)],
                             date="2026-12-06")
    b = fs.score_first_sight([_row("b", measured_speedup=0.5)], date="2026-12-07")
    fs.append_first_sight(a, record, rows)
    fs.append_first_sight(b, record, rows)
    recs = fs.read_first_sight(record)
    stored = fs.read_first_sight_rows(rows)
    assert [r["source"] for r in recs] == ["a", "b"] and len(stored.table) == 3
    for rec, seen in zip(recs, (a, b)):
        assert rec["rows"] == seen.record["rows"]
        assert rec["median"] == pytest.approx(seen.record["median"], abs=6e-5)
        assert stored.figures(rec["source"])["median"] == pytest.approx(
            seen.record["median"], rel=1e-5)
    assert fs.pooled(stored)["rows"] == 3
    with pytest.raises(ValueError, match="already scored"):
        fs.append_first_sight(a, record, rows)
    shipped = fs.score_first_sight([_row(str(published().source_id[0]))])
    with pytest.raises(ValueError, match="first sight has passed"):
        fs.append_first_sight(shipped, record, rows)


def test_a_malformed_record_is_an_error_naming_the_line(tmp_path):
    bad = tmp_path / "first_sight.csv"
    bad.write_text(",".join(fs.RECORD_COLUMNS) + "\nx,2026-12-06,3,0.1,nan?,0,3,\n")
    with pytest.raises(ValueError, match="line 2.*p90"):
        fs.read_first_sight(bad)


def test_the_script_scores_new_rows_without_writing(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("first_sight_script",
                                                  ROOT / "benchmarks" / "first_sight.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    table = tmp_path / "new.csv"
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, list(_row()))
        w.writeheader()
        w.writerows([_row("fresh"), _row("fresh", M=256)])
    before = fs.record_path().read_bytes()
    assert script.main([str(table)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fresh: 2 rows at first sight, median ")
    assert fs.record_path().read_bytes() == before
    with open(table, "a", newline="") as f:
        csv.DictWriter(f, list(_row())).writerow(_row(str(published().source_id[0])))
    assert script.main([str(table)]) == 1
    assert script.main(["--pooled"]) == 0
    assert "first sight, pooled (the test score)" in capsys.readouterr().out


def test_each_record_names_a_commit_this_history_holds():
    # the model a source was scored with can be checked out again: its commit is
    # an ancestor of this checkout (blank only for a score made outside a checkout)
    import shutil
    import subprocess

    if shutil.which("git") is None or subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
    if shallow == "true":
        pytest.skip("a shallow clone lacks the history")
    for rec in fs.read_first_sight():
        commit = rec["model_commit"]
        assert commit, rec["source"]
        ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"],
                                  cwd=ROOT, capture_output=True)
        assert ancestor.returncode == 0, (rec["source"], commit)
