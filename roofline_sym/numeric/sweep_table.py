"""Sweeps: many bound models over many shapes, as one table.

``sweep(models, shapes)`` evaluates every model at every shape (compiled
once per recipe and mode, chunk by chunk) and returns a ``SweepResult``: one
row per (model, shape) with the seven times, the regime each group of
kernels is in, and the model's cube break-even for context.  With a model
shape set, ``model_total()`` weighs every layer by how often it occurs.
``sweep_chunks`` streams the same rows (to ``write_csv`` / ``write_json``)
and ``sweep_totals`` the totals, in bounded memory however many shapes.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
>>> res = sweep(m, "llama3-8b")
>>> len(res), res.rows[0]["name"], res.rows[0]["lowp_gemm_regime"]
(7, 'self_attn.q_proj', 'compute')
>>> round(res.model_total().rows[0]["speedup"], 3)
1.541
"""

from __future__ import annotations

import math
import os
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..devices import (Hardware, MissingHardwareValueError, hardware as get_hardware,
                       list_hardware)
from ..errors import InputError
from ..model.layer import OUTPUTS, Linear, linear
from ..model.presets import describe_models, grouped_options, options as get_options
from ..model.recipes import list_recipes
from ..model.term import REGIMES
from ..solve import NumericBreakEven, breakeven
from ..validate import MAX_ROWS, InputTypeError, check_size, choice, count, items, show
from .convert import Conversion
from .frames import to_xarray
from .shapes import ShapeSet, shape_set
from .table import Table
from .writers import writer

if TYPE_CHECKING:
    import xarray

__all__ = ["sweep", "sweep_chunks", "sweep_totals", "write_sweep", "SweepResult", "Table",
           "model_grid"]

_MODEL_COLUMNS = ("gpu", "recipe", "mode", "fuse", "preset")
# kernel groups that get a regime label: (column, side, group)
_GROUPS = (
    ("baseline_gemm_regime", "baseline", "gemm"),
    ("lowp_gemm_regime", "lowp", "gemm"),
    ("lowp_overhead_regime", "lowp", "overhead"),
)
COLUMNS = (
    *_MODEL_COLUMNS, "shape_set", "name", "M", "K", "N", "count", "groups",
    *OUTPUTS, "faster",
    *(g[0] for g in _GROUPS),
    "cube_breakeven", "cube_size", "faster_on_cube",
)
# what repr shows of a sweep and of its totals; the keys (which row is which) are
# never dropped to fit, and a sweep shows ``groups`` when a row has experts
_KEYS = ("gpu", "recipe", "shape_set", "name", "M", "K", "N", "groups")
_PREVIEW = ("gpu", "recipe", "shape_set", "name", "M", "K", "N", "speedup", "faster",
            "lowp_overhead_regime")
_TOTAL_KEYS = ("gpu", "recipe", "shape_set", "M")
_TOTAL_PREVIEW = ("gpu", "recipe", "shape_set", "M", "baseline_time", "lowp_time", "speedup")
_PARTIAL_PREVIEW = ("gpu", "recipe", "shape_set", "M", "count", "converted", "baseline_time",
                    "lowp_time", "speedup", "speedup_all")
# rows per evaluate() call: bounds a streaming sweep's memory (a chunk's columns
# and its text) and sets how often the progress callback fires
_CHUNK = 1 << 16
# regime names by the index evaluate(regimes=True) gives; -1: a group without kernels
_REGIME_NAMES = np.array([*REGIMES, "none"], dtype=object)


