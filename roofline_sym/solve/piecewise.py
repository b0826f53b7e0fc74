"""The numeric break-even: every value fixed but the variable, solved in full.

The difference ``D = baseline_time - lowp_time`` is a sum of ``Max`` terms.
Along one variable every ``Max`` switches piece only at roots of the
differences of its pieces, so the axis splits into intervals on which ``D``
is one polynomial (degree <= 1 in M alone, <= 3 along M = K = N = x).  Each
interval carries its regime (per GEMM and per kernel); its roots are exact.
Low precision is *faster* where ``D > 0``; an interval where ``D`` vanishes
identically (both sides launch-bound) is a tie.  A variable sitting in
denominators (a hardware rate) is solved in its reciprocal (``inverted``).

Block-scale counts (``ceil(K/32)``) step along the variable (``steps``): ``D``
is a polynomial between consecutive steps and may jump at one.  Bounds of
``D`` that need no steps show where its sign is settled; only the blocks
where it is not are split and solved exactly, so every root makes the two
times equal, and a jump across zero without a root is reported as a *step*.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
>>> be = solve_piecewise(Problem.of(m, rs.M, {rs.K: 8192, rs.N: 8192}))
>>> be.root_values.round(1).tolist(), be.describe_faster()
([1093.8], '(1093.83, oo)')
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import sympy

from ..errors import InputError
from ..model.term import RegimeSummary
from ..validate import positive_array, positive_number
from .polynomials import (INF, Point, coefficients, combine, exact_value, horner, inside,
                          roots_in, sign, trim)
from .problem import Problem
from .result import BreakEven, BreakEvenPieces, Roots
from .steps import MAX_STEPS, StepModel, Terms, too_many_steps

__all__ = ["NumericBreakEven", "Segment", "Mark", "Span", "solve_piecewise"]


# -- the axis as elements ------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    """An open interval of the solved axis where ``D`` has one sign (+1, -1, or 0
    throughout: a tie) and every term one regime."""

    lo: Point
    hi: Point
    sign: int
    regimes: Mapping[str, str]


@dataclass(frozen=True)
class Mark:
    """A point between two segments (a regime change, a root, a step) and the
    sign of ``D`` at it."""

    at: Point
    sign: int


@dataclass(frozen=True)
class Span:
    """An interval of the axis; an end is closed where ``D``'s sign holds there too."""

    lo: Point
    hi: Point
    lo_closed: bool = False
    hi_closed: bool = False

    def contains(self, v: np.ndarray) -> np.ndarray:
        above = (v >= self.lo.value) if self.lo_closed else (v > self.lo.value)
        below = (v <= self.hi.value) if self.hi_closed else (v < self.hi.value)
        return above & below


Elements = list[Segment | Mark]  # Segment, Mark, Segment, ..., Segment, in order along the axis


