"""One writer per format, registered in one place: CSV, JSON, Markdown, LaTeX, netCDF.

Every table the library writes (``Table.write``, ``to_csv``, ``to_json``, a
sweep streamed to a file, a command's ``--csv`` / ``--json``) goes through the writer ``WRITERS`` holds for its
format, found by name or by a file's suffix (``writer_for``), in the spirit
of xarray's backends: a new format is one ``register`` call.  A writer takes
a stream of tables (a sweep's chunks: ``columns``, ``t[column]``, ``len``),
a target (a path, an open file, or None: the text is returned) and the
columns to write as integers.

>>> from roofline_sym.numeric.table import Table
>>> t = Table({"M": np.array([4096.0, 8192.0]), "lowp_time": np.array([1.5e-4, 2.5e-4])})
>>> print(writer("markdown").write([t], None, {"M"}))
| M | lowp_time_s |
|---:|---:|
| 4096 | 0.00015 |
| 8192 | 0.00025 |
>>> writer_for("out.tex").name
'latex'
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping, Protocol, TextIO

import numpy as np

from ..datafile import csv_cell
from ..errors import InputError
from ..validate import choice, show

__all__ = ["Columns", "Writer", "WRITERS", "register", "writer", "writer_for", "UNITS",
           "header", "write_csv", "write_json", "write_markdown", "write_latex",
           "write_netcdf"]

# column -> unit suffix of its exported / displayed name
UNITS = {name: "s" for name in (
    "baseline_gemm_time", "baseline_overhead_time", "lowp_gemm_time", "lowp_overhead_time",
    "baseline_time", "lowp_time")}


def header(column: str) -> str:
    """A column's name with its unit: ``header("lowp_time") == "lowp_time_s"``."""
    unit = UNITS.get(column)
    return f"{column}_{unit}" if unit else column


class Columns(Protocol):
    """What a writer reads of a table: its column names, a column, its length."""

    @property
    def columns(self) -> list[str]: ...

    def __getitem__(self, column: str) -> np.ndarray: ...

    def __len__(self) -> int: ...


WriteFunction = Callable[[Iterable[Columns], Any, Collection[str]], "str | None"]


@dataclass(frozen=True)
class Writer:
    """A format: its name, the file suffixes that ask for it, its function."""

    name: str
    suffixes: tuple[str, ...]
    write: WriteFunction


WRITERS: dict[str, Writer] = {}


def register(name: str, suffixes: tuple[str, ...]) -> Callable[[WriteFunction], WriteFunction]:
    """A decorator: ``write`` is the one writer of format ``name``."""
    def add(write: WriteFunction) -> WriteFunction:
        WRITERS[name] = Writer(name, suffixes, write)
        return write
    return add


def writer(name: str) -> Writer:
    """The writer of format ``name`` (``csv``, ``json``, ``markdown``, ``latex``,
    ``netcdf``); an unknown one names the formats."""
    return WRITERS[choice(name, tuple(WRITERS), "table format")]


def writer_for(path: str | os.PathLike[str]) -> Writer:
    """The writer a file name asks for by its suffix (``.csv``, ``.md``, ``.nc``, ...)."""
    suffix = Path(path).suffix.lower()
    found = next((w for w in WRITERS.values() if suffix in w.suffixes), None)
    if found is None:
        known = ", ".join(s for w in WRITERS.values() for s in w.suffixes)
        raise InputError(f"{show(str(path))}: no table format for the suffix "
                         f"{show(suffix)}; suffixes: {known}")
    return found


def _csv_text(value: Any) -> str:
    """A cell as CSV writes it: a list or tuple its items joined by ``;`` (a
    table stays flat), None empty."""
    if isinstance(value, (list, tuple)):
        value = ";".join(map(str, value))
    return csv_cell(value)


def _finite(value: Any) -> Any:
    """NaN and infinities as None, in nested lists and mappings too (JSON has neither)."""
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """What ``json`` cannot write itself: numpy scalars as Python's, anything else as text."""
    if isinstance(value, (np.generic,)):
        return value.item()
    return str(value)


def _json_text(value: Any) -> str:
    """A cell as JSON: nested lists and mappings as JSON, non-finite numbers ``null``."""
    return json.dumps(_finite(value), default=_plain, allow_nan=False)


