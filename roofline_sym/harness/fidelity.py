"""How well the model predicts measurements: published speedups, and measured times.

Published speedups (``published()``, the shipped table) are predicted row by
row with ``predict_speedups(table, preset)``; ``published_report()``
compares the presets on them, source by source, and ``heldout()`` scores
the default dataset's calibrations on rows left out of their fit.

For a GPU of one's own, measured with ``roofline-sym measure``:
``report(file)`` compares, for every measured row, the model's time of the
component with the measured time, and for every shape with all components
of a recipe, the composed training speedup (bf16 GEMMs over fp8 GEMMs plus
unfused casts) with the model's.  Errors are summarised per component and
regime (the regime the model puts the component in at that shape), before
calibration (a dataset entry) and after (fitted to the same file, or given).

>>> from roofline_sym.calibrate import synthesize
>>> from roofline_sym.measure import grid
>>> meas = synthesize("h200", grid("quick"), {"eta_fp8": 0.6}, noise=0.0)
>>> rep = report(meas, hardware="h200")
>>> rep.synthetic, round(rep.calibration.values["eta_fp8"], 3)
(True, 0.6)
>>> row = rep.stats("speedup.fp8_tensorwise")
>>> round(row["before_median"], 3), round(row["after_median"], 3)
(0.655, 0.0)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..devices import Hardware
from ..devices.toml_io import writable_path
from ..model.linear import linear
from ..output import plot as figures
from .calibrate import Calibration, fit, hardware_values, resolve_hardware
from .speedup_report import heldout
from .speedup_report import report as published_report
from .speedup_tables import SpeedupTable, published
from .speedup_tables import read as read_speedups
from .cross_validation import leave_one_source_out
from .stored_cv import stored_cross_validation
from .intervals import band, breakeven_range, speedup_band, table_classes
from .speedups import predict as _predict_table
from .components import CAST_RECIPES, COMPONENTS, GEMM_NAMES, model_times
from .measurements import Measurements, read_csv

__all__ = ["Report", "report", "cli", "sample_path", "GOALS", "composed_components",
           "predict_speedups", "published", "published_report", "heldout", "SpeedupTable",
           "read_speedups", "leave_one_source_out", "breakeven_range", "speedup_band",
           "stored_cross_validation"]


def predict_speedups(path_or_table: Any, preset: str = "default", *,
                     unsupported: str = "raise", interval: float | None = None
                     ) -> Any:
    """One predicted speedup per row of a speedup table, in row order.

    ``path_or_table``: a CSV file in the schema of the published measurements
    (``source_id, gpu, recipe, mode, workload, M, K, N, measured_speedup,
    implementation, notes``; ``measured_speedup`` may be blank or absent and
    is never read), or rows in memory (see ``speedup_tables.read``).  GPU and
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
            raise ValueError("prediction intervals come from the default model's "
                             "cross-validation: use preset='default'")
    speedup = _predict_table(path_or_table, preset, unsupported=unsupported)
    if interval is None:
        return speedup
    table = read_speedups(path_or_table)
    known = np.flatnonzero(np.isfinite(speedup))
    low, high = np.full(len(table), np.nan), np.full(len(table), np.nan)
    lo, hi = band(table_classes(table, known), interval)
    low[known], high[known] = speedup[known] * lo, speedup[known] * hi
    return {"speedup": speedup, "low": low, "high": high}


# The fidelity goal for a real run (issue 7), on composed speedups after
# calibration: (label, smallest of M, K, N from, smallest below, largest at
# most, median |error| bound).  A shape is in "1024..16384" when all of M, K, N
# are (1024 <= min and max <= 16384), "below 1024" when its smallest is.
GOALS = (("M, K, N in 1024..16384", 1024, math.inf, 16384, 0.10),
         ("below 1024", 0, 1024, math.inf, 0.25))


def sample_path() -> Path:
    """The committed SYNTHETIC sample file (generated by the model, not measured).

    >>> read_csv(sample_path()).synthetic
    True
    """
    return Path(str(resources.files("roofline_sym").joinpath("data", "measurements", "sample.csv")))


