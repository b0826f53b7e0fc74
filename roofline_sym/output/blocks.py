r"""LaTeX blocks of a model's breakdown and of break-even results.

A model and a break-even result offer their pieces (``_latex_pieces_()``:
expressions, numbers and words); this module writes them as ``aligned``
blocks for display math (``\[ ... \]``), amsmath only, and registers itself
as their writer, so ``model.latex()`` and ``be.latex()`` use it (``paper``
writes the complete blocks of a given width).

* ``breakdown(model)`` (also ``model.latex()``): the speedup, each side's
  time as a sum of its terms' names, then one definition per term (the
  "where" of a paper).
* ``breakeven_latex(be)`` (also ``be.latex()``): closed form with the
  "faster iff" and regime conditions as ``cases``, or the numeric roots and
  the faster set.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import sympy

from .. import renderers
from ..errors import InputError
from ..model.layer import BreakdownPieces, Linear
from ..model.term import Term
from ..solve.result import BreakEven, BreakEvenPieces
from ..validate import InputTypeError, show
from .printer import float_tex, tt, equalities, latex, named_totals, star
from .printer import latex as _latex

__all__ = ["breakdown", "breakeven_latex", "term_name"]


# -- a model's breakdown ---------------------------------------------------------
def term_name(model: Linear, name: str) -> str:
    r"""LaTeX name of a model's term (``model.terms``, by its dotted name), e.g.
    ``t^{\mathrm{fp8}}_{Y}`` for the output GEMM.

    >>> import roofline_sym as rs
    >>> print(term_name(rs.linear("rowwise"), "lowp.gemm.output"))
    t^{\mathrm{fp8}}_{Y}
    """
    term = next((t for t in model.terms if t.name == name), None)
    if term is None:
        raise InputError(f"no term {name!r}; terms: {', '.join(t.name for t in model.terms)}")
    return latex(term.time)


def side_terms(p: BreakdownPieces, side: str) -> list[Term]:
    """A side's terms, GEMMs first, each group in model order."""
    terms = [t for t in p.terms if t.side == side]
    return sorted(terms, key=lambda t: t.group != "gemm")


def side_label(p: BreakdownPieces, side: str) -> str:
    """``baseline (bf16)`` or ``low precision: tensorwise (fp8)``."""
    return ("baseline (bf16)" if side == "baseline" else
            f"low precision: {p.recipe} ({p.lowp_label})")


def definitions(p: BreakdownPieces) -> list[tuple[str, list[Term]]]:
    """``[(side label, terms)]``: the terms to define, each LaTeX name once (a
    workload kernel runs on both sides, under one name)."""
    seen: set[str] = set()
    out = []
    for side in ("baseline", "lowp"):
        terms = []
        for t in side_terms(p, side):
            tex = latex(t.time)
            if tex not in seen:
                seen.add(tex)
                terms.append(t)
        out.append((side_label(p, side), terms))
    return out


def _sum_lines(lhs: str, parts: Sequence[str], per_line: int = 3) -> list[str]:
    r"""``lhs &= a + b + c`` continued on ``&\quad + d + ...`` lines (aligned rows)."""
    if not parts:
        return [rf"{lhs} &= 0"]
    chunks = [parts[i:i + per_line] for i in range(0, len(parts), per_line)]
    lines = [rf"{lhs} &= " + " + ".join(chunks[0])]
    lines += [r"&\quad + " + " + ".join(c) for c in chunks[1:]]
    return lines


def _aligned(lines: Sequence[str]) -> str:
    return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"


def write_breakdown(p: BreakdownPieces, *, digits: int | None = None) -> str:
    """The ``aligned`` block of a model's ``BreakdownPieces`` (numbers exact, or
    rounded to ``digits`` significant digits)."""
    nm = {attr: tex for attr, _, tex in named_totals(p)}
    lines = [rf"S &= \frac{{{nm['baseline_time']}}}{{{nm['lowp_time']}}}"]
    for side in ("baseline", "lowp"):
        lines += _sum_lines(nm[f"{side}_time"], [latex(t.time) for t in side_terms(p, side)])
    for k, (label, terms) in enumerate(definitions(p)):
        lines.append(rf"&\text{{{'where, ' * (k == 0)}{tt(label)}:}}")
        lines += [rf"{latex(t.time)} &= {latex(t.expr, digits=digits)}" for t in terms]
    return _aligned(lines)


def breakdown(model: Any) -> str:
    r"""A model's cost as an ``aligned`` block: the speedup ``S``, each side's
    time ``T`` as a sum of its terms' names, then every term's definition.

    Baseline (bf16) first, then the low-precision side; within each, GEMMs
    then the other kernels (casts, activation).  For display math
    (``\[ ... \]``), amsmath only.

    >>> import roofline_sym as rs
    >>> tex = breakdown(rs.linear("tensorwise", mode="inference"))
    >>> tex.splitlines()[0], tex.splitlines()[-1]
    ('\\begin{aligned}', '\\end{aligned}')
    """
    pieces = getattr(model, "_latex_pieces_", None)
    pieces = pieces() if callable(pieces) else None
    if not isinstance(pieces, BreakdownPieces):
        raise InputTypeError(f"breakdown takes a model from rs.linear(), not "
                             f"{type(model).__name__} {show(model)}")
    return write_breakdown(pieces)


