r"""Tables of break-even results (recipe x GPU), booktabs LaTeX or Markdown.

``breakeven_rows`` solves every recipe on every GPU; ``breakeven_table``
writes the rows, in LaTeX (``\usepackage{booktabs}``) or Markdown.
"""

from __future__ import annotations

import math
import re

import numpy as np
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ..devices import Hardware, hardware
from ..errors import InputError
from ..model.layer import Linear, linear
from ..model.presets import describe, describe_models, options
from ..model.recipes import SEED_SCALINGS, list_recipes, recipe as get_recipe
from ..model.term import RegimeSummary
from ..solve.piecewise import NumericBreakEven
from ..solve.result import BreakEven
from ..solve.solver import breakeven
from ..validate import InputTypeError, choice, items, show
from .layout import measure, width_pt
from .printer import tt, equalities, latex, star

__all__ = ["Row", "breakeven_table", "breakeven_rows", "overview", "tabular_width", "LAYOUTS"]


class Row(NamedTuple):
    """One table row: labels and a result (``None``: the recipe cannot run there)."""

    recipe: str
    gpu: str
    result: Any


def _rows(results: Any) -> list[Row]:
    if isinstance(results, BreakEven):
        results = [results]
    if isinstance(results, (str, bytes)) or not isinstance(results, (Iterable, Mapping)):
        raise InputTypeError("breakeven_table takes BreakEven results, (recipe, gpu, result) "
                             f"rows or a mapping {{(recipe, gpu): result}}; got {show(results)}")
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
                raise InputTypeError(f"row {show(item)}: the third item must be a BreakEven or "
                                     "None")
            if gpu is None and be is not None and be.model.hardware is not None:
                gpu = be.model.hardware.name
            rows.append(Row(str(recipe), "" if gpu is None else str(gpu), be))
        else:
            raise InputTypeError("breakeven_table takes BreakEven results, (recipe, gpu, "
                                 "result) rows or a mapping {(recipe, gpu): result}; got "
                                 f"{show(item)}")
    for r in rows:
        if r.result is not None and r.result.symbolic:
            raise InputError(f"row {r.recipe}/{r.gpu}: a symbolic result has no numeric "
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


def as_numeric(be: BreakEven) -> NumericBreakEven:
    """``be`` as the numeric result it is (a bound model, every shape but one fixed)."""
    if not isinstance(be, NumericBreakEven):
        raise InputTypeError(f"expected a numeric break-even result, not {type(be).__name__}")
    return be


def _var_text(be: NumericBreakEven, fmt: str) -> str:
    return f"${latex(be.variable)}$" if fmt == "latex" else str(be.variable)


def _faster_text(be: NumericBreakEven, fmt: str) -> str:
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


def _short_regime(be: NumericBreakEven, value: float) -> str:
    """``compute / memory+launch``: regimes of the GEMMs / of the casts at a point."""
    varying = {t.id for t in be.model.terms if len(t.pieces) > 1}
    return RegimeSummary.of(be.regime_at(value)).short(lambda id: id in varying)


def _fixed_text(be: NumericBreakEven, fmt: str) -> str:
    """The shape the result was solved at: ``K = 4096, N = 4096`` or ``M = K = N = x``."""
    groups = be.fixed_shapes()
    if not groups:
        return ""
    if fmt == "latex":
        return "$" + equalities(groups.items()) + "$"
    return ", ".join(" = ".join(str(k) for k in ks) + f" = {v}" for v, ks in groups.items())


def _escape_md(text: str) -> str:
    return text.replace("|", r"\|")


def breakeven_table(results: Any, fmt: str = "latex", *, layout: str = "auto",
                    width: Any = r"\columnwidth") -> str:
    r"""A table of break-even results (recipe x GPU), booktabs LaTeX or Markdown.

    ``results``: ``BreakEven`` objects (recipe and GPU read off their model),
    ``(recipe, gpu, result)`` rows (``result`` may be ``None``: "n/a"), or a
    mapping ``{(recipe, gpu): result}``; ``breakeven_rows`` makes them.
    ``layout="long"``: one line per result with the break-even point, the
    regime there (GEMMs / casts), where low precision is faster ("always",
    "never") and the shape it was solved at.  ``layout="grid"``: recipes down,
    GPUs across, each cell the break-even point (or "always" / "never").
    ``layout="column"``: the long layout narrowed for a paper's column:
    regimes abbreviated (C, M, L), the shape solved at and "faster" (where it
    is simply above the root) moved under the table, long names broken at
    ``_`` and spaces.  ``layout="auto"`` (the default): for LaTeX the long
    layout where it fits ``width`` (``\columnwidth``: a two-column article's
    column; ``\textwidth``, ``8.4cm``, points), else the column layout; for
    Markdown the long layout.  Widths are estimated as ``rs.latex`` estimates
    them (``output.layout``); for a page-wide float (``table*``) pass
    ``width=r"\textwidth"``.  Under the table, the options the models were
    made with (preset, fusion, dataset).  LaTeX needs ``\usepackage{booktabs}``.

    >>> import roofline_sym as rs
    >>> be = rs.breakeven(rs.linear("tensorwise", preset="torchao").on("NVIDIA H100"),
    ...                   along="cube")
    >>> print(breakeven_table([be], fmt="markdown"))
    | recipe | GPU | x* | regime at x* (GEMMs / casts) | faster | solved at |
    |:---|:---|---:|:---|:---|:---|
    | tensorwise | NVIDIA H100 | 2563 | compute / memory | x > 2563 | M = K = N = x |
    <BLANKLINE>
    *preset torchao, casts not fused, dataset torchao, workload linear*
    """
    choice(fmt, tuple(_WRITERS), "table format (fmt)")
    choice(layout, LAYOUTS, "table layout")
    target = width_pt(width)
    rows = _rows(results)
    if not rows:
        raise InputError("no results to tabulate")
    if layout == "auto":
        if fmt == "markdown":
            layout = "long"
        else:
            long = breakeven_table(rows, fmt, layout="long")
            return long if tabular_width(long) <= target else _column_table(rows, target)
    if layout == "column":
        if fmt == "markdown":
            raise InputError("layout 'column' is for LaTeX; Markdown tables take 'long' "
                             "or 'grid'")
        return _column_table(rows, target)
    esc = tt if fmt == "latex" else _escape_md
    solved = [r.result for r in rows if r.result is not None]
    variables = {be.variable for be in solved}
    if len(variables) == 1:
        only = next(iter(solved))
        var_star = f"${star(latex(only.variable))}$" if fmt == "latex" else f"{only.variable}*"
    else:
        var_star = "break-even"
    cells = _long_cells if layout == "long" else _grid_cells
    header, body, align = cells(rows, var_star, esc, fmt)
    note = describe_models([be.model for be in solved]) if solved else ""
    return _WRITERS[fmt](header, body, align, note)


_NA = "n/a"


def _root_text(be: NumericBreakEven, fmt: str) -> str:
    vals = [float(v) for v in be.root_values]
    return ", ".join(_num(v, fmt) for v in vals) if vals else "none"


def _long_cells(rows: list[Row], var_star: str, esc: Callable[[str], str], fmt: str
                ) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, body and alignment of the long layout: a line per result."""
    header = ["recipe", "GPU", var_star, f"regime at {var_star} (GEMMs / casts)", "faster",
              "solved at"]
    body = []
    for r in rows:
        be = r.result
        if be is None:
            body.append([esc(r.recipe), esc(r.gpu), _NA, _NA, _NA, ""])
            continue
        regimes = "; ".join(_short_regime(be, float(v)) for v in be.root_values) or "-"
        body.append([esc(r.recipe), esc(r.gpu), _root_text(be, fmt), regimes,
                     _faster_text(be, fmt), _fixed_text(be, fmt)])
    return header, body, ["l", "l", "r", "l", "l", "l"]


def _grid_cells(rows: list[Row], var_star: str, esc: Callable[[str], str], fmt: str
                ) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, body and alignment of the grid layout: recipes down, GPUs across."""
    recipes = list(dict.fromkeys(r.recipe for r in rows))
    gpus = list(dict.fromkeys(r.gpu for r in rows))
    cell = {(r.recipe, r.gpu): r.result for r in rows}
    header = [f"recipe ({var_star})"] + [esc(g) for g in gpus]
    body = []
    for rec in recipes:
        line = [esc(rec)]
        for g in gpus:
            be = cell.get((rec, g))
            if be is None:
                line.append(_NA)
                continue
            spans = be.faster_intervals()
            if len(be.root_values) == 1 and len(spans) == 1 and spans[0][1] == math.inf:
                line.append(_root_text(be, fmt))  # the usual case: faster above the root
            elif not len(be.root_values):
                line.append("always" if spans == [(0.0, math.inf)] else "never")
            else:
                line.append(_faster_text(be, fmt))
        body.append(line)
    return header, body, ["l"] + ["r"] * len(gpus)


def _markdown(header: list[str], body: list[list[str]], align: list[str], note: str) -> str:
    """A Markdown table, the options it was made with in italics under it."""
    marks = {"l": ":---", "r": "---:"}
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    out += ["| " + " | ".join(line) + " |" for line in body]
    out += ["", f"*{_escape_md(note)}*"] if note else []
    return "\n".join(out)


def _booktabs(header: list[str], body: list[list[str]], align: list[str], note: str) -> str:
    """A booktabs tabular, the options it was made with two a line under the rule."""
    return _tabular(header, body, align, note.split(", ") if note else [], pairs=True)


# the one writer of each format the break-even tables are written in
_WRITERS: dict[str, Callable[[list[str], list[list[str]], list[str], str], str]] = {
    "latex": _booktabs, "markdown": _markdown}


LAYOUTS = ("auto", "long", "grid", "column")
# \tabcolsep of the standard classes: the space on each side of a column
_TABCOLSEP = 6.0
_NOTE_SCALE = 0.8  # \footnotesize (8 pt) against the 10 pt body


def _tabular(header: list[str], body: list[list[str]], align: list[str], note: list[str],
             *, pairs: bool = False, edges: bool = False) -> str:
    """A booktabs tabular; ``note``: lines (or, with ``pairs``, options joined two
    a line) in small type under the rule, which do not widen a narrow table;
    ``edges``: no space outside the first and last columns."""
    cols = "".join(align)
    out = [rf"\begin{{tabular}}{{{'@{}' + cols + '@{}' if edges else cols}}}", r"\toprule",
           " & ".join(header) + r" \\", r"\midrule"]
    out += [" & ".join(line) + r" \\" for line in body]
    out.append(r"\bottomrule")
    if pairs:
        note = [", ".join(note[i:i + 2]) for i in range(0, len(note), 2)]
    if note:
        lines = r" \\ ".join(tt(line) if pairs else line for line in note)
        out.append(rf"\multicolumn{{{len(align)}}}{{@{{}}l}}{{\footnotesize"
                   rf"\begin{{tabular}}[t]{{@{{}}l@{{}}}}{lines}\end{{tabular}}}}")
    out.append(r"\end{tabular}")
    return "\n".join(out)


def _text_pt(text: str) -> float:
    return measure(rf"\text{{{text}}}", "text")


def _stacked(lines: list[str]) -> str:
    """A cell of several lines (a tabular in the cell: no package needed)."""
    return lines[0] if len(lines) == 1 else (
        r"\begin{tabular}[t]{@{}l@{}}" + r" \\ ".join(lines) + r"\end{tabular}")


def _broken(text: str, sep: str, budget: float) -> list[str]:
    """``text`` (LaTeX) in lines of at most ``budget`` points where it can break
    after ``sep`` (kept at the end of a line); a part wider than ``budget`` is a
    line of its own."""
    parts = text.split(sep)
    lines = [parts[0]]
    for part in parts[1:]:
        if _text_pt(lines[-1] + sep + part) <= budget:
            lines[-1] += sep + part
        else:
            lines[-1] += sep.rstrip()
            lines.append(part)
    return lines


def tabular_width(tex: str) -> float:
    r"""Estimated width in points of a ``breakeven_table`` tabular (Computer
    Modern, 10 pt, as ``output.layout`` measures math): each column's widest
    cell plus ``\tabcolsep`` on both sides; a stacked cell counts its widest
    line, the note under the rule its widest line in small type."""
    lines = tex.splitlines()
    spec = re.match(r"\\begin\{tabular\}\{(.*)\}$", lines[0])
    if not spec:
        raise InputError("not a breakeven_table tabular")
    edges = spec.group(1).startswith("@{}")
    ncols = len(spec.group(1).replace("@{}", ""))
    widths = [0.0] * ncols
    note = 0.0
    for line in lines[1:]:
        if not line.endswith(r" \\") and not line.startswith(r"\multicolumn"):
            continue
        if line.startswith(r"\multicolumn"):
            inner = re.search(r"\[t\]\{@\{\}l@\{\}\}(.*)\\end\{tabular\}\}$", line)
            if inner:
                note = max(_text_pt(x) for x in inner.group(1).split(r" \\ ")) * _NOTE_SCALE
            continue
        cells = line[:-3].split(" & ")
        for i, cell in enumerate(cells[:ncols]):
            stack = re.fullmatch(r"\\begin\{tabular\}\[t\]\{@\{\}l@\{\}\}(.*)"
                                 r"\\end\{tabular\}", cell)
            parts = stack.group(1).split(r" \\ ") if stack else [cell]
            widths[i] = max(widths[i], *(_text_pt(p) for p in parts))
    pad = 2 * _TABCOLSEP * ncols - (2 * _TABCOLSEP if edges else 0)
    return max(sum(widths) + pad, note)


def _abbreviated(regime: str) -> str:
    """``compute / memory+launch`` -> ``C / M+L``."""
    for word, letter in (("compute", "C"), ("memory", "M"), ("launch", "L")):
        regime = regime.replace(word, letter)
    return regime


def _column_table(rows: list[Row], target: float) -> str:
    """The long layout narrowed for a paper's column (``layout="column"``): names
    are broken into lines only as far as it takes to fit ``target`` points."""
    for recipe_pt, gpu_pt in ((math.inf, math.inf), (62.0, math.inf), (62.0, 44.0)):
        tex = _column_tabular(rows, recipe_pt, gpu_pt)
        if tabular_width(tex) <= target:
            break
    return tex


def _column_tabular(rows: list[Row], recipe_pt: float, gpu_pt: float) -> str:
    solved = [r.result for r in rows if r.result is not None]
    variables = {be.variable for be in solved}
    var = f"${star(latex(next(iter(variables))))}$" if len(variables) == 1 else "break-even"
    fixed = {_fixed_text(be, "latex") for be in solved}
    usual = all(_faster_text(be, "latex") == f"{_var_text(be, 'latex')} $>$ "
                f"{_num(float(be.root_values[0]), 'latex')}"
                for be in solved if len(be.root_values) == 1)
    header = ["recipe", "GPU", var, "regime"]
    if not usual:
        header.append("faster")
    if len(fixed) > 1:
        header.append("solved at")
    body = []
    for r in rows:
        line = [_stacked(_broken(tt(r.recipe), r"\_", recipe_pt)),
                _stacked(_broken(tt(r.gpu), " ", gpu_pt))]
        be = r.result
        if be is None:
            line += ["n/a"] * (len(header) - 2)
        else:
            vals = [float(v) for v in be.root_values]
            line.append(", ".join(_num(v, "latex") for v in vals) if vals else "none")
            line.append("; ".join(_abbreviated(_short_regime(be, v)) for v in vals) or "-")
            if not usual:
                line.append(_faster_text(be, "latex"))
            if len(fixed) > 1:
                line.append(_fixed_text(be, "latex"))
        body.append(line)
    align = ["l", "l", "r", "l"] + ["l"] * (len(header) - 4)
    note = []
    if len(fixed) == 1 and next(iter(fixed)):
        note.append(f"solved at {next(iter(fixed))}")
    if usual and solved:
        note.append(f"low precision faster above {var}")
    note.append("regime at the root: GEMMs / casts,")
    note.append("C compute-, M memory-, L launch-bound")
    options_text = describe_models([be.model for be in solved]).split(", ") if solved else []
    note += [tt(", ".join(options_text[i:i + 2])) for i in range(0, len(options_text), 2)]
    return _tabular(header, body, align, note, edges=True)


def breakeven_rows(recipes: Iterable[str], gpus: Iterable[str], *, mode: str = "training",
                   fuse: bool | None = None, preset: str = "default", along: Any = "cube",
                   **solve: Any) -> list[Row]:
    """Solve every recipe on every GPU: rows for ``breakeven_table``.

    ``fuse`` (None: the preset's) and ``preset`` as in ``linear``.
    A recipe a GPU cannot run (no fp4 peak, ...) gives a row with ``None``.
    ``solve``: passed to ``rs.breakeven`` (``solve_for="M", K=..., N=...``
    replaces the default ``along="cube"``).

    >>> rows = breakeven_rows(["tensorwise"], ["h100-sxm"])
    >>> rows[0].recipe, rows[0].gpu, round(float(rows[0].result.root_values[0]))
    ('tensorwise', 'H100 SXM', 3467)
    """
    if "solve_for" in solve:
        along = None
    gpus = items(gpus, "gpus", (str, Hardware))
    rows = []
    for name in items(recipes, "recipes", str):
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


def _span(lo_hi: tuple[float, float]) -> str:
    """``3262-9040``; ``>=6513`` where the pessimistic edge never reaches 1."""
    lo, hi = lo_hi
    if not np.isfinite(lo):
        return "-"
    return f"{lo:.0f}-{hi:.0f}" if np.isfinite(hi) else f">={lo:.0f}"


def overview(hw: Hardware, cubes: Iterable[int] = (1024, 2048, 4096, 8192, 16384),
             fixed_kn: int = 8192, *, preset: str = "default", fuse: bool | None = None,
             band: Callable[[Linear], tuple[float, float]] | None = None,
             band_label: str = "") -> str:
    """Every training recipe on ``hw``, as text: the break-even cube ``x*`` and
    ``M*`` at ``K = N = fixed_kn`` with the low-precision side's regime at each,
    and the speedup at each cube.  ``preset`` and ``fuse`` (None: the
    preset's) as in ``linear``; the first line states them.  ``band``: a
    bound model's range of the break-even cube (low, high), shown after
    ``x*`` (``band_label`` says what it is).

    >>> print(overview(hardware("h100"), cubes=[4096]).splitlines()[4])
    tensorwise                           3467  gemm C3  cast M7 L3        1037  gemm C3  cast M7 L3        1.19
    """
    cubes = list(cubes)
    x = np.array(cubes, dtype=float)
    opts = options(preset)
    fuse = opts.fuse if fuse is None else fuse
    wide = 13 if band is not None else 0
    lines = [f"roofline_sym: {hw.name}, training; {describe(preset, fuse, opts, hw.dataset)}",
             "",
             f"{'':<34}{'break-even cube x*':<{33 + wide}}{f'M* at K=N={fixed_kn}':<33}"
             "speedup at M=K=N=",
             f"{'recipe':<34}{'x*':>7}{'range' if wide else '':>{wide}}  {'regime at x*':<24}"
             f"{'M*':>7}  {'regime at M*':<24}" + "".join(f"{c:>7}" for c in cubes)]
    skipped = []
    for name in list_recipes("training", opts.recipe_table):
        # checked on the recipe: a model that will not run is not built
        if get_recipe(name, "training", opts.recipe_table,
                      opts.torch_compile_limitations).unsupported_reason(hw):
            skipped.append(name)
            continue
        m = linear(name, mode="training", fuse=fuse, preset=preset)
        mb = m.on(hw)
        cube, cube_regime = as_numeric(breakeven(mb, along="cube")).headline()
        fixed, fixed_regime = as_numeric(
            breakeven(mb, solve_for="M", K=fixed_kn, N=fixed_kn)).headline()
        speedup = mb.evaluate(x, x, x, outputs=("speedup",))["speedup"]
        span = f"{_span(band(mb)):>13}" if band is not None else ""
        label = name + ("  [seed document only]" if name in SEED_SCALINGS else "")
        lines.append(f"{label:<34}{cube:>7}{span}  {cube_regime:<24}{fixed:>7}  "
                     f"{fixed_regime:<24}" + "".join(f"{s:>7.2f}" for s in speedup))
    lines += ["", "regime: terms of the low-precision side, C compute-, M memory-, L launch-bound"]
    if any(name in SEED_SCALINGS for name in list_recipes("training", opts.recipe_table)):
        lines.append(f"seed document only: {', '.join(SEED_SCALINGS)}, the seed document's fp8 "
                     "scalings (no torchao recipe runs them)")
    if band is not None and band_label:
        lines.append(band_label)
    if skipped:
        lines.append(f"not run on {hw.name} (no MX/FP4 block-scaled GEMMs): {', '.join(skipped)}")
    return "\n".join(lines)
