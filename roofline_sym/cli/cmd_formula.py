"""``roofline-sym formula``: a model's formulas, its terms, or its break-even M*, as
text or LaTeX."""

from __future__ import annotations

import argparse

from ..model.layer import linear
from ..output import latex, latex_preamble, names, term_name
from ..output.layout import width_pt
from ..solve import breakeven
from ..validate import unknown_name
from . import common
from .common import UserError

NAME = "formula"
HELP = "print a model's formulas (text or LaTeX)"
EXAMPLES = ("  roofline-sym formula --recipe tensorwise --fuse\n"
            "  roofline-sym formula --recipe mxfp8 --mode inference --breakdown --latex\n"
            "  roofline-sym formula --recipe tensorwise --gpu h100 --breakeven --latex "
            "--width '\\textwidth'\n"
            "  roofline-sym formula --recipe rowwise --gpu h100 --term lowp.gemm.output")


def arguments(p: argparse.ArgumentParser) -> None:
    common.hardware_options(p)
    common.model_options(p)
    p.add_argument("--latex", action="store_true",
                   help="LaTeX instead of text: complete align* blocks that fit --width "
                        "(packages: amsmath; see --preamble)")
    p.add_argument("--width", default=r"\columnwidth", metavar="WIDTH",
                   help=r"width the LaTeX blocks fit: \columnwidth (default, a two-column "
                        r"article's), \textwidth, 0.9\columnwidth, 8.4cm, 240pt")
    p.add_argument("--digits", type=common.count, default=4,
                   help="significant digits of numbers in LaTeX (default 4)")
    p.add_argument("--preamble", action="store_true",
                   help="print the \\usepackage lines the LaTeX blocks need, and exit")
    p.add_argument("--breakdown", action="store_true", help="every named term")
    p.add_argument("--term", help="one named term, e.g. lowp.gemm.output")
    p.add_argument("--breakeven", action="store_true",
                   help="the break-even M* (closed form, with K, N and hardware free "
                        "unless --gpu / --at fix them)")
    p.add_argument("--at", action="append", metavar="K=8192", help="fixed dimensions")


def run(args: argparse.Namespace) -> int:
    if args.preamble:
        print(latex_preamble())
        return 0
    if args.latex:
        width_pt(args.width)  # a bad width fails before anything is solved
    paper = {"width": args.width, "digits": args.digits}
    given = [flag for flag, on in (("--breakeven", args.breakeven), ("--term", args.term),
                                   ("--breakdown", args.breakdown)) if on]
    if len(given) > 1:
        raise UserError(f"give one of {', '.join(given)}, not several")
    if args.at and not args.breakeven:
        raise UserError("--at fixes dimensions of the break-even: it needs --breakeven")
    if len(args.recipe or []) > 1 or len(args.gpu or []) > 1:
        raise UserError("formula shows one model: give at most one --recipe and one --gpu")
    name = (args.recipe or ["tensorwise"])[0]
    model = linear(name, mode=args.mode, fuse=args.fuse, preset=args.preset,
                   workload=args.workload)
    if args.gpu or args.hardware_file:
        model = model.on(common.gpus(args)[0])
    if args.breakeven:
        # --at NAME=number: K, N or a free hardware value of the model (never one of
        # breakeven's own keywords, regime= or hardware=)
        at = common.parse_at(args.at or [])
        allowed = ["K", "N", *sorted(map(str, model.free_hardware_symbols))]
        for key in at:
            if key not in allowed:
                raise UserError(str(unknown_name("--at name", key, allowed,
                                                 extra=" (M is solved for)" * (key == "M"))))
        be = breakeven(model, solve_for="M", **at)  # type: ignore[arg-type]  # names checked
        print(be.latex(**paper) if args.latex else be)
        return 0
    if args.latex and args.breakdown:
        # the whole model as one block: speedup, named totals, every term
        print(model.latex(**paper))
        return 0
    if args.term:
        if args.term not in model.breakdown:
            raise UserError(str(unknown_name("term", args.term, model.breakdown,
                                             where=f"recipe {name}: ")))
        exprs = {args.term: model.breakdown[args.term]}
    elif args.breakdown:
        exprs = model.breakdown
    else:
        exprs = model.expressions
    tex_names = {attr: tex for attr, _, tex in names(model)}
    tex_names["speedup"] = "S"
    blocks = []
    for key, expr in exprs.items():
        if args.latex:  # one complete block per quantity, its own name on the left
            label = tex_names.get(key) or term_name(model, key)
            blocks.append(latex(expr, model=model, lhs=label, **paper))
        else:  # text: written out (a sum of names reads nothing without its terms)
            blocks.append(f"{key} = {expr.doit()}")
    print(("\n\n" if args.latex else "\n").join(blocks))
    return 0
