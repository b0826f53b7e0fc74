r"""LaTeX and tables for papers: expressions, breakdowns, break-evens, tables.

Everything here returns strings that compile with pdflatex and ``amsmath``
(tables also need ``booktabs``).  Math strings are meant for display math
(``\[ ... \]``); tables are a ``tabular`` to drop into a ``table`` float.

* ``latex(expr)``: any model expression, hardware symbols readable
  (``P_{\mathrm{fp8}}``, ``\mathrm{BW}``, ``\eta_{\mathrm{mem}}``,
  ``t_{\mathrm{launch}}``), numbers exact (``\frac{1}{5 \cdot 10^{5}}``, never
  a 16-digit float), GEMM terms before cast terms; ``model=`` names the
  model's sub-expressions (``T^{\mathrm{gemm}}_{\mathrm{bf16}}``).
* ``breakdown(model)`` (also ``model.latex()``): an ``aligned`` block, one
  line per named term, then the totals and the speedup.
* ``breakeven_latex(be)`` (also ``be.latex()``): closed form with the
  "faster iff" and regime conditions as ``cases``, or the numeric roots and
  the faster set.
* ``breakeven_table(results, fmt="latex" | "markdown")``: recipe x GPU tables.

>>> import roofline_sym as rs
>>> from roofline_sym import symbols as S
>>> latex(2 * rs.M * rs.K * rs.N / (S.peak_flops("fp8") * S.gemm_efficiency("fp8")))
'\\frac{2 K M N}{P_{\\mathrm{fp8}} \\eta_{\\mathrm{fp8}}}'
>>> latex(sympy.Rational(1, 500000))
'\\frac{1}{5 \\cdot 10^{5}}'
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import sympy
from sympy.core.sorting import default_sort_key
from sympy.printing.latex import LatexPrinter

from .. import symbols as S
from ..model.term import RegimeSummary

__all__ = [
    "term_name",
    "latex",
    "breakdown",
    "breakeven_latex",
    "breakeven_table",
    "breakeven_rows",
    "Row",
    "names",
]

_SHAPES = set(S.SHAPE_SYMBOLS) | {S.x}


# -- numbers -----------------------------------------------------------------
def _int_tex(n: int) -> str:
    """An integer; long ones with >= 3 trailing zeros as exact ``d.ddd \\cdot 10^{k}``."""
    sign, digits = ("- " if n < 0 else ""), str(abs(n))
    stripped = digits.rstrip("0")
    if len(digits) < 6 or len(digits) - len(stripped) < 3:
        return f"{sign}{digits}"
    exp = len(digits) - 1
    mantissa = stripped[0] + (f".{stripped[1:]}" if len(stripped) > 1 else "")
    power = f"10^{{{exp}}}"
    return f"{sign}{power}" if mantissa == "1" else f"{sign}{mantissa} \\cdot {power}"


def _float_tex(value: float, digits: int = 6) -> str:
    """A float at ``digits`` significant digits, powers of ten written out."""
    if math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    text = f"{value:.{digits}g}"
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    power = f"10^{{{int(exp)}}}"
    return power if mantissa == "1" else f"{mantissa} \\cdot {power}"


# -- the printer ---------------------------------------------------------------
def _shape_degree(expr: sympy.Basic) -> int:
    """Total degree in the shape symbols of the largest monomial (roughly)."""
    if expr in _SHAPES:
        return 1
    if expr.is_Pow:
        base, exp = expr.args
        return _shape_degree(base) * int(exp) if exp.is_Integer else _shape_degree(base)
    if expr.is_Mul:
        return sum(_shape_degree(a) for a in expr.args)
    if not expr.args:
        return 0
    return max(_shape_degree(a) for a in expr.args)


def _is_gemm_like(expr: sympy.Basic) -> bool:
    """A GEMM time: has a peak symbol, or a K*M*N monomial once bound."""
    if any(str(s).startswith("P_") and S.is_hardware_symbol(s) for s in expr.free_symbols):
        return True
    return _shape_degree(expr) >= 3


class _Printer(LatexPrinter):
    """SymPy's LaTeX printer with exact readable numbers and model-aware order."""

    def __init__(self, settings=None, rank: Mapping[sympy.Symbol, int] | None = None):
        super().__init__(settings)
        self._rank = dict(rank or {})

    def _print_Integer(self, expr):
        return _int_tex(int(expr.p))

    def _print_Rational(self, expr):
        if expr.q == 1:
            return _int_tex(int(expr.p))
        sign = "- " if expr.p < 0 else ""
        return rf"{sign}\frac{{{_int_tex(abs(int(expr.p)))}}}{{{_int_tex(int(expr.q))}}}"

    def _print_Float(self, expr):
        return _float_tex(float(expr))

    def _group(self, term: sympy.Basic) -> tuple:
        named = [self._rank[s] for s in term.free_symbols if s in self._rank]
        if named:
            return (0, min(named))
        if term.is_number:
            return (3, 0)
        return (1, 0) if _is_gemm_like(term) else (2, 0)

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        if not expr.is_Add:
            return terms
        # stable: SymPy's order within a group; named parts, GEMMs, casts, numbers
        return sorted(terms, key=self._group)

    def _print_Max(self, expr, exp=None):
        # compute piece (degree 3 in shapes) first, then memory, then launch
        args = sorted(expr.args, key=lambda a: (-_shape_degree(a), default_sort_key(a)))
        tex = r"\max\left(%s\right)" % ", ".join(self._print(a) for a in args)
        return rf"{tex}^{{{exp}}}" if exp is not None else tex

    def _print_Min(self, expr, exp=None):
        args = sorted(expr.args, key=lambda a: (-_shape_degree(a), default_sort_key(a)))
        tex = r"\min\left(%s\right)" % ", ".join(self._print(a) for a in args)
        return rf"{tex}^{{{exp}}}" if exp is not None else tex


