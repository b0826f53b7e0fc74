"""Sweeps: rows equal evaluate(), regimes agree with the exact per-term
regime, model totals add up by hand, and the table exports round-trip."""

import csv
import importlib
import io
import json
import math
import re
import sys
from functools import lru_cache

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.model.layer import OUTPUTS
from roofline_sym.numeric.shapes import ShapeSet, grid, shape_set
from roofline_sym.numeric.sweep_table import (COLUMNS, model_grid, sweep, sweep_chunks, sweep_totals,
                                        write_sweep)
from roofline_sym.numeric.table import Table
from roofline_sym.numeric.writers import UNITS, header, write_csv, write_json


def export_rows(rows):
    """The oracle of the writers, row by row in plain Python: keys with units,
    whole-number float columns (not times) as int, NaN and infinities as None."""
    def whole_number(v):  # NaN aside
        return v != v or (math.isfinite(v) and v == int(v) and abs(v) < 2 ** 53)

    keys = list(dict.fromkeys(k for r in rows for k in r))
    whole = {k for k in keys if k not in UNITS and all(
        isinstance(r.get(k), float) and whole_number(r[k]) for r in rows)}

    def value(k, v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return int(v) if k in whole else v

    return [{header(k): value(k, v) for k, v in r.items()} for r in rows]


@lru_cache(maxsize=None)
def _model(recipe="tensorwise", gpu="NVIDIA H100", preset="torchao", mode="training",
           fuse=True):
    # cached: each bound model compiles once for the whole file
    return rs.linear(recipe, mode=mode, fuse=fuse, preset=preset).on(gpu)


def _models():
    return [_model(), _model("rowwise", "h200", "default", fuse=False),
            _model("mxfp8", "b200", "default", mode="inference", fuse=True)]


@lru_cache(maxsize=None)
def _result():
    return sweep(_models(), ["pow2_extended", shape_set("llama3-8b", M=2048)])


def test_rows_equal_evaluate():
    res = _result()
    assert res.columns == list(COLUMNS)
    assert len(res) == 3 * (10 + 7)
    start = 0
    for m in _models():
        for s in (shape_set("pow2_extended"), shape_set("llama3-8b", M=2048)):
            rows = slice(start, start + len(s))
            direct = m.evaluate(M=s.M, K=s.K, N=s.N)
            for key in OUTPUTS:
                assert np.array_equal(res[key][rows], direct[key]), key  # bit for bit
            faster = direct["lowp_time"] < direct["baseline_time"]
            assert np.array_equal(res["faster"][rows], faster)
            assert set(res["gpu"][rows]) == {m.hardware.name}
            assert set(res["recipe"][rows]) == {m.recipe.name}
            assert res["name"][rows].tolist() == list(s.names)
            assert np.array_equal(res["count"][rows], s.counts)
            start += len(s)


def test_shape_forms():
    m = _model()
    M, K, N = [1024, 2048], 4096, [[512], [8192]]  # broadcasts to 2 x 2
    by_tuple = sweep(m, (M, K, N))
    direct = m.evaluate(M=M, K=K, N=N)
    assert np.array_equal(by_tuple["speedup"], direct["speedup"].reshape(-1))
    by_map = sweep(m, {"M": M, "K": K, "N": N})
    assert np.array_equal(by_map["speedup"], by_tuple["speedup"])
    g = sweep(m, grid(M=[1024, 2048], K=4096, N=[512, 8192]))
    assert len(g) == 4 and g["M"].tolist() == [1024, 1024, 2048, 2048]
    assert sweep(m, "pow2")["M"].tolist() == shape_set("pow2").M.tolist()


def _exact_group_regimes(model, m, k, n):
    """Per kernel group, the regime with the most time, from Term.regime (exact)."""
    values = {rs.M: m, rs.K: k, rs.N: n}
    out = {}
    for col, side, group in (("baseline_gemm_regime", "baseline", "gemm"),
                             ("lowp_gemm_regime", "lowp", "gemm"),
                             ("lowp_overhead_regime", "lowp", "overhead")):
        acc = {}
        for t in model.terms:
            if (t.side, t.group) == (side, group):
                r = t.regime(values)
                acc[r] = acc.get(r, 0) + float(t.expr.xreplace(values))
        out[col] = max(acc, key=acc.get)
    return out


@pytest.mark.parametrize("model_args", [(), ("rowwise", "h200", "default", "training", False),
                                        ("mxfp8", "b200", "default", "inference", True)])
def test_regimes_match_exact_term_regimes(model_args):
    model = _model(*model_args)
    rng = np.random.default_rng(1)
    m, k, n = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), 25))) for _ in range(3))
    res = sweep(model, (m, k, n))
    for i in range(len(m)):
        want = _exact_group_regimes(model, int(m[i]), int(k[i]), int(n[i]))
        got = {c: res[c][i] for c in want}
        assert got == want, (m[i], k[i], n[i])


