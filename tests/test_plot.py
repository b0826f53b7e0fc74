"""Plots render under Agg to PNG, SVG and PDF with the expected artists, log axes,
labelled units and paper-sized fonts; the break-even curve comes from the solver."""

import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from matplotlib.collections import QuadMesh  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import roofline_sym as rs  # noqa: E402
from roofline_sym import plot as P  # noqa: E402
from roofline_sym.cli.cmd_plot import draw  # noqa: E402

FAST = dict(resolution=24, points=10)  # small grids: the tests check structure


@lru_cache(maxsize=None)
def model(recipe="tensorwise", gpu="h100", mode="training"):
    return rs.linear(recipe, mode=mode, fuse=True).on(gpu)


def _lines(ax, gid):
    return [ln for ln in ax.get_lines() if ln.get_gid() == gid]


def _check_text(fig):
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert texts
    assert min(t.get_fontsize() for t in texts) >= 7
    assert fig.get_figwidth() == pytest.approx(P.COLUMN_WIDTH)


def _check_files(fig, tmp_path, stem):
    magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}
    for fmt, head in magic.items():
        path = P.save(fig, tmp_path / f"{stem}.{fmt}")
        data = path.read_bytes()
        assert data.startswith(head), fmt
        if fmt == "svg":
            assert b"<svg" in data
    from PIL import Image

    with Image.open(tmp_path / f"{stem}.png") as im:  # 300 dpi, one column wide
        assert im.size[0] == pytest.approx(P.COLUMN_WIDTH * 300, abs=2)


def test_heatmap(tmp_path):
    m = model()
    fig = P.speedup_heatmap(m, closed_form=True, **FAST)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "(elements)" in ax.get_xlabel() and "(rows)" in ax.get_ylabel()
    mesh = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(mesh) == 1 and mesh[0].get_array().shape == (24, 24)
    cbar = fig.axes[1]
    assert "speedup" in cbar.get_ylabel() and r"\times" in cbar.get_ylabel()
    # the break-even curve is the solver's: speedup is 1 on it
    (curve,) = _lines(ax, "breakeven")
    ks, ms = curve.get_data()
    assert len(ks) == 10 and np.all(np.isfinite(ms[ks >= 2048]))
    ok = np.isfinite(ms)
    sp = m.evaluate(M=ms[ok], K=ks[ok], N=ks[ok], integer_shapes=False)["speedup"]
    np.testing.assert_allclose(sp, 1.0, rtol=1e-9)
    # the closed form, where its regime holds, lies on the same curve
    (closed,) = _lines(ax, "closed_form")
    kc, mc = closed.get_data()
    fine = np.isfinite(mc)
    assert fine.sum() > 10
    sp = m.evaluate(M=mc[fine], K=kc[fine], N=kc[fine], integer_shapes=False)["speedup"]
    np.testing.assert_allclose(sp, 1.0, rtol=1e-9)
    _check_text(fig)
    _check_files(fig, tmp_path, "heatmap")


def test_breakeven_curves(tmp_path):
    models = {r: model(r, "b200") for r in ("tensorwise", "mxfp8_cublas", "mxfp4_cutlass")}
    models["never"] = model("mxfp8_cublas", "b200", mode="inference")
    fig = P.breakeven_curves(models, points=12, k_range=(64, 65536))
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "(elements)" in ax.get_xlabel() and "(rows)" in ax.get_ylabel()
    curves = _lines(ax, "breakeven")
    assert len(curves) >= 3
    for line in curves[:3]:
        ks, ms = line.get_data()
        label = line.get_label()
        ok = np.isfinite(ms)
        sp = models[label].evaluate(M=ms[ok], K=ks[ok], N=ks[ok],
                                   integer_shapes=False)["speedup"]
        # block-scaled recipes too: their steps are solved exactly
        np.testing.assert_allclose(sp, 1.0, rtol=1e-9)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:3] == ["tensorwise", "mxfp8_cublas", "mxfp4_cutlass"]
    _check_text(fig)
    _check_files(fig, tmp_path, "curves")


def test_curves_label_gpus_when_they_differ():
    fig = P.breakeven_curves([model("tensorwise", "h100"), model("tensorwise", "b200")],
                             points=6)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["tensorwise, H100 SXM", "tensorwise, B200 (HGX)"]


