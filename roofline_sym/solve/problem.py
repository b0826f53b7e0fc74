"""A break-even problem: every term's pieces with the fixed values substituted.

Block-scale ``floor``/``ceiling`` terms that depend on the variable stay as
they are (``floors`` says whether there are any): the numeric solve splits
the axis where they step and solves each piece exactly.  The closed form in
one regime cannot, and takes block-aligned shapes (``floor(K/32) = K/32``,
``aligned_terms``).

>>> import roofline_sym as rs
>>> p = Problem.of(rs.linear("mxfp8", mode="inference", preset="torchao").on("b200"),
...                rs.x, {rs.M: rs.x, rs.K: rs.x, rs.N: rs.x})
>>> p.floors, p.numeric
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sympy

from .. import symbols as S
from ..errors import InputError
from ..model import rounding
from ..model.layer import Linear
from ..model.term import Term

__all__ = ["Problem", "Pieces", "step_atoms"]

Pieces = tuple[tuple[str, sympy.Expr], ...]


def step_atoms(expr: sympy.Expr, var: sympy.Symbol) -> set[sympy.Expr]:
    """The floor/ceiling terms of ``expr`` that depend on ``var`` (nested ones too)."""
    return {a for a in expr.atoms(sympy.floor, sympy.ceiling) if a.has(var)}


def _align(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """Floor/ceiling terms that depend on ``var`` replaced by their argument,
    innermost first (block-aligned shapes)."""
    while True:
        hits = step_atoms(expr, var)
        if not hits:
            return expr
        inner = [a for a in hits if not step_atoms(a.args[0], var)]
        expr = expr.xreplace({a: a.args[0] for a in inner})


@dataclass(frozen=True)
class Problem:
    """``baseline_time == lowp_time`` along ``variable``: ``terms`` pairs each
    term with its pieces after ``substitution``; ``free``: the symbols left;
    ``floors``: whether a floor/ceiling depends on the variable."""

    model: Linear
    variable: sympy.Symbol
    substitution: dict[sympy.Symbol, sympy.Expr]
    terms: tuple[tuple[Term, Pieces], ...]
    floors: bool
    free: frozenset[sympy.Symbol]

    @classmethod
    def of(cls, model: Linear, var: sympy.Symbol,
           substitution: Mapping[sympy.Symbol, sympy.Expr]) -> "Problem":
        """The problem, or a ValueError when the variable is gone from it."""
        floors, terms, free = False, [], set()
        memo: dict[sympy.Basic, sympy.Basic] = {}  # pieces share subexpressions
        for term in model.terms:
            pieces = []
            for regime, expr in term.pieces:
                expr = rounding.xreplace(expr, substitution, memo)
                floors = floors or bool(step_atoms(expr, var))
                free |= expr.free_symbols
                pieces.append((regime, expr))
            terms.append((term, tuple(pieces)))
        if var not in free:
            hint = (f"; it is bound to {model.hardware.name}: pass the unbound model and "
                    f"hardware={model.hardware.name!r}"
                    if model.hardware is not None and S.is_hardware_symbol(var) else "")
            raise InputError(f"the model does not depend on {var} once the given values are "
                             f"substituted: nothing to solve{hint}")
        return cls(model, var, dict(substitution), tuple(terms), floors, frozenset(free))

    @property
    def numeric(self) -> bool:
        """Only the variable is left: the piecewise solve applies."""
        return self.free == {self.variable}

    def aligned_terms(self) -> tuple[tuple[Term, Pieces], ...]:
        """``terms`` on block-aligned shapes: every floor/ceiling of the variable
        replaced by its argument (what a closed form in one regime solves)."""
        if not self.floors:
            return self.terms
        return tuple((t, tuple((r, _align(e, self.variable)) for r, e in ps))
                     for t, ps in self.terms)