@register("csv", (".csv",))
def write_csv(tables: Iterable[Columns], path_or_file: str | os.PathLike[str] | Any = None,
              whole: Collection[str] = ()) -> str | None:
    """Write ``tables`` (the same columns; e.g. a sweep's chunks) as one CSV with a
    header, a table at a time: the text ``csv.writer`` writes for the rows
    (names with units; floats as ``repr``, so they read back exactly; NaN
    empty), the ``whole`` columns as integers.  Returns the text when no path
    or file is given.

    >>> from roofline_sym.numeric.table import Table
    >>> t = Table({"n": np.array([1.0, 2.0]), "x": np.array([0.1, np.nan]),
    ...            "s": np.array(["a,b", "c"])})
    >>> print(write_csv([t], whole={"n"}), end="")
    n,x,s
    1,0.1,"a,b"
    2,,c
    """
    out = _Output(path_or_file, newline="")
    with out as f:
        head = None
        for table in tables:
            if head is None:
                head = table.columns
                f.write(",".join(csv_cell(header(c)) for c in head) + "\n")
            if len(table):
                cells = [_cells(table[c], _csv_text, "", c in whole) for c in head]
                f.write("\n".join(map(",".join, zip(*cells))) + "\n")
    return out.text


@register("json", (".json",))
def write_json(tables: Iterable[Columns], path_or_file: str | os.PathLike[str] | Any = None,
               whole: Collection[str] = ()) -> str | None:
    """Write the rows of ``tables`` as one JSON list of row objects, a table at a
    time: the text ``json.dump`` writes for them (keys with units, NaN
    ``null``), the ``whole`` columns as integers.  Returns the text when no
    path or file is given.

    >>> from roofline_sym.numeric.table import Table
    >>> t = Table({"n": np.array([1.0, 2.0]), "x": np.array([0.1, np.nan]),
    ...            "b": np.array([True, False])})
    >>> write_json([t], whole={"n"})
    '[{"n": 1, "x": 0.1, "b": true}, {"n": 2, "x": null, "b": false}]'
    """
    out = _Output(path_or_file)
    with out as f:
        f.write("[")
        first = True
        for table in tables:
            if not len(table):
                continue
            # each cell with its key, so a row is its cells joined
            cells = [_cells(table[c], _json_text, "null", c in whole,
                            prefix=json.dumps(header(c)) + ": ") for c in table.columns]
            f.write(("{" if first else ", {") + "}, {".join(map(", ".join, zip(*cells))) + "}")
            first = False
        f.write("]")
    return out.text


def _text_rows(tables: Iterable[Columns], whole: Collection[str], encode: Any
               ) -> tuple[list[str], list[list[str]], list[bool]]:
    """Headers, rows of cells (as CSV writes them, each through ``encode``) and
    which columns are numbers (aligned right), for the text formats."""
    head: list[str] | None = None
    rows: list[list[str]] = []
    numeric: list[bool] = []
    for table in tables:
        if head is None:
            head = table.columns
            numeric = [table[c].dtype.kind in "iuf" for c in head]
        cells = [_cells(table[c], _csv_text, "", c in whole) for c in head]
        rows += [[encode(v) for v in row] for row in zip(*cells)]
    return [encode(header(c)) for c in head or []], rows, numeric


