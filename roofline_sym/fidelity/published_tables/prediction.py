"""A speedup table's rows predicted (``rows.predict``), with the bands of
``intervals`` where asked: ``rs.fidelity.predict_speedups``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from .intervals import band, table_classes
from .rows import predict
from .speedup_table import read

__all__ = ["predict_speedups"]


def predict_speedups(path_or_table: Any, preset: str = "default", *,
                     unsupported: str = "raise", interval: float | None = None
                     ) -> Any:
    """One predicted speedup per row of a speedup table, in row order.

    ``path_or_table``: a CSV file in the schema of the published measurements
    (``source_id, gpu, recipe, mode, workload, M, K, N, measured_speedup,
    implementation, timer, notes``; ``measured_speedup`` may be blank or absent and
    is never read), or rows in memory (see ``speedup_table.read``).  GPU and
    recipe names as the sources write them (``mxfp8_cublas`` in inference is
    ``mxfp8``).  An unknown GPU, recipe, workload or implementation is an
    error naming the row; ``unsupported="nan"`` leaves whole-model rows NaN
    instead of raising.

    ``interval`` (a probability such as 0.8, default model only): returns a
    mapping with ``speedup``, ``low`` and ``high`` arrays, the band from the
    leave-one-source-out residuals of the row's class (``intervals``): wider
    for a layer than a GEMM, for a GPU or implementation no measurement
    calibrated.

    >>> rows = [{"gpu": "b200", "recipe": "mxfp8_cublas", "mode": "inference",
    ...          "workload": "relu-linear", "M": 8192, "K": 8192, "N": 8192}]
    >>> p = predict_speedups(rows, interval=0.8)
    >>> bool(p["low"][0] < p["speedup"][0] < p["high"][0])
    True
    """
    if interval is not None:
        band([], interval)  # a probability in (0, 1), before any work
        if preset != "default":
            raise InputError("prediction intervals come from the default model's "
                             "cross-validation: use preset='default'")
    speedup = predict(path_or_table, preset, unsupported=unsupported)
    if interval is None:
        return speedup
    table = read(path_or_table)
    known = np.flatnonzero(np.isfinite(speedup))
    low, high = np.full(len(table), np.nan), np.full(len(table), np.nan)
    lo, hi = band(table_classes(table, known), interval)
    low[known], high[known] = speedup[known] * lo, speedup[known] * hi
    return {"speedup": speedup, "low": low, "high": high}
