"""The compiled evaluation (evaluation/): exact values, what a request
computes, chunks, inputs, lazy arrays, compilation once per structure, memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym.evaluation.runtime import CHUNK
from roofline_sym.model.outputs import GROUPS, compile_model_terms as compile_terms
from roofline_sym.model.term import REGIMES, Term, TermId, Work

# every term kind the shipped models have: casts fused away, block scales
# (ceilings), the seed's compute-only GEMMs, torchao's per-kernel floors
MODELS = [
    ("tensorwise", "training", True, "torchao", "NVIDIA H100"),
    ("mxfp8_cublas", "training", False, "default", "b200"),
    ("nvfp4", "inference", True, "default", "b200"),
    ("rowwise", "inference", False, "torchao", "NVIDIA B200"),
    ("dynamic", "training", True, "seed", "NVIDIA H100"),
]


def _bound(recipe, mode, fuse, preset, gpu):
    return rs.linear(recipe, mode=mode, fuse=fuse, preset=preset).on(gpu)


def _shapes(n, seed=0):
    rng = np.random.default_rng(seed)
    # integers from 1 to 2**17, most not multiples of a block size
    return [np.round(np.exp(rng.uniform(0, np.log(2**17), n))) for _ in range(3)]


@pytest.mark.parametrize("config", MODELS, ids=[m[0] for m in MODELS])
def test_outputs_and_terms_equal_the_exact_rational_values(config):
    mb = _bound(*config)
    M, K, N = _shapes(6)
    out = mb.evaluate(M, K, N)
    terms = mb.evaluate_terms(M, K, N)
    for i in range(len(M)):
        sub = {rs.M: sympy.Integer(int(M[i])), rs.K: sympy.Integer(int(K[i])),
               rs.N: sympy.Integer(int(N[i]))}
        pieces = {t.name: [e.xreplace(sub) for _, e in t.pieces] for t in mb.terms}
        exact = {}  # every total from the exact rational pieces
        for t in mb.terms:
            value = max(pieces[t.name])
            assert value.is_Rational, (t.name, value)
            key = f"{t.side}_{t.group}_time"
            exact[key] = exact.get(key, 0) + value
            seconds, regime = terms[t.name]
            assert seconds[i] == pytest.approx(float(value), rel=1e-12, abs=0), t.name
            assert regime[i] == t.pieces[pieces[t.name].index(value)][0], t.name
        for side in ("baseline", "lowp"):
            exact[f"{side}_time"] = sum(exact.get(f"{side}_{g}_time", 0)
                                        for g in ("gemm", "overhead"))
        exact["speedup"] = exact["baseline_time"] / exact["lowp_time"]
        for name in rs.OUTPUTS:
            assert out[name][i] == pytest.approx(float(exact.get(name, 0)), rel=1e-12, abs=0)


@pytest.mark.parametrize("config", MODELS, ids=[m[0] for m in MODELS])
def test_a_request_gets_what_it_names_bit_for_bit(config):
    mb = _bound(*config)
    M, K, N = _shapes(1000)
    full = mb.evaluate(M, K, N)
    for outputs in [("speedup",), ("lowp_time", "baseline_gemm_time"), "baseline_overhead_time"]:
        part = mb.evaluate(M, K, N, outputs=outputs)
        names = [outputs] if isinstance(outputs, str) else list(outputs)
        assert list(part) == names
        for name in names:
            np.testing.assert_array_equal(part[name], full[name])
    c = mb.compiled  # one group's total needs less than the ratio of all of them
    assert c.program(("lowp_gemm_time",)).n_ops < c.program(("speedup",)).n_ops
    assert c.program(("speedup",)).n_ops <= c.program().n_ops


def test_unknown_or_repeated_outputs_are_refused():
    mb = rs.linear("tensorwise").on("h100")
    with pytest.raises(ValueError, match="unknown output.*'speed'.*outputs are baseline_gemm"):
        mb.evaluate(1, 1, 1, outputs=("speed",))
    with pytest.raises(ValueError, match="name one twice"):
        mb.evaluate(1, 1, 1, outputs=("speedup", "speedup"))


def test_chunks_do_not_change_a_value():
    c = rs.linear("mxfp8_cublas").on("b200").compiled
    M, K, N = _shapes(1000, seed=1)
    whole = c.evaluate(M, K, N)
    for chunk in (1, 7, 999, 1000, 4096):
        part = c.evaluate(M, K, N, chunk=chunk)
        for name in rs.OUTPUTS:
            np.testing.assert_array_equal(part[name], whole[name], err_msg=f"{name}, {chunk}")
    with pytest.raises(ValueError, match="chunk must be a positive integer"):
        c.evaluate(M, K, N, chunk=0)


def test_broadcast_strided_and_integer_inputs_equal_elementwise():
    mb = rs.linear("rowwise").on("h100")
    M = np.arange(1, 7, dtype=np.int64).reshape(3, 2)[:, ::-1] * 1000  # not contiguous
    K = np.array([4096, 8191], dtype=np.uint32)
    out = mb.evaluate(M, K, 512)
    assert out["speedup"].shape == (3, 2)
    for i in range(3):
        for j in range(2):
            one = mb.evaluate(float(M[i, j]), float(K[j]), 512.0)
            for name in rs.OUTPUTS:
                assert out[name][i, j] == one[name], (name, i, j)
    scalar = mb.evaluate(8192, 8192, 8192)
    assert all(np.shape(v) == () for v in scalar.values())
    empty = mb.evaluate(np.zeros((0, 3)) + 1, 8192, 8192)
    assert empty["speedup"].shape == (0, 3)


@pytest.mark.parametrize("bad, message", [
    (-3.0, "must be positive and finite"), (np.nan, "must be positive and finite"),
    (np.inf, "must be positive and finite"), (2.0**60, r"must be at most 2\*\*53"),
    (0, "must be positive and finite")])
def test_a_bad_shape_deep_in_a_long_array_is_named(bad, message):
    mb = rs.linear("tensorwise").on("h100")
    M = np.full(3 * CHUNK + 5, 4096.0)
    M[-2] = bad  # in the last chunk, after three chunks were computed
    with pytest.raises(ValueError, match=f"^M {message}"):
        mb.evaluate(M, 4096, 4096)
    with pytest.raises(ValueError, match="N must be a number or an array of numbers"):
        mb.evaluate(1, 1, [True, False])


def test_tiny_shapes_whose_product_underflows_are_not_zeros():
    # the shape product M*K*N (which finds zero shapes cheaply) underflows to 0
    # here, though every shape is positive: the shapes are then checked one by one
    mb = rs.linear("tensorwise").on("h100")
    assert mb.compiled.program(("speedup",)).checks_zero
    tiny = np.full(10, 1e-200)
    out = mb.evaluate(tiny, tiny, 4096.0, outputs="speedup", integer_shapes=False)["speedup"]
    assert np.all(np.isfinite(out)) and np.all(out > 0)
    with pytest.raises(ValueError, match="^K must be positive"):
        mb.evaluate(tiny, np.where(np.arange(10) == 7, 0.0, tiny), 4096.0,
                    integer_shapes=False)
    with pytest.raises(ValueError, match="^M must be positive"):  # two negatives: product > 0
        mb.evaluate([-2.0, 3.0], [-2.0, 3.0], 4096.0)


def test_float32_halves_the_outputs_and_keeps_seven_digits():
    mb = rs.linear("mxfp8_cublas").on("b200")
    M, K, N = _shapes(5000, seed=2)
    ref = mb.evaluate(M, K, N)
    low = mb.evaluate(M, K, N, dtype=np.float32)
    for name in rs.OUTPUTS:
        assert low[name].dtype == np.float32
        np.testing.assert_allclose(low[name], ref[name], rtol=2e-6, atol=0, err_msg=name)
    with pytest.raises(ValueError, match="floating"):
        mb.evaluate(M, K, N, dtype=np.int64)


def test_unbound_hardware_by_name_scalars_axes_and_per_shape_arrays():
    m = rs.linear("tensorwise", fuse=True)
    M, K, N = _shapes(2 * CHUNK + 3, seed=3)
    h100 = m.on("h100").evaluate(M, K, N)
    values = {str(s): float(v) for s, v in
              rs.hardware("h100").values_for(m.free_hardware_symbols).items()}
    by_name = m.evaluate(M, K, N, **values)
    # a value per shape (as the hardware fit's size-dependent efficiencies), larger
    # than a chunk: coefficients are made chunk by chunk
    per_shape = dict(values, eta_fp8=np.full(len(M), values["eta_fp8"]))
    per_row = m.evaluate(M, K, N, **per_shape)
    for name in rs.OUTPUTS:
        np.testing.assert_allclose(by_name[name], h100[name], rtol=1e-14, atol=0)
        np.testing.assert_allclose(per_row[name], h100[name], rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match=r"free hardware symbols \['BW'"):
        m.evaluate(1, 1, 1)
    with pytest.raises(ValueError, match=r"unknown hardware value\(s\) \['BW'\]"):
        m.on("h100").evaluate(1, 1, 1, BW=1e12)


class Lazy(np.lib.mixins.NDArrayOperatorsMixin):
    """An array library's array that numpy dispatches to and that refuses to be
    turned into a numpy array (as dask's would compute)."""

    def __init__(self, data):
        self.data = np.asarray(data)
        self.shape, self.dtype = self.data.shape, self.data.dtype

    def __array__(self, *args, **kwargs):
        raise AssertionError("materialized")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        assert method == "__call__" and "out" not in kwargs, (method, kwargs)
        data = [x.data if isinstance(x, Lazy) else x for x in inputs]
        return Lazy(getattr(ufunc, method)(*data, **kwargs))

    def astype(self, dtype):
        return Lazy(self.data.astype(dtype))


def test_lazy_arrays_stay_lazy_and_agree():
    mb = rs.linear("mxfp8_cublas").on("b200")
    M, K, N = _shapes(100, seed=4)
    out = mb.evaluate(Lazy(M), K, Lazy(N))
    ref = mb.evaluate(M, K, N)
    for name in rs.OUTPUTS:  # baseline_overhead_time is a constant 0: still lazy
        assert isinstance(out[name], Lazy), name
        np.testing.assert_allclose(out[name].data, ref[name], rtol=1e-15, atol=0)
    unbound = rs.linear("mxfp8_cublas")
    hw = unbound.hardware_axis(["b200"], ndim=1)
    hw["BW"] = Lazy(hw["BW"])
    lazy_hw = unbound.evaluate(M, K, N, outputs="speedup", **hw)["speedup"]
    np.testing.assert_allclose(lazy_hw.data[0], ref["speedup"], rtol=1e-14, atol=0)


def test_compiled_once_per_recipe_and_mode_whatever_the_gpu():
    m = rs.linear("rowwise", mode="inference")
    on = [m.on(g) for g in ("h100", "h200", "b200", "mi300x")]
    again = rs.linear("rowwise", mode="inference").on("gaudi3")
    assert {id(b.compiled.compiled) for b in on + [again]} == {id(compile_terms(m.terms))}
    assert len({b.compiled.coefficients_bound for b in on}) == 4  # the numbers differ
    other = rs.linear("rowwise", mode="training")
    assert compile_terms(other.terms) is not compile_terms(m.terms)


def test_identical_terms_are_computed_once():
    # three identical bf16 GEMMs of a training step: the bf16 side costs what one does
    t = Term.roofline(TermId("baseline", "gemm", "output"), Work(2 * rs.M * rs.K * rs.N, "bf16",
                                                                  2 * rs.M * rs.K))
    lowp = Term.roofline(TermId("lowp", "gemm", "output"), Work(2 * rs.M * rs.K * rs.N, "fp8",
                                                                 rs.M * rs.K))
    one = compile_terms([t, lowp]).program(("baseline_gemm_time",))
    three = compile_terms([t, t, t, lowp]).program(("baseline_gemm_time",))
    assert three.n_ops == one.n_ops
    values = {"P_bf16": 1e15, "eta_bf16": 0.5, "BW": 1e12, "eta_mem": 0.5, "t_launch": 2e-6,
              "P_fp8": 2e15, "eta_fp8": 0.5}
    x = np.array([1.0, 64.0, 4096.0])
    a = compile_terms([t, lowp]).evaluate(x, x, x, values)
    b = compile_terms([t, t, t, lowp]).evaluate(x, x, x, values)
    np.testing.assert_allclose(b["baseline_gemm_time"], 3 * a["baseline_gemm_time"], rtol=1e-15)


def test_group_regimes_are_the_regime_holding_most_time():
    mb = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    M, K, N = _shapes(300, seed=5)
    out = mb.compiled.evaluate(M, K, N, outputs=(), regimes=True)
    terms = mb.evaluate_terms(M, K, N)
    for key in GROUPS:
        members = [t for t in mb.terms if (t.side, t.group) == key]
        if not members:
            assert (out[key] == -1).all()
            continue
        held = np.array([sum(np.where(terms[t.name][1] == r, terms[t.name][0], 0.0)
                             for t in members) for r in REGIMES])
        np.testing.assert_array_equal(out[key], np.argmax(held, axis=0))


def test_scratch_stays_within_a_few_mib_beyond_the_outputs():
    mb = rs.linear("mxfp8_cublas").on("b200")
    M, K, N = _shapes(1_000_000, seed=6)
    mb.evaluate(M[:10], K[:10], N[:10])  # compiled before measuring
    for outputs in (("speedup",), rs.OUTPUTS):
        tracemalloc.start()
        try:
            out = mb.evaluate(M, K, N, outputs=outputs)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        scratch = peak - sum(a.nbytes for a in out.values())
        assert scratch < 16 * 2**20, (outputs, scratch / 2**20)
        del out
    # the scratch buffers are kept for the next call (a sweep's chunks): it
    # allocates its outputs and little else
    tracemalloc.start()
    try:
        out = mb.evaluate(M, K, N, outputs=("speedup",))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak - out["speedup"].nbytes < 2**20
