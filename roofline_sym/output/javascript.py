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
from typing import Any, Sequence

import sympy
from sympy.printing.jscode import JavascriptCodePrinter

from .. import symbols as S
from ..errors import InputError
from ..model.layer import Linear
from ..model.outputs import OUTPUTS
from ..model.term_time import roofline_max
from ..steps.model import Step

__all__ = ["model_function", "step_function", "parameter_names"]

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
        if not _IDENTIFIER.match(name) or name in _RESERVED or re.fullmatch(r"c\d+", name):
            raise InputError(f"hardware symbol {name!r} cannot be a JavaScript name")
    return names


def _print(printer: JavascriptCodePrinter, expr: Any) -> str:
    code: str = printer.doprint(expr)
    if "Not supported" in code or "\n" in code:  # the printer's own marks of failure
        raise InputError(f"no JavaScript for {expr}")
    return code


def _term_lines(printer: JavascriptCodePrinter, names: Sequence[str],
                terms: Sequence[Sequence[sympy.Expr]]) -> list[str]:
    """The function's first lines: the hardware values read from ``p``, the
    subexpressions the terms' pieces share, each term's ``pieces`` and its
    time ``T[i]``, the ``Max`` of its pieces."""
    pieces = [e for t in terms for e in t]
    # c0, c1, ...: no hardware symbol is named so (parameter_names)
    shared, reduced = sympy.cse(pieces, symbols=sympy.numbered_symbols("c"), order="none")
    lines = [f"  const {n} = p.{n};" for n in names]
    lines += [f"  const {s} = {_print(printer, e)};" for s, e in shared]
    rows, times, start = [], [], 0
    for t in terms:
        own = reduced[start:start + len(t)]
        start += len(t)
        rows.append("[" + ", ".join(_print(printer, e) for e in own) + "]")
        times.append(_print(printer, roofline_max(own)))
    lines.append("  const pieces = [\n    " + ",\n    ".join(rows) + "];")
    lines.append("  const T = [\n    " + ",\n    ".join(times) + "];")
    return lines


def _returned(printer: JavascriptCodePrinter, outputs: Sequence[tuple[str, sympy.Expr]]
              ) -> str:
    return ("  return {pieces: pieces, times: T, outputs: {\n    "
            + ",\n    ".join(f"{name}: {_print(printer, e)}" for name, e in outputs) + "}};")


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
    printer = JavascriptCodePrinter({"strict": False})
    lines = ["function (M, K, N, p) {"]
    lines += _term_lines(printer, parameter_names(model), [[e for _, e in t.pieces]
                                                            for t in model.terms])
    # each total with every term's time as T[i]: the model's own sums and ratio
    T = sympy.IndexedBase("T", shape=(len(model.terms),))
    by_time = {t.time: T[i] for i, t in enumerate(model.terms)}
    lines.append(_returned(printer, [(name, model.expressions[name].xreplace(by_time))
                                     for name in OUTPUTS]))
    lines.append("}")
    return "\n".join(lines)


def step_function(step: Step) -> str:
    """The JavaScript source of an unbound ``step``'s terms and outputs, a
    function of ``(S, B, p)``: sequence length, local batch and hardware values.

    Each term's weighted parts are its terms here (``w Max(a, b)`` is
    ``Max(w a, w b)``), then the shared values (overlap, tokens, ideal time);
    the outputs are the step's layout (``step.layout``: bubble, exposed
    communication, tokens/s, MFU, each group's total) over the groups' sums.

    >>> from roofline_sym.steps.composition import step
    >>> code = step_function(step("llama3-8b", "tensorwise", gpus=8))
    >>> code.splitlines()[0], "speedup: " in code, "mfu_lowp: " in code
    ('function (S, B, p) {', True, True)
    """
    if step.hardware is not None:
        raise InputError("step_function takes an unbound step: hardware values are its "
                         "arguments")
    keys = [((t.side, t.group), list(part)) for t in step.terms for part in t.weighted_parts()]
    keys += [(("shared", k), [("compute", sympy.sympify(e))]) for k, e in step.shared.items()]
    names = sorted(str(s) for s in step.free_hardware_symbols)
    for name in names:
        if not _IDENTIFIER.match(name) or name in _RESERVED | {"S", "B"} or re.fullmatch(
                r"g\d+", name):
            raise InputError(f"hardware symbol {name!r} cannot be a JavaScript name")
    printer = JavascriptCodePrinter({"strict": False})
    lines = ["function (S, B, p) {"]
    lines += _term_lines(printer, names, [[e for _, e in pieces] for _, pieces in keys])
    # each group's total, g0, g1, ...: the sum of its terms' times (none: 0)
    T = sympy.IndexedBase("T", shape=(len(keys),))
    totals = {}
    for j, (key, symbol) in enumerate(step.layout.groups):
        totals[symbol] = sympy.Symbol(f"g{j}")
        total = sympy.Add(*(T[i] for i, (k, _) in enumerate(keys) if k == key))
        lines.append(f"  const g{j} = {_print(printer, total)};")
    lines.append(_returned(printer, [(name, sympy.sympify(e).xreplace(totals))
                                     for name, e in step.layout.outputs]))
    lines.append("}")
    return "\n".join(lines)
