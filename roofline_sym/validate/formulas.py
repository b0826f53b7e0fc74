"""Formula text parsed by a whitelist (numbers, the shape and hardware symbols,
``+ - * / **``, ``Max``, ``Min``, ``floor``, ``ceiling``), never ``eval`` or
``sympify``; a SymPy expression, a number or formula text checked.

>>> formula("2*M*K*N / (P_fp8*eta_fp8)")
2*K*M*N/(P_fp8*eta_fp8)
"""

from __future__ import annotations

import ast
import math
import numbers
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import sympy

from .. import symbols as S
from ..errors import InputError, InputTypeError
from .escaping import escape, show, type_name
from .names import unknown_name

__all__ = ["MAX_FORMULA_CHARS", "formula", "expression"]


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
                         f"not {type_name(value)} {show(value)}")
