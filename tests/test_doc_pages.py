"""The guide's pages run as written: each page's Python blocks in order, in one
namespace (a reader's session), in a scratch folder.  A page whose blocks need
an optional library is skipped without it.  render.md's blocks (which write
plots) run in tests/test_render.py and tests/test_plot.py; fidelity.md and
model.md are not run here (fidelity.md's executed cells are, below).  The numbers
the prose of model.md, render.md and breakeven.md quotes are read off the pages
and recomputed from the library (the last tests)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from latex_util import doc_blocks  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
# page -> the optional libraries its blocks import
PAGES = {
    "index.md": (),
    "breakeven.md": (),
    "hardware.md": (),
    "step.md": (),
    "from-model-to-verdict.md": ("torch", "transformers", "torchao", "dask.distributed",
                                 "xarray", "pandas"),
    "from-model-to-step.md": (),
}


def run_page(page: str) -> dict:
    """Every Python block of ``page`` in one namespace; what they print is kept in
    ``namespace["printed"]``."""
    # its Python blocks; a page of executed cells only (index.md), its cells
    # (MyST options, ":tags: ...", are not Python).  The cells of a page with
    # both run in the docs build (from-model-to-verdict.md's generated tables)
    blocks = doc_blocks(DOCS / page) or [
        "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
        for cell in doc_blocks(DOCS / page, "{code-cell} python")]
    assert blocks, page
    scope: dict = {"__name__": "docs"}  # not __main__: a cluster under `if __name__` stays off
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, f"docs/{page}", "exec"), scope)
    scope["printed"] = out.getvalue()
    return scope


def test_every_page_with_python_is_run_here_or_elsewhere():
    pages = {p.name for p in DOCS.glob("*.md") if doc_blocks(p)}
    assert pages - set(PAGES) <= {"fidelity.md", "render.md", "model.md"}
    # a page of executed cells only runs in the docs build (index.md here too)
    cells = {p.name for p in DOCS.glob("*.md") if doc_blocks(p, "{code-cell} python")}
    assert "index.md" in cells and cells - set(PAGES) <= {
        "cli.md", "getting-started.md", "fidelity.md", "model.md", "render.md"}
    assert not doc_blocks(DOCS / "index.md")  # its cells run here


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_runs_as_written(page, tmp_path, monkeypatch):
    for module in PAGES[page]:
        pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)
    if page == "hardware.md":
        # the page's own first step: "roofline-sym hardware h100 --toml > mine.toml"
        from roofline_sym.cli import main

        with contextlib.redirect_stdout(io.StringIO()) as text:
            assert main(["hardware", "h100", "--toml"]) == 0
        (tmp_path / "mine.toml").write_text(text.getvalue())
    scope = run_page(page)
    if page == "hardware.md":
        assert scope["hw2"].sources["mem_efficiency"] == "user override (Hardware.replace)"
    if page == "breakeven.md":
        # the comments beside them (preset torchao: no shipped calibration)
        assert repr(scope["be"].roots) == "[1093.83]"
        assert str(scope["be"].roots.exact) == "[1207706239961/1104106880]"
        assert scope["be"].regime_at(1100)["lowp.cast.input.amax"] == "launch"
    if page == "from-model-to-verdict.md":
        assert (tmp_path / "sweep.nc").stat().st_size > 0


def test_fidelity_page_computes_its_figures_from_the_stored_residuals(monkeypatch):
    # the page's cells (executed by the docs build) run here too; their headline
    # must be what the stored residuals give, recomputed here from the file alone
    import csv
    import types

    import numpy as np

    from roofline_sym.fidelity.published_tables.cross_validation import scored_rows
    from roofline_sym.fidelity.published_tables.intervals import residuals_path

    try:
        import IPython.display  # noqa: F401  (the docs extra)
    except ImportError:
        stub = types.ModuleType("IPython.display")
        stub.Markdown = str
        monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
        monkeypatch.setitem(sys.modules, "IPython.display", stub)
    glued: dict = {}
    stub = types.ModuleType("myst_nb")   # the docs build's glue, kept here to be read
    stub.glue = lambda name, value, display=True: glued.__setitem__(name, value)
    monkeypatch.setitem(sys.modules, "myst_nb", stub)
    # a cell's MyST options (":tags: [remove-cell]") are not Python
    cells = ["\n".join(line for line in cell.splitlines() if not line.startswith(":"))
             for cell in doc_blocks(DOCS / "fidelity.md", "{code-cell} python")]
    assert len(cells) == 9
    scope: dict = {"__name__": "docs"}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        for cell in cells:
            exec(compile(cell, "docs/fidelity.md", "exec"), scope)
    table = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:]
             for line in scope["lines"][2:]}

    with open(residuals_path(), newline="") as f:
        stored = list(csv.DictReader(f))
    # residual r = log(predicted / measured): the error |predicted / measured - 1|
    error = np.abs(np.exp([float(r["log_residual"]) for r in stored]) - 1)
    # the file lists the scored rows source by source, in their order
    scored = scored_rows()
    order = list(dict.fromkeys(str(s) for s in scored.source_id))
    measured = np.concatenate([scored.measured[scored.source_id == s] for s in order])
    predicted = measured * np.exp([float(r["log_residual"]) for r in stored])
    decisive = np.abs(measured - 1) >= 0.05
    wrong = decisive & ((predicted > 1) != (measured > 1))

    def expect(mask):
        return [f"{np.median(error[mask]):.1%}", f"{np.percentile(error[mask], 90):.1%}",
                f"{wrong[mask].sum()} of {decisive[mask].sum()} "
                f"({wrong[mask].sum() / decisive[mask].sum():.1%}) |"]

    every = np.ones(len(stored), bool)
    assert table[f"every row, its source left out of every fit ({len(stored)} rows)"] == \
        expect(every)
    for gen in ("hopper", "blackwell"):
        mask = np.array([r["generation"] == gen for r in stored])
        assert table[f"generation {gen} ({mask.sum()} rows)"] == expect(mask)
    gemm = np.array([r["workload"] == "gemm" for r in stored])
    assert table[f"GEMM-only rows ({gemm.sum()} rows)"] == expect(gemm)
    assert scope["lines"][0].startswith(f"| over {len(stored)} single-shape rows of "
                                        f"{len(order)} sources")
    assert "80% intervals cover" in printed.getvalue()
    # the test score beside the validation score, from the first-sight record alone
    from roofline_sym.fidelity.published_tables import first_sight

    scores = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:]
              for line in scope["scores"][2:]}
    assert scores["validation score (leave-one-source-out)"][:2] == [str(len(order)),
                                                                    str(len(stored))]
    test = scores["test score (first sight)"]
    recorded = first_sight.read_first_sight()
    with open(first_sight.rows_path(), newline="") as f:
        rows = list(csv.DictReader(f))
    assert test[:2] == [str(len(recorded)), str(len(rows))]
    if rows:
        m = np.array([float(r["measured_speedup"]) for r in rows])
        p = np.array([float(r["predicted_speedup"]) for r in rows])
        assert test[2:4] == [f"{np.median(np.abs(p / m - 1)):.1%}",
                             f"{np.percentile(np.abs(p / m - 1), 90):.1%}"]
    for rec in recorded:  # one line per source, its record as written that day
        line = scores[f"&nbsp; first sight of {rec['source']} ({rec['date']})"]
        assert line[1:3] == [str(rec["rows"]), f"{rec['median']:.1%}"]

    # the grid's counts ("The grid and the time budget"): 6 cubes, and at each of the 2
    # token counts the Llama block's 4 distinct (K, N), one of them the 8192 cube
    from roofline_sym.fidelity.own_gpu import timing

    assert glued["grid_shapes"] == len(timing.CUBES) + 2 * 4 - 1
    assert glued["grid_micro"] == 1 + len(timing.COPY_ELEMENTS)  # the launch, the copies
    assert glued["grid_rows"] == (glued["grid_shapes"] * glued["grid_components"]
                                  + glued["grid_micro"])
    assert glued["timed_minutes"] < glued["grid_minutes"] < 6
    # the SYNTHETIC sample: its data lines, header and comments aside
    from roofline_sym import fidelity

    lines = fidelity.sample_path().read_text().splitlines()
    assert glued["sample_rows"] == sum(not line.startswith("#") for line in lines) - 1
    assert 0.1 < glued["miss_512"] < 1   # the constant-efficiency fit misses the 512 cube
    # the parameters the page says generated it are those its header records
    import re

    header = " ".join(line for line in lines if line.startswith("#"))
    page = page_text("fidelity.md")
    for name in ("eta_bf16", "eta_fp8", "eta_mem"):
        assert f"{name}={re.search(rf'`{name} = ([0-9.]+)`', page).group(1)}," in header
    launch, fixed = re.search(r"`t_launch = (\d+) us`.*?\(`t0` (\d+) us", page).groups()
    assert f"t_launch={launch}e-06," in header
    assert f"fixed_s bf16={fixed}e-06, fp8_tensorwise={fixed}e-06, fp8_rowwise={fixed}e-06" \
        in header
    noise, seed = re.search(r"and (\d+)% lognormal noise \(seed (\d+)\)", page).groups()
    assert f"sigma {int(noise) / 100}, seed {seed}" in header


# -- the numbers the prose quotes, checked against the library ----------------------
def page_text(page: str) -> str:
    """A page's text with its line breaks and runs of spaces made single spaces."""
    return " ".join((DOCS / page).read_text().split())


