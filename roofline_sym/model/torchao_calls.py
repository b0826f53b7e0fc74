"""How each recipe runs: the torchao 0.18 call that applies it, or why none does.

``TORCHAO_CALLS[mode][recipe]`` is the call a user writes (``model`` being
their module); a recipe without one maps to ``None`` and ``WHY_NOT`` says
where it comes from instead: the seed document's ``dynamic`` / ``delayed``
scalings, or a layout torchao's roofline script models but no torchao API
offers.  ``origin`` labels a recipe for listings.

>>> TORCHAO_CALLS["training"]["rowwise"]
'convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name("rowwise"))'
>>> origin("training", "delayed")
'seed document only'
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .recipes import SEED_SCALINGS

__all__ = ["TORCHAO_CALLS", "WHY_NOT", "IMPORTS", "origin"]

_F8 = 'convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name("{}"))'
_MX = "quantize_(model, MXFP8TrainingOpConfig.from_recipe(MXFP8TrainingRecipe.{}))"
_INFER_F8 = "quantize_(model, Float8DynamicActivationFloat8WeightConfig(granularity={}))"
_SEED = "seed document only: its fp8 scaling, per role; torchao 0.18 has no such option"
_ROOFLINE = "modelled by torchao's roofline only (torchao.testing.training.roofline_utils)"

TORCHAO_CALLS: Mapping[str, Mapping[str, str | None]] = MappingProxyType({
    "training": MappingProxyType({
        "tensorwise": _F8.format("tensorwise"),
        "rowwise": _F8.format("rowwise"),
        "rowwise_with_gw_hp": _F8.format("rowwise_with_gw_hp"),
        # 0.18's dense MXFP8 training rounds scales up (RCEIL); the emulated one
        # quantizes, dequantizes and runs a bf16 GEMM
        "mxfp8_emulated": _MX.format("MXFP8_EMULATED_RCEIL"),
        "mxfp8_cublas": None,
        "mxfp8_cublas_rceil": _MX.format("MXFP8_RCEIL"),
        "mxfp4_cutlass": None,
        "mxfp8_32x32_flexible_gemm_layout": None,
        "mxfp8_32x32_weight": None,
        "blockwise": "quantize_(model, Float8BlockwiseLinearConfig())",
        "dynamic": None,
        "delayed": None,
    }),
    "inference": MappingProxyType({
        "tensorwise": _INFER_F8.format("PerTensor()"),
        "tensorwise_static": "quantize_(model, Float8StaticActivationFloat8WeightConfig("
                             "scale=...))",
        "rowwise": _INFER_F8.format("PerRow()"),
        "mxfp8": "quantize_(model, MXDynamicActivationMXWeightConfig())",
        "mxfp4": "quantize_(model, MXDynamicActivationMXWeightConfig("
                 "activation_dtype=torch.float4_e2m1fn_x2, weight_dtype=torch.float4_e2m1fn_x2))",
        "nvfp4": "quantize_(model, NVFP4DynamicActivationNVFP4WeightConfig())",
        "nvfp4_static": 'quantize_(model, NVFP4DynamicActivationNVFP4WeightConfig(step="prepare"))'
                        ', calibrate, then step="convert"',
        "nvfp4_no_global_scale": "quantize_(model, NVFP4DynamicActivationNVFP4WeightConfig("
                                 "use_dynamic_per_tensor_scale=False))",
        "blockwise": _INFER_F8.format("(PerBlock([1, 128]), PerBlock([128, 128]))"),
    }),
})

WHY_NOT: Mapping[str, str] = MappingProxyType({
    "mxfp8_cublas": "torchao 0.18 trains MXFP8 with round-up scales only: see "
                    "mxfp8_cublas_rceil",
    "mxfp4_cutlass": "no MXFP4 training API in torchao 0.18 (" + _ROOFLINE + ")",
    "mxfp8_32x32_flexible_gemm_layout": _ROOFLINE + "; GEMMs taking any layout do not exist "
                                                    "in PyTorch",
    "mxfp8_32x32_weight": _ROOFLINE,
    **{name: _SEED for name in SEED_SCALINGS},
})

# where the names in the calls come from
IMPORTS: Mapping[str, str] = MappingProxyType({
    "convert_to_float8_training": "torchao.float8",
    "Float8LinearConfig": "torchao.float8",
    "quantize_": "torchao.quantization",
    "Float8DynamicActivationFloat8WeightConfig": "torchao.quantization",
    "Float8StaticActivationFloat8WeightConfig": "torchao.quantization",
    "PerTensor": "torchao.quantization",
    "PerRow": "torchao.quantization",
    "PerBlock": "torchao.quantization",
    "MXFP8TrainingOpConfig": "torchao.prototype.moe_training.config",
    "MXFP8TrainingRecipe": "torchao.prototype.moe_training.config",
    "Float8BlockwiseLinearConfig": "torchao.prototype.blockwise_fp8_training.linear",
    "MXDynamicActivationMXWeightConfig": "torchao.prototype.mx_formats.inference_workflow",
    "NVFP4DynamicActivationNVFP4WeightConfig": "torchao.prototype.mx_formats.inference_workflow",
})


def origin(mode: str, recipe: str) -> str:
    """Where a recipe comes from, in a few words: ``torchao`` (a call runs it),
    ``seed document only``, or ``modelled only`` (no API runs it)."""
    if recipe in SEED_SCALINGS:
        return "seed document only"
    return "torchao" if TORCHAO_CALLS.get(mode, {}).get(recipe) else "modelled only"