def test_regime_extremes():
    res = sweep(_model(), (np.array([16.0, 65536.0]), 16.0 * np.array([1, 4096]),
                           16.0 * np.array([1, 4096])))
    assert res["baseline_gemm_regime"].tolist() == ["launch", "compute"]
    assert res["lowp_gemm_regime"].tolist() == ["launch", "compute"]
    assert res["lowp_overhead_regime"].tolist() == ["launch", "memory"]


def test_breakeven_once_per_model(monkeypatch):
    # patch the function where the sweep looks it up
    module = importlib.import_module("roofline_sym.numeric.sweep_table")
    calls = []
    real = module.breakeven

    def counting(model, **kw):
        calls.append(model)
        return real(model, **kw)

    monkeypatch.setattr(module, "breakeven", counting)
    models = [rs.linear("tensorwise").on("h100"), rs.linear("rowwise").on("h100")]
    sweep(models, ["pow2", "llama", "sweep"])
    assert calls == models
    # kept with the model: a second sweep (or its totals) solves nothing again
    sweep(models, "pow2")
    module.sweep_totals(models[:1], "llama")
    assert calls == models


def test_cube_context():
    m = _model()
    be = rs.breakeven(m, along="cube")
    res = sweep(m, ["pow2_extended", "sweep"])
    assert set(res["cube_breakeven"]) == {be.root_values[0]}
    size = np.cbrt(res["M"] * res["K"] * res["N"])
    assert np.array_equal(res["cube_size"], size)
    assert np.array_equal(res["faster_on_cube"], be.is_faster(size))
    # on the cube itself the break-even context is the exact answer
    cube = slice(0, 10)
    assert np.array_equal(res["faster_on_cube"][cube], res["faster"][cube])


def test_model_total_by_hand():
    # Llama 3 8B at M = 2048: 7 layers, 32 blocks each; training runs 3 GEMMs of
    # 2 M K N per layer, so FLOPs = 3 * 2048 * 13,958,643,712 (2 * 6,979,321,856
    # linear parameters, see test_shapes).
    res = _result()
    totals = res.model_total()
    assert len(totals) == 3 * 2
    row = [r for r in totals.rows if r["shape_set"] == "llama3-8b"
           and r["recipe"] == "tensorwise"][0]
    one = sweep(_model(), shape_set("llama3-8b", M=2048))
    base = sum(32 * t for t in one["baseline_time"].tolist())
    lowp = sum(32 * t for t in one["lowp_time"].tolist())
    assert row["baseline_time"] == pytest.approx(base, rel=1e-15)
    assert row["lowp_time"] == pytest.approx(lowp, rel=1e-15)
    assert row["speedup"] == pytest.approx(base / lowp, rel=1e-15)
    assert row["flops"] == 3 * 2048 * 13_958_643_712
    assert (row["M"], row["layers"], row["count"]) == (2048, 7, 224)
    inference = [r for r in totals.rows if r["mode"] == "inference"
                 and r["shape_set"] == "llama3-8b"][0]
    assert inference["flops"] == 2048 * 13_958_643_712
    assert math.isnan([r for r in totals.rows if r["shape_set"] == "pow2_extended"][0]["M"])


