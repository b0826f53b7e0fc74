"""A model's terms compiled once for numbers: evaluation over arrays of shapes.

``compile_terms(terms)`` turns a model's terms into numpy code, once per
structure of the terms (cached): a bound model (``Linear.on(hw)``) reuses the
compilation of its unbound terms and passes its numbers as arguments, so
sweeping many GPUs compiles once per recipe and mode.

How the code is made:

1. every subexpression free of the shapes (``2/(P_fp8 eta_fp8)``,
   ``t_launch``) becomes a *coefficient*, computed once per call (exactly,
   from ``Hardware.parameters``, for a bound model);
2. what is left becomes numpy operations, each made once (value numbering);
   sums, products and maxima share their common parts (``M*K*N`` after
   ``M*K``; ``KM + KN + 2MN`` after ``KM + KN + MN``; ``Max(A, L)`` in
   ``Max(A, B1, L)`` and ``Max(A, B2, L)``); a term that occurs k times is
   computed once and its k goes into its coefficients; an output request
   (``outputs=("speedup",)``) runs only the operations it needs;
3. the operations run over chunks of ``chunk`` shapes, in place, in a few
   reused scratch buffers (``n_buffers``) that stay in cache, writing into
   the preallocated outputs; inputs are checked chunk by chunk.  The buffers
   are kept per thread for the next call (``release_scratch`` lets them go).

Arrays that are not numpy arrays but implement the numpy protocols (dask)
take the same operations elementwise, without chunks or ``out=``, so they
stay lazy.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise").on("h100")
>>> c = m.compiled
>>> round(float(c.evaluate(8192, 8192, 8192, outputs=("lowp_gemm_time",))["lowp_gemm_time"]), 6)
0.002463
>>> speedup_only, everything = c.program(("speedup",)), c.program()
>>> speedup_only.n_ops < everything.n_ops, speedup_only.n_buffers < 16
(True, True)
"""

from __future__ import annotations

import numbers
import threading
from collections import Counter
from fractions import Fraction
from functools import cached_property, lru_cache, reduce
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..validate import (SHAPE_MAX, InputTypeError, broadcast_shape, hardware_array,
                        positive_array, show, unknown_name)
from .term import REGIMES, Term, TermId

__all__ = ["CompiledTerms", "BoundTerms", "Program", "compile_terms", "release_scratch",
           "GROUPS", "OUTPUTS", "CHUNK"]

# the totals a model sums its terms into: (side, group)
GROUPS = (("baseline", "gemm"), ("baseline", "overhead"), ("lowp", "gemm"), ("lowp", "overhead"))
# the outputs of evaluate: each group's total, each side's total, their ratio
OUTPUTS = (
    "baseline_gemm_time",
    "baseline_overhead_time",
    "lowp_gemm_time",
    "lowp_overhead_time",
    "baseline_time",
    "lowp_time",
    "speedup",
)
# shapes per chunk: a dozen scratch buffers of this many float64 stay in the
# last-level cache, and each numpy call does enough work to hide its overhead
CHUNK = 1 << 16

_SHAPES = ("M", "K", "N")
_SHAPE_SYMBOLS = dict(zip(S.SHAPE_SYMBOLS, _SHAPES))
_UFUNCS = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "negative", "ceil",
           "floor", "exp", "log", "absolute", "sqrt", "power", "reciprocal")
# commutative, associative operations built as forms (shared parts reused)
_FORMS = ("add", "multiply", "maximum", "minimum")
_FUNCTIONS = {sympy.ceiling: "ceil", sympy.floor: "floor", sympy.exp: "exp",
              sympy.log: "log", sympy.Abs: "absolute"}


def _max(*args: Any) -> Any:
    return reduce(np.maximum, args)


def _min(*args: Any) -> Any:
    return reduce(np.minimum, args)


# lambdify of coefficients and of rare functions: Max/Min of arrays of any shapes
_LAMBDIFY_MODULES = [{"Max": _max, "Min": _min}, "numpy"]


# -- the program ------------------------------------------------------------------------
def _is_vector(operand: int | str) -> bool:
    """Operands: an int is a computed value; a str an input (M, K, N), a
    coefficient (c3) or a literal number (2.0); only the latter two are scalars."""
    return isinstance(operand, int) or operand in _SHAPES


# a form's operands, each with its count, in _order
_Items = tuple[tuple[int | str, int], ...]
# per form function, the forms the expressions need: {members: planned forms containing it}
_Planned = Mapping[str, dict[frozenset[tuple[Any, int]], int]]


