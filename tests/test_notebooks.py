"""The gallery (``notebooks/``) runs, and shows what its text says it shows.

Each notebook is executed once per session, cell by cell (``notebook_runner``:
no Jupyter kernel), the break-even maps at a small grid through their
``parameters`` cell; the tests then read what each cell showed (its value,
what it printed, what it displayed) and check it against oracles that do not
come from the cell itself: break-even points where the model's speedup
crosses 1, totals summed by hand from the per-layer rows, FLOP counts from
Llama 3 70B's published sizes, and the physical bounds of a speedup.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from notebook_runner import NOTEBOOK_DIR, Cell, code_cells, run

pytest.importorskip("matplotlib")

GALLERY = ("quickstart", "breakeven-maps", "model-sweep", "fidelity-report")
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# the maps at 6 x 6 cells and 4 solves per curve (the docs draw 40 x 40 and 16)
SMALL_MAPS = "resolution, points = 6, 4"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """``executed(name)``: the cells of notebook ``name``, run once per module,
    in a scratch directory (anything a notebook writes stays out of the tree)."""
    cache: dict[str, list[Cell]] = {}

    def get(name: str) -> list[Cell]:
        if name not in cache:
            with pytest.MonkeyPatch.context() as mp:
                mp.chdir(tmp_path_factory.mktemp(name))
                params = SMALL_MAPS if name == "breakeven-maps" else ""
                cache[name] = run(NOTEBOOK_DIR / f"{name}.ipynb", params)
        return cache[name]

    yield get
    import matplotlib.pyplot as plt

    plt.close("all")


def _speedup(model, M, K, N) -> float:
    return float(model.evaluate(M, K, N, integer_shapes=False)["speedup"])  # roots, cells


# -- the gallery as stored ----------------------------------------------------------
def test_the_gallery_is_the_notebooks_folder():
    assert {p.stem for p in NOTEBOOKS} == set(GALLERY)
    toctree = (NOTEBOOK_DIR.parent / "docs" / "gallery.md").read_text()
    assert [f"gallery/{n}" for n in GALLERY] == re.findall(r"^gallery/\S+", toctree, re.M)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_stored_without_outputs(path):
    # the documentation build runs them; outputs in the file would go stale
    cells = json.loads(path.read_text())["cells"]
    assert not [c for c in cells if c.get("outputs") or c.get("execution_count")]


# -- quickstart ---------------------------------------------------------------------
def test_quickstart_term_is_a_formula_no_faster_than_the_fp8_peak(executed):
    term = executed("quickstart")[0].value
    assert isinstance(term, sympy.Expr) and {rs.M, rs.K, rs.N} <= term.free_symbols
    hw = rs.hardware("h100")
    at = {rs.M: 8192, rs.K: 8192, rs.N: 8192, **hw.parameters}
    # the output GEMM does 2 M K N FLOPs: never faster than the fp8 peak allows
    assert float(term.xreplace(at)) >= 2 * 8192**3 / float(hw.peak_flops["fp8"])


def test_quickstart_speedups_rise_with_m_within_the_physical_limit(executed):
    cell = executed("quickstart")[1]
    assert "H100 SXM" in cell.stdout and "NVIDIA H100 80GB HBM3" in cell.stdout
    s = np.asarray(cell.value)
    # fp8 halves both the FLOP time and the bytes: no speedup reaches 2
    assert s.shape == (3,) and np.all((0 < s) & (s < 2)) and np.all(np.diff(s) > 0)


def test_quickstart_breakeven_is_where_the_speedup_crosses_one(executed):
    cells = executed("quickstart")
    mb = rs.linear("tensorwise", fuse=True).on("h100")
    (root,), faster = cells[2].value
    r = float(root)
    assert _speedup(mb, r, 8192, 8192) == pytest.approx(1, rel=1e-9)
    assert _speedup(mb, 0.9 * r, 8192, 8192) < 1 < _speedup(mb, 1.1 * r, 8192, 8192)
    assert faster == sympy.Interval.open(root, sympy.oo)
    assert f"M* = {r:.6g}" in cells[2].stdout
    (x,), regime = cells[3].value
    assert _speedup(mb, x, x, x) == pytest.approx(1, rel=1e-9)
    assert regime in ("compute", "memory", "launch")


def test_quickstart_closed_form_gives_torchaos_breakeven(executed):
    cells = executed("quickstart")
    closed = cells[4].value
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    assert rs.M not in closed.free_symbols and {rs.K, rs.N} <= closed.free_symbols
    assert closed.free_symbols - {rs.K, rs.N} <= set(hw.parameters)
    root = float(closed.xreplace({rs.K: 8192, rs.N: 8192, **hw.parameters}))
    torchao = rs.linear("tensorwise", fuse=True, preset="torchao").on(hw)
    assert _speedup(torchao, root, 8192, 8192) == pytest.approx(1, rel=1e-9)
    assert f"M* = {root:.6g}" in cells[5].stdout


def _printed_table(text: str) -> list[list[str]]:
    """The rows of a fixed-width table (header first); a GPU name has spaces,
    so a cell ends at two spaces or at a space before a number."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("...")]
    return [re.split(r"\s{2,}|(?<=\S) (?=[\d.-]+\b)", ln.strip()) for ln in lines]


