"""How a GPU's size-dependent numbers were obtained: part of its hardware record.

A GPU with published measurements of its own is *fitted*: ``Fitted`` names
the rows it is fitted to (their GPU keys and workloads, the sources kept for
the record only), the numbers set from single-kernel measurements and the
priors, each with its source, and the numbers the fit may move.  Any other
GPU is *carried*: ``Carried`` names the fitted GPU of the same file its
numbers are carried over from, and whether its low-precision GEMM rates keep
the fitted GPU's ratio to bf16 (``ratio``: the same tensor cores) or take its
own best-shape fractions (``best-shape``).  In a hardware file::

    calibration = { carried_from = "H100 SXM", low_precision = "ratio" }

>>> c = parse_calibration({"carried_from": "H100 SXM", "low_precision": "ratio"}, "x")
>>> c.origin, c.same_rates
('H100 SXM', True)
>>> f = parse_calibration({"fitted_to": ["h100"], "workloads": ["linear"],
...                        "free": ["eta_fp8"], "profiles": {"cutlass": ["rowwise"]}}, "x")
>>> f.numbers()
('eta_fp8', 'rate.cutlass.rowwise', 'fixed.cutlass.rowwise', 'cast.cutlass.rowwise')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from .. import symbols as S
from ..errors import InputError
from ..validate import has_control, show
from .ranges import symbol_kind

__all__ = ["Fitted", "Carried", "LOW_PRECISION", "parse_calibration"]

# how a carried GPU's low-precision GEMM rates follow: the fitted GPU's ratio to
# bf16 (the same tensor cores), or its own best-shape fractions at the fitted
# GPU's typical share of them
LOW_PRECISION = ("ratio", "best-shape")
# a fitted GPU's profile numbers per (implementation, family): rate factor, GEMM
# fixed time, quantize fixed time (the fit drops those no row pins)
_PROFILE_NUMBERS = ("rate", "fixed", "cast")


@dataclass(frozen=True)
class Fitted:
    """A GPU fitted to published rows: ``fitted_to`` (the rows' GPU keys: the
    same die under other names), ``workloads``, ``sources`` (only these, where
    given), ``superseded`` (sources of its rows kept for the record, neither
    fitted nor scored), ``fixed`` and ``priors`` (``{number: (value, source)}``:
    set before the fit; where the free numbers start and what they keep when
    no row pins them), ``free`` (the hardware numbers the fit may move) and
    ``profiles`` (``{implementation: families}`` whose profile numbers it fits)."""

    fitted_to: tuple[str, ...]
    workloads: tuple[str, ...]
    free: tuple[str, ...] = ()
    profiles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    priors: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()

    def numbers(self) -> tuple[str, ...]:
        """The free hardware numbers, then ``<rate|fixed|cast>.<impl>.<family>``."""
        return (*self.free, *(f"{what}.{impl}.{family}" for impl, fams in self.profiles.items()
                              for family in fams for what in _PROFILE_NUMBERS))


@dataclass(frozen=True)
class Carried:
    """A GPU whose numbers are carried over from the fitted GPU ``origin``;
    ``low_precision``: one of ``LOW_PRECISION``."""

    origin: str
    low_precision: str

    @property
    def same_rates(self) -> bool:
        """Whether the low-precision rates keep the fitted GPU's ratio to bf16."""
        return self.low_precision == "ratio"


def _strings(raw: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(
            isinstance(v, str) and v.strip() and not has_control(v) for v in value):
        raise InputError(f"{where}, field {show(key)}: expected a list of names, got "
                         f"{show(value)}")
    return tuple(value)


def _hardware_number(name: str, where: str) -> str:
    try:
        S.hardware_symbol(name)
    except ValueError:
        raise InputError(f"{where}: {show(name)} is not a hardware number (eta_fp8, "
                         "t0_bf16, kappa_rowwise, ...)") from None
    return name


def _valued(raw: Mapping[str, Any], key: str, where: str
            ) -> Mapping[str, tuple[float, str]]:
    """``{number: (value, source)}`` of a table of ``{ value = ..., source = "..." }``."""
    table = raw.get(key, {})
    if not isinstance(table, dict):
        raise InputError(f"{where}, field {show(key)}: expected a table, got {show(table)}")
    out = {}
    for name, item in table.items():
        at = f"{where}, field {show(f'{key}.{name}')}"
        _hardware_number(name, at)
        if not isinstance(item, dict) or set(item) != {"value", "source"}:
            raise InputError(f"{at}: expected {{ value = ..., source = \"...\" }}, "
                             f"got {show(item)}")
        value, source = item["value"], item["source"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise InputError(f"{at}: the value must be a positive number, got {show(value)}")
        if not isinstance(source, str) or not source.strip() or has_control(source):
            raise InputError(f"{at}: the source must be a non-empty line of text")
        if symbol_kind(name) is None:
            raise InputError(f"{at}: {show(name)} has no plausible range to check")
        out[name] = (float(value), source)
    return MappingProxyType(out)


def parse_calibration(raw: Any, where: str) -> Fitted | Carried:
    """A hardware entry's ``calibration`` table, checked field by field;
    errors start with ``where`` (the file and entry)."""
    where = f"{where}, field 'calibration'"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a table, got {show(raw)}")
    if "carried_from" in raw:
        unknown = set(raw) - {"carried_from", "low_precision"}
        origin, rates = raw["carried_from"], raw.get("low_precision")
        if unknown:
            raise InputError(f"{where}: a carried calibration has carried_from and "
                             f"low_precision only, not {sorted(unknown)}")
        if not isinstance(origin, str) or not origin.strip():
            raise InputError(f"{where}: carried_from must name a fitted GPU")
        if rates not in LOW_PRECISION:
            raise InputError(f"{where}: low_precision must be one of "
                             f"{', '.join(LOW_PRECISION)}, got {show(rates)}")
        return Carried(origin, rates)
    known = {"fitted_to", "workloads", "free", "profiles", "fixed", "priors", "sources",
             "superseded"}
    if set(raw) - known:
        raise InputError(f"{where}: unknown field(s) {sorted(set(raw) - known)}; a fitted "
                         f"calibration has {', '.join(sorted(known))} (or carried_from)")
    profiles = raw.get("profiles", {})
    if not isinstance(profiles, dict):
        raise InputError(f"{where}, field 'profiles': expected a table of implementation = "
                         f"[families], got {show(profiles)}")
    families = {impl: _strings(profiles, impl, f"{where}, profiles") for impl in profiles}
    for fams in families.values():
        for family in fams:
            if family not in S.SCALING_FAMILIES:
                raise InputError(f"{where}, profiles: unknown scaling family {show(family)}; "
                                 f"known: {', '.join(S.SCALING_FAMILIES)}")
    fitted = Fitted(
        fitted_to=_strings(raw, "fitted_to", where), workloads=_strings(raw, "workloads", where),
        free=tuple(_hardware_number(n, f"{where}, field 'free'")
                   for n in _strings(raw, "free", where)),
        profiles=MappingProxyType(families), fixed=_valued(raw, "fixed", where),
        priors=_valued(raw, "priors", where), sources=_strings(raw, "sources", where),
        superseded=_strings(raw, "superseded", where))
    if not fitted.fitted_to or not fitted.workloads:
        raise InputError(f"{where}: a fitted calibration names the rows' GPU keys "
                         "(fitted_to) and workloads")
    return fitted