class _Builder:
    """Sympy expressions in the shapes and coefficients -> numpy operations.

    Value numbering makes the same operation on the same operands once.  Sums
    and products are *forms* (multisets of operands) built from the largest
    form that another expression needs too (``planned``): with ``KM + KN + MN``
    needed anyway, ``KM + KN + 2MN`` costs one addition, and ``M*K*N`` one
    product after ``M*K``.
    """

    def __init__(self, coefficients: "_Coefficients", planned: _Planned | None = None):
        self.coef = coefficients
        # (function, value, operands)
        self.ops: list[tuple[str, int, tuple[int | str, ...]]] = []
        self.calls: list[Callable[..., Any]] = []
        self._memo: dict[tuple[str, tuple[int | str, ...]], int] = {}
        self.env: dict[sympy.Symbol, int | str] = {}
        self.planning = planned is None
        self.planned: _Planned = {f: {} for f in _FORMS} if planned is None else planned
        self._forms: dict[tuple[str, _Items], int | str] = {}
        self._form_of: dict[int | str, tuple[str, _Items]] = {}
        # what a value is, independent of how it was built (forms: their members),
        # so the forms planned by one builder are recognised by the next
        self._keys: dict[int, Any] = {}

    def key(self, operand: int | str) -> Any:
        return self._keys[operand] if isinstance(operand, int) else operand

    def op(self, fn: str, *args: int | str) -> int | str:
        if fn in ("add", "multiply", "maximum", "minimum"):  # commutative: one order
            args = tuple(sorted(args, key=_order))
        if not any(_is_vector(a) for a in args) and fn != "call":
            return self.coef.scalar_op(fn, args)
        key = (fn, args)
        if key not in self._memo:
            v = self._memo[key] = len(self.ops)
            self.ops.append((fn, v, args))
            self._keys[v] = (fn, tuple(self.key(a) for a in args))
        return self._memo[key]

    def chain(self, fn: str, operands: Sequence[int | str]) -> int | str:
        """``fn`` over ``operands``: a form (shared parts reused) where it is one."""
        operands = sorted(operands, key=_order)
        vectors = [o for o in operands if _is_vector(o)]
        if fn in ("maximum", "minimum") and vectors:
            scalars = [o for o in operands if not _is_vector(o)]
            merged = [reduce(lambda a, b: self.op(fn, a, b), scalars)] if scalars else []
            return self.form(fn, dict.fromkeys(vectors + merged, 1))
        return reduce(lambda a, b: self.op(fn, a, b), operands)

    # -- sums and products as forms -------------------------------------------------------
    def form(self, fn: str, counts: Mapping[int | str, int], top: bool = True) -> int | str:
        """The sum (``add``), product (``multiply``), ``maximum`` or ``minimum`` of
        operands (at least one a vector), each ``counts[o]`` times."""
        flat: Counter[int | str] = Counter()
        for o, k in counts.items():  # operands that are forms themselves: their parts
            kind, items = self._form_of.get(o, (None, ()))
            if kind == fn:
                for p, j in items:
                    flat[p] += j * k
            else:
                flat[o] += k
        if fn in ("maximum", "minimum"):  # the largest of x and x is x
            flat = Counter(dict.fromkeys(flat, 1))
        items = tuple(sorted(flat.items(), key=lambda kv: _order(kv[0])))
        key = (fn, items)
        if key in self._forms:
            return self._forms[key]
        members = frozenset((self.key(o), k) for o, k in items)
        size = sum(flat.values())
        if self.planning and top and size > 1:  # what the expressions need, not the parts
            self.planned[fn][members] = 1
        same = {k for _, k in items}
        if size == 1:
            result = items[0][0]
        elif len(items) == 1 and fn != "add":
            x, k = items[0]
            result = (self.op("multiply", x, x) if k == 2 else
                      self.op("power", x, self.coef.literal(k)))
        elif fn == "add" and len(same) == 1 and min(same) > 1:  # k a + k b = k (a + b)
            inner = self.form(fn, dict.fromkeys(flat, 1), False)
            result = self.op("multiply", inner, self.coef.literal(same.pop()))
        else:
            part = self._best_part(fn, flat) or self._first_part(fn, flat, items)
            rest = flat - Counter(part)
            result = self.op(fn, self.form(fn, part, False), self.form(fn, rest, False))
        self._forms[key] = result
        if size > 1 and isinstance(result, int) and result not in self._form_of:
            self._form_of[result] = (fn, items)
            self._keys[result] = ("form", fn, members)
        return result

    def _cost(self, fn: str, flat: Mapping[int | str, int]) -> int:
        """Operations to build a form from scratch (none if built)."""
        items = tuple(sorted(flat.items(), key=lambda kv: _order(kv[0])))
        if sum(flat.values()) <= 1 or (fn, items) in self._forms:
            return 0
        if fn == "add":  # one multiplication per distinct repeat count
            return len(flat) - 1 + len({k for k in flat.values() if k > 1})
        return sum(flat.values()) - 1 if fn == "multiply" else len(flat) - 1

    def _best_part(self, fn: str, flat: Counter[int | str]) -> dict[int | str, int] | None:
        """The planned form inside ``flat`` that makes it cheapest (on a tie,
        the one most planned forms contain), or None if none helps."""
        by_key = {self.key(o): o for o in flat}
        best: dict[int | str, int] | None = None
        best_score = (self._cost(fn, flat), -1)
        for members, shared in self.planned[fn].items():
            if not all(m in by_key and flat[by_key[m]] >= k for m, k in members):
                continue
            part = {by_key[m]: k for m, k in members}
            rest = flat - Counter(part)
            if not rest:
                continue
            score = (self._cost(fn, part) + self._cost(fn, rest) + 1, -shared)
            if score < best_score:
                best, best_score = part, score
        return best

    @staticmethod
    def _first_part(fn: str, flat: Counter[int | str], items: _Items) -> dict[int | str, int]:
        """Without a planned part: operands repeated equally often together (a sum
        multiplies them once), else the first operand."""
        if fn == "add":
            for k in sorted({k for k in flat.values() if k > 1}):
                group = {o: j for o, j in items if j == k}
                if 1 < len(group) < len(flat) or len(group) == 1 and len(flat) > 1:
                    return group
        return dict(items[:1])

    # -- expressions ----------------------------------------------------------------------
    def expr(self, e: sympy.Expr) -> int | str:
        if e in self.env:
            return self.env[e]
        if e.is_Number:
            return self.coef.literal(e)
        if e.is_Add:
            counts: Counter[int | str] = Counter()
            scalars: list[int | str] = []
            negative: list[int | str] = []
            for a in e.args:
                if a.could_extract_minus_sign():
                    negative.append(self.expr(-a))
                    continue
                k, rest = a.as_coeff_Mul()
                if k.is_Integer and k > 1 and rest.has(*S.SHAPE_SYMBOLS):
                    counts[self.expr(rest)] += int(k)
                    continue
                o = self.expr(a)
                if _is_vector(o):
                    counts[o] += 1
                else:
                    scalars.append(o)
            parts = ([self.form("add", counts)] if counts else []) + scalars
            out = self.chain("add", parts) if parts else None
            for n in negative:
                out = self.op("negative", n) if out is None else self.op("subtract", out, n)
            if out is None:  # a sum has two terms or more
                raise AssertionError(f"no operation for the sum {e}")
            return out
        if e.is_Mul:
            coeff, factors = e.as_coeff_mul()
            counts, scalars, den = Counter(), [], []
            for f in factors:
                if f.is_Pow and f.exp.is_Number and f.exp < 0:
                    den.append(self.expr(f.base ** -f.exp))
                    continue
                base, k = (f.base, int(f.exp)) if f.is_Pow and f.exp.is_Integer else (f, 1)
                o = self.expr(base)
                if _is_vector(o):
                    counts[o] += k
                else:
                    scalars.append(self.expr(f))
            p, q = (abs(coeff.p), coeff.q) if coeff.is_Rational else (abs(coeff), 1)
            if p != 1:
                scalars.append(self.coef.literal(p))
            out = self.form("multiply", counts) if counts else None
            if scalars:
                s = self.chain("multiply", scalars)
                out = s if out is None else self.op("multiply", out, s)
            out = self.coef.literal(1) if out is None else out
            for d in den:
                out = self.op("divide", out, d)
            if q != 1:  # divide by the integer: exact where the quotient is (ceilings)
                out = self.op("divide", out, self.coef.literal(q))
            return self.op("negative", out) if coeff < 0 else out
        if e.is_Pow and e.exp.is_Number:
            x = e.exp
            if x == -1:
                return self.op("reciprocal", self.expr(e.base))
            if x == sympy.Rational(1, 2):
                return self.op("sqrt", self.expr(e.base))
            base = self.expr(e.base)
            if x.is_Integer and x > 0 and _is_vector(base):
                return self.form("multiply", {base: int(x)})
            return self.op("power", base, self.coef.literal(x))
        if isinstance(e, (sympy.Max, sympy.Min)):
            return self.chain("maximum" if isinstance(e, sympy.Max) else "minimum",
                              [self.expr(a) for a in e.args])
        fn = _FUNCTIONS.get(type(e))
        if fn is not None:
            return self.op(fn, self.expr(e.args[0]))
        # anything else (Piecewise, Mod, ...): lambdified, evaluated per chunk
        args = sorted(e.free_symbols, key=str)
        self.calls.append(sympy.lambdify(args, e, modules=_LAMBDIFY_MODULES))
        return self.op("call", f"f{len(self.calls) - 1}", *(self.expr(a) for a in args))

    # -- a term counted k times --------------------------------------------------------------
    def scaled(self, v: int | str, k: int, uses: Counter[int]) -> int | str:
        """``k * v`` for a term's time ``v``: where ``v`` is a maximum of pieces
        that are each vectors times coefficients plus coefficients (used nowhere
        else), ``k`` goes into the coefficients (``3 Max(c X + d, L) =
        Max(3c X + 3d, 3L)``), at no cost; else one multiplication."""
        if self._scalable(v, uses, top=True):
            return self._scale(v, k)
        return self.op("multiply", v, self.coef.literal(k))

    def _scalable(self, v: int | str, uses: Counter[int], top: bool = False) -> bool:
        if not _is_vector(v):
            return True
        if not isinstance(v, int) or (not top and uses[v] != 1):
            return False
        fn, _, args = self.ops[v]
        if fn == "multiply":
            return any(not _is_vector(a) for a in args)
        return fn in ("maximum", "add") and all(self._scalable(a, uses) for a in args)

    def _scale(self, v: int | str, k: int) -> int | str:
        literal = self.coef.literal(k)
        if not isinstance(v, int):  # a scalar (_scalable refuses the shapes themselves)
            return self.coef.scalar_op("multiply", (v, literal))
        fn, _, args = self.ops[v]
        if fn == "multiply":
            return self.op("multiply", *(a if _is_vector(a) else
                                         self.coef.scalar_op("multiply", (a, literal))
                                         for a in args))
        return self.op(fn, *(self._scale(a, k) for a in args))


