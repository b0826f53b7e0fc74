"""Measure a linear layer's GEMMs and cast kernels on a GPU, one CSV row each.

The harness times every component the training cost model charges for: the
three GEMMs in bf16 and in fp8 (tensorwise and rowwise scales), every cast
kernel of the tensorwise and rowwise recipes, and two micro-benchmarks (copy
bandwidth and a one-element kernel, the launch floor), on a grid of shapes.
Each row carries the bytes and FLOPs the model assigns to its component, so
``calibrate`` can fit the model's hardware numbers to the measured times.

torch is imported only inside ``TorchOps``, ``CudaEventTimer``,
``torch_env`` and ``measure``: the grid, the timing loop (``run``, with an
injectable timer) and the CSV reader and writer work without it.

>>> c = Case("gemm.fp8_rowwise.grad_input", M=16384, K=8192, N=1024)
>>> c.op                 # grad_input = grad_output @ weight.T: (m, k, n) = (M, N, K)
('gemm', 'fp8_rowwise', 16384, 1024, 8192, False)
>>> c.dtype, c.flops, c.bytes    # rowwise: fp32 scales per row of a, per column of b
('fp8', 274877906944.0, 293699584.0)
>>> Case("cast.rowwise.input.cast_dim1", 16384, 8192, 1024).op   # reads the bf16 transpose
('rw_rows', 8192, 16384)
>>> rows = list(run([c], make_op=lambda case: None,
...                 timer=lambda fn, warmup, repeats: [1e-3] * repeats))
>>> rows[0]["component"], rows[0]["time_s"], rows[0]["repeats"]
('gemm.fp8_rowwise.grad_input', 0.001, 200)
"""

from __future__ import annotations

import csv
import io
import math
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TextIO

import numpy as np
import sympy

from . import symbols as S
from .formats import element
from .recipes import gemm_dims, recipe, role_dims
from .shapes import shape_set
from .term import Term

__all__ = [
    "SCHEMA",
    "COLUMNS",
    "REQUIRED_COLUMNS",
    "COMPONENTS",
    "Case",
    "Measurements",
    "MeasureError",
    "RepeatPolicy",
    "CsvWriter",
    "CudaEventTimer",
    "TorchOps",
    "GRIDS",
    "default_grid",
    "grid",
    "run",
    "model_term",
    "costs",
    "model_times",
    "estimate_seconds",
    "write_csv",
    "read_csv",
    "parse_csv",
    "torch_env",
    "measure",
]

# -- the CSV schema -----------------------------------------------------------
# Bump SCHEMA when a column changes meaning; readers refuse other versions.
SCHEMA = 1
HEADER_LINE = f"roofline_sym measurements, schema {SCHEMA}"
COLUMNS = (
    "schema",          # SCHEMA of the row
    "component",       # gemm.<kind>.<gemm>, cast.<recipe>.<role>.<kernel>, micro.<name>
    "shape_set",       # where the shape comes from: cube, llama3-70b, micro
    "shape",           # a readable name of the shape
    "M", "K", "N",     # the linear layer (micro rows: M = elements, K = N = 1)
    "dtype",           # the GEMM peak the model uses (bf16, fp8), empty for kernels
    "bytes",           # bytes moved, per the model
    "flops",           # FLOPs, per the model
    "time_s",          # median over repeats, seconds
    "time_min_s", "time_max_s",
    "repeats",
    "gpu", "torch", "cuda",
    "sm_clock_mhz", "mem_clock_mhz",  # read after the op was timed, when readable
)
REQUIRED_COLUMNS = ("component", "M", "K", "N", "time_s")
_INT_COLUMNS = ("M", "K", "N", "repeats")
_FLOAT_COLUMNS = ("bytes", "flops", "time_s", "time_min_s", "time_max_s",
                  "sm_clock_mhz", "mem_clock_mhz")


class MeasureError(RuntimeError):
    """The harness cannot run here (no torch, no CUDA device, no fp8 GEMM)."""


