"""A term's identity, the one roofline that prices it, and its numeric twins."""


import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.fidelity.own_gpu.hardware_fit import _Problem
from roofline_sym.model.term import (REGIMES, Regime, RegimeSummary, Term, TermId, Work,
                                     roofline_piece_times, roofline_pieces, roofline_times)

MODELS = [(r, mode, preset, fuse) for preset in rs.model.PRESETS for mode in rs.model.MODES
          for r in rs.list_recipes(mode, preset)[:3] for fuse in (False, True)
          ] + [("dynamic", "training", "seed", True), ("delayed", "training", "seed", False)]


@pytest.mark.parametrize("recipe, mode, preset, fuse", MODELS)
def test_names_round_trip(recipe, mode, preset, fuse):
    m = rs.linear(recipe, mode=mode, preset=preset, fuse=fuse)
    assert list(m.breakdown) == [t.name for t in m.terms]
    for t in m.terms:
        assert TermId.parse(t.name) == t.id and str(t.id) == t.name
        assert t.group == ("gemm" if t.id.kind == "gemm" else "overhead")


# the flat roofline (torchao's roofline_utils, the seed document), written out:
# a GEMM of F FLOPs at dtype d takes F / (P_d eta_d); B bytes take B / (BW eta_mem);
# every GEMM and kernel pays t_launch, except under the seed's rules, where GEMMs
# cost their FLOPs only and only kernels that move no bytes pay t_launch
P = {d: sympy.Symbol(f"P_{d}", positive=True) for d in ("bf16", "fp8", "fp4")}
ETA = {d: sympy.Symbol(f"eta_{d}", positive=True) for d in ("bf16", "fp8", "fp4")}
BW, ETA_MEM, T_LAUNCH = (sympy.Symbol(n, positive=True) for n in ("BW", "eta_mem", "t_launch"))
MM, KK, NN = rs.M, rs.K, rs.N


def flat_roofline(flops, dtype, nbytes, *, seed: bool) -> dict:
    if dtype is not None:
        compute = flops / (P[dtype] * ETA[dtype])
        return {"compute": compute} if seed else {
            "compute": compute, "memory": nbytes / (BW * ETA_MEM), "launch": T_LAUNCH}
    if nbytes == 0:
        return {"launch": T_LAUNCH}
    memory = nbytes / (BW * ETA_MEM)
    return {"memory": memory} if seed else {"memory": memory, "launch": T_LAUNCH}


# tensorwise float8 training, the terms' work by hand (bf16: 2 bytes, fp8: 1; an
# M x K input, K x N weight, M x N output; GEMMs of 2 M K N FLOPs)
TENSORWISE_TRAINING = {
    # bf16: both operands and the result in bf16
    "baseline.gemm.output": (2 * MM * KK * NN, "bf16", 2 * MM * KK + 2 * KK * NN + 2 * MM * NN),
    # fp8 operands (1 byte each), bf16 result: MK + KN + 2MN
    "lowp.gemm.output": (2 * MM * KK * NN, "fp8", MM * KK + KK * NN + 2 * MM * NN),
    # grad_input = grad_output (M x N, fp8) @ weight (N x K, fp8) -> M x K bf16
    "lowp.gemm.grad_input": (2 * MM * KK * NN, "fp8", MM * NN + KK * NN + 2 * MM * KK),
    # grad_weight = input^T (K x M, fp8) @ grad_output (M x N, fp8) -> K x N bf16
    "lowp.gemm.grad_weight": (2 * MM * KK * NN, "fp8", MM * KK + MM * NN + 2 * KK * NN),
    # amax of the bf16 input reads it once: 2 MK bytes
    "lowp.cast.input.amax": (0, None, 2 * MM * KK),
    # the final amax reduction moves (next to) nothing: a launch
    "lowp.cast.input.amax_final": (0, None, 0),
    # read bf16 (2), write fp8 along both dims (1 + 1): 4 MK bytes
    "lowp.cast.input.cast_dim0_dim1": (0, None, 4 * MM * KK),
    # read bf16 (2), write fp8 once (1): 3 KN bytes
    "lowp.cast.weight.cast_dim0": (0, None, 3 * KK * NN),
}


@pytest.mark.parametrize("preset", ["torchao", "seed"])
@pytest.mark.parametrize("name", TENSORWISE_TRAINING)
def test_tensorwise_terms_are_priced_as_derived_by_hand(preset, name):
    m = rs.linear("tensorwise", mode="training", preset=preset, fuse=False)
    flops, dtype, nbytes = TENSORWISE_TRAINING[name]
    term = {t.name: t for t in m.terms}[name]
    assert dict(term.pieces) == flat_roofline(flops, dtype, nbytes, seed=preset == "seed")


@pytest.mark.parametrize("recipe, mode, preset, fuse",
                         [c for c in MODELS if c[2] in ("torchao", "seed")])
