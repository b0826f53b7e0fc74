"""What the commands share: errors, number parsing, common options, models, output.

Numbers on the command line are parsed, never evaluated (see ``validate``);
every problem with the input is a ``UserError``: one line, exit code 2.

>>> parse_at(["K=8192,N=4096"])
{'K': 8192.0, 'N': 4096.0}
>>> parse_shape("1,2,x")
Traceback (most recent call last):
roofline_sym.cli.usage.UserError: --shape '1,2,x': not numbers; write e.g. --shape 8192,8192,8192
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ..devices import DATASETS, Dataset, Hardware, UnknownHardwareError, dataset, load_hardware
from ..errors import InputError
from ..interop.hf import shape_set
from ..model.layer import Linear, linear
from ..model.presets import PRESETS, options
from ..model.recipes import MODES, SEED_SCALINGS, list_recipes
from ..model.workloads import list_workloads
from ..numeric.shapes import ShapeSet
from ..numeric.sweep_table import model_grid
from ..numeric.table import Table
from ..validate import SHAPE_MAX, parse_number, show
from .usage import DEFAULT_GPU, Parser, UserError

__all__ = ["UserError", "Parser", "DEFAULT_GPU", "parse_shape", "parse_at", "count", "dimension",
           "hardware_options", "model_options", "output_options", "gpus", "recipes",
           "models", "hardware_dataset", "emit", "shapes"]


# -- numbers (parsed, never evaluated) ---------------------------------------------
def _number(text: str, what: str) -> float:
    """A shape dimension of a real layer: a whole number from 1 to 2**53."""
    try:
        return parse_number(text, what, integer=True, limit=SHAPE_MAX)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def dimension(text: str) -> float:
    """An argparse type: a shape dimension (``-M 16384``), parsed, never evaluated."""
    try:
        return parse_number(text, "dimension", integer=True, limit=SHAPE_MAX)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("dimension: ")) from None


def parse_shape(text: str) -> tuple[float, float, float]:
    """``"M,K,N"`` as three whole numbers from 1 to 2**53 (a real layer)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise UserError(f"--shape {show(text)}: expected three numbers M,K,N, got {len(parts)}; "
                        "write e.g. --shape 8192,8192,8192")
    try:
        m, k, n = (float(p) for p in parts)
    except ValueError:
        raise UserError(f"--shape {show(text)}: not numbers; write e.g. --shape "
                        "8192,8192,8192") from None
    for dim, part in zip("MKN", parts):
        _number(part, f"--shape {show(text)}, {dim}")
    return m, k, n


def count(text: str) -> int:
    """A non-negative integer option."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def _groups(text: str) -> int:
    """An argparse type: experts of a grouped layer, a whole number from 1."""
    try:
        value = parse_number(text, "groups", integer=True, limit=1 << 20)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{show(text)} is not a number of experts: give a "
                                         "whole number from 1 to 1048576") from None
    return int(value)


def parse_at(items: Sequence[str]) -> dict[str, float]:
    """``--at K=8192,N=8192`` (repeatable) as {name: number}."""
    out: dict[str, float] = {}
    for item in items:
        for pair in item.split(","):
            name, eq, value = pair.partition("=")
            if not eq or not name.strip():
                raise UserError(f"--at {show(item)}: expected NAME=NUMBER pairs, e.g. "
                                "--at K=8192,N=8192")
            if name.strip() in out:
                raise UserError(f"--at: {show(name.strip())} given twice")
            out[name.strip()] = _number(value.strip(), f"--at {show(name.strip())}")
    return out


# -- options most commands take ----------------------------------------------------
def hardware_options(p: argparse.ArgumentParser, gpu: bool = True) -> None:
    p.add_argument("--dataset", choices=DATASETS, help="hardware dataset (default: the preset's)")
    p.add_argument("--hardware-file", metavar="FILE",
                   help="a hardware TOML file (start one with `roofline-sym hardware NAME "
                        "--toml`); its GPUs and built-in ones mix in --gpu")
    if gpu:
        p.add_argument("--gpu", action="append",
                       help="GPU name or alias, repeatable (see `roofline-sym hardware`)")


MODE_HELP = ("training (forward and backward: three GEMMs a layer) or inference "
             "(the forward GEMM) (default: training)")
PRESET_HELP = ("model and data: default (this project's calibrated model), torchao "
               "(torchao's roofline script), seed (the seed document's) (default: default)")


def model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", action="append", help="recipe name, repeatable "
                   "(default: every recipe of the mode)")
    p.add_argument("--mode", default="training", choices=MODES, help=MODE_HELP)
    p.add_argument("--fuse", action=argparse.BooleanOptionalAction, default=None,
                   help="model casts fused with the ops producing their inputs "
                        "(default: the preset's; seed fuses, default and torchao do not)")
    p.add_argument("--preset", default="default", choices=tuple(PRESETS), help=PRESET_HELP)
    p.add_argument("--workload", default="linear", choices=list_workloads(),
                   help="what surrounds the layer (default: linear, the layer alone)")
    p.add_argument("--groups", type=_groups, metavar="G",
                   help="a mixture of experts' grouped GEMMs: G experts share the M rows "
                        "(default: a dense layer; a shape set's expert rows have their own)")


def output_options(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="JSON output")
    group.add_argument("--csv", action="store_true", help="CSV output")


# -- hardware and models from the options --------------------------------------------
def hardware_dataset(args: argparse.Namespace) -> Dataset:
    """The dataset the options name: a file, a shipped dataset, or the preset's."""
    if getattr(args, "hardware_file", None) and getattr(args, "dataset", None):
        raise UserError("give either --hardware-file or --dataset here, not both")
    if getattr(args, "hardware_file", None):
        return load_hardware(args.hardware_file)
    if getattr(args, "dataset", None):
        return dataset(args.dataset)
    return dataset(options(getattr(args, "preset", "default")).dataset)


