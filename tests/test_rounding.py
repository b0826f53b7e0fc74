"""Block counts' ceiling and floor built directly (model.rounding): always what
SymPy's own evaluation returns, and substitution equal to ``xreplace``."""

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.model import rounding

POSITIVE = [S.M, S.K, S.N, S.x]
PLAIN = [sympy.Symbol("a"), sympy.Symbol("n", integer=True, positive=True),
         sympy.Symbol("r", real=True), sympy.Symbol("e", extended_positive=True)]
KINDS = [(rounding.ceiling, sympy.ceiling), (rounding.floor, sympy.floor)]


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 300), q=st.integers(1, 300),
       symbols=st.lists(st.sampled_from(POSITIVE + PLAIN), min_size=0, max_size=3),
       shift=st.integers(-2, 2), kind=st.sampled_from(KINDS))
def test_same_as_sympy(p, q, symbols, shift, kind):
    # block ratios (M/32, M*K/128, 3*x/2), the symbols SymPy may know more of
    # (integers, any real, extended reals) and sums: SymPy's own answer each time
    ours, theirs = kind
    arg = sympy.Rational(p, q) * sympy.Mul(*symbols) + shift
    got = ours(arg)
    assert got == theirs(arg)
    assert type(got) is type(theirs(arg))


def test_a_plain_block_ratio_skips_the_search():
    # M/32 with M positive: SymPy's evaluation returns ceiling(M/32) as it is
    assert rounding._plain_block_ratio(S.M / 32)
    assert rounding._plain_block_ratio(3 * S.M * S.K / 128)
    assert not rounding._plain_block_ratio(S.M)  # not a Mul
    assert not rounding._plain_block_ratio(2 * S.M)  # an integer coefficient
    assert not rounding._plain_block_ratio(S.M / 32 + 1)
    assert not rounding._plain_block_ratio(sympy.Symbol("a") / 32)  # sign unknown
    # a sum goes to SymPy, which takes the integer out
    assert rounding.ceiling(S.M / 32 + 1) == 1 + sympy.ceiling(S.M / 32, evaluate=False)
    assert rounding.ceiling(sympy.Integer(8192) / 32) == 256


@pytest.mark.parametrize("recipe", ["tensorwise", "mxfp8_cublas", "nvfp4"])
@pytest.mark.parametrize("rule", [{S.M: S.x, S.K: S.x, S.N: S.x},
                                  {S.K: 8192, S.N: 8192},
                                  {S.K: 8200, S.N: 100, S.M: S.x}])
def test_xreplace_equals_sympys(recipe, rule):
    # every piece of real models (ceiling and floor block counts), with and
    # without a shared memo: the very expression SymPy's xreplace builds
    mode = "inference" if recipe == "nvfp4" else "training"
    rule = {k: sympy.sympify(v) for k, v in rule.items()}
    for preset in ("default", "torchao"):
        model = rs.linear(recipe, mode=mode, preset=preset)
        memo: dict = {}
        for term in model.terms:
            for _, e in term.pieces:
                want = e.xreplace(rule)
                assert rounding.xreplace(e, rule) == want
                assert rounding.xreplace(e, rule, memo) == want
