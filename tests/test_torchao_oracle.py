"""preset="torchao" against torchao 0.18.0 itself.

torchao's roofline_utils builds its own SymPy expressions; its benchmark
scripts (float8_roofline.py, float8_inference_roofline.py,
bench_blockwise_linear_roofline.py) combine them into the four times and the
speedup.  The oracle below does the same combination, then both sides are
evaluated at the same shapes and compared to 1e-9 relative.
"""

import warnings
from functools import lru_cache
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

import roofline_sym as rs

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")
    ru = pytest.importorskip("torchao.testing.training.roofline_utils")

import sympy  # noqa: E402

Ms, Ks, Ns = sympy.symbols("M K N")
FLOAT8_RECIPES = ("tensorwise", "rowwise", "rowwise_with_gw_hp")
GPUS = ["NVIDIA H100", "NVIDIA B200", "NVIDIA B300 SXM6 AC", "NVIDIA GB200",
        "AMD Instinct MI300X"]


def _training(gpu, recipe, fuse):
    bf16 = ru.get_gemm_time_sympy(Ms, Ks, Ns, torch.bfloat16, None, None, gpu)
    if recipe == "blockwise":
        return (bf16, 0, ru.get_blockwise_gemm_time_sympy(Ms, Ks, Ns, gpu),
                ru.get_blockwise_float8_mem_sympy(Ms, Ks, Ns, fuse, gpu))
    f8, mx = (recipe, None) if recipe in FLOAT8_RECIPES else (None, recipe)
    dtype = torch.float4_e2m1fn_x2 if mx == "mxfp4_cutlass" else torch.float8_e4m3fn
    return (bf16, 0, ru.get_gemm_time_sympy(Ms, Ks, Ns, dtype, f8, mx, gpu),
            ru.get_float8_mem_sympy(Ms, Ks, Ns, f8, mx, fuse, gpu))


def _inference(gpu, recipe, fuse):
    bf16 = ru.get_inference_gemm_time_sympy(Ms, Ks, Ns, torch.bfloat16, None, gpu)
    bf16_ovhd = ru.get_inference_bf16_activation_mem_sympy(Ms, Ks, Ns, gpu) if fuse else 0
    if recipe.startswith(("nvfp4", "mxfp4")):
        lowp = ru.get_inference_gemm_time_sympy(Ms, Ks, Ns, torch.float4_e2m1fn_x2, recipe, gpu)
    else:
        gemm_recipe = "mxfp8" if recipe.startswith("mxfp8") else None
        lowp = ru.get_inference_gemm_time_sympy(Ms, Ks, Ns, torch.float8_e4m3fn, gemm_recipe, gpu)
    return bf16, bf16_ovhd, lowp, ru.get_inference_float8_mem_sympy(Ms, Ks, Ns, recipe, gpu)


def _configs():
    for gpu in GPUS:
        hw = rs.hardware(gpu, dataset="torchao")
        for mode in rs.model.MODES:
            for recipe in rs.list_recipes(mode, preset="torchao"):
                if recipe in ("dynamic", "delayed"):
                    continue  # the seed's scalings: not in torchao
                for fuse in (False, True):
                    dtypes = rs.linear(recipe, mode=mode, preset="torchao").dtypes
                    if all(hw.supports(d) for d in dtypes):
                        yield gpu, mode, recipe, fuse


CONFIGS = list(_configs())


class _UnevaluatedMax:
    """SymPy for torchao's module, with ``Max`` left unevaluated while the
    expressions are symbolic: deciding which argument is larger for all shapes
    is most of the oracle's cost, and each ``Max`` still evaluates exactly once
    the shape is substituted (the values compared below)."""

    def __getattr__(self, name):
        return getattr(sympy, name)

    @staticmethod
    def Max(*args):
        return sympy.Max(*args, evaluate=False)


@lru_cache(maxsize=None)
def _pair(gpu, mode, recipe, fuse):
    ours = rs.linear(recipe, mode=mode, fuse=fuse, preset="torchao").on(gpu)
    build = _training if mode == "training" else _inference
    with mock.patch.object(ru, "sympy", _UnevaluatedMax()):
        theirs = [sympy.sympify(e) for e in build(gpu, recipe, fuse)]
    return ours, theirs


def _torchao_values(exprs, m, k, n):
    # the scripts substitute the shape (integers), then cast to float
    values = {Ms: sympy.Integer(m), Ks: sympy.Integer(k), Ns: sympy.Integer(n)}
    bg, bo, lg, lo = (float(e.xreplace(values)) for e in exprs)
    return dict(baseline_gemm_time=bg, baseline_overhead_time=bo, lowp_gemm_time=lg,
                lowp_overhead_time=lo, baseline_time=bg + bo, lowp_time=lg + lo,
                speedup=(bg + bo) / (lg + lo))


def _check(ours, theirs, m, k, n):
    got = ours.evaluate(m, k, n)
    want = _torchao_values(theirs, m, k, n)
    for key in rs.OUTPUTS:
        assert float(got[key]) == pytest.approx(want[key], rel=1e-9, abs=0), key


def test_every_torchao_configuration_is_covered():
    # 5 GPUs; fp4 recipes only on the Blackwell three
    assert len(CONFIGS) == 2 * (5 * 9 + 3 * 1) + 2 * (5 * 3 + 3 * 4)
    assert {c[2] for c in CONFIGS} == {
        *rs.list_recipes("training", preset="torchao"), *rs.list_recipes("inference", "torchao")
    } - {"dynamic", "delayed"}


SHAPES = [(8192, 8192, 8192), (1024, 4096, 2048), (16384, 8192, 28672),
          (17, 33, 4097), (1000, 999, 1001), (123457, 77, 5), (1, 1, 1), (64, 65536, 32)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_matches_torchao_on_fixed_shapes(config):
    ours, theirs = _pair(*config)
    for shape in SHAPES:
        _check(ours, theirs, *shape)


@settings(max_examples=5 * settings.default.max_examples)
@given(config=st.sampled_from(CONFIGS), m=st.integers(1, 1 << 17), k=st.integers(1, 1 << 16),
       n=st.integers(1, 1 << 16))
def test_matches_torchao_on_random_shapes(config, m, k, n):
    ours, theirs = _pair(*config)
    _check(ours, theirs, m, k, n)


def test_inference_mxfp8_prefix_names():
    ours = rs.linear("mxfp8_cublas", mode="inference", preset="torchao").on("NVIDIA B200")
    ref = rs.linear("mxfp8", mode="inference", preset="torchao").on("NVIDIA B200")
    assert ours.lowp_time == ref.lowp_time
    _, theirs = _pair("NVIDIA B200", "inference", "mxfp8", False)
    _check(ours, theirs, 4096, 4096, 4096)