def test_quickstart_model_totals_are_sums_a_gpu_can_run(executed):
    header, *rows = _printed_table(executed("quickstart")[6].stdout)
    assert header == ["gpu", "recipe", "baseline_time_s", "lowp_time_s", "speedup"]
    # MX block scaling is Blackwell's: only B200 runs mxfp8_cublas
    assert sorted((g, r) for g, r, *_ in rows) == sorted(
        [(g, r) for g in ("H100 SXM", "H200 SXM", "B200 (HGX)") for r in ("tensorwise", "rowwise")]
        + [("B200 (HGX)", "mxfp8_cublas")])
    shown = {(g, r): tuple(map(float, v)) for g, r, *v in rows}
    for (base, lowp, speedup) in shown.values():
        assert speedup == pytest.approx(base / lowp, abs=2e-3)
    # H200 is H100's compute with more bandwidth: the same bf16 time, a faster fp8 one
    for r in ("tensorwise", "rowwise"):
        assert shown["H200 SXM", r][0] == shown["H100 SXM", r][0]
        assert shown["H200 SXM", r][1] < shown["H100 SXM", r][1]


def test_quickstart_many_gpus_in_one_call_match_one_gpu_at_a_time(executed):
    shown = executed("quickstart")[7].value
    m = rs.linear("tensorwise", fuse=True)
    assert list(shown) == ["h100", "h200", "b200", "mi300x"]
    for gpu, s in shown.items():
        assert s == pytest.approx(_speedup(m.on(gpu), 8192, 8192, 8192), abs=5e-4)


# -- break-even maps ------------------------------------------------------------------
def _curve(ax, label):
    (line,) = [ln for ln in ax.lines if ln.get_label() == label]
    ks, ms = line.get_xdata(), line.get_ydata()
    return [(m, k) for m, k in zip(ms, ks) if np.isfinite(m)]


def test_maps_one_per_gpu_with_the_break_even_in_black(executed):
    figures = executed("breakeven-maps")[1].displayed
    names = ["H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X"]
    assert len(figures) == len(names)
    for fig, name in zip(figures, names):
        ax = fig.axes[0]
        assert ax.get_title().startswith(f"tensorwise (training), {name}\npreset default")
        (mesh,) = ax.collections
        assert mesh.get_array().size == 6 * 6  # the injected resolution
        (line,) = ax.lines
        assert line.get_color() == "k"
        mb = rs.linear("tensorwise").on(name)
        points = _curve(ax, "break-even (solver)")
        assert points, name
        for m, k in points:  # on the curve, fp8 and bf16 take equally long (N = K)
            assert _speedup(mb, m, k, k) == pytest.approx(1, rel=1e-6), (name, k)