def _check_csv(table, text):
    back = list(csv.DictReader(io.StringIO(text)))
    assert list(back[0]) == [header(c) for c in table.columns] and len(back) == len(table)
    for want, got in zip(table.rows, back):
        for col, value in want.items():
            cell = got[header(col)]
            if isinstance(value, float):
                assert (cell == "") if math.isnan(value) else float(cell) == value
            else:
                assert cell == str(value)  # str, bool ("True"), int


def test_csv_round_trip(tmp_path):
    res = sweep(_model("mxfp8", "b200", "default", "inference", True), ["pow2", "llama"])
    path = tmp_path / "out.csv"
    res.to_csv(path)
    _check_csv(res, path.read_text())
    buf = io.StringIO()
    totals = res.model_total()  # pow2's M varies: NaN, written as an empty cell
    totals.to_csv(buf)
    assert math.isnan(totals["M"][0])
    _check_csv(totals, buf.getvalue())


def test_json_round_trip(tmp_path):
    res = sweep(_model(), ["pow2", "llama"])
    path = tmp_path / "out.json"
    res.to_json(path)
    # floats, bools, strings exact; keys carry units
    assert json.loads(path.read_text()) == [{header(k): v for k, v in r.items()}
                                            for r in res.rows]
    buf = io.StringIO()
    res.model_total().to_json(buf)
    assert json.loads(buf.getvalue()) == [
        {header(k): (None if isinstance(v, float) and math.isnan(v) else v)
         for k, v in r.items()} for r in res.model_total().rows]


def test_to_pandas_optional(monkeypatch):
    res = sweep(_model(), "pow2")
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    with pytest.raises(ImportError, match="pip install pandas"):
        res.to_pandas()


def test_to_pandas_when_installed():
    pytest.importorskip("pandas")
    df = sweep(_model(), "pow2").to_pandas()
    assert list(df.columns) == list(COLUMNS) and len(df) == 5


def test_progress_callback():
    seen = []
    sweep(_models()[:2], ["pow2", "llama"], progress=lambda *state: seen.append(state))
    assert seen == [(5, 18), (9, 18), (14, 18), (18, 18)]


def test_model_grid_skips_unsupported():
    names = [(m.recipe.name, m.hardware.name) for m in
             model_grid(["rowwise", "mxfp4_cutlass"], ["a100", "h100", "b200"])]
    assert names == [("rowwise", "H100 SXM"), ("rowwise", "B200 (HGX)"),
                     ("mxfp4_cutlass", "B200 (HGX)")]
    with pytest.raises(ValueError, match="fp8"):
        model_grid("rowwise", "a100", skip_unsupported=False)
    # torchao's RTX 5090 has no efficiencies: skipped rather than guessed
    assert "NVIDIA GeForce RTX 5090" not in {
        m.hardware.name for m in model_grid("tensorwise", preset="torchao")}


@pytest.mark.parametrize("models, shapes, message", [
    (rs.linear("tensorwise"), "pow2", "has no hardware"),
    ([], "pow2", "no models"),
    ("tensorwise", "pow2", "models .bound rs.linear"),
    (None, 42, "shapes must be"),
    (None, {"M": 1, "K": 1}, "lacks"),
    (None, (1, -1, 1), "K must be positive"),
    (None, "pow3", "unknown shape set 'pow3' .did you mean 'pow2'.*; valid: pow2"),
])
def test_bad_arguments(models, shapes, message):
    with pytest.raises(ValueError, match=message):
        sweep(_model() if models is None else models, shapes)


def test_table_format():
    text = sweep(_model(), "sweep").format(["M", "K", "N", "speedup"], max_rows=3)
    lines = text.splitlines()
    assert lines[0].split() == ["M", "K", "N", "speedup"] and lines[-1] == "... 509 more rows"


