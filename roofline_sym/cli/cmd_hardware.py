"""``roofline-sym hardware [NAME]``: list a dataset, or show one entry with its sources."""

from __future__ import annotations

import argparse

from . import common

NAME = "hardware"
HELP = "list hardware, or show one entry with its sources"
EXAMPLES = ("  roofline-sym hardware\n  roofline-sym hardware 'NVIDIA H100 80GB HBM3'\n"
            "  roofline-sym hardware --dataset torchao")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="name, alias or torch device name")
    common.hardware_options(p, gpu=False)
    common.output_options(p)


def run(args: argparse.Namespace) -> int:
    ds = common.hardware_dataset(args)
    entries = [ds.get(args.name)] if args.name else list(ds)
    if args.name and not (args.json or args.csv):
        print(entries[0].describe())
        return 0
    common.emit([h.as_row() for h in entries], args, lambda: print(ds.describe()))
    return 0
