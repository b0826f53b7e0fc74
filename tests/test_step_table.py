"""The table of docs/step.md: the uncalibrated step against the linears alone,
recomputed (FSDP over 8 or 64 GPUs, compile, local batch 1, 8192 tokens per GPU)."""

import re
from pathlib import Path

import pytest

import roofline_sym as rs

PAGE = Path(__file__).resolve().parents[1] / "docs" / "step.md"
ROWS = {"H100 tensorwise, Llama 3 8B, 8 GPUs": ("h100", "tensorwise", "llama3-8b", 8),
        "H100 tensorwise, Llama 3 70B, 64 GPUs": ("h100", "tensorwise", "llama3-70b", 64),
        "H100 rowwise, Llama 3 8B, 8 GPUs": ("h100", "rowwise", "llama3-8b", 8),
        "B200 tensorwise, Llama 3 8B, 8 GPUs": ("b200", "tensorwise", "llama3-8b", 8)}


def _page_rows():
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ROWS:
            yield cells[0], [float(c[:-1]) for c in cells[2:4]], cells[4]


@pytest.mark.parametrize("label,quoted,published", list(_page_rows()))
def test_the_page_quotes_what_the_step_predicts(label, quoted, published):
    gpu, recipe, arch, gpus = ROWS[label]
    out = rs.step(arch, recipe, gpus=gpus, compile=True).on(gpu).evaluate(
        8192, 1, ["speedup", "baseline_linear_s", "lowp_linear_s"])
    linears = float(out["baseline_linear_s"] / out["lowp_linear_s"])
    speedup = float(out["speedup"])
    assert [round(linears, 2), round(speedup, 2)] == quoted
    # the step gains less than its linears wherever they gain, more where they lose
    assert min(1, linears) <= speedup <= max(1, linears)
    low = float(re.split("[-x]", published)[0])
    assert speedup > low  # uncalibrated, it overstates every published run


def test_every_row_is_on_the_page():
    assert {label for label, _, _ in _page_rows()} == set(ROWS)
