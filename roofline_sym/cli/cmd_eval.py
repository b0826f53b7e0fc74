"""``roofline-sym eval``: the seven times and the speedup at given shapes."""

from __future__ import annotations

import argparse

import numpy as np

from ..model.linear import OUTPUTS
from ..model.presets import describe_models
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

    def text() -> None:
        print(f"{args.mode}; {describe_models(models)}")
        print(f"{'gpu':<16}{'recipe':<34}{'M':>8}{'K':>8}{'N':>8}{'bf16 us':>11}"
              f"{'lowp us':>11}{'speedup':>9}")
        for r in rows:
            print(f"{r['gpu']:<16}{r['recipe']:<34}{r['M']:>8g}{r['K']:>8g}{r['N']:>8g}"
                  f"{r['baseline_time'] * 1e6:>11.1f}{r['lowp_time'] * 1e6:>11.1f}"
                  f"{r['speedup']:>9.3f}")

    common.emit(rows, args, text)
    return 0
