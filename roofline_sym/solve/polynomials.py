"""Polynomials with exact coefficients (low -> high), and their real roots.

The break-even difference is one polynomial per interval of the solved
variable; its coefficients are Fractions, its roots exact where linear and
polished floats (with the polynomial kept, for an exact form on request)
otherwise.

>>> (p,) = roots_in((Fraction(-3), Fraction(2)), 0.0, 10.0)
>>> p.exact, p.value
(Fraction(3, 2), 1.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
import sympy

__all__ = ["INF", "Point", "monomials", "coefficients", "trim", "combine", "horner",
           "exact_value", "sign", "multiply", "roots_in", "inside"]

INF = float("inf")
_ZERO = Fraction(0)  # the default of the sums in _terms, made once (a hot loop)


def monomials(expr: sympy.Expr, gens: Sequence[sympy.Symbol]
              ) -> dict[tuple[int, ...], Fraction] | None:
    """``expr`` as ``{exponents of gens: rational coefficient}``, or None where it
    is not a polynomial in ``gens`` with rational coefficients.  A sum of
    monomials is read directly (fast: no ``Poly``); anything else through
    ``sympy.Poly``."""
    index = {g: i for i, g in enumerate(gens)}
    out: dict[tuple[int, ...], Fraction] = {}
    for term in sympy.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            break
        exps = [0] * len(gens)
        for factor in sympy.Mul.make_args(rest):
            base, exp = factor.as_base_exp()
            if factor is sympy.S.One:
                continue
            if base not in index or not (exp.is_Integer and exp > 0):
                break
            exps[index[base]] += int(exp)
        else:
            key = tuple(exps)
            out[key] = out.get(key, Fraction(0)) + Fraction(int(coeff.p), int(coeff.q))
            continue
        break
    else:
        return out
    try:
        poly = sympy.Poly(expr, *gens)
    except sympy.PolynomialError:
        return None
    if not poly.domain.is_Numerical or not poly.domain.is_Exact:
        return None
    return {tuple(m): Fraction(int(sympy.Rational(c).p), int(sympy.Rational(c).q))
            for m, c in poly.terms()}


def coefficients(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Fraction, ...] | None:
    """Coefficients of ``expr`` as a polynomial in ``var`` with rational
    coefficients, or None if not one (the zero polynomial is ``(0,)``).

    >>> from sympy.abc import x
    >>> coefficients((x + 2) * (3 * x - 1) / 4, x)
    (Fraction(-1, 2), Fraction(5, 4), Fraction(3, 4))
    >>> coefficients(sympy.ceiling(x / 32), x) is None
    True
    """
    terms = _terms(expr, var)
    if terms is None:
        return None
    degree = max((k for k, c in terms.items() if c), default=0)
    return tuple(terms.get(k, Fraction(0)) for k in range(degree + 1))


def _terms(e: sympy.Expr, var: sympy.Symbol) -> dict[int, Fraction] | None:
    """``{power: coefficient}`` of ``e``, read off its tree (much faster than
    building a ``sympy.Poly``), or None where ``e`` is no polynomial in ``var``
    with rational coefficients (floats, other symbols, functions)."""
    if e is var:
        return {1: Fraction(1)}
    if e.is_Rational:
        return {0: Fraction(int(e.p), int(e.q))}
    if e.is_Add or e.is_Mul:
        out: dict[int, Fraction] | None = None
        for arg in e.args:
            t = _terms(arg, var)
            if t is None:
                return None
            if out is None:
                out = t
            elif e.is_Add:
                out = {k: out.get(k, _ZERO) + t.get(k, _ZERO) for k in out.keys() | t.keys()}
            else:
                product: dict[int, Fraction] = {}
                for i, a in out.items():
                    for j, b in t.items():
                        product[i + j] = product.get(i + j, 0) + a * b
                out = product
        return out
    if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
        base = _terms(e.base, var)
        if base is None:
            return None
        out = {0: Fraction(1)}
        for _ in range(int(e.exp)):
            product = {}
            for i, a in out.items():
                for j, b in base.items():
                    product[i + j] = product.get(i + j, 0) + a * b
            out = product
        return out
    return None


def trim(c: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """Without trailing zero coefficients (the zero polynomial is ``()``)."""
    c = list(c)
    while c and c[-1] == 0:
        c.pop()
    return tuple(c)


def combine(polys: Sequence[Sequence[Fraction]], signs: Sequence[int]) -> tuple[Fraction, ...]:
    """``sum(sign * poly)``, trimmed.

    Summed as integers over the common denominator, one division at the end:
    exactly the Fractions' sum, without a gcd at every addition (the
    break-even sweep's hot spot).

    >>> combine([(Fraction(1, 3), Fraction(1, 2)), (Fraction(1, 6),)], [1, -1])
    (Fraction(1, 6), Fraction(1, 2))
    """
    n = max((len(p) for p in polys), default=0)
    den = math.lcm(*(c.denominator for p in polys for c in p))
    nums = [0] * n
    for p, s in zip(polys, signs):
        for i, c in enumerate(p):
            nums[i] += s * c.numerator * (den // c.denominator)
    return trim([Fraction(v, den) for v in nums])


def horner(c: Sequence[float], t: float) -> float:
    """The polynomial ``c`` at ``t``."""
    acc = 0.0
    for a in reversed(c):
        acc = acc * t + a
    return acc


def exact_value(c: Sequence[Fraction], t: Fraction) -> Fraction:
    """The polynomial ``c`` at a rational ``t``, exactly."""
    acc = Fraction(0)
    for a in reversed(c):
        acc = acc * t + a
    return acc


def sign(value: Fraction | float) -> int:
    return (value > 0) - (value < 0)


def multiply(a: Sequence[Fraction], b: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """The product of two polynomials, trimmed."""
    if not a or not b:
        return ()
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return trim(out)


@dataclass(frozen=True)
class Point:
    """A point on the axis: a float, and the polynomial it is an exact root of."""

    value: float
    poly: tuple[Fraction, ...] = ()
    exact: Fraction | None = None

    @classmethod
    def rational(cls, r: Fraction) -> "Point":
        """The point ``r``, exactly."""
        return cls(float(r), (-r, Fraction(1)), r)

    @property
    def fraction(self) -> Fraction | None:
        """The point as a Fraction where it is rational (``exact``, or a float
        with no polynomial behind it), else None."""
        if self.exact is not None:
            return self.exact
        if not self.poly and self.value != INF:
            return Fraction(self.value)
        return None

    def sympy(self, var: sympy.Symbol) -> sympy.Expr:
        """The point as an exact SymPy number (the nearest real root of ``poly``)."""
        if self.exact is not None:
            return sympy.Rational(self.exact.numerator, self.exact.denominator)
        if not self.poly:
            return sympy.Float(self.value)
        poly = sympy.Poly([sympy.Rational(c.numerator, c.denominator)
                           for c in reversed(self.poly)], var)
        roots = poly.real_roots()
        return min(roots, key=lambda r: abs(float(r) - self.value))


def roots_in(c: tuple[Fraction, ...], lo: float, hi: float) -> list[Point]:
    """Real roots of the polynomial ``c`` in [lo, hi] (exact when linear)."""
    if len(c) <= 1:
        return []
    if len(c) == 2:
        r = -c[0] / c[1]
        return [Point(float(r), c, r)] if 0 < r and lo <= r <= hi else []
    fc = [float(a) for a in c]
    scale = max(abs(a) for a in fc)
    found = []
    for z in np.roots([a / scale for a in reversed(fc)]):
        if abs(z.imag) > 1e-7 * max(1.0, abs(z.real)) or z.real <= 0:
            continue
        t = float(z.real)
        for _ in range(4):  # polish on the exact coefficients (as floats)
            d = horner([i * a for i, a in enumerate(fc)][1:], t)
            if d == 0:
                break
            t -= horner(fc, t) / d
        if lo * (1 - 1e-12) <= t <= hi * (1 + 1e-12) if hi != INF else t >= lo * (1 - 1e-12):
            found.append(Point(t, c))
    return found


def inside(lo: float, hi: float) -> float:
    """A point strictly inside ``(lo, hi)`` (``hi`` may be infinite)."""
    if hi == INF:
        return 2 * lo + 1
    return 0.5 * (lo + hi)
