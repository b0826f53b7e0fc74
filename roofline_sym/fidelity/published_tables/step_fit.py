"""The step numbers only whole steps pin, fitted to the published runs, and
held out source by source.

Three kinds of number enter a step and no layer measurement reaches them
(``data/step.toml``): the attention core's efficiency per tensor-core
generation, the fraction of compute that hides communication (``overlap``)
and a fixed time per step.  ``fit_step_numbers`` fits them jointly to the
published training runs (``steps.csv``): each run's measured speedup and,
where its source prints tokens per second and the model prices that
absolute time (``step_throughputs.csv``), its bf16 step time; every source
weighs alike, however many runs it has.  Each number is held to its stated
prior (``prior_<key>`` in step.toml) by a penalty, so a number no run moves
stays at its prior: a generation without runs keeps its attention
efficiency.  The attention efficiency of a generation moves as one factor on
its forward and backward (their ratio is the prior's), within the physical
range ``ATTENTION_RANGE``; overlap and the fixed time are one number each
for every generation (they are the training framework's, not the GPU's).

``left_out`` predicts each run from numbers fitted without its source;
``nested_pool`` gives, for a held-out source, the other sources' residuals
from fits without it either, so its band never sees it.

The objective runs on ``steps.parts`` (each run split at these numbers once),
so one fit takes a fraction of a second (``scipy.optimize.least_squares``,
the ``fit`` extra).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ...datafile import Delimited, read_text
from ...devices import implementations
from ...steps.parts import FITTED, StepParts, split_step
from ...steps.systems import generation_tables
from ...validate import label
from .step_prediction import step_of
from .step_table import StepRow, published_steps_path, read_steps
from .step_throughputs import read_throughputs

__all__ = ["StepRun", "StepFit", "step_runs", "step_priors", "fit_step_numbers", "left_out",
           "nested_pool", "fits_for", "ATTENTION_RANGE", "SPEEDUP_SIGMA", "ABSOLUTE_SIGMA"]

# the attention core's forward at this fraction of the GEMM peak, at least and at
# most: FlashAttention-2 reaches about 35% of H100's bf16 peak and 50-73% of
# A100's, FlashAttention-3 75% of H100's (forward, head dim 128)
ATTENTION_RANGE = (0.25, 0.85)
# the spread expected of a run's log speedup and log step time about the model's:
# a step time carries what no speedup does (the framework's own overheads), so
# it counts for less
SPEEDUP_SIGMA, ABSOLUTE_SIGMA = 0.08, 0.25
# how far a number may stray from its prior before the penalty matches one
# source's misfit: a factor e^0.35 for attention, 0.2 for overlap, 0.5 s
PRIOR_SIGMA = {"attention": 0.35, "overlap": 0.2, "step_fixed_s": 0.5}
_OVERLAP_RANGE, _FIXED_RANGE = (0.05, 1.0), (0.0, 2.0)


@dataclass(frozen=True)
class StepRun:
    """A published run the model prices: its measured speedup, its parts, and
    its measured bf16 step time where the model prices it (else None)."""

    source_id: str
    line: int
    kind: str
    moe: bool
    generation: str
    measured: float
    parts: StepParts
    baseline_step_s: float | None

    @property
    def training(self) -> bool:
        return self.kind == "training"


@cache
def step_runs(path: str | None = None) -> tuple[StepRun, ...]:
    """Every run of ``steps.csv`` with a measured speedup that the model prices."""
    table = path or str(published_steps_path())
    rows = read_steps(table)
    _, text = read_text(table, "step table")
    measured = {line: rec.get("measured_speedup", "") for line, rec in
                Delimited(text.splitlines(keepends=True), label(table)).records()}
    absolute = read_throughputs() if path is None else {}
    out = []
    for r in rows:
        if not measured.get(r.line):
            continue
        try:
            step = step_of(r)
        except ValueError:  # a run the model refuses (a GPU without link numbers)
            continue
        split = split_step(step, r.seq_len, r.local_batch)
        assert step.hardware is not None  # step_of binds the row's GPU
        out.append(StepRun(r.source_id, r.line, "training" if r.mode == "training" else
                           "serving", r.model.moe is not None,
                           implementations.generation(step.hardware) or "default",
                           float(measured[r.line]), split, _measured_step(r, split, absolute)))
    return tuple(out)


def _measured_step(row: StepRow, split: StepParts, absolute: Mapping[int, Any]) -> float | None:
    t = absolute.get(row.line)
    if t is None or not t.absolute or t.grad_accum != 1 or row.mode != "training":
        return None
    return float(split.tokens / t.per_gpu(row.gpus)[0])


def step_priors() -> dict[str, dict[str, float]]:
    """Each generation's stated priors (``prior_<key>``, else the number itself)."""
    return {name: {k: float(table.get(f"prior_{k}", table[k])) for k in FITTED}
            for name, table in generation_tables().items()}


@dataclass(frozen=True)
class StepFit:
    """Fitted numbers per generation (``numbers``), which generations' attention
    runs moved (``attention_fitted``), and the sources and runs they came from."""

    numbers: Mapping[str, Mapping[str, float]]
    attention_fitted: tuple[str, ...]
    sources: tuple[str, ...]
    runs: int

    def of(self, generation: str) -> Mapping[str, float]:
        return self.numbers.get(generation, self.numbers["default"])

    def speedup(self, run: StepRun) -> float:
        base, lowp = run.parts.times(self.of(run.generation))
        return base / lowp


