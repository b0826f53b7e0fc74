"""Block-scale steps: floor/ceiling terms of the solved variable, exactly.

MX, NVFP4 and blockwise scales count ``ceil(K/32)`` scales per row (torchao:
``floor``); along the variable such a count steps wherever its argument
crosses an integer, nested ones (``ceil(ceil(M/128) c / 132)``) where their
argument does.  Between consecutive steps every floor/ceiling is constant,
so each term's pieces are polynomials in the variable again, and the
difference of the times can be solved exactly there.

A ``StepModel`` holds each term's pieces as polynomials in the variable and
the step atoms (``MultiPoly``), and offers what the numeric solve needs:

- ``fixed(values)``: the pieces with the atoms at given integers (one block);
- ``envelope(which)``: the pieces on block-aligned shapes (``aligned``: every
  atom equal to its argument) or a bound of them (``low``: the baseline's
  least and the low-precision side's greatest time, ``high``: the other way
  round): ``floor(g)`` lies in ``[g - 1, g]``, ``ceil(g)`` in ``[g, g + 1]``,
  and every piece grows with every atom, so outside the places where the two
  bounds differ in sign the sign of the exact difference is known;
- ``breakpoints(lo, hi)``: every step in ``(lo, hi)``, exactly;
- ``sign_at(point)``: the exact sign of the difference at a point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import sympy

from ..errors import InputError
from .polynomials import (INF, Point, combine, exact_value, horner, monomials, multiply,
                          roots_in, sign, trim)
from .problem import Problem, step_atoms

__all__ = ["MultiPoly", "StepModel", "MAX_STEPS", "Terms", "too_many_steps"]

# Steps examined in one solve.  Only the few blocks around a sign change are
# split (see ``NumericBreakEven``), so a shipped model needs tens at most.
MAX_STEPS = 20_000

# [(term name, +1 baseline / -1 low precision, [(regime, coefficients low -> high)])]
Terms = list[tuple[str, int, list[tuple[str, tuple[Fraction, ...]]]]]


@dataclass(frozen=True)
class MultiPoly:
    """A polynomial in the variable and the step atoms: ``terms`` are
    ``(exponents, coefficient)``, exponent 0 of the variable, then one per atom."""

    terms: tuple[tuple[tuple[int, ...], Fraction], ...]

    @classmethod
    def of(cls, expr: sympy.Expr, gens: Sequence[sympy.Symbol]) -> "MultiPoly":
        terms = monomials(expr, gens)
        if terms is None:
            raise InputError(f"cannot solve exactly: {expr} is not polynomial in {gens[0]} "
                             "and its block-scale steps")
        return cls(tuple((m, c) for m, c in terms.items() if c))

    def atoms_in(self) -> set[int]:
        return {i for exps, _ in self.terms for i, e in enumerate(exps[1:]) if e}

    def at(self, values: Sequence[int]) -> tuple[Fraction, ...]:
        """Coefficients in the variable with every atom at ``values``."""
        out: dict[int, Fraction] = {}
        for exps, c in self.terms:
            for a, e in zip(values, exps[1:]):
                if e:
                    c = c * a ** e
            out[exps[0]] = out.get(exps[0], Fraction(0)) + c
        return trim([out.get(i, Fraction(0)) for i in range(max(out, default=-1) + 1)])

    def compose(self, bound: Callable[[int, int], tuple[Fraction, ...]]) -> tuple[Fraction, ...]:
        """Coefficients in the variable with atom ``i`` replaced by the polynomial
        ``bound(i, degree)``, ``degree`` the monomial's total degree in the atoms."""
        total: tuple[Fraction, ...] = ()
        for exps, c in self.terms:
            degree = sum(exps[1:])
            mono: tuple[Fraction, ...] = (Fraction(0),) * exps[0] + (c,)
            for i, e in enumerate(exps[1:]):
                for _ in range(e):
                    mono = multiply(mono, bound(i, degree))
            total = combine([total, mono], [1, 1])
        return total

    def nonnegative(self) -> bool:
        return all(c >= 0 for _, c in self.terms)


_ROUND = {sympy.floor: math.floor, sympy.ceiling: math.ceil}


@dataclass(frozen=True)
class _Atom:
    """``floor(arg)`` or ``ceiling(arg)``; ``arg`` in the variable and inner atoms."""

    kind: type
    arg: MultiPoly

    def round(self, value: Fraction) -> int:
        return _ROUND[self.kind](value)


