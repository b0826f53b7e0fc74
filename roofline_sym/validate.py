"""Checks on everything a user or a file supplies: one place, errors that name it.

Text is parsed, never evaluated.  Numbers go through ``float()`` or
``Fraction()`` (``parse_number``), so ``"2**10"`` and ``"__import__('os')"``
are refused, not run; formula text goes through a whitelist of symbols,
numbers and operators (``formula``) and never reaches ``eval`` or
``sympify``.  Arrays must hold real numbers (no bools, strings, objects or
masked arrays).  Shape dimensions stop at ``SHAPE_MAX``; one request stops at
``MAX_ELEMENTS`` values and a table at ``MAX_ROWS`` rows.  Hardware numbers
lie in the ranges of ``RANGES`` (data: a field's kind -> its range).

A wrong type is an ``InputTypeError`` (a ``TypeError``); a bad value an
``InputError``; a name not found an ``UnknownNameError`` that suggests close
matches (all ``RooflineError``, see ``errors``).  Values in messages are shown short, with
control characters escaped (``show``).

>>> parse_number("8192", "--at K", limit=SHAPE_MAX)
8192.0
>>> parse_number("2**10", "--at K")
Traceback (most recent call last):
roofline_sym.errors.InputError: --at K: '2**10' is not a number
>>> parse_number("9007199254740993", "M", limit=SHAPE_MAX)
Traceback (most recent call last):
roofline_sym.errors.InputError: M: '9007199254740993' is beyond 2**53; expected a positive finite number up to 2**53
>>> positive_array([1024, 4096], "M").tolist()
[1024.0, 4096.0]
>>> formula("2*M*K*N / (P_fp8*eta_fp8)")
2*K*M*N/(P_fp8*eta_fp8)
>>> check_range(1e-300, "eta_fp8", symbol_kind("eta_fp8"))
Traceback (most recent call last):
roofline_sym.errors.InputError: eta_fp8 = 1e-300 is outside (0.01, 1] (an efficiency fraction)
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
import os
import re
import reprlib
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import sympy

from . import symbols as S
from .errors import InputError, InputTypeError, UnknownNameError

__all__ = [
    "SHAPE_MAX", "MAX_ELEMENTS", "MAX_ROWS", "InputTypeError", "Range", "RANGES",
    "FIELD_KINDS", "field_kind", "symbol_kind", "check_range", "hardware_array", "plausible",
    "show", "escape", "label", "has_control", "text", "choice", "unknown_name", "items", "count",
    "parse_number", "is_masked", "positive_array", "positive_number", "first_fraction",
    "broadcast_shape",
    "check_size",
    "formula", "expression",
    "path",
]

SHAPE_MAX = 2 ** 53  # beyond it float64 stops counting elements exactly (and 2MKN overflows)
# one request: the values evaluated at once (each output array is 8 bytes a value)
MAX_ELEMENTS = 2 ** 26
# one table held whole with its text columns (a sweep's result, a measurement
# file); shape sets (five numbers a row) take up to MAX_ELEMENTS rows
MAX_ROWS = 2 ** 22


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


def _type(value: Any) -> str:
    return type(value).__name__


# -- names -------------------------------------------------------------------------
def text(value: Any, name: str, *, empty: bool = False) -> str:
    """A string without control characters (a name, an alias, a label)."""
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be a string, not {_type(value)} {show(value)}")
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
                             f"not {_type(value)} {show(value)}")
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
                             f"{_type(value)} {show(value)}")
    out = []
    for item in value:
        if not isinstance(item, kinds):
            names = [k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,))]
            raise InputTypeError(f"{what}: {show(item)} is a {_type(item)}; expected "
                                 f"{' or '.join(names)}")
        out.append(item)
        if len(out) > limit:
            raise InputError(f"{what}: more than {limit} items")
    return out


def count(value: Any, name: str, *, minimum: int = 0, maximum: int = MAX_ELEMENTS) -> int:
    """A whole number in ``[minimum, maximum]`` (an int, or a float that is whole)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise InputTypeError(f"{name} must be an integer, not {_type(value)} {show(value)}")
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


