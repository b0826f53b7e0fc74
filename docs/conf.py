"""Sphinx configuration: MyST markdown pages, notebooks executed by myst-nb,
an API reference from the docstrings, the furo theme.

Build (strict, as CI does): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
with the ``docs`` extra installed (``pip install -e ".[docs]"``).
"""

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

# notebooks (gallery, and .md pages with code cells) run at every build; a cell
# that raises fails the build
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# API reference: members in source order, signatures without the annotations'
# clutter, docstrings as written (``literals``)
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": False}

html_theme = "furo"
html_title = f"roofline_sym {release}"
html_theme_options = {"navigation_with_keys": True}
