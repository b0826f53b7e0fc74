"""The step numbers fitted to whole steps: the split a fit runs on, the fit,
leaving a source out, the shipped numbers and their data."""

import csv
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import roofline_sym as rs
from roofline_sym.devices.toml_io import tomllib
from roofline_sym.fidelity.published_tables import step_fit as sf
from roofline_sym.fidelity.published_tables.step_figures import spearman
from roofline_sym.fidelity.published_tables.step_numbers import (step_numbers_text,
                                                                  step_toml_path)
from roofline_sym.fidelity.published_tables.step_prediction import step_residuals_path
from roofline_sym.fidelity.published_tables.step_table import published_steps_path
from roofline_sym.fidelity.published_tables.step_throughputs import read_throughputs
from roofline_sym.steps.parts import FITTED, SideParts, StepParts, split_step

OTHER = {"attention_forward": 0.3, "attention_backward": 0.2, "overlap": 0.5,
         "step_fixed_s": 0.05}


@pytest.mark.parametrize("kwargs,point", [
    (dict(model="llama3-8b", recipe="tensorwise", gpus=8, compile=True, ac="selective"),
     (4096, 2)),
    (dict(model="llama3-70b", recipe="rowwise", gpus=16, tp=2, pp=2, ac="full"), (8192, 1)),
    (dict(model="llama3-8b", recipe="rowwise", mode="decode"), (2048, 64)),
])
def test_parts_price_the_step_at_any_numbers(kwargs, point):
    # oracle: the unbound step's compiled path with every number given by name
    step = rs.step(kwargs.pop("model"), kwargs.pop("recipe"), **kwargs).on("h100")
    split = split_step(step, *point)
    values = {str(k): float(v) for k, v in step.hardware_values.items()}
    values.update({str(FITTED[k]): v for k, v in OTHER.items() if str(FITTED[k]) in values})
    out = step.unbound.evaluate(*point, ["baseline_step_s", "lowp_step_s"], **values)
    base, lowp = split.times(OTHER)
    assert base == pytest.approx(float(out["baseline_step_s"]), rel=1e-12)
    assert lowp == pytest.approx(float(out["lowp_step_s"]), rel=1e-12)
    # and at the numbers it was bound with
    bound = step.evaluate(*point, ["baseline_step_s"])
    assert split.times(split.numbers)[0] == pytest.approx(float(bound["baseline_step_s"]),
                                                          rel=1e-12)


def _side(compute, attention, hidden):
    # attention: seconds at efficiency 1, forward then backward (2.5x)
    return SideParts(compute, ((attention, 0.0, "attention_forward"),
                               (2.5 * attention, 0.0, "attention_backward")),
                     hidden, 0.0, 0.01)


def _runs(truth, sources=10, generation="hopper", measured_scale=None):
    """Runs of ``sources`` sources, two each, whose speedups and step times are
    what ``truth`` prices (a source's speedups times ``measured_scale[source]``)."""
    out = []
    for i in range(sources):
        for j in range(2):
            seq = 1 + i + 3 * j
            split = StepParts(_side(1.0, 0.05 * seq, 1.2 + 0.3 * j),
                              _side(0.6, 0.05 * seq, 1.2 + 0.3 * j), 0.0, True, 1000.0, truth)
            base, lowp = split.times(truth)
            scale = (measured_scale or {}).get(f"s{i}", 1.0)
            out.append(sf.StepRun(f"s{i}", 2 * i + j, "training", False, generation,
                                  base / lowp * scale, split, base))
    return out


PRIORS = {"default": {"attention_forward": 0.5, "attention_backward": 0.4, "overlap": 0.8,
                      "step_fixed_s": 0.0},
          "hopper": {"attention_forward": 0.6, "attention_backward": 0.45, "overlap": 0.8,
                     "step_fixed_s": 0.0}}


def test_the_fit_finds_the_numbers_that_made_the_runs():
    truth = {"attention_forward": 0.42, "attention_backward": 0.315, "overlap": 0.9,
             "step_fixed_s": 0.05}
    fit = sf.fit_step_numbers(_runs(truth), PRIORS)
    got = fit.of("hopper")
    # twenty exact runs outweigh the prior's pull toward 0.6: within 5%
    assert got["attention_forward"] == pytest.approx(0.42, rel=0.05)
    assert got["attention_backward"] / got["attention_forward"] == pytest.approx(0.75)
    assert got["overlap"] == pytest.approx(0.9, abs=0.03)
    # (the fixed time takes up some of what the attention prior holds back: 1% of a step)
    assert got["step_fixed_s"] == pytest.approx(0.05, abs=0.015)
    # a generation without runs keeps its attention prior, and shares overlap and fixed time
    assert fit.of("default")["attention_forward"] == 0.5
    assert fit.of("default")["overlap"] == got["overlap"]
    assert fit.attention_fitted == ("hopper",)