def between(text: str, start: str, end: str) -> str:
    return text[text.index(start):text.index(end, text.index(start))]


def test_model_page_hardware_facts_are_the_shipped_entries():
    import re

    import roofline_sym as rs

    item = between(page_text("model.md"), "6. **Datasheet hardware", "7. **")

    def quoted(pattern: str, part: str = item) -> float:
        found = re.search(pattern, part)
        assert found, pattern
        return float(found.group(1))

    torchao = {name: rs.hardware(name, dataset="torchao")
               for name in ("NVIDIA H100", "NVIDIA B200", "NVIDIA GB200")}
    # bandwidths in TB/s, at the page's digits
    assert float(rs.hardware("h100").mem_bw) / 1e12 == quoted(r"H100 SXM at ([\d.]+) TB/s")
    assert float(torchao["NVIDIA H100"].mem_bw) / 1e12 == quoted(r"Meta's ([\d.]+) TB/s")
    assert rs.hardware("NVIDIA H100", dataset="seed").mem_bw == torchao["NVIDIA H100"].mem_bw
    assert float(rs.hardware("b200").mem_bw) / 1e12 == quoted(
        r"B200 at the datasheet ([\d.]+) TB/s")
    assert round(float(torchao["NVIDIA B200"].mem_bw) / 1e12, 3) == quoted(r"torchao: ([\d.]+)")
    # GB200: torchao copies B200's rates, the default has GB200's own
    assert torchao["NVIDIA GB200"].peak_flops["bf16"] == torchao["NVIDIA B200"].peak_flops["bf16"]
    assert rs.hardware("gb200").peak_flops["bf16"] != rs.hardware("b200").peak_flops["bf16"]
    # RTX 5090: 1.792 TB/s in both datasets (torchao 0.18 writes 1000x that)
    assert rs.hardware("rtx5090").mem_bw == 1792 * 10**9
    assert rs.hardware("NVIDIA GeForce RTX 5090", dataset="torchao").mem_bw == 1792 * 10**9
    # memory efficiencies: measured where published, else torchao's
    for label, gpu in (("A100", "a100"), ("H100 PCIe", "h100_pcie"), ("MI300X", "mi300x"),
                       ("B300", "b300")):
        assert float(rs.hardware(gpu).mem_efficiency) == quoted(rf"{label} ([\d.]+)"), label
    default_eta = quoted(r"else torchao's (\d\.\d+)")
    assert float(torchao["NVIDIA H100"].mem_efficiency) == default_eta
    assert float(rs.hardware("b200").mem_efficiency) == default_eta
    # launch floors in us: fitted where published, else torchao's
    floors = item[item.index("Launch floor"):]
    for label, gpus in (("A100", ["a100"]), ("H200", ["h200"]), ("L40S", ["l40s"]),
                        ("AMD", ["mi300x", "mi355x"])):
        for gpu in gpus:
            assert float(rs.hardware(gpu).launch_overhead) * 1e6 == pytest.approx(
                quoted(rf"{label} ([\d.]+)", floors), abs=1e-9), gpu
    floor = quoted(r"else torchao's ([\d.]+) us", floors)
    assert float(torchao["NVIDIA H100"].launch_overhead) * 1e6 == pytest.approx(floor)
    assert float(rs.hardware("b200").launch_overhead) * 1e6 == pytest.approx(floor)