def test_every_flat_term_is_the_flat_roofline_of_its_work(recipe, mode, preset, fuse):
    m = rs.linear(recipe, mode=mode, preset=preset, fuse=fuse)
    for t in m.terms:
        want = flat_roofline(t.work.flops, t.work.dtype, t.work.bytes, seed=preset == "seed")
        assert dict(t.pieces) == want, t.name


@pytest.mark.parametrize("recipe, mode, preset, fuse",
                         [c for c in MODELS if c[2] == "default"])
def test_no_term_beats_the_peaks(recipe, mode, preset, fuse):
    # whatever the calibrated form, a GEMM is no faster than its FLOPs at the
    # dtype's peak and no kernel moves bytes faster than the memory bandwidth
    hw = rs.hardware("b200")
    m = rs.linear(recipe, mode=mode, preset=preset, fuse=fuse).on(hw)
    for shape in [(1, 1, 1), (4096, 8192, 1024), (2**16, 2**14, 2**15)]:
        at = dict(zip((rs.M, rs.K, rs.N), shape))
        for t in m.terms:
            seconds = float(t.expr.xreplace(at))
            floor = float(t.work.bytes.xreplace(at)) / float(hw.mem_bw)
            if t.work.dtype is not None:
                floor = max(floor, float(t.work.flops.xreplace(at))
                            / float(hw.peak_flops[t.work.dtype]))
            assert seconds >= floor, (t.name, shape)


def test_breakdown_names_are_the_dotted_strings_users_know():
    m = rs.linear("tensorwise", mode="inference", fuse=True)
    assert list(m.breakdown) == [
        "baseline.gemm.output", "baseline.activation.input", "lowp.gemm.output",
        "lowp.cast.input.amax", "lowp.cast.input.amax_final", "lowp.cast.input.cast"]
    assert TermId.parse("lowp.cast.input.amax") == TermId("lowp", "cast", "input", "amax")


@pytest.mark.parametrize("bad", ["lowp", "a.b.c.d.e", "lowp..gemm", ""])
def test_bad_names_are_refused(bad):
    with pytest.raises(ValueError):
        TermId.parse(bad)


def test_a_kernel_needs_a_role():
    with pytest.raises(ValueError, match="needs a role"):
        TermId("lowp", "cast", None, "amax")


def test_roofline_options():
    F, B = 2 * rs.M * rs.K * rs.N, rs.M * rs.K
    gemm = Work(F, "fp8", B)
    compute = F / (S.peak_flops("fp8") * S.gemm_efficiency("fp8"))
    memory = B / (S.mem_bw() * S.mem_efficiency())
    assert roofline_pieces(gemm) == (("compute", compute), ("memory", memory),
                                     ("launch", S.launch_overhead()))
    # the launch-floor option is about kernels; a roofline GEMM keeps its floor
    assert roofline_pieces(gemm, launch_floor="empty_kernels") == roofline_pieces(gemm)
    assert roofline_pieces(Work(bytes=B)) == (("memory", memory), ("launch", S.launch_overhead()))
    assert roofline_pieces(Work(bytes=B), launch_floor="empty_kernels") == (("memory", memory),)
    assert roofline_pieces(Work()) == (("launch", S.launch_overhead()),)
    with pytest.raises(ValueError, match="launch floor"):
        roofline_pieces(gemm, launch_floor="never")


def _values(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    out = {"BW": rng.uniform(1e12, 8e12), "eta_mem": rng.uniform(0.5, 1),
           "t_launch": rng.uniform(1e-6, 5e-6)}
    for d in ("bf16", "fp16", "fp8", "fp4"):
        out[f"P_{d}"], out[f"eta_{d}"] = rng.uniform(1e14, 1e16), rng.uniform(0.5, 1)
    return out


def _flat_by_hand(dtype, flops, nbytes, v) -> np.ndarray:
    """The flat roofline's pieces per row, by hand: rows (compute, memory, launch),
    -inf where a row has no such piece (a kernel computes nothing; a kernel that
    moves nothing has only its launch)."""
    gemm = np.array([bool(d) for d in dtype])
    peak = np.array([v[f"P_{d}"] * v[f"eta_{d}"] if d else np.nan for d in dtype])
    compute = np.where(gemm, flops / np.where(gemm, peak, 1.0), -np.inf)
    memory = np.where(gemm | (nbytes > 0), nbytes / (v["BW"] * v["eta_mem"]), -np.inf)
    launch = np.full(len(dtype), v["t_launch"])
    return np.array([compute, memory, launch])


@pytest.mark.parametrize("seed", range(4))
def test_numeric_twin_prices_rows_by_the_flat_roofline(seed):
    values = _values(seed)
    rng = np.random.default_rng(100 + seed)
    rows = [(d, f, b) for d in ("bf16", "fp16", "fp8", "fp4", "") for b in (0.0, 1.0)
            for f in (0.0, 1.0)]
    dtype = [d for d, _, _ in rows]
    flops = np.array([f * rng.uniform(1e6, 1e13) if d else 0.0 for d, f, _ in rows])
    nbytes = np.array([b * rng.uniform(1e3, 1e10) for _, _, b in rows])
    got = roofline_piece_times(dtype, flops, nbytes, values)
    want = _flat_by_hand(dtype, flops, nbytes, values)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-13, atol=0)
    times, regimes = roofline_times(dtype, flops, nbytes, values, regimes=True)
    assert times.tolist() == pytest.approx(want.max(axis=0).tolist(), rel=1e-13)
    assert regimes.tolist() == [REGIMES[j] for j in want.argmax(axis=0)]


