"""GEMM kernel tables: published absolute GEMM throughputs, as fit anchors.

``kernels.csv`` (shipped beside the speedups) holds single-kernel rows; the
GEMM rows among them (a shape M, K, N and a throughput) pin what a speedup
cannot: a GEMM class's absolute rate and fixed time.  ``gemm_rows`` reads
them with each row's GEMM class (dtype, scaling family, grouped) and
implementation parsed from its ``dtype`` and ``kernel`` text, and its time
``2 M K N / throughput``.

>>> t = gemm_rows()
>>> i = list(t.source_id).index("fbgemm-pr2546-h100")
>>> t.dtype[i], t.family[i], t.implementation[i]
('bf16', None, 'torch')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...datafile import Delimited, read_text, where
from ...devices.implementations import check_implementation
from ...errors import InputError
from ...numeric.columnar import Columns
from ...validate import label
from .speedup_table import kernels_path

__all__ = ["GemmRows", "gemm_rows", "classify"]


@dataclass(frozen=True, eq=False)
class GemmRows(Columns):
    """GEMM kernel rows as columns: ``seconds`` measured per GEMM;
    ``fast_accum`` False where a low-precision GEMM ran without fast accumulation;
    ``len``, ``t["gpu"]`` and ``select(rows)`` from ``Columns``."""

    source_id: np.ndarray
    gpu: np.ndarray
    dtype: np.ndarray
    family: np.ndarray
    grouped: np.ndarray
    implementation: np.ndarray
    fast_accum: np.ndarray
    M: np.ndarray
    K: np.ndarray
    N: np.ndarray
    seconds: np.ndarray
    lines: tuple[int, ...] = ()


_COLUMNS = ("source_id", "gpu", "dtype", "family", "grouped", "implementation", "fast_accum",
            "M", "K", "N", "seconds")


# (words all in the kernel text, implementation), first match wins: torch's own
# _scaled_mm is "torch" whichever library it calls (its rowwise kernel on Hopper is
# CUTLASS inside PyTorch); FBGEMM names its Triton and its CUTLASS kernels
_IMPLEMENTATION_WORDS = (
    (("scaled_mm_cutlass",), "torch"), (("fbgemm", "triton"), "triton"),
    (("fbgemm",), "fbgemm"), (("deepgemm",), "deepgemm"), (("deep_gemm",), "deepgemm"),
    (("trtllm",), "cutlass"), (("cutlass",), "cutlass"), (("triton",), "triton"),
    (("te_",), "te"), (("transformer engine",), "te"),
)
# kernel texts of rows that time more than one GEMM kernel (a quantization
# included) or a superseded version of a kernel timed beside its successor
_NOT_A_GEMM_ALONE = ("actquant", "autocast", "te_linear", "_before", "_old")
# notes of low-precision rows timed without fast accumulation: per-tensor ones pin
# the slow-accumulation factor (kappa_accum_<dtype>) of torchao's backward GEMMs;
# other families without fast accumulation are kernels no model prices (torchao
# runs a per-row GEMM without fast accumulation as the per-tensor one, then rescales)
_SLOW_ACCUMULATION = "use_fast_accum=false"


def classify(dtype: str, kernel: str) -> tuple[str, str | None, bool, str]:
    """(GEMM dtype, scaling family, grouped, implementation) of a kernel row
    from its free-text ``dtype`` and ``kernel`` columns.

    >>> classify("fp8 e4m3 rowwise (fast accum)", "fbgemm triton matmul_fp8_row")
    ('fp8', 'rowwise', False, 'triton')
    >>> classify("fp8_e4m3 rowwise", "fp8_rowwise_scaled_mm_cutlass")[3]
    'torch'

    >>> classify("mxfp8 x mxfp8 -> bf16", "torch._scaled_grouped_mm (2D-3D)")
    ('fp8', 'mx', True, 'torch')
    """
    d, k = dtype.casefold(), kernel.casefold()
    if "nvfp4" in d:
        out = ("fp4", "nvfp4")
    elif "mxfp4" in d:
        out = ("fp4", "mx")
    elif "mxfp8" in d:
        out = ("fp8", "mx")
    elif "fp8" in d:
        family = ("blockwise" if "block" in d else "rowwise" if "row" in d or "channel" in d
                  or "token" in d else "tensorwise")
        out = ("fp8", family)
    else:  # bf16 or fp16: one tensor-core rate on every GPU here, priced as bf16
        out = ("bf16", None)  # type: ignore[assignment]
    impl = next((name for keys, name in _IMPLEMENTATION_WORDS
                 if all(key in k for key in keys)), "torch")
    return out[0], out[1], "group" in k, impl


def gemm_rows(path: str | Path | None = None) -> GemmRows:
    """The GEMM rows of a kernels table (default: the shipped ``kernels.csv``):
    rows with M, K, N and ``achieved_tflops`` that time one GEMM kernel alone
    (``_NOT_A_GEMM_ALONE``), each marked whether it accumulated fast (its notes
    say ``use_fast_accum=False`` where not); an ``implementation`` column,
    where present and not blank, overrides the one read from the kernel name."""
    source, text = read_text(path if path is not None else kernels_path(), "kernels table")
    table = Delimited(text.splitlines(keepends=True), label(source))
    cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
    lines = []
    for line, row in table.records():
        at = where(table.source, line)
        tflops = row.get("achieved_tflops", "")
        shape = [row.get(c, "") for c in ("M", "K", "N")]
        if not tflops or not all(shape):
            continue
        if any(word in row.get("kernel", "").casefold() for word in _NOT_A_GEMM_ALONE):
            continue
        try:
            m, k, n = (int(v) for v in shape)
            rate = float(tflops) * 1e12
        except ValueError:
            raise InputError(f"{at}: M, K, N must be integers and achieved_tflops a "
                             "number") from None
        if not (m > 0 and k > 0 and n > 0 and math.isfinite(rate) and rate > 0):
            raise InputError(f"{at}: shape and throughput must be positive")
        dtype, family, grouped, impl = classify(row.get("dtype", ""), row.get("kernel", ""))
        fast = dtype == "bf16" or _SLOW_ACCUMULATION not in row.get("notes", "").casefold()
        if not fast and family != "tensorwise":
            continue
        if row.get("implementation"):
            impl = check_implementation(row["implementation"],
                                        where(table.source, line, "implementation") + ": ")
        for c, v in (("source_id", row.get("source_id", "")), ("gpu", row.get("gpu", "")),
                     ("dtype", dtype), ("family", family), ("grouped", grouped),
                     ("implementation", impl), ("fast_accum", fast), ("M", m), ("K", k), ("N", n),
                     ("seconds", 2.0 * m * k * n / rate)):
            cols[c].append(v)
        lines.append(line)
    arrays = {c: np.array(v, dtype=object) for c, v in cols.items()}
    for c in ("M", "K", "N", "seconds"):
        arrays[c] = np.array(cols[c], dtype=np.float64)
    arrays["grouped"] = np.array(cols["grouped"], dtype=bool)
    arrays["fast_accum"] = np.array(cols["fast_accum"], dtype=bool)
    return GemmRows(**arrays, lines=tuple(lines))