# -- break-even results -------------------------------------------------------------
def _condition_rows(p: BreakEvenPieces,
                    latex: Callable[[sympy.Expr], str] = latex) -> list[str]:
    r"""Regime validity conditions, one ``cases`` row per distinct ``lhs \geq rhs``;
    the row names its terms, ``fp8 GEMM output, grad_input: compute $\geq$ memory``."""
    rows: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for lhs, rhs, what, detail, which in p.conditions:
        rows.setdefault((latex(lhs), latex(rhs)), []).append((what, detail, which))
    out = []
    for (lhs, rhs), terms in rows.items():
        groups: dict[str, list[str]] = {}
        for what, detail, _ in terms:
            groups.setdefault(what, []).append(detail)
        text = "; ".join(f"{what} {', '.join(details)}" for what, details in groups.items())
        which = terms[-1][2]
        label = tt(text) + ": " + tt(which).replace(" >= ", r" $\geq$ ")
        out.append(rf"{lhs} \geq {rhs} & \text{{{label}}}")
    return out


def write_breakeven(p: BreakEvenPieces, *, conditions: bool = True,
                    digits: int | None = None) -> str:
    """The ``aligned`` block of a break-even result's ``BreakEvenPieces``
    (numbers exact, or rounded to ``digits`` significant digits)."""
    def latex(expr: sympy.Expr) -> str:
        return _latex(expr, digits=digits)

    v = latex(p.variable)
    vs = star(v)
    lines = []
    ctx = equalities(p.fixed)
    if ctx:
        lines.append(rf"&\text{{at }} {ctx}")
    if p.aligned:
        lines.append(r"&\text{(block-scale floors taken on block-aligned shapes)}")
    if p.symbolic:
        lines.append(rf"{vs} &= {latex(p.closed_form)}")
        if p.slope is not None:
            lines.append(rf"a &= {latex(p.slope)}")
            lines.append(
                rf"\text{{low precision faster}} &\iff \begin{{cases}} "
                rf"{v} > {vs} & \text{{if }} a > 0 \\ "
                rf"{v} < {vs} & \text{{if }} a < 0 \\ "
                rf"\text{{never}} & \text{{if }} a = 0 \end{{cases}}")
        else:
            lines.append(r"\text{low precision faster} &\iff T_{\mathrm{bf16}}("
                         + v + r") > T_{\mathrm{" + tt(p.lowp_label) + "}}("
                         + v + ")")
        if p.regime:
            lines.append(rf"&\text{{in the regime }} \text{{{tt(p.regime)}}}")
        if conditions:
            rows = _condition_rows(p, latex)
            if rows:
                lines.append(r"\text{valid while} &\begin{cases} "
                             + r" \\ ".join(rows) + r" \end{cases}")
        return _aligned(lines)

    for value, words in p.roots:
        lines.append(rf"{vs} &\approx {float_tex(value)} && \text{{{tt(words)}}}")
    if not p.roots:
        lines.append(rf"&\text{{no break-even point in }} {v} > 0")
    for value in p.steps:
        lines.append(rf"&\text{{step at }} {v} = {float_tex(value)} && "
                     r"\text{block-scale count steps: no equal times}")
    pieces = []
    for lo, hi, kind in p.outcomes:
        if lo == 0 and hi == math.inf:
            cond = rf"\text{{for all }} {v} > 0"
        elif lo == 0:
            cond = rf"\text{{if }} {v} < {float_tex(hi)}"
        elif hi == math.inf:
            cond = rf"\text{{if }} {v} > {float_tex(lo)}"
        else:
            cond = rf"\text{{if }} {float_tex(lo)} < {v} < {float_tex(hi)}"
        pieces.append(rf"\text{{{kind}}} & {cond}")
    lines.append(r"\text{low precision is} &\begin{cases} " + r" \\ ".join(pieces)
                 + r" \end{cases}")
    return _aligned(lines)


def breakeven_latex(be: BreakEven, *, conditions: bool = True) -> str:
    r"""LaTeX of a break-even result, for display math; amsmath only.

    Symbolic: the closed form, the sign condition ("faster iff a > 0 and
    M > M*", as ``cases``) and, with ``conditions=True``, the regime validity
    conditions as ``cases``.  Numeric: each root with the regime there, and
    the axis split into faster / slower / equal intervals.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    >>> print(breakeven_latex(rs.breakeven(m, solve_for="M", K=8192, N=8192)))
    \begin{aligned}
    &\text{at } K = N = 8192 \\
    M^{*} &\approx 1093.83 && \text{bf16 GEMMs: compute; fp8 GEMMs: compute; casts: 5 launch, 5 memory} \\
    \text{low precision is} &\begin{cases} \text{slower} & \text{if } M < 1093.83 \\ \text{faster} & \text{if } M > 1093.83 \end{cases}
    \end{aligned}
    """
    return write_breakeven(be._latex_pieces_(), conditions=conditions)


renderers.register(BreakdownPieces, write_breakdown)
renderers.register(BreakEvenPieces, write_breakeven)
