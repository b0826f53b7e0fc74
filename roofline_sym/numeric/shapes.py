"""Shape sets: named lists of linear-layer shapes (M, K, N) to sweep.

The shipped sets live in ``data/shapes.toml`` with a source for every number:
torchao's benchmark generators (``pow2``, ``pow2_extended``, ``sweep``,
``llama``, ``dsv3-671b``, ``dsv3-16b-671b``), the linear layers of Llama 3
8B / 70B / 405B, and two mixtures of experts (``dsv3-671b-moe``,
``qwen3-30b-a3b``) whose routed experts are grouped GEMMs.  Generators are
stored as definitions (a grid, a list of powers) and expanded here; model
sets list each layer's (K, N) and how many times it occurs, and take the
token count M as a parameter.  An expert layer has ``groups`` (its experts)
and ``top_k`` (experts per token): its M is ``top_k`` times the tokens.

>>> s = shape_set("llama3-8b", M=4096)
>>> s.names[:2], s.K[:2], s.N[:2]
(('self_attn.q_proj', 'self_attn.k_proj'), array([4096., 4096.]), array([4096., 1024.]))
>>> int(s.counts[0]), len(shape_set("sweep"))
(32, 512)
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Sequence as _Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, NoReturn, Sequence

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from ..architectures import Architecture, architecture as find_architecture
from ..devices import sources as citations
from ..datafile import Delimited, data_file, nested_input, parse_json, read_text, where
from ..errors import InputError
from ..validate import (MAX_ELEMENTS, MAX_ROWS, SHAPE_MAX, InputTypeError, broadcast_shape,
                        check_size, escape, has_control, label as file_label, parse_number,
                        path as validate_path, positive_array, show, text as valid_text,
                        unknown_name)

__all__ = ["ShapeSet", "RowNames", "shape_set", "list_shape_sets", "grid", "load_shape_sets"]

_KINDS = ("cube", "product", "layers")
# fields a [[set]] may carry, per kind; "sources" and "notes" are always allowed
_FIELDS = {
    "cube": {"x"},
    "product": {"M", "K", "N"},
    "layers": {"tokens", "blocks", "layers", "params", "architecture", "layer_names"},
}
_COMMON = {"name", "kind", "description", "notes", "sources"}
_LAYER_FIELDS = {"name", "K", "N", "count", "blocks", "groups", "top_k"}


class RowNames(_Sequence[str]):
    """The default names of ``n`` rows, ``'0', '1', ...``: made when read, not
    stored, so a set of ten million shapes holds no ten million strings.  Equal
    to a tuple of the same names.

    >>> names = RowNames(3)
    >>> names, names[-1], names[1:], names == ("0", "1", "2")
    (('0', '1', '2'), '2', ('1', '2'), True)
    """

    __slots__ = ("_n",)

    def __init__(self, n: int):
        self._n = int(n)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        rows = range(self._n)[i]
        return tuple(map(str, rows)) if isinstance(i, slice) else str(rows)

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self._n))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, RowNames):
            return self._n == other._n
        if isinstance(other, (tuple, list)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self)) if self._n <= 20 else f"RowNames({self._n})"


@dataclass(frozen=True, eq=False)
class ShapeSet:
    """Rows of (name, M, K, N, count); ``M, K, N, counts`` are read-only float64
    arrays (given read-only float64 arrays are kept, others copied).

    ``names``: a tuple of str, or ``RowNames`` (``'0', '1', ...``) when rows
    have no names; ``counts``: how many times each shape occurs in the model
    (1 for a plain list of shapes); ``tokens``: the M a model set was built
    with (None for generators and files); ``groups``: per row, the experts of
    a grouped GEMM (1: a dense layer), whose M counts the rows routed to all
    of them.

    >>> s = ShapeSet.from_arrays([1024, 2048], 4096, 4096, name="two")
    >>> len(s), s.M.tolist(), s.names
    (2, [1024.0, 2048.0], ('0', '1'))
    """

    name: str
    M: np.ndarray
    K: np.ndarray
    N: np.ndarray
    names: Sequence[str]
    counts: np.ndarray
    description: str = ""
    tokens: float | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    groups: Any = None

    def __post_init__(self) -> None:
        valid_text(self.name, "shape set name")
        if isinstance(self.names, (str, bytes)) or not isinstance(self.names, Iterable):
            raise InputTypeError(f"shape set {self.name!r}: names must be a sequence of "
                                 f"strings, not {show(self.names)}")
        rows = (len(self.M) if isinstance(self.M, np.ndarray) and self.M.ndim == 1
                else np.size(positive_array(self.M, f"shape set {self.name!r}: M")))
        # one group per row unless given: a read-only view of a single 1, not n of them
        groups = np.float64(1.0) if self.groups is None else self.groups
        if np.ndim(groups) == 0 or np.size(groups) == 1:
            groups = np.broadcast_to(
                positive_array(groups, f"shape set {self.name!r}: groups").reshape(-1), (rows,))
        object.__setattr__(self, "groups", groups)
        arrays = {}
        for label in ("M", "K", "N", "counts", "groups"):
            arr = getattr(self, label)
            what = f"shape set {self.name!r}: {label}"
            # a row is a real layer: whole numbers, dimensions up to 2**53
            limit = SHAPE_MAX if label in ("M", "K", "N") else math.inf
            if not (isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.ndim == 1
                    and not arr.flags.writeable):  # read-only arrays are not copied
                arr = np.array(positive_array(arr, what, limit, integer=True),
                               dtype=np.float64).reshape(-1)
            # a broadcast value (strides 0, as the default counts and groups) once
            values = arr[:1] if arr.strides == (0,) else arr
            if not np.all((values > 0) & (values <= limit) & (values == np.floor(values))):
                positive_array(values, what, limit, integer=True)  # raises, naming the row
            check_size(arr.size, f"shape set {self.name!r}", MAX_ELEMENTS)
            arrays[label] = arr
        for arr in arrays.values():
            arr.setflags(write=False)  # rows are data: a sweep must not change them
        n = len(arrays["M"])
        # default names are made when read (RowNames): nothing to check
        names = (self.names if isinstance(self.names, RowNames)
                 else tuple(itertools.islice(self.names, n + 1)))  # no more than needed
        for name in () if isinstance(names, RowNames) else names:
            if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, int, np.integer)):
                raise InputTypeError(f"shape set {self.name!r}: names must be strings, not "
                                     f"{type(name).__name__} {show(name)}")
        if not isinstance(names, RowNames):
            names = tuple(map(str, names))
        if any(len(a) != n for a in arrays.values()) or len(names) != n:
            raise InputError(f"shape set {self.name!r}: M, K, N, counts, groups and names "
                             "must have one entry per row")
        if not isinstance(names, RowNames) and has_control("".join(names)):
            i = next(i for i, name in enumerate(names) if has_control(name))
            raise InputError(f"shape set {self.name!r}, row {i + 1}: the name {show(names[i])} "
                             "contains control characters")
        for label, arr in arrays.items():
            object.__setattr__(self, label, arr)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        object.__setattr__(self, "notes", tuple(self.notes))

    # -- building --------------------------------------------------------------
    @classmethod
    def from_arrays(cls, M: Any, K: Any, N: Any, names: Sequence[str] | None = None,
                    counts: Any = 1, name: str = "shapes", groups: Any = 1) -> "ShapeSet":
        """Shapes from numbers or arrays (numpy broadcasting, then flattened)."""
        arrays = {label: _numeric_array(v, label, SHAPE_MAX)
                  for v, label in ((M, "M"), (K, "K"), (N, "N"))}
        broadcast_shape(arrays, MAX_ELEMENTS)
        # copies of their own, read-only, that the set keeps
        m, k, n = (_read_only(a.reshape(-1).copy()) for a in np.broadcast_arrays(*arrays.values()))
        counts, groups = _numeric_array(counts, "counts"), _numeric_array(groups, "groups")
        broadcast_shape({"M, K, N": m, "counts": counts, "groups": groups})
        try:  # one count and one group size per shape, or one for all
            counts, groups = np.broadcast_to(counts, m.shape), np.broadcast_to(groups, m.shape)
        except ValueError:
            raise InputError(f"counts (shape {counts.shape}) and groups (shape {groups.shape}) "
                             f"must be one number or one per shape ({len(m)})") from None
        names = names if names is not None else RowNames(len(m))
        return cls(name, m, k, n, names, counts, groups=groups)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], name: str | None = None) -> "ShapeSet":
        """Read rows ``M, K, N[, name, count]`` from a ``.csv`` or ``.json`` file.

        CSV needs a header row; JSON is a list of objects (or of ``[M, K, N]``
        lists), or an object with such a list under ``"shapes"``.  The file is
        UTF-8, with or without a byte-order mark (as Excel writes CSV); column
        names are case-insensitive and each may appear once.  Numbers are
        parsed (``int``/``float``), never evaluated; a bad row is a ValueError
        naming the file and the row.
        """
        path = validate_path(path, "shape file")
        shown = file_label(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in (".csv", ".json"):
            if not os.path.exists(path):
                read_text(path, "shape file")  # the error for a file that is not there
            raise InputError(f"{shown}: unknown shape file type {show(suffix)}; use .csv or .json")
        if suffix == ".csv":
            m, k, n, names, counts = _read_csv(path)
        else:
            m, k, n, names, counts = _read_json(path)
        label = name or escape(os.path.splitext(os.path.basename(path))[0])
        return cls(label, m, k, n, names, counts, description=f"from {path}")

    # -- reading -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.M)

    def __iter__(self) -> Iterator[tuple[str, float, float, float, float]]:
        """Rows as ``(name, M, K, N, count)``."""
        return zip(self.names, self.M.tolist(), self.K.tolist(), self.N.tolist(),
                   self.counts.tolist())

    @property
    def grouped(self) -> bool:
        """Whether any row is a grouped GEMM (more than one expert)."""
        return bool(np.any(self.groups > 1))

    @property
    def flops(self) -> np.ndarray:
        """FLOPs of one forward GEMM per row, ``2 M K N`` (not times counts)."""
        flops: np.ndarray = 2 * self.M * self.K * self.N
        return flops

    @property
    def total_flops(self) -> float:
        """Forward FLOPs of all layers, counts included: ``sum(count * 2 M K N)``."""
        return float(np.sum(self.counts * self.flops))

    def __repr__(self) -> str:
        tokens = f", M={self.tokens:g}" if self.tokens is not None else ""
        return f"ShapeSet({self.name!r}, {len(self)} shapes{tokens})"


# -- the shipped sets -------------------------------------------------------------
@dataclass(frozen=True)
class _Definition:
    """One [[set]] of a shapes TOML file, validated, not yet expanded."""

    name: str
    kind: str
    raw: Mapping[str, Any]
    sources: Mapping[str, str]
    params: Mapping[str, float]

    def build(self, M: Any = None, **params: Any) -> ShapeSet:
        raw = self.raw
        common = dict(description=raw.get("description", ""), sources=self.sources,
                      notes=tuple(raw.get("notes", ())))
        if self.kind != "layers":
            if M is not None or params:
                given = ", ".join(["M"] * (M is not None) + sorted(params))
                models = [n for n, d in _definitions().items() if d.kind == "layers"]
                raise InputError(f"shape set {self.name!r} is a fixed grid and takes no "
                                 f"{given}; M= and parameters apply to model sets "
                                 f"({', '.join(models)})")
            if self.kind == "cube":
                x = _values(raw["x"])
                return ShapeSet(self.name, x, x, x, tuple(map(str, range(len(x)))),
                                np.ones(len(x)), **common)
            rows = list(itertools.product(*(_values(raw[d]) for d in "MKN")))
            m, k, n = (np.array(c, dtype=float) for c in zip(*rows))
            return ShapeSet(self.name, m, k, n, tuple(map(str, range(len(rows)))),
                            np.ones(len(rows)), **common)
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise unknown_name("parameter", unknown[0], ["M", *sorted(self.params)],
                               where=f"shape set {self.name!r}: ")
        values = {**self.params, **{k: _positive(v, k, strict_type=True, integer=True)
                                    for k, v in params.items()}}
        tokens = float(raw["tokens"]) if M is None else _positive(M, "M", strict_type=True,
                                                                  integer=True)
        layers = raw["layers"] if "layers" in raw else _architecture_layers(raw)

        def dim(v: str | float) -> float:  # a number, or the name of a parameter
            return float(values[v] if isinstance(v, str) else v)

        counts = [lay["count"] * lay.get("blocks", raw.get("blocks", 1)) for lay in layers]
        return ShapeSet(self.name, np.asarray([tokens * lay.get("top_k", 1) for lay in layers]),
                        np.asarray([dim(lay["K"]) for lay in layers]),
                        np.asarray([dim(lay["N"]) for lay in layers]),
                        tuple(lay["name"] for lay in layers), np.asarray(counts), tokens=tokens,
                        groups=[lay.get("groups", 1) for lay in layers], **common)


def shape_set(name: str | ShapeSet, M: Any = None, **params: Any) -> ShapeSet:
    """A shipped shape set by name; model sets take the token count ``M``.

    ``params``: a set's own parameters (``dsv3-16b-671b`` takes ``dim`` and
    ``inter_dim``).  Generators (``pow2``, ``sweep``, ...) fix M.

    >>> shape_set("pow2_extended").M[:4].tolist()
    [1024.0, 1536.0, 2048.0, 3072.0]
    >>> shape_set("llama").tokens
    16384.0
    """
    if isinstance(name, ShapeSet):
        if M is not None or params:
            raise InputError("M= and parameters apply to a set name, not to a ShapeSet")
        return name
    defs = _definitions()
    if not isinstance(name, str):
        raise InputTypeError(f"a shape set is a name or a ShapeSet, not {type(name).__name__} "
                             f"{show(name)}")
    if name not in defs:
        raise unknown_name("shape set", name, defs)
    return defs[name].build(M, **params)


def list_shape_sets() -> list[str]:
    """Names of the shipped shape sets.

    >>> list_shape_sets()[:3]
    ['pow2', 'pow2_extended', 'sweep']
    """
    return list(_definitions())


def grid(M: Any, K: Any, N: Any, name: str = "grid") -> ShapeSet:
    """Every (M, K, N) of the given values, M outermost and N innermost.

    >>> g = grid(M=[1024, 2048], K=4096, N=[4096, 8192])
    >>> len(g), g.M.tolist(), g.N.tolist()
    (4, [1024.0, 1024.0, 2048.0, 2048.0], [4096.0, 8192.0, 4096.0, 8192.0])
    """
    axes = [_numeric_array(v, label, SHAPE_MAX).reshape(-1)
            for v, label in ((M, "M"), (K, "K"), (N, "N"))]
    check_size(math.prod(a.size for a in axes), "grid", MAX_ELEMENTS)
    m, k, n = (a.reshape(-1) for a in np.meshgrid(*axes, indexing="ij"))
    return ShapeSet.from_arrays(m, k, n, name=name)


def load_shape_sets(path: str | os.PathLike[str]) -> dict[str, ShapeSet]:
    """Every set of a TOML file in the shipped schema, built with its defaults."""
    path, text = read_text(path, "shapes file")
    try:
        with nested_input(file_label(path), "shapes file"):
            data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{file_label(path)}: not valid TOML ({escape(str(exc))})") from None
    return {n: d.build() for n, d in _parse(data, path).items()}


@cache
def _definitions() -> Mapping[str, _Definition]:
    text = resources.files("roofline_sym").joinpath("data", "shapes.toml").read_text("utf-8")
    return MappingProxyType(_parse(tomllib.loads(text), "roofline_sym/data/shapes.toml"))


# -- validation of the TOML --------------------------------------------------------
def _parse(data: Mapping[str, Any], origin: str) -> dict[str, _Definition]:
    def fail(msg: str) -> ValueError:
        return ValueError(f"{file_label(origin)}: {msg}")

    unknown = set(data) - {"sources", "set"}
    if unknown:
        raise fail(f"unknown top-level key(s) {sorted(unknown)}; expected [sources] and [[set]]")
    keys = data.get("sources", {})
    if not isinstance(keys, dict):
        raise fail("[sources] must be a table of citation key = text")
    sets = data.get("set")
    if not isinstance(sets, list) or not sets:
        raise fail("no [[set]] entries")
    out: dict[str, _Definition] = {}
    for i, raw in enumerate(sets):
        if not isinstance(raw, dict):
            raise fail(f"set #{i + 1}: expected a [[set]] table, got {show(raw)}")
        name = raw.get("name")
        label = f"set {show(name)}" if name else f"set #{i + 1}"
        if not isinstance(name, str) or not name or has_control(name):
            raise fail(f"{label}: field 'name' is required (a string without control "
                       "characters)")
        for fld, want in (("description", str), ("notes", list), ("sources", dict)):
            if fld in raw and not isinstance(raw[fld], want):
                raise fail(f"{label}, field {fld!r}: expected a {want.__name__}, got "
                           f"{show(raw[fld])}")
        if not all(isinstance(n, str) for n in raw.get("notes", [])):
            raise fail(f"{label}, field 'notes': expected a list of strings")
        if name in out:
            raise fail(f"{label}: defined twice")
        kind = raw.get("kind")
        if not isinstance(kind, str) or kind not in _KINDS:
            raise fail(f"{label}, field 'kind': {show(kind)} is not one of {', '.join(_KINDS)}")
        allowed = _FIELDS[kind] | _COMMON
        stray = set(raw) - allowed
        if stray:
            raise fail(f"{label}, field {sorted(stray)[0]!r}: unknown for kind {kind!r}; "
                       f"expected {', '.join(sorted(allowed))}")
        numeric = sorted(_FIELDS[kind] & set(raw))
        # a model set lists its layers, or names the architecture they come from
        derived = {"layers", "blocks"} if {"architecture", "layer_names"} & set(raw) else set()
        missing = sorted(_FIELDS[kind] - {"params", "architecture", "layer_names"} - derived
                         - set(raw))
        if missing:
            raise fail(f"{label}, field {missing[0]!r}: required for kind {kind!r}")
        sources = raw.get("sources", {})
        for fld in numeric:
            if fld not in sources:
                raise fail(f"{label}, field {fld!r}: has no source; add it under [set.sources]")
            problem = citations.problem(sources[fld], keys)
            if problem:
                raise fail(f"{label}, field {fld!r}: source {problem}")
        extra = set(sources) - set(numeric)
        if extra:
            raise fail(f"{label}, field 'sources': source(s) for absent field(s) {sorted(extra)}")
        try:
            params = _check(kind, raw)
        except ValueError as exc:
            raise fail(f"{label}, {exc}") from None
        out[name] = _Definition(name, kind, raw, dict(sources), params)
    return out


def _check(kind: str, raw: Mapping[str, Any]) -> dict[str, float]:
    """Validate a set's numbers; return its parameters."""
    if kind == "cube":
        _values(raw["x"], "x")
        return {}
    if kind == "product":
        for d in "MKN":
            _values(raw[d], d)
        return {}
    if "layer_names" in raw and "architecture" not in raw:
        raise InputError("field 'layer_names': names the modules of an architecture; "
                         "give 'architecture' too")
    if "architecture" in raw:
        _check_architecture(raw)
        if "layers" not in raw:
            _positive(raw["tokens"], "field 'tokens'", strict_type=True, integer=True)
            return {}
    for fld in ("tokens", "blocks"):
        _positive(raw[fld], f"field {fld!r}", strict_type=True, integer=True)
    params = {}
    t = raw.get("params", {})
    if not isinstance(t, dict):
        raise InputError("field 'params': expected a table of name = number")
    for k, v in t.items():
        params[k] = _positive(v, f"field 'params.{k}'", strict_type=True, integer=True)
    layers = raw["layers"]
    if not isinstance(layers, list) or not layers:
        raise InputError("field 'layers': expected a non-empty list of "
                         "{ name, K, N, count } tables")
    seen = set()
    for j, lay in enumerate(layers):
        at = f"field 'layers', layer #{j + 1}"
        if not isinstance(lay, dict):
            raise InputError(f"{at}: expected a table {{ name, K, N, count }}")
        stray = set(lay) - _LAYER_FIELDS
        if stray or not {"name", "K", "N", "count"} <= set(lay):
            raise InputError(f"{at}: fields must be name, K, N, count and optionally "
                             f"blocks, groups, top_k (got {sorted(lay)})")
        if lay["name"] in seen:
            raise InputError(f"{at}: name {lay['name']!r} used twice")
        seen.add(lay["name"])
        for d in ("K", "N"):
            v = lay[d]
            if isinstance(v, str):
                if v not in params:
                    raise InputError(f"{at}, {d}: {v!r} is not a parameter of the set "
                                     f"(params: {', '.join(params) or 'none'})")
            else:
                _positive(v, f"{at}, {d}", strict_type=True, integer=True)
        for fld in ("count", "blocks", "groups", "top_k"):
            if fld in lay:
                _positive(lay[fld], f"{at}, {fld}", strict_type=True, integer=True)
        for fld in ("groups", "top_k"):
            if fld in lay and not isinstance(lay[fld], int):
                raise InputError(f"{at}, {fld}: expected a whole number, got {show(lay[fld])}")
        if "top_k" in lay and lay["top_k"] > lay.get("groups", 1):
            raise InputError(f"{at}: top_k {lay['top_k']} exceeds the layer's "
                             f"{lay.get('groups', 1)} experts")
    return params


