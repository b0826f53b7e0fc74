"""Golden cast traffic per recipe and role, derived by hand.

Notation: n = dim0 * dim1 elements; bf16 2 B, fp8 1 B, fp4 1/2 B, e8m0 and
e4m3 scales 1 B, fp32 scales 4 B.  "fused" drops the first read of an input
or grad_output cast (the producer's output is still in registers); the weight
has no producer and never fuses.  Roles: input M x K, weight K x N,
grad_output M x N.
"""

import numpy as np
import pytest
import sympy
from sympy import Rational, ceiling, floor

import roofline_sym as rs
from roofline_sym.model.recipes import gemm_dims, list_recipes, recipe, role_dims, tensor_dims

M, K, N = rs.M, rs.K, rs.N
half = Rational(1, 2)


def c32(x):
    return ceiling(x / 32)


def c128(x):
    return ceiling(x / 128)


def role_bytes(r, role, fused):
    d0, d1 = tensor_dims(r.mode)[role]
    return sympy.expand(sum(k.bytes(d0, d1, fused and role != "weight")
                            for k in r.kernels[role]))


# (recipe, role) -> (unfused bytes, fused bytes), default table
DEFAULT_TRAINING = {
    # tensorwise: amax reads bf16 (2n), a zero-byte reduction, then casts that
    # read bf16 and write fp8: one cast writing both layouts for activations
    # (2n + n + n), one cast per layout for the weight (2 x 3n)
    ("tensorwise", "input"): (6 * M * K, 4 * M * K),
    ("tensorwise", "weight"): (8 * K * N, 8 * K * N),
    ("tensorwise", "grad_output"): (6 * M * N, 4 * M * N),
    # rowwise, as torchao runs it: a row cast and a column cast, each reading
    # bf16 twice (amax pass, cast pass) and writing fp8: 2 x (2n + 2n + n); no
    # fusion; fp32 scales: one per row (M) and one per column (K)
    ("rowwise", "input"): (10 * M * K + 4 * M + 4 * K,) * 2,
    # the weight likewise, scales N (output GEMM) and K (grad_input GEMM)
    ("rowwise", "weight"): (10 * K * N + 4 * N + 4 * K,) * 2,
    ("rowwise", "grad_output"): (10 * M * N + 4 * M + 4 * N,) * 2,
    # the unscaled backward GEMMs' outputs are rescaled as torchao does it: the
    # scale vectors multiplied out into fp32 (4n), then the bf16 output times that
    # in place (2n + 4n read, 2n written)
    ("rowwise", "grad_input"): (12 * M * K,) * 2,
    ("rowwise", "grad_weight"): (12 * K * N,) * 2,
    # rowwise_with_gw_hp: activations cast once (3n, fused n) with row scales;
    # weight cast dim0 (3n + 4N), a scale-only kernel, cast dim1 tensorwise (3n)
    ("rowwise_with_gw_hp", "input"): (3 * M * K + 4 * M, M * K + 4 * M),
    ("rowwise_with_gw_hp", "weight"): (6 * K * N + 4 * N,) * 2,
    ("rowwise_with_gw_hp", "grad_output"): (3 * M * N + 4 * M, M * N + 4 * M),
    # MXFP8: one cast per layout (3n each, the first fusable); e8m0 scale per
    # 32 elements along the contraction: M * ceil(K/32) and K * ceil(M/32);
    # each scale tensor is then re-laid out for the GEMM (read + write: 2x)
    ("mxfp8_cublas", "input"): (6 * M * K + 3 * (M * c32(K) + K * c32(M)),
                                4 * M * K + 3 * (M * c32(K) + K * c32(M))),
    ("mxfp8_cublas", "weight"): (6 * K * N + 3 * (N * c32(K) + K * c32(N)),) * 2,
    ("mxfp8_cublas", "grad_output"): (6 * M * N + 3 * (M * c32(N) + N * c32(M)),
                                      4 * M * N + 3 * (M * c32(N) + N * c32(M))),
    # MXFP8 emulated, as it runs: the two casts (3n + scales each, no scale
    # re-layout: no block-scaled GEMM reads them), then each cast's output is
    # dequantized for its bf16 GEMM: read fp8 (n) and the same scales, write
    # bf16 (2n); so 12n + 2 x both scale tensors, the first read fusable
    ("mxfp8_emulated", "input"): (12 * M * K + 2 * (M * c32(K) + K * c32(M)),
                                  10 * M * K + 2 * (M * c32(K) + K * c32(M))),
    ("mxfp8_emulated", "weight"): (12 * K * N + 2 * (N * c32(K) + K * c32(N)),) * 2,
    # MXFP4: same with fp4 writes (2n + n/2 per cast)
    ("mxfp4_cutlass", "input"): (5 * M * K + 3 * (M * c32(K) + K * c32(M)),
                                 3 * M * K + 3 * (M * c32(K) + K * c32(M))),
    ("mxfp4_cutlass", "weight"): (5 * K * N + 3 * (N * c32(K) + K * c32(N)),) * 2,
    # 32x32 everywhere, any GEMM layout: one cast (3n, fused n), one scale per
    # 32 x 32 block (written, then re-laid out: 3x)
    ("mxfp8_32x32_flexible_gemm_layout", "input"): (3 * M * K + 3 * c32(M) * c32(K),
                                                    M * K + 3 * c32(M) * c32(K)),
    ("mxfp8_32x32_flexible_gemm_layout", "weight"): (3 * K * N + 3 * c32(K) * c32(N),) * 2,
    # 32x32 weight: cast (3n + blocks) then an fp8 transpose (n + n), same scales
    ("mxfp8_32x32_weight", "weight"): (5 * K * N + 3 * c32(K) * c32(N),) * 2,
    # blockwise: two quantize kernels per role (3n each, lhs fusable); fp32
    # scales per 1 x 128 (activations) or 128 x 128 (weight) block
    ("blockwise", "input"): (6 * M * K + 4 * M * c128(K) + 4 * K * c128(M),
                             4 * M * K + 4 * M * c128(K) + 4 * K * c128(M)),
    ("blockwise", "weight"): (6 * K * N + 8 * c128(K) * c128(N),) * 2,
    ("blockwise", "grad_output"): (6 * M * N + 4 * M * c128(N) + 4 * N * c128(M),
                                   4 * M * N + 4 * M * c128(N) + 4 * N * c128(M)),
}


