"""The numeric break-even: every value fixed but the variable, solved in full.

The difference ``D = baseline_time - lowp_time`` is a sum of ``Max`` terms.
Along one variable every ``Max`` switches piece only at roots of the
differences of its pieces, so the axis splits into intervals on which ``D``
is one polynomial (degree <= 1 in M alone, <= 3 along M = K = N = x).  Each
interval carries its regime (per GEMM and per kernel); its roots are exact.
Low precision is *faster* where ``D > 0``; an interval where ``D`` vanishes
identically (both sides launch-bound) is a tie.  A variable sitting in
denominators (a hardware rate) is solved in its reciprocal (``inverted``).

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
>>> be = solve_piecewise(Problem.of(m, rs.M, {rs.K: 8192, rs.N: 8192}))
>>> be.root_values.round(1).tolist(), be.describe_faster()
([1093.8], '(1093.83, oo)')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar, Mapping

import numpy as np
import sympy

from ..model.term import RegimeSummary
from .polynomials import INF, Point, coefficients, combine, horner, inside, roots_in, trim
from .problem import Problem
from .result import BreakEven, BreakEvenPieces

__all__ = ["NumericBreakEven", "solve_piecewise"]


@dataclass(repr=False, kw_only=True)
class NumericBreakEven(BreakEven):
    """A break-even with every value fixed but the variable: roots, the faster
    set and ties exactly, with the regime of every term on each interval.

    ``root_values``, ``faster_intervals()``, ``tie_intervals()`` (floats),
    ``is_faster(values)`` (vectorized) and ``regime_at(value)`` read it
    numerically.
    """

    inverted: bool = False
    _roots: list[Point] = field(default_factory=list)
    _faster: list[tuple[Point, Point]] = field(default_factory=list)
    _ties: list[tuple[Point, Point]] = field(default_factory=list)
    _regimes: list[tuple[Point, Point, dict]] = field(default_factory=list)

    symbolic: ClassVar[bool] = False

    def _value(self, p: Point) -> sympy.Expr:
        """A point of the solved axis as a value of the variable (exact)."""
        if p.value == INF:
            return sympy.Integer(0) if self.inverted else sympy.oo
        if p.value == 0 and not p.poly:
            return sympy.oo if self.inverted else sympy.Integer(0)
        exact = p.sympy(self.variable)
        return 1 / exact if self.inverted else exact

    def _float(self, p: Point) -> float:
        if not self.inverted:
            return p.value
        return INF if p.value == 0 else (0.0 if p.value == INF else 1 / p.value)

    @property
    def roots(self) -> list[sympy.Expr]:
        """Break-even points in increasing order, exact where possible."""
        return sorted((self._value(p) for p in self._roots), key=float)

    @property
    def root_values(self) -> np.ndarray:
        """The break-even points as floats, increasing."""
        vals = [1 / p.value if self.inverted else p.value for p in self._roots]
        return np.array(sorted(vals), dtype=float)

    def _set(self, spans) -> sympy.Set:
        return sympy.Union(*(sympy.Interval.open(*sorted((self._value(a), self._value(b)),
                                                         key=lambda e: float(e)))
                             for a, b in spans)) if spans else sympy.EmptySet

    @property
    def faster(self) -> sympy.Set:
        """The set of the variable where low precision is strictly faster."""
        return self._set(self._faster)

    @property
    def ties(self) -> list[sympy.Interval]:
        """Intervals on which both times are equal (e.g. both launch-bound)."""
        return [sympy.Interval(*sorted((self._value(a), self._value(b)), key=float))
                for a, b in self._ties]

    @property
    def regimes(self) -> list[tuple[sympy.Interval, dict[str, str]]]:
        """``[(interval of the variable, {term name: regime})]``, in order."""
        out = []
        for a, b, reg in self._regimes:
            lo, hi = sorted((self._value(a), self._value(b)), key=float)
            out.append((sympy.Interval(lo, hi), reg))
        return out[::-1] if self.inverted else out

    def is_faster(self, values: Any) -> np.ndarray:
        """Vectorized membership in ``faster``."""
        v = np.asarray(values, dtype=float)
        if self.inverted:
            v = 1 / v
        hit = np.zeros(v.shape, dtype=bool)
        for a, b in self._faster:
            hit |= (v > a.value) & (v < b.value)
        return hit

    def _intervals(self, spans) -> list[tuple[float, float]]:
        return sorted(tuple(sorted((self._float(a), self._float(b)))) for a, b in spans)

    def faster_intervals(self) -> list[tuple[float, float]]:
        """``faster`` as sorted float ``(low, high)`` pairs (``high`` may be inf)."""
        return self._intervals(self._faster)

    def tie_intervals(self) -> list[tuple[float, float]]:
        """``ties`` as sorted float ``(low, high)`` pairs (equal times throughout)."""
        return self._intervals(self._ties)

    def outcomes(self) -> list[tuple[float, float, str]]:
        """The positive axis cut at the roots: ``[(low, high, outcome)]`` with
        outcome ``faster``, ``slower`` or ``equal`` (low precision vs bf16)."""
        faster, ties = self.faster_intervals(), self.tie_intervals()
        cuts = sorted({0.0, INF, *(float(v) for v in self.root_values),
                       *(p for s in faster + ties for p in s)})
        out: list[tuple[float, float, str]] = []
        for lo, hi in zip(cuts, cuts[1:]):
            mid = inside(lo, hi)
            if any(a <= mid <= b for a, b in ties):
                kind = "equal"
            elif any(a < mid < b for a, b in faster):
                kind = "faster"
            else:
                kind = "slower"
            if out and out[-1][2] == kind:
                out[-1] = (out[-1][0], hi, kind)
            else:
                out.append((lo, hi, kind))
        return out

    def headline(self) -> tuple[str, str]:
        """(the first break-even value, the low-precision side's regime there in
        letters), or ``("always" | "never", "")`` without one.

        >>> import roofline_sym as rs
        >>> m = rs.linear("tensorwise", fuse=True).on("h100")
        >>> solve_piecewise(Problem.of(m, rs.x, {rs.M: rs.x, rs.K: rs.x, rs.N: rs.x})).headline()
        ('2936', 'gemm C3  cast M5 L5')
        """
        roots = self.root_values
        if len(roots):
            return f"{roots[0]:.0f}", RegimeSummary.of(self.regime_at(roots[0])).letters()
        return ("always" if self.is_faster(np.array([1e6]))[0] else "never"), ""

    def summary(self) -> dict[str, Any]:
        """The result as one row of plain values: the variable, the roots (the
        first and all), the regime at the first in letters, the faster
        intervals (``None`` for an unbounded end) and whether floors were aligned."""
        roots = self.root_values.tolist()
        return {"variable": str(self.variable), "first_root": roots[0] if roots else None,
                "roots": roots, "regime": self.headline()[1],
                "faster": [[lo, None if hi == INF else hi] for lo, hi in self.faster_intervals()],
                "aligned": self.aligned}

    def describe_faster(self) -> str:
        """``faster`` as readable text, e.g. ``(1093.83, oo)``."""
        return self._describe(self._faster)

    def regime_at(self, value: float) -> dict[str, str]:
        """The regime of every term at a value of the variable."""
        t = 1 / value if self.inverted else value
        for a, b, reg in self._regimes:
            if a.value <= t <= b.value:
                return reg
        raise ValueError(f"{value} is outside the solved axis")

    def subs(self, values: Mapping) -> "NumericBreakEven":
        """The same answer (every value is fixed already); ``values`` may repeat
        hardware symbols the model does not use, nothing else."""
        _, substitution, _ = self._specialised(values)
        return solve_piecewise(Problem.of(self.model, self.variable, substitution))

    # -- display ---------------------------------------------------------------
    def _describe(self, spans) -> str:
        if not spans:
            return "nowhere"
        out = []
        for a, b in sorted(spans, key=lambda s: min(self._float(s[0]), self._float(s[1]))):
            lo, hi = sorted((self._float(a), self._float(b)))
            out.append(f"({lo:.6g}, {'oo' if hi == INF else f'{hi:.6g}'})")
        return " u ".join(out)

    def __str__(self) -> str:
        v = self.variable
        lines = self._head()
        for value in self.root_values:
            lines.append(f"  {v}* = {value:.6g}   [{self._regime_text(self.regime_at(value))}]")
        if not self._roots:
            lines.append("  no break-even point")
        lines.append(f"  faster: {self._describe(self._faster)}")
        if self._ties:
            lines.append(f"  tie (equal times): {self._describe(self._ties)}")
        return "\n".join(lines)

    def _latex_pieces_(self) -> BreakEvenPieces:
        return self._pieces(
            roots=tuple((float(v), self._regime_words(self.regime_at(v)))
                        for v in self.root_values),
            outcomes=tuple(self.outcomes()))


def solve_piecewise(problem: Problem) -> NumericBreakEven:
    """Solve a problem with only the variable left, interval by interval."""
    var = problem.variable
    u = sympy.Dummy("u", positive=True)
    terms = []
    direct = [[coefficients(e, var) for _, e in ps] for _, ps in problem.terms]
    inverted = any(c is None for cs in direct for c in cs)
    for (term, ps), cs in zip(problem.terms, direct):
        polys = []
        for (regime, e), c in zip(ps, cs):
            if inverted:
                c = coefficients(e.xreplace({var: 1 / u}), u)
            if c is None:
                raise ValueError(f"cannot solve for {var}: term {term.name} is not polynomial "
                                 f"in {var} or 1/{var}")
            polys.append((regime, trim(c), [float(a) for a in trim(c)]))
        terms.append((term.name, +1 if term.side == "baseline" else -1, polys))

    cuts: dict[float, Point] = {}
    for _, _, polys in terms:
        for (_, c1, _), (_, c2, _) in combinations(polys, 2):
            for p in roots_in(combine([c1, c2], [1, -1]), 0.0, INF):
                if p.value > 0:
                    cuts.setdefault(p.value, p)
    bounds = [Point(0.0)] + [cuts[k] for k in sorted(cuts)] + [Point(INF)]

    roots: list[Point] = []
    faster: list[list[Point]] = []
    ties: list[list[Point]] = []
    regimes = []

    def extend(spans, a, b):
        if spans and spans[-1][1].value == a.value:
            spans[-1][1] = b
        else:
            spans.append([a, b])

    for a, b in zip(bounds, bounds[1:]):
        if b.value <= a.value:
            continue
        t = inside(a.value, b.value)
        active, chosen, signs = {}, [], []
        for name, sign, polys in terms:
            best = max(polys, key=lambda p: horner(p[2], t))
            active[name] = best[0]
            chosen.append(best[1])
            signs.append(sign)
        regimes.append((a, b, active))
        diff = combine(chosen, signs)
        if not diff:
            extend(ties, a, b)
            continue
        inner = roots_in(diff, a.value, b.value)
        for p in inner:
            if not any(abs(p.value - q.value) <= 1e-12 * max(1.0, p.value) for q in roots):
                roots.append(p)
        edges = [a] + sorted(inner, key=lambda p: p.value) + [b]
        fd = [float(c) for c in diff]
        for lo, hi in zip(edges, edges[1:]):
            if hi.value > lo.value and horner(fd, inside(lo.value, hi.value)) > 0:
                extend(faster, lo, hi)
    # a tie interval's ends are break-even points too
    for a, b in ties:
        for p in (a, b):
            if 0 < p.value < INF and not any(abs(p.value - q.value) <= 1e-12 * p.value
                                             for q in roots):
                roots.append(p)
    roots.sort(key=lambda p: p.value)
    return NumericBreakEven(var, problem.model, problem.substitution,
                            "numeric (piecewise, exact per interval)", problem.aligned,
                            inverted=inverted, _roots=roots, _faster=[tuple(s) for s in faster],
                            _ties=[tuple(s) for s in ties], _regimes=regimes)
