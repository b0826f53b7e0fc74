"""The guide's pages run as written: each page's Python blocks in order, in one
namespace (a reader's session), in a scratch folder.  A page whose blocks need
an optional library is skipped without it.  render.md's blocks (which write
plots) run in tests/test_render.py and tests/test_plot.py; fidelity.md and
model.md are not run here (fidelity.md's executed cells are, below)."""

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
    "from-model-to-verdict.md": ("torch", "transformers", "torchao", "dask.distributed",
                                 "xarray", "pandas"),
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
    try:
        import myst_nb  # noqa: F401  (the docs extra)
    except ImportError:
        stub = types.ModuleType("myst_nb")
        stub.glue = lambda name, value, display=True: glued.__setitem__(name, value)
        monkeypatch.setitem(sys.modules, "myst_nb", stub)
    # a cell's MyST options (":tags: [remove-cell]") are not Python
    cells = ["\n".join(line for line in cell.splitlines() if not line.startswith(":"))
             for cell in doc_blocks(DOCS / "fidelity.md", "{code-cell} python")]
    assert len(cells) == 6
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