# -- components and the model terms that predict them ---------------------------
GEMM_NAMES = tuple(gemm_dims("training"))  # output, grad_input, grad_weight
# GEMM kind -> (recipe whose model prices it, side of the model)
GEMM_KINDS = {
    "bf16": ("tensorwise", "baseline"),
    "fp8_tensorwise": ("tensorwise", "lowp"),
    "fp8_rowwise": ("rowwise", "lowp"),
}
# torchao's Float8LinearConfig defaults: fast accumulation in the forward GEMM
# only; the backward GEMMs accumulate in full precision.
FAST_ACCUM = {"output": True, "grad_input": False, "grad_weight": False}
CAST_RECIPES = ("tensorwise", "rowwise")

# (recipe, "act" or "weight", kernel) -> (implementation, transposed): the
# operation the harness runs for a kernel of recipes.py.  "transposed": the
# kernel reads the bf16 transpose (dim1 x dim0) an earlier kernel wrote.
CAST_IMPLS: dict[tuple[str, str, str], tuple[str, bool]] = {
    ("tensorwise", "act", "amax"): ("amax", False),
    ("tensorwise", "act", "amax_final"): ("amax_final", False),
    ("tensorwise", "act", "cast_dim0_dim1"): ("tw_cast_dim0_dim1", False),
    ("tensorwise", "weight", "amax"): ("amax", False),
    ("tensorwise", "weight", "amax_final"): ("amax_final", False),
    ("tensorwise", "weight", "cast_dim0"): ("tw_cast", False),
    ("tensorwise", "weight", "cast_dim1"): ("tw_cast_t", False),
    ("rowwise", "act", "cast_dim0_transpose"): ("rw_rows_transpose", False),
    ("rowwise", "act", "cast_dim1"): ("rw_rows", True),
    ("rowwise", "weight", "cast_dim0"): ("rw_cols", False),
    ("rowwise", "weight", "transpose"): ("transpose", False),
    ("rowwise", "weight", "cast_dim1"): ("rw_cols", True),
}
MICRO = ("micro.launch", "micro.copy")


def _cast_components() -> tuple[str, ...]:
    # derived from recipes.py, so a kernel added there shows up here (and a
    # test fails until CAST_IMPLS says how to run it)
    return tuple(f"cast.{r}.{role}.{k.name}" for r in CAST_RECIPES
                 for role, kernels in recipe(r, "training").kernels.items() for k in kernels)


COMPONENTS = (
    *(f"gemm.{kind}.{g}" for kind in GEMM_KINDS for g in GEMM_NAMES),
    *_cast_components(),
    *MICRO,
)
_COMPONENT_SET = frozenset(COMPONENTS)


@cache
def _linear(recipe_name: str):
    from .linear import linear  # linear imports nothing from here; lazy keeps import light

    # standalone kernels read their input from memory: the unfused model
    return linear(recipe_name, mode="training", fuse=False, preset="default")


def model_term(component: str) -> Term:
    """The model's term for a component (unbound: hardware symbols free).

    GEMMs and casts are terms of ``linear(recipe, fuse=False)``; the micro
    benchmarks are a bf16 copy kernel and a kernel that moves nothing.

    >>> model_term("cast.tensorwise.weight.amax_final").expr
    t_launch
    >>> model_term("micro.copy").expr
    Max(t_launch, 4*M/(BW*eta_mem))
    """
    _check_component(component)
    kind, *rest = component.split(".")
    launch = ("launch", S.launch_overhead())
    if component == "micro.launch":
        return Term(component, (launch,))
    if component == "micro.copy":  # M elements of bf16 read and written
        nbytes = 2 * element("bf16").bytes * S.M
        return Term(component, (("memory", nbytes / (S.mem_bw() * S.mem_efficiency())), launch))
    if kind == "gemm":
        gemm_kind, gemm = rest
        recipe_name, side = GEMM_KINDS[gemm_kind]
        name = f"{side}.gemm.{gemm}"
    else:
        recipe_name, role, kernel = rest
        name = f"lowp.cast.{role}.{kernel}"
    return {t.name: t for t in _linear(recipe_name).terms}[name]


