"""Hardware descriptions: a frozen ``Hardware`` per GPU, datasets loaded from TOML.

Numbers are kept exact (``Rational`` of the decimal written in the file) and
validated on load: units are in the field names, values must lie in physical
ranges, peaks are dense, fp8 >= bf16, and every number names its source.

>>> import roofline_sym as rs
>>> hw = rs.hardware("h100-sxm")
>>> hw.name, float(hw.mem_bw)
('H100 SXM', 3350000000000.0)
>>> rs.hardware("NVIDIA H200").name
'H200 SXM'
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

import sympy

from . import sources as citations
from .. import symbols as S

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = [
    "Hardware",
    "Dataset",
    "HardwareError",
    "UnknownHardwareError",
    "MissingHardwareValueError",
    "DATASETS",
    "hardware",
    "list_hardware",
    "load_hardware",
    "dataset",
]

DATASETS = ("default", "torchao", "seed")

# Dtypes a peak may be given for; the cost models use bf16, fp8 and fp4.
PEAK_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8")
GEMM_DTYPES = ("bf16", "fp16", "fp8", "fp4")
# Families of block-scaled GEMMs a GPU may run in hardware (Blackwell: both).
BLOCK_SCALINGS = ("mx", "nvfp4")

# Physical ranges with units; a value outside is a typo or a unit error
# (torchao 0.18 shipped an RTX 5090 bandwidth of 1.792e15 B/s).
FLOPS_RANGE = (1e12, 1e17)  # FLOP/s
BW_RANGE = (1e11, 5e13)  # bytes/s
LAUNCH_RANGE = (0.0, 1e-3)  # seconds, lower bound exclusive


class HardwareError(ValueError):
    """A hardware entry or file is invalid; the message names file, entry and field.

    ``field`` and ``reason`` hold the offending field (as ``Hardware`` names it,
    e.g. ``peak_flops.fp8``) and what is wrong with it, where one field is at fault.
    """

    def __init__(self, message: str, *, field: str | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason


class UnknownHardwareError(LookupError):
    """No hardware entry matches a name; the message lists close matches."""


class MissingHardwareValueError(ValueError):
    """A model needs a number this hardware entry does not have."""


def normalize(name: str) -> str:
    """Lower-case, with runs of spaces, underscores and hyphens as one ``-``."""
    return re.sub(r"[\s_\-]+", "-", name.strip().casefold())


class _FieldProblem(Exception):
    """One field of an entry is malformed (raised while converting, then reported)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field, self.reason = field, reason


def _entry_error(entry: Any, field: str, reason: str) -> HardwareError:
    return HardwareError(f"entry {entry!r}, field {field!r}: {reason}",
                         field=field, reason=reason)


