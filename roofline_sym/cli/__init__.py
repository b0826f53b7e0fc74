"""The ``roofline-sym`` command line.

With no arguments it runs the main job on an embedded default (H100 SXM,
training, every recipe): each recipe's break-even shape (cube, and M at
K = N = 8192) with the regime behind it, and speedups at common shapes.
Subcommands: ``hardware``, ``recipes``, ``formula``, ``eval``,
``breakeven``, ``sweep``, ``plot``, ``measure``, ``fidelity``.  Every user error ends with one line on stderr
and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..devices import DATASETS, Dataset, Hardware, HardwareError, dataset, load_hardware
from ..harness import fidelity
from ..harness.measure import measure
from ..model.linear import OUTPUTS, Linear, linear
from ..model.presets import PRESETS, options
from ..model.recipes import MODES, list_recipes, recipe
from ..model.term import RegimeSummary
from ..numeric.shapes import ShapeSet, shape_set
from ..numeric.sweep import model_grid, sweep
from ..output import latex, names, term_name
from ..output.plot import plot_cli
from ..solve import BreakEven, breakeven
from ..validate import SHAPE_MAX, parse_number

__all__ = ["main"]

DEFAULT_GPU = "h100-sxm"
COMMON_CUBES = (1024, 2048, 4096, 8192, 16384)
FIXED_KN = 8192

EPILOG = """examples:
  roofline-sym                                   the main job (H100 SXM, training)
  roofline-sym hardware h200                     one GPU with the source of every number
  roofline-sym recipes --mode inference
  roofline-sym formula --recipe tensorwise --fuse --latex
  roofline-sym eval --gpu b200 --recipe mxfp8_cublas --shape 8192,8192,8192
  roofline-sym breakeven --gpu h200 --recipe rowwise --along cube
  roofline-sym breakeven --gpu h100 --recipe tensorwise --solve-for M --at K=8192,N=8192
  roofline-sym sweep --gpu h100 --gpu b200 --shapes llama3-70b -M 16384 --total
  roofline-sym plot heatmap --gpu h100 --recipe tensorwise --fuse -o heatmap.png
"""


class UserError(Exception):
    """A problem with the command line's input: one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# -- parsing helpers (numbers are parsed, never evaluated: see validate) ----------
def _number(text: str, what: str) -> float:
    """A shape dimension: a positive finite number up to 2**53."""
    try:
        return parse_number(text, what, limit=SHAPE_MAX)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _parse_shape(text: str) -> tuple[float, float, float]:
    """``"M,K,N"`` as three positive finite numbers up to 2**53."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise UserError(f"--shape {text!r}: expected three numbers M,K,N, got {len(parts)}; "
                        "write e.g. --shape 8192,8192,8192")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise UserError(f"--shape {text!r}: not numbers; write e.g. --shape 8192,8192,8192") \
            from None
    for dim, part in zip("MKN", parts):
        _number(part, f"--shape {text!r}, {dim}")
    return values


def _count(text: str) -> int:
    """A non-negative integer option."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def _parse_at(items: Sequence[str]) -> dict[str, float]:
    """``--at K=8192,N=8192`` (repeatable) as {name: number}."""
    out: dict[str, float] = {}
    for item in items:
        for pair in item.split(","):
            name, eq, value = pair.partition("=")
            if not eq or not name.strip():
                raise UserError(f"--at {item!r}: expected NAME=NUMBER pairs, e.g. "
                                "--at K=8192,N=8192")
            if name.strip() in out:
                raise UserError(f"--at: {name.strip()} given twice")
            out[name.strip()] = _number(value.strip(), f"--at {name.strip()}")
    return out


# -- models from the common options ----------------------------------------------
def _dataset(args: argparse.Namespace) -> Dataset:
    if getattr(args, "hardware_file", None) and getattr(args, "dataset", None):
        raise UserError("give either --hardware-file or --dataset, not both")
    if getattr(args, "hardware_file", None):
        return load_hardware(args.hardware_file)
    if getattr(args, "dataset", None):
        return dataset(args.dataset)
    return dataset(options(getattr(args, "preset", "default")).dataset)


def _gpus(args: argparse.Namespace) -> list[Hardware]:
    ds = _dataset(args)
    if args.gpu:
        return [ds.get(g) for g in args.gpu]
    if args.hardware_file:
        return list(ds)
    return [ds.get(DEFAULT_GPU) if ds.name == "default" else ds.entries[0]]


