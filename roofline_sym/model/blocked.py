"""Evaluation over dask arrays: lazy, block by block, on any dask scheduler.

The compiled evaluation (``compiled.CompiledTerms``) is elementwise numpy, so
a model evaluates dask arrays by mapping it over their blocks: shapes and
hardware values broadcast together (``dask.array.broadcast_arrays``), each
block is a plain numpy evaluation, and the outputs come back as dask arrays
sharing one task per block.  Nothing runs until ``.compute()``; on a
``dask.distributed`` cluster the blocks run on its workers.

The function sent to the workers carries the model's terms, not compiled
code: each worker process compiles a model once and keeps it, so a sweep of
a billion shapes in thousands of blocks compiles once per worker.  dask is
imported only here, and only when a dask array is evaluated.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from .compiled import GROUPS, CompiledTerms

__all__ = ["is_lazy", "evaluate_lazy", "outputs_of"]

# the models compiled by this (worker) process, by the key of their terms
_CACHE: dict[str, CompiledTerms] = {}


def is_lazy(*values: Any) -> bool:
    """Whether any value is a dask collection (checked without importing dask).

    >>> is_lazy(1.0, np.ones(3))
    False
    """
    return any(callable(getattr(v, "__dask_graph__", None)) for v in values)


def outputs_of(totals: Mapping[tuple[str, str], np.ndarray]) -> tuple[np.ndarray, ...]:
    """The seven outputs, in ``linear.OUTPUTS`` order, from the four group totals."""
    bg, bo, lg, lo = (totals[key] for key in GROUPS)
    base, lowp = bg + bo, lg + lo
    return bg, bo, lg, lo, base, lowp, base / lowp


class _Blocks:
    """One model's evaluation of a block: picklable (its terms travel, compiled
    code does not), compiled once per process."""

    def __init__(self, compiled: CompiledTerms, selected: Sequence[int]):
        self.terms, self.free = compiled.terms, tuple(compiled.free)
        self.names = tuple(str(s) for s in self.free)
        self.selected = tuple(selected)
        text = repr([(t.name, [(r, sympy.srepr(e)) for r, e in t.pieces]) for t in self.terms])
        self.key = hashlib.sha256((text + repr(self.names)).encode()).hexdigest()
        self._here = compiled  # this process's compiled model; it does not travel

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_here"}

    def __call__(self, m: np.ndarray, k: np.ndarray, n: np.ndarray,
                 *hw: np.ndarray) -> np.ndarray:
        compiled = getattr(self, "_here", None) or _CACHE.get(self.key)
        if compiled is None:  # a worker process: compile once, keep it
            compiled = _CACHE.setdefault(self.key, CompiledTerms(self.terms, self.free))
        values = outputs_of(compiled.totals(m, k, n, dict(zip(self.names, hw))))
        shape = np.broadcast_shapes(np.shape(m), *(np.shape(v) for v in values))
        return np.stack([np.broadcast_to(values[i], shape) for i in self.selected])


def evaluate_lazy(compiled: CompiledTerms, names: Sequence[str], selected: Sequence[str],
                  M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any]
                  ) -> dict[str, Any]:
    """The outputs ``selected`` (of ``names``, the seven in order) as dask
    arrays, at shapes ``M, K, N`` (dask arrays, numpy arrays or numbers).

    Missing or unknown hardware values are refused now; the shapes' values
    are checked block by block when computed.
    """
    import dask.array as da

    free = [str(s) for s in compiled.free]
    # names now (missing, unknown), with numbers that pass: one scalar evaluation
    compiled.totals(1.0, 1.0, 1.0, dict.fromkeys(hardware_values, 1.0))
    arrays = da.broadcast_arrays(*(da.asarray(v) for v in
                                   (M, K, N, *(hardware_values[n] for n in free))))
    blocks = _Blocks(compiled, [list(names).index(s) for s in selected])
    index = tuple(f"i{d}" for d in range(arrays[0].ndim))
    # blockwise lines the arrays' chunks up; the outputs form a new first axis
    stacked = da.blockwise(blocks, ("out",) + index, *(x for a in arrays for x in (a, index)),
                           new_axes={"out": len(selected)}, dtype=np.float64,
                           meta=np.empty((0,) * (len(index) + 1)))
    return {name: stacked[i] for i, name in enumerate(selected)}
