"""``roofline-sym plot KIND``: a speedup heatmap, break-even curves, a roofline, a
regime map or the speedup's sensitivities along M, written as PNG, SVG or PDF."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InputError
from ..model.layer import Linear
from ..output.plot import (FORMATS, PLOT_KINDS, breakeven_curves, regime_map, roofline, save,
                           sensitivity_plot, speedup_heatmap)
from ..validate import choice, path as file_path, show
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
    path = draw(args.kind, models, args.output, **opts)
    print(f"wrote {path}")
    return 0


def draw(kind: str, models: Any, out_path: str | os.PathLike[str], **opts: Any) -> Path:
    """Draw one kind of figure and save it: the entry point of ``roofline-sym plot``.

    ``kind``: ``heatmap``, ``curves``, ``roofline``, ``regimes`` or ``sensitivity``.
    ``models``: bound models (``rs.linear(...).on(gpu)``); ``curves`` takes
    any number (one curve each), the others exactly one.  ``out_path``: a
    .png, .svg or .pdf file.  ``opts``: keyword options of the plotting
    function (``m_range``, ``k_range``, ``shape``, ``resolution``, ...); None
    values are dropped so the CLI can pass its defaults through.  Errors are
    ``InputError`` with one line of text (``ModuleNotFoundError`` when
    matplotlib is missing).  Returns the path written.
    """
    funcs: dict[str, Callable[..., Any]] = {
        "heatmap": speedup_heatmap, "curves": breakeven_curves, "roofline": roofline,
        "regimes": regime_map, "sensitivity": sensitivity_plot}
    choice(kind, tuple(funcs), "plot kind")
    path = Path(file_path(out_path, "output"))
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"output {show(str(path))}: use a .png, .svg or .pdf file name")
    opts = {k: v for k, v in opts.items() if v is not None}
    if isinstance(models, Linear):
        models = [models]
    models = list(models.values()) if isinstance(models, Mapping) and kind != "curves" \
        else models
    if kind == "curves":
        fig = breakeven_curves(models, **opts)
    else:
        models = list(models)
        if len(models) != 1:
            raise InputError(f"plot {kind!r} draws one model (one recipe on one GPU); "
                             f"got {len(models)}")
        fig = funcs[kind](models[0], **opts)
    return save(fig, path)
