"""Measured throughputs of the published training runs: absolute step times.

A speedup is a ratio; the tokens per second on each side, where a source
prints them, also pin how long a step takes.  ``step_throughputs.csv``
(beside ``steps.csv``) gives them per run, keyed by the run's line in
``steps.csv``, with whether the step model prices that absolute time (one
micro-batch per optimizer step, the GPU at its rated power, the collectives
as the model runs them).

>>> runs = read_throughputs()
>>> t = runs[2]
>>> t.source_id, t.baseline_tokens_per_s, t.absolute
('ao-e2e-h100', 6150.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...datafile import Delimited, read_text, where
from ...errors import InputError
from ...validate import label, parse_number
from .step_table import published_steps_path

__all__ = ["Throughput", "read_throughputs", "throughputs_path", "THROUGHPUT_COLUMNS"]

THROUGHPUT_COLUMNS = ("source_id", "line", "per", "grad_accum", "baseline_tokens_per_s",
                      "lowp_tokens_per_s", "absolute", "notes")
_PER = ("gpu", "all")
_YES_NO = {"yes": True, "no": False}
# past these a cell is a typo: tokens per second of one run, micro-batches per step
_MAX_TOKENS_PER_S = 1e9
_MAX_ACCUMULATION = 1 << 16


@dataclass(frozen=True)
class Throughput:
    """One run's measured tokens per second, both sides, as printed (``per``
    ``gpu`` or over ``all`` GPUs)."""

    source_id: str
    line: int
    per: str
    grad_accum: int
    baseline_tokens_per_s: float
    lowp_tokens_per_s: float
    absolute: bool

    def per_gpu(self, gpus: int) -> tuple[float, float]:
        """``(baseline, low precision)`` tokens per second of one GPU."""
        n = gpus if self.per == "all" else 1
        return self.baseline_tokens_per_s / n, self.lowp_tokens_per_s / n


def throughputs_path() -> Path:
    return published_steps_path().with_name("step_throughputs.csv")


@cache
def read_throughputs(path: str | None = None) -> dict[int, Throughput]:
    """``{line in steps.csv: Throughput}``; every cell checked, errors name the
    file, line and column."""
    name, text = read_text(path or throughputs_path(), "step throughputs")
    shown = label(name)
    table = Delimited(text.splitlines(keepends=True), shown)
    table.require(THROUGHPUT_COLUMNS)
    out: dict[int, Throughput] = {}
    for line, rec in table.records():
        def at(column: str) -> str:
            return where(shown, line, column)

        for column in ("per", "absolute"):
            valid = _PER if column == "per" else tuple(_YES_NO)
            if rec[column] not in valid:
                raise InputError(f"{at(column)}: {rec[column]!r} is not one of "
                                 f"{', '.join(valid)}")
        run = Throughput(
            rec["source_id"], int(parse_number(rec["line"], at("line"), integer=True,
                                               limit=1e7)),
            rec["per"], int(parse_number(rec["grad_accum"], at("grad_accum"), integer=True,
                                         limit=_MAX_ACCUMULATION)),
            parse_number(rec["baseline_tokens_per_s"], at("baseline_tokens_per_s"),
                         limit=_MAX_TOKENS_PER_S),
            parse_number(rec["lowp_tokens_per_s"], at("lowp_tokens_per_s"),
                         limit=_MAX_TOKENS_PER_S),
            _YES_NO[rec["absolute"]])
        if run.line in out:
            raise InputError(f"{at('line')}: line {run.line} of steps.csv given twice")
        out[run.line] = run
    return out
