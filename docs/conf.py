"""Sphinx configuration: MyST markdown pages, notebooks executed by myst-nb,
an API reference from the docstrings, the furo theme.

Build (strict, as CI does): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
with the ``docs`` extra installed (``pip install -e ".[docs]"``).
"""

import shutil
from pathlib import Path

from roofline_sym._version import version as _version

project = "roofline_sym"
author = "roofline_sym contributors"
copyright = "roofline_sym contributors"
release = _version()
version = release

extensions = [
    "myst_nb",               # MyST markdown and executed notebooks
    "sphinx.ext.autodoc",    # the API reference from docstrings
    "sphinx.ext.mathjax",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# MyST: $...$ and $$...$$ math, ::: fences, definition lists
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# the gallery's notebooks live in notebooks/ at the top of the repository; Sphinx
# reads pages only under docs/, so they are copied into docs/gallery/ (generated,
# git-ignored; a copy is rewritten only when its notebook changed, so an
# incremental build stays incremental)
_NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
_GALLERY = Path(__file__).resolve().parent / "gallery"
_GALLERY.mkdir(exist_ok=True)
for _stale in set(_GALLERY.glob("*.ipynb")) - {_GALLERY / p.name for p in _NOTEBOOKS.glob("*.ipynb")}:
    _stale.unlink()
for _nb in sorted(_NOTEBOOKS.glob("*.ipynb")):
    _copy = _GALLERY / _nb.name
    if not _copy.exists() or _copy.read_bytes() != _nb.read_bytes():
        shutil.copyfile(_nb, _copy)

# the calculator page (calculator.md) loads files generated from the models: the
# data, the models printed as JavaScript, its script, style and form, written into
# _static/calculator/ (git-ignored; a file is rewritten only when it changed)
from roofline_sym.cli.cmd_calculator import write as _write_calculator

_write_calculator(Path(__file__).resolve().parent / "_static" / "calculator")
html_static_path = ["_static"]

# notebooks (gallery, and .md pages with code cells) run at every build; a cell
# that raises fails the build
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# a cell's Markdown output (a generated table) is read as MyST, tables included
nb_render_markdown_format = "myst"

# API reference: members in source order, signatures without the annotations'
# clutter, docstrings as written (``literals``)
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": False}

html_theme = "furo"
html_title = f"roofline_sym {release}"
html_theme_options = {"navigation_with_keys": True}
