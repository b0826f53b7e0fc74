"""The torch/CUDA side of the harness: timing on a GPU and the ops it times.

``TorchOps`` (the ``make_op`` of ``measure.run``), ``CudaEventTimer`` (its
``timer``), ``torch_env`` and the clock readers.  torch is imported only
inside these functions and classes, never when this module loads; where
torch, a CUDA device or an fp8 GEMM is missing they raise ``MeasureError``.

>>> import sys
>>> from unittest import mock
>>> with mock.patch.dict(sys.modules, {"torch": None}):   # as if torch were not installed
...     torch_env()
Traceback (most recent call last):
    ...
roofline_sym.fidelity.own_gpu.cuda.MeasureError: measuring needs torch with CUDA: pip install torch
"""

from __future__ import annotations

import shutil
import subprocess
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

from ...errors import UnavailableError
from .components import Case

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["MeasureError", "torch_env", "CudaEventTimer", "TorchOps"]


class MeasureError(UnavailableError):
    """The harness cannot run here (no torch, no CUDA device, no fp8 GEMM)."""


# -- the torch side: imported only here ------------------------------------------------
def torch_cuda() -> ModuleType:
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
    """GPU name (``torch.cuda.get_device_name()``), torch and CUDA versions.

    Clocks are read separately (``clock_reader``: torch, and nvidia-smi once)."""
    torch = torch or torch_cuda()
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": str(torch.version.cuda)}
    return env


def clock_reader(torch: Any) -> Callable[[], dict[str, float]]:
    """Reads the SM clock in MHz through ``torch.cuda.clock_rate()`` (which
    asks pynvml) when it can; the memory clock (and the SM clock otherwise)
    from nvidia-smi once at start."""
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
        self.torch = torch = torch or torch_cuda()
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


def _cast_impls(torch: Any) -> dict[str, Callable[..., Any]]:
    """The cast kernels as small functions for torch.compile; each reads and
    writes what the model's kernel of the same role says (model/recipes.py)."""
    fp8 = torch.float8_e4m3fn
    fmax = float(torch.finfo(fp8).max)

    def to_fp8(x: Tensor, scale: Tensor | float) -> Tensor:
        return (x.float() * scale).clamp(-fmax, fmax).to(fp8)

    def amax(x: Tensor) -> Tensor:  # stage 1: read the tensor, write one partial max per row
        return x.abs().amax(dim=1).float()

    def amax_final(partials: Tensor) -> Tensor:  # stage 2: reduce the partials to the scale
        return fmax / partials.amax().clamp(min=1e-12)

    def tw_cast(x: Tensor, s: Tensor) -> Tensor:  # read bf16, write fp8 in the same layout
        return to_fp8(x, s)

    def tw_cast_t(x: Tensor, s: Tensor) -> Tensor:  # read bf16, write the fp8 transpose
        return to_fp8(x.t(), s).contiguous()

    def tw_cast_dim0_dim1(x: Tensor, s: Tensor) -> tuple[Tensor, Tensor]:
        # read bf16 once, write fp8 in both layouts
        return to_fp8(x, s), to_fp8(x.t(), s).contiguous()

    def _rows(x: Tensor) -> tuple[Tensor, Tensor]:
        scale = fmax / x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12)
        return to_fp8(x, scale), scale

    def rw_rows(x: Tensor) -> tuple[Tensor, Tensor]:
        # an fp32 scale per row, fp8 in the same layout
        return _rows(x)

    def rw_rows_transpose(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        # as rw_rows, and write the bf16 transpose
        y, scale = _rows(x)
        return y, scale, x.t().contiguous()

    def rw_amax_cols(x: Tensor) -> Tensor:  # read bf16, write an fp32 scale per column
        return fmax / x.abs().amax(dim=0, keepdim=True).float().clamp(min=1e-12)

    def rw_cast_cols(x: Tensor, scale: Tensor) -> Tensor:
        # read bf16 and its per-column scales, write fp8 in the same layout
        return to_fp8(x, scale)

    def transpose(x: Tensor) -> Tensor:  # read bf16, write the bf16 transpose
        return x.t().contiguous()

    def scale_product(rows: Tensor, cols: Tensor) -> Tensor:
        # the operands' row and column scales multiplied out: an fp32 tensor
        return rows * cols

    def rescale(x: Tensor, product: Tensor) -> Tensor:
        # a GEMM output times the scale product, in place (read bf16 and fp32, write bf16)
        return x.mul_(product)

    return {f.__name__: f for f in (amax, amax_final, tw_cast, tw_cast_t, tw_cast_dim0_dim1,
                                    rw_rows, rw_rows_transpose, rw_amax_cols, rw_cast_cols, transpose,
                                    scale_product, rescale)}


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
        self.torch = torch or torch_cuda()
        self.device = device
        self.dynamic = dynamic
        self.compile = compile  # False: run the casts eagerly (debugging, CPU tests)
        self.notes: list[str] = []  # deviations from the plan, for the CSV's comments
        self._impls = _cast_impls(self.torch)
        self._compiled: dict[str, Callable[..., Any]] = {}

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
        # torchao runs a rowwise GEMM without fast accumulation as the per-tensor
        # kernel with unit scales, then rescales (float8_ops.addmm_float8_unwrapped)
        if kind == "fp8_tensorwise" or not fast:
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
        if impl == "scale_product":
            return partial(fn, t.ones(d0, 1, device=dev, dtype=t.float32),
                           t.ones(1, d1, device=dev, dtype=t.float32))
        x = t.randn(d0, d1, device=dev, dtype=t.bfloat16)
        if impl.startswith("tw_"):
            return partial(fn, x, t.tensor(1.0, device=dev))
        if impl == "rw_cast_cols":
            return partial(fn, x, t.ones(1, d1, device=dev, dtype=t.float32))
        if impl == "rescale":
            return partial(fn, x, t.ones(d0, d1, device=dev, dtype=t.float32))
        return partial(fn, x)
