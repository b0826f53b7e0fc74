"""User numbers: parsed, never evaluated; positive, finite, within limits.

Text goes through ``float()`` only, never ``eval`` or ``sympify``, so
``"2**10"`` and ``"__import__('os')"`` are refused, not run.  Arrays must
hold ints or floats: no bools, strings or objects, which numpy would
otherwise read as numbers.  Shape dimensions stop at ``SHAPE_MAX``.
Errors are ValueErrors that name the input.

>>> parse_number("8192", "--at K", limit=SHAPE_MAX)
8192.0
>>> parse_number("2**10", "--at K")
Traceback (most recent call last):
ValueError: --at K: '2**10' is not a number
>>> positive_array([1024, 4096], "M").tolist()
[1024.0, 4096.0]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["SHAPE_MAX", "parse_number", "positive_array"]

SHAPE_MAX = 2 ** 53  # beyond it float64 stops counting elements exactly (and 2MKN overflows)


def _bound(limit: float) -> str:
    return "2**53" if limit == SHAPE_MAX else f"{limit:g}"


def parse_number(text: str, what: str, *, positive: bool = True, integer: bool = False,
                 limit: float | None = None) -> float:
    """``text`` as a finite float: > 0 (``positive``) or >= 0, whole if ``integer``,
    at most ``limit``.  Otherwise ``ValueError("<what>: '<text>' ...")``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not a number") from None
    if not (math.isfinite(value) and (value > 0 if positive else value >= 0)
            and (limit is None or value <= limit)):
        bound = "" if limit is None else f", up to {_bound(limit)}"
        raise ValueError(f"{what}: {text!r} must be "
                         f"{'positive' if positive else 'non-negative'} finite{bound}")
    if integer and not value.is_integer():
        raise ValueError(f"{what}: {text!r} is not an integer")
    return value


def positive_array(value: Any, name: str, limit: float = math.inf,
                   allow_zero: bool = False) -> np.ndarray:
    """A number or array of ints / floats as float64 (no copy if already so), every
    element positive (or zero, with ``allow_zero``), finite and at most ``limit``;
    empty arrays pass."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = np.asarray([None])
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a number or array of numbers, not {value!r}")
    arr = raw.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr) & ((arr >= 0) if allow_zero else (arr > 0))):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'} "
                         f"and finite; got {value!r}")
    if np.any(arr > limit):
        raise ValueError(f"{name} must be at most {_bound(limit)}; got {value!r}")
    return arr
