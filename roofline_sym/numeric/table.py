"""Column tables: what a sweep returns, shown and exported.

``Table`` holds named numpy columns.  It prints its first rows (``repr``,
like pandas), renders as HTML in Jupyter (``_repr_html_``) and exports to
CSV and JSON, as text when no path is given.  Exports and displays name
each column with its unit (``lowp_time_s``: seconds, as in the hardware
files' ``launch_overhead_s``); whole-number float columns (``M``, ``count``)
are written as integers.  Every format is written by its one writer
(``writers``: CSV, JSON, Markdown, LaTeX, netCDF), ``Table.write`` picks it
by name or by the file's suffix.

>>> t = Table({"M": np.array([4096.0, 8192.0]), "lowp_time": np.array([1.5e-4, 2.5e-4])})
>>> print(t.to_csv(), end="")
M,lowp_time_s
4096,0.00015
8192,0.00025
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..validate import close_matches, unknown_name
from .writers import UNITS, header, write_csv, write_json, writer, writer_for

if TYPE_CHECKING:
    import pandas

__all__ = ["Table"]

# words a reader may try for a column: the column they mean
_SYNONYMS = {"layer": "name", "layers": "name", "layer_name": "name", "time": "lowp_time",
             "gpus": "gpu", "recipes": "recipe", "g": "groups", "experts": "groups"}
# rows a repr / HTML shows before "... more rows"
_SHOW = 10
_SHOW_HTML = 50
# rows written at a time: an export's text stays small however long the table
_SLICE = 1 << 16


class Table:
    """A column-oriented table: ``.columns``, ``.rows``, ``len()``, ``t["col"]``.

    ``caption``: what the table was made with (preset, fusion, dataset), shown
    above its rows; ``preview``: the columns ``repr`` shows (default: all);
    ``keys``: the columns that say which row is which (GPU, recipe, layer, M,
    K, N): a display too narrow for every column drops others, never these.
    Export with ``to_csv``, ``to_json`` (text without a path) or ``to_pandas``.

    >>> t = Table({"a": np.array([1.0, 2.0]), "b": np.array(["x", "y"])})
    >>> t.columns, len(t), t.rows[1]
    (['a', 'b'], 2, {'a': 2.0, 'b': 'y'})
    >>> t
    Table: 2 rows x 2 columns
    a  b
    1  x
    2  y
    """

    def __init__(self, columns: Mapping[str, np.ndarray], caption: str = "",
                 preview: Sequence[str] | None = None, keys: Sequence[str] = ()):
        self._data = dict(columns)
        self.caption = caption
        self.preview = [c for c in preview if c in self._data] if preview else None
        self.keys = [c for c in keys if c in self._data]
        lengths = {len(v) for v in self._data.values()}
        if len(lengths) > 1:
            raise InputError(f"columns have different lengths {sorted(lengths)}")

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], caption: str = "",
                  keys: Sequence[str] = ()) -> "Table":
        """The table of ``rows`` (mappings; a key a row lacks is None there), its
        columns in the order the keys first appear: numbers as a float column
        (None, NaN and infinities as NaN: no value), whole numbers alone as an
        integer one, booleans as a bool one, anything else (text, lists) as
        objects.  A command's rows become a table this way, so every export
        goes through the one writer of its format.

        >>> t = Table.from_rows([{"gpu": "h100", "x": 1.5, "steps": []},
        ...                      {"gpu": "b200", "x": None, "steps": [2.5]}])
        >>> t.columns, t["x"].dtype.kind, t.rows[1]
        (['gpu', 'x', 'steps'], 'f', {'gpu': 'b200', 'x': nan, 'steps': [2.5]})
        >>> print(t.to_csv(), end="")
        gpu,x,steps
        h100,1.5,
        b200,,2.5
        """
        names = list(dict.fromkeys(k for r in rows for k in r))
        return cls({n: _column([r.get(n) for r in rows]) for n in names}, caption,
                   keys=keys)

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def __len__(self) -> int:
        return len(next(iter(self._data.values()))) if self._data else 0

    def __getitem__(self, column: str) -> np.ndarray:
        self._check(column)
        return self._data[column]

    def _check(self, column: Any) -> None:
        """A KeyError naming close matches for a column the table lacks (a
        header as printed, ``lowp_time_s``, names its column ``lowp_time``)."""
        if isinstance(column, str) and column in self._data:
            return
        # a header as displayed (with its unit) or a synonym names its column first
        by_header = {header(c): c for c in self._data}
        first = [by_header[column]] if isinstance(column, str) and column in by_header else []
        if isinstance(column, str) and _SYNONYMS.get(column.casefold()) in self._data:
            first.append(_SYNONYMS[column.casefold()])
        close = close_matches(column, self._data) if isinstance(column, str) else []
        raise unknown_name("column", column, self._data,
                           suggestions=first + close)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Rows as dicts of plain Python values (float, int, bool, str)."""
        cols = [(name, arr.tolist()) for name, arr in self._data.items()]
        return [{name: values[i] for name, values in cols} for i in range(len(self))]

    # -- export -------------------------------------------------------------------
    def whole_columns(self) -> set[str]:
        """The float columns (not times) whose every value is a whole number: the
        exports write them as integers."""
        return {name for name, arr in self._data.items() if name not in UNITS and _whole(arr)}

    def _slices(self, rows: int = _SLICE) -> Iterator["Table"]:
        """The table as consecutive tables of at most ``rows`` rows (views)."""
        for start in range(0, max(len(self), 1), rows):  # an empty table: its header
            yield Table({c: v[start:start + rows] for c, v in self._data.items()})

    def to_pandas(self) -> pandas.DataFrame:
        """A ``pandas.DataFrame`` (pandas is optional, imported only here)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas, which is not installed: "
                              "pip install pandas (or use to_csv / to_json / .rows)") from None
        return pd.DataFrame(self._data)

    def to_csv(self, path_or_file: str | os.PathLike[str] | Any = None) -> str | None:
        """CSV with a header (units in the names); floats round-trip exactly, NaN
        is empty.  Returns the text when no path or file is given."""
        return write_csv(self._slices(), path_or_file, self.whole_columns())

    def write(self, path_or_file: str | os.PathLike[str] | Any = None,
              format: str | None = None) -> str | None:
        """Write in ``format`` (``csv``, ``json``, ``markdown``, ``latex``,
        ``netcdf``; default: the file's suffix) through the one writer of that
        format (``writers.WRITERS``).  Returns the text when no path or file is
        given."""
        if format is None:
            if not isinstance(path_or_file, (str, os.PathLike)):
                raise InputError("write() to a file or as text needs format=")
            found = writer_for(path_or_file)
        else:
            found = writer(format)
        return found.write(self._slices(), path_or_file, self.whole_columns())

    def to_json(self, path_or_file: str | os.PathLike[str] | Any = None) -> str | None:
        """A JSON list of row objects (keys with units); NaN is ``null``.
        Returns the text when no path or file is given."""
        return write_json(self._slices(), path_or_file, self.whole_columns())

    # -- display ------------------------------------------------------------------
    def format(self, columns: Sequence[str] | None = None, max_rows: int = 20,
               width: int | None = None) -> str:
        """A fixed-width text rendering of the first ``max_rows`` rows (headers
        with units).  With ``width``, columns that are not ``keys`` give way,
        last first, to ``...``; keys too wide together shorten their longest
        text (a layer's name) in the middle.

        >>> t = Table({"name": np.array(["q_proj", "k_proj"]), "M": np.array([8.0, 8.0]),
        ...            "note": np.array(["a long remark", "another"])}, keys=["name", "M"])
        >>> print(t.format(width=14))
          name  M  ...
        q_proj  8  ...
        k_proj  8  ...
        """
        columns = list(columns or self.columns)
        for c in columns:
            self._check(c)
        rows = self.rows[:max_rows]
        cells = {c: [header(c)] + [_cell(r[c]) for r in rows] for c in columns}
        shown = _fit(columns, cells, self.keys, width)
        cells["..."] = ["..."] * (len(rows) + 1)
        widths = {c: max(map(len, cells[c])) for c in shown}
        lines = ["  ".join(cells[c][i].rjust(widths[c]) for c in shown)
                 for i in range(len(rows) + 1)]
        if len(self) > max_rows:
            lines.append(f"... {len(self) - max_rows} more rows")
        return "\n".join(lines)

    def _title(self) -> str:
        title = f"{type(self).__name__}: {len(self)} rows x {len(self._data)} columns"
        return title + (f"; {self.caption}" if self.caption else "")

    def __repr__(self) -> str:
        more = (f" ({len(self.preview)} of {len(self._data)} columns shown)"
                if self.preview else "")
        return (self._title() + more + "\n"
                + self.format(self.preview, max_rows=_SHOW, width=100))

    def _repr_html_(self) -> str:
        """An HTML table of the first rows, captioned with the options (Jupyter)."""
        from html import escape as esc  # only a notebook asks for HTML

        head = "".join(f"<th>{esc(header(c))}</th>" for c in self._data)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(_cell(v))}</td>" for v in r.values()) + "</tr>"
            for r in self.rows[:_SHOW_HTML])
        more = (f"<p>... {len(self) - _SHOW_HTML} more rows</p>"
                if len(self) > _SHOW_HTML else "")
        return (f"<table><caption>{esc(self._title())}</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>{more}")


def _column(values: list[Any]) -> np.ndarray:
    """One column of ``Table.from_rows``: float, integer, bool or object."""
    def number(v: Any) -> bool:
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
            v, (bool, np.bool_))

    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, dtype=bool)
    if values and all(isinstance(v, (int, np.integer)) and number(v)
                      and -(2 ** 63) <= int(v) < 2 ** 63 for v in values):
        return np.array(values, dtype=np.int64)
    if any(v is not None for v in values) and all(v is None or number(v) for v in values):
        column = np.array([math.nan if v is None else float(v) for v in values])
        column[~np.isfinite(column)] = math.nan
        return column
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):  # one by one: a list stays one cell
        out[i] = v
    return out


def _whole(arr: np.ndarray) -> bool:
    """A float column whose every value (NaN aside) is a whole number below 2**53."""
    if arr.dtype.kind != "f" or not len(arr):
        return False
    finite = arr[~np.isnan(arr)]
    return bool(np.all(np.isfinite(finite)) and np.all(finite == np.round(finite))
                and np.all(np.abs(finite) < 2.0 ** 53))


def _fit(columns: list[str], cells: dict[str, list[str]], keys: Sequence[str],
         width: int | None) -> list[str]:
    """The columns shown within ``width``: the widest text key (a layer's name)
    shortened in the middle down to 24 characters, then the other columns
    dropped, last first (a ``...`` column where any was), then that key down
    to 12 characters (``cells`` is changed in place)."""
    def used(shown: list[str]) -> int:
        return sum(3 if c == "..." else max(map(len, cells[c])) for c in shown) + 2 * (
            len(shown) - 1)

    def shorten(shown: list[str], floor: int, width: int) -> None:
        texts = [c for c in shown if c in keys and not _numeric_cells(cells[c])]
        excess = used(shown) - width
        if excess > 0 and texts:
            widest = max(texts, key=lambda c: max(map(len, cells[c])))
            limit = max(floor, max(map(len, cells[widest])) - excess)
            cells[widest] = [_shorten(t, limit) for t in cells[widest]]

    if width is None or used(columns) <= width:
        return columns
    shorten(columns, 24, width)
    shown = list(columns)
    others = [c for c in columns if c not in keys]
    while others and used(shown) > width:
        shown.remove(others.pop())
        if shown[-1] != "...":
            shown.append("...")
    shorten(shown, 12, width)
    return shown


def _numeric_cells(column: list[str]) -> bool:
    return all(t.replace(".", "").replace("-", "").replace("e+", "").isdigit()
               for t in column[1:])


def _shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, its middle as ``...``."""
    if len(text) <= limit:
        return text
    head = (limit - 3 + 1) // 2
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


def _cell(v: Any) -> str:
    """A float as an integer when it is one (below 1e15: M = 16384 as 16384,
    not 1.638e+04), else to 4 significant digits, ``-`` where there is none
    (NaN); other values as str."""
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"  # no value (a total over rows of several M): never "nan"
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return str(v)
