"""The whole-step model: golden values derived by hand, an independent FLOP
count (Megatron's), properties over sequence length, batch, layers and
checkpointing, and bad input."""

from dataclasses import replace

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.steps import Parallelism, StepInputError
from roofline_sym.steps.attention import attention_flops
from roofline_sym.steps.communication import gathered_bytes
from roofline_sym.steps.linears import linear_flops
from roofline_sym.steps.pointwise import ADAMW_BYTES
from roofline_sym.architectures import Architecture, MoE, architecture
from roofline_sym.steps.spec import StepSpec


# Llama 3 8B (Meta's config.json): 8.03e9 parameters
LLAMA3_8B = architecture("llama3-8b")
LLAMA3_70B = architecture("llama3-70b")
# a GPT with a 4h GELU MLP and no GQA: Megatron's FLOP count applies
GPT = Architecture("gpt", hidden=2048, layers=24, heads=16, kv_heads=16, head_dim=128,
                   mlp="gelu", intermediate=8192, vocab=50304, tied_embeddings=False,
                   norm="layernorm")


def test_llama3_8b_has_its_parameter_count():
    assert LLAMA3_8B.params == 8_030_261_248


def test_attention_flops_of_llama3_8b_at_8192():
    # forward, causal, per layer: half of 4 B S^2 a d = 2 * 8192^2 * 32 * 128
    #   = 549,755,813,888; backward 2.5x; 32 layers: 3.5 * 32 * 549,755,813,888
    spec = StepSpec(LLAMA3_8B, "tensorwise")
    flops = attention_flops(spec).subs({S.SEQ_LEN: 8192, S.LOCAL_BATCH: 1})
    assert flops == 61_572_651_155_456


def test_linear_flops_match_megatron_and_attention_is_its_causal_share():
    # Korthikanti et al. 2022 model FLOPs (no recomputation) of a GPT with a 4h MLP:
    # 72 B s L h^2 (1 + s/(6h) + V/(12 L h)); its s/(6h) term is full (unmasked)
    # attention with a 2x backward: 12 B s^2 L h.  Causal with a 2.5x backward:
    # (1 + 2.5) / (1 + 2) / 2 of it = 7 B s^2 L h.
    B, s, L, h, V = S.LOCAL_BATCH, S.SEQ_LEN, GPT.layers, GPT.hidden, GPT.vocab
    spec = StepSpec(GPT, "tensorwise")
    megatron = 72 * B * s * L * h ** 2 * (1 + s / (6 * h) + sympy.Rational(V, 12 * L * h))
    attention_part = 72 * B * s * L * h ** 2 * s / (6 * h)
    assert sympy.expand(linear_flops(spec) - (megatron - attention_part)) == 0
    assert sympy.expand(attention_flops(spec) - sympy.Rational(7, 12) * attention_part) == 0


def test_adamw_and_fsdp_bytes_by_hand():
    spec = StepSpec(LLAMA3_8B, "tensorwise", parallel=Parallelism.of(gpus=8))
    step = rs.step(LLAMA3_8B, "tensorwise", gpus=8)
    # AdamW: fp32 weight, gradient, two moments read (16 B), weight and moments written
    # (12 B): 28 bytes per parameter on the 1/8 each GPU holds
    assert ADAMW_BYTES == 28
    optimizer = step.breakdown["baseline.optimizer.adamw"]
    assert optimizer.has(sympy.Rational(28 * LLAMA3_8B.params, 8))
    # one all-gather: bf16 weights, 7/8 of them arrive over the link
    assert gathered_bytes(spec, "baseline") == 2 * LLAMA3_8B.params
    gather = step.breakdown["baseline.comm.fsdp.all_gather"]
    assert gather.has(sympy.Rational(7, 8) * 2 * LLAMA3_8B.params / (
        S.link_bandwidth("scale_up") * S.link_efficiency("scale_up")))


