"""How fast is ``Linear.evaluate``?  A script, not a test.

    python benchmarks/bench_evaluate.py [--shapes 1000000] [--repeat 5]

1. ``evaluate`` of one model (torchao preset, tensorwise, training, fused, on
   torchao's "NVIDIA H100") at random shapes, compiled once, against the same
   formulas written by hand in numpy from the torchao 0.18 model
   (cost-models.md section 2); the two must agree (max relative difference).
2. ``sympy`` ``subs`` per shape (what torchao's scripts do) on a few hundred
   shapes, extrapolated to the same number of shapes.
3. ``sweep`` of every default GPU x every training recipe x torchao's 512-shape
   ``sweep`` set, cold (models built and compiled) and warm (compiled).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import roofline_sym as rs
from roofline_sym.numeric.sweep import model_grid, sweep

# torchao 0.18, "NVIDIA H100" (cost-models.md 2.1): dense peaks, one GEMM
# efficiency for every dtype, Meta's 2.4 TB/s, 0.92 of it, a 2 us launch floor
P_BF16, P_FP8, ETA_GEMM = 989e12, 1979e12, 0.78
BW, ETA_MEM, LAUNCH = 2.4e12, 0.92, 2e-6


def numpy_tensorwise_fused(M, K, N):
    """The torchao model of a tensorwise, fused, training linear, by hand."""

    def gemm(m, k, n, operand_bytes, peak):  # 2.2: output always bf16
        flops = 2 * m * k * n
        nbytes = operand_bytes * (m * k + k * n) + 2 * m * n
        return np.maximum(np.maximum(flops / (peak * ETA_GEMM), nbytes / (BW * ETA_MEM)),
                          LAUNCH)

    def kernel(nbytes):  # every cast kernel pays at least the launch floor
        return np.maximum(nbytes / (BW * ETA_MEM), LAUNCH)

    # 2.3: output (M, K, N), grad_input (M, N, K), grad_weight (K, M, N)
    dims = ((M, K, N), (M, N, K), (K, M, N))
    bf16 = sum(gemm(*d, 2, P_BF16) for d in dims)
    fp8 = sum(gemm(*d, 1, P_FP8) for d in dims)
    # tensorwise, fused: input and grad_output [0, 0, 4n], weight [2n, 0, 3n, 3n]
    zero = np.zeros_like(M * K)
    ovhd = (kernel(zero) + kernel(zero) + kernel(4 * M * K)
            + kernel(2 * K * N) + kernel(zero * N) + kernel(3 * K * N) + kernel(3 * K * N)
            + kernel(zero) + kernel(zero) + kernel(4 * M * N))
    lowp = fp8 + ovhd
    return {"baseline_gemm_time": bf16, "baseline_overhead_time": np.zeros_like(bf16),
            "lowp_gemm_time": fp8, "lowp_overhead_time": ovhd, "baseline_time": bf16,
            "lowp_time": lowp, "speedup": bf16 / lowp}


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--subs", type=int, default=200, help="shapes timed with sympy subs")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    # log-uniform integer shapes from 16 to 65536: launch-, memory- and compute-bound
    M, K, N = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), args.shapes)))
               for _ in range(3))

    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    bound = model.on("NVIDIA H100")
    t0 = time.perf_counter()
    bound.evaluate(M=M[:10], K=K[:10], N=N[:10])  # compile once
    compile_s = time.perf_counter() - t0

    t_eval = best_of(lambda: bound.evaluate(M=M, K=K, N=N), args.repeat)
    t_numpy = best_of(lambda: numpy_tensorwise_fused(M, K, N), args.repeat)
    ours, ref = bound.evaluate(M=M, K=K, N=N), numpy_tensorwise_fused(M, K, N)
    rel = max(float(np.max(np.abs(ours[k] - ref[k]) / np.maximum(np.abs(ref[k]), 1e-300)))
              for k in ours)

    n_subs = min(args.subs, args.shapes)
    expr = bound.speedup
    t0 = time.perf_counter()
    subs_vals = [float(expr.subs({rs.M: int(M[i]), rs.K: int(K[i]), rs.N: int(N[i])}))
                 for i in range(n_subs)]
    per_subs = (time.perf_counter() - t0) / n_subs
    subs_rel = float(np.max(np.abs(np.array(subs_vals) - ours["speedup"][:n_subs])
                            / ours["speedup"][:n_subs]))

    t0 = time.perf_counter()
    models = model_grid(None, None, mode="training")
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = sweep(models, "sweep")
    cold_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sweep(models, "sweep")
    warm_s = time.perf_counter() - t0

    n = args.shapes
    print(f"roofline_sym {rs.__version__}: {n:,} random shapes, best of {args.repeat}")
    print()
    rows = [
        ("Linear.evaluate (warm)", t_eval, t_eval / n, ""),
        ("hand-written numpy", t_numpy, t_numpy / n,
         f"evaluate / numpy = {t_eval / t_numpy:.2f}x"),
        (f"sympy subs ({n_subs} shapes)", per_subs * n, per_subs,
         f"extrapolated; {per_subs * n / t_eval:,.0f}x evaluate"),
        ("evaluate: first compile", compile_s, None, "lambdify, once per model"),
        (f"sweep {len(models)} models x 512, cold", cold_s, cold_s / len(res),
         f"{len(res):,} rows; + {build_s:.2f} s to build and bind the models"),
        (f"sweep {len(models)} models x 512, warm", warm_s, warm_s / len(res),
         "models already compiled"),
    ]
    print(f"{'what':<34}{'total s':>12}{'per shape s':>14}  note")
    for what, total, per, note in rows:
        per_text = "-" if per is None else f"{per:.3g}"
        print(f"{what:<34}{total:>12.4g}{per_text:>14}  {note}")
    print()
    print(f"max relative difference, evaluate vs numpy (7 outputs): {rel:.2e}")
    print(f"max relative difference, evaluate vs sympy subs (speedup): {subs_rel:.2e}")
    # the goal: no slower than the hand-written formula; fail above 1.5x
    ok = t_eval <= 1.5 * t_numpy and rel <= 1e-12
    print(f"check (evaluate <= 1.5x numpy, values identical): {'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
