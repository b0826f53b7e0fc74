"""``roofline-sym eval``: the seven times (seconds) and the speedup at given shapes."""

from __future__ import annotations

import argparse

import numpy as np

from ..model.layer import OUTPUTS
from ..model.presets import describe_models
from ..numeric.table import Table
from . import common

NAME = "eval"
HELP = "times and speedups at shapes"
EXAMPLES = ("  roofline-sym eval --gpu h200 --recipe rowwise --shape 16384,8192,28672\n"
            "  roofline-sym eval --gpu b200 --mode inference --shape 1,8192,8192 --json")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--shape", action="append", metavar="M,K,N", help="shape, repeatable")
    common.output_options(p)


def run(args: argparse.Namespace) -> int:
    shapes = np.array([common.parse_shape(s) for s in (args.shape or ["8192,8192,8192"])])
    rows = []
    models = common.models(args)
    for m in models:
        out = m.evaluate(shapes[:, 0], shapes[:, 1], shapes[:, 2])
        for i, (M, K, N) in enumerate(shapes):
            rows.append({"gpu": common.gpu_name(m), "recipe": m.recipe.name, "M": M, "K": K,
                         "N": N, **{k: float(out[k][i]) for k in OUTPUTS}})
    table = Table.from_rows(rows, keys=("gpu", "recipe", "M", "K", "N"))

    def text() -> None:  # times in seconds, as every command and export gives them
        print(f"{args.mode}; {describe_models(models)}")
        print(table.format(("gpu", "recipe", "M", "K", "N", "baseline_time", "lowp_time",
                            "speedup"), max_rows=len(table)))

    common.emit(table, args, text)
    return 0
