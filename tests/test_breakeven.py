"""Break-even solver: roots make both times equal, `faster` matches a dense
scan, symbolic answers specialise to the numeric solve, golden closed forms."""

from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
import sympy
from hypothesis import assume, given, settings, strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.devices import dataset

M, K, N, x = rs.M, rs.K, rs.N, rs.x


@lru_cache(maxsize=None)
def bound(preset, mode, recipe, fuse, gpu):
    model = rs.linear(recipe, mode=mode, fuse=fuse, preset=preset)
    try:
        return model.on(rs.hardware(gpu, dataset=rs.model.PRESETS[preset].dataset))
    except ValueError:
        return None


def _configs():
    out = []
    for preset in ("default", "torchao", "seed"):
        gpus = rs.list_hardware(rs.model.PRESETS[preset].dataset)
        for mode in (("training",) if preset == "seed" else rs.model.MODES):
            for recipe in rs.list_recipes(mode, preset=preset):
                for gpu in gpus:
                    out.append((preset, mode, recipe, gpu))
    return out


CONFIGS = _configs()
RAYS = st.one_of(
    st.just(("along", "cube")),
    st.tuples(st.just("along"), st.tuples(st.integers(1, 8), st.integers(1, 8),
                                          st.integers(1, 8))),
    st.tuples(st.sampled_from("MKN"), st.tuples(st.integers(64, 65536),
                                                st.integers(64, 65536))),
)


def _solve(model, ray):
    kind, spec = ray
    if kind == "along":
        along = spec if spec == "cube" else {M: spec[0] * x, K: spec[1] * x, N: spec[2] * x}
        return rs.breakeven(model, along=along)
    fixed = dict(zip([d for d in "MKN" if d != kind], spec))
    return rs.breakeven(model, solve_for=kind, **fixed)


def _shapes_at(ray, values):
    """(M, K, N) arrays at values of the solved variable."""
    kind, spec = ray
    v = np.asarray(values, dtype=float)
    if kind == "along":
        a, b, c = (1, 1, 1) if spec == "cube" else spec
        return a * v, b * v, c * v
    fixed = dict(zip([d for d in "MKN" if d != kind], spec))
    fixed[kind] = v
    return fixed["M"], fixed["K"], fixed["N"]


def _times(model, ray, value):
    """Both times at a float root, exactly (in rationals), block-scale floors
    and ceilings included.  Term by term, piece by piece: a ``Max`` of
    expressions in x would make SymPy compare them symbolically."""
    kind, spec = ray
    if kind == "along":
        a, b, c = (1, 1, 1) if spec == "cube" else spec
        fixed, moving = {}, {M: a * x, K: b * x, N: c * x}
    else:
        fixed = {sym: sympy.Integer(v) for sym, v in
                 zip([s for s in (M, K, N) if str(s) != kind], spec)}
        var = {"M": M, "K": K, "N": N}[kind]
        moving = {var: x}
    root = sympy.Rational(value)  # the float root, exactly

    def at(piece):
        return piece.xreplace(fixed).xreplace(moving).xreplace({x: root})

    def side(name):
        return float(sum(max(at(e) for _, e in t.pieces) for t in model.terms if t.side == name))

    return side("baseline"), side("lowp")


# (every block-scaled recipe is also checked deterministically, below)
@settings()
@given(config=st.sampled_from(CONFIGS), fuse=st.booleans(), ray=RAYS)
def test_roots_equalize_and_faster_matches_dense_scan(config, fuse, ray):
    preset, mode, recipe, gpu = config
    model = bound(preset, mode, recipe, fuse, gpu)
    assume(model is not None)
    be = _solve(model, ray)
    assert not be.aligned  # block-scale steps are solved exactly, not assumed away
    # 1. every root makes the two times equal, floors and ceilings as they are
    for r in be.root_values:
        base, lowp = _times(model, ray, r)
        assert base == pytest.approx(lowp, rel=1e-9)
    # 2. `faster` agrees with the sign of speedup - 1 of the model's own evaluate
    grid = np.geomspace(1.0, 2.0 ** 22, 3000)
    speedup = model.evaluate(*_shapes_at(ray, grid), integer_shapes=False)["speedup"]
    faster = be.is_faster(grid)
    near = np.zeros(grid.shape, dtype=bool)
    for r in be.crossing_values:
        near |= np.abs(grid - r) <= 1e-9 * r
    decided = ~near & (np.abs(speedup - 1) > 1e-12)
    assert np.array_equal(faster[decided], (speedup > 1)[decided])
    # ties (equal times on a whole interval) are never "faster"
    assert not faster[np.abs(speedup - 1) <= 1e-14].any()


