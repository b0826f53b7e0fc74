"""A break-even problem: every term's pieces with the fixed values substituted.

Block-scale ``floor``/``ceiling`` terms that depend on the variable are
solved on block-aligned shapes (``floor(K/32) = K/32``); ``aligned`` says
whether any was.

>>> import roofline_sym as rs
>>> p = Problem.of(rs.linear("mxfp8", mode="inference", preset="torchao").on("b200"),
...                rs.x, {rs.M: rs.x, rs.K: rs.x, rs.N: rs.x})
>>> p.aligned, p.numeric
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .. import symbols as S
from ..model.linear import Linear
from ..model.term import Term

__all__ = ["Problem"]

Pieces = tuple[tuple[str, sympy.Expr], ...]


def _align(expr: sympy.Expr, var: sympy.Symbol) -> tuple[sympy.Expr, bool]:
    """Replace floor/ceiling terms that depend on ``var`` by their argument."""
    hits = [a for a in expr.atoms(sympy.floor, sympy.ceiling) if a.has(var)]
    if not hits:
        return expr, False
    return expr.xreplace({a: a.args[0] for a in hits}), True


@dataclass(frozen=True)
class Problem:
    """``baseline_time == lowp_time`` along ``variable``: ``terms`` pairs each
    term with its pieces after ``substitution``; ``free``: the symbols left."""

    model: Linear
    variable: sympy.Symbol
    substitution: dict
    terms: tuple[tuple[Term, Pieces], ...]
    aligned: bool
    free: frozenset

    @classmethod
    def of(cls, model: Linear, var: sympy.Symbol, substitution: dict) -> "Problem":
        """The problem, or a ValueError when the variable is gone from it."""
        aligned, terms, free = False, [], set()
        for term in model.terms:
            pieces = []
            for regime, expr in term.pieces:
                expr, hit = _align(expr.xreplace(substitution), var)
                aligned |= hit
                free |= expr.free_symbols
                pieces.append((regime, expr))
            terms.append((term, tuple(pieces)))
        if var not in free:
            hint = (f"; it is bound to {model.hardware.name}: pass the unbound model and "
                    f"hardware={model.hardware.name!r}"
                    if model.hardware is not None and S.is_hardware_symbol(var) else "")
            raise ValueError(f"the model does not depend on {var} once the given values are "
                             f"substituted: nothing to solve{hint}")
        return cls(model, var, dict(substitution), tuple(terms), aligned, frozenset(free))

    @property
    def numeric(self) -> bool:
        """Only the variable is left: the piecewise solve applies."""
        return self.free == {self.variable}
