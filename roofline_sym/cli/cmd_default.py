"""``roofline-sym`` with no command: the main job on an embedded default, H100 SXM:
every training recipe's break-even shapes with the regime behind them, and
speedups at common cubes."""

from __future__ import annotations

import argparse

from ..devices import dataset
from ..output.tables import overview
from .common import DEFAULT_GPU


def run(args: argparse.Namespace) -> int:
    print(overview(dataset("default").get(DEFAULT_GPU)))
    print("more: roofline-sym --help")
    return 0
