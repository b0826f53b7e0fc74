"""The table of docs/step.md: the step at its stated priors and at its fitted
numbers against the linears alone, recomputed (FSDP over 8 or 64 GPUs,
compile, local batch 1, 8192 tokens per GPU)."""

import re
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym.devices import implementations
from roofline_sym.fidelity.published_tables.step_fit import step_priors
from roofline_sym.steps.parts import FITTED

PAGE = Path(__file__).resolve().parents[1] / "docs" / "step.md"
ROWS = {"H100 tensorwise, Llama 3 8B, 8 GPUs": ("h100", "tensorwise", "llama3-8b", 8),
        "H100 tensorwise, Llama 3 70B, 64 GPUs": ("h100", "tensorwise", "llama3-70b", 64),
        "H100 rowwise, Llama 3 8B, 8 GPUs": ("h100", "rowwise", "llama3-8b", 8),
        "B200 tensorwise, Llama 3 8B, 8 GPUs": ("b200", "tensorwise", "llama3-8b", 8)}
OUTPUTS = ["speedup", "baseline_linear_s", "lowp_linear_s"]


def _page_rows():
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ROWS:
            yield cells[0], [float(c[:-1]) for c in cells[2:5]], cells[5]


def _at_priors(step):
    """The bound step evaluated with its generation's stated priors instead of
    the fitted numbers (the unbound step takes every number by name)."""
    values = {str(k): float(v) for k, v in step.hardware_values.items()}
    priors = step_priors()[implementations.generation(step.hardware)]
    values.update({str(FITTED[k]): v for k, v in priors.items() if str(FITTED[k]) in values})
    return step.unbound.evaluate(8192, 1, OUTPUTS, **values)


@pytest.mark.parametrize("label,quoted,published", list(_page_rows()))
def test_the_page_quotes_what_the_step_predicts(label, quoted, published):
    gpu, recipe, arch, gpus = ROWS[label]
    step = rs.step(arch, recipe, gpus=gpus, compile=True).on(gpu)
    out = step.evaluate(8192, 1, OUTPUTS)
    linears = float(out["baseline_linear_s"] / out["lowp_linear_s"])
    speedup, prior = float(out["speedup"]), float(_at_priors(step)["speedup"])
    assert [round(linears, 2), round(prior, 2), round(speedup, 2)] == quoted
    # the step gains less than its linears wherever they gain, more where they lose
    assert min(1, linears) <= speedup <= max(1, linears)
    # at its priors the step overstated every published run
    assert prior > float(re.split("[-x]", published)[0])


def test_every_row_is_on_the_page():
    assert {label for label, _, _ in _page_rows()} == set(ROWS)