@dataclass(eq=False)  # compared and hashed by identity: a key of its totals
class _Block:
    """One (model, shape set) pair of a sweep: its rows' values (when kept)."""

    meta: dict[str, Any]
    shapes: ShapeSet
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def columns(self, rows: slice, values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Every column of ``COLUMNS`` for ``rows`` of the block, from those rows'
        ``values`` (the outputs of ``_evaluate_rows``)."""
        s = self.shapes
        n = len(range(*rows.indices(len(s))))
        out = {}
        for name in COLUMNS:
            if name in self.meta:
                value = self.meta[name]
                # fill, not np.full: np.full copies an object into each cell one by one
                out[name] = np.empty(n, dtype=object if isinstance(value, str) else
                                     np.asarray(value).dtype)
                out[name].fill(value)
            elif name in ("M", "K", "N"):
                out[name] = getattr(s, name)[rows]
            elif name == "count":
                out[name] = s.counts[rows]
            elif name == "groups":
                out[name] = s.groups[rows]
            elif name == "name":
                out[name] = np.array(s.names[rows], dtype=object)
            else:
                out[name] = values[name]
        return out


class SweepResult(Table):
    """The table ``sweep()`` returns; see ``COLUMNS`` for its columns.

    ``model_total()`` sums each (model, shape set) over its rows, weighted by
    counts.
    """

    def __init__(self, blocks: list[_Block], caption: str = ""):
        self._blocks = blocks
        parts = [b.columns(slice(None), b.values) for b in blocks]
        columns = {c: _concat([p[c] for p in parts]) for c in COLUMNS}
        super().__init__(columns, caption, _preview(columns["groups"]), _KEYS)

    def to_xarray(self) -> xarray.Dataset:
        """An ``xarray.Dataset`` with dimensions gpu, recipe, shape (and mode,
        fuse, preset where they vary), the seven outputs as variables
        (``frames.to_xarray``; xarray is optional, imported only here):
        ``sweep(model_grid(["tensorwise", "rowwise"], ["h100", "b200"]),
        "llama3-8b").to_xarray()`` has sizes gpu 2, recipe 2, shape 7.
        """
        return to_xarray(self._blocks, OUTPUTS)

    def model_total(self, convert: Any = "all") -> Table:
        """Per (model, shape set): count-weighted total times and overall speedup
        of the set's linear layers (their GEMMs and casts; attention, norms and
        communication are not modelled, so a whole step gains less).  It keeps
        that meaning, the linears alone; a whole training or serving step is
        ``rs.step`` (``roofline-sym step``).

        ``speedup = sum(count * baseline_time) / sum(count * lowp_time)``;
        ``flops``: count-weighted FLOPs of the layers' GEMMs in the model's
        mode (3 GEMMs in training, 1 in inference); ``M`` is the token count
        of a model set (NaN when it varies across rows).  ``covers`` says what
        the total sums.

        ``convert``: which layers run in low precision, the others in bf16
        (``numeric.convert``): ``"all"``, ``"profitable"``, a torchao module
        filter (``rs.float8_module_filter(...)``) or a collection of layer
        names; with any but ``"all"`` the table adds ``converted`` (layers
        converted, counted) and ``speedup_all`` (every layer converted).

        >>> import roofline_sym as rs
        >>> res = rs.sweep(rs.linear("rowwise", preset="torchao").on("NVIDIA H100"), "llama3-8b")
        >>> row = res.model_total(convert="profitable").rows[0]
        >>> row["covers"], row["converted"], row["count"]  # 5 of 7 layers x 32 blocks
        ('linear layers where faster', 160.0, 224.0)
        >>> row["speedup"] > row["speedup_all"]
        True
        """
        rule = Conversion.of(convert, *(b.shapes for b in self._blocks))
        totals = _Totals(self.caption, rule)
        for b in self._blocks:
            totals.add(b, slice(None), b.values)
        return totals.table()


class _Totals:
    """Count-weighted totals per block, added chunk by chunk (``model_total``)."""

    def __init__(self, caption: str = "", rule: Conversion = Conversion("all")) -> None:
        self._rows: dict[_Block, dict[str, Any]] = {}
        self.rule = rule
        # a total is of linear layers only: said in every repr, export and CLI table
        self.caption = f"{rule.covers}, not attention, norms or communication" + (
            f"; {caption}" if caption else "")

    def add(self, block: _Block, rows: slice, values: Mapping[str, np.ndarray]) -> None:
        s = block.shapes
        w, m = s.counts[rows], s.M[rows]
        partial = self.rule.kind != "all"
        row = self._rows.get(block)
        if row is None:
            row = self._rows[block] = {
                **{c: block.meta[c] for c in _MODEL_COLUMNS + ("shape_set",)},
                "covers": self.rule.covers,
                # a model set's token count (its experts see top_k times it)
                "M": s.tokens if s.tokens is not None else float(m[0]), "layers": len(s),
                "count": 0.0, **({"converted": 0.0} if partial else {}),
                "flops": (3 if block.meta["mode"] == "training" else 1) * s.total_flops,
                "baseline_time": 0.0, "lowp_time": 0.0, "speedup": math.nan,
                **({"speedup_all": math.nan, "_all": 0.0} if partial else {})}
        if s.tokens is None and not np.all(m == s.M[0]):
            row["M"] = math.nan
        base, lowp = values["baseline_time"], values["lowp_time"]
        row["count"] += float(np.sum(w))
        row["baseline_time"] += float(np.sum(w * base))
        if partial:
            keep = self.rule.keeps(s, rows, values["faster"])
            row["converted"] += float(np.sum(w[keep]))
            row["lowp_time"] += float(np.sum(w * np.where(keep, lowp, base)))
            row["_all"] += float(np.sum(w * lowp))
            row["speedup_all"] = row["baseline_time"] / row["_all"]
        else:
            row["lowp_time"] += float(np.sum(w * lowp))
        row["speedup"] = row["baseline_time"] / row["lowp_time"]

    def table(self) -> Table:
        rows = [{k: v for k, v in r.items() if not k.startswith("_")}
                for r in self._rows.values()]
        preview = _TOTAL_PREVIEW if self.rule.kind == "all" else _PARTIAL_PREVIEW
        # strings as object arrays, as in the sweep's own columns
        return Table({c: np.array([r[c] for r in rows],
                                  dtype=object if isinstance(rows[0][c], str) else None)
                      for c in rows[0]}, self.caption, preview, _TOTAL_KEYS)


def sweep(models: Linear | Iterable[Linear], shapes: Any,
          progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Evaluate bound models at shapes; one row per (model, shape).

    ``models``: a bound ``Linear`` (``.on(hw)``) or a list of them (see
    ``model_grid``).  ``shapes``: a ``ShapeSet``, a shape-set name, a list of
    either, an ``(M, K, N)`` tuple of numbers/arrays (broadcast together), or
    a mapping with keys M, K, N; ``grid()`` builds a full product.
    ``progress(done_rows, total_rows)`` is called as the sweep advances.

    Rows of grouped GEMMs (a mixture of experts' shape set) are priced by the
    model with their experts (``Linear.with_groups``).

    Per row: the seven outputs of ``evaluate`` (identical values), ``faster``
    (low precision strictly faster), the regime holding most of the time of
    each kernel group (``compute``/``memory``/``launch``), and the model's
    cube break-even ``x*`` (smallest root or step of ``rs.breakeven(model,
    along="cube")``, NaN if none; solved once per model and kept) with
    ``faster_on_cube``: whether the cube of the same FLOPs, ``cube_size =
    (M K N)**(1/3)``, lies where low precision is faster.

    The whole table is kept in memory; ``sweep_chunks`` gives the same rows
    a chunk at a time and ``sweep_totals`` the ``model_total()``, in bounded
    memory however many shapes.

    >>> import roofline_sym as rs
    >>> ms = model_grid(["tensorwise", "rowwise"], ["h100", "b200"])
    >>> res = sweep(ms, (8192, 8192, [512, 8192]))
    >>> len(res), res["gpu"][:2].tolist(), res["speedup"][:2].round(3).tolist()
    (8, ['H100 SXM', 'H100 SXM'], [0.743, 1.735])
    >>> res["faster"][:2].tolist(), res["faster_on_cube"][:2].tolist()
    ([False, True], [False, True])
    """
    models, sets = _arguments(models, shapes)
    total = len(models) * sum(len(s) for s in sets)  # every row is kept: a bounded table
    check_size(total, f"a sweep of {len(models)} model(s) over {total // len(models)} shapes "
               "(sweep_chunks and sweep_totals stream any number)", MAX_ROWS)
    blocks: list[_Block] = []
    parts: dict[_Block, list[dict[str, np.ndarray]]] = {}
    for block, _, values in _stream(models, sets, progress, _CHUNK):
        if block not in parts:
            blocks.append(block)
        parts.setdefault(block, []).append(values)
    for b in blocks:
        chunks = parts[b]
        b.values = {k: _concat([c[k] for c in chunks]) for k in chunks[0]}
    return SweepResult(blocks, describe_models(models))


