"""A term's identity, the one roofline that prices it, and its numeric twins."""

import math

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.harness.calibrate import _Problem
from roofline_sym.model.term import (REGIMES, RegimeSummary, Term, TermId, Work,
                                     roofline_piece_times, roofline_pieces, roofline_times)

MODELS = [(r, mode, preset, fuse) for preset in rs.PRESETS for mode in rs.MODES
          for r in rs.list_recipes(mode, preset)[:3] for fuse in (False, True)
          ] + [("dynamic", "training", "seed", True), ("delayed", "training", "seed", False)]


@pytest.mark.parametrize("recipe, mode, preset, fuse", MODELS)
def test_names_round_trip_and_terms_are_priced_by_the_roofline(recipe, mode, preset, fuse):
    m = rs.linear(recipe, mode=mode, preset=preset, fuse=fuse)
    assert list(m.breakdown) == [t.name for t in m.terms]
    for t in m.terms:
        assert TermId.parse(t.name) == t.id and str(t.id) == t.name
        assert t.pieces == roofline_pieces(t.work, gemm_time=m.options.gemm_time,
                                           launch_floor=m.options.launch_floor,
                                           efficiency=m.options.efficiency)
        assert t.group == ("gemm" if t.id.kind == "gemm" else "overhead")


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


@pytest.mark.parametrize("seed", range(4))
def test_numeric_twin_evaluates_the_symbolic_pieces(seed):
    values = _values(seed)
    symbols = {S.hardware_symbol(k): sympy.Float(v, 30) for k, v in values.items()}
    rng = np.random.default_rng(100 + seed)
    rows = [(d, f, b) for d in ("bf16", "fp16", "fp8", "fp4", "") for b in (0.0, 1.0)
            for f in (0.0, 1.0)]
    dtype = [d for d, _, _ in rows]
    flops = np.array([f * rng.uniform(1e6, 1e13) if d else 0.0 for d, f, _ in rows])
    nbytes = np.array([b * rng.uniform(1e3, 1e10) for _, _, b in rows])
    got = roofline_piece_times(dtype, flops, nbytes, values)
    for i, d in enumerate(dtype):
        pieces = dict(roofline_pieces(Work(sympy.Float(flops[i]), d or None,
                                           sympy.Float(nbytes[i]) if nbytes[i] else 0)))
        for j, regime in enumerate(REGIMES):
            want = float(pieces[regime].xreplace(symbols)) if regime in pieces else -math.inf
            assert got[j, i] == pytest.approx(want, rel=1e-13), (d, regime)
    times, regimes = roofline_times(dtype, flops, nbytes, values, regimes=True)
    assert times.tolist() == got.max(axis=0).tolist()
    assert regimes.tolist() == [REGIMES[j] for j in got.argmax(axis=0)]


def test_calibration_prices_rows_by_the_same_pieces():
    values = _values(7)
    dtype = np.array(["bf16", "fp8", "", ""], dtype=object)
    flops = np.array([1e12, 3e11, 0.0, 0.0])
    nbytes = np.array([1e8, 1e7, 1e9, 0.0])
    names = ["eta_bf16", "eta_fp8", "eta_mem", "t_launch"]
    problem = _Problem(dtype, flops, nbytes, np.ones(4),
                       {d: values[f"P_{d}"] for d in ("bf16", "fp8")}, values["BW"], names)
    x = np.log([values[n] for n in names])
    twin = roofline_piece_times(dtype, flops, nbytes, values)
    assert np.allclose(np.exp(problem.pieces(x)), np.where(np.isinf(twin), 0, twin),
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