@dataclass(repr=False, kw_only=True)
class NumericBreakEven(BreakEven):
    """A break-even with every value fixed but the variable: roots, the faster
    set and ties exactly, with the regime of every term on each interval.

    ``root_values``, ``step_values``, ``faster_intervals()``,
    ``tie_intervals()`` (floats), ``is_faster(values)`` (vectorized) and
    ``regime_at(value)`` read it numerically.  ``steps``: where a block-scale
    count steps and the sign of ``baseline - lowp`` jumps across zero without
    vanishing (no root there, but faster on one side, slower on the other).
    """

    inverted: bool = False
    _roots: list[Point] = field(default_factory=list)
    _steps: list[Point] = field(default_factory=list)
    _faster: list[Span] = field(default_factory=list)
    _ties: list[Span] = field(default_factory=list)
    _regimes: list[tuple[Point, Point, dict[str, str]]] = field(default_factory=list)

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

    def _values(self, points: Sequence[Point]) -> Roots:
        return Roots(sorted((self._value(p) for p in points), key=float))

    @property
    def roots(self) -> Roots:
        """Break-even points in increasing order, exact where possible (printed
        as decimals; ``.exact`` prints them exactly)."""
        return self._values(self._roots)

    @property
    def root_values(self) -> np.ndarray:
        """The break-even points as floats, increasing."""
        return np.array(sorted(self._float(p) for p in self._roots), dtype=float)

    @property
    def steps(self) -> Roots:
        """Where a block-scale step takes low precision from slower to faster (or
        back) without equal times: exact values, increasing."""
        return self._values(self._steps)

    @property
    def step_values(self) -> np.ndarray:
        """``steps`` as floats, increasing."""
        return np.array(sorted(self._float(p) for p in self._steps), dtype=float)

    @property
    def crossing_values(self) -> np.ndarray:
        """Every value where low precision turns faster or slower: the roots and
        the steps, as floats, increasing."""
        return np.sort(np.concatenate([self.root_values, self.step_values]))

    def _interval(self, s: Span) -> sympy.Set:
        lo, hi = self._value(s.lo), self._value(s.hi)
        lo_closed, hi_closed = s.lo_closed, s.hi_closed
        if float(lo) > float(hi):
            lo, hi, lo_closed, hi_closed = hi, lo, hi_closed, lo_closed
        return sympy.Interval(lo, hi, not lo_closed, not hi_closed)

    @property
    def faster(self) -> sympy.Set:
        """The set of the variable where low precision is strictly faster."""
        return sympy.Union(*(self._interval(s) for s in self._faster)) if self._faster \
            else sympy.EmptySet

    @property
    def ties(self) -> list[sympy.Interval]:
        """Intervals on which both times are equal (e.g. both launch-bound)."""
        return [self._interval(s) for s in self._ties]

    @property
    def regimes(self) -> list[tuple[sympy.Interval, dict[str, str]]]:
        """``[(interval of the variable, {term name: regime})]``, in order."""
        out = []
        for a, b, reg in self._regimes:
            lo, hi = sorted((self._value(a), self._value(b)), key=float)
            out.append((sympy.Interval(lo, hi), reg))
        return out[::-1] if self.inverted else out

    def is_faster(self, values: Any) -> np.ndarray:
        """Vectorized membership in ``faster`` (positive finite values)."""
        v = positive_array(values, "values")
        if self.inverted:
            v = 1 / v
        hit = np.zeros(v.shape, dtype=bool)
        for s in self._faster:
            hit |= s.contains(v)
        return hit

    def _intervals(self, spans: Sequence[Span]) -> list[tuple[float, float]]:
        ends = ((self._float(s.lo), self._float(s.hi)) for s in spans)
        return sorted((b, a) if b < a else (a, b) for a, b in ends)

    def faster_intervals(self) -> list[tuple[float, float]]:
        """``faster`` as sorted float ``(low, high)`` pairs (``high`` may be inf)."""
        return self._intervals(self._faster)

    def tie_intervals(self) -> list[tuple[float, float]]:
        """``ties`` as sorted float ``(low, high)`` pairs (equal times throughout)."""
        return self._intervals(self._ties)

    def outcomes(self) -> list[tuple[float, float, str]]:
        """The positive axis cut at the roots and steps: ``[(low, high, outcome)]``
        with outcome ``faster``, ``slower`` or ``equal`` (low precision vs bf16)."""
        faster, ties = self.faster_intervals(), self.tie_intervals()
        cuts = sorted({0.0, INF, *self.crossing_values.tolist(),
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
        """(the first break-even value (a root or a step), the low-precision
        side's regime there in letters), or ``("always" | "never", "")``
        without one.

        >>> import roofline_sym as rs
        >>> m = rs.linear("tensorwise", fuse=True).on("h100")
        >>> solve_piecewise(Problem.of(m, rs.x, {rs.M: rs.x, rs.K: rs.x, rs.N: rs.x})).headline()
        ('3109', 'gemm C3  cast M5 L5')
        """
        crossings = self.crossing_values
        if len(crossings):
            return (f"{crossings[0]:.0f}",
                    RegimeSummary.of(self.regime_at(crossings[0])).letters())
        return ("always" if self.is_faster(np.array([1e6]))[0] else "never"), ""

    def summary(self) -> dict[str, Any]:
        """The result as one row of plain values: the variable, the roots (the
        first and all), the steps, the regime at the first in letters, the
        faster intervals (``None`` for an unbounded end) and whether floors were
        aligned."""
        roots = self.root_values.tolist()
        return {"variable": str(self.variable), "first_root": roots[0] if roots else None,
                "roots": roots, "steps": self.step_values.tolist(),
                "regime": self.headline()[1],
                "faster": [[lo, None if hi == INF else hi] for lo, hi in self.faster_intervals()],
                "aligned": self.aligned}

    def describe_faster(self) -> str:
        """``faster`` as readable text, e.g. ``(1093.83, oo)``."""
        return self._describe(self._faster)

    def regime_at(self, value: float) -> dict[str, str]:
        """The regime of every term at a value of the variable."""
        value = positive_number(value, "value")
        t = 1 / value if self.inverted else value
        for a, b, reg in self._regimes:
            if a.value <= t <= b.value:
                return reg
        raise InputError(f"{value} is outside the solved axis")

    def subs(self, values: Mapping[str | sympy.Symbol, Any]) -> "NumericBreakEven":
        """The same answer (every value is fixed already); ``values`` may repeat
        hardware symbols the model does not use, nothing else."""
        _, substitution, _ = self._specialised(values)
        return solve_piecewise(Problem.of(self.model, self.variable, substitution))

    # -- display ---------------------------------------------------------------
    def _describe(self, spans: Sequence[Span]) -> str:
        if not spans:
            return "nowhere"
        out = []
        for s in sorted(spans, key=lambda s: min(self._float(s.lo), self._float(s.hi))):
            (lo, lo_closed), (hi, hi_closed) = sorted(
                [(self._float(s.lo), s.lo_closed), (self._float(s.hi), s.hi_closed)])
            out.append(f"{'[' if lo_closed else '('}{lo:.6g}, "
                       f"{'oo' if hi == INF else f'{hi:.6g}'}{']' if hi_closed else ')'}")
        return " u ".join(out)

    def __str__(self) -> str:
        v = self.variable
        lines = self._head()
        for value in self.root_values:
            lines.append(f"  {v}* = {value:.6g}   [{self._regime_text(self.regime_at(value))}]")
        if not self._roots:
            lines.append("  no break-even point")
        for value in self.step_values:
            lines.append(f"  step at {v} = {value:.6g}: a block-scale count steps and low "
                         "precision changes side without equal times")
        lines.append(f"  faster: {self._describe(self._faster)}")
        if self._ties:
            lines.append(f"  tie (equal times): {self._describe(self._ties)}")
        return "\n".join(lines)

    def _latex_pieces_(self) -> BreakEvenPieces:
        return self._pieces(
            roots=tuple((float(v), self._regime_words(self.regime_at(v)))
                        for v in self.root_values),
            steps=tuple(float(v) for v in self.step_values),
            outcomes=tuple(self.outcomes()))


# -- one sweep: the axis cut where a term changes piece --------------------------------
def _near(p: Point, q: Point) -> bool:
    if q.value == INF:
        return p.value == INF
    return abs(p.value - q.value) <= 1e-12 * abs(q.value)  # relative: 1/BW is ~1e-13


def _sign_between(diff: tuple[Fraction, ...], lo: Point, hi: Point) -> int:
    """The sign of the polynomial ``diff`` inside ``(lo, hi)`` (no root there), exactly."""
    return sign(exact_value(diff, Fraction(inside(lo.value, hi.value))))


@lru_cache(maxsize=4096)
def _meeting_points(c1: tuple[Fraction, ...], c2: tuple[Fraction, ...]) -> tuple[Point, ...]:
    """Where two pieces are equal on the positive axis (the same pairs recur in
    the bounds and the blocks of one solve, and across solves)."""
    return tuple(roots_in(combine([c1, c2], [1, -1]), 0.0, INF))


def _sweep(terms: Terms, lo: Point, hi: Point) -> Elements:
    """The elements strictly inside ``(lo, hi)`` of terms whose pieces are
    polynomials there: segments of one sign and regime, and the marks between
    them (where a term changes piece, where ``D`` has a root)."""
    floats = [(name, side, [(r, c, [float(a) for a in c]) for r, c in polys])
              for name, side, polys in terms]
    cuts: dict[float, Point] = {}
    for _, _, polys in floats:
        for (_, c1, _), (_, c2, _) in combinations(polys, 2):
            for p in _meeting_points(c1, c2):
                if lo.value < p.value < hi.value:
                    cuts.setdefault(p.value, p)
    bounds = [lo] + [cuts[k] for k in sorted(cuts)] + [hi]
    out: Elements = []
    zero_at_end = False  # D vanishes at the right end of the last interval
    for a, b in zip(bounds, bounds[1:]):
        if b.value <= a.value:
            continue
        t = inside(a.value, b.value)
        here: Elements
        active, chosen, sides = {}, [], []
        for name, side, polys in floats:
            best = max(polys, key=lambda p: horner(p[2], t))
            active[name] = best[0]
            chosen.append(best[1])
            sides.append(side)
        diff = combine(chosen, sides)
        if not diff:  # a tie: D vanishes on the whole interval
            here, zero_at_start, end_zero = [Segment(a, b, 0, active)], True, True
        else:
            found = roots_in(diff, a.value, b.value)
            inner = sorted((p for p in found if not _near(p, a) and not _near(p, b)),
                           key=lambda p: p.value)
            zero_at_start = any(_near(p, a) for p in found)
            end_zero = any(_near(p, b) for p in found)
            edges = [a] + inner + [b]
            here = []
            for x, y in zip(edges, edges[1:]):
                if here:
                    here.append(Mark(x, 0))
                here.append(Segment(x, y, _sign_between(diff, x, y), active))
        if out:  # the cut between the last interval and this one: D is continuous there
            left = out[-1]
            zero = zero_at_end or zero_at_start or left.sign == 0 or here[0].sign == 0
            out.append(Mark(a, 0 if zero else left.sign))
        out.extend(here)
        zero_at_end = end_zero
    return out


# -- the exact solve with block-scale steps --------------------------------------------
def _runs(elements: Elements, keep: Callable[[int], bool]) -> list[tuple[Point, Point]]:
    """The open intervals covered by runs of elements whose sign ``keep`` accepts."""
    out: list[tuple[Point, Point]] = []
    start: Point | None = None
    end: Point | None = None
    for e in elements + [None]:
        if e is not None and keep(e.sign):
            if start is None:
                start = e.lo if isinstance(e, Segment) else e.at
            end = e.hi if isinstance(e, Segment) else e.at
            continue
        if start is not None and end is not None and end.value > start.value:
            out.append((start, end))
        start = None
    return out


def _overlaps(a: list[tuple[Point, Point]], b: list[tuple[Point, Point]]
              ) -> list[tuple[Point, Point]]:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo = lo1 if lo1.value >= lo2.value else lo2
            hi = hi1 if hi1.value <= hi2.value else hi2
            if hi.value > lo.value:
                out.append((lo, hi))
    return out


def _gaps(covered: list[tuple[Point, Point]]) -> list[tuple[Point, Point]]:
    """The closed intervals of the positive axis that no open interval covers."""
    out, current = [], Point(0.0)
    for lo, hi in sorted(covered, key=lambda s: s[0].value):
        # a gap, or one uncovered point between two open intervals that meet
        if lo.value > current.value or (lo.value == current.value > 0):
            out.append((current, lo))
        if hi.value > current.value:
            current = hi
    if current.value < INF:
        out.append((current, Point(INF)))
    return out


def _blocks(model: StepModel, lo: Point, hi: Point, budget: int,
            zeros: set[tuple[float, tuple[Fraction, ...]]]) -> Elements:
    """The exact elements of ``[lo, hi]``: split at every step, each block solved
    with its counts fixed, the sign of ``D`` at every step evaluated exactly
    (``zeros``: points where both bounds of ``D`` vanish, so ``D`` does too)."""
    if hi.value == INF:
        raise too_many_steps(model.variable, lo, hi, budget)

    def sign_at(p: Point, hits: dict[int, int]) -> int:
        return 0 if (p.value, p.poly) in zeros else model.sign_at(p, hits)

    out: Elements = [Mark(lo, sign_at(lo, {}))] if lo.value > 0 else []
    if hi.value <= lo.value:
        return out
    points = [(lo, {}), *model.breakpoints(lo, hi, budget), (hi, {})]
    for (p, _), (q, hits) in zip(points, points[1:]):
        values = model.atom_values(_midpoint(p, q))
        out.extend(_sweep(model.fixed(values), p, q))
        out.append(Mark(q, sign_at(q, hits)))
    return out


def _midpoint(a: Point, b: Point) -> Fraction:
    ra, rb = a.fraction, b.fraction
    if ra is not None and rb is not None:
        return (ra + rb) / 2
    return Fraction(inside(a.value, b.value))


def _splice(elements: Elements, lo: Point, hi: Point, inner: Elements) -> Elements:
    """``elements`` with ``[lo, hi]`` replaced by ``inner`` (a segment across an end
    is cut there)."""
    out: Elements = []
    inserted = False
    for e in elements:
        start = e.lo.value if isinstance(e, Segment) else e.at.value
        end = e.hi.value if isinstance(e, Segment) else e.at.value
        before = end <= lo.value if isinstance(e, Segment) else end < lo.value
        if before:
            out.append(e)
            continue
        if isinstance(e, Segment) and start < lo.value:
            out.append(replace(e, hi=lo))
        if not inserted:
            out.extend(inner)
            inserted = True
        if isinstance(e, Segment) and end > hi.value:
            out.append(e if start >= hi.value else replace(e, lo=hi))
        elif isinstance(e, Mark) and start > hi.value:
            out.append(e)
    return out


def _exact_elements(problem: Problem) -> Elements:
    """The axis of a problem with block-scale steps, exactly.

    The ``low`` and ``high`` bounds of ``D`` (no steps needed) share its sign
    wherever they agree: there the axis is the low bound's (its regimes those
    of shapes a block away at most).  Where they do not, the blocks are split at
    their steps and solved exactly (``_blocks``).
    """
    model = StepModel.of(problem)
    origin = Point(0.0), Point(INF)
    low = _sweep(model.envelope("low"), *origin)
    high = _sweep(model.envelope("high"), *origin)
    above = _runs(low, lambda s: s > 0)  # D >= D_low > 0
    below = _runs(high, lambda s: s < 0)  # D <= D_high < 0
    ties = _overlaps(_runs(low, lambda s: s == 0), _runs(high, lambda s: s == 0))
    # the bounds are continuous: at an end of a run where D_low > 0 (or of a tie)
    # D_low = 0 <= D; at an end of one where D_high < 0, D <= 0; at both, D = 0
    def ends(runs: list[tuple[Point, Point]]) -> set[tuple[float, tuple[Fraction, ...]]]:
        return {(p.value, p.poly) for run in runs for p in run if 0 < p.value < INF}
    zeros = ends(above + ties) & ends(below + ties)
    elements, budget = low, MAX_STEPS
    exact: set[int] = set()
    for lo, hi in _gaps(above + below + ties):
        inner = _blocks(model, lo, hi, budget, zeros)
        budget -= len(inner)
        exact.update(map(id, inner))
        elements = _splice(elements, lo, hi, inner)
    # outside the gaps D's sign is settled: a root of the bound there is float noise
    for i, e in enumerate(elements):
        if isinstance(e, Mark) and e.sign == 0 and id(e) not in exact:
            left, right = elements[i - 1], elements[i + 1]
            if left.sign == right.sign != 0:
                elements[i] = Mark(e.at, left.sign)
    return elements


# -- the solve -------------------------------------------------------------------------
def _plain_terms(problem: Problem) -> tuple[Terms, bool]:
    """The pieces as polynomials in the variable, or in its reciprocal (``True``)."""
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
                raise InputError(f"cannot solve for {var}: term {term.name} is not polynomial "
                                 f"in {var} or 1/{var}")
            polys.append((regime, trim(c)))
        terms.append((term.name, +1 if term.side == "baseline" else -1, polys))
    return terms, inverted


def _span(run: Elements) -> Span:
    first, last = run[0], run[-1]
    return Span(first.lo if isinstance(first, Segment) else first.at,
                last.hi if isinstance(last, Segment) else last.at,
                isinstance(first, Mark), isinstance(last, Mark))


def _spans(elements: Elements, keep: Callable[[int], bool], segment: bool = False
           ) -> list[Span]:
    """Maximal runs of elements whose sign ``keep`` accepts (with a segment if
    ``segment``), as spans."""
    out, run = [], []
    for e in elements + [None]:
        if e is not None and keep(e.sign):
            run.append(e)
            continue
        if run and (not segment or any(isinstance(r, Segment) for r in run)):
            out.append(_span(run))
        run = []
    return out


def solve_piecewise(problem: Problem) -> NumericBreakEven:
    """Solve a problem with only the variable left, interval by interval (and
    block by block where block-scale steps move the sign)."""
    if problem.floors:
        elements, inverted = _exact_elements(problem), False
    else:
        terms, inverted = _plain_terms(problem)
        elements = _sweep(terms, Point(0.0), Point(INF))
    roots, steps = [], []
    for i, e in enumerate(elements):
        if isinstance(e, Mark):
            left, right = elements[i - 1], elements[i + 1]
            if e.sign == 0 and not (left.sign == 0 and right.sign == 0):
                roots.append(e.at)  # a crossing, a touch, or the end of a tie
            elif e.sign != 0 and left.sign * right.sign < 0:
                steps.append(e.at)
    regimes: list[tuple[Point, Point, dict[str, str]]] = []
    for e in elements:
        if isinstance(e, Segment):
            if regimes and regimes[-1][2] == e.regimes:
                regimes[-1] = (regimes[-1][0], e.hi, regimes[-1][2])
            else:
                regimes.append((e.lo, e.hi, dict(e.regimes)))
    method = ("numeric (piecewise, exact per interval and per block-scale step)"
              if problem.floors else "numeric (piecewise, exact per interval)")
    return NumericBreakEven(problem.variable, problem.model, problem.substitution, method,
                            False, inverted=inverted, _roots=roots, _steps=steps,
                            _faster=_spans(elements, lambda s: s > 0),
                            _ties=_spans(elements, lambda s: s == 0, segment=True),
                            _regimes=regimes)
