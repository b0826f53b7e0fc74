"""What the user fixes for a break-even solve: the variable, values, rays.

Values are exact: a float becomes the Rational of its decimal, shape values
stop at 2**53, a name or symbol that the model does not have is an error.

>>> variable("P_fp8"), variable("M")
(P_fp8, M)
>>> fixed_values({"K": 8192.0}, {S.K, S.N}, "the model")
{K: 8192}
>>> ray("cube")
{M: x, K: x, N: x}
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import sympy

from .. import symbols as S
from ..errors import InputError
from ..devices.ranges import check_range, symbol_kind
from ..validate import SHAPE_MAX, InputTypeError, expression, show, unknown_name

__all__ = ["SHAPES", "variable", "rationalize", "exact", "ray", "fixed_values"]

SHAPES = {"M": S.M, "K": S.K, "N": S.N}
# a ray M, K, N = polynomials in x: D is then of degree <= 3 * this
MAX_RAY_DEGREE = 4


def variable(solve_for: Any) -> sympy.Symbol:
    """The symbol to solve for: ``"M"``, ``"K"``, ``"N"``, a hardware name or symbol."""
    if isinstance(solve_for, sympy.Symbol):
        if solve_for in S.SHAPE_SYMBOLS or S.is_hardware_symbol(solve_for):
            return solve_for
        raise InputError(f"cannot solve for {solve_for}: use M, K, N or a hardware symbol")
    if not isinstance(solve_for, str):
        raise InputTypeError(f"the variable must be a name such as 'M' or 'BW' (or a symbol), "
                             f"not {type(solve_for).__name__} {show(solve_for)}")
    if solve_for in SHAPES:
        return SHAPES[solve_for]
    try:
        return S.hardware_symbol(solve_for)
    except ValueError:
        pass
    names = [*SHAPES, "BW", "eta_mem", "t_launch",
             *(f"{k}_{d}" for k in ("P", "eta") for d in ("bf16", "fp16", "fp8", "fp4"))]
    raise unknown_name("variable", solve_for, names,
                       extra=": solve for M, K, N or a hardware symbol")


def rationalize(expr: sympy.Expr) -> sympy.Expr:
    """Floats inside an expression as the exact Rationals of their decimals."""
    return expr.xreplace({f: sympy.Rational(repr(float(f))) for f in expr.atoms(sympy.Float)})


def exact(value: Any, name: str) -> sympy.Expr:
    """A fixed value: a positive finite number (exact) or a SymPy expression; a
    hardware value (``P_fp8``, ``eta_mem``, ...) within its plausible range."""
    kind = None if name in SHAPES else symbol_kind(name)
    if isinstance(value, sympy.Basic):
        if not isinstance(value, sympy.Expr):
            raise InputTypeError(f"{name} must be a number or a SymPy expression, got "
                                 f"{show(value)}")
        value = rationalize(value)
        if value.is_number:
            zero = value.is_zero and S.may_be_zero(name)
            if not (value.is_finite and (value.is_positive or zero)):
                raise InputError(f"{name} must be positive and finite, got {show(value)}")
            _check_number(value, name, kind)
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"{name} must be a number or a SymPy expression, not "
                             f"{type(value).__name__} {show(value)}")
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not (finite and (value > 0 or (value == 0 and S.may_be_zero(name)))):
        raise InputError(f"{name} must be positive and finite, got {show(value)}")
    _check_number(value, name, kind)
    if isinstance(value, (float, np.floating)):
        return sympy.Rational(repr(float(value)))
    return sympy.Integer(int(value))


def _check_number(value: Any, name: str, kind: str | None) -> None:
    """A shape from 1 to 2**53 (compared exactly), a hardware value within its range."""
    if name in SHAPES and value > SHAPE_MAX:
        raise InputError(f"{name} = {show(value)} is beyond 2**53, where float64 stops "
                         "counting elements exactly")
    if name in SHAPES and value < 1:
        raise InputError(f"{name} = {show(value)}: a layer's dimension is at least 1")
    if kind is not None:
        check_range(value, name, kind)


def ray(along: Any) -> dict[sympy.Symbol, sympy.Expr]:
    """``{shape symbol: polynomial in x}``: ``"cube"`` or a mapping, positive for x > 0."""
    if isinstance(along, str):
        if along == "cube":
            return {S.M: S.x, S.K: S.x, S.N: S.x}
        raise InputError(f"along={show(along)}: use 'cube' or a mapping such as "
                         "{rs.M: rs.x, rs.K: rs.x, rs.N: 4 * rs.x}")
    if not isinstance(along, Mapping):
        raise InputTypeError("along must be 'cube' or a non-empty mapping of M, K, N to "
                             f"expressions in rs.x, not {show(along)}")
    if not along:
        raise InputError("along must be 'cube' or a non-empty mapping of M, K, N to "
                         "expressions in rs.x")
    ray = {}
    for key, value in along.items():
        sym = SHAPES.get(key, key) if isinstance(key, str) else key
        if sym not in S.SHAPE_SYMBOLS:
            raise InputError(f"ray key {key!r} is not M, K or N")
        if isinstance(value, (str, bool)) or not isinstance(value, (sympy.Basic, int, float)):
            raise InputTypeError(f"ray value for {sym} must be a SymPy expression in rs.x "
                                 f"or a number, got {show(value)}")
        expr = rationalize(expression(value, f"ray value for {sym}"))
        poly = None
        if expr.free_symbols <= {S.x}:
            try:
                poly = sympy.Poly(expr, S.x)
            except sympy.PolynomialError:
                poly = None
        # a coefficient nan, zoo or I has no sign: checked real and finite before `<`
        if poly is None or poly.is_zero or any(not (c.is_real and c.is_finite) or c < 0
                                               for c in poly.coeffs()):
            raise InputError(f"ray {sym} = {show(value)} is not positive for every x > 0: "
                             "use a polynomial in rs.x with non-negative coefficients")
        if any(not 2 ** -64 <= c <= 2 ** 64 for c in poly.coeffs()):
            raise InputError(f"ray {sym} = {show(value)}: coefficients must lie in "
                             "2**-64..2**64")
        if poly.degree() > MAX_RAY_DEGREE:
            raise InputError(f"ray {sym} = {show(value)}: degree {poly.degree()} in rs.x; at "
                             f"most {MAX_RAY_DEGREE}")
        ray[sym] = expr
    if not any(e.has(S.x) for e in ray.values()):
        raise InputError("the ray does not depend on rs.x: nothing to solve")
    return ray


def fixed_values(values: Mapping[str | sympy.Symbol, Any], usable: set[sympy.Symbol],
                 what: str) -> dict[sympy.Symbol, sympy.Expr]:
    """Fixed values by symbol (names or the library's own symbols), checked to be
    symbols of ``what``: a typo or an unused value is an error, not a no-op.

    Hardware *symbols* the model does not use are skipped, so a whole
    ``hw.parameters`` mapping can be passed (an fp8 model ignores ``P_fp4``).
    """
    if not isinstance(values, Mapping):
        raise InputTypeError(f"values must be a mapping of symbols or names to numbers, not "
                             f"{type(values).__name__} {show(values)}")
    out = {}
    for key, value in values.items():
        if not isinstance(key, (str, sympy.Symbol)):
            raise InputTypeError(f"{show(key)} is not a symbol or a name (use rs.M, rs.K, "
                                 "rs.N or hardware names such as 'BW')")
        sym = variable(key) if isinstance(key, str) else key
        if sym not in usable and not isinstance(key, str) and S.is_hardware_symbol(sym):
            continue
        if sym not in usable:
            known = ", ".join(sorted(map(str, usable))) or "none"
            raise InputError(f"{key} is not a free symbol of {what} (free: {known}); "
                             "use rs.M, rs.K, rs.N or hardware names such as 'BW'")
        out[sym] = exact(value, str(sym))
    return out
