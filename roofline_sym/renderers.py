"""How each kind of LaTeX pieces is written: filled by the output layer.

A model or a break-even result offers its LaTeX as pieces
(``_latex_pieces_()``: expressions, numbers and words); the output layer
registers, when ``roofline_sym`` is imported, the function that writes each
kind.  So ``Linear.latex()`` and ``BreakEven.latex()`` work while the layers
below never import the printer.  Writers of complete blocks of a given width
(``render(pieces, width=...)``) live in a module the output layer names with
``defer``: it is imported the first time such a block is asked for, so
``import roofline_sym`` does not load the layout code.

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
        raise LookupError(f"no LaTeX writer for {type(pieces).__name__}; the output layer "
                          "registers them when roofline_sym is imported")
    if table is _WRITERS:
        options.pop("width", None)
    return write(pieces, **options)
