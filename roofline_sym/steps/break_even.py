"""Where a bound step breaks even, and which GPU number decides its speedup.

A step is a sum of many roofline maxima, a bubble factor and an exposed
communication ``Max``: its break-even along sequence length or local batch
is found numerically on the compiled step (``evaluate`` at real values), not
in closed form.  ``step_breakeven`` brackets every sign change of
``T_bf16 - T_lowp`` on a geometric grid and bisects it to machine precision;
``step_sensitivity`` gives the elasticity ``d ln speedup / d ln x`` of every
hardware number by central differences (relative step 1e-6), all of them in
one evaluation.

>>> import roofline_sym as rs
>>> be = rs.breakeven(rs.step("llama3-8b", "tensorwise").on("h100"), solve_for="S",
...                   local_batch=1)
>>> len(be.roots), be.faster.sup
(1, oo)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import sympy

from ..solve.result import Roots
from ..validate import positive_number
from .parallel import StepInputError

__all__ = ["StepBreakEven", "step_breakeven", "step_sensitivity", "VARIABLES"]

# what a step's break-even solves for: the shape it is evaluated at
VARIABLES = {"S": "seq_len", "B": "local_batch", "seq_len": "seq_len",
             "local_batch": "local_batch"}
_GRID = 2049  # points of the bracketing grid, geometric over [low, high]


@dataclass(frozen=True)
class StepBreakEven:
    """``roots``: where the two step times are equal (``Roots``, floats as SymPy
    numbers); ``faster``: the set of the variable where low precision is
    strictly faster, within ``[low, high]``; ``fixed``: the other shape."""

    variable: str
    roots: Roots
    faster: sympy.Set
    fixed: Mapping[str, float]
    low: float
    high: float

    def __repr__(self) -> str:
        at = ", ".join(f"{k}={v:g}" for k, v in self.fixed.items())
        return f"StepBreakEven({self.variable}: roots {self.roots!r} at {at}; faster {self.faster})"


def _difference(step: Any, name: str, x: np.ndarray, other: float) -> np.ndarray:
    seq, batch = (x, other) if name == "seq_len" else (other, x)
    out = step.compiled.evaluate(seq, batch, 1, {}, outputs=("baseline_step_s", "lowp_step_s"))
    diff: np.ndarray = out["baseline_step_s"] - out["lowp_step_s"]
    return diff


def step_breakeven(step: Any, solve_for: str = "S", *, low: float = 1.0, high: float = 2.0 ** 24,
                   **fixed: Any) -> StepBreakEven:
    """The break-even of a bound ``step`` along ``solve_for`` (``S``/``seq_len`` or
    ``B``/``local_batch``), the other given by name, on ``[low, high]``."""
    if step.hardware is None:
        raise StepInputError("a step's break-even is solved numerically: bind a GPU first "
                             "(step.on('h100'))")
    name = VARIABLES.get(solve_for) if isinstance(solve_for, str) else None
    if name is None:
        raise StepInputError(f"a step solves for S (seq_len) or B (local_batch), not "
                             f"{solve_for!r}")
    other = "local_batch" if name == "seq_len" else "seq_len"
    unknown = set(fixed) - {other, {"seq_len": "S", "local_batch": "B"}[other]}
    if unknown or len(fixed) != 1:
        raise StepInputError(f"give the other shape, {other}=, and nothing else (got "
                             f"{sorted(fixed)})")
    value = positive_number(next(iter(fixed.values())), other)
    low, high = positive_number(low, "low"), positive_number(high, "high")
    if not low < high:
        raise StepInputError(f"low={low:g} must be below high={high:g}")
    x = np.geomspace(low, high, _GRID)
    d = _difference(step, name, x, value)
    sign = np.sign(d)
    brackets = np.flatnonzero(sign[:-1] * sign[1:] < 0)
    a, b = x[brackets], x[brackets + 1]
    fa = d[brackets]
    for _ in range(64):  # bisection, all brackets at once
        mid = 0.5 * (a + b)
        fm = _difference(step, name, mid, value)
        left = np.sign(fm) == np.sign(fa)
        a, fa, b = np.where(left, mid, a), np.where(left, fm, fa), np.where(left, b, mid)
    roots = [float(r) for r in 0.5 * (a + b)]
    roots += [float(v) for v in x[sign == 0]]
    roots.sort()
    edges = [low] + roots + [high]
    faster: sympy.Set = sympy.EmptySet
    for lo, hi in zip(edges[:-1], edges[1:]):
        mid_value = _difference(step, name, np.array([np.sqrt(lo * hi)]), value)[0]
        if mid_value > 0:
            upper = sympy.oo if hi == high else sympy.Float(hi, 15)
            faster = sympy.Union(faster, sympy.Interval.open(sympy.Float(lo, 15), upper))
    return StepBreakEven(name, Roots([sympy.Float(r, 15) for r in roots]), faster,
                         {other: value}, low, high)


def step_sensitivity(step: Any, seq_len: Any, local_batch: Any) -> dict[sympy.Symbol, float]:
    """``{x: d ln speedup / d ln x}`` for every hardware number of a bound ``step``
    at one point (a number that is 0, a fixed time nobody stated, has 0)."""
    if step.hardware is None:
        raise StepInputError("sensitivity at a point needs hardware numbers: bind the "
                             "step (step.on(gpu))")
    values = dict(step.hardware_values)
    symbols = sorted(values, key=str)
    h = 1e-6
    n = len(symbols)
    arrays = {str(s): np.full(2 * n + 1, float(values[s])) for s in symbols}
    for k, s in enumerate(symbols):
        arrays[str(s)][1 + 2 * k] *= 1 + h
        arrays[str(s)][2 + 2 * k] *= 1 - h
    seq = positive_number(seq_len, "seq_len")
    batch = positive_number(local_batch, "local_batch")
    out = step.unbound.compiled.evaluate(seq, batch, 1, arrays, outputs=("speedup",))
    log = np.log(out["speedup"])
    scale = np.log1p(h) - np.log1p(-h)
    return {s: float((log[1 + 2 * k] - log[2 + 2 * k]) / scale) if values[s] != 0 else 0.0
            for k, s in enumerate(symbols)}