@cache
def _cost(component: str) -> tuple[str, Callable]:
    """(dtype, f(M, K, N) -> (flops, bytes)) read off the term's pieces."""
    dtype, flops, nbytes = "", sympy.Integer(0), sympy.Integer(0)
    for regime, expr in model_term(component).pieces:
        if regime == "compute":
            peak = next(s for s in expr.free_symbols if s.name.startswith("P_"))
            dtype = peak.name[2:]
            flops = expr.xreplace({peak: 1, S.gemm_efficiency(dtype): 1})
        elif regime == "memory":
            nbytes = expr.xreplace({S.mem_bw(): 1, S.mem_efficiency(): 1})
    fn = sympy.lambdify(S.SHAPE_SYMBOLS, [flops, nbytes], modules="numpy")
    return dtype, fn


def _check_component(component: str) -> None:
    if component not in _COMPONENT_SET:
        raise ValueError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")


def costs(components: Sequence[str], M: Any, K: Any, N: Any
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the model's (dtype, FLOPs, bytes) of ``components[i]`` at shape i.

    >>> d, f, b = costs(["gemm.bf16.output", "micro.launch"], [512, 1], [512, 1], [512, 1])
    >>> d.tolist(), f.tolist(), b.tolist()
    (['bf16', ''], [268435456.0, 0.0], [1572864.0, 0.0])
    """
    comps = np.asarray(components, dtype=object)
    shape = [np.broadcast_to(np.asarray(v, dtype=np.float64), comps.shape) for v in (M, K, N)]
    dtype = np.full(comps.shape, "", dtype=object)
    flops, nbytes = np.zeros(comps.shape), np.zeros(comps.shape)
    for comp in dict.fromkeys(comps.tolist()):
        mask = comps == comp
        d, fn = _cost(comp)
        f, b = fn(*(a[mask] for a in shape))
        dtype[mask], flops[mask], nbytes[mask] = d, f, b
    return dtype, flops, nbytes


def model_times(dtype: np.ndarray, flops: np.ndarray, nbytes: np.ndarray,
                values: Mapping[str, Any], regimes: bool = False):
    """The model's time of each row: ``Max(F / (P_d eta_d), B / (BW eta_mem), t_launch)``.

    This is every term's formula (a GEMM has all three pieces, a cast kernel
    no compute piece, a kernel that moves no bytes only the launch floor),
    vectorised over rows.  ``values`` maps hardware symbol names (``P_fp8``,
    ``eta_fp8``, ``BW``, ``eta_mem``, ``t_launch``) to numbers or per-row
    arrays (a size-dependent efficiency).  With ``regimes=True`` also return
    each row's regime (compute, memory, launch).

    >>> v = {"P_bf16": 1e15, "eta_bf16": 0.5, "BW": 1e12, "eta_mem": 0.5, "t_launch": 2e-6}
    >>> t, r = model_times(np.array(["bf16", ""]), np.array([1e12, 0.0]),
    ...                    np.array([1e6, 0.0]), v, regimes=True)
    >>> t.tolist(), r.tolist()
    ([0.002, 2e-06], ['compute', 'launch'])
    """
    dtype = np.asarray(dtype, dtype=object)
    flops, nbytes = np.asarray(flops, float), np.asarray(nbytes, float)
    pieces = np.full((3,) + dtype.shape, -np.inf)
    for d in set(dtype.tolist()) - {""}:
        mask = dtype == d
        eta = np.broadcast_to(np.asarray(values[f"eta_{d}"], float), dtype.shape)[mask]
        pieces[0][mask] = flops[mask] / (float(values[f"P_{d}"]) * eta)
    bw = float(values["BW"]) * np.broadcast_to(np.asarray(values["eta_mem"], float), dtype.shape)
    pieces[1] = np.where(nbytes > 0, nbytes / bw, -np.inf)
    pieces[2] = np.broadcast_to(np.asarray(values["t_launch"], float), dtype.shape)
    times = pieces.max(axis=0)
    if not regimes:
        return times
    return times, np.array(("compute", "memory", "launch"), dtype=object)[pieces.argmax(axis=0)]


# -- cases and the shape grid ------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One component at one linear-layer shape; ``op`` is what actually runs.

    Cases whose ``op`` is equal (the three GEMMs of a cube, an amax shared by
    roles of equal shape) are timed once.
    """

    component: str
    M: int
    K: int
    N: int
    shape: str = ""
    shape_set: str = ""

    def __post_init__(self) -> None:
        _check_component(self.component)
        for name in ("M", "K", "N"):
            value = getattr(self, name)
            if isinstance(value, bool) or not float(value).is_integer() or value <= 0:
                raise ValueError(f"case {self.component}: {name} must be a positive "
                                 f"integer, not {value!r}")
            object.__setattr__(self, name, int(value))

    @property
    def kind(self) -> str:
        """``gemm``, ``cast`` or ``micro``."""
        return self.component.split(".", 1)[0]

    @cached_property
    def op(self) -> tuple:
        """The operation: ``("gemm", kind, m, k, n, fast_accum)``, ``(impl, d0, d1)``..."""
        kind, *rest = self.component.split(".")
        dims = {S.M: self.M, S.K: self.K, S.N: self.N}
        if kind == "gemm":
            gemm_kind, gemm = rest
            m, k, n = (dims[d] for d in gemm_dims("training")[gemm])
            fast = FAST_ACCUM[gemm] if gemm_kind != "bf16" else None
            return ("gemm", gemm_kind, m, k, n, fast)
        if kind == "cast":
            recipe_name, role, kernel = rest
            key = (recipe_name, "weight" if role == "weight" else "act", kernel)
            if key not in CAST_IMPLS:
                raise ValueError(f"no implementation of kernel {kernel!r} of {recipe_name} "
                                 f"({role}) in measure.CAST_IMPLS")
            impl, transposed = CAST_IMPLS[key]
            d0, d1 = (dims[d] for d in role_dims("training")[role])
            return (impl, d1, d0) if transposed else (impl, d0, d1)
        return ("launch",) if self.component == "micro.launch" else ("copy", self.M)

    @cached_property
    def _cost(self) -> tuple[str, float, float]:
        d, f, b = costs([self.component], self.M, self.K, self.N)
        return d[0], float(f[0]), float(b[0])

    @property
    def dtype(self) -> str:
        """The GEMM peak the model prices it at (``bf16``, ``fp8``), or ``""``."""
        return self._cost[0]

    @property
    def flops(self) -> float:
        return self._cost[1]

    @property
    def bytes(self) -> float:
        return self._cost[2]


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
    (26, 'cube-512', 'cast.rowwise.grad_output.cast_dim1')
    """
    layer_components = [c for c in (components or COMPONENTS) if not c.startswith("micro.")]
    for c in layer_components:
        _check_component(c)
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
    # the full grid: estimated 2.1 minutes on one H100 (estimate_seconds), budget 6
    "default": default_grid,
    # a smoke run: small cubes only, ~1.7 minutes, mostly compiling the casts
    "quick": partial(default_grid, cubes=(512, 1024, 2048, 4096), llama_tokens=()),
}


def grid(name: str = "default") -> list[Case]:
    """A named grid: ``default`` or ``quick``.

    >>> len(grid("quick"))
    110
    """
    if name not in GRIDS:
        raise ValueError(f"unknown grid {name!r}; known: {', '.join(GRIDS)}")
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


def run(cases: Iterable[Case], make_op: Callable[[Case], Callable[[], Any]], timer: Timer, *,
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
    done: dict[tuple, dict[str, Any] | str] = {}
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


def _time_op(case: Case, make_op, timer, policy: RepeatPolicy, clocks) -> dict[str, Any] | str:
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
    2.1
    """
    from .hardware import hardware as lookup

    hw = lookup(hardware)
    values = {str(k): float(v) for k, v in hw.parameters.items()}
    ops: dict[tuple, Case] = {}
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


