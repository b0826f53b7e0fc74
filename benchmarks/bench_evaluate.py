"""How fast is ``Linear.evaluate``, and how much memory does it use?  A script,
not a test (see benchmarks/README.md for what it measures and how to read it).

    python benchmarks/bench_evaluate.py [--sizes 1e6 1e7] [--repeat 7]

1. ``evaluate`` of one model (torchao preset, tensorwise, training, fused, on
   torchao's "NVIDIA H100") at random shapes, against a strong hand-written
   numpy version of the same model: chunked, in place, constants folded,
   shared products and sums computed once, the three identical bf16 GEMMs
   computed once.  Both are verified equal first (1e-12 relative), then timed
   side by side in one process, alternating, and the medians compared; for
   each, the memory it allocates beyond the arrays it returns (tracemalloc,
   which sees numpy's allocations).  A whole-array numpy version (one
   temporary per operation) is shown for reference.
2. ``sympy`` ``subs`` per shape (what torchao's scripts do) on a few hundred
   shapes, extrapolated.
3. Compilation once per recipe and mode: every default GPU x every training
   recipe, bound, compiled and evaluated; how many compilations that took.
4. ``sweep`` of those models over torchao's 512-shape ``sweep`` set, cold and
   warm.
5. Threads and the fused kernel (``--fast-sizes``, on ``--threads`` cores), on
   the wall clock, side by side against the hand version: ``evaluate`` with
   numpy on 1 and on N threads, with numba's fused kernel on 1 and N
   threads (and on N threads writing into the arrays of the previous call,
   ``out=``: no fresh pages; timed after the others, as 560 MB of arrays kept
   alive slow every fresh allocation, the hand version's too), and the
   memory floor: a numba kernel that only reads M, K, N and
   writes their product (on 1 and N threads); each verified equal to the hand
   version first (1e-12 relative).  Then the kernel's first call in a fresh
   process with an empty cache (compilation), in a second process (loaded from
   the disk cache), and warm.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc

import numpy as np
from numpy import add, divide, maximum, multiply

import roofline_sym as rs
from roofline_sym.evaluation.runtime import CHUNK, release_scratch
from roofline_sym.numeric.sweep_table import model_grid, sweep
from roofline_sym.progress import with_progress

# torchao 0.18, "NVIDIA H100" (cost-models.md 2.1): dense peaks, one GEMM
# efficiency for every dtype, Meta's 2.4 TB/s, 0.92 of it, a 2 us launch floor
P_BF16, P_FP8, ETA_GEMM = 989e12, 1979e12, 0.78
BW, ETA_MEM, LAUNCH = 2.4e12, 0.92, 2e-6


def hand_numpy(M, K, N, seven=False, chunk=CHUNK):
    """The torchao model of a tensorwise, fused, training linear, written by hand
    as a performance engineer would: chunks of ``chunk`` shapes in reused
    buffers, in place, constants folded, ``KM + KN + MN`` shared by every GEMM's
    bytes, the three bf16 GEMMs (identical) computed once, the five launch-only
    casts one constant.  The speedup, or (``seven``) the seven outputs."""
    n = len(M)
    c_bf16, c_fp8 = 2 / (P_BF16 * ETA_GEMM), 2 / (P_FP8 * ETA_GEMM)
    d = 1 / (BW * ETA_MEM)
    names = ("baseline_gemm_time", "baseline_overhead_time", "lowp_gemm_time",
             "lowp_overhead_time", "baseline_time", "lowp_time", "speedup")
    out = {k: np.empty(n) for k in (names if seven else ("speedup",))}
    full = [np.empty(chunk) for _ in range(9)]
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        km, kn, mn, kmn, s, t, base, gemm, ovhd = (x[:b - a] for x in full)
        m, k, nn = M[a:b], K[a:b], N[a:b]
        multiply(k, m, km)
        multiply(k, nn, kn)
        multiply(m, nn, mn)
        multiply(km, nn, kmn)
        add(km, kn, s)
        add(s, mn, s)  # S = KM + KN + MN: a bf16 GEMM moves 2S bytes
        # bf16: three identical GEMMs, Max(2MKN / Pb, 2S / BW, L) each
        multiply(s, 2 * d, base)
        multiply(kmn, c_bf16, t)
        maximum(base, t, out=base)
        maximum(base, LAUNCH, out=base)
        multiply(base, 3.0, base)
        # fp8 GEMMs: Max(2MKN / Pf, (S + X) / BW, L), X = MN, KM, KN
        multiply(kmn, c_fp8, kmn)
        add(s, mn, gemm)
        multiply(gemm, d, gemm)
        maximum(gemm, kmn, out=gemm)
        maximum(gemm, LAUNCH, out=gemm)
        for x in (km, kn):
            add(s, x, t)
            multiply(t, d, t)
            maximum(t, kmn, out=t)
            maximum(t, LAUNCH, out=t)
            add(gemm, t, gemm)
        # casts, each at least L: input 4MK, weight 2KN and twice 3KN,
        # grad_output 4MN; and five that only launch
        multiply(km, 4 * d, ovhd)
        maximum(ovhd, LAUNCH, out=ovhd)
        multiply(kn, 2 * d, t)
        maximum(t, LAUNCH, out=t)
        add(ovhd, t, ovhd)
        multiply(kn, 6 * d, t)
        maximum(t, 2 * LAUNCH, out=t)
        add(ovhd, t, ovhd)
        multiply(mn, 4 * d, t)
        maximum(t, LAUNCH, out=t)
        add(ovhd, t, ovhd)
        add(ovhd, 5 * LAUNCH, ovhd)
        if seven:
            out["baseline_gemm_time"][a:b] = base
            out["baseline_overhead_time"][a:b] = 0.0
            out["lowp_gemm_time"][a:b] = gemm
            out["lowp_overhead_time"][a:b] = ovhd
            out["baseline_time"][a:b] = base
            add(gemm, ovhd, out["lowp_time"][a:b])
            divide(base, out["lowp_time"][a:b], out["speedup"][a:b])
        else:
            add(gemm, ovhd, gemm)
            divide(base, gemm, out["speedup"][a:b])
    return out


def whole_array_numpy(M, K, N):
    """The same formulas on whole arrays, one temporary per operation."""
    def gemm(m, k, n, operand_bytes, peak):
        nbytes = operand_bytes * (m * k + k * n) + 2 * m * n
        return np.maximum(np.maximum(2 * m * k * n / (peak * ETA_GEMM),
                                     nbytes / (BW * ETA_MEM)), LAUNCH)

    def kernel(nbytes):
        return np.maximum(nbytes / (BW * ETA_MEM), LAUNCH)

    dims = ((M, K, N), (M, N, K), (K, M, N))
    bf16 = sum(gemm(*d, 2, P_BF16) for d in dims)
    lowp = (sum(gemm(*d, 1, P_FP8) for d in dims) + 5 * LAUNCH + kernel(4 * M * K)
            + kernel(2 * K * N) + 2 * kernel(3 * K * N) + kernel(4 * M * N))
    return {"speedup": bf16 / lowp}


def scratch_mib(fn) -> float:
    """MiB ``fn()`` allocates at its peak beyond the arrays it returns, on a first
    call (evaluate's scratch buffers, kept between calls, are released first)."""
    release_scratch()
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - sum(a.nbytes for a in out.values())) / 2**20


