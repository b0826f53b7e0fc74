"""Numbers and arrays a user or a file gives: parsed, never evaluated; real,
positive, finite, whole where a shape needs it; within the size limits.

>>> parse_number("8192", "--at K", limit=SHAPE_MAX)
8192.0
"""

from __future__ import annotations

import math
import numbers
import sys
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import InputError, InputTypeError
from .escaping import show, type_name

__all__ = ["SHAPE_MAX", "MAX_ELEMENTS", "MAX_ROWS", "count", "parse_number", "is_masked",
           "positive_array", "positive_number", "first_fraction", "check_size",
           "broadcast_shape"]


SHAPE_MAX = 2 ** 53  # beyond it float64 stops counting elements exactly (and 2MKN overflows)
# one request: the values evaluated at once (each output array is 8 bytes a value)
MAX_ELEMENTS = 2 ** 26
# one table held whole with its text columns (a sweep's result, a measurement
# file); shape sets (five numbers a row) take up to MAX_ELEMENTS rows
MAX_ROWS = 2 ** 22


def count(value: Any, name: str, *, minimum: int = 0, maximum: int = MAX_ELEMENTS) -> int:
    """A whole number in ``[minimum, maximum]`` (an int, or a float that is whole)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise InputTypeError(f"{name} must be an integer, not {type_name(value)} {show(value)}")
    try:
        whole = float(value).is_integer()
    except OverflowError:
        whole = True  # a huge int: caught by the bound below
    if not whole:
        raise InputError(f"{name} must be an integer, got {show(value)}")
    # typeshed's numbers.Real is vague on purpose: it declares no __ge__ (which
    # int <= value reaches at run time) and a __trunc__ that returns no int
    if not minimum <= value <= maximum:  # type: ignore[operator]
        raise InputError(f"{name} must be in {minimum}..{maximum}, got {show(value)}")
    return int(value)  # type: ignore[arg-type]


# -- numbers -------------------------------------------------------------------------
def _bound(limit: float) -> str:
    return "2**53" if limit == SHAPE_MAX else f"{limit:g}"


def parse_number(text: str, what: str, *, positive: bool = True, integer: bool = False,
                 limit: float | None = None,
                 check: Callable[[float], str | None] | None = None) -> float:
    """``text`` as a finite float: > 0 (``positive``) or >= 0, whole if ``integer``,
    at most ``limit`` (checked on the exact decimal, before any rounding), and
    passing ``check`` (a value -> what is wrong with it, or None; a plausible
    range, ``devices.ranges.range_problem``).  Otherwise
    ``InputError("<what>: '<text>' ...")``."""
    if not isinstance(text, str):
        raise InputTypeError(f"{what}: expected text, not {type_name(text)} {show(text)}")
    if len(text) > 100:
        raise InputError(f"{what}: {show(text)} is not a number")
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what}: {show(text)} is not a number") from None
    expected = (f"expected a {'positive' if positive else 'non-negative'} finite number"
                + ("" if limit is None else f" up to {_bound(limit)}"))
    mantissa = text.lower().partition("e")[0]
    if not math.isfinite(value):
        raise InputError(f"{what}: {show(text)} is not finite; {expected}")
    if value == 0 and any(ch.isdecimal() and int(ch) != 0 for ch in mantissa):
        # too small for a float (1e-400): no exact value either
        raise InputError(f"{what}: {show(text)} is too small to represent; {expected}")
    try:  # the decimal as written (its exponent is bounded now that the float is finite)
        exact = Fraction(text.strip().replace("_", ""))
    except (ValueError, ZeroDivisionError):
        exact = Fraction(value)
    if not (exact > 0 if positive else exact >= 0):
        raise InputError(f"{what}: {show(text)} is not {'positive' if positive else '>= 0'}; "
                         f"{expected}")
    if limit is not None and exact > limit:
        raise InputError(f"{what}: {show(text)} is beyond {_bound(limit)}; {expected}")
    if integer and exact.denominator != 1:
        raise InputError(f"{what}: {show(text)} is not an integer")
    if check is not None and not (value == 0 and not positive):
        problem = check(value)
        if problem:
            raise InputError(f"{what}: {show(text)}: {problem}")
    return value


def _real_objects(raw: np.ndarray) -> np.ndarray | None:
    """An object array of real numbers (Python ints beyond int64, Fractions,
    SymPy numbers) as float64, with ints kept exact for the limit check; else None."""
    flat = raw.reshape(-1)
    if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
               for v in flat):
        return None
    try:
        return np.array([float(v) for v in flat], dtype=np.float64).reshape(raw.shape)
    except (OverflowError, TypeError, ValueError):
        return np.full(raw.shape, np.inf)


def is_masked(value: Any) -> bool:
    """Whether ``value`` is a numpy masked array, without importing ``numpy.ma``
    (tens of milliseconds): a value cannot be one if nothing imported it.

    >>> is_masked(np.ma.masked_array([1.0], mask=[True])), is_masked(np.ones(1))
    (True, False)
    """
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(value, ma.MaskedArray)


def positive_array(value: Any, name: str, limit: float = math.inf, *,
                   integer: bool = False, allow_zero: bool = False) -> np.ndarray:
    """A number or array of real numbers as float64 (no copy if already so):
    every element positive (or zero, with ``allow_zero``), finite, at most
    ``limit`` (integers compared exactly), whole if ``integer``; empty arrays
    pass.  Masked arrays are refused (their mask would be lost)."""
    if is_masked(value):
        raise InputTypeError(f"{name}: masked arrays are not supported (the mask would be "
                             "lost); pass value.compressed() or value.filled(...)")
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise InputTypeError(f"{name} must be a number or an array of numbers, not "
                             f"{type_name(value)} {show(value)}")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raw = None
    if raw is not None and raw.size > MAX_ELEMENTS:
        raise InputError(f"{name} has {raw.size} values; one request takes at most "
                         f"{MAX_ELEMENTS} (split it, or sweep in chunks)")
    exact_ints = None
    if raw is not None and raw.dtype == object:
        exact_ints = raw
        raw = _real_objects(raw)
    if raw is None or raw.dtype.kind not in "iuf":
        raise InputTypeError(f"{name} must be a number or an array of numbers, not "
                             f"{type_name(value)} {show(value)}")
    if raw.dtype.kind in "iu":
        exact_ints = raw
    arr = raw.astype(np.float64, copy=False)
    flat = arr.reshape(-1)
    bad = ~(np.isfinite(flat) & ((flat >= 0) if allow_zero else (flat > 0)))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{name} must be {'non-negative' if allow_zero else 'positive'} and "
                         f"finite; got {_element(value, flat, i)}")
    if limit != math.inf:
        over = flat > limit
        if exact_ints is not None and not over.any():
            over = np.array([v > limit for v in exact_ints.reshape(-1).tolist()], dtype=bool) \
                if exact_ints.dtype == object else (exact_ints.reshape(-1) > limit)
        if over.any():
            i = int(np.argmax(over))
            raise InputError(f"{name} must be at most {_bound(limit)}; got "
                             f"{_element(value, flat, i, exact_ints)}")
    if integer:
        frac = first_fraction(flat)
        if frac is not None:
            raise InputError(f"{name} must be whole numbers (a layer's dimension); got "
                             f"{_element(value, flat, frac)}")
    return arr


def first_fraction(flat: np.ndarray, buf: np.ndarray | None = None,
                   block: int = 1 << 16) -> int | None:
    """The index of the first positive, finite element of the 1-D float array
    ``flat`` that is not a whole number; None if there is none (NaN,
    infinities and values <= 0 are left to the checks that name them).  A
    ``block`` at a time into ``buf`` (scratch of ``flat``'s dtype, at least one
    block; made if None): no array-sized temporaries.

    >>> first_fraction(np.array([1.0, np.nan, -0.5, 2.5])), first_fraction(np.array([2.0]))
    (3, None)
    """
    n = min(block, flat.size)
    if buf is None or buf.size < n or buf.dtype != flat.dtype:
        buf = np.empty(n, dtype=flat.dtype)
    for start in range(0, flat.size, block):
        part = flat[start:start + block]
        rest = buf[:part.size]
        # x - floor(x): 0 for whole numbers, NaN for NaN and infinities (not a
        # warning); its maximum, unlike a comparison, needs no array of booleans
        with np.errstate(invalid="ignore"):
            np.subtract(part, np.floor(part, out=rest), out=rest)
        if np.maximum.reduce(rest) == 0:
            continue
        fraction = (rest != 0) & np.isfinite(part) & (part > 0)
        if fraction.any():
            return start + int(np.argmax(fraction))
    return None


def positive_number(value: Any, name: str, limit: float = math.inf) -> float:
    """One positive finite real number (``positive_array`` of a scalar) as a float."""
    arr = positive_array(value, name, limit)
    if arr.ndim:
        raise InputTypeError(f"{name} must be one number, not {show(value)}")
    return float(arr)


def _element(value: Any, flat: np.ndarray, i: int, exact: np.ndarray | None = None) -> str:
    shown = exact.reshape(-1)[i] if exact is not None else flat[i]
    shown = shown.item() if isinstance(shown, np.generic) else shown
    if flat.size == 1 and np.ndim(value) == 0:
        return show(shown)
    return f"{show(shown)} (element {i} of {flat.size})"


def check_size(n: int, what: str, limit: int = MAX_ELEMENTS) -> None:
    """A ValueError when a request of ``n`` values (rows) exceeds ``limit``."""
    if n > limit:
        raise InputError(f"{what} has {n} values; at most {limit} are taken at once "
                         "(split the request)")


def broadcast_shape(arrays: Mapping[str, np.ndarray], limit: int = MAX_ELEMENTS
                    ) -> tuple[int, ...]:
    """The shape ``arrays`` broadcast to; an error naming them where they do not
    broadcast, or where the result exceeds ``limit`` values."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        given = ", ".join(f"{n} {a.shape}" for n, a in arrays.items() if a.ndim)
        raise InputError(f"the shapes of {given} do not broadcast together") from None
    check_size(math.prod(shape), "the broadcast of " + ", ".join(arrays), limit)
    return shape
