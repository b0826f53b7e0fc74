"""One hardware entry: a frozen ``Hardware``, validated field by field.

Numbers are kept exact (``Rational`` of the decimal given), must lie in
physical ranges, peaks are dense, fp8 >= bf16; an error names the entry and
the field.  ``parameters`` maps the model's hardware symbols to the numbers.

>>> hw = Hardware("Toy", peak_flops={"bf16": 1e15}, mem_bw=2e12, mem_efficiency=0.9)
>>> hw.mem_efficiency, hw.supports("fp8")
(9/10, False)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

import sympy

from .. import symbols as S
from ..families import BLOCK_SCALED
from ..errors import InputError, UnknownNameError
from ..validate import escape, has_control, show
from .calibration import Carried, Fitted
from .ranges import RANGES, field_kind, range_problem

__all__ = [
    "Hardware",
    "HardwareError",
    "UnknownHardwareError",
    "MissingHardwareValueError",
    "fixed_time_prior",
    "PEAK_DTYPES",
    "GEMM_DTYPES",
    "BLOCK_SCALINGS",
    "SOURCED",
    "OVERRIDE_SOURCE",
    "normalize",
]

# Dtypes a peak may be given for; the cost models use bf16, fp8 and fp4.
PEAK_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8")
GEMM_DTYPES = ("bf16", "fp16", "fp8", "fp4")
# Families of block-scaled GEMMs a GPU may run in hardware (Blackwell: both).
BLOCK_SCALINGS = BLOCK_SCALED

# Physical ranges of every number: ranges.RANGES, by the field's kind
# (ranges.FIELD_KINDS).  The size-dependent efficiency tables and their keys: a
# fixed time (seconds) per GEMM class and per kernel class, paid before the work
# runs at its asymptotic rate; a scaling factor compares a scaled GEMM with its
# dtype's plain rate.
_MODEL_TABLES = {
    "gemm_fixed_s": S.GEMM_CLASSES,
    "kernel_fixed_s": S.KERNEL_KINDS,
    "kernel_efficiency": S.KERNEL_KINDS,
    "scaling_efficiency": S.SCALING_FAMILIES,
    "grouped_efficiency": GEMM_DTYPES,
    "accumulation_efficiency": GEMM_DTYPES,
    "best_shape_efficiency": GEMM_DTYPES,
    # a whole step's links, by scope: NVLink / xGMI within a scale-up domain, the
    # network between domains
    "link_bw": S.LINK_SCOPES,
    "link_efficiency": S.LINK_SCOPES,
}
# the link fields, given all together or not at all (a step over one GPU needs none)
LINK_FIELDS = ("link_bw", "link_efficiency", "scale_up_gpus")


class HardwareError(InputError):
    """A hardware entry or file is invalid; the message names file, entry and field.

    ``field`` and ``reason`` hold the offending field (as ``Hardware`` names it,
    e.g. ``peak_flops.fp8``) and what is wrong with it, where one field is at fault.
    """

    def __init__(self, message: str, *, field: str | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason


class UnknownHardwareError(UnknownNameError):
    """No hardware entry matches a name; the message lists close matches."""


class MissingHardwareValueError(InputError):
    """A model needs a number this hardware entry does not have."""


def normalize(name: str) -> str:
    """Lower-case, with runs of spaces, underscores and hyphens as one ``-``."""
    return re.sub(r"[\s_\-]+", "-", name.strip().casefold())


class _FieldProblem(InputError):
    """One field of an entry is malformed (raised while converting, then reported)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field, self.reason = field, reason


def _entry_error(entry: Any, field: str, reason: str) -> HardwareError:
    return HardwareError(f"entry {show(entry)}, field {field!r}: {reason}",
                         field=field, reason=reason)


