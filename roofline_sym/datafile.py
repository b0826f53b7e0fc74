"""Data files: one reader and one writer for delimited (CSV) and JSON files.

Every error names where the problem is, in one format (``where``)::

    <file>: line <n>, column <name>: <what is wrong>

``read_text`` opens a data file (a regular file, UTF-8, at most
``MAX_FILE_BYTES``); ``Delimited`` reads a CSV file row by row, each row with
its line in the file (``#`` comment lines kept aside, blank lines skipped,
the header checked); ``parse_json`` reads JSON with its duplicate keys and
its syntax errors located; ``CsvWriter`` writes a header, ``#`` comments and
rows.

>>> table = Delimited("# a note\\nM,K\\n\\n1,2\\n".splitlines(True), "shapes.csv")
>>> table.header, [(line, row) for line, row in table.records()], table.comments
(('M', 'K'), [(4, {'M': '1', 'K': '2'})], ['a note'])
>>> where("shapes.csv", 4, "K")
'shapes.csv: line 4, column K'
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import stat
from typing import Any, Iterable, Iterator, Sequence, TextIO

from .errors import DataFileError
from .validate import label, path

__all__ = ["MAX_FILE_BYTES", "data_file", "read_text", "nested_input", "where", "Delimited",
           "parse_json", "CsvWriter", "csv_cell"]

# a data file read whole: far beyond any hardware, shape or measurement file
MAX_FILE_BYTES = 256 * 2 ** 20


def where(source: str, line: int | None = None, column: str | None = None, *,
          item: int | None = None, key: str | None = None) -> str:
    """The place of a problem, the prefix of its message: ``file: line n,
    column name``; in JSON, ``item n`` (the n-th entry of a list, from 1: a
    parsed value has no line) and ``key name``.

    >>> where("run.csv", 3), where("shapes.json", item=2, key="M")
    ('run.csv: line 3', 'shapes.json: item 2, key M')
    """
    parts = [] if line is None else [f"line {line}"]
    parts += [] if item is None else [f"item {item}"]
    parts += [] if column is None else [f"column {label(column, 60)}"]
    parts += [] if key is None else [f"key {label(key, 60)}"]
    return f"{source}: {', '.join(parts)}" if parts else source


# -- opening a file -------------------------------------------------------------------
def data_file(value: Any, what: str) -> str:
    """The path of a data file to read: a regular file (not a device or a pipe
    that never ends) of at most ``MAX_FILE_BYTES``; errors name the file."""
    name = path(value, what)
    shown = label(name)
    try:
        info = os.stat(name)
    except OSError as exc:
        raise DataFileError(f"{shown}: cannot read {what} ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataFileError(f"{shown}: cannot read {what} (not a regular file)")
    if info.st_size > MAX_FILE_BYTES:
        raise DataFileError(f"{shown}: cannot read {what} ({info.st_size} bytes; at most "
                            f"{MAX_FILE_BYTES})")
    return name


def read_text(value: Any, what: str) -> tuple[str, str]:
    """``(path, text)`` of a UTF-8 data file (``data_file``; a byte-order mark
    reads like none)."""
    name = data_file(value, what)
    shown = label(name)
    try:
        with open(name, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DataFileError(f"{shown}: cannot read {what} ({exc.strerror})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise DataFileError(f"{shown}: cannot read {what} (more than {MAX_FILE_BYTES} bytes)")
    try:
        return name, raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{shown}: cannot read {what} (not UTF-8 text: {exc.reason} at "
                            f"byte {exc.start})") from None


@contextlib.contextmanager
def nested_input(origin: str, what: str = "file") -> Iterator[None]:
    """Turn a parser's ``RecursionError`` (deeply nested arrays or tables) into a
    ValueError naming the file."""
    try:
        yield
    except RecursionError:
        raise DataFileError(f"{origin}: the {what} is nested too deeply to read") from None


# -- delimited files ------------------------------------------------------------------
class Delimited:
    """A delimited (CSV) file read row by row from its lines (an open file, a
    list of lines): ``header`` (names stripped, none twice), then each row
    with the line it starts on.

    ``comments``: lines starting with ``#`` are kept in ``.comments`` (as
    they are read) rather than read as rows.  Blank rows are skipped.
    ``expected``: what the header should hold, for the error when there is
    none.  Errors: ``where`` and what is wrong.

    >>> rows = Delimited(["a,b\\n", "1,2,3\\n"], "t.csv")
    >>> list(rows)
    Traceback (most recent call last):
    roofline_sym.errors.DataFileError: t.csv: line 2: 3 fields, but the header has 2
    """

    def __init__(self, lines: Iterable[str], source: str, *, comments: bool = True,
                 expected: str = ""):
        self.source = source
        self.comments: list[str] = []
        # a comment line becomes an empty one, so the csv module still counts it
        self._reader = csv.reader(self._uncommented(lines) if comments else lines)
        first = self._next_row()
        if first is None:
            raise DataFileError(f"{source}: no header row{f' (expected {expected})' if expected else ''}")
        self.header = tuple(h.strip() for h in first)
        self.header_line = self.line
        seen: set[str] = set()
        for name in self.header:
            if name in seen:
                raise DataFileError(f"{where(source, self.line, name)}: the header names it twice")
            seen.add(name)

    def _uncommented(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            if line.lstrip().startswith("#"):
                self.comments.append(line.lstrip()[1:].strip())
                yield "\n"
            else:
                yield line

    @property
    def line(self) -> int:
        """The line the row last read ends on (its first, but for a quoted
        field across lines)."""
        return self._reader.line_num

    def _next_row(self) -> list[str] | None:
        """The next row that is not blank, or None at the end."""
        try:
            for row in self._reader:
                if any(cell.strip() for cell in row):
                    return row
        except csv.Error as exc:  # a NUL byte, a field beyond the csv module's limit
            raise DataFileError(f"{where(self.source, self.line)}: not valid CSV ({exc})") from None
        return None

    def raw(self) -> Iterator[list[str]]:
        """The rows as the csv module reads them (blank ones and rows of the
        wrong length included): for a reader that checks blocks of rows itself."""
        try:
            yield from self._reader
        except csv.Error as exc:
            raise DataFileError(f"{where(self.source, self.line)}: not valid CSV ({exc})") from None

    def __iter__(self) -> Iterator[list[str]]:
        """The rows (cells as written), each as long as the header."""
        while (row := self._next_row()) is not None:
            if len(row) != len(self.header):
                raise DataFileError(f"{where(self.source, self.line)}: {len(row)} fields, but "
                                    f"the header has {len(self.header)}")
            yield row

    def records(self) -> Iterator[tuple[int, dict[str, str]]]:
        """``(line, {column: cell stripped})`` for each row."""
        for row in self:
            yield self.line, {h: v.strip() for h, v in zip(self.header, row)}

    def require(self, columns: Sequence[str], note: str = "") -> None:
        """A ValueError naming the ``columns`` the header lacks (``note``: what a
        header holds, after the list)."""
        missing = [c for c in columns if c not in self.header]
        if missing:
            raise DataFileError(f"{where(self.source, self.header_line)}: missing column(s) "
                                f"{', '.join(map(repr, missing))}{note}")


# -- JSON -------------------------------------------------------------------------------
class _DuplicateKey(DataFileError):
    """A JSON object names a key twice (raised while parsing)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):  # json.loads would keep the last silently
        raise _DuplicateKey(next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i])))
    return out


