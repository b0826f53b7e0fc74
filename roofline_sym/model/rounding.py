"""Block counts' ``ceiling`` and ``floor``, built without SymPy's search.

SymPy evaluates ``ceiling(M/32)`` by asking its assumptions whether
``M <= 32``, ``32 < M <= 64``, ... (some milliseconds for each new argument)
to return the same ``ceiling(M/32)``.  For an argument that is a positive
non-integer rational times positive symbols (a block count of shapes: ``M/32``,
``M*K/128``), those questions have no answer, and the integer part has
nothing to extract: the result is the function of the argument as it is,
built here directly.  Any other argument (a number, a sum) is evaluated as
SymPy does.

>>> from roofline_sym.symbols import M
>>> ceiling(M / 32) == sympy.ceiling(M / 32), ceiling(sympy.Integer(8192) / 32)
(True, 256)
>>> xreplace(ceiling(M / 32) + M, {M: sympy.Symbol("x", positive=True)})
x + ceiling(x/32)
"""

from __future__ import annotations

from typing import Any, Mapping

import sympy

__all__ = ["ceiling", "floor", "xreplace"]


def _plain_block_ratio(arg: sympy.Basic) -> bool:
    """``arg`` is ``c * s1 * s2 ...``: ``c`` a positive rational, not an integer,
    and every ``s`` a positive (so finite) symbol."""
    if not arg.is_Mul:
        return False
    c, *rest = arg.args  # a Mul keeps its number first
    return (bool(rest) and c.is_Rational and c.is_positive and not c.is_Integer
            and all(s.is_Symbol and s.is_positive is True and s.is_finite is True for s in rest))


def rounded(kind: type[sympy.floor] | type[sympy.ceiling], arg: Any) -> sympy.Expr:
    """``kind(arg)``: what SymPy returns, without asking for a plain block ratio."""
    arg = sympy.sympify(arg, strict=True)  # numbers and expressions, never text
    if _plain_block_ratio(arg):
        return kind(arg, evaluate=False)
    return kind(arg)


def ceiling(arg: Any) -> sympy.Expr:
    """``sympy.ceiling(arg)`` (a partial block still needs its scale)."""
    return rounded(sympy.ceiling, arg)


def floor(arg: Any) -> sympy.Expr:
    """``sympy.floor(arg)``."""
    return rounded(sympy.floor, arg)


def xreplace(expr: sympy.Basic, rule: Mapping[sympy.Basic, Any],
             memo: dict[sympy.Basic, sympy.Basic] | None = None) -> sympy.Basic:
    """``expr.xreplace(rule)``, with every ``floor``/``ceiling`` it rebuilds built
    by ``rounded``; ``memo`` keeps what subexpressions became (pass one dict
    to several calls with the same ``rule``: expressions sharing parts)."""
    return _xreplace(expr, rule, {} if memo is None else memo)[0]


def _xreplace(expr: sympy.Basic, rule: Mapping[sympy.Basic, Any],
              memo: dict[sympy.Basic, sympy.Basic]) -> tuple[Any, bool]:
    if expr in rule:
        return rule[expr], True
    if not rule or not expr.args:
        return expr, False
    if expr in memo:
        new = memo[expr]
        return new, new is not expr
    args, changed = [], False
    for a in expr.args:
        new, hit = _xreplace(a, rule, memo) if isinstance(a, sympy.Basic) else (a, False)
        args.append(new)
        changed |= hit
    if not changed:
        out = expr
    elif isinstance(expr, (sympy.floor, sympy.ceiling)):
        out = rounded(type(expr), args[0])
    else:
        out = expr.func(*args)
    memo[expr] = out
    return out, changed
