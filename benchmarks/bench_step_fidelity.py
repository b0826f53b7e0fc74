"""The step model against the published end-to-end runs: residuals and scores.

Writes ``roofline_sym/data/measurements/published/step_residuals.csv`` (the
pool ``rs.fidelity.predict_steps`` draws its bands from) with ``--write``, and
prints, per source, the median absolute error of the predicted speedup, then
the median over sources (each source weighted equally), dense and mixture of
experts apart, training and serving apart.

    python benchmarks/bench_step_fidelity.py [--write]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from roofline_sym.fidelity.published_tables.step_prediction import (step_residuals,
                                                                   step_scores,
                                                                   write_step_residuals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write step_residuals.csv")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = step_residuals()
    print(f"{len(rows)} runs predicted in {time.perf_counter() - start:.1f} s")
    for kind in ("training", "serving"):
        for moe in ("no", "yes"):
            chosen = [r for r in rows if r["kind"] == kind and r["moe"] == moe]
            if not chosen:
                continue
            per_source: dict[str, list[float]] = {}
            for r in chosen:
                per_source.setdefault(r["source_id"], []).append(abs(math.expm1(r["log_ratio"])))
            medians = {s: statistics.median(v) for s, v in per_source.items()}
            print(f"\n{kind}, {'MoE' if moe == 'yes' else 'dense'}: {len(chosen)} runs, "
                  f"{len(medians)} sources; median over sources of each source's median "
                  f"error {statistics.median(medians.values()):.1%}")
            for source, value in sorted(medians.items()):
                print(f"  {source:40s} {len(per_source[source]):3d} runs  {value:6.1%}")
    if args.write:
        print(f"\nwrote {write_step_residuals(rows)}")
        _bands()


def _bands() -> None:
    """The 80% bands of the stored pool on the rows (each from the other sources)."""
    scores = step_scores(0.8)
    inside = sum(r["low"] <= r["measured"] <= r["high"] for r in scores)
    widths = [r["high"] / r["low"] - 1 for r in scores]
    errors = sorted(abs(r["predicted"] / r["measured"] - 1) for r in scores)
    wrong = sum((r["predicted"] > 1) != (r["measured"] > 1) for r in scores
                if abs(r["measured"] - 1) >= 0.05)
    logs = [math.log(r["measured"]) for r in scores]
    constant = statistics.median(logs)
    skill = (statistics.mean(abs(math.log(r["predicted"]) - m) for r, m in zip(scores, logs))
             / statistics.mean(abs(constant - m) for m in logs))
    print(f"80% bands: {inside}/{len(scores)} runs inside ({inside / len(scores):.0%}), "
          f"median width {statistics.median(widths):.0%}; p90 error "
          f"{errors[int(0.9 * (len(errors) - 1))]:.1%}; {wrong} verdicts on the wrong side of 1; "
          f"mean |log error| / that of the median constant {skill:.2f}")


if __name__ == "__main__":
    main()
