"""Calibration from speedup tables: fit hardware numbers to measured ratios.

A speedup is a ratio of two times, so it pins the hardware numbers only
relative to each other: fit the few the data can tell apart (the fp8 GEMM
rate against a fixed bf16 one, a kernel class's bandwidth, the fixed times)
and keep the rest at their sources.  GEMM kernel rows (absolute times of
one GEMM) join the same objective, so that a layer table cannot move a GEMM
rate or fixed time that GEMM-only data contradict.  The residual is
``log(predicted / measured)``; the fit is bounded least squares
(``scipy.optimize.least_squares``, the ``fit`` extra) in the logarithms of
the free numbers, each within its physical range.  The fitted entry cites,
for every number it changed, the rows it was fitted to.

>>> from roofline_sym.fidelity.published_tables.speedup_table import published
>>> t = published()
>>> rows = t.select((t.source_id == "ao-infer-b200-r5"))
>>> fit = fit_speedups(rows, "b200", ["eta_fp8", "t0_fp8_mx"])  # doctest: +SKIP
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Sequence

import numpy as np
import sympy

from ... import symbols as S
from ...devices import Hardware, hardware
from ...devices import implementations as impls
from ...devices.hardware_entry import fixed_time_prior
from ...errors import InputError
from ...model.formats import element
from ...model.gemm import Gemm
from ...model.layer import Linear
from ...model.term import Work, roofline_pieces
from .gemm_kernels import GemmRows
from .speedup_table import SpeedupTable, read
from .rows import predictable, unbound_row_model

__all__ = ["SpeedupFit", "FittedNumber", "SpeedupProblem", "fit_speedups", "gemm_times", "predict_rows",
           "errors", "BOUNDS", "implementation_values", "source_weights"]

# physical range of each kind of free number (the hardware entry's own ranges);
# "rate.<impl>.<family>" / "fixed.<impl>.<family>" / "cast.<impl>.<family>": an
# implementation profile's GEMM rate factor, GEMM fixed time, quantize fixed time
BOUNDS = {"eta": (0.01, 1.0), "kappa_accum": (0.05, 1.0), "kappa": (0.05, 1.5), "t0_": (1e-7, 1e-4),
          "t_launch": (1e-7, 1e-4), "rate.": (0.05, 1.5), "fixed.": (1e-7, 1e-4),
          "cast.": (1e-7, 1e-4)}
# each kind of implementation profile number ("<kind>.<impl>.<family>", not a
# hardware symbol): the Profile field it is written to, and the GPU's fixed-time
# class it starts at and is held near (None: a rate factor, starting at 1)
_PROFILE_KINDS: dict[str, tuple[str, str | None]] = {
    "rate": ("rate", None), "fixed": ("fixed_s", "bf16"), "cast": ("cast_fixed_s", "cast")}
# the names of implementation profile numbers start so
PROFILE_NUMBERS = tuple(f"{kind}." for kind in _PROFILE_KINDS)
# how much one kernel row weighs against one speedup row: a GEMM-only time pins its
# class's rate and fixed time directly, so a layer table cannot move them freely
KERNEL_WEIGHT = 2.0
# a robust loss: a source that disagrees with the rest (another kernel version, a
# power-capped GPU) pulls the numbers less than squares would let it; residuals
# are log errors, F_SCALE where the loss turns from quadratic to linear
LOSS, F_SCALE = "soft_l1", 0.1
# a free number whose column of the Jacobian is below this (in log units per log
# unit) is pinned by no row: it keeps its prior and is not fitted
PIN_THRESHOLD = 1e-3


def source_weights(source_id: Any) -> np.ndarray:
    """Per row, the weight of its residual: each source's squared weights sum
    to the same (a row's is ``rows / (sources x its source's rows)``, their
    mean 1), so a 100-row table counts as one witness, not as a hundred.

    A source is one setup (a library version, a timer, a GPU's power limit),
    and its rows share its errors; the calibration must serve the setups it
    has not seen, which is what leave-one-source-out scores.  The balance is
    exact where the loss is quadratic (weighted log errors within
    ``F_SCALE``); in its linear tail a source's pull grows as the square root
    of its rows.

    >>> source_weights(["a", "a", "a", "b"]) ** 2
    array([0.66666667, 0.66666667, 0.66666667, 2.        ])
    """
    ids = np.asarray(source_id, dtype=object).astype(str)
    if ids.size == 0:
        return np.ones(0)
    names, index, counts = np.unique(ids, return_inverse=True, return_counts=True)
    out: np.ndarray = np.sqrt(ids.size / (len(names) * counts[index]))
    return out


def _bounds(name: str) -> tuple[float, float]:
    for prefix, bounds in BOUNDS.items():
        if name.startswith(prefix):
            return bounds
    raise InputError(f"{name!r} cannot be fitted to speedups: fit efficiencies (eta_*), "
                     "scaling factors (kappa_*), fixed times (t0_*), t_launch or "
                     "implementation profiles (rate.<impl>.<family>, fixed.<impl>.<family>, "
                     "cast.<impl>.<family>)")


def _typical(name: str, values: dict[str, float]) -> float:
    """A starting point for a number the entry leaves unset."""
    if name.startswith("t0_") or _profile_class(name):
        return 4e-6
    return 1.0


@dataclass(frozen=True, eq=False)
class FittedNumber:
    """One fitted number: its ``value``, a 95% confidence interval from the
    fit's Jacobian (``low``, ``high``) and the rows that pin it (``pinned_by``:
    ``{source_id: rows}``); ``fitted`` False: no row pins it, kept at ``value``
    (its prior)."""

    name: str
    value: float
    low: float
    high: float
    pinned_by: dict[str, int]
    fitted: bool = True


@dataclass(frozen=True, eq=False)
class SpeedupFit:
    """A hardware entry fitted jointly to speedup rows and GEMM kernel rows:
    ``hardware`` (the fitted entry), ``values`` (the numbers the rows pinned,
    by name, implementation profiles as ``rate.<impl>.<family>``), ``numbers`` (each
    free number,
    with its interval and pinning rows), ``rows`` / ``kernels`` (what was
    fitted), ``predicted`` (fitted speedups), ``rms_log_error`` (speedup rows)."""

    hardware: Hardware
    values: dict[str, float]
    rows: SpeedupTable
    predicted: np.ndarray
    rms_log_error: float
    numbers: tuple[FittedNumber, ...] = ()
    kernels: GemmRows | None = None
    kernel_rms_log_error: float = math.nan

    def summary(self) -> str:
        """Every number: value, 95% interval, the rows that pin it (or that none does)."""
        n_k = 0 if self.kernels is None else len(self.kernels)
        lines = [f"{self.hardware.name}: {len(self.rows)} speedup rows (rms log error "
                 f"{self.rms_log_error:.3f}) and {n_k} GEMM kernel rows"
                 + (f" (rms log error {self.kernel_rms_log_error:.3f})" if n_k else "")]
        for x in self.numbers or tuple(FittedNumber(k, v, v, v, {}) for k, v in
                                       self.values.items()):
            if not x.fitted and x.name.startswith(PROFILE_NUMBERS):
                # left out of the profile: the GPU's number (or, for a quantize
                # time, the library's on another generation) applies
                lines.append(f"  {x.name:<26} {'-':<10} not pinned by any row: "
                             "not in the profile")
                continue
            if not x.fitted:
                lines.append(f"  {x.name:<26} {x.value:<10.4g} not pinned by any row: "
                             "kept at its prior")
                continue
            pins = ", ".join(f"{s} ({n})" for s, n in sorted(x.pinned_by.items()))
            lines.append(f"  {x.name:<26} {x.value:<10.4g} [{x.low:.4g}, {x.high:.4g}]  "
                         f"pinned by {pins or '-'}")
        return "\n".join(lines)

    def profiles(self) -> dict[tuple[str, str], dict[str, float]]:
        """Fitted implementation profiles: ``{(impl, family): {"rate": ...,
        "fixed_s": ..., "cast_fixed_s": ...}}`` (the numbers rows pinned)."""
        out: dict[tuple[str, str], dict[str, float]] = {}
        for name, value in self.values.items():
            if name.startswith(PROFILE_NUMBERS):
                what, impl, family = name.split(".")
                out.setdefault((impl, family), {})[_PROFILE_KINDS[what][0]] = value
        return out


@dataclass(frozen=True, eq=False)
class _Group:
    """Rows of one unbound model and implementation, with what evaluating them needs."""

    model: Linear
    implementation: str
    rows: np.ndarray
    needed: frozenset[str]  # the model's hardware symbol names
    M: np.ndarray
    K: np.ndarray
    N: np.ndarray
    family: str | None  # the recipe's low-precision family: its quantize profile


def _groups(table: SpeedupTable, preset: str) -> list[_Group]:
    """Rows grouped by unbound model and implementation."""
    groups: dict[tuple[int, str], tuple[Linear, str, list[int]]] = {}
    for i in range(len(table)):
        model = unbound_row_model(table, i, preset)
        impl = str(table.implementation[i])
        groups.setdefault((id(model), impl), (model, impl, []))[2].append(i)
    out = []
    for model, impl, rows in groups.values():
        idx = np.array(rows)
        out.append(_Group(model, impl, idx,
                          frozenset(str(s) for s in model.free_hardware_symbols),
                          table.M[idx], table.K[idx], table.N[idx],
                          model.recipe.family("output")))
    return out


def implementation_values(values: dict[str, float], implementation: str,
                          hw: Hardware, shipped: bool = True, family: str | None = None
                          ) -> dict[str, float]:
    """``values`` (hardware numbers by symbol name, trial profile numbers
    ``rate.<impl>.<family>`` / ``fixed.<impl>.<family>`` /
    ``cast.<impl>.<family>`` among them) as ``implementation`` sees them
    running a recipe of scaling ``family`` (``implementations.profile_values``)."""
    changes = impls.profile_values(values, implementation, hw, values, shipped, family)
    return {**values, **changes} if changes else values


def _evaluate(groups: list[_Group], table: SpeedupTable,
              values: dict[str, float], hw: Hardware, shipped: bool = True) -> np.ndarray:
    """The predicted speedup of every row at hardware ``values``."""
    out: np.ndarray = _evaluate_batch(groups, len(table), [values], hw, shipped)[0]
    return out


def predict_rows(table: SpeedupTable, values: dict[str, float], hw: Hardware,
                 shipped: bool = True) -> np.ndarray:
    """The default model's speedup of every row of ``table`` at hardware
    ``values`` (numbers by symbol name, implementation profile numbers
    among them) on ``hw``."""
    return _evaluate(_groups(table, "default"), table, values, hw, shipped)


def _evaluate_batch(groups: list[_Group], n: int, trials: Sequence[dict[str, float]],
                    hw: Hardware, shipped: bool = True) -> np.ndarray:
    """``(len(trials), n)``: every row's speedup at each trial's values, one
    ``evaluate`` per group (the trials on a leading axis: many GPUs at once)."""
    out = np.empty((len(trials), n))
    for g in groups:
        seen = [implementation_values(t, g.implementation, hw, shipped, g.family)
                for t in trials]
        # symbol names, never evaluate's own keywords (outputs, dtype)
        kw: dict[str, Any] = {k: np.array([v[k] for v in seen])[:, None] for k in g.needed}
        out[:, g.rows] = g.model.evaluate(g.M[None, :], g.K[None, :], g.N[None, :],
                                          outputs=("speedup",), **kw)["speedup"]
    return out


@cache
def _gemm_fn(dtype: str, family: str | None, grouped: bool,
             fast_accum: bool = True) -> tuple[list[str], Any]:
    """The default model's time of one GEMM of a class, lambdified in
    (M, K, N, hardware numbers by name)."""
    operand = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8_e4m3", "fp4": "fp4_e2m1"}[dtype]
    g = Gemm("output", S.M, S.K, S.N, operand=element(operand))
    pieces = roofline_pieces(Work(g.flops, g.dtype, g.bytes, scaling=family, grouped=grouped,
                                  fast_accum=fast_accum), efficiency="size")
    expr = sympy.Max(*(e for _, e in pieces))
    params = sorted({str(x) for x in expr.free_symbols} - {"M", "K", "N"})
    return params, sympy.lambdify([S.M, S.K, S.N, *map(S.hardware_symbol, params)], expr,
                                  modules="numpy")


def gemm_times(kernels: GemmRows, values: dict[str, float], hw: Hardware,
               shipped: bool = True) -> np.ndarray:
    """The default model's time of each GEMM kernel row at hardware ``values``."""
    out: np.ndarray = _gemm_times_batch(kernels, [values], hw, shipped)[0]
    return out


