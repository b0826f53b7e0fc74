"""What a step is: the model, the recipe and every option, checked once.

``StepSpec`` holds the inputs of ``step()`` after validation and answers the
questions every part of the step asks: tokens per GPU per micro-batch (in
``SEQ_LEN`` ``S`` and ``LOCAL_BATCH`` ``B``), micro-batches per step, which
linears convert, which link a group of GPUs talks over.

>>> from roofline_sym.symbols import SEQ_LEN as S, LOCAL_BATCH as B
>>> spec = StepSpec.toy()
>>> spec.tokens, spec.microbatches, spec.side_attention("lowp")
(B*S, 1, 'bf16')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import sympy

from .. import symbols as S
from ..architectures import Architecture, LinearShape
from ..validate import count, show
from .parallel import AC_MODES, STEP_MODES, Parallelism, StepInputError

__all__ = ["StepSpec", "default_convert", "toy_architecture", "KV_CACHES", "ATTENTION_DTYPES"]

KV_CACHES = ("bf16", "fp8")
ATTENTION_DTYPES = ("bf16", "fp8")


def default_convert(shape: LinearShape) -> bool:
    """Every linear converts but the output layer and the router (float8
    conversion filters keep both in bf16)."""
    return shape.part not in ("output", "router")


@dataclass(frozen=True)
class StepSpec:
    """A step's inputs, checked (``step()`` builds one)."""

    arch: Architecture
    recipe: str
    mode: str = "training"
    parallel: Parallelism = field(default_factory=lambda: Parallelism.of())
    ac: str = "none"
    compile: bool = False
    fp8_all_gather: bool = False
    convert: Callable[[LinearShape], bool] = default_convert
    context: int | None = None
    kv_cache: str = "bf16"
    implementation: str = "torch"
    preset: str = "default"
    microbatches_given: int | None = None
    attention: str = "bf16"
    scale_up_gpus: int = 8
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value, valid in (("mode", self.mode, STEP_MODES), ("ac", self.ac, AC_MODES),
                                   ("kv_cache", self.kv_cache, KV_CACHES),
                                   ("attention", self.attention, ATTENTION_DTYPES)):
            if value not in valid:
                raise StepInputError(f"{name} must be one of {', '.join(valid)}, not "
                                     f"{show(value)}")
        for name in ("compile", "fp8_all_gather"):
            if not isinstance(getattr(self, name), bool):
                raise StepInputError(f"{name} must be True or False, not "
                                     f"{show(getattr(self, name))}")
        if self.mode != "training":
            p = self.parallel
            if p.pp > 1 or p.cp > 1:
                raise StepInputError(f"a {self.mode} step models tp and ep only: pp={p.pp}, "
                                     f"cp={p.cp} must be 1")
            if self.ac != "none" or self.fp8_all_gather:
                raise StepInputError(f"ac and fp8_all_gather are training options, not "
                                     f"{self.mode}'s")
        if self.context is not None:
            if self.mode != "decode":
                raise StepInputError("context (the KV length) is a decode step's; a prefill's "
                                     "prompt length is the sequence length")
            count(self.context, "context", minimum=1, maximum=1 << 24)

    @classmethod
    def toy(cls, **changes: Any) -> "StepSpec":
        """A two-layer toy model's step (examples and tests)."""
        arch = changes.pop("arch", None) or toy_architecture()
        return cls(arch, changes.pop("recipe", "tensorwise"), **changes)

    # -- what every part asks
    @property
    def training(self) -> bool:
        return self.mode == "training"

    @property
    def tokens(self) -> sympy.Expr:
        """Tokens a GPU's linears see per micro-batch: ``B*S/cp`` (decode: ``B``)."""
        if self.mode == "decode":
            return S.LOCAL_BATCH
        return S.SEQ_LEN * S.LOCAL_BATCH / self.parallel.cp

    @property
    def kv_length(self) -> sympy.Expr:
        """A decode step's KV length: ``context``, else the sequence length."""
        return S.SEQ_LEN if self.context is None else sympy.Integer(self.context)

    @property
    def microbatches(self) -> int:
        """Micro-batches per step: as given, else ``pp`` (one per stage), else 1."""
        if not self.training:
            return 1
        if self.microbatches_given is not None:
            return self.microbatches_given
        return self.parallel.pp

    @property
    def bubble(self) -> sympy.Rational:
        """The 1F1B pipeline bubble: ``(pp-1)/m`` of the compute."""
        return sympy.Rational(self.parallel.pp - 1, self.microbatches)

    @property
    def layer_weight(self) -> sympy.Expr:
        """How often a block's kernels run per step on one GPU: its stage's share
        of the blocks (``1/pp``) times the micro-batches."""
        return sympy.Rational(self.microbatches, self.parallel.pp)

    def side_attention(self, side: str) -> str:
        """The attention core's dtype on ``side``."""
        return self.attention if side == "lowp" else "bf16"

    def across(self, dim: str) -> int | None:
        """Members of a group of ``dim`` in each scale-up domain when the group
        spans several domains; None when it fits in one."""
        p = self.parallel
        if p.span(dim) <= self.scale_up_gpus:
            return None
        size = p.ep if dim == "ep" else getattr(p, dim)
        # expert groups are carved out of dp_shard * cp, innermost first: stride tp
        stride = p.stride("cp" if dim == "ep" else dim)
        return max(1, min(size, self.scale_up_gpus // stride))


def toy_architecture() -> Architecture:
    """Two blocks of a tiny Llama-style model (examples and tests)."""
    return Architecture("toy", hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64,
                        mlp="swiglu", intermediate=512, vocab=1000, tied_embeddings=False)
