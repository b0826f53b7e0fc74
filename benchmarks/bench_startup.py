"""Start-up: the main job and the import against ``import sympy, numpy``.  A script,
not a test.

    python benchmarks/bench_startup.py [--repeat 15]

Each command runs in a fresh process, the four interleaved (the order
rotating) so the machine's load falls on all alike; bytecode is written on a
first, untimed run and read after, as an installed package has it.  The main
job is run twice over: its first run (an empty cache folder each time: every
model built, solved and evaluated) and a second run (the cache folder holding
the first run's text, which the main job prints after checking its
fingerprint: ``cli/results_cache.py``).  Printed: the median and the best
wall-clock seconds of each, the median CPU seconds (user and system: less
disturbed by other processes on a shared machine), and their ratios to
``python -c "import sympy, numpy"``.  The goals: the main job at most 1.6x,
on its first run (every model built, solved, compiled and evaluated) as on
its second (the one a user sees every time after the first), the import at
most 1.3x.  ``-X importtime`` of the main job and ``python -m cProfile -s
cumtime -m roofline_sym`` (``XDG_CACHE_HOME`` an empty folder: a first run)
show where the time goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MAIN_JOB = [sys.executable, "-m", "roofline_sym"]
COMMANDS = {
    "import sympy, numpy": [sys.executable, "-c", "import sympy, numpy"],
    "import roofline_sym": [sys.executable, "-c", "import roofline_sym"],
    "roofline-sym, first": MAIN_JOB,
    "roofline-sym, second": MAIN_JOB,
}
GOALS = {"import roofline_sym": 1.3, "roofline-sym, first": 1.6, "roofline-sym, second": 1.6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="bench_startup-") as scratch:
        warm = os.path.join(scratch, "warm")
        env = dict(base_env, XDG_CACHE_HOME=warm)
        for cmd in COMMANDS.values():  # bytecode written, the warm cache filled
            subprocess.run(cmd, env=env, check=True, capture_output=True)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
        outputs: dict[str, set[bytes]] = {"roofline-sym, first": set(),
                                          "roofline-sym, second": set()}
        names = list(COMMANDS)
        for r in range(args.repeat):
            for name in names[r % len(names):] + names[:r % len(names)]:
                cold = os.path.join(scratch, f"cold-{r}")  # empty: a first run
                env["XDG_CACHE_HOME"] = cold if name == "roofline-sym, first" else warm
                c0 = _children_cpu()
                t0 = time.perf_counter()
                done = subprocess.run(COMMANDS[name], env=env, check=True, capture_output=True)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(_children_cpu() - c0)
                if name in outputs:
                    outputs[name].add(done.stdout)
                shutil.rmtree(cold, ignore_errors=True)
    base = statistics.median(times["import sympy, numpy"])
    best = min(times["import sympy, numpy"])
    base_cpu = statistics.median(cpu["import sympy, numpy"])
    print(f"{'command':<22}{'median s':>10}{'ratio':>7}{'best s':>9}{'ratio':>7}"
          f"{'cpu s':>9}{'ratio':>7}  goal")
    for name, ts in times.items():
        med, c = statistics.median(ts), statistics.median(cpu[name])
        goal = GOALS.get(name)
        verdict = ""
        if goal is not None:
            ok = med / base <= goal and c / base_cpu <= goal
            verdict = f"<= {goal}x: {'met' if ok else 'NOT met'} (median and cpu)"
        print(f"{name:<22}{med:10.3f}{med / base:7.2f}{min(ts):9.3f}{min(ts) / best:7.2f}"
              f"{c:9.3f}{c / base_cpu:7.2f}  {verdict}")
    print(f"(roofline-sym is {' '.join(MAIN_JOB[1:])}: first with an empty cache folder, "
          f"second with the first run's text in it; {args.repeat} runs each, interleaved)")
    same = len(outputs["roofline-sym, first"] | outputs["roofline-sym, second"]) == 1
    print("first and second runs print the same text" if same else
          "first and second runs DIFFER")
    return 0 if same else 1


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
