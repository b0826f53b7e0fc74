"""``roofline-sym hardware [NAME]``: list a dataset, or show one entry with its sources."""

from __future__ import annotations

import argparse

from ..devices.catalog import entry_toml
from ..numeric.table import Table
from . import common
from .common import UserError

NAME = "hardware"
HELP = "list hardware, or show one entry with its sources"
EXAMPLES = ("  roofline-sym hardware\n  roofline-sym hardware 'NVIDIA H100 80GB HBM3'\n"
            "  roofline-sym hardware --dataset torchao\n"
            "  roofline-sym hardware h100 --toml > my-gpu.toml     # a file to start your own from")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="name, alias or torch device name")
    common.hardware_options(p, gpu=False)
    common.output_options(p)
    p.add_argument("--toml", action="store_true",
                   help="print the entry as a hardware file to start your own from")


def run(args: argparse.Namespace) -> int:
    ds = common.hardware_dataset(args)
    if args.toml:
        if not args.name or args.json or args.csv:
            raise UserError("--toml prints one entry: give its NAME, and neither --json nor --csv")
        print(entry_toml(args.name, ds), end="")
        return 0
    entries = [ds.get(args.name)] if args.name else list(ds)
    if args.name and not (args.json or args.csv):
        print(entries[0].describe())
        return 0
    common.emit(Table.from_rows([h.as_row() for h in entries], keys=("name",)), args,
                lambda: print(ds.describe()))
    return 0
