"""``step()``: a whole training or serving step of a model, in bf16 and in a recipe.

>>> s = step("llama3-8b", "tensorwise", gpus=8)
>>> [name for name in s.breakdown if name.startswith("lowp.comm")]
['lowp.comm.fsdp.all_gather', 'lowp.comm.fsdp.reduce_scatter']
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

from .assembly import assemble
from .linears import layer_models
from .model import Step
from .parallel import Parallelism, StepInputError
from ..architectures import Architecture, LinearShape, architecture
from .spec import StepSpec, default_convert
from ..validate import count, show

__all__ = ["step"]


def step(model: str | os.PathLike[str] | Architecture | Mapping[str, Any], recipe: str, *, mode: str = "training", gpus: Any = 1,
         dp_shard: Any = None, dp_replicate: Any = 1, tp: Any = 1, pp: Any = 1, cp: Any = 1,
         ep: Any = 1, ac: str = "none", compile: bool = False, fp8_all_gather: bool = False,
         convert: Callable[[LinearShape], bool] | None = None, context: int | None = None,
         kv_cache: str = "bf16", implementation: str = "torch", preset: str = "default",
         microbatches: Any = None, attention: str = "bf16", **options: Any) -> Step:
    """The cost model of one step of ``model`` (a built-in architecture's name, a
    Hugging Face config.json, a mapping of its keys or an ``Architecture``) with its linears
    in ``recipe``: ``mode`` ``training``, ``prefill`` (a forward of B sequences of
    length S) or ``decode`` (one token for each of B sequences, a KV length
    ``context``, else S); torchtitan's parallel degrees (``dp_shard`` None: what
    the others leave of ``gpus``); ``ac`` activation checkpointing (``none``,
    ``selective``, ``full``); ``compile``: fused kernels (the linears' casts fuse
    with their producers, residual adds with norms, the loss is one pass);
    ``fp8_all_gather``: FSDP gathers converted weights in fp8; ``convert``: which
    linears convert (default: all but the output layer and the router);
    ``kv_cache``: the low-precision side's KV cache (``bf16``, ``fp8``);
    ``attention``: the low-precision side's attention forward (``bf16``, ``fp8``);
    ``microbatches``: per step (default: ``pp``, else 1); ``options``: the layer
    model's options (``rs.linear``'s).
    """
    parallel = Parallelism.of(gpus, dp_shard, dp_replicate, tp, pp, cp, ep)
    spec = StepSpec(architecture(model), recipe, mode, parallel, ac, compile, fp8_all_gather,
                    convert or default_convert, context, kv_cache, implementation, preset,
                    _microbatches(microbatches), attention, options=options)
    if spec.fp8_all_gather and layer_models(spec)[0].recipe.family("output") != "tensorwise":
        raise StepInputError(f"fp8_all_gather gathers per-tensor scaled weights: recipe "
                             f"{recipe!r} is not per-tensor")
    return Step(spec, *assemble(spec))


def _microbatches(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return count(value, "microbatches", minimum=1, maximum=1 << 16)
    except (TypeError, ValueError) as exc:
        raise StepInputError(f"microbatches must be a whole number >= 1, not "
                             f"{show(value)}") from exc