def _with_common_parts(planned: _Planned) -> _Planned:
    """The planned forms and what any two of them have in common (two operands
    or more): ``Max(A, B1, L)`` and ``Max(A, B2, L)`` share ``Max(A, L)``; each
    with the number of planned forms that contain it."""
    out: dict[str, dict[frozenset[tuple[Any, int]], int]] = {}
    for fn, forms in planned.items():
        counts = [Counter(dict(members)) for members in forms]
        common = [a & b for i, a in enumerate(counts) for b in counts[i + 1:]]
        candidates = {frozenset(c.items()): c for c in counts + common if sum(c.values()) > 1}
        out[fn] = {members: sum(1 for f in counts if not c - f)
                   for members, c in candidates.items()}
    return out


def _order(operand: int | str) -> tuple[int, int, str]:
    """Vectors first (computed values in order, then inputs), then scalars."""
    if isinstance(operand, int):
        return (0, operand, "")
    return (1 if operand in _SHAPES else 2, 0, operand)


class _Coefficients:
    """The shape-free subexpressions, each computed once per call; an operation
    on scalars at compile time makes a new coefficient."""

    def __init__(self) -> None:
        self.exprs: list[sympy.Expr] = []
        self._index: dict[sympy.Expr, str] = {}
        self._literals: dict[str, sympy.Expr] = {}

    def truncate(self, n: int) -> None:
        """Forget the coefficients made after the first ``n``."""
        for e in self.exprs[n:]:
            del self._index[e]
        del self.exprs[n:]

    def literal(self, value: sympy.Expr | int) -> str:
        text = repr(float(value))
        self._literals.setdefault(text, sympy.sympify(value))
        return text

    def of(self, e: sympy.Expr) -> str:
        """The operand of a shape-free expression: a literal for a number."""
        e = sympy.sympify(e)
        if e.is_Number:
            return self.literal(e)
        return self.of_symbol(e)

    def of_symbol(self, e: sympy.Expr) -> str:
        """A coefficient (``c3``) for ``e``, even a number."""
        e = sympy.sympify(e)
        if e not in self._index:
            self._index[e] = f"c{len(self.exprs)}"
            self.exprs.append(e)
        return self._index[e]

    def expr(self, operand: int | str) -> sympy.Expr:
        if isinstance(operand, int):  # callers pass scalars only
            raise TypeError(f"operand {operand} is a computed vector, not a scalar")
        if operand.startswith("c"):
            return self.exprs[int(operand[1:])]
        return self._literals[operand]

    def scalar_op(self, fn: str, args: Sequence[int | str]) -> str:
        e = [self.expr(a) for a in args]
        binary = {"add": sympy.Add, "multiply": sympy.Mul, "maximum": sympy.Max,
                  "minimum": sympy.Min, "power": sympy.Pow}
        if fn in binary:
            return self.of(binary[fn](*e))
        if fn == "subtract":
            return self.of(e[0] - e[1])
        if fn == "divide":
            return self.of(e[0] / e[1])
        if fn == "negative":
            return self.of(-e[0])
        if fn == "reciprocal":
            return self.of(1 / e[0])
        if fn == "sqrt":
            return self.of(sympy.sqrt(e[0]))
        inverse = {v: k for k, v in _FUNCTIONS.items()}
        return self.of(inverse[fn](e[0]))