@pytest.mark.parametrize("key", DEFAULT_TRAINING, ids="-".join)
def test_default_training_bytes(key):
    name, role = key
    r = recipe(name, "training", "default")
    unfused, fused = DEFAULT_TRAINING[key]
    assert role_bytes(r, role, False) == sympy.expand(unfused)
    assert role_bytes(r, role, True) == sympy.expand(fused)


# torchao 0.18 prices no scale bytes in training casts (cost-models.md 2.3),
# except blockwise's fp32 scales as exact n / 128 and n / 128^2
TORCHAO_TRAINING = {
    ("tensorwise", "input"): (6 * M * K, 4 * M * K),
    ("tensorwise", "weight"): (8 * K * N,) * 2,
    ("rowwise", "input"): (8 * M * K, 6 * M * K),
    ("rowwise", "weight"): (10 * K * N,) * 2,
    ("rowwise_with_gw_hp", "input"): (3 * M * K, M * K),
    ("rowwise_with_gw_hp", "weight"): (6 * K * N,) * 2,
    ("mxfp8_emulated", "input"): (6 * M * K, 4 * M * K),
    ("mxfp8_cublas_rceil", "weight"): (6 * K * N,) * 2,
    ("mxfp4_cutlass", "input"): (5 * M * K, 3 * M * K),
    ("mxfp4_cutlass", "weight"): (5 * K * N,) * 2,
    ("mxfp8_32x32_flexible_gemm_layout", "grad_output"): (3 * M * N, M * N),
    ("mxfp8_32x32_weight", "input"): (6 * M * K, 4 * M * K),
    ("mxfp8_32x32_weight", "weight"): (5 * K * N,) * 2,
    # (2n + n + 4n/128) per quantize; the lhs read fuses
    ("blockwise", "input"): (6 * M * K + M * K / 16, 4 * M * K + M * K / 16),
    ("blockwise", "weight"): (6 * K * N + K * N / 2048,) * 2,
}


