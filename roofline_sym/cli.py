"""The ``roofline-sym`` command line.

With no arguments it runs the main job on an embedded default (H100 SXM,
training, every recipe).  Subcommands: ``hardware``, ``recipes``, ``eval``.
Every user error ends with one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import numpy as np

from .hardware import DATASETS, Dataset, Hardware, HardwareError, dataset, hardware, load_hardware
from .linear import OUTPUTS, linear
from .presets import PRESETS, options
from .recipes import MODES, list_recipes

__all__ = ["main"]

DEFAULT_GPU = "h100-sxm"
COMMON_CUBES = (1024, 2048, 4096, 8192, 16384)

EPILOG = """examples:
  roofline-sym                               speedups of every training recipe on H100 SXM
  roofline-sym hardware                      list the default hardware dataset
  roofline-sym hardware h200                 one entry with its sources
  roofline-sym hardware --dataset torchao    torchao 0.18's table
  roofline-sym recipes --mode inference      recipe names
  roofline-sym eval --gpu b200 --recipe mxfp8_cublas --shape 8192,8192,8192
"""


class UserError(Exception):
    """A problem with the command line's input: one line, exit code 2."""


def _dataset(args: argparse.Namespace) -> Dataset:
    if getattr(args, "hardware_file", None):
        return load_hardware(args.hardware_file)
    return dataset(args.dataset)


def _parse_shape(text: str) -> tuple[float, float, float]:
    """``"M,K,N"`` as three positive finite numbers (parsed, never evaluated)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise UserError(f"--shape {text!r}: expected three numbers M,K,N, got {len(parts)}")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise UserError(f"--shape {text!r}: not numbers; write e.g. --shape 8192,8192,8192") from None
    if not all(np.isfinite(v) and v > 0 for v in values):
        raise UserError(f"--shape {text!r}: M, K, N must be positive finite numbers")
    return values


def cmd_hardware(args: argparse.Namespace) -> int:
    ds = _dataset(args)
    if args.name:
        print(ds.get(args.name).describe())
        return 0
    if args.json:
        print(json.dumps([{"name": h.name, "aliases": list(h.aliases),
                           "peak_flops": {k: float(v) for k, v in h.peak_flops.items()},
                           "mem_bw": float(h.mem_bw)} for h in ds], indent=2))
        return 0
    print(f"{ds.name} dataset: {ds.description}")
    print(f"{'name':<24}{'bf16 TF/s':>10}{'fp8 TF/s':>10}{'fp4 TF/s':>10}{'TB/s':>8}  aliases")
    for h in ds:
        peaks = [h.peak_flops.get(d) for d in ("bf16", "fp8", "fp4")]
        cells = "".join(f"{float(p) / 1e12:>10g}" if p else f"{'-':>10}" for p in peaks)
        print(f"{h.name:<24}{cells}{float(h.mem_bw) / 1e12:>8g}  {', '.join(h.aliases[:3])}")
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    for name in list_recipes(args.mode, options(args.preset).recipe_table):
        print(name)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    hw = _dataset(args).get(args.gpu) if (args.gpu or args.hardware_file) else None
    shapes = [_parse_shape(s) for s in (args.shape or ["8192,8192,8192"])]
    recipes = args.recipe or list_recipes(args.mode, options(args.preset).recipe_table)
    rows = []
    for name in recipes:
        m = linear(name, mode=args.mode, fuse=args.fuse, preset=args.preset)
        mb = m.on(hw if hw is not None else _default_hw(m, args))
        arr = np.array(shapes)
        out = mb.evaluate(arr[:, 0], arr[:, 1], arr[:, 2])
        for i, shape in enumerate(shapes):
            rows.append({"gpu": mb.hardware.name, "recipe": name, "M": shape[0],
                         "K": shape[1], "N": shape[2],
                         **{k: float(out[k][i]) for k in OUTPUTS}})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'recipe':<34}{'M':>8}{'K':>8}{'N':>8}{'bf16 us':>11}{'lowp us':>11}{'speedup':>9}")
    for r in rows:
        print(f"{r['recipe']:<34}{r['M']:>8g}{r['K']:>8g}{r['N']:>8g}"
              f"{r['baseline_time'] * 1e6:>11.1f}{r['lowp_time'] * 1e6:>11.1f}"
              f"{r['speedup']:>9.3f}")
    return 0


def _default_hw(model, args) -> Hardware:
    ds = dataset(model.options.dataset)
    return ds.get(DEFAULT_GPU) if model.options.dataset == "default" else ds.entries[0]


def main_job(args: argparse.Namespace) -> int:
    """Speedup of every training recipe on H100 SXM at common cube shapes."""
    hw = hardware(DEFAULT_GPU)
    print(f"roofline_sym: {hw.name}, training, fused casts, preset default")
    print(f"speedup over bf16 at M = K = N = x  (break-even solving: roofline-sym --help)\n")
    header = "".join(f"{x:>9}" for x in COMMON_CUBES)
    print(f"{'recipe':<34}{header}")
    cubes = np.array(COMMON_CUBES, dtype=float)
    for name in list_recipes("training"):
        m = linear(name, mode="training", fuse=True)
        if m.unsupported_reason(hw):
            print(f"{name:<34}  (not supported on {hw.name})")
            continue
        speedup = m.on(hw).evaluate(cubes, cubes, cubes)["speedup"]
        print(f"{name:<34}" + "".join(f"{s:>9.3f}" for s in speedup))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="roofline-sym", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Roofline cost models of low-precision linear layers.")
    sub = p.add_subparsers(dest="command")

    def common(sp: argparse.ArgumentParser, gpu: bool = True) -> None:
        sp.add_argument("--dataset", default="default", choices=DATASETS,
                        help="hardware dataset (default: %(default)s)")
        sp.add_argument("--hardware-file", metavar="FILE", help="a hardware TOML file")
        if gpu:
            sp.add_argument("--gpu", help="GPU name or alias (see `roofline-sym hardware`)")

    def model(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--recipe", action="append", help="recipe name (repeatable)")
        sp.add_argument("--mode", default="training", choices=MODES)
        sp.add_argument("--fuse", action="store_true", help="model casts fused with producers")
        sp.add_argument("--preset", default="default", choices=tuple(PRESETS))

    h = sub.add_parser("hardware", help="list hardware or show one entry with sources",
                       epilog="examples:\n  roofline-sym hardware\n  roofline-sym hardware "
                              "'NVIDIA H100 80GB HBM3'\n  roofline-sym hardware --dataset seed",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_argument("name", nargs="?", help="name, alias or torch device name")
    h.add_argument("--json", action="store_true")
    common(h, gpu=False)
    h.set_defaults(func=cmd_hardware)

    r = sub.add_parser("recipes", help="list recipe names",
                       epilog="example:\n  roofline-sym recipes --mode inference",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--mode", default="training", choices=MODES)
    r.add_argument("--preset", default="default", choices=tuple(PRESETS))
    r.set_defaults(func=cmd_recipes)

    e = sub.add_parser("eval", help="evaluate times and speedups at shapes",
                       epilog="example:\n  roofline-sym eval --gpu h200 --recipe rowwise "
                              "--shape 16384,8192,28672 --shape 4096,4096,4096",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(e)
    model(e)
    e.add_argument("--shape", action="append", metavar="M,K,N", help="shape (repeatable)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command is None:
            return main_job(args)
        return args.func(args)
    except (UserError, ValueError, LookupError, HardwareError) as exc:
        msg = exc.args[0] if isinstance(exc, LookupError) and exc.args else exc
        print(f"roofline-sym: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