# -- named sub-expressions -------------------------------------------------------
def _tt(text: str) -> str:
    """Text for ``\\mathrm{}`` / ``\\text{}``: LaTeX specials escaped."""
    out = []
    for ch in str(text):
        if ch in "_&%#$":
            out.append("\\" + ch)
        elif ch in "{}":
            out.append("\\" + ch)
        elif ch == "~":
            out.append(r"\textasciitilde{}")
        elif ch == "^":
            out.append(r"\textasciicircum{}")
        elif ch == "\\":
            out.append(r"\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def _rm(text: str) -> str:
    return rf"\mathrm{{{_tt(text)}}}"


def _lowp_label(model) -> str:
    """The dtype the low-precision side is named by (``fp8``, ``fp4``)."""
    dtypes = sorted(model.recipe.dtypes - {"bf16"})
    return dtypes[0] if len(dtypes) == 1 else "lowp"


def _side_label(model, side: str) -> str:
    return "bf16" if side == "baseline" else _lowp_label(model)


def names(model) -> list[tuple[str, sympy.Expr, str]]:
    r"""The model's named quantities: ``[(attribute, expression, LaTeX name)]``.

    Largest first (totals before their parts), the order ``latex(...,
    model=)`` tries them in.

    >>> import roofline_sym as rs
    >>> [tex for _, _, tex in names(rs.linear("tensorwise"))][:2]
    ['T_{\\mathrm{bf16}}', 'T_{\\mathrm{fp8}}']
    """
    b, lp = _rm("bf16"), _rm(_lowp_label(model))
    return [
        ("baseline_time", model.baseline_time, rf"T_{{{b}}}"),
        ("lowp_time", model.lowp_time, rf"T_{{{lp}}}"),
        ("baseline_gemm_time", model.baseline_gemm_time, rf"T^{{\mathrm{{gemm}}}}_{{{b}}}"),
        ("baseline_overhead_time", model.baseline_overhead_time,
         rf"T^{{\mathrm{{ovhd}}}}_{{{b}}}"),
        ("lowp_gemm_time", model.lowp_gemm_time, rf"T^{{\mathrm{{gemm}}}}_{{{lp}}}"),
        ("lowp_overhead_time", model.lowp_overhead_time, rf"T^{{\mathrm{{ovhd}}}}_{{{lp}}}"),
    ]


def _name_parts(expr: sympy.Expr, table: Sequence[tuple[sympy.Expr, sympy.Symbol]]):
    """Replace whole sub-expressions, or sub-sums of an ``Add``, by named symbols.

    The root itself is never replaced (``latex(m.lowp_time, model=m)`` shows
    its parts, not one letter).
    """
    table = [(e, s) for e, s in table if e != 0 and not e.is_number]

    def walk(e, root=False):
        if not root:
            for target, sym in table:
                if e == target:
                    return sym
        if e.is_Add or e.is_Mul:
            # flattened sums and products: match a target's arguments as a sub-multiset
            rest = Counter(e.args)
            found = []
            for target, sym in table:
                if target.func == e.func and target != e:
                    need = Counter(target.args)
                    if all(rest[a] >= c for a, c in need.items()):
                        rest -= need
                        found.append(sym)
            if found:
                left = [walk(a) for a in rest.elements()]
                return e.func(*found, *left)
        if not e.args or e.is_Atom:
            return e
        new = [walk(a) for a in e.args]
        return e.func(*new) if any(n is not a for n, a in zip(new, e.args)) else e

    return walk(expr, root=True)


def latex(expr: Any, *, model: Any = None, symbol_names: Mapping | None = None) -> str:
    r"""Readable LaTeX of a model expression (or of a model / break-even result).

    Hardware symbols print by name (``\mathrm{BW}``), numbers stay exact, GEMM
    terms come before cast terms.  With ``model=``, the model's totals in
    ``expr`` print as named symbols (``T^{\mathrm{gemm}}_{\mathrm{bf16}}``).
    A ``Linear`` renders as its ``breakdown``; a ``BreakEven`` as its
    ``latex()``.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise")
    >>> latex(m.speedup, model=m)
    '\\frac{T_{\\mathrm{bf16}}}{T_{\\mathrm{fp8}}}'
    >>> latex(m.lowp_time, model=m)
    'T^{\\mathrm{gemm}}_{\\mathrm{fp8}} + T^{\\mathrm{ovhd}}_{\\mathrm{fp8}}'
    """
    from ..solve.solver import BreakEven
    from ..model.linear import Linear

    if isinstance(expr, Linear):
        return breakdown(expr)
    if isinstance(expr, BreakEven):
        return breakeven_latex(expr)
    expr = sympy.sympify(expr)
    symnames = {s: S.latex_name(s) for s in expr.free_symbols if S.is_hardware_symbol(s)}
    rank: dict[sympy.Symbol, int] = {}
    if model is not None:
        placeholders = []
        for i, (attr, e, tex) in enumerate(names(model)):
            sym = sympy.Dummy(attr, positive=True)
            placeholders.append((e, sym))
            symnames[sym] = tex
            rank[sym] = i
        expr = _name_parts(expr, placeholders)
    symnames.update(symbol_names or {})
    printer = _Printer({"symbol_names": symnames}, rank)
    return printer.doprint(expr)


# -- a model's breakdown ---------------------------------------------------------
def term_name(model, name: str) -> str:
    r"""LaTeX name of a model's term, e.g. ``t^{\mathrm{fp8}}_{\mathrm{output}}``.

    >>> import roofline_sym as rs
    >>> print(term_name(rs.linear("rowwise"), "lowp.gemm.output"))
    t^{\mathrm{fp8}}_{\mathrm{output}}
    """
    term = next((t for t in model.terms if t.name == name), None)
    if term is None:
        raise ValueError(f"no term {name!r}; terms: {', '.join(t.name for t in model.terms)}")
    return _term_tex(model, term)


def _term_tex(model, term) -> str:
    id = term.id
    detail = _rm(",".join(id.detail))
    if id.kind == "gemm":
        return rf"t^{{{_rm(_side_label(model, id.side))}}}_{{{detail}}}"
    return rf"t^{{{_rm(id.kind)}}}_{{{detail}}}"


def _sum_lines(lhs: str, parts: Sequence[str], per_line: int = 3) -> list[str]:
    """``lhs &= a + b + c`` continued on ``&\quad + d + ...`` lines (aligned rows)."""
    if not parts:
        return [rf"{lhs} &= 0"]
    chunks = [parts[i:i + per_line] for i in range(0, len(parts), per_line)]
    lines = [rf"{lhs} &= " + " + ".join(chunks[0])]
    lines += [r"&\quad + " + " + ".join(c) for c in chunks[1:]]
    return lines


def breakdown(model) -> str:
    r"""A model's cost as an ``aligned`` block: every named term, then the totals.

    Baseline (bf16) first, then the low-precision side; within each, GEMMs
    then the other kernels (casts, activation); then ``T`` totals and the
    speedup ``S``.  For display math (``\[ ... \]``), amsmath only.

    >>> import roofline_sym as rs
    >>> tex = breakdown(rs.linear("tensorwise", mode="inference"))
    >>> tex.splitlines()[0], tex.splitlines()[-1]
    ('\\begin{aligned}', '\\end{aligned}')
    """
    nm = {attr: tex for attr, _, tex in names(model)}
    lines = []
    for side in ("baseline", "lowp"):
        label = ("baseline (bf16)" if side == "baseline" else
                 f"low precision: {model.recipe.name} ({_lowp_label(model)})")
        lines.append(rf"&\text{{{_tt(label)}}}")
        gemms, others = [], []
        for term in model.terms:
            if term.side != side:
                continue
            tex = _term_tex(model, term)
            (gemms if term.group == "gemm" else others).append(tex)
            lines.append(rf"{tex} &= {latex(term.expr)}")
        lines += _sum_lines(nm[f"{side}_gemm_time"], gemms)
        lines += _sum_lines(nm[f"{side}_overhead_time"], others)
    lines.append(r"&\text{totals}")
    for side in ("baseline", "lowp"):
        lines.append(rf"{nm[f'{side}_time']} &= {nm[f'{side}_gemm_time']} + "
                     rf"{nm[f'{side}_overhead_time']}")
    lines.append(rf"S &= \frac{{{nm['baseline_time']}}}{{{nm['lowp_time']}}}")
    return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"


# -- break-even results -------------------------------------------------------------
def _var_tex(be) -> str:
    return latex(be.variable)


def _star(v: str) -> str:
    return f"{v}^{{*}}"


def _classify(be) -> list[tuple[float, float, str]]:
    """The positive axis cut at the roots: ``[(lo, hi, faster|slower|equal)]``."""
    faster, ties = be.faster_intervals(), be.tie_intervals()
    cuts = sorted({0.0, math.inf, *(float(v) for v in be.root_values),
                   *(p for s in faster + ties for p in s)})
    out: list[tuple[float, float, str]] = []
    for lo, hi in zip(cuts, cuts[1:]):
        mid = 2 * lo + 1 if hi == math.inf else 0.5 * (lo + hi)
        if any(a <= mid <= b for a, b in ties):
            kind = "equal"
        elif any(a < mid < b for a, b in faster):
            kind = "faster"
        else:
            kind = "slower"
        if out and out[-1][2] == kind:
            out[-1] = (out[-1][0], hi, kind)
        else:
            out.append((lo, hi, kind))
    return out


def _regime_words(be, reg: Mapping[str, str]) -> str:
    """``bf16 GEMMs compute; fp8 GEMMs compute; casts 5 memory, 5 launch``."""
    return RegimeSummary.of(reg).words(lambda side: _side_label(be.model, side))


def _shape_groups(be) -> dict[sympy.Expr, list[sympy.Symbol]]:
    """Fixed shape values, equal ones together, in M, K, N order."""
    groups: dict[sympy.Expr, list[sympy.Symbol]] = {}
    for sym in S.SHAPE_SYMBOLS:
        if sym in be.substitution:
            groups.setdefault(be.substitution[sym], []).append(sym)
    return groups


def _shape_context(be) -> str:
    """``K = 4096,\\ N = 4096`` or ``M = K = N = x`` (shape values only)."""
    groups = _shape_groups(be)
    return r",\ ".join(" = ".join(latex(k) for k in ks) + f" = {latex(v)}"
                       for v, ks in groups.items())


def _cond_cases(be) -> list[str]:
    """Regime validity conditions, one ``cases`` row each, deduplicated."""
    rows: dict[tuple[str, str], list[str]] = {}
    for label, cond in be.conditions:
        rows.setdefault((latex(cond.lhs), latex(cond.rhs)), []).append(label)
    out = []
    for (lhs, rhs), labels in rows.items():
        out.append(rf"{lhs} \geq {rhs} & \text{{{_condition_label(be.model, labels)}}}")
    return out


def _condition_label(model, labels: Sequence[str]) -> str:
    """``fp8 GEMM output, grad_input: compute $\geq$ memory`` (LaTeX text mode)."""
    groups: dict[tuple[str, str], list[str]] = {}
    which = ""
    for label in labels:
        name, _, which = label.partition(": ")
        side, kind, *rest = name.split(".")
        what = (f"{_side_label(model, side)} GEMM" if kind == "gemm" else
                "cast" if kind == "cast" else f"bf16 {kind}")
        groups.setdefault((what, ""), []).append(".".join(rest))
    text = "; ".join(f"{what} {', '.join(details)}" for (what, _), details in groups.items())
    return _tt(text) + ": " + _tt(which).replace(" >= ", r" $\geq$ ")


def breakeven_latex(be, *, conditions: bool = True) -> str:
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
    v = _var_tex(be)
    vs = _star(v)
    lines = []
    ctx = _shape_context(be)
    if ctx:
        lines.append(rf"&\text{{at }} {ctx}")
    if be.aligned:
        lines.append(r"&\text{(block-scale floors taken on block-aligned shapes)}")
    if be.symbolic:
        lines.append(rf"{vs} &= {latex(be.closed_form)}")
        if be.slope is not None:
            lines.append(rf"a &= {latex(be.slope)}")
            lines.append(
                rf"\text{{low precision faster}} &\iff \begin{{cases}} "
                rf"{v} > {vs} & \text{{if }} a > 0 \\ "
                rf"{v} < {vs} & \text{{if }} a < 0 \\ "
                rf"\text{{never}} & \text{{if }} a = 0 \end{{cases}}")
        else:
            lines.append(r"\text{low precision faster} &\iff T_{\mathrm{bf16}}("
                         + v + r") > T_{\mathrm{" + _tt(_lowp_label(be.model)) + "}}("
                         + v + ")")
        if be.regime_choice:
            lines.append(rf"&\text{{in the regime }} "
                         rf"\text{{{_tt(_regime_words(be, be.regime_choice))}}}")
        if conditions:
            rows = _cond_cases(be)
            if rows:
                lines.append(r"\text{valid while} &\begin{cases} "
                             + r" \\ ".join(rows) + r" \end{cases}")
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    for value in be.root_values:
        words = _regime_words(be, be.regime_at(value))
        lines.append(rf"{vs} &\approx {_float_tex(float(value))} && \text{{{_tt(words)}}}")
    if not len(be.root_values):
        lines.append(rf"&\text{{no break-even point in }} {v} > 0")
    pieces = []
    for lo, hi, kind in _classify(be):
        if lo == 0 and hi == math.inf:
            cond = rf"\text{{for all }} {v} > 0"
        elif lo == 0:
            cond = rf"\text{{if }} {v} < {_float_tex(hi)}"
        elif hi == math.inf:
            cond = rf"\text{{if }} {v} > {_float_tex(lo)}"
        else:
            cond = rf"\text{{if }} {_float_tex(lo)} < {v} < {_float_tex(hi)}"
        pieces.append(rf"\text{{{kind}}} & {cond}")
    lines.append(r"\text{low precision is} &\begin{cases} " + r" \\ ".join(pieces)
                 + r" \end{cases}")
    return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"


# -- tables ---------------------------------------------------------------------------
class Row(NamedTuple):
    """One table row: labels and a result (``None``: the recipe cannot run there)."""

    recipe: str
    gpu: str
    result: Any


def _rows(results: Any) -> list[Row]:
    from ..solve.solver import BreakEven

    if isinstance(results, BreakEven):
        results = [results]
    if isinstance(results, Mapping):
        items = []
        for key, be in results.items():
            recipe, gpu = key if isinstance(key, tuple) else (key, None)
            items.append(Row(str(recipe), gpu, be))
        results = items
    rows = []
    for item in results:
        if isinstance(item, BreakEven):
            hw = item.model.hardware
            rows.append(Row(item.model.recipe.name, hw.name if hw else "", item))
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            recipe, gpu, be = item
            if be is not None and not isinstance(be, BreakEven):
                raise ValueError(f"row {item!r}: the third item must be a BreakEven or None")
            if gpu is None and be is not None and be.model.hardware is not None:
                gpu = be.model.hardware.name
            rows.append(Row(str(recipe), "" if gpu is None else str(gpu), be))
        else:
            raise ValueError("breakeven_table takes BreakEven results, (recipe, gpu, result) "
                             f"rows or a mapping {{(recipe, gpu): result}}; got {item!r}")
    for r in rows:
        if r.result is not None and r.result.symbolic:
            raise ValueError(f"row {r.recipe}/{r.gpu}: a symbolic result has no numeric "
                             "root; specialise it first (be.subs({...}) or bind a GPU)")
    return rows


def _num(value: float, fmt: str) -> str:
    if value == math.inf:
        return r"$\infty$" if fmt == "latex" else "∞"
    if 1 <= value < 1e6:
        text = f"{value:.0f}" if value >= 100 else f"{value:.3g}"
        return text
    mantissa, exp = f"{value:.3g}".split("e") if "e" in f"{value:.3g}" else (f"{value:.3g}", "")
    if not exp:
        return mantissa
    if fmt == "latex":
        return rf"${mantissa} \cdot 10^{{{int(exp)}}}$"
    return f"{mantissa}e{int(exp)}"


def _var_text(be, fmt: str) -> str:
    return f"${latex(be.variable)}$" if fmt == "latex" else str(be.variable)


def _faster_text(be, fmt: str) -> str:
    v = _var_text(be, fmt)
    spans = be.faster_intervals()
    if not spans:
        return "never"
    if spans == [(0.0, math.inf)]:
        return "always"
    parts = []
    lt = "$<$" if fmt == "latex" else "<"
    gt = "$>$" if fmt == "latex" else ">"
    for lo, hi in spans:
        if lo == 0:
            parts.append(f"{v} {lt} {_num(hi, fmt)}")
        elif hi == math.inf:
            parts.append(f"{v} {gt} {_num(lo, fmt)}")
        else:
            parts.append(f"{_num(lo, fmt)} {lt} {v} {lt} {_num(hi, fmt)}")
    text = " or ".join(parts)
    ties = be.tie_intervals()
    if ties:
        text += "; equal on " + ", ".join(f"[{_num(a, fmt)}, {_num(b, fmt)}]" for a, b in ties)
    return text


def _short_regime(be, value: float) -> str:
    """``compute / memory+launch``: regimes of the GEMMs / of the casts at a point."""
    varying = {t.id for t in be.model.terms if len(t.pieces) > 1}
    return RegimeSummary.of(be.regime_at(value)).short(lambda id: id in varying)


def _fixed_text(be, fmt: str) -> str:
    """The shape the result was solved at: ``K = 4096, N = 4096`` or ``M = K = N = x``."""
    groups = _shape_groups(be)
    if not groups:
        return ""
    if fmt == "latex":
        return "$" + _shape_context(be) + "$"
    return ", ".join(" = ".join(str(k) for k in ks) + f" = {v}" for v, ks in groups.items())


def _escape_md(text: str) -> str:
    return text.replace("|", r"\|")


def breakeven_table(results: Any, fmt: str = "latex", *, layout: str = "long") -> str:
    r"""A table of break-even results (recipe x GPU), booktabs LaTeX or Markdown.

    ``results``: ``BreakEven`` objects (recipe and GPU read off their model),
    ``(recipe, gpu, result)`` rows (``result`` may be ``None``: "n/a"), or a
    mapping ``{(recipe, gpu): result}``; ``breakeven_rows`` makes them.
    ``layout="long"``: one line per result with the break-even point, the
    regime there (GEMMs / casts), where low precision is faster ("always",
    "never") and the shape it was solved at.  ``layout="grid"``: recipes down,
    GPUs across, each cell the break-even point (or "always" / "never").
    LaTeX needs ``\usepackage{booktabs}``.

    >>> import roofline_sym as rs
    >>> be = rs.breakeven(rs.linear("tensorwise", preset="torchao").on("NVIDIA H100"),
    ...                   along="cube")
    >>> print(breakeven_table([be], fmt="markdown"))
    | recipe | GPU | x* | regime at x* (GEMMs / casts) | faster | solved at |
    |:---|:---|---:|:---|:---|:---|
    | tensorwise | NVIDIA H100 | 2563 | compute / memory | x > 2563 | M = K = N = x |
    """
    if fmt not in ("latex", "markdown"):
        raise ValueError(f"fmt must be 'latex' or 'markdown', not {fmt!r}")
    if layout not in ("long", "grid"):
        raise ValueError(f"layout must be 'long' or 'grid', not {layout!r}")
    rows = _rows(results)
    if not rows:
        raise ValueError("no results to tabulate")
    esc = _tt if fmt == "latex" else _escape_md
    na = "n/a"
    solved = [r.result for r in rows if r.result is not None]
    variables = {be.variable for be in solved}
    if len(variables) == 1:
        only = next(iter(solved))
        star = f"${_star(latex(only.variable))}$" if fmt == "latex" else f"{only.variable}*"
    else:
        star = "break-even"

    def root_text(be):
        vals = [float(v) for v in be.root_values]
        return ", ".join(_num(v, fmt) for v in vals) if vals else "none"

    if layout == "long":
        header = ["recipe", "GPU", star, f"regime at {star} (GEMMs / casts)", "faster",
                  "solved at"]
        body = []
        for r in rows:
            be = r.result
            if be is None:
                body.append([esc(r.recipe), esc(r.gpu), na, na, na, ""])
                continue
            regimes = "; ".join(_short_regime(be, float(v)) for v in be.root_values) or "-"
            body.append([esc(r.recipe), esc(r.gpu), root_text(be), regimes,
                         _faster_text(be, fmt), _fixed_text(be, fmt)])
        align = ["l", "l", "r", "l", "l", "l"]
    else:
        recipes = list(dict.fromkeys(r.recipe for r in rows))
        gpus = list(dict.fromkeys(r.gpu for r in rows))
        cell = {(r.recipe, r.gpu): r.result for r in rows}
        header = [f"recipe ({star})"] + [esc(g) for g in gpus]
        body = []
        for rec in recipes:
            line = [esc(rec)]
            for g in gpus:
                if (rec, g) not in cell or cell[(rec, g)] is None:
                    line.append(na)
                    continue
                be = cell[(rec, g)]
                spans = be.faster_intervals()
                if len(be.root_values) == 1 and len(spans) == 1 and spans[0][1] == math.inf:
                    line.append(root_text(be))  # the usual case: faster above the root
                elif not len(be.root_values):
                    line.append("always" if spans == [(0.0, math.inf)] else "never")
                else:
                    line.append(_faster_text(be, fmt))
            body.append(line)
        align = ["l"] + ["r"] * len(gpus)

    if fmt == "markdown":
        marks = {"l": ":---", "r": "---:"}
        out = ["| " + " | ".join(header) + " |",
               "|" + "|".join(marks[a] for a in align) + "|"]
        out += ["| " + " | ".join(line) + " |" for line in body]
        return "\n".join(out)
    out = [rf"\begin{{tabular}}{{{''.join(align)}}}", r"\toprule",
           " & ".join(header) + r" \\", r"\midrule"]
    out += [" & ".join(line) + r" \\" for line in body]
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out)