@pytest.mark.parametrize("key", TORCHAO_TRAINING, ids="-".join)
def test_torchao_training_bytes(key):
    name, role = key
    r = recipe(name, "training", "torchao")
    unfused, fused = TORCHAO_TRAINING[key]
    assert role_bytes(r, role, False) == sympy.expand(unfused)
    assert role_bytes(r, role, True) == sympy.expand(fused)


# inference: only the activation (M x K) is cast; casts never fuse their read
INFERENCE = {
    # (default, torchao)
    # tensorwise: amax 2n + zero-byte reduction + cast 3n (torchao: no reduction
    # kernel, same bytes)
    "tensorwise": (5 * M * K, 5 * M * K),
    "rowwise": (3 * M * K + 4 * M, 3 * M * K + 4 * M),
    # e8m0 per 32: ceil in the default (written, then re-laid out for the GEMM:
    # 3 passes over the scales), integer division in torchao (written once)
    "mxfp8": (3 * M * K + 3 * M * c32(K), 3 * M * K + M * floor(K / 32)),
    "mxfp4": (5 * M * K / 2 + 3 * M * c32(K), 5 * M * K / 2 + M * floor(K / 32)),
    # dynamic NVFP4: amax 2n + cast (2n + n/2) + e4m3 per 16
    "nvfp4": (9 * M * K / 2 + 3 * M * ceiling(K / 16), 9 * M * K / 2 + M * floor(K / 16)),
    "nvfp4_static": (5 * M * K / 2 + 3 * M * ceiling(K / 16),
                     5 * M * K / 2 + M * floor(K / 16)),
}


@pytest.mark.parametrize("name", INFERENCE)
def test_inference_bytes(name):
    for table, expected in zip(("default", "torchao"), INFERENCE[name]):
        r = recipe(name, "inference", table)
        assert role_bytes(r, "input", False) == sympy.expand(expected), table


def test_torchao_dynamic_nvfp4_is_one_kernel():
    # torchao prices amax and cast as one entry: one launch floor, not three
    assert len(recipe("nvfp4", "inference", "torchao").kernels["input"]) == 1
    # the default: amax, its final reduction, the cast and the scale re-layout
    assert len(recipe("nvfp4", "inference", "default").kernels["input"]) == 4


def test_gemm_scale_reads_golden():
    # default: scales at their own size, per operand, along the contraction.
    # output GEMM (M, K, N): rowwise 4(M + N); MX e8m0 (M + N) ceil(K/32);
    # NVFP4 e4m3 (M + N) ceil(K/16) + two fp32 global scales (8 B);
    # blockwise 4 M ceil(K/128) + 4 ceil(N/128) ceil(K/128)
    def lowp_output_bytes(name, mode="training", preset="default"):
        m = rs.linear(name, mode=mode, preset=preset)
        return sympy.expand(next(t for t in m.terms if t.name == "lowp.gemm.output").work.bytes)

    base = M * K + K * N + 2 * M * N  # fp8 operands + bf16 output
    assert lowp_output_bytes("rowwise") == sympy.expand(base + 4 * M + 4 * N)
    assert lowp_output_bytes("mxfp8_cublas") == sympy.expand(base + (M + N) * c32(K))
    assert lowp_output_bytes("nvfp4", "inference") == sympy.expand(
        (M * K + K * N) / 2 + 2 * M * N + (M + N) * ceiling(K / 16) + 8)
    assert lowp_output_bytes("blockwise") == sympy.expand(
        base + 4 * M * c128(K) + 4 * c128(N) * c128(K))
    # torchao: floor((MK + KN) / block) scales at the operand's size (fp4: 1/2 B)
    assert lowp_output_bytes("mxfp8_cublas", preset="torchao") == sympy.expand(
        base + floor((M * K + K * N) / 32))
    assert lowp_output_bytes("mxfp4_cutlass", preset="torchao") == sympy.expand(
        (M * K + K * N) / 2 + 2 * M * N + half * floor((M * K + K * N) / 32))
    assert lowp_output_bytes("rowwise", preset="torchao") == sympy.expand(base)


