"""Run a notebook's code cells in order, in this process, and keep what each
cell shows: the value of its last expression (what Jupyter prints under it),
what it printed, and what it passed to ``display``.

No Jupyter kernel is needed; IPython magics (``%matplotlib inline``) are
skipped, figures are drawn with Agg, and where IPython is not installed its
display helpers are stand-ins that keep their arguments.  A cell tagged
``parameters`` may be followed by values the caller injects (papermill's
convention), so a test can run a notebook at small sizes.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"


@dataclass
class Cell:
    """One executed code cell."""

    source: str
    value: Any = None             # the last expression's value (None if it has none)
    stdout: str = ""
    displayed: list[Any] = field(default_factory=list)

    @property
    def shown(self) -> list[Any]:
        """Everything the cell shows as objects: displayed ones, then its value."""
        return [*self.displayed, *([] if self.value is None else [self.value])]


class Shown:
    """Stand-in for an ``IPython.display`` object: keeps its arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


def _ipython_stand_in() -> dict[str, types.ModuleType]:
    display = types.ModuleType("IPython.display")
    for name in ("Image", "SVG", "Markdown", "HTML", "Latex"):
        setattr(display, name, type(name, (Shown,), {}))
    ipython = types.ModuleType("IPython")
    ipython.display = display  # type: ignore[attr-defined]
    # matplotlib looks for IPython in sys.modules: show it a recent one that runs
    # no shell (as a plain `python` with IPython installed)
    ipython.version_info = (8, 24)  # type: ignore[attr-defined]
    ipython.get_ipython = lambda: None  # type: ignore[attr-defined]
    return {"IPython": ipython, "IPython.display": display}


def code_cells(path: Path) -> list[dict[str, Any]]:
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def run(path: Path, parameters: str = "") -> list[Cell]:
    """Execute ``path``'s code cells; ``parameters``: code run right after the
    cell tagged ``parameters`` (an error if the notebook has none)."""
    import matplotlib

    matplotlib.use("Agg")
    cells = code_cells(path)
    tagged = [i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", ())]
    if parameters and not tagged:
        raise ValueError(f"{path.name} has no cell tagged 'parameters'")
    out: list[Cell] = []
    stand_ins = {} if _has_ipython() else _ipython_stand_in()
    saved = {name: sys.modules.get(name) for name in stand_ins}
    sys.modules.update(stand_ins)
    try:
        namespace: dict[str, Any] = {"__name__": "__main__"}
        for i, cell in enumerate(cells):
            source = "".join(ln for ln in cell["source"] if not ln.lstrip().startswith("%"))
            out.append(_run_cell(source, namespace, f"{path.name}[{i}]"))
            if tagged and i == tagged[0] and parameters:
                _run_cell(parameters, namespace, f"{path.name}[injected]")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return out


def _has_ipython() -> bool:
    import importlib.util

    return importlib.util.find_spec("IPython") is not None


def _run_cell(source: str, namespace: dict[str, Any], name: str) -> Cell:
    cell = Cell(source)
    namespace["display"] = lambda *objs, **kwargs: cell.displayed.extend(objs)
    tree = ast.parse(source, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(tree, name, "exec"), namespace)
        if last is not None:
            cell.value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
    cell.stdout = buffer.getvalue()
    return cell