def _hoist(e: sympy.Expr, coef: _Coefficients) -> sympy.Expr:
    """``e`` with every largest shape-free subexpression replaced by a
    coefficient's symbol; a sum's numeric content joins the coefficient of the
    product it is in (``(2KM + 2KN)/BW`` -> ``c * (KM + KN)``, ``c = 2/BW``)."""
    shapes = S.SHAPE_SYMBOLS
    if not e.has(*shapes):
        if e.is_Number:
            return e
        return _coefficient_symbol(int(coef.of(e)[1:]))
    if e.is_Symbol:
        return e
    if e.is_Add:
        free = sympy.Add(*(a for a in e.args if not a.has(*shapes)))
        rest = [a for a in e.args if a.has(*shapes)]
        if free == 0:
            content, prim = e.as_content_primitive()
            if content != 1:
                return _hoist(sympy.Mul(content, prim, evaluate=False), coef)
        return sympy.Add(*(_hoist(a, coef) for a in rest), _hoist(free, coef))
    if e.is_Mul:
        factor = sympy.Mul(*(a for a in e.args if not a.has(*shapes)))
        (inner, *more) = [a for a in e.args if a.has(*shapes)]
        if not more and inner.is_Add and factor != 1 and _distributes(inner):
            # c (a X + b) = (c a) X + c b: one operation fewer
            return _hoist(sympy.Add(*(factor * a for a in inner.args)), coef)
        parts = []
        for a in (a for a in e.args if a.has(*shapes)):
            if a.is_Add:
                content, a = a.as_content_primitive()
                factor *= content
            parts.append(_hoist(a, coef))
        if factor == 1:
            return sympy.Mul(*parts)
        if factor.is_Number and not any(p.is_Add for p in parts):
            return sympy.Mul(factor, *parts)  # stays a number: K/32 divides by 32
        # a coefficient's symbol, not a number, so the product does not distribute
        return sympy.Mul(_coefficient_symbol(int(coef.of_symbol(factor)[1:])), *parts)
    return e.func(*(_hoist(a, coef) for a in e.args))


def _distributes(add: sympy.Add) -> bool:
    """Whether a product's coefficient is better multiplied into each term of
    ``add``: a sum with a shape-free term, whose other terms all carry a
    number (``2 M K N + F``): then each term's product takes the coefficient
    and the sum costs no multiplication of its own."""
    shapes = S.SHAPE_SYMBOLS
    terms = [a for a in add.args if a.has(*shapes)]
    return len(terms) < len(add.args) and all(a.as_coeff_Mul()[0] != 1 for a in terms)


@lru_cache(maxsize=None)
def _coefficient_symbol(i: int) -> sympy.Symbol:
    # a name no hardware symbol has (those come from the symbols module)
    return sympy.Symbol(f"_coef_{i}")


class Program:
    """The operations for one request, scheduled and given buffers, as a chunk
    function (``run``) and an elementwise one (``plain``, for lazy arrays).

    ``outputs``: names of ``OUTPUTS``; ``terms``: also every term's time and
    regime.  ``n_buffers``: scratch arrays of one chunk each.
    """

    def __init__(self, compiled: "CompiledTerms", outputs: tuple[str, ...], terms: bool):
        self.outputs, self.terms = outputs, terms
        b = compiled._builder
        # terms first: each term's regime is found right after its pieces
        sinks: list[tuple[str, Any]] = [("term", (i, time, pieces)) for i, (time, pieces)
                                        in enumerate(compiled._term_operands) if terms]
        sinks += [("out", (name, compiled._output_operands[name])) for name in outputs]
        # schedule: each sink's operations depth first, just before they are needed
        # steps: (function, value or target, operands[, regimes])
        order: list[tuple[Any, ...]] = []
        seen: set[int] = set()

        def visit(v: int | str) -> None:
            if isinstance(v, int) and v not in seen:
                seen.add(v)
                fn, _, args = b.ops[v]
                for a in args:
                    visit(a)
                order.append(b.ops[v])

        # (kind, target, operands) after all ops
        tail: list[tuple[str, str, tuple[int | str]]] = []
        pinned: dict[int, str] = {}
        for kind, sink in sinks:
            if kind == "out":
                name, v = sink
                visit(v)
                target = f"o{outputs.index(name)}"
                if isinstance(v, int) and v not in pinned:
                    pinned[v] = target
                else:
                    tail.append(("copy", target, (v,)))
            else:
                i, time, pieces = sink
                visit(time)
                for p, _ in pieces:
                    visit(p)
                if isinstance(time, int) and time not in pinned:
                    pinned[time] = f"T{i}"
                else:
                    tail.append(("copy", f"T{i}", (time,)))
                # the regime, right after the term: its pieces die soon after
                order.append(("regime", f"R{i}", (time, *(p for p, _ in pieces)),
                              tuple(r for _, r in pieces)))
        order.extend(tail)
        # where the program makes M*K*N anyway, its minimum (taken before the buffer
        # is reused) lets the shapes be checked with one reduction each, not two
        product = compiled._shape_product
        self.checks_zero = isinstance(product, int) and product in seen
        if self.checks_zero:
            at = next(i for i, step in enumerate(order) if step[1] == product and step[0]
                      not in ("regime", "copy"))
            order.insert(at + 1, ("least", "least", (product,)))
        self._source(order, pinned, compiled)

    def _source(self, order: list[tuple[Any, ...]], pinned: dict[int, str],
                compiled: CompiledTerms) -> None:
        last: dict[int, int] = {}
        for i, step in enumerate(order):
            for a in step[2]:
                if isinstance(a, int):
                    last[a] = i
        free: list[str] = []
        n_buffers = 0
        where: dict[int, str] = {}
        lines, plain = [], []

        def name(a: int | str) -> str:
            return where[a] if isinstance(a, int) else a

        def pname(a: int | str) -> str:
            return f"v{a}" if isinstance(a, int) else a

        for i, step in enumerate(order):
            fn, dest, args = step[:3]
            operands = ", ".join(name(a) for a in args)
            poperands = ", ".join(pname(a) for a in args)
            # operands that die here free their buffers first: the result may reuse one
            for a in dict.fromkeys(args):
                if isinstance(a, int) and last[a] == i and a not in pinned:
                    free.append(where[a])
            if fn == "regime":
                regimes = step[3]
                lines.append(f"_regime({dest}, ({operands},), {regimes!r})")
                continue
            if fn == "least":
                lines.append(f"least = minimum.reduce({operands})")
                continue
            if fn == "copy":
                lines.append(f"copyto({dest}, {operands})")
                plain.append(f"{dest} = _full({poperands})")
                continue
            if dest in pinned:
                target = pinned[dest]
            else:
                if not free:
                    free.append(f"b{n_buffers}")
                    n_buffers += 1
                target = free.pop()
            where[dest] = target
            if fn == "call":
                f, *rest = args
                lines.append(f"copyto({target}, {f}({', '.join(name(a) for a in rest)}))")
                plain.append(f"v{dest} = {f}({', '.join(pname(a) for a in rest)})")
            else:
                # maximum and minimum take out= by name (a third positional is deprecated)
                out = f"out={target}" if fn in ("maximum", "minimum") else target
                lines.append(f"{fn}({operands}, {out})")
                plain.append(f"v{dest} = {fn}({poperands})")
            if dest in pinned:
                plain.append(f"{pinned[dest]} = v{dest}")
        self.n_buffers = n_buffers
        self.n_ops = len(lines) - self.checks_zero
        lines.append("return least" if self.checks_zero else "return None")
        n_out, n_terms = len(self.outputs), len(compiled.terms) if self.terms else 0
        coefs = [f"c{i}" for i in range(len(compiled.coefficients))]
        params = ["M", "K", "N", *coefs, *(f"o{i}" for i in range(n_out)),
                  *(f"T{i}" for i in range(n_terms)), *(f"R{i}" for i in range(n_terms)),
                  *(f"b{i}" for i in range(n_buffers))]
        namespace: dict[str, Any] = {u: getattr(np, u) for u in _UFUNCS}
        namespace.update(copyto=np.copyto, _regime=_regime, _full=_plain_full)
        namespace.update({f"f{i}": f for i, f in enumerate(compiled._builder.calls)})
        src = f"def run({', '.join(params)}):\n    " + "\n    ".join(lines) + "\n"
        # the plain version returns the outputs; constants are filled to the shape
        plain_params = ["M", "K", "N", *coefs]
        plain = [line.replace("_full(", "_full(M, K, N, ") for line in plain]
        psrc = (f"def plain({', '.join(plain_params)}):\n    "
                + "\n    ".join(plain + [f"return ({''.join(f'o{i}, ' for i in range(n_out))})"])
                + "\n")
        exec(compile(src, "<roofline_sym.compiled>", "exec"), namespace)
        exec(compile(psrc, "<roofline_sym.compiled plain>", "exec"), namespace)
        self.source, self.plain_source = src, psrc
        self.run, self.plain = namespace["run"], namespace["plain"]