def _gemm_times_batch(kernels: GemmRows, trials: Sequence[dict[str, float]], hw: Hardware,
                      shipped: bool = True) -> np.ndarray:
    out = np.empty((len(trials), len(kernels)))
    keys = list(zip(kernels.dtype, kernels.family, kernels.grouped, kernels.implementation,
                    kernels.fast_accum))
    for key in dict.fromkeys(keys):
        rows = np.array([i for i, k in enumerate(keys) if k == key])
        dtype, family, grouped, impl, fast = key
        seen = [implementation_values(t, str(impl), hw, shipped) for t in trials]
        params, fn = _gemm_fn(str(dtype), family, bool(grouped), bool(fast))
        out[:, rows] = fn(kernels.M[rows][None, :], kernels.K[rows][None, :],
                          kernels.N[rows][None, :],
                          *(np.array([v[p] for v in seen])[:, None] for p in params))
    return out


def fit_speedups(table: Any, base: Hardware | str, free: Sequence[str], *,
                 kernels: GemmRows | None = None, source: str | None = None,
                 preset: str = "default", shipped_profiles: bool = True) -> SpeedupFit:
    """Fit the numbers named in ``free`` (hardware symbol names such as
    ``eta_fp8``, ``t0_bf16``, ``eta_transpose``, and implementation profiles
    ``rate.<impl>.<family>`` / ``fixed.<impl>.<family>`` /
    ``cast.<impl>.<family>``) of ``base`` so that
    the ``preset``'s model predicts the measured speedups of ``table`` and
    the times of the GEMM ``kernels`` rows, in one objective (log errors; a
    kernel row weighs ``KERNEL_WEIGHT``; within the speedups and within the
    kernels, every source weighs the same in total, ``source_weights``).

    A free number no row moves (``PIN_THRESHOLD``) keeps its prior and is
    reported as not fitted; a fixed time that is not fitted follows its
    ``fixed_time_prior`` through the fit.  The physical limits (``LIMITS``)
    are part of the objective: a low-precision GEMM rate at most 1.15x what
    the peaks allow over bf16, a fixed time at least bf16's / 1.1; and each
    free fixed time is held loosely to its prior class's (``PRIOR_WEIGHT``).
    ``source``: how the fitted numbers cite the data; ``shipped_profiles``:
    whether implementation profiles not among ``free`` come from the shipped
    data (False: a fit from priors, as ``gpu_fits.fit_gpu`` runs).
    """
    try:
        from scipy.optimize import least_squares
    except ImportError:  # pragma: no cover - scipy is in the fit and test extras
        raise ImportError("fit_speedups needs scipy: pip install 'roofline-sym[fit]'") from None
    problem = SpeedupProblem(read(table), base if isinstance(base, Hardware) else hardware(base),
                             free, kernels, preset, shipped_profiles)
    return problem.solve(least_squares, source)