def breakeven_rows(recipes: Iterable[str], gpus: Iterable[str], *, mode: str = "training",
                   fuse: bool = False, preset: str = "default", along: Any = "cube",
                   **solve: Any) -> list[Row]:
    """Solve every recipe on every GPU: rows for ``breakeven_table``.

    A recipe a GPU cannot run (no fp4 peak, ...) gives a row with ``None``.
    ``solve``: passed to ``rs.breakeven`` (``solve_for="M", K=..., N=...``
    replaces the default ``along="cube"``).

    >>> rows = breakeven_rows(["tensorwise"], ["h100-sxm"])
    >>> rows[0].recipe, rows[0].gpu, round(float(rows[0].result.root_values[0]))
    ('tensorwise', 'H100 SXM', 2321)
    """
    from ..solve.solver import breakeven
    from ..devices.catalog import hardware
    from ..model.linear import linear

    if "solve_for" in solve:
        along = None
    gpus = list(gpus)
    rows = []
    for name in recipes:
        model = linear(name, mode=mode, fuse=fuse, preset=preset)
        for gpu in gpus:
            hw = hardware(gpu, dataset=model.options.dataset)
            try:
                bound = model.on(hw)
            except ValueError:
                rows.append(Row(name, hw.name, None))
                continue
            rows.append(Row(name, hw.name, breakeven(bound, along=along, **solve)))
    return rows
