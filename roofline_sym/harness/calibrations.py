"""How the default dataset's calibrated numbers were obtained, as data.

Each ``Spec`` says, for one GPU: which published rows it is fitted to, which
numbers are fixed from single-kernel measurements (with the measurement),
and which numbers the speedups fit.  ``fit(spec)`` reruns the fit;
the shipped ``data/default.toml`` holds its results, and a test checks that
a refit reproduces them.  ``transfer`` carries a fit to a GPU without
measurements of its own (the same die at another bandwidth, or a part of
the same generation): latencies stay latencies, class ratios stay ratios.

>>> SPECS["H100 SXM"].free
('eta_fp8', 'kappa_blockwise', 'F_half_bf16', 'eta_rescale', 'B_half')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..devices import Hardware, hardware
from .speedup_fit import SpeedupFit, fit_speedups
from .speedup_tables import SpeedupTable, published

__all__ = ["Spec", "SPECS", "rows", "fit", "transfer", "TRANSFERS"]


@dataclass(frozen=True)
class Spec:
    """``gpu``: the default-dataset entry; ``sources``: the ``source_id`` of
    the rows fitted to; ``workloads``: which of their workloads; ``fixed``:
    numbers set before the fit, each ``(value, where it was measured)``;
    ``free``: the numbers the fit moves."""

    gpu: str
    sources: tuple[str, ...]
    workloads: tuple[str, ...]
    fixed: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    free: tuple[str, ...] = ()


SPECS = {s.gpu: s for s in (
    Spec("H100 SXM",
         sources=("ao-rowwise-h100-png", "ao-tensorwise-h100-2024", "fbgemm-pr2546-h100"),
         workloads=("ln-linear-sigmoid", "gemm", "gemm-with-quant-both"),
         fixed={
             "eta_cast": (0.82, "ao-blockwise-quant-h100: act_quant_lhs / weight_quant_rhs "
                                "2.70-2.90 TB/s of 3.35 (kernels.csv)"),
             "eta_transpose": (0.80, "ao-blockwise-quant-h100: transposed quantize kernels "
                                     "2.63-2.80 TB/s of 3.35 (kernels.csv)"),
             "eta_reduce": (0.85, "assumed; a read-only pass, between the casts and a copy"),
             "eta_norm": (0.85, "assumed; a fused row reduction and pointwise pass"),
             "eta_elementwise": (0.85, "assumed; a pointwise pass, as the casts plus their "
                                       "cheaper arithmetic"),
         },
         free=("eta_fp8", "kappa_blockwise", "F_half_bf16", "eta_rescale", "B_half")),
    Spec("B200 (HGX)",
         sources=("ao-infer-b200-r4", "ao-infer-b200-r5", "ao-moe-groupedmm-b200-v2"),
         workloads=("relu-linear", "grouped-mm-fwd-bwd"),
         fixed={
             "eta_cast": (0.81, "ao-mx-cast-b200: dim0 MXFP8 cast 6.46 TB/s of 8.0 "
                                "(kernels.csv)"),
             "eta_transpose": (0.71, "ao-mx-cast-b200: dim1 MXFP8 cast (CUDA) 5.72 TB/s of 8.0 "
                                     "(kernels.csv)"),
             "eta_reduce": (0.85, "assumed; as H100 SXM"),
             "eta_elementwise": (0.85, "assumed; as H100 SXM"),
             "eta_norm": (0.85, "assumed; as H100 SXM"),
             # three grouped GEMMs at 2302.7, 2286.0 and 1829.6 TFLOPS (2D-3D forward and
             # grad_input, 2D-2D grad_weight): 2118 TFLOPS for equal FLOPs, 0.471 of
             # 4500, against the dense fit's fp8 fraction 0.706
             "kappa_grouped_fp8": (0.667, "ao-moe-kernels-b200: MXFP8 grouped GEMMs "
                                          "2302.7 / 2286.0 / 1829.6 TFLOPS (kernels.csv)"),
         },
         free=("eta_fp8", "eta_fp4", "F_half_bf16", "F_half_fp8", "F_half_fp4", "B_half",
               "kappa_grouped_bf16")),
)}


def rows(spec: Spec, table: SpeedupTable | None = None) -> SpeedupTable:
    """The rows ``spec`` is fitted to (from ``table``, default the published)."""
    t = published() if table is None else table
    return t.select(np.isin(t.source_id, spec.sources) & np.isin(t.workload, spec.workloads))


def fit(spec: Spec, table: SpeedupTable | None = None, base: Hardware | None = None
        ) -> SpeedupFit:
    """Rerun ``spec``'s fit on its rows of ``table`` (default: the published
    measurements), from ``base`` (default: the default dataset's entry)."""
    hw = base or hardware(spec.gpu)
    for name, (value, where) in spec.fixed.items():
        hw = hw.with_values({name: value}, source=where if where.startswith("assumed")
                            else f"PUB; {where}")
    return fit_speedups(rows(spec, table), hw, spec.free)


# GPU -> (the calibrated GPU its efficiency model is carried over from, whether
# it is the same generation of tensor cores, so that the fitted low-precision
# GEMM rates relative to bf16 carry over too)
TRANSFERS = {
    "H100 PCIe": ("H100 SXM", True), "H100 NVL": ("H100 SXM", True),
    "H200 SXM": ("H100 SXM", True), "H100 96GB HBM2e": ("H100 SXM", False),
    "H800 SXM": ("H100 SXM", True),
    "GB200 (per GPU)": ("B200 (HGX)", True), "B300 (HGX)": ("B200 (HGX)", True),
    "GB300 (per GPU)": ("B200 (HGX)", True), "RTX 5090": ("B200 (HGX)", False),
    "A100 SXM 80GB": ("H100 SXM", False), "L40S": ("H100 SXM", False),
    "RTX 4090": ("H100 SXM", False),
    "MI300X": ("H100 SXM", False), "MI325X": ("H100 SXM", False),
    "MI355X": ("H100 SXM", False), "Gaudi 3": ("H100 SXM", False),
}


def transfer(fitted: Hardware, target: Hardware, same_generation: bool) -> dict[str, float]:
    """The size-dependent numbers of ``target`` carried over from ``fitted``:
    each kernel class at the same fraction of ``mem_efficiency``, each half
    size worth the same time at the target's rates, the scaled- and grouped-GEMM factors
    as they are, and (``same_generation``) each low-precision GEMM rate at the
    same ratio to the bf16 rate.  Returns ``{symbol name: value}`` for
    ``Hardware.with_values``.
    """
    out: dict[str, float] = {}
    if fitted.mem_efficiency is None:  # a calibrated entry has one
        raise ValueError(f"{fitted.name} has no mem_efficiency to carry over")
    f_mem = float(fitted.mem_efficiency)
    t_mem = float(target.mem_efficiency or fitted.mem_efficiency)
    for kind, value in fitted.kernel_efficiency.items():
        out[f"eta_{kind}"] = round(min(1.0, float(value) * t_mem / f_mem), 4)
    if same_generation:
        bf16 = float(target.gemm_efficiency["bf16"]) / float(fitted.gemm_efficiency["bf16"])
        for d, value in fitted.gemm_efficiency.items():
            if d != "bf16" and d in target.peak_flops:
                out[f"eta_{d}"] = round(min(1.0, float(value) * bf16), 4)
    if fitted.mem_half_bytes:
        out["B_half"] = _sig(float(fitted.mem_half_bytes) * float(target.mem_bw)
                             / float(fitted.mem_bw))
    for d, value in fitted.gemm_half_flops.items():
        if d in target.peak_flops and value:
            eta = out.get(f"eta_{d}", float(target.gemm_efficiency.get(d, 0.7)))
            seconds = float(value) / float(fitted.peak_flops[d] * fitted.gemm_efficiency[d])
            out[f"F_half_{d}"] = _sig(seconds * float(target.peak_flops[d]) * eta)
    for family, value in fitted.scaling_efficiency.items():
        out[f"kappa_{family}"] = float(value)
    for d, value in fitted.grouped_efficiency.items():
        if d in target.peak_flops:
            out[f"kappa_grouped_{d}"] = float(value)
    return out


def _sig(value: float) -> float:
    return float(f"{value:.4g}")
