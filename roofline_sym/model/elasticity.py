r"""Which number of the GPU decides the verdict: elasticities of the speedup.

The elasticity of the speedup ``S`` to a hardware number ``x`` is
``d ln S / d ln x = x (T_bf16' / T_bf16 - T_lowp' / T_lowp)`` (primes:
``d/dx``): the percent change of the speedup per percent change of ``x``.
It is derived symbolically from the written-out times (``.doit()``: the
terms' ``Max``; at a tie between two regimes the derivative is the mean of
both sides, ``Heaviside(0) = 1/2``), then evaluated at shapes.

A faster bf16 GEMM lowers the speedup (``P_bf16``: -1 where the bf16
GEMMs are compute-bound); a low-precision rate raises it by the share of the
low-precision time it prices (``P_fp8`` and ``eta_fp8`` alike); a number
neither side depends on at that shape has 0.

>>> import roofline_sym as rs
>>> e = sensitivity(rs.linear("tensorwise", preset="torchao").on("NVIDIA H100"),
...                 at=(8192, 8192, 8192))
>>> {str(x): round(v, 2) for x, v in e.items()}
{'BW': 0.22, 'P_bf16': -1.0, 'P_fp8': 0.78, 'eta_bf16': -1.0, 'eta_fp8': 0.78, 'eta_mem': 0.22, 't_launch': -0.0}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..devices import Hardware
from ..errors import InputError
from ..validate import InputTypeError, positive_array, show
from .layer import Linear, with_hardware

__all__ = ["sensitivity"]


def _model_and_values(model: Any, hardware: Hardware | str | None
                      ) -> tuple[Linear, dict[sympy.Symbol, sympy.Expr] | None]:
    """The unbound model and the hardware values (None: symbolic hardware)."""
    model = with_hardware(model, hardware, "sensitivity")
    if model.hardware is None:
        return model, None
    unbound = model.unbound
    if unbound is None:
        raise InputError(f"{model!r} keeps no unbound model: build it with rs.linear()")
    return unbound, model.hardware.values_for(unbound.free_hardware_symbols)


def _elasticities(model: Linear) -> dict[sympy.Symbol, sympy.Expr]:
    """``{x: x d ln S / dx}`` for every hardware symbol of an unbound model, by name."""
    base, lowp, slopes = _parts(model)
    return {x: x * (db / base - dl / lowp) for x, (db, dl) in slopes.items()}


def _parts(model: Linear) -> tuple[sympy.Expr, sympy.Expr,
                                   dict[sympy.Symbol, tuple[sympy.Expr, sympy.Expr]]]:
    """The written-out times ``T_bf16``, ``T_lowp`` (``.doit()``) and, per hardware
    symbol ``x``, ``(dT_bf16/dx, dT_lowp/dx)``: sums over the terms that hold ``x``."""
    base, lowp = model.baseline_time.doit(), model.lowp_time.doit()
    terms = {side: [t.expr for t in model.terms if t.side == side]
             for side in ("baseline", "lowp")}
    slopes = {}
    for x in sorted(model.free_hardware_symbols, key=str):
        db, dl = (sympy.Add(*(e.diff(x) for e in terms[side] if e.has(x)))
                  for side in ("baseline", "lowp"))
        slopes[x] = (db, dl)
    return base, lowp, slopes


def sensitivity(model: Linear, at: Sequence[Any] | None = None,
                hardware: Hardware | str | None = None) -> dict[sympy.Symbol, Any]:
    """The elasticity ``d ln speedup / d ln x`` of every hardware number ``x`` of
    ``model``, keyed by its symbol (``P_fp8``, ``BW``, ``t_launch``, ...), in
    order of name.

    ``model``: a bound model, or an unbound one with ``hardware=`` (a GPU
    name or entry).  ``at``: the shape ``(M, K, N)``, positive numbers
    (floats out, exact up to the last rounding) or arrays that broadcast
    (arrays out).  Without ``at``: the symbolic elasticities, expressions
    in M, K, N (and in the hardware symbols when no hardware is given).
    A whole step (``rs.step``) takes ``at=(seq_len, local_batch)``.

    >>> import roofline_sym as rs
    >>> e = sensitivity(rs.linear("rowwise"), hardware="h100", at=(8192, 8192, 8192))
    >>> sorted(e, key=lambda x: (-round(abs(e[x]), 9), str(x)))[:2]
    [P_bf16, eta_bf16]
    """
    if not isinstance(model, Linear) and hasattr(model, "_sensitivity_"):
        # a whole step (rs.step): at=(seq_len, local_batch), by central differences
        target = model if hardware is None else model.on(hardware)
        found: dict[sympy.Symbol, Any] = target._sensitivity_(at)
        return found
    if at is None:
        unbound, values = _model_and_values(model, hardware)
        exprs = _elasticities(unbound)
        return exprs if values is None else {x: e.xreplace(values) for x, e in exprs.items()}
    if isinstance(at, (str, bytes, Mapping)) or not isinstance(at, Sequence) or len(at) != 3:
        raise InputTypeError(f"sensitivity: at= takes a shape (M, K, N), not {show(at)}")
    shape = [positive_array(v, f"sensitivity: {d}") for d, v in zip("MKN", at)]
    unbound, values = _model_and_values(model, hardware)
    if values is None:
        raise InputError("sensitivity at a shape needs hardware numbers: bind the model "
                         "(model.on(gpu)) or pass hardware=")
    base, lowp, slopes = _parts(unbound)
    parts = [e.xreplace(values) for e in (base, lowp, *(d for pair in slopes.values()
                                                          for d in pair))]
    size = np.broadcast_shapes(*(a.shape for a in shape))
    nums: list[Any]
    if not size:  # one shape: exactly (shapes and hardware numbers are rationals)
        point = {d: _exact(float(a)) for d, a in zip(S.SHAPE_SYMBOLS, shape)}
        nums = [float(e.xreplace(point)) for e in parts]
    else:  # arrays: compiled once, evaluated for all shapes together
        fn = sympy.lambdify(list(S.SHAPE_SYMBOLS), parts, modules="numpy", cse=True)
        with np.errstate(all="ignore"):
            nums = [np.broadcast_to(np.asarray(v, dtype=np.float64), size)
                    for v in fn(*shape)]
    b, lp, rest = nums[0], nums[1], nums[2:]
    return {x: float(values[x]) * (rest[2 * k] / b - rest[2 * k + 1] / lp)
            for k, x in enumerate(slopes)}


def _exact(v: float) -> sympy.Rational:
    return sympy.Integer(int(v)) if v.is_integer() else sympy.Rational(v)