def _exact(value: Any, field: str) -> sympy.Rational:
    """The exact Rational of a finite number as written (floats via their shortest repr)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, sympy.Rational)):
        raise _FieldProblem(field, f"expected a number, got {show(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _FieldProblem(field, f"must be a finite number, got {show(value)}")
        return sympy.Rational(repr(float(value)))
    return sympy.Rational(value)


def _mapping(values: Any, field: str) -> Mapping[str, sympy.Rational]:
    if not isinstance(values, Mapping):
        raise _FieldProblem(field, "expected a mapping of dtype to number such as "
                                   f"{{'bf16': ..., 'fp8': ...}}, got {show(values)}")
    out = {}
    for key, value in values.items():
        if not isinstance(key, str):
            raise _FieldProblem(field, f"dtype keys must be strings, got {show(key)}")
        out[key] = _exact(value, f"{field}.{key}")
    return MappingProxyType(out)


def _whole(value: Any, field: str) -> int:
    """A whole number (an int, or a float or Rational without a fraction) as an int."""
    if isinstance(value, bool) or not isinstance(value, (int, float, sympy.Rational)) or (
            isinstance(value, float) and not value.is_integer()) or (
            isinstance(value, sympy.Rational) and not value.is_integer):
        raise _FieldProblem(field, f"expected a whole number, got {show(value)}")
    return int(value)


def _strings(values: Any, field: str) -> tuple[str, ...]:
    """A list of strings as a tuple; a bare string is refused (not split into letters)."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise _FieldProblem(field, f"expected a list of strings, got {show(values)}")
    out = []
    for item in values:  # item by item: a wrong one stops it at once
        if not isinstance(item, str):
            raise _FieldProblem(field, f"expected a list of strings, got an item {show(item)}")
        if field != "notes" and has_control(item):
            raise _FieldProblem(field, f"{show(item)} contains control characters")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Hardware:
    """One accelerator: dense peaks, bandwidth, achievable fractions, launch floor.

    Fields carry units in their meaning: ``peak_flops`` in FLOP/s per input
    dtype, ``mem_bw`` in bytes/s, ``launch_overhead`` in seconds, fractions in
    (0, 1].  ``sources`` maps each field to where its number comes from.
    ``parameters`` gives ``{hardware Symbol: exact value}`` for ``xreplace``.

    >>> hw = Hardware("Toy", peak_flops={"bf16": 1e15, "fp8": 2e15}, mem_bw=2e12,
    ...               gemm_efficiency={"bf16": 0.8, "fp8": 0.7}, mem_efficiency=0.9,
    ...               launch_overhead=2e-6)
    >>> hw.parameters[S.peak_flops("fp8")]
    2000000000000000
    """

    name: str
    peak_flops: Mapping[str, sympy.Rational]
    mem_bw: sympy.Rational
    gemm_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    mem_efficiency: sympy.Rational | None = None
    launch_overhead: sympy.Rational | None = None
    # the host's time per eager launch under a CUDA-event timer (``t_host``);
    # None: the host keeps pace, the launch floor
    host_launch: sympy.Rational | None = None
    block_scaling: tuple[str, ...] | None = None  # None: not stated, not checked
    memory_bytes: sympy.Rational | None = None
    l2_bytes: sympy.Rational | None = None
    # the size-dependent efficiency model (preset "default"); see docs/model.md
    gemm_fixed_s: Mapping[str, sympy.Rational] = field(default_factory=dict)
    kernel_fixed_s: Mapping[str, sympy.Rational] = field(default_factory=dict)
    kernel_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    scaling_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    grouped_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    accumulation_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    # what a calibration starts from and how it ran: the best-shape GEMM fraction per
    # dtype (a shape search's maximum over the dense peak), the tensor-core
    # generation (which implementation profiles apply), fitted or carried over
    best_shape_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    # the links a whole step talks over, by scope (``scale_up``, ``scale_out``): per
    # GPU and direction in bytes/s, the fraction of it a collective's bus bandwidth
    # reaches, and the GPUs of one scale-up domain; empty / None: not known
    link_bw: Mapping[str, sympy.Rational] = field(default_factory=dict)
    link_efficiency: Mapping[str, sympy.Rational] = field(default_factory=dict)
    scale_up_gpus: int | None = None
    generation: str | None = None
    calibration: Fitted | Carried | None = None
    aliases: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    dataset: str = "custom"

    def __post_init__(self) -> None:
        def set_(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if not isinstance(self.name, str) or not self.name.strip() or has_control(self.name):
            raise _entry_error(self.name, "name", "expected a non-empty string without control "
                                                  f"characters, got {show(self.name)}")
        try:  # field by field, so that an error names the field
            set_("peak_flops", _mapping(self.peak_flops, "peak_flops"))
            for name in ("gemm_efficiency", *_MODEL_TABLES):
                set_(name, _mapping(getattr(self, name), name))
            for name in ("mem_bw", "mem_efficiency", "launch_overhead", "host_launch",
                         "memory_bytes", "l2_bytes"):
                value = getattr(self, name)
                set_(name, None if value is None else _exact(value, name))
            if self.scale_up_gpus is not None:
                set_("scale_up_gpus", _whole(self.scale_up_gpus, "scale_up_gpus"))
            set_("aliases", _strings(self.aliases, "aliases"))
            if self.block_scaling is not None:
                set_("block_scaling", _strings(self.block_scaling, "block_scaling"))
            set_("notes", _strings(self.notes, "notes"))
            if self.generation is not None and (not isinstance(self.generation, str) or not
                                                self.generation.strip()
                                                or has_control(self.generation)):
                raise _FieldProblem("generation", "expected a name such as 'hopper', got "
                                                  f"{show(self.generation)}")
            if not isinstance(self.calibration, (Fitted, Carried, type(None))):
                raise _FieldProblem("calibration", "expected a fitted or carried "
                                                   f"calibration, got {show(self.calibration)}")
            if not isinstance(self.sources, Mapping) or not all(
                    isinstance(v, str) for v in self.sources.values()):
                raise _FieldProblem("sources", "expected a mapping of field name to "
                                               f"source text, got {show(self.sources)}")
        except _FieldProblem as problem:
            raise _entry_error(self.name, problem.field, problem.reason) from None
        set_("sources", MappingProxyType(dict(self.sources)))
        for name, reason in self._problems():
            raise _entry_error(self.name, name, reason)

    def _problems(self) -> Iterator[tuple[str, str]]:
        """Each violated rule as (field, reason) (validation, one place)."""
        for dtype, value in self.peak_flops.items():
            if "sparse" in dtype:
                yield (f"peak_flops.{dtype}", "sparse peaks are not accepted; "
                       "give the dense rate (half the 2:4 sparse figure)")
            elif dtype not in PEAK_DTYPES:
                yield f"peak_flops.{dtype}", f"unknown dtype; known: {', '.join(PEAK_DTYPES)}"
        for family in self.block_scaling or ():
            if family not in BLOCK_SCALINGS:
                yield ("block_scaling", f"unknown family {family!r}; "
                       f"known: {', '.join(BLOCK_SCALINGS)}")
        if "bf16" not in self.peak_flops:
            yield "peak_flops", "a bf16 peak is required (the baseline)"
        ordered = [d for d in ("bf16", "fp8", "fp4") if d in self.peak_flops]
        for lo, hi in zip(ordered, ordered[1:]):
            if self.peak_flops[hi] < self.peak_flops[lo]:
                yield (f"peak_flops.{hi}", f"{float(self.peak_flops[hi]):.4g} "
                       f"is below the {lo} peak {float(self.peak_flops[lo]):.4g}; "
                       "a dense low-precision peak is never lower")
        for dtype, value in self.gemm_efficiency.items():
            if dtype not in GEMM_DTYPES:
                yield (f"gemm_efficiency.{dtype}", "efficiencies are only for GEMM "
                       f"dtypes ({', '.join(GEMM_DTYPES)}); the models use no other")
            elif dtype not in self.peak_flops:
                yield f"gemm_efficiency.{dtype}", f"there is no {dtype} peak to apply it to"
        yield from self._model_problems()
        yield from self._link_problems()
        for name, value in _numbers(self):  # every number within its kind's range
            problem = range_problem(value, field_kind(name))
            if problem:
                yield name, problem

    def _model_problems(self) -> Iterator[tuple[str, str]]:
        """The size-dependent efficiency tables: known keys, a peak for each GEMM class."""
        for table, keys in _MODEL_TABLES.items():
            for key in getattr(self, table):
                name = f"{table}.{key}"
                if key not in keys:
                    yield name, f"unknown key; known: {', '.join(keys)}"
                elif table == "gemm_fixed_s" and key.split("_")[0] not in self.peak_flops:
                    yield name, f"there is no {key.split('_')[0]} peak for this GEMM class"
                elif table == "best_shape_efficiency" and key not in self.peak_flops:
                    yield name, f"there is no {key} peak to apply it to"

    def _link_problems(self) -> Iterator[tuple[str, str]]:
        """The links: all three fields or none, each table with every scope."""
        given = [f for f in LINK_FIELDS if _given(getattr(self, f))]
        if not given:
            return
        for name in LINK_FIELDS:
            if name not in given:
                yield name, (f"required with {', '.join(given)}: a GPU's links are "
                             f"{', '.join(LINK_FIELDS)} together")
            elif name != "scale_up_gpus":
                for scope in S.LINK_SCOPES:
                    if scope not in getattr(self, name):
                        yield f"{name}.{scope}", "required: a link table gives every scope"

    @property
    def has_links(self) -> bool:
        """Whether the entry gives its links (a step over several GPUs needs them)."""
        return self.scale_up_gpus is not None

    # -- identity -----------------------------------------------------------
    def _key(self) -> tuple[str, str, tuple[tuple[sympy.Symbol, sympy.Rational], ...],
                            tuple[str, ...] | None, int | None]:
        scaling = None if self.block_scaling is None else tuple(sorted(set(self.block_scaling)))
        return (self.dataset, self.name, tuple(sorted(self.stated.items(), key=str)),
                scaling, self.scale_up_gpus)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hardware) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Hardware({self.name!r}, dataset={self.dataset!r})"

    # -- use ----------------------------------------------------------------
    @property
    def parameters(self) -> dict[sympy.Symbol, sympy.Rational]:
        """``{hardware Symbol: exact value}`` for every number a model may use:
        the entry's own and, where it says nothing, the defaults of the
        size-dependent model (``defaulted``)."""
        return self.defaulted()

    @property
    def stated(self) -> dict[sympy.Symbol, sympy.Rational]:
        """``{hardware Symbol: exact value}`` for every number this entry has."""
        out: dict[sympy.Symbol, sympy.Rational] = {S.mem_bw(): self.mem_bw}
        for dtype, value in self.peak_flops.items():
            if dtype in GEMM_DTYPES:
                out[S.peak_flops(dtype)] = value
        for dtype, value in self.gemm_efficiency.items():
            if dtype in GEMM_DTYPES:
                out[S.gemm_efficiency(dtype)] = value
        if self.mem_efficiency is not None:
            out[S.mem_efficiency()] = self.mem_efficiency
        if self.launch_overhead is not None:
            out[S.launch_overhead()] = self.launch_overhead
        if self.host_launch is not None:
            out[S.host_launch()] = self.host_launch
        for cls, value in self.gemm_fixed_s.items():
            out[S.gemm_fixed_time(cls)] = value
        for kind, value in self.kernel_fixed_s.items():
            out[S.kernel_fixed_time(kind)] = value
        for kind, value in self.kernel_efficiency.items():
            out[S.kernel_efficiency(kind)] = value
        for family, value in self.scaling_efficiency.items():
            out[S.scaling_efficiency(family)] = value
        for dtype, value in self.grouped_efficiency.items():
            out[S.grouped_efficiency(dtype)] = value
        for dtype, value in self.accumulation_efficiency.items():
            out[S.accumulation_efficiency(dtype)] = value
        for scope, value in self.link_bw.items():
            out[S.link_bandwidth(scope)] = value
        for scope, value in self.link_efficiency.items():
            out[S.link_efficiency(scope)] = value
        return out

    def defaulted(self) -> dict[sympy.Symbol, sympy.Rational]:
        """The values the size-dependent model takes where this entry says
        nothing: each fixed time its ``fixed_time_prior`` (at the root, the
        launch floor), every kernel class at ``mem_efficiency``, every scaling
        family, grouped GEMM and slow accumulation at its dtype's rate (1).

        >>> hw = Hardware("Toy", peak_flops={"bf16": 1e15, "fp8": 2e15}, mem_bw=2e12,
        ...               mem_efficiency=0.9, launch_overhead=2e-6, gemm_fixed_s={"bf16": 5e-6})
        >>> d = hw.defaulted()
        >>> d[S.kernel_efficiency("cast")], d[S.gemm_fixed_time("fp8_rowwise")]
        (9/10, 1/200000)
        >>> d[S.kernel_fixed_time("transpose")]
        1/500000
        """
        out: dict[sympy.Symbol, sympy.Rational] = {}
        out.update({S.scaling_efficiency(f): sympy.Integer(1) for f in S.SCALING_FAMILIES})
        out.update({S.grouped_efficiency(d): sympy.Integer(1) for d in self.peak_flops
                    if d in GEMM_DTYPES})
        out.update({S.accumulation_efficiency(d): sympy.Integer(1) for d in self.peak_flops
                    if d in GEMM_DTYPES})
        if self.mem_efficiency is not None:
            out.update({S.kernel_efficiency(k): self.mem_efficiency for k in S.KERNEL_KINDS})
        if self.launch_overhead is not None:  # no host gap beyond the launch floor
            out[S.host_launch()] = self.launch_overhead
        for table, keys, symbol in (("gemm_fixed_s", S.GEMM_CLASSES, S.gemm_fixed_time),
                                    ("kernel_fixed_s", S.KERNEL_KINDS, S.kernel_fixed_time)):
            for key in keys:
                if table == "gemm_fixed_s" and key.split("_")[0] not in self.peak_flops:
                    continue
                value = self.fixed_time(table, key)
                if value is not None:
                    out[symbol(key)] = value
        out.update(self.stated)
        return out

    def fixed_time(self, table: str, key: str) -> sympy.Rational | None:
        """The fixed time of GEMM class or kernel class ``key`` (``table``:
        ``gemm_fixed_s`` or ``kernel_fixed_s``): stated, else its prior's
        (``fixed_time_prior``), else the launch floor."""
        values = getattr(self, table)
        at: str | None = key
        while at is not None:
            if at in values:
                return sympy.Rational(values[at])
            at = fixed_time_prior(at)
        return self.launch_overhead

    def supports(self, dtype: str) -> bool:
        """Whether the hardware has a dense GEMM peak for ``dtype``."""
        return dtype in self.peak_flops

    def supports_block_scaling(self, family: str) -> bool:
        """Whether block-scaled GEMMs of ``family`` (``mx``, ``nvfp4``) run in
        hardware; entries that do not say are not checked."""
        return self.block_scaling is None or family in self.block_scaling

    def values_for(self, needed: set[sympy.Symbol]) -> dict[sympy.Symbol, sympy.Rational]:
        """The values of ``needed`` symbols, or an error naming what is missing."""
        params = self.parameters
        missing = sorted((s for s in needed if s not in params), key=str)
        if missing:
            fields = [_FIELD_OF.get(str(s), str(s)) for s in missing]
            raise MissingHardwareValueError(
                f"{self.name} ({self.dataset} dataset) has no {', '.join(fields)}; "
                f"give it with hw.replace(...), e.g. {self._replace_example(fields)} "
                "(in Python), or add the field to the hardware TOML file"
            )
        return {s: params[s] for s in needed}

    def _replace_example(self, fields: list[str]) -> str:
        """``hw.replace(...)`` supplying exactly ``fields`` (dotted for table entries)."""
        tables: dict[str, list[str]] = {}
        plain: list[str] = []
        for name in fields:
            table, dot, dtype = name.partition(".")
            if dot:
                tables.setdefault(table, []).append(dtype)
            else:
                plain.append(name)
        args = []
        for table, dtypes in tables.items():
            kept = [f"**hw.{table}"] if getattr(self, table, None) else []
            args.append(f"{table}={{{', '.join(kept + [f'{d!r}: ...' for d in dtypes])}}}")
        args.extend(f"{name}=..." for name in plain)
        return f"hw.replace({', '.join(args)})"

    def replace(self, **changes: Any) -> "Hardware":
        """A copy with some fields changed, validated again.

        Unless ``sources=`` is given too, a changed numeric field (or
        ``block_scaling``) no longer cites the old source but
        ``"user override (Hardware.replace)"``.

        >>> rs_hw = Hardware("Toy", peak_flops={"bf16": 1e15}, mem_bw=2e12,
        ...                  sources={"mem_bw": "datasheet"})
        >>> new = rs_hw.replace(mem_bw=3e12, mem_efficiency=0.9)
        >>> new.mem_efficiency, new.sources["mem_bw"]
        (9/10, 'user override (Hardware.replace)')
        """
        new = replace(self, **changes)
        if "sources" in changes:
            return new
        sources = dict(self.sources)
        for name in SOURCED:
            if name not in changes:
                continue
            old, value = getattr(self, name), getattr(new, name)
            if isinstance(value, Mapping):
                old, value = dict(old or {}), dict(value) or None
            if value == old:
                continue
            if value is None:
                sources.pop(name, None)
            else:
                sources[name] = OVERRIDE_SOURCE
        object.__setattr__(new, "sources", MappingProxyType(sources))  # new, not yet shared
        return new

    def with_values(self, values: Mapping[Any, Any], source: str | None = None,
                    **changes: Any) -> "Hardware":
        """A copy with the numbers behind hardware symbols changed (``{"eta_fp8":
        0.8, "t0_bf16": 4e-6}``, names or symbols), each citing ``source`` (else
        ``Hardware.replace``'s override note); ``changes``: other fields to set.

        >>> hw = Hardware("Toy", peak_flops={"bf16": 1e15}, mem_bw=2e12, mem_efficiency=0.9)
        >>> new = hw.with_values({"eta_cast": 0.5, "t0_bf16": 4e-6}, source="fitted")
        >>> new.kernel_efficiency["cast"], new.sources["kernel_efficiency"]
        (1/2, 'fitted')
        """
        fields: dict[str, Any] = {}
        for name, value in values.items():
            key = str(name)
            if key not in _FIELD_OF:
                raise InputError(f"{key!r} is not a hardware symbol; known: "
                                 f"{', '.join(sorted(_FIELD_OF))}")
            head, _, sub = _FIELD_OF[key].partition(".")
            if sub:
                table = fields.setdefault(head, dict(getattr(self, head)))
                table[sub] = value
            else:
                fields[head] = value
        new = self.replace(**fields, **changes)
        if source is None:
            return new
        sources = dict(new.sources)
        for name, value in fields.items():
            if not isinstance(value, dict):
                sources[name] = source
                continue
            # a table keeps the sources of the keys left alone
            changed = [k for k, v in value.items() if getattr(self, name).get(k) != v]
            old = self.sources.get(name, "")
            kept = old if old and old != OVERRIDE_SOURCE and set(changed) != set(value) else ""
            mine = f"{', '.join(changed)}: {source}" if kept else source
            sources[name] = f"{kept} | {mine}" if kept else mine
        return replace(new, sources=sources)

    def as_row(self) -> dict[str, Any]:
        """The entry's numbers as one flat row of floats (None where absent),
        for tables, JSON and CSV.

        >>> row = Hardware("Toy", peak_flops={"bf16": 1e15}, mem_bw=2e12).as_row()
        >>> row["peak_fp8_flops_per_s"], row["mem_bw_bytes_per_s"]
        (None, 2000000000000.0)
        """
        def num(value: sympy.Rational | None) -> float | None:
            return None if value is None else float(value)

        return {"name": self.name, "aliases": list(self.aliases),
                **{f"peak_{d}_flops_per_s": num(self.peak_flops.get(d))
                   for d in ("bf16", "fp8", "fp4")},
                "mem_bw_bytes_per_s": float(self.mem_bw),
                **{f"gemm_efficiency_{d}": num(self.gemm_efficiency.get(d))
                   for d in ("bf16", "fp8", "fp4")},
                "mem_efficiency": num(self.mem_efficiency),
                "launch_overhead_s": num(self.launch_overhead)}

    def describe(self) -> str:
        """A readable multi-line summary with sources, for the command line."""
        lines = [f"{self.name}  [{self.dataset}]"]
        if self.aliases:
            lines.append(f"  aliases: {', '.join(self.aliases)}")

        def row(label: str, text: str, src: str) -> None:
            # the column is two wider than the longest label (24 characters,
            # "slow-accumulation factor"), so no label runs into its value
            source = self.sources.get(src)
            lines.append(f"  {label:<26}{text}" + (f"   [{source}]" if source else ""))

        row("peak FLOP/s (dense)", ", ".join(
            f"{d} {float(v) / 1e12:g}T" for d, v in self.peak_flops.items()), "peak_flops")
        row("GEMM efficiency", ", ".join(
            f"{d} {float(v):g}" for d, v in self.gemm_efficiency.items()) or "-",
            "gemm_efficiency")
        row("memory bandwidth", f"{float(self.mem_bw) / 1e12:g} TB/s", "mem_bw")
        row("memory efficiency", _opt(self.mem_efficiency), "mem_efficiency")
        row("launch floor", _opt(self.launch_overhead, 1e6, " us"), "launch_overhead")
        if self.host_launch is not None:
            row("host per launch", _opt(self.host_launch, 1e6, " us (events timer)"),
                "host_launch")
        if self.block_scaling is not None:
            row("block-scaled GEMMs", ", ".join(self.block_scaling) or "none", "block_scaling")
        if self.memory_bytes is not None:
            row("memory", f"{float(self.memory_bytes) / 1e9:g} GB", "memory_bytes")
        if self.l2_bytes is not None:
            row("L2 cache", f"{float(self.l2_bytes) / 1e6:g} MB", "l2_bytes")
        # the size-dependent tables: (label, field, scale, unit) of each entry
        for label, name, scale, unit in (
                ("GEMM fixed time", "gemm_fixed_s", 1e6, " us"),
                ("kernel fixed time", "kernel_fixed_s", 1e6, " us"),
                ("kernel efficiency", "kernel_efficiency", 1.0, ""),
                ("scaled-GEMM factor", "scaling_efficiency", 1.0, ""),
                ("grouped-GEMM factor", "grouped_efficiency", 1.0, ""),
                ("slow-accumulation factor", "accumulation_efficiency", 1.0, "")):
            table = getattr(self, name)
            if table:
                row(label, ", ".join(f"{k} {float(v) * scale:.3g}{unit}"
                                     for k, v in table.items()), name)
        if self.has_links:
            row("link bandwidth", ", ".join(f"{k} {float(v) / 1e9:g} GB/s"
                                            for k, v in self.link_bw.items()), "link_bw")
            row("link efficiency", ", ".join(f"{k} {float(v):g}"
                                             for k, v in self.link_efficiency.items()),
                "link_efficiency")
            row("scale-up domain", f"{self.scale_up_gpus} GPUs", "scale_up_gpus")
        lines.extend(f"  note: {n}" for n in self.notes)
        return escape("\n".join(lines))