def test_fp8_all_gather_sends_converted_weights_in_one_byte():
    spec = StepSpec(LLAMA3_8B, "tensorwise", parallel=Parallelism.of(gpus=8),
                    fp8_all_gather=True)
    converted = sum(s.K * s.N * s.blocks for s in LLAMA3_8B.linears(False))
    assert gathered_bytes(spec, "lowp") == 2 * LLAMA3_8B.params - converted
    assert gathered_bytes(spec, "baseline") == 2 * LLAMA3_8B.params


def test_decode_reads_the_kv_cache_once():
    # KV cache of Llama 3 8B per layer: 2 (K, V) * 8 heads * 128 * context * B * bytes
    step = rs.step(LLAMA3_8B, "tensorwise", mode="decode", context=8192, kv_cache="fp8")
    core = {side: step.breakdown[f"{side}.attention.core.forward"] for side in ("baseline",
                                                                                 "lowp")}
    per_layer = 2 * 8 * 128 * 8192
    for side, nbytes in (("baseline", 2), ("lowp", 1)):
        memory = core[side].subs({S.LOCAL_BATCH: 1, S.mem_bw(): 1, S.mem_efficiency(): 1})
        # 32 layers; the query and output (32 heads * 256 elements in bf16) ride along
        weight, core_max = memory.as_coeff_Mul()
        assert weight == 32
        assert per_layer * nbytes + 32 * 256 * 2 in core_max.args


@pytest.fixture(scope="module")
def bound():
    return {"h100": rs.step(LLAMA3_8B, "tensorwise", gpus=8).on("h100"),
            "h100-1": rs.step(LLAMA3_8B, "tensorwise").on("h100"),
            "b200": rs.step(LLAMA3_8B, "rowwise", gpus=16, tp=2).on("b200")}


def _linear_speedup(step, S_, B_):
    out = step.evaluate(S_, B_, ["baseline_linear_s", "lowp_linear_s"])
    return out["baseline_linear_s"] / out["lowp_linear_s"]


@given(st.sampled_from(["h100", "h100-1", "b200"]), st.integers(64, 65536),
       st.integers(1, 16))
def test_step_speedup_lies_between_one_and_the_linears(bound, which, seq, batch):
    step = bound[which]
    speedup = float(step.evaluate(seq, batch, ["speedup"])["speedup"])
    linear = float(_linear_speedup(step, seq, batch))
    lo, hi = min(1.0, linear), max(1.0, linear)
    assert lo * (1 - 1e-12) <= speedup <= hi * (1 + 1e-12)


@given(st.sampled_from(["h100", "h100-1", "b200"]), st.integers(64, 32768),
       st.integers(1, 8), st.integers(1, 4096))
def test_step_time_grows_with_sequence_length(bound, which, seq, batch, more):
    out = bound[which].evaluate(np.array([seq, seq + more]), batch,
                                ["baseline_step_s", "lowp_step_s"])
    for side in ("baseline", "lowp"):
        assert out[f"{side}_step_s"][1] > out[f"{side}_step_s"][0]


@pytest.mark.parametrize("gpus", [1, 8, 64])
def test_step_time_grows_with_layers(gpus):
    seqs = np.array([512, 2048, 8192, 32768])
    times = [rs.step(replace(GPT, layers=L), "tensorwise", gpus=gpus).on("h100")
             .evaluate(seqs, 2, ["baseline_step_s", "lowp_step_s"]) for L in (12, 13)]
    for side in ("baseline_step_s", "lowp_step_s"):
        assert (times[1][side] > times[0][side]).all()


@pytest.mark.parametrize("gpus,recipe", [(1, "tensorwise"), (8, "rowwise"), (64, "tensorwise")])
def test_checkpointing_never_makes_a_step_faster(gpus, recipe):
    seqs = np.array([256, 2048, 8192, 65536])
    out = {ac: rs.step(GPT, recipe, gpus=gpus, ac=ac).on("h100").evaluate(seqs, 1)
           for ac in ("none", "selective", "full")}
    for side in ("baseline_step_s", "lowp_step_s"):
        assert (out["none"][side] <= out["selective"][side]).all()
        assert (out["selective"][side] < out["full"][side]).all()