# -- ranges of hardware numbers --------------------------------------------------------
@dataclass(frozen=True)
class Range:
    """A plausible range: ``low..high`` in ``unit``; ``low_open`` excludes ``low``;
    ``zero``: 0 is plausible too (meaning "none"), values between 0 and ``low``
    are not."""

    low: float
    high: float
    unit: str
    meaning: str
    low_open: bool = False
    zero: bool = False

    def __contains__(self, value: Any) -> bool:
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            return False
        if not math.isfinite(v):
            return False
        if self.zero and v == 0:
            return True
        return (v > self.low if self.low_open else v >= self.low) and v <= self.high

    def __str__(self) -> str:
        lo = "(" if self.low_open else "["
        unit = f" {self.unit}" if self.unit else ""
        return f"{'0 or ' if self.zero else ''}{lo}{self.low:g}, {self.high:g}]{unit}"


# A field's kind -> its plausible range.  New fields of these kinds plug in by name
# (``field_kind``): an efficiency fraction, a FLOP rate, a byte rate, seconds, bytes,
# a FLOP count.  A value outside is a typo or a unit error (torchao 0.18 shipped an
# RTX 5090 bandwidth of 1.792e15 B/s).
RANGES: dict[str, Range] = {
    "fraction": Range(0.01, 1.0, "", "an efficiency fraction", low_open=True),
    "flop_rate": Range(1e12, 1e17, "FLOP/s", "a dense peak"),
    "byte_rate": Range(1e11, 5e13, "B/s", "a memory bandwidth"),
    "seconds": Range(1e-7, 1e-3, "s", "a launch floor"),
    "bytes": Range(1e6, 1e13, "B", "a memory size"),
    "flops": Range(1.0, 1e18, "FLOP", "a FLOP count"),
    # the size-dependent efficiency model: a GEMM's or kernel's fixed time (0: none),
    # a scaled or grouped GEMM's rate factor
    "fixed_time": Range(1e-7, 1e-3, "s", "a fixed time", zero=True),
    "rate_factor": Range(0.05, 1.5, "", "a rate factor"),
    # measured times of one kernel or GEMM, in a measurement file
    "time": Range(1e-8, 1e4, "s", "a measured time"),
    # a whole step's numbers: a link's bandwidth per GPU, a step's fixed time (0: none)
    "link_rate": Range(1e8, 1e13, "B/s", "a link bandwidth"),
    "step_time": Range(1e-6, 10.0, "s", "a step's fixed time", zero=True),
}
# Hardware fields (as ``Hardware`` names them, a table's entries included) -> kind
FIELD_KINDS = {
    "peak_flops": "flop_rate",
    "gemm_efficiency": "fraction",
    "mem_bw": "byte_rate",
    "mem_efficiency": "fraction",
    "launch_overhead": "seconds",
    "memory_bytes": "bytes",
    "l2_bytes": "bytes",
    "gemm_fixed_s": "fixed_time",
    "kernel_fixed_s": "fixed_time",
    "kernel_efficiency": "fraction",
    "scaling_efficiency": "rate_factor",
    "grouped_efficiency": "rate_factor",
    "accumulation_efficiency": "rate_factor",
    "best_shape_efficiency": "fraction",
}
# a field not in FIELD_KINDS: its kind from its name (first match wins)
_KIND_PATTERNS = (
    (re.compile(r"(^|_)(eta|efficiency|fraction)($|_)"), "fraction"),
    (re.compile(r"flops_per_s$|^peak"), "flop_rate"),
    (re.compile(r"bytes_per_s$|(^|_)bw$"), "byte_rate"),
    (re.compile(r"bytes$"), "bytes"),
    (re.compile(r"flops$"), "flops"),
    (re.compile(r"(_s|overhead|latency|launch)$"), "seconds"),
)


def field_kind(field: str) -> str | None:
    """The kind of a hardware field (``peak_flops.fp8``, ``l2_bytes``, a new
    ``small_gemm_efficiency``), or None where the name says nothing.

    >>> field_kind("peak_flops.fp8"), field_kind("cast_efficiency"), field_kind("hbm_bytes")
    ('flop_rate', 'fraction', 'bytes')
    """
    head = field.partition(".")[0]
    if head in FIELD_KINDS:
        return FIELD_KINDS[head]
    for pattern, kind in _KIND_PATTERNS:
        if pattern.search(head):
            return kind
    return None


def symbol_kind(name: str) -> str | None:
    """The kind of a hardware symbol by name (``P_fp8``, ``eta_mem``, ``BW``...)."""
    for prefix, kind in (("P_", "flop_rate"), ("eta_", "fraction"), ("t0_", "fixed_time"),
                         ("kappa_", "rate_factor"), ("BW_", "link_rate"), ("phi_", "fraction")):
        if name.startswith(prefix):
            return kind
    return {"BW": "byte_rate", "t_launch": "seconds", "t_step": "step_time"}.get(name)