def _check_architecture(raw: Mapping[str, Any]) -> None:
    """A model set's ``architecture`` (a built-in's name) and ``layer_names``
    (its module names -> the set's names, in the set's order)."""
    name = raw["architecture"]
    if not isinstance(name, str):
        raise InputError(f"field 'architecture': expected a built-in architecture's name, "
                         f"got {show(name)}")
    if "layers" in raw or "blocks" in raw:
        raise InputError("field 'architecture': the layers come from the architecture; "
                         "give no 'layers' or 'blocks'")
    modules = [s.name for s in _linears(find_architecture(name))]
    names = raw.get("layer_names", {})
    if not isinstance(names, dict) or not names and "layer_names" in raw:
        raise InputError("field 'layer_names': expected a table of module name = set name")
    for module, given in names.items():
        if module not in modules:
            raise unknown_name("module", module, modules, where="field 'layer_names': ")
        valid_text(given, f"field 'layer_names', {module}")
    if len(set(names.values())) != len(names):
        raise InputError("field 'layer_names': a set name is used twice")


def _linears(arch: Architecture) -> list[Any]:
    """The layers of an architecture's blocks that a model set lists: all but the
    router (a tiny GEMM most recipes leave alone) and the output layer."""
    return [s for s in arch.linears(lm_head=False) if s.part != "router"]


