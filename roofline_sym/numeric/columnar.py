"""The base of the column tables read from data files: rows held as columns.

A table is a frozen dataclass; its columns are the fields that hold a numpy
array (one value per row, all of one length), ``lines`` (where present) the
file line of each row (``()``: none), and any other field (the file it came
from) describes the whole table.  ``Columns`` gives it ``len()``, a column
by name (``t["gpu"]``, the same array as ``t.gpu``) and ``select``: the rows
where a boolean mask holds, or the rows at some indices, as a table of the
same kind.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, eq=False)
... class Runs(Columns):
...     gpu: np.ndarray
...     seconds: np.ndarray
...     lines: tuple[int, ...] = ()
>>> t = Runs(np.array(["h100", "b200", "h100"]), np.array([2.0, 1.0, 3.0]), lines=(2, 3, 5))
>>> len(t), t.column_names()
(3, ('gpu', 'seconds'))
>>> fast = t.select(t["seconds"] < 2.5)
>>> fast.gpu.tolist(), fast.lines
(['h100', 'b200'], (2, 3))
>>> t.select([2]).seconds.tolist()
[3.0]
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

from ..errors import SelectionError
from ..validate import unknown_name

__all__ = ["Columns", "row_indices"]

_Table = TypeVar("_Table", bound="Columns")


def row_indices(rows: Any, count: int) -> np.ndarray:
    """The indices of the rows ``rows`` picks out of ``count``: a boolean mask
    of ``count`` values, or integer indices (negative ones count from the end).

    >>> row_indices(np.array([True, False, True]), 3).tolist()
    [0, 2]
    >>> row_indices([2, -3], 3).tolist()
    [2, 0]
    >>> row_indices([True, False], 3)
    Traceback (most recent call last):
    ...
    roofline_sym.errors.SelectionError: a mask of 2 values for 3 rows
    """
    picked = np.asarray(rows)
    if picked.ndim != 1 and picked.size:
        raise SelectionError(f"rows are picked by a 1-d mask or indices, not a {picked.ndim}-d array")
    if picked.dtype == bool:
        if len(picked) != count:
            raise SelectionError(f"a mask of {len(picked)} values for {count} rows")
        return np.flatnonzero(picked)
    if not picked.size:  # [] picks no row, whatever its dtype
        return np.zeros(0, dtype=np.intp)
    if not np.issubdtype(picked.dtype, np.integer):
        raise SelectionError(f"rows are picked by a boolean mask or integer indices, not "
                             f"{picked.dtype} values")
    picks: np.ndarray = np.arange(count)[picked]  # an IndexError names one out of range
    return picks


class Columns:
    """Rows held as columns in a frozen dataclass (see the module's docstring)."""

    def column_names(self) -> tuple[str, ...]:
        """The fields that are columns: those holding a numpy array."""
        return tuple(f.name for f in dataclasses.fields(self)  # type: ignore[arg-type]
                     if isinstance(getattr(self, f.name), np.ndarray))

    def __len__(self) -> int:
        names = self.column_names()
        return len(getattr(self, names[0])) if names else 0

    def __getitem__(self, name: str) -> np.ndarray:
        names = self.column_names()
        if not isinstance(name, str) or name not in names:
            raise unknown_name("column", name, names)
        column: np.ndarray = getattr(self, name)
        return column

    def select(self: _Table, rows: Any) -> _Table:
        """The rows where ``rows`` (a boolean mask, or indices) picks, in its order;
        the fields that describe the whole table are kept."""
        idx = row_indices(rows, len(self))
        changes: dict[str, Any] = {name: getattr(self, name)[idx] for name in self.column_names()}
        lines = getattr(self, "lines", ())
        if lines:
            changes["lines"] = tuple(lines[i] for i in idx)
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]
