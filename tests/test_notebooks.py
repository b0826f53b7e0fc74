"""Every notebook's code cells run in order (no Jupyter needed).

The documentation build runs them in a Jupyter kernel too; here IPython's
display helpers are stand-ins when IPython is not installed, and IPython
magics (``%matplotlib inline``) are skipped.
"""

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "docs" / "gallery").glob("*.ipynb"))
# run by the strict documentation build (.ci/run) only, to keep this suite fast: the
# maps take some 150 break-even solves (~10 s), the fidelity report predicts every
# published speedup under three presets (~4 s); what they call is tested elsewhere
DOCS_BUILD_ONLY = {"breakeven-maps.ipynb", "fidelity-report.ipynb"}


def _without_ipython(monkeypatch):
    """``from IPython.display import Image`` and ``display(...)`` as no-ops."""
    display = types.ModuleType("IPython.display")
    for name in ("Image", "SVG", "Markdown", "HTML", "Latex"):
        setattr(display, name, lambda *args, **kwargs: None)
    display.display = lambda *objs, **kwargs: None
    ipython = types.ModuleType("IPython")
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in DOCS_BUILD_ONLY],
                         ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    if importlib.util.find_spec("IPython") is None:
        _without_ipython(monkeypatch)
    monkeypatch.chdir(tmp_path)  # anything a notebook writes stays out of the tree
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {"display": lambda *objs, **kwargs: None}
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, "a notebook without code"
    for i, cell in enumerate(code):
        source = "".join(ln for ln in cell["source"] if not ln.lstrip().startswith("%"))
        exec(compile(source, f"{path.name}[{i}]", "exec"), namespace)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_stored_without_outputs(path):
    # the documentation build runs them; outputs in the file would go stale
    cells = json.loads(path.read_text())["cells"]
    assert not [c for c in cells if c.get("outputs") or c.get("execution_count")]


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "breakeven-maps", "model-sweep",
                                           "fidelity-report"}
