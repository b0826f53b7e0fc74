r"""A term's time as a named, unevaluated SymPy expression.

``TermTime`` is what a model's totals are sums of: it prints as its name
(``lowp.cast.input.amax``; in LaTeX ``t^{\mathrm{amax}}_{X}``: what runs,
on which tensor, ``X`` the input, ``W`` the weight, ``dY`` the output's
gradient; a GEMM shows its dtype and the tensor it computes, ``t^{\mathrm{fp8}}_{dX}``),
keeps its regime pieces as arguments and is their roofline ``Max`` on
``.doit()`` (and under ``expand()``).  ``subs``, ``xreplace``, ``diff``,
``evalf`` and ``lambdify`` work as on the written-out form: code printers
print the definition, and substituting numbers for every symbol gives a
number.

>>> from roofline_sym import symbols as S
>>> from roofline_sym.symbols import M, K
>>> t = TermTime.of("lowp.cast.input.amax", [("memory", 2 * M * K / S.mem_bw()),
...                                          ("launch", S.launch_overhead())])
>>> t, t.doit()
(lowp.cast.input.amax, Max(t_launch, 2*K*M/BW))
>>> sympy.latex(t)
't^{\\mathrm{amax}}_{X}'
>>> t.xreplace({M: 1, K: 1, S.mem_bw(): 1, S.launch_overhead(): 3})
3
"""

from __future__ import annotations

from typing import Any, Iterable

import sympy
from sympy.core.logic import fuzzy_and, fuzzy_or
from sympy.core.symbol import Str
from sympy.printing.pretty.stringpict import prettyForm

from ..errors import InputError
from ..validate import expression

__all__ = ["TermTime", "TENSOR_TEX", "roofline_max", "tex_text"]

_REGIMES = ("compute", "memory", "launch")  # term.REGIMES (term.py imports this module)

# the print methods of SymPy's code printers (lambdify's numpy, math, mpmath,
# jax, torch, ...; C and the others): each prints a term as its definition
_CODE_PRINTMETHODS = (
    "_numpycode", "_scipycode", "_cupycode", "_jaxcode", "_torchcode", "_tensorflowcode",
    "_pythoncode", "_mpmathcode", "_cmathcode", "_lambdacode", "_numexprcode",
    "_ccode", "_cxxcode", "_fcode", "_rust_code", "_javascript", "_julia", "_octave",
    "_rcode", "_glsl", "_maple", "_mcode")


# a linear layer's tensors as papers write them (Y = X W; the backward GEMMs
# produce dX and dW from dY), the subscripts of the terms' LaTeX names
TENSOR_TEX = {"input": "X", "weight": "W", "output": "Y", "grad_output": "dY",
              "grad_input": "dX", "grad_weight": "dW"}


def tex_text(text: str) -> str:
    r"""Text for ``\mathrm{}`` or ``\text{}``, LaTeX's special characters escaped.

    >>> tex_text("amax_final & 5%")
    'amax\\_final \\& 5\\%'
    """
    special = {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
               "\\": r"\textbackslash{}"}
    return "".join(special.get(ch, "\\" + ch if ch in "_&%#${}" else ch) for ch in str(text))


def _rm(text: str) -> str:
    return rf"\mathrm{{{tex_text(text)}}}"


