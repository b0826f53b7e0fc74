"""LaTeX for model expressions, with readable hardware symbols.

>>> import roofline_sym as rs
>>> from roofline_sym import symbols as S
>>> latex(2 * rs.M * rs.K * rs.N / (S.peak_flops("fp8") * S.gemm_efficiency("fp8")))
'\\\\frac{2 K M N}{P_{\\\\mathrm{fp8}} \\\\eta_{\\\\mathrm{fp8}}}'
"""

from __future__ import annotations

import sympy

from . import symbols as S

__all__ = ["latex"]


def latex(expr) -> str:
    """Readable LaTeX of any model expression (exact numbers, named symbols)."""
    expr = sympy.sympify(expr)
    names = {s: S.latex_name(s) for s in expr.free_symbols if S.is_hardware_symbol(s)}
    return sympy.latex(expr, symbol_names=names)