def _recipes(args: argparse.Namespace) -> list[str]:
    return args.recipe or list_recipes(args.mode, options(args.preset).recipe_table)


def _models(args: argparse.Namespace) -> list[Linear]:
    """Bound models for every requested recipe x GPU; pairs the GPU cannot run
    (a dtype, block scaling or number it lacks) are skipped with one note."""
    recipes, gpus = _recipes(args), _gpus(args)
    if len(recipes) * len(gpus) == 1:  # one pair: its problem is the error
        return [linear(recipes[0], mode=args.mode, fuse=args.fuse,
                       preset=args.preset).on(gpus[0])]
    models = model_grid(recipes, gpus, mode=args.mode, fuse=args.fuse, preset=args.preset)
    if not models:  # say why, for the first pair
        linear(recipes[0], mode=args.mode, fuse=args.fuse, preset=args.preset).on(gpus[0])
        raise UserError("no recipe in the selection runs on the selected GPUs")
    ran = {(m.recipe.name, m.hardware.name) for m in models}
    skipped = [f"{r} on {g.name}" for r in recipes for g in gpus if (r, g.name) not in ran]
    if skipped:
        print(f"roofline-sym: note: skipped {len(skipped)} recipe x GPU pair(s) the GPU "
              f"cannot run: {', '.join(skipped)}", file=sys.stderr)
    return models


def _emit(rows: list[dict], args: argparse.Namespace, text: Callable[[], None]) -> None:
    """Rows as JSON (NaN as null), CSV (lists joined by ';') or text."""
    if getattr(args, "json", False):
        print(json.dumps(_finite(rows), indent=2, default=_jsonable, allow_nan=False))
    elif getattr(args, "csv", False):
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else [],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ";".join(map(str, v)) if isinstance(v, (list, tuple)) else v
                          for k, v in row.items()} for row in rows)
    else:
        text()


def _finite(value: Any) -> Any:
    """NaN and infinities as None, recursively (JSON has neither)."""
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _jsonable(v: Any) -> Any:
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, np.bool_):
        return bool(v)
    return str(v)


# -- regime summaries ------------------------------------------------------------


def regime_label(regimes: dict[str, str]) -> str:
    """Compact regime of the low-precision side: ``gemm C3  cast M5 L5``."""
    return RegimeSummary.of(regimes).letters()


def _root_text(be: BreakEven) -> tuple[str, str]:
    """(first break-even value, regime there), or why there is none."""
    roots = be.root_values
    if len(roots):
        return f"{roots[0]:.0f}", regime_label(be.regime_at(roots[0]))
    probe = be.is_faster(np.array([1e6]))[0]
    return ("always" if probe else "never"), ""


# -- subcommands -----------------------------------------------------------------
def cmd_hardware(args: argparse.Namespace) -> int:
    ds = _dataset(args)
    entries = [ds.get(args.name)] if args.name else list(ds)
    if args.name and not (args.json or args.csv):
        print(entries[0].describe())
        return 0
    rows = [{"name": h.name, "aliases": list(h.aliases),
             **{f"peak_{d}_flops_per_s": float(h.peak_flops[d]) if d in h.peak_flops else None
                for d in ("bf16", "fp8", "fp4")},
             "mem_bw_bytes_per_s": float(h.mem_bw),
             **{f"gemm_efficiency_{d}": float(h.gemm_efficiency[d])
                if d in h.gemm_efficiency else None for d in ("bf16", "fp8", "fp4")},
             "mem_efficiency": None if h.mem_efficiency is None else float(h.mem_efficiency),
             "launch_overhead_s": None if h.launch_overhead is None
             else float(h.launch_overhead)} for h in entries]

    def text() -> None:
        print(f"{ds.name} dataset: {ds.description}")
        print(f"{'name':<24}{'bf16 TF/s':>10}{'fp8 TF/s':>10}{'fp4 TF/s':>10}{'TB/s':>8}  aliases")
        for h in ds:
            peaks = [h.peak_flops.get(d) for d in ("bf16", "fp8", "fp4")]
            cells = "".join(f"{float(p) / 1e12:>10g}" if p else f"{'-':>10}" for p in peaks)
            print(f"{h.name:<24}{cells}{float(h.mem_bw) / 1e12:>8g}  {', '.join(h.aliases[:3])}")

    _emit(rows, args, text)
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    table = options(args.preset).recipe_table
    for name in list_recipes(args.mode, table):
        desc = recipe(name, args.mode, table).description
        print(f"{name:<34}{desc}" if args.verbose else name)
    return 0