def _regime(out: np.ndarray, values: tuple[np.ndarray, ...], regimes: tuple[int, ...]) -> None:
    """``out`` = the regime (index in ``REGIMES``) of the first piece equal to
    the term's time ``values[0]`` (the maximum of the pieces ``values[1:]``)."""
    time, pieces = values[0], values[1:]
    out.fill(regimes[-1])
    for value, r in zip(pieces[-2::-1], regimes[-2::-1]):
        np.copyto(out, r, where=np.equal(value, time))


def _plain_full(M: Any, K: Any, N: Any, value: Any) -> Any:
    """``value`` (a constant) as an array of the shapes' shape, lazily for lazy arrays."""
    return np.add(np.multiply(np.multiply(np.multiply(M, 0.0), K), N), value)


# -- compiled terms ------------------------------------------------------------------------
class _Evaluator:
    """What compiled terms, bound or not, offer: ``evaluate`` and ``term_times``."""

    compiled: "CompiledTerms"
    coefficients_bound: tuple[float, ...] | None

    @property
    def terms(self) -> tuple[Term, ...]:
        return self.compiled.terms

    def program(self, outputs: Sequence[str] = OUTPUTS, terms: bool = False) -> Program:
        """The (cached) program computing ``outputs`` (and every term's time and regime)."""
        return self.compiled._program(tuple(outputs), terms)

    def evaluate(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any] = {},
                 outputs: Sequence[str] | str | None = OUTPUTS, dtype: Any = np.float64,
                 chunk: int = CHUNK, regimes: bool = False) -> dict[Any, np.ndarray]:
        """``{name: array}`` for each of ``outputs`` at shapes ``M, K, N`` (numpy
        broadcasting), an unbound model's free symbols by name in ``hardware_values``.

        ``dtype``: float64, or float32 (half the memory, about 7 digits; products
        such as ``M*K*N`` must stay below 3e38).  ``regimes``: also, for each of
        ``GROUPS`` (a tuple key), an int8 array: per shape, the index in
        ``REGIMES`` of the regime whose terms hold most of the group's time
        (the first on ties; -1 for a group without terms).
        """
        names = _output_names(outputs)
        return _Run(self, M, K, N, hardware_values, names, regimes, dtype, chunk).result

    def term_times(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any] = {},
                   chunk: int = CHUNK) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{term name: (seconds, regime labels)}``."""
        run = _Run(self, M, K, N, hardware_values, (), "terms", np.float64, chunk)
        labels = np.array(REGIMES)
        return {t.name: (run.times[i], labels[run.regimes[i]])
                for i, t in enumerate(self.terms)}


class CompiledTerms(_Evaluator):
    """``terms`` compiled once: a numeric function of the shapes and of every
    other symbol the terms contain (``free``, sorted by name), given by name.

    Use ``compile_terms`` (cached by the structure of the terms) rather than
    building one; ``bind`` fixes the free symbols' values.
    """

    coefficients_bound = None

    def __init__(self, terms: Sequence[Term]):
        self.compiled = self
        self._terms = tuple(terms)
        free = set().union(*(e.free_symbols for t in self._terms for _, e in t.pieces))
        self.free = tuple(sorted(free - set(S.SHAPE_SYMBOLS), key=str))
        self.free_names = tuple(map(str, self.free))
        unknown = {(t.side, t.group) for t in self._terms} - set(GROUPS)
        if unknown:
            raise ValueError(f"terms of unknown (side, group) {sorted(unknown)}; "
                             f"a model's terms add to {GROUPS}")
        coef = _Coefficients()
        pieces = [_hoist(e, coef) for t in self._terms for _, e in t.pieces]
        # twice: first to see every sum and product needed, then to build them
        hoisted = len(coef.exprs)
        planning = self._build(_Builder(coef), pieces)
        coef.truncate(hoisted)
        self._builder = self._build(_Builder(coef, _with_common_parts(planning.planned)),
                                    pieces)
        self.coefficients = tuple(coef.exprs)
        self._programs: dict[tuple[tuple[str, ...], bool], Program] = {}

    def _build(self, b: _Builder, pieces: list[sympy.Expr]) -> _Builder:
        """Every piece, term time, group total and output as operations of ``b``."""
        coef = b.coef
        b.env.update(_SHAPE_SYMBOLS)
        b.env.update({_coefficient_symbol(i): f"c{i}" for i in range(len(coef.exprs))})
        piece_ops = iter([b.expr(e) for e in pieces])
        # every term: its time (the largest piece; scalar pieces merged) and pieces
        term_operands = []
        for t in self._terms:
            ops = tuple((next(piece_ops), REGIMES.index(r)) for r, _ in t.pieces)
            term_operands.append((b.chain("maximum", [o for o, _ in ops]), ops))
        uses = Counter(a for _, _, args in b.ops for a in args if isinstance(a, int))
        # every group: the sum of its terms, a term that occurs k times counted k times
        totals = {}
        for key in GROUPS:
            counts = Counter(time for t, (time, _) in zip(self._terms, term_operands)
                             if (t.side, t.group) == key)
            vectors = [b.scaled(v, k, uses) if k > 1 else v
                       for v, k in counts.items() if _is_vector(v)]
            scalars = [coef.expr(v) * k for v, k in counts.items() if not _is_vector(v)]
            parts = vectors + ([coef.of(sympy.Add(*scalars))] if scalars else [])
            totals[key] = reduce(lambda x, y: b.op("add", x, y), parts) if parts else "0.0"

        def plus(x: int | str, y: int | str) -> int | str:
            return x if y == "0.0" else y if x == "0.0" else b.op("add", x, y)

        out = {f"{side}_{group}_time": totals[(side, group)] for side, group in GROUPS}
        for side in ("baseline", "lowp"):
            out[f"{side}_time"] = plus(out[f"{side}_gemm_time"], out[f"{side}_overhead_time"])
        out["speedup"] = b.op("divide", out["baseline_time"], out["lowp_time"])
        self._term_operands, self._output_operands = term_operands, out
        # M*K*N where the terms need it: its minimum tells a chunk has no zero shape
        self._shape_product = b._forms.get(("multiply", tuple((d, 1) for d in sorted(_SHAPES))))
        return b

    @property
    def terms(self) -> tuple[Term, ...]:
        return self._terms

    def _program(self, outputs: tuple[str, ...], terms: bool) -> Program:
        key = (outputs, terms)
        if key not in self._programs:
            self._programs[key] = Program(self, outputs, terms)
        return self._programs[key]

    @cached_property
    def _coefficient_fn(self) -> Callable[..., Any]:
        """The coefficients from numbers or arrays of the free symbols (made on the
        first evaluation of the unbound terms: a bound model does not need it)."""
        fn: Callable[..., Any] = sympy.lambdify(self.free, list(self.coefficients),
                                                modules=_LAMBDIFY_MODULES)
        return fn

    def bind(self, values: Mapping[sympy.Symbol, Any]) -> "BoundTerms":
        """These terms with every free symbol given a value: exact (SymPy numbers,
        so the coefficients are rounded once) or floats."""
        missing = [s for s in self.free if s not in values]
        if missing:
            raise ValueError(f"no value for {missing}")
        exact = {s: sympy.sympify(values[s]) for s in self.free}
        return BoundTerms(self, tuple(_exact_float(e, exact) for e in self.coefficients))

    def __repr__(self) -> str:
        return (f"CompiledTerms({len(self._terms)} terms, {len(self.coefficients)} "
                f"coefficients of {', '.join(map(str, self.free)) or 'nothing'})")


class BoundTerms(_Evaluator):
    """Compiled terms with their free symbols' values fixed (``CompiledTerms.bind``):
    the same methods, without hardware values."""

    def __init__(self, compiled: CompiledTerms, coefficients: tuple[float, ...]):
        self.compiled, self.coefficients_bound = compiled, coefficients

    def __repr__(self) -> str:
        return f"BoundTerms({self.compiled!r})"


@lru_cache(maxsize=256)
def _compile_cached(key: tuple[tuple[TermId, tuple[tuple[str, sympy.Expr], ...]], ...]
                    ) -> CompiledTerms:
    return CompiledTerms([Term(id, pieces) for id, pieces in key])


def compile_terms(terms: Iterable[Term]) -> CompiledTerms:
    """The compiled form of ``terms``, made once per structure (ids and pieces).

    >>> import roofline_sym as rs
    >>> compile_terms(rs.linear("rowwise").terms) is compile_terms(rs.linear("rowwise").terms)
    True
    """
    return _compile_cached(tuple((t.id, t.pieces) for t in terms))


def _exact_float(e: sympy.Expr, values: Mapping[sympy.Symbol, sympy.Expr]) -> float:
    """``e`` at exact ``values``, rounded once to a float: in ``Fraction`` arithmetic
    where ``e`` is built of sums, products, integer powers, maxima and minima of
    rationals (every coefficient of the shipped models), else through SymPy."""
    value = _fraction(e, values)
    return float(e.xreplace(values)) if value is None else float(value)


def _fraction(e: sympy.Expr, values: Mapping[sympy.Symbol, sympy.Expr]) -> Fraction | None:
    if e.is_Symbol:
        v = values.get(e)
        return Fraction(int(v.p), int(v.q)) if v is not None and v.is_Rational else None
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Pow and e.exp.is_Integer:
        base = _fraction(e.base, values)
        return None if base is None or (base == 0 and e.exp < 0) else base ** int(e.exp)
    if e.is_Add or e.is_Mul or isinstance(e, (sympy.Max, sympy.Min)):
        args = [f for f in (_fraction(a, values) for a in e.args) if f is not None]
        if len(args) < len(e.args):
            return None
        if e.is_Add:
            return sum(args, Fraction(0))
        if e.is_Mul:
            return reduce(lambda a, b: a * b, args, Fraction(1))
        return max(args) if isinstance(e, sympy.Max) else min(args)
    return None


# -- the evaluation loop -------------------------------------------------------------------
def _output_names(outputs: Sequence[str] | str | None) -> tuple[str, ...]:
    """The outputs requested: names of ``OUTPUTS``, one name, or None (all)."""
    names = OUTPUTS if outputs is None else (outputs,) if isinstance(outputs, str) \
        else tuple(outputs)
    unknown = [n for n in names if n not in OUTPUTS]
    if unknown:
        raise ValueError(f"unknown output(s) {unknown}; outputs are {', '.join(OUTPUTS)}")
    if len(set(names)) < len(names):
        raise ValueError(f"outputs {list(names)} name one twice")
    return names


def _is_lazy(value: Any) -> bool:
    """An array of another library (dask) that numpy functions dispatch to."""
    return (not isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple))
            and (hasattr(value, "__array_function__") or hasattr(value, "__array_ufunc__")))


def _shape_input(value: Any, name: str) -> np.ndarray:
    """A shape argument as an array of ints or floats; its values are checked
    chunk by chunk (``_check``)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.dtype.kind not in "iuf" or isinstance(value, np.ma.MaskedArray):
        positive_array(value, name)  # raises the message for non-numbers
        raise ValueError(f"{name} must be a number or array of numbers, not {value!r}")
    if raw.dtype.kind in "iu" and raw.size and raw.max() > SHAPE_MAX:
        # compared as integers: 2**53 + 1 would round to 2**53 as a float
        positive_array(value, name, limit=SHAPE_MAX)
    return raw


