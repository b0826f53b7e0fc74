"""Terms compiled once for numbers: what ``evaluate`` runs, made once per structure.

``compile_terms(terms, layout)`` takes named times as SymPy expressions in the
shapes ``M, K, N`` and any other symbols (each term the maximum of its
labelled pieces, added into a group), and how the groups make the outputs
(``Layout``: expressions of the group totals).  It knows expressions, not
models: the model layer gives its own terms and vocabulary.

The compilation is cached by the structure of the terms: a bound model
passes its numbers as arguments (``bind``), so sweeping many GPUs compiles
once per recipe and mode.  ``program(outputs)`` is one request's code,
``source(outputs)`` its text (numpy, or the fused loop numba compiles).

>>> import sympy
>>> from roofline_sym.symbols import M, K, N
>>> g = sympy.Symbol("g")
>>> layout = Layout(groups=(("all", g),), outputs=(("time", g), ("rate", 1 / g)),
...                 labels=("compute", "memory"))
>>> P, BW = sympy.symbols("P BW", positive=True)
>>> gemm = ("all", (("compute", 2 * M * K * N / P), ("memory", 2 * (M * K + K * N) / BW)))
>>> c = compile_terms([gemm], layout)
>>> c
CompiledTerms(1 terms, 2 coefficients of BW, P)
>>> out = c.bind({P: 10**15, BW: 10**12}).evaluate(1024, 1024, 1024)
>>> float(out["time"]), float(out["rate"])
(4.194304e-06, 238418.5791015625)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache, reduce
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..errors import InputError
from .operations import (LAMBDIFY_MODULES, SHAPE_SYMBOLS, SHAPES, Builder, Coefficients,
                         coefficient_symbol, hoist, is_vector, with_common_parts)
from .program import Operations, Program
from .runtime import CHUNK, Run, output_names

__all__ = ["Layout", "CompiledTerms", "BoundTerms", "compile_terms", "Pieces", "TermSpec"]

# a term's pieces: (label, expression); its time is their maximum
Pieces = tuple[tuple[str, sympy.Expr], ...]
# a term: the key of the group it adds into, and its pieces
TermSpec = tuple[Hashable, Pieces]


@dataclass(frozen=True)
class Layout:
    """How terms become outputs: ``groups`` ``(key, symbol)`` (each group's
    total is the sum of its terms, a term counted as often as it occurs),
    ``outputs`` ``(name, expression of the groups' symbols)``, and the
    ``labels`` a term's pieces carry (a piece's regime)."""

    groups: tuple[tuple[Hashable, sympy.Symbol], ...]
    outputs: tuple[tuple[str, sympy.Expr], ...]
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        symbols = {s for _, s in self.groups}
        for name, e in self.outputs:
            stray = sympy.sympify(e).free_symbols - symbols
            if stray:
                raise InputError(f"output {name!r} uses {sorted(map(str, stray))}, which name "
                                 "no group")
        if not self.labels:
            raise InputError("a layout needs at least one label")

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.outputs)

    @property
    def group_keys(self) -> tuple[Hashable, ...]:
        return tuple(key for key, _ in self.groups)


class _Evaluator:
    """What compiled terms, bound or not, offer: ``evaluate``, ``term_times``, ``source``."""

    compiled: "CompiledTerms"
    coefficients_bound: tuple[float, ...] | None

    def program(self, outputs: Sequence[str] | None = None, terms: bool = False) -> Program:
        """The (cached) program computing ``outputs`` (all by default; and every
        term's time and regime)."""
        names = self.compiled.layout.output_names if outputs is None else tuple(outputs)
        return self.compiled._program(names, terms)

    def source(self, outputs: Sequence[str] | str | None = None, kernel: str = "numpy") -> str:
        """The code generated for ``outputs``, for reading and debugging:
        ``kernel="numpy"`` (a chunk function, in place), ``"plain"`` (numpy
        elementwise, for lazy arrays) or ``"fused"`` (the loop numba compiles,
        shapes as arrays; with Python's ``max`` where a bound model's
        coefficients let no maximum see NaN, ``Program.nan_free``).

        >>> import roofline_sym as rs
        >>> print(rs.linear("tensorwise").on("h100").compiled.source("speedup")[:22])
        def run(M, K, N, c0, c
        """
        program = self.program(output_names(outputs, self.compiled.layout.output_names))
        if kernel == "numpy":
            return program.source
        if kernel == "plain":
            return program.plain_source
        if kernel == "fused":  # as it runs for arrays of shapes
            bound = self.coefficients_bound
            return program.fused_source((True, True, True), (),
                                        bound is not None and program.nan_free(bound))
        raise InputError(f"kernel must be 'numpy', 'plain' or 'fused', not {kernel!r}")

    def evaluate(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any] = {},
                 outputs: Sequence[str] | str | None = None, dtype: Any = np.float64,
                 chunk: int = CHUNK, regimes: bool = False, threads: int | None = None,
                 engine: str = "auto", whole: bool = False,
                 out: Mapping[str, np.ndarray] | None = None) -> dict[Any, np.ndarray]:
        """``{name: array}`` for each of ``outputs`` (all by default) at shapes
        ``M, K, N`` (numpy broadcasting), an unbound model's free symbols by
        name in ``hardware_values``.

        ``dtype``: float64, or float32 (half the memory, about 7 digits; products
        such as ``M*K*N`` must stay below 3e38).  ``regimes``: also, for each
        group (its key), an int8 array: per shape, the index in ``labels`` of
        the label whose terms hold most of the group's time (the first on
        ties; -1 for a group without terms).  ``threads``: how many threads
        share the shapes (None: every core, for inputs large enough); the
        values do not depend on it.  ``engine``: ``"numpy"``, ``"numba"``
        (the fused loop; the ``fast`` extra) or ``"auto"`` (numba where it
        pays, ``runtime.fast_pays``).  ``whole``: shapes must be whole numbers
        (a fraction is a ValueError naming the argument), checked as the shapes
        are read for the work.  ``out``: arrays to write outputs into, by name
        (each of the result's shape and dtype, in C order; a repeated call
        then writes into memory already in use instead of fresh pages).
        """
        names = output_names(outputs, self.compiled.layout.output_names)
        return Run(self, M, K, N, hardware_values, names, regimes, dtype, chunk, threads,
                   engine, whole, out).result

    def term_times(self, M: Any, K: Any, N: Any, hardware_values: Mapping[str, Any] = {},
                   chunk: int = CHUNK) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per term, in order: ``(seconds, labels)`` at shapes ``M, K, N``."""
        run = Run(self, M, K, N, hardware_values, (), "terms", np.float64, chunk, 1, "numpy")
        labels = np.array(self.compiled.layout.labels)
        return [(run.times[i], labels[run.regimes[i]]) for i in range(len(run.times))]

    # what runtime.Run asks of an evaluator
    @property
    def free_names(self) -> tuple[str, ...]:
        return self.compiled.names

    @property
    def group_keys(self) -> tuple[Hashable, ...]:
        return self.compiled.layout.group_keys

    @property
    def group_members(self) -> tuple[tuple[int, ...], ...]:
        return self.compiled._members

    def coefficient_values(self, *hardware: Any) -> list[Any]:
        return list(self.compiled.coefficient_fn(*hardware))


class CompiledTerms(_Evaluator):
    """``terms`` compiled once: a numeric function of the shapes and of every
    other symbol the terms contain (``free``, sorted by name), given by name.

    Use ``compile_terms`` (cached by the structure of the terms) rather than
    building one; ``bind`` fixes the free symbols' values.
    """

    coefficients_bound = None

    def __init__(self, terms: Sequence[TermSpec], layout: Layout):
        self.compiled, self.layout = self, layout
        self.terms = tuple((key, tuple(pieces)) for key, pieces in terms)
        free = set().union(*(e.free_symbols for _, pieces in self.terms for _, e in pieces))
        self.free = tuple(sorted(free - set(S.SHAPE_SYMBOLS), key=str))
        # their names, printed once (every evaluation asks for them)
        self.names = tuple(map(str, self.free))
        keys = layout.group_keys
        unknown = {key for key, _ in self.terms} - set(keys)
        if unknown:
            raise InputError(f"terms of unknown group {sorted(map(str, unknown))}; the "
                             f"groups are {list(keys)}")
        bad = {r for _, pieces in self.terms for r, _ in pieces} - set(layout.labels)
        if bad or any(not pieces for _, pieces in self.terms):
            raise InputError(f"a term's pieces are (label, expression) pairs, labels from "
                             f"{list(layout.labels)}; got labels {sorted(bad)}")
        self._members = tuple(tuple(i for i, (k, _) in enumerate(self.terms) if k == key)
                                   for key in keys)
        coef = Coefficients()
        pieces = [hoist(e, coef) for _, ps in self.terms for _, e in ps]
        # twice: first to see every sum and product needed, then to build them
        hoisted = len(coef.exprs)
        planning, _ = self._build(Builder(coef), pieces)
        coef.truncate(hoisted)
        builder, self._operations = self._build(
            Builder(coef, with_common_parts(planning.planned)), pieces)
        self.coefficients = tuple(coef.exprs)
        self._programs: dict[tuple[tuple[str, ...], bool], Program] = {}

    def _build(self, b: Builder, pieces: list[sympy.Expr]) -> tuple[Builder, Operations]:
        """Every piece, term time, group total and output as operations of ``b``."""
        coef, labels = b.coef, self.layout.labels
        b.env.update(SHAPE_SYMBOLS)
        b.env.update({coefficient_symbol(i): f"c{i}" for i in range(len(coef.exprs))})
        piece_ops = iter([b.expr(e) for e in pieces])
        # every term: its time (the largest piece; scalar pieces merged) and pieces
        term_operands = []
        for _, ps in self.terms:
            ops = tuple((next(piece_ops), labels.index(r)) for r, _ in ps)
            term_operands.append((b.chain("maximum", [o for o, _ in ops]), ops))
        uses = Counter(a for _, _, args in b.ops for a in args if isinstance(a, int))
        # every group: the sum of its terms, a term that occurs k times counted k times
        zero: dict[sympy.Basic, sympy.Expr] = {}
        for members, (_, symbol) in zip(self._members, self.layout.groups):
            counts = Counter(term_operands[i][0] for i in members)
            vectors = [b.scaled(v, k, uses) if k > 1 else v
                       for v, k in counts.items() if is_vector(v)]
            scalars = [coef.expr(v) * k for v, k in counts.items() if not is_vector(v)]
            parts = vectors + ([coef.of(sympy.Add(*scalars))] if scalars else [])
            if parts:
                b.env[symbol] = reduce(lambda x, y: b.op("add", x, y), parts)
            else:  # a group without terms adds nothing: no operation for it
                zero[symbol] = sympy.Integer(0)
        out = {name: b.expr(sympy.sympify(e).xreplace(zero)) for name, e in self.layout.outputs}
        # M*K*N where the terms need it: its minimum tells a chunk has no zero shape
        product = b.form_operand("multiply", sorted(SHAPES))
        return b, Operations(b.ops, b.calls, term_operands, out, product, len(coef.exprs),
                             len(labels))

    def _program(self, outputs: tuple[str, ...], terms: bool) -> Program:
        key = (outputs, terms)
        if key not in self._programs:
            self._programs[key] = Program(self._operations, outputs, terms)
        return self._programs[key]

    @cached_property
    def coefficient_fn(self) -> Callable[..., Any]:
        """The coefficients from numbers or arrays of the free symbols (made on the
        first evaluation of the unbound terms: a bound model does not need it)."""
        fn: Callable[..., Any] = sympy.lambdify(self.free, list(self.coefficients),
                                                modules=LAMBDIFY_MODULES)
        return fn

    def bind(self, values: Mapping[sympy.Symbol, Any]) -> "BoundTerms":
        """These terms with every free symbol given a value: exact (SymPy numbers,
        so the coefficients are rounded once) or floats."""
        missing = [s for s in self.free if s not in values]
        if missing:
            raise InputError(f"no value for {missing}")
        exact = {s: sympy.sympify(values[s]) for s in self.free}
        return BoundTerms(self, tuple(_exact_float(e, exact) for e in self.coefficients))

    def __repr__(self) -> str:
        return (f"CompiledTerms({len(self.terms)} terms, {len(self.coefficients)} "
                f"coefficients of {', '.join(map(str, self.free)) or 'nothing'})")


class BoundTerms(_Evaluator):
    """Compiled terms with their free symbols' values fixed (``CompiledTerms.bind``):
    the same methods, without hardware values."""

    def __init__(self, compiled: CompiledTerms, coefficients: tuple[float, ...]):
        self.compiled, self.coefficients_bound = compiled, coefficients

    def __repr__(self) -> str:
        return f"BoundTerms({self.compiled!r})"


@lru_cache(maxsize=256)
def _compile_cached(terms: tuple[TermSpec, ...], layout: Layout) -> CompiledTerms:
    return CompiledTerms(terms, layout)


def compile_terms(terms: Iterable[TermSpec], layout: Layout) -> CompiledTerms:
    """The compiled form of ``terms`` ``(group key, pieces)``, made once per
    structure (the same terms, in the same order, and layout)."""
    return _compile_cached(tuple((key, tuple(pieces)) for key, pieces in terms), layout)


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