def test_training_gemm_layouts():
    # output = input @ weight, grad_input = grad_output @ weight.T,
    # grad_weight = input.T @ grad_output; k is the contracted dimension
    assert dict(gemm_dims("training")) == {
        "output": (M, K, N), "grad_input": (M, N, K), "grad_weight": (K, M, N)}
    assert recipe("rowwise_with_gw_hp").gemm_format("grad_weight") == "bf16"


def test_recipe_names_and_errors():
    assert list_recipes("training")[:3] == ["tensorwise", "rowwise", "rowwise_with_gw_hp"]
    assert recipe("mxfp8_anything", "inference").name == "mxfp8_anything"
    with pytest.raises(ValueError, match="unknown training recipe 'fp6'; valid: tensorwise"):
        recipe("fp6")
    with pytest.raises(ValueError, match="unknown mode 'serving'"):
        rs.linear("tensorwise", mode="serving")
    with pytest.raises(ValueError, match="unknown preset 'fast'; valid: default, torchao, seed"):
        rs.linear("tensorwise", preset="fast")
    with pytest.raises(ValueError, match="training only"):
        rs.linear("dynamic", mode="inference")
    with pytest.raises(ValueError, match="seed's dynamic/delayed"):
        rs.linear("tensorwise", torch_compile_limitations=True)
    with pytest.raises(ValueError, match="unknown model option"):
        rs.linear("tensorwise", gemm_model="x")
    with pytest.raises(ValueError, match="exactly the roles"):
        rs.linear({"input": "dynamic"}, preset="seed")
    with pytest.raises(ValueError, match="unknown scaling for role .weight. .static.; valid: dynamic, delayed"):
        rs.linear({"input": "dynamic", "weight": "static", "grad_output": "dynamic"})


def test_expressions_print_exact_numbers():
    # no long floats anywhere: hardware stays symbolic, bound values are Rationals
    m = rs.linear("mxfp8_cublas", fuse=True, preset="torchao").on("NVIDIA B200")
    for expr in m.expressions.values():
        assert not expr.atoms(sympy.Float)
    written_out = str(m.lowp_time.doit())  # the terms' definitions; str(m.lowp_time): names
    assert "e-" not in written_out and "." not in written_out


def test_rowwise_with_gw_hp_grad_input_reads_one_weight_scale():
    # grad_input = grad_output (M x N, fp32 per row: 4M) @ weight.T cast with a
    # single tensorwise scale (not counted): fp8 operands MN + NK, bf16 output 2MK
    m = rs.linear("rowwise_with_gw_hp")
    from roofline_sym import symbols as S

    term = next(t for t in m.terms if t.name == "lowp.gemm.grad_input")
    assert sympy.expand(term.work.bytes) == sympy.expand(M * N + N * K + 2 * M * K + 4 * M)
    # the memory piece moves them at the bandwidth, after the GEMM class's fixed time
    mem = dict(term.pieces)["memory"]
    assert sympy.simplify(mem - S.gemm_fixed_time("fp8_rowwise") - term.work.bytes
                          / (S.mem_bw() * S.mem_efficiency())) == 0


def test_fuse_defaults_to_the_preset():
    # the seed document always fuses the input and grad_output casts
    assert rs.linear("dynamic", preset="seed").fuse is True
    assert rs.linear("tensorwise").fuse is False
    assert rs.linear("tensorwise", preset="torchao").fuse is False
    assert rs.linear("dynamic", preset="seed", fuse=False).fuse is False


# -- how each recipe runs ------------------------------------------------------------------
def test_every_recipe_says_how_it_runs_or_why_nothing_runs_it():
    from roofline_sym.model.torchao_calls import TORCHAO_CALLS, WHY_NOT

    for preset in ("default", "torchao"):
        for mode in rs.model.MODES:
            for name in rs.list_recipes(mode, preset=preset):
                call = TORCHAO_CALLS[mode][name]
                assert bool(call) != (name in WHY_NOT), (mode, name)


