"""Progress on long work: a bar on a terminal, nothing anywhere else.

Cross-validation, refits, benchmarks and large sweeps run for seconds to
minutes; while standard error is a terminal they draw a bar there (tqdm,
imported on first use), which appears only once the work has run for
``DELAY_S`` and is erased when it ends.  Where standard error is a pipe, a
file, a notebook or a test's capture, nothing at all is written.

>>> list(with_progress(range(3), desc="fits"))  # not a terminal here: nothing drawn
[0, 1, 2]
>>> with Progress(10, "rows") as bar:
...     bar(4, 10)  # the callback form a sweep takes: (done, total)
...     bar.shown
False
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Iterator, Sized, TypeVar

__all__ = ["DELAY_S", "Progress", "on_terminal", "with_progress"]

# seconds of work before a bar appears: quick work draws nothing even on a terminal
DELAY_S = 0.5

T = TypeVar("T")


def _stderr() -> Any:
    # the command line escapes control characters on stderr; a bar's own
    # carriage returns and cursor moves go to the stream underneath
    stream = sys.stderr
    return getattr(stream, "unescaped", stream)


def on_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (standard error by default) is a terminal.

    >>> import io
    >>> on_terminal(io.StringIO())
    False
    """
    stream = _stderr() if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """A bar of ``total`` steps named ``desc`` on standard error while it is a
    terminal and tqdm is installed; otherwise an object whose methods do
    nothing.  A context manager: the bar is erased when the block ends.
    ``update(n)`` advances it by ``n``; calling it with ``(done, total)`` sets
    it, the form ``sweep(progress=...)`` takes."""

    def __init__(self, total: int | None, desc: str, unit: str = "it") -> None:
        self._bar: Any = None
        stream = _stderr()
        if not on_terminal(stream):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # installed without its dependencies: no bar
            return
        self._bar = tqdm(total=total, desc=desc, unit=unit, file=stream, delay=DELAY_S,
                         leave=False, dynamic_ncols=True)

    @property
    def shown(self) -> bool:
        """Whether a bar is drawn (standard error is a terminal)."""
        return self._bar is not None

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def __call__(self, done: int, total: int) -> None:
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            if self._bar.total != total:  # a new total is drawn at once
                self._bar.total = total
                self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def with_progress(items: Iterable[T], desc: str, total: int | None = None,
             unit: str = "it") -> Iterator[T]:
    """``items``, one by one, with a ``Progress`` bar advanced after each
    (``total``: their number, by default ``len(items)`` where it has one)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with Progress(total, desc, unit) as bar:
        for item in items:
            yield item
            bar.update()