def test_evaluate_matches_the_expressions(bound):
    step = bound["h100"]
    out = step.evaluate([1024, 8192], [4, 1])
    for name in ("baseline_step_s", "lowp_step_s", "speedup", "mfu_lowp"):
        for i, (s_, b_) in enumerate(((1024, 4), (8192, 1))):
            exact = step.expressions[name].subs({S.SEQ_LEN: s_, S.LOCAL_BATCH: b_})
            assert float(out[name][i]) == pytest.approx(float(exact), rel=1e-12)


def test_groups_add_up_to_the_step(bound):
    for side in ("baseline", "lowp"):
        shares = bound["h100"].groups(side, seq_len=8192, local_batch=1)
        assert sum(shares.values()) == pytest.approx(1.0, rel=1e-12)
        assert shares["linear"] > shares["attention"] > 0


def test_breakdown_names():
    step = rs.step(LLAMA3_8B, "tensorwise", gpus=8, fp8_all_gather=True, ac="full")
    names = set(step.breakdown)
    assert {"baseline.attention.core.backward", "lowp.comm.fsdp.all_gather",
            "lowp.linear.mlp.gate_proj", "baseline.linear.lm_head",
            "lowp.attention.core.recompute", "baseline.optimizer.adamw"} <= names
    # the output layer stays in bf16: its terms are the baseline's on both sides
    assert step.breakdown["lowp.linear.lm_head"] == step.breakdown["baseline.linear.lm_head"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(gpus=8, tp=3), "does not divide gpus=8"),
    (dict(gpus=8, dp_shard=4), "is not gpus=8"),
    (dict(gpus=-1), "gpus"),
    (dict(ac="some"), "ac must be one of"),
    (dict(mode="decode", ac="full"), "training options"),
    (dict(context=100), "context"),
    (dict(recipe="rowwise", fp8_all_gather=True, gpus=8), "not per-tensor"),
    (dict(gpus=8, tp=16, dp_shard=1), "is not gpus=8"),
])
def test_bad_input_is_named(kwargs, message):
    kwargs = {"recipe": "tensorwise", **kwargs}
    with pytest.raises(StepInputError, match=message):
        rs.step(LLAMA3_8B, kwargs.pop("recipe"), **kwargs)


def test_unknown_links_are_an_error_naming_the_gpu():
    rs.step(LLAMA3_8B, "tensorwise").on("gaudi3")  # one GPU needs no links
    with pytest.raises(StepInputError, match="Gaudi 3"):
        rs.step(LLAMA3_8B, "tensorwise", gpus=8).on("gaudi3")


@pytest.mark.parametrize("seq,batch,message", [(-1, 1, "seq_len"), (8192.5, 1, "seq_len"),
                                               (8192, 0, "local_batch")])
def test_bad_points_are_named(bound, seq, batch, message):
    with pytest.raises(ValueError, match=message):
        bound["h100"].evaluate(seq, batch)


# -- serving steps


@pytest.fixture(scope="module")
def serving():
    return {(mode, kv): rs.step(LLAMA3_8B, "tensorwise_static", mode=mode, kv_cache=kv).on("h100")
            for mode in ("prefill", "decode") for kv in ("bf16", "fp8")}


