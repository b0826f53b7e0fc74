"""Workloads: what runs around the linear layer when it is timed or used.

A linear layer never runs alone.  In a network (and in every benchmark) a
norm or an activation produces its input and consumes its output, the
gradients accumulate into their tensors, and under ``torch.compile`` the
casts fuse into those neighbours.  Their time dilutes the casts' overhead on
both sides, so a prediction must say what surrounds the layer.  A workload
names that surrounding: its own kernels (priced by the same roofline, on
both sides), whether casts fuse with their producers, and whether casts run
at all.

>>> w = workload("ln-linear-sigmoid")
>>> w.fuse, [k.name for k in w.kernels][:2]
(True, ['norm_fwd', 'norm_bwd'])
>>> workload("gemm").casts
False
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import InputError, InputTypeError
from ..symbols import K, M, N
from ..validate import unknown_name
from .formats import element

__all__ = ["Workload", "WorkloadKernel", "WORKLOADS", "workload", "list_workloads"]

# the tensors a workload kernel may work on: the layer's input, its output, its weight
_TENSORS = {"input": (M, K), "output": (M, N), "weight": (K, N)}


@dataclass(frozen=True)
class WorkloadKernel:
    """A kernel of the surrounding: ``reads``/``writes`` passes over the bf16
    ``tensor`` (``input`` M x K, ``output`` M x N, ``weight`` K x N); ``kind``:
    its class (``symbols.KERNEL_KINDS``)."""

    name: str
    tensor: str
    reads: int
    writes: int
    kind: str = "elementwise"

    @property
    def bytes(self) -> sympy.Expr:
        d0, d1 = _TENSORS[self.tensor]
        return (self.reads + self.writes) * element("bf16").bytes * d0 * d1


@dataclass(frozen=True)
class Workload:
    """What surrounds the linear layer.

    ``modes``: the modes it exists in; ``casts``: whether the low-precision
    side casts at all (``gemm`` times the GEMMs alone); ``fuse``: whether
    casts fuse with their producers (``None``: the caller's or preset's
    choice); ``kernels``: run on both sides; ``quantize_weight``: the weight
    is cast on the fly too (inference; otherwise it is pre-quantized);
    ``weight_scale_relayout``: the weight's block scales are re-laid out for
    the GEMM by a kernel of their own (False: the weight cast writes them in
    the GEMM's layout, as torchao's 3D MX cast of grouped weights does);
    ``grouped_gemms``: the GEMMs run as grouped kernels even with one group.
    Kernels on the ``weight`` run once per expert of a grouped layer.
    """

    name: str
    description: str
    modes: tuple[str, ...] = ("training", "inference")
    casts: bool = True
    fuse: bool | None = None
    kernels: tuple[WorkloadKernel, ...] = ()
    quantize_weight: bool = False
    weight_scale_relayout: bool = True
    grouped_gemms: bool = False


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("linear", "the linear layer alone, its casts reading their inputs from memory "
             "(fuse=True: fused with the ops that produce them)"),
    Workload("gemm", "the GEMMs alone on operands already in their formats: no casts",
             casts=False, fuse=False),
    Workload("gemm-with-quant-both", "inference GEMM with both operands cast on the fly, "
             "timed together (FBGEMM's benchmark)", modes=("inference",), fuse=False,
             quantize_weight=True),
    Workload("relu-linear", "ReLU -> Linear, forward, compiled: the activation runs as its "
             "own kernel in bf16 and fuses into the cast in low precision (torchao's "
             "inference benchmark)", modes=("inference",), fuse=True),
    Workload("ln-linear-sigmoid", "LayerNorm -> Linear -> Sigmoid, forward and backward, "
             "compiled, gradients accumulated into the input and weight (torchao's float8 "
             "training benchmark); casts fuse with the norm and the activation's backward "
             "where a kernel can", modes=("training",), fuse=True, kernels=(
                 WorkloadKernel("norm_fwd", "input", 1, 1, "norm"),
                 WorkloadKernel("norm_bwd", "input", 2, 1, "norm"),
                 WorkloadKernel("sigmoid_fwd", "output", 1, 1),
                 WorkloadKernel("sigmoid_bwd", "output", 2, 1),
                 WorkloadKernel("grad_accumulate", "input", 2, 1),
                 WorkloadKernel("grad_accumulate", "weight", 2, 1),
             )),
    Workload("grouped-mm-fwd-bwd", "a grouped GEMM (MoE experts, linear(..., groups=G)), "
             "forward + MSE loss + backward, compiled, gradients accumulated into the input "
             "and the weights (torchao's _to_mxfp8_then_scaled_grouped_mm vs "
             "torch._grouped_mm benchmark); the 3D weight cast writes its MX scales already "
             "blocked", modes=("training",), fuse=False, weight_scale_relayout=False,
             grouped_gemms=True, kernels=(
                 WorkloadKernel("mse_loss_fwd", "output", 2, 0, "reduce"),
                 WorkloadKernel("mse_loss_bwd", "output", 2, 1),
                 WorkloadKernel("grad_accumulate", "input", 2, 1),
                 WorkloadKernel("grad_accumulate", "weight", 2, 1),
             )),
)}


def list_workloads(mode: str | None = None) -> list[str]:
    """Workload names, all or those that exist in ``mode``.

    >>> list_workloads("training")[-1]
    'grouped-mm-fwd-bwd'
    >>> list_workloads("inference")
    ['linear', 'gemm', 'gemm-with-quant-both', 'relu-linear']
    """
    return [name for name, w in WORKLOADS.items() if mode is None or mode in w.modes]


def workload(name: str | Workload, mode: str | None = None) -> Workload:
    """A workload by name, checked against ``mode``."""
    if isinstance(name, Workload):
        w = name
    elif not isinstance(name, str):
        raise InputTypeError(f"workload must be a name such as 'ln-linear-sigmoid', not "
                             f"{type(name).__name__}")
    elif name in WORKLOADS:
        w = WORKLOADS[name]
    else:
        raise unknown_name("workload", name, WORKLOADS)
    if mode is not None and mode not in w.modes:
        raise InputError(f"workload {w.name!r} is {'/'.join(w.modes)} only, not {mode}; "
                         f"{mode} workloads: {', '.join(list_workloads(mode))}")
    return w