def _check(x: np.ndarray, original: Any, name: str) -> None:
    """Shapes in ``x`` positive, finite and at most 2**53, or the error of
    ``validate.positive_array`` for the whole argument."""
    if x.size and not (x.min() > 0 and x.max() <= SHAPE_MAX):
        positive_array(original, name, limit=SHAPE_MAX)  # raises, naming the problem
        raise ValueError(f"{name} must be positive and finite, at most 2**53, in "
                         f"{x.dtype} (got a value that is not)")


# a float's bits as an unsigned integer grow with the float from +0 to +inf, then
# NaN; negative floats (the sign bit) are larger still: so "bits at most those of
# 2**53" is "0 <= x <= 2**53", and only +0 is left for the shape product to catch
_MAX_BITS = {np.dtype(np.float64): (np.uint64, int(np.float64(SHAPE_MAX).view(np.uint64))),
             np.dtype(np.float32): (np.uint32, int(np.float32(SHAPE_MAX).view(np.uint32)))}


def _check_bits(x: np.ndarray, original: Any, name: str) -> None:
    """``_check`` but for +0: one reduction (a shape product's minimum finds zeros)."""
    kind, bound = _MAX_BITS.get(x.dtype, (None, 0))
    if kind is None or (x.size and np.maximum.reduce(x.view(kind)) > bound):
        _check(x, original, name)


