"""The measurement CSV: one row per timed case, ``#`` comment lines, a schema.

``MeasurementWriter`` and ``write_measurements`` write it (through
``datafile.CsvWriter``); ``read_csv`` and ``parse_csv``
read and validate it into ``Measurements``, with errors that name the file,
line and column.

>>> buf = io.StringIO()
>>> write_measurements([{"schema": SCHEMA, "component": "micro.launch", "M": 1, "K": 1,
...                      "N": 1, "time_s": 2.5e-6}], buf, comments=["example"])
1
>>> m = parse_csv(buf.getvalue())
>>> m.cases[0].component, m.time_s.tolist(), m.comments
('micro.launch', [2.5e-06], ('roofline_sym measurements, schema 1', 'example'))
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, TextIO, cast

import numpy as np

from ...datafile import CsvWriter, Delimited, read_text, where
from ...devices.ranges import range_problem
from ...errors import InputError
from ...numeric.columnar import row_indices
from ...validate import (MAX_ROWS, SHAPE_MAX, InputTypeError, check_size, has_control,
                        label as file_label, parse_number, show)
from .components import Case, check_component, costs, gemm_class_of

__all__ = [
    "SYNTHETIC_GPU",
    "SCHEMA",
    "HEADER_LINE",
    "COLUMNS",
    "REQUIRED_COLUMNS",
    "MeasurementWriter",
    "write_measurements",
    "Measurements",
    "read_csv",
    "parse_csv",
]


# -- the CSV schema -----------------------------------------------------------
# how a synthetic file's gpu column names the GPU it models
SYNTHETIC_GPU = "SYNTHETIC model of "
# Bump SCHEMA when a column changes meaning; readers refuse other versions.
SCHEMA = 1
HEADER_LINE = f"roofline_sym measurements, schema {SCHEMA}"
COLUMNS = (
    "schema",          # SCHEMA of the row
    "component",       # gemm.<kind>.<gemm>, cast.<recipe>.<role>.<kernel>, micro.<name>
    "shape_set",       # where the shape comes from: cube, llama3-70b, micro
    "shape",           # a readable name of the shape
    "M", "K", "N",     # the linear layer (micro rows: M = elements, K = N = 1)
    "dtype",           # the GEMM peak the model uses (bf16, fp8), empty for kernels
    "bytes",           # bytes moved, per the model
    "flops",           # FLOPs, per the model
    "time_s",          # median over repeats, seconds
    "time_min_s", "time_max_s",
    "repeats",
    "gpu", "torch", "cuda",
    "sm_clock_mhz", "mem_clock_mhz",  # read after the op was timed, when readable
)
REQUIRED_COLUMNS = ("component", "M", "K", "N", "time_s")


@dataclass(frozen=True)
class _Column:
    """What a numeric column may hold: a whole number (``integer``) up to
    ``limit``, a value > 0 (``positive``, else >= 0), within ``RANGES[kind]``."""

    integer: bool = False
    limit: float | None = None
    positive: bool = True
    kind: str | None = None

    def check(self, value: float) -> str | None:
        """What is wrong with ``value`` for this column's kind, or None."""
        return range_problem(value, self.kind) if self.kind is not None else None


# numeric columns, checked per cell: shapes are whole and within the shape limit,
# times within a sane band of a kernel's time (devices.ranges.RANGES["time"])
NUMERIC_COLUMNS = {
    "M": _Column(integer=True, limit=SHAPE_MAX),
    "K": _Column(integer=True, limit=SHAPE_MAX),
    "N": _Column(integer=True, limit=SHAPE_MAX),
    "repeats": _Column(integer=True, limit=1e9),
    "time_s": _Column(kind="time"),
    "time_min_s": _Column(kind="time"),
    "time_max_s": _Column(kind="time"),
    "bytes": _Column(positive=False, limit=1e18),
    "flops": _Column(positive=False, limit=1e24),
    "sm_clock_mhz": _Column(limit=1e5),
    "mem_clock_mhz": _Column(limit=1e5),
}


