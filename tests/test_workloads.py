"""Workloads: what surrounds the layer, priced on both sides; hand-derived bytes."""

import pytest
import sympy

import roofline_sym as rs
from roofline_sym import symbols as S

M, K, N = rs.M, rs.K, rs.N


def _bytes(m, side, kind="workload"):
    return {t.id.role + "." + t.id.kernel: t.work.bytes for t in m.terms
            if t.side == side and t.id.kind == kind}


def test_ln_linear_sigmoid_kernels_are_on_both_sides():
    # norm: read x, write y (2 + 2 B); its backward reads dy and x, writes dx
    # (6 B); sigmoid likewise on the output; gradient accumulation reads the
    # old and new gradient and writes the sum (6 B) for the input and weight
    want = {"input.norm_fwd": 4 * M * K, "input.norm_bwd": 6 * M * K,
            "output.sigmoid_fwd": 4 * M * N, "output.sigmoid_bwd": 6 * M * N,
            "input.grad_accumulate": 6 * M * K, "weight.grad_accumulate": 6 * K * N}
    m = rs.linear("tensorwise", workload="ln-linear-sigmoid")
    assert _bytes(m, "baseline") == want == _bytes(m, "lowp")
    kinds = {t.id.kernel: t.work.kind for t in m.terms if t.id.kind == "workload"}
    assert kinds["norm_fwd"] == "norm" and kinds["sigmoid_bwd"] == "elementwise"
    assert m.fuse  # the casts fuse with the norm and the sigmoid's backward


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "mxfp8_cublas"])
def test_surrounding_kernels_do_not_move_the_break_even(recipe):
    # the same kernels on both sides cancel in baseline - lowp: the root is the
    # fused linear layer's, exactly
    gpu = "b200" if recipe.startswith("mx") else "h100"
    plain = rs.breakeven(rs.linear(recipe, fuse=True).on(gpu), along="cube")
    ctx = rs.breakeven(rs.linear(recipe, workload="ln-linear-sigmoid").on(gpu), along="cube")
    assert plain.roots == ctx.roots and plain.roots


def test_gemm_workload_is_the_gemm_ratio():
    hw = rs.Hardware("Toy", peak_flops={"bf16": 1e15, "fp8": 2e15}, mem_bw=3e12,
                     gemm_efficiency={"bf16": 0.8, "fp8": 0.7}, mem_efficiency=0.9,
                     launch_overhead=2e-6, gemm_fixed_s={"bf16": 4e-6, "fp8_tensorwise": 5e-6})
    m = rs.linear("tensorwise", workload="gemm").on(hw)
    assert not [t for t in m.terms if t.id.kind == "cast"]
    # compute-bound 8192^3, each GEMM its fixed time plus its FLOPs at the rate:
    # (4e-6 + 2 x 8192^3 / 0.8e15) / (5e-6 + 2 x 8192^3 / 1.4e15)
    f = 2 * 8192.0**3
    want = (4e-6 + f / 0.8e15) / (5e-6 + f / 1.4e15)
    assert float(m.evaluate(8192, 8192, 8192)["speedup"]) == pytest.approx(want, rel=1e-12)
    # and at a tiny shape, the ratio of the fixed times (both above the launch floor)
    assert float(m.evaluate(16, 16, 16)["speedup"]) == pytest.approx(0.8, rel=1e-3)


def test_quant_both_casts_the_stored_weight_too():
    m = rs.linear("rowwise", mode="inference", workload="gemm-with-quant-both")
    casts = _bytes(m, "lowp", "cast")
    # rowwise cast: read bf16, write fp8 (3 B) and an fp32 scale per row; the
    # stored weight is N x K, one scale per output feature
    assert casts == {"input.cast": 3 * M * K + 4 * M, "weight.cast": 3 * N * K + 4 * N}


def test_relu_linear_is_the_fused_inference_layer():
    a = rs.linear("mxfp8", mode="inference", workload="relu-linear")
    b = rs.linear("mxfp8", mode="inference", fuse=True)
    assert a.breakdown == b.breakdown
    assert "baseline.activation.input" in a.breakdown


def test_workload_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"unknown workload 'ln-linear-sigmod' \(did you mean "
                                         r"'ln-linear-sigmoid'\?\); valid: linear, "):
        rs.linear("rowwise", workload="ln-linear-sigmod")
    with pytest.raises(ValueError, match="training only, not inference"):
        rs.linear("rowwise", mode="inference", workload="ln-linear-sigmoid")
    with pytest.raises(ValueError, match="fuses its casts; drop fuse=False"):
        rs.linear("rowwise", workload="ln-linear-sigmoid", fuse=False)
    with pytest.raises(TypeError, match="workload must be a name"):
        rs.linear("rowwise", workload=3)


def test_presets_without_workload_kernels_only_take_the_fusion():
    # torchao's model of its own benchmark: fusion modeling on, nothing else
    a = rs.linear("rowwise", preset="torchao", workload="ln-linear-sigmoid")
    b = rs.linear("rowwise", preset="torchao", fuse=True)
    assert a.breakdown == b.breakdown


def test_size_dependent_pieces_reduce_to_the_flat_ones_without_sizes():
    # no fixed times, every class at eta_mem, no scaling factor: the flat model
    flat = rs.linear("mxfp8_cublas", efficiency="flat").on("b200")
    hw = rs.hardware("b200").replace(gemm_fixed_s={c: 0 for c in ("bf16", "fp8_mx")},
                                      kernel_fixed_s={k: 0 for k in S.KERNEL_KINDS},
                                      kernel_efficiency={}, scaling_efficiency={})
    sized = rs.linear("mxfp8_cublas").on(hw)
    for a, b in zip(flat.terms, sized.terms):
        assert a.id == b.id
        assert [sympy.simplify(x - y) for (_, x), (_, y) in zip(a.pieces, b.pieces)] == [
            0] * len(a.pieces)
    assert S.kernel_efficiency("cast") in rs.linear("rowwise").free_hardware_symbols