def fixed_time_prior(key: str) -> str | None:
    """The class whose fixed time a GEMM or kernel class inherits when no
    measurement pins its own: a low-precision or fp16 GEMM the bf16 GEMM's of
    the same structure (the same GPU's launch, prologue and epilogue: a faster
    dtype gets no shorter one), the grouped bf16 GEMM the dense one's, a
    kernel class the contiguous cast's; None at the root (``bf16``, ``cast``:
    then the launch floor).

    >>> fixed_time_prior("fp8_rowwise_grouped"), fixed_time_prior("fp8_rowwise")
    ('bf16_grouped', 'bf16')
    >>> fixed_time_prior("bf16_grouped"), fixed_time_prior("transpose"), fixed_time_prior("bf16")
    ('bf16', 'cast', None)
    """
    if key in S.KERNEL_KINDS:
        return None if key == "cast" else "cast"
    grouped = key.endswith("_grouped")
    if key in ("bf16", "bf16_grouped"):
        return "bf16" if grouped else None
    return "bf16_grouped" if grouped else "bf16"


def _numbers(hw: Hardware) -> Iterator[tuple[str, sympy.Rational]]:
    """Every number of an entry as (field, value), table entries as ``table.key``."""
    for f in fields(hw):
        value = getattr(hw, f.name)
        if isinstance(value, Mapping):
            yield from ((f"{f.name}.{k}", v) for k, v in value.items()
                        if isinstance(v, sympy.Rational))
        elif isinstance(value, sympy.Rational):
            yield f.name, value
        elif isinstance(value, int) and not isinstance(value, bool):  # a count of GPUs
            yield f.name, sympy.Integer(value)


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, Mapping) and not value)