@dataclass(frozen=True)
class StepModel:
    """A problem's terms as polynomials in the variable and its step atoms."""

    variable: sympy.Symbol
    atoms: tuple[_Atom, ...]
    terms: tuple[tuple[str, int, tuple[tuple[str, MultiPoly], ...]], ...]

    @classmethod
    def of(cls, problem: Problem) -> "StepModel":
        var = problem.variable
        found = set().union(*(step_atoms(e, var) for _, ps in problem.terms for _, e in ps))
        # inner before outer: an atom's argument holds only atoms listed before it
        order = sorted(found, key=lambda a: (len(step_atoms(a.args[0], var)), str(a)))
        dummies = {a: sympy.Dummy(f"s{i}") for i, a in enumerate(order)}
        gens = (var, *dummies.values())
        atoms = []
        for a in order:
            arg = MultiPoly.of(a.args[0].xreplace(dummies), gens)
            if not arg.nonnegative():
                raise InputError(f"cannot solve exactly: the block-scale term {a} does not "
                                 f"grow with {var}")
            atoms.append(_Atom(type(a), arg))
        terms = []
        for term, pieces in problem.terms:
            polys = tuple((r, MultiPoly.of(e.xreplace(dummies), gens)) for r, e in pieces)
            for _, p in polys:
                if any(c < 0 for exps, c in p.terms if any(exps[1:])):
                    raise InputError(f"cannot solve exactly: term {term.name} does not grow "
                                     "with its block-scale counts")
            terms.append((term.name, 1 if term.side == "baseline" else -1, polys))
        return cls(var, tuple(atoms), tuple(terms))

    # -- pieces on one block, and their bounds ---------------------------------------
    def fixed(self, values: Sequence[int]) -> Terms:
        """The pieces with every atom at ``values`` (their values on one block)."""
        return [(name, side, [(r, p.at(values)) for r, p in polys])
                for name, side, polys in self.terms]

    def envelope(self, which: str) -> Terms:
        """The pieces on block-aligned shapes (``aligned``), or the bound whose
        difference ``baseline - lowp`` is below (``low``) or above (``high``)
        the exact one everywhere."""
        lower, upper = self._atom_bounds()
        aligned = self._aligned_atoms()
        out = []
        for name, side, polys in self.terms:
            # compose() calls bound right away, so it may read this iteration's want_upper
            if which == "aligned":
                def bound(i: int, degree: int) -> tuple[Fraction, ...]:
                    return aligned[i]
            else:
                want_upper = (side < 0) == (which == "low")

                def bound(i: int, degree: int) -> tuple[Fraction, ...]:
                    if want_upper:
                        return upper[i]
                    # a product of counts: a floor's lower bound g - 1 may be
                    # negative, so take 0 (every count is >= 0)
                    if degree > 1 and self.atoms[i].kind is sympy.floor:
                        return ()
                    return lower[i]
            out.append((name, side, [(r, p.compose(bound)) for r, p in polys]))
        return out

    def _aligned_atoms(self) -> list[tuple[Fraction, ...]]:
        out: list[tuple[Fraction, ...]] = []
        for atom in self.atoms:
            out.append(atom.arg.compose(lambda i, d: out[i]))
        return out

    def _atom_bounds(self) -> tuple[list[tuple[Fraction, ...]], list[tuple[Fraction, ...]]]:
        """Per atom, polynomials below and above it for every value of the variable."""
        lower: list[tuple[Fraction, ...]] = []
        upper: list[tuple[Fraction, ...]] = []
        one = (Fraction(1),)
        for atom in self.atoms:
            g_lo = atom.arg.compose(lambda i, d: lower[i] if d <= 1
                                    or self.atoms[i].kind is sympy.ceiling else ())
            g_hi = atom.arg.compose(lambda i, d: upper[i])
            if atom.kind is sympy.floor:
                lower.append(combine([g_lo, one], [1, -1]))
                upper.append(g_hi)
            else:
                lower.append(g_lo)
                upper.append(combine([g_hi, one], [1, 1]))
        return lower, upper

    # -- exact values ------------------------------------------------------------------
    def _counts(self, count: Callable[["_Atom", tuple[Fraction, ...]], int | None],
                hits: dict[int, int]) -> list[int] | None:
        """Every atom's value at a point, inner first: ``hits[i]`` where known
        (an argument equal to an integer there), else ``count(atom, its argument's
        coefficients in the variable)``; None where ``count`` cannot tell."""
        values: list[int] = []
        for i, atom in enumerate(self.atoms):
            value = hits[i] if i in hits else count(
                atom, atom.arg.at(values + [0] * (len(self.atoms) - len(values))))
            if value is None:
                return None
            values.append(value)
        return values

    def _difference(self, value: Callable[[tuple[Fraction, ...]], Any], values: list[int]
                    ) -> tuple[Any, Any]:
        """``(baseline - lowp, baseline + lowp)`` with the atoms at ``values`` and
        each piece's coefficients evaluated by ``value``."""
        total = scale = 0
        for _, side, polys in self.terms:
            t = max(value(poly.at(values)) for _, poly in polys)
            total, scale = total + side * t, scale + abs(t)
        return total, scale

    def atom_values(self, v: Fraction) -> list[int]:
        """Every atom at a rational value of the variable, exactly."""
        values = self._counts(lambda atom, g: atom.round(exact_value(g, v)), {})
        if values is None:  # not reached: rounding always gives a count
            raise AssertionError("an atom without a value at a rational point")
        return values

    def sign_at(self, p: Point, hits: dict[int, int] | None = None) -> int:
        """The sign of ``baseline - lowp`` at the point ``p``, exactly."""
        hits = hits or {}
        r = p.fraction
        if r is not None:
            return sign(self._difference(lambda c: exact_value(c, r), self.atom_values(r))[0])

        def count(atom: _Atom, g: tuple[Fraction, ...]) -> int | None:
            # an irrational point: floats, unless too close to call
            x = horner([float(c) for c in g], p.value)
            close = len(g) > 1 and abs(x - round(x)) <= 1e-9 * max(1.0, abs(x))
            return None if close else atom.round(Fraction(x))

        values = self._counts(count, hits)
        if values is not None:
            total, scale = self._difference(lambda c: horner([float(a) for a in c], p.value),
                                            values)
            if abs(total) > 1e-13 * scale:  # well beyond the float evaluation's error
                return sign(total)
        return self._precise_sign(p, hits)

    def _precise_sign(self, p: Point, hits: dict[int, int]) -> int:
        """The sign at an algebraic point where floats are too close to call (rare):
        the point's root to 60 digits, the atoms from ``hits`` where an argument is
        an integer there, 0 below 1e-45 of the times."""
        x = sympy.Float(p.sympy(self.variable).evalf(60), 60)

        def value(c: tuple[Fraction, ...]) -> sympy.Expr:
            return sum((sympy.Rational(a.numerator, a.denominator) * x ** k
                        for k, a in enumerate(c)), sympy.Integer(0))

        values = self._counts(lambda atom, g: int(atom.kind(value(g))), hits)
        if values is None:  # not reached: every atom is evaluated
            raise AssertionError("an atom without a value at an algebraic point")
        total, scale = self._difference(value, values)
        return 0 if abs(total) <= sympy.Float("1e-45") * scale else int(sympy.sign(total))

    # -- where the steps are ------------------------------------------------------------
    def breakpoints(self, lo: Point, hi: Point, budget: int = MAX_STEPS
                    ) -> list[tuple[Point, dict[int, int]]]:
        """Every step in the open interval ``(lo, hi)``: ``(point, {atom: integer
        its argument equals there})``, in order; a ValueError beyond ``budget``."""
        found: dict[object, tuple[Point, dict[int, int]]] = {}
        for i, atom in enumerate(self.atoms):
            inner = atom.arg.atoms_in()
            cuts = sorted((p for p, _ in found.values()), key=lambda p: p.value) if inner else []
            edges = [lo, *cuts, hi]
            for a, b in zip(edges, edges[1:]):
                if b.value <= a.value:
                    continue
                mid = _midpoint(a, b)
                values = self.atom_values(mid)[:i] + [0] * (len(self.atoms) - i)
                g = atom.arg.at(values)
                solutions = _solutions(g, a, b, budget - len(found))
                if solutions is None:
                    raise too_many_steps(self.variable, lo, hi, budget)
                for point in solutions:
                    key = point.exact if point.exact is not None else point.value
                    _, hits = found.setdefault(key, (point, {}))
                    hits[i] = round(exact_value(g, point.exact)) if point.exact is not None \
                        else round(horner([float(c) for c in g], point.value))
                if len(found) > budget:
                    raise too_many_steps(self.variable, lo, hi, budget)
        return sorted(found.values(), key=lambda item: item[0].value)


