"""Leave-one-source-out figures from the stored residuals, without a fit.

``leave_one_source_out`` refits every calibrated GPU once per source (about a
minute, scipy); ``benchmarks/bench_fidelity.py --write`` stores each scored
row's residual ``log(predicted / measured)`` in ``published/residuals.csv``,
source by source in the order of the scored rows.  With the scored rows they
belong to, those residuals give back every left-out prediction, so the
figures docs/fidelity.md quotes are computed, not typed, and follow the file
when a refit rewrites it.

>>> cv = stored_cross_validation()
>>> cv.pooled["rows"] == len(cv.rows) == len(cv.classes)
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...numeric.table import Table
from .cross_validation import CrossValidation, assemble, fits_reading, scored_rows
from .intervals import RowClass, band, read_residuals, residuals_path, write_residuals
from .gemm_kernels import gemm_rows
from .joint_fit import errors
from .speedup_table import published

__all__ = ["stored_cross_validation", "headline", "interval_coverage"]


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
            raise ValueError(f"{file.name} does not match the scored rows of source {source!r}"
                             ": rerun benchmarks/bench_fidelity.py --write")
        predicted = rows.measured * np.exp([r for _, _, r in mine])
        classes = [c for _, c, _ in mine]
        parts.append((rows, predicted, bool(fits_reading(source, full, kernels)), classes))
    if at != len(stored):
        raise ValueError(f"{file.name} has {len(stored) - at} rows beyond the scored rows: "
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
