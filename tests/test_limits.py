"""Physical limits of every shipped GPU, recipe and implementation, and the
symbolic limits of ``rs.limits``.

A GEMM-only low-precision GEMM at 16^3 costs its fixed time, at least the bf16
GEMM's / 1.1: at most 1.10x bf16.  No shape beats the larger of the peak-FLOP
ratio and the byte ratio (2 for 8-bit operands, 4 for 4-bit) by more than 15%.
"""

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.devices import implementations as impls

GRID = np.array([16, 64, 256, 1024, 4096, 16384, 65536], float)
M, K, N = np.meshgrid(GRID, GRID, GRID, indexing="ij")


def _bound(hw, model):
    lowp = model.recipe.dtypes - {"bf16"}
    if not lowp:  # an emulated recipe: its GEMMs run in bf16
        return 1.15
    d = "fp4" if "fp4" in lowp else "fp8"
    return 1.15 * max(float(hw.peak_flops[d] / hw.peak_flops["bf16"]), 4 if d == "fp4" else 2)


@pytest.mark.parametrize("gpu", rs.list_hardware())
def test_no_shipped_gpu_breaks_the_limits(gpu):
    hw = rs.hardware(gpu)
    checked = 0
    for mode in rs.model.MODES:
        for recipe in rs.list_recipes(mode):
            for impl in impls.IMPLEMENTATIONS:
                model = rs.linear(recipe, mode=mode, workload="gemm", implementation=impl)
                if model.unsupported_reason(hw):
                    continue
                s = model.on(hw).evaluate(M, K, N, outputs=("speedup",))["speedup"]
                assert s[0, 0, 0] <= 1.10, (mode, recipe, impl, s[0, 0, 0])
                assert s.max() <= _bound(hw, model), (mode, recipe, impl, s.max())
                checked += 1
    # every GPU runs the emulated recipe; all but the bf16-only A100 run
    # low-precision GEMMs too
    assert checked >= (2 if "fp8" in hw.peak_flops else 1) * len(impls.IMPLEMENTATIONS)


def test_tiny_gemms_cost_their_fixed_times():
    # H100: 16^3 fp8 was predicted 4.4x faster when its fixed time was missing;
    # now both sides cost their class's fixed time and the ratio is theirs
    hw = rs.hardware("h100")
    m = rs.linear("tensorwise", mode="inference", workload="gemm").on(hw)
    t0 = {c: float(hw.fixed_time("gemm_fixed_s", c)) for c in ("bf16", "fp8_tensorwise")}
    launch = float(hw.launch_overhead)
    want = max(t0["bf16"], launch) / max(t0["fp8_tensorwise"], launch)
    assert float(m.evaluate(16, 16, 16)["speedup"]) == pytest.approx(want, rel=2e-3)


def test_symbolic_limits_by_hand():
    # GEMM-only rowwise inference: at 0, the fixed times (or the launch floor); on
    # the cube, 2 x^3 / (P_fp8 eta_fp8 kappa_rowwise) against 2 x^3 / (P_bf16 eta_bf16)
    small, large = rs.limits(rs.linear("rowwise", mode="inference", workload="gemm"))
    tl = S.launch_overhead()
    assert sympy.simplify(small - sympy.Max(S.gemm_fixed_time("bf16"), tl)
                          / sympy.Max(S.gemm_fixed_time("fp8_rowwise"), tl)) == 0
    assert sympy.simplify(large - S.peak_flops("fp8") * S.gemm_efficiency("fp8")
                          * S.scaling_efficiency("rowwise")
                          / (S.peak_flops("bf16") * S.gemm_efficiency("bf16"))) == 0


def test_bound_limits_agree_with_evaluation():
    # the limits of a bound model are numbers the model approaches at both ends
    m = rs.linear("mxfp8_cublas").on("b200")
    small, large = rs.limits(m)
    assert float(m.evaluate(1, 1, 1)["speedup"]) == pytest.approx(float(small), rel=1e-3)
    x = 2.0 ** 22
    assert float(m.evaluate(x, x, x)["speedup"]) == pytest.approx(float(large), rel=1e-2)
    # training layers pay casts: at tiny shapes low precision is slower than bf16
    assert float(small) < 1 < float(large) < 2.3


