"""Names a user or a file gives: text, one of a list of choices, a file path;
a name not found suggests close matches.

>>> choice("rowwise", ("tensorwise", "rowwise"), "recipe")
'rowwise'
"""

from __future__ import annotations

import difflib
import os
from typing import Any, Iterable, Mapping, Sequence

from ..errors import InputError, InputTypeError, UnknownNameError
from .escaping import escape, has_control, show, type_name

__all__ = ["text", "close_matches", "unknown_name", "choice", "cell_choice", "items", "path"]


# -- names -------------------------------------------------------------------------
def text(value: Any, name: str, *, empty: bool = False) -> str:
    """A string without control characters (a name, an alias, a label)."""
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be a string, not {type_name(value)} {show(value)}")
    if not empty and not value.strip():
        raise InputError(f"{name} must be a non-empty string")
    if has_control(value):
        raise InputError(f"{name} {show(value)} contains control characters")
    return value


def close_matches(name: str, known: Iterable[str], n: int = 3, cutoff: float = 0.6
                  ) -> list[str]:
    """The names in ``known`` spelled closest to ``name``, ignoring case.

    >>> close_matches("RowWse", ["rowwise", "tensorwise"])
    ['rowwise']
    """
    folded = {k.casefold(): k for k in known}
    return [folded[c] for c in difflib.get_close_matches(name.casefold(), list(folded), n=n,
                                                         cutoff=cutoff)]


def unknown_name(what: str, name: Any, known: Iterable[str], *,
                 error: type[Exception] = UnknownNameError, extra: str = "",
                 where: str = "", suggestions: Iterable[str] | None = None) -> Exception:
    """The error for a name not found: close matches first, then every valid name.

    The one format of every "did you mean" message.  ``suggestions``: the
    caller's own candidates (a synonym, names starting with the query), in
    place of the close spellings found here.

    >>> str(unknown_name("recipe", "tensorwse", ["tensorwise", "rowwise"]))
    "unknown recipe 'tensorwse' (did you mean 'tensorwise'?); valid: tensorwise, rowwise"
    >>> str(unknown_name("column", "time", ["lowp_time"], suggestions=["lowp_time"]))
    "unknown column 'time' (did you mean 'lowp_time'?); valid: lowp_time"
    """
    known = list(known)
    if suggestions is not None:
        close = list(dict.fromkeys(suggestions))
    elif isinstance(name, str):
        close = close_matches(name, known)
    else:
        close = []
    hint = f" (did you mean {', '.join(escape(repr(c)) for c in close)}?)" if close else ""
    return error(f"{where}unknown {what} {show(name)}{hint}{extra}; "
                 f"valid: {escape(', '.join(known))}")


def choice(value: Any, valid: Sequence[str], what: str) -> str:
    """``value`` if it is one of the strings ``valid``; a TypeError for a
    non-string, a ValueError with close matches for an unknown one."""
    if not isinstance(value, str):
        raise InputTypeError(f"{what} must be a string (one of {', '.join(valid)}), "
                             f"not {type_name(value)} {show(value)}")
    if value not in valid:
        raise unknown_name(what, value, valid)
    return value


def cell_choice(value: Any, valid: Sequence[str], what: str, where: str = "",
                blank: str = "") -> str:
    """A table cell naming one of ``valid``, spaces stripped; a blank cell
    (or None) is ``blank``.  Errors come after ``where`` (the place in a file):
    close matches for an unknown name, a TypeError for a non-string.

    >>> cell_choice(" b ", ("a", "b"), "letter"), cell_choice("", ("a", "b"), "letter", blank="a")
    ('b', 'a')
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return blank
    if isinstance(value, str) and value.strip() not in valid:
        raise unknown_name(what, value.strip(), valid, where=where)
    return choice(value.strip() if isinstance(value, str) else value, valid, where + what)


def items(value: Any, what: str, kinds: type | tuple[type, ...],
          limit: int = 10_000) -> list[Any]:
    """One item of ``kinds``, or an iterable of them (at most ``limit``), as a list;
    checked item by item, so a wrong one stops it at once."""
    if isinstance(value, kinds):
        return [value]
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise InputTypeError(f"{what} must be one item or a list of them, not "
                             f"{type_name(value)} {show(value)}")
    out = []
    for item in value:
        if not isinstance(item, kinds):
            names = [k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,))]
            raise InputTypeError(f"{what}: {show(item)} is a {type_name(item)}; expected "
                                 f"{' or '.join(names)}")
        out.append(item)
        if len(out) > limit:
            raise InputError(f"{what}: more than {limit} items")
    return out


# -- files -------------------------------------------------------------------------
def path(value: Any, what: str = "path") -> str:
    """A file path (``str`` or ``os.PathLike``) as ``str``; anything else is an
    ``InputTypeError`` naming ``what``."""
    if isinstance(value, str) or (hasattr(value, "__fspath__") and not isinstance(value, bytes)):
        text_path = os.fspath(value)
        if isinstance(text_path, str) and "\x00" not in text_path:
            return text_path
    raise InputTypeError(f"{what} must be a file path (str or os.PathLike), not "
                         f"{type_name(value)} {show(value)}")
