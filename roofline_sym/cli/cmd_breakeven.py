"""``roofline-sym breakeven``: break-even shapes (cube, or one dimension with the
others fixed) with the regime behind each."""

from __future__ import annotations

import argparse

from ..model.presets import describe_models
from ..numeric.table import Table
from ..output.breakeven_tables import as_numeric
from ..solve import breakeven
from ..validate import unknown_name
from . import common
from .common import UserError

NAME = "breakeven"
HELP = "break-even shapes with the regime behind each"
EXAMPLES = ("  roofline-sym breakeven --gpu h100 --along cube\n"
            "  roofline-sym breakeven --gpu b200 --recipe mxfp8_cublas --solve-for M "
            "--at K=8192,N=8192")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--along", choices=("cube",), help="solve along M = K = N = x (default)")
    p.add_argument("--solve-for", metavar="DIM", help="M, K or N, with the others from --at")
    p.add_argument("--at", action="append", metavar="K=8192,N=8192",
                   help="fixed dimensions, repeatable")
    common.output_options(p)


def _check(args: argparse.Namespace, at: dict[str, float]) -> None:
    """The combination of --along, --solve-for and --at makes one solve (or says why not);
    neither given means the cube."""
    if args.along and args.solve_for:
        raise UserError("give either --along or --solve-for, not both")
    if args.solve_for and args.solve_for not in ("M", "K", "N"):
        raise UserError(f"--solve-for {args.solve_for!r}: solve for M, K or N "
                        "(hardware quantities: use the Python API)")
    if args.along and at:
        raise UserError("--at fixes dimensions for --solve-for; along the cube all of M, K, N "
                        "move together")
    if not args.along and not args.solve_for:
        if at:
            raise UserError("--at needs --solve-for DIM")
        args.along = "cube"
    if args.solve_for in at:
        raise UserError(f"--solve-for {args.solve_for} cannot also be fixed by --at")
    if args.solve_for:
        missing = [d for d in "MKN" if d != args.solve_for and d not in at]
        if missing:
            raise UserError(f"--solve-for {args.solve_for} needs fixed values for "
                            f"{', '.join(missing)}: e.g. --at "
                            + ",".join(f"{d}=8192" for d in missing))
    unknown = sorted(set(at) - {"M", "K", "N"})
    if unknown:
        raise UserError(str(unknown_name("--at name", unknown[0], ["M", "K", "N"])))


def run(args: argparse.Namespace) -> int:
    at = common.parse_at(args.at or [])
    _check(args, at)
    models = common.models(args)
    # --at names are M, K, N (_check): none fills breakeven's regime= or hardware=
    results = [as_numeric(breakeven(m, along="cube") if args.along == "cube" else
                          breakeven(m, solve_for=args.solve_for, **at))  # type: ignore[arg-type]
               for m in models]
    rows = [{"gpu": common.gpu_name(be.model), "recipe": be.model.recipe.name, **be.summary()}
            for be in results]

    def text() -> None:
        var = "x (M=K=N)" if args.along == "cube" else args.solve_for
        print(f"break-even in {var}" + (f" at {', '.join(f'{k}={v:g}' for k, v in at.items())}"
                                         if at else "") + f"; {describe_models(models)}")
        print(f"{'gpu':<16}{'recipe':<34}{'first root':>11}  {'regime there':<22}faster on")
        for r, be in zip(rows, results):
            first, regime = be.headline()
            print(f"{r['gpu']:<16}{r['recipe']:<34}{first:>11}  {regime:<22}"
                  f"{be.describe_faster()}")
        for r in rows:
            if r["steps"]:
                print(f"{r['gpu']} {r['recipe']}: block-scale step(s) at "
                      f"{', '.join(f'{v:.6g}' for v in r['steps'])}: low precision changes "
                      "side there without equal times")
        print("regime: C compute-, M memory-, L launch-bound terms of the low-precision side")

    common.emit(Table.from_rows(rows, keys=("gpu", "recipe")), args, text)
    return 0
