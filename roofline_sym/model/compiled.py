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

import math
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..validate import (SHAPE_MAX, broadcast_shape, hardware_array, positive_array,
                        unknown_name)
from .term import Term

__all__ = ["CompiledTerms", "GROUPS"]

# the totals a model sums its terms into: (side, group)
GROUPS = (("baseline", "gemm"), ("baseline", "overhead"), ("lowp", "gemm"), ("lowp", "overhead"))
# values per call of the compiled function: bounds the memory every piece takes
CHUNK = 1 << 18


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

    def _inputs(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
                ) -> tuple[list[np.ndarray], tuple[int, ...]]:
        """The arguments of the compiled function (checked) and their broadcast shape."""
        shapes = {name: positive_array(v, name, limit=SHAPE_MAX)
                  for v, name in ((M, "M"), (K, "K"), (N, "N"))}
        names = [str(s) for s in self.free]
        missing = [n for n in names if n not in hardware_values]
        if missing:
            raise ValueError(f"model has free hardware symbols {missing}: bind a GPU with "
                             ".on(hw) or pass them by name to evaluate()")
        unknown = sorted(set(hardware_values) - set(names), key=str)
        if unknown:
            raise unknown_name("hardware value", unknown[0], names,
                               extra=" (not a free symbol of this model)")
        # each hardware value within its plausible range (validate.RANGES)
        hw = {n: hardware_array(hardware_values[n], n) for n in names}
        shape = broadcast_shape({**shapes, **hw})
        return [*shapes.values(), *hw.values()], shape

    def _chunks(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
                ) -> tuple[tuple[int, ...], Iterator[tuple[slice, list[np.ndarray]]]]:
        """The broadcast shape, and ``(rows of the flattened broadcast, every piece on
        those rows)`` a chunk of ``CHUNK`` rows at a time: memory stays bounded
        however many pieces a model has."""
        args, shape = self._inputs(M, K, N, hardware_values)
        n = math.prod(shape)
        # arguments that vary are flattened to the broadcast; scalars stay scalars
        flat = [a if a.size == 1 else np.broadcast_to(a, shape).reshape(-1) for a in args]

        def chunks() -> Iterator[tuple[slice, list[np.ndarray]]]:
            for start in range(0, max(n, 1), CHUNK):
                rows = slice(start, min(start + CHUNK, n))
                part = [a.reshape(()) if a.size == 1 else a[rows] for a in flat]
                width = (rows.stop - rows.start,)
                with np.errstate(all="ignore"):
                    yield rows, [np.broadcast_to(np.asarray(v, dtype=np.float64), width)
                                 for v in self._fn(*part)]

        return shape, chunks()

    def term_times(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
                   ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{term name: (seconds, regime labels)}``."""
        shape, chunks = self._chunks(M, K, N, hardware_values)
        n = math.prod(shape)
        times = {t.name: np.empty(n) for t in self.terms}
        regimes = {t.name: np.empty(n, dtype="<U7") for t in self.terms}
        for rows, values in chunks:
            for term, (a, b) in zip(self.terms, self._spans):
                stack = np.stack(values[a:b])
                labels = np.array([r for r, _ in term.pieces])
                times[term.name][rows] = stack.max(axis=0)
                regimes[term.name][rows] = labels[stack.argmax(axis=0)]
        return {t.name: (times[t.name].reshape(shape), regimes[t.name].reshape(shape))
                for t in self.terms}

    def totals(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
               ) -> dict[tuple[str, str], np.ndarray]:
        """``{(side, group): seconds}``: each of ``GROUPS`` summed over its terms."""
        shape, chunks = self._chunks(M, K, N, hardware_values)
        out = {key: np.zeros(math.prod(shape)) for key in GROUPS}
        for rows, values in chunks:
            width = rows.stop - rows.start
            for term, (a, b) in zip(self.terms, self._spans):
                total = out[(term.side, term.group)][rows]  # a view: added to in place
                # in place: a sweep of millions of shapes should not allocate per term
                if b - a == 1:
                    total += values[a]
                    continue
                piece_max = np.maximum(values[a], values[a + 1], out=np.empty(width))
                for v in values[a + 2:b]:
                    np.maximum(piece_max, v, out=piece_max)
                total += piece_max
        return {key: v.reshape(shape) for key, v in out.items()}
