"""How each kind of LaTeX pieces is written: filled by the output layer.

A model or a break-even result offers its LaTeX as pieces
(``_latex_pieces_()``: expressions, numbers and words); the output layer's
modules register the function that writes each kind.  The package names
those modules with ``defer`` (``roofline_sym/__init__.py``): each is imported
the first time a writer it registers is asked for, so ``Linear.latex()`` and
``BreakEven.latex()`` work while the layers below never import the printer,
and ``import roofline_sym`` loads neither the printer nor the layout code of
complete blocks of a given width (``render(pieces, width=...)``).

>>> import roofline_sym as rs
>>> render(rs.linear("tensorwise")._latex_pieces_()).startswith("\\\\begin{aligned}")
True
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ["register", "render", "defer"]

_WRITERS: dict[type, Callable[..., str]] = {}   # inline LaTeX
_BLOCKS: dict[type, Callable[..., str]] = {}    # complete blocks of a width
_DEFERRED: list[str] = []                        # modules that register more writers


def register(kind: type, write: Callable[..., str], *, block: bool = False) -> None:
    """Write pieces of type ``kind`` (or a subclass) with ``write(pieces, **options)``;
    ``block``: the writer of complete blocks, called when ``width`` is given."""
    (_BLOCKS if block else _WRITERS)[kind] = write


def defer(module: str) -> None:
    """Import ``module`` (which registers writers) when a writer is first missing."""
    _DEFERRED.append(module)


def _find(table: dict[type, Callable[..., str]], pieces: Any) -> Callable[..., str] | None:
    return next((table[k] for k in type(pieces).__mro__ if k in table), None)


def render(pieces: Any, **options: Any) -> str:
    """The LaTeX of ``pieces``, by the writer registered for its type: a
    complete block when ``options`` has a ``width``, else inline LaTeX."""
    table = _BLOCKS if options.get("width") is not None else _WRITERS
    write = _find(table, pieces)
    while write is None and _DEFERRED:
        importlib.import_module(_DEFERRED.pop(0))
        write = _find(table, pieces)
    if write is None:
        raise AssertionError(f"no LaTeX writer for {type(pieces).__name__}; the output layer "
                             "registers them (roofline_sym/__init__.py names its modules)")
    if table is _WRITERS:
        options.pop("width", None)
    return write(pieces, **options)
