"""A model's terms as named SymPy expressions: names, definitions, substitution,
calculus and code printing (lambdify) agree with the written-out form."""

import pickle
from functools import cache

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.model.term import Term, TermId, Work
from roofline_sym.model.term_time import TermTime

M, K, N = rs.M, rs.K, rs.N
BW, EM, TL, P8, E8 = (S.mem_bw(), S.mem_efficiency(), S.launch_overhead(),
                      S.peak_flops("fp8"), S.gemm_efficiency("fp8"))
CAST = Term.roofline(TermId("lowp", "cast", "input", "amax"), Work(bytes=2 * M * K))
GEMM = Term.roofline(TermId("lowp", "gemm", "grad_input"), Work(2 * M * K * N, "fp8", M * K),
                     label="fp8")


def test_a_term_prints_as_its_name_and_is_its_max_written_out():
    t = CAST.time
    assert isinstance(t, TermTime) and str(t) == "lowp.cast.input.amax"
    assert sympy.latex(t) == r"t^{\mathrm{amax}}_{X}"
    assert sympy.latex(GEMM.time) == r"t^{\mathrm{fp8}}_{dX}"
    # hand-written: 2 M K bytes at BW eta_mem, floored at the launch time
    assert t.doit() == sympy.Max(2 * M * K / (BW * EM), TL)
    assert t.doit() == CAST.expr and sympy.expand(t) == sympy.expand(CAST.expr)
    assert t.pieces == CAST.pieces and TermId.parse(t.name) == CAST.id


def test_substitution_calculus_and_numbers_follow_the_definition():
    t = CAST.time
    values = {M: 1000, K: 3, BW: 2, EM: sympy.Rational(1, 2), TL: 5}
    assert t.xreplace(values) == 6000 == t.subs(values)  # 2*1000*3 / (2 * 1/2)
    assert t.xreplace({**values, M: 1}) == 6  # 6 bytes' time is above the floor of 5
    partial = t.subs(M, 1000)
    assert isinstance(partial, TermTime) and partial.doit() == CAST.expr.subs(M, 1000)
    assert (t.diff(M) - CAST.expr.diff(M)).xreplace(values) == 0
    assert float(t.evalf(subs=values)) == 6000
    assert pickle.loads(pickle.dumps(t)) == t
    # a bound launch-only kernel stays named until something is substituted
    launch = Term.roofline(TermId("lowp", "cast", "input", "amax_final"), Work())
    bound = launch.xreplace({TL: sympy.Rational(1, 500000)}).time
    assert str(bound) == "lowp.cast.input.amax_final"
    assert (bound + M).xreplace({M: 1}) == 1 + sympy.Rational(1, 500000)


@pytest.mark.parametrize("modules", ["numpy", "math", "mpmath"])
def test_lambdify_prints_the_definition(modules):
    expr = 3 * CAST.time + GEMM.time / CAST.time
    args = [M, K, N, BW, EM, TL, P8, E8]
    named = sympy.lambdify(args, expr, modules=modules)
    written = sympy.lambdify(args, expr.doit(), modules=modules)
    for point in ([64.0, 128.0, 256.0, 1e12, 0.8, 2e-6, 1e15, 0.7],
                  [8192.0, 8192.0, 8192.0, 3e12, 0.9, 4e-6, 2e15, 0.6]):
        assert float(named(*point)) == pytest.approx(float(written(*point)), rel=1e-12)


def test_totals_are_short_sums_of_names():
    m = rs.linear("tensorwise", mode="training")
    tex = sympy.latex(m.lowp_time)
    assert len(tex) <= 400 and r"\max" not in tex
    assert m.lowp_time == sympy.Add(*(t.time for t in m.terms if t.side == "lowp"))
    assert m.lowp_time.doit() == sympy.Add(*(t.expr for t in m.terms if t.side == "lowp"))
    assert m.breakdown == {t.name: t.expr for t in m.terms}


MODELS = [(r, mode, preset) for preset in rs.model.PRESETS for mode in rs.model.MODES
          for r in rs.list_recipes(mode, preset)]


@pytest.mark.parametrize("recipe, mode, preset", MODELS)
def test_no_two_terms_share_a_latex_name(recipe, mode, preset):
    for workload in ("linear", "ln-linear-sigmoid" if mode == "training" else "relu-linear"):
        m = rs.linear(recipe, mode=mode, preset=preset, workload=workload)
        seen: dict[str, sympy.Expr] = {}
        for t in m.terms:
            # a workload kernel runs on both sides: one name, one definition
            assert seen.setdefault(sympy.latex(t.time), t.expr) == t.expr, t.name


# -- lambdify of a bound model's expressions equals evaluate -------------------------------
CASES = [("tensorwise", "training", "default", "h100"), ("rowwise", "inference", "default", "h200"),
         ("mxfp8_cublas", "training", "default", "b200"),
         ("tensorwise", "training", "torchao", "NVIDIA H100"),
         ("dynamic", "training", "seed", "NVIDIA H100")]


@cache
def _compiled(case):
    recipe, mode, preset, gpu = case
    mb = rs.linear(recipe, mode=mode, preset=preset).on(gpu)
    # the named expressions as they are: lambdify prints each term's definition
    return mb, sympy.lambdify([M, K, N], [getattr(mb, o) for o in rs.OUTPUTS], modules="numpy")


dims = st.integers(min_value=1, max_value=2 ** 17)


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(CASES), m=dims, k=dims, n=dims)
def test_lambdify_of_the_named_model_equals_evaluate(case, m, k, n):
    mb, fn = _compiled(case)
    got = fn(float(m), float(k), float(n))
    out = mb.evaluate(m, k, n)
    for name, value in zip(rs.OUTPUTS, got):
        np.testing.assert_allclose(float(value), float(out[name]), rtol=1e-12, atol=0,
                                   err_msg=name)
