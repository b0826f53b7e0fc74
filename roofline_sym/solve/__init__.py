"""Break-even shapes: where low precision starts (or stops) paying, and why.

>>> from roofline_sym.solve import breakeven, BreakEven
>>> import roofline_sym as rs
>>> isinstance(breakeven(rs.linear("tensorwise").on("h100"), along="cube"), BreakEven)
True
"""

from .solver import BreakEven, breakeven

__all__ = ["breakeven", "BreakEven"]
