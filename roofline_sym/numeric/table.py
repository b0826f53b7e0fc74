"""Column tables: what a sweep returns, shown and exported.

``Table`` holds named numpy columns.  It prints its first rows (``repr``,
like pandas), renders as HTML in Jupyter (``_repr_html_``) and exports to
CSV and JSON, as text when no path is given.  Exports and displays name
each column with its unit (``lowp_time_s``: seconds, as in the hardware
files' ``launch_overhead_s``); whole-number float columns (``M``, ``count``)
are written as integers.

>>> t = Table({"M": np.array([4096.0, 8192.0]), "lowp_time": np.array([1.5e-4, 2.5e-4])})
>>> print(t.to_csv(), end="")
M,lowp_time_s
4096,0.00015
8192,0.00025
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Table", "UNITS", "header", "export_rows"]

# column -> unit suffix of its exported / displayed name
UNITS = {name: "s" for name in (
    "baseline_gemm_time", "baseline_overhead_time", "lowp_gemm_time", "lowp_overhead_time",
    "baseline_time", "lowp_time")}
# rows a repr / HTML shows before "... more rows"
_SHOW = 10
_SHOW_HTML = 50


def header(column: str) -> str:
    """A column's name with its unit: ``header("lowp_time") == "lowp_time_s"``."""
    unit = UNITS.get(column)
    return f"{column}_{unit}" if unit else column


def export_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows as exported: keys with units, whole-number float columns (not
    times) as int, NaN and infinities as None (other values as they are).

    >>> export_rows([{"M": 8192.0, "lowp_time": float("nan")}])
    [{'M': 8192, 'lowp_time_s': None}]
    """
    keys = list(dict.fromkeys(k for r in rows for k in r))
    whole = {k for k in keys if k not in UNITS
             and all(isinstance(r.get(k), float) for r in rows)
             and _whole(np.array([r[k] for r in rows], dtype=float))}

    def value(k: str, v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return int(v) if k in whole else v

    return [{header(k): value(k, v) for k, v in r.items()} for r in rows]


class Table:
    """A column-oriented table: ``.columns``, ``.rows``, ``len()``, ``t["col"]``.

    ``caption``: what the table was made with (preset, fusion, dataset), shown
    above its rows; ``preview``: the columns ``repr`` shows (default: all, the
    middle ones elided to fit 100 characters).  Export with ``to_csv``,
    ``to_json`` (text without a path) or ``to_pandas``.

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
                 preview: Sequence[str] | None = None):
        self._data = dict(columns)
        self.caption = caption
        self.preview = [c for c in preview if c in self._data] if preview else None
        lengths = {len(v) for v in self._data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns have different lengths {sorted(lengths)}")

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def __len__(self) -> int:
        return len(next(iter(self._data.values()))) if self._data else 0

    def __getitem__(self, column: str) -> np.ndarray:
        try:
            return self._data[column]
        except KeyError:
            raise KeyError(f"no column {column!r}; columns: {', '.join(self._data)}") from None

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Rows as dicts of plain Python values (float, int, bool, str)."""
        cols = [(name, arr.tolist()) for name, arr in self._data.items()]
        return [{name: values[i] for name, values in cols} for i in range(len(self))]

    # -- export -------------------------------------------------------------------
    def _export(self) -> tuple[list[str], list[list[Any]]]:
        """Headers with units, and rows with whole-number float columns as int, NaN None."""
        names, columns = [], []
        for name, arr in self._data.items():
            values = arr.tolist()
            if name not in UNITS and _whole(arr):  # counts, not times
                values = [None if v != v else int(v) for v in values]
            elif arr.dtype.kind == "f":
                values = [None if v != v else v for v in values]
            names.append(header(name))
            columns.append(values)
        return names, [list(r) for r in zip(*columns)]

    def to_pandas(self):
        """A ``pandas.DataFrame`` (pandas is optional, imported only here)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas, which is not installed: "
                              "pip install pandas (or use to_csv / to_json / .rows)") from None
        return pd.DataFrame(self._data)

    def to_csv(self, path_or_file: str | os.PathLike | Any = None) -> str | None:
        """CSV with a header (units in the names); floats round-trip exactly, NaN
        is empty.  Returns the text when no path or file is given."""
        import csv  # exports import their modules when used, keeping the package light
        import io

        names, rows = self._export()
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(names)
        writer.writerows([["" if v is None else v for v in r] for r in rows])
        return _deliver(buf.getvalue(), path_or_file, newline="")

    def to_json(self, path_or_file: str | os.PathLike | Any = None) -> str | None:
        """A JSON list of row objects (keys with units); NaN is ``null``.
        Returns the text when no path or file is given."""
        import json

        names, rows = self._export()
        text = json.dumps([dict(zip(names, r)) for r in rows], allow_nan=False)
        return _deliver(text, path_or_file)

    # -- display ------------------------------------------------------------------
    def format(self, columns: Sequence[str] | None = None, max_rows: int = 20,
               width: int | None = None) -> str:
        """A fixed-width text rendering of the first ``max_rows`` rows (headers
        with units); with ``width``, middle columns give way to ``...``."""
        columns = list(columns or self.columns)
        rows = self.rows[:max_rows]
        cells = {c: [header(c)] + [_cell(r[c]) for r in rows] for c in columns}
        widths = {c: max(map(len, v)) for c, v in cells.items()}
        shown = columns
        if width is not None and sum(widths.values()) + 2 * len(columns) > width:
            left, right, used = [], [], 5
            for i in range(len(columns)):
                side, c = (left, columns[i // 2]) if i % 2 == 0 else (
                    right, columns[len(columns) - 1 - i // 2])
                if used + widths[c] + 2 > width or c in left or c in right:
                    break
                side.append(c)
                used += widths[c] + 2
            shown = left + ["..."] + right[::-1]
            cells["..."], widths["..."] = ["..."] * (len(rows) + 1), 3
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


def _whole(arr: np.ndarray) -> bool:
    """A float column whose every value (NaN aside) is a whole number below 2**53."""
    if arr.dtype.kind != "f" or not len(arr):
        return False
    finite = arr[~np.isnan(arr)]
    return bool(np.all(np.isfinite(finite)) and np.all(finite == np.round(finite))
                and np.all(np.abs(finite) < 2.0 ** 53))


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


def _deliver(text: str, target: Any, newline: str | None = None) -> str | None:
    """``text`` itself when ``target`` is None; else written to a path or file."""
    if target is None:
        return text
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8", newline=newline) as f:
            f.write(text)
        return None
    if not hasattr(target, "write"):
        raise ValueError(f"expected a path or a writable file, got {target!r}")
    target.write(text)
    return None