def _midpoint(a: Point, b: Point) -> Fraction:
    """A rational point strictly inside ``(a, b)``."""
    if b.value == INF:
        return Fraction(2 * a.value + 1)
    ra, rb = a.fraction, b.fraction
    if ra is not None and rb is not None:
        return (ra + rb) / 2
    return Fraction(0.5 * (a.value + b.value))


def too_many_steps(var: sympy.Symbol, lo: Point, hi: Point, budget: int) -> ValueError:
    return ValueError(f"the break-even in {var} between {lo.value:.6g} and {hi.value:.6g} "
                      f"crosses more than {budget} block-scale steps; fix more of the shape "
                      "or solve a narrower question")


def _solutions(g: tuple[Fraction, ...], a: Point, b: Point, budget: int) -> list[Point] | None:
    """The points in ``(a, b)`` where the increasing polynomial ``g`` is an integer
    (None: more than ``budget`` of them)."""
    if len(g) <= 1:
        return []
    if b.value == INF:
        return None
    fg = [float(c) for c in g]
    lo_n = math.floor(horner(fg, a.value))
    hi_n = math.ceil(horner(fg, b.value))
    if hi_n - lo_n > budget + 2:
        return None
    out = []
    for n in range(lo_n, hi_n + 1):
        if len(g) == 2:
            r = (n - g[0]) / g[1]
            ra, rb = a.fraction, b.fraction
            inside = ((r > ra) if ra is not None else r > a.value) and (
                (r < rb) if rb is not None else r < b.value)
            if r > 0 and inside:
                out.append(Point.rational(r))
        else:
            shifted = combine([g, (Fraction(n),)], [1, -1])
            out.extend(p for p in roots_in(shifted, a.value, b.value)
                       if a.value < p.value < b.value)
    return out
