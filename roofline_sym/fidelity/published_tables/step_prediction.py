"""Predicting whole steps: each row of a step table through ``rs.step``, with a band.

``predict_steps`` reads a step table (``step_table.read_steps``: every cell
checked, ``measured_speedup`` never read), builds each distinct step once,
and evaluates it at the row's sequence length and local batch.  The band
comes from the step model's residuals on the published end-to-end runs
(``step_residuals.csv`` beside them, written by
``benchmarks/bench_step_fidelity.py``): ``log(predicted / measured)`` per
run, each predicted from step numbers fitted without its source
(``step_fit.left_out``).  A row's band leaves out its own source's runs, weighs every other
source alike (a source of 20 runs counts as much as one of 2), and takes
the residuals of runs of the same kind (training or serving) when there are
at least ``MIN_ROWS`` of them, else all.

>>> out = predict_steps([{"source_id": "mine", "gpu": "h100", "gpus": "8",
...                       "model": "llama3-8b", "recipe": "tensorwise", "mode": "training",
...                       "seq_len": "8192", "local_batch": "1", "dp_shard": "8",
...                       "compile": "yes"}])
>>> bool(out["low"][0] < out["speedup"][0] < out["high"][0])
True
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ...datafile import CsvWriter, Delimited, read_text, where
from ...errors import InputError
from ...steps import Step, step
from ...validate import label
from .rows import row_gpu
from .step_table import StepRow, published_steps_path, read_steps

__all__ = ["predict_steps", "predict_rows", "step_of", "step_band", "band_factors",
           "step_scores", "step_residuals_path",
           "write_step_residuals", "read_step_residuals", "MIN_ROWS"]

# a kind's residuals make the band when it has this many runs; else all runs'
MIN_ROWS = 10
_OUTPUTS = ["speedup", "baseline_step_s", "lowp_step_s"]
_RESIDUAL_COLUMNS = ("source_id", "line", "kind", "moe", "log_ratio")


def _kind(row: StepRow) -> str:
    return "training" if row.mode == "training" else "serving"


@cache
def _step(row_key: tuple[Any, ...]) -> Step:
    (model, recipe, mode, gpus, dp_shard, dp_replicate, tp, pp, cp, ep, ac, compile_,
     fp8_all_gather, implementation, gpu) = row_key
    return step(model, recipe, mode=mode, gpus=gpus, dp_shard=dp_shard,
                dp_replicate=dp_replicate, tp=tp, pp=pp, cp=cp, ep=ep, ac=ac, compile=compile_,
                fp8_all_gather=fp8_all_gather, implementation=implementation).on(row_gpu(gpu))


def step_of(row: StepRow) -> Step:
    """The row's step, bound to its GPU (built once per distinct step)."""
    return _step(_key(row))


def _key(r: StepRow) -> tuple[Any, ...]:
    return (r.model, r.recipe, r.mode, r.gpus, r.dp_shard, r.dp_replicate, r.tp, r.pp, r.cp,
            r.ep, r.ac, r.compile, r.fp8_all_gather, r.implementation, r.gpu)


def predict_rows(rows: Sequence[StepRow], skip: bool = False) -> dict[str, np.ndarray]:
    """``speedup``, ``baseline_step_s`` and ``lowp_step_s`` of each row; rows of
    one step (all but sequence length and batch alike) are evaluated at once.
    A step the model refuses (a GPU whose links are not known) is an error
    naming the row, or with ``skip`` NaN."""
    out = {name: np.full(len(rows), np.nan) for name in _OUTPUTS}
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(_key(r), []).append(i)
    for key, index in groups.items():
        try:
            values = _step(key).evaluate(seq_len=[rows[i].seq_len for i in index],
                                         local_batch=[rows[i].local_batch for i in index],
                                         outputs=_OUTPUTS)
        except ValueError as exc:  # a step the model refuses (a recipe the GPU lacks)
            if skip:
                continue
            first = rows[index[0]]
            at = (f"{first.source}: row {first.line}" if first.source == "<rows>"
                  else where(first.source, first.line))
            raise InputError(f"{at}: {exc}") from None
        for name in _OUTPUTS:
            out[name][index] = np.asarray(values[name], dtype=float).reshape(-1)
    return out


# -- the residual pool -----------------------------------------------------------------
def step_residuals_path() -> Path:
    """The shipped residuals of the step model on the published end-to-end runs."""
    return published_steps_path().with_name("step_residuals.csv")


def write_step_residuals(rows: Iterable[dict[str, Any]], path: str | Path | None = None
                         ) -> Path:
    """Write residuals (``source_id``, ``line``, ``kind``, ``moe``, ``log_ratio``:
    ``log(predicted / measured)``, each run predicted without its source:
    ``step_fit.left_out``) as the shipped CSV."""
    target = Path(path) if path is not None else step_residuals_path()
    with open(target, "w", newline="", encoding="utf-8") as f:
        writer = CsvWriter(f, _RESIDUAL_COLUMNS, comments=[
            "log(predicted / measured speedup) of the step model on each published run of",
            "steps.csv, its step numbers fitted without the run's source; written by",
            "benchmarks/bench_step_fidelity.py --write"])
        for row in rows:
            writer.write({**row, "log_ratio": f"{row['log_ratio']:.6f}"})
    return target


