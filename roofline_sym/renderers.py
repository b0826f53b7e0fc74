"""How each kind of LaTeX pieces is written: filled by the output layer.

A model or a break-even result offers its LaTeX as pieces
(``_latex_pieces_()``: expressions, numbers and words); the output layer
registers, when ``roofline_sym`` is imported, the function that writes each
kind.  So ``Linear.latex()`` and ``BreakEven.latex()`` work while the layers
below never import the printer.

>>> import roofline_sym as rs
>>> render(rs.linear("tensorwise")._latex_pieces_()).startswith("\\\\begin{aligned}")
True
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["register", "render"]

_WRITERS: dict[type, Callable[..., str]] = {}


def register(kind: type, write: Callable[..., str]) -> None:
    """Write pieces of type ``kind`` (or a subclass) with ``write(pieces, **options)``."""
    _WRITERS[kind] = write


def render(pieces: Any, **options: Any) -> str:
    """The LaTeX of ``pieces``, by the writer registered for its type."""
    for kind in type(pieces).__mro__:
        if kind in _WRITERS:
            return _WRITERS[kind](pieces, **options)
    raise LookupError(f"no LaTeX writer for {type(pieces).__name__}; the output layer "
                      "registers them when roofline_sym is imported")
