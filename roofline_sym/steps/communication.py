"""A step's collectives: bytes on each GPU's link over its bus bandwidth.

Ring collectives over ``n`` GPUs put ``(n-1)/n`` of the buffer on each
GPU's link (all-gather, reduce-scatter), twice that for an all-reduce
(nccl-tests' bus bandwidth normalises for this).  A group within one
scale-up domain talks over NVLink / xGMI, one that spans domains over the
network (``StepSpec.across``).  Per step on one GPU, ``P`` the parameters of
its tensor- and pipeline-parallel share:

- FSDP over ``dp_shard * cp`` (routed experts, held ``1/ep`` each, over
  ``dp_shard * cp / ep``): the weights all-gathered in bf16 (2 bytes;
  converted layers in fp8, 1 byte, with ``fp8_all_gather``) for the forward
  and again for the backward, and the gradients reduce-scattered in fp32
  (torchtitan's default reduce dtype), per micro-batch;
- DDP / HSDP over ``dp_replicate``: the gradient shard all-reduced in fp32,
  once per step;
- context parallelism: ring attention passes K and V around (forward) and
  K, V and their gradients (backward);
- these hide under compute (``comm``); tensor parallelism (sequence parallel:
  two all-gathers and two reduce-scatters of ``T h`` per layer and pass;
  serving: two all-reduces), expert parallelism (all-to-all dispatch and
  combine, forward and backward) and pipeline sends are on the critical path
  (``comm_exposed``).

>>> from roofline_sym.steps.spec import StepSpec
>>> from roofline_sym.steps.parallel import Parallelism
>>> spec = StepSpec.toy(parallel=Parallelism.of(gpus=8))
>>> [t.name for t in communication_terms(spec)][:2]
['baseline.comm.fsdp.all_gather', 'baseline.comm.fsdp.reduce_scatter']
"""

from __future__ import annotations

import sympy

from .attention import head_dims, local_heads
from .linears import local_shape
from .pieces import StepTerm, network_pieces
from .spec import StepSpec

__all__ = ["communication_terms", "gathered_bytes", "REDUCE_BYTES"]

REDUCE_BYTES = 4  # gradients reduced in fp32 (torchtitan's mixed_precision_reduce)
_BF16 = 2


def _ring(n: int) -> sympy.Rational:
    return sympy.Rational(n - 1, n)


def _weights(spec: StepSpec, experts: bool) -> sympy.Expr:
    """Weights one GPU holds once gathered: the dense ones' tensor- and
    pipeline-parallel share, or its ``1/ep`` of the routed experts' stage share."""
    p = spec.parallel
    routed = sum(int(s.weights) for s in spec.arch.linears(not spec.arch.tied_embeddings)
                 if s.groups > 1)
    if experts:
        return sympy.Rational(routed, p.ep * p.pp)
    return sympy.Rational(int(spec.arch.params) - routed, p.tp * p.pp)


def gathered_bytes(spec: StepSpec, side: str, experts: bool = False) -> sympy.Expr:
    """Bytes of the weights (dense, or routed ``experts``) one FSDP all-gather
    assembles on a GPU: bf16, the converted linears in fp8 on the low-precision
    side with ``fp8_all_gather``."""
    total = _weights(spec, experts) * _BF16
    if side == "lowp" and spec.fp8_all_gather:
        for shape in spec.arch.linears():
            if spec.convert(shape) and (shape.groups > 1) == experts:
                k, n, groups = local_shape(shape, spec)
                total -= sympy.Rational(k * n * (groups or 1) * int(shape.blocks),
                                        spec.parallel.pp)
    return total


def _data_parallel(spec: StepSpec, side: str) -> list[StepTerm]:
    """FSDP over ``dp_shard * cp`` (routed experts over what ``ep`` leaves of it),
    DDP over ``dp_replicate``."""
    p, m = spec.parallel, spec.microbatches
    out = []
    shard = p.dp_shard * p.cp
    groups = [(shard, False), (shard // p.ep, True)]  # (FSDP degree, experts)
    across = spec.across("dp_shard")
    gather = tuple(network_pieces(_ring(n) * gathered_bytes(spec, side, e), across)
                   for n, e in groups if n > 1)
    reduce = tuple(network_pieces(_ring(n) * _weights(spec, e) * REDUCE_BYTES, across)
                   for n, e in groups if n > 1)
    if gather:
        out.append(StepTerm(f"{side}.comm.fsdp.all_gather", "comm", gather, 2 * m))
        out.append(StepTerm(f"{side}.comm.fsdp.reduce_scatter", "comm", reduce, m))
    if p.dp_replicate > 1:
        grads = sum((_weights(spec, e) / n for n, e in groups), sympy.Integer(0)) * REDUCE_BYTES
        out.append(StepTerm(f"{side}.comm.ddp.all_reduce", "comm", (network_pieces(
            2 * _ring(p.dp_replicate) * grads, spec.across("dp_replicate")),)))
    return out


def _model_parallel(spec: StepSpec, side: str) -> list[StepTerm]:
    p, T, h = spec.parallel, spec.tokens, int(spec.arch.hidden)
    per_layer = int(spec.arch.layers) * spec.layer_weight
    out = []
    if p.tp > 1:
        # per pass: two all-gathers and two reduce-scatters (serving: two all-reduces)
        volume = 4 * _ring(p.tp) * T * h * _BF16
        passes = ("forward", "backward") if spec.training else ("forward",)
        for name in passes:
            out.append(StepTerm(f"{side}.comm.tp.{name}", "comm_exposed",
                                (network_pieces(volume, spec.across("tp")),), per_layer))
    moe = spec.arch.moe
    if p.ep > 1 and moe is not None:
        layers = (int(spec.arch.layers) - int(moe.dense_layers)) * spec.layer_weight
        passes_ep = 2 if spec.training else 1
        volume = passes_ep * 2 * _ring(p.ep) * T * int(moe.top_k) * h * _BF16
        out.append(StepTerm(f"{side}.comm.ep.all_to_all", "comm_exposed",
                            (network_pieces(volume, spec.across("ep")),), layers))
    if p.cp > 1:
        (_, g), (d_qk, d_v) = local_heads(spec), head_dims(spec)
        kv = spec.tokens * g * (d_qk + d_v) * _BF16  # this GPU's K and V block
        out.append(StepTerm(f"{side}.comm.cp.kv_exchange", "comm", (network_pieces(
            3 * (p.cp - 1) * kv, spec.across("cp")),), per_layer))
    if p.pp > 1:
        out.append(StepTerm(f"{side}.comm.pp.send_recv", "comm_exposed", (network_pieces(
            2 * T * h * _BF16, spec.across("pp")),), spec.microbatches))
    return out


def communication_terms(spec: StepSpec) -> list[StepTerm]:
    """Every collective on both sides (none on one GPU)."""
    out = []
    for side in ("baseline", "lowp"):
        if spec.training:
            out += _data_parallel(spec, side)
        out += _model_parallel(spec, side)
    return out