def sweep_chunks(models: Linear | Iterable[Linear], shapes: Any,
                 progress: Callable[[int, int], None] | None = None,
                 rows: int = _CHUNK) -> Iterator[Table]:
    """The rows of ``sweep(models, shapes)``, in order, as tables of at most
    ``rows`` rows: memory stays bounded however many shapes.  Write them with
    ``write_csv`` or ``write_json``.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise").on("h100")
    >>> [len(t) for t in sweep_chunks(m, "sweep", rows=200)]
    [200, 200, 112]
    """
    rows = count(rows, "sweep_chunks: rows", minimum=1)
    models, sets = _arguments(models, shapes)  # checked now, not at the first chunk
    caption = describe_models(models)
    return (Table(cols, caption, _preview(cols["groups"]), _KEYS)
            for block, sl, values in _stream(models, sets, progress, rows)
            for cols in [block.columns(sl, values)])


def sweep_totals(models: Linear | Iterable[Linear], shapes: Any,
                 progress: Callable[[int, int], None] | None = None,
                 convert: Any = "all") -> Table:
    """``sweep(models, shapes).model_total(convert)``, computed chunk by chunk
    without keeping the rows.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    >>> round(sweep_totals(m, "llama3-8b").rows[0]["speedup"], 3)
    1.541
    """
    models, sets = _arguments(models, shapes)
    totals = _Totals(describe_models(models), Conversion.of(convert, *sets))
    for block, sl, values in _stream(models, sets, progress, _CHUNK):
        totals.add(block, sl, values)
    return totals.table()


