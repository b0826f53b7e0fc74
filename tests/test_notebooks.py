"""Every notebook's code cells run in order (no Jupyter needed)."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {}
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, "a notebook without code"
    for i, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"{path.name}[{i}]", "exec"), namespace)


def test_there_is_a_notebook():
    assert NOTEBOOKS
