"""``roofline-sym`` with no command: the main job on an embedded default, H100 SXM:
every training recipe's break-even shapes with the regime behind them and the
range a measurement would put the break-even cube in, and speedups at common
cubes.  The command line keeps its text in the user's cache folder
(``results_cache``): a second run prints it without solving again."""

from __future__ import annotations

import argparse

from ..devices import dataset
from ..fidelity.published_tables.intervals import breakeven_range
from ..output.breakeven_tables import overview
from .usage import DEFAULT_GPU

# the break-even cube's range: where 80% of measurements would put it
INTERVAL = 0.8


def text() -> str:
    """The main job's output, computed."""
    table = overview(dataset("default").get(DEFAULT_GPU),
                     band=lambda m: breakeven_range(m, INTERVAL),
                     band_label=f"range: where the measured break-even cube lies with "
                                f"{INTERVAL:.0%} probability, from the model's errors on "
                                "sources\nleft out of its fit (docs/fidelity.md); where those "
                                "errors lean one way, so does the range, which may then miss x*")
    return f"{table}\nmore: roofline-sym --help\n"


def run(args: argparse.Namespace) -> int:
    print(text(), end="")
    return 0
