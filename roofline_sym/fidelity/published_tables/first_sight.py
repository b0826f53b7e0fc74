"""The test score: each new source predicted by the shipped model at first sight.

Leave-one-source-out is the validation score: model choices are made on it,
so it flatters the model a little.  The first-sight record is the test
score: a source's rows are predicted by the model as shipped *before* they
are added to the published data, so no fit and no decision has read them.
``published/first_sight.csv`` keeps one record per source (``source, date,
rows, median, p90, wrong, decisive, model_commit``: the errors of
``joint_fit.errors`` and the commit the model was at) and
``published/first_sight_rows.csv`` every row's measured and predicted
speedup, so each record can be recomputed.  ``benchmarks/first_sight.py``
scores a new source's rows and appends them.

>>> rows = [{"source_id": "new", "gpu": "h100", "recipe": "tensorwise",
...          "mode": "inference", "workload": "gemm", "M": 8192, "K": 8192,
...          "N": 8192, "measured_speedup": 1.8}]
>>> seen = score_first_sight(rows, date="2026-12-06")
>>> seen.record["source"], seen.record["rows"], seen.record["decisive"]
('new', 1, 1)
>>> pooled(read_first_sight_rows())["rows"] >= len(read_first_sight())
True
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...datafile import CsvWriter, Delimited, read_text, where
from ...errors import InputError
from ...validate import label, parse_number
from .joint_fit import errors
from .rows import predict, predictable
from .speedup_table import SpeedupTable, published, published_path, read

__all__ = ["FirstSight", "RECORD_COLUMNS", "ROW_COLUMNS", "score_first_sight", "record_path",
           "rows_path", "read_first_sight", "read_first_sight_rows", "StoredRows",
           "append_first_sight", "pooled"]

RECORD_COLUMNS = ("source", "date", "rows", "median", "p90", "wrong", "decisive",
                  "model_commit")
ROW_COLUMNS = ("source_id", "gpu", "recipe", "mode", "workload", "M", "K", "N",
               "implementation", "timer", "measured_speedup", "predicted_speedup")
_FIGURES = ("rows", "median", "p90", "wrong", "decisive")


@dataclass(frozen=True, eq=False)
class FirstSight:
    """One source scored at first sight: ``record`` (a row of
    ``first_sight.csv``), the scored ``table`` and its ``predicted`` speedups."""

    record: dict[str, Any]
    table: SpeedupTable
    predicted: np.ndarray

    def row_records(self) -> list[dict[str, Any]]:
        """The rows of ``first_sight_rows.csv`` this score adds."""
        t = self.table
        return [{"source_id": t.source_id[i], "gpu": t.gpu[i], "recipe": t.recipe[i],
                 "mode": t.mode[i], "workload": t.workload[i], "M": int(t.M[i]),
                 "K": int(t.K[i]), "N": int(t.N[i]), "implementation": t.implementation[i],
                 "timer": t.timer[i], "measured_speedup": f"{t.measured[i]:.10g}",
                 "predicted_speedup": f"{self.predicted[i]:.10g}"} for i in range(len(t))]

    def __str__(self) -> str:
        r = self.record
        return (f"{r['source']}: {r['rows']} rows at first sight, median {r['median']:.1%}, "
                f"p90 {r['p90']:.1%}, wrong {r['wrong']} of {r['decisive']}")


def score_first_sight(rows: Any, *, date: str | None = None, model_commit: str = ""
                      ) -> FirstSight:
    """Predict one source's measured single-shape rows with the shipped
    default model and summarise the errors (``joint_fit.errors``).

    Every row must name the same ``source_id``, a shape and a measured
    speedup; a row the model cannot predict is an error naming it (a
    first-sight score leaves nothing out).  ``date``: ISO date of the score
    (default today, UTC)."""
    table = read(rows)
    sources = sorted(set(str(s) for s in table.source_id))
    if len(sources) != 1 or not sources[0]:
        raise InputError(f"{table.source}: a first-sight score is of one source, "
                         f"not {sources}")
    for i in np.flatnonzero(~predictable(table) | ~np.isfinite(table.measured)):
        raise InputError(f"{table.where(int(i))}: a first-sight row needs a single shape and a "
                         "measured speedup")
    day = date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    try:
        datetime.date.fromisoformat(day)
    except ValueError:
        raise InputError(f"date {label(day)}: not an ISO date (YYYY-MM-DD)") from None
    predicted = predict(table)
    e = errors(predicted, table.measured)
    record = {"source": sources[0], "date": day, **{k: e[k] for k in _FIGURES},
              "model_commit": model_commit}
    return FirstSight(record, table, predicted)


def record_path() -> Path:
    """The shipped first-sight record, one line per source."""
    return published_path().with_name("first_sight.csv")


def rows_path() -> Path:
    """The shipped first-sight predictions, one line per scored row."""
    return published_path().with_name("first_sight_rows.csv")


def _records(path: str | Path, columns: Sequence[str], what: str
             ) -> list[tuple[str, int, dict[str, str]]]:
    origin, text = read_text(path, what)
    table = Delimited(text.splitlines(keepends=True), label(origin))
    table.require(columns)
    return [(table.source, line, row) for line, row in table.records()]


def read_first_sight(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The records of ``first_sight.csv``, numbers parsed and checked."""
    out = []
    for source, line, row in _records(path or record_path(), RECORD_COLUMNS,
                                      "first-sight record"):
        rec: dict[str, Any] = dict(row)
        for k in ("rows", "wrong", "decisive"):
            rec[k] = int(parse_number(row[k], where(source, line, k), positive=k == "rows",
                                      integer=True, limit=1e6))
        for k in ("median", "p90"):
            rec[k] = parse_number(row[k], where(source, line, k), positive=False, limit=1e3)
        try:
            datetime.date.fromisoformat(row["date"])
        except ValueError:
            raise InputError(f"{where(source, line, 'date')}: {row['date']!r} is not an "
                             "ISO date") from None
        out.append(rec)
    return out


