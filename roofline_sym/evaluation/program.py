"""Operations to code: one request's operations scheduled, as numpy and as a fused loop.

A ``Program`` is what a request (``outputs``, and whether every term's time
and regime is wanted) costs: the operations it needs, each sink's just
before it is needed, given scratch buffers that are reused as soon as a
value dies.  It is generated three times over, from the same schedule:

- ``run``: numpy over a chunk of shapes, in place, in ``n_buffers`` scratch
  arrays, writing into the preallocated outputs (``source``);
- ``plain``: numpy elementwise, no ``out=``, for arrays of other libraries
  (dask) that stay lazy (``plain_source``);
- ``fused_source(...)``: one loop over the shapes in scalar Python code, all
  outputs in one pass, for numba to compile (``cache.compile_kernel``); the
  same operations in the same order, so it rounds as ``run`` does.

>>> import sympy
>>> from roofline_sym.symbols import M, K, N
>>> from roofline_sym.evaluation.operations import Builder, Coefficients, SHAPES
>>> b = Builder(Coefficients())
>>> b.env.update(dict(zip((M, K, N), SHAPES)))
>>> ops = Operations(b.ops, (), (), {"area": b.expr(M * K)}, None, 0, 0)
>>> print(Program(ops, ("area",), False).source.strip())
def run(M, K, N, o0):
    multiply(K, M, o0)
    return None
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..validate import SHAPE_MAX
from .operations import SHAPES

__all__ = ["Operations", "Program", "UFUNCS"]

# the numpy functions the operations name (and generated code calls)
UFUNCS = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "negative", "ceil",
          "floor", "exp", "log", "absolute", "sqrt", "power", "reciprocal")
# each function of the fused loop on scalars: the same numpy function where its
# rounding or its NaN and infinity rules differ from Python's operator
_SCALAR = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
           "divide": "{0} / {1}", "negative": "-{0}", "reciprocal": "1.0 / {0}",
           "maximum": "np.maximum({0}, {1})", "minimum": "np.minimum({0}, {1})",
           "ceil": "np.ceil({0})", "floor": "np.floor({0})", "exp": "np.exp({0})",
           "log": "np.log({0})", "absolute": "np.absolute({0})", "sqrt": "np.sqrt({0})",
           "power": "np.power({0}, {1})"}

# where no operand of a maximum or minimum can be NaN: Python's max and min, which
# numba vectorizes (np.maximum's NaN rule is a branch per element, about twice
# the time of the whole fused loop); the same value for every other operand
_SCALAR_NAN_FREE = {"maximum": "max({0}, {1})", "minimum": "min({0}, {1})"}

Operand = int | str
Step = tuple[Any, ...]


@dataclass(frozen=True)
class Operations:
    """What a compilation made: the operations ``(function, value, operands)``;
    the functions ``calls`` that ``call`` operations name (``f0``, ...); per
    term, its time's operand and its pieces' ``(operand, label)``; per output,
    its operand; the operand of ``M*K*N`` where the terms need it (None
    else); the numbers of coefficients and of labels."""

    ops: Sequence[tuple[str, int, tuple[Operand, ...]]]
    calls: Sequence[Callable[..., Any]]
    term_operands: Sequence[tuple[Operand, tuple[tuple[Operand, int], ...]]]
    output_operands: Mapping[str, Operand]
    shape_product: Operand | None
    n_coefficients: int
    n_labels: int


class Program:
    """The operations for one request, scheduled and given buffers.

    ``outputs``: names of ``operations.output_operands``; ``terms``: also
    every term's time and regime.  ``n_buffers``: scratch arrays of one chunk
    each; ``n_ops``: numpy calls per chunk; ``checks_zero``: ``run`` returns
    the least ``M*K*N`` of the chunk (a zero shape makes it 0).
    ``zero_outputs``: the indices of outputs that are 0 at every shape (a
    baseline without overhead); ``run`` and the fused kernel leave them
    unwritten, for the caller to allocate zeroed (``np.zeros``: pages the
    system hands out zeroed, so nothing is written or touched at all).
    """

    def __init__(self, operations: Operations, outputs: tuple[str, ...], terms: bool):
        self.operations, self.outputs, self.terms = operations, outputs, terms
        ops = operations.ops
        self.zero_outputs = tuple(i for i, name in enumerate(outputs)
                                  if operations.output_operands[name] == "0.0")
        # terms first: each term's regime is found right after its pieces
        sinks: list[tuple[str, Any]] = [("term", (i, time, pieces)) for i, (time, pieces)
                                        in enumerate(operations.term_operands) if terms]
        sinks += [("out", (name, operations.output_operands[name])) for name in outputs]
        # schedule: each sink's operations depth first, just before they are needed
        # steps: (function, value or target, operands[, regimes])
        order: list[Step] = []
        seen: set[int] = set()

        def visit(v: Operand) -> None:
            if isinstance(v, int) and v not in seen:
                seen.add(v)
                for a in ops[v][2]:
                    visit(a)
                order.append(ops[v])

        tail: list[Step] = []  # copies into targets, after all operations
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
        product = operations.shape_product
        self.checks_zero = isinstance(product, int) and product in seen
        if self.checks_zero:
            at = next(i for i, step in enumerate(order) if step[1] == product and step[0]
                      not in ("regime", "copy"))
            order.insert(at + 1, ("least", "least", (product,)))
        self.fusable = not operations.calls or all(step[0] != "call" for step in order)
        self._order, self._pinned = order, pinned
        self._fused: dict[tuple[tuple[bool, ...], tuple[tuple[int, ...], ...], bool, bool],
                          str] = {}
        # shapes run with numpy in this process (``runtime.fast_pays`` reads it)
        self.numpy_shapes = 0
        self._numpy_source()

    def _numpy_source(self) -> None:
        order, pinned = self._order, self._pinned
        last: dict[int, int] = {}
        zero_targets = {f"o{i}" for i in self.zero_outputs}
        for i, step in enumerate(order):
            for a in step[2]:
                if isinstance(a, int):
                    last[a] = i
        free: list[str] = []
        n_buffers = 0
        where: dict[int, str] = {}
        lines, plain = [], []

        def name(a: Operand) -> str:
            return where[a] if isinstance(a, int) else a

        def pname(a: Operand) -> str:
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
                lines.append(f"_regime({dest}, ({operands},), {step[3]!r})")
                continue
            if fn == "least":
                lines.append(f"least = minimum.reduce({operands})")
                continue
            if fn == "copy":
                if dest not in zero_targets:
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
        self._compile_numpy(lines, plain)

    def _compile_numpy(self, lines: list[str], plain: list[str]) -> None:
        """``run`` (in place, over ``b`` buffers) and the plain source (lazy arrays)
        from the statements ``_numpy_source`` wrote."""
        n_buffers = self.n_buffers
        n_out = len(self.outputs)
        n_terms = len(self.operations.term_operands) if self.terms else 0
        coefs = [f"c{i}" for i in range(self.operations.n_coefficients)]
        params = ["M", "K", "N", *coefs, *(f"o{i}" for i in range(n_out)),
                  *(f"T{i}" for i in range(n_terms)), *(f"R{i}" for i in range(n_terms)),
                  *(f"b{i}" for i in range(n_buffers))]
        namespace: dict[str, Any] = {u: getattr(np, u) for u in UFUNCS}
        namespace.update(copyto=np.copyto, _regime=_regime, _full=_plain_full)
        namespace.update({f"f{i}": f for i, f in enumerate(self.operations.calls)})
        src = f"def run({', '.join(params)}):\n    " + "\n    ".join(lines) + "\n"
        # the plain version returns the outputs; constants are filled to the shape
        plain = [line.replace("_full(", "_full(M, K, N, ") for line in plain]
        psrc = (f"def plain({', '.join(['M', 'K', 'N', *coefs])}):\n    "
                + "\n    ".join(plain + [f"return ({''.join(f'o{i}, ' for i in range(n_out))})"])
                + "\n")
        # the source is made here from operation names and numbers, never from text
        # a user supplied
        exec(compile(src, "<roofline_sym.evaluation run>", "exec"), namespace)
        self.source, self.plain_source = src, psrc
        self.run: Callable[..., Any] = namespace["run"]
        self._namespace = namespace

    @cached_property
    def plain(self) -> Callable[..., Any]:
        """The plain version (lazy arrays), compiled when first asked for."""
        exec(compile(self.plain_source, "<roofline_sym.evaluation plain>", "exec"),
             self._namespace)
        fn: Callable[..., Any] = self._namespace["plain"]
        return fn

    def nan_free(self, coefficients: Sequence[float]) -> bool:
        """Whether, with these coefficients and shapes in ``(0, 2**53]``, no
        maximum or minimum can see NaN: each of their operands is built of the
        shapes, positive coefficients and literals by sums, products, maxima,
        minima, roundings and divisions by a positive number, so it is at least
        0, and at most a finite bound (each operation's rounding is monotonic,
        so the bound computed in floats bounds the values): no inf, no NaN.
        Then Python's max and min give np.maximum's and np.minimum's values."""
        def bound(a: Operand) -> float | None:
            if isinstance(a, int):
                return bounds[a]
            if a in SHAPES:
                return float(SHAPE_MAX)
            v = coefficients[int(a[1:])] if a.startswith("c") else float(a)
            return v if 0 < v < np.inf else None

        bounds: list[float | None] = []
        for fn, _, args in self.operations.ops:  # operands before their uses
            b = [x for x in map(bound, args) if x is not None]
            ub: float | None = None
            if len(b) < len(args):
                ub = None
            elif fn == "divide":  # by a positive number, not by a computed value
                ub = None if isinstance(args[1], int) else b[0] / b[1]
            elif fn == "add":
                ub = math.fsum(b)
            elif fn == "multiply":
                ub = math.prod(b)
            elif fn in ("ceil", "floor"):
                ub = b[0] + 1
            elif fn in ("maximum", "minimum"):
                ub = max(b)
            bounds.append(ub if ub is not None and ub < np.inf else None)
        return all(bound(a) is not None for step in self._order
                   if step[0] in ("maximum", "minimum") for a in step[2])

    def fused_source(self, arrays: Sequence[bool], groups: Sequence[Sequence[int]] = (),
                     nan_free: bool = False, whole: bool = False) -> str:
        """A numba kernel of this program: one loop over ``n`` shapes computing
        every output (and, with ``groups``, each group's regime: the label whose
        terms hold the most time, as ``runtime`` finds it) in scalar code.

        ``arrays``: whether M, K and N are arrays (the others are numbers).  The
        kernel takes the shapes, the coefficients, the outputs, one int8 array
        per group and ``n``, and returns how many array shapes are not in
        ``(0, 2**53]`` (or, with ``whole``, not whole numbers): they are
        checked, and named, by the caller.  So the shapes are read once, for
        the work and for their checks.  ``nan_free``: maxima and minima as
        Python's ``max`` and ``min``, for coefficients that
        ``nan_free(coefficients)`` accepts.
        """
        key = (tuple(arrays), tuple(map(tuple, groups)), nan_free, whole)
        if key not in self._fused:
            self._fused[key] = self._fused_source(*key)
        return self._fused[key]

    def _fused_source(self, arrays: tuple[bool, ...], groups: tuple[tuple[int, ...], ...],
                      nan_free: bool, whole: bool) -> str:
        scalar = {**_SCALAR, **_SCALAR_NAN_FREE} if nan_free else _SCALAR
        if not self.fusable:
            raise InputError("a program with lambdified functions has no fused kernel")
        if groups and not self.terms:
            raise InputError("group regimes need a program of term times (terms=True)")
        body: list[str] = []
        for shape, array in zip(SHAPES, arrays):
            if array:
                # np.floor(x) == x: a rounding and a comparison, vectorized with the rest
                whole_test = f" and np.floor({shape}) == {shape}" if whole else ""
                body += [f"{shape} = {shape}_[i]",
                         f"if not ({shape} > 0.0 and {shape} <= {float(SHAPE_MAX)!r}"
                         f"{whole_test}):",
                         "    bad += 1"]

        def name(a: Operand) -> str:
            return f"v{a}" if isinstance(a, int) else a

        for step in self._order:
            fn, dest, args = step[:3]
            if fn == "least":
                continue
            if fn == "regime":
                time, *pieces = (name(a) for a in args)
                labels = step[3]
                body.append(f"{dest} = {labels[-1]}")
                for value, r in zip(pieces[-2::-1], labels[-2::-1]):
                    body.append(f"if {value} == {time}:\n    {dest} = {r}")
                continue
            if fn == "copy":
                target = dest
            else:
                body.append(f"v{dest} = " + scalar[fn].format(*(name(a) for a in args)))
                target = self._pinned.get(dest, "")
                args = (dest,)
            if target.startswith("o") and int(target[1:]) not in self.zero_outputs:
                body.append(f"{target}[i] = {name(args[0])}")
            elif target.startswith("T"):
                body.append(f"{target} = {name(args[0])}")
        body += self._group_lines(groups)
        n_out = len(self.outputs)
        params = [f"{s}_" if a else s for s, a in zip(SHAPES, arrays)]
        params += [f"c{i}" for i in range(self.operations.n_coefficients)]
        params += [f"o{i}" for i in range(n_out)] + [f"g{j}" for j in range(len(groups))]
        loop = "\n        ".join(line.replace("\n", "\n        ") for line in body)
        return ("import numpy as np\n\n\n"
                f"def kernel({', '.join(params + ['n'])}):\n"
                "    bad = 0\n"
                "    for i in range(n):\n"
                f"        {loop}\n"
                "    return bad\n")

    def _group_lines(self, groups: Sequence[Sequence[int]]) -> list[str]:
        """Each group's regime into ``g<j>[i]``: per label the sum of its terms'
        times (in term order, as ``runtime`` adds them), the largest sum's label,
        the first on ties; -1 for a group without terms."""
        n = self.operations.n_labels
        lines = []
        for j, members in enumerate(groups):
            if not members:
                lines.append(f"g{j}[i] = -1")
                continue
            lines += [f"s{r} = 0.0" for r in range(n)]
            for t in members:
                for r in range(n):
                    keyword = "if" if r == 0 else "elif"
                    lines.append(f"{keyword} R{t} == {r}:\n    s{r} += T{t}")
            lines += [f"g = {n - 1}", f"best = s{n - 1}"]
            for r in range(n - 2, -1, -1):  # downwards: an equal earlier label wins
                lines += [f"if s{r} >= best:\n    g = {r}", f"best = np.maximum(best, s{r})"]
            lines.append(f"g{j}[i] = g")
        return lines


def _regime(out: np.ndarray, values: tuple[np.ndarray, ...], regimes: tuple[int, ...]) -> None:
    """``out`` = the regime (index of a label) of the first piece equal to the
    term's time ``values[0]`` (the maximum of the pieces ``values[1:]``)."""
    time, pieces = values[0], values[1:]
    out.fill(regimes[-1])
    for value, r in zip(pieces[-2::-1], regimes[-2::-1]):
        np.copyto(out, r, where=np.equal(value, time))


def _plain_full(M: Any, K: Any, N: Any, value: Any) -> Any:
    """``value`` (a constant) as an array of the shapes' shape, lazily for lazy arrays."""
    return np.add(np.multiply(np.multiply(np.multiply(M, 0.0), K), N), value)
