"""Break-even shapes: where low precision starts (or stops) paying, and why.

The difference ``D = baseline_time - lowp_time`` is a sum of ``Max`` terms.
Along one variable every ``Max`` switches piece only at roots of the
differences of its pieces, so the axis splits into intervals on which ``D``
is one polynomial (degree <= 1 in M alone, <= 3 along M = K = N = x).  Each
interval carries its regime (per GEMM and per kernel: compute, memory or
launch); its roots are exact.  Low precision is *faster* where ``D > 0``; an
interval where ``D`` vanishes identically (both sides launch-bound) is a tie.

With K, N or hardware left symbolic, a full case split over every regime runs
to thousands of pieces, so the solve takes one regime (by default the one
large shapes live in: GEMMs compute-bound, casts bandwidth-bound, zero-byte
kernels at the launch floor) and attaches the conditions under which it holds.

Block-scale ``floor``/``ceiling`` terms that depend on the variable are solved
on block-aligned shapes (``floor(K/32) = K/32``); the result says so.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
>>> be = rs.breakeven(m, solve_for="M", K=8192, N=8192)
>>> [round(float(r), 1) for r in be.roots]
[1093.8]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..model.linear import Linear
from ..model.term import REGIMES, RegimeSummary, TermId
from ..validate import SHAPE_MAX

__all__ = ["breakeven", "BreakEven"]

_SHAPES = {"M": S.M, "K": S.K, "N": S.N}
_INF = float("inf")


# -- inputs -----------------------------------------------------------------
def _variable(solve_for: Any) -> sympy.Symbol:
    if isinstance(solve_for, sympy.Symbol):
        if solve_for in S.SHAPE_SYMBOLS or S.is_hardware_symbol(solve_for):
            return solve_for
        raise ValueError(f"cannot solve for {solve_for}: use M, K, N or a hardware symbol")
    if isinstance(solve_for, str):
        if solve_for in _SHAPES:
            return _SHAPES[solve_for]
        try:
            return S.hardware_symbol(solve_for)
        except ValueError:
            pass
    raise ValueError(f"unknown variable {solve_for!r}: solve for M, K, N or a hardware "
                     "symbol (BW, eta_mem, t_launch, P_fp8, eta_fp8, ...)")


def _rationalize(expr: sympy.Expr) -> sympy.Expr:
    """Floats inside an expression as the exact Rationals of their decimals."""
    return expr.xreplace({f: sympy.Rational(repr(float(f))) for f in expr.atoms(sympy.Float)})


def _exact(value: Any, name: str) -> sympy.Expr:
    """A fixed value: a positive finite number (exact) or a SymPy expression."""
    if isinstance(value, sympy.Basic):
        value = _rationalize(value)
        if value.is_number and not (value.is_finite and value.is_positive):
            raise ValueError(f"{name} must be positive and finite, got {value}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number or a SymPy expression, got {value!r}")
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not (finite and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    if name in _SHAPES and value > SHAPE_MAX:
        raise ValueError(f"{name} = {value!r} is beyond 2**53, where float64 stops counting "
                         "elements exactly")
    if isinstance(value, (float, np.floating)):
        return sympy.Rational(repr(float(value)))
    return sympy.Integer(int(value))


def _ray(along: Any) -> dict[sympy.Symbol, sympy.Expr]:
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
        sym = _SHAPES.get(key, key) if isinstance(key, str) else key
        if sym not in S.SHAPE_SYMBOLS:
            raise ValueError(f"ray key {key!r} is not M, K or N")
        if isinstance(value, str) or not isinstance(value, (sympy.Basic, int, float)):
            raise ValueError(f"ray value for {sym} must be a SymPy expression in rs.x "
                             f"or a number, got {value!r}")
        expr = _rationalize(sympy.sympify(value))
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


# -- polynomials with exact coefficients (low -> high) -------------------------
def _fractions(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Fraction, ...] | None:
    """Coefficients of ``expr`` as a polynomial in ``var``, or None if not one."""
    try:
        poly = sympy.Poly(expr, var)
    except sympy.PolynomialError:
        return None
    if not poly.domain.is_Numerical or not poly.domain.is_Exact:
        return None
    coeffs = [sympy.Rational(c) for c in reversed(poly.all_coeffs())]
    return tuple(Fraction(int(c.p), int(c.q)) for c in coeffs)


def _trim(c: Sequence[Fraction]) -> tuple[Fraction, ...]:
    c = list(c)
    while c and c[-1] == 0:
        c.pop()
    return tuple(c)


def _combine(polys: Sequence[Sequence[Fraction]], signs: Sequence[int]) -> tuple[Fraction, ...]:
    out = [Fraction(0)] * max((len(p) for p in polys), default=0)
    for p, s in zip(polys, signs):
        for i, c in enumerate(p):
            out[i] += s * c
    return _trim(out)


def _horner(c: Sequence[float], t: float) -> float:
    acc = 0.0
    for a in reversed(c):
        acc = acc * t + a
    return acc


@dataclass(frozen=True)
class _Point:
    """A point on the axis: a float, and the polynomial it is an exact root of."""

    value: float
    poly: tuple[Fraction, ...] = ()
    exact: Fraction | None = None

    def sympy(self, var: sympy.Symbol) -> sympy.Expr:
        if self.exact is not None:
            return sympy.Rational(self.exact.numerator, self.exact.denominator)
        if not self.poly:
            return sympy.Float(self.value)
        poly = sympy.Poly([sympy.Rational(c.numerator, c.denominator)
                           for c in reversed(self.poly)], var)
        roots = poly.real_roots()
        return min(roots, key=lambda r: abs(float(r) - self.value))


def _roots_in(c: tuple[Fraction, ...], lo: float, hi: float) -> list[_Point]:
    """Real roots of the polynomial ``c`` in [lo, hi] (exact when linear)."""
    if len(c) <= 1:
        return []
    if len(c) == 2:
        r = -c[0] / c[1]
        return [_Point(float(r), c, r)] if 0 < r and lo <= r <= hi else []
    fc = [float(a) for a in c]
    scale = max(abs(a) for a in fc)
    found = []
    for z in np.roots([a / scale for a in reversed(fc)]):
        if abs(z.imag) > 1e-7 * max(1.0, abs(z.real)) or z.real <= 0:
            continue
        t = float(z.real)
        for _ in range(4):  # polish on the exact coefficients (as floats)
            d = _horner([i * a for i, a in enumerate(fc)][1:], t)
            if d == 0:
                break
            t -= _horner(fc, t) / d
        if lo * (1 - 1e-12) <= t <= hi * (1 + 1e-12) if hi != _INF else t >= lo * (1 - 1e-12):
            found.append(_Point(t, c))
    return found


def _inside(lo: float, hi: float) -> float:
    if hi == _INF:
        return 2 * lo + 1
    return 0.5 * (lo + hi)


# -- the result ----------------------------------------------------------------
@dataclass
class BreakEven:
    """Where low precision breaks even with bf16 along one variable.

    ``roots``: break-even points (exact where possible); ``faster``: a SymPy
    set of the variable where low precision is strictly faster; ``ties``:
    intervals where both times are equal; ``regimes``: per interval, the
    regime of every term.  Symbolic results carry ``closed_form`` and the
    ``conditions`` under which their regime holds.
    """

    variable: sympy.Symbol
    model: Linear
    substitution: dict
    method: str
    aligned: bool = False
    inverted: bool = False
    _roots: list[_Point] = field(default_factory=list, repr=False)
    _faster: list[tuple[_Point, _Point]] = field(default_factory=list, repr=False)
    _ties: list[tuple[_Point, _Point]] = field(default_factory=list, repr=False)
    _regimes: list[tuple[_Point, _Point, dict]] = field(default_factory=list, repr=False)
    closed_form: sympy.Expr | None = None
    slope: sympy.Expr | None = None
    regime_choice: dict = field(default_factory=dict)
    conditions: list[tuple[str, sympy.Expr]] = field(default_factory=list)
    difference: sympy.Expr | None = None
    regime_request: Any = None
    candidates: list[sympy.Expr] = field(default_factory=list)

    # -- numeric view ------------------------------------------------------
    @property
    def symbolic(self) -> bool:
        return self.method.startswith("symbolic")

    def _value(self, p: _Point) -> sympy.Expr:
        """A point of the solved axis as a value of the variable (exact)."""
        if p.value == _INF:
            return sympy.Integer(0) if self.inverted else sympy.oo
        if p.value == 0 and not p.poly:
            return sympy.oo if self.inverted else sympy.Integer(0)
        exact = p.sympy(self.variable)
        return 1 / exact if self.inverted else exact

    def _float(self, p: _Point) -> float:
        if not self.inverted:
            return p.value
        return _INF if p.value == 0 else (0.0 if p.value == _INF else 1 / p.value)

    @property
    def roots(self) -> list[sympy.Expr]:
        """Break-even points in increasing order, exact where possible."""
        if self.symbolic:
            return list(self.candidates)
        return sorted((self._value(p) for p in self._roots), key=float)

    def _numeric(self, what: str) -> None:
        if self.symbolic:
            raise ValueError(f"{what} needs numbers: this result is symbolic; specialise it "
                             "with .subs({...}) first")

    @property
    def root_values(self) -> np.ndarray:
        """The break-even points as floats, increasing (numeric results)."""
        self._numeric("root_values")
        vals = [1 / p.value if self.inverted else p.value for p in self._roots]
        return np.array(sorted(vals), dtype=float)

    def _set(self, spans) -> sympy.Set:
        return sympy.Union(*(sympy.Interval.open(*sorted((self._value(a), self._value(b)),
                                                         key=lambda e: float(e)))
                             for a, b in spans)) if spans else sympy.EmptySet

    @property
    def faster(self) -> sympy.Set:
        """The set of the variable where low precision is strictly faster.

        A symbolic result's set holds within its regime: the difference of the
        regime's times is positive and every regime condition holds.
        """
        if self.symbolic:
            within = sympy.And(self.difference > 0, *(c for _, c in self.conditions))
            return sympy.ConditionSet(self.variable, within, sympy.Interval.open(0, sympy.oo))
        return self._set(self._faster)

    @property
    def ties(self) -> list[sympy.Interval]:
        """Intervals on which both times are equal (e.g. both launch-bound)."""
        return [sympy.Interval(*sorted((self._value(a), self._value(b)), key=float))
                for a, b in self._ties]

    @property
    def regimes(self) -> list[tuple[sympy.Interval, dict[str, str]]]:
        """``[(interval of the variable, {term name: regime})]``, in order."""
        if self.symbolic:
            return [(sympy.Interval.open(0, sympy.oo), dict(self.regime_choice))]
        out = []
        for a, b, reg in self._regimes:
            lo, hi = sorted((self._value(a), self._value(b)), key=float)
            out.append((sympy.Interval(lo, hi), reg))
        return out[::-1] if self.inverted else out

    def is_faster(self, values: Any) -> np.ndarray:
        """Vectorized membership in ``faster`` (numeric results)."""
        self._numeric("is_faster")
        v = np.asarray(values, dtype=float)
        if self.inverted:
            v = 1 / v
        hit = np.zeros(v.shape, dtype=bool)
        for a, b in self._faster:
            hit |= (v > a.value) & (v < b.value)
        return hit

    def faster_intervals(self) -> list[tuple[float, float]]:
        """``faster`` as sorted float ``(low, high)`` pairs (``high`` may be inf)."""
        self._numeric("faster_intervals")
        return sorted(tuple(sorted((self._float(a), self._float(b)))) for a, b in self._faster)

    def tie_intervals(self) -> list[tuple[float, float]]:
        """``ties`` as sorted float ``(low, high)`` pairs (equal times throughout)."""
        self._numeric("tie_intervals")
        return sorted(tuple(sorted((self._float(a), self._float(b)))) for a, b in self._ties)

    def describe_faster(self) -> str:
        """``faster`` as readable text, e.g. ``(1093.83, oo)``."""
        self._numeric("describe_faster")
        return self._describe(self._faster)

    def regime_at(self, value: float) -> dict[str, str]:
        """The regime of every term at a value of the variable."""
        self._numeric("regime_at")
        t = 1 / value if self.inverted else value
        for a, b, reg in self._regimes:
            if a.value <= t <= b.value:
                return reg
        raise ValueError(f"{value} is outside the solved axis")

    # -- specialisation ------------------------------------------------------
    def subs(self, values: Mapping) -> "BreakEven":
        """Specialise (symbols to numbers); a fully numeric result is solved in full.

        A closed form is used when its regime conditions hold at the root; the
        ``method`` says whether it did, and the full piecewise solve of the
        specialised model always backs it.
        """
        free = set().union(*(v.free_symbols for v in self.substitution.values())) | (
            self.model.free_hardware_symbols | set(S.SHAPE_SYMBOLS)) - set(self.substitution)
        mapping = _values(values, free - {self.variable}, "this answer")
        substitution = {k: v.xreplace(mapping) for k, v in self.substitution.items()}
        substitution.update({k: v for k, v in mapping.items() if k not in substitution})
        # a fully numeric model is solved in full; one still symbolic keeps the regime
        left = free - set(mapping) - {self.variable}
        result = _solve(self.model, self.variable, substitution,
                        self.regime_request if left else None)
        if not self.symbolic or result.symbolic:
            return result
        why = "no closed-form root is real and positive"
        for candidate in self.candidates:
            value = _real_positive(candidate.xreplace(mapping))
            if value is None:
                continue
            at_root = {self.variable: value}
            failed = [name for name, cond in self.conditions
                      if _fails((cond.lhs - cond.rhs).xreplace(mapping).xreplace(at_root))]
            if failed:
                why = ", ".join(failed)
                continue
            result.method = (f"closed form ({self.variable}* = {float(value):.6g}; regime "
                             "conditions hold), backed by the full piecewise solve")
            if not any(abs(r - float(value)) <= 1e-9 * float(value)
                       for r in result.root_values):
                result.method += " [closed form not among the full roots]"
            return result
        result.method = f"numeric (closed-form regime does not hold: {why})"
        return result

    # -- display ---------------------------------------------------------------
    @staticmethod
    def _summary(reg: Mapping[str, str]) -> str:
        return RegimeSummary.of(reg).text()

    def __str__(self) -> str:
        v = self.variable
        head = f"break-even of {self.model!r} in {v}"
        if self.substitution:
            head += " with " + ", ".join(f"{k} = {val}" for k, val in self.substitution.items())
        lines = [head, f"  method: {self.method}"]
        if self.aligned:
            lines.append("  block-scale floors solved on block-aligned shapes")
        if self.symbolic:
            if self.closed_form is not None:
                lines.append(f"  {v}* = {self.closed_form}")
            else:
                lines.append(f"  {len(self.candidates)} candidate roots (a cubic); see .roots")
            if self.slope is not None:
                lines.append(f"  low precision faster iff a > 0 and {v} > {v}*, or a < 0 and "
                             f"{v} < {v}*; a = {self.slope}")
            lines.append(f"  regime: {self._summary(self.regime_choice)}")
            lines.append(f"  conditions: {len(self.conditions)} (see .conditions)")
            return "\n".join(lines)
        for value in self.root_values:
            lines.append(f"  {v}* = {value:.6g}   [{self._summary(self.regime_at(value))}]")
        if not self._roots:
            lines.append("  no break-even point")
        lines.append(f"  faster: {self._describe(self._faster)}")
        if self._ties:
            lines.append(f"  tie (equal times): {self._describe(self._ties)}")
        return "\n".join(lines)

    def _describe(self, spans) -> str:
        if not spans:
            return "nowhere"
        out = []
        for a, b in sorted(spans, key=lambda s: min(self._float(s[0]), self._float(s[1]))):
            lo, hi = sorted((self._float(a), self._float(b)))
            out.append(f"({lo:.6g}, {'oo' if hi == _INF else f'{hi:.6g}'})")
        return " u ".join(out)

    __repr__ = __str__

    def latex(self, conditions: bool = True) -> str:
        """LaTeX for display math (inside ``\\[ \\]``); amsmath only.

        Symbolic: closed form, the sign condition and (``conditions=True``) the
        regime validity conditions as ``cases``; numeric: the roots with their
        regimes and the faster / slower intervals.  See ``render.breakeven_latex``.
        """
        from ..output.blocks import breakeven_latex

        return breakeven_latex(self, conditions=conditions)

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"


# -- solving -------------------------------------------------------------------
def _align(expr: sympy.Expr, var: sympy.Symbol) -> tuple[sympy.Expr, bool]:
    """Replace floor/ceiling terms that depend on ``var`` by their argument."""
    hits = [a for a in expr.atoms(sympy.floor, sympy.ceiling) if a.has(var)]
    if not hits:
        return expr, False
    return expr.xreplace({a: a.args[0] for a in hits}), True


def _pieces(model: Linear, var: sympy.Symbol, substitution: dict):
    """Every term's pieces with the substitution applied and floors aligned."""
    aligned = False
    out = []
    for term in model.terms:
        pieces = []
        for regime, expr in term.pieces:
            expr, hit = _align(expr.xreplace(substitution), var)
            aligned |= hit
            pieces.append((regime, expr))
        out.append((term, pieces))
    return out, aligned