# -- CSV ---------------------------------------------------------------------------------
def _cell(value: Any, column: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if column in ("time_s", "time_min_s", "time_max_s"):
        return f"{float(value):.6e}"
    if column in ("bytes", "flops"):
        return f"{float(value):.17g}"
    return str(value)


class CsvWriter:
    """Writes the header comment, the column header and rows, flushing each row
    (a run that dies half way keeps what it measured).

    >>> buf = io.StringIO()
    >>> w = CsvWriter(buf, comments=["example"])
    >>> w.comment("a note")
    >>> buf.getvalue().splitlines()[:2]
    ['# roofline_sym measurements, schema 1', '# example']
    """

    def __init__(self, file: TextIO, comments: Iterable[str] = ()):
        self._file = file
        for line in (HEADER_LINE, *comments):
            self.comment(line)
        self._writer = csv.writer(file, lineterminator="\n")
        self._writer.writerow(COLUMNS)

    def comment(self, text: str) -> None:
        for line in str(text).splitlines() or [""]:
            self._file.write(f"# {line}\n")
        self._file.flush()

    def write(self, row: Mapping[str, Any]) -> None:
        self._writer.writerow([_cell(row.get(c), c) for c in COLUMNS])
        self._file.flush()


def write_csv(rows: Iterable[Mapping[str, Any]], path_or_file: str | os.PathLike | TextIO,
              comments: Iterable[str] = ()) -> int:
    """Write rows (dicts over ``COLUMNS``) as a measurement CSV; returns the row count."""
    if hasattr(path_or_file, "write"):
        return _write_rows(path_or_file, rows, comments)
    with open(path_or_file, "w", newline="", encoding="utf-8") as f:
        return _write_rows(f, rows, comments)


def _write_rows(f: TextIO, rows, comments) -> int:
    writer, n = CsvWriter(f, comments), 0
    for row in rows:
        writer.write(row)
        n += 1
    return n


@dataclass(frozen=True, eq=False)
class Measurements:
    """Validated rows of a measurement file: ``cases``, ``time_s`` and the raw
    text of every column; ``comments`` are the ``#`` lines.

    >>> m = parse_csv("component,M,K,N,time_s\\nmicro.launch,1,1,1,2.5e-6\\n")
    >>> len(m), m.time_s.tolist(), m.synthetic
    (1, [2.5e-06], False)
    """

    cases: tuple[Case, ...]
    time_s: np.ndarray
    columns: Mapping[str, tuple[str, ...]] = field(repr=False)
    comments: tuple[str, ...] = ()
    source: str = "<memory>"
    lines: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def synthetic(self) -> bool:
        """Whether the file says it is synthetic (generated, not measured)."""
        return any("synthetic" in c.lower() for c in self.comments) or any(
            "synthetic" in g.lower() for g in self.columns.get("gpu", ()))

    @property
    def gpu(self) -> str:
        """The first non-empty ``gpu`` value, or ``""``."""
        return next((g for g in self.columns.get("gpu", ()) if g), "")

    @cached_property
    def components(self) -> np.ndarray:
        return np.array([c.component for c in self.cases], dtype=object)

    @cached_property
    def shapes(self) -> np.ndarray:
        """``(rows, 3)`` float array of M, K, N."""
        return np.array([(c.M, c.K, c.N) for c in self.cases], dtype=np.float64).reshape(-1, 3)

    @cached_property
    def costs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The current model's (dtype, FLOPs, bytes) per row (not the file's columns)."""
        return costs(self.components, *self.shapes.T)

    def select(self, mask: Any) -> "Measurements":
        """The rows where ``mask`` (a boolean array or a predicate on ``Case``) holds."""
        if callable(mask):
            mask = [bool(mask(c)) for c in self.cases]
        idx = np.flatnonzero(np.asarray(mask, dtype=bool))
        return Measurements(tuple(self.cases[i] for i in idx), self.time_s[idx],
                            {k: tuple(v[i] for i in idx) for k, v in self.columns.items()},
                            self.comments, self.source,
                            tuple(self.lines[i] for i in idx) if self.lines else ())

    def write(self, path_or_file: str | os.PathLike | TextIO) -> int:
        """Write back as CSV (the ``#`` comments after the schema line are kept)."""
        rows = [{c: self.columns[c][i] if c in self.columns else "" for c in COLUMNS}
                for i in range(len(self))]
        for i, row in enumerate(rows):
            row["schema"] = row["schema"] or SCHEMA
            row["time_s"] = float(self.time_s[i])
            for c in ("time_min_s", "time_max_s", "bytes", "flops"):
                row[c] = float(row[c]) if row[c] not in ("", None) else None
        comments = [c for c in self.comments if c != HEADER_LINE]
        return write_csv(rows, path_or_file, comments)


def read_csv(path: str | os.PathLike) -> Measurements:
    """Read and validate a measurement CSV; errors name the file, line and column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read measurement file ({exc})") from None
    return parse_csv(text, str(path))


def parse_csv(text: str, source: str = "<memory>") -> Measurements:
    """Parse measurement CSV text (see ``read_csv``)."""
    comments, lines = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            comments.append(line.lstrip()[1:].strip())
        elif line.strip():
            lines.append((number, line))
    if not lines:
        raise ValueError(f"{source}: no header row (expected columns {', '.join(COLUMNS)})")
    records = list(csv.reader([line for _, line in lines]))
    header = [h.strip() for h in records[0]]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(f"{source}: missing column(s) {', '.join(map(repr, missing))} "
                         f"(line {lines[0][0]} is the header; required: "
                         f"{', '.join(REQUIRED_COLUMNS)})")
    if len(set(header)) != len(header):
        raise ValueError(f"{source}: line {lines[0][0]}: duplicate column names in the header")
    if len(records) == 1:
        raise ValueError(f"{source}: no measurement rows after the header")
    columns: dict[str, list[str]] = {h: [] for h in header}
    cases, times, numbers = [], [], []
    for (number, _), record in zip(lines[1:], records[1:]):
        where = f"{source}: line {number}"
        if len(record) != len(header):
            raise ValueError(f"{where}: {len(record)} fields, but the header has {len(header)}")
        row = {h: v.strip() for h, v in zip(header, record)}
        if "schema" in row and row["schema"] != str(SCHEMA):
            raise ValueError(f"{where}, column 'schema': {row['schema']!r} is not a supported "
                             f"schema (this roofline_sym reads schema {SCHEMA})")
        if row["component"] not in _COMPONENT_SET:
            raise ValueError(f"{where}, column 'component': unknown component "
                             f"{row['component']!r}; known: {', '.join(COMPONENTS)}")
        for c in _FLOAT_COLUMNS + _INT_COLUMNS:
            if c in row and (row[c] or c in REQUIRED_COLUMNS):
                _number(row[c], where, c, integer=c in _INT_COLUMNS,
                        positive=c in REQUIRED_COLUMNS)
        cases.append(Case(row["component"], int(float(row["M"])), int(float(row["K"])),
                          int(float(row["N"])), row.get("shape", ""), row.get("shape_set", "")))
        times.append(float(row["time_s"]))
        numbers.append(number)
        for h in header:
            columns[h].append(row[h])
    return Measurements(tuple(cases), np.array(times), {k: tuple(v) for k, v in columns.items()},
                        tuple(comments), source, tuple(numbers))


def _number(text: str, where: str, column: str, integer: bool, positive: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}, column {column!r}: {text!r} is not a number") from None
    if not math.isfinite(value) or (positive and value <= 0) or value < 0:
        raise ValueError(f"{where}, column {column!r}: {text!r} must be "
                         f"{'positive' if positive else 'non-negative'} and finite")
    if integer and not value.is_integer():
        raise ValueError(f"{where}, column {column!r}: {text!r} is not an integer")
    return value


# -- the torch side: imported only here ------------------------------------------------
def _torch_cuda():
    try:
        import torch
    except ImportError:
        raise MeasureError("measuring needs torch with CUDA: pip install torch") from None
    if not torch.cuda.is_available():
        raise MeasureError("measuring needs a CUDA GPU, and torch sees none "
                           f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        raise MeasureError(f"torch {torch.__version__} has no fp8 GEMM (torch._scaled_mm)")
    return torch


def _nvidia_smi_clocks() -> dict[str, float]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {}
    try:
        out = subprocess.run([exe, "--query-gpu=clocks.sm,clocks.mem",
                              "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        sm, mem = (float(v) for v in out.strip().splitlines()[0].split(","))
        return {"sm_clock_mhz": sm, "mem_clock_mhz": mem}
    except (OSError, ValueError, subprocess.SubprocessError, IndexError):
        return {}


def torch_env(torch: Any = None) -> dict[str, str]:
    """GPU name, torch and CUDA versions, and what nvidia-smi says (optional)."""
    torch = torch or _torch_cuda()
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": str(torch.version.cuda)}
    return env


def _clock_reader(torch: Any) -> Callable[[], dict[str, float]]:
    """Reads the SM clock through torch (pynvml, milliseconds) when it can; the
    memory clock (and the SM clock otherwise) from nvidia-smi once at start."""
    start = _nvidia_smi_clocks()

    def read() -> dict[str, float]:
        out = dict(start)
        try:
            out["sm_clock_mhz"] = float(torch.cuda.clock_rate())
        except Exception:  # no pynvml: keep the start value
            pass
        return out

    return read


class CudaEventTimer:
    """Times ``fn`` with CUDA events: warm-up calls, then per repeat an L2 flush
    (writing a buffer larger than L2), a short GPU sleep so the CPU enqueues
    the op before the GPU reaches it, and the op between two events."""

    def __init__(self, torch: Any = None, flush_bytes: int | None = None,
                 sleep_cycles: int = 20_000):
        self.torch = torch = torch or _torch_cuda()
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or 50 * 2**20
        self.flush_bytes = int(flush_bytes or max(4 * l2, 256 * 2**20))
        self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device="cuda")
        self._sleep = getattr(torch.cuda, "_sleep", None)
        self.sleep_cycles = sleep_cycles

    def __call__(self, fn: Callable[[], Any], warmup: int, repeats: int) -> list[float]:
        torch = self.torch
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(repeats)]
        for start, end in events:
            self._flush.zero_()
            if self._sleep is not None:
                self._sleep(self.sleep_cycles)
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) * 1e-3 for start, end in events]


def _cast_impls(torch: Any) -> dict[str, Callable]:
    """The cast kernels as small functions for torch.compile; each reads and
    writes what the model's kernel of the same role says (recipes.py)."""
    fp8 = torch.float8_e4m3fn
    fmax = float(torch.finfo(fp8).max)

    def to_fp8(x, scale):
        return (x.float() * scale).clamp(-fmax, fmax).to(fp8)

    def amax(x):  # stage 1: read the tensor, write one partial max per row
        return x.abs().amax(dim=1).float()

    def amax_final(partials):  # stage 2: reduce the partials to the scale
        return fmax / partials.amax().clamp(min=1e-12)

    def tw_cast(x, s):  # read bf16, write fp8 in the same layout
        return to_fp8(x, s)

    def tw_cast_t(x, s):  # read bf16, write the fp8 transpose
        return to_fp8(x.t(), s).contiguous()

    def tw_cast_dim0_dim1(x, s):  # read bf16 once, write fp8 in both layouts
        return to_fp8(x, s), to_fp8(x.t(), s).contiguous()

    def _rows(x):
        scale = fmax / x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12)
        return to_fp8(x, scale), scale

    def rw_rows(x):  # an fp32 scale per row, fp8 in the same layout
        return _rows(x)

    def rw_rows_transpose(x):  # as rw_rows, and write the bf16 transpose
        y, scale = _rows(x)
        return y, scale, x.t().contiguous()

    def rw_cols(x):  # an fp32 scale per column, fp8 in the same layout
        scale = fmax / x.abs().amax(dim=0, keepdim=True).float().clamp(min=1e-12)
        return to_fp8(x, scale), scale

    def transpose(x):  # read bf16, write the bf16 transpose
        return x.t().contiguous()

    return {f.__name__: f for f in (amax, amax_final, tw_cast, tw_cast_t, tw_cast_dim0_dim1,
                                    rw_rows, rw_rows_transpose, rw_cols, transpose)}


