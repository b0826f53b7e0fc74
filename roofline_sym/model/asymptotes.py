"""The speedup's limits: tiny shapes and huge ones, as SymPy expressions.

At a vanishing shape every GEMM and kernel costs its fixed time (or the
launch floor): the speedup tends to the ratio of the sides' fixed times.  On
the cube M = K = N = x, x -> oo, every GEMM is compute-bound and the
kernels' x**2 bytes vanish against the GEMMs' x**3 FLOPs: the speedup tends
to the ratio of the GEMM rates.  Both are formulas in hardware symbols, for
a paper's "small- and large-shape limits"; a bound model gives numbers.

>>> from roofline_sym.model.layer import linear
>>> lim = limits(linear("rowwise", mode="inference", workload="gemm"))
>>> lim.large
P_fp8*eta_fp8*kappa_rowwise/(P_bf16*eta_bf16)
>>> lim.small
Max(t0_bf16, t_launch)/Max(t0_fp8_rowwise, t_launch)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy

from .. import symbols as S

if TYPE_CHECKING:  # a type only: linear imports this module's callers
    from .layer import Linear

__all__ = ["Limits", "limits"]


@dataclass(frozen=True)
class Limits:
    """``small``: the speedup as every shape dimension tends to 0; ``large``:
    along the cube M = K = N = x as x tends to infinity."""

    small: sympy.Expr
    large: sympy.Expr

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.small, self.large))


def _side_times(model: "Linear", side: str) -> list[tuple[tuple[str, sympy.Expr], ...]]:
    return [t.pieces for t in model.terms if t.side == side]


def _at_zero(terms: list[tuple[tuple[str, sympy.Expr], ...]]) -> sympy.Expr:
    zero = {s: sympy.Integer(0) for s in S.SHAPE_SYMBOLS}
    return sympy.Add(*(sympy.Max(*(e.xreplace(zero) for _, e in pieces))
                       for pieces in terms))


def _leading(terms: list[tuple[tuple[str, sympy.Expr], ...]]) -> sympy.Expr:
    """The x**3 coefficient of the sum of the terms on the cube M = K = N = x."""
    x = S.x
    cube = {s: x for s in S.SHAPE_SYMBOLS}
    total = sympy.Integer(0)
    for pieces in terms:
        coefficients = []
        for _, e in pieces:
            # block counts ceil(x / b) grow like x / b: the limit is the same
            smooth = e.xreplace(cube).replace(sympy.ceiling, lambda a: a) \
                .replace(sympy.floor, lambda a: a)
            coefficients.append(sympy.limit(smooth / x**3, x, sympy.oo))
        total += sympy.Max(*coefficients)
    return total


def limits(model: "Linear") -> Limits:
    """The small- and large-shape limits of ``model``'s speedup.

    >>> from roofline_sym.model.layer import linear
    >>> small, large = limits(linear("tensorwise", mode="inference", workload="gemm").on("h100"))
    >>> float(small) <= 1.1, 1.9 < float(large) < 2.3
    (True, True)
    """
    base, lowp = _side_times(model, "baseline"), _side_times(model, "lowp")
    small = sympy.simplify(_at_zero(base) / _at_zero(lowp))
    large = sympy.simplify(_leading(base) / _leading(lowp))
    return Limits(small, large)
