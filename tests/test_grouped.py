"""Grouped GEMMs (mixture of experts): ``linear(..., groups=G)``.

Preset "torchao" reproduces torchao's MoE roofline
(benchmarks/prototype/moe_training/mxfp8/roofline_unified.py,
``RooflineModel.compute_speedup(M, K, N, G)``): against golden values, against
the same arithmetic written out here, and, where the reference copy sits
beside the repository (../shared/reference), against its own class.
"""

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym.model.workloads import workload

REFERENCE = (Path(__file__).resolve().parents[1] / ".." / "shared" / "reference"
             / "torchao_moe_roofline_unified.py")

GRID = [(M, K, N, G) for G in (1, 8, 16, 64) for M in (8192, 16384, 32768, 65536, 131072)
        for K, N in ((7168, 2048), (2048, 7168), (5120, 8192), (8192, 5120), (4096, 1536))]

# (M, K, N, G): speedup, bf16 ms, mxfp8 ms, from RooflineModel("NVIDIA B200")
GOLDEN = {
    (16384, 7168, 2048, 8): (1.2761009146816082, 0.8222843370119658, 0.6443725002870394),
    (131072, 5120, 8192, 64): (1.4203595727673877, 18.795070560273505, 13.232614417244875),
    (8192, 2048, 7168, 1): (1.4458478805163728, 0.4111421685059829, 0.2843605984048244),
    (65536, 4096, 1536, 16): (1.264440692254066, 1.4096302920205128, 1.1148251560202664),
}

# torchao 0.18's B200 (gpu_name_to_specs["NVIDIA B200"])
B200 = dict(bf16=2.25e15, fp8=4.5e15, gemm=0.78, bw=7.67232e12, mem=0.92)


