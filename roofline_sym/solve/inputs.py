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
from ..validate import SHAPE_MAX

__all__ = ["SHAPES", "variable", "rationalize", "exact", "ray", "fixed_values"]

SHAPES = {"M": S.M, "K": S.K, "N": S.N}


def variable(solve_for: Any) -> sympy.Symbol:
    """The symbol to solve for: ``"M"``, ``"K"``, ``"N"``, a hardware name or symbol."""
    if isinstance(solve_for, sympy.Symbol):
        if solve_for in S.SHAPE_SYMBOLS or S.is_hardware_symbol(solve_for):
            return solve_for
        raise ValueError(f"cannot solve for {solve_for}: use M, K, N or a hardware symbol")
    if isinstance(solve_for, str):
        if solve_for in SHAPES:
            return SHAPES[solve_for]
        try:
            return S.hardware_symbol(solve_for)
        except ValueError:
            pass
    raise ValueError(f"unknown variable {solve_for!r}: solve for M, K, N or a hardware "
                     "symbol (BW, eta_mem, t_launch, P_fp8, eta_fp8, ...)")


def rationalize(expr: sympy.Expr) -> sympy.Expr:
    """Floats inside an expression as the exact Rationals of their decimals."""
    return expr.xreplace({f: sympy.Rational(repr(float(f))) for f in expr.atoms(sympy.Float)})


def exact(value: Any, name: str) -> sympy.Expr:
    """A fixed value: a positive finite number (exact) or a SymPy expression."""
    if isinstance(value, sympy.Basic):
        value = rationalize(value)
        if value.is_number and not (value.is_finite and (
                value.is_positive or (value.is_zero and S.may_be_zero(name)))):
            raise ValueError(f"{name} must be positive and finite, got {value}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number or a SymPy expression, got {value!r}")
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not (finite and (value > 0 or (value == 0 and S.may_be_zero(name)))):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    if name in SHAPES and value > SHAPE_MAX:
        raise ValueError(f"{name} = {value!r} is beyond 2**53, where float64 stops counting "
                         "elements exactly")
    if isinstance(value, (float, np.floating)):
        return sympy.Rational(repr(float(value)))
    return sympy.Integer(int(value))


def ray(along: Any) -> dict[sympy.Symbol, sympy.Expr]:
    """``{shape symbol: polynomial in x}``: ``"cube"`` or a mapping, positive for x > 0."""
    if isinstance(along, str):
        if along == "cube":
            return {S.M: S.x, S.K: S.x, S.N: S.x}
        raise ValueError(f"along={along!r}: use 'cube' or a mapping such as "
                         "{rs.M: rs.x, rs.K: rs.x, rs.N: 4 * rs.x}")
    if not isinstance(along, Mapping) or not along:
        raise ValueError("along must be 'cube' or a non-empty mapping of M, K, N to "
                         "expressions in rs.x")
    ray = {}
    for key, value in along.items():
        sym = SHAPES.get(key, key) if isinstance(key, str) else key
        if sym not in S.SHAPE_SYMBOLS:
            raise ValueError(f"ray key {key!r} is not M, K or N")
        if isinstance(value, str) or not isinstance(value, (sympy.Basic, int, float)):
            raise ValueError(f"ray value for {sym} must be a SymPy expression in rs.x "
                             f"or a number, got {value!r}")
        expr = rationalize(sympy.sympify(value))
        poly = None
        if expr.free_symbols <= {S.x}:
            try:
                poly = sympy.Poly(expr, S.x)
            except sympy.PolynomialError:
                poly = None
        if poly is None or poly.is_zero or any(c < 0 for c in poly.coeffs()):
            raise ValueError(f"ray {sym} = {value} is not positive for every x > 0: use "
                             "a polynomial in rs.x with non-negative coefficients")
        ray[sym] = expr
    if not any(e.has(S.x) for e in ray.values()):
        raise ValueError("the ray does not depend on rs.x: nothing to solve")
    return ray


def fixed_values(values: Mapping, usable: set, what: str) -> dict[sympy.Symbol, sympy.Expr]:
    """Fixed values by symbol (names or the library's own symbols), checked to be
    symbols of ``what``: a typo or an unused value is an error, not a no-op.

    Hardware *symbols* the model does not use are skipped, so a whole
    ``hw.parameters`` mapping can be passed (an fp8 model ignores ``P_fp4``).
    """
    out = {}
    for key, value in values.items():
        sym = variable(key) if isinstance(key, str) else key
        if sym not in usable and not isinstance(key, str) and S.is_hardware_symbol(sym):
            continue
        if sym not in usable:
            known = ", ".join(sorted(map(str, usable))) or "none"
            raise ValueError(f"{key} is not a free symbol of {what} (free: {known}); "
                             "use rs.M, rs.K, rs.N or hardware names such as 'BW'")
        out[sym] = exact(value, str(sym))
    return out