def test_table_format_prints_integral_floats_as_integers():
    # NaN (no value: M of a total over several M) prints as "-", never "nan"
    from roofline_sym.numeric.sweep_table import Table

    t = Table({"M": np.array([16384.0, 1e15, 2.5e15, 1.0]),
               "x": np.array([0.123456, math.nan, -3.0, 123456.7])})
    rows = [line.split() for line in t.format().splitlines()]
    assert rows[1:] == [["16384", "0.1235"], ["1e+15", "-"], ["2.5e+15", "-3"],
                        ["1", "1.235e+05"]]
    text = sweep(_model(), grid(16384, 8192, 28672)).format(["M", "K", "N"])
    assert text.splitlines()[1].split() == ["16384", "8192", "28672"]


# -- streaming --------------------------------------------------------------------------
def _sets():
    rng = np.random.default_rng(2)
    m, k, n = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), 40))) for _ in range(3))
    return ["pow2", shape_set("llama3-8b", M=2048), ShapeSet.from_arrays(m, k, n)]


def test_chunks_are_the_sweep_a_chunk_at_a_time():
    models, sets = _models(), _sets()
    whole = sweep(models, sets)
    chunks = list(sweep_chunks(models, sets, rows=7))
    assert all(0 < len(t) <= 7 and t.columns == list(COLUMNS) for t in chunks)
    assert sum(len(t) for t in chunks) == len(whole)
    for c in COLUMNS:
        joined = np.concatenate([t[c] for t in chunks])
        assert joined.tolist() == whole[c].tolist(), c
    totals = sweep_totals(models, sets).rows
    for got, want in zip(totals, whole.model_total().rows, strict=True):
        assert got.keys() == want.keys()
        for key, value in want.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-15, nan_ok=True), key
            else:
                assert got[key] == value, key
    with pytest.raises(ValueError, match=r"sweep_chunks: rows must be in 1\.\."):
        sweep_chunks(models, sets, rows=0)
    with pytest.raises(ValueError, match="no models"):
        sweep_chunks([], sets)  # checked when called, not at the first chunk


@pytest.mark.parametrize("writer", [write_csv, write_json])
def test_writers_write_each_chunk_before_the_next_is_computed(writer):
    out = io.StringIO()
    seen = []
    chunks = sweep_chunks(_models(), _sets(), rows=5,
                          progress=lambda done, total: seen.append((done, out.getvalue())))
    writer(chunks, out)
    assert len(seen) > 10
    for done, text in seen:  # every row computed so far is already written
        if writer is write_csv:
            assert text.count("\n") == done + 1
        else:
            assert text.count('"gpu"') == done


def test_writers_write_what_the_standard_library_writes():
    table = Table({
        "x": np.array([0.1, math.nan, -0.0, 1e300, 5e-324] * 60),
        "w": np.array([1.0, 2.0, math.nan, 4.0, -0.0] * 60),  # whole: written as integers
        "n": np.arange(300),
        "b": np.array([True, False, True] * 100),
        "s": np.array(['a,b', 'say "hi"', "line\nbreak", "plain", "é"] * 60, dtype=object),
        "o": np.array([None, 1.5, "x", math.nan, 2] * 60, dtype=object),
        "k": np.full(300, "constant", dtype=object),
        "lowp_time": np.full(300, 3.0),  # a time: whole, yet a float with its unit
    })
    assert table.whole_columns() == {"w"}
    rows = export_rows(table.rows)  # names with units, whole columns int, NaN None
    want = io.StringIO()
    w = csv.writer(want, lineterminator="\n")
    w.writerow(list(rows[0]))
    w.writerows([("" if v is None else v) for v in r.values()] for r in rows)
    assert write_csv(table._slices(64), None, {"w"}) == want.getvalue() == table.to_csv()
    assert write_json(table._slices(64), None, {"w"}) == json.dumps(rows, allow_nan=False) \
        == table.to_json()
    with pytest.raises(ValueError, match="JSON compliant"):
        write_json([Table({"x": np.array([math.inf])})])