# -- writing and reading ---------------------------------------------------------------
def _cell(value: Any, column: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if column in ("time_s", "time_min_s", "time_max_s"):
        return f"{float(value):.6e}"
    if column in ("bytes", "flops"):
        return f"{float(value):.17g}"
    return str(value)


class MeasurementWriter(CsvWriter):
    """Writes the header comment, the column header and rows (dicts over
    ``COLUMNS``), flushing each row (a run that dies half way keeps what it
    measured).

    >>> buf = io.StringIO()
    >>> w = MeasurementWriter(buf, comments=["example"])
    >>> w.comment("a note")
    >>> buf.getvalue().splitlines()[:2]
    ['# roofline_sym measurements, schema 1', '# example']
    """

    def __init__(self, file: TextIO, comments: Iterable[str] = ()):
        super().__init__(file, COLUMNS, (HEADER_LINE, *comments), flush=True)

    def write(self, row: Mapping[str, Any]) -> None:
        super().write({c: _cell(row.get(c), c) for c in COLUMNS})


def write_measurements(rows: Iterable[Mapping[str, Any]],
                       path_or_file: str | os.PathLike[str] | TextIO,
                       comments: Iterable[str] = ()) -> int:
    """Write rows (dicts over ``COLUMNS``) as a measurement CSV; returns the row count."""
    if hasattr(path_or_file, "write"):
        # anything with write() is the file; hasattr narrows only its negative branch
        return _write_rows(cast(TextIO, path_or_file), rows, comments)
    with open(path_or_file, "w", newline="", encoding="utf-8") as f:
        return _write_rows(f, rows, comments)


def _write_rows(f: TextIO, rows: Iterable[Mapping[str, Any]], comments: Iterable[str]) -> int:
    writer, n = MeasurementWriter(f, comments), 0
    for row in rows:
        writer.write(row)
        n += 1
    return n


@dataclass(frozen=True, eq=False)
class Measurements:
    """Validated rows of a measurement file: ``cases``, ``time_s`` and the raw
    text of every column; ``comments`` are the ``#`` lines.

    >>> m = parse_csv("component,M,K,N,time_s\\nmicro.launch,1,1,1,2.5e-6\\n")
    >>> len(m), m.time_s.tolist(), m.synthetic
    (1, [2.5e-06], False)
    """

    cases: tuple[Case, ...]
    time_s: np.ndarray
    columns: Mapping[str, tuple[str, ...]] = field(repr=False)
    comments: tuple[str, ...] = ()
    source: str = "<memory>"
    lines: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def synthetic(self) -> bool:
        """Whether the file says it is synthetic (generated, not measured)."""
        return any("synthetic" in c.lower() for c in self.comments) or any(
            "synthetic" in g.lower() for g in self.columns.get("gpu", ()))

    @property
    def gpu(self) -> str:
        """The first non-empty ``gpu`` value, or ``""``."""
        return next((g for g in self.columns.get("gpu", ()) if g), "")

    @property
    def device(self) -> str:
        """The GPU the rows are of: ``gpu``, less a synthetic file's label
        (``SYNTHETIC model of H200 SXM`` is of ``H200 SXM``).

        >>> rows = ["component,M,K,N,time_s,gpu", "micro.launch,1,1,1,2e-6,"
        ...         f"{SYNTHETIC_GPU}H200 SXM"]
        >>> parse_csv(chr(10).join(rows)).device
        'H200 SXM'
        """
        return self.gpu.removeprefix(SYNTHETIC_GPU)

    @cached_property
    def components(self) -> np.ndarray:
        return np.array([c.component for c in self.cases], dtype=object)

    @cached_property
    def gemm_classes(self) -> np.ndarray:
        """Each row's GEMM class (``fp8_rowwise``: its fixed time ``t0_fp8_rowwise``),
        ``""`` for a kernel or a micro-benchmark."""
        return np.array([gemm_class_of(c) for c in self.components], dtype=object)

    @cached_property
    def shapes(self) -> np.ndarray:
        """``(rows, 3)`` float array of M, K, N."""
        return np.array([(c.M, c.K, c.N) for c in self.cases], dtype=np.float64).reshape(-1, 3)

    @cached_property
    def costs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The current model's (dtype, FLOPs, bytes) per row (not the file's columns)."""
        return costs(self.components, *self.shapes.T)

    def select(self, rows: Any) -> "Measurements":
        """The rows that ``rows`` picks: a predicate on ``Case``, a boolean mask
        or indices (as a column table's ``select``).

        >>> m = parse_csv("component,M,K,N,time_s\\nmicro.launch,1,1,1,2e-6\\n"
        ...               "micro.launch,2,1,1,3e-6\\n")
        >>> m.select(lambda c: c.M > 1).time_s.tolist(), m.select([1, 0]).time_s.tolist()
        ([3e-06], [3e-06, 2e-06])
        """
        if callable(rows):
            rows = [bool(rows(c)) for c in self.cases]
        idx = row_indices(rows, len(self))
        return Measurements(tuple(self.cases[i] for i in idx), self.time_s[idx],
                            {k: tuple(v[i] for i in idx) for k, v in self.columns.items()},
                            self.comments, self.source,
                            tuple(self.lines[i] for i in idx) if self.lines else ())

    def write(self, path_or_file: str | os.PathLike[str] | TextIO) -> int:
        """Write back as CSV (the ``#`` comments after the schema line are kept)."""
        rows: list[dict[str, Any]] = [
            {c: self.columns[c][i] if c in self.columns else "" for c in COLUMNS}
            for i in range(len(self))]
        for i, row in enumerate(rows):
            row["schema"] = row["schema"] or SCHEMA
            row["time_s"] = float(self.time_s[i])
            for c in ("time_min_s", "time_max_s", "bytes", "flops"):
                row[c] = float(row[c]) if row[c] not in ("", None) else None
        comments = [c for c in self.comments if c != HEADER_LINE]
        return write_measurements(rows, path_or_file, comments)


def read_csv(path: str | os.PathLike[str]) -> Measurements:
    """Read and validate a measurement CSV; errors name the file, line and column."""
    path, text = read_text(path, "measurement file")
    return parse_csv(text, str(path))


def parse_csv(text: str, source: str = "<memory>") -> Measurements:
    """Parse measurement CSV text (see ``read_csv``)."""
    if not isinstance(text, str):
        raise InputTypeError(f"parse_csv takes the file's text, not {type(text).__name__}")
    shown = file_label(source)
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    check_size(len(lines), shown, MAX_ROWS)
    table = Delimited(lines, shown, expected=f"columns {', '.join(COLUMNS)}")
    table.require(REQUIRED_COLUMNS, f" (required: {', '.join(REQUIRED_COLUMNS)})")
    header = table.header
    columns: dict[str, list[str]] = {h: [] for h in header}
    cases, times, numbers = [], [], []
    for number, row in table.records():
        if "schema" in row and row["schema"] != str(SCHEMA):
            raise InputError(f"{where(shown, number, 'schema')}: {row['schema']!r} is not a "
                             f"supported schema (this roofline_sym reads schema {SCHEMA})")
        check_component(row["component"], where=f"{where(shown, number, 'component')}: ")
        for c, rule in NUMERIC_COLUMNS.items():
            if c in row and (row[c] or c in REQUIRED_COLUMNS):
                parse_number(row[c], where(shown, number, c), integer=rule.integer,
                             positive=rule.positive, limit=rule.limit,
                             check=rule.check)
        for c in ("gpu", "shape", "shape_set", "torch", "cuda"):
            if has_control(row.get(c, "")):
                raise InputError(f"{where(shown, number, c)}: {show(row[c])} contains control "
                                 "characters")
        cases.append(Case(row["component"], int(float(row["M"])), int(float(row["K"])),
                          int(float(row["N"])), row.get("shape", ""), row.get("shape_set", "")))
        times.append(float(row["time_s"]))
        numbers.append(number)
        for h in header:
            columns[h].append(row[h])
    if not cases:
        raise InputError(f"{shown}: no measurement rows after the header")
    return Measurements(tuple(cases), np.array(times), {k: tuple(v) for k, v in columns.items()},
                        tuple(table.comments), source, tuple(numbers))
