"""Leave-one-source-out: how the model predicts a source it never saw.

Each published source (a table, a PR's log, a README) is left out of every
calibration in turn: each GPU's joint fit (``gpu_fits.fit_gpu``) is rerun
without its rows, the refitted GPU is carried to the GPUs it stands for
(``gpu_fits.transfer``), and the left-out rows are predicted.  A source
no fit reads is predicted by the shipped model (it was never in a fit).
The pooled errors are the honest headline; their residuals give the
prediction intervals (``intervals``).

>>> cv = leave_one_source_out(sources=["ao-tensorwise-h100-2024"])  # doctest: +SKIP
>>> cv.pooled["rows"]  # doctest: +SKIP
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from ...devices import Hardware
from ...devices import implementations as impls
from ...errors import InputError
from ...numeric.table import Table
from ...progress import with_progress
from . import gpu_fits
from .gemm_kernels import GemmRows, gemm_rows
from .joint_fit import PROFILE_NUMBERS, SpeedupFit, errors, predict_rows
from .speedup_table import COLUMN_ARRAYS, SpeedupTable, published
from .intervals import WORKLOAD_CLASSES, RowClass, table_classes
from .rows import predict, row_family, row_gpu

__all__ = ["CrossValidation", "leave_one_source_out", "scored_rows", "assemble", "fits_reading",
           "refit_predictions", "fit_predictions"]


@dataclass(frozen=True, eq=False)
class CrossValidation:
    """``per_source``: a table (source_id, gpu, rows, median, p90, wrong,
    decisive); ``pooled``: the same figures over every row (``rows``,
    ``median``, ``p90``, ``wrong``, ``decisive``); ``rows``: the scored rows;
    ``predicted``: each row's left-out prediction; ``in_fit``: whether the
    row's source was in some calibration (and so was refitted without it);
    ``classes``: each row's interval class as its prediction saw it (its GPU
    and implementation calibrated by other sources or not)."""

    per_source: Table
    pooled: dict[str, Any]
    rows: SpeedupTable
    predicted: np.ndarray
    in_fit: np.ndarray
    classes: tuple[RowClass, ...] = ()

    @property
    def log_residuals(self) -> np.ndarray:
        """log(predicted / measured) of every scored row."""
        out: np.ndarray = np.log(self.predicted / self.rows.measured)
        return out

    def residual_rows(self) -> list[dict[str, Any]]:
        """One row per scored row for ``intervals.write_residuals``."""
        return [{"source_id": str(self.rows.source_id[i]), "gpu": str(self.rows.gpu[i]),
                 "generation": c.generation, "workload": c.workload,
                 "gpu_calibrated": int(c.gpu_calibrated),
                 "impl_calibrated": int(c.impl_calibrated), "mode": c.mode, "family": c.family,
                 "implementation": c.implementation, "timer": c.timer,
                 "log_residual": f"{self.log_residuals[i]:.6g}"}
                for i, c in enumerate(self.classes)]

    def __str__(self) -> str:
        p = self.pooled
        w_src = max(40, *(len(str(r["source_id"])) + 2 for r in self.per_source.rows))
        lines = [f"leave-one-source-out over {p['rows']} rows, left out: median "
                 f"{p['median']:.1%}, p90 {p['p90']:.1%}, wrong {p['wrong']} of "
                 f"{p['decisive']}",
                 f"{'source':<{w_src}}{'gpu':<18}{'rows':>5}{'median':>9}{'p90':>9}"
                 f"{'wrong':>9}"]
        for r in self.per_source.rows:
            lines.append(f"{r['source_id']:<{w_src}}{r['gpu']:<18}{r['rows']:>5}"
                         f"{r['median']:>9.1%}{r['p90']:>9.1%}"
                         f"{str(r['wrong']) + '/' + str(r['decisive']):>9}")
        return "\n".join(lines)


def scored_rows(table: SpeedupTable | None = None) -> SpeedupTable:
    """The rows a cross-validation scores: single-shape, measured, not a
    superseded run of a re-measured table (``gpu_fits.SUPERSEDED``)."""
    t = published() if table is None else table
    return t.select(gpu_fits.scored(t))


def fits_reading(source: str, table: SpeedupTable, kernels: GemmRows
                  ) -> list[gpu_fits.Spec]:
    """The calibrations (``SPECS``) whose fit reads a row of ``source``."""
    out = []
    for spec in gpu_fits.SPECS.values():
        speed = gpu_fits.rows(spec, table)
        kern = gpu_fits.kernel_rows(spec, kernels)
        if source in set(speed.source_id) | set(kern.source_id):
            out.append(spec)
    return out


def _row_hardware(gpu_key: str, fits: Mapping[str, SpeedupFit]) -> tuple[Hardware,
                                                                          dict[str, float]]:
    """The entry a row's GPU key predicts with, given refitted GPUs: the refit
    itself, its transfer, or the shipped entry; and the fitted profile numbers."""
    shipped = row_gpu(gpu_key)
    for spec_gpu, fit in fits.items():
        spec = gpu_fits.SPECS[spec_gpu]
        profiles = _profile_numbers(fit)
        if shipped.name == spec_gpu or gpu_key in spec.gpus:
            return gpu_fits.limited(fit.hardware, profiles)
        rule = gpu_fits.TRANSFERS.get(shipped.name)
        if rule and rule[0] == spec_gpu:
            carried = gpu_fits.transfer(fit.hardware, shipped, rule[1])
            return gpu_fits.limited(gpu_fits.unfitted(shipped).with_values(
                carried, source="cross-validation transfer"), profiles)
    return shipped, {}


def refit_predictions(rows: SpeedupTable, hw: Hardware, profiles: Mapping[str, float]
                      ) -> np.ndarray:
    """The speedups of ``rows`` (one GPU's) predicted by a refitted entry
    ``hw`` and its fitted implementation ``profiles`` alone: a profile the
    refit did not pin runs as torch does, never as the shipped data (fitted
    with the rows held out) say."""
    values = {str(k): float(v) for k, v in hw.parameters.items()}
    values.update(profiles)
    return predict_rows(rows, values, hw, shipped=False)


def fit_predictions(fit: SpeedupFit, rows: SpeedupTable) -> np.ndarray:
    """``refit_predictions`` of rows of ``fit``'s own GPU, within the physical
    limits as the shipped data are written (``gpu_fits.limited``)."""
    return refit_predictions(rows, *gpu_fits.limited(fit.hardware, _profile_numbers(fit)))


def _profile_numbers(fit: SpeedupFit) -> dict[str, float]:
    """A fit's implementation profile numbers by name (``rate.<impl>.<family>``, ...)."""
    return {k: v for k, v in fit.values.items() if k.startswith(PROFILE_NUMBERS)}


def leave_one_source_out(table: SpeedupTable | None = None, kernels: GemmRows | None = None,
                         sources: Iterable[str] | None = None) -> CrossValidation:
    """Refit each GPU's calibration without one source at a time and predict
    that source's rows (``sources``: only these; default every source with a
    scored row).  Needs scipy (the ``fit`` extra)."""
    full = published() if table is None else table
    kernels = gemm_rows() if kernels is None else kernels
    scored = scored_rows(full)
    wanted = list(dict.fromkeys(str(s) for s in scored.source_id))
    if sources is not None:
        chosen = set(sources)
        unknown = chosen - set(wanted)
        if unknown:
            raise InputError(f"no scored rows for source(s) {sorted(unknown)}")
        wanted = [s for s in wanted if s in chosen]
    parts: list[tuple[SpeedupTable, np.ndarray, bool, list[RowClass]]] = []
    for source in with_progress(wanted, "cross-validation", unit="source"):
        rows = scored.select(scored.source_id == source)
        specs = fits_reading(source, full, kernels)
        if not specs:
            parts.append((rows, predict(rows), False, table_classes(rows)))
            continue
        fits = {s.gpu: gpu_fits.fit_gpu(s, full, exclude=(source,), kernels=kernels)
                for s in specs}
        pred = np.empty(len(rows))
        classes = []
        for key in dict.fromkeys(str(g) for g in rows.gpu):
            sub = np.flatnonzero(rows.gpu == key)
            pred[sub] = refit_predictions(rows.select(sub), *_row_hardware(key, fits))
        for i in range(len(rows)):
            key, impl, family = str(rows.gpu[i]), str(rows.implementation[i]), row_family(rows, i)
            calibrated = any(key in s.gpus for s in specs)
            pinned = impl == "torch" or any(f"{what}{impl}.{family}" in f.values
                                            for what in PROFILE_NUMBERS
                                            for f in fits.values())
            classes.append(RowClass(str(impls.generation(row_gpu(key))),
                                    WORKLOAD_CLASSES.get(str(rows.workload[i]), "layer"),
                                    calibrated, pinned, str(rows.mode[i]), family or "",
                                    impl, str(rows.timer[i]) or "graph"))
        parts.append((rows, pred, True, classes))
    return assemble(parts)


def assemble(parts: list[tuple[SpeedupTable, np.ndarray, bool, list[RowClass]]]
             ) -> CrossValidation:
    """A ``CrossValidation`` from each source's (rows, left-out predictions,
    whether a fit read it, interval classes)."""
    cols: dict[str, list[Any]] = {c: [] for c in ("source_id", "gpu", "rows", "median", "p90",
                                                  "wrong", "decisive")}
    idx_rows: list[SpeedupTable] = []
    preds, in_fit = [], []
    classes: list[RowClass] = []
    for rows, pred, fitted, row_classes in parts:
        classes += row_classes
        e = errors(pred, rows.measured)
        cols["source_id"].append(str(rows.source_id[0]))
        cols["gpu"].append(",".join(dict.fromkeys(str(g) for g in rows.gpu)))
        for k in ("rows", "median", "p90", "wrong", "decisive"):
            cols[k].append(e[k])
        idx_rows.append(rows)
        preds.append(pred)
        in_fit.append(np.full(len(rows), fitted))
    predicted = np.concatenate(preds) if preds else np.empty(0)
    allrows = _concat(idx_rows)
    pooled = errors(predicted, allrows.measured)
    pooled = {k: pooled[k] for k in ("rows", "median", "p90", "wrong", "decisive")}
    kinds = {"source_id": object, "gpu": object, "rows": np.int64, "wrong": np.int64,
             "decisive": np.int64, "median": float, "p90": float}
    table = Table({k: np.array(v, dtype=kinds[k]) for k, v in cols.items()},
                  caption="leave-one-source-out, per source")
    return CrossValidation(table, pooled, allrows, predicted,
                           np.concatenate(in_fit) if in_fit else np.empty(0, bool),
                           tuple(classes))


def _concat(tables: list[SpeedupTable]) -> SpeedupTable:
    if not tables:
        return published().select(np.zeros(len(published()), bool))
    cols = {name: np.concatenate([getattr(t, name) for t in tables]) for name in COLUMN_ARRAYS}
    return SpeedupTable(**cols, source="leave-one-source-out",
                        lines=tuple(line for t in tables for line in t.lines))
