"""The memory-bound kernels of a step and its optimizer: bytes over bandwidth
plus a fixed time per kernel (the layer model's kernel roofline), the same on
both sides.

Per layer and micro-batch, bf16 activations (2 bytes), ``T`` tokens on the
GPU (``T/tp`` where sequence parallelism shards them), ``h`` hidden, ``f``
the MLP size one token runs (MoE: ``top_k`` routed plus the shared experts):

| kernel | forward elements | backward elements |
|---|---|---|
| norm (2 per layer) | read ``T h``, write ``T h`` | read x and dy, write dx: ``3 T h`` |
| residual add (2) | read two, write one: ``3 T h`` | ``3 T h`` |
| SwiGLU | read gate and up, write: ``3 T f`` | ``5 T f`` |
| GELU, ReLU^2 | ``2 T f`` | ``3 T f`` |
| rotary | read and write Q and K | the same |
| MoE permute (dispatch, combine) | ``4 T top_k h`` | the same |

``compile=True`` fuses each residual add into the norm that follows (one
kernel reading and writing two tensors: ``4 T h`` each way).  Once per
micro-batch: the embedding (gather; its backward accumulates a ``V h`` fp32
gradient), the final norm and the loss: eagerly a float32 upcast and log-softmax
(14 bytes per logit each way), compiled one pass reading the logits (2 bytes)
and, backward, reading and writing them (4).  Selective checkpointing re-runs
the per-layer kernels' forward (the GEMMs' and attention's outputs are saved);
full checkpointing re-runs them too.

The optimizer, once per step: AdamW reads the fp32 master weight, gradient and
two moments and writes weight and moments, 28 bytes per parameter, on the
parameters one GPU holds (``params / (dp_shard cp tp pp)``).

>>> from roofline_sym.steps.spec import StepSpec
>>> sorted({t.name.split(".")[2] for t in pointwise_terms(StepSpec.toy())})
['activation', 'embedding', 'loss', 'norm', 'norm_final', 'residual', 'rotary']
"""

from __future__ import annotations

import sympy

from .attention import head_dims, local_heads
from .pieces import StepTerm, kernel_pieces
from .spec import StepSpec

__all__ = ["pointwise_terms", "optimizer_terms", "ADAMW_BYTES", "mlp_width"]

# AdamW per parameter: read weight, gradient, two moments (fp32); write weight and moments
ADAMW_BYTES = 4 * 4 + 3 * 4
_BF16 = 2
# the activation's elements per token and MLP column: (forward, backward)
_ACTIVATION = {"swiglu": (3, 5), "gelu": (2, 3), "relu2": (2, 3)}


def mlp_width(spec: StepSpec, moe_layer: bool) -> int:
    """The MLP columns one token runs in a dense or an MoE layer, on one GPU."""
    moe = spec.arch.moe
    if moe_layer and moe is not None:
        return (int(moe.top_k) + int(moe.shared_experts)) * int(moe.expert_intermediate)
    return int(spec.arch.intermediate) // spec.parallel.tp