def test_maps_cells_are_the_speedup_at_their_centre(executed):
    ax = executed("breakeven-maps")[1].displayed[0].axes[0]
    (mesh,) = ax.collections
    corners = mesh.get_coordinates()  # (rows + 1, cols + 1, 2): K, M at the edges
    values = np.asarray(mesh.get_array()).reshape(6, 6)
    mb = rs.linear("tensorwise").on("h100")
    for i, j in [(0, 0), (2, 3), (5, 5)]:
        k = np.sqrt(corners[i, j, 0] * corners[i, j + 1, 0])   # log-spaced: geometric centre
        m = np.sqrt(corners[i, j, 1] * corners[i + 1, j, 1])
        assert values[i, j] == pytest.approx(_speedup(mb, m, k, k), rel=1e-6)


def test_maps_curves_per_recipe_are_break_evens(executed):
    ax = executed("breakeven-maps")[2].value.axes[0]
    recipes = ["tensorwise", "rowwise", "mxfp8_cublas", "mxfp4_cutlass"]
    # one labelled curve per recipe (a recipe whose M* has more than one branch
    # draws the others unlabelled)
    assert [ln.get_label() for ln in ax.lines if not ln.get_label().startswith("_")] == recipes
    assert "B200 (HGX)" in ax.get_title()
    for recipe in recipes:
        mb = rs.linear(recipe).on("b200")
        points = _curve(ax, recipe)
        assert points, recipe
        for m, k in points:
            assert _speedup(mb, m, k, k) == pytest.approx(1, rel=1e-6), (recipe, k)


def test_maps_regime_map_and_table(executed):
    cells = executed("breakeven-maps")
    assert cells[3].value.axes[0].get_title().startswith("mxfp8_cublas (training), B200 (HGX)")
    lines = [ln for ln in cells[4].stdout.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["recipe (x*)", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X"]
    rows = {cells_[0]: cells_[1:] for cells_ in
            ([c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:])}
    assert list(rows) == ["tensorwise", "rowwise", "mxfp8_cublas"]
    assert rows["mxfp8_cublas"][:2] == ["n/a", "n/a"] and rows["mxfp8_cublas"][3] == "n/a"
    for recipe, xs in rows.items():
        for gpu, x in zip(header[1:], xs):
            if x != "n/a":  # the cube M = K = N = x* breaks even (x* printed rounded)
                assert _speedup(rs.linear(recipe).on(gpu), *[float(x)] * 3) == pytest.approx(
                    1, abs=1e-3), (recipe, gpu)
    assert "*preset default, casts not fused" in cells[4].stdout


# -- whole-model sweep ----------------------------------------------------------------
# Llama 3 70B: 80 layers, hidden 8192, 8 KV heads of 128, MLP 28672 (its config)
LLAMA3_70B_KN = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672)
PAIRS = sorted([(g, r) for g in ("H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X")
                for r in ("tensorwise", "rowwise", "blockwise")] + [("B200 (HGX)", "mxfp8_cublas")])


def test_sweep_rows_are_every_layer_of_every_pair_a_gpu_can_run(executed):
    res = executed("model-sweep")[0].value
    assert len(res) == 7 * len(PAIRS)
    assert sorted(set(zip(res["gpu"], res["recipe"]))) == PAIRS
    assert set(res["M"]) == {16384}


def test_sweep_totals_are_the_count_weighted_layer_sums(executed):
    res, totals = executed("model-sweep")[0].value, executed("model-sweep")[1].value
    assert len(totals) == len(PAIRS)
    for row in totals.rows:
        pick = (res["gpu"] == row["gpu"]) & (res["recipe"] == row["recipe"])
        base = float(np.sum(res["count"][pick] * res["baseline_time"][pick]))
        lowp = float(np.sum(res["count"][pick] * res["lowp_time"][pick]))
        assert (row["baseline_time"], row["lowp_time"]) == pytest.approx((base, lowp), rel=1e-12)
        assert row["speedup"] == pytest.approx(base / lowp, rel=1e-12)
        # training: three GEMMs of 2 M K N FLOPs per layer
        assert row["flops"] == 6 * 16384 * LLAMA3_70B_KN
        hw = rs.hardware(row["gpu"])
        assert base >= row["flops"] / float(hw.peak_flops["bf16"])
        assert lowp >= row["flops"] / float(hw.peak_flops["fp8"])


def test_sweep_figure_draws_the_totals(executed):
    cells = executed("model-sweep")
    totals, fig = cells[1].value, cells[2].value
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "tensorwise", "rowwise", "mxfp8_cublas", "blockwise"]
    for container, recipe in zip(ax.containers, ["tensorwise", "rowwise", "mxfp8_cublas",
                                                  "blockwise"]):
        heights = [bar.get_height() for bar in container]
        assert heights == pytest.approx(list(totals["speedup"][totals["recipe"] == recipe]))
    assert totals.caption in ax.get_title()