def test_cli_streams_the_same_text_as_the_api(capsys, tmp_path):
    from roofline_sym.cli import main

    models = [rs.linear(r).on("h100") for r in ("tensorwise", "rowwise")]
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("M,K,N,name\n" + "".join(f"{64 * i},{4096 + i},8192,l{i}\n"
                                               for i in range(1, 30)))
    base = ["sweep", "--gpu", "h100", "--recipe", "tensorwise", "--recipe", "rowwise",
            "--shapes", str(shapes)]
    res = sweep(models, ShapeSet.from_file(shapes))
    for flag, fmt in (("--csv", "to_csv"), ("--json", "to_json")):
        assert main(base + [flag]) == 0
        assert capsys.readouterr().out.rstrip("\n") == getattr(res, fmt)().rstrip("\n"), flag
        assert write_sweep(models, shapes_set := ShapeSet.from_file(shapes), None,
                           flag[2:]) == getattr(sweep(models, shapes_set), fmt)()
    assert main(base + ["--max-rows", "3"]) == 0
    text = capsys.readouterr().out.splitlines()
    want = res.format(["gpu", "recipe", "name", "M", "K", "N", "speedup", "lowp_gemm_regime",
                       "lowp_overhead_regime"], max_rows=3).splitlines()
    assert text == [f"training; {res.caption}"] + want and text[-1] == "... 55 more rows"
    assert main(base + ["--total", "--csv"]) == 0
    assert capsys.readouterr().out == res.model_total().to_csv()


# -- what a printed table shows ----------------------------------------------------------
def test_a_printed_sweep_always_shows_which_layer_each_row_is():
    res = sweep(model_grid(["tensorwise", "rowwise"], ["h100"]), "llama3-8b")
    lines = repr(res).splitlines()
    assert lines[1].split()[:7] == ["gpu", "recipe", "shape_set", "name", "M", "K", "N"]
    # q_proj of Llama 3 8B at its default M: 8192 x 4096 x 4096 (shapes.toml)
    assert _cells(lines[2])[3:7] == ["self_attn.q_proj", "8192", "4096", "4096"]
    assert all(len(line) <= 100 for line in lines[1:])
    assert str(res) == repr(res)


def test_expert_rows_show_their_groups():
    res = sweep(rs.linear("rowwise").on("h100"), "dsv3-671b-moe")
    head, *rows = repr(res).splitlines()[1:-1]
    assert head.split()[4:8] == ["M", "K", "N", "groups"]
    assert res["groups"].tolist() == shape_set("dsv3-671b-moe").groups.tolist()
    plain = sweep(rs.linear("rowwise").on("h100"), "llama3-8b")
    assert "groups" not in repr(plain).splitlines()[1] and set(plain["groups"]) == {1.0}


def test_long_layer_names_shorten_in_the_middle_not_the_shapes():
    from roofline_sym.numeric.shapes import ShapeSet

    name = "model.layers.*.self_attn.q_proj + model.layers.*.self_attn.o_proj + lm_head.x"
    s = ShapeSet(name="mine", names=(name, "b"), M=np.array([8192.0, 16.0]),
                 K=np.array([4096.0, 32.0]), N=np.array([4096.0, 64.0]),
                 counts=np.array([1.0, 1.0]))
    lines = repr(sweep(rs.linear("tensorwise").on("h100"), s)).splitlines()[1:]
    assert all(len(line) <= 100 for line in lines)
    cells = _cells(lines[1])
    # its start and end stay, with the shape and the speedup beside it
    assert cells[3].startswith("model.lay") and cells[3].endswith("lm_head.x")
    assert "..." in cells[3] and len(cells[3]) == 24
    assert cells[4:7] == ["8192", "4096", "4096"] and lines[0].split()[7] == "speedup"


