"""End-to-end step tables: whole training or serving steps to predict (or measured).

One row per run, the schema of ``data/measurements/published/steps.csv``::

    source_id, gpu, gpus, model, recipe, mode, seq_len, local_batch, dp_shard,
    dp_replicate, tp, pp, cp, ep, compile, ac, fp8_all_gather,
    implementation, timer, measured_speedup, notes

``mode`` is ``training``, ``prefill`` or ``decode``; ``model`` a built-in
architecture or a path to a Hugging Face ``config.json`` relative to the
table's folder; the parallel degrees are torchtitan's (whole numbers, blank
means 1, ``dp_shard x dp_replicate x tp x pp x cp = gpus``; ``ep`` divides
``dp_shard x cp``, for a mixture of experts only); ``compile`` and
``fp8_all_gather`` are ``yes`` or ``no`` (blank: no); ``ac`` is ``none``,
``selective`` or ``full`` (blank: none); ``timer`` is ``throughput`` (tokens
per second of a run) or ``serving`` (a serving benchmark), blank if not said.  ``measured_speedup`` is never read
here: a table to predict may leave it blank.  Every cell is checked; an error
names the file, the line and the column, with close matches for a name.

>>> rows = read_steps([{"source_id": "s", "gpu": "h100", "gpus": "8", "model": "llama3-8b",
...                     "recipe": "tensorwise", "mode": "training", "seq_len": "8192",
...                     "local_batch": "1", "dp_shard": "8"}])
>>> r = rows[0]
>>> r.model.params, r.dp_shard, r.tp, r.compile, r.ac
(8030261248, 8, 1, False, 'none')
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ...architectures import Architecture, architecture
from ...datafile import Delimited, read_text, where
from ...errors import InputError, InputTypeError
from ...devices import UnknownHardwareError
from ...devices.implementations import check_implementation
from ...model.recipes import list_recipes
from ...validate import label, parse_number, unknown_name
from .rows import row_gpu
from .speedup_table import published_path

__all__ = ["COLUMNS", "DEGREES", "MODES", "TIMERS", "StepRow", "read_steps",
           "published_steps_path"]

COLUMNS = ("source_id", "gpu", "gpus", "model", "recipe", "mode", "seq_len", "local_batch",
           "dp_shard", "dp_replicate", "tp", "pp", "cp", "ep", "compile", "ac",
           "fp8_all_gather", "implementation", "timer", "measured_speedup", "notes")
DEGREES = ("dp_shard", "dp_replicate", "tp", "pp", "cp", "ep")
MODES = ("training", "prefill", "decode")
AC = ("none", "selective", "full")
# how a source timed its steps: tokens per second of a training run, a serving
# benchmark's throughput or latency (blank: not stated)
TIMERS = ("throughput", "serving")
_REQUIRED = ("source_id", "gpu", "gpus", "model", "recipe", "mode", "seq_len", "local_batch")
_YES_NO = {"yes": True, "no": False, "": False}
# plausible ends: past them a cell is a typo, not a run
_MAX_GPUS = 10 ** 6
_MAX_TOKENS = 10 ** 7  # sequence length or local batch


@dataclass(frozen=True)
class StepRow:
    """One validated row: the run's GPU key, GPU count, architecture, recipe,
    mode, sizes, parallel degrees and options; ``line``: where it is."""

    source_id: str
    gpu: str
    gpus: int
    model: Architecture
    recipe: str
    mode: str
    seq_len: int
    local_batch: int
    dp_shard: int
    dp_replicate: int
    tp: int
    pp: int
    cp: int
    ep: int
    compile: bool
    ac: str
    fp8_all_gather: bool
    implementation: str
    timer: str
    notes: str
    source: str
    line: int


def published_steps_path() -> Path:
    """The shipped table of published end-to-end steps (``steps.csv``, sources in
    its README.md)."""
    return published_path().with_name("steps.csv")


def read_steps(table: Any) -> list[StepRow]:
    """The rows of a step table: a CSV path, or rows (mappings of column to
    value, e.g. a DataFrame's records) whose model paths are relative to the
    working directory."""
    if isinstance(table, (str, os.PathLike)):
        path, text = read_text(table, "step table")
        shown = label(path)
        rows = Delimited(text.splitlines(keepends=True), shown,
                         expected=f"the header {','.join(COLUMNS)}")
        _check_header(rows.header, shown, rows.header_line)
        folder = os.path.dirname(os.path.abspath(path))
        return [_row(rec, shown, line, folder) for line, rec in rows.records()] or _empty(shown)
    if hasattr(table, "to_dict") and hasattr(table, "columns"):  # a pandas DataFrame
        table = table.to_dict("records")
    if isinstance(table, (Mapping, str, bytes)) or not isinstance(table, Iterable):
        raise InputTypeError(f"a step table is a CSV path or a list of rows, not "
                        f"{type(table).__name__}")
    out = []
    for i, rec in enumerate(table):
        if not isinstance(rec, Mapping):
            raise InputTypeError(f"<rows>: row {i + 1} is not a mapping of column to value")
        out.append(_row({str(k).strip(): _cell(v) for k, v in rec.items()}, "<rows>", i + 1,
                        os.getcwd(), row_numbers=True))
    return out or _empty("<rows>")


def _empty(source: str) -> list[StepRow]:
    raise InputError(f"{source}: no rows")


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _check_header(header: Sequence[str], source: str, line: int) -> None:
    """The header must be ``COLUMNS``, in that order."""
    for name in header:
        if name not in COLUMNS:
            raise unknown_name("column", name, COLUMNS, where=f"{where(source, line)}: ")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise InputError(f"{where(source, line)}: missing column(s) "
                         f"{', '.join(map(repr, missing))}; the header is {','.join(COLUMNS)}")
    if tuple(header) != COLUMNS:
        raise InputError(f"{where(source, line)}: columns out of order; the header is "
                         f"{','.join(COLUMNS)}")


def _row(rec: Mapping[str, str], source: str, line: int, folder: str,
         row_numbers: bool = False) -> StepRow:
    def at(column: str) -> str:
        return (f"{source}: row {line}, column {column}" if row_numbers
                else where(source, line, column))

    stray = [k for k in rec if k not in COLUMNS]
    if stray:
        raise unknown_name("column", stray[0], COLUMNS, where=f"{at(stray[0])}: ")
    for name in _REQUIRED:
        if not rec.get(name, ""):
            raise InputError(f"{at(name)}: empty")

    def whole(column: str, limit: int, blank: int | None = None) -> int:
        text = rec.get(column, "")
        if not text and blank is not None:
            return blank
        return int(parse_number(text, at(column), integer=True, limit=limit))

    def pick(column: str, valid: Sequence[str], blank: str | None = None) -> str:
        text = rec.get(column, "")
        if not text and blank is not None:
            return blank
        if text not in valid:
            raise unknown_name(column, text, valid, where=f"{at(column)}: ")
        return text

    mode = pick("mode", MODES)
    gpus = whole("gpus", _MAX_GPUS)
    degrees = {d: whole(d, _MAX_GPUS, blank=1) for d in DEGREES}
    model = _model(rec["model"], folder, at("model"))
    _check_degrees(gpus, degrees, model, at)
    gpu = rec["gpu"]
    try:
        row_gpu(gpu)
    except UnknownHardwareError as exc:
        raise InputError(f"{at('gpu')}: {exc.args[0]}") from None
    recipe = pick("recipe", list_recipes("training" if mode == "training" else "inference"))
    return StepRow(
        source_id=rec["source_id"], gpu=gpu, gpus=gpus, model=model, recipe=recipe, mode=mode,
        seq_len=whole("seq_len", _MAX_TOKENS), local_batch=whole("local_batch", _MAX_TOKENS),
        dp_shard=degrees["dp_shard"], dp_replicate=degrees["dp_replicate"], tp=degrees["tp"],
        pp=degrees["pp"], cp=degrees["cp"], ep=degrees["ep"],
        compile=_YES_NO[pick("compile", ("yes", "no"), blank="")],
        fp8_all_gather=_YES_NO[pick("fp8_all_gather", ("yes", "no"), blank="")],
        ac=pick("ac", AC, blank="none"),
        implementation=check_implementation(rec.get("implementation", ""),
                                            f"{at('implementation')}: "),
        timer=pick("timer", TIMERS, blank=""),
        notes=rec.get("notes", ""), source=source, line=line)


def _model(text: str, folder: str, at: str) -> Architecture:
    """A built-in architecture, or a config.json path relative to the table's folder."""
    try:
        if text.lower().endswith(".json") or os.sep in text or "/" in text:
            return architecture(os.path.join(folder, text))
        return architecture(text)
    except ValueError as exc:
        raise InputError(f"{at}: {exc}") from None


def _check_degrees(gpus: int, d: Mapping[str, int], model: Architecture, at: Any) -> None:
    """torchtitan's rule: the degrees but ``ep`` multiply to the GPU count; ``ep``
    divides ``dp_shard x cp`` and splits experts, so needs a mixture of experts."""
    product = d["dp_shard"] * d["dp_replicate"] * d["tp"] * d["pp"] * d["cp"]
    if product != gpus:
        raise InputError(f"{at('gpus')}: {gpus} GPUs, but dp_shard x dp_replicate x tp x pp x "
                         f"cp = {d['dp_shard']} x {d['dp_replicate']} x {d['tp']} x {d['pp']} "
                         f"x {d['cp']} = {product}")
    if d["ep"] > 1:
        if model.moe is None:
            raise InputError(f"{at('ep')}: {d['ep']}, but {model.name} has no experts to split")
        if model.moe.experts % d["ep"]:
            raise InputError(f"{at('ep')}: {d['ep']} does not divide the "
                             f"{model.moe.experts} experts of {model.name}")
        if (d["dp_shard"] * d["cp"]) % d["ep"]:
            raise InputError(f"{at('ep')}: {d['ep']} does not divide dp_shard x cp = "
                             f"{d['dp_shard'] * d['cp']}")