class SpeedupProblem:
    """One joint fit of speedup rows and GEMM kernel rows (``fit_speedups``):
    the rows, the base entry and its numbers, the free numbers, and the
    residuals of a batch of trial values (``residuals``: weighted log
    errors, then the physical limits' and the fixed-time priors' penalties).
    ``solve`` finds which free numbers a row pins and fits those."""

    def __init__(self, table: SpeedupTable, base: Hardware, free: Sequence[str],
                 kernels: GemmRows | None = None, preset: str = "default",
                 shipped: bool = True) -> None:
        if len(table) == 0 and (kernels is None or len(kernels) == 0):
            raise InputError("no rows to fit")
        if not predictable(table).all() or np.isnan(table.measured).any():
            raise InputError("fit to single-shape rows with a measured speedup only")
        self.free = list(dict.fromkeys(free))
        if not self.free:
            raise InputError("name at least one hardware number to fit")
        self.table, self.base, self.shipped = table, base, shipped
        self.groups = _groups(table, preset)
        self.values = {str(k): float(v) for k, v in base.parameters.items()}
        for name in self.free:
            _bounds(name)  # a name that cannot be fitted is refused before any work
            if not name.startswith(PROFILE_NUMBERS) and name not in self.values:
                S.hardware_symbol(name)  # an unknown name: its own error
        self.kernels = kernels
        self.n_k = 0 if kernels is None else len(kernels)
        self.measured = np.log(table.measured)
        self.measured_k = (np.log(kernels.seconds) if kernels is not None and self.n_k
                           else np.empty(0))
        self.weights = source_weights(table.source_id)
        self.weights_k = KERNEL_WEIGHT * source_weights(
            kernels.source_id if self.n_k and kernels is not None else ())
        self.independent: set[str] = {str(x) for x in self.values} - _inherited(
            base, self.free, self.free)

    def residuals(self, trials: Sequence[dict[str, float]]) -> np.ndarray:
        """``(len(trials), rows + limits)``: weighted log errors, then the limit penalties."""
        trials = [_chained(t, self.independent) for t in trials]
        r = self.weights * (np.log(_evaluate_batch(self.groups, len(self.table), trials,
                                                   self.base, self.shipped)) - self.measured)
        if self.n_k and self.kernels is not None:
            rk = self.weights_k * (np.log(_gemm_times_batch(self.kernels, trials, self.base,
                                                            self.shipped)) - self.measured_k)
            r = np.concatenate([r, rk], axis=1)
        limits = np.array([_limit_penalties(t, self.base, self.free) for t in trials])
        priors = np.array([_fixed_time_priors(t, self.free) for t in trials])
        return np.concatenate([r, limits.reshape(len(trials), -1),
                               priors.reshape(len(trials), -1)], axis=1)

    def start(self, name: str) -> float:
        """Where free number ``name`` starts: its value, its shipped profile's,
        its prior class's or a typical one, within its range."""
        lo, hi = _bounds(name)
        v = (self.values.get(name)
             or (_prior_profile(name, self.base) if self.shipped else None)
             or _prior_fixed(name, self.values) or _typical(name, self.values))
        return min(max(v, lo * 1.01), hi * 0.99)

    def pinned(self, x0: dict[str, float]) -> list[str]:
        """The free numbers any row moves: a numeric Jacobian at the start
        (the limit penalties are not rows)."""
        n_rows = len(self.table) + self.n_k
        probe = self.residuals(
            [{**self.values, **x0}]
            + [{**self.values, **x0, n: x0[n] * math.exp(1e-3)} for n in self.free])[:, :n_rows]
        moved = np.max(np.abs(probe[1:] - probe[0]), axis=1, initial=0) / 1e-3
        return [n for n, m in zip(self.free, moved) if m > PIN_THRESHOLD]

    def _least_squares(self, least_squares: Any, pinned: list[str], x0: dict[str, float],
                       kept: dict[str, float]) -> tuple[dict[str, float], list[FittedNumber]]:
        """The pinned numbers fitted in their logarithms, within their ranges."""
        bounds = np.log(np.array([_bounds(n) for n in pinned])).T
        step = 1e-6

        def trial(x: np.ndarray) -> dict[str, float]:
            return {**self.values, **kept, **{n: math.exp(v) for n, v in zip(pinned, x)}}

        def residuals(x: np.ndarray) -> np.ndarray:
            out: np.ndarray = self.residuals([trial(x)])[0]
            return out

        def jacobian(x: np.ndarray) -> np.ndarray:
            # one-sided differences, every column in one batched evaluation; a
            # number at its upper bound steps down, never outside its range
            h = np.where(x + step > bounds[1], -step, step)
            xs = [x] + [x + h[j] * np.eye(len(x))[j] for j in range(len(x))]
            r = self.residuals([trial(v) for v in xs])
            out: np.ndarray = ((r[1:] - r[0]) / h[:, None]).T
            return out

        result = least_squares(residuals, np.log([x0[n] for n in pinned]), jac=jacobian,
                               bounds=bounds, x_scale=1.0, loss=LOSS, f_scale=F_SCALE,
                               xtol=1e-10, ftol=1e-10)
        fitted = {n: float(f"{math.exp(v):.4g}") for n, v in zip(pinned, result.x)}
        numbers = _intervals(pinned, result, self.table, self.kernels, fitted,
                             len(self.table) + self.n_k)
        return fitted, numbers

    def solve(self, least_squares: Any, source: str | None = None) -> SpeedupFit:
        """The fit (``least_squares``: scipy's); ``source``: how the fitted
        numbers cite the rows."""
        x0 = {n: self.start(n) for n in self.free}
        pinned = self.pinned(x0)
        self.independent = {str(x) for x in self.values} - _inherited(self.base, self.free,
                                                                      pinned)
        # an implementation number no row pins is not part of the model at all: the
        # implementation runs as torch does there
        kept = {n: x0[n] for n in self.free
                if n not in pinned and not n.startswith(PROFILE_NUMBERS)}
        fitted: dict[str, float] = {}
        numbers: list[FittedNumber] = []
        if pinned:
            fitted, numbers = self._least_squares(least_squares, pinned, x0, kept)
        numbers += [FittedNumber(n, x0[n], x0[n], x0[n], {}, fitted=False)
                    for n in self.free if n not in fitted]
        order = {n: i for i, n in enumerate(self.free)}
        numbers.sort(key=lambda x: order[x.name])
        return self._result(fitted, kept, numbers, source)

    def _result(self, fitted: dict[str, float], kept: dict[str, float],
                numbers: list[FittedNumber], source: str | None) -> SpeedupFit:
        table, kernels = self.table, self.kernels
        sources = sorted(set(str(s) for s in table.source_id)
                         | set(str(s) for s in (kernels.source_id if kernels is not None
                                                else ())))
        cite = source or (f"fitted jointly to {len(table)} measured speedups and {self.n_k} "
                          f"GEMM kernel rows ({', '.join(sources)}) by "
                          "roofline_sym.fidelity.fit_speedups")
        hw_values = {k: v for k, v in fitted.items() if not k.startswith(PROFILE_NUMBERS)}
        hw = self.base.with_values(hw_values, source=cite) if hw_values else self.base
        final = _chained({**self.values, **kept, **fitted}, self.independent)
        predicted = _evaluate(self.groups, table, final, self.base, self.shipped)
        rms = (float(np.sqrt(np.mean((np.log(predicted) - self.measured) ** 2)))
               if len(table) else math.nan)
        rms_k = math.nan
        if self.n_k and kernels is not None:
            rms_k = float(np.sqrt(np.mean((np.log(gemm_times(kernels, final, self.base,
                                                             self.shipped))
                                           - self.measured_k) ** 2)))
        return SpeedupFit(hw, fitted, table, predicted, rms, tuple(numbers), kernels, rms_k)


