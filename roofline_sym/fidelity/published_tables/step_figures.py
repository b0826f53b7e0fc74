"""How well predicted speedups of whole steps match the measured ones: the
figures a step model is held to, each source weighted alike.

For runs with a measured and a predicted speedup (and a band):

- ``median``: the median over sources of each source's median error
  ``|predicted / measured - 1|``; ``p90``: the 90th percentile over runs;
- ``wrong``: verdicts on the wrong side of 1 among the ``decisive`` runs
  (measured at least 5% from 1);
- ``skill``: the mean ``|log(predicted / measured)|`` over that of the best
  single constant (the median measured speedup of the same runs);
- ``spearman``: per source of at least ``RANK_MIN_RUNS`` runs, the rank
  correlation of predicted and measured speedups (equal to five digits: tied);
- ``coverage``: the share of runs inside their band; ``width``: the median
  ``high / low - 1``.

>>> f = figures([("a", 1.2, 1.25, 1.1, 1.4), ("a", 1.5, 1.4, 1.3, 1.6),
...              ("b", 1.1, 1.1, 1.0, 1.2)])
>>> # source a: errors 1/24 and 1/15, median 0.054; b: 0; median of the two 0.027
>>> round(f.median, 3), f.wrong, f.decisive, round(f.coverage, 2)
(0.027, 0, 3, 1.0)
>>> round(spearman([1, 2, 3, 4], [10, 30, 20, 40]), 12)  # 1 - 6 * 2 / (4 * 15)
0.8
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

__all__ = ["Figures", "figures", "spearman", "RANK_MIN_RUNS", "DECISIVE"]

RANK_MIN_RUNS = 4
DECISIVE = 0.05  # a run measured at least this far from 1 has a verdict


def _ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(1, len(v) + 1)
    for value in np.unique(v):
        tied = v == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (NaN where either side has one value only)."""
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _digits(value: float) -> float:
    """``value`` to five significant digits: speedups that agree to them tie
    (two runs of one configuration, a prediction read back from a file)."""
    return float(f"{value:.5g}")


@dataclass(frozen=True)
class Figures:
    runs: int
    sources: int
    median: float
    p90: float
    wrong: int
    decisive: int
    skill: float
    spearman: dict[str, float]
    coverage: float
    width: float
    per_source: dict[str, float]


def figures(runs: Iterable[tuple[str, float, float, float, float]]) -> Figures:
    """The figures of ``(source_id, measured, predicted, low, high)`` runs."""
    rows = list(runs)
    by_source: dict[str, list[tuple[float, float]]] = {}
    for source, measured, predicted, _, _ in rows:
        by_source.setdefault(source, []).append((measured, predicted))
    per_source = {s: statistics.median(abs(p / m - 1) for m, p in v)
                  for s, v in by_source.items()}
    errors = sorted(abs(p / m - 1) for _, m, p, _, _ in rows)
    decisive = [(m, p) for _, m, p, _, _ in rows if abs(m - 1) >= DECISIVE]
    logs = [math.log(m) for _, m, _, _, _ in rows]
    constant = statistics.median(logs)
    spread = statistics.mean(abs(constant - v) for v in logs)
    model = statistics.mean(abs(math.log(p) - v) for (_, _, p, _, _), v in zip(rows, logs))
    return Figures(
        runs=len(rows), sources=len(by_source),
        median=statistics.median(per_source.values()),
        p90=float(np.quantile(errors, 0.9, method="inverted_cdf")),
        wrong=sum((p > 1) != (m > 1) for m, p in decisive), decisive=len(decisive),
        skill=model / spread if spread else math.inf,
        spearman={s: spearman([_digits(p) for _, p in v], [_digits(m) for m, _ in v])
                  for s, v in sorted(by_source.items()) if len(v) >= RANK_MIN_RUNS},
        coverage=sum(lo <= m <= hi for _, m, _, lo, hi in rows) / len(rows),
        width=statistics.median(hi / lo - 1 for _, _, _, lo, hi in rows),
        per_source=dict(sorted(per_source.items())))