def _exact(value: Any, field: str) -> sympy.Rational:
    """The exact Rational of a finite number as written (floats via their shortest repr)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, sympy.Rational)):
        raise _FieldProblem(field, f"expected a number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _FieldProblem(field, f"must be a finite number, got {value!r}")
        return sympy.Rational(repr(float(value)))
    return sympy.Rational(value)


def _mapping(values: Any, field: str) -> Mapping[str, sympy.Rational]:
    if not isinstance(values, Mapping):
        raise _FieldProblem(field, "expected a mapping of dtype to number such as "
                                   f"{{'bf16': ..., 'fp8': ...}}, got {values!r}")
    out = {}
    for key, value in values.items():
        if not isinstance(key, str):
            raise _FieldProblem(field, f"dtype keys must be strings, got {key!r}")
        out[key] = _exact(value, f"{field}.{key}")
    return MappingProxyType(out)


def _strings(values: Any, field: str) -> tuple[str, ...]:
    """A list of strings as a tuple; a bare string is refused (not split into letters)."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise _FieldProblem(field, f"expected a list of strings, got {values!r}")
    out = tuple(values)
    for item in out:
        if not isinstance(item, str):
            raise _FieldProblem(field, f"expected a list of strings, got an item {item!r}")
    return out


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
    block_scaling: tuple[str, ...] | None = None  # None: not stated, not checked
    memory_bytes: sympy.Rational | None = None
    l2_bytes: sympy.Rational | None = None
    aliases: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    dataset: str = "custom"

    def __post_init__(self) -> None:
        def set_(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if not isinstance(self.name, str) or not self.name.strip():
            raise _entry_error(self.name, "name", f"expected a non-empty string, got "
                                                  f"{self.name!r}")
        try:  # field by field, so that an error names the field
            set_("peak_flops", _mapping(self.peak_flops, "peak_flops"))
            set_("gemm_efficiency", _mapping(self.gemm_efficiency, "gemm_efficiency"))
            for name in ("mem_bw", "mem_efficiency", "launch_overhead",
                         "memory_bytes", "l2_bytes"):
                value = getattr(self, name)
                set_(name, None if value is None else _exact(value, name))
            set_("aliases", _strings(self.aliases, "aliases"))
            if self.block_scaling is not None:
                set_("block_scaling", _strings(self.block_scaling, "block_scaling"))
            set_("notes", _strings(self.notes, "notes"))
            if not isinstance(self.sources, Mapping) or not all(
                    isinstance(v, str) for v in self.sources.values()):
                raise _FieldProblem("sources", "expected a mapping of field name to "
                                               f"source text, got {self.sources!r}")
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
            elif not FLOPS_RANGE[0] <= value <= FLOPS_RANGE[1]:
                yield (f"peak_flops.{dtype}", f"{float(value):.4g} FLOP/s is "
                       f"outside {FLOPS_RANGE[0]:.0e}..{FLOPS_RANGE[1]:.0e} FLOP/s")
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
        if not BW_RANGE[0] <= self.mem_bw <= BW_RANGE[1]:
            yield ("mem_bw", f"{float(self.mem_bw):.4g} B/s is outside "
                   f"{BW_RANGE[0]:.0e}..{BW_RANGE[1]:.0e} B/s (a unit error?)")
        for dtype, value in self.gemm_efficiency.items():
            if dtype not in GEMM_DTYPES:
                yield (f"gemm_efficiency.{dtype}", "efficiencies are only for GEMM "
                       f"dtypes ({', '.join(GEMM_DTYPES)}); the models use no other")
            elif dtype not in self.peak_flops:
                yield f"gemm_efficiency.{dtype}", f"there is no {dtype} peak to apply it to"
            elif not 0 < value <= 1:
                yield f"gemm_efficiency.{dtype}", f"{float(value)} is not in (0, 1]"
        if self.mem_efficiency is not None and not 0 < self.mem_efficiency <= 1:
            yield "mem_efficiency", f"{float(self.mem_efficiency)} is not in (0, 1]"
        if self.launch_overhead is not None and not (
            LAUNCH_RANGE[0] < self.launch_overhead <= LAUNCH_RANGE[1]
        ):
            yield ("launch_overhead", f"{float(self.launch_overhead):.4g} s is "
                   f"outside (0, {LAUNCH_RANGE[1]:.0e}] s")
        for name in ("memory_bytes", "l2_bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                yield name, "must be positive"

    # -- identity -----------------------------------------------------------
    def _key(self) -> tuple:
        scaling = None if self.block_scaling is None else tuple(sorted(set(self.block_scaling)))
        return (self.dataset, self.name, tuple(sorted(self.parameters.items(), key=str)),
                scaling)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hardware) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Hardware({self.name!r}, dataset={self.dataset!r})"

    # -- use ----------------------------------------------------------------
    @property
    def parameters(self) -> dict[sympy.Symbol, sympy.Rational]:
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
        return out

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
        for name in _SOURCED:
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

    def describe(self) -> str:
        """A readable multi-line summary with sources, for the command line."""
        lines = [f"{self.name}  [{self.dataset}]"]
        if self.aliases:
            lines.append(f"  aliases: {', '.join(self.aliases)}")

        def row(label: str, text: str, src: str) -> None:
            source = self.sources.get(src)
            lines.append(f"  {label:<22}{text}" + (f"   [{source}]" if source else ""))

        row("peak FLOP/s (dense)", ", ".join(
            f"{d} {float(v) / 1e12:g}T" for d, v in self.peak_flops.items()), "peak_flops")
        row("GEMM efficiency", ", ".join(
            f"{d} {float(v):g}" for d, v in self.gemm_efficiency.items()) or "-",
            "gemm_efficiency")
        row("memory bandwidth", f"{float(self.mem_bw) / 1e12:g} TB/s", "mem_bw")
        row("memory efficiency", _opt(self.mem_efficiency), "mem_efficiency")
        row("launch floor", _opt(self.launch_overhead, 1e6, " us"), "launch_overhead")
        if self.block_scaling is not None:
            row("block-scaled GEMMs", ", ".join(self.block_scaling) or "none", "block_scaling")
        if self.memory_bytes is not None:
            row("memory", f"{float(self.memory_bytes) / 1e9:g} GB", "memory_bytes")
        if self.l2_bytes is not None:
            row("L2 cache", f"{float(self.l2_bytes) / 1e6:g} MB", "l2_bytes")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def _opt(value: sympy.Rational | None, scale: float = 1.0, unit: str = "") -> str:
    return "-" if value is None else f"{float(value) * scale:g}{unit}"


_FIELD_OF = {
    "BW": "mem_bw",
    "eta_mem": "mem_efficiency",
    "t_launch": "launch_overhead",
    **{f"P_{d}": f"peak_flops.{d}" for d in GEMM_DTYPES},
    **{f"eta_{d}": f"gemm_efficiency.{d}" for d in GEMM_DTYPES},
}

# The source a field changed by Hardware.replace cites (unless sources= is given).
OVERRIDE_SOURCE = "user override (Hardware.replace)"

# TOML field (with unit) -> Hardware field
_TOML_FIELDS = {
    "peak_flops_per_s": "peak_flops",
    "gemm_efficiency": "gemm_efficiency",
    "mem_bw_bytes_per_s": "mem_bw",
    "mem_efficiency": "mem_efficiency",
    "launch_overhead_s": "launch_overhead",
    "block_scaling": "block_scaling",
    "memory_bytes": "memory_bytes",
    "l2_bytes": "l2_bytes",
}
_TOML_OTHER = {"name", "aliases", "notes", "sources"}
_TOML_NAME = {hw_field: toml_field for toml_field, hw_field in _TOML_FIELDS.items()}
# Fields that cite a source (numbers and block_scaling).
_SOURCED = tuple(_TOML_FIELDS.values())


def _toml_name(field_name: str) -> str:
    """The TOML name of a Hardware field: 'peak_flops.fp8' -> 'peak_flops_per_s.fp8'."""
    head, dot, rest = field_name.partition(".")
    return _TOML_NAME.get(head, head) + dot + rest


@dataclass(frozen=True)
class Dataset:
    """A named set of hardware entries, looked up by name, alias or device name."""

    name: str
    entries: tuple[Hardware, ...]
    description: str = ""
    path: str | None = None
    _index: Mapping[str, Hardware] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, Hardware] = {}
        where = f"{self.path}: " if self.path else ""
        for hw in self.entries:
            for key in {normalize(hw.name), *map(normalize, hw.aliases)}:
                if key in index and index[key] is not hw:
                    raise HardwareError(
                        f"{where}entry {hw.name!r}, field 'aliases': {key!r} "
                        f"already names {index[key].name!r}"
                    )
                index[key] = hw
        object.__setattr__(self, "_index", MappingProxyType(index))

    def names(self) -> list[str]:
        return [hw.name for hw in self.entries]

    def __iter__(self) -> Iterator[Hardware]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> Hardware:
        """Exact (normalized) match on name or alias; no prefix guessing."""
        if isinstance(name, Hardware):
            return name
        query = normalize(name)
        hit = self._index.get(query)
        if hit is not None:
            return hit
        # suggestions only: names starting with, then containing the query, then
        # close spellings ("NVIDIA H100" -> H100 SXM, H100 PCIe, H100 NVL)
        keys = list(self._index)
        starts = [k for k in keys if query and k.startswith(query)]
        contains = [k for k in keys if query and query in k and k not in starts]
        close = difflib.get_close_matches(query, keys, n=5, cutoff=0.5)
        hint = list(dict.fromkeys(self._index[k].name for k in starts + contains + close))[:5]
        suggestion = f"; did you mean {', '.join(map(repr, hint))}?" if hint else ""
        raise UnknownHardwareError(
            f"no hardware {name!r} in the {self.name} dataset{suggestion} "
            f"(known: {', '.join(self.names())})"
        )


