"""Leave-one-source-out figures from the stored residuals, without a fit.

``leave_one_source_out`` refits every calibrated GPU once per source (about a
minute, scipy); ``benchmarks/bench_fidelity.py --write`` stores each scored
row's residual ``log(predicted / measured)`` in ``published/residuals.csv``,
source by source in the order of the scored rows.  With the scored rows they
belong to, those residuals give back every left-out prediction, so the
figures docs/fidelity.md quotes are computed, not typed, and follow the file
when a refit rewrites it.  The within-source splits (``scorecard.heldout``,
about ten seconds of fitting each) are stored the same way, one residual per
held-out row, in ``published/heldout_residuals.csv``.

>>> cv = stored_cross_validation()
>>> cv.pooled["rows"] == len(cv.rows) == len(cv.classes)
True
>>> [e["rows"] for _, e in stored_heldout()][:3]
[36, 36, 36]
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ...datafile import CsvWriter, Delimited, read_text
from ...errors import InputError
from ...numeric.table import Table
from ...validate import label
from .cross_validation import CrossValidation, assemble, fits_reading, scored_rows
from .intervals import RowClass, band, read_residuals, residuals_path, write_residuals
from .gemm_kernels import gemm_rows
from .joint_fit import errors
from .scorecard import SPLITS, Split, heldout_rows
from .speedup_table import SpeedupTable, published

__all__ = ["stored_cross_validation", "headline", "interval_coverage", "heldout_path",
           "write_heldout", "stored_heldout"]


def stored_cross_validation(path: str | Path | None = None) -> CrossValidation:
    """The leave-one-source-out result the stored residuals describe: each scored
    row's left-out prediction is its measurement times ``exp(log_residual)``.
    Raises ``ValueError`` when the file does not match the scored rows (a file
    written before the published table changed: rerun the benchmark)."""
    file = Path(path) if path else residuals_path()
    stored = read_residuals(file)
    full, kernels = published(), gemm_rows()
    scored = scored_rows(full)
    parts: list[tuple[Any, np.ndarray, bool, list[RowClass]]] = []
    at = 0
    for source in dict.fromkeys(str(s) for s in scored.source_id):
        rows = scored.select(scored.source_id == source)
        mine = stored[at:at + len(rows)]
        at += len(rows)
        if len(mine) != len(rows) or any(
                r["source_id"] != source or r["gpu"] != str(g)
                for (r, _, _), g in zip(mine, rows.gpu)):
            raise InputError(f"{file.name} does not match the scored rows of source {source!r}"
                             ": rerun benchmarks/bench_fidelity.py --write")
        predicted = rows.measured * np.exp([r for _, _, r in mine])
        classes = [c for _, c, _ in mine]
        parts.append((rows, predicted, bool(fits_reading(source, full, kernels)), classes))
    if at != len(stored):
        raise InputError(f"{file.name} has {len(stored) - at} rows beyond the scored rows: "
                         "rerun benchmarks/bench_fidelity.py --write")
    return assemble(parts)


def headline(cv: CrossValidation, in_sample: np.ndarray | None = None) -> Table:
    """docs/fidelity.md's headline table: errors of the left-out predictions over
    every row, GEMM-only and layer rows, each GPU generation and each
    implementation; ``in_sample``: the shipped model's predictions of the same
    rows, as a last line."""
    gemm = np.array([c.workload == "gemm" for c in cv.classes], bool)
    generation = np.array([c.generation for c in cv.classes], object)
    groups: list[tuple[str, np.ndarray]] = [
        ("every row, its source left out of every fit", np.ones(len(gemm), bool)),
        ("GEMM-only rows", gemm), ("layer rows (casts and neighbours)", ~gemm)]
    groups += [(f"generation {g}", generation == g) for g in dict.fromkeys(generation)]
    impl = np.asarray(cv.rows.implementation, object).astype(str)
    groups += [(f"implementation {i}", impl == i) for i in dict.fromkeys(impl)]
    lines = [(label, errors(cv.predicted[m], cv.rows.measured[m])) for label, m in groups]
    if in_sample is not None:
        lines.append(("the shipped model on the same rows, in sample",
                      errors(in_sample, cv.rows.measured)))
    return Table({"rows over": np.array([label for label, _ in lines], object),
                  **{k: np.array([e[k] for _, e in lines], float if k in ("median", "p90")
                                 else np.int64) for k in ("rows", "median", "p90", "wrong",
                                                           "decisive")}},
                 caption="leave-one-source-out, from the stored residuals")


def interval_coverage(cv: CrossValidation, level: float = 0.8,
                      tmpdir: str | Path | None = None) -> tuple[float, float]:
    """Coverage and median width (high / low - 1) of ``level`` bands, scored
    honestly: each source's band comes from the other sources' residuals."""
    import tempfile

    rows = cv.residual_rows()
    inside, widths = [], []
    with tempfile.TemporaryDirectory(dir=tmpdir) as tmp:
        for n, source in enumerate(dict.fromkeys(r["source_id"] for r in rows)):
            path = Path(tmp) / f"{n}.csv"
            write_residuals([r for r in rows if r["source_id"] != source], path)
            idx = [i for i, r in enumerate(rows) if r["source_id"] == source]
            lo, hi = band([cv.classes[i] for i in idx], level, str(path))
            for j, i in enumerate(idx):
                p, m = cv.predicted[i], cv.rows.measured[i]
                inside.append(p * lo[j] <= m <= p * hi[j])
                widths.append(hi[j] / lo[j] - 1)
    return float(np.mean(inside)), float(np.median(widths))


def heldout_path() -> Path:
    """The shipped residuals of the within-source splits."""
    return residuals_path().with_name("heldout_residuals.csv")


_HELDOUT_COLUMNS = ("split", "source_id", "gpu", "log_residual")


def write_heldout(results: Iterable[tuple[Split, SpeedupTable, np.ndarray]],
                  path: str | Path | None = None) -> Path:
    """Write ``scorecard.heldout_predictions`` as one residual
    ``log(predicted / measured)`` per held-out row; returns the path."""
    out = Path(path) if path else heldout_path()
    with open(out, "w", encoding="utf-8", newline="") as f:
        w = CsvWriter(f, _HELDOUT_COLUMNS)
        for split, test, predicted in results:
            for source, gpu, p, m in zip(test.source_id, test.gpu, predicted, test.measured):
                w.write({"split": split.name, "source_id": source, "gpu": gpu,
                         "log_residual": f"{math.log(p / m):.6g}"})
    return out


def stored_heldout(splits: Sequence[Split] = SPLITS, path: str | Path | None = None
                   ) -> list[tuple[Split, dict[str, Any]]]:
    """``scorecard.heldout``'s result from the stored residuals, without a fit:
    each held-out row's prediction is its measurement times ``exp(log_residual)``.
    Raises ``ValueError`` when the file does not hold exactly the rows each split
    holds out now (rerun the benchmark)."""
    file = Path(path) if path else heldout_path()
    origin, text = read_text(file, "held-out residuals file")
    table = Delimited(text.splitlines(keepends=True), label(origin))
    table.require(_HELDOUT_COLUMNS)
    stored = [row for _, row in table.records()]
    out = []
    for split in splits:
        rows, held = heldout_rows(split)
        test = rows.select(held)
        mine = [r for r in stored if r["split"] == split.name]
        if len(mine) != len(test) or any(r["source_id"] != str(s) or r["gpu"] != str(g)
                                         for r, s, g in zip(mine, test.source_id, test.gpu)):
            raise InputError(f"{file.name} does not hold the rows split {split.name!r} holds "
                             "out: rerun benchmarks/bench_fidelity.py --write")
        predicted = test.measured * np.exp([float(r["log_residual"]) for r in mine])
        out.append((split, errors(predicted, test.measured)))
    unknown = {r["split"] for r in stored} - {s.name for s in splits}
    if unknown and splits is SPLITS:
        raise InputError(f"{file.name} holds splits that are not defined: {sorted(unknown)}")
    return out
