"""Speedup tables: measured (or to-be-predicted) low-precision speedups.

One row per measurement, the schema of the published measurements shipped
in ``roofline_sym/data/measurements/published/speedups.csv``::

    source_id, gpu, recipe, mode, workload, M, K, N, measured_speedup,
    implementation, timer, notes

``measured_speedup`` = bf16 time / low-precision time; it may be blank (or
the column absent) in a table that is only to be predicted.  The optional
``implementation`` names the library that ran the low-precision GEMMs
(``devices.implementations.IMPLEMENTATIONS``; blank or absent: ``torch``), the
optional ``timer`` how the source timed it (``devices.timers``: ``graph`` for a
CUDA-graph replay, ``events``, ``profiler``; blank or absent: not stated), a
record the model does not price.  Grouped-GEMM
rows give their group count in an optional ``groups`` column, or in
``notes`` as ``G=<n>`` or a source tuple ``(M,N,K,G)=(..., <n>)``.  ``read`` validates every cell (errors name the
file, line and column) and ``published()`` loads the shipped table.

>>> t = published()
>>> len(t) > 200, t.gpu[0], t.recipe[0], t.workload[0]
(True, 'h100', 'rowwise', 'ln-linear-sigmoid')
>>> t.select(t.source_id == "ao-infer-b200-r4").M.tolist()[:3]
[1024.0, 2048.0, 4096.0]
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ...datafile import Delimited, read_text, where
from ...devices.implementations import check_implementation
from ...devices.timers import check_timer
from ...errors import InputError, InputTypeError
from ...numeric.columnar import Columns
from ...validate import SHAPE_MAX, label, parse_number

__all__ = ["COLUMNS", "COLUMN_ARRAYS", "REQUIRED", "SpeedupTable", "read", "published", "published_path",
           "kernels_path"]

COLUMNS = ("source_id", "gpu", "recipe", "mode", "workload", "M", "K", "N",
           "measured_speedup", "implementation", "timer", "notes")
REQUIRED = ("gpu", "recipe", "mode", "workload")
_SHAPES = ("M", "K", "N")
# a speedup outside this band is a typo (the fastest published fp4 GEMM is ~4x)
SPEEDUP_RANGE = (1e-3, 1e3)
# a group count in the notes: "G=8" or a source tuple "(M,N,K,G)=(128000,8192,5120,8)"
_GROUPS = (re.compile(r"\(M,\s*N,\s*K,\s*G\)\s*=\s*\(\s*\d+,\s*\d+,\s*\d+,\s*(\d+)\s*\)"),
           re.compile(r"\bG\s*=\s*(\d+)"))


@dataclass(frozen=True, eq=False)
class SpeedupTable(Columns):
    """Rows of a speedup table as columns: strings for the names, float arrays
    for the shapes (NaN where blank: whole-model rows) and the measured
    speedup (NaN where blank), int groups (1 unless stated), and where each
    row came from (``lines``).  ``len``, ``t["gpu"]`` and ``select(rows)``
    come from ``Columns``."""

    source_id: np.ndarray
    gpu: np.ndarray
    recipe: np.ndarray
    mode: np.ndarray
    workload: np.ndarray
    M: np.ndarray
    K: np.ndarray
    N: np.ndarray
    measured: np.ndarray
    groups: np.ndarray
    notes: np.ndarray
    implementation: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    timer: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    source: str = "<memory>"
    lines: tuple[int, ...] = field(default=())

    def where(self, i: int, column: str | None = None) -> str:
        """``file: line n`` of row ``i`` (``, column name``), for messages."""
        line = self.lines[i] if i < len(self.lines) else i + 2
        return where(self.source, line, column)

    def with_measured(self, measured: Any) -> "SpeedupTable":
        """The same rows with another ``measured`` column (e.g. blanked)."""
        return replace(self, measured=np.broadcast_to(np.asarray(measured, float),
                                                      (len(self),)).copy())

    def __repr__(self) -> str:
        return f"SpeedupTable({len(self)} rows from {self.source})"


COLUMN_ARRAYS = ("source_id", "gpu", "recipe", "mode", "workload", "M", "K", "N", "measured",
           "groups", "notes", "implementation", "timer")


def published_path() -> Path:
    """The shipped table of published speedups (see its README.md for sources)."""
    return Path(str(resources.files("roofline_sym").joinpath(
        "data", "measurements", "published", "speedups.csv")))


def kernels_path() -> Path:
    """The shipped table of published single-kernel throughputs."""
    return published_path().with_name("kernels.csv")


def published() -> SpeedupTable:
    """Every published speedup shipped with the package (the sources, commits
    and transcription notes are in ``published/README.md``)."""
    return read(published_path())


def read(table: Any) -> SpeedupTable:
    """A speedup table from a path, CSV text in a file-like object, a
    ``SpeedupTable``, a pandas DataFrame, a list of row dicts or a mapping of
    columns.  Every cell is checked; errors name the file, line and column."""
    if isinstance(table, SpeedupTable):
        return table
    if isinstance(table, (str, os.PathLike)):
        path, text = read_text(table, "speedup table")
        return _parse(text, path)
    if hasattr(table, "read"):
        return _parse(table.read(), getattr(table, "name", "<stream>"))
    if hasattr(table, "to_dict") and hasattr(table, "columns"):  # a pandas DataFrame
        return _from_rows(table.to_dict("records"), "<DataFrame>")
    if isinstance(table, Mapping):
        columns = {k: list(v) for k, v in table.items()}
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise InputError(f"speedup table columns differ in length: {sorted(lengths)}")
        n = lengths.pop() if lengths else 0
        return _from_rows([{k: v[i] for k, v in columns.items()} for i in range(n)],
                          "<columns>")
    if isinstance(table, Iterable):
        return _from_rows(list(table), "<rows>")
    raise InputTypeError(f"a speedup table is a path, a SpeedupTable, a DataFrame or rows, "
                         f"not {type(table).__name__}")


def _parse(text: str, source: str) -> SpeedupTable:
    table = Delimited(text.lstrip("\ufeff").splitlines(keepends=True), label(source),
                      expected=f"columns {', '.join(COLUMNS)}")
    table.require(REQUIRED + _SHAPES, f"; a speedup table has {', '.join(COLUMNS)}")
    lines, rows = [], []
    for line, row in table.records():
        lines.append(line)
        rows.append(row)
    return _from_rows(rows, label(source), lines, header=table.header)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _from_rows(rows: list[Any], source: str, lines: list[int] | None = None,
               header: Iterable[str] | None = None) -> SpeedupTable:
    header = [h.strip() for h in (header if header is not None else
                                  (rows[0].keys() if rows else ()))]
    missing = [c for c in REQUIRED + _SHAPES if c not in header]
    if missing:
        raise InputError(f"{source}: missing column(s) {', '.join(map(repr, missing))}; "
                         f"a speedup table has {', '.join(COLUMNS)}")
    if not rows:
        raise InputError(f"{source}: no rows")
    lines = lines or [i + 2 for i in range(len(rows))]
    cols: dict[str, list[Any]] = {name: [] for name in COLUMN_ARRAYS}
    for row, line in zip(rows, lines):
        if not isinstance(row, Mapping):
            raise InputTypeError(f"{source}: row {line - 1} is not a mapping of column to value")
        row = {str(k).strip(): _cell(v) for k, v in row.items()}
        for name in REQUIRED:
            if not row.get(name):
                raise InputError(f"{where(source, line, name)}: empty")
        for name in ("source_id", "gpu", "recipe", "mode", "workload", "notes"):
            cols[name].append(row.get(name, ""))
        shapes = [row.get(s, "") for s in _SHAPES]  # blank: not a single-shape row
        for s, text in zip(_SHAPES, shapes):
            cols[s].append(parse_number(text, where(source, line, s), integer=True,
                                        limit=SHAPE_MAX) if text else math.nan)
        measured = row.get("measured_speedup", "")
        value = parse_number(measured, where(source, line, "measured_speedup")) if measured \
            else math.nan
        if measured and not SPEEDUP_RANGE[0] <= value <= SPEEDUP_RANGE[1]:
            raise InputError(f"{where(source, line, 'measured_speedup')}: {measured!r} is outside "
                             f"{SPEEDUP_RANGE[0]:g}..{SPEEDUP_RANGE[1]:g}")
        cols["measured"].append(value)
        groups = row.get("groups", "")
        if not groups:
            found = [m for m in (p.search(row.get("notes", "")) for p in _GROUPS) if m]
            groups = found[0].group(1) if found else "1"
        cols["groups"].append(int(parse_number(groups, where(source, line, "groups"),
                                               integer=True, limit=1e6)))
        cols["implementation"].append(check_implementation(
            row.get("implementation", ""), where(source, line, "implementation") + ": "))
        cols["timer"].append(check_timer(row.get("timer", ""),
                                         where(source, line, "timer") + ": "))
    arrays = {name: np.array(v, dtype=object) for name, v in cols.items()}
    for name in _SHAPES + ("measured",):
        arrays[name] = np.array(cols[name], dtype=np.float64)
    arrays["groups"] = np.array(cols["groups"], dtype=np.int64)
    return SpeedupTable(**arrays, source=source, lines=tuple(lines))