def _parse(data: dict, origin: str, dataset_name: str | None = None) -> Dataset:
    """A validated Dataset from parsed TOML; every error names file, entry and field."""
    def fail(msg: str) -> HardwareError:
        return HardwareError(f"{origin}: {msg}")

    unknown_top = set(data) - {"dataset", "sources", "gpu"}
    if unknown_top:
        raise fail(f"unknown top-level key(s) {sorted(unknown_top)}; expected "
                   "[dataset], [sources] and [[gpu]] entries")
    meta = data.get("dataset", {})
    if not isinstance(meta, dict):
        raise fail(f"[dataset] must be a table (name, description), got {meta!r}")
    for key in ("name", "description"):
        if key in meta and not isinstance(meta[key], str):
            raise fail(f"[dataset], field {key!r}: expected a string, got {meta[key]!r}")
    name = dataset_name or meta.get("name") or Path(origin).stem
    keys = data.get("sources", {})
    if not isinstance(keys, dict):
        raise fail("[sources] must be a table of citation key = text")
    for key, text in keys.items():
        if not isinstance(text, str) or not text.strip():
            raise fail(f"[sources], key {key!r}: the citation must be a non-empty string, "
                       f"got {text!r}")
    entries = data.get("gpu")
    if entries is not None and not isinstance(entries, list):
        raise fail(f"'gpu' must be an array of [[gpu]] tables, got {entries!r}")
    if not entries:
        raise fail("no [[gpu]] entries")
    out = []
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise fail(f"entry #{i + 1}: expected a [[gpu]] table, got {raw!r}")
        if "name" not in raw:
            raise fail(f"entry #{i + 1}: field 'name' is required")
        if not isinstance(raw["name"], str) or not raw["name"].strip():
            raise fail(f"entry #{i + 1}, field 'name': expected a non-empty string, "
                       f"got {raw['name']!r}")
        label = repr(raw["name"])
        unknown = set(raw) - set(_TOML_FIELDS) - _TOML_OTHER
        if unknown:
            sparse = [k for k in unknown if "sparse" in k]
            why = ("sparse peaks are not accepted; give dense FLOP/s in "
                   "peak_flops_per_s") if sparse else (
                f"expected {', '.join(sorted(set(_TOML_FIELDS) | _TOML_OTHER))}")
            raise fail(f"entry {label}, field {sorted(unknown)[0]!r}: unknown field; {why}")
        for required in ("peak_flops_per_s", "mem_bw_bytes_per_s"):
            if required not in raw:
                raise fail(f"entry {label}, field {required!r}: required")
        for table in ("peak_flops_per_s", "gemm_efficiency"):
            if table in raw and not isinstance(raw[table], dict):
                raise fail(f"entry {label}, field {table!r}: expected a table such as "
                           f"{{ bf16 = ..., fp8 = ... }}, got {raw[table]!r}")
        sources = raw.get("sources", {})
        if not isinstance(sources, dict):
            raise fail(f"entry {label}, field 'sources': expected a [gpu.sources] table of "
                       f"field = source text, got {sources!r}")
        expanded = {}
        for toml_field, hw_field in _TOML_FIELDS.items():
            if toml_field not in raw:
                continue
            if toml_field not in sources:
                raise fail(f"entry {label}, field {toml_field!r}: has no source; "
                           "add it under [gpu.sources]")
            problem = citations.problem(sources[toml_field], keys)
            if problem:
                raise fail(f"entry {label}, field {toml_field!r}: source {problem}")
            expanded[hw_field] = citations.expand(sources[toml_field], keys)
        stray = set(sources) - set(raw) - {"name"}
        if stray:
            raise fail(f"entry {label}, field 'sources': source(s) for absent field(s) "
                       f"{sorted(stray)}")
        kwargs = {hw_field: raw[toml_field] for toml_field, hw_field in _TOML_FIELDS.items()
                  if toml_field in raw}
        try:
            out.append(Hardware(
                aliases=raw.get("aliases", ()), notes=raw.get("notes", ()),
                sources=expanded, dataset=name, **kwargs, name=raw["name"],
            ))
        except HardwareError as exc:
            if exc.field is None:
                raise fail(str(exc)) from None
            raise fail(f"entry {label}, field {_toml_name(exc.field)!r}: {exc.reason}") from None
    return Dataset(name, tuple(out), meta.get("description", ""), origin)


