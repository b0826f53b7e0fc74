"""Prediction intervals from the leave-one-source-out residuals.

A prediction's error is not a fixed plus-or-minus: a GEMM-only row on a
calibrated GPU is predicted far better than a layer on a GPU carried over
from another.  The shipped ``residuals.csv`` (beside the published
measurements, written by ``benchmarks/bench_fidelity.py``) holds every
left-out row's ``log(predicted / measured)`` with the row's *class*: what
is predicted (training or inference, the recipe's scaling family), its GPU
generation, its workload class (``gemm`` or ``layer``), whether its GPU
was calibrated by some other source and whether its implementation was.
An interval for a new row takes the quantiles of the residuals of the most
specific class with enough rows (``MIN_ROWS``), falling back to broader
ones: a per-tensor GEMM is predicted better than a block-scaled training
layer, and an uncalibrated GPU or implementation gets the wider band its
class earned.

>>> lo, hi = band([RowClass("hopper", "gemm", True, True)], 0.8)
>>> bool(lo[0] < 1 < hi[0])
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ...datafile import CsvWriter, Delimited, read_text, where
from ...devices import Hardware
from ...errors import InputError
from ...model.layer import Linear
from ...devices import implementations as impls
from . import gpu_fits
from .speedup_table import SpeedupTable, kernels_path
from .rows import row_family, row_gpu
from ...validate import label, show

__all__ = ["RowClass", "row_class", "table_classes", "model_class", "band", "speedup_band", "breakeven_range",
           "residuals_path", "read_residuals", "write_residuals", "sorted_quantile", "MIN_ROWS",
           "WORKLOAD_CLASSES"]

# a class's residuals are used when it has this many rows; else a broader class's
MIN_ROWS = 30
# workload -> class: the GEMMs alone, or a layer with its casts and neighbours
WORKLOAD_CLASSES = {"gemm": "gemm"}


@dataclass(frozen=True)
class RowClass:
    """What an interval depends on: ``generation`` (``hopper``, ``blackwell``,
    ...), ``workload`` (``gemm`` or ``layer``), whether the GPU
    (``gpu_calibrated``) and the implementation (``impl_calibrated``) were
    calibrated by measurements, and the recipe: its ``mode`` (``training``,
    ``inference``; blank: not known) and scaling ``family`` (``rowwise``,
    ``mx``, ...; blank: bf16 GEMMs); the ``implementation`` and ``timer`` it
    was predicted for (a band widens where the residuals have seen neither).

    >>> RowClass("hopper", "gemm", True, True, "inference", "tensorwise").keys()[0]
    ('recipe', 'inference', 'tensorwise', True, True)
    """

    generation: str
    workload: str
    gpu_calibrated: bool
    impl_calibrated: bool
    mode: str = ""
    family: str = ""
    # what a band widens for where the residuals have not seen it (not a pool key)
    implementation: str = "torch"
    timer: str = "graph"

    def keys(self) -> list[tuple[Any, ...]]:
        """From the most specific pool to the broadest: the recipe's (mode and
        family, calibrated as this row is), then the GPU's and workload's."""
        g, w, c, i = self.generation, self.workload, self.gpu_calibrated, self.impl_calibrated
        recipe: list[tuple[Any, ...]] = []
        if self.mode:
            r = ("recipe", self.mode, self.family)
            recipe = [r + (c, i), r + (c, None), r + (None, None)]
        return recipe + [(g, w, c, i), (None, w, c, i), (None, None, c, i), (None, None, c, None),
                         (None, None, None, None)]


def row_class(gpu: Hardware, workload: str, implementation: str, family: str | None,
              mode: str = "", timer: str = "") -> RowClass:
    """The class of a prediction for ``gpu`` running ``workload`` in ``mode``
    with ``implementation`` GEMMs of scaling ``family``, timed by ``timer``
    (blank: the default model's, ``graph``)."""
    calibrated = gpu.name in gpu_fits.fitted_gpus()
    impl_ok = implementation == "torch" or (
        family is not None and impls.profile(implementation, gpu, family) is not None)
    return RowClass(str(impls.generation(gpu)), WORKLOAD_CLASSES.get(workload, "layer"),
                    calibrated, impl_ok, mode, family or "", implementation or "torch",
                    timer or "graph")


def table_classes(table: SpeedupTable, rows: Iterable[int] | None = None) -> list[RowClass]:
    """The class of each row (``rows``: only these) of a speedup table as the
    shipped calibration predicts it."""
    return [row_class(row_gpu(str(table.gpu[i])), str(table.workload[i]),
                      str(table.implementation[i]), row_family(table, i), str(table.mode[i]),
                      str(table.timer[i]))
            for i in (range(len(table)) if rows is None else rows)]


def residuals_path() -> Path:
    """The shipped leave-one-source-out residuals."""
    return kernels_path().with_name("residuals.csv")


_COLUMNS = ("source_id", "gpu", "generation", "workload", "gpu_calibrated", "impl_calibrated",
            "mode", "family", "implementation", "timer", "log_residual")


def read_residuals(path: str | Path | None = None) -> list[tuple[dict[str, str], RowClass, float]]:
    """Each row of a residuals file (default: the shipped one): its cells, its
    class and its ``log_residual`` (NaN where the row had no prediction)."""
    source, text = read_text(path if path is not None else residuals_path(), "residuals file")
    table = Delimited(text.splitlines(keepends=True), label(source))
    table.require(_COLUMNS)
    out = []
    for line, row in table.records():
        try:  # a log: any sign; NaN where the row had no prediction
            r = float(row["log_residual"])
        except ValueError:
            raise InputError(f"{where(table.source, line, 'log_residual')}: "
                             f"{show(row['log_residual'])} is not a number") from None
        c = RowClass(row["generation"], row["workload"], row["gpu_calibrated"] == "1",
                     row["impl_calibrated"] == "1", row["mode"], row["family"],
                     row["implementation"], row["timer"])
        out.append((row, c, r))
    return out


@cache
def _pools(path: str | None = None) -> dict[tuple[Any, ...], np.ndarray]:
    pools: dict[tuple[Any, ...], list[float]] = {}
    for _, c, r in read_residuals(path):
        if not math.isfinite(r):
            continue
        for key in c.keys():
            pools.setdefault(key, []).append(r)
    return {k: np.sort(np.array(v)) for k, v in pools.items()}


# the attributes of a row whose groups each lean their own way (a generation's
# calibration, a library's kernels, a timer's host time): a band widens by their
# spread where the residuals have not seen the row's
UNSEEN = ("generation", "implementation", "timer")


@cache
def _seen(path: str | None = None) -> dict[str, tuple[frozenset[str], np.ndarray]]:
    """Per ``UNSEEN`` attribute: the values the residuals hold, and the sorted
    distances of each value's median residual from the pooled median (the bias
    a group the residuals have not seen may carry)."""
    rows = [(c, r) for _, c, r in read_residuals(path) if math.isfinite(r)]
    if not rows:
        return {a: (frozenset(), np.zeros(1)) for a in UNSEEN}
    centre = sorted_quantile(np.sort([r for _, r in rows]), 0.5)
    out = {}
    for a in UNSEEN:
        groups: dict[str, list[float]] = {}
        for c, r in rows:
            groups.setdefault(getattr(c, a), []).append(r)
        bias = np.sort([abs(sorted_quantile(np.sort(v), 0.5) - centre)
                        for v in groups.values()])
        out[a] = (frozenset(groups), bias)
    return out


def band(classes: Sequence[RowClass], interval: float, path: str | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    """Per class, the factors ``(low, high)`` that bound the measured
    speedup as ``low * predicted .. high * predicted`` with probability
    ``interval`` (in (0, 1)), from the residuals of the class's pool.

    The band is centred on the pool's median residual (a pool that
    over-predicts moves its band down) with the half-width that holds
    ``interval`` of the pool's residuals around it; for each of the row's
    GPU generation, implementation and timer the residuals have not seen, the
    ``interval`` quantile of the groups' biases is added in quadrature (an
    unseen group's own lean is unknown, drawn like the seen groups'); and the
    band always holds the prediction itself."""
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not (
            0 < float(interval) < 1):
        raise InputError(f"interval must be a probability in (0, 1), such as 0.8, "
                         f"not {interval!r}")
    pools = _pools(path)
    seen = _seen(path)
    lo, hi = np.empty(len(classes)), np.empty(len(classes))
    for i, c in enumerate(classes):
        pool = next((pools[k] for k in c.keys() if len(pools.get(k, ())) >= MIN_ROWS),
                    pools[(None, None, None, None)])
        centre = sorted_quantile(pool, 0.5)
        half = sorted_quantile(np.sort(np.abs(pool - centre)), interval)
        for a, (values, bias) in seen.items():
            if getattr(c, a) not in values:
                half = math.hypot(half, sorted_quantile(bias, interval))
        half = max(half, abs(centre))
        # measured = predicted * exp(-r): the high residual bounds it below
        lo[i], hi[i] = math.exp(-(centre + half)), math.exp(-(centre - half))
    return lo, hi


def sorted_quantile(ordered: np.ndarray, q: float) -> float:
    """``np.quantile(ordered, q)`` (its default, linear interpolation) of a
    non-empty array sorted ascending without NaN, in numpy's arithmetic, so the
    same float: without the partition numpy makes first, which loads
    ``numpy.ma`` (a tenth of the main job's imports) to order an array that is
    already in order.

    >>> sorted_quantile(np.array([1.0, 2.0, 4.0]), 0.75), float(np.quantile([1.0, 2.0, 4.0], 0.75))
    (3.0, 3.0)
    """
    n = len(ordered)
    virtual = (n - 1) * q  # numpy's virtual index, as numpy computes it
    if virtual >= n - 1:
        return float(ordered[-1])
    below = math.floor(virtual)
    gamma = virtual - below
    a, b = float(ordered[below]), float(ordered[below + 1])
    # numpy's lerp: from the nearer end, so an endpoint is exact
    return b - (b - a) * (1 - gamma) if gamma >= 0.5 else a + (b - a) * gamma


def write_residuals(rows: Iterable[dict[str, Any]], path: str | Path | None = None) -> Path:
    """Write residual rows (``_COLUMNS``) as the shipped CSV; returns the path."""
    out = Path(path) if path else residuals_path()
    with open(out, "w", encoding="utf-8", newline="") as f:
        w = CsvWriter(f, _COLUMNS)
        for r in rows:
            w.write({k: r[k] for k in _COLUMNS})
    _pools.cache_clear()
    _seen.cache_clear()
    return out


def model_class(model: Linear) -> RowClass:
    """The interval class of a bound model's predictions."""
    if model.hardware is None:
        raise InputError("an interval needs a GPU: bind the model with .on(gpu)")
    return row_class(model.hardware, model.workload.name, model.options.implementation,
                     model.recipe.family("output"), model.mode, model.options.timer)


def speedup_band(model: Linear, interval: float = 0.8) -> tuple[float, float]:
    """The factors ``(low, high)`` around a bound model's predicted speedup."""
    lo, hi = band([model_class(model)], interval)
    return float(lo[0]), float(hi[0])


def _crossing(model: Linear, level: float, K: float | None, N: float | None) -> float:
    """The smallest x (the cube's edge, or M at fixed K, N) where the predicted
    speedup rises through ``level``; NaN if it does not in 1 .. 2**24."""
    x = np.geomspace(1.0, 2.0 ** 24, 4097)

    def speedup(v: np.ndarray) -> np.ndarray:
        k, n = (v, v) if K is None else (K, N)
        out: np.ndarray = model.evaluate(v, k, n, outputs=("speedup",),
                                          integer_shapes=False)["speedup"] - level
        return out

    for _ in range(3):  # each pass a 1/4096 finer grid inside the bracket: ~1e-8 relative
        s = speedup(x)
        up = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
        if not up.size:
            return math.nan
        x = np.geomspace(x[up[0]], x[up[0] + 1], 4097)
    return float(x[-1])


def breakeven_range(model: Linear, interval: float = 0.8, K: float | None = None,
                    N: float | None = None) -> tuple[float, float]:
    """Where the measured break-even may lie with probability ``interval``:
    ``(low, high)`` of the cube's edge (or of M at fixed ``K``, ``N``), the
    shapes at which the band around the predicted speedup first reaches 1 at
    its optimistic and at its pessimistic edge (NaN where it does not).

    >>> import roofline_sym as rs
    >>> lo, hi = breakeven_range(rs.linear("tensorwise").on("h100"))
    >>> bool(lo < hi)
    True
    """
    if (K is None) != (N is None):
        raise InputError("give both K and N (M* at fixed K, N), or neither (the cube)")
    f_lo, f_hi = speedup_band(model, interval)
    # the measured speedup lies in [f_lo s, f_hi s]: it reaches 1 once s reaches 1 / f_hi
    # (the optimistic edge) and, at the latest, once s reaches 1 / f_lo
    return _crossing(model, 1 / f_hi, K, N), _crossing(model, 1 / f_lo, K, N)