def test_static_activation_scales_skip_the_amax_pass():
    dyn = rs.linear("tensorwise", mode="inference")
    static = rs.linear("tensorwise_static", mode="inference")
    assert sorted(k for k in dyn.breakdown if ".cast." in k) == [
        "lowp.cast.input.amax", "lowp.cast.input.amax_final", "lowp.cast.input.cast"]
    assert [k for k in static.breakdown if ".cast." in k] == ["lowp.cast.input.cast"]
    b = dyn.on("h100").evaluate(M, K, N)["speedup"]
    assert (static.on("h100").evaluate(M, K, N)["speedup"] > b).all()
    with pytest.raises(ValueError, match="tensorwise_static"):
        rs.linear("tensorwise_static", mode="training")


def test_implementation_option_is_checked():
    with pytest.raises(ValueError, match="did you mean 'cutlass'"):
        rs.linear("rowwise", implementation="cutless")
    # an implementation without a profile on a GPU runs as torch does there
    base = rs.linear("rowwise", mode="inference", workload="gemm")
    assert impls.profile("deepgemm", rs.hardware("b200"), "rowwise") is None
    a = base.on("b200").evaluate(4096, 4096, 4096)["speedup"]
    b = rs.linear("rowwise", mode="inference", workload="gemm",
                  implementation="deepgemm").on("b200").evaluate(4096, 4096, 4096)["speedup"]
    assert a == b


def test_an_implementations_quantize_kernels_have_their_own_fixed_time():
    # vLLM's CUTLASS rowwise path on Hopper quantizes with its own CUDA kernels:
    # its profile's cast_fixed_s replaces the GPU's cast class (torch.compile's
    # kernels) for the quantize kernels of a rowwise recipe, and nothing else
    h100 = rs.hardware("h100")
    p = impls.profile("cutlass", h100, "rowwise")
    assert p is not None and p.cast_fixed_s is not None
    assert p.cast_fixed_s != float(h100.kernel_fixed_s["cast"])
    seen = impls.apply(h100, "cutlass", "rowwise")
    for kind in S.KERNEL_KINDS:
        want = p.cast_fixed_s if kind in impls.QUANTIZE_KINDS else h100.kernel_fixed_s[kind]
        assert float(seen.kernel_fixed_s[kind]) == pytest.approx(float(want)), kind
    # no family (a bf16 or emulated recipe), or a library whose quantize kernels no
    # row times on any generation: the GPU's cast class
    assert float(impls.apply(h100, "cutlass").kernel_fixed_s["cast"]) == \
        float(h100.kernel_fixed_s["cast"])
    assert impls.quantize_fixed_time("deepgemm", h100, "blockwise") is None
    assert float(impls.apply(h100, "deepgemm", "blockwise").kernel_fixed_s["cast"]) == \
        float(h100.kernel_fixed_s["cast"])


def test_a_quantize_fixed_time_carries_over_from_another_generation():
    # no Hopper row times vLLM's per-tensor quantize kernel; Blackwell's rows do:
    # the same library's start-up, in seconds, is the better guess than the
    # GPU's cast class (torch.compile's kernels)
    h100, b200 = rs.hardware("h100"), rs.hardware("b200")
    assert impls.profile("cutlass", h100, "tensorwise").cast_fixed_s is None
    blackwell = impls.profile("cutlass", b200, "tensorwise").cast_fixed_s
    assert blackwell is not None
    seen = impls.apply(h100, "cutlass", "tensorwise")
    assert float(seen.kernel_fixed_s["cast"]) == pytest.approx(blackwell)
    # pinned on both generations: each keeps its own; own=False (a fit from priors)
    # sees only the other generation's, so a left-out source cannot see itself
    hopper = impls.profile("cutlass", h100, "rowwise").cast_fixed_s
    other = impls.profile("cutlass", b200, "rowwise").cast_fixed_s
    assert impls.quantize_fixed_time("cutlass", h100, "rowwise") == hopper
    assert impls.quantize_fixed_time("cutlass", h100, "rowwise", own=False) == other
    # a generation with neither: the geometric mean of the others (RTX 5090)
    both = impls.quantize_fixed_time("cutlass", "rtx5090", "rowwise")
    assert both == pytest.approx((hopper * other) ** 0.5)