def gpus(args: argparse.Namespace) -> list[Hardware]:
    """The GPUs ``--gpu`` names; with ``--hardware-file``, each is looked up in
    the file first, then in the built-in dataset (``--dataset``, else the
    preset's), so one's own GPUs and built-in ones mix in one command."""
    if not args.hardware_file:
        ds = hardware_dataset(args)
        return ([ds.get(g) for g in args.gpu] if args.gpu else
                [ds.get(DEFAULT_GPU) if ds.name == "default" else ds.entries[0]])
    own = load_hardware(args.hardware_file)
    if not args.gpu:
        return list(own)
    builtin = dataset(args.dataset or options(getattr(args, "preset", "default")).dataset)
    out = []
    for name in args.gpu:
        try:
            out.append(own.get(name))
        except UnknownHardwareError:
            try:
                out.append(builtin.get(name))
            except UnknownHardwareError as exc:
                raise UserError(f"GPU {name!r} is neither in {args.hardware_file} "
                                f"({', '.join(own.names())}) nor in the {builtin.name} "
                                f"dataset: {exc.args[0]}") from None
    return out


def shapes(text: str, M: float | None) -> ShapeSet:
    """``--shapes``: a .csv/.json file of M,K,N rows, a shipped set's name, or a
    Hugging Face config directory or local model id (its linear layers)."""
    if Path(text).suffix.lower() in (".csv", ".json"):
        if M is not None:
            raise UserError("-M sets the tokens of a model shape set; a shape file has its own M")
        return ShapeSet.from_file(text)
    if Path(text).is_dir() and not (Path(text) / "config.json").is_file():
        raise UserError(f"--shapes {show(text)}: a directory without config.json; give a "
                        "Hugging Face config directory, a shape file or a set name")
    return shape_set(text, M=M)


def recipes(args: argparse.Namespace) -> list[str]:
    return args.recipe or list_recipes(args.mode, options(args.preset).recipe_table)


def models(args: argparse.Namespace) -> list[Linear]:
    """Bound models for every requested recipe x GPU; pairs the GPU cannot run
    (a dtype, block scaling or number it lacks) are skipped with one note."""
    names, entries = recipes(args), gpus(args)
    how = {"mode": args.mode, "fuse": args.fuse, "preset": args.preset,
           "workload": getattr(args, "workload", "linear"),
           "groups": getattr(args, "groups", None)}
    if len(names) * len(entries) == 1:  # one pair: its problem is the error
        return [linear(names[0], **how).on(entries[0])]
    out = model_grid(names, entries, **how)
    if not out:  # say why, for the first pair
        linear(names[0], **how).on(entries[0])
        raise UserError("no recipe in the selection runs on the selected GPUs")
    ran = {(m.recipe.name, gpu_name(m)) for m in out}
    skipped = [f"{r} on {g.name}" for r in names for g in entries if (r, g.name) not in ran]
    if skipped:
        print(f"roofline-sym: note: skipped {len(skipped)} recipe x GPU pair(s) the GPU "
              f"cannot run: {', '.join(skipped)}", file=sys.stderr)
    seed = [r for r in names if isinstance(r, str) and r in SEED_SCALINGS]
    if seed:
        print(f"roofline-sym: note: {', '.join(seed)}: the seed document's fp8 scaling"
              f"{'s' if len(seed) > 1 else ''}, not a torchao recipe", file=sys.stderr)
    return out


def gpu_name(model: Linear) -> str:
    """The name of the GPU a model of ``models`` is bound to."""
    if model.hardware is None:  # models() binds every model
        raise InputError(f"{model!r} is not bound to a GPU")
    return model.hardware.name


# -- output --------------------------------------------------------------------------
def emit(table: Table, args: argparse.Namespace, text: Callable[[], None]) -> None:
    """A command's result: ``table`` through the one writer of its format
    (``numeric.writers``: ``--json`` a list of row objects, NaN as null;
    ``--csv`` flat, lists joined by ';'; names with units, whole-number
    columns as integers), else ``text()``."""
    fmt = ("json" if getattr(args, "json", False) else
           "csv" if getattr(args, "csv", False) else None)
    if fmt is None:
        text()
        return
    table.write(sys.stdout, fmt)
    if fmt == "json":  # a text stream ends its last line
        print()