@cache
def read_step_residuals(path: str | None = None) -> tuple[tuple[str, str, float], ...]:
    """``(source_id, kind, log_ratio)`` of each stored residual."""
    name, text = read_text(path or step_residuals_path(), "step residuals")
    table = Delimited(text.splitlines(keepends=True), label(name))
    table.require(_RESIDUAL_COLUMNS)
    out = []
    for line, rec in table.records():
        value = float(rec["log_ratio"])
        if not math.isfinite(value) or rec["kind"] not in ("training", "serving"):
            raise InputError(f"{where(label(name), line)}: not a residual: {rec}")
        out.append((rec["source_id"], rec["kind"], value))
    return tuple(out)


def _weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs: Sequence[float]
                        ) -> list[float]:
    """Quantiles of ``values`` with ``weights`` (the midpoint rule: each value
    stands at the middle of its weight)."""
    order = np.argsort(values)
    v, w = values[order], weights[order]
    position = (np.cumsum(w) - w / 2) / w.sum()
    return [float(np.interp(q, position, v)) for q in qs]


def step_band(row: StepRow, interval: float, pool: Sequence[tuple[str, str, float]]
          ) -> tuple[float, float]:
    """``(exp(-q_high), exp(-q_low))``: the factors that turn a prediction into
    its band, from the residuals of other sources."""
    return band_factors(row.source_id, _kind(row), interval, pool)


def band_factors(source_id: str, kind: str, interval: float,
                 pool: Sequence[tuple[str, str, float]]) -> tuple[float, float]:
    """``step_band`` for a run of ``source_id`` of ``kind`` (training, serving)."""
    others = [(s, k, v) for s, k, v in pool if s != source_id]
    same = [p for p in others if p[1] == kind]
    chosen = same if len(same) >= MIN_ROWS else others
    if not chosen:
        raise InputError("no end-to-end residuals to make a band from")
    counts: dict[str, int] = {}
    for s, _, _ in chosen:
        counts[s] = counts.get(s, 0) + 1
    values = np.array([v for _, _, v in chosen])
    weights = np.array([1.0 / counts[s] for s, _, _ in chosen])
    lo, hi = _weighted_quantiles(values, weights, [(1 - interval) / 2, (1 + interval) / 2])
    return math.exp(-hi), math.exp(-lo)


def step_scores(interval: float = 0.8) -> list[dict[str, Any]]:
    """Each published run the step model prices, as it predicted it without its
    measurement (the stored residuals): ``source_id``, ``line``, ``kind``,
    ``moe``, ``measured``, ``predicted`` and the band ``low``, ``high`` made
    from the other sources' runs.

    >>> rows = step_scores()
    >>> len(rows) >= 30 and all(r["low"] < r["predicted"] < r["high"] for r in rows)
    True
    """
    path = published_steps_path()
    table = {r.line: r for r in read_steps(path)}
    _, text = read_text(path, "step table")
    measured = {line: float(rec["measured_speedup"]) for line, rec in
                Delimited(text.splitlines(keepends=True), label(path)).records()
                if rec["measured_speedup"]}
    pool = read_step_residuals()
    name, stored = read_text(step_residuals_path(), "step residuals")
    out = []
    for _, rec in Delimited(stored.splitlines(keepends=True), label(name)).records():
        line = int(rec["line"])
        low, high = step_band(table[line], interval, pool)
        predicted = measured[line] * math.exp(float(rec["log_ratio"]))
        out.append({"source_id": rec["source_id"], "line": line, "kind": rec["kind"],
                    "moe": rec["moe"] == "yes", "measured": measured[line],
                    "predicted": predicted, "low": predicted * low, "high": predicted * high})
    return out


def predict_steps(path_or_table: Any, interval: float = 0.8) -> dict[str, np.ndarray]:
    """Predicted ``speedup`` with its ``interval`` band (``low``, ``high``) and both
    step times (``baseline_step_s``, ``lowp_step_s``) for each row of a step table
    (a CSV path or rows; ``measured_speedup`` is never read)."""
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) \
            or not 0 < interval < 1:
        raise InputError(f"interval must be a fraction in (0, 1), not {interval!r}")
    rows = read_steps(path_or_table)
    out = predict_rows(rows)
    pool = read_step_residuals()
    factors = np.array([step_band(r, float(interval), pool) for r in rows]).reshape(-1, 2)
    out["low"] = out["speedup"] * factors[:, 0]
    out["high"] = out["speedup"] * factors[:, 1]
    return {name: out[name] for name in ("speedup", "low", "high", "baseline_step_s",
                                         "lowp_step_s")}