def test_sweep_layer_table_and_csv(executed):
    cells = executed("model-sweep")
    header, *rows = _printed_table(cells[3].stdout)
    assert header == ["gpu", "recipe", "name", "M", "K", "N", "speedup",
                      "lowp_overhead_regime", "faster_on_cube"]
    assert len(rows) == 12 and cells[3].stdout.rstrip().endswith(f"... {7 * len(PAIRS) - 12} more rows")
    assert rows[0][:6] == ["H100 SXM", "tensorwise", "self_attn.q_proj", "16384", "8192", "8192"]
    table = list(csv.DictReader(io.StringIO(cells[4].stdout)))
    assert len(table) == len(PAIRS)
    for row in table:
        assert row["count"] == "560" and row["layers"] == "7" and row["M"] == "16384"
        assert float(row["speedup"]) == pytest.approx(
            float(row["baseline_time_s"]) / float(row["lowp_time_s"]), rel=1e-12)


# -- fidelity report ------------------------------------------------------------------
def _png(image) -> Path:
    """The file an ``IPython.display.Image`` (or its stand-in) shows."""
    path = Path(getattr(image, "filename", None) or image.kwargs["filename"])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def test_fidelity_report_covers_every_published_source(executed):
    cells = executed("fidelity-report")
    text = cells[0].stdout
    # the report names the table it read; every source of that table has its line
    table = Path(re.match(r"published speedups, in sample: (.+)", text).group(1))
    rows = _rows(table)
    shaped = Counter(r["source_id"] for r in rows if all(r[c] for c in "MKN"))
    # a line per source (its id, GPU, rows): the rows of that source in the table
    # that have a shape; the "all" line adds them up
    listed = {m[1]: int(m[2]) for m in re.finditer(r"^(\S+)\s+(?:\S+\s+)?(\d+)\s+\|", text, re.M)}
    total = listed.pop("all")
    assert len(listed) >= 5 and set(listed) <= set(shaped)
    assert all(n == shaped[s] for s, n in listed.items()) and total == sum(listed.values())
    assert all(p in text.splitlines()[1] for p in ("default", "torchao", "seed"))
    _png(cells[1].value)


def test_fidelity_report_of_the_sample_says_it_is_synthetic(executed):
    cells = executed("fidelity-report")
    text = cells[2].stdout
    sample = Path(re.match(r"roofline_sym fidelity: (.+)", text).group(1))
    (gpu,) = {row["gpu"] for row in _rows(sample)}  # "SYNTHETIC model of H200 SXM"
    assert gpu.startswith("SYNTHETIC") and "SYNTHETIC" in text.splitlines()[1]
    assert re.search(rf"^before: {re.escape(gpu.split(' of ')[1])} ", text, re.M)
    assert re.search(r"^after: .*rms log error", text, re.M)
    _png(cells[3].value)


def test_a_notebook_without_a_parameters_cell_refuses_injected_values():
    with pytest.raises(ValueError, match="parameters"):
        run(NOTEBOOK_DIR / "quickstart.ipynb", "x = 1")
    assert any("parameters" in c["metadata"].get("tags", ())
               for c in code_cells(NOTEBOOK_DIR / "breakeven-maps.ipynb"))
