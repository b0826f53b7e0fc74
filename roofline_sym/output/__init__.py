"""LaTeX for papers (expressions, breakdowns, break-evens, tables) and plots.

>>> from roofline_sym.output import latex
>>> import roofline_sym as rs
>>> latex(2 * rs.M)
'2 M'
"""

from .blocks import (
    Row,
    breakdown,
    breakeven_latex,
    breakeven_rows,
    breakeven_table,
    latex,
    names,
    term_name,
)

__all__ = ["latex", "breakdown", "breakeven_latex", "breakeven_table", "breakeven_rows",
           "Row", "names", "term_name"]