def test_render_page_numbers_are_what_the_library_prints():
    import re

    import roofline_sym as rs

    text = page_text("render.md")
    # "for tensorwise on torchao's H100, `M^{*} = ...`, and `M^{*} \approx 1150` at K = N = 8192"
    quoted = re.search(r"for tensorwise on torchao's H100, `(M\^\{\*\} = [^`]+)`", text)
    assert quoted
    m = rs.linear("tensorwise", preset="torchao").on("NVIDIA H100")
    block = rs.breakeven(m, solve_for="M").latex(width=r"\columnwidth")
    # the page writes plain parentheses for the printer's \left( \right)
    # (and no alignment mark)
    printed = block.replace(r"\left", "").replace(r"\right", "").replace("&", "")
    assert quoted.group(1) + r" \\" in printed
    at = float(re.search(r"`M\^\{\*\} \\approx (\d+)` at `K = N = 8192`", text).group(1))
    assert round(float(rs.breakeven(m, solve_for="M", K=8192, N=8192).root_values[0])) == at
    # the rounded and the exact coefficient of the bf16 GEMM of the same model
    gemm = next(t for t in m.terms if t.name == "baseline.gemm.output").time.doit()
    rounded, exact = re.search(r"\(4 unless given: `([^`]+)`, never `([^`]+)`\)", text).groups()
    assert rounded in rs.latex(gemm, width=r"\columnwidth")
    assert exact in rs.latex(gemm) and exact in text.split("an exact power of ten (`")[1]
    # the numeric break-even block, as printed
    page = (DOCS / "render.md").read_text()
    shown = between(page, "\\begin{aligned}\n&\\text{at } K = N = 8192", "\\end{aligned}")
    mb = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    assert shown in rs.breakeven(mb, solve_for="M", K=8192, N=8192).latex()


