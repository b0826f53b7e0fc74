"""Break-even solver timings (a benchmark script, not a test).

    python benchmarks/bench_breakeven.py

Prints medians of repeated runs:
- numeric break-even of one bound configuration (warm: model built and bound);
- the seed preset's closed form with every hardware quantity symbolic;
- the torchao preset's default-regime closed form for M, K, N and hardware free;
- the full table: every training recipe x every default GPU, cube and M at
  K = N = 8192 (models built, bound and solved from scratch).
"""

import statistics
import time

import roofline_sym as rs


def median_ms(fn, repeat=15):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    rows = []
    m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    rs.breakeven(m, solve_for="M", K=8192, N=8192)
    rows.append(("numeric, M at K=N=8192 (torchao tensorwise H100)",
                 median_ms(lambda: rs.breakeven(m, solve_for="M", K=8192, N=8192))))
    rows.append(("numeric, cube (torchao tensorwise H100)",
                 median_ms(lambda: rs.breakeven(m, along="cube"))))
    big = rs.linear("mxfp8_cublas", fuse=True).on("b200")
    rs.breakeven(big, along="cube")
    rows.append(("numeric, cube (default mxfp8_cublas B200)",
                 median_ms(lambda: rs.breakeven(big, along="cube"))))

    seed = rs.linear("dynamic", fuse=True, preset="seed")
    rows.append(("symbolic seed closed form, all hardware symbolic",
                 median_ms(lambda: rs.breakeven(seed, solve_for="M"), 5)))
    tao = rs.linear("tensorwise", fuse=True, preset="torchao")
    rows.append(("symbolic torchao default regime, M with K, N, hardware free",
                 median_ms(lambda: rs.breakeven(tao, solve_for="M"), 5)))

    def table():
        for recipe in rs.list_recipes("training"):
            model = rs.linear(recipe, fuse=True)
            for gpu in rs.list_hardware():
                hw = rs.hardware(gpu)
                if model.unsupported_reason(hw):
                    continue
                bound = model.on(hw)
                rs.breakeven(bound, along="cube")
                rs.breakeven(bound, solve_for="M", K=8192, N=8192)

    rows.append(("full table: 12 recipes x 16 GPUs, cube + M (cold)", median_ms(table, 1)))
    width = max(len(r[0]) for r in rows)
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:9.1f} ms")


if __name__ == "__main__":
    main()
