r"""The expression printer: model expressions as readable LaTeX, exactly.

Hardware symbols print by name (``P_{\mathrm{fp8}}``, ``\mathrm{BW}``,
``\eta_{\mathrm{mem}}``, ``t_{\mathrm{launch}}``), numbers stay exact
(``\frac{1}{5 \cdot 10^{5}}``, never a 16-digit float), a model's terms
print as their names (``TermTime._latex``: ``t^{\mathrm{amax}}_{X}``), GEMM
terms before kernel terms; ``model=`` names the model's totals
(``T^{\mathrm{gemm}}_{\mathrm{bf16}}``).  An object with LaTeX pieces (a
model, a break-even result) is written by the writer registered for them.

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
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import sympy
from sympy.core.sorting import default_sort_key
from sympy.printing.latex import LatexPrinter

from .. import renderers
from .. import symbols as S
from ..model.layer import BreakdownPieces
from ..model.term_time import TermTime, tex_text
from ..validate import InputTypeError, expression, show

__all__ = ["latex", "latex_preamble", "ExpressionPieces", "names", "model_pieces", "star",
           "equalities", "rounded"]

_SHAPES = set(S.SHAPE_SYMBOLS) | {S.x}


# -- numbers -----------------------------------------------------------------
def _int_tex(n: int, round_to: int | None = None) -> str:
    """An integer; long ones with >= 3 trailing zeros as ``d.ddd \\cdot 10^{k}``,
    exact up to seven significant digits, rounded to six beyond.

    With ``round_to`` (significant digits), an integer of 7 or more digits is
    rounded: ``6755750324708`` as ``6.756 \\cdot 10^{12}``.
    """
    sign, digits = ("- " if n < 0 else ""), str(abs(n))
    stripped = digits.rstrip("0")
    if round_to is not None and len(digits) > 6 and len(stripped) > round_to:
        return sign + float_tex(float(abs(n)), round_to)
    if len(digits) < 6 or len(digits) - len(stripped) < 3:
        return f"{sign}{digits}"
    if len(stripped) > 7:  # a product of measured numbers: seven digits say all they know
        return sign + float_tex(float(abs(n)), 6)
    exp = len(digits) - 1
    mantissa = stripped[0] + (f".{stripped[1:]}" if len(stripped) > 1 else "")
    power = f"10^{{{exp}}}"
    return f"{sign}{power}" if mantissa == "1" else f"{sign}{mantissa} \\cdot {power}"


def float_tex(value: float, digits: int = 6, short: bool = False) -> str:
    """A float at ``digits`` significant digits, powers of ten written out;
    ``short``: a power of ten below 0.1 and from 10**6 on (``0.0125`` as
    ``1.25 \\cdot 10^{-2}``), so no number shows more than ``digits`` digits."""
    if math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    text = f"{value:.{digits}g}"
    if short and 10 ** digits <= abs(value) < 1e6:  # 48346.1 as 48350, not 4.835 10^4
        return f"{float(text):.0f}"
    if short and value != 0 and "e" not in text and not 0.1 <= abs(value) < 1e6:
        text = f"{value:.{digits - 1}e}"
        mantissa, exp = text.split("e")
        text = mantissa.rstrip("0").rstrip(".") + "e" + exp
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    power = f"10^{{{int(exp)}}}"
    return power if mantissa == "1" else f"{mantissa} \\cdot {power}"


def rounded(expr: sympy.Expr) -> sympy.Expr:
    """Fractions with numerators of 7 digits or more as floats, for a printer
    that rounds (``5066812743531/8525258890 K`` prints as ``594.3 K``); the
    rest of the expression is kept as it is (nothing re-evaluated)."""
    if expr.is_Rational:
        return sympy.Float(expr, 15) if expr.q > 1 and abs(expr.p) >= 10 ** 6 else expr
    if not expr.args or expr.is_Atom:
        return expr
    args = [rounded(a) for a in expr.args]
    if all(a is b for a, b in zip(args, expr.args)):
        return expr
    try:
        return expr.func(*args, evaluate=False)
    except TypeError:  # a function without evaluate=
        return expr.func(*args)


# -- the printer ---------------------------------------------------------------
def shape_degree(expr: sympy.Basic) -> int:
    """Total degree in the shape symbols of the largest monomial (roughly)."""
    if expr in _SHAPES:
        return 1
    if expr.is_Pow:
        base, exp = expr.args
        return shape_degree(base) * int(exp) if exp.is_Integer else shape_degree(base)
    if expr.is_Mul:
        return sum(shape_degree(a) for a in expr.args)
    if not expr.args:
        return 0
    return max(shape_degree(a) for a in expr.args)


def _is_gemm_like(expr: sympy.Basic) -> bool:
    """A GEMM time: has a peak symbol, or a K*M*N monomial once bound."""
    if any(str(s).startswith("P_") and S.is_hardware_symbol(s) for s in expr.free_symbols):
        return True
    return shape_degree(expr) >= 3


class Printer(LatexPrinter):  # type: ignore[misc]  # SymPy is untyped: LatexPrinter is Any
    """SymPy's LaTeX printer with exact readable numbers and model-aware order."""

    def __init__(self, settings: Mapping[str, Any] | None = None,
                 rank: Mapping[sympy.Basic, int] | None = None,
                 digits: int | None = None) -> None:
        super().__init__(settings)
        self._rank = dict(rank or {})
        self._digits = digits  # significant digits of rounded numbers; None: exact

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return _int_tex(int(expr.p), self._digits)

    def _print_Rational(self, expr: sympy.Rational) -> str:
        if expr.q == 1:
            return _int_tex(int(expr.p), self._digits)
        sign = "- " if expr.p < 0 else ""
        num, den = _int_tex(abs(int(expr.p)), self._digits), _int_tex(int(expr.q), self._digits)
        return rf"{sign}\frac{{{num}}}{{{den}}}"

    def _print_Float(self, expr: sympy.Float) -> str:
        if self._digits is None:
            return float_tex(float(expr))
        return float_tex(float(expr), self._digits, short=True)

    def _group(self, term: sympy.Basic) -> tuple[int, Any]:
        # a named total (a ranked symbol), or a term (a ranked TermTime, alone or
        # with a coefficient)
        terms = [f for f in sympy.Mul.make_args(term) if isinstance(f, TermTime)]
        named = [self._rank[s] for s in term.free_symbols | set(terms) if s in self._rank]
        if named:
            return (0, min(named))
        if term.is_number:
            return (3, 0)
        if terms:  # a model's term: GEMMs, then kernels, each in its natural order
            order = min(t.order for t in terms)
            return (1 + order[1], order)
        return (1, 0) if _is_gemm_like(term) else (2, 0)

    def _as_ordered_terms(self, expr: sympy.Expr, order: Any = None) -> list[sympy.Expr]:
        terms: list[sympy.Expr] = super()._as_ordered_terms(expr, order=order)
        if not expr.is_Add:
            return terms
        # stable: SymPy's order within a group; named parts, GEMMs, casts, numbers
        return sorted(terms, key=self._group)

    def _print_Max(self, expr: sympy.Max, exp: str | None = None) -> str:
        # compute piece (degree 3 in shapes) first, then memory, then launch
        args = sorted(expr.args, key=lambda a: (-shape_degree(a), default_sort_key(a)))
        tex = r"\max\left(%s\right)" % ", ".join(self._print(a) for a in args)
        return rf"{tex}^{{{exp}}}" if exp is not None else tex

    def _print_Min(self, expr: sympy.Min, exp: str | None = None) -> str:
        args = sorted(expr.args, key=lambda a: (-shape_degree(a), default_sort_key(a)))
        tex = r"\min\left(%s\right)" % ", ".join(self._print(a) for a in args)
        return rf"{tex}^{{{exp}}}" if exp is not None else tex


