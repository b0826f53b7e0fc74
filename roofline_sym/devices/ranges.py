"""Plausible ranges of hardware numbers (and measured times): data, a kind ->
its range, and a field's or symbol's kind from its name.

>>> check_range(1e-300, "eta_fp8", symbol_kind("eta_fp8"))
Traceback (most recent call last):
roofline_sym.errors.InputError: eta_fp8 = 1e-300 is outside (0.01, 1] (an efficiency fraction)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..validate import positive_array, show

__all__ = ["Range", "RANGES", "FIELD_KINDS", "field_kind", "symbol_kind", "plausible",
           "range_problem", "check_range", "hardware_array"]


# -- ranges of hardware numbers --------------------------------------------------------
@dataclass(frozen=True)
class Range:
    """A plausible range: ``low..high`` in ``unit``; ``low_open`` excludes ``low``;
    ``zero``: 0 is plausible too (meaning "none"), values between 0 and ``low``
    are not."""

    low: float
    high: float
    unit: str
    meaning: str
    low_open: bool = False
    zero: bool = False

    def __contains__(self, value: Any) -> bool:
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            return False
        if not math.isfinite(v):
            return False
        if self.zero and v == 0:
            return True
        return (v > self.low if self.low_open else v >= self.low) and v <= self.high

    def __str__(self) -> str:
        lo = "(" if self.low_open else "["
        unit = f" {self.unit}" if self.unit else ""
        return f"{'0 or ' if self.zero else ''}{lo}{self.low:g}, {self.high:g}]{unit}"


# A field's kind -> its plausible range.  New fields of these kinds plug in by name
# (``field_kind``): an efficiency fraction, a FLOP rate, a byte rate, seconds, bytes,
# a FLOP count.  A value outside is a typo or a unit error (torchao 0.18 shipped an
# RTX 5090 bandwidth of 1.792e15 B/s).
RANGES: dict[str, Range] = {
    "fraction": Range(0.01, 1.0, "", "an efficiency fraction", low_open=True),
    "flop_rate": Range(1e12, 1e17, "FLOP/s", "a dense peak"),
    "byte_rate": Range(1e11, 5e13, "B/s", "a memory bandwidth"),
    "seconds": Range(1e-7, 1e-3, "s", "a launch floor"),
    "bytes": Range(1e6, 1e13, "B", "a memory size"),
    "flops": Range(1.0, 1e18, "FLOP", "a FLOP count"),
    # the size-dependent efficiency model: a GEMM's or kernel's fixed time (0: none),
    # a scaled or grouped GEMM's rate factor
    "fixed_time": Range(1e-7, 1e-3, "s", "a fixed time", zero=True),
    "rate_factor": Range(0.05, 1.5, "", "a rate factor"),
    # measured times of one kernel or GEMM, in a measurement file
    "time": Range(1e-8, 1e4, "s", "a measured time"),
    # a whole step's numbers: a link's bandwidth per GPU, a step's fixed time (0: none)
    "link_rate": Range(1e8, 1e13, "B/s", "a link bandwidth"),
    "step_time": Range(1e-6, 10.0, "s", "a step's fixed time", zero=True),
    # the GPUs of one scale-up domain (an HGX board: 8, an NVL72 rack: 72)
    "gpus": Range(1, 65536, "GPUs", "a scale-up domain's size"),
}
# Hardware fields (as ``Hardware`` names them, a table's entries included) -> kind
FIELD_KINDS = {
    "peak_flops": "flop_rate",
    "gemm_efficiency": "fraction",
    "mem_bw": "byte_rate",
    "mem_efficiency": "fraction",
    "launch_overhead": "seconds",
    "host_launch": "seconds",
    "memory_bytes": "bytes",
    "l2_bytes": "bytes",
    "gemm_fixed_s": "fixed_time",
    "kernel_fixed_s": "fixed_time",
    "kernel_efficiency": "fraction",
    "scaling_efficiency": "rate_factor",
    "grouped_efficiency": "rate_factor",
    "accumulation_efficiency": "rate_factor",
    "best_shape_efficiency": "fraction",
    "link_bw": "link_rate",
    "link_efficiency": "fraction",
    "scale_up_gpus": "gpus",
}
# a field not in FIELD_KINDS: its kind from its name (first match wins)
_KIND_PATTERNS = (
    (re.compile(r"(^|_)(eta|efficiency|fraction)($|_)"), "fraction"),
    (re.compile(r"flops_per_s$|^peak"), "flop_rate"),
    (re.compile(r"bytes_per_s$|(^|_)bw$"), "byte_rate"),
    (re.compile(r"bytes$"), "bytes"),
    (re.compile(r"flops$"), "flops"),
    (re.compile(r"(_s|overhead|latency|launch)$"), "seconds"),
)


def field_kind(field: str) -> str | None:
    """The kind of a hardware field (``peak_flops.fp8``, ``l2_bytes``, a new
    ``small_gemm_efficiency``), or None where the name says nothing.

    >>> field_kind("peak_flops.fp8"), field_kind("cast_efficiency"), field_kind("hbm_bytes")
    ('flop_rate', 'fraction', 'bytes')
    """
    head = field.partition(".")[0]
    if head in FIELD_KINDS:
        return FIELD_KINDS[head]
    for pattern, kind in _KIND_PATTERNS:
        if pattern.search(head):
            return kind
    return None


def symbol_kind(name: str) -> str | None:
    """The kind of a hardware symbol by name (``P_fp8``, ``eta_mem``, ``BW``...)."""
    for prefix, kind in (("P_", "flop_rate"), ("eta_", "fraction"), ("t0_", "fixed_time"),
                         ("kappa_", "rate_factor"), ("BW_", "link_rate"), ("phi_", "fraction")):
        if name.startswith(prefix):
            return kind
    return {"BW": "byte_rate", "t_launch": "seconds", "t_step": "step_time",
            "t_host": "seconds"}.get(name)


def plausible(name: str) -> float:
    """A value inside the range of the hardware symbol ``name`` (1.0 if it has
    none): a stand-in for checking names before the values are known.

    >>> plausible("BW") in RANGES["byte_rate"], plausible("eta_fp8")
    (True, 1.0)
    """
    kind = symbol_kind(name)
    return RANGES[kind].high if kind is not None else 1.0


def _number_text(value: Any) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError, OverflowError):
        return show(value)


def range_problem(value: Any, kind: str | None) -> str | None:
    """Why ``value`` is not plausible for ``kind`` (``None``: only finite and
    positive), or None."""
    if kind is None:
        try:
            ok = math.isfinite(float(value)) and float(value) > 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        return None if ok else f"{_number_text(value)} is not a positive finite number"
    r = RANGES[kind]
    if value in r:
        return None
    unit = f" {r.unit}" if r.unit else ""
    return f"{_number_text(value)}{unit} is outside {r} ({r.meaning})"


def check_range(value: Any, name: str, kind: str | None) -> None:
    """A ValueError naming ``name``, the value and the range unless ``value`` fits."""
    problem = range_problem(value, kind)
    if problem:
        raise InputError(f"{name} = {problem}")


def hardware_array(value: Any, name: str) -> np.ndarray:
    """A hardware value given by symbol name (``evaluate(BW=...)``): numbers or an
    array, each within the symbol's range."""
    kind = symbol_kind(name)
    zero = kind is not None and RANGES[kind].zero
    arr = positive_array(value, name, allow_zero=zero)
    if kind is not None:
        r = RANGES[kind]
        low = (arr <= r.low) if r.low_open else (arr < r.low)
        bad = (low & ~((arr == 0) if zero else False)) | (arr > r.high)
        if bad.any():
            check_range(arr.reshape(-1)[int(np.argmax(bad.reshape(-1)))], name, kind)
    return arr