class _Run:
    """One evaluation: arguments checked, outputs allocated, chunks run.

    ``terms``: False, True (group regimes, per chunk) or "terms" (every term's
    time and regime, kept whole).
    """

    def __init__(self, ev: _Evaluator, M: Any, K: Any, N: Any,
                 hardware_values: Mapping[str, Any], outputs: tuple[str, ...],
                 terms: bool | str, dtype: Any, chunk: int):
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise InputTypeError(f"dtype must be a floating type (float64, float32), not "
                                 f"{show(dtype)}") from None
        if dtype.kind != "f":
            raise ValueError(f"dtype must be a floating type (float64, float32), not {dtype}")
        if isinstance(chunk, bool) or not (isinstance(chunk, numbers.Integral) and chunk > 0):
            raise ValueError(f"chunk must be a positive integer, not {chunk!r}")
        compiled, bound = ev.compiled, ev.coefficients_bound
        hw = self._hardware(compiled, hardware_values, bound is not None)
        program = compiled._program(outputs, bool(terms))
        # every term's time and regime (terms="terms")
        self.times: list[np.ndarray] = []
        self.regimes: list[np.ndarray] = []
        self.result: dict[Any, np.ndarray]
        if any(_is_lazy(v) for v in (M, K, N, *hw)):
            if terms:
                raise TypeError("term times and regimes need numpy arrays; evaluate() "
                                "takes lazy ones")
            self.result = self._lazy(compiled, program, bound, (M, K, N), hw, dtype)
            return
        shapes = [_shape_input(v, n) for v, n in zip((M, K, N), _SHAPES)]
        hw_shape = np.broadcast_shapes(*(np.shape(h) for h in hw))
        # a request that does not broadcast, or is too large to hold, fails here
        shape = broadcast_shape({**dict(zip(_SHAPES, shapes)),
                                 **dict(zip(compiled.free_names, hw))})
        size = int(np.prod(shape))
        # coefficients: fixed numbers (bound), numbers or arrays at the hardware's
        # own shape, or, for hardware arrays larger than a chunk, made per chunk
        self.per_chunk = bound is None and int(np.prod(hw_shape)) > chunk
        if bound is not None:
            values: list[Any] = list(bound)
        elif self.per_chunk:
            values = hw
        else:
            with np.errstate(all="ignore"):
                values = list(compiled._coefficient_fn(*hw))
        walked, self.fixed = [], []  # arrays the iterator walks; the scalar arguments
        for i, a in enumerate(shapes):
            if a.ndim == 0:
                _check(a.reshape(1).astype(dtype), (M, K, N)[i], _SHAPES[i])
                self.fixed.append(float(a))
            else:
                walked.append((i, a))
                self.fixed.append(None)
        for i, v in enumerate(values, start=3):
            if isinstance(v, float):  # a bound model's coefficients
                self.fixed.append(v)
                continue
            v = np.asarray(v, dtype=dtype)
            if v.size == 1:
                self.fixed.append(float(v.reshape(-1)[0]))
            else:
                walked.append((i, v))
                self.fixed.append(None)
        self.result = {name: np.empty(shape, dtype=dtype) for name in outputs}
        sinks = [self.result[name].reshape(-1) for name in outputs]
        n_terms = len(compiled.terms)
        width = min(chunk, size)
        if terms == "terms":
            self.times = [np.empty(shape) for _ in range(n_terms)]
            self.regimes = [np.empty(shape, dtype=np.int8) for _ in range(n_terms)]
            sinks += [a.reshape(-1) for a in self.times + self.regimes]
        scratch = _scratch(dtype, chunk, width, program.n_buffers)
        if terms is True:  # term times per chunk; the group regimes are kept
            times = _scratch(dtype, chunk, width, n_terms + len(REGIMES) + 1, "terms")
            acc = times[n_terms:]  # a sum per regime, and the largest of them
            scratch = (times[:n_terms] + _scratch(np.dtype(np.int8), chunk, width, n_terms)
                       + scratch)
            for key in GROUPS:
                self.result[key] = np.empty(shape, dtype=np.int8)
            groups = _group_members(compiled)
        coefficient_fn = compiled._coefficient_fn
        n_shapes = 3

        with np.errstate(all="ignore"):
            start = 0
            check = _check_bits if program.checks_zero else _check
            shaped = [(i, _SHAPES[i], (M, K, N)[i]) for i, _ in walked if i < n_shapes]
            for views, n in self._chunks(walked, size, dtype, chunk):
                args = list(self.fixed)
                for (i, _), v in zip(walked, views):
                    args[i] = v
                if self.per_chunk:
                    args[n_shapes:] = [c if np.ndim(c) == 0 else np.asarray(c, dtype=dtype)
                                       for c in coefficient_fn(*args[n_shapes:])]
                end = start + n
                bufs = scratch if n == width else [b[:n] for b in scratch]
                least = program.run(*args, *(s[start:end] for s in sinks), *bufs)
                # the shapes checked after the chunk's work, while they are in cache
                for i, name, original in shaped:
                    check(args[i], original, name)
                if program.checks_zero and not least > 0:  # a zero shape (or underflow)
                    for i, name, original in shaped:
                        _check(args[i], original, name)
                if terms is True:
                    _group_regimes(groups, bufs[:n_terms], bufs[n_terms:2 * n_terms],
                                   [a[:n] for a in acc], [self.result[k].reshape(-1)[start:end]
                                                          for k in GROUPS])
                start = end

    @staticmethod
    def _hardware(compiled: CompiledTerms, values: Mapping[str, Any], bound: bool) -> list[Any]:
        names = list(compiled.free_names)
        if bound:
            if values:
                raise ValueError(f"unknown hardware value(s) {sorted(values)}; this model's "
                                 "free symbols are []")
            return []
        missing = [n for n in names if n not in values]
        if missing:
            raise ValueError(f"model has free hardware symbols {missing}: bind a GPU with "
                             ".on(hw) or pass them by name to evaluate()")
        unknown = sorted(set(values) - set(names), key=str)
        if unknown:
            raise unknown_name("hardware value", unknown[0], names,
                               extra=" (not a free symbol of this model)")
        # each value within its plausible range (validate.RANGES)
        return [values[n] if _is_lazy(values[n]) else hardware_array(values[n], n)
                for n in names]

    @staticmethod
    def _chunks(walked: list[tuple[int, np.ndarray]], size: int, dtype: np.dtype,
                chunk: int) -> Iterator[tuple[tuple[np.ndarray, ...], int]]:
        """``(views, n)``: the walked arrays' next ``n`` elements (broadcast, in C
        order, cast to ``dtype``), at most ``chunk`` at a time."""
        if not walked:
            if size:
                yield (), size
            return
        it = np.nditer([a for _, a in walked], flags=["external_loop", "buffered", "zerosize_ok"],
                       op_flags=[["readonly"]] * len(walked), op_dtypes=[dtype] * len(walked),
                       casting="unsafe", buffersize=chunk, order="C")
        with it:
            for views in it:
                # numpy's stubs miss it: over one array, nditer yields the array itself
                views = (views,) if len(walked) == 1 else views  # type: ignore[assignment]
                yield views, views[0].size

    @staticmethod
    def _lazy(compiled: CompiledTerms, program: Program, bound: tuple[float, ...] | None,
              shapes: Sequence[Any], hw: list[Any], dtype: np.dtype) -> dict[str, Any]:
        """The elementwise path for arrays of other libraries (dask): no chunks, no
        ``out=``, nothing materialized."""
        shapes = [s.astype(dtype) if _is_lazy(s) else np.asarray(s, dtype=dtype)
                  for s in shapes]
        coefs = list(bound) if bound is not None else list(compiled._coefficient_fn(*hw))
        with np.errstate(all="ignore"):
            values = program.plain(*shapes, *coefs)
        return dict(zip(program.outputs, values))