def test_roofline(tmp_path):
    m = model("mxfp8_cublas", "b200")
    fig = P.roofline(m, shape=(4096, 8192, 8192))
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "FLOP/byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    for gid in ("roof_bf16", "roof_fp8", "roof_fp4", "bandwidth"):
        assert len(_lines(ax, gid)) == 1, gid
    # every GEMM and every cast that moves bytes is a point
    names = {ln.get_gid() for ln in ax.get_lines()}
    gemms = [t.name for t in m.terms if ".gemm." in t.name]
    assert set(gemms) <= names
    assert {t.name for t in m.terms if ".cast." in t.name} <= names
    # compute-bound GEMMs sit under their roof by their size: 2MKN / time =
    # peak x efficiency x F / (F + t0 peak efficiency): the fixed time t0 at the rate
    (fp8,) = [ln for ln in ax.get_lines() if ln.get_gid() == "lowp.gemm.output"]
    hw = m.hardware
    flops = 2.0 * 4096 * 8192 * 8192
    roof = float(hw.peak_flops["fp8"] * hw.gemm_efficiency["fp8"]) / 1e12
    # an MX GEMM runs at its family's factor of the fp8 rate, after its fixed time
    rate = roof * 1e12 * float(hw.parameters[rs.symbols.scaling_efficiency("mx")])
    t0 = float(hw.fixed_time("gemm_fixed_s", "fp8_mx"))
    size = flops / (flops + t0 * rate) * rate / (roof * 1e12)
    assert fp8.get_ydata()[0] == pytest.approx(roof * size, rel=1e-9) and size < 1
    _check_text(fig)
    _check_files(fig, tmp_path, "roofline")


def test_an_axes_inside_a_subfigure_gives_the_saving_figure(tmp_path):
    from matplotlib.figure import Figure

    root = Figure(figsize=(6, 3))
    left, _ = root.subfigures(1, 2)
    ax = left.add_subplot()
    fig = P.breakeven_curves([model("tensorwise", "h100")], points=4, ax=ax)
    assert fig is root and ax.get_lines()
    assert P.save(fig, tmp_path / "sub.png").stat().st_size > 0


def test_roofline_counts_launch_only_kernels():
    fig = P.roofline(rs.linear("tensorwise").on("h100"), shape=(256, 1024, 4096))
    legends = [t.get_text() for lg in fig.axes[0].findobj(mpl.legend.Legend)
               for t in lg.get_texts()]
    assert any("launch-only" in t for t in legends)


@pytest.mark.parametrize("shape", [(16, 4096, 4096), (1, 1, 1), (8192, 8192, 8192)])
def test_roofline_shows_every_kernel(shape):
    # the decode shape's casts run at ~0.03 TFLOP/s and everything of (1, 1, 1) at
    # ~1e-6: the y range reaches down to them, with a margin; a big shape keeps
    # the four decades under the highest peak
    m = rs.linear("tensorwise").on("h100")
    ax = P.roofline(m, shape=shape).axes[0]
    lo, hi = ax.get_ylim()
    points = [ln for ln in ax.get_lines()
              if ln.get_gid() and ln.get_gid().startswith(("baseline.", "lowp."))]
    assert len(points) == 13
    perf = [float(ln.get_ydata()[0]) for ln in points]
    assert all(lo * 2 < p < hi for p in perf), (lo, hi, perf)
    top = float(m.hardware.peak_flops["fp8"]) / 1e12
    assert hi == pytest.approx(top * 2.5)
    assert lo == pytest.approx(min(top / 1e4, min(perf) / 3))


def test_output_format_and_shared_style(tmp_path):
    assert P.output_format("a.PNG") == "png" and P.output_format(tmp_path / "b.svg") == "svg"
    with pytest.raises(ValueError, match="use a .png, .svg or .pdf"):
        P.output_format("c.txt")
    with P.style() as m:
        assert m.rcParams["font.size"] == 8
        fig, ax = P.new_axes(P.COLUMN_WIDTH, 2.0)
        ax.plot([1, 2], [3, 4])
    assert tuple(fig.get_size_inches()) == (P.COLUMN_WIDTH, 2.0)
    assert P.new_axes(ax=ax) == (fig, ax)
    assert P.save(fig, tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"


def test_regime_map(tmp_path):
    m = model()
    fig = P.regime_map(m, **FAST)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    cats = mesh.categories
    codes = np.asarray(mesh.get_array()).reshape(24, 24)
    # top right: large shapes, GEMMs compute-bound, casts bandwidth-bound
    assert cats[codes[-1, -1]] == ("compute", "memory")
    # bottom left: the fp8 GEMMs and the casts paying their fixed times, above
    # the launch floor: the memory pieces (t0 + bytes / bandwidth) hold the time
    assert cats[codes[0, 0]] == ("memory", "memory")
    assert len(_lines(ax, "breakeven")) == 1
    assert len(fig.legends[0].get_texts()) == len(cats) + 1
    _check_text(fig)
    _check_files(fig, tmp_path, "regimes")


def test_sensitivity_plot_draws_the_largest_elasticities_along_m(tmp_path):
    mb = model("rowwise")
    fig = P.sensitivity_plot(mb, shape=(1024, 4096, 8192), m_range=(64, 16384), points=8, top=3)
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if str(ln.get_gid()).startswith("elasticity ")]
    assert len(lines) == 3 and ax.get_xscale() == "log"
    ms = lines[0].get_xdata()
    assert ms[0] == pytest.approx(64) and ms[-1] == pytest.approx(16384)
    found = rs.sensitivity(mb, at=(ms, 4096, 8192))
    peak = sorted((float(np.max(np.abs(v))) for v in found.values()), reverse=True)
    for ln in lines:  # each line is rs.sensitivity of its symbol, and among the 3 largest
        values = found[next(x for x in found if ln.get_gid() == f"elasticity {x}")]
        np.testing.assert_allclose(ln.get_ydata(), values, rtol=1e-12)
        assert float(np.max(np.abs(values))) >= peak[2]
    _check_text(fig)
    _check_files(fig, tmp_path, "sensitivity")


