r"""LaTeX for papers: complete display blocks that fit a given width.

``rs.latex(obj, width=r"\columnwidth")`` (and ``model.latex(width=...)``,
``be.latex(width=...)``) returns an ``align*`` environment that typesets
within ``width`` in a two-column article: sums and relations break across
lines, a sub-expression too long for a line is named and defined below it
(``where E_{1} = ...``, or the model's own names: ``T_{\mathrm{fp8}}``,
``t^{\mathrm{cast}}_{\mathrm{input,amax}}``), numbers are rounded to
``digits`` significant digits (4 unless given) and symbols stay symbols; a
model's terms print as their names and are defined below, one row each.
This module registers the writers of such blocks; ``renderers`` imports it
the first time one is asked for.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="inference")
>>> print(rs.latex(m.speedup, model=m, width=r"\columnwidth").splitlines()[1])
S &= \frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp8}}} \\
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import sympy

from .. import renderers
from .. import symbols as S
from ..model.layer import BreakdownPieces
from ..model.term_time import TermTime
from ..solve.result import BreakEvenPieces
from ..validate import expression
from .blocks import definitions, side_terms
from .layout import Block, measure, width_pt
from .printer import (ExpressionPieces, float_tex, name_parts, Printer, shape_degree, tt,
                      equalities, model_pieces, named_totals, rounded, star)
from .printer import latex as inline_latex

__all__ = ["DIGITS", "expression_block", "breakdown_block", "breakeven_block"]

DIGITS = 4           # significant digits of rounded numbers in blocks
_SLACK = 1.04        # estimates are multiplied by this ...
_MARGIN = 3.0        # ... and must leave this many points free
_FLUSH = 0.3         # a name wider than this share of the width: rows flush left
_QUAD, _QQUAD = 10.0, 20.0
_SHAPES = set(S.SHAPE_SYMBOLS) | {S.x}
_RELATIONS = {">=": r"\geq", "<=": r"\leq", ">": ">", "<": "<", "==": "=", "!=": r"\neq"}


# -- numbers as a paper prints them ------------------------------------------------
def _numeric_poly(expr: sympy.Expr) -> bool:
    """A sum of numeric multiples of shape monomials (a bound memory or launch time)."""
    return (expr.is_Add and expr.free_symbols <= _SHAPES
            and not expr.has(sympy.Max, sympy.Min))


def _common_factor(expr: sympy.Expr) -> sympy.Expr:
    """``K M / c + K N / c + 2 M N / c`` as ``(K M + K N + 2 M N) / c`` (unevaluated);
    a sum without a common denominator stays as it is."""
    content, rest = _content(expr)
    return expr if content == 1 else sympy.Mul(content, rest, evaluate=False)


def _content(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """A numeric sum as (its fractional content, the rest): ``(1/32, 33 K M + 64 K N)``;
    ``(1, expr)`` for anything else."""
    if not _numeric_poly(expr):
        return sympy.Integer(1), expr
    content, rest = expr.primitive()
    if content.is_Rational and content.q > 1:
        return content, rest
    return sympy.Integer(1), expr


def _tidy(expr: sympy.Expr) -> sympy.Expr:
    """Numbers rounded, numeric sums over their common denominator, at every level
    (nothing re-evaluated): ``(33 K M + 64 K N) / (32 BW eta)``; a number
    standing alone as a power of ten (``2 10^-6``, not ``1/500000``)."""
    if expr.is_Rational and expr.q >= 1000:
        return sympy.Float(expr, 15)
    if not expr.args or expr.is_Atom:
        return rounded(expr)
    if _numeric_poly(expr):
        return rounded(_common_factor(expr))
    args = []
    for a in expr.args:
        if expr.is_Mul and _content(a)[0] != 1:
            # a sum's denominator joins the product's: one fraction
            args += [rounded(x) for x in _content(a)]
        elif a.is_Rational and expr.is_Mul:
            args.append(rounded(a))  # a coefficient: K M N / 3.972 10^14
        else:
            args.append(_tidy(a))
    if len(args) == len(expr.args) and all(a is b for a, b in zip(args, expr.args)):
        return expr
    try:
        return expr.func(*args, evaluate=False)
    except TypeError:  # a function without evaluate=
        return expr.func(*args)


def _monic(poly: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """A polynomial in the shapes as (leading coefficient, monic polynomial with
    equal coefficients grouped): ``c (K N - 594.3 (K + N))``."""
    if not poly.free_symbols & _SHAPES:
        return poly, sympy.Integer(1)
    try:  # generators: the shapes and block counts such as ceiling(K/32)
        p = sympy.Poly(poly)
    except sympy.PolynomialError:
        return sympy.Integer(1), poly
    gens = p.gens
    lc = p.LC()
    groups: dict[sympy.Expr, list[sympy.Expr]] = {}
    for monom, coeff in p.terms():
        term = sympy.Mul(*(g ** e for g, e in zip(gens, monom)))
        ratio = coeff / lc
        groups.setdefault(ratio if ratio.is_Integer else sympy.Float(ratio, 15), []).append(term)
    parts = []
    for coeff, terms in groups.items():
        inner = terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)
        if inner == 1:
            parts.append(coeff)
        else:
            parts.append(inner if coeff == 1 else sympy.Mul(coeff, inner, evaluate=False))
    return lc, (parts[0] if len(parts) == 1 else sympy.Add(*parts, evaluate=False))


# -- the layout engine ---------------------------------------------------------------
class _Layout:
    """Breaks expressions into lines of a width; names what cannot be broken.

    ``names``: ``[(expression, LaTeX name)]`` tried before a generic
    ``E_{i}`` when a sub-expression must be named (a model's totals and terms).
    """

    def __init__(self, width: float, digits: int, names: Sequence[tuple[Any, str]] = (),
                 symbol_names: dict[sympy.Symbol, str] | None = None,
                 cache: dict[sympy.Expr, str] | None = None,
                 rank: Mapping[sympy.Basic, int] | None = None) -> None:
        self.width = width - _MARGIN
        self.digits = digits
        self.candidates = [(e, t) for e, t in names if e != 0]
        # shared by the passes of one block: a symbol's name never changes
        self.symbol_names: dict[sympy.Symbol, str] = {} if symbol_names is None else symbol_names
        self.printer = Printer({"symbol_names": self.symbol_names}, rank, digits=digits)
        self.pending: list[tuple[str, sympy.Expr]] = []
        self.defined: dict[sympy.Expr, str] = {}
        self.count = 0
        self._tex: dict[sympy.Expr, str] = {} if cache is None else cache
        self.lhs_col = 0.0       # width of the lhs column (aligned rows)
        self.flush = False        # rows flush left: "& lhs = rhs"
        self.said_where = False   # "where" written once per block

    # -- printing and measuring
    def tex(self, expr: sympy.Expr) -> str:
        expr = expression(expr)  # a model's own expressions; text is never evaluated
        if expr not in self._tex:
            for s in expr.free_symbols:
                if s not in self.symbol_names and S.is_hardware_symbol(s):
                    self.symbol_names[s] = S.latex_name(s)
            self._tex[expr] = self.printer.doprint(_tidy(expr))
        return self._tex[expr]

    @staticmethod
    def w(tex: str) -> float:
        return measure(tex) * _SLACK

    # -- naming
    def name(self, expr: sympy.Expr) -> str:
        """A name for ``expr`` (the model's, else ``E_{i}``), defined below."""
        if expr in self.defined:
            return self.defined[expr]
        tex = next((t for e, t in self.candidates if e == expr), None)
        if tex is None:
            self.count += 1
            tex = f"E_{{{self.count}}}"
        self.defined[expr] = tex
        self.pending.append((tex, expr))
        return tex

    def _placeholder(self, expr: sympy.Expr) -> sympy.Symbol:
        sym = sympy.Dummy("named", positive=True)
        self.symbol_names[sym] = self.name(expr)
        return sym

    # -- breaking
    def _terms(self, expr: sympy.Expr) -> list[tuple[str, sympy.Expr]]:
        """An Add's terms in print order with their signs."""
        out = []
        for t in self.printer._as_ordered_terms(expr):
            if t.could_extract_minus_sign():
                out.append(("-", -t))
            else:
                out.append(("+", t))
        return out

    def tokens(self, expr: sympy.Expr, avail: float, root: bool = False) -> list[str]:
        """Pieces of ``expr``'s LaTeX between which a line may break, each
        narrower than ``avail`` where possible (``root``: never named itself)."""
        # a large tree cannot fit a line: not printed whole (that is the slow part)
        tex = self.tex(expr) if root or _size(expr) <= _LARGE else ""
        if tex and self.w(tex) <= avail:
            return [tex]
        if _numeric_poly(expr):
            factored = rounded(_common_factor(expr))
            if factored.is_Mul:
                return self._product(factored, avail)
        if expr.is_Add:
            out = []
            for i, (sign, term) in enumerate(self._terms(expr)):
                sub = self.tokens(term, avail - 14)
                if i:  # "{}+": binary spacing where the token starts a line
                    sub[0] = f"{{}}{sign} {sub[0]}"
                elif sign == "-":
                    sub[0] = f"- {sub[0]}"
                out += sub
            return out
        if isinstance(expr, sympy.core.relational.Relational):
            rel = _RELATIONS[expr.rel_op]
            right = self.tokens(expr.rhs, avail - 14)
            right[0] = f"{rel} {right[0]}"
            return self.tokens(expr.lhs, avail) + right
        if isinstance(expr, (sympy.Max, sympy.Min)):
            return self._function(expr, avail)
        if expr.is_Mul:
            return self._product(expr, avail, root)
        return [tex if root else self.name(expr)]

    def _function(self, expr: sympy.Max | sympy.Min, avail: float) -> list[str]:
        op = r"\max" if isinstance(expr, sympy.Max) else r"\min"
        args = sorted(expr.args, key=lambda a: (-shape_degree(a), sympy.default_sort_key(a)))
        texs = [self.tex(a) for a in args]
        big = "bigg" if any(r"\frac" in t for t in texs) else "big"
        out = []
        for j, a in enumerate(args):
            sub = self.tokens(a, avail - 30)
            if j == 0:
                sub[0] = rf"{op}\{big}l({sub[0]}"
            sub[-1] += "," if j < len(args) - 1 else rf"\{big}r)"
            out += sub
        return out

    def _product(self, expr: sympy.Expr, avail: float, root: bool = False) -> list[str]:
        num, den = sympy.fraction(expr, exact=True)
        content, rest = _content(num)
        if content != 1:  # (129 K / 32 + ...) / (BW eta) as (129 K + ...) / (32 BW eta)
            num, den = rest * content.p, den * content.q
        if den != 1:
            if num.is_Add and self.w(self.tex(den)) < avail / 2:
                # a wide sum over a short denominator: 1/den (sum), broken in the sum
                return self._wrap(self.tex(1 / den), num, avail)
            num_s = num if self.w(self.tex(num)) <= avail else self._placeholder(num)
            den_s = den if self.w(self.tex(den)) <= avail else self._placeholder(den)
            return [self.tex(sympy.Mul(num_s, sympy.Pow(den_s, -1, evaluate=False),
                                       evaluate=False))]
        factors = list(expr.args)
        breakable = [f for f in factors if f.is_Add or isinstance(f, (sympy.Max, sympy.Min))]
        if not breakable:
            return [self.tex(expr) if root else self.name(expr)]
        widest = max(breakable, key=lambda f: self.w(self.tex(f)))
        rest = [f for f in factors if f is not widest]
        coeff = sympy.Mul(*rest, evaluate=False) if rest else sympy.Integer(1)
        if isinstance(widest, (sympy.Max, sympy.Min)):
            prefix = "" if coeff == 1 else ("- " if coeff == -1 else self.tex(coeff) + " ")
            sub = self._function(widest, avail - self.w(prefix))
            sub[0] = prefix + sub[0]
            return sub
        prefix = "" if coeff == 1 else ("-" if coeff == -1 else self.tex(coeff))
        return self._wrap(prefix, widest, avail)

    def _wrap(self, prefix: str, inner: sympy.Expr, avail: float) -> list[str]:
        """``prefix \\biggl( inner \\biggr)`` broken inside ``inner``."""
        big = "bigg" if r"\frac" in self.tex(inner) else "big"
        sub = self.tokens(inner, avail - self.w(prefix) - 15)
        sub[0] = rf"{prefix} \{big}l({sub[0]}"
        sub[-1] += rf"\{big}r)"
        return sub

    def pack(self, tokens: list[str], first: float, rest: float) -> list[str]:
        """Tokens joined into lines: the first at most ``first`` wide, then ``rest``."""
        lines: list[str] = []
        current = ""
        if tokens and self.w(tokens[0]) > first:
            lines.append("")  # the first piece does not fit after the name: start below
        for tok in tokens:
            # "{}+" keeps a binary + binary where it starts a line; mid-line, a plain +
            trial = f"{current} {tok.removeprefix('{}')}" if current else tok
            limit = first if not lines else rest
            if current and self.w(trial) > limit:
                lines.append(current)
                current = tok
            else:
                current = trial
        lines.append(current)
        return lines

    # -- rows
    def rows(self, block: Block, lhs: str | None, rel: str, expr: sympy.Expr) -> None:
        """``lhs rel expr`` as rows of ``block``, broken to the width."""
        rel_w = 2 * 2.78 + 7.78
        if lhs is None:  # in the right-hand column, after the names
            first = self.width - (0.0 if self.flush else self.lhs_col)
            rest = first - _QUAD
            head, cont = "&", r"&\quad "
        elif self.flush:
            first = self.width - self.w(f"{lhs} {rel}") - 2 * 2.78
            rest = self.width - _QQUAD
            head, cont = f"&{lhs} {rel} ", r"&\qquad "
        else:
            first = self.width - self.lhs_col - rel_w
            rest = first - _QUAD
            head, cont = f"{lhs} &{rel} ", r"&\quad "
        lines = self.pack(self.tokens(expr, rest - 2, root=True), first, rest)
        block.row(head + lines[0])
        for line in lines[1:]:
            block.row(cont + line)

    def definitions(self, block: Block, intro: str = "where") -> None:
        """Rows defining every name introduced so far (and those they introduce)."""
        while self.pending:
            tex, expr = self.pending.pop(0)
            if not self.said_where and intro:
                block.text(intro)
                self.said_where = True
            self.rows(block, tex, "=", expr)

    def terms(self, block: Block, terms: Sequence[TermTime], intro: str = "where") -> None:
        """One row per model term, ``t^{...}_{...} = \\max(...)``, each name once,
        then the names their rows introduced."""
        seen: set[str] = set()
        for t in terms:
            tex = self.tex(t)
            if tex in seen:
                continue
            seen.add(tex)
            self.defined.setdefault(t, tex)  # its width sets the name column (_fit)
            if not self.said_where and intro:
                block.text(intro)
                self.said_where = True
            self.rows(block, tex, "=", t.definition)
        self.definitions(block, intro)


_LARGE = 80  # nodes: a tree this large is wider than any line


def _size(expr: sympy.Expr) -> int:
    """Nodes of ``expr``, counted up to just past ``_LARGE``."""
    n = 0
    for _ in sympy.preorder_traversal(expr):
        n += 1
        if n > _LARGE:
            break
    return n


def _fit(width: Any, digits: int | None, names: Sequence[tuple[Any, str]],
         lhs_names: Sequence[str], build: Callable[[_Layout, Block], None],
         symbol_names: Mapping[sympy.Symbol, str] | None = None,
         rank: Mapping[sympy.Basic, int] | None = None) -> str:
    """Lay a block out: rows aligned at their relation while the names are short,
    flush left otherwise; again with a wider name column if a definition needs it."""
    total = width_pt(width)
    digits = DIGITS if digits is None else digits
    lhs_col = max([measure(t) * _SLACK for t in lhs_names] or [0.0])
    shared_names = dict(symbol_names or {})
    cache: dict[sympy.Expr, str] = {}
    for _ in range(4):
        lay = _Layout(total, digits, names, shared_names, cache, rank)
        lay.lhs_col = lhs_col
        lay.flush = lhs_col > _FLUSH * total
        block = Block()
        build(lay, block)
        used = max([lhs_col] + [lay.w(t) for t in lay.defined.values()])
        if used <= lhs_col or lay.flush:
            return block.latex()
        lhs_col = used
    return block.latex()


# -- expressions ----------------------------------------------------------------------
def expression_block(expr: Any, width: Any = r"\columnwidth", *, digits: int | None = None,
                     model: Any = None, lhs: str | None = None,
                     symbol_names: Mapping[sympy.Symbol, str] | None = None) -> str:
    r"""An expression as an ``align*`` block that fits ``width``; the model terms in
    it are defined below it, one row each.

    ``lhs``: the LaTeX of what it equals (default: the model's name for it
    when ``model`` is given and ``expr`` is one of its totals or its speedup).
    With ``model``, the model's totals in ``expr`` print as their names
    (defined below as sums of terms) and the terms come in the model's order.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise", preset="torchao").on("NVIDIA H100")
    >>> rows = expression_block(m.lowp_overhead_time, model=m).splitlines()
    >>> print(rows[1][:57])
    T^{\mathrm{ovhd}}_{\mathrm{fp8}} &= t^{\mathrm{amax}}_{X}
    >>> print(rows[-2])
    t^{\mathrm{cast\_dim0\_dim1}}_{dY} &= \max\left(\frac{M N}{5.52 \cdot 10^{11}}, 2 \cdot 10^{-6}\right)
    """
    expr = expression(expr, "expression_block: the expression")  # text: a whitelist
    totals: list[tuple[sympy.Expr, str]] = []
    rank: dict[sympy.Basic, int] = {}
    if model is not None:
        pieces = model_pieces(model)
        totals = [(e, t) for _, e, t in named_totals(pieces)]
        rank = {t.time: j for j, t in enumerate(pieces.terms)}
        if lhs is None:
            lhs = next((t for e, t in totals if e == expr), None)
            if lhs is None and expr == model.speedup:
                lhs = "S"
        totals = [(e, t) for e, t in totals if t != lhs]
    # the model's terms (and the totals' terms), in its order, else as printed
    terms = sorted(expr.atoms(TermTime), key=lambda t: (rank.get(t, len(rank)), t.order))

    def build(lay: _Layout, block: Block) -> None:
        # the model's totals as names (never the whole expression), defined below
        named = [(e, sympy.Dummy("total", positive=True)) for e, _ in totals]
        body = name_parts(expr, named)
        for (e, _), (_, sym) in zip(totals, named):
            if body.has(sym):
                lay.symbol_names[sym] = lay.name(e)  # the total's own name, defined below
        lay.rows(block, lhs, "=", body)
        lay.definitions(block)
        lay.terms(block, terms)

    # the names a definition is likely to get, so that one pass usually does
    likely = [lhs or "", "E_{9}", *(t for _, t in totals[:6]),
              *(sympy.latex(t) for t in terms[:6])]
    return _fit(width, digits, totals, likely, build, symbol_names, rank)


# -- a model's breakdown -----------------------------------------------------------
def breakdown_block(p: BreakdownPieces, width: Any = r"\columnwidth", *,
                    digits: int | None = None) -> str:
    """A model's breakdown as a block that fits ``width``: the speedup, each side's
    time as a sum of its terms' names, then every term's definition."""
    nm = {attr: tex for attr, _, tex in named_totals(p)}
    lhs_names = ["S", *nm.values(), *(sympy.latex(t.time) for t in p.terms)]

    def build(lay: _Layout, block: Block) -> None:
        lay.rows(block, "S", "=", sympy.Mul(
            _sym(lay, nm["baseline_time"]),
            sympy.Pow(_sym(lay, nm["lowp_time"]), -1, evaluate=False), evaluate=False))
        for side in ("baseline", "lowp"):
            # placeholders made in model order print in it (Dummies sort by creation)
            names = [_sym(lay, lay.tex(t.time)) for t in side_terms(p, side)]
            lay.rows(block, nm[f"{side}_time"], "=",
                     sympy.Add(*names, evaluate=False) if names else sympy.Integer(0))
        for k, (label, terms) in enumerate(definitions(p)):
            block.text(("where, " if k == 0 else "") + tt(label) + ":")
            lay.said_where = True
            lay.terms(block, [t.time for t in terms], intro="")

    return _fit(width, digits, [], lhs_names, build)


def _sym(lay: _Layout, tex: str) -> sympy.Symbol:
    """A symbol printed as ``tex`` (a name in a row)."""
    sym = sympy.Dummy("n", positive=True)
    lay.symbol_names[sym] = tex
    return sym


# -- break-even results ------------------------------------------------------------
def _cases(p: BreakEvenPieces, v: str, d: int) -> tuple[list[str], list[str]]:
    """Where low precision is faster, slower or equal: ``cases`` rows, and words."""
    rows, words = [], []
    for lo, hi, kind in p.outcomes:
        lo_t, hi_t = (float_tex(lo, d, short=True), float_tex(hi, d, short=True))
        if lo == 0 and hi == math.inf:
            where, said = rf"\text{{for all }} {v} > 0", f"for all ${v} > 0$"
        elif lo == 0:
            where, said = rf"\text{{if }} {v} < {hi_t}", f"if ${v} < {hi_t}$"
        elif hi == math.inf:
            where, said = rf"\text{{if }} {v} > {lo_t}", f"if ${v} > {lo_t}$"
        else:
            where, said = (rf"\text{{if }} {lo_t} < {v} < {hi_t}",
                           f"if ${lo_t} < {v} < {hi_t}$")
        rows.append(rf"\text{{{kind}}} & {where}")
        words.append(f"{kind} {said}")
    return rows, words


def _numeric(p: BreakEvenPieces, width: Any, d: int) -> str:
    v = inline_latex(p.variable)
    vs = star(v)
    ctx = equalities(p.fixed)
    label = r"\text{low precision is}"

    def build(lay: _Layout, block: Block) -> None:
        cases, words = _cases(p, v, d)
        widest = max(lay.w(c.replace("&", r"\quad")) for c in cases) + 12
        as_cases = lay.lhs_col + 13.34 + widest <= lay.width
        for k, (value, regime) in enumerate(p.roots):
            rhs = rf"\approx {float_tex(value, d, short=True)}"
            at = rf" \qquad ({ctx})" if ctx and k == 0 else ""
            fits = lay.lhs_col + lay.w(rhs + at) <= lay.width
            block.row(rf"{vs} &{rhs}{at if fits else ''}")
            said = f"at ${ctx}$; " if ctx and k == 0 and not fits else ""
            block.text(r"{\small " + said + f"regime at ${vs}$: " + tt(regime) + "}")
        if as_cases:
            block.row(rf"{label} &\begin{{cases}} " + r" \\ ".join(cases) + r" \end{cases}")
        else:
            block.text("Low precision is " + "; ".join(words) + ".")
        if not p.roots:
            block.text(f"(No break-even point in ${v} > 0$" + (f" at ${ctx}$" if ctx else "")
                       + ".)")
        if p.aligned:
            block.text(r"{\small (block-scale floors taken on block-aligned shapes)}")

    return _fit(width, d, [], [vs, label], build)


def _symbolic(p: BreakEvenPieces, width: Any, d: int, conditions: bool) -> str:
    v = inline_latex(p.variable)
    vs = star(v)
    ctx = equalities(p.fixed)
    closed, slope = p.closed_form, p.slope
    # hardware bound and a plain ratio of polynomials in the shapes (no block counts)
    bound = (closed is not None and closed.free_symbols <= _SHAPES
             and not closed.atoms(sympy.Function))

    def build(lay: _Layout, block: Block) -> None:
        a = _sym(lay, "a")
        if closed is None:
            block.row(rf"&\text{{low precision faster}} \iff T_{{\mathrm{{bf16}}}}({v}) "
                      rf"> T_{{\mathrm{{{tt(p.lowp_label)}}}}}({v})")
        elif slope is not None and bound:
            # one fraction, denominator monic: 792.4 (K N + 2.312e6) / (K N - 594.3 (K + N))
            num, den = sympy.fraction(sympy.cancel(sympy.together(closed)))
            lc_num, monic_num = _monic(sympy.expand(num))
            lc_den, monic_den = _monic(sympy.expand(den))
            lay.rows(block, vs, "=", _scaled(lc_num / lc_den, sympy.Mul(
                monic_num, sympy.Pow(monic_den, -1, evaluate=False), evaluate=False)))
            lc, monic_a = _monic(sympy.expand(slope))
            lay.rows(block, "a", "=", _scaled(lc, monic_a))
        elif slope is not None:
            b = _sym(lay, "b")
            lay.rows(block, vs, "=", sympy.Mul(b, sympy.Pow(a, -1, evaluate=False),
                                               evaluate=False))
            block.text("where")
            lay.rows(block, "a", "=", slope)
            lay.rows(block, "b", "=", closed * slope)
        else:
            lay.rows(block, vs, "=", closed)
        lay.definitions(block, intro="" if slope is not None and not bound else "where")
        said = (f"At ${ctx}$, low" if ctx else "Low") + " precision is faster"
        said += (f" where $a\\,({v} - {vs}) > 0$." if slope is not None else
                 " where its time is the lower.")
        block.text(said)
        if p.aligned:
            block.text("(Block-scale floors taken on block-aligned shapes.)")
        if p.regime:
            block.text(r"{\small Regime: " + tt(p.regime)
                       + ("; valid while:}" if conditions and p.conditions else ".}"))
        if not conditions:
            return
        rows: dict[tuple[sympy.Expr, sympy.Expr], list[tuple[str, str, str]]] = {}
        for lhs, rhs, what, detail, which in p.conditions:
            rows.setdefault((lhs, rhs), []).append((what, detail, which))
        for (lhs, rhs), terms in rows.items():
            groups: dict[str, list[str]] = {}
            for what, detail, _ in terms:
                groups.setdefault(what, []).append(detail)
            text = "; ".join(f"{what} {', '.join(ds)}" for what, ds in groups.items())
            which = tt(terms[-1][2]).replace(" >= ", r" $\geq$ ")
            block.text(r"{\small " + tt(text) + ": " + which + "}")
            lay.rows(block, None, "", sympy.Ge(lhs, rhs, evaluate=False))

    return _fit(width, d, [], [vs, "a", "b"], build)


def _scaled(c: sympy.Expr, expr: sympy.Expr) -> sympy.Expr:
    """``c expr`` kept apart (SymPy would multiply ``c`` into a sum), ``c`` a
    rounded decimal: ``3.276 10^-15 (K N - 396.2 (K + N))``."""
    c = c if c.is_Integer else sympy.Float(c, 15)
    if c == 1 or expr == 1:
        return expr if c == 1 else c
    return sympy.Mul(c, expr, evaluate=False)


def breakeven_block(p: BreakEvenPieces, width: Any = r"\columnwidth", *,
                    digits: int | None = None, conditions: bool = True) -> str:
    r"""A break-even result as a block that fits ``width``.

    Numeric: each root (rounded) with the regime there, and where low
    precision is faster, slower or equal.  Symbolic: ``v^{*}`` (a ratio
    ``b / a`` of named sums when the hardware is symbolic, one fraction with
    a monic denominator when it is bound), the sign rule and, with
    ``conditions``, the regime conditions, each under its words.
    """
    d = DIGITS if digits is None else digits
    return _symbolic(p, width, d, conditions) if p.symbolic else _numeric(p, width, d)


# -- the writers of pieces ---------------------------------------------------------
def _write_expression(p: ExpressionPieces, *, width: Any, digits: int | None = None) -> str:
    return expression_block(p.expr, width, digits=digits, model=p.model, lhs=p.lhs,
                            symbol_names=p.symbol_names)


def _write_breakdown(p: BreakdownPieces, *, width: Any, digits: int | None = None) -> str:
    return breakdown_block(p, width, digits=digits)


def _write_breakeven(p: BreakEvenPieces, *, width: Any, digits: int | None = None,
                     conditions: bool = True) -> str:
    return breakeven_block(p, width, digits=digits, conditions=conditions)


renderers.register(ExpressionPieces, _write_expression, block=True)
renderers.register(BreakdownPieces, _write_breakdown, block=True)
renderers.register(BreakEvenPieces, _write_breakeven, block=True)
