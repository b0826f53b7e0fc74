"""Expressions to operations: what a model's pieces cost in numpy operations.

``hoist`` replaces every largest shape-free subexpression of a piece by a
coefficient (``2/(P_fp8 eta_fp8)``, ``t_launch``: computed once per call);
``Builder`` turns what is left into operations on vectors of shapes, each
made once (value numbering).  Sums, products and maxima are *forms*
(multisets of operands) that share their common parts: ``M*K*N`` after
``M*K``; ``KM + KN + 2MN`` after ``KM + KN + MN``; ``Max(A, L)`` in
``Max(A, B1, L)`` and ``Max(A, B2, L)``.

>>> import sympy
>>> from roofline_sym.symbols import M, K, N
>>> coef = Coefficients()
>>> x = hoist(2 * M * K * N / sympy.Symbol("P"), coef)
>>> x, coef.exprs
(K*M*N*_coef_0, [2/P])
>>> b = Builder(coef)
>>> b.env.update({**SHAPE_SYMBOLS, coefficient_symbol(0): "c0"})
>>> b.expr(x), b.ops
(2, [('multiply', 0, ('M', 'N')), ('multiply', 1, (0, 'K')), ('multiply', 2, (1, 'c0'))])
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache, reduce
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S

__all__ = ["Builder", "Coefficients", "hoist", "coefficient_symbol", "with_common_parts",
           "is_vector", "SHAPES", "SHAPE_SYMBOLS", "FUNCTIONS", "LAMBDIFY_MODULES"]

# the shapes' names in generated code, and the symbols they stand for
SHAPES = ("M", "K", "N")
SHAPE_SYMBOLS = dict(zip(S.SHAPE_SYMBOLS, SHAPES))
# commutative, associative operations built as forms (shared parts reused)
_FORMS = ("add", "multiply", "maximum", "minimum")
# functions of one argument that become one numpy function of the same name
FUNCTIONS = {sympy.ceiling: "ceil", sympy.floor: "floor", sympy.exp: "exp",
             sympy.log: "log", sympy.Abs: "absolute"}


def _max(*args: Any) -> Any:
    return reduce(np.maximum, args)


def _min(*args: Any) -> Any:
    return reduce(np.minimum, args)


# lambdify of coefficients and of rare functions: Max/Min of arrays of any shapes
LAMBDIFY_MODULES = [{"Max": _max, "Min": _min}, "numpy"]


def is_vector(operand: int | str) -> bool:
    """Operands: an int is a computed value; a str an input (M, K, N), a
    coefficient (c3) or a literal number (2.0); only the latter two are scalars."""
    return isinstance(operand, int) or operand in SHAPES


# a form's operands, each with its count, in _order
_Items = tuple[tuple[int | str, int], ...]
# per form function, the forms the expressions need: {members: planned forms containing it}
Planned = Mapping[str, dict[frozenset[tuple[Any, int]], int]]


class Builder:
    """Sympy expressions in the shapes and coefficients -> numpy operations.

    Value numbering makes the same operation on the same operands once.  Sums
    and products are *forms* (multisets of operands) built from the largest
    form that another expression needs too (``planned``): with ``KM + KN + MN``
    needed anyway, ``KM + KN + 2MN`` costs one addition, and ``M*K*N`` one
    product after ``M*K``.
    """

    def __init__(self, coefficients: "Coefficients", planned: Planned | None = None):
        self.coef = coefficients
        # (function, value, operands)
        self.ops: list[tuple[str, int, tuple[int | str, ...]]] = []
        self.calls: list[Callable[..., Any]] = []
        self._memo: dict[tuple[str, tuple[int | str, ...]], int] = {}
        self.env: dict[sympy.Symbol, int | str] = {}
        self.planning = planned is None
        self.planned: Planned = {f: {} for f in _FORMS} if planned is None else planned
        self._forms: dict[tuple[str, _Items], int | str] = {}
        self._form_of: dict[int | str, tuple[str, _Items]] = {}
        # what a value is, independent of how it was built (forms: their members),
        # so the forms planned by one builder are recognised by the next
        self._keys: dict[int, Any] = {}
        # each expression's operand: pieces share their subexpressions (the same
        # bytes in many terms), each built once (the same operand it would build again)
        self._exprs: dict[sympy.Expr, int | str] = {}

    def key(self, operand: int | str) -> Any:
        return self._keys[operand] if isinstance(operand, int) else operand

    def op(self, fn: str, *args: int | str) -> int | str:
        if fn in ("add", "multiply", "maximum", "minimum"):  # commutative: one order
            args = tuple(sorted(args, key=_order))
        if not any(is_vector(a) for a in args) and fn != "call":
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
        vectors = [o for o in operands if is_vector(o)]
        if fn in ("maximum", "minimum") and vectors:
            scalars = [o for o in operands if not is_vector(o)]
            merged = [reduce(lambda a, b: self.op(fn, a, b), scalars)] if scalars else []
            return self.form(fn, dict.fromkeys(vectors + merged, 1))
        return reduce(lambda a, b: self.op(fn, a, b), operands)

    def form_operand(self, fn: str, operands: Sequence[int | str]) -> int | str | None:
        """The operand of a form of ``operands`` (each once) if it was built, else None."""
        return self._forms.get((fn, tuple((o, 1) for o in sorted(operands, key=_order))))

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
            rest = _minus(flat, part)
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
            rest = _minus(flat, part)
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
        if e not in self._exprs:
            self._exprs[e] = self._expr(e)
        return self._exprs[e]

    def _expr(self, e: sympy.Expr) -> int | str:
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
                if is_vector(o):
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
                if is_vector(o):
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
            if x.is_Integer and x > 0 and is_vector(base):
                return self.form("multiply", {base: int(x)})
            return self.op("power", base, self.coef.literal(x))
        if isinstance(e, (sympy.Max, sympy.Min)):
            return self.chain("maximum" if isinstance(e, sympy.Max) else "minimum",
                              [self.expr(a) for a in e.args])
        fn = FUNCTIONS.get(type(e))
        if fn is not None:
            return self.op(fn, self.expr(e.args[0]))
        # anything else (Piecewise, Mod, ...): lambdified, evaluated per chunk
        args = sorted(e.free_symbols, key=str)
        self.calls.append(sympy.lambdify(args, e, modules=LAMBDIFY_MODULES))
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
        if not is_vector(v):
            return True
        if not isinstance(v, int) or (not top and uses[v] != 1):
            return False
        fn, _, args = self.ops[v]
        if fn == "multiply":
            return any(not is_vector(a) for a in args)
        return fn in ("maximum", "add") and all(self._scalable(a, uses) for a in args)

    def _scale(self, v: int | str, k: int) -> int | str:
        literal = self.coef.literal(k)
        if not isinstance(v, int):  # a scalar (_scalable refuses the shapes themselves)
            return self.coef.scalar_op("multiply", (v, literal))
        fn, _, args = self.ops[v]
        if fn == "multiply":
            return self.op("multiply", *(a if is_vector(a) else
                                         self.coef.scalar_op("multiply", (a, literal))
                                         for a in args))
        return self.op(fn, *(self._scale(a, k) for a in args))


def _minus(flat: Mapping[int | str, int], part: Mapping[int | str, int]) -> dict[int | str, int]:
    """``flat - part`` as ``Counter`` subtracts (positive counts only, in
    ``flat``'s order), without building a ``Counter`` for ``part``: compiling
    asks this for every planned form it tries.

    >>> _minus({"M": 2, "K": 1}, {"M": 1, "K": 1})
    {'M': 1}
    """
    return {o: n - part.get(o, 0) for o, n in flat.items() if n > part.get(o, 0)}


def with_common_parts(planned: Planned) -> Planned:
    """The planned forms and what any two of them have in common (two operands
    or more): ``Max(A, B1, L)`` and ``Max(A, B2, L)`` share ``Max(A, L)``; each
    with the number of planned forms that contain it."""
    out: dict[str, dict[frozenset[tuple[Any, int]], int]] = {}
    for fn, forms in planned.items():
        counts = [Counter(dict(members)) for members in forms]
        common = [a & b for i, a in enumerate(counts) for b in counts[i + 1:]]
        candidates = {frozenset(c.items()): c for c in counts + common if sum(c.values()) > 1}
        # c within f: no operand more often in c (c - f empty, without making it)
        out[fn] = {members: sum(1 for f in counts if all(f[m] >= k for m, k in c.items()))
                   for members, c in candidates.items()}
    return out


def _order(operand: int | str) -> tuple[int, int, str]:
    """Vectors first (computed values in order, then inputs), then scalars."""
    if isinstance(operand, int):
        return (0, operand, "")
    return (1 if operand in SHAPES else 2, 0, operand)


class Coefficients:
    """The shape-free subexpressions, each computed once per call; an operation
    on scalars at compile time makes a new coefficient."""

    def __init__(self) -> None:
        self.exprs: list[sympy.Expr] = []
        self._index: dict[sympy.Expr, str] = {}
        self._literals: dict[str, sympy.Expr] = {}
        # hoist's result per expression (it refers to coefficients by index)
        self.hoisted: dict[sympy.Expr, sympy.Expr] = {}

    def truncate(self, n: int) -> None:
        """Forget the coefficients made after the first ``n``."""
        for e in self.exprs[n:]:
            del self._index[e]
        del self.exprs[n:]
        self.hoisted.clear()

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
            raise AssertionError(f"operand {operand} is a computed vector, not a scalar")
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
        inverse = {v: k for k, v in FUNCTIONS.items()}
        return self.of(inverse[fn](e[0]))


def hoist(e: sympy.Expr, coef: Coefficients) -> sympy.Expr:
    """``e`` with every largest shape-free subexpression replaced by a
    coefficient's symbol; a sum's numeric content joins the coefficient of the
    product it is in (``(2KM + 2KN)/BW`` -> ``c * (KM + KN)``, ``c = 2/BW``)."""
    if e not in coef.hoisted:  # pieces share subexpressions: each hoisted once
        coef.hoisted[e] = _hoist(e, coef)
    return coef.hoisted[e]


def _hoist(e: sympy.Expr, coef: Coefficients) -> sympy.Expr:
    shapes = S.SHAPE_SYMBOLS
    if not e.has(*shapes):
        if e.is_Number:
            return e
        return coefficient_symbol(int(coef.of(e)[1:]))
    if e.is_Symbol:
        return e
    if e.is_Add:
        free = sympy.Add(*(a for a in e.args if not a.has(*shapes)))
        rest = [a for a in e.args if a.has(*shapes)]
        if free == 0:
            content, prim = e.as_content_primitive()
            if content != 1:
                return hoist(sympy.Mul(content, prim, evaluate=False), coef)
        return sympy.Add(*(hoist(a, coef) for a in rest), hoist(free, coef))
    if e.is_Mul:
        factor = sympy.Mul(*(a for a in e.args if not a.has(*shapes)))
        (inner, *more) = [a for a in e.args if a.has(*shapes)]
        if not more and inner.is_Add and factor != 1 and _distributes(inner):
            # c (a X + b) = (c a) X + c b: one operation fewer
            return hoist(sympy.Add(*(factor * a for a in inner.args)), coef)
        parts = []
        for a in (a for a in e.args if a.has(*shapes)):
            if a.is_Add:
                content, a = a.as_content_primitive()
                factor *= content
            parts.append(hoist(a, coef))
        if factor == 1:
            return sympy.Mul(*parts)
        if factor.is_Number and not any(p.is_Add for p in parts):
            return sympy.Mul(factor, *parts)  # stays a number: K/32 divides by 32
        # a coefficient's symbol, not a number, so the product does not distribute
        return sympy.Mul(coefficient_symbol(int(coef.of_symbol(factor)[1:])), *parts)
    args = tuple(hoist(a, coef) for a in e.args)
    # unchanged: ``e`` itself, not rebuilt (a block count's ceiling is not
    # evaluated again: model.rounding)
    return e if args == e.args else e.func(*args)


def _distributes(add: sympy.Add) -> bool:
    """Whether a product's coefficient is better multiplied into each term of
    ``add``: a sum with a shape-free term, whose other terms all carry a
    number (``2 M K N + F``): then each term's product takes the coefficient
    and the sum costs no multiplication of its own."""
    shapes = S.SHAPE_SYMBOLS
    terms = [a for a in add.args if a.has(*shapes)]
    return len(terms) < len(add.args) and all(a.as_coeff_Mul()[0] != 1 for a in terms)


@lru_cache(maxsize=None)
def coefficient_symbol(i: int) -> sympy.Symbol:
    # a name no hardware symbol has (those come from the symbols module)
    return sympy.Symbol(f"_coef_{i}")

