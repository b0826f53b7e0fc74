"""The guide's pages run as written: each page's Python blocks in order, in one
namespace (a reader's session), in a scratch folder.  A page whose blocks need
an optional library is skipped without it.  render.md's blocks (which write
plots) run in tests/test_render.py and tests/test_plot.py; fidelity.md and
model.md are not run here."""

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
    blocks = doc_blocks(DOCS / page)
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
        assert repr(scope["be"].roots) == "[1093.83]"  # the comment beside it
    if page == "from-model-to-verdict.md":
        assert (tmp_path / "sweep.nc").stat().st_size > 0