# the physical limits a fit keeps (docs/fidelity.md): a low-precision GEMM's rate
# over bf16's at most RATE_LIMIT x its peak ratio, its fixed time at least bf16's
# divided by FIXED_LIMIT; a penalty of PENALTY per log unit beyond
RATE_LIMIT, FIXED_LIMIT, PENALTY = 1.15, 1.10, 30.0


def _chained(values: dict[str, float], independent: set[str]) -> dict[str, float]:
    """``values`` with every fixed time not in ``independent`` set to its
    prior's (``fixed_time_prior``), parents first: the fixed times the
    entry does not state, while the fit moves the ones they inherit."""
    out = dict(values)
    for key in (*S.GEMM_CLASSES, *S.KERNEL_KINDS):
        name, parent = f"t0_{key}", fixed_time_prior(key)
        if name in out and name not in independent and parent and f"t0_{parent}" in out:
            out[name] = out[f"t0_{parent}"]
    return out


def _inherited(hw: Hardware, free: Sequence[str], pinned: Sequence[str]) -> set[str]:
    """The fixed times that follow their prior through a fit: stated by no
    one (neither the entry nor a pinned free number)."""
    stated = {str(s) for s in hw.stated} | set(pinned)
    return {f"t0_{k}" for k in (*S.GEMM_CLASSES, *S.KERNEL_KINDS)} - stated


