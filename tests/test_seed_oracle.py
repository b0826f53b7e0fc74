"""The ``seed`` preset against the seed roofline document.

Three layers, so the preset stays checked even where the document is absent:

1. an oracle: the seed document itself (``../shared/reference/
   seed_roofline_utils.py`` next to the repository), loaded from that path
   with a stub ``torch`` and compared on all 16 scaling / compile-limitation
   combinations, fixed aligned and ragged shapes and hypothesis-drawn ones;
2. golden values derived by hand from ``cost-models.md`` section 1, checked
   symbolically and at 8192^3 with exact Rationals;
3. ``fuse=False`` under the seed preset: exactly the unfused first read of
   input and grad_output (2MK + 2MN bytes) more, nothing else.

The seed document is never copied into the repository: it is imported from
its own path, or the oracle tests are skipped.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S

SEED_PATH = (Path(__file__).resolve().parents[2] / "shared" / "reference"
             / "seed_roofline_utils.py")

SCALINGS = ("dynamic", "delayed")
ROLES = ("input", "weight", "grad_output")
# every per-role scaling (2^3) times model_torch_compile_limitations (2)
COMBOS = [(roles, c) for roles in itertools.product(SCALINGS, repeat=3) for c in (False, True)]
COMBO_IDS = [f"{'-'.join(r)}-c{int(c)}" for r, c in COMBOS]

ALIGNED = [(8192, 8192, 8192), (1024, 4096, 2048), (16384, 8192, 1024)]
RAGGED = [(17, 33, 4097), (1000, 999, 1001), (123457, 77, 5), (1, 1, 1), (3.5, 100.25, 7.75)]

RTOL = 1e-9

Mv, Kv, Nv = rs.M, rs.K, rs.N
BW, ETA_MEM, LAUNCH = S.mem_bw(), S.mem_efficiency(), S.launch_overhead()
P_BF16, ETA_BF16 = S.peak_flops("bf16"), S.gemm_efficiency("bf16")
P_FP8, ETA_FP8 = S.peak_flops("fp8"), S.gemm_efficiency("fp8")


# ---------------------------------------------------------------------------
# the oracle: the seed document, imported from its own path with a stub torch
class _StubDtype:
    """A distinct sentinel standing for a torch dtype (the seed compares with ``is``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"stub_torch.{self.name}"


_MISSING = object()


@pytest.fixture(scope="module")
def seed():
    """``(seed module, stub torch)``; sys.modules['torch'] is restored afterwards."""
    if not SEED_PATH.is_file():
        pytest.skip(f"seed document not found at {SEED_PATH} (expected in ../shared/reference "
                    "next to the repository); the golden-value tests still cover the preset")
    stub = types.ModuleType("torch")
    stub.bfloat16 = _StubDtype("bfloat16")
    stub.float8_e4m3fn = _StubDtype("float8_e4m3fn")
    stub.float8_e5m2 = _StubDtype("float8_e5m2")
    saved = sys.modules.get("torch", _MISSING)
    sys.modules["torch"] = stub
    try:
        spec = importlib.util.spec_from_file_location("_seed_roofline_utils_oracle", SEED_PATH)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is _MISSING:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved
    assert module.torch is stub  # the seed's functions keep using the stub
    return module, stub


def seed_outputs(seed, M, K, N, roles, c):
    """The seven quantities as the seed document computes them."""
    module, torch = seed
    bf16 = module.get_gemm_time_sympy(M, K, N, torch.bfloat16)
    fp8 = module.get_gemm_time_sympy(M, K, N, torch.float8_e4m3fn)
    overhead = module.get_float8_mem_sympy(
        M, K, N, model_torch_compile_limitations=c, scaling_type_input=roles[0],
        scaling_type_weight=roles[1], scaling_type_grad_output=roles[2])
    return {
        "baseline_gemm_time": bf16,
        "baseline_overhead_time": 0.0,
        "lowp_gemm_time": fp8,
        "lowp_overhead_time": overhead,
        "baseline_time": bf16,
        "lowp_time": fp8 + overhead,
        "speedup": bf16 / (fp8 + overhead),
    }


@functools.lru_cache(maxsize=None)
def seed_model(roles: tuple[str, str, str], c: bool, fuse: bool = True) -> rs.Linear:
    """The seed preset's model of ``roles`` (unbound)."""
    return rs.linear(dict(zip(ROLES, roles)), mode="training", fuse=fuse, preset="seed",
                     torch_compile_limitations=c)


@functools.lru_cache(maxsize=None)
def seed_bound(roles: tuple[str, str, str], c: bool, fuse: bool = True) -> rs.Linear:
    return seed_model(roles, c, fuse).on(rs.hardware("NVIDIA H100", dataset="seed"))


def assert_matches_seed(seed, roles, c, shapes):
    # the oracle is a formula: it is compared at real shapes too (3.5, ...)
    M, K, N = (np.array([s[i] for s in shapes], dtype=np.float64) for i in range(3))
    got = seed_bound(roles, c).evaluate(M=M, K=K, N=N, integer_shapes=False)
    for j, (m, k, n) in enumerate(shapes):
        want = seed_outputs(seed, m, k, n, roles, c)
        for name in rs.OUTPUTS:
            np.testing.assert_allclose(
                got[name][j], want[name], rtol=RTOL, atol=0,
                err_msg=f"{name} at M,K,N={m},{k},{n}, roles={roles}, c={c}")


def test_stub_torch_does_not_leak(seed):
    module, stub = seed
    assert sys.modules.get("torch") is not stub
    try:
        import torch as real  # the real one when installed (other tests may use it)
    except ImportError:
        real = None
    assert real is not stub
    if real is not None:
        assert hasattr(real, "zeros")
    # the stub's dtypes really steer the seed's branches
    assert module.get_gemm_time_sympy(8, 8, 8, stub.float8_e5m2) == pytest.approx(
        module.get_gemm_time_sympy(8, 8, 8, stub.float8_e4m3fn))
    assert module.get_gemm_time_sympy(8, 8, 8, stub.bfloat16) > module.get_gemm_time_sympy(
        8, 8, 8, stub.float8_e4m3fn)


@pytest.mark.parametrize("roles,c", COMBOS, ids=COMBO_IDS)
def test_seed_oracle_fixed_shapes(seed, roles, c):
    assert_matches_seed(seed, roles, c, ALIGNED + RAGGED)


@settings(max_examples=3 * settings.default.max_examples)
@given(combo=st.sampled_from(COMBOS),
       shape=st.tuples(*[st.one_of(st.integers(1, 2**17),
                                   st.floats(1, 2**17, allow_nan=False, allow_infinity=False))
                         for _ in range(3)]))
def test_seed_oracle_drawn_shapes(seed, combo, shape):
    roles, c = combo
    assert_matches_seed(seed, roles, c, [shape])


def test_seed_scaling_name_equals_uniform_mapping():
    for name in SCALINGS:
        for c in (False, True):
            by_name = rs.linear(name, mode="training", fuse=True, preset="seed",
                                torch_compile_limitations=c)
            by_map = seed_model((name,) * 3, c)
            for q in rs.OUTPUTS:
                assert sympy.simplify(getattr(by_name, q) - getattr(by_map, q)) == 0, (name, c, q)


# ---------------------------------------------------------------------------
# golden values, derived by hand from cost-models.md section 1
#
# Seed hardware (H100, "Meta's variant"), exact:
#   P_bf16 = 989e12, P_fp8 = 1979e12 FLOP/s, eta_bf16 = eta_fp8 = 0.6 = 3/5
#   BW = 2.4e12 B/s, eta_mem = 0.92 = 23/25, L = 2e-6 s
#   Peff(bf16) = 989e12 * 0.6  =  593.4e12 = 593400000000000
#   Peff(fp8)  = 1979e12 * 0.6 = 1187.4e12 = 1187400000000000
#   BWeff      = 2.4e12 * 0.92 =  2.208e12 = 2208000000000
#
# GEMMs (every combination): T_gemm(d) = 6 M K N / Peff(d).  At 8192^3,
#   M K N = 2^39 = 549755813888, 6 M K N = 3298534883328, so
#   baseline_gemm = 3298534883328 / 593400000000000  = 268435456/48291015625
#                 = 5.558703881577351e-3 s
#   lowp_gemm     = 3298534883328 / 1187400000000000 = 268435456/96630859375
#                 = 2.7779475183830216e-3 s
#   baseline_overhead = 0.
#
# Cast bytes per role (n = dim0*dim1; input and grad_output fused, f = True;
# weight f = False):
#   dynamic, c=False: (f ? 0 : 2n) + 4n    delayed, c=False: (f ? 0 : 2n) + 2n
#   dynamic, c=True:  (f ? 0 : 2n) + 5n    delayed, c=True:  (f ? 0 : 2n) + 5n
# Launches: 1 per dynamic role, 2 per delayed role.  At 8192^3 every n is
# MK = 2^26 = 67108864.
#
# (a) all dynamic, c=False:
#     bytes = 4MK + (2+4)KN + 4MN = 4MK + 6KN + 4MN, launches = 3
#     lowp_overhead = (4MK + 6KN + 4MN)/BWeff + 3L
#     at 8192^3: 14 * 2^26 = 939524096 B; 939524096 / 2.208e12 = 4.255091014492754e-4
#                + 3 * 2e-6 = 4.3150910144927536e-4 s
#     lowp_time = 2.7779475183830216e-3 + 4.3150910144927536e-4 = 3.209456619832297e-3
#     speedup = 5.558703881577351e-3 / 3.209456619832297e-3 = 1.7319766365522051
# (b) all delayed, c=True:
#     bytes = 5MK + (2+5)KN + 5MN = 5MK + 7KN + 5MN, launches = 6
#     at 8192^3: 17 * 2^26 = 1140850688 B -> 5.166896231884058e-4 s
#                + 6 * 2e-6 = 5.286896231884058e-4 s;  speedup = 1.6810746518548036
# (c) input delayed, weight dynamic, grad_output delayed, c=False:
#     bytes = 2MK + (2+4)KN + 2MN = 2MK + 6KN + 2MN, launches = 2 + 1 + 2 = 5
#     at 8192^3: 10 * 2^26 = 671088640 B -> 3.0393507246376814e-4 s
#                + 5 * 2e-6 = 3.139350724637681e-4 s;  speedup = 1.797837957376952
# (d) input dynamic, weight delayed, grad_output delayed, c=True:
#     bytes = 5MK + (2+5)KN + 5MN = 5MK + 7KN + 5MN, launches = 1 + 2 + 2 = 5
#     at 8192^3: 17 * 2^26 = 1140850688 B -> 5.166896231884058e-4 s
#                + 5 * 2e-6 = 5.266896231884058e-4 s;  speedup = 1.6820920553274619
GOLDEN = [
    # roles, c, bytes polynomial, launches, bytes at 8192^3, overhead, speedup at 8192^3
    (("dynamic",) * 3, False, 4 * Mv * Kv + 6 * Kv * Nv + 4 * Mv * Nv, 3,
     939524096, 4.3150910144927536e-4, 1.7319766365522051),
    (("delayed",) * 3, True, 5 * Mv * Kv + 7 * Kv * Nv + 5 * Mv * Nv, 6,
     1140850688, 5.286896231884058e-4, 1.6810746518548036),
    (("delayed", "dynamic", "delayed"), False, 2 * Mv * Kv + 6 * Kv * Nv + 2 * Mv * Nv, 5,
     671088640, 3.139350724637681e-4, 1.797837957376952),
    (("dynamic", "delayed", "delayed"), True, 5 * Mv * Kv + 7 * Kv * Nv + 5 * Mv * Nv, 5,
     1140850688, 5.266896231884058e-4, 1.6820920553274619),
]
GOLDEN_IDS = [f"{'-'.join(g[0])}-c{int(g[1])}" for g in GOLDEN]

BWEFF_SEED = sympy.Rational(2208000000000)
L_SEED = sympy.Rational(2, 10**6)
BASELINE_GEMM_8192 = sympy.Rational(268435456, 48291015625)
LOWP_GEMM_8192 = sympy.Rational(268435456, 96630859375)
AT_8192 = {Mv: 8192, Kv: 8192, Nv: 8192}


def split_overhead(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """``(bytes polynomial, number of launches)`` of ``bytes/(BW eta_mem) + k L``."""
    launches = sympy.expand(expr).coeff(LAUNCH)
    traffic = sympy.expand((expr - launches * LAUNCH) * BW * ETA_MEM)
    return traffic, launches


def test_seed_hardware_constants_exact():
    params = rs.hardware("NVIDIA H100", dataset="seed").parameters
    assert params[P_BF16] == 989 * 10**12
    assert params[P_FP8] == 1979 * 10**12
    assert params[ETA_BF16] == params[ETA_FP8] == sympy.Rational(3, 5)
    assert params[BW] * params[ETA_MEM] == BWEFF_SEED
    assert params[LAUNCH] == L_SEED


def test_seed_gemm_times_golden():
    # same for every combination (GEMMs do not depend on the scaling)
    for roles, c in COMBOS:
        m = seed_model(roles, c)
        assert sympy.simplify(m.baseline_gemm_time - 6 * Mv * Kv * Nv / (P_BF16 * ETA_BF16)) == 0
        assert sympy.simplify(m.lowp_gemm_time - 6 * Mv * Kv * Nv / (P_FP8 * ETA_FP8)) == 0
        assert m.baseline_overhead_time == 0
    mb = seed_bound(("dynamic",) * 3, False)
    assert mb.baseline_gemm_time.xreplace(AT_8192) == BASELINE_GEMM_8192
    assert mb.lowp_gemm_time.xreplace(AT_8192) == LOWP_GEMM_8192
    out = mb.evaluate(M=8192, K=8192, N=8192)
    assert float(out["baseline_gemm_time"]) == pytest.approx(5.558703881577351e-3, rel=1e-14)
    assert float(out["lowp_gemm_time"]) == pytest.approx(2.7779475183830216e-3, rel=1e-14)
    assert float(out["baseline_overhead_time"]) == 0.0


@pytest.mark.parametrize("roles,c,traffic,launches,bytes_8192,overhead_8192,speedup_8192",
                         GOLDEN, ids=GOLDEN_IDS)
def test_seed_overhead_golden(roles, c, traffic, launches, bytes_8192, overhead_8192,
                              speedup_8192):
    m = seed_model(roles, c)
    got_traffic, got_launches = split_overhead(m.lowp_overhead_time)
    assert got_traffic == sympy.expand(traffic), "cast bytes differ from the seed's"
    assert got_launches == launches, "number of launch floors differs from the seed's"
    expected = traffic / (BW * ETA_MEM) + launches * LAUNCH
    assert sympy.simplify(m.lowp_overhead_time - expected) == 0

    mb = seed_bound(roles, c)
    exact = sympy.Rational(bytes_8192) / BWEFF_SEED + launches * L_SEED
    assert mb.lowp_overhead_time.xreplace(AT_8192) == exact
    assert mb.speedup.xreplace(AT_8192) == BASELINE_GEMM_8192 / (LOWP_GEMM_8192 + exact)
    out = mb.evaluate(M=8192, K=8192, N=8192)
    assert float(out["lowp_overhead_time"]) == pytest.approx(overhead_8192, rel=1e-14)
    assert float(out["speedup"]) == pytest.approx(speedup_8192, rel=1e-14)


# ---------------------------------------------------------------------------
# fuse=False: the seed has no switch for it; the preset may only add the
# unfused first read (bf16, 2 bytes per element) of input and grad_output
@pytest.mark.parametrize("roles,c", COMBOS, ids=COMBO_IDS)
def test_seed_unfused_adds_exactly_the_first_reads(roles, c):
    fused, unfused = seed_model(roles, c, True), seed_model(roles, c, False)
    for q in ("baseline_gemm_time", "baseline_overhead_time", "lowp_gemm_time"):
        assert sympy.simplify(getattr(unfused, q) - getattr(fused, q)) == 0, q
    extra = unfused.lowp_overhead_time - fused.lowp_overhead_time
    traffic, launches = split_overhead(extra)
    assert (traffic, launches) == (sympy.expand(2 * Mv * Kv + 2 * Mv * Nv), 0), (
        f"unfused - fused = {traffic} bytes and {launches} launches; expected 2MK + 2MN bytes "
        "and no change in launches")
    assert sympy.simplify(extra - (2 * Mv * Kv + 2 * Mv * Nv) / (BW * ETA_MEM)) == 0