def parse_json(text: str, source: str) -> Any:
    """JSON text as Python values; a syntax error names its line and column, a
    key given twice in an object is an error (not the last one silently).

    >>> parse_json('{"M": 1,\\n "M": 2}', "s.json")
    Traceback (most recent call last):
    roofline_sym.errors.DataFileError: s.json: key 'M' appears twice in an object
    >>> parse_json('[1,\\n 2,,]', "s.json")
    Traceback (most recent call last):
    roofline_sym.errors.DataFileError: s.json: line 2, column 4: not valid JSON (Expecting value)
    """
    try:
        with nested_input(source, "JSON"):
            return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{where(source, exc.lineno, str(exc.colno))}: not valid JSON "
                            f"({exc.msg})") from None
    except _DuplicateKey as exc:
        raise DataFileError(f"{source}: key {exc.args[0]!r} appears twice in an object") from None


# -- writing ------------------------------------------------------------------------------
def csv_cell(value: Any) -> str:
    """A value as ``csv.writer`` writes it (quoted where it must be; None empty).

    >>> print(csv_cell('x, y'), csv_cell(None), csv_cell(2.5))
    "x, y"  2.5
    """
    text = "" if value is None else str(value)
    if any(c in text for c in ',"\r\n'):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([text, ""])
        return buf.getvalue()[:-2]
    return text


class CsvWriter:
    """Writes ``# comments``, a header of ``columns`` and rows (mappings over
    the columns, a missing one empty) to an open text file; ``flush``: after
    every row (a run that dies half way keeps what it wrote).

    >>> buf = io.StringIO()
    >>> w = CsvWriter(buf, ["a", "b"], comments=["made by hand"])
    >>> w.write({"a": 1, "b": "x,y"})
    >>> print(buf.getvalue(), end="")
    # made by hand
    a,b
    1,"x,y"
    """

    def __init__(self, file: TextIO, columns: Sequence[str], comments: Iterable[str] = (),
                 *, flush: bool = False):
        self._file, self.columns, self._flush = file, tuple(columns), flush
        for line in comments:
            self.comment(line)
        self._writer = csv.writer(file, lineterminator="\n")
        self._writer.writerow(self.columns)

    def comment(self, text: str) -> None:
        """A ``#`` line for each line of ``text``."""
        for line in str(text).splitlines() or [""]:
            self._file.write(f"# {line}\n")
        if self._flush:
            self._file.flush()

    def write(self, row: Any) -> None:
        """One row: a mapping over the columns (a missing column is empty)."""
        self._writer.writerow(["" if row.get(c) is None else row.get(c) for c in self.columns])
        if self._flush:
            self._file.flush()