def _limit_penalties(values: dict[str, float], hw: Hardware, free: Sequence[str]
                     ) -> np.ndarray:
    """One residual per limit among the free numbers: 0 inside, the log excess
    times ``PENALTY`` beyond."""
    out = []
    bf16 = values["eta_bf16"]
    for d in ("fp8", "fp4"):
        if f"eta_{d}" not in values:
            continue
        for family in S.SCALING_FAMILIES:
            rate = values[f"eta_{d}"] * values.get(f"kappa_{family}", 1.0)
            factors = [1.0] + [v for k, v in values.items()
                               if k.startswith("rate.") and k.endswith(f".{family}")]
            out.append(max(0.0, math.log(rate * max(factors) / (RATE_LIMIT * bf16))))
    t0 = values.get("t0_bf16")
    if t0:
        for name in free:
            if (name.startswith("t0_fp") or name.startswith("fixed.")) and name in values:
                out.append(max(0.0, math.log(t0 / (FIXED_LIMIT * values[name]))))
    return PENALTY * np.array(out)


# a fixed time stays near its prior's (the bf16 class of its structure, the cast
# class, the bf16 GEMM for an implementation's GEMMs, the cast class for its
# quantize kernels) unless rows say otherwise: one
# residual per such number, PRIOR_WEIGHT per log unit, so a number few rows touch
# cannot drift to a bound (a 100 us GEMM fixed time that a layer table barely sees)
PRIOR_WEIGHT = 1.0