def plausible(name: str) -> float:
    """A value inside the range of the hardware symbol ``name`` (1.0 if it has
    none): a stand-in for checking names before the values are known.

    >>> plausible("BW") in RANGES["byte_rate"], plausible("eta_fp8")
    (True, 1.0)
    """
    kind = symbol_kind(name)
    return RANGES[kind].high if kind is not None else 1.0


def _number_text(value: Any) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError, OverflowError):
        return show(value)


def range_problem(value: Any, kind: str | None) -> str | None:
    """Why ``value`` is not plausible for ``kind`` (``None``: only finite and
    positive), or None."""
    if kind is None:
        try:
            ok = math.isfinite(float(value)) and float(value) > 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        return None if ok else f"{_number_text(value)} is not a positive finite number"
    r = RANGES[kind]
    if value in r:
        return None
    unit = f" {r.unit}" if r.unit else ""
    return f"{_number_text(value)}{unit} is outside {r} ({r.meaning})"


def check_range(value: Any, name: str, kind: str | None) -> None:
    """A ValueError naming ``name``, the value and the range unless ``value`` fits."""
    problem = range_problem(value, kind)
    if problem:
        raise InputError(f"{name} = {problem}")


def hardware_array(value: Any, name: str) -> np.ndarray:
    """A hardware value given by symbol name (``evaluate(BW=...)``): numbers or an
    array, each within the symbol's range."""
    kind = symbol_kind(name)
    zero = kind is not None and RANGES[kind].zero
    arr = positive_array(value, name, allow_zero=zero)
    if kind is not None:
        r = RANGES[kind]
        low = (arr <= r.low) if r.low_open else (arr < r.low)
        bad = (low & ~((arr == 0) if zero else False)) | (arr > r.high)
        if bad.any():
            check_range(arr.reshape(-1)[int(np.argmax(bad.reshape(-1)))], name, kind)
    return arr


# -- numbers -------------------------------------------------------------------------
def _bound(limit: float) -> str:
    return "2**53" if limit == SHAPE_MAX else f"{limit:g}"


def parse_number(text: str, what: str, *, positive: bool = True, integer: bool = False,
                 limit: float | None = None, kind: str | None = None) -> float:
    """``text`` as a finite float: > 0 (``positive``) or >= 0, whole if ``integer``,
    at most ``limit`` (checked on the exact decimal, before any rounding), within
    ``RANGES[kind]`` if given.  Otherwise ``ValueError("<what>: '<text>' ...")``."""
    if not isinstance(text, str):
        raise InputTypeError(f"{what}: expected text, not {_type(text)} {show(text)}")
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
    if kind is not None and not (value == 0 and not positive):
        problem = range_problem(value, kind)
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
                             f"{_type(value)} {show(value)}")
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
                             f"{_type(value)} {show(value)}")
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


# -- formulas ----------------------------------------------------------------------
MAX_FORMULA_CHARS = 2000
_MAX_NODES = 400
_MAX_POWER = 64
_MAX_BITS = 4000  # about 1200 decimal digits


def _bits(r: sympy.Rational) -> int:
    return max(abs(int(r.p)).bit_length(), int(r.q).bit_length())

_FUNCTIONS = {"Max": sympy.Max, "Min": sympy.Min, "ceiling": sympy.ceiling,
              "ceil": sympy.ceiling, "floor": sympy.floor}