def _by_hand(M, K, N, G):
    """torchao's MoE roofline, written out: (speedup, bf16 s, mxfp8 s)."""
    bf16 = 6 * M * K * N / (B200["bf16"] * B200["gemm"])
    gemms = 6 * M * K * N / (B200["fp8"] * B200["gemm"])
    cast = lambda rows, cols: 3 * rows * cols + rows * (cols // 32)  # noqa: E731
    nbytes = (cast(M, K) + cast(K, N) * G  # forward: input, weight (G, K, N)
              + cast(M, N) + cast(N, K) * G  # grad_input: grad_output, weight again
              + cast(N, M) + 3 * M * K + (M // 32) * K  # grad_weight: both along M
              + 2 * M * (K // 32) + 2 * M * (N // 32)  # M-groups scale re-layouts
              + 2 * N * (M // 32) + 2 * K * (M // 32))  # K-groups scale re-layouts
    lowp = gemms + nbytes / (B200["bw"] * B200["mem"])
    return bf16 / lowp, bf16, lowp


@pytest.fixture(scope="module")
def torchao_moe():
    return {G: rs.linear("mxfp8_cublas", preset="torchao", groups=G).on("NVIDIA B200")
            for G in (1, 8, 16, 64)}


def _ours(models, M, K, N, G):
    out = models[G].evaluate(M=M, K=K, N=N)
    return float(out["speedup"]), float(out["baseline_time"]), float(out["lowp_time"])


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_torchao_moe_golden_values(torchao_moe, case):
    speedup, bf16_ms, lowp_ms = GOLDEN[case]
    ours = _ours(torchao_moe, *case)
    np.testing.assert_allclose(ours, (speedup, bf16_ms / 1e3, lowp_ms / 1e3), rtol=1e-12)


def test_torchao_moe_equals_its_arithmetic_over_the_grid(torchao_moe):
    err = max(abs(a / b - 1) for case in GRID
              for a, b in zip(_ours(torchao_moe, *case), _by_hand(*case)))
    assert err < 1e-12, err


def _reference_model():
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} is absent")
    roofline_utils = pytest.importorskip("torchao.testing.training.roofline_utils")
    # the file imports CUDA-only kernels at the top: take its RooflineModel alone
    tree = ast.parse(REFERENCE.read_text())
    cls = next(n for n in tree.body
               if isinstance(n, ast.ClassDef) and n.name == "RooflineModel")
    ns = {"gpu_name_to_specs": roofline_utils.gpu_name_to_specs}
    exec(compile(ast.Module([cls], []), str(REFERENCE), "exec"), ns)
    return ns["RooflineModel"]("NVIDIA B200")


def test_torchao_moe_parity_with_the_reference(torchao_moe):
    ref = _reference_model()
    worst = 0.0
    for case in GRID:
        r = ref.compute_speedup(*case)
        theirs = (r["roofline_speedup"], r["bf16_roofline_time_ms"] / 1e3,
                  r["mxfp8_roofline_total_time_ms"] / 1e3)
        worst = max(worst, *(abs(a / b - 1) for a, b in zip(_ours(torchao_moe, *case), theirs)))
    assert worst < 1e-9, worst
    for case, golden in GOLDEN.items():  # the golden values are the reference's
        r = ref.compute_speedup(*case)
        assert r["roofline_speedup"] == pytest.approx(golden[0], rel=1e-12)


def test_torchao_moe_workload_changes_nothing_in_preset_torchao():
    a = rs.linear("mxfp8_cublas", preset="torchao", groups=8)
    b = rs.linear("mxfp8_cublas", preset="torchao", groups=8, workload="grouped-mm-fwd-bwd")
    assert a.speedup == b.speedup


@pytest.mark.parametrize("preset,recipe,mode", [
    ("default", "mxfp8_cublas", "training"), ("default", "rowwise", "training"),
    ("default", "tensorwise", "training"), ("default", "blockwise", "training"),
    ("default", "nvfp4", "inference"), ("default", "rowwise", "inference"),
    ("seed", "dynamic", "training"), ("default", "mxfp8", "inference"),
])
def test_one_group_is_the_dense_layer(preset, recipe, mode):
    # (preset "torchao" prices any grouped layer with torchao's MoE roofline,
    # which at G = 1 is not torchao's dense roofline: see the golden G = 1 case)
    dense = rs.linear(recipe, mode=mode, preset=preset)
    one = rs.linear(recipe, mode=mode, preset=preset, groups=1)
    assert [t.expr for t in one.terms] == [t.expr for t in dense.terms]
    gpu = "b200" if preset == "default" else "NVIDIA B200" if preset == "torchao" else "h100"
    shapes = dict(M=np.array([512.0, 8192, 131072]), K=np.array([1024.0, 7168, 5120]),
                  N=np.array([2048.0, 2048, 8192]))
    a, b = dense.on(gpu).evaluate(**shapes), one.on(gpu).evaluate(**shapes)
    for key in rs.OUTPUTS:
        np.testing.assert_allclose(b[key], a[key], rtol=1e-12)


def test_one_group_on_the_grouped_workload_differs_only_by_its_kernels():
    dense = rs.linear("mxfp8_cublas", groups=1, workload="grouped-mm-fwd-bwd")
    names = {t.name for t in dense.terms}
    assert not {n for n in names if n.startswith("lowp.cast.weight.swizzle")}
    assert "lowp.cast.input.swizzle_cast_dim0" in names
    assert {"baseline.workload.output.mse_loss_fwd",
            "baseline.workload.weight.grad_accumulate"} <= names


def test_the_weight_is_held_once_per_expert():
    M, K, N = rs.M, rs.K, rs.N
    dense = rs.linear("mxfp8_cublas", workload="grouped-mm-fwd-bwd")
    moe = rs.linear("mxfp8_cublas", groups=16, workload="grouped-mm-fwd-bwd")
    a, b = dense.breakdown, moe.breakdown
    # the GEMMs: same FLOPs; 16 weights read (forward, grad_input), 16 written (grad_weight)
    for name in ("baseline.gemm.output", "lowp.gemm.grad_weight"):
        fa = next(t.work for t in dense.terms if t.name == name)
        fb = next(t.work for t in moe.terms if t.name == name)
        assert fa.flops == fb.flops == 2 * M * K * N
    bf16_out = next(t.work for t in moe.terms if t.name == "baseline.gemm.output")
    assert sympy.expand(bf16_out.bytes - 2 * (M * K + 16 * K * N + M * N)) == 0
    bf16_gw = next(t.work for t in moe.terms if t.name == "baseline.gemm.grad_weight")
    assert sympy.expand(bf16_gw.bytes - 2 * (K * M + M * N + 16 * K * N)) == 0
    # the weight's casts and its gradient accumulation scale with G; the input's do not
    for name in ("lowp.cast.weight.cast_dim0", "lowp.workload.weight.grad_accumulate"):
        wa = next(t.work for t in dense.terms if t.name == name)
        wb = next(t.work for t in moe.terms if t.name == name)
        assert sympy.expand(wb.bytes - 16 * wa.bytes) == 0
    assert a["lowp.cast.input.cast_dim0"] == b["lowp.cast.input.cast_dim0"]


def test_the_grouped_workload_is_training_only_and_unfused():
    w = workload("grouped-mm-fwd-bwd")
    assert w.modes == ("training",) and w.fuse is False and not w.weight_scale_relayout
    with pytest.raises(ValueError, match="training only"):
        rs.linear("mxfp8", mode="inference", groups=8, workload="grouped-mm-fwd-bwd")


def test_more_experts_cost_more_at_the_same_tokens():
    # grouped GEMM kernels throughout (the workload runs them even for one group)
    speedups = [float(rs.linear("mxfp8_cublas", groups=g, workload="grouped-mm-fwd-bwd")
                      .on("b200").evaluate(M=32768, K=7168, N=2048)["speedup"])
                for g in (1, 8, 64, 256)]
    assert speedups == sorted(speedups, reverse=True)


def test_grouped_kernels_run_at_their_own_rate():
    # G >= 2, or the grouped workload, prices GEMMs at kappa_grouped_<dtype>;
    # a dense layer (and groups=1 outside the workload) does not
    grouped = rs.linear("mxfp8_cublas", groups=8)
    dense = rs.linear("mxfp8_cublas", groups=1)
    k = rs.symbols.grouped_efficiency
    assert {k("bf16"), k("fp8")} <= grouped.free_hardware_symbols
    assert not {k("bf16"), k("fp8")} & dense.free_hardware_symbols


@pytest.mark.parametrize("bad", [0, -2, 2.5, "8", True, 2 ** 21])
def test_bad_groups_are_refused(bad):
    # an InputTypeError (the str, the bool) is a ValueError too
    with pytest.raises(ValueError, match=r"groups \(the number of experts, or None\) must be"):
        rs.linear("mxfp8_cublas", groups=bad)


def test_torchao_moe_covers_mxfp8_training_only():
    with pytest.raises(ValueError, match="MXFP8 training only"):
        rs.linear("rowwise", preset="torchao", groups=8)
    with pytest.raises(ValueError, match="MXFP8 training only"):
        rs.linear("mxfp8", mode="inference", preset="torchao", groups=8)
    # the project's model prices every recipe grouped
    assert rs.linear("rowwise", groups=8).groups == 8


def test_with_groups_rebuilds_bound_and_keeps_the_arguments():
    m = rs.linear("mxfp8_cublas", preset="torchao", gemm_time="roofline").on("NVIDIA B200")
    g = m.with_groups(8)
    assert g.groups == 8 and g.hardware is m.hardware and g.options.gemm_time == "roofline"
    assert g.with_groups(None).speedup == m.speedup
    assert "groups=8" in repr(g)


def test_breakeven_on_grouped_models():
    m = rs.linear("mxfp8_cublas", groups=8).on("b200")
    be = rs.breakeven(m, solve_for="M", K=7168, N=2048)
    (root,) = be.root_values
    out = m.evaluate(M=[root * 0.99, root * 1.01], K=7168, N=2048,
                     integer_shapes=False)["speedup"]
    assert out[0] < 1 < out[1]
    assert len(rs.breakeven(m, along="cube").roots) >= 1
    # symbolic in K, N and the hardware (seed preset: compute-only GEMMs)
    sym = rs.breakeven(rs.linear("mxfp8_cublas", preset="seed", groups=8), solve_for="M")
    assert sym.roots and rs.K in sym.roots[0].free_symbols


def test_sweep_and_latex_of_grouped_models():
    models = [rs.linear("mxfp8_cublas", groups=g).on("b200") for g in (8, 64)]
    res = rs.sweep(models, (65536, 7168, 2048))
    expected = [float(m.evaluate(65536, 7168, 2048)["speedup"]) for m in models]
    np.testing.assert_allclose(res["speedup"], expected, rtol=1e-12)
    text = rs.latex(models[0].unbound.lowp_overhead_time.doit())  # the terms written out
    assert "8 K N" in text or "8 K" in text
    assert models[0].latex().startswith(r"\begin{aligned}")


def test_grid_of_grouped_models():
    ms = rs.model_grid(["mxfp8_cublas", "rowwise"], ["b200"], groups=8)
    assert [m.groups for m in ms] == [8, 8]


# -- mixtures of experts as shape sets ------------------------------------------------
def test_deepseek_moe_set_adds_the_routed_experts():
    dense, moe = rs.shape_set("dsv3-671b"), rs.shape_set("dsv3-671b-moe", M=4096)
    assert moe.names[:len(dense)] == dense.names
    assert not dense.grouped and moe.grouped
    experts = [i for i, g in enumerate(moe.groups) if g > 1]
    assert [moe.names[i] for i in experts] == ["moe.experts.w1", "moe.experts.w2",
                                               "moe.experts.w3"]
    assert set(moe.groups[experts]) == {256} and set(moe.M[experts]) == {8 * 4096}
    assert set(moe.counts[experts]) == {58}
    assert moe.tokens == 4096 and set(np.delete(moe.M, experts)) == {4096}


def test_qwen3_moe_set():
    s = rs.shape_set("qwen3-30b-a3b")
    rows = {name: (k, n, g) for name, _, k, n, _ in s for g in
            [s.groups[s.names.index(name)]]}
    assert rows["self_attn.q_proj"] == (2048, 4096, 1)
    assert rows["mlp.experts.down_proj"] == (768, 2048, 128)
    assert set(s.counts) == {48}


def test_sweep_prices_expert_rows_as_grouped_gemms():
    m = rs.linear("mxfp8_cublas", preset="torchao").on("NVIDIA B200")
    res = rs.sweep(m, "dsv3-671b-moe")
    s = rs.shape_set("dsv3-671b-moe")
    for i, (name, M, K, N, _) in enumerate(s):
        model = m if s.groups[i] == 1 else m.with_groups(int(s.groups[i]))
        assert res["speedup"][i] == pytest.approx(float(model.evaluate(M, K, N)["speedup"]),
                                                  rel=1e-12), name
    total = res.model_total().rows[0]
    assert total["M"] == 81920 and total["flops"] == pytest.approx(3 * s.total_flops)


@pytest.mark.parametrize("layer,message", [
    ('{ name = "e", K = 8, N = 8, count = 1, groups = 4, top_k = 8 }', "exceeds"),
    ('{ name = "e", K = 8, N = 8, count = 1, groups = 2.5 }', "whole number"),
])
def test_expert_layers_are_validated(tmp_path, layer, message):
    path = tmp_path / "s.toml"
    path.write_text(f'[sources]\nX = "x"\n[[set]]\nname = "s"\nkind = "layers"\ntokens = 8\n'
                    f'blocks = 1\nlayers = [{layer}]\n[set.sources]\ntokens = "X"\n'
                    f'blocks = "X"\nlayers = "X"\n')
    with pytest.raises(ValueError, match=message):
        rs.numeric.load_shape_sets(path)


def test_shape_sets_from_arrays_carry_groups():
    s = rs.ShapeSet.from_arrays([4096, 32768], 2048, 768, groups=[1, 128])
    assert s.groups.tolist() == [1.0, 128.0] and s.grouped
    with pytest.raises(ValueError, match="whole number"):
        rs.ShapeSet.from_arrays(4096, 2048, 768, groups=1.5)