def _fixed_time_priors(values: dict[str, float], free: Sequence[str]) -> np.ndarray:
    """One residual per free fixed time with a prior class: its log ratio to the
    prior's current value, times ``PRIOR_WEIGHT``."""
    out = []
    for name in free:
        if name.startswith(PROFILE_NUMBERS):
            parent = _profile_class(name)
        elif name.startswith("t0_"):
            parent = fixed_time_prior(name[3:])
        else:
            continue
        if parent and name in values and f"t0_{parent}" in values:
            out.append(math.log(values[name] / values[f"t0_{parent}"]))
    return PRIOR_WEIGHT * np.array(out)


def _profile_class(name: str) -> str | None:
    """The GPU fixed-time class an implementation profile number starts at and
    is held near (``_PROFILE_KINDS``): None for a rate factor or another name."""
    return _PROFILE_KINDS[name.split(".")[0]][1] if name.startswith(PROFILE_NUMBERS) else None


def _prior_fixed(name: str, values: dict[str, float]) -> float | None:
    """An implementation's GEMM fixed time starts at the GPU's bf16 GEMM's,
    its quantize kernels' at the GPU's cast class's."""
    parent = _profile_class(name)
    return values.get(f"t0_{parent}") if parent else None


def _prior_profile(name: str, hw: Hardware) -> float | None:
    if not name.startswith(PROFILE_NUMBERS):
        return None
    what, impl, family = name.split(".")
    p = impls.profile(impl, hw, family)
    value: float | None = getattr(p, _PROFILE_KINDS[what][0]) if p else None
    return value


