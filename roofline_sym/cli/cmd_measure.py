"""``roofline-sym measure``: time every component on this CUDA GPU into a CSV."""

from __future__ import annotations

import argparse

from ..fidelity.own_gpu.timing import GRIDS, measure

NAME = "measure"
HELP = "time GEMMs, casts and micro-benchmarks on this CUDA GPU (CSV)"
EXAMPLES = ("  roofline-sym measure --out h200.csv\n"
            "  roofline-sym measure --out smoke.csv --grid quick")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="FILE.csv", help="measurement file")
    p.add_argument("--grid", default="default", choices=tuple(GRIDS),
                   help="default: pow2 cubes 512..16384 + Llama 3 70B layers (~2-6 min)")
    p.add_argument("--static", action="store_true",
                   help="compile casts per shape (slower; default: dynamic shapes)")


def run(args: argparse.Namespace) -> int:
    path = measure(args.out, args.grid, dynamic=not args.static)
    print(f"wrote {path}")
    return 0