def test_a_gemm_fixed_time_carries_over_from_the_librarys_other_families():
    # no row times a Triton per-tensor GEMM on Hopper; Triton's blockwise and
    # rowwise GEMMs there are timed (16-19 us, Triton's launcher seen by the
    # sources' timers): its per-tensor GEMM carries their geometric mean, not
    # the GPU's own per-tensor class (5-7 us, cuBLASLt's)
    h100 = rs.hardware("h100")
    assert impls.profile("triton", h100, "tensorwise") is None
    block = impls.profile("triton", h100, "blockwise").fixed_s
    row = impls.profile("triton", h100, "rowwise").fixed_s
    seen = impls.apply(h100, "triton", "tensorwise")
    assert float(seen.gemm_fixed_s["fp8_tensorwise"]) == pytest.approx((block * row) ** 0.5)
    assert float(seen.gemm_fixed_s["fp8_rowwise"]) == pytest.approx(row)  # pinned: its own
    assert float(seen.gemm_fixed_s["bf16"]) == float(h100.gemm_fixed_s["bf16"])  # not the library's
    # a fit's numbers (shipped=False): only its own pinned families, never the
    # shipped profiles (fitted with whatever the fit leaves out)
    v = {str(k): float(x) for k, x in h100.parameters.items()}
    fit = impls.profile_values(v, "triton", h100, {"fixed.triton.rowwise": 2e-5}, shipped=False)
    assert fit["t0_fp8_tensorwise"] == pytest.approx(2e-5)
    assert impls.profile_values(v, "triton", h100, {}, shipped=False) == {}
    # a library with no fixed time on the generation: the GPU's classes
    assert impls.gemm_fixed_time("te", "b200") is None
    assert impls.gemm_fixed_time("torch", h100) is None


def test_the_quantize_fixed_time_prices_the_cast_of_a_decode_layer():
    # rowwise inference at M = 1, K = 5376: one cast kernel reads the bf16
    # activation (2 K bytes) and writes fp8 data (K) and one fp32 scale (4):
    # t = t0 + (3 K + 4) / (BW eta_cast), t0 the profile's, not the GPU's
    K_ = 5376
    h100 = rs.hardware("h100")
    t0 = impls.profile("cutlass", h100, "rowwise").cast_fixed_s
    bw = float(h100.mem_bw) * float(h100.kernel_efficiency["cast"])
    model = rs.linear("rowwise", mode="inference", implementation="cutlass").on(h100)
    casts = {k: v for k, v in model.breakdown.items() if ".cast." in k}
    assert list(casts) == ["lowp.cast.input.cast"]
    got = float(casts["lowp.cast.input.cast"].subs({S.M: 1, S.K: K_, S.N: 12288}))
    assert got == pytest.approx(t0 + (3 * K_ + 4) / bw, rel=1e-9)


@pytest.mark.parametrize("entry, message", [
    ({"cast_fixed_s": 1.0}, "cutlass/hopper/rowwise: cast_fixed_s 1.0 s outside"),
    ({"rate": 0}, "cutlass/hopper/rowwise: rate 0.0 outside"),
    ({"cast_fixed_s": "5e-6"}, "cutlass/hopper/rowwise: cast_fixed_s must be a number"),
    ({"fixed_s": True}, "cutlass/hopper/rowwise: fixed_s must be a number")])
def test_a_profile_number_that_is_no_plausible_number_is_refused(monkeypatch, entry, message):
    bad = dict(impls._data())
    bad["profile"] = [{"implementation": "cutlass", "generation": "hopper",
                       "family": "rowwise", **entry}]
    monkeypatch.setattr(impls, "_data", lambda: bad)
    impls.profiles.cache_clear()
    try:
        with pytest.raises(ValueError, match=message):
            impls.profiles()
    finally:
        monkeypatch.undo()
        impls.profiles.cache_clear()