def _solve(model: Linear, var: sympy.Symbol, substitution: dict, regime: Any) -> BreakEven:
    pieces, aligned = _pieces(model, var, substitution)
    free = set()
    for _, ps in pieces:
        for _, e in ps:
            free |= e.free_symbols
    if var not in free:
        hint = (f"; it is bound to {model.hardware.name}: pass the unbound model and "
                f"hardware={model.hardware.name!r}"
                if model.hardware is not None and S.is_hardware_symbol(var) else "")
        raise ValueError(f"the model does not depend on {var} once the given values are "
                         f"substituted: nothing to solve{hint}")
    if free == {var} and regime is None:
        return _solve_numeric(model, var, substitution, pieces, aligned)
    return _solve_symbolic(model, var, substitution, pieces, aligned, regime)


def _solve_numeric(model, var, substitution, pieces, aligned) -> BreakEven:
    u = sympy.Dummy("u", positive=True)
    terms = []
    inverted = any(_fractions(e, var) is None for _, ps in pieces for _, e in ps)
    for term, ps in pieces:
        polys = []
        for regime, e in ps:
            c = _fractions(e.xreplace({var: 1 / u}) if inverted else e, u if inverted else var)
            if c is None:
                raise ValueError(f"cannot solve for {var}: term {term.name} is not polynomial "
                                 f"in {var} or 1/{var}")
            polys.append((regime, _trim(c), [float(a) for a in _trim(c)]))
        terms.append((term.name, +1 if term.side == "baseline" else -1, polys))

    cuts: dict[float, _Point] = {}
    for _, _, polys in terms:
        for (_, c1, _), (_, c2, _) in combinations(polys, 2):
            for p in _roots_in(_combine([c1, c2], [1, -1]), 0.0, _INF):
                if p.value > 0:
                    cuts.setdefault(p.value, p)
    bounds = [_Point(0.0)] + [cuts[k] for k in sorted(cuts)] + [_Point(_INF)]

    roots: list[_Point] = []
    faster: list[list[_Point]] = []
    ties: list[list[_Point]] = []
    regimes = []

    def extend(spans, a, b):
        if spans and spans[-1][1].value == a.value:
            spans[-1][1] = b
        else:
            spans.append([a, b])

    for a, b in zip(bounds, bounds[1:]):
        if b.value <= a.value:
            continue
        t = _inside(a.value, b.value)
        active, chosen, signs = {}, [], []
        for name, sign, polys in terms:
            best = max(polys, key=lambda p: _horner(p[2], t))
            active[name] = best[0]
            chosen.append(best[1])
            signs.append(sign)
        regimes.append((a, b, active))
        diff = _combine(chosen, signs)
        if not diff:
            extend(ties, a, b)
            continue
        inner = _roots_in(diff, a.value, b.value)
        for p in inner:
            if not any(abs(p.value - q.value) <= 1e-12 * max(1.0, p.value) for q in roots):
                roots.append(p)
        edges = [a] + sorted(inner, key=lambda p: p.value) + [b]
        fd = [float(c) for c in diff]
        for lo, hi in zip(edges, edges[1:]):
            if hi.value > lo.value and _horner(fd, _inside(lo.value, hi.value)) > 0:
                extend(faster, lo, hi)
    # a tie interval's ends are break-even points too
    for a, b in ties:
        for p in (a, b):
            if 0 < p.value < _INF and not any(abs(p.value - q.value) <= 1e-12 * p.value
                                              for q in roots):
                roots.append(p)
    roots.sort(key=lambda p: p.value)
    return BreakEven(var, model, dict(substitution), "numeric (piecewise, exact per interval)",
                     aligned, inverted, roots, [tuple(s) for s in faster],
                     [tuple(s) for s in ties], regimes)


