"""How well each preset predicts published speedups, and on rows held out of the fit.

``published_report(table)`` predicts every single-shape row (but the test set's,
``gpu_fits.TEST_SET``, scored at first sight) under the presets
``default``, ``torchao`` and ``seed`` and summarises, per source and GPU,
the median and 90th-percentile relative error |predicted / measured - 1| and
the wrong verdicts (predicted and measured on opposite sides of 1, counted
where the measurement is at least 5% away from 1).  A preset that cannot
predict a row (a GPU or recipe it does not know) leaves it out of its
figures.  ``heldout()`` refits the default dataset's calibrations on part of
the data and scores the rest.

>>> rep = published_report()
>>> rep.overall("default")["median"] < rep.overall("torchao")["median"]
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...output import plot as figures
from ...progress import with_progress
from . import gpu_fits
from .cross_validation import fit_predictions
from .gemm_kernels import GemmRows, gemm_rows
from .joint_fit import errors
from .speedup_table import SpeedupTable, published, read
from .rows import predict, predictable, row_model

__all__ = ["SpeedupReport", "published_report", "Split", "SPLITS", "heldout", "heldout_rows",
           "heldout_kernels", "heldout_predictions", "PRESETS"]

PRESETS = ("default", "torchao", "seed")


def _predict_rows(table: SpeedupTable, preset: str) -> np.ndarray:
    """Row by row where a preset cannot predict some rows (NaN there)."""
    try:
        return predict(table, preset)
    except ValueError:
        out = np.full(len(table), np.nan)
        for i in range(len(table)):
            try:
                model = row_model(table, i, preset)
            except ValueError:
                continue
            out[i] = float(model.evaluate(table.M[i], table.K[i], table.N[i])["speedup"])
        return out


@dataclass(frozen=True, eq=False)
class SpeedupReport:
    """Predictions of every preset for the predictable, measured rows of a table."""

    table: SpeedupTable
    predictions: dict[str, np.ndarray]
    skipped: int = 0
    test_set: int = 0

    def groups(self) -> list[tuple[str, str]]:
        """(source_id, gpu) pairs in table order."""
        return list(dict.fromkeys(zip(self.table.source_id, self.table.gpu)))

    def stats(self, preset: str, source: str | None = None, gpu: str | None = None
              ) -> dict[str, Any]:
        """``errors`` of ``preset`` over the rows of ``source`` and ``gpu`` (all if None)."""
        mask = np.ones(len(self.table), bool)
        if source is not None:
            mask &= self.table.source_id == source
        if gpu is not None:
            mask &= self.table.gpu == gpu
        return errors(self.predictions[preset][mask], self.table.measured[mask])

    def overall(self, preset: str) -> dict[str, Any]:
        return self.stats(preset)

    def text(self) -> str:
        """One line per source and GPU, one column group per preset; the
        source column as wide as its longest name.  The figures are in
        sample: the default preset's calibrations were fitted to these rows."""
        groups = self.groups() + [("all", "")]
        w_src = max(26, *(len(s) for s, _ in groups))
        w_gpu = max(16, *(len(g) for _, g in groups))
        head = f"{'source':<{w_src}} {'gpu':<{w_gpu}} {'rows':>4}"
        head += "".join(f"  | {p:^23}" for p in self.predictions)
        sub = " " * (w_src + w_gpu + 6) + "".join("  | median   p90  wrong   "
                                                   for _ in self.predictions)
        lines = [f"published speedups, in sample: {self.table.source}", head, sub.rstrip()]
        for source, gpu in groups:
            rows = len(self.table) if source == "all" else int(np.sum(
                (self.table.source_id == source) & (self.table.gpu == gpu)))
            cells = []
            for p in self.predictions:
                s = (self.overall(p) if source == "all" else self.stats(p, source, gpu))
                cells.append(_cell(s))
            lines.append(f"{source:<{w_src}} {gpu:<{w_gpu}} {rows:>4}"
                         + "".join(f"  | {c}" for c in cells).rstrip())
        lines.append("in sample: the default preset's calibrations were fitted to these rows "
                     "(the left-out figures: fidelity --published --cross-validate)")
        lines.append("median / p90: |predicted / measured - 1|; wrong: verdict on the wrong "
                     "side of 1, of the rows measured at least 5% from 1; - : the preset "
                     "cannot predict these rows")
        if self.skipped:
            lines.append(f"{self.skipped} whole-model or shapeless rows not predicted")
        if self.test_set:
            lines.append(f"{self.test_set} rows of the test set left to the first-sight "
                         "record (gpu_fits.TEST_SET)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def plot(self, path: str | os.PathLike[str]) -> Path:
        """Predicted vs measured speedup per preset (log-log, with the diagonal)."""
        fig, ax = figures.new_axes(height=3.0)
        for preset, pred in self.predictions.items():
            ok = np.isfinite(pred)
            ax.scatter(self.table.measured[ok], pred[ok], s=8, alpha=0.7,
                       label=f"{preset} (median {self.overall(preset)['median']:.0%}, in sample)")
        lo, hi = 0.2, 5.0
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, gid="diagonal")
        ax.axhline(1, color="0.8", lw=0.6)
        ax.axvline(1, color="0.8", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ticks = [0.25, 0.5, 1, 2, 4]
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
            axis.set_ticks([], minor=True)
        ax.set_xlabel("measured speedup")
        ax.set_ylabel("predicted speedup")
        ax.set_title("published single-shape speedups", fontsize="small")
        ax.legend(fontsize="x-small", loc="upper left")
        return figures.save(fig, path)


def _cell(s: dict[str, Any]) -> str:
    if not s["rows"]:
        return f"{'-':^23}"
    return f"{s['median']:6.1%} {s['p90']:6.1%} {s['wrong']:>3}/{s['decisive']:<3}"


def published_report(table: Any = None, presets: Sequence[str] = PRESETS) -> SpeedupReport:
    """Predict the measured single-shape rows of ``table`` (default: the
    published measurements) under each of ``presets``."""
    t = published() if table is None else read(table)
    keep = predictable(t) & np.isfinite(t.measured)
    # the test set is scored once, at first sight (first_sight.csv), not in sample
    held = keep & np.isin(t.source_id, gpu_fits.TEST_SET)
    rows = t.select(keep & ~held)
    return SpeedupReport(rows, {p: _predict_rows(rows, p) for p in presets},
                         skipped=int((~keep).sum()), test_set=int(held.sum()))


# -- held out ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """Refit ``gpu``'s calibration on the rows where ``held_out`` is False and
    score the rows where it is True."""

    name: str
    gpu: str
    held_out: Callable[[SpeedupTable], np.ndarray] = field(compare=False)


def _png_m(m: int) -> Callable[[SpeedupTable], np.ndarray]:
    return lambda t: (t.source_id == "ao-rowwise-h100-png") & (t.M == m)


SPLITS = (
    Split("H100: rowwise table, M = 1024 held out", "H100 SXM", _png_m(1024)),
    Split("H100: rowwise table, M = 4096 held out", "H100 SXM", _png_m(4096)),
    Split("H100: rowwise table, M = 16384 held out", "H100 SXM", _png_m(16384)),
    # the blockwise rows stay in the fit: they alone measure the blockwise GEMM factor
    Split("H100: fit on the rowwise table, the other rowwise and tensorwise rows held out",
          "H100 SXM", lambda t: (t.source_id != "ao-rowwise-h100-png") & (t.recipe != "blockwise")),
    # every source's rows at M = 4096 (the cube and the other N, K of that M)
    Split("B200: every source's rows at M=4096 held out", "B200 (HGX)", lambda t: t.M == 4096),
    Split("B200: dynamic nvfp4 held out", "B200 (HGX)", lambda t: t.recipe == "nvfp4"),
)


def heldout(splits: Sequence[Split] = SPLITS, table: SpeedupTable | None = None
            ) -> list[tuple[Split, dict[str, Any]]]:
    """For each split: refit its GPU's calibration (``gpu_fits``)
    without the held-out rows and score those with the refitted entry."""
    return [(split, errors(predicted, test.measured))
            for split, test, predicted in heldout_predictions(splits, table)]


def heldout_rows(split: Split, table: SpeedupTable | None = None
                 ) -> tuple[SpeedupTable, np.ndarray]:
    """The rows of ``split``'s GPU calibration, and which of them it holds out."""
    rows = gpu_fits.rows(gpu_fits.SPECS[split.gpu], table)
    return rows, np.asarray(split.held_out(rows), bool)


def heldout_kernels(test: SpeedupTable, kernels: GemmRows | None = None) -> np.ndarray:
    """Which GEMM kernel rows time the GEMMs of the held-out rows ``test``: the
    same source at the same shape (M, and K, N in either order).  A refit that
    kept them would read the held-out measurement through its GEMM alone."""
    k = gemm_rows() if kernels is None else kernels
    held = {(str(s), m, frozenset((a, b))) for s, m, a, b in
            zip(test.source_id, test.M, test.K, test.N)}
    out: np.ndarray = np.array([(str(s), m, frozenset((a, b))) in held for s, m, a, b in
                                zip(k.source_id, k.M, k.K, k.N)], bool)
    return out


def heldout_predictions(splits: Sequence[Split] = SPLITS, table: SpeedupTable | None = None
                        ) -> list[tuple[Split, SpeedupTable, np.ndarray]]:
    """For each split: the held-out rows and their predictions by the
    calibration refitted without them and without their GEMM kernel rows
    (``heldout_kernels``), its implementation profiles included (``heldout``
    scores these)."""
    out = []
    kernels = gemm_rows()
    for split in with_progress(splits, "held-out refits", unit="split"):
        rows, held = heldout_rows(split, table)
        test = rows.select(held)
        kept = kernels.select(~heldout_kernels(test, kernels))
        fitted = gpu_fits.fit_gpu(gpu_fits.SPECS[split.gpu], rows.select(~held), kernels=kept)
        # the refit's own implementation profiles: the shipped ones were fitted
        # with the held-out rows
        out.append((split, test, fit_predictions(fitted, test)))
    return out
