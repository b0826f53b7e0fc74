"""The symbolic break-even: a closed form in one regime, and when it holds.

With K, N or hardware left symbolic, a full case split over every regime
runs to thousands of pieces, so the solve takes one regime (by default the
one large shapes live in: GEMMs compute-bound, casts bandwidth-bound,
zero-byte kernels at the launch floor) and attaches the conditions under
which it holds.  ``solve`` chooses between this and the piecewise solve.

>>> import roofline_sym as rs
>>> m = rs.linear("dynamic", fuse=True, preset="seed")
>>> be = solve(Problem.of(m, rs.M, {}))
>>> be.symbolic, len(be.conditions)
(True, 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, NamedTuple, NoReturn, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..errors import InputError
from ..validate import InputTypeError, choice, show, unknown_name
from ..model.term import REGIMES, Term, TermId
from .piecewise import NumericBreakEven, solve_piecewise
from .problem import Pieces, Problem
from .result import BreakEven, BreakEvenPieces, Roots

__all__ = ["SymbolicBreakEven", "RegimeCondition", "solve", "solve_closed_form"]


class RegimeCondition(NamedTuple):
    """``term`` is in regime ``chosen`` rather than ``other``: ``relation`` is
    ``chosen piece >= other piece``."""

    term: TermId
    chosen: str
    other: str
    relation: sympy.Ge

    @property
    def label(self) -> str:
        return f"{self.term}: {self.chosen} >= {self.other}"


@dataclass(repr=False, kw_only=True)
class SymbolicBreakEven(BreakEven):
    """A closed-form break-even in one regime (``regime_choice``: term name ->
    regime), valid while its ``conditions`` hold.

    ``closed_form``: the root (None when the one-regime difference is a cubic:
    ``candidates`` keeps every root); ``slope``: ``a`` in ``D = a v + b``, so
    low precision is faster iff ``a > 0`` and ``v > v*`` (or ``a < 0`` and
    ``v < v*``).  ``subs`` specialises; numeric accessors need that first.
    """

    closed_form: sympy.Expr | None = None
    slope: sympy.Expr | None = None
    regime_choice: dict[str, str] = field(default_factory=dict)
    regime_conditions: list[RegimeCondition] = field(default_factory=list)
    difference: sympy.Expr | None = None
    regime_request: Any = None
    candidates: list[sympy.Expr] = field(default_factory=list)

    symbolic: ClassVar[bool] = True

    @property
    def conditions(self) -> list[tuple[str, sympy.Expr]]:
        """``[(label, Ge(chosen piece, other piece))]``: each holds in the regime."""
        return [(c.label, c.relation) for c in self.regime_conditions]

    @property
    def roots(self) -> Roots:
        """Every candidate root (one for a linear difference)."""
        return Roots(self.candidates)

    @property
    def faster(self) -> sympy.Set:
        """The set of the variable where low precision is strictly faster,
        within the regime: the difference of the regime's times is positive
        and every regime condition holds."""
        if self.difference is None:
            raise InputError("faster needs the difference of the regime's times; this result "
                             "was made without one")
        within = sympy.And(self.difference > 0, *(c for _, c in self.conditions))
        return sympy.ConditionSet(self.variable, within, sympy.Interval.open(0, sympy.oo))

    @property
    def ties(self) -> list[sympy.Interval]:
        """None found: one regime has no interval of equal times to report."""
        return []

    @property
    def regimes(self) -> list[tuple[sympy.Interval, dict[str, str]]]:
        return [(sympy.Interval.open(0, sympy.oo), dict(self.regime_choice))]

    # numbers need values for every symbol
    def _refuse(self, what: str) -> NoReturn:
        raise InputError(f"{what} needs numbers: this result is symbolic; specialise it "
                         "with .subs({...}) first")

    @property
    def root_values(self) -> np.ndarray:
        self._refuse("root_values")

    def is_faster(self, values: Any) -> np.ndarray:
        self._refuse("is_faster")

    def faster_intervals(self) -> list[tuple[float, float]]:
        self._refuse("faster_intervals")

    def tie_intervals(self) -> list[tuple[float, float]]:
        self._refuse("tie_intervals")

    def describe_faster(self) -> str:
        self._refuse("describe_faster")

    def regime_at(self, value: float) -> dict[str, str]:
        self._refuse("regime_at")

    def subs(self, values: Mapping[str | sympy.Symbol, Any]) -> BreakEven:
        """Specialise (symbols to numbers); a fully numeric result is solved in full.

        A closed form is used when its regime conditions hold at the root; the
        ``method`` says whether it did, and the full piecewise solve of the
        specialised model always backs it.
        """
        mapping, substitution, left = self._specialised(values)
        # a fully numeric model is solved in full; one still symbolic keeps the regime
        result = solve(Problem.of(self.model, self.variable, substitution),
                       self.regime_request if left else None)
        if isinstance(result, SymbolicBreakEven):
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
    def __str__(self) -> str:
        v = self.variable
        lines = self._head()
        if self.closed_form is not None:
            lines.append(f"  {v}* = {self.closed_form}")
        else:
            lines.append(f"  {len(self.candidates)} candidate roots (a cubic); see .roots")
        if self.slope is not None:
            lines.append(f"  low precision faster iff a > 0 and {v} > {v}*, or a < 0 and "
                         f"{v} < {v}*; a = {self.slope}")
        lines.append(f"  regime: {self._regime_text(self.regime_choice)}")
        lines.append(f"  conditions: {len(self.conditions)} (see .conditions)")
        return "\n".join(lines)

    def _latex_pieces_(self) -> BreakEvenPieces:
        def what(t: TermId) -> str:
            return (f"{self._side_label(t.side)} GEMM" if t.kind == "gemm" else
                    "cast" if t.kind == "cast" else f"bf16 {t.kind}")

        return self._pieces(
            closed_form=self.closed_form, slope=self.slope,
            regime=self._regime_words(self.regime_choice) if self.regime_choice else "",
            conditions=tuple((c.relation.lhs, c.relation.rhs, what(c.term), ".".join(c.term.detail),
                              f"{c.chosen} >= {c.other}") for c in self.regime_conditions))


def solve(problem: Problem, regime: Any = None) -> NumericBreakEven | SymbolicBreakEven:
    """The piecewise solve where only the variable is left and no regime is
    asked for; else the closed form in one regime."""
    if problem.numeric and regime is None:
        return solve_piecewise(problem)
    return solve_closed_form(problem, regime)


# -- the one-regime solve -------------------------------------------------------------
def _regime_request(regime: Any) -> dict[tuple[str, ...], str]:
    """The user's ``{term name or dotted prefix: regime}``, keys split into parts
    and checked."""
    if regime is not None and not isinstance(regime, Mapping):
        raise InputTypeError("regime must be a mapping such as {'lowp.cast': 'memory', "
                             "'gemm': 'compute'} (keys: term names or dotted prefixes), "
                             f"not {show(regime)}")
    out = {}
    for key, want in (regime or {}).items():
        if not isinstance(key, str):
            raise InputTypeError(f"regime keys are term names or dotted prefixes, not "
                                 f"{show(key)}")
        choice(want, REGIMES, f"regime for {key}:")
        out[tuple(key.split("."))] = want
    return out


def _check_regime(request: Mapping[tuple[str, ...], str], terms: Sequence[Term]) -> None:
    """Every requested key names some terms, and some of them have the regime."""
    for key, want in request.items():
        hit = [t for t in terms if _requested(t.id, {key: want})]
        if not hit:
            raise unknown_name("regime key (matches no term)", ".".join(key),
                               [t.name for t in terms])
        if not any(want in dict(t.pieces) for t in hit):
            raise InputError(f"regime {'.'.join(key)!r}: no matching term can be {want}-bound")


def _default_regime(term: Term, pieces: Pieces) -> str:
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


def _tidy(expr: sympy.Expr) -> sympy.Expr:
    """Collect a sum over the memory rate and the launch floor, each part factored."""
    rates = [1 / (S.mem_bw() * S.mem_efficiency()), S.launch_overhead()]
    return sympy.collect(expr, rates, func=sympy.factor_terms)


def solve_closed_form(problem: Problem, regime: Any = None) -> SymbolicBreakEven:
    """Solve in one regime: ``regime`` (term names or dotted prefixes to
    regimes) where given, else the large-shape one."""
    var = problem.variable
    request = _regime_request(regime)
    terms = problem.aligned_terms()  # one regime cannot follow block-scale steps
    _check_regime(request, [t for t, _ in terms])
    choice, chosen_expr = {}, {}
    for term, ps in terms:
        want = _requested(term.id, request)
        regimes = dict(ps)
        pick = want if want in regimes else _default_regime(term, ps)
        choice[term.name] = pick
        chosen_expr[term.name] = regimes[pick]
    base = sympy.Add(*(chosen_expr[t.name] for t, _ in terms if t.side == "baseline"))
    lowp = sympy.Add(*(chosen_expr[t.name] for t, _ in terms if t.side == "lowp"))
    diff = base - lowp
    expanded = sympy.expand(diff)
    back: Callable[[sympy.Expr], sympy.Expr]  # a root in poly_var as a value of var
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
        raise InputError(f"in the regime solved, the two times do not depend on {var}: "
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
            raise InputError(f"no closed form for a degree-{poly.degree()} break-even in {var}")
    conditions = [RegimeCondition(term.id, choice[term.name], r,
                                  # unevaluated: two numeric pieces stay a relation
                                  sympy.Ge(chosen_expr[term.name], e, evaluate=False))
                  for term, ps in terms for r, e in ps if r != choice[term.name]]
    return SymbolicBreakEven(var, problem.model, problem.substitution,
                             "symbolic (closed form in one regime)", problem.floors,
                             closed_form=closed, slope=slope, regime_choice=choice,
                             regime_conditions=conditions, difference=diff,
                             regime_request=regime, candidates=candidates)


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