class TermTime(sympy.Expr):  # type: ignore[misc]  # SymPy is untyped: Expr is Any
    """The time of one named term: the ``Max`` of its regime pieces, unevaluated.

    Arguments (SymPy objects, so substitution rebuilds it): the term's dotted
    name, its ``label`` (a GEMM's dtype shown above ``t``; ``""``: the
    term's kind), the regime of each piece, then the pieces.  Build one with
    ``TermTime.of``.
    """

    is_commutative = True

    def __new__(cls, name: Any, label: Any, regimes: Any, *pieces: Any,
                evaluate: bool = True) -> sympy.Expr:
        name, label = Str(str(name)), Str(str(label))
        regimes = sympy.Tuple(*(Str(str(r)) for r in regimes))
        pieces = tuple(expression(p, f"term {name}: a piece") for p in pieces)
        if not pieces or len(pieces) != len(regimes) or not all(
                r.name in _REGIMES for r in regimes):
            raise InputError(f"term {name}: one regime ({', '.join(_REGIMES)}) per piece, "
                             f"not {tuple(r.name for r in regimes)} for {len(pieces)} pieces")
        if evaluate and all(p.is_number for p in pieces):  # substituted: the number
            return sympy.Max(*pieces)
        obj: sympy.Expr = super().__new__(cls, name, label, regimes, *pieces)
        return obj

    @classmethod
    def of(cls, name: str, pieces: Iterable[tuple[str, sympy.Expr]],
           label: str | None = None) -> sympy.Expr:
        """The term ``name`` (``side.kind[.role[.kernel]]``) with ``(regime, expr)``
        ``pieces``; ``label``: what a GEMM's name shows above ``t`` (its side's dtype).
        It stays a name even when its pieces are numbers (a bound model's
        launch-only kernel); substituting into it gives the number."""
        pieces = tuple(pieces)
        return cls(name, label or "", [r for r, _ in pieces], *(e for _, e in pieces),
                   evaluate=False)

    # -- what it is
    @property
    def name(self) -> str:
        """The dotted name: ``lowp.cast.input.amax``."""
        text: str = self.args[0].name
        return text

    @property
    def order(self) -> tuple[int, int, int, str]:
        """Where the term comes in a sum without a model's order: baseline first,
        GEMMs first, tensors as ``TENSOR_TEX`` lists them, then the kernel's name."""
        side, kind, *detail = self.name.split(".")
        role, kernel = (detail + ["", ""])[:2]
        tensors = list(TENSOR_TEX)
        return (side != "baseline", kind != "gemm",
                tensors.index(role) if role in tensors else len(tensors), kernel)

    @property
    def label(self) -> str:
        text: str = self.args[1].name
        return text

    @property
    def pieces(self) -> tuple[tuple[str, sympy.Expr], ...]:
        """``((regime, expression), ...)``, as the term's ``Term`` has them."""
        return tuple((r.name, e) for r, e in zip(self.args[2], self.args[3:]))

    @property
    def definition(self) -> sympy.Expr:
        """The roofline time written out: the ``Max`` of the pieces (``doit()``)."""
        return roofline_max(self.args[3:])

    def doit(self, **hints: Any) -> sympy.Expr:
        if not hints.get("deep", True):
            return self.definition
        return roofline_max([e.doit(**hints) for e in self.args[3:]])

    # -- substitution: a term whose pieces are numbers (a bound model's launch-only
    # kernel) keeps its name until something is substituted; then it is its value
    def _value(self) -> sympy.Expr | None:
        pieces = self.args[3:]
        if not all(p.is_number for p in pieces):
            return None
        value: sympy.Expr = sympy.Max(*pieces)
        return value

    def _eval_subs(self, old: sympy.Basic, new: sympy.Basic) -> sympy.Expr | None:
        return self._value()

    def _xreplace(self, rule: Any) -> tuple[sympy.Basic, bool]:
        out, changed = super()._xreplace(rule)
        if not changed and rule and self not in rule:
            value = self._value()
            if value is not None:
                return value, True
        return out, changed

    # -- calculus and numbers: those of the definition
    def _eval_expand_basic(self, **hints: Any) -> sympy.Expr:
        # expand() writes a term out (its definition), then expands that
        return self.definition

    def _eval_derivative(self, s: sympy.Symbol) -> sympy.Expr:
        return self.definition.diff(s)

    def _eval_evalf(self, prec: int) -> sympy.Expr:
        return self.definition._eval_evalf(prec)

    def _eval_is_extended_real(self) -> bool | None:
        real: bool | None = fuzzy_and(e.is_extended_real for e in self.args[3:])
        return real

    def _eval_is_positive(self) -> bool | None:
        positive: bool | None = fuzzy_or(e.is_positive for e in self.args[3:])  # a Max
        return positive

    # -- printing: by name
    def _sympystr(self, printer: Any) -> str:
        return self.name

    def _pretty(self, printer: Any) -> Any:
        return prettyForm(self.name)

    def _latex(self, printer: Any = None, exp: str | None = None) -> str:
        # t^{what is done}_{on which tensor}: t^{fp8}_{dX}, t^{amax}_{W}
        _, kind, *detail = self.name.split(".")
        role, kernel = (detail + ["", ""])[:2]
        top = (self.label or kind) if kind == "gemm" else (kernel or kind)
        tex = rf"t^{{{_rm(top)}}}"
        if role:
            tex += rf"_{{{TENSOR_TEX.get(role) or _rm(role)}}}"
        return rf"\left({tex}\right)^{{{exp}}}" if exp is not None else tex

    def _print_definition(self, printer: Any, *args: Any, **kwargs: Any) -> str:
        text: str = printer._print(self.definition, *args, **kwargs)
        return text


def roofline_max(exprs: Any) -> sympy.Expr:
    """The ``Max`` of a term's pieces, unevaluated (one piece: itself)."""
    # evaluate=False: pieces never dominate one another for all shapes, and
    # SymPy's pairwise comparison of symbolic arguments is slow
    out: sympy.Expr = exprs[0] if len(exprs) == 1 else sympy.Max(*exprs, evaluate=False)
    return out


for _method in _CODE_PRINTMETHODS:
    setattr(TermTime, _method, TermTime._print_definition)
