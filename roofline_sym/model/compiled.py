"""A model's terms compiled once for numbers: evaluation over arrays of shapes.

Every regime piece of every term goes into one lambdified callable (``cse``
shares products such as ``M*K``); each term is the maximum of its pieces and
each total a sum of terms, both taken in numpy, in place, which compiles
several times faster than lambdifying the ``Max`` expressions and allocates
nothing per term.  ``Linear.evaluate`` and ``Linear.evaluate_terms`` use it.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise").on("h100")
>>> c = CompiledTerms(m.terms, [])
>>> round(float(c.totals(8192, 8192, 8192, {})[("lowp", "gemm")]), 6)
0.001941
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..validate import SHAPE_MAX, positive_array
from .term import Term

__all__ = ["CompiledTerms", "GROUPS"]

# the totals a model sums its terms into: (side, group)
GROUPS = (("baseline", "gemm"), ("baseline", "overhead"), ("lowp", "gemm"), ("lowp", "overhead"))


class CompiledTerms:
    """``terms`` as one numeric function of the shapes and of the hardware
    symbols ``free`` (those not bound yet), called by name."""

    def __init__(self, terms: Sequence[Term], free: Sequence[sympy.Symbol]):
        self.terms = tuple(terms)
        self.free = sorted(free, key=str)
        pieces = [e for t in self.terms for _, e in t.pieces]
        self._fn = sympy.lambdify([*S.SHAPE_SYMBOLS, *self.free], pieces, modules="numpy",
                                  cse=True)
        self._spans, start = [], 0
        for t in self.terms:
            self._spans.append((start, start + len(t.pieces)))
            start += len(t.pieces)

    def pieces(self, M: Any, K: Any, N: Any,
               hardware_values: Mapping[str, Any]) -> tuple[list[np.ndarray], tuple]:
        """Every piece at the shapes (checked), broadcast to one shape."""
        shapes = [positive_array(v, name, limit=SHAPE_MAX)
                  for v, name in ((M, "M"), (K, "K"), (N, "N"))]
        names = [str(s) for s in self.free]
        missing = [n for n in names if n not in hardware_values]
        if missing:
            raise ValueError(f"model has free hardware symbols {missing}: bind a GPU with "
                             ".on(hw) or pass them by name to evaluate()")
        unknown = set(hardware_values) - set(names)
        if unknown:
            raise ValueError(f"unknown hardware value(s) {sorted(unknown)}; this model's "
                             f"free symbols are {names}")
        hw = [positive_array(hardware_values[n], n, allow_zero=S.may_be_zero(n)) for n in names]
        shape = np.broadcast_shapes(*(a.shape for a in shapes + hw))
        with np.errstate(all="ignore"):
            values = [np.broadcast_to(np.asarray(v, dtype=np.float64), shape)
                      for v in self._fn(*shapes, *hw)]
        return values, shape

    def term_times(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
                   ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{term name: (seconds, regime labels)}``."""
        values, _ = self.pieces(M, K, N, hardware_values)
        out = {}
        for term, (a, b) in zip(self.terms, self._spans):
            stack = np.stack(values[a:b])
            labels = np.array([r for r, _ in term.pieces])
            out[term.name] = (stack.max(axis=0), labels[stack.argmax(axis=0)])
        return out

    def totals(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
               ) -> dict[tuple[str, str], np.ndarray]:
        """``{(side, group): seconds}``: each of ``GROUPS`` summed over its terms."""
        values, shape = self.pieces(M, K, N, hardware_values)
        out = {key: np.zeros(shape) for key in GROUPS}
        for term, (a, b) in zip(self.terms, self._spans):
            total = out[(term.side, term.group)]
            # in place: a sweep of millions of shapes should not allocate per term
            if b - a == 1:
                total += values[a]
                continue
            piece_max = np.maximum(values[a], values[a + 1], out=np.empty(shape))
            for v in values[a + 2:b]:
                np.maximum(piece_max, v, out=piece_max)
            total += piece_max
        return out