def test_the_torchao_calls_name_what_torchao_0_18_has():
    # every name a call uses imports from where IMPORTS says, attributes exist
    # (enum members), and the float8 recipe names are ones torchao accepts
    import ast
    import importlib.util
    from pathlib import Path

    pytest.importorskip("torchao")
    from roofline_sym.model.torchao_calls import IMPORTS, TORCHAO_CALLS

    def defines(module, name):
        try:
            return hasattr(importlib.import_module(module), name)
        except ModuleNotFoundError as missing:  # a GPU-only module: read, not imported
            assert missing.name == "triton", missing
            source = Path(importlib.util.find_spec(module).origin).read_text()
            return f"class {name}(" in source

    for mode, calls in TORCHAO_CALLS.items():
        for name, call in calls.items():
            if not call:
                continue
            tree = ast.parse(call.split(", calibrate")[0])
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in IMPORTS:
                    owner = getattr(importlib.import_module(IMPORTS[node.value.id]),
                                    node.value.id)
                    assert hasattr(owner, node.attr), (name, node.attr)
                elif isinstance(node, ast.Name) and node.id not in ("model", "torch"):
                    assert node.id in IMPORTS, (name, node.id)
                    assert defines(IMPORTS[node.id], node.id), node.id
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "from_recipe_name":
                    from torchao.float8 import Float8LinearConfig

                    Float8LinearConfig.from_recipe_name(node.args[0].value)


@pytest.mark.parametrize("name, mode, other", [("nvfp4", "training", "inference"),
                                               ("tensorwise_static", "training", "inference"),
                                               ("rowwise_with_gw_hp", "inference", "training")])
def test_a_recipe_of_the_other_mode_says_so(name, mode, other):
    with pytest.raises(ValueError, match=f"recipe '{name}' exists for {other}, not {mode}: "
                                         f"pass mode='{other}'"):
        rs.linear(name, mode=mode)
    with pytest.raises(ValueError, match="unknown training recipe 'nvfp5'"):
        rs.linear("nvfp5")


def test_backward_gemms_run_as_torchao_runs_them():
    # torchao 0.18 Float8LinearConfig: the output GEMM accumulates fast, grad_input
    # and grad_weight do not (gemm_config_grad_*); a per-row GEMM without fast
    # accumulation runs as cuBLAS's per-tensor kernel with unit scales, then a
    # rescale (float8_ops.addmm_float8_unwrapped)
    def gemms(name, mode="training"):
        m = rs.linear(name, mode=mode)
        return {t.name.split(".")[-1]: t.work for t in m.terms if t.name.startswith("lowp.gemm")}

    rowwise = gemms("rowwise")
    assert (rowwise["output"].scaling, rowwise["output"].fast_accum) == ("rowwise", True)
    for g in ("grad_input", "grad_weight"):
        assert (rowwise[g].scaling, rowwise[g].fast_accum) == ("tensorwise", False)
    # unit scales: the backward GEMMs read fp8 operands and write bf16, no scales
    assert sympy.expand(rowwise["grad_input"].bytes) == sympy.expand(M * N + N * K + 2 * M * K)
    assert [w.fast_accum for w in gemms("tensorwise").values()] == [True, False, False]
    gw_hp = gemms("rowwise_with_gw_hp")
    assert (gw_hp["grad_input"].fast_accum, gw_hp["grad_weight"].fast_accum) == (False, True)
    # block-scaled GEMMs and inference know no such flag
    assert all(w.fast_accum for w in gemms("mxfp8_cublas").values())
    assert all(w.fast_accum for w in gemms("rowwise", "inference").values())


