"""What a break-even result is, whichever way it was solved.

``BreakEven`` is the common base of ``NumericBreakEven`` (every value fixed
but the variable: exact roots, the faster set, regimes per interval) and
``SymbolicBreakEven`` (a closed form in one regime, with the conditions
under which that regime holds).  ``BreakEvenPieces`` is what either offers
the output layer for its LaTeX (``latex()`` asks the assembler the output
layer registered, so this layer never imports the printer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import sympy

from .. import renderers
from .. import symbols as S
from ..errors import InputError
from ..model.layer import Linear
from ..model.term import RegimeSummary
from .inputs import fixed_values

__all__ = ["BreakEven", "BreakEvenPieces", "Roots"]


class Roots(list[sympy.Expr]):
    """Break-even points: a list of exact values that prints as decimals.

    The items stay exact (a ``Rational``, an algebraic number, or an
    expression in the symbols left free); ``repr`` shows each number to 6
    significant digits, since a 22-digit rational says less than its
    decimal.  ``.exact`` prints them exactly, ``.values`` gives floats.

    >>> r = Roots([sympy.Rational(1207706239961, 1104106880)])
    >>> r
    [1093.83]
    >>> r.exact
    [1207706239961/1104106880]
    >>> [round(v, 4) for v in r.values], r == [sympy.Rational(1207706239961, 1104106880)]
    ([1093.8309], True)
    """

    @property
    def exact(self) -> list[sympy.Expr]:
        """The same values as a plain list, printed exactly."""
        return list(self)

    @property
    def values(self) -> list[float]:
        """The values as floats (a value with free symbols cannot be one)."""
        free = [v for v in self if v.free_symbols]
        if free:
            raise InputError(f"{free[0]} is symbolic: specialise with .subs(...) first, or "
                             "read .exact")
        return [float(v) for v in self]

    def __repr__(self) -> str:
        return "[" + ", ".join(str(v) if v.free_symbols else f"{float(v):.6g}"
                               for v in self) + "]"

    __str__ = __repr__


@dataclass(frozen=True)
class BreakEvenPieces:
    """The parts of a break-even result's LaTeX, as numbers, expressions and words.

    ``fixed``: the shape values solved at, equal ones together.  Numeric:
    ``roots`` (value, regime there in words), ``steps`` (where a block-scale
    step changes the outcome without equal times) and ``outcomes``, the
    positive axis as ``(low, high, "faster" | "slower" | "equal")``.  Symbolic:
    ``closed_form``, ``slope``, ``regime`` (words) and ``conditions``, one
    ``(lhs, rhs, what, detail, which)`` per regime condition ``lhs >= rhs``.
    """

    variable: sympy.Symbol
    fixed: tuple[tuple[sympy.Expr, tuple[sympy.Symbol, ...]], ...]
    aligned: bool
    lowp_label: str
    symbolic: bool
    roots: tuple[tuple[float, str], ...] = ()
    steps: tuple[float, ...] = ()
    outcomes: tuple[tuple[float, float, str], ...] = ()
    closed_form: sympy.Expr | None = None
    slope: sympy.Expr | None = None
    regime: str = ""
    conditions: tuple[tuple[sympy.Expr, sympy.Expr, str, str, str], ...] = ()


@dataclass(repr=False)
class BreakEven:
    """Where low precision breaks even with bf16 along one variable.

    ``roots``: break-even points (exact where possible); ``faster``: a SymPy
    set of the variable where low precision is strictly faster; ``regimes``:
    per interval, the regime of every term; ``subs`` specialises.  See
    ``NumericBreakEven`` and ``SymbolicBreakEven``.
    """

    variable: sympy.Symbol
    model: Linear
    substitution: dict[sympy.Symbol, sympy.Expr]
    method: str
    aligned: bool = False

    symbolic: ClassVar[bool] = False

    @property
    def roots(self) -> Roots:
        raise NotImplementedError

    @property
    def faster(self) -> sympy.Set:
        raise NotImplementedError

    @property
    def regimes(self) -> list[tuple[sympy.Interval, dict[str, str]]]:
        raise NotImplementedError

    def subs(self, values: Mapping[str | sympy.Symbol, Any]) -> "BreakEven":
        raise NotImplementedError

    def _specialised(self, values: Mapping[str | sympy.Symbol, Any]) -> tuple[
            dict[sympy.Symbol, sympy.Expr], dict[sympy.Symbol, sympy.Expr], set[sympy.Symbol]]:
        """(the values as exact numbers by symbol, the new substitution, the
        symbols still free besides the variable)."""
        free = set().union(*(v.free_symbols for v in self.substitution.values())) | (
            self.model.free_hardware_symbols | set(S.SHAPE_SYMBOLS)) - set(self.substitution)
        mapping = fixed_values(values, free - {self.variable}, "this answer")
        substitution = {k: v.xreplace(mapping) for k, v in self.substitution.items()}
        substitution.update({k: v for k, v in mapping.items() if k not in substitution})
        return mapping, substitution, free - set(mapping) - {self.variable}

    # -- display ---------------------------------------------------------------
    def fixed_shapes(self) -> dict[sympy.Expr, list[sympy.Symbol]]:
        """The shape values solved at, equal ones together, in M, K, N order
        (``{x: [M, K, N]}`` along the cube)."""
        groups: dict[sympy.Expr, list[sympy.Symbol]] = {}
        for sym in S.SHAPE_SYMBOLS:
            if sym in self.substitution:
                groups.setdefault(self.substitution[sym], []).append(sym)
        return groups

    def _side_label(self, side: str) -> str:
        return "bf16" if side == "baseline" else self.model.lowp_label

    def _regime_words(self, regimes: Mapping[str, str]) -> str:
        return RegimeSummary.of(regimes).words(self._side_label)

    @staticmethod
    def _regime_text(regimes: Mapping[str, str]) -> str:
        return RegimeSummary.of(regimes).text()

    def _pieces(self, **parts: Any) -> BreakEvenPieces:
        return BreakEvenPieces(
            self.variable, tuple((v, tuple(ks)) for v, ks in self.fixed_shapes().items()),
            self.aligned, self.model.lowp_label, self.symbolic, **parts)

    def _head(self) -> list[str]:
        """The first lines of ``str()``: what was solved, and how."""
        head = f"break-even of {self.model!r} in {self.variable}"
        if self.substitution:
            head += " with " + ", ".join(f"{k} = {val}" for k, val in self.substitution.items())
        lines = [head, f"  method: {self.method}"]
        if self.aligned:
            lines.append("  block-scale floors solved on block-aligned shapes")
        return lines

    def __repr__(self) -> str:
        return str(self)

    def latex(self, conditions: bool = True, *, width: Any = None,
              digits: int | None = None) -> str:
        """LaTeX for display math (inside ``\\[ \\]``); amsmath only.

        Symbolic: closed form, the sign condition and (``conditions=True``) the
        regime validity conditions as ``cases``; numeric: the roots with their
        regimes and the faster / slower intervals (``output.breakeven_latex``).
        With ``width`` (``r"\\columnwidth"``): a complete ``align*`` block that
        fits it, numbers to ``digits`` significant digits (default 4).
        """
        return renderers.render(self._latex_pieces_(), conditions=conditions, width=width,
                                digits=digits)

    def _latex_pieces_(self) -> BreakEvenPieces:
        raise NotImplementedError

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"
