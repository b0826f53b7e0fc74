"""The linear layers of a step: each the layer model (``rs.linear``) at its shape.

Every linear of the architecture is priced by ``model.layer.linear`` with the
step's recipe, mode, fusion (``compile``; always in serving, whose engines
quantize an activation in the kernel that produces it), preset and
implementation, at
``M`` = tokens x top_k, its ``K`` and ``N`` split by tensor parallelism
(column-parallel layers split ``N``, row-parallel ones ``K``), over its
local experts (``groups / ep``), weighted by the blocks of one pipeline stage
and the micro-batches.  A linear the filter keeps in bf16 runs its bf16
terms on both sides.  With ``fp8_all_gather`` a converted layer casts its
weight on its shard, before the gather: its weight casts run on ``1/n`` of it.
Full activation checkpointing re-runs each layer's forward: its output GEMM
and its input and weight casts (``.recompute``).

>>> from roofline_sym.steps.spec import StepSpec
>>> terms = linear_terms(StepSpec.toy())
>>> [t.name for t in terms][:2]
['baseline.linear.self_attn.q_proj', 'lowp.linear.self_attn.q_proj']
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import sympy

from .. import symbols as S
from ..model.layer import Linear, linear
from ..model.term import Term
from .parallel import StepInputError
from .pieces import Pieces, StepTerm
from ..architectures import LinearShape
from .spec import StepSpec

__all__ = ["linear_terms", "linear_flops", "local_shape", "layer_models", "COLUMN_PARALLEL",
           "ROW_PARALLEL"]

# Megatron's split: column-parallel layers shard their outputs, row-parallel
# layers their inputs (the names Hugging Face models use)
COLUMN_PARALLEL = frozenset({"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "q_b_proj",
                             "kv_b_proj", "lm_head", "w1", "w3", "c_fc", "qkv_proj",
                             "gate_up_proj"})
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "w2", "c_proj", "out_proj"})
# the terms of a layer's forward pass (re-run by full checkpointing)
_FORWARD = ("gemm.output", "cast.input", "cast.weight", "activation", "workload.input")


@lru_cache(maxsize=64)
def _layer(recipe: str, mode: str, fuse: bool, preset: str, groups: int | None,
           options: tuple[tuple[str, Any], ...]) -> Linear:
    return linear(recipe, mode=mode, fuse=fuse, preset=preset, groups=groups, **dict(options))


def local_shape(shape: LinearShape, spec: StepSpec) -> tuple[int, int, int | None]:
    """``(K, N, groups)`` of ``shape`` on one GPU (tensor- and expert-parallel)."""
    tp, ep = spec.parallel.tp, spec.parallel.ep
    k, n = int(shape.K), int(shape.N)
    leaf = shape.name.rpartition(".")[2]
    groups = int(shape.groups)
    if groups > 1:
        if groups % ep:
            raise StepInputError(f"ep={ep} does not divide the {groups} experts of "
                                 f"{shape.name}")
        return k, n, groups // ep  # experts are split by ep, not tp
    if tp > 1 and leaf in COLUMN_PARALLEL | ROW_PARALLEL:
        split = n if leaf in COLUMN_PARALLEL else k
        if split % tp:
            raise StepInputError(f"tp={tp} does not divide {shape.name}'s "
                                 f"{'N' if leaf in COLUMN_PARALLEL else 'K'} = {split}")
        k, n = (k, n // tp) if leaf in COLUMN_PARALLEL else (k // tp, n)
    return k, n, None


def _rows(shape: LinearShape, spec: StepSpec) -> sympy.Expr:
    """``M`` of the layer's GEMMs: tokens x top_k (a serving step's output layer
    computes the last position's logits only)."""
    if shape.part == "output" and spec.mode == "prefill":
        return S.LOCAL_BATCH
    return spec.tokens * int(shape.top_k)


def _weight(shape: LinearShape, spec: StepSpec) -> sympy.Expr:
    """Runs per step on one GPU: the blocks of one stage times the micro-batches;
    the output layer, on the last stage, once per micro-batch."""
    if shape.part == "output":
        return sympy.Integer(spec.microbatches)
    return int(shape.blocks) * spec.layer_weight


def _is_forward(t: Term) -> bool:
    name = ".".join(t.id.parts[1:])
    return any(name == f or name.startswith(f + ".") for f in _FORWARD)


def _pieces(t: Term, subs: dict[sympy.Basic, sympy.Expr], factor: sympy.Expr) -> Pieces:
    return tuple((r, factor * e.xreplace(subs)) for r, e in t.pieces)


def _model(spec: StepSpec, groups: int | None) -> Linear:
    mode = "training" if spec.training else "inference"
    options = tuple(sorted({"implementation": spec.implementation, **spec.options}.items()))
    # a serving engine quantizes activations in the kernel that produces them
    fuse = spec.compile or not spec.training
    return _layer(spec.recipe, mode, fuse, spec.preset, groups, options)


def layer_models(spec: StepSpec) -> list[Linear]:
    """The layer models the step's linears use (one per expert count)."""
    found = {local_shape(shape, spec)[2] for shape in spec.arch.linears()}
    return [_model(spec, g) for g in sorted(found, key=lambda g: g or 0)]


def linear_terms(spec: StepSpec) -> list[StepTerm]:
    """Every linear's terms on both sides (and their re-run under full checkpointing)."""
    out: list[StepTerm] = []
    for shape in spec.arch.linears():
        k, n, groups = local_shape(shape, spec)
        layer = _model(spec, groups)
        subs = {S.M: _rows(shape, spec), S.K: sympy.Integer(k), S.N: sympy.Integer(n)}
        weight = _weight(shape, spec)
        converted = spec.convert(shape)
        gather = spec.fp8_all_gather and converted and spec.parallel.dp_shard > 1
        for side in ("baseline", "lowp"):
            source = side if converted else "baseline"
            terms = [t for t in layer.terms if t.side == source]
            # a shard's weight cast: 1/n of the weight, before the gather
            parts = tuple(_pieces(t, subs, sympy.Rational(1, spec.parallel.dp_shard)
                                  if gather and side == "lowp" and t.id.role == "weight"
                                  and t.id.kind == "cast" else sympy.Integer(1))
                          for t in terms)
            out.append(StepTerm(f"{side}.linear.{shape.name}", "linear", parts, weight))
            if spec.ac == "full" and spec.training:
                again = tuple(p for t, p in zip(terms, parts) if _is_forward(t))
                out.append(StepTerm(f"{side}.linear.{shape.name}.recompute", "linear", again,
                                    weight))
    return out


def linear_flops(spec: StepSpec) -> sympy.Expr:
    """The linears' FLOPs per step on one GPU (model FLOPs: no re-run)."""
    passes = 3 if spec.training else 1
    total = sympy.Integer(0)
    for shape in spec.arch.linears():
        k, n, _ = local_shape(shape, spec)
        total += 2 * passes * _rows(shape, spec) * k * n * _weight(shape, spec)
    return total
