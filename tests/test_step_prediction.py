"""predict_steps: each row through rs.step, its band from other sources' residuals."""

import math

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.fidelity.published_tables import step_prediction as sp
from roofline_sym.fidelity.published_tables.step_table import read_steps

ROW = {"source_id": "mine", "gpu": "h100", "gpus": "8", "model": "llama3-8b",
       "recipe": "tensorwise", "mode": "training", "seq_len": "8192", "local_batch": "1",
       "dp_shard": "8", "compile": "yes", "ac": "selective", "measured_speedup": "1.2"}


def test_a_prediction_is_the_step_models():
    out = rs.fidelity.predict_steps([ROW, {**ROW, "seq_len": "2048"}])
    want = rs.step(rs.architecture("llama3-8b"), "tensorwise", gpus=8, compile=True, ac="selective").on(
        "h100").evaluate(seq_len=[8192, 2048], local_batch=1)
    for name in ("speedup", "baseline_step_s", "lowp_step_s"):
        np.testing.assert_allclose(out[name], np.asarray(want[name]).reshape(-1), rtol=1e-12)
    assert np.all(out["low"] < out["speedup"]) and np.all(out["speedup"] < out["high"])
    assert set(out) == {"speedup", "low", "high", "baseline_step_s", "lowp_step_s"}


def test_the_measured_speedup_changes_nothing():
    a = rs.fidelity.predict_steps([ROW])
    b = rs.fidelity.predict_steps([{**ROW, "measured_speedup": "9.9"}])
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_wider_intervals_give_wider_bands():
    narrow, wide = (rs.fidelity.predict_steps([ROW], interval=i) for i in (0.5, 0.9))
    assert wide["low"][0] < narrow["low"][0] and narrow["high"][0] < wide["high"][0]
    for bad in (0, 1, 1.5, True, "0.8"):
        with pytest.raises(ValueError, match="interval must be a fraction"):
            rs.fidelity.predict_steps([ROW], interval=bad)


def test_the_band_leaves_out_the_rows_source_and_weighs_sources_alike():
    (row,) = read_steps([{**ROW, "source_id": "a"}])
    # source a (its own: left out) and b with one residual each, c with three;
    # weights: b 1, c 1/3 each; sorted values -0.2 (b), 0.1, 0.1, 0.1 (c);
    # midpoints of the cumulative weight over the total 2: b at 0.25,
    # c's at 0.583, 0.75, 0.917.  The 50% quantile interpolates between b (0.25)
    # and the first c (0.583): -0.2 + 0.3 * (0.25 / 0.333) = 0.025; q at 0.9:
    # 0.1; q at 0.1: below b's midpoint, -0.2
    pool = [("a", "training", 5.0), ("b", "training", -0.2)] + [("c", "training", 0.1)] * 3
    assert sp._weighted_quantiles(np.array([-0.2, 0.1, 0.1, 0.1]),
                                  np.array([1, 1 / 3, 1 / 3, 1 / 3]), [0.5])[0] == \
        pytest.approx(0.025)
    low, high = sp.step_band(row, 0.8, pool * 3)  # 12 training rows: enough of the kind
    assert (low, high) == (pytest.approx(math.exp(-0.1)), pytest.approx(math.exp(0.2)))


def test_a_serving_row_takes_all_residuals_when_its_kind_has_few():
    (row,) = read_steps([{**ROW, "mode": "decode", "recipe": "rowwise", "source_id": "x"}])
    pool = [("s", "serving", 1.0)] * 3 + [(f"t{i}", "training", i / 100 - 0.1)
                                          for i in range(20)]
    # 3 serving rows < MIN_ROWS: the band takes all 23; source s weighs as one of
    # 21 sources, so its residual of 1.0 (a factor exp(-1) = 0.37) stays outside
    low, high = sp.step_band(row, 0.8, pool)
    assert 0.5 < low < 1 < high < math.exp(0.1)


def test_the_stored_residuals_are_the_current_models():
    # the pool of the bands is written by benchmarks/bench_step_fidelity.py --write;
    # rerun it when the step model changes.  One source's runs recomputed here.
    path = rs.fidelity.published_tables.step_table.published_steps_path()
    stored = [r for r in _stored_rows() if r[0] == "ao-e2e-mi300x"]
    assert len(stored) == 3 and len(_stored_rows()) >= 30
    table = {r.line: r for r in read_steps(path)}
    got = sp.predict_rows([table[line] for _, line, _ in stored])["speedup"]
    for (_, line, value), predicted in zip(stored, got):
        assert math.log(predicted) - _measured_log(path, line) == pytest.approx(value, abs=0.02)


def _stored_rows():
    import csv
    with open(sp.step_residuals_path(), newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return [(r["source_id"], int(r["line"]), float(r["log_ratio"]))
            for r in csv.DictReader(lines)]


def _measured_log(path, line):
    import csv
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return math.log(float(rows[line - 1][header.index("measured_speedup")]))


def test_a_step_the_model_refuses_names_the_row():
    # a GPU whose links are not known (Gaudi 3), over more GPUs than one node
    row = {**ROW, "gpu": "gaudi3", "gpus": "512", "dp_shard": "512"}
    with pytest.raises(ValueError, match="<rows>: row 1: .*links"):
        rs.fidelity.predict_steps([row])