def _regime_request(regime: Any) -> dict[tuple[str, ...], str]:
    """The user's ``{term name or dotted prefix: regime}``, keys split into parts
    and checked."""
    if regime is not None and not isinstance(regime, Mapping):
        raise ValueError("regime must be a mapping such as {'lowp.cast': 'memory', "
                         "'gemm': 'compute'} (keys: term names or dotted prefixes)")
    out = {}
    for key, want in (regime or {}).items():
        if want not in REGIMES:
            raise ValueError(f"regime {key!r}: {want!r} is not one of {', '.join(REGIMES)}")
        out[tuple(str(key).split("."))] = want
    return out


def _check_regime(request: Mapping[tuple[str, ...], str], terms) -> None:
    """Every requested key names some terms, and some of them have the regime."""
    for key, want in request.items():
        hit = [t for t in terms if _requested(t.id, {key: want})]
        if not hit:
            raise ValueError(f"regime key {'.'.join(key)!r} matches no term; terms: "
                             f"{', '.join(t.name for t in terms)}")
        if not any(want in dict(t.pieces) for t in hit):
            raise ValueError(f"regime {'.'.join(key)!r}: no matching term can be {want}-bound")


def _default_regime(term, pieces) -> str:
    regimes = [r for r, _ in pieces]
    if term.group == "gemm":
        return "compute" if "compute" in regimes else regimes[0]
    return "memory" if "memory" in regimes else "launch"