def test_rowwise_training_column_casts_are_two_launches():
    # torchao's rowwise cast along a tensor's stored columns: the per-column amax is
    # a strided reduction that torch.compile runs as a kernel of its own, then the
    # cast reads the tensor again; along the stored rows, one fused kernel.  The
    # weight is stored N x K, so its strided cast is the one scaled per column of
    # K x N (cast_rows).  Bytes are those of one fused kernel reading twice.
    r = recipe("rowwise")
    names = {role: [k.name for k in ks] for role, ks in r.kernels.items()}
    assert names["input"] == names["grad_output"] == ["cast_rows", "amax_cols", "cast_cols"]
    assert names["weight"] == ["amax_cols", "cast_rows", "cast_cols"]
    amax = r.kernels["input"][1]
    assert (amax.kind, amax.reads, amax.writes, amax.scales) == ("reduce", ("bf16",), (), ())
    # amax 2MK + cast (2MK read, MK fp8, 4K column scales) = 5MK + 4K: one fused
    # kernel's bytes, as before the split
    two = sum((k.bytes(M, K) for k in r.kernels["input"][1:]), sympy.Integer(0))
    assert sympy.expand(two - (5 * M * K + 4 * K)) == 0
    # the torchao preset's roofline keeps torchao's own count: one kernel per cast
    assert "amax_cols" not in [k.name for k in recipe("rowwise", table="torchao")
                               .kernels["input"]]


def test_slow_accumulation_is_priced_golden():
    # a toy GPU whose fp8 GEMMs run at half rate without fast accumulation:
    # P_fp8 eta_fp8 = 1e15 * 1/2, so grad_input at M = K = N = 4096 computes in
    # t0 + 2 * 4096^3 / (5e14 * 1/2) = 1e-6 + 5.4976e-4 s; the output GEMM
    # (fast) in 1e-6 + 2.7488e-4 s
    from roofline_sym import Hardware
    hw = Hardware("Toy", peak_flops={"bf16": 5e14, "fp8": 1e15}, mem_bw=2e12,
                  gemm_efficiency={"bf16": 0.5, "fp8": 0.5}, mem_efficiency=0.9,
                  launch_overhead=2e-6, gemm_fixed_s={"bf16": 1e-6},
                  accumulation_efficiency={"fp8": 0.5})
    times = rs.linear("tensorwise").on(hw).evaluate_terms(4096, 4096, 4096)
    flops = 2 * 4096 ** 3
    assert float(times["lowp.gemm.output"][0]) == pytest.approx(1e-6 + flops / 5e14, rel=1e-12)
    assert float(times["lowp.gemm.grad_input"][0]) == pytest.approx(1e-6 + flops / 2.5e14,
                                                                     rel=1e-12)
    # an entry that says nothing accumulates at the fast rate
    plain = rs.linear("tensorwise").on(hw.replace(accumulation_efficiency={}))
    assert float(plain.evaluate_terms(4096, 4096, 4096)["lowp.gemm.grad_input"][0]) == \
        pytest.approx(1e-6 + flops / 5e14, rel=1e-12)


def test_emulated_mxfp8_runs_bf16_gemms_after_a_round_trip():
    # default preset: quantize, dequantize, bf16 GEMM; each low-precision GEMM
    # is the bf16 GEMM itself, so the recipe only adds kernels and can never
    # win, on any GPU, at any shape
    m = rs.linear("mxfp8_emulated", mode="training")
    for g in gemm_dims("training"):
        assert m.breakdown[f"lowp.gemm.{g}"] == m.breakdown[f"baseline.gemm.{g}"]
    assert {n.split(".")[-1] for n in m.breakdown if ".cast." in n} == {
        "cast_dim0", "cast_dim1", "dequantize_dim0", "dequantize_dim1"}
    x = np.geomspace(16, 65536, 9)
    grid = np.meshgrid(x, x, x, indexing="ij")
    for gpu in ("h100", "b200", "a100"):
        s = m.on(gpu).evaluate(*grid, outputs=("speedup",), integer_shapes=False)["speedup"]
        assert (s < 1).all(), gpu
    # torchao 0.18 prices it as an MX GEMM at the fp8 rate (its oracle test checks
    # the numbers): faster than bf16 at a large cube
    t = rs.linear("mxfp8_emulated", mode="training", preset="torchao")
    assert "P_fp8" in str(t.breakdown["lowp.gemm.output"])
    assert t.on("NVIDIA H100").evaluate(16384, 16384, 16384)["speedup"] > 1