def cmd_formula(args: argparse.Namespace) -> int:
    if args.breakeven and args.term:
        raise UserError("give either --breakeven or --term, not both")
    if len(args.recipe or []) > 1 or len(args.gpu or []) > 1:
        raise UserError("formula shows one model: give at most one --recipe and one --gpu")
    name = (args.recipe or ["tensorwise"])[0]
    model = linear(name, mode=args.mode, fuse=args.fuse, preset=args.preset)
    if args.gpu or args.hardware_file:
        model = model.on(_gpus(args)[0])
    if args.breakeven:
        be = breakeven(model, solve_for="M", **_parse_at(args.at or []))
        print(be.latex() if args.latex else be)
        return 0
    if args.latex and args.breakdown:
        # the whole model as an aligned block: terms, named totals, speedup
        print(model.latex())
        return 0
    if args.term:
        if args.term not in model.breakdown:
            raise UserError(f"no term {args.term!r} in {name}; terms: "
                            f"{', '.join(model.breakdown)}")
        exprs = {args.term: model.breakdown[args.term]}
    elif args.breakdown:
        exprs = model.breakdown
    else:
        exprs = model.expressions
    tex_names = {attr: tex for attr, _, tex in names(model)}
    tex_names["speedup"] = "S"
    for key, expr in exprs.items():
        if args.latex:
            label = tex_names.get(key) or term_name(model, key)
            print(f"{label} = {latex(expr, model=model)}")
        else:
            print(f"{key} = {expr}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    if args.shape and args.kind != "roofline":
        raise UserError(f"--shape places a shape on the roofline; plot {args.kind} takes none")
    if args.kind != "curves" and (len(_recipes(args)) != 1 or len(args.gpu or ["x"]) != 1):
        raise UserError(f"plot {args.kind} draws one model: give one --recipe and one --gpu "
                        "(plot curves takes several recipes)")
    models = _models(args)
    opts = {"shape": _parse_shape(args.shape)} if args.shape else {}
    path = plot_cli(args.kind, models, args.output, **opts)
    print(f"wrote {path}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    shapes = np.array([_parse_shape(s) for s in (args.shape or ["8192,8192,8192"])])
    rows = []
    for m in _models(args):
        out = m.evaluate(shapes[:, 0], shapes[:, 1], shapes[:, 2])
        for i, (M, K, N) in enumerate(shapes):
            rows.append({"gpu": m.hardware.name, "recipe": m.recipe.name, "M": M, "K": K,
                         "N": N, **{k: float(out[k][i]) for k in OUTPUTS}})

    def text() -> None:
        print(f"{'gpu':<16}{'recipe':<34}{'M':>8}{'K':>8}{'N':>8}{'bf16 us':>11}"
              f"{'lowp us':>11}{'speedup':>9}")
        for r in rows:
            print(f"{r['gpu']:<16}{r['recipe']:<34}{r['M']:>8g}{r['K']:>8g}{r['N']:>8g}"
                  f"{r['baseline_time'] * 1e6:>11.1f}{r['lowp_time'] * 1e6:>11.1f}"
                  f"{r['speedup']:>9.3f}")

    _emit(rows, args, text)
    return 0


def cmd_breakeven(args: argparse.Namespace) -> int:
    if args.along and args.solve_for:
        raise UserError("give either --along or --solve-for, not both")
    at = _parse_at(args.at or [])
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
    unknown = set(at) - {"M", "K", "N"}
    if unknown:
        raise UserError(f"--at: unknown name(s) {sorted(unknown)}; use M, K, N")
    rows, results = [], []
    for m in _models(args):
        be = (breakeven(m, along="cube") if args.along == "cube" else
              breakeven(m, solve_for=args.solve_for, **at))
        results.append(be)
        value, regime = _root_text(be)
        roots = be.root_values.tolist()
        rows.append({"gpu": m.hardware.name, "recipe": m.recipe.name,
                     "variable": str(be.variable), "first_root": roots[0] if roots else None,
                     "roots": roots, "regime": regime, "faster": be.faster_intervals(),
                     "aligned": be.aligned, "_first": value})

    def text() -> None:
        var = "x (M=K=N)" if args.along == "cube" else args.solve_for
        print(f"break-even in {var}" + (f" at {', '.join(f'{k}={v:g}' for k, v in at.items())}"
                                         if at else ""))
        print(f"{'gpu':<16}{'recipe':<34}{'first root':>11}  {'regime there':<22}faster on")
        for r, be in zip(rows, results):
            print(f"{r['gpu']:<16}{r['recipe']:<34}{r['_first']:>11}  {r['regime']:<22}"
                  f"{be.describe_faster()}")
        if any(r["aligned"] for r in rows):
            print("(block-scale floors solved on block-aligned shapes)")
        print("regime: C compute-, M memory-, L launch-bound terms of the low-precision side")

    if args.json or args.csv:
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
        for r in rows:
            r["faster"] = [[lo, None if hi == float("inf") else hi] for lo, hi in r["faster"]]
    _emit(rows, args, text)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.shapes is None:
        raise UserError("--shapes is required: a shape-set name (see `roofline-sym sweep "
                        "--list`) or a CSV/JSON file of M,K,N rows")
    if Path(args.shapes).suffix.lower() in (".csv", ".json"):
        if args.M is not None:
            raise UserError("-M sets the tokens of a model shape set; a shape file has its own M")
        shapes = ShapeSet.from_file(args.shapes)
    else:
        shapes = shape_set(args.shapes, M=args.M)
    models = _models(args)
    total = len(models) * len(shapes)

    def progress(done: int, total_rows: int) -> None:
        print(f"\rsweep: {done}/{total_rows} rows ({100 * done / total_rows:.0f}%)",
              end="" if sys.stderr.isatty() else "\n", file=sys.stderr)

    result = sweep(models, shapes, progress=progress if total >= 100_000 else None)
    if total >= 100_000 and sys.stderr.isatty():
        print(file=sys.stderr)
    table = result.model_total() if args.total else result
    if args.output and not (args.csv or args.json):
        suffix = Path(args.output).suffix.lower()
        if suffix not in (".csv", ".json"):
            raise UserError(f"-o {args.output}: use a .csv or .json file, or give --csv/--json")
        args.csv, args.json = suffix == ".csv", suffix == ".json"
    if args.csv:
        table.to_csv(args.output or sys.stdout)
    elif args.json:
        table.to_json(args.output or sys.stdout)
    else:
        cols = (["gpu", "recipe", "shape_set", "M", "baseline_time", "lowp_time", "speedup"]
                if args.total else ["gpu", "recipe", "name", "M", "K", "N", "speedup",
                                    "lowp_gemm_regime", "lowp_overhead_regime"])
        print(table.format(cols, max_rows=args.max_rows))
    return 0


def cmd_measure(args: argparse.Namespace) -> int:
    path = measure(args.out, args.grid, dynamic=not args.static)
    print(f"wrote {path}")
    return 0


def cmd_fidelity(args: argparse.Namespace) -> int:
    hw = _dataset(args).get(args.gpu[0]) if args.gpu else (
        next(iter(_dataset(args))) if args.hardware_file else None)
    calibrated: Any = args.calibrated or not args.no_calibrate
    print(fidelity.cli(args.file, hardware=hw, calibrated=calibrated,
                       size_dependent=args.size_dependent, write_hardware=args.write_hardware,
                       plot=args.plot, regimes=not args.no_regimes))
    return 0


def main_job(args: argparse.Namespace) -> int:
    """Break-even and speedups of every training recipe on H100 SXM."""
    hw = dataset("default").get(DEFAULT_GPU)
    cubes = np.array(COMMON_CUBES, dtype=float)
    print(f"roofline_sym: {hw.name}, training, casts fused with their producers, "
          "preset default\n")
    header = "".join(f"{x:>7}" for x in COMMON_CUBES)
    print(f"{'':<34}{'break-even cube x*':<33}{f'M* at K=N={FIXED_KN}':<33}"
          f"speedup at M=K=N=")
    print(f"{'recipe':<34}{'x*':>7}  {'regime at x*':<24}{'M*':>7}  {'regime at M*':<24}"
          f"{header}")
    skipped = []
    for name in list_recipes("training"):
        m = linear(name, mode="training", fuse=True)
        if m.unsupported_reason(hw):
            skipped.append(name)
            continue
        mb = m.on(hw)
        cube, cube_regime = _root_text(breakeven(mb, along="cube"))
        fixed, fixed_regime = _root_text(breakeven(mb, solve_for="M", K=FIXED_KN, N=FIXED_KN))
        speedup = mb.evaluate(cubes, cubes, cubes)["speedup"]
        print(f"{name:<34}{cube:>7}  {cube_regime:<24}{fixed:>7}  {fixed_regime:<24}"
              + "".join(f"{s:>7.2f}" for s in speedup))
    print("\nregime: terms of the low-precision side, C compute-, M memory-, L launch-bound")
    if skipped:
        print(f"not run on {hw.name} (no MX/FP4 block-scaled GEMMs): {', '.join(skipped)}")
    print("more: roofline-sym --help")
    return 0


# -- the parser ------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(
        prog="roofline-sym", epilog=EPILOG, formatter_class=fmt,
        description="Roofline cost models of low-precision linear layers: break-even "
                    "shapes, formulas and sweeps.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def hw_options(sp: argparse.ArgumentParser, gpu: bool = True) -> None:
        sp.add_argument("--dataset", choices=DATASETS,
                        help="hardware dataset (default: the preset's)")
        sp.add_argument("--hardware-file", metavar="FILE", help="a hardware TOML file")
        if gpu:
            sp.add_argument("--gpu", action="append",
                            help="GPU name or alias, repeatable (see `roofline-sym hardware`)")

    def model_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--recipe", action="append", help="recipe name, repeatable "
                        "(default: every recipe of the mode)")
        sp.add_argument("--mode", default="training", choices=MODES)
        sp.add_argument("--fuse", action=argparse.BooleanOptionalAction, default=None,
                        help="model casts fused with the ops producing their inputs "
                             "(default: the preset's; seed fuses, default and torchao do not)")
        sp.add_argument("--preset", default="default", choices=tuple(PRESETS))

    def output_options(sp: argparse.ArgumentParser) -> None:
        group = sp.add_mutually_exclusive_group()
        group.add_argument("--json", action="store_true", help="JSON output")
        group.add_argument("--csv", action="store_true", help="CSV output")

    def add(name: str, help_: str, examples: str, func) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_, formatter_class=fmt,
                            epilog="examples:\n" + examples)
        sp.set_defaults(func=func)
        return sp

    h = add("hardware", "list hardware, or show one entry with its sources",
            "  roofline-sym hardware\n  roofline-sym hardware 'NVIDIA H100 80GB HBM3'\n"
            "  roofline-sym hardware --dataset torchao", cmd_hardware)
    h.add_argument("name", nargs="?", help="name, alias or torch device name")
    hw_options(h, gpu=False)
    output_options(h)

    r = add("recipes", "list recipe names",
            "  roofline-sym recipes --mode inference -v", cmd_recipes)
    r.add_argument("--mode", default="training", choices=MODES)
    r.add_argument("--preset", default="default", choices=tuple(PRESETS))
    r.add_argument("-v", "--verbose", action="store_true", help="with descriptions")

    f = add("formula", "print a model's formulas (text or LaTeX)",
            "  roofline-sym formula --recipe tensorwise --fuse\n"
            "  roofline-sym formula --recipe mxfp8 --mode inference --breakdown --latex\n"
            "  roofline-sym formula --recipe rowwise --gpu h100 --term lowp.gemm.output",
            cmd_formula)
    hw_options(f)
    model_options(f)
    f.add_argument("--latex", action="store_true", help="LaTeX instead of text")
    f.add_argument("--breakdown", action="store_true", help="every named term")
    f.add_argument("--term", help="one named term, e.g. lowp.gemm.output")
    f.add_argument("--breakeven", action="store_true",
                   help="the break-even M* (closed form, with K, N and hardware free "
                        "unless --gpu / --at fix them)")
    f.add_argument("--at", action="append", metavar="K=8192", help="fixed dimensions")

    pl = add("plot", "draw a figure: speedup heatmap, break-even curves, roofline, regime map",
             "  roofline-sym plot heatmap --gpu h100 --recipe tensorwise --fuse -o heat.png\n"
             "  roofline-sym plot curves --gpu b200 --recipe tensorwise --recipe mxfp8_cublas "
             "-o curves.pdf\n"
             "  roofline-sym plot roofline --gpu h200 --recipe rowwise --shape 4096,8192,8192 "
             "-o roof.svg", cmd_plot)
    pl.add_argument("kind", choices=("heatmap", "curves", "roofline", "regimes"))
    hw_options(pl)
    model_options(pl)
    pl.add_argument("-o", "--output", required=True, metavar="FILE", help=".png, .svg or .pdf")
    pl.add_argument("--shape", metavar="M,K,N", help="the shape placed on the roofline")

    me = add("measure", "time GEMMs, casts and micro-benchmarks on this CUDA GPU (CSV)",
             "  roofline-sym measure --out h200.csv\n"
             "  roofline-sym measure --out smoke.csv --grid quick", cmd_measure)
    me.add_argument("--out", required=True, metavar="FILE.csv", help="measurement file")
    me.add_argument("--grid", default="default", choices=("default", "quick"),
                    help="default: pow2 cubes 512..16384 + Llama 3 70B layers (~2-6 min)")
    me.add_argument("--static", action="store_true",
                    help="compile casts per shape (slower; default: dynamic shapes)")

    fi = add("fidelity", "predicted vs measured, before and after calibration",
             "  roofline-sym fidelity h200.csv --gpu h200\n"
             "  roofline-sym fidelity h200.csv --gpu h200 --write-hardware h200-cal.toml "
             "--plot fidelity.png", cmd_fidelity)
    fi.add_argument("file", metavar="FILE.csv", help="a file written by `roofline-sym measure`")
    hw_options(fi)
    cal = fi.add_mutually_exclusive_group()
    cal.add_argument("--no-calibrate", action="store_true", help="report the model as is")
    cal.add_argument("--calibrated", metavar="HW.toml", help="compare a calibrated entry")
    fi.add_argument("--size-dependent", action="store_true",
                    help="fit a GEMM efficiency that saturates with FLOPs")
    fi.add_argument("--write-hardware", metavar="OUT.toml", help="write the calibrated entry")
    fi.add_argument("--plot", metavar="OUT.png", help="predicted vs measured speedup")
    fi.add_argument("--no-regimes", action="store_true", help="no per-regime breakdown")

    e = add("eval", "times and speedups at shapes",
            "  roofline-sym eval --gpu h200 --recipe rowwise --shape 16384,8192,28672\n"
            "  roofline-sym eval --gpu b200 --mode inference --shape 1,8192,8192 --json",
            cmd_eval)
    hw_options(e)
    model_options(e)
    e.add_argument("--shape", action="append", metavar="M,K,N", help="shape, repeatable")
    output_options(e)

    b = add("breakeven", "break-even shapes with the regime behind each",
            "  roofline-sym breakeven --gpu h100 --along cube\n"
            "  roofline-sym breakeven --gpu b200 --recipe mxfp8_cublas --solve-for M "
            "--at K=8192,N=8192", cmd_breakeven)
    hw_options(b)
    model_options(b)
    b.add_argument("--along", choices=("cube",), help="solve along M = K = N = x (default)")
    b.add_argument("--solve-for", metavar="DIM", help="M, K or N, with the others from --at")
    b.add_argument("--at", action="append", metavar="K=8192,N=8192",
                   help="fixed dimensions, repeatable")
    output_options(b)

    s = add("sweep", "evaluate recipes x GPUs over a shape set or a shape file",
            "  roofline-sym sweep --gpu h100 --shapes pow2 --csv > pow2.csv\n"
            "  roofline-sym sweep --gpu h100 --gpu b200 --recipe tensorwise "
            "--shapes llama3-70b -M 16384 --total\n"
            "  roofline-sym sweep --gpu h200 --shapes my_shapes.csv --json -o out.json",
            cmd_sweep)
    hw_options(s)
    model_options(s)
    s.add_argument("--shapes", metavar="NAME|FILE",
                   help="shape set (pow2, pow2_extended, sweep, llama, dsv3-671b, "
                        "dsv3-16b-671b, llama3-8b, llama3-70b, llama3-405b) or a .csv/.json "
                        "file of M,K,N rows")
    s.add_argument("-M", type=float, help="tokens per batch for model shape sets")
    s.add_argument("--total", action="store_true",
                   help="one count-weighted total per model and shape set")
    s.add_argument("-o", "--output", metavar="FILE", help="write CSV/JSON to FILE")
    s.add_argument("--max-rows", type=_count, default=60, help="rows shown as text")
    output_options(s)
    return p


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"roofline-sym: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    args = _parser().parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        if args.command is None:
            return main_job(args)
        return args.func(args)
    except BrokenPipeError:  # output piped into `head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ModuleNotFoundError as exc:  # an optional extra (matplotlib) is missing
        print(f"roofline-sym: error: {exc}", file=sys.stderr)
        return 2
    except (UserError, ValueError, LookupError, HardwareError, OSError, RuntimeError,
            ArithmeticError) as exc:
        msg = exc.args[0] if isinstance(exc, LookupError) and exc.args else exc
        print(f"roofline-sym: error: {msg}", file=sys.stderr)
        return 2