_SHAPE_NAMES = {"M": S.M, "K": S.K, "N": S.N, "x": S.x}
_BINARY: dict[type[ast.operator], Callable[[sympy.Expr, sympy.Expr], sympy.Expr]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


def _known_names() -> list[str]:
    return [*_SHAPE_NAMES, "BW", "eta_mem", "t_launch",
            *(f"{k}_{d}" for k in ("P", "eta") for d in ("bf16", "fp16", "fp8", "fp4"))]


def _symbol(name: str, what: str) -> sympy.Symbol:
    if name in _SHAPE_NAMES:
        return _SHAPE_NAMES[name]
    try:
        return S.hardware_symbol(name)
    except ValueError:
        raise unknown_name(f"name in {what}", name, _known_names() + list(_FUNCTIONS)) \
            from None


def formula(source: str, what: str = "formula") -> sympy.Expr:
    """Formula text as a SymPy expression, parsed with a whitelist, never evaluated:
    numbers, the shape symbols ``M K N x``, hardware symbols (``P_fp8``,
    ``eta_mem``, ``BW``, ``t_launch``...), ``+ - * / **`` (integer or
    rational powers up to 64), parentheses and ``Max Min floor ceiling``.

    >>> formula("Max(t_launch, 2*M*K/(BW*eta_mem))")
    Max(t_launch, 2*K*M/(BW*eta_mem))
    >>> formula("__import__('os').system('true')")
    Traceback (most recent call last):
    roofline_sym.errors.InputError: formula: a call of __import__('os').system(...) is not allowed (only ...)
    """
    if len(source) > MAX_FORMULA_CHARS:
        raise InputError(f"{what}: text of {len(source)} characters; at most "
                         f"{MAX_FORMULA_CHARS}")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise InputError(f"{what}: {show(source)} is not a formula (numbers, M, K, N, x, "
                         "hardware symbols, + - * / **, Max, Min, floor, ceiling)") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > _MAX_NODES:
        raise InputError(f"{what}: {nodes} syntax nodes; at most {_MAX_NODES}")
    try:
        expr = _build(tree.body, what)
    except RecursionError:
        raise InputError(f"{what}: nested too deeply") from None
    if any(_bits(a) > _MAX_BITS for a in expr.atoms(sympy.Rational)):
        raise InputError(f"{what}: a number beyond {_MAX_BITS} bits")
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise InputError(f"{what}: {show(source)} is not finite (a division by zero?)")
    return expr


def _build(node: ast.AST, what: str) -> sympy.Expr:
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InputError(f"{what}: {show(v)} is not allowed (numbers only)")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise InputError(f"{what}: {show(v)} is not a finite number")
            return sympy.Rational(repr(v))
        return sympy.Integer(v)
    if isinstance(node, ast.Name):
        return _symbol(node.id, what)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _build(node.operand, what)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_build(node.left, what), _build(node.right, what))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = _build(node.left, what), _build(node.right, what)
        if not (exp.is_Rational and abs(exp) <= _MAX_POWER):
            raise InputError(f"{what}: powers must be numbers up to {_MAX_POWER} in size, "
                             f"not {show(str(exp))}")
        if base.is_Rational and _bits(base) * abs(exp) > _MAX_BITS:
            raise InputError(f"{what}: a number beyond {_MAX_BITS} bits")
        return base ** exp
    if isinstance(node, ast.Call):
        func = node.func.id if isinstance(node.func, ast.Name) else None
        if func not in _FUNCTIONS:
            label = escape(ast.unparse(node.func))[:40]
            raise InputError(f"{what}: a call of {label}(...) is not allowed "
                             f"(only {', '.join(_FUNCTIONS)})")
        if node.keywords or not node.args or (func in ("floor", "ceiling", "ceil")
                                              and len(node.args) != 1):
            raise InputError(f"{what}: {func} takes {'one' if 'l' in func else 'some'} "
                             "positional argument(s)")
        return _FUNCTIONS[func](*(_build(a, what) for a in node.args))
    raise InputError(f"{what}: {show(ast.unparse(node))} is not allowed in a formula "
                     "(numbers, symbols, + - * / **, Max, Min, floor, ceiling)")


def expression(value: Any, name: str = "expression") -> sympy.Basic:
    """A SymPy object, a real number, or formula text (``formula``) as SymPy;
    anything else (containers, arrays, None) is an ``InputTypeError``."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str):  # also numpy's str_
        return formula(str(value), name)
    if isinstance(value, (bool, np.bool_)):
        raise InputTypeError(f"{name} must be a SymPy expression, a number or formula text, "
                             f"not {show(value)}")
    if isinstance(value, (numbers.Integral, np.integer)):
        return sympy.Integer(int(value))
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, (float, np.floating, Decimal)):
        try:
            finite = math.isfinite(float(value))
        except (OverflowError, InvalidOperation):
            finite = False
        if not finite:
            raise InputError(f"{name} must be finite, got {show(value)}")
        return sympy.Float(float(value))
    raise InputTypeError(f"{name} must be a SymPy expression, a number or formula text, "
                         f"not {_type(value)} {show(value)}")


# -- files -------------------------------------------------------------------------
def path(value: Any, what: str = "path") -> str:
    """A file path (``str`` or ``os.PathLike``) as ``str``; anything else is an
    ``InputTypeError`` naming ``what``."""
    if isinstance(value, str) or (hasattr(value, "__fspath__") and not isinstance(value, bytes)):
        text_path = os.fspath(value)
        if isinstance(text_path, str) and "\x00" not in text_path:
            return text_path
    raise InputTypeError(f"{what} must be a file path (str or os.PathLike), not "
                         f"{_type(value)} {show(value)}")


