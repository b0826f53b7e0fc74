"""Start-up: the main job and the import against ``import sympy, numpy``.  A script,
not a test.

    python benchmarks/bench_startup.py [--repeat 15]

Each command runs in a fresh process, the three interleaved (the order
rotating) so the machine's load falls on all alike; bytecode is written on a
first, untimed run and read after, as an installed package has it.  Printed:
the median and the best wall-clock seconds of each, the median CPU seconds
(user and system: less disturbed by other processes on a shared machine),
and their ratios to
``python -c "import sympy, numpy"`` (the goals: the main job at most 1.6x,
the import at most 1.3x).  ``-X importtime`` of the main job shows where the
time goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import sympy, numpy": [sys.executable, "-c", "import sympy, numpy"],
    "import roofline_sym": [sys.executable, "-c", "import roofline_sym"],
    "roofline-sym": [sys.executable, "-m", "roofline_sym"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for cmd in COMMANDS.values():  # bytecode written
        subprocess.run(cmd, env=env, check=True, capture_output=True)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    names = list(COMMANDS)
    for r in range(args.repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            c0 = _children_cpu()
            t0 = time.perf_counter()
            subprocess.run(COMMANDS[name], env=env, check=True, capture_output=True)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(_children_cpu() - c0)
    base = statistics.median(times["import sympy, numpy"])
    best = min(times["import sympy, numpy"])
    base_cpu = statistics.median(cpu["import sympy, numpy"])
    print(f"{'command':<22}{'median s':>10}{'ratio':>7}{'best s':>9}{'ratio':>7}"
          f"{'cpu s':>9}{'ratio':>7}")
    for name, ts in times.items():
        med, c = statistics.median(ts), statistics.median(cpu[name])
        print(f"{name:<22}{med:10.3f}{med / base:7.2f}{min(ts):9.3f}{min(ts) / best:7.2f}"
              f"{c:9.3f}{c / base_cpu:7.2f}")
    print(f"(roofline-sym is {shutil.which('roofline-sym') or 'python -m roofline_sym'}; "
          f"{args.repeat} runs each, interleaved)")
    return 0


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
