"""Evaluation over dask arrays: lazy, block by block, on any dask scheduler.

The compiled evaluation is elementwise, so compiled terms evaluate dask arrays
by mapping over their blocks: shapes and hardware values broadcast together
(``dask.array.broadcast_arrays``), each block is a plain numpy evaluation (the
fused kernel where it pays, ``runtime.fast_pays``), and the outputs come back
as dask arrays sharing one task per block.  Nothing runs until
``.compute()``; on a ``dask.distributed`` cluster the blocks run on its
workers.

The function sent to the workers carries the terms and their layout (and a
bound model's numbers), not compiled code: each worker process compiles the
terms once (``compiled.compile_terms`` keeps them), so a sweep of a billion
shapes in thousands of blocks compiles once per worker.  dask is imported
only here, and only when a dask array is evaluated.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..devices.ranges import plausible
from .compiled import BoundTerms, CompiledTerms, compile_terms

__all__ = ["is_lazy", "evaluate_lazy"]


def is_lazy(*values: Any) -> bool:
    """Whether any value is a dask collection (checked without importing dask).

    >>> is_lazy(1.0, np.ones(3))
    False
    """
    return any(callable(getattr(v, "__dask_graph__", None)) for v in values)


class _Blocks:
    """One evaluation of a block: picklable (terms, layout and numbers travel,
    compiled code does not), compiled once per process."""

    def __init__(self, evaluator: CompiledTerms | BoundTerms, selected: Sequence[str],
                 dtype: Any):
        compiled = evaluator.compiled
        self.terms, self.layout, self.names = compiled.terms, compiled.layout, compiled.free_names
        self.coefficients = evaluator.coefficients_bound  # a bound model's numbers
        self.selected, self.dtype = tuple(selected), dtype
        self._here = evaluator  # this process's compiled terms; they do not travel

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_here"}

    def __call__(self, m: np.ndarray, k: np.ndarray, n: np.ndarray,
                 *hw: np.ndarray) -> np.ndarray:
        evaluator = getattr(self, "_here", None)
        if evaluator is None:  # a worker process: compiled once there, kept
            compiled = compile_terms(self.terms, self.layout)
            evaluator = self._here = (compiled if self.coefficients is None else
                                      BoundTerms(compiled, self.coefficients))
        values = evaluator.evaluate(m, k, n, dict(zip(self.names, hw)), outputs=self.selected,
                                    dtype=self.dtype, threads=1)
        shape = np.broadcast_shapes(np.shape(m), *(np.shape(v) for v in values.values()))
        return np.stack([np.broadcast_to(values[name], shape) for name in self.selected])


def evaluate_lazy(evaluator: CompiledTerms | BoundTerms, outputs: Sequence[str] | str | None,
                  M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any],
                  dtype: Any = np.float64) -> dict[str, Any]:
    """The ``outputs`` as dask arrays, at shapes ``M, K, N`` (dask arrays, numpy
    arrays or numbers).

    Missing or unknown hardware values and unknown outputs are refused now; the
    shapes' values are checked block by block when computed.
    """
    import dask.array as da

    # names now (outputs, missing, unknown), with numbers that pass: one scalar evaluation
    probe = {name: plausible(name) for name in hardware_values}
    selected = list(evaluator.evaluate(1.0, 1.0, 1.0, probe, outputs=outputs))
    free = evaluator.compiled.free_names if evaluator.coefficients_bound is None else ()
    # dask ships py.typed but leaves these functions unannotated
    arrays = da.broadcast_arrays(*(da.asarray(v) for v in  # type: ignore[no-untyped-call]
                                   (M, K, N, *(hardware_values[n] for n in free))))
    blocks = _Blocks(evaluator, selected, np.dtype(dtype))
    index = tuple(f"i{d}" for d in range(arrays[0].ndim))
    # blockwise lines the arrays' chunks up; the outputs form a new first axis
    stacked = da.blockwise(  # type: ignore[no-untyped-call]
        blocks, ("out",) + index, *(x for a in arrays for x in (a, index)),
        new_axes={"out": len(selected)}, dtype=np.dtype(dtype),
        meta=np.empty((0,) * (len(index) + 1), dtype=dtype))
    return {name: stacked[i] for i, name in enumerate(selected)}
