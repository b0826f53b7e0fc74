"""``roofline-sym plot KIND``: a speedup heatmap, break-even curves, a roofline, a
regime map or the speedup's sensitivities along M, written as PNG, SVG or PDF."""

from __future__ import annotations

import argparse

from ..output.plot import PLOT_KINDS, plot_cli
from . import common
from .common import UserError

NAME = "plot"
HELP = ("draw a figure: speedup heatmap, break-even curves, roofline, regime map, "
        "sensitivities along M")
EXAMPLES = ("  roofline-sym plot heatmap --gpu h100 --recipe tensorwise --fuse -o heat.png\n"
            "  roofline-sym plot curves --gpu b200 --recipe tensorwise --recipe mxfp8_cublas "
            "-o curves.pdf\n"
            "  roofline-sym plot roofline --gpu h200 --recipe rowwise --shape 4096,8192,8192 "
            "-o roof.svg\n"
            "  roofline-sym plot sensitivity --gpu h100 --recipe rowwise --shape 8192,8192,8192 "
            "-o sens.pdf")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", choices=PLOT_KINDS,
                   help="the figure: speedup heatmap over M x N, break-even curves, "
                        "roofline, regime map, or sensitivities along M")
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help=".png, .svg or .pdf")
    p.add_argument("--shape", metavar="M,K,N", help="the shape placed on the roofline; "
                   "for sensitivity, its K and N (M is the axis)")


def run(args: argparse.Namespace) -> int:
    if args.shape and args.kind not in ("roofline", "sensitivity"):
        raise UserError(f"--shape places a shape on the roofline; plot {args.kind} takes none")
    if args.kind != "curves" and (len(common.recipes(args)) != 1 or len(args.gpu or ["x"]) != 1):
        raise UserError(f"plot {args.kind} draws one model: give one --recipe and one --gpu "
                        "(plot curves takes several recipes)")
    opts = {"shape": common.parse_shape(args.shape)} if args.shape else {}
    models = common.models(args)
    path = plot_cli(args.kind, models, args.output, **opts)
    print(f"wrote {path}")
    return 0
