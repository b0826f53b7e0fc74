"""Calibration from speedup tables: fit hardware numbers to measured ratios.

A speedup is a ratio of two times, so it pins the hardware numbers only
relative to each other: fit the few the data can tell apart (the fp8 GEMM
rate against a fixed bf16 one, a kernel class's bandwidth, the half sizes)
and keep the rest at their sources.  The residual is
``log(predicted / measured)``; the fit is bounded least squares
(``scipy.optimize.least_squares``, the ``fit`` extra) in the logarithms of
the free numbers, each within its physical range.  The fitted entry cites,
for every number it changed, the rows it was fitted to.

>>> from roofline_sym.harness.speedup_tables import published
>>> t = published()
>>> rows = t.select((t.source_id == "ao-infer-b200-r5"))
>>> fit = fit_speedups(rows, "b200", ["eta_fp8", "F_half_fp8"])  # doctest: +SKIP
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import symbols as S
from ..devices import Hardware, hardware
from ..devices.entry import HALF_BYTES_MAX
from ..model.linear import Linear
from .speedup_tables import SpeedupTable, read
from .speedups import predictable, unbound_row_model

__all__ = ["SpeedupFit", "fit_speedups", "errors", "BOUNDS"]

# physical range of each kind of free number (the hardware entry's own ranges)
BOUNDS = {"eta": (0.01, 1.0), "kappa": (0.05, 1.5), "F_half": (1.0, 1e13),
          "B_half": (1.0, HALF_BYTES_MAX), "t_launch": (1e-7, 1e-4)}


def _bounds(name: str) -> tuple[float, float]:
    for prefix, bounds in BOUNDS.items():
        if name.startswith(prefix):
            return bounds
    raise ValueError(f"{name!r} cannot be fitted to speedups: fit efficiencies (eta_*), "
                     "scaling factors (kappa_*), half sizes (F_half_*, B_half) or t_launch")


def _typical(name: str, values: dict[str, float]) -> float:
    """A starting point for a number the entry leaves at 0: a half size worth
    a few microseconds of its GEMM or kernel."""
    if name.startswith("F_half_"):
        d = name[len("F_half_"):]
        return 5e-6 * values[f"P_{d}"] * values.get(f"eta_{d}", 0.7)
    if name == "B_half":
        return 5e-6 * values["BW"] * values.get("eta_mem", 0.9)
    return 1.0


@dataclass(frozen=True, eq=False)
class SpeedupFit:
    """A hardware entry fitted to speedup rows: ``hardware`` (the fitted
    entry), ``values`` (the fitted numbers by symbol name), ``rows`` (the
    table fitted to), ``predicted`` (its fitted speedups), ``rms_log_error``."""

    hardware: Hardware
    values: dict[str, float]
    rows: SpeedupTable
    predicted: np.ndarray
    rms_log_error: float

    def summary(self) -> str:
        return (f"{self.hardware.name}: fitted {', '.join(f'{k}={v:.4g}' for k, v in self.values.items())} "
                f"to {len(self.rows)} rows (rms log error {self.rms_log_error:.3f})")


def _groups(table: SpeedupTable, preset: str) -> list[tuple[Linear, np.ndarray]]:
    """Rows grouped by unbound model: (model, row indices)."""
    groups: dict[int, tuple[Linear, list[int]]] = {}
    for i in range(len(table)):
        model = unbound_row_model(table, i, preset)
        groups.setdefault(id(model), (model, []))[1].append(i)
    return [(m, np.array(rows)) for m, rows in groups.values()]


def _evaluate(groups: list[tuple[Linear, np.ndarray]], table: SpeedupTable,
              values: dict[str, float]) -> np.ndarray:
    out = np.empty(len(table))
    for model, rows in groups:
        needed = {str(s) for s in model.free_hardware_symbols}
        # symbol names, never evaluate's own keywords (outputs, dtype)
        hw: dict[str, Any] = {k: v for k, v in values.items() if k in needed}
        out[rows] = model.evaluate(table.M[rows], table.K[rows], table.N[rows], **hw)["speedup"]
    return out


def fit_speedups(table: Any, base: Hardware | str, free: Sequence[str], *,
                 source: str | None = None, preset: str = "default") -> SpeedupFit:
    """Fit the hardware numbers named in ``free`` (symbol names such as
    ``eta_fp8``, ``F_half_bf16``, ``eta_transpose``, ``B_half``) of ``base``
    so that the ``preset``'s model predicts the measured speedups of
    ``table`` (every row on this GPU, single-shape workloads, measured).

    ``source``: how the fitted numbers cite the data (default: the rows'
    source ids and count).
    """
    try:
        from scipy.optimize import least_squares
    except ImportError:  # pragma: no cover - scipy is in the fit and test extras
        raise ImportError("fit_speedups needs scipy: pip install 'roofline-sym[fit]'") from None
    table = read(table)
    if len(table) == 0:
        raise ValueError("no rows to fit")
    if not predictable(table).all() or np.isnan(table.measured).any():
        raise ValueError("fit to single-shape rows with a measured speedup only")
    free = list(dict.fromkeys(free))
    if not free:
        raise ValueError("name at least one hardware number to fit")
    base_hw = base if isinstance(base, Hardware) else hardware(base)
    groups = _groups(table, preset)
    values = {str(k): float(v) for k, v in base_hw.parameters.items()}
    bounds = np.log(np.array([_bounds(n) for n in free])).T
    start = [min(max(values.get(n) or _typical(n, values), math.exp(lo) * 1.01),
                 math.exp(hi) * 0.99) for n, (lo, hi) in zip(free, bounds.T)]
    measured = np.log(table.measured)

    def residuals(x: np.ndarray) -> np.ndarray:
        trial = dict(values, **{n: math.exp(v) for n, v in zip(free, x)})
        r: np.ndarray = np.log(_evaluate(groups, table, trial)) - measured
        return r

    result = least_squares(residuals, np.log(start), bounds=bounds, x_scale=1.0,
                           diff_step=1e-6)
    fitted = {n: float(f"{math.exp(v):.4g}") for n, v in zip(free, result.x)}
    sources = sorted(set(str(s) for s in table.source_id))
    cite = source or (f"fitted to {len(table)} measured speedups ({', '.join(sources)}) by "
                      "roofline_sym.calibrate.fit_speedups")
    hw = base_hw.with_values(fitted, source=cite)
    predicted = _evaluate(groups, table, dict(values, **fitted))
    rms = float(np.sqrt(np.mean((np.log(predicted) - measured) ** 2)))
    return SpeedupFit(hw, fitted, table, predicted, rms)


def errors(predicted: np.ndarray, measured: np.ndarray, band: float = 0.05) -> dict[str, Any]:
    """Accuracy of predicted speedups: median and 90th-percentile relative
    error |predicted / measured - 1|, the worst, and the wrong verdicts
    (predicted and measured on opposite sides of 1, counted where the
    measurement is at least ``band`` away from 1).

    >>> e = errors(np.array([1.1, 0.9, 2.0]), np.array([1.0, 1.2, 2.0]))
    >>> round(e["median"], 3), e["wrong"], e["decisive"]
    (0.1, 1, 2)
    """
    predicted, measured = np.asarray(predicted, float), np.asarray(measured, float)
    ok = np.isfinite(predicted) & np.isfinite(measured)
    p, m = predicted[ok], measured[ok]
    rel = np.abs(p / m - 1)
    decisive = np.abs(m - 1) >= band
    wrong = decisive & ((p > 1) != (m > 1))
    return {"rows": int(ok.sum()),
            "median": float(np.median(rel)) if rel.size else math.nan,
            "p90": float(np.percentile(rel, 90)) if rel.size else math.nan,
            "max": float(rel.max()) if rel.size else math.nan,
            "wrong": int(wrong.sum()), "decisive": int(decisive.sum())}
