r"""Widths of LaTeX math, and blocks of rows that fit a given width.

A paper's column is narrow (``\columnwidth`` of a two-column article is
229.5 pt), so a formula meant for one has to be broken into lines before
LaTeX sees it.  ``measure`` estimates the width LaTeX gives a piece of
display math (Computer Modern at 10 pt, the glyph widths of its fonts,
TeX's spacing between atoms), erring wide; ``width_pt`` reads a width such
as ``\columnwidth``, ``0.9\textwidth`` or ``8.4cm``; ``Block`` collects the
rows and text lines of an ``align*`` environment.

>>> round(measure(r"\frac{2 K M N}{P_{\mathrm{fp8}} \eta_{\mathrm{fp8}}}"))  # pdflatex: 36.5
40
>>> width_pt(r"\columnwidth"), width_pt("0.5\\textwidth"), width_pt("3in")
(229.5, 172.5, 216.81)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from ..errors import InputError

__all__ = ["measure", "width_pt", "LENGTHS", "Block"]

# \columnwidth: article, twocolumn, 10 pt (the narrowest of the common two-column
# classes: IEEEtran 252 pt, acmart 241 pt); \textwidth: article, one column, 10 pt
LENGTHS = {"columnwidth": 229.5, "linewidth": 229.5, "textwidth": 345.0, "hsize": 345.0}
_UNITS = {"pt": 1.0, "bp": 72.27 / 72, "in": 72.27, "cm": 72.27 / 2.54, "mm": 72.27 / 25.4,
          "em": 10.0, "ex": 4.31, "pc": 12.0}

# glyph widths at 10 pt (cmmi10 math italic, cmr10 roman), from the TFM files
_ITALIC = dict(zip(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    (5.29, 4.29, 4.33, 5.2, 4.66, 5.97, 5.13, 5.76, 3.45, 4.69, 5.52, 3.18, 8.78, 6.0, 4.85,
     5.03, 4.82, 4.79, 4.69, 3.61, 5.72, 5.21, 7.43, 5.72, 5.26, 5.09, 7.5, 8.09, 7.86, 8.56,
     7.96, 7.82, 7.86, 9.12, 5.18, 6.51, 9.21, 6.81, 10.79, 9.12, 7.91, 7.81, 7.91, 7.67, 6.71,
     7.23, 7.92, 8.06, 10.83, 9.07, 8.03, 7.54)))
_ROMAN = dict(zip(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    (5.0, 5.56, 4.44, 5.56, 4.44, 3.83, 5.14, 5.56, 2.78, 3.06, 5.28, 2.78, 8.33, 5.56, 5.0,
     5.56, 5.28, 3.92, 3.94, 3.89, 5.56, 5.42, 7.36, 5.28, 5.42, 4.44, 7.5, 7.08, 7.22, 7.64,
     6.81, 6.53, 7.85, 7.5, 3.61, 5.14, 7.78, 6.25, 9.17, 7.5, 7.78, 6.81, 7.78, 7.36, 5.56,
     7.22, 7.5, 7.64, 10.42, 7.5, 7.75, 6.11)))
_OTHER = {**{d: 5.0 for d in "0123456789"}, "(": 3.89, ")": 3.89, "[": 2.78, "]": 2.78,
          ",": 2.78, ".": 2.78, ";": 2.78, ":": 2.78, "/": 5.0, "|": 2.78, "!": 2.78,
          "'": 2.81, "*": 5.0, "-": 7.78, "+": 7.78, "=": 7.78, "<": 7.78, ">": 7.78,
          " ": 3.33, "_": 5.0, "{": 5.0, "}": 5.0, "&": 7.78, "%": 8.33, "#": 8.33, "$": 5.0,
          "~": 5.0, "^": 5.0, "@": 7.78, "?": 4.72, '"': 5.0}
_COMMANDS = {"eta": 5.32, "alpha": 6.43, "beta": 6.18, "gamma": 5.73, "delta": 4.82,
             "tau": 5.5, "mu": 6.03, "sigma": 6.07, "pi": 6.06, "infty": 10.0, "ell": 4.2,
             "max": 18.62, "min": 18.62, "log": 15.0, "exp": 17.2, "sum": 14.5,
             "quad": 10.0, "qquad": 20.0, ",": 1.67, ":": 2.22, ";": 2.78, " ": 3.33,
             "!": 0.0, "_": 5.0, "%": 8.33, "{": 5.0, "}": 5.0, "&": 7.78, "#": 8.33,
             "textbackslash": 5.0, "textasciitilde": 5.0, "textasciicircum": 5.0,
             "cdots": 13.4, "ldots": 13.4, "dots": 13.4, "prime": 2.75, "mid": 2.78,
             "lbrace": 5.0, "rbrace": 5.0, "lvert": 2.78, "rvert": 2.78}
_BINARY = {"+", "-", "cdot", "times", "pm", "mp"}
_RELATION = {"=", "<", ">", "geq", "leq", "approx", "iff", "ne", "neq", "le", "ge", "to",
             "equiv", "sim", "Rightarrow", "Leftrightarrow", "lt", "gt"}
_RELATION_WIDTH = {"iff": 23.89, "Rightarrow": 10.0, "Leftrightarrow": 10.0, "to": 10.0}
_DELIMS = {"bigl": 4.6, "bigr": 4.6, "Bigl": 5.9, "Bigr": 5.9, "biggl": 7.4, "biggr": 7.4,
           "Biggl": 8.0, "Biggr": 8.0, "big": 4.6, "Big": 5.9, "bigg": 7.4, "Bigg": 8.0}
_SCALE = (1.0, 1.0, 0.82, 0.72)   # display, text, script, scriptscript (cm7/cm5 are wider)
_MED, _THICK, _THIN = 2.22, 2.78, 1.67
_FRAC_PAD = 2.4                   # \nulldelimiterspace on each side
_ROMAN_GROUPS = {"mathrm", "text", "operatorname", "textrm", "mathsf", "texttt", "textit"}
# unknown commands count as wide glyphs (the estimate errs wide)
_UNKNOWN = 9.0


def width_pt(spec: str | float) -> float:
    r"""A LaTeX width in points: ``\columnwidth`` (229.5 pt, two-column article),
    ``\textwidth`` (345 pt), a multiple (``0.9\columnwidth``), a dimension
    (``8.4cm``, ``240pt``, ``3.3in``) or a number of points."""
    if isinstance(spec, (int, float)):
        if spec <= 0:
            raise InputError(f"width must be positive, got {spec!r}")
        return float(spec)
    text = str(spec).strip().replace(" ", "")
    m = re.fullmatch(r"(\d*\.?\d*)\\([A-Za-z]+)", text)
    if m and m.group(2) in LENGTHS:
        factor = float(m.group(1)) if m.group(1) else 1.0
        return round(factor * LENGTHS[m.group(2)], 2)
    m = re.fullmatch(r"(\d*\.?\d+)(pt|bp|in|cm|mm|em|ex|pc)", text)
    if m and float(m.group(1)) > 0:
        return round(float(m.group(1)) * _UNITS[m.group(2)], 2)
    raise InputError(f"width {spec!r}: write e.g. \\columnwidth, 0.9\\textwidth, 8.4cm or "
                     f"240pt (known lengths: {', '.join(LENGTHS)})")


# -- measuring ---------------------------------------------------------------------
_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|[{}^_&]|\s+|.", re.S)


def _tokens(tex: str) -> list[str]:
    """Commands, characters and braces; a run of spaces as one " " (it counts in text)."""
    return [" " if t.isspace() else t for t in _TOKEN.findall(tex)]


def _group(tokens: list[str], i: int) -> tuple[list[str], int]:
    """The tokens of the argument starting at ``i`` (a braced group or one token)."""
    if i >= len(tokens):
        return [], i
    if tokens[i] != "{":
        return [tokens[i]], i + 1
    depth, j = 0, i
    while j < len(tokens):
        depth += {"{": 1, "}": -1}.get(tokens[j], 0)
        if depth == 0:
            return tokens[i + 1:j], j + 1
        j += 1
    return tokens[i + 1:], len(tokens)


def _text_width(tokens: list[str], style: int) -> float:
    """Width of roman text (``\\mathrm``, ``\\text``): glyphs, no math spacing."""
    total = 0.0
    for t in tokens:
        if t in "{}":
            continue
        if t == "$":
            continue  # inline math in text: counted as text (errs wide)
        if t.startswith("\\"):
            name = t[1:]
            total += _COMMANDS.get(name, _OTHER.get(name, _UNKNOWN))
            continue
        total += _ROMAN.get(t, _OTHER.get(t, _UNKNOWN))
    return total * _SCALE[style]


def _atoms(tokens: list[str], style: int) -> list[tuple[str, float]]:
    """(class, width) of each atom: ord, bin, rel, punct, op, open, close."""
    out: list[tuple[str, float]] = []
    i, scale = 0, _SCALE[style]
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if t == " ":
            continue  # spaces do not count in math
        if t in ("{",):
            inner, i = _group(tokens, i - 1)
            out.append(("ord", _width(inner, style)))
        elif t in ("^", "_"):
            # sub/superscripts attach to the previous atom: the wider of the two
            arg, i = _group(tokens, i)
            small = 2 if style <= 1 else 3
            w = _width(arg, small)
            if i < len(tokens) and tokens[i] in ("^", "_") and tokens[i] != t:
                other, i = _group(tokens, i + 1)
                w = max(w, _width(other, small))
            cls, base = out.pop() if out else ("ord", 0.0)
            out.append((cls, base + w + 0.5))
        elif t.startswith("\\"):
            i = _command(t[1:], tokens, i, style, out)
        elif t in "+-":
            out.append(("bin", 7.78 * scale))
        elif t in "=<>":
            out.append(("rel", 7.78 * scale))
        elif t in ",;":
            out.append(("punct", 2.78 * scale))
        elif t in "([":
            out.append(("open", _OTHER[t] * scale))
        elif t in ")]":
            out.append(("close", _OTHER[t] * scale))
        elif t == "&" or t == "}":
            continue
        else:
            out.append(("ord", _ITALIC.get(t, _OTHER.get(t, _UNKNOWN)) * scale))
    return out


def _command(name: str, tokens: list[str], i: int, style: int,
             out: list[tuple[str, float]]) -> int:
    """The atom of the command ``\\name`` (its arguments from ``tokens[i:]``)
    appended to ``out``; the index after what it read."""
    scale = _SCALE[style]
    if name in ("frac", "dfrac", "tfrac"):
        num, i = _group(tokens, i)
        den, i = _group(tokens, i)
        inside = 1 if name == "dfrac" else (2 if name == "tfrac" else
                                              {0: 1, 1: 2, 2: 3, 3: 3}[style])
        out.append(("ord", max(_width(num, inside), _width(den, inside)) + _FRAC_PAD))
    elif name in _ROMAN_GROUPS:
        arg, i = _group(tokens, i)
        out.append(("ord", _text_width(arg, style)))
    elif name == "sqrt":
        arg, i = _group(tokens, i)
        out.append(("ord", _width(arg, style) + 8.4 * scale))
    elif name in ("left", "right"):
        delim = tokens[i] if i < len(tokens) else "."
        i += 1
        # \left( of a fraction is wider than a plain parenthesis
        wide = any(tok in ("\\frac", "\\dfrac") for tok in tokens)
        w = 0.0 if delim == "." else (7.0 if wide else 4.5) * scale
        out.append(("open" if name == "left" else "close", w))
    elif name in _DELIMS:
        i += 1  # the delimiter itself
        out.append(("open" if name.endswith("l") else "close", _DELIMS[name] * scale))
    elif name in _BINARY:
        out.append(("bin", (2.78 if name == "cdot" else 7.78) * scale))
    elif name in _RELATION:
        out.append(("rel", _RELATION_WIDTH.get(name, 7.78) * scale))
    elif name in ("max", "min", "log", "exp", "sum"):
        out.append(("op", _COMMANDS[name] * scale))
    elif name in ("mathrel", "mathbin", "mathop", "mathord", "displaystyle",
                  "textstyle", "scriptstyle", "small", "footnotesize", "phantom",
                  "hphantom", "vphantom", "mathstrut", "limits", "nolimits"):
        if name in ("phantom", "hphantom"):
            arg, i = _group(tokens, i)
            out.append(("ord", _width(arg, style)))
        elif name == "vphantom":
            _, i = _group(tokens, i)
        elif name in ("mathrel", "mathbin"):
            arg, i = _group(tokens, i)
            out.append(("rel" if name == "mathrel" else "bin", _width(arg, style)))
    elif name in ("hspace", "hspace*"):
        arg, i = _group(tokens, i)
        out.append(("ord", width_pt("".join(arg)) if arg else 0.0))
    elif name in ("quad", "qquad", ",", ":", ";", " ", "!"):
        out.append(("space", _COMMANDS[name]))
    else:
        out.append(("ord", _COMMANDS.get(name, _UNKNOWN) * scale))
    return i


def _width(tokens: list[str], style: int) -> float:
    atoms = _atoms(tokens, style)
    total = sum(w for _, w in atoms)
    if style >= 2:
        return total
    prev = None
    for k, (cls, _) in enumerate(atoms):
        nxt = atoms[k + 1][0] if k + 1 < len(atoms) else None
        if cls == "bin" and prev in ("ord", "close", "op") and nxt not in (None, "rel", "punct",
                                                                           "close"):
            total += 2 * _MED
        elif cls == "rel":
            total += (_THICK if prev not in (None, "open") else 0) + (_THICK if nxt else 0)
        elif cls == "punct" and nxt:
            total += _THIN
        elif cls == "op" and nxt in ("ord", "op"):
            total += _THIN
        if cls != "space":
            prev = cls
    return total


def measure(tex: str, style: str = "display") -> float:
    """Estimated width in points of ``tex`` typeset as math (display or text
    style), Computer Modern at 10 pt; it errs on the wide side."""
    return _width(_tokens(tex), 0 if style == "display" else 1)


# -- blocks ------------------------------------------------------------------------
@dataclass
class Block:
    r"""The rows of an ``align*`` environment: math rows (``lhs &= rhs``) and
    lines of text between them (``\intertext``)."""

    rows: list[str] = field(default_factory=list)
    _text: list[str] = field(default_factory=list)

    def text(self, words: str) -> None:
        """A line of text (LaTeX, e.g. with ``$...$``) before the next row."""
        self._text.append(words)

    def row(self, tex: str) -> None:
        if self._text:
            tex = r"\intertext{" + r" \endgraf\noindent ".join(self._text) + "} " + tex
            self._text = []
        self.rows.append(tex)

    def latex(self) -> str:
        r"""The ``align*`` environment; text left over goes after the last row."""
        rows = list(self.rows)
        if self._text:
            rows.append(r"\intertext{" + r" \endgraf\noindent ".join(self._text) + "}")
        return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"
