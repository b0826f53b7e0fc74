"""One GEMM: FLOPs, bytes and time, against values worked out by hand."""

import sympy
from hypothesis import given, settings, strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.model.formats import scaling
from roofline_sym.model.gemm import Gemm

M, K, N = rs.M, rs.K, rs.N


def test_bf16_gemm_golden():
    # 4096 x 8192 @ 8192 x 2048 in bf16:
    #   flops = 2 * 4096 * 8192 * 2048 = 137_438_953_472
    #   reads = (4096*8192 + 8192*2048) * 2 B = (33_554_432 + 16_777_216) * 2 = 100_663_296
    #   write = 4096 * 2048 * 2 B = 16_777_216
    g = Gemm("output", 4096, 8192, 2048)
    assert g.flops == 137_438_953_472
    assert g.bytes_read == 100_663_296
    assert g.bytes_written == 16_777_216
    assert g.bytes == 117_440_512


def test_fp8_gemm_symbolic():
    # fp8 operands at 1 B, bf16 output at 2 B
    g = Gemm("output", M, K, N, operand="fp8_e4m3")
    assert g.bytes == M * K + K * N + 2 * M * N
    assert g.flops == 2 * M * K * N


def test_fp4_gemm_with_mx_scales_golden():
    # MXFP4 GEMM 1024 x 4096 @ 4096 x 512: e2m1 at 1/2 B, e8m0 scale per 32 along K
    #   operands: (1024*4096 + 4096*512) / 2 = (4_194_304 + 2_097_152) / 2 = 3_145_728
    #   scales:   1024 * 4096/32 + 512 * 4096/32 = 131_072 + 65_536 = 196_608 (1 B each)
    #   output:   1024 * 512 * 2 = 1_048_576
    mx = scaling("mx")
    scale = mx.scale_bytes(1024, 4096) + mx.scale_bytes(512, 4096)
    g = Gemm("output", 1024, 4096, 512, operand="fp4_e2m1", scale_bytes=scale)
    assert scale == 196_608
    assert g.bytes == 3_145_728 + 196_608 + 1_048_576


def test_nvfp4_scales_include_global_scale():
    # 256 x 100 operand: e4m3 per 16 along K, a partial block still costs a
    # scale: 256 * ceil(100/16) = 256 * 7 = 1792 B, plus the 4 B fp32 global scale
    assert scaling("nvfp4").scale_bytes(256, 100) == 1796
    assert scaling("nvfp4_no_global").scale_bytes(256, 100) == 1792


def test_blockwise_scale_counts():
    # 1x128 blocks on 300 x 1000: 300 * ceil(1000/128) = 300 * 8 = 2400 fp32 scales
    # 128x128 blocks on 300 x 1000: ceil(300/128) * ceil(1000/128) = 3 * 8 = 24
    assert scaling("blockwise_1x128").count(300, 1000) == 2400
    assert scaling("blockwise_128x128").count(300, 1000) == 24
    assert scaling("blockwise_128x128").scale_bytes(300, 1000) == 96


def test_time_models():
    g = Gemm("output", M, K, N, operand="fp8_e4m3")
    compute = 2 * M * K * N / (S.peak_flops("fp8") * S.gemm_efficiency("fp8"))
    memory = (M * K + K * N + 2 * M * N) / (S.mem_bw() * S.mem_efficiency())
    assert g.time("compute") == compute
    assert g.time("roofline") == sympy.Max(compute, memory, S.launch_overhead())
    assert [r for r, _ in g.pieces()] == ["compute", "memory", "launch"]


def test_unknown_time_model_and_scale_operand():
    import pytest

    with pytest.raises(ValueError, match="roofline"):
        Gemm("output", M, K, N).time("exact")
    with pytest.raises(ValueError, match="scale format"):
        Gemm("output", M, K, N, operand="e8m0")


H100 = rs.hardware("h100-sxm").parameters
dims = st.integers(min_value=1, max_value=1 << 16)


@settings(max_examples=2 * settings.default.max_examples)
@given(m=dims, k=dims, n=dims, which=st.sampled_from("mkn"), factor=st.integers(2, 64),
       fmt=st.sampled_from(["bf16", "fp8_e4m3", "fp4_e2m1"]),
       model=st.sampled_from(["roofline", "compute"]))
def test_gemm_time_monotone_in_each_dim(m, k, n, which, factor, fmt, model):
    params = dict(H100)
    params[S.peak_flops("fp4")] = 4 * params[S.peak_flops("bf16")]
    params[S.gemm_efficiency("fp4")] = sympy.Rational(7, 10)
    base = Gemm("g", m, k, n, operand=fmt).time(model).xreplace(params)
    grown = dict(m=m, k=k, n=n)
    grown[which] *= factor
    bigger = Gemm("g", grown["m"], grown["k"], grown["n"], operand=fmt).time(model).xreplace(params)
    assert bigger >= base