def _layer_kernels(spec: StepSpec) -> list[tuple[str, str, sympy.Expr, sympy.Expr, sympy.Expr]]:
    """``(name, kind, forward bytes, backward bytes, runs per step)`` of the
    per-layer kernels."""
    T, h, tp = spec.tokens, int(spec.arch.hidden), spec.parallel.tp
    sp = T / tp if spec.training else T  # sequence parallelism shards the norms' tokens
    per_layer = int(spec.arch.layers) * spec.layer_weight
    (a, g), (d_qk, _) = local_heads(spec), head_dims(spec)
    rope = int(spec.arch.mla.qk_rope_head_dim) if spec.arch.mla is not None else d_qk
    out: list[tuple[str, str, sympy.Expr, sympy.Expr, sympy.Expr]] = []
    if spec.compile:
        out.append(("norm", "norm", 4 * sp * h * _BF16, 4 * sp * h * _BF16, 2 * per_layer))
    else:
        out.append(("norm", "norm", 2 * sp * h * _BF16, 3 * sp * h * _BF16, 2 * per_layer))
        out.append(("residual", "elementwise", 3 * sp * h * _BF16, 3 * sp * h * _BF16,
                    2 * per_layer))
    fwd, bwd = _ACTIVATION[spec.arch.mlp]
    moe = spec.arch.moe
    moe_layers = 0 if moe is None else int(spec.arch.layers) - int(moe.dense_layers)
    for name, layers, is_moe in (("activation", int(spec.arch.layers) - moe_layers, False),
                                 ("activation_moe", moe_layers, True)):
        if layers:
            f = mlp_width(spec, is_moe)
            out.append((name, "elementwise", fwd * T * f * _BF16, bwd * T * f * _BF16,
                        layers * spec.layer_weight))
    rotary = 2 * T * (a + g) * rope * _BF16
    out.append(("rotary", "elementwise", rotary, rotary, per_layer))
    if moe is not None and moe_layers:
        permute = 4 * T * int(moe.top_k) * h * _BF16
        out.append(("moe_permute", "elementwise", permute, permute,
                    moe_layers * spec.layer_weight))
    return out


def _once_kernels(spec: StepSpec) -> list[tuple[str, str, sympy.Expr, sympy.Expr]]:
    """``(name, kind, forward bytes, backward bytes)`` of the kernels run once per
    micro-batch: embedding, final norm, loss."""
    T, h, tp = spec.tokens, int(spec.arch.hidden), spec.parallel.tp
    sp = T / tp if spec.training else T
    vocab = sympy.Rational(int(spec.arch.vocab), tp)
    out = [("embedding", "elementwise", 2 * sp * h * _BF16, 2 * sp * h * _BF16 + vocab * h * 4),
           ("norm_final", "norm", 2 * sp * h * _BF16, 3 * sp * h * _BF16)]
    if spec.training:
        per_logit = (2, 4) if spec.compile else (14, 14)
        out.append(("loss", "elementwise", per_logit[0] * T * vocab, per_logit[1] * T * vocab))
    return out


def pointwise_terms(spec: StepSpec, efficiency: str = "size",
                    launch_floor: str = "per_kernel") -> list[StepTerm]:
    """The memory-bound kernels on both sides."""
    def pieces(nbytes: sympy.Expr, kind: str) -> tuple[tuple[str, sympy.Expr], ...]:
        return kernel_pieces(nbytes, kind, efficiency=efficiency, launch_floor=launch_floor)

    out = []
    once = [(n, k, f, b, sympy.Integer(spec.microbatches)) for n, k, f, b in _once_kernels(spec)]
    for side in ("baseline", "lowp"):
        for name, kind, fwd, bwd, runs in _layer_kernels(spec) + once:
            base = f"{side}.pointwise.{name}"
            out.append(StepTerm(f"{base}.forward", "pointwise", (pieces(fwd, kind),), runs))
            if not spec.training:
                continue
            out.append(StepTerm(f"{base}.backward", "pointwise", (pieces(bwd, kind),), runs))
            if spec.ac != "none" and name not in ("embedding", "norm_final", "loss"):
                out.append(StepTerm(f"{base}.recompute", "pointwise", (pieces(fwd, kind),),
                                    runs))
    return out


def optimizer_terms(spec: StepSpec, efficiency: str = "size",
                    launch_floor: str = "per_kernel") -> list[StepTerm]:
    """AdamW once per step on the parameters one GPU holds (training only)."""
    if not spec.training:
        return []
    p = spec.parallel
    held = sympy.Rational(int(spec.arch.params), p.dp_shard * p.cp * p.tp * p.pp)
    pieces = kernel_pieces(ADAMW_BYTES * held, "elementwise", efficiency=efficiency,
                           launch_floor=launch_floor)
    return [StepTerm(f"{side}.optimizer.adamw", "optimizer", (pieces,))
            for side in ("baseline", "lowp")]
