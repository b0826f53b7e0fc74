"""``roofline-sym fidelity FILE.csv``: predicted vs measured, before and after
calibration (optionally writing the calibrated hardware file and a plot)."""

from __future__ import annotations

import argparse
from typing import Any

from ..harness import fidelity
from . import common

NAME = "fidelity"
HELP = "predicted vs measured, before and after calibration"
EXAMPLES = ("  roofline-sym fidelity h200.csv --gpu h200\n"
            "  roofline-sym fidelity h200.csv --gpu h200 --write-hardware h200-cal.toml "
            "--plot fidelity.png")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.csv", help="a file written by `roofline-sym measure`")
    common.hardware_options(p)
    cal = p.add_mutually_exclusive_group()
    cal.add_argument("--no-calibrate", action="store_true", help="report the model as is")
    cal.add_argument("--calibrated", metavar="HW.toml", help="compare a calibrated entry")
    p.add_argument("--size-dependent", action="store_true",
                   help="fit a GEMM efficiency that saturates with FLOPs")
    p.add_argument("--write-hardware", metavar="OUT.toml", help="write the calibrated entry")
    p.add_argument("--plot", metavar="OUT.png", help="predicted vs measured speedup")
    p.add_argument("--no-regimes", action="store_true", help="no per-regime breakdown")


def run(args: argparse.Namespace) -> int:
    ds = common.hardware_dataset(args)
    hw = ds.get(args.gpu[0]) if args.gpu else (next(iter(ds)) if args.hardware_file else None)
    calibrated: Any = args.calibrated or not args.no_calibrate
    print(fidelity.cli(args.file, hardware=hw, calibrated=calibrated,
                       size_dependent=args.size_dependent, write_hardware=args.write_hardware,
                       plot=args.plot, regimes=not args.no_regimes))
    return 0
