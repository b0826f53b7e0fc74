"""A named time term: the maximum of its regime pieces.

Every cost in a model is a sum of terms.  A term keeps its pieces apart, each
labelled with the regime it stands for (``compute``, ``memory``, ``launch``),
so a breakdown, a regime label and a break-even split all read the structure
instead of taking a ``Max`` apart again.

>>> import sympy
>>> from roofline_sym.symbols import M, launch_overhead
>>> t = Term("lowp.cast.input", (("memory", 3 * M), ("launch", launch_overhead())))
>>> t.expr
Max(3*M, t_launch)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import sympy

__all__ = ["Term", "REGIMES", "REGIME_LETTERS"]

REGIMES = ("compute", "memory", "launch")
# one-letter labels for tables and plot legends
REGIME_LETTERS = {"compute": "C", "memory": "M", "launch": "L"}


@dataclass(frozen=True)
class Term:
    """``name`` is dotted: side (``baseline``/``lowp``), kind, then details."""

    name: str
    pieces: tuple[tuple[str, sympy.Expr], ...]

    def __post_init__(self) -> None:
        unknown = {r for r, _ in self.pieces} - set(REGIMES)
        if unknown or not self.pieces:
            raise ValueError(f"term {self.name!r}: bad pieces {self.pieces!r}")

    @cached_property
    def expr(self) -> sympy.Expr:
        exprs = [e for _, e in self.pieces]
        # evaluate=False: pieces never dominate one another for all shapes, and
        # SymPy's pairwise comparison of symbolic arguments is slow
        return exprs[0] if len(exprs) == 1 else sympy.Max(*exprs, evaluate=False)

    @property
    def side(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def kind(self) -> str:
        """``gemm`` or ``overhead`` (casts and other memory-bound kernels)."""
        return "gemm" if self.name.split(".")[1] == "gemm" else "overhead"

    def xreplace(self, mapping: Mapping) -> "Term":
        return Term(self.name, tuple((r, e.xreplace(mapping)) for r, e in self.pieces))

    def regime(self, values: Mapping) -> str:
        """The regime whose piece is the maximum at numeric ``values``."""
        scores = [float(e.xreplace(values)) for _, e in self.pieces]
        return self.pieces[scores.index(max(scores))][0]