class TorchOps:
    """``make_op`` for ``run`` on a CUDA device: allocates a case's inputs and
    returns a callable that runs its op.

    GEMMs take ``a`` (m x k) row-major and ``b`` (k x n) column-major, the
    layout ``torch._scaled_mm`` requires, for bf16 too so both sides run the
    same layouts.  Casts are ``torch.compile``d once per implementation with
    ``dynamic=True`` (one compile serves every shape; static shapes would
    need about 150 compiles, over the time budget).
    """

    def __init__(self, torch: Any = None, device: str = "cuda", dynamic: bool = True,
                 compile: bool = True):
        self.torch = torch or _torch_cuda()
        self.device = device
        self.dynamic = dynamic
        self.compile = compile  # False: run the casts eagerly (debugging, CPU tests)
        self.notes: list[str] = []  # deviations from the plan, for the CSV's comments
        self._impls = _cast_impls(self.torch)
        self._compiled: dict[str, Callable] = {}

    def __call__(self, case: Case) -> Callable[[], Any]:
        op = case.op
        if op[0] == "gemm":
            return self._gemm(*op[1:])
        if op[0] == "launch":
            x = self.torch.zeros(1, device=self.device)
            return partial(x.add_, 1.0)  # one element: the kernel's floor
        if op[0] == "copy":
            src = self.torch.randn(op[1], device=self.device, dtype=self.torch.bfloat16)
            dst = self.torch.empty_like(src)
            return partial(dst.copy_, src)
        return self._cast(*op)

    def _gemm(self, kind: str, m: int, k: int, n: int, fast: bool | None) -> Callable[[], Any]:
        t, dev = self.torch, self.device
        if kind == "bf16":
            a = t.randn(m, k, device=dev, dtype=t.bfloat16)
            b = t.randn(n, k, device=dev, dtype=t.bfloat16).t()
            return partial(t.mm, a, b)
        fp8 = t.float8_e4m3fn
        a = t.randn(m, k, device=dev, dtype=t.bfloat16).to(fp8)
        b = t.randn(n, k, device=dev, dtype=t.bfloat16).to(fp8).t()  # column-major (k, n)
        if kind == "fp8_tensorwise":
            sa = t.ones((), device=dev, dtype=t.float32)
            sb = t.ones((), device=dev, dtype=t.float32)
        else:  # rowwise: one scale per row of a, per column of b
            sa = t.ones(m, 1, device=dev, dtype=t.float32)
            sb = t.ones(1, n, device=dev, dtype=t.float32)
        op = partial(t._scaled_mm, a, b, scale_a=sa, scale_b=sb, out_dtype=t.bfloat16,
                     use_fast_accum=bool(fast))
        if fast:
            try:
                op()
            except RuntimeError as exc:  # a build without fast accumulation for this scaling
                self.notes.append(f"{kind} {m}x{k}x{n}: use_fast_accum=True failed "
                                  f"({str(exc).splitlines()[0][:120]}); timed without it")
                op = partial(op.func, *op.args, **{**op.keywords, "use_fast_accum": False})
        return op

    def _cast(self, impl: str, d0: int, d1: int) -> Callable[[], Any]:
        t, dev = self.torch, self.device
        if impl not in self._compiled:
            self._compiled[impl] = (t.compile(self._impls[impl], dynamic=self.dynamic)
                                    if self.compile else self._impls[impl])
        fn = self._compiled[impl]
        if impl == "amax_final":
            return partial(fn, t.rand(d0, device=dev, dtype=t.float32))
        x = t.randn(d0, d1, device=dev, dtype=t.bfloat16)
        if impl.startswith("tw_"):
            return partial(fn, x, t.tensor(1.0, device=dev))
        return partial(fn, x)


def measure(out: str | os.PathLike, grid_name: str | Iterable[Case] = "default", *,
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
    torch = None
    if make_op is None or timer is None or env is None:
        torch = _torch_cuda()
    cases = grid(grid_name) if isinstance(grid_name, str) else list(grid_name)
    env = dict(env) if env is not None else torch_env(torch)
    say = progress or (lambda _: None)
    est = estimate_seconds(cases, policy=policy)
    say(f"measuring {len(cases)} cases on {env.get('gpu', '?')} (torch {env.get('torch', '?')}, "
        f"CUDA {env.get('cuda', '?')}); estimate ~{est / 60:.1f} min on H100 SXM")
    make_op = make_op or TorchOps(torch, dynamic=dynamic)
    timer = timer or CudaEventTimer(torch)
    clocks = _clock_reader(torch) if torch is not None else None
    flush = getattr(timer, "flush_bytes", None)
    started = time.perf_counter()
    out = Path(out)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = CsvWriter(f, comments=[
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
