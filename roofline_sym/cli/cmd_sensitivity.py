"""``roofline-sym sensitivity``: which hardware number decides the speedup at a shape
(elasticities d ln speedup / d ln x, largest first)."""

from __future__ import annotations

import argparse

from ..model.elasticity import sensitivity
from ..model.presets import describe_models
from ..numeric.table import Table
from . import common

NAME = "sensitivity"
HELP = "elasticity of the speedup to each hardware number at a shape"
EXAMPLES = ("  roofline-sym sensitivity --gpu h100 --recipe rowwise --shape 8192,8192,8192\n"
            "  roofline-sym sensitivity --gpu b200 --recipe mxfp8_cublas --shape 1024,8192,8192 "
            "--json")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--shape", default="8192,8192,8192", metavar="M,K,N",
                   help="the shape (default 8192,8192,8192)")
    common.output_options(p)


def run(args: argparse.Namespace) -> int:
    shape = common.parse_shape(args.shape)
    args.recipe = args.recipe or ["tensorwise"]  # one model unless asked: each is a solve
    models = common.models(args)
    rows, blocks = [], []
    for m in models:
        speedup = float(m.evaluate(*shape, outputs=("speedup",))["speedup"])
        found = sensitivity(m, at=shape)
        order = sorted(found, key=lambda x: (-abs(found[x]), str(x)))
        where = {"gpu": common.gpu_name(m), "recipe": m.recipe.name,
                 "M": shape[0], "K": shape[1], "N": shape[2]}
        rows += [{**where, "symbol": str(x), "elasticity": found[x]} for x in order]
        blocks.append((f"{where['gpu']}, {m.recipe.name} at M={shape[0]:g}, K={shape[1]:g}, "
                       f"N={shape[2]:g} (speedup {speedup:.3f}): d ln speedup / d ln x",
                       [(str(x), found[x]) for x in order]))

    def text() -> None:
        print(f"{args.mode}; {describe_models(models)}")
        for k, (title, values) in enumerate(blocks):
            print(("\n" if k else "") + title)
            for name, value in values:
                print(f"  {name:<22}{value:>+9.3f}")

    common.emit(Table.from_rows(rows, keys=("gpu", "recipe", "symbol")), args, text)
    return 0
