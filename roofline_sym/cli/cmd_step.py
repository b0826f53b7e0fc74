"""``roofline-sym step``: how much faster a whole training or serving step runs.

Both step times, tokens per second per GPU, MFU, the speedup with its band
(``rs.fidelity.predict_steps``'s: the step model's errors on published
end-to-end runs), and the share of each group of terms on both sides.  The
arguments are checked as a row of a step table is (``read_steps``), and each
problem names its option.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..fidelity.published_tables.step_prediction import (predict_rows, read_step_residuals,
                                                         step_band, step_of)
from ..fidelity.published_tables.step_table import AC, DEGREES, MODES, StepRow, read_steps
from ..numeric.table import Table
from ..steps.model import GROUP_NAMES
from . import common
from .usage import UserError

NAME = "step"
HELP = "a whole training or serving step: step times, tokens/s, MFU, speedup with its band"
EXAMPLES = ("  roofline-sym step --model llama3-8b --gpu h100 --gpus 8 --seq-len 8192 "
            "--local-batch 1 --recipe tensorwise --compile --ac selective\n"
            "  roofline-sym step --model deepseek-v3 --gpu b200 --gpus 64 --ep 8 --seq-len 4096 "
            "--local-batch 1 --recipe mxfp8_cublas --plot step.png\n"
            "  roofline-sym step --model path/to/config.json --gpu h100 --mode decode "
            "--seq-len 4096 --local-batch 32 --recipe rowwise")
# a row's column -> the option that gave it, for the error messages
_OPTIONS = {"source_id": "--model", "gpu": "--gpu", "gpus": "--gpus", "model": "--model",
            "recipe": "--recipe", "mode": "--mode", "seq_len": "--seq-len",
            "local_batch": "--local-batch", "compile": "--compile", "ac": "--ac",
            "fp8_all_gather": "--fp8-all-gather", "implementation": "--implementation",
            **{d: "--" + d.replace("_", "-") for d in DEGREES}}
_WHERE = re.compile(r"^<rows>: row 1, column (\w+): ")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True,
                   help="a built-in architecture (llama3-8b, deepseek-v3, ...) or a Hugging "
                        "Face config.json")
    p.add_argument("--gpu", required=True, help="GPU name or alias (see `roofline-sym hardware`)")
    p.add_argument("--recipe", required=True, help="the low-precision recipe of the linears")
    p.add_argument("--gpus", default="1", help="GPUs in the job (default 1)")
    p.add_argument("--seq-len", required=True, help="sequence length (decode: the KV length)")
    p.add_argument("--local-batch", default="1", help="sequences per GPU (default 1)")
    p.add_argument("--mode", default="training", choices=MODES,
                   help="the step: " + ", ".join(MODES) + " (default: training)")
    for d in DEGREES:
        p.add_argument("--" + d.replace("_", "-"), metavar="N",
                       help="what --gpus leaves (torchtitan's default)" if d == "dp_shard"
                       else "parallel degree (default 1)")
    p.add_argument("--ac", default="none", choices=AC, help="activation checkpointing")
    p.add_argument("--compile", action="store_true", help="torch.compile fuses kernels")
    p.add_argument("--fp8-all-gather", action="store_true",
                   help="FSDP gathers converted weights in float8 (tensorwise)")
    p.add_argument("--implementation", default="torch", help="the low-precision GEMM library")
    p.add_argument("--interval", type=float, default=0.8, help="the band's coverage (0.8)")
    p.add_argument("--plot", metavar="PNG", help="draw both steps as stacked bars")
    p.add_argument("--json", action="store_true", help="JSON output")


def _row(args: argparse.Namespace) -> StepRow:
    """The options as a row of a step table, checked as one; errors name the option."""
    degrees = {d: getattr(args, d) or "" for d in DEGREES}
    if not degrees["dp_shard"]:  # torchtitan: what the other degrees leave of the GPUs
        others = 1
        for d in ("dp_replicate", "tp", "pp", "cp"):
            others *= int(degrees[d]) if degrees[d].isdigit() and int(degrees[d]) > 0 else 1
        if args.gpus.isdigit() and int(args.gpus) % others == 0:
            degrees["dp_shard"] = str(int(args.gpus) // others)
    record = {"source_id": "command line", "gpu": args.gpu, "gpus": args.gpus,
              "model": args.model, "recipe": args.recipe, "mode": args.mode,
              "seq_len": args.seq_len, "local_batch": args.local_batch, **degrees,
              "compile": "yes" if args.compile else "no", "ac": args.ac,
              "fp8_all_gather": "yes" if args.fp8_all_gather else "no",
              "implementation": args.implementation}
    try:
        (row,) = read_steps([record])
    except ValueError as exc:
        message = str(exc)
        found = _WHERE.match(message)
        if found:
            message = f"{_OPTIONS.get(found.group(1), found.group(1))}: {message[found.end():]}"
        raise UserError(message) from None
    return row


def _results(row: StepRow, interval: float) -> dict[str, Any]:
    if not 0 < interval < 1:
        raise UserError(f"--interval: {interval:g} is not a fraction in (0, 1)")
    values = {k: float(v[0]) for k, v in predict_rows([row]).items()}
    low, high = step_band(row, interval, read_step_residuals())
    bound = step_of(row)
    extra = bound.evaluate(row.seq_len, row.local_batch,
                           ["tokens_per_s_baseline", "tokens_per_s_lowp", "mfu_baseline",
                            "mfu_lowp"])
    shares = {side: bound.groups(side, seq_len=row.seq_len, local_batch=row.local_batch)
              for side in ("baseline", "lowp")}
    return {"model": row.model.name, "gpu": bound.hardware.name if bound.hardware else row.gpu,
            "gpus": row.gpus, "mode": row.mode, "recipe": row.recipe, "seq_len": row.seq_len,
            "local_batch": row.local_batch, **values,
            **{k: float(v) for k, v in extra.items()},
            "low": values["speedup"] * low, "high": values["speedup"] * high,
            "interval": interval, "shares": shares}


def _text(r: dict[str, Any], row: StepRow) -> None:
    degrees = ", ".join(f"{d} {getattr(row, d)}" for d in DEGREES if getattr(row, d) > 1)
    options = [o for o, on in (("compile", row.compile), (f"ac {row.ac}", row.ac != "none"),
                               ("fp8 all-gather", row.fp8_all_gather)) if on]
    print(f"{r['model']} on {r['gpus']} x {r['gpu']} ({degrees or 'one GPU'}), {r['mode']}, "
          f"sequence {r['seq_len']} x local batch {r['local_batch']}"
          + (f"; {', '.join(options)}" if options else ""))
    width = max(len(r["recipe"]), 10)
    print(f"{'':18s}{'bf16':>12s}{r['recipe']:>{width + 2}s}")
    for label, a, b, fmt in (("step time (s)", r["baseline_step_s"], r["lowp_step_s"], ".4g"),
                             ("tokens/s per GPU", r["tokens_per_s_baseline"],
                              r["tokens_per_s_lowp"], ",.0f"),
                             ("MFU", r["mfu_baseline"], r["mfu_lowp"], ".1%")):
        print(f"{label:18s}{a:>12{fmt}}{b:>{width + 2}{fmt}}")
    print(f"speedup {r['speedup']:.2f}x ({r['interval']:.0%} band {r['low']:.2f}x - "
          f"{r['high']:.2f}x)")
    print("share of the step")
    for g in GROUP_NAMES:
        a, b = r["shares"]["baseline"][g], r["shares"]["lowp"][g]
        if a or b:
            print(f"  {g:16s}{a:>12.1%}{b:>{width + 2}.1%}")


def _plot(r: dict[str, Any], path: str) -> None:
    """The two steps as stacked bars of their groups of terms (seconds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    sides = (("baseline", "bf16", r["baseline_step_s"]), ("lowp", r["recipe"], r["lowp_step_s"]))
    bottoms = [0.0, 0.0]
    for g in GROUP_NAMES:
        heights = [r["shares"][side][g] * total for side, _, total in sides]
        if any(heights):
            ax.bar([label for _, label, _ in sides], heights, bottom=bottoms, label=g)
            bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{r['model']}, {r['gpus']} x {r['gpu']}: {r['speedup']:.2f}x "
                 f"({r['low']:.2f}-{r['high']:.2f}x)", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    row = _row(args)
    r = _results(row, args.interval)
    if args.plot:
        _plot(r, args.plot)
    common.emit(_table(r), args, lambda: _text(r, row))
    return 0


def _table(r: dict[str, Any]) -> Table:
    """The step's results as one row, each side's share of each group a column
    (``baseline_linear_share``)."""
    flat = {k: v for k, v in r.items() if k != "shares"}
    flat.update({f"{side}_{g}_share": v for side, shares in r["shares"].items()
                 for g, v in shares.items()})
    return Table.from_rows([flat], keys=("model", "gpu", "recipe"))