def test_calibration_prices_rows_by_the_same_roofline():
    values = _values(7)
    dtype = np.array(["bf16", "fp8", "", ""], dtype=object)
    flops = np.array([1e12, 3e11, 0.0, 0.0])
    nbytes = np.array([1e8, 1e7, 1e9, 0.0])
    names = ["eta_bf16", "eta_fp8", "eta_mem", "t_launch"]
    classes = np.array(["bf16", "fp8_rowwise", "", ""], dtype=object)
    problem = _Problem(dtype, classes, flops, nbytes, np.ones(4),
                       {d: values[f"P_{d}"] for d in ("bf16", "fp8")}, values["BW"], names)
    x = np.log([values[n] for n in names])
    want = _flat_by_hand(dtype, flops, nbytes, values)
    assert np.allclose(np.exp(problem.pieces(x)), np.where(np.isinf(want), 0, want),
                       rtol=1e-13, atol=0)


def test_bound_terms_keep_their_identity_and_work():
    m = rs.linear("rowwise")
    mb = m.on("h100")
    for t, b in zip(m.terms, mb.terms):
        assert (b.id, b.work) == (t.id, t.work) and b.pieces == tuple(
            (r, e.xreplace(rs.hardware("h100").parameters)) for r, e in t.pieces)


def test_a_term_is_named_by_a_term_id():
    with pytest.raises(TypeError, match="TermId"):
        Term("lowp.gemm.output", (("launch", S.launch_overhead()),))


def test_regime_summary_writes_one_grouping_four_ways():
    reg = {"baseline.gemm.output": "compute", "baseline.gemm.grad_input": "memory",
           "lowp.gemm.output": "compute", "lowp.cast.input.amax": "memory",
           "lowp.cast.input.amax_final": "launch", "lowp.cast.weight.cast": "memory"}
    s = RegimeSummary.of(reg)
    assert s.text() == ("baseline gemm: 1 compute, 1 memory; lowp gemm: 1 compute; "
                        "lowp cast: 2 memory, 1 launch")
    assert s.words(lambda side: "bf16" if side == "baseline" else "fp8") == (
        "bf16 GEMMs: 1 compute, 1 memory; fp8 GEMMs: compute; casts: 1 launch, 2 memory")
    assert s.letters() == "gemm C1  cast M2 L1"
    fixed = TermId.parse("lowp.cast.input.amax_final")
    assert s.short() == "compute+memory / memory+launch"
    assert s.short(lambda t: t != fixed) == "compute+memory / memory"


# every combination of the three regimes, written by hand
COMBINATIONS = {
    0: ("-", "-"), 1: ("compute", "C"), 2: ("memory", "M"), 4: ("launch", "L"),
    3: ("compute+memory", "C+M"), 5: ("compute+launch", "C+L"),
    6: ("memory+launch", "M+L"), 7: ("compute+memory+launch", "C+M+L"),
}


@pytest.mark.parametrize("bits", COMBINATIONS)
def test_regime_combinations_are_written_and_read_back(bits):
    text, letters = COMBINATIONS[bits]
    r = Regime(bits)
    assert (str(r), r.letters) == (text, letters)
    assert Regime.parse(text) == r and Regime.parse("+".join(reversed(r.names))) == r
    assert Regime.of(list(r.names) * 2) == r


def test_regime_order_puts_single_regimes_first_and_none_last():
    ordered = sorted(map(Regime, COMBINATIONS), key=lambda r: r.order)
    assert [str(r) for r in ordered] == [
        "compute", "compute+memory", "compute+memory+launch", "compute+launch",
        "memory", "memory+launch", "launch", "-"]
    assert REGIMES == ("compute", "memory", "launch")


def test_an_unknown_regime_says_which_and_what_is_valid():
    with pytest.raises(ValueError, match=r"unknown regime 'memroy' \(did you mean 'memory'\?\); "
                                         r"valid: compute, memory, launch"):
        Regime.parse("compute+memroy")


def test_unknown_kernel_kind_and_scaling_family_suggest_the_close_name():
    with pytest.raises(ValueError, match=r"unknown kernel kind 'transpos' \(did you mean "
                                         r"'transpose'\?\); valid: "):
        Work(bytes=rs.M, kind="transpos")
    with pytest.raises(ValueError, match=r"unknown scaling family 'rowwse' \(did you mean "
                                         r"'rowwise'"):
        Work(2 * rs.M, "fp8", rs.M, scaling="rowwse")