@pytest.mark.parametrize("kind", P.PLOT_KINDS)
def test_plot_cli_writes_each_kind(kind, tmp_path):
    opts = {"heatmap": FAST, "regimes": FAST, "curves": {"points": 6},
            "roofline": {"shape": (2048, 4096, 4096)}, "sensitivity": {"points": 6}}[kind]
    out = draw(kind, [model()], tmp_path / f"{kind}.svg", **opts, title=None)
    assert out.exists() and out.read_bytes().startswith(b"<?xml")


@pytest.mark.parametrize("args, message", [
    (("pie", None, "a.png"), "unknown plot kind"),
    (("heatmap", None, "a.jpg"), "use a .png, .svg or .pdf"),
    (("heatmap", [rs.linear("tensorwise")], "a.png"), "bind a GPU"),
    (("roofline", "models2", "a.png"), "draws one model"),
])
def test_plot_cli_errors(args, message, tmp_path):
    kind, models, name = args
    if models == "models2":
        models = [model(), model("rowwise")]
    with pytest.raises(ValueError, match=message):
        draw(kind, models, tmp_path / name)


def test_save_rejects_unknown_suffix(tmp_path):
    fig = P.roofline(model(), shape=(1024, 1024, 1024))
    with pytest.raises(ValueError, match="png, .svg or .pdf"):
        P.save(fig, tmp_path / "x.eps")


def test_draws_into_a_given_axes():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 2.5))
    a, b = fig.subplots(1, 2)
    assert P.breakeven_curves([model()], points=5, ax=a) is fig
    assert P.roofline(model(), shape=(512, 512, 512), ax=b) is fig


def test_import_does_not_load_matplotlib():
    code = ("import sys, roofline_sym, roofline_sym.output.plot, roofline_sym.output;"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_heatmap_marks_exact_ties():
    m = rs.linear("nvfp4", mode="inference", fuse=True, preset="torchao").on("NVIDIA B200")
    fig = P.speedup_heatmap(m, k_range=(64, 32768), **FAST)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "equal (both launch-bound)" in labels


def test_regime_map_of_the_bf16_side_has_no_casts():
    fig = P.regime_map(model(), side="baseline", **FAST)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert set(labels) <= {"C", "M", "L"} and "C" in labels


def test_docs_examples_run(tmp_path, monkeypatch):
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from latex_util import doc_blocks

    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    for block in doc_blocks(Path(__file__).parents[1] / "docs" / "render.md"):
        exec(compile(block, "docs/render.md", "exec"), scope)
    for name in ("heatmap.pdf", "breakeven.pdf", "roofline.svg", "regimes.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_titles_stay_inside_the_figure():
    # the longest defaults: a long recipe name, a workload, options, the shape
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    long = rs.linear("mxfp8_32x32_flexible_gemm_layout", workload="ln-linear-sigmoid")
    figures = [P.speedup_heatmap(long, hw="b200", **FAST),
               P.breakeven_curves([model(), model("rowwise")], points=10),
               P.roofline(long, hw="b200"),
               P.regime_map(long, hw="b200", resolution=24),
               P.sensitivity_plot(long, hw="b200", points=10)]
    for fig in figures:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        title = fig.axes[0].title
        box = title.get_window_extent(canvas.get_renderer())
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width, title.get_text()
    # lines are broken after a comma, the words kept
    text = figures[0].axes[0].title.get_text()
    assert text.count("\n") > 1 and ",\n" in text
    assert text.replace("\n", " ") == P._describe(long.on("b200")).replace("\n", " ")