@dataclass(frozen=True, eq=False)
class StoredRows:
    """The stored first-sight rows: the speedup ``table`` and each row's
    ``predicted`` speedup as the shipped model of that day gave it."""

    table: SpeedupTable
    predicted: np.ndarray

    def figures(self, source: str | None = None) -> dict[str, Any]:
        """``joint_fit.errors`` over ``source``'s rows (all rows if None)."""
        mine = (np.ones(len(self.table), bool) if source is None
                else self.table.source_id == source)
        return errors(self.predicted[mine], self.table.measured[mine])


def read_first_sight_rows(path: str | Path | None = None) -> StoredRows:
    """``first_sight_rows.csv``: the rows (checked as a speedup table) and
    their stored predictions."""
    records = _records(path or rows_path(), ROW_COLUMNS, "first-sight rows")
    if not records:
        empty = published()
        return StoredRows(empty.select(np.zeros(len(empty), bool)), np.empty(0))
    table = read([{k: v for k, v in row.items() if k != "predicted_speedup"}
                  for _, _, row in records])
    predicted = [parse_number(row["predicted_speedup"], where(src, line, "predicted_speedup"),
                              limit=1e3) for src, line, row in records]
    return StoredRows(table, np.array(predicted, float))


def pooled(stored: StoredRows) -> dict[str, Any]:
    """The first-sight errors over every stored row: the test score."""
    return stored.figures()


def append_first_sight(seen: FirstSight, record: str | Path | None = None,
                       rows: str | Path | None = None, *, check_unused: bool = True
                       ) -> None:
    """Append a score to the record and its rows to the stored predictions.

    Refuses a source already recorded, and (``check_unused``) one already in
    the published speedups: a source seen by the data is no longer at first
    sight."""
    record_file, rows_file = Path(record or record_path()), Path(rows or rows_path())
    source = seen.record["source"]
    recorded = read_first_sight(record_file) if record_file.exists() else []
    if rows_file.exists():
        read_first_sight_rows(rows_file)  # the stored rows are well formed
    if any(r["source"] == source for r in recorded):
        raise InputError(f"{record_file.name}: {source!r} was already scored at first sight")
    if check_unused and source in set(published().source_id):
        raise InputError(f"{source!r} is already in the published speedups: its first sight "
                         "has passed")
    rec = dict(seen.record)
    for k in ("median", "p90"):
        rec[k] = f"{rec[k]:.4f}" if math.isfinite(rec[k]) else ""
    for file, columns, lines in ((record_file, RECORD_COLUMNS, [rec]),
                                 (rows_file, ROW_COLUMNS, seen.row_records())):
        _append(file, columns, lines)


def _append(file: Path, columns: Sequence[str], lines: list[dict[str, Any]]) -> None:
    """Rows appended under the file's header (written first if the file is new)."""
    import io

    buf = io.StringIO()
    writer = CsvWriter(buf, columns)
    for line in lines:
        writer.write(line)
    body = buf.getvalue().split("\n", 1)[1]  # the rows, without the header
    if not file.exists():
        file.write_text(buf.getvalue(), encoding="utf-8")
        return
    text = file.read_text(encoding="utf-8")
    with open(file, "a", encoding="utf-8", newline="") as f:
        f.write(("" if text.endswith("\n") or not text else "\n") + body)