def _requested(id: TermId, request: Mapping[tuple[str, ...], str]) -> str | None:
    """The user's regime for a term: the longest key that is a prefix of its
    parts, or else of its parts after the side (``gemm`` names every GEMM)."""
    for parts in (id.parts, id.parts[1:]):
        keys = [k for k in request if parts[:len(k)] == k]
        if keys:
            return request[max(keys, key=len)]
    return None


def _solve_symbolic(model, var, substitution, pieces, aligned, regime) -> BreakEven:
    request = _regime_request(regime)
    _check_regime(request, [t for t, _ in pieces])
    choice, chosen_expr, conditions = {}, {}, []
    for term, ps in pieces:
        want = _requested(term.id, request)
        regimes = dict(ps)
        pick = want if want in regimes else _default_regime(term, ps)
        choice[term.name] = pick
        chosen_expr[term.name] = regimes[pick]
    base = sympy.Add(*(chosen_expr[t.name] for t, _ in pieces if t.side == "baseline"))
    lowp = sympy.Add(*(chosen_expr[t.name] for t, _ in pieces if t.side == "lowp"))
    diff = base - lowp
    expanded = sympy.expand(diff)
    if any(var in sympy.denom(t).free_symbols for t in sympy.Add.make_args(expanded)):
        # the variable sits in denominators (a hardware rate): solve in 1 / var
        poly_var = sympy.Dummy("w", positive=True)
        expanded = sympy.expand(expanded.xreplace({var: 1 / poly_var}))
        back = lambda r: 1 / r  # noqa: E731
    else:
        poly_var, back = var, (lambda r: r)
    poly = sympy.Poly(expanded, poly_var)
    slope, closed = None, None
    if poly.degree() < 1:
        raise ValueError(f"in the regime solved, the two times do not depend on {var}: "
                         "nothing to solve")
    if poly.degree() == 1:
        # D = a v + b: keep a and b as sums of rate terms (1/(P eta), 1/(BW eta),
        # t_launch), the form a paper writes, rather than one expanded fraction
        a1, a0 = (_tidy(expanded.coeff(poly_var, d)) for d in (1, 0))
        closed = back(_tidy(-a0) / a1)
        candidates = [closed]
        if poly_var is var:
            slope = a1
    else:
        # several roots of a cubic; which one is real and positive depends on
        # the values, so .subs() picks among them
        candidates = [back(r) for r in sympy.roots(poly, cubics=True, quartics=False)]
        if not candidates:
            raise ValueError(f"no closed form for a degree-{poly.degree()} break-even in {var}")
    for term, ps in pieces:
        for r, e in ps:
            if r != choice[term.name]:
                conditions.append((f"{term.name}: {choice[term.name]} >= {r}",
                                   # unevaluated: two numeric pieces stay a relation
                                   sympy.Ge(chosen_expr[term.name], e, evaluate=False)))
    return BreakEven(var, model, dict(substitution), "symbolic (closed form in one regime)",
                     aligned, False, closed_form=closed, slope=slope, regime_choice=choice,
                     conditions=conditions, difference=diff, regime_request=regime,
                     candidates=candidates)


