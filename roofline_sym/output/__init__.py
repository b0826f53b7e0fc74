"""LaTeX for papers (expressions, breakdowns, break-evens, tables) and plots.

``printer`` writes expressions; ``blocks`` writes a model's breakdown and a
break-even result from the pieces they offer (and registers itself as their
writer, so ``model.latex()`` works); ``layout`` and ``paper`` write complete
blocks that fit a width (``latex(obj, width=r"\columnwidth")``; loaded the
first time one is asked for); ``tables`` writes recipe x GPU tables;
``plot`` draws figures (matplotlib, imported when drawing).  Everything
LaTeX compiles with pdflatex and amsmath (tables: booktabs).

>>> from roofline_sym.output import latex
>>> import roofline_sym as rs
>>> latex(2 * rs.M)
'2 M'
"""

from .. import renderers
from .blocks import breakdown, breakeven_latex, term_name
from .printer import latex, latex_preamble, names
from .tables import Row, breakeven_rows, breakeven_table

# the writers of blocks of a given width (layout code): loaded when first asked for
renderers.defer(f"{__name__}.paper")

__all__ = ["latex", "latex_preamble", "breakdown", "breakeven_latex", "breakeven_table",
           "breakeven_rows", "Row", "names", "term_name"]
