r"""Values shown in messages: short, with control characters escaped.

>>> show("\x1b[31mred")
"'\\x1b[31mred'"
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

import numpy as np

__all__ = ["escape", "label", "has_control", "show", "type_name"]


# -- showing values ----------------------------------------------------------------
# C0 and C1 control characters but tab and newline, zero-width and bidirectional
# controls, the byte-order mark: what a terminal would act on or hide
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e"
                      "\u2060-\u2069\ufeff]")
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 80, 80, 40
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 6


def escape(text: str) -> str:
    r"""``text`` with control characters written as escapes (``\x1b``), tab and
    newline kept: safe to echo to a terminal.

    >>> escape("H100\x1b[31m")
    'H100\\x1b[31m'
    """
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def label(text: Any, limit: int = 160) -> str:
    """A name for a message (a file path, a source): control characters escaped,
    cut to ``limit`` characters."""
    name = escape(str(text))
    return name if len(name) <= limit else name[:limit - 3] + "..."


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character ``escape`` would escape."""
    return _CONTROL.search(text) is not None


def show(value: Any) -> str:
    """A short, safe rendering of a value for a message: ``repr`` cut to a few
    dozen characters and three levels of nesting, arrays by their values or
    their shape, control characters escaped.

    >>> show(np.array([1.0, -2.0])), show("x" * 200)[:12], show([[[[[1]]]]])
    ('[1.0, -2.0]', "'xxxxxxxxxxx", '[[[[...]]]]')
    """
    try:
        if isinstance(value, np.ndarray):
            if value.size <= 6 and value.dtype.kind in "biufcUS":
                return escape(_REPR.repr(value.tolist()))
            return f"an array of shape {value.shape} and dtype {value.dtype}"
        if isinstance(value, np.generic):
            value = value.item()
        return escape(_REPR.repr(value))
    except Exception:  # a hostile __repr__: the type says enough
        return f"<{type(value).__name__} object>"


def type_name(value: Any) -> str:
    return type(value).__name__