def load_hardware(path: str | Path) -> Dataset:
    """Load and validate a hardware TOML file (same schema as the shipped data).

    Errors name the file, the entry and the field.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise HardwareError(f"{path}: cannot read hardware file ({exc.strerror})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise HardwareError(f"{path}: not valid TOML ({exc})") from None
    return _parse(data, str(path))


@cache
def dataset(name: str = "default") -> Dataset:
    """A shipped dataset: ``default``, ``torchao`` (torchao 0.18) or ``seed``."""
    if name not in DATASETS:
        raise ValueError(f"unknown hardware dataset {name!r}; known: {', '.join(DATASETS)}")
    text = resources.files("roofline_sym").joinpath("data", f"{name}.toml").read_text("utf-8")
    return _parse(tomllib.loads(text), f"roofline_sym/data/{name}.toml", name)


def hardware(name: str | Hardware, dataset: str | Dataset = "default") -> Hardware:
    """Look up hardware by name, alias or ``torch.cuda.get_device_name()`` string.

    >>> hardware("NVIDIA H100", dataset="torchao").name
    'NVIDIA H100'
    """
    if isinstance(name, Hardware):
        return name
    return _dataset(dataset).get(name)


def list_hardware(dataset: str | Dataset = "default") -> list[str]:
    """Names of the entries of a dataset.

    >>> "H200 SXM" in list_hardware()
    True
    """
    return _dataset(dataset).names()


def _dataset(ds: str | Dataset) -> Dataset:
    return ds if isinstance(ds, Dataset) else dataset(ds)