def _architecture_layers(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The layer tables of a set that names its architecture: every linear of
    the blocks, or those of ``layer_names`` renamed, in its order."""
    shapes = {s.name: s for s in _linears(find_architecture(raw["architecture"]))}
    names = raw.get("layer_names") or {n: n for n in shapes}
    return [{"name": names[m], "K": shapes[m].K, "N": shapes[m].N, "count": 1,
             "blocks": shapes[m].blocks, "groups": shapes[m].groups, "top_k": shapes[m].top_k}
            for m in names]


def _values(spec: Any, label: str = "values") -> np.ndarray:
    """A value spec: a list of numbers, or {base, exponents = [a, b], multipliers}."""
    if isinstance(spec, list):
        if not spec:
            raise InputError(f"field {label!r}: empty list")
        return np.array([_positive(v, f"field {label!r}", strict_type=True) for v in spec])
    if not isinstance(spec, dict) or set(spec) - {"base", "exponents", "multipliers"} \
            or not {"base", "exponents"} <= set(spec):
        raise InputError(f"field {label!r}: expected a list of numbers or "
                         "{ base = 2, exponents = [first, last], multipliers = [...] }")
    base = _positive(spec["base"], f"field '{label}.base'", strict_type=True)
    exps = spec["exponents"]
    if (not isinstance(exps, list) or len(exps) != 2
            or not all(isinstance(e, int) and not isinstance(e, bool) for e in exps)
            or exps[0] > exps[1]):
        raise InputError(f"field '{label}.exponents': expected [first, last] integers, "
                         f"first <= last, got {exps!r}")
    mults = spec.get("multipliers", [1])
    if not isinstance(mults, list) or not mults:
        raise InputError(f"field '{label}.multipliers': expected a non-empty list of numbers, "
                         f"got {show(mults)}")
    mults = [_positive(m, f"field '{label}.multipliers'", strict_type=True) for m in mults]
    check_size((exps[1] - exps[0] + 1) * len(mults), f"field {label!r}", MAX_ROWS)
    # integer powers stay exact: 2**e * 1.5 is exact in float64 for these ranges
    try:
        values = [float(base) ** e * m for e in range(exps[0], exps[1] + 1) for m in mults]
    except OverflowError:
        values = [math.inf]
    return np.array([_positive(v, f"field {label!r}") for v in values])


# -- numbers ---------------------------------------------------------------------
def _positive(value: Any, label: str, strict_type: bool = False,
              integer: bool = False) -> float:
    """A positive finite number up to 2**53 (whole if ``integer``); text is
    parsed (``validate.parse_number``), never evaluated; ``strict_type``: ints
    and floats only (no strings)."""
    if isinstance(value, str) and not strict_type:
        return parse_number(value, label, integer=integer, limit=SHAPE_MAX)
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"{label} must be a positive number, not {type(value).__name__} "
                             f"{show(value)}")
    return float(positive_array(value, label, SHAPE_MAX, integer=integer))


def _read_only(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


def _numeric_array(value: Any, label: str, limit: float = math.inf) -> np.ndarray:
    arr = positive_array(value, label, limit, integer=True)
    if arr.size == 0:
        raise InputError(f"{label} must be a number or a non-empty array of numbers, "
                         f"not {show(value)}")
    return arr


# -- shape files ---------------------------------------------------------------------
_FILE_COLUMNS = {"m": "M", "k": "K", "n": "N", "name": "name", "count": "count"}


# rows parsed at a time: a block's Python objects stay small however long the file
_BLOCK = 1 << 16
# a shape file's columns: M, K, N, names, counts
_Columns = tuple[np.ndarray, np.ndarray, np.ndarray, Sequence[str], np.ndarray]


def _read_csv(path: str) -> _Columns:
    """The columns of a CSV shape file, read a block of rows at a time (a file of
    millions of rows holds no per-row objects); a bad row is named by
    ``_csv_error``, which reads the file again row by row."""
    shown = file_label(data_file(path, "shape file"))
    parts: dict[str, list[np.ndarray]] = {"M": [], "K": [], "N": [], "count": []}
    names: list[str] = []
    rows = 0
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            table = _csv_table(f, shown)
            cols = list(table.header)
            index = {c.lower(): i for i, c in enumerate(cols)}
            raw = table.raw()
            while True:
                block = list(itertools.islice(raw, _BLOCK))
                if not block:
                    break
                columns = _csv_block(block, cols, index)
                if columns is None:
                    _csv_error(path, shown)  # raises, naming the row
                for key, values in columns.items():
                    if key == "name":
                        names.extend(v or str(rows + i) for i, v in enumerate(values))
                    else:
                        parts[key].append(values)
                rows += len(columns["M"])
                check_size(rows, shown, MAX_ELEMENTS)
    except OSError as exc:
        raise InputError(f"{shown}: cannot read shape file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: cannot read shape file (not UTF-8 text: {exc.reason} at "
                         f"byte {exc.start})") from None
    if not rows:
        raise InputError(f"{shown}: no shapes in the file")
    out = []
    for key in ("M", "K", "N", "count"):  # one column at a time: no more than one copy
        if parts[key]:
            arr = np.concatenate(parts[key])
            parts[key].clear()
            arr.setflags(write=False)
        else:
            arr = np.broadcast_to(np.float64(1.0), (rows,))  # read-only, no memory
        out.append(arr)
    m, k, n, counts = out
    named = "name" in index and any(names[i] != str(i) for i in range(rows))
    return m, k, n, tuple(names) if named else RowNames(rows), counts


def _csv_table(f: Iterable[str], shown: str) -> Delimited:
    """A shape file's rows (no comment lines: a ``#`` row is a bad row), its header checked."""
    table = Delimited(f, shown, comments=False, expected="a header row such as M,K,N,name,count")
    cols = table.header
    unknown = [c for c in cols if c.lower() not in _FILE_COLUMNS]
    if unknown or not {"m", "k", "n"} <= {c.lower() for c in cols}:
        raise InputError(f"{where(shown, table.line)}: header {show(list(cols))}: columns must "
                         "be M, K, N and optionally name, count")
    twice = _repeated(cols)
    if twice:
        raise InputError(f"{where(shown, table.line, twice)}: the header names it twice "
                         "(names are case-insensitive)")
    return table


def _whole(v: np.ndarray) -> bool:
    """Every value a whole number in (0, 2**52): a real layer's dimension or count,
    read exactly (from 2**52 on a float holds no fraction, and from 2**53 not
    every integer; such rows are read by ``_parse_record``, which parses exactly)."""
    return bool(np.all((v > 0) & (v < SHAPE_MAX / 2) & (v == np.floor(v))))


def _csv_block(block: list[list[str]], cols: list[str],
               index: Mapping[str, int]) -> dict[str, Any] | None:
    """A block of rows as columns, numbers read as ``_parse_record`` reads them
    (blank rows skipped, an empty count is 1), or None if a row is bad."""
    numeric = [k for k in ("m", "k", "n", "count") if k in index]
    if set(map(len, block)) == {len(cols)}:  # most blocks: every cell a number
        columns = list(zip(*block))
        try:
            out: dict[str, Any] = {_FILE_COLUMNS[k]: np.array(list(map(float, columns[index[k]])))
                                   for k in numeric}
        except ValueError:  # a number float() refuses, or an empty cell: row by row
            out = {}
        if out and all(_whole(v) for v in out.values()):
            if "name" not in index:
                return out
            out["name"] = [v.strip() for v in columns[index["name"]]]
            if not has_control("".join(out["name"])):
                return out
    records = []
    for row in block:
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(cols):
            return None
        try:
            records.append(_parse_record({_FILE_COLUMNS[c.lower()]: v
                                          for c, v in zip(cols, row)}, "", line=0))
        except ValueError:
            return None
    out = {_FILE_COLUMNS[k]: np.array([r[_FILE_COLUMNS[k]] for r in records], dtype=np.float64)
           for k in numeric}
    if "name" in index:
        out["name"] = [r["name"] for r in records]
    return out


def _csv_error(path: str, shown: str) -> NoReturn:
    """Raise the error of the first bad row of a CSV shape file (read row by row)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        table = _csv_table(f, shown)
        for row in table:
            _parse_record({_FILE_COLUMNS[c.lower()]: v for c, v in zip(table.header, row)},
                          shown, line=table.line)
    raise InputError(f"{shown}: a row could not be read")  # not reached: a row was bad


def _read_json(path: str) -> _Columns:
    """The columns of a JSON shape file (read whole)."""
    path, text = read_text(path, "shape file")
    shown = file_label(path)
    records = _json_records(text, shown)
    if not records:
        raise InputError(f"{shown}: no shapes in the file")
    check_size(len(records), shown, MAX_ELEMENTS)
    rows = [_parse_record(rec, shown, item=i) for i, rec in records]
    columns = [np.array([r[d] for r in rows]) for d in ("M", "K", "N", "count")]
    for arr in columns:
        arr.setflags(write=False)
    names = [r["name"] or str(i) for i, r in enumerate(rows)]
    named = any(r["name"] for r in rows)
    m, k, n, counts = columns
    return m, k, n, tuple(names) if named else RowNames(len(rows)), counts


def _repeated(names: Sequence[str]) -> str | None:
    """The first column name given a second time (case-insensitively), or None."""
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            return name
        seen.add(name.lower())
    return None


def _json_records(text: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    """``(item number from 1, record)`` for each shape of a JSON shape file."""
    data = parse_json(text, path)
    if isinstance(data, dict):
        data = data.get("shapes")
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of shapes, or an object with a "
                         "'shapes' list")
    out = []
    for i, rec in enumerate(data, start=1):
        at = where(path, item=i)
        if isinstance(rec, list):
            if len(rec) != 3:
                raise InputError(f"{at}: expected [M, K, N], got {show(rec)}")
            rec = dict(zip("MKN", rec))
        elif isinstance(rec, dict):
            unknown = [k for k in rec if str(k).lower() not in _FILE_COLUMNS]
            if unknown:
                raise InputError(f"{at}: unknown key(s) {unknown}; keys are "
                                 "M, K, N and optionally name, count")
            twice = _repeated([str(k) for k in rec])
            if twice:
                raise InputError(f"{at}: key {twice!r} appears twice "
                                 "(keys are case-insensitive)")
            rec = {_FILE_COLUMNS[str(k).lower()]: v for k, v in rec.items()}
        else:
            raise InputError(f"{at}: expected an object or [M, K, N], got {show(rec)}")
        out.append((i, rec))
    return out


def _parse_record(rec: Mapping[str, Any], source: str, *, line: int | None = None,
                  item: int | None = None) -> dict[str, Any]:
    """A shape row's numbers and name; errors name the row by its ``line`` (CSV;
    cells are text) or ``item`` (JSON; numbers are numbers)."""
    def place(column: str | None = None) -> str:
        return where(source, line, column, item=item) if item is None else \
            where(source, item=item, key=column)

    at = place()
    missing = [d for d in "MKN" if d not in rec or rec[d] in ("", None)]
    if missing:
        raise InputError(f"{at}: missing {', '.join(missing)}")
    out: dict[str, Any] = {}  # the numbers, then the name
    for d in ("M", "K", "N", "count"):
        raw = rec.get(d, 1) if d == "count" else rec[d]
        if d == "count" and raw in ("", None):
            raw = 1
        out[d] = _positive(raw, place(d), integer=True)
    name = rec.get("name")
    if name is not None and (isinstance(name, bool) or not isinstance(name, (str, int, float))):
        raise InputError(f"{place('name')}: must be text, got "
                         f"{show(name)}")
    out["name"] = "" if name is None else str(name).strip()
    if has_control(out["name"]):
        raise InputError(f"{place('name')}: {show(out['name'])} "
                         "contains control characters")
    return out
