"""A layer model as JavaScript, printed by SymPy's JavaScript printer.

``model_function`` turns an unbound ``Linear`` into the source of one
JavaScript function of ``(M, K, N, p)`` (``p``: the hardware values by
symbol name) that returns every term's regime pieces, every term's time (the
``Max`` of its pieces) and the seven outputs, each printed from the same
SymPy expressions ``evaluate`` compiles: the pieces of ``model.terms``
(common subexpressions shared once, ``sympy.cse``) and the totals of
``model.expressions`` with each term's time standing for itself.  Nothing in
it is written by hand, so a browser computes what ``evaluate`` does.

>>> import roofline_sym as rs
>>> code = model_function(rs.linear("tensorwise"))
>>> code.splitlines()[0]
'function (M, K, N, p) {'
>>> "Math.max(" in code, "speedup: " in code
(True, True)
"""

from __future__ import annotations

import re
from typing import Any

import sympy
from sympy.printing.jscode import JavascriptCodePrinter

from .. import symbols as S
from ..errors import InputError
from ..model.layer import Linear
from ..model.outputs import OUTPUTS
from ..model.term_time import roofline_max

__all__ = ["model_function", "parameter_names"]

# a hardware symbol becomes a JavaScript constant of its own name
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# the names the function itself declares: a hardware symbol must not shadow them
_RESERVED = {"M", "K", "N", "p", "T", "Math", "return", "const", "function"}


def parameter_names(model: Linear) -> list[str]:
    """The hardware symbols ``model``'s terms use, by name, sorted: what ``p``
    must hold.

    >>> import roofline_sym as rs
    >>> parameter_names(rs.linear("tensorwise"))[:3]
    ['BW', 'P_bf16', 'P_fp8']
    """
    names = sorted(str(s) for s in model.free_hardware_symbols)
    for name in names:
        if not _IDENTIFIER.match(name) or name in _RESERVED:
            raise InputError(f"hardware symbol {name!r} cannot be a JavaScript name")
    return names


def _print(printer: JavascriptCodePrinter, expr: Any) -> str:
    code: str = printer.doprint(expr)
    if "Not supported" in code or "\n" in code:  # the printer's own marks of failure
        raise InputError(f"no JavaScript for {expr}")
    return code


def model_function(model: Linear) -> str:
    """The JavaScript source of ``model``'s terms and outputs (an unbound
    model: its hardware symbols are read from ``p``).

    The function returns ``{pieces, times, outputs}``: per term (in
    ``model.terms``' order) the values of its regime pieces, its time, and
    the seven ``OUTPUTS`` by name.
    """
    if model.hardware is not None:
        raise InputError("model_function takes an unbound model: hardware values are "
                         "its arguments")
    if set(S.SHAPE_SYMBOLS) - {S.M, S.K, S.N}:
        raise InputError("the shape symbols are M, K and N")
    printer = JavascriptCodePrinter({"strict": False})
    pieces = [e for t in model.terms for _, e in t.pieces]
    names = sympy.numbered_symbols("c")  # c0, c1, ...: no hardware symbol is named so
    shared, reduced = sympy.cse(pieces, symbols=names, order="none")
    lines = ["function (M, K, N, p) {"]
    lines += [f"  const {n} = p.{n};" for n in parameter_names(model)]
    lines += [f"  const {s} = {_print(printer, e)};" for s, e in shared]
    rows, times, start = [], [], 0
    for t in model.terms:
        own = reduced[start:start + len(t.pieces)]
        start += len(t.pieces)
        rows.append("[" + ", ".join(_print(printer, e) for e in own) + "]")
        times.append(_print(printer, roofline_max(own)))
    lines.append("  const pieces = [\n    " + ",\n    ".join(rows) + "];")
    lines.append("  const T = [\n    " + ",\n    ".join(times) + "];")
    # each total with every term's time as T[i]: the model's own sums and ratio
    T = sympy.IndexedBase("T", shape=(len(model.terms),))
    by_time = {t.time: T[i] for i, t in enumerate(model.terms)}
    outputs = [f"{name}: {_print(printer, model.expressions[name].xreplace(by_time))}"
               for name in OUTPUTS]
    lines.append("  return {pieces: pieces, times: T, outputs: {\n    "
                 + ",\n    ".join(outputs) + "}};")
    lines.append("}")
    return "\n".join(lines)
