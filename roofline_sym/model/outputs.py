"""The model's vocabulary for numbers: the groups its terms add into and the outputs.

Every term of a ``Linear`` adds into one of ``GROUPS`` (side, group); the
seven ``OUTPUTS`` are each group's total, each side's total and their ratio,
``speedup``.  ``LAYOUT`` says so to the evaluation package, which compiles a
model's terms with it (``compile_model_terms``).

>>> [name for name, _ in LAYOUT.outputs] == list(OUTPUTS)
True
>>> dict(LAYOUT.outputs)["speedup"]
(baseline_gemm_time + baseline_overhead_time)/(lowp_gemm_time + lowp_overhead_time)
"""

from __future__ import annotations

from typing import Iterable

import sympy

from ..evaluation.compiled import CompiledTerms, Layout, compile_terms
from .term import REGIMES, Term

__all__ = ["GROUPS", "OUTPUTS", "LAYOUT", "compile_model_terms"]

# the totals a model sums its terms into: (side, group)
GROUPS = (("baseline", "gemm"), ("baseline", "overhead"), ("lowp", "gemm"), ("lowp", "overhead"))
# the outputs of evaluate: each group's total, each side's total, their ratio
OUTPUTS = (
    "baseline_gemm_time",
    "baseline_overhead_time",
    "lowp_gemm_time",
    "lowp_overhead_time",
    "baseline_time",
    "lowp_time",
    "speedup",
)


def _layout() -> Layout:
    totals = {g: sympy.Symbol(f"{g[0]}_{g[1]}_time", positive=True) for g in GROUPS}
    # unevaluated: SymPy's first evaluated sum imports its tensor module (20 ms of
    # the package's import); the compiler evaluates them
    side = {s: sympy.Add(totals[(s, "gemm")], totals[(s, "overhead")], evaluate=False)
            for s in ("baseline", "lowp")}
    outputs = [(str(t), t) for t in totals.values()]
    outputs += [(f"{s}_time", e) for s, e in side.items()]
    ratio = sympy.Mul(side["baseline"], sympy.Pow(side["lowp"], -1, evaluate=False),
                      evaluate=False)
    outputs.append(("speedup", ratio))
    return Layout(tuple(totals.items()), tuple(outputs), REGIMES)


LAYOUT = _layout()


def compile_model_terms(terms: Iterable[Term]) -> CompiledTerms:
    """A model's terms compiled for arrays (once per structure: ids aside, the
    same pieces in the same groups compile once).

    >>> import roofline_sym as rs
    >>> a, b = (compile_model_terms(rs.linear("rowwise").terms) for _ in range(2))
    >>> a is b
    True
    """
    return compile_terms((((t.side, t.group), t.pieces) for t in terms), LAYOUT)
