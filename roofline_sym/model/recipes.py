"""Recipes as data: per tensor role, the cast kernels and the bytes they move.

A recipe says which format the low-precision GEMMs read, how their operands
are scaled, and, for each tensor role (``input`` M x K, ``weight`` K x N,
``grad_output`` M x N), the kernels that turn the bf16 tensor into those
operands.  A kernel lists the element formats it reads and writes (each over
all ``n = dim0 * dim1`` elements) and the scales it writes; its first read
vanishes when the kernel is fused with the op that produced the tensor.

Three tables exist: ``default`` (this project's model, scales at their own
format and block), ``torchao`` (torchao 0.18 exactly) and ``torchao_moe``
(the MXFP8 casts of torchao's MoE roofline, for grouped GEMMs).  The seed
document's ``dynamic`` / ``delayed`` scalings are available in the first two.

>>> from roofline_sym.symbols import M, K
>>> r = recipe("tensorwise", "training", table="torchao")
>>> [k.bytes(M, K) for k in r.kernels["input"]]
[2*K*M, 0, 4*K*M]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Iterable, Mapping

import sympy

from ..devices import Hardware
from ..errors import InputError, InputTypeError
from ..families import BLOCK_SCALED, family_of
from ..symbols import K, M, N
from ..validate import choice, unknown_name
from .formats import element, scaling
from . import rounding

__all__ = [
    "Kernel",
    "ScaleWrite",
    "Recipe",
    "MODES",
    "ROLES",
    "TABLES",
    "SEED_SCALINGS",
    "recipe",
    "list_recipes",
    "role_dims",
    "tensor_dims",
    "gemm_dims",
    "gemm_weight",
    "scaling_family",
]

MODES = ("training", "inference")
TABLES = ("default", "torchao", "torchao_moe")
SEED_SCALINGS = ("dynamic", "delayed")

# output = input @ weight; grad_input = grad_output @ weight.T;
# grad_weight = input.T @ grad_output.  (m, k, n) with k contracted.
_GEMMS = {
    "training": {"output": (M, K, N), "grad_input": (M, N, K), "grad_weight": (K, M, N)},
    "inference": {"output": (M, K, N)},
}
_ROLES = {
    "training": {"input": (M, K), "weight": (K, N), "grad_output": (M, N)},
    # weights are quantized ahead of time: only the activation is cast
    "inference": {"input": (M, K)},
}
ROLES = tuple(_ROLES["training"])
# where each GEMM meets the layer's weight: as its operand b, or as its output;
# a grouped layer (G experts) has G copies of it
_WEIGHT_OPERAND = {"output": "b", "grad_input": "b", "grad_weight": "out"}
# GEMM outputs some recipes post-process (rowwise's backward rescale)
_OUTPUTS = {"training": {"grad_input": (M, K), "grad_weight": (K, N)}, "inference": {}}
# Roles whose producer a cast can fuse with (the weight has no producer op).
FUSABLE_ROLES = ("input", "grad_output")

_ROUNDING: dict[str, Callable[[sympy.Expr], sympy.Expr]] = {
    "ceil": rounding.ceiling,  # a partial block still needs a scale
    "floor": rounding.floor,  # torchao's integer division
    "exact": lambda x: x,  # torchao's blockwise n / 128
}


def gemm_dims(mode: str) -> Mapping[str, tuple[sympy.Symbol, ...]]:
    """``{gemm name: (m, k, n)}`` of a linear layer in ``mode`` (read-only)."""
    return MappingProxyType(_GEMMS[mode])


def gemm_weight(gemm: str) -> str:
    """Where GEMM ``gemm`` meets the weight: ``"b"`` (its second operand) or
    ``"out"`` (its output, the weight gradient).

    >>> gemm_weight("grad_input"), gemm_weight("grad_weight")
    ('b', 'out')
    """
    return _WEIGHT_OPERAND[gemm]


def role_dims(mode: str) -> Mapping[str, tuple[sympy.Symbol, sympy.Symbol]]:
    """``{role: (dim0, dim1)}`` of the tensors cast in ``mode`` (read-only)."""
    return MappingProxyType(_ROLES[mode])


def tensor_dims(mode: str) -> Mapping[str, tuple[sympy.Symbol, sympy.Symbol]]:
    """``{tensor: (dim0, dim1)}`` of every tensor a kernel may work on in
    ``mode``: the cast roles and the GEMM outputs (``grad_input``, ``grad_weight``).

    >>> dict(tensor_dims("training"))["grad_weight"]
    (K, N)
    """
    return MappingProxyType({**_ROLES[mode], **_OUTPUTS[mode]})


def scaling_family(scaling_name: str | None) -> str:
    """The family of a GEMM operand scaling (``mx_32x32`` -> ``mx``; ``None``,
    one scale per tensor, -> ``tensorwise``).

    >>> scaling_family("blockwise_1x128"), scaling_family(None)
    ('blockwise', 'tensorwise')
    """
    return family_of(scaling_name)


@dataclass(frozen=True)
class ScaleWrite:
    """Scales a cast writes for a GEMM that contracts the tensor along ``contract``."""

    scaling: str
    contract: str = "dim1"  # "dim1": scales per row (row-major layout); "dim0": per column
    rounding: str = "ceil"

    def bytes(self, dim0: sympy.Expr, dim1: sympy.Expr) -> sympy.Expr:
        s = scaling(self.scaling)
        outer, inner = (dim0, dim1) if self.contract == "dim1" else (dim1, dim0)
        return s.count(outer, inner, _ROUNDING[self.rounding]) * s.scale.bytes


@dataclass(frozen=True)
class Kernel:
    """One cast kernel; ``fusable``: its first read comes free when fused;
    ``kind``: its class (``symbols.KERNEL_KINDS``), which sets its achievable
    bandwidth in the default model.  ``scales``: scale tensors it writes (a
    kernel that re-lays scales out lists them twice: read and written).

    >>> Kernel("cast", reads=("bf16",), writes=("fp8_e4m3",)).bytes(M, K)
    3*K*M
    """

    name: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    fusable: bool = False
    scales: tuple[ScaleWrite, ...] = ()
    kind: str = "cast"

    @property
    def relayout(self) -> bool:
        """A kernel that only reads and writes scales: a scale re-layout."""
        return not self.reads and not self.writes and bool(self.scales)

    def bytes(self, dim0: sympy.Expr, dim1: sympy.Expr, fused: bool = False) -> sympy.Expr:
        reads = self.reads[1:] if fused and self.fusable else self.reads
        per_element = sum((element(f).bytes for f in reads + self.writes), sympy.Integer(0))
        return per_element * dim0 * dim1 + sum(
            (s.bytes(dim0, dim1) for s in self.scales), sympy.Integer(0))


@dataclass(frozen=True)
class Recipe:
    """A low-precision recipe for one mode.

    ``lowp``: operand format of the low-precision GEMMs; ``gemm_scaling``:
    ``{gemm: (scaling of a, scaling of b)}`` (``None`` = no scales read);
    ``bf16_gemms``: GEMMs the recipe leaves in bf16; ``slow_accum_gemms``:
    low-precision GEMMs that run without fast accumulation.
    """

    name: str
    mode: str
    lowp: str
    kernels: Mapping[str, tuple[Kernel, ...]]
    gemm_scaling: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    bf16_gemms: tuple[str, ...] = ()
    description: str = ""
    block_scaled: tuple[str, ...] = ()  # block-scaled GEMM families it needs in hardware
    slow_accum_gemms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kernels", MappingProxyType(dict(self.kernels)))
        object.__setattr__(self, "gemm_scaling", MappingProxyType(dict(self.gemm_scaling)))

    def gemm_format(self, gemm: str) -> str:
        return "bf16" if gemm in self.bf16_gemms else self.lowp

    def scalings(self, gemm: str) -> tuple[str | None, str | None]:
        if gemm in self.bf16_gemms:
            return (None, None)
        return self.gemm_scaling.get(gemm, (None, None))

    def family(self, gemm: str) -> str | None:
        """The scaling family of a low-precision GEMM (``None``: a bf16 GEMM)."""
        if gemm in self.bf16_gemms:
            return None
        return scaling_family(self.scalings(gemm)[0])

    @property
    def dtypes(self) -> set[str]:
        """The GEMM peaks the recipe needs (``{"fp8"}``, ``{"fp4"}``...)."""
        peaks = set()
        for g in _GEMMS[self.mode]:
            fmt = element(self.gemm_format(g))
            if fmt.compute is None:  # as Gemm rejects it
                raise InputError(f"{fmt.name} is a scale format, not a GEMM input")
            peaks.add(fmt.compute)
        return peaks

    def unsupported_reason(self, hw: Hardware) -> str | None:
        """Why this recipe cannot run on ``hw`` (a GEMM dtype or block scaling
        it lacks), or None; known before any model is built.

        >>> from roofline_sym.devices import hardware
        >>> recipe("mxfp8_cublas").unsupported_reason(hardware("h100"))[:38]
        "recipe 'mxfp8_cublas' needs MX block-s"
        """
        lacking = sorted(d for d in {"bf16"} | self.dtypes if not hw.supports(d))
        if lacking:
            return (f"recipe {self.name!r} needs {'/'.join(lacking)} GEMMs, but "
                    f"{hw.name} has no dense {'/'.join(lacking)} peak; pick a GPU that has "
                    f"one (e.g. {'B200' if 'fp4' in lacking else 'H100 SXM'}) or another recipe")
        missing = [f for f in self.block_scaled if not hw.supports_block_scaling(f)]
        if missing:
            return (f"recipe {self.name!r} needs {'/'.join(missing).upper()} "
                    f"block-scaled GEMMs, which {hw.name} does not run in hardware; pick a "
                    "GPU that does (e.g. B200) or a per-tensor/rowwise recipe")
        return None


# ---------------------------------------------------------------------------
# Building blocks.  BF/F8/F4: element formats; rows/cols: scale layouts.
BF, F8, F4 = "bf16", "fp8_e4m3", "fp4_e2m1"


def _cast(name: str, out: str = F8, *, fusable: bool = False,
          scales: Iterable[ScaleWrite] = (), reads: Iterable[str] = (BF,),
          extra_writes: Iterable[str] = (), kind: str | None = None) -> Kernel:
    # a cast to 4 bits (block scales of 16 or 32, e2m1 pairs packed per byte) is a
    # kernel class of its own: it reaches a bandwidth of its own, below the 8-bit casts
    kind = kind or ("cast4" if out == F4 else "cast")
    return Kernel(name, tuple(reads), (out, *extra_writes), fusable, tuple(scales), kind)


def _amax(fusable: bool = True) -> Kernel:
    # stage 1 of the max-abs reduction reads the tensor and writes a few partials
    return Kernel("amax", (BF,), (), fusable, kind="reduce")


_AMAX_FINAL = Kernel("amax_final")  # stage 2: reduces the partials, moves ~0 bytes


def _all_gemms(mode: str, a: str | None,
               b: str | None = None) -> dict[str, tuple[str | None, str | None]]:
    return {g: (a, a if b is None else b) for g in _GEMMS[mode]}


def _rows(s: str) -> ScaleWrite:  # layout for a GEMM contracting dim1
    return ScaleWrite(s, "dim1")


def _cols(s: str) -> ScaleWrite:  # layout for a GEMM contracting dim0
    return ScaleWrite(s, "dim0")


def _mx_training(name: str, out: str, description: str, emulated: bool = False) -> Recipe:
    # one cast per layout; the second cannot reuse the first's read
    per_layout = (_cast("cast_dim0", out, fusable=True, scales=[_rows("mx")]),
                  _cast("cast_dim1", out, scales=[_cols("mx")], kind="transpose"))
    weight = (_cast("cast_dim0", out, scales=[_cols("mx")]),
              _cast("cast_dim1", out, scales=[_rows("mx")], kind="transpose"))
    return Recipe(name, "training", out,
                  {"input": per_layout, "weight": weight, "grad_output": per_layout},
                  _all_gemms("training", "mx"), description=description,
                  block_scaled=() if emulated else ("mx",))


def _training_table() -> dict[str, Recipe]:
    tw_act = (_amax(), _AMAX_FINAL,
              _cast("cast_dim0_dim1", extra_writes=(F8,), kind="transpose"))
    tw_weight = (_amax(), _AMAX_FINAL, _cast("cast_dim0"),
                 _cast("cast_dim1", kind="transpose"))
    rw_act = (
        # cast for dim0 and write a bf16 transpose; the transpose needs the whole
        # tensor in shared memory to fuse with the second cast, so it is not
        _cast("cast_dim0_transpose", extra_writes=(BF,), fusable=True, scales=[_rows("rowwise")],
              kind="transpose"),
        _cast("cast_dim1", scales=[_cols("rowwise")]),
    )
    rw_weight = (
        _cast("cast_dim0", scales=[_cols("rowwise")]),
        Kernel("transpose", (BF,), (BF,), kind="transpose"),
        _cast("cast_dim1", scales=[_rows("rowwise")]),
    )
    gw_hp_act = (_cast("cast_dim0", fusable=True, scales=[_rows("rowwise")]),)
    gw_hp_weight = (
        _cast("cast_dim0", scales=[_cols("rowwise")]),
        Kernel("rowwise_to_tensorwise_scale"),
        _cast("cast_dim1", kind="transpose"),
    )
    mx32_act = (_cast("cast_dim0", fusable=True, scales=[_rows("mx")]),
                _cast("cast_dim1", scales=[_cols("mx")], kind="transpose"))
    mx32_weight = (_cast("cast_32x32", scales=[_rows("mx_32x32")]),
                   # square blocks: the transposed copy reuses the scales
                   Kernel("transpose_fp8", (F8,), (F8,), kind="transpose"))
    flexible = (_cast("cast_32x32", fusable=True, scales=[_rows("mx_32x32")]),)
    b1, b128 = "blockwise_1x128", "blockwise_128x128"
    blockwise_gemms = {"output": (b1, b128), "grad_input": (b1, b128), "grad_weight": (b1, b1)}
    table = [
        Recipe("tensorwise", "training", F8,
               {"input": tw_act, "weight": tw_weight, "grad_output": tw_act},
               description="fp8 with one scale per tensor (dynamic amax)"),
        Recipe("rowwise", "training", F8,
               {"input": rw_act, "weight": rw_weight, "grad_output": rw_act},
               _all_gemms("training", "rowwise"),
               description="fp8 with one fp32 scale per row of each GEMM operand"),
        Recipe("rowwise_with_gw_hp", "training", F8,
               {"input": gw_hp_act, "weight": gw_hp_weight, "grad_output": gw_hp_act},
               # grad_input reads the weight cast with one (tensorwise) scale
               {"output": ("rowwise", "rowwise"), "grad_input": ("rowwise", None)},
               bf16_gemms=("grad_weight",),
               description="rowwise fp8, grad_weight GEMM kept in bf16"),
        _mx_training("mxfp8_emulated", F8, "MXFP8 (e4m3, e8m0 per 32), emulated GEMM",
                     emulated=True),
        _mx_training("mxfp8_cublas", F8, "MXFP8 (e4m3, e8m0 per 32), cuBLAS GEMM"),
        _mx_training("mxfp8_cublas_rceil", F8, "MXFP8, cuBLAS GEMM, round-up scale"),
        _mx_training("mxfp4_cutlass", F4, "MXFP4 (e2m1, e8m0 per 32), CUTLASS GEMM"),
        Recipe("mxfp8_32x32_flexible_gemm_layout", "training", F8,
               {"input": flexible, "weight": flexible, "grad_output": flexible},
               _all_gemms("training", "mx_32x32"), block_scaled=("mx",),
               description="MXFP8 with 32x32 blocks everywhere and GEMMs taking any "
                           "operand layout: one cast per tensor"),
        Recipe("mxfp8_32x32_weight", "training", F8,
               {"input": mx32_act, "weight": mx32_weight, "grad_output": mx32_act},
               {"output": ("mx", "mx_32x32"), "grad_input": ("mx", "mx_32x32"),
                "grad_weight": ("mx", "mx")}, block_scaled=("mx",),
               description="MXFP8, 32x32 weight blocks (transposable), 1x32 activations"),
        Recipe("blockwise", "training", F8, {
            "input": (_cast("quant_lhs", fusable=True, scales=[_rows(b1)]),
                      _cast("quant_rhs", scales=[_cols(b1)], kind="transpose")),
            # the weight is quantized for both GEMM layouts (weight.T and weight)
            "weight": (_cast("quant_transposed_rhs", scales=[_rows(b128)], kind="transpose"),
                       _cast("quant_rhs", scales=[_rows(b128)])),
            "grad_output": (_cast("quant_lhs", fusable=True, scales=[_rows(b1)]),
                            _cast("quant_transposed_lhs", scales=[_cols(b1)],
                                  kind="transpose")),
        }, blockwise_gemms,
            description="DeepSeek-V3 style fp8: 1x128 activation, 128x128 weight blocks"),
    ]
    return {r.name: r for r in table}


def _inference_table() -> dict[str, Recipe]:
    def one(name: str, out: str, kernels: tuple[Kernel, ...], s: str | None,
            desc: str) -> Recipe:
        family = tuple(f for f in BLOCK_SCALED if s and family_of(s) == f)
        return Recipe(name, "inference", out, {"input": kernels},
                      _all_gemms("inference", s), description=desc, block_scaled=family)

    return {r.name: r for r in (
        one("tensorwise", F8, (_amax(False), _AMAX_FINAL, _cast("cast")), None,
            "fp8 activation with one dynamic scale per tensor"),
        one("tensorwise_static", F8, (_cast("cast"),), None,
            "fp8 activation with a precomputed (static) per-tensor scale: one cast, "
            "no amax pass"),
        one("rowwise", F8, (_cast("cast", scales=[_rows("rowwise")]),), "rowwise",
            "fp8 activation with one fp32 scale per row"),
        one("mxfp8", F8, (_cast("cast", scales=[_rows("mx")]),), "mx",
            "MXFP8: e4m3 with an e8m0 scale per 32 elements"),
        one("mxfp4", F4, (_cast("cast", F4, scales=[_rows("mx")]),), "mx",
            "MXFP4: e2m1 with an e8m0 scale per 32 elements"),
        one("nvfp4", F4, (_amax(False), _AMAX_FINAL,
                          _cast("cast", F4, scales=[_rows("nvfp4_no_global")])), "nvfp4",
            "NVFP4: e2m1, e4m3 scale per 16, dynamic fp32 global scale"),
        one("nvfp4_static", F4, (_cast("cast", F4, scales=[_rows("nvfp4_no_global")]),),
            "nvfp4", "NVFP4 with a calibrated (static) global scale"),
        one("nvfp4_no_global_scale", F4,
            (_cast("cast", F4, scales=[_rows("nvfp4_no_global")]),), "nvfp4_no_global",
            "NVFP4 without a global scale"),
    )}


def _torchao_training(default: Mapping[str, Recipe]) -> dict[str, Recipe]:
    """torchao 0.18 counts no scale bytes in training casts, except blockwise's
    fp32 scales, which it prices as n / 128 (no rounding)."""
    def adjust(k: Kernel, blockwise: bool) -> Kernel:
        scales = tuple(replace(s, rounding="exact") for s in k.scales) if blockwise else ()
        return replace(k, scales=scales)

    return {name: replace(r, kernels={
        role: tuple(adjust(k, name == "blockwise") for k in ks)
        for role, ks in r.kernels.items()}) for name, r in default.items()}


def _torchao_inference(default: Mapping[str, Recipe]) -> dict[str, Recipe]:
    """torchao 0.18's inference casts: integer-division block scales, no
    zero-byte amax stage, and dynamic NVFP4 priced as one kernel reading twice."""
    def floor_scales(k: Kernel) -> Kernel:
        return replace(k, scales=tuple(replace(s, rounding="floor") for s in k.scales))

    # torchao's roofline has no static per-tensor fp8 recipe
    out = {name: replace(r, kernels={"input": tuple(
        floor_scales(k) for k in r.kernels["input"] if k.name != _AMAX_FINAL.name)})
        for name, r in default.items() if name != "tensorwise_static"}
    cast = out["nvfp4"].kernels["input"][-1]
    out["nvfp4"] = replace(out["nvfp4"], kernels={"input": (
        replace(cast, name="amax_and_cast", reads=(BF, BF)),)})
    return out


# -- the default model: the kernels the current torchao implementations run ------
def _swizzles(kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    """Block-scaled GEMMs read their scales in a blocked (swizzled) layout: one
    small re-layout kernel per scale tensor a cast writes (reads and writes it)."""
    return tuple(Kernel(f"swizzle_{k.name}", scales=(s, s), kind="elementwise")
                 for k in kernels for s in k.scales
                 if scaling_family(s.scaling) in BLOCK_SCALED)


def _default_training(base: Mapping[str, Recipe]) -> dict[str, Recipe]:
    """Rowwise as torchao's Float8Linear runs it: per tensor, a cast with
    scales along its stored rows (one kernel: each row's amax pass and cast
    pass) and a cast with scales along its stored columns, whose amax is a
    reduction across rows: a kernel of its own before the cast reads the
    tensor again (torch.compile does not fuse a strided reduction with its
    consumer; the bytes are those of the fused kernel, one launch more); the
    backward GEMMs run unscaled and their outputs are rescaled by a kernel of
    their own (torchao float8_ops.addmm_float8_unwrapped, pytorch/ao#2184): the
    outer product of the scale vectors materialized in fp32, then an in-place
    multiply.
    The per-tensor and per-row recipes run their backward GEMMs without fast
    accumulation (Float8LinearConfig's gemm_config_grad_input and
    gemm_config_grad_weight), at ``kappa_accum_fp8`` of the fast rate.
    Block-scaled recipes add their scale re-layouts."""
    # the per-column amax of a stored (rows x cols) tensor, one fp32 value per column
    amax_cols = Kernel("amax_cols", (BF,), (), kind="reduce")
    rows = _cast("cast_rows", reads=(BF, BF), scales=[_rows("rowwise")])
    cols = _cast("cast_cols", reads=(BF,), scales=[_cols("rowwise")], kind="transpose")
    # the weight is stored N x K: its scales per column of K x N are per stored row
    # (one kernel), those per row of K x N per stored column (reduction, then cast)
    w_rows = replace(rows, reads=(BF,), scales=(_cols("rowwise"),))
    w_cols = replace(cols, reads=(BF, BF), scales=(_rows("rowwise"),))
    # the unscaled backward GEMM's output rescaled as torchao does it: the row-scale
    # and column-scale vectors multiplied into an M x N fp32 tensor (one kernel,
    # 4 bytes written per element), then the bf16 output multiplied by it in place
    # (2 + 4 bytes read, 2 written), not one fused pass over the output
    rescale = (Kernel("scale_product", writes=("fp32",), kind="elementwise"),
               Kernel("rescale", (BF, "fp32"), (BF,), kind="rescale"))
    out = dict(base)
    # the backward GEMMs are cuBLAS's per-tensor kernel with unit scales: priced in
    # the tensorwise family (its rate and fixed time), reading no scales
    unscaled = {g: (None, None) for g in ("grad_input", "grad_weight")}
    out["rowwise"] = replace(base["rowwise"], kernels={
        "input": (rows, amax_cols, cols), "weight": (amax_cols, w_rows, w_cols),
        "grad_output": (rows, amax_cols, cols),
        "grad_input": rescale, "grad_weight": rescale},
        gemm_scaling={**base["rowwise"].gemm_scaling, **unscaled})
    for name in ("tensorwise", "rowwise", "rowwise_with_gw_hp"):
        slow = tuple(g for g in ("grad_input", "grad_weight") if g not in out[name].bf16_gemms)
        out[name] = replace(out[name], slow_accum_gemms=slow)
    for name, r in base.items():
        if set(r.block_scaled) & set(BLOCK_SCALED):
            out[name] = replace(r, kernels={role: ks + _swizzles(ks)
                                            for role, ks in r.kernels.items()})
    out["mxfp8_emulated"] = _emulated(base["mxfp8_emulated"])
    return out


def _emulated(r: Recipe) -> Recipe:
    """An emulated block-scaled recipe as torchao runs it (``MXGemmKernelChoice.
    EMULATED``): each cast's output is dequantized back to bf16 by a kernel of
    its own (reads the low-precision data and its scales, writes bf16) and
    every GEMM runs in bf16: no low-precision tensor core is used."""
    def dequantize(k: Kernel) -> Kernel:
        return Kernel(k.name.replace("cast", "dequantize", 1), (r.lowp,), (BF,),
                      scales=k.scales, kind="elementwise")

    return replace(r, kernels={role: ks + tuple(dequantize(k) for k in ks)
                               for role, ks in r.kernels.items()},
                   gemm_scaling={}, bf16_gemms=tuple(_GEMMS[r.mode]),
                   description=r.description.replace(
                       "emulated GEMM", "emulated: quantize, dequantize to bf16, bf16 GEMMs"))


def _default_inference(base: Mapping[str, Recipe]) -> dict[str, Recipe]:
    out = {name: replace(r, kernels={role: ks + _swizzles(ks)
                                     for role, ks in r.kernels.items()})
           for name, r in base.items()}
    b1, b128 = "blockwise_1x128", "blockwise_128x128"
    # DeepSeek-style fp8 inference: the activation quantized per 1 x 128 block,
    # the weight pre-quantized per 128 x 128 block
    out["blockwise"] = Recipe(
        "blockwise", "inference", F8,
        {"input": (_cast("quant_lhs", scales=[_rows(b1)]),)}, {"output": (b1, b128)},
        description="fp8 with 1x128 activation and 128x128 weight blocks")
    return out


def _torchao_moe(base: Mapping[str, Recipe]) -> dict[str, Recipe]:
    """torchao's MoE roofline (benchmarks/prototype/moe_training/mxfp8/
    roofline_unified.py): MXFP8 only; every cast reads bf16 and writes fp8
    with one e8m0 scale per 32 elements (integer division); the scales of
    the activations and gradients are re-laid out (M-groups, K-groups), the
    3D weight cast writes its scales already blocked."""
    def floor(k: Kernel) -> Kernel:
        return replace(k, scales=tuple(replace(s, rounding="floor") for s in k.scales))

    out = {}
    for name in ("mxfp8_cublas", "mxfp8_cublas_rceil"):
        r = base[name]
        kernels = {role: tuple(floor(k) for k in ks) for role, ks in r.kernels.items()}
        out[name] = replace(r, kernels={
            role: ks + (() if role == "weight" else _swizzles(ks))
            for role, ks in kernels.items()})
    return out


_BASE = {"training": _training_table(), "inference": _inference_table()}
_TABLES = {
    "default": {"training": _default_training(_BASE["training"]),
                "inference": _default_inference(_BASE["inference"])},
    "torchao": {"training": _torchao_training(_BASE["training"]),
                "inference": _torchao_inference(_BASE["inference"])},
    "torchao_moe": {"training": _torchao_moe(_BASE["training"]), "inference": {}},
}


# -- the seed document's dynamic / delayed scaling ---------------------------
def _seed_kernels(scaling_type: str, compile_limits: bool) -> tuple[Kernel, ...]:
    both = (F8, F8)  # the cast writes row-major and column-major fp8
    if scaling_type == "dynamic":
        # torch.compile's cast re-reads the fp8 output (pytorch/pytorch#130015)
        reads = (BF, F8) if compile_limits else (BF,)
        return (_amax(), _AMAX_FINAL, Kernel("cast_dim0_dim1", reads, both))
    if compile_limits:
        # amax is not fused with the cast (pytorch/pytorch#128063), and the
        # cast re-reads fp8 (#130015): as costly as dynamic scaling
        return (_amax(), _AMAX_FINAL, Kernel("scale_reciprocal"),
                Kernel("cast_dim0_dim1", (BF, F8), both))
    return (Kernel("amax_and_cast", (BF,), both, fusable=True), _AMAX_FINAL,
            Kernel("scale_reciprocal"))


def _seed_recipe(per_role: Mapping[str, str], compile_limits: bool) -> Recipe:
    if set(per_role) != set(ROLES):
        raise InputError(f"a seed recipe mapping needs exactly the roles {list(ROLES)}; "
                         f"got {sorted(map(str, per_role))}")
    for role, s in per_role.items():
        choice(s, SEED_SCALINGS, f"scaling for role {role!r}")
    kinds = set(per_role.values())
    name = kinds.pop() if len(kinds) == 1 else ",".join(f"{r}={per_role[r]}" for r in ROLES)
    return Recipe(name, "training", F8,
                  {r: _seed_kernels(per_role[r], compile_limits) for r in ROLES},
                  description="the seed document's fp8 scaling, per role: " +
                  ", ".join(f"{r} {per_role[r]}" for r in ROLES))


def list_recipes(mode: str = "training", table: str = "default") -> list[str]:
    """Recipe names for ``mode``; the seed's ``dynamic``/``delayed`` are training-only.

    >>> list_recipes("inference")
    ['tensorwise', 'tensorwise_static', 'rowwise', 'mxfp8', 'mxfp4', 'nvfp4', 'nvfp4_static', 'nvfp4_no_global_scale', 'blockwise']
    """
    _check(mode, MODES, "mode")
    _check(table, TABLES, "recipe table")
    names = list(_TABLES[table][mode])
    seed = mode == "training" and table != "torchao_moe"
    return names + list(SEED_SCALINGS) if seed else names


def recipe(name: str | Mapping[str, str], mode: str = "training", table: str = "default",
           torch_compile_limitations: bool = False) -> Recipe:
    """Look up a recipe; inference names starting with ``mxfp8`` mean ``mxfp8``.

    ``name`` may also be ``dynamic``, ``delayed`` or a mapping
    ``{"input": ..., "weight": ..., "grad_output": ...}`` of those (training).
    """
    _check(mode, MODES, "mode")
    _check(table, TABLES, "recipe table")
    if not isinstance(name, (str, Mapping)):  # before `in`, which an array would broadcast
        raise InputTypeError(f"recipe must be a name or a role mapping, not {type(name).__name__}")
    if table == "torchao_moe" and (not isinstance(name, str) or name not in _TABLES[table][mode]):
        raise InputError(f"torchao's MoE roofline prices MXFP8 training only, not {mode} "
                         f"recipe {name!r}; its recipes: "
                         f"{', '.join(list_recipes(mode, table)) or 'none'} (preset 'default' "
                         "models every recipe grouped)")
    if isinstance(name, Mapping) or name in SEED_SCALINGS:
        if mode != "training":
            raise InputError(f"the seed's {SEED_SCALINGS} scalings model training only; "
                             f"inference recipes: {', '.join(list_recipes(mode, table))}")
        per_role = dict(name) if isinstance(name, Mapping) else dict.fromkeys(ROLES, name)
        return _seed_recipe(per_role, torch_compile_limitations)
    if torch_compile_limitations:
        raise InputError("torch_compile_limitations applies to the seed's dynamic/delayed "
                         f"scalings only, not to {name!r}")
    recipes = _TABLES[table][mode]
    if name in recipes:
        return recipes[name]
    if mode == "inference" and name.startswith("mxfp8"):
        return replace(recipes["mxfp8"], name=name)
    raise unknown_name(f"{mode} recipe", name, list_recipes(mode, table))


def _check(value: str, valid: tuple[str, ...], what: str) -> None:
    choice(value, valid, what)
