"""Break-even shapes: where low precision starts (or stops) paying, and why.

``breakeven(model, ...)`` takes what the user fixes (``inputs``), sets up
the problem (``problem``) and solves it: in full, interval by interval,
when only the variable is left (``piecewise``), else in closed form in one
regime (``closed_form``).  Both results are ``BreakEven`` (``result``).

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
>>> be = rs.breakeven(m, solve_for="M", K=8192, N=8192)
>>> [round(float(r), 1) for r in be.roots]
[1093.8]
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import symbols as S
from ..devices import hardware as lookup_hardware
from ..errors import InputError
from ..model.layer import Linear
from ..validate import InputTypeError, show
from .closed_form import SymbolicBreakEven, solve
from .inputs import SHAPES, fixed_values, ray, variable
from .piecewise import NumericBreakEven
from .problem import Problem
from .result import BreakEven

__all__ = ["breakeven", "BreakEven", "NumericBreakEven", "SymbolicBreakEven"]


def breakeven(model: Linear, solve_for: Any = None, along: Any = None, *,
              hardware: Any = None, regime: Mapping[str, str] | None = None,
              **values: Any) -> BreakEven:
    """Solve ``baseline_time == lowp_time`` along one variable.

    ``solve_for``: ``"M"``, ``"K"``, ``"N"`` or a hardware symbol name
    (``"BW"``, ``"P_fp8"``, ...); or ``along="cube"`` (M = K = N = x) or a
    ray mapping such as ``{rs.M: rs.x, rs.K: rs.x, rs.N: 4 * rs.x}``.
    ``values``: fixed shape or hardware values (omitted ones stay symbolic).
    ``hardware``: bind every hardware value but the solved one.
    ``regime``: solve symbolically in this regime (``{"lowp.cast": "memory",
    "gemm": "compute"}``; keys are term names or dotted prefixes).
    A whole step (``rs.step``, bound or with ``hardware=``) is solved
    numerically along ``S`` or ``B``, the other given (``local_batch=1``).

    >>> import roofline_sym as rs
    >>> be = rs.breakeven(rs.linear("dynamic", fuse=True, preset="seed"), solve_for="M")
    >>> be.symbolic
    True
    """
    if not isinstance(model, Linear) and hasattr(model, "_breakeven_"):
        # a whole step (rs.step): solved numerically along S or B, bound to a GPU
        if along is not None or regime is not None:
            raise InputError("a step's break-even is numeric, along S or B: no along= or "
                             "regime=")
        target = model if hardware is None else model.on(hardware)
        found: BreakEven = target._breakeven_("S" if solve_for is None else solve_for, **values)
        return found
    if not isinstance(model, Linear):
        raise InputTypeError(f"breakeven needs a model from rs.linear() or rs.step(), not "
                             f"{type(model).__name__} {show(model)}")
    if along is not None and solve_for is not None:
        raise InputError("give either solve_for or along, not both")
    if hardware is not None and model.hardware is not None:
        raise InputError(f"the model is already bound to {model.hardware.name}: pass the "
                         "unbound model with hardware=..., or no hardware=")
    usable = set(S.SHAPE_SYMBOLS) | model.free_hardware_symbols
    for key in values:  # a misspelt name (k for K) is named as one, bound model or not
        if isinstance(key, str):
            variable(key)
    if model.hardware is not None:
        bound = [k for k in values if k not in SHAPES]
        if bound:
            raise InputError(f"the model is bound to {model.hardware.name}, so {bound} cannot "
                             "be set: pass the unbound model to vary hardware values")
    substitution = fixed_values(values, usable, "the model")
    if along is not None:
        var = S.x
        on_ray = ray(along)
        clash = set(on_ray) & set(substitution)
        if clash:
            raise InputError(f"{sorted(map(str, clash))} both on the ray and fixed")
        substitution.update(on_ray)
    else:
        var = variable("M" if solve_for is None else solve_for)
        if var in substitution:
            raise InputError(f"{var} is both solved for and fixed")
    if hardware is not None:
        hw = lookup_hardware(hardware, dataset=model.options.dataset)
        needed = model.free_hardware_symbols - {var} - set(substitution)
        substitution.update(hw.values_for(needed))
    return solve(Problem.of(model, var, substitution), regime)
