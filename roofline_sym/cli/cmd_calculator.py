"""``roofline-sym calculator``: write the calculator page into a folder: every
GPU, recipe and mode of the default model as JavaScript printed from its SymPy
expressions, with the 80% band of each speedup, for a browser and no server
(the documentation site builds the same page)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..fidelity.published_tables.intervals import speedup_band
from ..output.calculator import write_calculator

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


def write(folder: str | Path) -> list[Path]:
    """The page's files written into ``folder``, each band from the residual
    pools of the published measurements (``speedup_band``)."""
    return write_calculator(folder, lambda m: speedup_band(m, INTERVAL), interval=INTERVAL)


def run(args: argparse.Namespace) -> int:
    paths = write(args.output)
    page = next(p for p in paths if p.name == "calculator.html")
    print(f"wrote {len(paths)} files into {Path(args.output)}; open {page} in a browser")
    return 0
