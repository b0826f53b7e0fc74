"""The step model against the published end-to-end runs, each source left out.

Fits the step numbers only whole steps pin (attention efficiency per GPU
generation, overlap, the fixed time per step; ``step_fit``) to the published
training runs, then predicts every run from numbers fitted without its
source, and its 80% band from the other sources' residuals, each from
numbers fitted without the held-out source and without its own.  Prints the
figures the step model is held to (``step_figures``), dense and MoE training
and serving apart, before (the stated priors) and after (left out), per
source, and the numbers fitted on every source.

``--write`` writes the left-out residuals (``step_residuals.csv``, the pool
``rs.fidelity.predict_steps`` draws its bands from) and the numbers fitted on
every source into ``data/step.toml``.

    python benchmarks/bench_step_fidelity.py [--write]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Sequence

from roofline_sym.fidelity.published_tables.step_figures import Figures, figures
from roofline_sym.fidelity.published_tables.step_fit import (ATTENTION_RANGE, StepFit, StepRun,
                                                             fits_for,
                                                             nested_pool, step_priors, step_runs)
from roofline_sym.fidelity.published_tables.step_numbers import write_step_numbers
from roofline_sym.fidelity.published_tables.step_prediction import (band_factors,
                                                                    write_step_residuals)

GROUPS = (("training, dense", "training", False), ("training, MoE", "training", True),
          ("serving", "serving", None))


def _scored(runs: Sequence[StepRun], predicted: Sequence[float],
            pools: dict[str, list[tuple[str, str, float]]]) -> list[tuple]:
    out = []
    for r, p in zip(runs, predicted):
        low, high = band_factors(r.source_id, r.kind, 0.8, pools[r.source_id])
        out.append((r, (r.source_id, r.measured, p, p * low, p * high)))
    return out


def _line(name: str, f: Figures | None) -> str:
    if f is None:
        return f"{name:>10s}  (no runs)"
    return (f"{name:>10s}  {f.runs:3d} runs {f.sources:2d} sources  median {f.median:6.1%}  "
            f"p90 {f.p90:6.1%}  wrong {f.wrong}/{f.decisive}  skill {f.skill:.2f}  "
            f"in band {f.coverage:4.0%}  width {f.width:4.0%}")


def _group(scored: list[tuple], kind: str, moe: bool | None) -> Figures | None:
    chosen = [s for r, s in scored if r.kind == kind and (moe is None or r.moe == moe)]
    return figures(chosen) if chosen else None


def _report(runs: Sequence[StepRun], before: list[tuple], after: list[tuple]) -> None:
    for title, kind, moe in GROUPS:
        print(f"\n{title}")
        b, a = _group(before, kind, moe), _group(after, kind, moe)
        print(_line("before", b))
        print(_line("left out", a))
        if a is not None and a.spearman:
            print("  Spearman (sources of >= 4 runs), before -> left out: " + ", ".join(
                f"{s} {b.spearman[s]:.2f} -> {v:.2f}" for s, v in a.spearman.items()
                if b is not None))
        if a is not None and b is not None:
            print("  median error per source, before -> left out:")
            for s, v in a.per_source.items():
                print(f"    {s:32s} {b.per_source[s]:6.1%} -> {v:6.1%}")


def _notes(fit: StepFit, runs: Sequence[StepRun]) -> dict[str, str]:
    training = [r for r in runs if r.training]
    shared = (f"overlap and step_fixed_s: {len(training)} training runs of "
              f"{len({r.source_id for r in training})} sources")
    out = {}
    for name in fit.numbers:
        own = [r for r in training if r.generation == name]
        if name in fit.attention_fitted:
            sources = sorted({r.source_id for r in own})
            attention = (f"attention: {len(own)} training runs on {name} GPUs "
                         f"({', '.join(sources)})")
            if fit.numbers[name]["attention_forward"] <= ATTENTION_RANGE[0] * (1 + 1e-6):
                attention += (f", at the floor of its physical range ({ATTENTION_RANGE[0]} of "
                              "the peak): the runs ask for more time than the attention core "
                              "can take")
        else:
            attention = "attention: its prior (no training run on this generation)"
        out[name] = (f"{attention}; {shared}; published/steps.csv and step_throughputs.csv, "
                     "benchmarks/bench_step_fidelity.py --write")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="write step_residuals.csv and the fitted numbers into step.toml")
    args = parser.parse_args()
    start = time.perf_counter()
    runs = step_runs()
    priors = step_priors()
    print(f"{len(runs)} runs split in {time.perf_counter() - start:.1f} s")
    fits = fits_for(runs, priors)
    stated = StepFit(priors, (), (), 0)
    before = [stated.speedup(r) for r in runs]
    after = [fits.without(r.source_id).speedup(r) for r in runs]
    prior_pool = [(r.source_id, r.kind, math.log(p / r.measured)) for r, p in zip(runs, before)]
    start = time.perf_counter()
    nested = {s: nested_pool(runs, s, fits=fits) for s in {r.source_id for r in runs}}
    print(f"{len(fits.made)} fits in {time.perf_counter() - start:.1f} s")
    _report(runs, _scored(runs, before, {s: prior_pool for s in nested}),
            _scored(runs, after, nested))
    full = fits.without()
    print(f"\nfitted on every source ({full.runs} training runs):")
    for name, numbers in full.numbers.items():
        moved = {k: f"{priors[name][k]:.3g} -> {v:.3g}" for k, v in numbers.items()}
        print(f"  {name:20s} {moved}")
    if args.write:
        rows = [{"source_id": r.source_id, "line": r.line, "kind": r.kind,
                 "moe": "yes" if r.moe else "no", "log_ratio": math.log(p / r.measured)}
                for r, p in zip(runs, after)]
        print(f"wrote {write_step_residuals(rows)}")
        print(f"wrote {write_step_numbers(full.numbers, priors, _notes(full, runs))}")


if __name__ == "__main__":
    main()
