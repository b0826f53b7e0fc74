"""Hardware TOML files: the reader and the writer, one schema.

The schema is that of ``roofline_sym/data/*.toml``: a ``[dataset]`` table,
``[sources]`` (citation keys), and ``[[gpu]]`` entries whose field names
carry their units (``mem_bw_bytes_per_s``), each with a ``[gpu.sources]``
text citing the keys.  ``parse``/``load_hardware`` read and validate (errors
name the file, the entry and the field); ``hardware_toml`` writes one entry
and ``write_hardware`` writes it only once it reads back.

>>> from roofline_sym.devices import hardware
>>> text = hardware_toml(hardware("h200"), {t: "assumed; for the example"
...                      for t in toml_fields(hardware("h200"))}, {})
>>> parse(tomllib.loads(text), "<example>").entries[0].mem_bw
4800000000000
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import sources as citations
from .datasets import Dataset
from ..datafile import read_text
from ..validate import InputTypeError, escape, label as file_label, path as valid_path, show
from .calibration import Carried, Fitted, parse_calibration
from .hardware_entry import Hardware, HardwareError

if sys.version_info >= (3, 11):
    import tomllib as tomllib  # "as": re-exported, catalog reads with it too
else:  # Python 3.10
    import tomli as tomllib

__all__ = ["TOML_FIELDS", "toml_name", "toml_fields", "parse", "load_hardware",
           "cited_sources", "hardware_toml", "edit_entries", "writable_path",
           "write_hardware"]

# TOML field (with unit) -> Hardware field
TOML_FIELDS = {
    "peak_flops_per_s": "peak_flops",
    "gemm_efficiency": "gemm_efficiency",
    "mem_bw_bytes_per_s": "mem_bw",
    "mem_efficiency": "mem_efficiency",
    "launch_overhead_s": "launch_overhead",
    "host_launch_s": "host_launch",
    "block_scaling": "block_scaling",
    "memory_bytes": "memory_bytes",
    "l2_bytes": "l2_bytes",
    "gemm_fixed_s": "gemm_fixed_s",
    "kernel_fixed_s": "kernel_fixed_s",
    "kernel_efficiency": "kernel_efficiency",
    "scaling_efficiency": "scaling_efficiency",
    "grouped_efficiency": "grouped_efficiency",
    "accumulation_efficiency": "accumulation_efficiency",
    "best_shape_efficiency": "best_shape_efficiency",
    "link_bw_bytes_per_s": "link_bw",
    "link_efficiency": "link_efficiency",
    "scale_up_gpus": "scale_up_gpus",
}
# fields without a source: names, notes, the sources themselves, the tensor-core
# generation and how the entry's size-dependent numbers were calibrated
_OTHER = {"name", "aliases", "notes", "sources", "generation", "calibration"}
_TOML_NAME = {hw_field: toml_field for toml_field, hw_field in TOML_FIELDS.items()}


def toml_name(field_name: str) -> str:
    """The TOML name of a Hardware field: 'peak_flops.fp8' -> 'peak_flops_per_s.fp8'."""
    head, dot, rest = field_name.partition(".")
    return _TOML_NAME.get(head, head) + dot + rest


# -- reading -------------------------------------------------------------------------
def parse(data: dict[str, Any], origin: str, dataset_name: str | None = None) -> Dataset:
    """A validated Dataset from parsed TOML; every error names file, entry and field."""
    def fail(msg: str) -> HardwareError:
        return HardwareError(f"{file_label(origin)}: {msg}")

    unknown_top = set(data) - {"dataset", "sources", "gpu"}
    if unknown_top:
        raise fail(f"unknown top-level key(s) {sorted(unknown_top)}; expected "
                   "[dataset], [sources] and [[gpu]] entries")
    meta = data.get("dataset", {})
    if not isinstance(meta, dict):
        raise fail(f"[dataset] must be a table (name, description), got {show(meta)}")
    for key in ("name", "description"):
        if key in meta and not isinstance(meta[key], str):
            raise fail(f"[dataset], field {show(key)}: expected a string, got {show(meta[key])}")
    name = dataset_name or meta.get("name") or Path(origin).stem
    keys = data.get("sources", {})
    if not isinstance(keys, dict):
        raise fail("[sources] must be a table of citation key = text")
    for key, text in keys.items():
        if not isinstance(text, str) or not text.strip():
            raise fail(f"[sources], key {show(key)}: the citation must be a non-empty string, "
                       f"got {show(text)}")
    entries = data.get("gpu")
    if entries is not None and not isinstance(entries, list):
        raise fail(f"'gpu' must be an array of [[gpu]] tables, got {show(entries)}")
    if not entries:
        raise fail("no [[gpu]] entries")
    out = [_entry(raw, i, keys, name, fail) for i, raw in enumerate(entries)]
    fitted = {hw.name for hw in out if isinstance(hw.calibration, Fitted)}
    for hw in out:
        if isinstance(hw.calibration, Carried) and hw.calibration.origin not in fitted:
            raise fail(f"entry {show(hw.name)}, field 'calibration': carried_from "
                       f"{show(hw.calibration.origin)} is no fitted entry of this file")
    return Dataset(name, tuple(out), meta.get("description", ""), origin)


def _entry(raw: Any, i: int, keys: Mapping[str, str], name: str,
           fail: Callable[[str], HardwareError]) -> Hardware:
    """Entry ``i`` (a ``[[gpu]]`` table) of dataset ``name``, validated."""
    if not isinstance(raw, dict):
        raise fail(f"entry #{i + 1}: expected a [[gpu]] table, got {show(raw)}")
    if "name" not in raw:
        raise fail(f"entry #{i + 1}: field 'name' is required")
    if not isinstance(raw["name"], str) or not raw["name"].strip():
        raise fail(f"entry #{i + 1}, field 'name': expected a non-empty string, "
                   f"got {show(raw['name'])}")
    label = show(raw["name"])
    unknown = set(raw) - set(TOML_FIELDS) - _OTHER
    if unknown:
        sparse = [k for k in unknown if "sparse" in k]
        why = ("sparse peaks are not accepted; give dense FLOP/s in "
               "peak_flops_per_s") if sparse else (
            f"expected {', '.join(sorted(set(TOML_FIELDS) | _OTHER))}")
        raise fail(f"entry {label}, field {show(sorted(unknown)[0])}: unknown field; {why}")
    for required in ("peak_flops_per_s", "mem_bw_bytes_per_s"):
        if required not in raw:
            raise fail(f"entry {label}, field {show(required)}: required")
    for table in ("peak_flops_per_s", "gemm_efficiency", "gemm_fixed_s", "kernel_fixed_s",
                  "kernel_efficiency", "scaling_efficiency", "grouped_efficiency",
                  "accumulation_efficiency", "best_shape_efficiency", "link_bw_bytes_per_s",
                  "link_efficiency"):
        if table in raw and not isinstance(raw[table], dict):
            raise fail(f"entry {label}, field {show(table)}: expected a table such as "
                       f"{{ bf16 = ..., fp8 = ... }}, got {show(raw[table])}")
    sources = raw.get("sources", {})
    if not isinstance(sources, dict):
        raise fail(f"entry {label}, field 'sources': expected a [gpu.sources] table of "
                   f"field = source text, got {show(sources)}")
    expanded = {}
    for toml_field, hw_field in TOML_FIELDS.items():
        if toml_field not in raw:
            continue
        if toml_field not in sources:
            raise fail(f"entry {label}, field {show(toml_field)}: has no source; "
                       "add it under [gpu.sources]")
        problem = citations.problem(sources[toml_field], keys)
        if problem:
            raise fail(f"entry {label}, field {show(toml_field)}: source {problem}")
        expanded[hw_field] = citations.expand(sources[toml_field], keys)
    stray = set(sources) - set(raw) - {"name"}
    if stray:
        raise fail(f"entry {label}, field 'sources': source(s) for absent field(s) "
                   f"{sorted(stray)}")
    kwargs = {hw_field: raw[toml_field] for toml_field, hw_field in TOML_FIELDS.items()
              if toml_field in raw}
    calibration = None
    if "calibration" in raw:
        try:
            calibration = parse_calibration(raw["calibration"], f"entry {label}")
        except ValueError as exc:
            raise fail(str(exc)) from None
        if isinstance(calibration, Fitted):  # its numbers cite as the fields do
            for number, (_, text) in {**calibration.fixed, **calibration.priors}.items():
                problem = citations.problem(text, keys)
                if problem:
                    raise fail(f"entry {label}, field 'calibration', number {show(number)}: "
                               f"source {problem}")
    try:
        return Hardware(
            aliases=raw.get("aliases", ()), notes=raw.get("notes", ()),
            generation=raw.get("generation"), calibration=calibration,
            sources=expanded, dataset=name, **kwargs, name=raw["name"],
        )
    except HardwareError as exc:
        if exc.field is None:
            raise fail(str(exc)) from None
        raise fail(f"entry {label}, field {show(toml_name(exc.field))}: {exc.reason}") from None


def load_hardware(path: str | os.PathLike[str]) -> Dataset:
    """Load and validate a hardware TOML file (same schema as the shipped data).

    Errors name the file, the entry and the field.
    """
    try:
        name, text = read_text(path, "hardware file")
    except InputTypeError:
        raise
    except ValueError as exc:
        raise HardwareError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HardwareError(f"{file_label(name)}: not valid TOML ({escape(str(exc))})") from None
    except RecursionError:
        raise HardwareError(f"{file_label(name)}: arrays or tables nested too deeply to read") \
            from None
    return parse(data, name)


def cited_sources(path: str | os.PathLike[str]) -> tuple[dict[str, str], list[dict[str, str]]]:
    """A hardware file's sources as written: its ``[sources]`` (key -> citation)
    and each entry's ``[gpu.sources]`` (TOML field -> text citing the keys);
    read after ``load_hardware`` has validated the file."""
    data = tomllib.loads(read_text(path, "hardware file")[1])
    return dict(data.get("sources", {})), [dict(g.get("sources", {})) for g in data["gpu"]]


# -- writing -------------------------------------------------------------------------
def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, Mapping) and not value)


def _str(text: str) -> str:
    import json  # only writing a file needs it

    return json.dumps(str(text), ensure_ascii=False)  # JSON escapes are valid TOML


def _num(value: Any) -> str:
    """The shortest decimal that reads back as the same float, in e-notation
    for very large or small numbers (989.4e12 as 9.894e+14, not 989400000000000.0)."""
    v = float(value)
    if v != 0 and not 1e-3 <= abs(v) < 1e5:
        return np.format_float_scientific(v, unique=True, trim="-")
    return repr(v)


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_num(v)}" for k, v in value.items()) + " }"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(_str, value)) + "]"
    if isinstance(value, int):  # a count stays a TOML integer
        return str(value)
    return _num(value)


def toml_fields(hw: Hardware) -> dict[str, str]:
    """``{TOML field: Hardware field}`` of the fields ``hw`` has, in file order."""
    return {t: h for t, h in TOML_FIELDS.items() if _present(getattr(hw, h))}


def hardware_toml(hw: Hardware, field_sources: Mapping[str, str], keys: Mapping[str, str], *,
                  dataset: str = "calibrated", description: str = "",
                  comments: Sequence[str] = ()) -> str:
    """One entry as a hardware file: ``comments`` (``#`` lines), ``[dataset]``,
    the citation ``keys`` as ``[sources]``, the ``[[gpu]]`` with every field
    ``hw`` has, and ``field_sources`` (TOML field -> source text) as
    ``[gpu.sources]``."""
    lines = [f"# {c}" for c in comments]
    lines += ["", "[dataset]", f"name = {_str(dataset)}", "description = " + _str(description),
              "", "[sources]"]
    lines += [f"{k} = {_str(v)}" for k, v in keys.items()]
    lines += ["", "[[gpu]]", f"name = {_str(hw.name)}"]
    if hw.aliases:
        lines.append(f"aliases = [{', '.join(map(_str, hw.aliases))}]")
    if hw.generation is not None:
        lines.append(f"generation = {_str(hw.generation)}")
    for toml_field, hw_field in toml_fields(hw).items():
        lines.append(f"{toml_field} = {_value(getattr(hw, hw_field))}")
    if hw.notes:
        lines.append("notes = [")
        lines += [f"    {_str(n)}," for n in hw.notes]
        lines.append("]")
    lines += ["", "[gpu.sources]"]
    lines += [f"{t} = {_str(field_sources[t])}" for t in toml_fields(hw)]
    return "\n".join(lines) + "\n"


def _headers(lines: Sequence[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.lstrip().startswith("[")] + [len(lines)]


def _section(lines: Sequence[str], start: int) -> tuple[int, int]:
    """The lines of the table whose header is at ``start``: (first, end)."""
    return start + 1, next(h for h in _headers(lines) if h > start)


def _set(lines: list[str], first: int, end: int, key: str, line: str, anchors: Sequence[str]
         ) -> int:
    """Set ``key``'s line within ``lines[first:end]`` (or add it after the first
    of ``anchors`` found there, else at the end); returns the change of length."""
    for i in range(first, end):
        if lines[i].split("=", 1)[0].strip() == key:
            lines[i] = line
            return 0
    at = next((i for a in anchors for i in range(first, end)
               if lines[i].split("=", 1)[0].strip() == a), None)
    if at is None:  # after the section's last line that holds anything
        at = max([i for i in range(first, end) if lines[i].strip()] + [first - 1])
    lines.insert(at + 1, line)
    return 1


def _written(value: Any, digits: int) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_written(v, digits)}" for k, v in value.items()) + " }"
    return f"{float(value):.{digits}g}"


def edit_entries(text: str, changes: Mapping[str, Mapping[str, tuple[Any, str]]],
                 origin: str = "<text>", digits: int = 4) -> str:
    """A hardware file's ``text`` with, in each entry named in ``changes``
    (``{entry name: {TOML field: (value, source text)}}``), each field set to
    its value (a number or a table of numbers, ``digits`` significant digits)
    and its ``[gpu.sources]`` line to the source; a field the entry lacks goes
    after its ``launch_overhead_s`` (else ``mem_bw_bytes_per_s``).  Comments,
    order and everything else stay as written.  The result must read back
    (``parse``) with every value as set, else ``HardwareError``.

    >>> from roofline_sym.devices.catalog import _shipped
    >>> new = edit_entries(_shipped("seed"), {"NVIDIA H100": {"gemm_efficiency": (
    ...     {"bf16": 0.7}, "assumed; for the example")}})
    >>> parse(tomllib.loads(new), "<example>").entries[0].gemm_efficiency["bf16"]
    7/10
    """
    lines = text.split("\n")
    for start in [i for i in _headers(lines)[:-1] if lines[i].strip() == "[[gpu]]"][::-1]:
        first, end = _section(lines, start)
        names = [str(tomllib.loads(lines[i])["name"]) for i in range(first, end)
                 if lines[i].split("=", 1)[0].strip() == "name"]
        if not names or names[0] not in changes:
            continue
        sources = next((h for h in _headers(lines) if h > start and (
            h == len(lines) or lines[h].strip() in ("[gpu.sources]", "[[gpu]]"))), len(lines))
        if sources == len(lines) or lines[sources].strip() != "[gpu.sources]":
            raise HardwareError(f"{file_label(origin)}: entry {show(names[0])} has no "
                                "[gpu.sources] table to cite the new values")
        for key, (value, source) in changes[names[0]].items():
            s_first, s_end = _section(lines, sources)
            _set(lines, s_first, s_end, key, f"{key} = {_str(source)}",
                 ("launch_overhead_s", "mem_bw_bytes_per_s"))
            sources += _set(lines, first, end, key, f"{key} = {_written(value, digits)}",
                            ("launch_overhead_s", "mem_bw_bytes_per_s"))
            end = _section(lines, start)[1]
    out = "\n".join(lines)
    _check_edits(out, changes, origin, digits)
    return out


def _check_edits(text: str, changes: Mapping[str, Mapping[str, tuple[Any, str]]],
                 origin: str, digits: int) -> None:
    """Every entry of ``changes`` reads back from ``text`` with the values set."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HardwareError(f"{file_label(origin)}: an edit broke the file "
                            f"({escape(str(exc))})") from None
    parse(data, origin)
    raw = {g.get("name"): g for g in data.get("gpu", [])}
    for name, fields in changes.items():
        if name not in raw:
            raise HardwareError(f"{file_label(origin)}: no entry {show(name)} to edit")
        for key, (value, source) in fields.items():
            want = tomllib.loads(f"x = {_written(value, digits)}")["x"]
            if raw[name].get(key) != want or raw[name]["sources"].get(key) != source:
                raise HardwareError(f"{file_label(origin)}: entry {show(name)}, field "
                                    f"{show(key)} does not read back as written (a value "
                                    "over several lines?)")


def writable_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a place to write a hardware file: a ``.toml`` name that is a
    regular file if it exists (a device, a pipe or a folder is never replaced);
    else ``HardwareError``.  Check it before the work that makes the file."""
    path = Path(valid_path(path, "hardware file"))
    if path.suffix.lower() != ".toml":
        raise HardwareError(f"{file_label(path)}: a hardware file is written as .toml")
    if path.exists() and not path.is_file():
        raise HardwareError(f"{file_label(path)}: exists and is not a regular file")
    return path


def write_hardware(text: str, path: str | os.PathLike[str]) -> Path:
    """Write a hardware file's ``text`` to ``path`` only if it loads back.

    The text goes to a temporary file next to ``path`` and through
    ``load_hardware`` (the validation shipped data passes); only then is it
    moved to ``path``.  A text that does not load raises ``HardwareError`` and
    leaves no file behind (nor changes an existing one).
    """
    path = writable_path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
        load_hardware(tmp)
        os.replace(tmp, path)
    except HardwareError as exc:
        raise HardwareError(str(exc).replace(str(tmp), str(path))) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