class _Problem:
    """The fit's residuals in its parameters ``x``: one attention factor per
    generation with training runs, then overlap and the fixed time."""

    def __init__(self, runs: Sequence[StepRun], priors: Mapping[str, Mapping[str, float]]):
        self.runs, self.priors = [r for r in runs if r.training], priors
        self.generations = sorted({r.generation for r in self.runs})
        counts: dict[str, int] = {}
        for r in self.runs:
            counts[r.source_id] = counts.get(r.source_id, 0) + 1
        self.weight = [1 / math.sqrt(counts[r.source_id]) for r in self.runs]
        self.shared = priors["default"]

    def numbers(self, x: Sequence[float] | np.ndarray) -> dict[str, dict[str, float]]:
        out = {}
        for name, prior in self.priors.items():
            factor = x[self.generations.index(name)] if name in self.generations else 1.0
            out[name] = {"attention_forward": prior["attention_forward"] * factor,
                         "attention_backward": prior["attention_backward"] * factor,
                         "overlap": x[-2], "step_fixed_s": x[-1]}
            out[name] = {k: float(v) for k, v in out[name].items()}
        return out

    def residuals(self, x: np.ndarray) -> np.ndarray:
        numbers = self.numbers(x)
        out = []
        for r, w in zip(self.runs, self.weight):
            base, lowp = r.parts.times(numbers.get(r.generation, numbers["default"]))
            out.append(w * math.log(base / lowp / r.measured) / SPEEDUP_SIGMA)
            if r.baseline_step_s is not None:
                out.append(w * math.log(base / r.baseline_step_s) / ABSOLUTE_SIGMA)
        out += [math.log(f) / PRIOR_SIGMA["attention"] for f in x[:-2]]
        out.append((x[-2] - self.shared["overlap"]) / PRIOR_SIGMA["overlap"])
        out.append((x[-1] - self.shared["step_fixed_s"]) / PRIOR_SIGMA["step_fixed_s"])
        return np.array(out)

    def bounds(self) -> tuple[list[float], list[float]]:
        fwd = [self.priors[g]["attention_forward"] for g in self.generations]
        low = [ATTENTION_RANGE[0] / f for f in fwd] + [_OVERLAP_RANGE[0], _FIXED_RANGE[0]]
        high = [ATTENTION_RANGE[1] / f for f in fwd] + [_OVERLAP_RANGE[1], _FIXED_RANGE[1]]
        return low, high

    def starts(self) -> list[np.ndarray]:
        """Where the search starts: the priors, and overlap and fixed time spread
        over their ranges (the step is a sum of maxima: a search from one point
        can stop at a kink)."""
        low, high = self.bounds()
        out = []
        for phi in (self.shared["overlap"], 0.3, 0.95):
            for fixed in (self.shared["step_fixed_s"], 0.3):
                x = [1.0] * len(self.generations) + [phi, fixed]
                out.append(np.clip(x, low, high))
        return out


def fit_step_numbers(runs: Iterable[StepRun],
                     priors: Mapping[str, Mapping[str, float]] | None = None) -> StepFit:
    """The step numbers fitted to ``runs`` (their training runs), held to ``priors``
    (default: step.toml's); no training run: the priors."""
    try:
        from scipy.optimize import least_squares
    except ImportError:  # pragma: no cover - scipy is in the fit and test extras
        raise ImportError("fitting step numbers needs scipy: pip install "
                          "'roofline-sym[fit]'") from None
    problem = _Problem(list(runs), priors or step_priors())
    if not problem.runs:
        return StepFit({g: dict(p) for g, p in problem.priors.items()}, (), (), 0)
    low, high = problem.bounds()
    best = min((least_squares(problem.residuals, x0, bounds=(low, high), loss="soft_l1")
                for x0 in problem.starts()), key=lambda result: float(result.cost))
    x = best.x
    # a number at a bound comes back a rounding away from it (a fixed time of 1e-17 s)
    x = np.where(np.isclose(x, low, rtol=0, atol=1e-9), low, x)
    sources = tuple(sorted({r.source_id for r in problem.runs}))
    return StepFit(problem.numbers(x), tuple(problem.generations), sources, len(problem.runs))


class _Fits:
    """Fits without given sources, each made once."""

    def __init__(self, runs: Sequence[StepRun], priors: Mapping[str, Mapping[str, float]]):
        self.runs, self.priors = runs, priors
        self.training = {r.source_id for r in runs if r.training}
        self.made: dict[frozenset[str], StepFit] = {}

    def without(self, *sources: str) -> StepFit:
        key = frozenset(s for s in sources if s in self.training)
        if key not in self.made:
            self.made[key] = fit_step_numbers([r for r in self.runs if r.source_id not in key],
                                              self.priors)
        return self.made[key]


def left_out(runs: Sequence[StepRun], priors: Mapping[str, Mapping[str, float]] | None = None
             ) -> list[float]:
    """Each run's predicted speedup from numbers fitted without its source."""
    fits = _Fits(runs, priors or step_priors())
    return [fits.without(r.source_id).speedup(r) for r in runs]


def nested_pool(runs: Sequence[StepRun], held_out: str,
                priors: Mapping[str, Mapping[str, float]] | None = None,
                fits: Any = None) -> list[tuple[str, str, float]]:
    """``(source_id, kind, log(predicted / measured))`` of every run of the
    other sources, each from numbers fitted without ``held_out`` and without
    its own source: the pool a band for ``held_out``'s runs may draw on."""
    fits = fits or _Fits(runs, priors or step_priors())
    return [(r.source_id, r.kind, math.log(fits.without(held_out, r.source_id).speedup(r)
                                           / r.measured))
            for r in runs if r.source_id != held_out]


def fits_for(runs: Sequence[StepRun], priors: Mapping[str, Mapping[str, float]] | None = None
             ) -> _Fits:
    """A cache of fits without given sources (share it across ``nested_pool`` calls)."""
    return _Fits(runs, priors or step_priors())
