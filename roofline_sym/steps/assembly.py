"""Every term of a step, from its spec: the linears, the attention core, the
memory-bound kernels, the optimizer, the collectives and the fixed time, on
both sides, and the shared numbers its outputs divide by.

>>> from roofline_sym.steps.spec import StepSpec
>>> terms, shared = assemble(StepSpec.toy())
>>> sorted({t.group for t in terms})
['attention', 'fixed', 'linear', 'optimizer', 'pointwise']
>>> shared["tokens"]
B*S
"""

from __future__ import annotations

import sympy

from .. import symbols as S
from ..model.presets import options
from .attention import attention_flops, attention_terms
from .communication import communication_terms
from .linears import linear_flops, linear_terms
from .pieces import StepTerm
from .pointwise import optimizer_terms, pointwise_terms
from .spec import StepSpec

__all__ = ["assemble", "tokens_per_step"]


def tokens_per_step(spec: StepSpec) -> sympy.Expr:
    """Tokens one GPU's step advances: a data-parallel rank's ``m B S`` shared by
    the ``tp cp pp`` GPUs that hold it (decode: one per sequence)."""
    p = spec.parallel
    per_sequence = 1 if spec.mode == "decode" else S.SEQ_LEN
    return spec.microbatches * S.LOCAL_BATCH * per_sequence / (p.tp * p.cp * p.pp)


def assemble(spec: StepSpec) -> tuple[list[StepTerm], dict[str, sympy.Expr]]:
    """``(terms, shared)``: every term, and the overlap fraction, the tokens per
    GPU per step and the ideal time (model FLOPs at the bf16 peak)."""
    opts = options(spec.preset, **dict(spec.options))
    terms = linear_terms(spec) + attention_terms(spec)
    terms += pointwise_terms(spec, opts.efficiency, opts.launch_floor)
    terms += optimizer_terms(spec, opts.efficiency, opts.launch_floor)
    terms += communication_terms(spec)
    if spec.training:
        terms += [StepTerm(f"{side}.fixed.step", "fixed", ((("launch", S.step_fixed_time()),),))
                  for side in ("baseline", "lowp")]
    flops = linear_flops(spec) + attention_flops(spec)
    shared = {"overlap": S.overlap_fraction(), "tokens": tokens_per_step(spec),
              "ideal": flops / S.peak_flops("bf16")}
    return terms, shared