@settings(max_examples=settings.default.max_examples // 2)
@given(config=st.sampled_from([c for c in CONFIGS if c[0] != "seed"]), fuse=st.booleans(),
       ray=RAYS)
def test_faster_set_contains_what_is_faster_exactly(config, fuse, ray):
    preset, mode, recipe, gpu = config
    model = bound(preset, mode, recipe, fuse, gpu)
    assume(model is not None)
    be = _solve(model, ray)
    for r in be.root_values:
        for probe in (r * 0.9, r * 1.1):
            assert (sympy.Float(probe) in be.faster) == bool(be.is_faster(probe))


# -- symbolic answers ---------------------------------------------------------
def test_seed_closed_form_golden():
    # Seed preset, all roles dynamic, no torch.compile limitations, fused.
    # Write Pb = P_bf16 eta_bf16, Pf = P_fp8 eta_fp8, B = BW eta_mem, L = t_launch.
    # bf16:  3 GEMMs, 2MKN each, compute only          -> 6MKN / Pb
    # fp8:   6MKN / Pf + casts:
    #        input (fused):  cast reads 2MK, writes 2 x MK fp8 -> 4MK bytes
    #        weight:         amax 2KN + cast 2KN + 2KN        -> 6KN bytes
    #        grad_output:    like input                        -> 4MN bytes
    #        one zero-byte amax reduction per role             -> 3L
    # D = bf16 - fp8 = M [6KN (1/Pb - 1/Pf) - 4(K + N)/B] - [6KN/B + 3L] = a M - b
    # so M* = b / a, and low precision is faster iff a > 0 and M > M*.
    model = rs.linear("dynamic", mode="training", fuse=True, preset="seed")
    be = rs.breakeven(model, solve_for="M")
    Pb = S.peak_flops("bf16") * S.gemm_efficiency("bf16")
    Pf = S.peak_flops("fp8") * S.gemm_efficiency("fp8")
    B, L = S.mem_bw() * S.mem_efficiency(), S.launch_overhead()
    a = 6 * K * N * (1 / Pb - 1 / Pf) - 4 * (K + N) / B
    b = 6 * K * N / B + 3 * L
    assert sympy.cancel(be.closed_form - b / a) == 0
    assert sympy.cancel(be.slope - a) == 0
    # Seed H100: Pb = 989e12 * 0.6 = 593.4e12, Pf = 1979e12 * 0.6 = 1187.4e12,
    # B = 2.4e12 * 0.92 = 2.208e12, L = 2e-6.  At K = N = 8192 (KN = 67,108,864):
    #   a = 6 KN (1/593.4e12 - 1/1187.4e12) - 4 * 16384 / 2.208e12
    #     = 402,653,184 * 8.43024e-16 - 2.96812e-8 = 3.39450e-7 - 2.96812e-8 = 3.09769e-7
    #   b = 402,653,184 / 2.208e12 + 6e-6 = 1.82361e-4 + 6e-6 = 1.88361e-4
    #   M* = b / a = 608.07
    hw = rs.hardware("h100", dataset="seed")
    value = be.closed_form.xreplace({K: 8192, N: 8192, **hw.parameters})
    assert float(value) == pytest.approx(608.07, abs=0.01)
    specialised = be.subs({"K": 8192, "N": 8192, **hw.parameters})
    assert specialised.method.startswith("closed form")
    assert specialised.roots == [value]


def test_torchao_tensorwise_h100_example():
    # cost-models.md section 4: torchao, H100, tensorwise training, fused,
    # K = N = 8192: M* = (8KN/B + 5L) / (6KN (1/Pb - 1/Pf) - 4(K+N)/B) = 1093.8,
    # and 1050 without the five zero-byte kernels' launch floors.
    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    sym = rs.breakeven(model, solve_for="M")
    Pb = S.peak_flops("bf16") * S.gemm_efficiency("bf16")
    Pf = S.peak_flops("fp8") * S.gemm_efficiency("fp8")
    B, L = S.mem_bw() * S.mem_efficiency(), S.launch_overhead()
    expected = (8 * K * N / B + 5 * L) / (6 * K * N * (1 / Pb - 1 / Pf) - 4 * (K + N) / B)
    assert sympy.cancel(sym.closed_form - expected) == 0
    values = {K: 8192, N: 8192, **hw.parameters}
    assert float(sym.closed_form.xreplace(values)) == pytest.approx(1093.8, abs=0.05)
    assert float(expected.xreplace({**values, L: 0})) == pytest.approx(1050, abs=1)
    full = rs.breakeven(model.on(hw), solve_for="M", K=8192, N=8192)
    assert len(full.roots) == 1 and round(float(full.roots[0])) == 1094
    assert full.regime_at(1100)["lowp.cast.input.amax"] == "launch"


@pytest.mark.parametrize("preset, recipe, mode, gpu", [
    ("seed", "delayed", "training", "h100"), ("torchao", "rowwise", "training", "NVIDIA B200"),
    ("default", "mxfp8_cublas", "training", "b200"),
    ("default", "tensorwise", "inference", "h200"),
])
def test_symbolic_subs_agrees_with_numeric_solve(preset, recipe, mode, gpu):
    model = rs.linear(recipe, mode=mode, fuse=True, preset=preset)
    hw = rs.hardware(gpu, dataset=rs.model.PRESETS[preset].dataset)
    sym = rs.breakeven(model, solve_for="M")
    for k, n in ((8192, 8192), (4096, 28672), (1024, 1024)):
        special = sym.subs({K: k, N: n, **hw.parameters})
        direct = rs.breakeven(model.on(hw), solve_for="M", K=k, N=n)
        assert special.roots == direct.roots
        assert special.faster == direct.faster
        assert "closed form" in special.method or "numeric" in special.method


def test_symbolic_conditions_say_when_closed_form_fails():
    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    sym = rs.breakeven(model, solve_for="M")
    assert sym.conditions and all(isinstance(c, sympy.Ge) for _, c in sym.conditions)
    # tiny K, N: GEMMs are not compute-bound at the closed-form root
    special = sym.subs({K: 64, N: 64, **hw.parameters})
    assert special.method.startswith("numeric (closed-form regime does not hold")


def test_solve_for_bandwidth():
    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    be = rs.breakeven(model, solve_for="BW", M=2048, K=8192, N=8192, hardware=hw)
    (bw,) = be.root_values
    at = model.on(hw.replace(mem_bw=float(bw))).evaluate(2048, 8192, 8192)
    assert float(at["speedup"]) == pytest.approx(1, rel=1e-9)
    # more bandwidth makes the casts cheaper: faster above the root
    assert be.faster == sympy.Interval.open(be.roots[0], sympy.oo)
    assert be.is_faster([bw / 2, bw * 2]).tolist() == [False, True]


def test_tie_interval_is_not_faster():
    # torchao inference NVFP4 (fused) on B200 at K = N = 64: below M ~ 48k both
    # sides sit at their launch floors, so the times are equal over an interval
    model = rs.linear("nvfp4", mode="inference", fuse=True, preset="torchao").on("NVIDIA B200")
    be = rs.breakeven(model, solve_for="M", K=64, N=64)
    ms = np.geomspace(1, 1e6, 200)
    speedup = model.evaluate(ms, 64, 64, integer_shapes=False)["speedup"]
    ((lo, hi),) = be.tie_intervals()
    assert lo == 0 and 4e4 < hi < 6e4
    inside, outside = ms < hi * (1 - 1e-9), ms > hi * (1 + 1e-9)
    assert inside.sum() >= 50
    assert np.all(speedup[inside] == 1) and np.all(speedup[outside] != 1)
    assert not be.is_faster(ms[inside]).any()
    # past the tie: slower, then faster beyond the second break-even point
    assert be.root_values[0] == pytest.approx(hi) and len(be.root_values) == 2
    assert be.is_faster(ms).tolist() == (speedup > 1).tolist()


def test_exact_roots():
    model = rs.linear("mxfp8", mode="inference", preset="torchao").on("NVIDIA B200")
    (root,) = rs.breakeven(model, along="cube").roots
    assert root == 300 * sympy.cbrt(130) and root.is_algebraic
    linear_root = rs.breakeven(model, solve_for="M", K=4096, N=4096).roots
    assert all(r.is_Rational for r in linear_root)


def test_block_scale_steps_are_solved_exactly_not_assumed_aligned():
    model = rs.linear("mxfp8", mode="inference", preset="torchao").on("NVIDIA B200")
    cube = rs.breakeven(model, along="cube")
    assert not cube.aligned and "block-aligned" not in str(cube)
    assert "per block-scale step" in cube.method
    # torchao floors (M K + K N) / 32 as a whole, which still depends on M
    assert not rs.breakeven(model, solve_for="M", K=4096, N=4096).aligned
    # a closed form in one regime cannot follow the steps: it says it takes
    # block-aligned shapes
    unbound = rs.linear("mxfp8", mode="inference", preset="torchao")
    assert rs.breakeven(unbound, solve_for="M").aligned


def _aligned_root(model, K_, N_, near):
    """The root of baseline - lowp time with every floor/ceiling taken as its
    argument (block-aligned shapes), by bisection near ``near``: what a
    closed-form solve on aligned shapes gives."""
    from scipy.optimize import brentq

    d = (model.baseline_time - model.lowp_time).subs({K: K_, N: N_}).doit()
    d = d.replace(lambda e: isinstance(e, (sympy.floor, sympy.ceiling)), lambda e: e.args[0])
    return brentq(sympy.lambdify(M, d), near / 2, near * 2)


@lru_cache(maxsize=None)
def _exact_root_witness():
    """The first shipped GPU whose blockwise training root at K = N = 4096 lies
    off the block-aligned one (the calibration decides which: a refit may move it)."""
    for gpu in ("l40s", "rtx 4090", "mi300x", "h100", "b200"):
        model = rs.linear("blockwise").on(gpu)
        be = rs.breakeven(model, solve_for="M", K=4096, N=4096)
        if len(be.roots) == 1 and abs(float(be.roots[0]) - _aligned_root(
                model, 4096, 4096, float(be.roots[0]))) > 0.04:
            return model, be
    raise AssertionError("no shipped GPU has a blockwise root off the aligned one: "
                         "extend the candidates")


def test_exact_root_where_the_aligned_solve_was_off():
    # blockwise at K = N = 4096: on block-aligned shapes (each ceil(M/128) taken
    # as M/128) the root lies elsewhere, where the speedup is not 1; the exact
    # solve, with the block counts as they are, makes both times equal
    model, be = _exact_root_witness()
    (root,) = be.roots
    aligned = _aligned_root(model, 4096, 4096, float(root))
    assert root.is_Rational
    assert float(model.evaluate(aligned, 4096, 4096, integer_shapes=False)["speedup"]) != \
        pytest.approx(1, abs=1e-6)
    times = [e.subs({M: root, K: 4096, N: 4096}) for e in (model.baseline_time,
                                                          model.lowp_time)]
    assert times[0] == times[1]  # exactly
    assert float(model.evaluate(float(root), 4096, 4096, integer_shapes=False)["speedup"]) == \
        pytest.approx(1, abs=1e-12)


@lru_cache(maxsize=None)
def _step_witness():
    """The first (GPU, K, N) of a block-scaled training recipe where the solver
    reports one block-scale step between two roots (the calibration decides
    which: a refit may move it)."""
    for gpu in ("b200", "gb200", "b300", "gb300"):
        model = rs.linear("mxfp4_cutlass").on(gpu)
        for K_ in (1024, 2048, 512):
            for N_ in (4096, 8192, 2048, 1024):
                be = rs.breakeven(model, solve_for="M", K=K_, N=N_)
                if len(be.steps) == 1 and len(be.roots) == 2 and (
                        be.root_values[0] < float(be.steps[0]) < be.root_values[1]):
                    return model, K_, N_, be
    raise AssertionError("no block-scale step witness among the candidates: extend them")


def test_a_step_across_zero_is_reported_not_taken_for_a_root():
    # at a multiple of 32, ceil(M / 32) steps up and low precision goes from
    # faster to slower without equal times (docs/breakeven.md quotes one)
    model, K_, N_, be = _step_witness()
    (step_exact,) = be.steps
    step = float(step_exact)
    assert step_exact.is_Integer and int(step_exact) % 32 == 0
    assert all(abs(float(model.evaluate(float(r), K_, N_, integer_shapes=False)["speedup"][()])
                   - 1) < 1e-12 for r in be.roots)
    sp = model.evaluate(np.array([step, step + 1e-6]), K_, N_, integer_shapes=False)["speedup"]
    assert sp[0] > 1 > sp[1]  # evaluate, not the solver, says it crosses at the step
    assert be.is_faster([step, step + 1e-6]).tolist() == [True, False]  # closed at the step
    lo, hi = be.root_values
    assert sympy.Interval(be.roots[0], step_exact, True, False).is_subset(be.faster)
    assert f"step at M = {int(step_exact)}" in str(be)
    assert be.summary()["steps"] == [step]
    assert be.crossing_values.tolist() == sorted([lo, step, hi])


def test_general_ray_and_str():
    model = rs.linear("rowwise", fuse=True).on("h100")
    be = rs.breakeven(model, along={"M": x, "K": x, "N": 4 * x})
    (r,) = be.root_values
    assert float(model.evaluate(r, r, 4 * r, integer_shapes=False)["speedup"]) == \
        pytest.approx(1, rel=1e-9)
    text = str(be)
    assert "x* =" in text and "faster:" in text and "compute" in text


def test_latex_of_results():
    model = rs.linear("dynamic", fuse=True, preset="seed")
    assert r"M^{*}" in rs.breakeven(model, solve_for="M").latex()
    numeric = rs.breakeven(model.on(rs.hardware("h100", dataset="seed")), along="cube")
    (root,) = numeric.root_values
    assert r"x^{*}" in numeric.latex() and f"{root:.6g}" in numeric.latex()


BAD = [
    (dict(solve_for="Q"), "unknown variable 'Q'"),
    (dict(along={"M": -x, "K": x, "N": x}), "not positive"),
    (dict(along={"M": "x", "K": x, "N": x}), "SymPy expression"),
    (dict(along="square"), "use 'cube'"),
    (dict(along={"M": 5, "K": 5}), "does not depend on rs.x"),
    (dict(solve_for="M", along="cube"), "not both"),
    (dict(solve_for="M", M=4), "both solved for and fixed"),
    (dict(solve_for="M", K=-1), "positive and finite"),
    (dict(solve_for="M", K=float("nan")), "positive and finite"),
    (dict(solve_for="P_fp4", K=8, N=8), "nothing to solve"),
    (dict(solve_for="BW", M=8, K=8, N=8), "pass the unbound model"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_errors(kwargs, message):
    model = rs.linear("tensorwise").on("h100")
    with pytest.raises(ValueError, match=message):
        rs.breakeven(model, **kwargs)


def test_needs_a_model():
    with pytest.raises(ValueError, match="rs.linear"):
        rs.breakeven("tensorwise", solve_for="M")


def test_fractions_are_exact_helpers():
    from roofline_sym.solve.polynomials import roots_in

    (p,) = roots_in((Fraction(-3), Fraction(2)), 0.0, 10.0)
    assert p.exact == Fraction(3, 2)


def test_symbolic_cube_candidates_specialise_to_the_numeric_root():
    # along M = K = N = x the one-regime difference is a cubic in x: the solve
    # keeps every candidate root and .subs() picks the real positive one whose
    # regime conditions hold
    model = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    sym = rs.breakeven(model, along="cube")
    assert sym.symbolic and sym.closed_form is None and len(sym.roots) == 3
    special = sym.subs(hw.parameters)
    direct = rs.breakeven(model.on(hw), along="cube")
    assert special.method.startswith("closed form")
    assert special.roots == direct.roots
    assert float(direct.roots[0]) == pytest.approx(2334.13, abs=0.01)


def test_symbolic_closed_form_reads_as_rates():
    # M* = (8KN/B + 5L) / (6KN (1/Pb - 1/Pf) - 4 (K + N)/B), kept in that shape
    sym = rs.breakeven(rs.linear("tensorwise", fuse=True, preset="torchao"), solve_for="M")
    text = str(sym.closed_form)
    assert "(K + N)" in text and "5*t_launch" in text
    assert "or a < 0" in str(sym)


def test_subs_on_a_hardware_rate_finds_its_closed_form_among_the_roots():
    model = rs.linear("tensorwise", fuse=True, preset="torchao")
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    sym = rs.breakeven(model, solve_for="BW", M=2048, K=8192, N=8192)
    rest = {k: v for k, v in hw.parameters.items() if k != S.mem_bw()}
    special = sym.subs(rest)
    assert special.method.startswith("closed form") and "not among" not in special.method
    assert special.root_values[0] == pytest.approx(1.39005e12, rel=1e-5)


def test_unused_or_misspelt_values_are_errors():
    bound = rs.linear("tensorwise").on("h100")
    with pytest.raises(ValueError, match="bound to H100 SXM"):
        rs.breakeven(bound, solve_for="M", K=8192, N=8192, BW=1e15)
    with pytest.raises(ValueError, match="already bound"):
        rs.breakeven(bound, solve_for="M", K=8192, N=8192, hardware="b200")
    free = rs.linear("tensorwise")
    with pytest.raises(ValueError, match="P_fp4 is not a free symbol"):
        rs.breakeven(free, solve_for="M", P_fp4=1e16)
    sym = rs.breakeven(free, solve_for="M")
    with pytest.raises(ValueError, match="not a free symbol"):
        sym.subs({sympy.Symbol("K"): 8192})  # a plain K is not the positive rs.K
    with pytest.raises(ValueError, match="not a free symbol|unknown variable"):
        sym.subs({"P_typo": 1})


def test_no_root_at_zero_for_a_homogeneous_difference():
    # seed-style compute-only GEMMs with summed casts and no launch term in
    # inference: D = a M, so low precision is faster for every M > 0, no root
    model = rs.linear("rowwise", mode="inference", preset="seed").on(
        rs.hardware("h100", dataset="seed"))
    be = rs.breakeven(model, solve_for="M", K=8192, N=8192)
    assert be.roots == [] and be.faster == sympy.Interval.open(0, sympy.oo)


def test_numeric_helpers_refuse_symbolic_results():
    sym = rs.breakeven(rs.linear("tensorwise", preset="torchao"), solve_for="M")
    for call in (lambda: sym.is_faster([1e5]), lambda: sym.root_values,
                 lambda: sym.regime_at(5000)):
        with pytest.raises(ValueError, match="specialise it with .subs"):
            call()


def test_symbolic_faster_set_carries_the_regime_conditions():
    sym = rs.breakeven(rs.linear("tensorwise", fuse=True, preset="torchao"), solve_for="M")
    condition = sym.faster.condition
    assert all(c in condition.args for _, c in sym.conditions)


@pytest.mark.parametrize("regime, message", [
    ({"lowp.cats": "memory"}, "matches no term"),
    ({"gemm": "memroy"}, "unknown regime for gemm: 'memroy' .did you mean 'memory'"),
    ({"lowp.cast.input.amax_final": "memory"}, "can be memory-bound"),
])
def test_regime_requests_are_checked(regime, message):
    with pytest.raises(ValueError, match=message):
        rs.breakeven(rs.linear("tensorwise", preset="torchao"), solve_for="M", regime=regime)


def test_float_coefficients_are_made_exact():
    model = rs.linear("rowwise", fuse=True).on("h100")
    half = rs.breakeven(model, along={rs.M: 0.5 * x, rs.K: x, rs.N: x})
    exact = rs.breakeven(model, along={rs.M: x / 2, rs.K: x, rs.N: x})
    assert half.roots == exact.roots
    assert rs.breakeven(model, solve_for="M", K=sympy.Float(8192), N=8192).roots == \
        rs.breakeven(model, solve_for="M", K=8192, N=8192).roots
    with pytest.raises(ValueError, match="beyond 2\\*\\*53"):
        rs.breakeven(model, solve_for="M", K=2 ** 70, N=8192)


def test_regime_solve_of_a_numeric_model_keeps_numeric_conditions():
    # with K, N and the hardware fixed, the weight casts' pieces are two numbers:
    # their condition must stay a relation, not collapse to True, so .faster and
    # .subs can still read it
    model = rs.linear("tensorwise", fuse=True).on("h100")
    sym = rs.breakeven(model, solve_for="M", K=8192, N=8192, regime={})
    assert all(isinstance(c, sympy.Ge) for _, c in sym.conditions)
    direct = rs.breakeven(model, solve_for="M", K=8192, N=8192)
    special = sym.subs({})
    assert special.method.startswith("closed form") and special.roots == direct.roots


def test_numeric_and_symbolic_results_are_two_kinds_of_breakeven():
    from roofline_sym.solve import NumericBreakEven, SymbolicBreakEven

    model = rs.linear("tensorwise", fuse=True, preset="torchao")
    numeric = rs.breakeven(model.on("NVIDIA H100"), solve_for="M", K=8192, N=8192)
    symbolic = rs.breakeven(model, solve_for="M")
    assert isinstance(numeric, NumericBreakEven) and isinstance(symbolic, SymbolicBreakEven)
    assert isinstance(numeric, rs.BreakEven) and isinstance(symbolic, rs.BreakEven)
    assert (numeric.symbolic, symbolic.symbolic) == (False, True)
    # each kind carries only its own answer
    assert not hasattr(numeric, "closed_form") and not hasattr(symbolic, "inverted")
    with pytest.raises(ValueError, match="specialise it"):
        symbolic.regime_at(1000)
    # the conditions are structured; their labels read as before
    cond = symbolic.regime_conditions[0]
    assert symbolic.conditions[0] == (f"{cond.term}: {cond.chosen} >= {cond.other}",
                                      cond.relation)


# -- block-scaled recipes: every root exact, against a dense scan --------------------
def _block_scaled():
    out = []
    for preset, gpus in (("default", ("b200", "h100", "mi355x")),
                         ("torchao", ("NVIDIA B200",))):
        for mode in rs.model.MODES:
            for recipe in rs.list_recipes(mode, preset=preset):
                model = rs.linear(recipe, mode=mode, preset=preset)
                if not model.recipe.block_scaled and "blockwise" not in recipe \
                        and "mx" not in recipe:
                    continue
                for gpu in gpus:
                    hw = rs.hardware(gpu, dataset=rs.model.PRESETS[preset].dataset)
                    if model.unsupported_reason(hw) is None:
                        out.append((preset, mode, recipe, gpu))
    return out


BLOCK_SCALED = _block_scaled()
EXACT_RAYS = [("along", "cube"), ("M", (1024, 2048)), ("K", (2048, 8192)), ("N", (16384, 1024))]


def test_block_scaled_configurations_cover_every_recipe():
    recipes = {(p, m, r) for p, m, r, _ in BLOCK_SCALED}
    assert len(recipes) >= 24 and len({g for *_, g in BLOCK_SCALED}) == 4


@pytest.mark.parametrize("preset, mode, recipe, gpu", BLOCK_SCALED)
def test_block_scaled_roots_are_exact(preset, mode, recipe, gpu):
    model = bound(preset, mode, recipe, False, gpu)
    grid = np.geomspace(1.0, 2.0 ** 20, 2500)
    for ray in EXACT_RAYS:
        be = _solve(model, ray)
        for r in be.root_values:  # speedup 1 with the counts as they are
            assert abs(float(model.evaluate(*_shapes_at(ray, r), integer_shapes=False)["speedup"])
                       - 1) <= 1e-9
        speedup = model.evaluate(*_shapes_at(ray, grid), integer_shapes=False)["speedup"]
        near = np.zeros(grid.shape, dtype=bool)
        for c in be.crossing_values:
            near |= np.abs(grid - c) <= 1e-9 * c
        decided = ~near & (np.abs(speedup - 1) > 1e-12)
        assert np.array_equal(be.is_faster(grid)[decided], (speedup > 1)[decided])
        # every sign change of the scan lies at a root or a step
        flips = np.flatnonzero(np.diff(np.sign(speedup[decided] - 1)) != 0)
        g = grid[decided]
        for i in flips:
            assert any(g[i] <= c <= g[i + 1] for c in be.crossing_values)


def test_the_sign_at_an_algebraic_point_is_decided_exactly():
    # GB300 mxfp4_cutlass along the cube: the root is a cube root (a CRootOf); D
    # vanishes there exactly, which floats cannot tell from 1e-20: the 60-digit
    # check can
    from roofline_sym.solve.polynomials import Point
    from roofline_sym.solve.problem import Problem
    from roofline_sym.solve.steps import StepModel

    model = rs.linear("mxfp4_cutlass").on("gb300")
    be = rs.breakeven(model, along="cube")
    (root,) = be._roots
    assert root.exact is None and len(root.poly) == 4  # a cube root
    steps = StepModel.of(Problem.of(model, x, {M: x, K: x, N: x}))
    assert steps.sign_at(root) == 0
    assert steps.sign_at(Point(root.value * (1 + 1e-9))) == 1
    assert steps.sign_at(Point(root.value * (1 - 1e-9))) == -1


def test_roots_print_as_decimals_and_stay_exact():
    # torchao H100 tensorwise, K = N = 8192: M* = 1207706239961/1104106880 = 1093.83
    # (test_torchao_tensorwise_h100_example derives it); a newcomer reads 1093.83,
    # not 22 digits, and the exact value is one attribute away
    model = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    be = rs.breakeven(model, solve_for="M", K=8192, N=8192)
    exact = sympy.Rational(1207706239961, 1104106880)
    assert repr(be.roots) == str(be.roots) == "[1093.83]"
    assert be.roots == [exact] and be.roots[0] == exact and be.roots.exact == [exact]
    assert repr(be.roots.exact) == "[1207706239961/1104106880]"
    assert be.roots.values == [float(exact)]
    assert repr(be.steps) == "[]"
    # symbolic roots print as the expressions they are and have no float values
    sym = rs.breakeven(rs.linear("tensorwise", fuse=True, preset="torchao"), solve_for="M")
    assert "t_launch" in repr(sym.roots)
    with pytest.raises(ValueError, match="symbolic"):
        sym.roots.values


@pytest.mark.parametrize("name, meant", [("k", "K"), ("n", "N"), ("m", "M"), ("bw", "BW")])
def test_a_lowercase_shape_is_named_not_blamed_on_binding(name, meant):
    bound = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    for model in (bound, bound.unbound):
        with pytest.raises(ValueError, match=f"unknown variable '{name}' \\(did you mean "
                                             f"'{meant}'"):
            rs.breakeven(model, solve_for="M", **{name: 8192})


_FRACTIONS = st.fractions(max_denominator=10 ** 18).filter(lambda f: abs(f) < 10 ** 20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(_FRACTIONS, max_size=4), st.sampled_from([1, -1, 3])),
                max_size=6))
def test_combine_is_the_signed_sum_of_fractions(pairs):
    # oracle: the same sum in Fraction arithmetic, coefficient by coefficient
    from roofline_sym.solve.polynomials import combine
    polys, signs = [p for p, _ in pairs], [s for _, s in pairs]
    n = max((len(p) for p in polys), default=0)
    want = [sum((s * p[i] for p, s in pairs if i < len(p)), Fraction(0)) for i in range(n)]
    while want and want[-1] == 0:
        want.pop()
    got = combine(polys, signs)
    assert got == tuple(want)
    assert all(type(c) is Fraction for c in got)
