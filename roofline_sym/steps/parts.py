"""A bound step at one point, split at the numbers only whole steps pin.

The attention core's efficiency, the overlap fraction and the fixed time per
step (``data/step.toml``) enter a step in three places; everything else (the
linears, the memory-bound kernels, the optimizer, the collectives) is a
number once the GPU, the sequence length and the batch are given.
``split_step`` evaluates those numbers once, so a fit can price a step at any attention
efficiency, overlap and fixed time in a few floating-point operations, the
same composition ``Step`` compiles::

    compute = linear + pointwise + sum(Max(flops_i / (P eta_i), floor_i))
    step    = compute (1 + bubble) + exposed + Max(0, hidden - phi compute)
            + optimizer + t_step

>>> from roofline_sym.steps.composition import step
>>> s = step("llama3-8b", "tensorwise", gpus=8).on("h100")
>>> p = split_step(s, 8192, 1)
>>> base, lowp = p.times(p.numbers)
>>> out = s.evaluate(8192, 1, ["baseline_step_s", "lowp_step_s"])
>>> bool(abs(base / float(out["baseline_step_s"]) - 1) < 1e-9)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping

import sympy

from .. import symbols as S
from .model import Step
from .parallel import StepInputError

__all__ = ["StepParts", "SideParts", "split_step", "FITTED"]

# the step numbers a whole step pins: step.toml's generation keys -> symbols
FITTED = {"attention_forward": S.attention_efficiency("forward"),
          "attention_backward": S.attention_efficiency("backward"),
          "overlap": S.overlap_fraction(),
          "step_fixed_s": S.step_fixed_time()}
_PASS = {S.attention_efficiency("forward"): "attention_forward",
         S.attention_efficiency("backward"): "attention_backward"}


@dataclass(frozen=True)
class SideParts:
    """One side of a step at one point, in seconds: ``compute`` (linears and
    memory-bound kernels), the attention core's kernels as ``(seconds at
    efficiency 1, floor, pass)`` (floor: the larger of the memory and launch
    times; pass: the ``FITTED`` key of its efficiency, or "" for none),
    communication that hides under compute (``hidden``) or not (``exposed``),
    and the optimizer."""

    compute: float
    attention: tuple[tuple[float, float, str], ...]
    hidden: float
    exposed: float
    optimizer: float

    def time(self, numbers: Mapping[str, float], bubble: float, training: bool) -> float:
        """The side's step time at ``numbers`` (``FITTED`` keys)."""
        attention = sum(max(c / numbers[k], floor) if k else floor
                        for c, floor, k in self.attention)
        compute = self.compute + attention
        hidden = max(0.0, self.hidden - numbers["overlap"] * compute)
        fixed = numbers["step_fixed_s"] if training else 0.0
        return compute * (1 + bubble) + self.exposed + hidden + self.optimizer + fixed


@dataclass(frozen=True)
class StepParts:
    """A step at one point (``split_step``): both sides, the bubble, whether it
    trains, the tokens one GPU advances per step and the ``numbers`` it was
    bound with."""

    baseline: SideParts
    lowp: SideParts
    bubble: float
    training: bool
    tokens: float
    numbers: Mapping[str, float]

    def times(self, numbers: Mapping[str, float]) -> tuple[float, float]:
        """``(baseline, low precision)`` step seconds at ``numbers``."""
        return (self.baseline.time(numbers, self.bubble, self.training),
                self.lowp.time(numbers, self.bubble, self.training))


def _attention(step: Step, side: str, values: Mapping[sympy.Basic, sympy.Expr]
               ) -> tuple[tuple[float, float, str], ...]:
    """Each attention kernel's compute at efficiency 1 and its floor."""
    out = []
    for term in step.terms:
        if term.group != "attention" or term.side != side:
            continue
        for part in term.weighted_parts():
            compute, floor, key = 0.0, 0.0, ""
            for label, expr in part:
                etas = expr.free_symbols & set(_PASS)
                value = float((expr * sympy.Mul(*etas)).xreplace(values))
                if label == "compute" and etas:
                    compute, key = value, _PASS[etas.pop()]
                else:
                    floor = max(floor, value)
            out.append((compute, floor, key))
    return tuple(out)


def split_step(step: Step, seq_len: int, local_batch: int) -> StepParts:
    """``step`` (bound to a GPU) at one sequence length and local batch, split
    at the ``FITTED`` numbers."""
    if step.hardware is None or step.unbound is None:
        raise StepInputError("a step's parts need a GPU: bind it with .on(gpu)")
    values = step.hardware_values
    numbers = {k: float(values[s]) if s in values else 0.0 for k, s in FITTED.items()}
    point = {S.SEQ_LEN: sympy.Integer(seq_len), S.LOCAL_BATCH: sympy.Integer(local_batch)}
    others = {k: v for k, v in values.items() if k not in _PASS} | point
    by_name = {str(k): float(v) for k, v in values.items()}
    unbound = step.unbound
    keys = [key for key, _ in unbound._term_specs()]
    times = unbound.compiled.term_times(seq_len, local_batch, 1, by_name)
    total: dict[Hashable, float] = {}
    for key, (seconds, _) in zip(keys, times):
        total[key] = total.get(key, 0.0) + float(seconds)
    sides = []
    for side in ("baseline", "lowp"):
        group = {g: total.get((side, g), 0.0) for g in
                 ("linear", "pointwise", "optimizer", "comm", "comm_exposed")}
        sides.append(SideParts(group["linear"] + group["pointwise"],
                               _attention(unbound, side, others), group["comm"],
                               group["comm_exposed"], group["optimizer"]))
    tokens = float(sympy.sympify(unbound.shared["tokens"]).xreplace(point))
    return StepParts(sides[0], sides[1], float(step.spec.bubble), step.spec.training, tokens,
                     numbers)