def _cells(line):
    """A printed row's cells (columns are two spaces apart at least; a GPU name
    has one inside)."""
    return re.split(r"\s{2,}", line.strip())


@pytest.mark.parametrize("asked, meant", [("layer", "name"), ("spedup", "speedup"),
                                          ("lowp_time_s", "lowp_time"), ("Groups", "groups")])
def test_an_unknown_column_names_the_close_ones(asked, meant):
    res = sweep(_model(), "pow2")
    for attempt in (lambda: res.format([asked]), lambda: res[asked]):
        with pytest.raises(KeyError, match=f"unknown column '{asked}' .did you mean '{meant}'"):
            attempt()


# -- totals of the layers that pay -------------------------------------------------------
def _by_hand(res, keep):
    """The total of one model's sweep with the rows ``keep`` converted: the bf16
    time elsewhere, each row weighted by its count."""
    w, base, lowp = res["count"], res["baseline_time"], res["lowp_time"]
    return float(np.sum(w * base)) / float(np.sum(w * np.where(keep, lowp, base)))


def test_model_total_converts_only_the_layers_asked():
    model = rs.linear("rowwise", preset="torchao").on("NVIDIA H100")
    res = sweep(model, "llama3-8b")
    everything = res.model_total().rows[0]
    assert everything["covers"] == "all linear layers" and "converted" not in everything
    assert res.model_total(convert="all").rows == [everything]
    # profitable: each layer at the faster of its two times, so never below 1
    # and never below converting all
    best = res.model_total(convert="profitable").rows[0]
    assert best["speedup"] == pytest.approx(_by_hand(res, res["faster"]), rel=1e-14)
    assert best["speedup"] >= max(1.0, best["speedup_all"])
    assert best["speedup_all"] == pytest.approx(everything["speedup"], rel=1e-14)
    assert best["converted"] == float(np.sum(res["count"][res["faster"]]))
    # by name: the MLP's up projection only (32 blocks)
    named = res.model_total(convert={"mlp.up_proj"}).rows[0]
    assert named["speedup"] == pytest.approx(_by_hand(res, res["name"] == "mlp.up_proj"),
                                             rel=1e-14)
    assert (named["converted"], named["covers"]) == (32.0, "the named linear layers")
    assert sweep_totals(model, "llama3-8b", convert={"mlp.up_proj"}).rows == [named]


def test_model_total_takes_a_torchao_module_filter():
    pytest.importorskip("torch")
    model = rs.linear("rowwise").on("h100")
    res = sweep(model, "llama3-70b")
    keep = rs.float8_module_filter("h100", "rowwise", M=8192, skip_fqns=("o_proj",))
    row = res.model_total(convert=keep).rows[0]
    decided = np.array([keep.keeps(k, n) and "o_proj" not in name
                        for name, k, n in zip(res["name"], res["K"], res["N"])])
    assert row["speedup"] == pytest.approx(_by_hand(res, decided), rel=1e-14)
    assert row["covers"] == "linear layers the filter keeps"
    assert row["converted"] == float(np.sum(res["count"][decided]))


def test_model_total_refuses_what_it_cannot_decide():
    res = sweep(rs.linear("rowwise").on("h100"), "llama3-8b")
    with pytest.raises(ValueError, match="unknown layer 'mlp.up_prj' .did you mean 'mlp.up_proj'"):
        res.model_total(convert=["mlp.up_prj"])
    with pytest.raises(ValueError, match="unknown convert 'profitible'.*'profitable'"):
        res.model_total(convert="profitible")
    with pytest.raises(TypeError, match="convert must be"):
        res.model_total(convert=3)
    merged = ShapeSet(name="m", names=("a + b",), M=np.array([8192.0]), K=np.array([4096.0]),
                      N=np.array([4096.0]), counts=np.array([2.0]))
    with pytest.raises(ValueError, match="not all converted or all kept"):
        sweep(rs.linear("rowwise").on("h100"), merged).model_total(convert={"a"})