def _values(values: Mapping, usable: set, what: str) -> dict[sympy.Symbol, sympy.Expr]:
    """Fixed values by symbol (names or the library's own symbols), checked to be
    symbols of ``what``: a typo or an unused value is an error, not a no-op.

    Hardware *symbols* the model does not use are skipped, so a whole
    ``hw.parameters`` mapping can be passed (an fp8 model ignores ``P_fp4``).
    """
    out = {}
    for key, value in values.items():
        sym = _variable(key) if isinstance(key, str) else key
        if sym not in usable and not isinstance(key, str) and S.is_hardware_symbol(sym):
            continue
        if sym not in usable:
            known = ", ".join(sorted(map(str, usable))) or "none"
            raise ValueError(f"{key} is not a free symbol of {what} (free: {known}); "
                             "use rs.M, rs.K, rs.N or hardware names such as 'BW'")
        out[sym] = _exact(value, str(sym))
    return out


def _real_positive(value: sympy.Expr) -> sympy.Expr | None:
    """A candidate root as a real positive number, or None.

    Cubic roots in radicals may carry canceling imaginary parts (casus
    irreducibilis), so realness is judged on a 30-digit evaluation.
    """
    if not value.is_number:
        return None
    if value.is_Rational:
        return value if value > 0 else None
    z = complex(sympy.N(value, 30))
    if abs(z.imag) > 1e-12 * abs(z) or z.real <= 0:
        return None
    return sympy.re(sympy.N(value, 30))


