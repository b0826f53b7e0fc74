"""How fast is ``Step.evaluate``?  A script, not a test.

    python benchmarks/bench_step.py [--size 1e6] [--repeat 5]

A Llama 3 8B-shaped training step (tensorwise, FSDP over 8 H100s), bound,
evaluated at ``--size`` random (sequence length, local batch) pairs with
numpy on one and on two threads and with the fused kernel (``engine="auto"``);
the median of ``--repeat`` runs after a warm-up.  The goal: 1e6 pairs in at
most 1 s on two cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import roofline_sym as rs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    step = rs.step("llama3-8b", "tensorwise", gpus=8).on("h100")
    rng = np.random.default_rng(0)
    n = int(args.size)
    seq, batch = rng.integers(128, 131072, n), rng.integers(1, 32, n)
    for label, kwargs in (("numpy, 1 thread", dict(engine="numpy", threads=1)),
                          ("numpy, 2 threads", dict(engine="numpy", threads=2)),
                          ("auto, 2 threads", dict(engine="auto", threads=2))):
        step.evaluate(seq, batch, **kwargs)  # warm-up: compilation, the kernel's load
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            step.evaluate(seq, batch, **kwargs)
            times.append(time.perf_counter() - start)
        print(f"{label:18s} {n:.0e} pairs: {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
