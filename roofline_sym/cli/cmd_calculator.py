"""``roofline-sym calculator``: write the calculator page into a folder: every
GPU, recipe and mode of the default model as JavaScript printed from its SymPy
expressions, with the 80% band of each speedup, for a browser and no server
(the documentation site builds the same page)."""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import Iterable

from ..fidelity.published_tables.intervals import speedup_band
from ..fidelity.published_tables.step_prediction import read_step_residuals, step_band
from ..fidelity.published_tables.step_table import read_steps
from ..output.calculator import write_calculator
from ..steps.model import Step

NAME = "calculator"
HELP = ("write the calculator page (HTML, and JavaScript printed from the SymPy models) "
        "into a folder; open its calculator.html in a browser")
EXAMPLES = "  roofline-sym calculator -o calculator     # then open calculator/calculator.html"

# the band around each speedup: where 80% of measurements lie (as the main job's)
INTERVAL = 0.8


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", default="calculator", metavar="FOLDER",
                   help="the folder to write the page into (created if missing; "
                        "default: calculator)")


def whole_step_band(bound: Step) -> tuple[float, float]:
    """The band factors of a bound step's speedup, as ``roofline-sym step``
    makes them: from the step model's errors on published end-to-end runs of
    its kind (training or serving)."""
    assert bound.hardware is not None
    spec, p = bound.spec, bound.spec.parallel
    record = {"source_id": "calculator", "gpu": bound.hardware.name, "gpus": str(p.gpus),
              "model": spec.arch.name, "recipe": spec.recipe, "mode": spec.mode,
              "seq_len": "8192", "local_batch": "1", "dp_shard": str(p.dp_shard),
              "implementation": spec.implementation}
    (row,) = read_steps([record])
    return step_band(row, INTERVAL, read_step_residuals())


def write(folder: str | Path, steps: Iterable[tuple[str, str]] | None = None) -> list[Path]:
    """The page's files written into ``folder``, each band from the residual
    pools of the published measurements (``speedup_band``, and for whole
    ``steps``, default the page's, ``whole_step_band``)."""
    return write_calculator(folder, lambda m: speedup_band(m, INTERVAL), interval=INTERVAL,
                            step_band=whole_step_band, steps=steps)


def run(args: argparse.Namespace) -> int:
    paths = write(args.output)
    page = next(p for p in paths if p.name == "calculator.html")
    print(f"wrote {len(paths)} files into {Path(args.output)}; open {page} in a browser")
    return 0