@given(st.integers(16, 65536), st.integers(1, 256), st.integers(1, 4096))
def test_decode_time_grows_with_context_and_an_fp8_cache_never_slows_it(serving, ctx, batch,
                                                                        more):
    bf16, fp8 = serving[("decode", "bf16")], serving[("decode", "fp8")]
    # a short cache is read at the kernel's floor; from 4096 tokens on its bytes count
    # (equal up to the last bit where both sides sit at the floor)
    grows = (lambda d: d > 0) if ctx >= 4096 else (lambda d: d >= -1e-15)
    out = bf16.evaluate(np.array([ctx, ctx + more]), batch, ["lowp_step_s", "baseline_step_s"])
    assert grows(np.diff(out["lowp_step_s"])).all() and grows(np.diff(out["baseline_step_s"])).all()
    both = [m.evaluate(ctx, batch, ["lowp_step_s", "baseline_step_s"]) for m in (bf16, fp8)]
    assert grows(both[0]["lowp_step_s"] - both[1]["lowp_step_s"])
    # a bf16 cache on the baseline side either way (equal up to rounding)
    assert float(both[1]["baseline_step_s"]) == pytest.approx(float(both[0]["baseline_step_s"]),
                                                              rel=1e-14)


@given(st.integers(16, 32768), st.integers(1, 64))
def test_prefill_speedup_lies_between_one_and_the_linears(serving, seq, batch):
    step = serving[("prefill", "bf16")]
    speedup = float(step.evaluate(seq, batch, ["speedup"])["speedup"])
    linear = float(_linear_speedup(step, seq, batch))
    assert min(1.0, linear) * (1 - 1e-12) <= speedup <= max(1.0, linear) * (1 + 1e-12)


def _bytes_only(expr):
    """``expr`` with unit bandwidth, no fixed times and unbounded FLOP rates: bytes."""
    values = {}
    for sym in expr.free_symbols - {S.SEQ_LEN, S.LOCAL_BATCH}:
        name = str(sym)
        values[sym] = (10 ** 30 if name.startswith("P_") else 0 if name.startswith("t")
                       else 1)
    return expr.xreplace(values)


def test_decode_reads_each_weight_once_per_step():
    # one token per sequence (B = 1): mlp.up_proj's GEMM reads its 4096 x 14336 weight
    # once per layer (32 layers), in bf16 on the baseline side: with the input row
    # and the output row, 2 * (4096 + 4096 * 14336 + 14336) bytes, and the activation
    # before it reads and writes the bf16 input row (4 * 4096 bytes), which the
    # low-precision side's cast absorbs; that side reads the weight in fp8, one byte,
    # plus its scales and the input's cast
    step = rs.step(LLAMA3_8B, "tensorwise_static", mode="decode")
    up = {side: _bytes_only(step.breakdown[f"{side}.linear.mlp.up_proj"]).subs(
        S.LOCAL_BATCH, 1) for side in ("baseline", "lowp")}
    assert up["baseline"] == 32 * (2 * (4096 + 4096 * 14336 + 14336) + 4 * 4096)
    assert 32 * 4096 * 14336 < up["lowp"] < 32 * (4096 * 14336 + 10 ** 5)


# -- a mixture of experts


MIXTRAL_LIKE = replace(LLAMA3_8B, name="moe", layers=8, vocab=32000,
                       moe=MoE(experts=8, top_k=2, shared_experts=0, expert_intermediate=14336))


def test_a_mixture_of_experts_step_runs_grouped_gemms_and_all_to_all():
    step = rs.step(MIXTRAL_LIKE, "tensorwise", gpus=8, ep=8)
    names = set(step.breakdown)
    assert {"lowp.linear.mlp.experts.up_proj", "lowp.comm.ep.all_to_all",
            "baseline.pointwise.moe_permute.forward"} <= names
    # the router stays in bf16
    assert step.breakdown["lowp.linear.mlp.gate"] == step.breakdown["baseline.linear.mlp.gate"]
    out = step.on("h100").evaluate([2048, 8192], 1)
    assert (out["speedup"] > 1).all() and (out["mfu_baseline"] < 1).all()
    with pytest.raises(StepInputError, match="ep=3"):
        rs.step(MIXTRAL_LIKE, "tensorwise", gpus=6, ep=3)