# Scratch buffers kept per thread between calls: a fresh buffer costs its pages'
# first touch (for a dozen buffers of a chunk, about as much as a dozen
# operations on them), which repeated calls (a sweep's chunks) would pay each time.
_SCRATCH = threading.local()


def _scratch(dtype: np.dtype, chunk: int, width: int, count: int,
             use: str = "ops") -> list[np.ndarray]:
    """``count`` buffers of ``width`` elements (views of this thread's buffers of
    ``chunk``, kept for the next call; small ones, and chunks far above
    ``CHUNK``, are made afresh)."""
    if chunk > 4 * CHUNK or width * dtype.itemsize < 1 << 16:
        return [np.empty(width, dtype=dtype) for _ in range(count)]
    cache = getattr(_SCRATCH, "buffers", None)
    if cache is None or len(cache) > 8:  # a few (dtype, chunk, use) kinds at most
        cache = _SCRATCH.buffers = {}
    kept = cache.setdefault((dtype.str, chunk, use), [])
    kept.extend(np.empty(chunk, dtype=dtype) for _ in range(count - len(kept)))
    return [b[:width] for b in kept[:count]]


def release_scratch() -> int:
    """Let go of this thread's kept scratch buffers; returns the bytes released.

    >>> import roofline_sym as rs
    >>> _ = rs.linear("tensorwise").on("h100").evaluate([4096.0] * 100_000, 4096, 4096)
    >>> release_scratch() > 0, release_scratch()
    (True, 0)
    """
    cache = getattr(_SCRATCH, "buffers", None) or {}
    _SCRATCH.buffers = {}
    return sum(b.nbytes for kept in cache.values() for b in kept)


def _group_members(compiled: CompiledTerms) -> list[list[int]]:
    return [[i for i, t in enumerate(compiled.terms) if (t.side, t.group) == key]
            for key in GROUPS]


def _group_regimes(groups: list[list[int]], times: list[np.ndarray], regimes: list[np.ndarray],
                   acc: list[np.ndarray], outs: list[np.ndarray]) -> None:
    """Per group, the regime whose terms hold the most time (the first on ties,
    as ``np.argmax``); ``acc``: a buffer per regime and one more."""
    *sums, best = acc
    last = len(sums) - 1
    for members, out in zip(groups, outs):
        if not members:
            out.fill(-1)
            continue
        for a in sums:
            a.fill(0.0)
        for i in members:
            for r, a in enumerate(sums):
                np.add(a, times[i], out=a, where=np.equal(regimes[i], r))
        out.fill(last)
        np.copyto(best, sums[last])
        for r in range(last - 1, -1, -1):  # downwards: an equal earlier regime wins
            np.copyto(out, r, where=np.greater_equal(sums[r], best))
            np.maximum(best, sums[r], out=best)