# -- named sub-expressions -------------------------------------------------------
tt = tex_text  # text for \mathrm{} and \text{}, escaped


def _rm(text: str) -> str:
    return rf"\mathrm{{{tt(text)}}}"


def named_totals(pieces: BreakdownPieces) -> list[tuple[str, sympy.Expr, str]]:
    """``names`` from a model's ``BreakdownPieces``."""
    b, lp = _rm("bf16"), _rm(pieces.lowp_label)
    tex = {
        "baseline_time": rf"T_{{{b}}}",
        "lowp_time": rf"T_{{{lp}}}",
        "baseline_gemm_time": rf"T^{{\mathrm{{gemm}}}}_{{{b}}}",
        "baseline_overhead_time": rf"T^{{\mathrm{{ovhd}}}}_{{{b}}}",
        "lowp_gemm_time": rf"T^{{\mathrm{{gemm}}}}_{{{lp}}}",
        "lowp_overhead_time": rf"T^{{\mathrm{{ovhd}}}}_{{{lp}}}",
    }
    totals = dict(pieces.totals)
    return [(attr, totals[attr], t) for attr, t in tex.items()]


def names(model: Any) -> list[tuple[str, sympy.Expr, str]]:
    r"""The model's named quantities: ``[(attribute, expression, LaTeX name)]``.

    Largest first (totals before their parts), the order ``latex(...,
    model=)`` tries them in.

    >>> import roofline_sym as rs
    >>> [tex for _, _, tex in names(rs.linear("tensorwise"))][:2]
    ['T_{\\mathrm{bf16}}', 'T_{\\mathrm{fp8}}']
    """
    return named_totals(model_pieces(model))


def model_pieces(model: Any) -> BreakdownPieces:
    """A model's ``BreakdownPieces`` (its terms and totals); anything else is refused."""
    pieces = getattr(model, "_latex_pieces_", None)
    pieces = pieces() if callable(pieces) else None
    if not isinstance(pieces, BreakdownPieces):
        raise InputTypeError(f"model= takes a model from rs.linear(), not "
                             f"{type(model).__name__} {show(model)}")
    return pieces


def name_parts(expr: sympy.Expr,
                table: Sequence[tuple[sympy.Expr, sympy.Symbol]]) -> sympy.Expr:
    """Replace whole sub-expressions, or sub-sums of an ``Add``, by named symbols.

    The root itself is never replaced (``latex(m.lowp_time, model=m)`` shows
    its parts, not one letter).
    """
    table = [(e, s) for e, s in table if e != 0 and not e.is_number]

    def walk(e: sympy.Expr, root: bool = False) -> sympy.Expr:
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