def test_breakeven_page_without_the_zero_byte_launches():
    import re

    import sympy

    import roofline_sym as rs

    text = page_text("breakeven.md")
    without, keeping = map(float, re.search(
        r"gives M\* = (\d+) instead of (\d+)\.", text).groups())
    m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    times = {t.name: t.time.doit().subs({rs.K: 8192, rs.N: 8192}) for t in m.terms}
    zero_byte = [t.name for t in m.terms if t.time.doit().is_number]
    assert len(zero_byte) == 5   # "the five zero-byte kernels"

    def root(names):
        # the difference baseline - lowp over the named terms, bisected on M
        d = sympy.lambdify(rs.M, sum(times[n] * (1 if n.startswith("baseline") else -1)
                                     for n in names))
        lo, hi = 256.0, 8192.0
        assert d(lo) < 0 < d(hi)
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) < 0 else (lo, mid)
        return lo

    assert round(root(list(times))) == keeping
    assert round(root([n for n in times if n not in zero_byte])) == without


def test_breakeven_page_step_example_is_what_the_solver_finds():
    # "(lo, step]" for B200 mxfp4_cutlass at K, N: the faster interval that ends
    # at a block-scale step, as the page prints it (one decimal, the step exact)
    import re

    import roofline_sym as rs

    text = page_text("breakeven.md")
    lo, step, k, n = re.search(r"`\((\d+\.\d), (\d+)\]`\s+for B200 `mxfp4_cutlass` at "
                               r"K = (\d+), N = (\d+)", text).groups()
    be = rs.breakeven(rs.linear("mxfp4_cutlass").on("b200"), solve_for="M", K=int(k), N=int(n))
    assert [str(s) for s in be.steps] == [step]
    first = be.faster.args[0]
    assert first.left_open and not first.right_open and str(first.end) == step
    assert f"{float(first.start):.1f}" == lo
