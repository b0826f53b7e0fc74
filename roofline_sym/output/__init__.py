"""LaTeX for papers (expressions, breakdowns, break-evens, tables) and plots.

``printer`` writes expressions; ``blocks`` writes a model's breakdown and a
break-even result from the pieces they offer (and registers itself as their
writer, so ``model.latex()`` works); ``layout`` and ``paper`` write complete
blocks that fit a width (``latex(obj, width=r"\columnwidth")``; loaded the
first time one is asked for); ``breakeven_tables`` writes recipe x GPU tables;
``plot`` draws figures (matplotlib, imported when drawing).  Everything
LaTeX compiles with pdflatex and amsmath (tables: booktabs).

>>> from roofline_sym.output import latex
>>> import roofline_sym as rs
>>> latex(2 * rs.M)
'2 M'
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .blocks import breakdown, breakeven_latex, term_name
    from .printer import latex, latex_preamble, names
    from .breakeven_tables import Row, breakeven_rows, breakeven_table

# each name's module, imported on first use (the package registers the LaTeX
# writers of blocks and paper with renderers: roofline_sym/__init__.py)
_WHERE = {
    **dict.fromkeys(["breakdown", "breakeven_latex", "term_name"], ".blocks"),
    **dict.fromkeys(["latex", "latex_preamble", "names"], ".printer"),
    **dict.fromkeys(["Row", "breakeven_rows", "breakeven_table"], ".breakeven_tables"),
}

__all__ = ["latex", "latex_preamble", "breakdown", "breakeven_latex", "breakeven_table",
           "breakeven_rows", "Row", "names", "term_name"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