@dataclass(frozen=True)
class ExpressionPieces:
    """An expression to write as a complete block (``latex(expr, width=...)``)."""

    expr: Any
    model: Any = None
    lhs: str | None = None
    symbol_names: Mapping[sympy.Symbol, str] | None = None


def latex(expr: Any, *, model: Any = None,
          symbol_names: Mapping[sympy.Symbol, str] | None = None,
          width: Any = None, digits: int | None = None, lhs: str | None = None) -> str:
    r"""Readable LaTeX of a model expression (or of a model / break-even result).

    Hardware symbols print by name (``\mathrm{BW}``), numbers stay exact, a
    model's terms print as their names (``t^{\mathrm{fp8}}_{Y}``; ``.doit()``
    writes them out), GEMM terms come before cast terms.  With ``model=``, the
    model's totals in ``expr`` print as named symbols
    (``T^{\mathrm{gemm}}_{\mathrm{bf16}}``) and its terms in its order.
    A ``Linear`` renders as its ``breakdown``; a ``BreakEven`` as its
    ``latex()`` (anything offering ``_latex_pieces_()``, by the writer
    registered for its pieces).  ``digits``: round numbers to that many
    significant digits (default: exact).

    With ``width`` (``r"\columnwidth"``, ``"0.9\textwidth"``, ``"8.4cm"``): a
    complete ``align*`` block that fits it in a two-column article, long parts
    named and defined below, numbers to ``digits`` significant digits (4
    unless given); ``lhs``: the LaTeX of what ``expr`` equals (default: its
    name in ``model``).  ``latex_preamble()`` lists the packages.

    >>> import roofline_sym as rs
    >>> print(latex(2 * rs.M, width=r"\columnwidth", lhs="y"))
    \begin{align*}
    y &= 2 M
    \end{align*}

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise")
    >>> latex(m.speedup, model=m)
    '\\frac{T_{\\mathrm{bf16}}}{T_{\\mathrm{fp8}}}'
    >>> latex(m.lowp_time, model=m)
    'T^{\\mathrm{gemm}}_{\\mathrm{fp8}} + T^{\\mathrm{ovhd}}_{\\mathrm{fp8}}'
    """
    if hasattr(expr, "_latex_pieces_"):
        return renderers.render(expr._latex_pieces_(), width=width, digits=digits)
    # text is parsed with a whitelist (validate.formula), never evaluated
    expr = expression(expr, "latex: the expression")
    if symbol_names is not None and not (isinstance(symbol_names, Mapping) and all(
            isinstance(k, sympy.Symbol) and isinstance(v, str) for k, v in symbol_names.items())):
        raise InputTypeError("latex: symbol_names= takes a mapping of SymPy symbols to LaTeX "
                             f"strings, not {show(symbol_names)}")
    if width is not None:
        return renderers.render(ExpressionPieces(expr, model, lhs, symbol_names), width=width,
                                digits=digits)
    if digits is not None:
        expr = rounded(expr)
    symnames = {s: S.latex_name(s) for s in expr.free_symbols if S.is_hardware_symbol(s)}
    rank: dict[sympy.Basic, int] = {}
    if model is not None:
        pieces = model_pieces(model)
        placeholders = []
        for i, (attr, e, tex) in enumerate(named_totals(pieces)):
            sym = sympy.Dummy(attr, positive=True)
            placeholders.append((e, sym))
            symnames[sym] = tex
            rank[sym] = i
        # the terms in the model's order, after its totals
        rank.update({t.time: len(rank) + j for j, t in enumerate(pieces.terms)})
        expr = name_parts(expr, placeholders)
    symnames.update(symbol_names or {})
    printer = Printer({"symbol_names": symnames}, rank, digits)
    out: str = printer.doprint(expr)
    return out


def latex_preamble() -> str:
    r"""The ``\usepackage`` lines the LaTeX blocks and tables need.

    >>> print(latex_preamble())
    \usepackage{amsmath}  % align*, \intertext, cases: formulas and break-even blocks
    \allowdisplaybreaks   % a long block may continue in the next column
    \usepackage{booktabs}  % \toprule, \midrule, \bottomrule: break-even tables
    """
    return "\n".join([
        r"\usepackage{amsmath}  % align*, \intertext, cases: formulas and break-even blocks",
        r"\allowdisplaybreaks   % a long block may continue in the next column",
        r"\usepackage{booktabs}  % \toprule, \midrule, \bottomrule: break-even tables"])


def star(v: str) -> str:
    """``v^{*}``: the break-even value of a variable printed as ``v``."""
    return f"{v}^{{*}}"


def equalities(groups: Iterable[tuple[sympy.Expr, Iterable[sympy.Symbol]]]) -> str:
    r"""``K = 4096,\ N = 4096`` or ``M = K = N = x``: symbols equal to values."""
    return r",\ ".join(" = ".join(latex(k) for k in ks) + f" = {latex(v)}" for v, ks in groups)