def composed_components(recipe_name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(bf16 side, low-precision side) components of a training recipe.

    >>> base, lowp = composed_components("rowwise")
    >>> base[0], lowp[0], len(lowp)
    ('gemm.bf16.output', 'gemm.fp8_rowwise.output', 11)
    """
    if recipe_name not in CAST_RECIPES:
        raise ValueError(f"no measured components for recipe {recipe_name!r}; "
                         f"measured: {', '.join(CAST_RECIPES)}")
    base = tuple(f"gemm.bf16.{g}" for g in GEMM_NAMES)
    lowp = tuple(f"gemm.fp8_{recipe_name}.{g}" for g in GEMM_NAMES) + tuple(
        c for c in COMPONENTS if c.startswith(f"cast.{recipe_name}."))
    return base, lowp


@dataclass(frozen=True, eq=False)
class Report:
    """Predicted vs measured, per row and summarised.

    ``rows``: one dict per measured row (``kind`` "component") and per composed
    speedup (``kind`` "speedup"), with ``measured``, ``before``, ``after``
    (predictions; NaN without a calibration), the relative errors
    ``before_error``/``after_error`` = (predicted - measured) / measured, and
    ``regime``.  ``text()`` renders it; ``plot(path)`` draws the speedups.
    """

    source: str
    synthetic: bool
    hardware: Hardware
    calibration: Calibration | None
    rows: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()

    # -- numbers ------------------------------------------------------------------------
    @cached_property
    def _summary(self) -> tuple[dict[str, Any], ...]:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in self.rows:
            groups.setdefault((r["name"], r["regime"]), []).append(r)
            groups.setdefault((r["name"], "all"), []).append(r)
        order = {n: i for i, n in enumerate(dict.fromkeys(r["name"] for r in self.rows))}
        keys = sorted(groups, key=lambda k: (order[k[0]], k[1] == "all", k[1]))
        return tuple(_stats(name, regime, groups[name, regime]) for name, regime in keys)

    def summary(self) -> list[dict[str, Any]]:
        """Per (name, regime), and per name over all regimes: n, median and max |error|."""
        return [dict(s) for s in self._summary]

    def stats(self, name: str, regime: str = "all") -> dict[str, Any]:
        """The summary row of one component (or ``speedup.<recipe>``)."""
        for s in self._summary:
            if s["name"] == name and s["regime"] == regime:
                return dict(s)
        raise KeyError(f"no rows for {name!r} in regime {regime!r}")

    def goals(self) -> list[dict[str, Any]]:
        """The issue's goal per recipe: median |error| of composed speedups
        (after calibration, else before) within bounds, per size band."""
        which = "after" if self.calibration is not None else "before"
        out = []
        for recipe_name in CAST_RECIPES:
            rows = [r for r in self.rows if r["name"] == f"speedup.fp8_{recipe_name}"]
            for label, lo, below, largest, bound in GOALS:
                band = [r for r in rows if lo <= min(r["M"], r["K"], r["N"]) < below
                        and max(r["M"], r["K"], r["N"]) <= largest]
                med = (float(np.median([abs(r[f"{which}_error"]) for r in band]))
                       if band else math.nan)
                out.append({"recipe": recipe_name, "band": label, "n": len(band),
                            "median": med, "bound": bound, "model": which,
                            "passed": bool(band) and med <= bound})
        return out

    # -- rendering ----------------------------------------------------------------------
    def text(self, regimes: bool = True) -> str:
        """A plain-text report; ``regimes=False`` prints only the per-name totals."""
        cal = self.calibration
        lines = [f"roofline_sym fidelity: {self.source}"]
        if self.synthetic:
            lines.append("*** SYNTHETIC data: generated by the cost model, not measured "
                         "on a GPU ***")
        lines.append(f"before: {self.hardware.name} ({self.hardware.dataset} dataset)")
        if cal is not None:
            fitted = (f"rms log error {cal.rms_log_error:.3f} over {cal.rows} rows"
                      if cal.rows else f"read from {cal.source}, not fitted here")
            lines.append(f"after:  {cal.hardware.name}, {fitted}")
            before = hardware_values(self.hardware)
            for k, v in cal.values.items():
                scale, unit = (1e6, " us") if k == "t_launch" else (1.0, "")
                was = f"{before[k] * scale:10.4g}" if k in before else f"{'-':>10}"
                lines.append(f"  {k:<10} {was} -> {v * scale:.4g}{unit}")
            for c, t0 in cal.fixed_s.items():
                lines.append(f"  t0_{c:<7} {'':>10}    {t0 * 1e6:.3g} us (fixed time per GEMM)")
        lines += [f"note: {n}" for n in self.notes]
        width = max([len(s["name"]) for s in self.summary()] + [20]) + 2
        lines += ["", "relative error |predicted - measured| / measured: median / max",
                  f"{'component':<{width}}{'regime':<9}{'n':>4}  {'before':>17}  {'after':>17}"]
        regimes_of: dict[str, int] = {}
        for s in self.summary():
            regimes_of[s["name"]] = regimes_of.get(s["name"], 0) + (s["regime"] != "all")
        previous_kind = None
        for s in self.summary():
            # per regime, and the total where a name spans several regimes
            total = s["regime"] == "all"
            if (not regimes and not total) or (regimes and total and regimes_of[s["name"]] < 2):
                continue
            kind = "speedup" if s["name"].startswith("speedup.") else "component"
            if kind != previous_kind and kind == "speedup":
                lines += ["", "composed training speedup (bf16 / fp8 GEMMs + unfused casts)"]
            previous_kind = kind
            lines.append(f"{s['name']:<{width}}{s['regime']:<9}{s['n']:>4}  "
                         f"{_pair(s['before_median'], s['before_max']):>17}  "
                         f"{_pair(s['after_median'], s['after_max']):>17}")
        goals = self.goals()
        if goals:
            lines += ["", f"goal (composed speedups, {goals[0]['model']} calibration): "
                          "median |error| within bound"]
            for g in goals:
                verdict = "no rows" if not g["n"] else ("PASS" if g["passed"] else "FAIL")
                lines.append(f"  fp8 {g['recipe']:<11} {g['band']:<24} n={g['n']:<3} "
                             f"{_pct(g['median']):>7} <= {_pct(g['bound'])}  {verdict}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def plot(self, path: str | os.PathLike[str]) -> Path | None:
        """Predicted vs measured speedup, before and after calibration, as a
        .png, .svg or .pdf one paper column wide (``plot.save``); None (nothing
        written) when matplotlib is not installed."""
        figures.output_format(path)  # a bad suffix fails before anything is drawn
        try:
            import matplotlib.figure  # noqa: F401
        except ImportError:
            return None
        rows = [r for r in self.rows if r["kind"] == "speedup"]
        with figures.style():
            fig, ax = figures.new_axes(figures.COLUMN_WIDTH, 3.3)
            for i, recipe_name in enumerate(CAST_RECIPES):
                sel = [r for r in rows if r["name"] == f"speedup.fp8_{recipe_name}"]
                if not sel:
                    continue
                meas = [r["measured"] for r in sel]
                ax.scatter(meas, [r["before"] for r in sel], s=14, marker="o",
                           facecolors="none", edgecolors=f"C{i}", linewidths=0.7,
                           label=f"{recipe_name}, before")
                if self.calibration is not None:
                    ax.scatter(meas, [r["after"] for r in sel], s=14, marker="x",
                               color=f"C{i}", linewidths=0.7, label=f"{recipe_name}, after")
            values = [v for r in rows for v in (r["measured"], r["before"], r["after"])
                      if np.isfinite(v)]
            if values:
                lo, hi = min(values) * 0.95, max(values) * 1.05
                ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8)
            ax.set_xlabel("measured speedup over bf16")
            ax.set_ylabel("predicted speedup over bf16")
            title = f"{self.hardware.name}: fp8 training speedup"
            ax.set_title(title + (" (SYNTHETIC data)" if self.synthetic else ""))
            if rows:
                ax.legend(frameon=False)
        return figures.save(fig, path)


def _stats(name: str, regime: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "regime": regime, "n": len(rows)}
    for which in ("before", "after"):
        errors = np.abs([r[f"{which}_error"] for r in rows])
        ok = errors[np.isfinite(errors)]
        out[f"{which}_median"] = float(np.median(ok)) if ok.size else math.nan
        out[f"{which}_max"] = float(np.max(ok)) if ok.size else math.nan
    return out


def _pct(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{100 * x:.1f}%"


def _pair(median: float, maximum: float) -> str:
    return "-" if not np.isfinite(median) else f"{_pct(median)} / {_pct(maximum)}"


# -- building a report -----------------------------------------------------------------------
def report(measurements: Measurements | str | os.PathLike[str],
           hardware: Hardware | str | None = None, calibrated: Any = True, *,
           size_dependent: bool = False) -> Report:
    """Predicted vs measured for a measurement file.

    ``hardware``: the "before" entry (name, ``Hardware``, or None for the
    file's GPU in the default dataset).  ``calibrated``: True fits the model
    to this file (``calibrate.fit``, ``size_dependent`` as given); a
    ``Calibration``, a ``Hardware`` or a hardware TOML path
    (``Calibration.load``) uses that; False reports "before" only.  Rows of
    GEMM dtypes the "before" entry has no peak for are left out, before
    fitting, with a note.
    """
    meas = measurements if isinstance(measurements, Measurements) else read_csv(measurements)
    base = resolve_hardware(hardware, meas)
    notes = []
    supported = np.array([not d or base.supports(d) for d in meas.costs[0]])
    if not supported.all():
        notes.append(f"{int((~supported).sum())} rows of dtypes {base.name} has no peak "
                     "for are left out")
        meas = meas.select(supported)
    cal = _report_calibration(calibrated, meas, base, size_dependent)
    stale = _stale_costs(meas)
    if stale:
        notes.append(f"{stale} rows' bytes or FLOPs differ from the current model's (measured "
                     "with an older model?); predictions use the current model's")
    rows = _component_rows(meas, base, cal) + _speedup_rows(meas, base, cal)
    return Report(meas.source, meas.synthetic, base, cal, tuple(rows), tuple(notes))


def _report_calibration(calibrated: Any, meas: Measurements, base: Hardware,
                        size_dependent: bool) -> Calibration | None:
    if calibrated is True:
        return fit(meas, base, size_dependent=size_dependent)
    if calibrated is False or calibrated is None:
        return None
    if isinstance(calibrated, Calibration):
        return calibrated
    if isinstance(calibrated, Hardware):
        return Calibration.of(calibrated, base)
    if isinstance(calibrated, (str, os.PathLike)):
        return Calibration.load(calibrated, base)
    raise TypeError(f"calibrated must be True, False, a Calibration, a Hardware or a path, "
                    f"not {type(calibrated).__name__}")


def _stale_costs(meas: Measurements) -> int:
    _, flops, nbytes = meas.costs
    stale = np.zeros(len(meas), dtype=bool)
    for column, current in (("bytes", nbytes), ("flops", flops)):
        raw = meas.columns.get(column)
        if raw is None:
            continue
        given = np.array([float(v) if v else np.nan for v in raw])
        known = np.isfinite(given)
        stale[known] |= ~np.isclose(given[known], current[known], rtol=1e-9, atol=0.5)
    return int(stale.sum())


def _predict(meas: Measurements, hw_or_cal: Hardware | Calibration
             ) -> tuple[np.ndarray, np.ndarray]:
    """(time, regime) per row."""
    d, f, b = meas.costs
    if isinstance(hw_or_cal, Calibration):
        d, f, b = hw_or_cal.costs(d, f, b)
        values: Mapping[str, Any] = hw_or_cal.parameters()
    else:
        values = hardware_values(hw_or_cal)
    needed = {f"eta_{x}" for x in set(d.tolist()) - {""}} | {"eta_mem", "t_launch"}
    missing = sorted(needed - set(values))
    if missing:
        raise ValueError(f"{getattr(hw_or_cal, 'name', 'the hardware')} has no "
                         f"{', '.join(missing)}: pick an entry with efficiencies and a "
                         "launch floor")
    return model_times(d, f, b, values, regimes=True)


def _component_rows(meas: Measurements, base: Hardware, cal: Calibration | None
                    ) -> list[dict[str, Any]]:
    before, regime_before = _predict(meas, base)
    if cal is not None:
        after, regime = _predict(meas, cal)
    else:
        after, regime = np.full(len(meas), math.nan), regime_before
    rows = []
    for i, case in enumerate(meas.cases):
        t = float(meas.time_s[i])
        rows.append({"kind": "component", "name": case.component, "shape": case.shape,
                     "M": case.M, "K": case.K, "N": case.N, "regime": str(regime[i]),
                     "measured": t, "before": float(before[i]), "after": float(after[i]),
                     "before_error": float(before[i]) / t - 1,
                     "after_error": float(after[i]) / t - 1})
    return rows


def _speedup_rows(meas: Measurements, base: Hardware, cal: Calibration | None
                  ) -> list[dict[str, Any]]:
    """Composed speedups at every shape that has all of a recipe's components
    (repeated rows of a component at one shape: their median)."""
    times: dict[tuple[int, int, int], dict[str, list[float]]] = {}
    names: dict[tuple[int, int, int], str] = {}
    for case, t in zip(meas.cases, meas.time_s):
        key = (case.M, case.K, case.N)
        times.setdefault(key, {}).setdefault(case.component, []).append(float(t))
        names.setdefault(key, case.shape)
    after_pred, after_regime = _predict(meas, cal if cal is not None else base)
    rows = []
    for recipe_name in CAST_RECIPES:
        base_side, lowp_side = composed_components(recipe_name)
        shapes = [k for k, comps in times.items()
                  if all(c in comps for c in base_side + lowp_side)]
        if not shapes:
            continue
        M, K, N = (np.array([s[i] for s in shapes], dtype=np.float64) for i in range(3))
        model = linear(recipe_name, mode="training", fuse=False, preset="default")
        before = model.on(base).evaluate(M, K, N)["speedup"]
        after = (cal.evaluate(model, M, K, N)["speedup"] if cal is not None
                 else np.full(len(shapes), math.nan))
        for j, key in enumerate(shapes):
            comps = times[key]
            measured = (sum(np.median(comps[c]) for c in base_side)
                        / sum(np.median(comps[c]) for c in lowp_side))
            rows.append({
                "kind": "speedup", "name": f"speedup.fp8_{recipe_name}", "shape": names[key],
                "M": key[0], "K": key[1], "N": key[2],
                "regime": _dominant_regime(meas, key, lowp_side, after_pred, after_regime),
                "measured": float(measured), "before": float(before[j]), "after": float(after[j]),
                "before_error": float(before[j]) / measured - 1,
                "after_error": float(after[j]) / measured - 1,
            })
    return rows


def _dominant_regime(meas: Measurements, key: tuple[int, int, int], components: Sequence[str],
                     predicted: np.ndarray, regimes: np.ndarray) -> str:
    """The regime holding the largest share of the predicted low-precision time."""
    share: dict[str, float] = {}
    wanted = set(components)
    for i, case in enumerate(meas.cases):
        if (case.M, case.K, case.N) == key and case.component in wanted:
            share[str(regimes[i])] = share.get(str(regimes[i]), 0.0) + float(predicted[i])
    return max(share, key=share.__getitem__)


def cli(path: str | os.PathLike[str], *, hardware: Hardware | str | None = None,
        calibrated: Any = True, size_dependent: bool = False,
        write_hardware: str | os.PathLike[str] | None = None,
        plot: str | os.PathLike[str] | None = None,
        regimes: bool = True) -> str:
    """What ``roofline-sym fidelity FILE.csv`` prints: the report's text, and
    lines saying what was written (``write_hardware``: the calibrated TOML;
    ``plot``: the speedup plot, skipped without matplotlib).

    >>> print(cli(sample_path(), hardware="h200", regimes=False).splitlines()[1])
    *** SYNTHETIC data: generated by the cost model, not measured on a GPU ***
    """
    if plot is not None:
        figures.output_format(plot)  # a bad file name fails before anything is computed or written
    if write_hardware is not None and (calibrated is False or calibrated is None):
        raise ValueError("--write-hardware needs a calibration; drop --no-calibrate")
    if write_hardware is not None:
        writable_path(write_hardware)  # a bad name fails before the fit
    rep = report(path, hardware, calibrated, size_dependent=size_dependent)
    lines = [rep.text(regimes)]
    if write_hardware is not None:
        if rep.calibration is None:  # calibrated is neither False nor None: checked above
            raise ValueError("--write-hardware needs a calibration; drop --no-calibrate")
        written = rep.calibration.to_toml(write_hardware)
        lines.append(f"wrote the calibrated hardware entry to {written}")
    if plot is not None:
        plotted = rep.plot(plot)
        lines.append(f"wrote the speedup plot to {plotted}" if plotted else
                     "no plot: matplotlib is not installed (pip install matplotlib)")
    return "\n".join(lines)