def write_sweep(models: Linear | Iterable[Linear], shapes: Any,
                path_or_file: str | os.PathLike[str] | Any = None, format: str = "csv",
                progress: Callable[[int, int], None] | None = None) -> str | None:
    """``sweep(models, shapes).to_csv(path_or_file)`` (or ``to_json``, by
    ``format``), the same text, in bounded memory however many shapes: the rows
    stream a chunk at a time.  A first pass, which writes nothing, finds the
    columns whose every value is a whole number (written as integers, as
    ``Table.to_csv`` writes them); ``progress`` reports the second.  Returns
    the text when no path or file is given.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise").on("h100")
    >>> write_sweep(m, "pow2") == sweep(m, "pow2").to_csv()
    True
    """
    choice(format, ("csv", "json"), "write_sweep: format")
    whole = _whole_columns(models, shapes)
    return writer(format).write(sweep_chunks(models, shapes, progress), path_or_file, whole)


def _whole_columns(models: Any, shapes: Any) -> set[str]:
    """The float columns (not times) of a sweep whose every value is a whole
    number (``Table.whole_columns``), by a pass over its chunks that keeps
    nothing and labels no regimes."""
    models, sets = _arguments(models, shapes)
    candidates: set[str] | None = None
    for block, sl, values in _stream(models, sets, None, _CHUNK, regimes=False):
        found = Table(block.columns(sl, values)).whole_columns()
        candidates = found if candidates is None else candidates & found
        if not candidates:
            break
    return candidates or set()


