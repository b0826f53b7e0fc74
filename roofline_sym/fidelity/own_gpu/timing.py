"""Measure a linear layer's GEMMs and cast kernels on a GPU, one CSV row each.

The harness times every component the training cost model charges for: the
three GEMMs in bf16 and in fp8 (tensorwise and rowwise scales), every cast
kernel of the tensorwise and rowwise recipes, and two micro-benchmarks (copy
bandwidth and a one-element kernel, the launch floor), on a grid of shapes.
Each row carries the bytes and FLOPs the model assigns to its component, so
``hardware_fit`` can fit the model's hardware numbers to the measured times.

The components and their model costs live in ``components``, the CSV format
in ``measurement_file``, the torch side in ``cuda``; this module holds the
grid, the timing loop and ``measure``.  torch
is imported only inside ``TorchOps``, ``CudaEventTimer``, ``torch_env`` and
``measure``: the grid, the timing loop (``run``, with an injectable timer)
and the CSV reader and writer work without it.

>>> c = Case("gemm.fp8_rowwise.grad_input", M=16384, K=8192, N=1024)
>>> rows = list(run([c], make_op=lambda case: None,
...                 timer=lambda fn, warmup, repeats: [1e-3] * repeats))
>>> rows[0]["component"], rows[0]["time_s"], rows[0]["repeats"]
('gemm.fp8_rowwise.grad_input', 0.001, 200)
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ...devices import hardware as lookup_hardware
from ...numeric.shapes import shape_set
from ...validate import unknown_name
from .components import COMPONENTS, Case, check_component, costs, model_times
from .cuda import CudaEventTimer, TorchOps, clock_reader, torch_cuda, torch_env
from .measurement_file import SCHEMA, MeasurementWriter

__all__ = ["RepeatPolicy", "GRIDS", "default_grid", "grid", "run", "estimate_seconds",
           "measure", "CUBES", "LLAMA_TOKENS", "COPY_ELEMENTS"]


# -- the shape grid ---------------------------------------------------------------
# Power-of-two cubes M = K = N = x.
CUBES = (512, 1024, 2048, 4096, 8192, 16384)
# Llama 3 70B's linear layers (shape set "llama3-70b") at these token counts.
LLAMA_TOKENS = (8192, 16384)
# Copy sizes in bf16 elements: 2 MiB to 512 MiB read (and as much written).
COPY_ELEMENTS = (1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28)


def default_grid(cubes: Iterable[int] = CUBES, llama_tokens: Iterable[int] = LLAMA_TOKENS,
                 components: Iterable[str] | None = None, micro: bool = True) -> list[Case]:
    """Every component at every shape: pow2 cubes, then Llama 3 70B layers.

    Shapes are unique (a Llama layer equal to a cube joins the cube's name).
    ``components``: a subset of the GEMM and cast components (default all).

    >>> g = default_grid(cubes=[512], llama_tokens=[], micro=False)
    >>> len(g), g[0].shape, g[-1].component
    (32, 'cube-512', 'cast.rowwise.grad_weight.rescale')
    """
    layer_components = [c for c in (components or COMPONENTS) if not c.startswith("micro.")]
    for c in layer_components:
        check_component(c)
    shapes: dict[tuple[int, int, int], tuple[list[str], list[str]]] = {}

    def add(mkn: tuple[int, int, int], shape_set: str, name: str) -> None:
        sets, names = shapes.setdefault(mkn, ([], []))
        if shape_set not in sets:
            sets.append(shape_set)
        names.append(name)

    for x in cubes:
        add((x, x, x), "cube", f"cube-{x}")
    for m in llama_tokens:
        layers = shape_set("llama3-70b", M=m)
        by_shape: dict[tuple[int, int], list[str]] = {}
        for name, k, n in zip(layers.names, layers.K, layers.N):
            by_shape.setdefault((int(k), int(n)), []).append(name)
        for (k, n), names in by_shape.items():
            add((m, k, n), "llama3-70b", f"llama3-70b.{'+'.join(names)}@{m}")
    cases = []
    if micro:
        cases.append(Case("micro.launch", 1, 1, 1, "launch", "micro"))
        cases += [Case("micro.copy", n, 1, 1, f"copy-{n}", "micro") for n in COPY_ELEMENTS]
    for (m, k, n), (sets, names) in shapes.items():
        cases += [Case(c, m, k, n, "|".join(names), "|".join(sets)) for c in layer_components]
    return cases


GRIDS: dict[str, Callable[[], list[Case]]] = {
    # the full grid: about 2 minutes on one H100 (estimate_seconds; docs/fidelity.md), budget 6
    "default": default_grid,
    # a smoke run: small cubes only, mostly compiling the casts
    "quick": partial(default_grid, cubes=(512, 1024, 2048, 4096), llama_tokens=()),
}


def grid(name: str = "default") -> list[Case]:
    """A named grid: ``default`` or ``quick``.

    >>> len(grid("quick"))
    134
    """
    if name not in GRIDS:
        raise unknown_name("grid", name, GRIDS)
    return GRIDS[name]()


# -- the timing loop ----------------------------------------------------------------
Timer = Callable[..., Sequence[float]]  # timer(fn, warmup=, repeats=) -> seconds per repeat


@dataclass(frozen=True)
class RepeatPolicy:
    """How often to run an op: ``warmup`` calls, then enough repeats to fill
    ``target_s`` of timed work (from a one-repeat probe), within
    ``[min_repeats, max_repeats]``.

    >>> RepeatPolicy().repeats(0.002), RepeatPolicy().repeats(0.05), RepeatPolicy().repeats(1e-6)
    (100, 20, 200)
    """

    warmup: int = 5
    min_repeats: int = 20
    max_repeats: int = 200
    target_s: float = 0.2

    def repeats(self, probe_s: float) -> int:
        if not probe_s > 0:
            return self.max_repeats
        return int(min(self.max_repeats, max(self.min_repeats, math.ceil(self.target_s / probe_s))))


# make_op's op goes to the timer alone: any object that timer takes (synthesize: the case)
def run(cases: Iterable[Case], make_op: Callable[[Case], object], timer: Timer, *,
        env: Mapping[str, Any] | None = None, policy: RepeatPolicy = RepeatPolicy(),
        clocks: Callable[[], Mapping[str, Any]] | None = None,
        progress: Callable[[str], None] | None = None,
        on_skip: Callable[[Case, str], None] | None = None) -> Iterator[dict[str, Any]]:
    """Time each case and yield its CSV row (a dict over ``COLUMNS``).

    ``make_op(case)`` returns a no-argument callable (allocating its inputs
    once); ``timer(fn, warmup=, repeats=)`` returns the seconds of each repeat.
    Each distinct ``case.op`` is made and timed once: a probe of one repeat
    after ``policy.warmup`` calls sets the repeat count, the row keeps the
    median.  An op that raises is skipped (``on_skip(case, reason)``), with
    every case that shares it.  ``env``: the gpu/torch/cuda columns;
    ``clocks()``: the clock columns, read after each op.
    """
    env = dict(env or {})
    done: dict[tuple[Any, ...], dict[str, Any] | str] = {}
    for i, case in enumerate(cases):
        result = done.get(case.op)
        if result is None:
            result = done[case.op] = _time_op(case, make_op, timer, policy, clocks)
            if progress:
                what = (f"{result['time_s'] * 1e6:10.1f} us x{result['repeats']}"
                        if isinstance(result, dict) else f"skipped: {result}")
                progress(f"[{i + 1}] {case.component} {case.shape} {what}")
        if isinstance(result, str):
            if on_skip:
                on_skip(case, result)
            continue
        yield {
            "schema": SCHEMA, "component": case.component, "shape_set": case.shape_set,
            "shape": case.shape, "M": case.M, "K": case.K, "N": case.N,
            "dtype": case.dtype, "bytes": case.bytes, "flops": case.flops,
            **result,
            "gpu": env.get("gpu", ""), "torch": env.get("torch", ""), "cuda": env.get("cuda", ""),
        }


def _time_op(case: Case, make_op: Callable[[Case], object], timer: Timer,
             policy: RepeatPolicy, clocks: Callable[[], Mapping[str, Any]] | None
             ) -> dict[str, Any] | str:
    try:
        fn = make_op(case)
        probe = timer(fn, warmup=policy.warmup, repeats=1)
        times = np.asarray(timer(fn, warmup=0, repeats=policy.repeats(float(probe[0]))), float)
        del fn  # frees the op's tensors before the next op allocates
    except Exception as exc:  # an op the GPU cannot run must not end the whole run
        return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    if times.size == 0 or not np.all(np.isfinite(times) & (times > 0)):
        return f"timer returned non-positive or non-finite times {times[:3].tolist()}"
    out = {"time_s": float(np.median(times)), "time_min_s": float(times.min()),
           "time_max_s": float(times.max()), "repeats": int(times.size),
           "sm_clock_mhz": None, "mem_clock_mhz": None}
    if clocks:
        out.update({k: v for k, v in clocks().items() if k in out})
    return out


def estimate_seconds(cases: Iterable[Case], hardware: Any = "h100-sxm",
                     policy: RepeatPolicy = RepeatPolicy(), *, per_repeat_s: float = 150e-6,
                     per_op_s: float = 0.03, compile_s: float = 10.0,
                     first_compile_s: float = 20.0) -> float:
    """Wall-clock estimate of a run, from the model's times on ``hardware``.

    Per distinct op: ``warmup + 1 + repeats`` calls of (model time +
    ``per_repeat_s``, the L2 flush and the queue-ahead sleep), plus
    ``per_op_s`` to allocate its inputs; plus ``compile_s`` per compiled cast
    implementation (``first_compile_s`` for the first, which also loads
    Inductor and Triton).  Small GEMMs run 2-3x slower than the model says;
    they are dominated by ``per_repeat_s`` anyway.

    >>> round(estimate_seconds(grid("default")) / 60, 1)
    2.3
    """
    hw = lookup_hardware(hardware)
    values = {str(k): float(v) for k, v in hw.parameters.items()}
    ops: dict[tuple[Any, ...], Case] = {}
    for case in cases:
        ops.setdefault(case.op, case)
    firsts = list(ops.values())
    d, f, b = costs([c.component for c in firsts], [c.M for c in firsts],
                    [c.K for c in firsts], [c.N for c in firsts])
    total = 0.0
    for t in model_times(d, f, b, values):
        calls = policy.warmup + 1 + policy.repeats(float(t))
        total += calls * (float(t) + per_repeat_s) + per_op_s
    impls = {op[0] for op in ops if op[0] not in ("gemm", "copy", "launch")}
    if impls:
        total += first_compile_s + compile_s * (len(impls) - 1)
    return total


def measure(out: str | os.PathLike[str], grid_name: str | Iterable[Case] = "default", *,
            policy: RepeatPolicy = RepeatPolicy(), dynamic: bool = True,
            progress: Callable[[str], None] | None = print,
            make_op: Callable[[Case], Callable[[], Any]] | None = None,
            timer: Timer | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Run the harness on the current CUDA device and write ``out`` (CSV).

    One command on an H100/H200: ``roofline-sym measure --out h200.csv``
    (estimated 2.1 minutes for the default grid; ``grid_name="quick"`` for a
    smoke run).  Raises ``MeasureError`` where there is no CUDA GPU or fp8
    GEMM.  ``make_op``, ``timer`` and ``env`` replace the CUDA defaults
    (``TorchOps``, ``CudaEventTimer``, ``torch_env``); given all three, no
    GPU (and no torch) is needed.
    """
    torch: ModuleType | None = None
    if make_op is None or timer is None or env is None:
        torch = torch_cuda()
    cases = grid(grid_name) if isinstance(grid_name, str) else list(grid_name)
    env = dict(env) if env is not None else torch_env(torch)
    say = progress or (lambda _: None)
    est = estimate_seconds(cases, policy=policy)
    say(f"measuring {len(cases)} cases on {env.get('gpu', '?')} (torch {env.get('torch', '?')}, "
        f"CUDA {env.get('cuda', '?')}); estimate ~{est / 60:.1f} min on H100 SXM")
    make_op = make_op or TorchOps(torch, dynamic=dynamic)
    timer = timer or CudaEventTimer(torch)
    clocks = clock_reader(torch) if torch is not None else None
    flush = getattr(timer, "flush_bytes", None)
    started = time.perf_counter()
    out = Path(out)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = MeasurementWriter(f, comments=[
            f"gpu: {env.get('gpu', '')}; torch {env.get('torch', '')}; CUDA {env.get('cuda', '')}",
            f"timing: median of {policy.min_repeats}..{policy.max_repeats} repeats after "
            f"{policy.warmup} warm-up calls"
            + (f", CUDA events, L2 flushed by writing {flush / 2**20:.0f} MiB before each repeat"
               if flush else f", timer {type(timer).__name__}"),
            f"casts: torch.compile(dynamic={dynamic}); GEMMs: torch.mm (bf16) and "
            "torch._scaled_mm (fp8 e4m3, bf16 output), a row-major, b column-major",
            f"started: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        ])

        def skip(case: Case, reason: str) -> None:
            writer.comment(f"skipped {case.component} at {case.shape}: {reason}")

        n = 0
        for row in run(cases, make_op, timer, env=env, policy=policy, clocks=clocks,
                       progress=progress, on_skip=skip):
            writer.write(row)
            n += 1
        for note in dict.fromkeys(getattr(make_op, "notes", ())):
            writer.comment(f"note: {note}")
        writer.comment(f"finished: {n} rows in {time.perf_counter() - started:.0f} s")
    say(f"wrote {n} rows to {out} in {time.perf_counter() - started:.0f} s")
    return out