def test_routed_experts_are_gathered_over_what_expert_parallelism_leaves():
    # 8 layers x 8 experts x 3 x 4096 x 14336 routed weights; ep=2 holds half of them on
    # each GPU, all-gathered over dp_shard / ep = 4; ep=8 holds one expert each: no gather
    routed = 8 * 8 * 3 * 4096 * 14336
    two = StepSpec(MIXTRAL_LIKE, "tensorwise", parallel=Parallelism.of(gpus=8, ep=2))
    assert gathered_bytes(two, "baseline", experts=True) == 2 * routed // 2
    assert gathered_bytes(two, "baseline") == 2 * (MIXTRAL_LIKE.params - routed)
    for ep, parts in ((2, 2), (8, 1)):
        step = rs.step(MIXTRAL_LIKE, "tensorwise", gpus=8, ep=ep)
        gather = next(t for t in step.terms if t.name == "baseline.comm.fsdp.all_gather")
        assert len(gather.parts) == parts


# -- break-even and sensitivity


def test_breakeven_along_sequence_length_and_batch(bound):
    step = bound["h100"]
    be = rs.breakeven(step, solve_for="S", local_batch=1)
    (root,) = be.roots.values
    out = step.compiled.evaluate(np.array([root, 0.5 * root, 2 * root]), 1, 1, {},
                                 outputs=("baseline_step_s", "lowp_step_s"))
    base, lowp = out["baseline_step_s"], out["lowp_step_s"]
    assert base[0] == pytest.approx(lowp[0], rel=1e-12)
    assert base[1] < lowp[1] and base[2] > lowp[2]  # faster beyond the root only
    assert be.faster.contains(2 * root) and not be.faster.contains(root / 2)
    by_batch = rs.breakeven(step, solve_for="B", seq_len=1024)
    assert by_batch.roots.values and by_batch.fixed == {"seq_len": 1024.0}
    with pytest.raises(StepInputError, match="bind a GPU"):
        rs.breakeven(step.unbound, solve_for="S", local_batch=1)
    with pytest.raises(StepInputError, match="local_batch="):
        rs.breakeven(step, solve_for="S")


def test_sensitivity_is_invariant_to_the_unit_of_time(bound):
    # every time in the model is work over a rate or a fixed time: multiplying every
    # rate (peaks, bandwidths) by c and dividing every fixed time by c divides both
    # step times by c, so the speedup's elasticities to rates and times cancel
    e = rs.sensitivity(bound["h100"], at=(8192, 2))
    rates = sum(v for x, v in e.items() if str(x).startswith(("P_", "BW")))
    times = sum(v for x, v in e.items() if str(x).startswith(("t0_", "t_")))
    assert rates - times == pytest.approx(0, abs=1e-6)
    assert e[S.peak_flops("fp8")] > 0 > e[S.peak_flops("bf16")]
    with pytest.raises(StepInputError, match="at=.seq_len, local_batch."):
        rs.sensitivity(bound["h100"])


def test_latex_names_every_group_and_term():
    step = rs.step(LLAMA3_8B, "tensorwise", gpus=8, pp=2)
    tex = rs.latex(step)
    assert tex.startswith("\\begin{aligned}") and tex == step.latex()
    # the bubble of 2 stages and 2 micro-batches: (pp - 1) / m = 1/2
    assert r"\left(1 + \frac{1}{2}\right)" in tex
    for side in ("bf16", "fp8"):
        for group in ("linear", "attention", "pointwise", "optimizer", "comm", "fixed"):
            assert rf"T^{{\mathrm{{{group}}}}}_{{\mathrm{{{side}}}}} &=" in tex
    # 16 blocks per stage, 2 micro-batches: each block's terms run 32 times per step
    assert r"32 t^{\mathrm{backward}}_{\mathrm{attention.core},\mathrm{fp8}}" in tex
    full = step.latex(definitions=True)
    assert len(full) > len(tex) and r"\mathrm{BW}" in full