def model_grid(recipes: str | Sequence[str] | None = None,
               hardware: str | Sequence[Any] | None = None, mode: str = "training",
               fuse: bool | None = None, preset: str = "default",
               skip_unsupported: bool = True, groups: int | None = None,
               workload: str = "linear", **options: Any) -> list[Linear]:
    """Bound models for every recipe x GPU (None: all of them); ``groups``:
    grouped (MoE) layers of that many experts.

    ``fuse`` (None: the preset's), ``preset``, ``workload`` and ``options``
    as in ``linear``.
    GPUs that lack a recipe's GEMM dtype (fp8 on an A100, fp4 on an H100) or a
    number the model needs (torchao's RTX 5090 has no efficiencies) are
    skipped, or raise with ``skip_unsupported=False``.

    >>> [m.hardware.name for m in model_grid("mxfp4_cutlass", ["h100", "b200"])]
    ['B200 (HGX)']
    """
    opts = get_options(preset, **options)
    if groups is not None:
        opts = grouped_options(opts, **options)
    recipes = list_recipes(mode, opts.recipe_table) if recipes is None else items(
        recipes, "recipes", str)
    gpus = list_hardware(opts.dataset) if hardware is None else items(
        hardware, "hardware", (str, Hardware))
    out = []
    for r in recipes:
        model = linear(r, mode=mode, fuse=fuse, preset=preset, groups=groups,
                       workload=workload, **options)
        for g in gpus:
            hw = get_hardware(g, dataset=opts.dataset)
            if skip_unsupported and model.unsupported_reason(hw):
                continue
            try:
                out.append(model.on(hw))
            except MissingHardwareValueError:
                if not skip_unsupported:
                    raise
    return out


# -- internals -------------------------------------------------------------------
def _arguments(models: Any, shapes: Any) -> tuple[list[Linear], list[ShapeSet]]:
    """The models (bound ``Linear``) and shape sets of a sweep, checked."""
    models = items(models, "sweep: models (bound rs.linear(...).on(hw), or a list of them)",
                   Linear)
    if not models:
        raise InputError("no models to sweep")
    for m in models:
        if m.hardware is None:
            raise InputError(f"{m!r} has no hardware: bind one with .on(hw) (or build the "
                             "list with model_grid)")
    return models, _shape_sets(shapes)


def _stream(models: list[Linear], sets: list[ShapeSet],
            progress: Callable[[int, int], None] | None, rows: int, regimes: bool = True
            ) -> Iterator[tuple[_Block, slice, dict[str, np.ndarray]]]:
    """``(block, rows slice, values)`` for every chunk of every (model, set)."""
    total = len(models) * sum(len(s) for s in sets)
    done = 0
    for model in models:
        if model.hardware is None:  # not reached: _arguments takes bound models only
            raise InputError(f"{model!r} has no hardware")
        x_star, be = _cube_context(model)
        grouped: dict[float, Linear] = {1.0: model}  # the model with G experts, by G
        for s in sets:
            meta = {"gpu": model.hardware.name, "recipe": model.recipe.name,
                    "mode": model.mode, "fuse": model.fuse, "preset": model.preset,
                    "shape_set": s.name, "cube_breakeven": x_star}
            block = _Block(meta, s)
            for start in range(0, len(s), rows):
                sl = slice(start, start + rows)
                values = _evaluate_rows(model, be, s.M[sl], s.K[sl], s.N[sl], s.groups[sl],
                                        grouped, regimes)
                yield block, sl, values
                done += len(values["speedup"])
                if progress is not None:
                    progress(done, total)


def _preview(groups: np.ndarray) -> tuple[str, ...]:
    """The columns a sweep's repr shows: ``groups`` beside N where a row has experts."""
    if not np.any(groups != 1):
        return _PREVIEW
    at = _PREVIEW.index("N") + 1
    return (*_PREVIEW[:at], "groups", *_PREVIEW[at:])