@register("markdown", (".md",))
def write_markdown(tables: Iterable[Columns], path_or_file: Any = None,
                   whole: Collection[str] = ()) -> str | None:
    """A Markdown table (numbers aligned right, ``|`` escaped, NaN empty)."""
    head, rows, numeric = _text_rows(tables, whole, lambda v: v.replace("|", r"\|"))
    out = _Output(path_or_file)
    with out as f:
        f.write("\n".join(["| " + " | ".join(head) + " |",
                           "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
                          + ["| " + " | ".join(r) + " |" for r in rows]))
    return out.text


_LATEX_SPECIAL = str.maketrans({c: "\\" + c for c in "&%$#_{}"})


@register("latex", (".tex",))
def write_latex(tables: Iterable[Columns], path_or_file: Any = None,
                whole: Collection[str] = ()) -> str | None:
    """A booktabs tabular (``\\usepackage{booktabs}``); LaTeX's special
    characters in cells escaped, numbers aligned right."""
    head, rows, numeric = _text_rows(tables, whole,
                                     lambda v: v.translate(_LATEX_SPECIAL))
    out = _Output(path_or_file)
    with out as f:
        f.write("\n".join([rf"\begin{{tabular}}{{{''.join('r' if n else 'l' for n in numeric)}}}",
                           r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
                          + [" & ".join(r) + r" \\" for r in rows]
                          + [r"\bottomrule", r"\end{tabular}"]))
    return out.text


@register("netcdf", (".nc",))
def write_netcdf(tables: Iterable[Columns], path_or_file: Any = None,
                 whole: Collection[str] = ()) -> str | None:
    """A netCDF file of the columns along one ``row`` dimension (xarray, the
    ``dask`` extra, imported here; a path, not text)."""
    if not isinstance(path_or_file, (str, os.PathLike)):
        raise InputError("netCDF is binary: give a file path ending in .nc")
    try:
        import xarray as xr
    except ImportError:
        raise ImportError("netCDF needs xarray, which is not installed: pip install "
                          "'roofline-sym[dask]'") from None
    tables = list(tables)
    columns = tables[0].columns if tables else []
    data = {header(c): ("row", np.concatenate([t[c] for t in tables])) for c in columns}
    xr.Dataset(data).to_netcdf(path_or_file)
    return None


def _cells(column: np.ndarray, encode: Any, nan: str, whole: bool = False,
           prefix: str = "") -> list[str]:
    """A column's cells as text, each preceded by ``prefix``: floats as ``repr``
    (``nan`` for NaN; integers for a ``whole`` column), other values through
    ``encode``.  A column of few distinct values (constant columns, grids of
    shapes) writes each once."""
    kind = column.dtype.kind
    if kind == "b":
        words = np.array([prefix + encode(False), prefix + encode(True)], dtype=object)
        cells: list[str] = words[column.view(np.int8)].tolist()
        return cells
    values, inverse = column, None
    if len(column) > 256 and _repeats(column):
        values, inverse = np.unique(column, return_inverse=True)
    items = values.tolist()
    if kind == "f":
        if encode is not _csv_text and np.isinf(values).any():
            raise InputError("Out of range float values are not JSON compliant")
        text = [str(int(v)) if v == v else nan for v in items] if whole else \
            list(map(repr, items))
        if not whole and np.isnan(values).any():
            text = [nan if v != v else t for v, t in zip(items, text)]
    elif kind in "iu":
        text = list(map(str, items))
    elif encode is _csv_text and kind == "U" or all(isinstance(v, str) for v in items):
        plain = encode is _csv_text and not any(c in "".join(items) for c in ',"\r\n')
        text = items if plain else list(map(encode, items))
    else:
        text = [nan if isinstance(v, float) and v != v else encode(v) for v in items]
    if prefix:
        text = list(map(prefix.__add__, text))
    if inverse is None:
        return text
    cells = np.array(text, dtype=object)[inverse.reshape(-1)].tolist()
    return cells


def _repeats(column: np.ndarray) -> bool:
    """Whether a column has few distinct values, judged on a sample (to write each
    once); -0.0 and objects that do not sort are written one by one."""
    sample = column[:256]
    try:
        if len(np.unique(sample)) > 64:
            return False
    except TypeError:
        return False
    return not (column.dtype.kind == "f" and np.any(np.signbit(column) & (column == 0)))


class _Output:
    """Where an export writes: a path (opened), a file (used as is, not closed),
    or None (the text, kept as ``.text`` once the block ends)."""

    def __init__(self, target: Any, newline: str | None = None):
        self.target, self.newline = target, newline
        self.f: TextIO | None = None  # the text's buffer or the opened path; None: a file given
        self.text: str | None = None

    def __enter__(self) -> TextIO:
        if self.target is None:
            self.f = io.StringIO()
        elif isinstance(self.target, (str, os.PathLike)):
            self.f = open(self.target, "w", encoding="utf-8", newline=self.newline)
        elif not hasattr(self.target, "write"):
            raise InputError(f"expected a path or a writable file, got {self.target!r}")
        return self.f or self.target

    def __exit__(self, *exc: object) -> None:
        if isinstance(self.f, io.StringIO):  # no target: keep the text
            self.text = self.f.getvalue()
        elif self.f is not None:
            self.f.close()
