"""Start-up: the main job and the import against ``import sympy, numpy``.  A script,
not a test.

    python benchmarks/bench_startup.py [--repeat 15] [--terms 9]

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
most 1.25x.  ``-X importtime`` of the main job and ``python -m cProfile -s
cumtime -m roofline_sym`` (``XDG_CACHE_HOME`` an empty folder: a first run)
show where the time goes; ``--terms N`` measures it term by term: N fresh
processes with an empty cache folder, each timing (CPU seconds) the main
job's imports, then what the work spends in each of its steps (its own time,
without the steps it calls): the hardware dataset, model building, binding,
compiling, solving, evaluating, the break-even range, and the rest (the
table's text); the medians are printed beside ``import sympy, numpy``'s.
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
from typing import Any

MAIN_JOB = [sys.executable, "-m", "roofline_sym"]
COMMANDS = {
    "import sympy, numpy": [sys.executable, "-c", "import sympy, numpy"],
    "import roofline_sym": [sys.executable, "-c", "import roofline_sym"],
    "roofline-sym, first": MAIN_JOB,
    "roofline-sym, second": MAIN_JOB,
}
GOALS = {"import roofline_sym": 1.25, "roofline-sym, first": 1.6, "roofline-sym, second": 1.6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--terms", type=int, default=0,
                    help="time the main job's steps in this many fresh processes")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child()
    if args.terms:
        return _terms(args.terms)
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
        for r in _progress(range(args.repeat), "startup runs"):
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


# the main job's steps: (term, module, attribute) of each function timed
STEPS = [
    ("hardware", "roofline_sym.cli.cmd_default", "dataset"),
    ("model building", "roofline_sym.output.breakeven_tables", "linear"),
    ("binding", "roofline_sym.model.layer", "Linear.on"),
    ("compiling", "roofline_sym.model.layer", "Linear.compiled"),
    ("solving", "roofline_sym.output.breakeven_tables", "breakeven"),
    ("evaluating", "roofline_sym.model.layer", "Linear.evaluate"),
    ("range", "roofline_sym.cli.cmd_default", "breakeven_range"),
]


def _progress(items: Any, desc: str) -> Any:
    """``items`` with a bar on a terminal (roofline_sym.progress), imported
    here: a child process that times the imports must not have it loaded."""
    from roofline_sym.progress import with_progress

    return with_progress(items, desc, unit="round")


def _terms(n: int) -> int:
    """The main job's time term by term: medians over ``n`` fresh processes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_startup-") as scratch:
        subprocess.run(COMMANDS["import sympy, numpy"], env=env, check=True)
        for r in _progress(range(n + 1), "main job, term by term"):  # run 0 writes bytecode, untimed
            env["XDG_CACHE_HOME"] = os.path.join(scratch, f"cold-{r}")
            base = subprocess.run([sys.executable, "-c", "import time, sympy, numpy; "
                                   "print(time.process_time())"],
                                  env=env, check=True, capture_output=True, text=True)
            done = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                                  capture_output=True, text=True)
            if r == 0:
                continue
            rows.setdefault("import sympy, numpy (a process)", []).append(float(base.stdout))
            for line in done.stdout.splitlines():
                term, _, value = line.rpartition(" ")
                rows.setdefault(term, []).append(float(value))
    base_cpu = statistics.median(rows["import sympy, numpy (a process)"])
    print(f"{'the main job, first run':<36}{'cpu s':>8}{'of base':>9}")
    for term, values in rows.items():
        med = statistics.median(values)
        print(f"{term:<36}{med:8.3f}{med / base_cpu:9.2f}")
    print(f"(medians over {n} fresh processes, each with an empty cache folder; CPU seconds "
          "of each step's own work, without the steps it calls; the package's share is what "
          "the main job adds to `import sympy, numpy`: the 1.6x goal leaves it 0.6 of base)")
    return 0


def _child() -> int:
    """One main job, timed step by step (CPU seconds), printed as ``term seconds``."""
    import importlib
    from functools import cached_property

    own: dict[str, float] = {}
    stack: list[float] = []

    def timed(term: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            stack.append(0.0)
            try:
                return fn(*a, **k)
            finally:
                spent = time.process_time() - t
                inner = stack.pop()
                own[term] = own.get(term, 0.0) + spent - inner
                if stack:
                    stack[-1] += spent
        return wrapper

    t0 = time.process_time()
    import sympy, numpy  # noqa: E401,F401  # the baseline's share, then the package's
    t1 = time.process_time()
    from roofline_sym import cli  # noqa: F401
    from roofline_sym.cli import cmd_default
    t2 = time.process_time()
    for term, module_name, attribute in STEPS:
        module = importlib.import_module(module_name)
        owner: Any = module
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        value = vars(owner)[name]
        if isinstance(value, cached_property):
            wrapped = cached_property(timed(term, value.func))
            wrapped.__set_name__(owner, name)
            setattr(owner, name, wrapped)
        else:
            setattr(owner, name, timed(term, value))
    rest = "the rest (the table's text)"
    text = timed(rest, cmd_default.text)()
    t3 = time.process_time()
    assert text
    print(f"import sympy, numpy (in the job) {t1 - t0:.4f}")
    print(f"import of the main job's modules {t2 - t1:.4f}")
    for term, _, _ in STEPS:
        print(f"{term} {own.get(term, 0.0):.4f}")
    print(f"{rest} {own[rest]:.4f}")
    print(f"the work, all steps {t3 - t2:.4f}")
    # beyond `import sympy, numpy`: what the main job adds (the 1.6x goal leaves 0.6)
    print(f"the package's share, imports and work {t3 - t1:.4f}")
    return 0


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