def _fails(margin: sympy.Expr) -> bool:
    """A regime condition ``margin >= 0`` is violated (exactly, or beyond the
    30-digit evaluation's noise for irrational roots)."""
    if margin.is_Rational:
        return bool(margin < 0)
    return float(sympy.N(margin, 30)) < -1e-24


def _tidy(expr: sympy.Expr) -> sympy.Expr:
    """Collect a sum over the memory rate and the launch floor, each part factored."""
    rates = [1 / (S.mem_bw() * S.mem_efficiency()), S.launch_overhead()]
    return sympy.collect(expr, rates, func=sympy.factor_terms)


def breakeven(model: Linear, solve_for: Any = None, along: Any = None, *,
              hardware: Any = None, regime: Mapping[str, str] | None = None,
              **values: Any) -> BreakEven:
    """Solve ``baseline_time == lowp_time`` along one variable.

    ``solve_for``: ``"M"``, ``"K"``, ``"N"`` or a hardware symbol name
    (``"BW"``, ``"P_fp8"``, ...); or ``along="cube"`` (M = K = N = x) or a
    ray mapping such as ``{rs.M: rs.x, rs.K: rs.x, rs.N: 4 * rs.x}``.
    ``values``: fixed shape or hardware values (omitted ones stay symbolic).
    ``hardware``: bind every hardware value but the solved one.
    ``regime``: solve symbolically in this regime (``{"lowp.cast": "memory",
    "gemm": "compute"}``; keys are term names or dotted prefixes).

    >>> import roofline_sym as rs
    >>> be = rs.breakeven(rs.linear("dynamic", fuse=True, preset="seed"), solve_for="M")
    >>> be.symbolic
    True
    """
    if not isinstance(model, Linear):
        raise ValueError(f"breakeven needs a model from rs.linear(), got {type(model).__name__}")
    if along is not None and solve_for is not None:
        raise ValueError("give either solve_for or along, not both")
    if hardware is not None and model.hardware is not None:
        raise ValueError(f"the model is already bound to {model.hardware.name}: pass the "
                         "unbound model with hardware=..., or no hardware=")
    usable = set(S.SHAPE_SYMBOLS) | model.free_hardware_symbols
    if model.hardware is not None:
        bound = [k for k in values if k not in _SHAPES]
        if bound:
            raise ValueError(f"the model is bound to {model.hardware.name}, so {bound} cannot "
                             "be set: pass the unbound model to vary hardware values")
    substitution = _values(values, usable, "the model")
    if along is not None:
        var = S.x
        ray = _ray(along)
        clash = set(ray) & set(substitution)
        if clash:
            raise ValueError(f"{sorted(map(str, clash))} both on the ray and fixed")
        substitution.update(ray)
    else:
        var = _variable("M" if solve_for is None else solve_for)
        if var in substitution:
            raise ValueError(f"{var} is both solved for and fixed")
    if hardware is not None:
        from ..devices.catalog import hardware as lookup

        hw = lookup(hardware, dataset=model.options.dataset)
        needed = model.free_hardware_symbols - {var} - set(substitution)
        substitution.update(hw.values_for(needed))
    return _solve(model, var, substitution, regime)
