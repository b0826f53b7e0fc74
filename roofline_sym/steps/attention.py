"""The attention core of a step: FlashAttention-style, causal, per layer.

Per layer and micro-batch on one GPU (``a`` heads and ``g`` KV heads of its
tensor-parallel share, head dims ``d_qk`` and ``d_v``; Llama: both ``d``):

- training and prefill forward: the scores and the weighted sum are
  ``2 B S^2 a (d_qk + d_v)`` FLOPs without a mask, ``4 B S^2 a d``; a causal
  mask skips half (FlashAttention skips the blocks above the diagonal), and
  context parallelism splits it ``cp`` ways; bytes: Q, K, V read and O written;
- backward: 2.5x the forward's FLOPs (FlashAttention-2 recomputes the scores:
  five GEMMs against two), twice its bytes;
- decode: one query per sequence against a KV length ``C``: ``2 B C a (d_qk + d_v)``
  FLOPs, the KV cache read once: ``B C g (d_qk + d_v)`` elements (MLA: its
  latent, ``kv_lora_rank + qk_rope_head_dim`` per token) at the cache's bytes.

Each runs at ``eta_attn_forward`` / ``eta_attn_backward`` of the GEMM peak of
its dtype: bf16 on both sides, unless ``attention="fp8"`` (the low-precision
side's forward at the fp8 peak; the backward stays bf16, as FlashAttention-3's
fp8 kernels are forward-only).

>>> from roofline_sym.steps.spec import StepSpec
>>> [t.name for t in attention_terms(StepSpec.toy())][:2]
['baseline.attention.core.forward', 'baseline.attention.core.backward']
"""

from __future__ import annotations

import sympy

from .. import symbols as S
from .parallel import StepInputError
from .pieces import StepTerm, gemm_like_pieces, kernel_pieces
from .spec import StepSpec

__all__ = ["attention_terms", "attention_flops", "head_dims", "local_heads", "kv_elements"]

_BACKWARD_FLOPS = sympy.Rational(5, 2)  # FlashAttention-2: five GEMMs against two
_BYTES = {"bf16": 2, "fp8": 1}


def head_dims(spec: StepSpec) -> tuple[int, int]:
    """``(d_qk, d_v)``: the query-key and value head dims."""
    mla = spec.arch.mla
    if mla is not None:
        return int(mla.qk_nope_head_dim) + int(mla.qk_rope_head_dim), int(mla.v_head_dim)
    return int(spec.arch.head_dim), int(spec.arch.head_dim)


def local_heads(spec: StepSpec) -> tuple[int, int]:
    """``(a, g)``: query and KV heads on one GPU (KV heads replicated where
    fewer than ``tp``)."""
    tp, a, g = spec.parallel.tp, int(spec.arch.heads), int(spec.arch.kv_heads)
    if a % tp:
        raise StepInputError(f"tp={tp} does not divide the {a} attention heads")
    if g % tp and tp % g:
        raise StepInputError(f"tp={tp} and the {g} KV heads: neither divides the other")
    return a // tp, max(1, g // tp)


def kv_elements(spec: StepSpec) -> int:
    """Elements of the KV cache per token and layer on one GPU."""
    mla = spec.arch.mla
    if mla is not None:
        return int(mla.kv_lora_rank) + int(mla.qk_rope_head_dim)
    d_qk, d_v = head_dims(spec)
    return local_heads(spec)[1] * (d_qk + d_v)


def _forward(spec: StepSpec) -> tuple[sympy.Expr, sympy.Expr]:
    """FLOPs and elements moved of one layer's forward per micro-batch."""
    (a, g), (d_qk, d_v) = local_heads(spec), head_dims(spec)
    B, Sq = S.LOCAL_BATCH, S.SEQ_LEN
    if spec.mode == "decode":
        C = spec.kv_length
        return 2 * B * C * a * (d_qk + d_v), B * (a * (d_qk + d_v))
    cp = spec.parallel.cp
    flops = B * Sq ** 2 * a * (d_qk + d_v) / cp  # causal: half of 2 B S^2 a (d_qk + d_v)
    elements = B * Sq / cp * (a * d_qk + g * d_qk + g * d_v + a * d_v)
    return flops, elements


def attention_flops(spec: StepSpec) -> sympy.Expr:
    """The attention core's FLOPs per step on one GPU (no re-run)."""
    flops, _ = _forward(spec)
    passes = 1 + _BACKWARD_FLOPS if spec.training else 1
    return passes * flops * int(spec.arch.layers) * spec.layer_weight


def attention_terms(spec: StepSpec) -> list[StepTerm]:
    """The attention core's terms on both sides (forward, backward, re-run; a
    decode step's KV-cache read, a prefill's KV-cache write)."""
    flops, elements = _forward(spec)
    weight = int(spec.arch.layers) * spec.layer_weight
    fwd, bwd = S.attention_efficiency("forward"), S.attention_efficiency("backward")
    out = []
    for side in ("baseline", "lowp"):
        dtype = spec.side_attention(side)
        kv_bytes = _BYTES[spec.kv_cache if side == "lowp" else "bf16"]
        name = f"{side}.attention"
        if spec.mode == "decode":
            cache = S.LOCAL_BATCH * spec.kv_length * kv_elements(spec) * kv_bytes
            out.append(StepTerm(f"{name}.core.forward", "attention", (gemm_like_pieces(
                flops, cache + elements * _BYTES[dtype], dtype, fwd),), weight))
            continue
        forward = gemm_like_pieces(flops, elements * _BYTES[dtype], dtype, fwd)
        out.append(StepTerm(f"{name}.core.forward", "attention", (forward,), weight))
        if spec.mode == "prefill":
            # the new keys and values read in bf16, written in the cache's format
            moved = S.LOCAL_BATCH * S.SEQ_LEN * kv_elements(spec) * (2 + kv_bytes)
            out.append(StepTerm(f"{name}.kv_cache.write", "attention",
                                (kernel_pieces(moved, "elementwise"),), weight))
            continue
        backward = gemm_like_pieces(_BACKWARD_FLOPS * flops, 2 * elements * 2, "bf16", bwd)
        out.append(StepTerm(f"{name}.core.backward", "attention", (backward,), weight))
        if spec.ac == "full":
            out.append(StepTerm(f"{name}.core.recompute", "attention", (forward,), weight))
    return out