def side_by_side(fns: dict, repeat: int, clock=time.process_time) -> dict[str, list[float]]:
    """Each function timed ``repeat`` times, interleaved (the order rotating), so
    the machine's load falls on all of them alike.  ``clock``: this process's
    CPU time by default (the work is single-threaded numpy), which other
    processes on a shared machine disturb less than the wall clock."""
    times = {name: [] for name in fns}
    order = list(fns)
    # a bar on a terminal (stderr) while the runs go on; nothing in a pipe or a file
    for r in with_progress(range(repeat), ", ".join(fns), unit="round"):
        for name in order[r % len(order):] + order[:r % len(order)]:
            gc.collect()
            t0 = clock()
            fns[name]()
            times[name].append(clock() - t0)
    return times


def wall(fns: dict, repeat: int) -> dict[str, float]:
    """Median wall-clock seconds of each function, interleaved (threads: the
    process's CPU time would add theirs up)."""
    return {k: statistics.median(v) for k, v in side_by_side(fns, repeat,
                                                             time.perf_counter).items()}


def floor_kernel():
    """The memory floor: a numba kernel that reads M, K, N and writes one product."""
    import numba

    @numba.njit(nogil=True, error_model="numpy")
    def slice_product(M, K, N, out, n):
        # range(n) over slices, as the fused kernel loops: an index numba knows is
        # not negative, so the loop vectorizes (range(lo, hi) runs 2-3x slower)
        for i in range(n):
            out[i] = M[i] * K[i] * N[i]

    def product(M, K, N, out, lo, hi):
        slice_product(M[lo:hi], K[lo:hi], N[lo:hi], out[lo:hi], hi - lo)

    def run(M, K, N, threads):
        out = np.empty(len(M))
        cuts = [len(M) * t // threads for t in range(threads + 1)]
        workers = [threading.Thread(target=product, args=(M, K, N, out, cuts[t], cuts[t + 1]))
                   for t in range(1, threads)]
        for w in workers:
            w.start()
        product(M, K, N, out, cuts[0], cuts[1])
        for w in workers:
            w.join()
        return {"speedup": out}

    return run


# a fresh process: the fused kernel's first call (numba imported, the kernel
# compiled or loaded from the cache folder), then a warm one
_FIRST_CALL = """
import time, numpy as np
import roofline_sym as rs
m = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao").on("NVIDIA H100")
M = np.round(np.linspace(16, 65536, {n}))
t0 = time.perf_counter()
m.evaluate(M, M, M, outputs={outputs!r}, engine="numba", threads=1)
t1 = time.perf_counter()
m.evaluate(M, M, M, outputs={outputs!r}, engine="numba", threads=1)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def first_calls(outputs: str | None, n: int = 1 << 16) -> list[tuple[float, float]]:
    """(first call, warm call) seconds in two fresh processes sharing a new,
    empty cache folder: the first compiles, the second loads from the cache."""
    out = []
    with tempfile.TemporaryDirectory() as cache:  # made 0700, this user's
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        for _ in range(2):
            run = subprocess.run([sys.executable, "-c", _FIRST_CALL.format(n=n, outputs=outputs)],
                                 env=env, capture_output=True, text=True, check=True)
            first, warm = map(float, run.stdout.split())
            out.append((first, warm))
    return out


def fast_table(bound, sizes: list[float], repeat: int, threads: int) -> bool:
    """Section 5; True if every variant equals the hand version."""
    try:
        floor = floor_kernel()
    except ImportError:
        print("numba is not installed (pip install roofline-sym[fast]): numpy only")
        floor = None
    print(f"wall-clock medians of {repeat} interleaved runs, {threads} threads where N; "
          f"ratio to the hand version (single-threaded numpy)")
    names = ["hand", "numpy 1", f"numpy {threads}"]
    if floor is not None:
        names += ["numba 1", f"numba {threads}", f"numba {threads} out", "floor 1",
                  f"floor {threads}"]
    print(f"{'shapes':>10}  {'outputs':<8}" + "".join(f"{n:>16}" for n in names))
    rng = np.random.default_rng(1)
    ok = True
    for size in map(int, sizes):
        M, K, N = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), size)))
                   for _ in range(3))
        for outputs, seven in ((("speedup",), False), (rs.OUTPUTS, True)):
            fns = {"hand": lambda: hand_numpy(M, K, N, seven)}
            for engine in ("numpy", "numba") if floor is not None else ("numpy",):
                for t in (1, threads):
                    fns[f"{engine} {t}"] = (lambda e=engine, t=t: bound.evaluate(
                        M, K, N, outputs=outputs, engine=e, threads=t))
            if floor is not None and not seven:
                for t in (1, threads):
                    fns[f"floor {t}"] = lambda t=t: floor(M, K, N, t)
            hand = fns["hand"]()
            for name, fn in fns.items():
                if not name.startswith("floor"):
                    rel = max_rel(fn(), hand)
                    ok &= rel <= 1e-12
                    if rel > 1e-12:
                        print(f"{name} and the hand version differ: {rel:.2e}")
                else:
                    fn()  # compiled before timing
            del hand
            t = wall(fns, repeat)
            if floor is not None:
                reused = {name: np.empty(len(M)) for name in outputs}
                again = {f"numba {threads} out": lambda: bound.evaluate(
                    M, K, N, outputs=outputs, engine="numba", threads=threads, out=reused)}
                rel = max_rel(again[f"numba {threads} out"](), fns["hand"]())
                ok &= rel <= 1e-12
                if rel > 1e-12:
                    print(f"numba {threads} out and the hand version differ: {rel:.2e}")
                t.update(wall(again, repeat))
                del reused, again
            cells = "".join(f"{t[n]:9.3f} {t[n] / t['hand']:5.2f}x" if n in t else f"{'-':>16}"
                            for n in names)
            print(f"{size:>10.0e}  {'1' if not seven else '7':<8}{cells}")
        del M, K, N
    if floor is not None:
        for outputs in ("speedup", None):
            (compile_s, warm_s), (load_s, _) = first_calls(outputs)
            print(f"fused kernel ({outputs or 'all seven'}), first call on 65536 shapes: {compile_s:.2f} s in a "
                  f"process with an empty cache (numba imported, compiled), {load_s:.2f} s in "
                  f"the next process (loaded from the cache), {warm_s * 1e3:.2f} ms warm")
    return ok


def max_rel(a: dict, b: dict) -> float:
    return max(float(np.max(np.abs(a[k] - b[k]) / np.abs(b[k]))) for k in b
               if np.any(b[k]) or np.any(a[k]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7])
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--subs", type=int, default=20, help="shapes timed with sympy subs")
    ap.add_argument("--fast-sizes", type=float, nargs="*", default=[1e7],
                    help="sizes of section 5 (threads, the fused kernel); none to skip")
    ap.add_argument("--threads", type=int, default=2, help="N of section 5")
    ap.add_argument("--only-fast", action="store_true", help="section 5 alone")
    args = ap.parse_args()

    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    bound = model.on("NVIDIA H100")
    t0 = time.perf_counter()
    bound.evaluate(M=[16.0], K=[16.0], N=[16.0])
    compile_s = time.perf_counter() - t0

    print(f"roofline_sym {rs.__version__}: {bound!r}; chunks of {CHUNK} shapes")
    if args.only_fast:
        return 0 if fast_table(bound, args.fast_sizes, args.repeat, args.threads) else 1
    print(f"seconds: median CPU time of {args.repeat} interleaved runs; ratio: evaluate / "
          f"hand (wall: the same on the wall clock)")
    print()
    head = (f"{'shapes':>10}  {'outputs':<8}{'evaluate s':>11}{'hand s':>9}{'ratio':>7}"
            f"{'(wall)':>7}{'whole s':>9}   {'scratch MiB: evaluate':>21}{'hand':>7}"
            f"{'whole':>8}")
    print(head)
    ok = True
    rng = np.random.default_rng(0)
    for size in map(int, args.sizes):
        # log-uniform integer shapes from 16 to 65536: launch-, memory- and compute-bound
        M, K, N = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), size)))
                   for _ in range(3))
        for outputs, seven in ((("speedup",), False), (rs.OUTPUTS, True)):
            ours = bound.evaluate(M, K, N, outputs=outputs)
            hand = hand_numpy(M, K, N, seven)
            rel = max_rel(ours, hand)
            if rel > 1e-12:
                print(f"evaluate and the hand version differ: {rel:.2e}")
                return 1
            del ours, hand
            fns = {"evaluate": lambda: bound.evaluate(M, K, N, outputs=outputs, threads=1,
                                                      engine="numpy"),
                   "hand": lambda: hand_numpy(M, K, N, seven)}
            if not seven:
                fns["whole"] = lambda: whole_array_numpy(M, K, N)
            t = {k: statistics.median(v) for k, v in side_by_side(fns, args.repeat).items()}
            wall = {k: statistics.median(v) for k, v in
                    side_by_side(fns, args.repeat, time.perf_counter).items()}
            mem = {k: scratch_mib(fn) for k, fn in fns.items()}
            ratio, wall_ratio = t["evaluate"] / t["hand"], wall["evaluate"] / wall["hand"]
            whole = f"{t['whole']:9.3f}" if "whole" in t else f"{'-':>9}"
            whole_mem = f"{mem['whole']:8.1f}" if "whole" in mem else f"{'-':>8}"
            print(f"{size:>10.0e}  {'1' if not seven else '7':<8}{t['evaluate']:11.3f}"
                  f"{t['hand']:9.3f}{ratio:7.2f}{wall_ratio:7.2f}{whole}   "
                  f"{mem['evaluate']:21.1f}{mem['hand']:7.1f}{whole_mem}")
            ok &= ratio <= 1.0 and mem["evaluate"] <= 16
        del M, K, N
    print()

    n_subs = args.subs
    m, k, n = (np.round(np.exp(rng.uniform(np.log(16), np.log(65536), n_subs)))
               for _ in range(3))
    expr = bound.speedup
    t0 = time.perf_counter()
    subs = [float(expr.subs({rs.M: int(m[i]), rs.K: int(k[i]), rs.N: int(n[i])}))
            for i in range(n_subs)]
    per_subs = (time.perf_counter() - t0) / n_subs
    subs_rel = float(np.max(np.abs(np.array(subs) / bound.evaluate(m, k, n)["speedup"] - 1)))
    t_eval = statistics.median(side_by_side(
        {"e": lambda: bound.evaluate(m, k, n, outputs="speedup")}, args.repeat)["e"])
    print(f"sympy subs: {per_subs * 1e3:.2f} ms per shape ({n_subs} shapes, "
          f"{per_subs * n_subs / t_eval:,.0f}x evaluate on them; max relative difference "
          f"{subs_rel:.1e})")

    t0 = time.perf_counter()
    models = model_grid(None, None, mode="training")
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for mb in models:
        mb.evaluate(8192.0, 8192.0, 8192.0, outputs="speedup")
    first_s = time.perf_counter() - t0
    compiled = len({id(mb.compiled.compiled) for mb in models})
    print(f"evaluate's first call: {compile_s:.3f} s for one model; {first_s:.2f} s for "
          f"{len(models)} bound models ({compiled} compilations, one per recipe; "
          f"+ {build_s:.2f} s to build and bind them)")
    t0 = time.perf_counter()
    res = sweep(models, "sweep")
    cold_s = time.perf_counter() - t0
    warm_s = statistics.median(side_by_side({"s": lambda: sweep(models, "sweep")},
                                            max(3, args.repeat // 2))["s"])
    print(f"sweep {len(models)} models x 512 shapes ({len(res):,} rows): {cold_s:.2f} s cold "
          f"(break-even solved per model), {warm_s:.2f} s warm")
    print()
    if args.fast_sizes:
        ok &= fast_table(bound, args.fast_sizes, args.repeat, args.threads)
        print()
    print(f"check (evaluate no slower than the hand version, at most 16 MiB of scratch, "
          f"every variant equal to it): {'pass' if ok else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
