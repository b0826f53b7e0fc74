"""``roofline-sym sweep``: recipes x GPUs over a shape set or a shape file, as a
table, CSV or JSON (``--total``: one count-weighted total per model)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterable

import numpy as np

from ..numeric.shapes import list_shape_sets
from ..numeric.sweep_table import Table, sweep_chunks, sweep_totals, write_sweep
from ..progress import Progress
from ..validate import show
from . import common
from .common import UserError

NAME = "sweep"
HELP = "evaluate recipes x GPUs over a shape set or a shape file"
EXAMPLES = ("  roofline-sym sweep --gpu h100 --shapes pow2 --csv > pow2.csv\n"
            "  roofline-sym sweep --gpu h100 --gpu b200 --recipe tensorwise "
            "--shapes llama3-70b -M 16384 --total\n"
            "  roofline-sym sweep --gpu h200 --shapes my_shapes.csv --json -o out.json")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--shapes", metavar="NAME|FILE|DIR",
                   help=f"shape set ({', '.join(list_shape_sets())}), a .csv/.json "
                        "file of M,K,N rows, or a Hugging Face config directory")
    p.add_argument("-M", type=common.dimension, help="tokens per batch for model shape sets")
    p.add_argument("--total", action="store_true",
                   help="one count-weighted total per model and shape set")
    p.add_argument("-o", "--output", metavar="FILE", help="write CSV/JSON to FILE")
    p.add_argument("--max-rows", type=common.count, help="rows shown as text (default 60)")
    common.output_options(p)


def _check(args: argparse.Namespace) -> None:
    """Options that contradict each other are refused, not silently resolved."""
    suffix = Path(args.output).suffix.lower() if args.output else ""
    for flag, fmt in (("--csv", args.csv), ("--json", args.json)):
        if fmt and suffix in (".csv", ".json") and suffix != flag.replace("--", "."):
            raise UserError(f"{flag} with -o {show(args.output)}: the file name says "
                            f"{suffix[1:]}; give one format")
    if args.max_rows is not None and (args.csv or args.json or args.output):
        raise UserError("--max-rows limits the rows shown as text; CSV and JSON output hold "
                        "every row")
    if args.output and not (args.csv or args.json):  # before any work is done
        if suffix not in (".csv", ".json"):
            raise UserError(f"-o {show(args.output)}: use a .csv or .json file, or give "
                            "--csv/--json")
        args.csv, args.json = suffix == ".csv", suffix == ".json"


def run(args: argparse.Namespace) -> int:
    _check(args)
    if args.shapes is None:
        raise UserError("--shapes is required: a shape-set name (see `roofline-sym sweep "
                        "--list`) or a CSV/JSON file of M,K,N rows")
    shapes = common.shapes(args.shapes, args.M)
    models = common.models(args)
    rows = len(models) * len(shapes)
    max_rows = 60 if args.max_rows is None else args.max_rows
    # rows stream from the sweep to the writer: memory stays bounded however many;
    # a bar on a terminal for a sweep that takes a while, nothing elsewhere
    with Progress(rows, "sweep", unit="row") as bar:
        if args.total:
            table = sweep_totals(models, shapes, progress=bar)
        elif args.csv or args.json:
            write_sweep(models, shapes, args.output or sys.stdout,
                        "csv" if args.csv else "json", progress=bar)
        else:  # text shows the first rows only: compute only those
            table = _head(sweep_chunks(models, shapes, rows=max(max_rows, 1)), max_rows)
    if args.total and args.csv:
        table.to_csv(args.output or sys.stdout)
    elif args.total and args.json:
        table.to_json(args.output or sys.stdout)
    elif not (args.csv or args.json):
        experts = ["groups"] if np.any(shapes.groups != 1) else []
        cols = (["gpu", "recipe", "shape_set", "M", "baseline_time", "lowp_time", "speedup"]
                if args.total else ["gpu", "recipe", "name", "M", "K", "N", *experts,
                                    "speedup", "lowp_gemm_regime", "lowp_overhead_regime"])
        print(f"{models[0].mode}; {table.caption}")
        text = table.format(cols, max_rows=max_rows)
        if not args.total and rows > max_rows:
            text += f"\n... {rows - max_rows} more rows"
        print(text)
    return 0


def _head(tables: Iterable[Table], n: int) -> Table:
    """The first ``n`` rows of a stream of tables."""
    kept: list[Table] = []
    have = 0
    for t in tables:
        kept.append(t)
        have += len(t)
        if have >= n:
            break
    return Table({c: np.concatenate([t[c] for t in kept])[:n] for c in kept[0].columns},
                 kept[0].caption)
