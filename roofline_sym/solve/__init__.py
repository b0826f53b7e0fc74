"""Break-even shapes: where low precision starts (or stops) paying, and why.

``solver.breakeven`` is the entry; ``inputs`` checks what the user fixes,
``problem`` substitutes it into every term, ``piecewise`` solves a fully
numeric problem interval by interval (``NumericBreakEven``), ``closed_form``
a symbolic one in one regime (``SymbolicBreakEven``); both are ``BreakEven``
(``result``), and ``polynomials`` holds the exact polynomial arithmetic.

>>> from roofline_sym.solve import breakeven, BreakEven
>>> import roofline_sym as rs
>>> isinstance(breakeven(rs.linear("tensorwise").on("h100"), along="cube"), BreakEven)
True
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .solver import BreakEven, NumericBreakEven, SymbolicBreakEven, breakeven

# each name's module, imported on first use
_WHERE = dict.fromkeys(["BreakEven", "NumericBreakEven", "SymbolicBreakEven", "breakeven"],
                       ".solver")

__all__ = ["breakeven", "BreakEven", "NumericBreakEven", "SymbolicBreakEven"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