def _shape_sets(shapes: Any) -> list[ShapeSet]:
    if isinstance(shapes, (ShapeSet, str)):
        return [shape_set(shapes)]
    if isinstance(shapes, Mapping):
        missing = {"M", "K", "N"} - set(shapes)
        if missing:
            raise InputError(f"shape mapping lacks {sorted(missing)}; give M, K and N")
        return [ShapeSet.from_arrays(shapes["M"], shapes["K"], shapes["N"])]
    if isinstance(shapes, tuple) and len(shapes) == 3 and not any(
            isinstance(v, (ShapeSet, str)) for v in shapes):
        return [ShapeSet.from_arrays(*shapes)]
    if isinstance(shapes, (list, tuple)) and shapes and all(
            isinstance(v, (ShapeSet, str)) for v in shapes):
        return [shape_set(v) for v in shapes]
    raise InputTypeError("shapes must be a ShapeSet, a shape-set name, a list of them, an "
                         "(M, K, N) tuple or a mapping with keys M, K, N; got "
                         f"{type(shapes).__name__} {show(shapes)}")


# each model's cube break-even, solved once while the model lives
_CUBE_CONTEXT: "weakref.WeakKeyDictionary[Linear, tuple[float, NumericBreakEven]]" = \
    weakref.WeakKeyDictionary()


def _cube_context(model: Linear) -> tuple[float, NumericBreakEven]:
    """The model's cube break-even: (smallest root or step, or NaN; the BreakEven)."""
    context = _CUBE_CONTEXT.get(model)
    if context is None:
        be = breakeven(model, along="cube")
        if not isinstance(be, NumericBreakEven):  # not reached: a bound model's cube is numeric
            raise InputError(f"{model!r}: the cube break-even is not numeric ({be.method})")
        roots = be.crossing_values  # a block-scale step that crosses counts too
        context = _CUBE_CONTEXT[model] = ((float(roots[0]) if len(roots) else math.nan), be)
    return context


def _evaluate_rows(model: Linear, be: NumericBreakEven, m: np.ndarray, k: np.ndarray, n: np.ndarray,
                   groups: np.ndarray, models: dict[float, Linear],
                   regimes: bool = True) -> dict[str, np.ndarray]:
    """A chunk's computed columns: the outputs, ``faster``, the group regimes
    (each group's regime is the one whose terms add up to the most time, so one
    slow compute-bound GEMM outweighs two launch-bound small ones; None
    without ``regimes``) and the cube context."""
    out = _rows(model, m, k, n, groups, models, regimes)
    values = {name: out[name] for name in OUTPUTS}
    values["faster"] = values["lowp_time"] < values["baseline_time"]
    for col, side, group in _GROUPS:
        values[col] = (_REGIME_NAMES[out[(side, group)]] if regimes
                       else np.empty(len(m), dtype=object))
    cube = np.cbrt(m * k * n)
    values["cube_size"] = cube
    values["faster_on_cube"] = be.is_faster(cube)
    return values


def _rows(model: Linear, m: np.ndarray, k: np.ndarray, n: np.ndarray, groups: np.ndarray,
          models: dict[float, Linear], regimes: bool = True) -> dict[Any, np.ndarray]:
    """The outputs and group regimes of rows; a row of a grouped GEMM (groups > 1)
    by the model with that many experts (``Linear.with_groups``)."""
    out: dict[Any, np.ndarray] = {}
    kinds = groups[:1] if groups.strides == (0,) else np.unique(groups)  # one, broadcast
    for g in kinds:
        rows = slice(None) if len(kinds) == 1 else groups == g
        if g not in models:
            models[g] = model.with_groups(int(g))
        part = models[g].compiled.evaluate(m[rows], k[rows], n[rows], outputs=OUTPUTS,
                                           regimes=regimes)
        if isinstance(rows, slice):
            return part
        for key, v in part.items():
            out.setdefault(key, np.empty(len(m), dtype=v.dtype))[rows] = v
    return out


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
