"""``roofline-sym fidelity``: predicted vs measured.

``--published`` (or a speedup table ``FILE.csv`` in the published schema)
compares the presets on published speedups, per source and GPU, and
``--heldout`` scores the calibrations on rows left out of their fit; a file
written by ``roofline-sym measure`` is compared before and after calibration
(optionally writing the calibrated hardware file and a plot)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .. import fidelity
from ..devices import Hardware
from ..devices.toml_io import writable_path
from ..errors import InputError
from ..fidelity.own_gpu.comparison import measured_report, sample_path
from ..output import plot as figures
from . import common

NAME = "fidelity"
HELP = "predicted vs measured, before and after calibration"
EXAMPLES = ("  roofline-sym fidelity --published --plot published.png\n"
            "  roofline-sym fidelity --published --heldout\n"
            "  roofline-sym fidelity --published --cross-validate\n"
            "  roofline-sym fidelity h200.csv --gpu h200\n"
            "  roofline-sym fidelity h200.csv --gpu h200 --write-hardware h200-cal.toml "
            "--plot fidelity.png")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.csv", nargs="?",
                   help="a file written by `roofline-sym measure`, or a speedup table")
    p.add_argument("--published", action="store_true",
                   help="the published speedups shipped with roofline_sym, for every preset")
    p.add_argument("--heldout", action="store_true",
                   help="with --published: refit the calibrations without some rows and "
                        "score those rows")
    p.add_argument("--cross-validate", action="store_true",
                   help="with --published: refit each GPU's calibration without one source "
                        "at a time and predict that source (the honest figure)")
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
    if args.published or (args.file and _is_speedup_table(args.file)):
        return _published(args)
    if args.heldout or args.cross_validate:
        raise InputError(f"--{'heldout' if args.heldout else 'cross-validate'} goes with "
                         "--published")
    if not args.file:
        raise InputError("give a measurement file (FILE.csv) or --published")
    if args.size_dependent and (args.no_calibrate or args.calibrated):
        raise common.UserError("--size-dependent shapes a new fit; it does not apply with "
                               f"{'--no-calibrate' if args.no_calibrate else '--calibrated'}")
    ds = common.hardware_dataset(args)
    hw = ds.get(args.gpu[0]) if args.gpu else (next(iter(ds)) if args.hardware_file else None)
    calibrated: Any = args.calibrated or not args.no_calibrate
    print(measured_text(args.file, hardware=hw, calibrated=calibrated,
                        size_dependent=args.size_dependent, write_hardware=args.write_hardware,
                        plot=args.plot, regimes=not args.no_regimes))
    return 0


def _is_speedup_table(path: str) -> bool:
    try:
        with open(path, encoding="utf-8-sig") as f:
            header = next((ln for ln in f if ln.strip() and not ln.lstrip().startswith("#")), "")
    except (OSError, ValueError):  # not a file it can open (a NUL in the name): the
        return False  # measurement reader says why
    return "measured_speedup" in header.split(",") or "workload" in header.split(",")


def _published(args: argparse.Namespace) -> int:
    if args.published and args.file:
        raise InputError("give either --published or a speedup table FILE.csv, not both")
    for flag in ("no_calibrate", "calibrated", "size_dependent", "write_hardware", "gpu",
                 "hardware_file"):
        if getattr(args, flag, None):
            raise InputError(f"--{flag.replace('_', '-')} applies to a measurement file, "
                             "not to speedup tables")
    rep = fidelity.published_report(args.file)
    print(rep.text())
    if args.heldout:
        print("\nleft out of the fit (the calibrations refitted without these rows):")
        for split, e in fidelity.heldout():
            print(f"  {split.name}: {e['rows']} rows left out, median {e['median']:.1%}, "
                  f"p90 {e['p90']:.1%}, wrong {e['wrong']}/{e['decisive']}")
    if args.cross_validate:
        if args.file:
            raise InputError("--cross-validate refits the shipped calibrations on the "
                             "published measurements: use it with --published")
        print("\n" + str(fidelity.leave_one_source_out()))
    if args.plot:
        print(f"wrote {rep.plot(args.plot)}")
    return 0


def measured_text(path: str | os.PathLike[str], *, hardware: Hardware | str | None = None,
                  calibrated: Any = True, size_dependent: bool = False,
                  write_hardware: str | os.PathLike[str] | None = None,
                  plot: str | os.PathLike[str] | None = None,
                  regimes: bool = True) -> str:
    """What ``roofline-sym fidelity FILE.csv`` prints: the report's text, and
    lines saying what was written (``write_hardware``: the calibrated TOML;
    ``plot``: the speedup plot, skipped without matplotlib).

    >>> print(measured_text(sample_path(), hardware="h200", regimes=False).splitlines()[1])
    *** SYNTHETIC data: generated by the cost model, not measured on a GPU ***
    """
    if plot is not None:
        figures.output_format(plot)  # a bad file name fails before anything is computed or written
    if write_hardware is not None and (calibrated is False or calibrated is None):
        raise InputError("--write-hardware needs a calibration; drop --no-calibrate")
    if write_hardware is not None:
        writable_path(write_hardware)  # a bad name fails before the fit
    rep = measured_report(path, hardware, calibrated, size_dependent=size_dependent)
    lines = [rep.text(regimes)]
    if write_hardware is not None:
        if rep.calibration is None:  # calibrated is neither False nor None: checked above
            raise InputError("--write-hardware needs a calibration; drop --no-calibrate")
        written = rep.calibration.to_toml(write_hardware)
        lines.append(f"wrote the calibrated hardware entry to {written}")
    if plot is not None:
        plotted = rep.plot(plot)
        lines.append(f"wrote the speedup plot to {plotted}" if plotted else
                     "no plot: matplotlib is not installed (pip install matplotlib)")
    return "\n".join(lines)