def test_casts_to_four_bits_are_their_own_kernel_class():
    # NVFP4 / MXFP4 quantize kernels (block scales, e2m1 packing) run at a bandwidth
    # of their own (kernel class cast4); 8-bit casts stay in class cast
    def kinds(name, mode="inference"):
        m = rs.linear(name, mode=mode)
        return {t.name.split(".")[-1]: t.work.kind for t in m.terms if ".cast." in t.name}

    assert kinds("nvfp4")["cast"] == kinds("nvfp4_static")["cast"] == "cast4"
    assert kinds("mxfp4")["cast"] == "cast4"
    assert kinds("mxfp8")["cast"] == kinds("tensorwise")["cast"] == "cast"
    assert kinds("nvfp4")["amax"] == "reduce"


def test_four_bit_cast_priced_at_its_class_golden():
    # toy GPU: BW 2e12 B/s, eta_cast4 = 1/4, t0_cast4 = t0_cast = 1e-6 s (the prior).
    # nvfp4_static at M = K = 4096: the cast reads 2 B and writes 1/2 B per element
    # plus one 1-byte e4m3 scale per 16: (2 + 1/2 + 1/16) * 4096^2 = 4096^2 * 41/16 B,
    # so it takes 1e-6 + 4096^2 * 41/16 / (2e12 / 4) s
    from roofline_sym import Hardware
    hw = Hardware("Toy", peak_flops={"bf16": 5e14, "fp4": 2e15}, mem_bw=2e12,
                  gemm_efficiency={"bf16": 0.5, "fp4": 0.5}, mem_efficiency=0.9,
                  launch_overhead=2e-7, kernel_fixed_s={"cast": 1e-6},
                  kernel_efficiency={"cast4": 0.25}, block_scaling=("mx", "nvfp4"))
    t = rs.linear("nvfp4_static", mode="inference").on(hw).evaluate_terms(4096, 4096, 4096)
    assert float(t["lowp.cast.input.cast"][0]) == pytest.approx(
        1e-6 + 4096 ** 2 * 41 / 16 / 5e11, rel=1e-12)


def test_a_library_that_quantizes_into_the_gemm_scale_layout_runs_no_relayout_kernel():
    # vLLM's and FlashInfer's NVFP4 quantize kernels write the swizzled scale layout
    # the CUTLASS GEMM reads (data/implementations.toml); torchao and Transformer
    # Engine re-lay the scales out in a kernel of their own
    from roofline_sym.devices import implementations as impls

    def casts(impl):
        m = rs.linear("nvfp4", mode="inference", workload="linear", implementation=impl)
        return {t.name: t.work for t in m.terms if ".cast." in t.name}

    torch_, cutlass, te = casts("torch"), casts("cutlass"), casts("te")
    assert set(torch_) - set(cutlass) == {"lowp.cast.input.swizzle_cast"}
    assert set(te) == set(torch_)
    # the kernel left out reads and writes the e4m3 scales: one byte per 16
    # elements along K, M * ceil(K/16) bytes, twice
    assert sympy.simplify(torch_["lowp.cast.input.swizzle_cast"].bytes
                          - 2 * M * ceiling(K / 16)) == 0
    assert [impls.quantize_writes_scale_layout(i) for i in impls.IMPLEMENTATIONS] == [
        i == "cutlass" for i in impls.IMPLEMENTATIONS]
    with pytest.raises(ValueError, match="implementation"):
        impls.quantize_writes_scale_layout("cutlas")
    # per-tensor and per-row recipes write no block scales: nothing changes
    assert ({t.name for t in rs.linear("rowwise", mode="inference", implementation="cutlass")
             .terms} == {t.name for t in rs.linear("rowwise", mode="inference").terms})


@pytest.mark.parametrize("table, message", [
    ({"cutlas": "a source"}, "cutlas"),         # an unknown library, with close matches
    ({"cutlass": "  "}, "needs its source"),     # a claim without its source
])
def test_scale_layout_table_refuses_unknown_libraries_and_unsourced_claims(monkeypatch, table,
                                                                          message):
    from roofline_sym.devices import implementations as impls

    monkeypatch.setattr(impls, "_data", lambda: {"scale_layout_written_by_quantize": table})
    impls._scale_layout_writers.cache_clear()
    try:
        with pytest.raises(ValueError, match=message):
            impls.quantize_writes_scale_layout("cutlass")
    finally:
        impls._scale_layout_writers.cache_clear()
