"""``roofline-sym filter``: which layers of a model to convert, and what that gains.

Each layer of a shape set (a shipped set, a shape file or a Hugging Face
config directory) gets the decision ``rs.float8_module_filter`` gives
torchao, at the row's own M: convert when the predicted speedup exceeds
``--min-speedup``, K and N suit the recipe's kernels and no ``--skip`` name
is in the layer's, else keep bf16.
Below, the total of the linear layers with those layers converted, beside
converting every one.
"""

from __future__ import annotations

import argparse

import numpy as np

from ..interop.filters import ModuleFilter
from ..numeric.sweep_table import Table, sweep
from ..validate import parse_number
from . import common
from .common import UserError

NAME = "filter"
HELP = "each layer's convert / keep-bf16 decision and the total it gives"
EXAMPLES = ("  roofline-sym filter --gpu h100 --recipe rowwise --shapes llama3-70b -M 16384\n"
            "  roofline-sym filter --gpu b200 --recipe mxfp8_cublas --shapes ./my-hf-config "
            "--skip lm_head")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--shapes", metavar="NAME|FILE|DIR", required=True,
                   help="shape set, a .csv/.json file of M,K,N rows, or a Hugging Face "
                        "config directory")
    p.add_argument("-M", type=common.dimension,
                   help="tokens per batch (default: the set's own)")
    p.add_argument("--min-speedup", type=_speedup, default=1.0, metavar="S",
                   help="convert a layer predicted faster than S (default 1)")
    p.add_argument("--skip", action="append", default=[], metavar="NAME",
                   help="never convert layers whose name contains NAME (repeatable)")
    common.output_options(p)


def _speedup(text: str) -> float:
    try:
        return parse_number(text, "--min-speedup", limit=1e6)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    if len(args.recipe or []) != 1 or len(args.gpu or []) > 1:
        raise UserError("filter decides for one recipe on one GPU: give one --recipe and at "
                        "most one --gpu")
    shapes = common.shapes(args.shapes, args.M)
    (model,) = common.models(args)
    res = sweep(model, shapes)
    # the filter's rule, at each row's own M (an expert row's routed rows)
    rule = ModuleFilter(model, float(np.max(shapes.M)), args.min_speedup, args.skip)
    names = res["name"]
    skipped = np.array([any(s in n for s in rule.skip_fqns) for n in names], dtype=bool)
    fits = (res["K"] % rule.multiple == 0) & (res["N"] % rule.multiple == 0)
    decided = (res["speedup"] > args.min_speedup) & fits & ~skipped
    why = np.where(decided, "convert", np.where(
        skipped, "bf16 (skipped)", np.where(fits, "bf16 (slower)" if args.min_speedup == 1
                                            else f"bf16 (below {args.min_speedup:g}x)",
                                            f"bf16 (K or N not a multiple of {rule.multiple})")))
    layers = Table({**{c: res[c] for c in ("name", "M", "K", "N", "groups", "count",
                                            "speedup")}, "decision": why.astype(object)},
                   keys=("name", "M", "K", "N", "groups"))
    kept = {part for n, d in zip(names, decided) if d for part in n.split(" + ")}
    total = res.model_total(convert=kept)

    def text() -> None:
        print(f"{model.mode}; {model.recipe.name} on {common.gpu_name(model)}; {res.caption}")
        print(layers.format(max_rows=len(layers)))
        print()
        print("total of the linear layers (not attention, norms or communication): speedup "
              "with the layers marked convert in low precision; speedup_all with every one")
        print(total.format(["count", "converted", "speedup", "speedup_all"]))

    common.emit(layers, args, text)
    return 0
