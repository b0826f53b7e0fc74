"""Fidelity beyond the calibration's own sources: the numbers of docs/fidelity.md.

Runs, side by side on the published measurements shipped with the package:
- leave-one-source-out (``rs.fidelity.leave_one_source_out``): each GPU's
  joint fit redone without one source at a time, that source predicted;
- the within-source held-out splits (``rs.fidelity.heldout``);
- the shipped model on every row (in-sample: what the calibration saw);
- the 80% prediction intervals, scored honestly: each left-out row's band
  comes from the residuals of the *other* sources (its own are left out of
  the pools), coverage and median width (high / low - 1);
- the physical limits on every shipped GPU, recipe and implementation.

``--write`` stores the leave-one-source-out residuals as the shipped
``residuals.csv`` (the pools ``predict_speedups(..., interval=)`` reads) and
the within-source splits' residuals as ``heldout_residuals.csv`` (the table
of docs/fidelity.md, ``stored_residuals.stored_heldout``).

    python benchmarks/bench_fidelity.py [--write]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import roofline_sym as rs
from roofline_sym.devices import implementations as impls
from roofline_sym.fidelity.published_tables import intervals
from roofline_sym.fidelity.published_tables.joint_fit import errors
from roofline_sym.fidelity.published_tables.scorecard import heldout_predictions
from roofline_sym.fidelity.published_tables.stored_residuals import (interval_coverage,
                                                                     write_heldout)


def _line(label: str, e: dict) -> str:
    return (f"{label:<58} rows {e['rows']:4d}  median {e['median']:6.1%}  p90 {e['p90']:6.1%}"
            f"  wrong {e['wrong']:3d}/{e['decisive']:<4d} ({e['wrong'] / max(e['decisive'], 1):.1%})")


def broken_limits() -> int:
    grid = np.array([16, 64, 256, 1024, 4096, 16384, 65536], float)
    M, K, N = np.meshgrid(grid, grid, grid, indexing="ij")
    broken = 0
    for g in rs.list_hardware():
        hw = rs.hardware(g)
        for mode in rs.model.MODES:
            for recipe in rs.list_recipes(mode):
                for impl in impls.IMPLEMENTATIONS:
                    try:
                        m = rs.linear(recipe, mode=mode, workload="gemm",
                                      implementation=impl).on(hw)
                    except ValueError:
                        continue  # a recipe the GPU cannot run
                    s = m.evaluate(M, K, N, outputs=("speedup",))["speedup"]
                    lowp = m.recipe.dtypes - {"bf16"}  # none: an emulated recipe
                    d = "fp4" if "fp4" in lowp else "fp8"
                    bound = 1.15 * max(float(hw.peak_flops[d] / hw.peak_flops["bf16"]),
                                       4 if d == "fp4" else 2) if lowp else 1.15
                    broken += int(s.max() > bound) + int(s[0, 0, 0] > 1.10)
    return broken


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the shipped residuals.csv")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    cv = rs.fidelity.leave_one_source_out()
    t_cv = time.perf_counter() - t0
    print(cv)
    print()
    print(_line("leave-one-source-out, pooled", cv.pooled))
    gemm = np.array([c.workload == "gemm" for c in cv.classes])
    print(_line("  GEMM-only rows", errors(cv.predicted[gemm], cv.rows.measured[gemm])))
    print(_line("  layer rows", errors(cv.predicted[~gemm], cv.rows.measured[~gemm])))
    for gen in dict.fromkeys(c.generation for c in cv.classes):
        m = np.array([c.generation == gen for c in cv.classes])
        print(_line(f"  {gen}", errors(cv.predicted[m], cv.rows.measured[m])))
    for impl in dict.fromkeys(str(x) for x in cv.rows.implementation):
        m = cv.rows.implementation == impl
        print(_line(f"  implementation {impl}", errors(cv.predicted[m], cv.rows.measured[m])))
    shipped = rs.fidelity.predict_speedups(cv.rows)
    print(_line("shipped model on the same rows (in-sample)",
                errors(shipped, cv.rows.measured)))
    splits = heldout_predictions()
    for split, test, predicted in splits:
        print(_line(f"within-source: {split.name}", errors(predicted, test.measured)))
    cover, width = interval_coverage(cv)
    print(f"80% intervals, each source's band from the others' residuals: coverage "
          f"{cover:.1%}, median width {width:.1%}")
    print(f"broken physical limits: {broken_limits()}")
    print(f"leave-one-source-out took {t_cv:.1f} s")
    if args.write:
        print(f"wrote {intervals.write_residuals(cv.residual_rows())}")
        print(f"wrote {write_heldout(splits)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