def _intervals(names: list[str], result: Any, table: SpeedupTable, kernels: GemmRows | None,
               fitted: dict[str, float], n_rows: int) -> list[FittedNumber]:
    """95% intervals from the Jacobian (in log units) and the rows behind each number."""
    jac = np.asarray(result.jac, float)[:n_rows]
    dof = max(1, jac.shape[0] - jac.shape[1])
    s2 = float(np.sum(np.asarray(result.fun)[:n_rows] ** 2)) / dof
    try:
        cov = np.linalg.pinv(jac.T @ jac) * s2
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:  # pragma: no cover - pinv does not fail on finite input
        sd = np.full(len(names), np.inf)
    row_sources = list(table.source_id) + list(kernels.source_id if kernels is not None else [])
    out = []
    for j, n in enumerate(names):
        col = np.abs(jac[:, j])
        strong = col >= 0.1 * col.max() if col.max() > 0 else np.zeros(len(col), bool)
        pins: dict[str, int] = {}
        for i in np.flatnonzero(strong):
            pins[str(row_sources[i])] = pins.get(str(row_sources[i]), 0) + 1
        v = fitted[n]
        half = min(1.96 * float(sd[j]), 50.0)
        out.append(FittedNumber(n, v, v * math.exp(-half), v * math.exp(half), pins))
    return out


def errors(predicted: np.ndarray, measured: np.ndarray, band: float = 0.05) -> dict[str, Any]:
    """Accuracy of predicted speedups: median and 90th-percentile relative
    error |predicted / measured - 1|, the worst, and the wrong verdicts
    (predicted and measured on opposite sides of 1, counted where the
    measurement is at least ``band`` away from 1).

    >>> e = errors(np.array([1.1, 0.9, 2.0]), np.array([1.0, 1.2, 2.0]))
    >>> round(e["median"], 3), e["wrong"], e["decisive"]
    (0.1, 1, 2)
    """
    predicted, measured = np.asarray(predicted, float), np.asarray(measured, float)
    ok = np.isfinite(predicted) & np.isfinite(measured)
    p, m = predicted[ok], measured[ok]
    rel = np.abs(p / m - 1)
    decisive = np.abs(m - 1) >= band
    wrong = decisive & ((p > 1) != (m > 1))
    return {"rows": int(ok.sum()),
            "median": float(np.median(rel)) if rel.size else math.nan,
            "p90": float(np.percentile(rel, 90)) if rel.size else math.nan,
            "max": float(rel.max()) if rel.size else math.nan,
            "wrong": int(wrong.sum()), "decisive": int(decisive.sum())}