def _opt(value: sympy.Rational | None, scale: float = 1.0, unit: str = "") -> str:
    return "-" if value is None else f"{float(value) * scale:g}{unit}"


_FIELD_OF = {
    "BW": "mem_bw",
    "eta_mem": "mem_efficiency",
    "t_launch": "launch_overhead",
    "t_host": "host_launch",
    **{f"P_{d}": f"peak_flops.{d}" for d in GEMM_DTYPES},
    **{f"eta_{d}": f"gemm_efficiency.{d}" for d in GEMM_DTYPES},
    **{f"t0_{c}": f"gemm_fixed_s.{c}" for c in S.GEMM_CLASSES},
    **{f"t0_{k}": f"kernel_fixed_s.{k}" for k in S.KERNEL_KINDS},
    **{f"eta_{k}": f"kernel_efficiency.{k}" for k in S.KERNEL_KINDS},
    **{f"kappa_{f}": f"scaling_efficiency.{f}" for f in S.SCALING_FAMILIES},
    **{f"kappa_grouped_{d}": f"grouped_efficiency.{d}" for d in GEMM_DTYPES},
    **{f"kappa_accum_{d}": f"accumulation_efficiency.{d}" for d in GEMM_DTYPES},
    **{str(S.link_bandwidth(s)): f"link_bw.{s}" for s in S.LINK_SCOPES},
    **{str(S.link_efficiency(s)): f"link_efficiency.{s}" for s in S.LINK_SCOPES},
}

# The source a field changed by Hardware.replace cites (unless sources= is given).
OVERRIDE_SOURCE = "user override (Hardware.replace)"
# The fields that cite a source (the numbers and block_scaling), in file order.
SOURCED = ("peak_flops", "gemm_efficiency", "mem_bw", "mem_efficiency", "launch_overhead",
           "host_launch",
           "block_scaling", "memory_bytes", "l2_bytes", "gemm_fixed_s", "kernel_fixed_s",
           "kernel_efficiency", "scaling_efficiency", "grouped_efficiency",
           "accumulation_efficiency", "best_shape_efficiency", "link_bw", "link_efficiency",
           "scale_up_gpus")