def test_a_fit_stays_within_the_physical_range():
    # runs that ask for an absurdly slow attention core get the floor, not less
    truth = {"attention_forward": 0.05, "attention_backward": 0.04, "overlap": 0.8,
             "step_fixed_s": 0.0}
    got = sf.fit_step_numbers(_runs(truth), PRIORS).of("hopper")
    assert got["attention_forward"] == pytest.approx(sf.ATTENTION_RANGE[0])


def test_no_runs_no_fit():
    fit = sf.fit_step_numbers([], PRIORS)
    assert fit.numbers == PRIORS and fit.runs == 0


def test_leaving_a_source_out_changes_only_what_it_should():
    truth = {"attention_forward": 0.42, "attention_backward": 0.315, "overlap": 0.9,
             "step_fixed_s": 0.05}
    runs = _runs(truth, sources=5)
    moved = _runs(truth, sources=5, measured_scale={"s0": 1.3})
    before, after = sf.left_out(runs, PRIORS), sf.left_out(moved, PRIORS)
    own = [i for i, r in enumerate(runs) if r.source_id == "s0"]
    # s0's own measurements never reach its predictions ...
    assert [after[i] for i in own] == [before[i] for i in own]
    # ... nor its band's pool; they do reach the other sources' predictions
    assert sf.nested_pool(runs, "s0", PRIORS) == sf.nested_pool(moved, "s0", PRIORS)
    assert any(after[i] != before[i] for i in range(len(runs)) if i not in own)


def test_a_generation_held_by_one_source_is_at_its_prior_when_it_is_left_out():
    truth = {"attention_forward": 0.42, "attention_backward": 0.315, "overlap": 0.9,
             "step_fixed_s": 0.05}
    runs = _runs(truth, sources=4) + _runs(truth, sources=1, generation="default")[:0]
    alone = [sf.StepRun("solo", 99, "training", False, "default", r.measured, r.parts,
                        r.baseline_step_s) for r in _runs(truth, sources=1)]
    fits = sf.fits_for(runs + alone, PRIORS)
    assert fits.without("solo").of("default")["attention_forward"] == 0.5
    assert fits.without().of("default")["attention_forward"] != 0.5


def test_the_shipped_numbers_are_physical_and_keep_their_priors():
    tables = tomllib.loads(step_toml_path().read_text())["generation"]
    for name, table in tables.items():
        for key in FITTED:
            assert f"prior_{key}" in table, (name, key)
        assert sf.ATTENTION_RANGE[0] <= table["attention_forward"] <= sf.ATTENTION_RANGE[1]
        assert table["attention_backward"] < table["attention_forward"]
        assert 0.05 <= table["overlap"] <= 1 and 0 <= table["step_fixed_s"] <= 2
        if table["fitted"].startswith("attention: its prior"):
            assert table["attention_forward"] == table["prior_attention_forward"]


def test_writing_the_numbers_leaves_every_other_line_alone():
    text = step_toml_path().read_text()
    numbers = {g: {k: 0.123 for k in FITTED} for g in ("hopper", "cdna3")}
    priors = {g: {k: 0.5 for k in FITTED} for g in numbers}
    new = step_numbers_text(text, numbers, priors, {g: "test" for g in numbers})
    old_data, new_data = tomllib.loads(text), tomllib.loads(new)
    assert {k: v for k, v in new_data.items() if k != "generation"} == {
        k: v for k, v in old_data.items() if k != "generation"}
    assert [line for line in new.splitlines() if line.startswith("#")] == [
        line for line in text.splitlines() if line.startswith("#")]
    assert new_data["generation"]["hopper"]["overlap"] == 0.123
    assert new_data["generation"]["hopper"]["source"] == old_data["generation"]["hopper"][
        "source"]
    assert new_data["generation"]["ampere"] == old_data["generation"]["ampere"]
    # written twice, the same text
    assert step_numbers_text(new, numbers, priors, {g: "test" for g in numbers}) == new


def _steps_csv():
    with open(published_steps_path(), newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return {i + 2: rec for i, rec in enumerate(csv.DictReader(lines))}


def test_the_throughputs_are_the_runs_of_their_lines():
    steps = _steps_csv()
    for line, t in read_throughputs().items():
        rec = steps[line]
        assert rec["source_id"] == t.source_id and rec["mode"] == "training", line
        ratio = t.lowp_tokens_per_s / t.baseline_tokens_per_s
        assert ratio == pytest.approx(float(rec["measured_speedup"]), rel=0.006), line
        if t.absolute:
            assert t.grad_accum == 1


def test_the_stored_residuals_are_the_published_runs():
    steps = _steps_csv()
    with open(step_residuals_path(), newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert len(rows) >= 60
    for row in rows:
        rec = steps[int(row["line"])]
        assert rec["source_id"] == row["source_id"] and rec["measured_speedup"]
        assert math.isfinite(float(row["log_ratio"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=12))
def test_spearman_is_scipys(pairs):
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = spearman(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=1e-12)
        assert np.isfinite(ours)
