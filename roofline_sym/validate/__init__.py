"""Checks on everything a user or a file supplies: one place, errors that name it.

Text is parsed, never evaluated.  Numbers go through ``float()`` or
``Fraction()`` (``numbers.parse_number``), so ``"2**10"`` and
``"__import__('os')"`` are refused, not run; formula text goes through a
whitelist of symbols, numbers and operators (``formulas.formula``) and never
reaches ``eval`` or ``sympify``.  Arrays must hold real numbers (no bools,
strings, objects or masked arrays).  Shape dimensions stop at ``SHAPE_MAX``;
one request stops at ``MAX_ELEMENTS`` values and a table at ``MAX_ROWS``
rows.  (The plausible ranges of hardware numbers live beside the hardware,
in ``devices.ranges``.)

One module per concern: ``escaping`` (values shown short in messages,
control characters escaped), ``names`` (text, choices, close matches of a
name not found, file paths), ``numbers`` (numbers and arrays, size limits),
``formulas`` (the formula parser).  The package exports all their public
names, so a check is imported as ``from roofline_sym.validate import show``.

A wrong type is an ``InputTypeError`` (a ``TypeError``); a bad value an
``InputError``; a name not found an ``UnknownNameError`` that suggests close
matches (all ``RooflineError``, see ``errors``).

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
"""

from ..errors import InputTypeError
from .escaping import escape, has_control, label, show, type_name
from .formulas import MAX_FORMULA_CHARS, expression, formula
from .names import cell_choice, choice, close_matches, items, path, text, unknown_name
from .numbers import (MAX_ELEMENTS, MAX_ROWS, SHAPE_MAX, broadcast_shape, check_size, count,
                      first_fraction, is_masked, parse_number, positive_array, positive_number)

__all__ = [
    "SHAPE_MAX", "MAX_ELEMENTS", "MAX_ROWS", "InputTypeError",
    "show", "escape", "label", "has_control", "type_name",
    "text", "choice", "cell_choice", "close_matches", "unknown_name", "items", "path",
    "count", "parse_number", "is_masked", "positive_array", "positive_number", "first_fraction",
    "broadcast_shape", "check_size",
    "MAX_FORMULA_CHARS", "formula", "expression",
]
