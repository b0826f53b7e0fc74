"""Sweeps: many bound models over many shapes, as one table.

``sweep(models, shapes)`` evaluates every model at every shape (compiled
once per model, vectorized over shapes) and returns a ``SweepResult``: one
row per (model, shape) with the seven times, the regime each group of
kernels is in, and the model's cube break-even for context.  With a model
shape set, ``model_total()`` weighs every layer by how often it occurs.

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
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..devices import (Hardware, MissingHardwareValueError, hardware as get_hardware,
                       list_hardware)
from ..model.linear import OUTPUTS, Linear, linear
from ..model.presets import describe_models, grouped_options, options as get_options
from ..model.recipes import list_recipes
from ..model.term import REGIMES
from ..solve import breakeven
from ..validate import MAX_ROWS, InputTypeError, check_size, items, show
from .frames import to_xarray
from .shapes import ShapeSet, shape_set
from .table import Table

__all__ = ["sweep", "SweepResult", "Table", "model_grid"]

_MODEL_COLUMNS = ("gpu", "recipe", "mode", "fuse", "preset")
# kernel groups that get a regime label: (column, side, group)
_GROUPS = (
    ("baseline_gemm_regime", "baseline", "gemm"),
    ("lowp_gemm_regime", "lowp", "gemm"),
    ("lowp_overhead_regime", "lowp", "overhead"),
)
COLUMNS = (
    *_MODEL_COLUMNS, "shape_set", "name", "M", "K", "N", "count",
    *OUTPUTS, "faster",
    *(g[0] for g in _GROUPS),
    "cube_breakeven", "cube_size", "faster_on_cube",
)
# what repr shows of a sweep and of its totals
_PREVIEW = ("gpu", "recipe", "shape_set", "name", "M", "K", "N", "speedup", "faster",
            "lowp_overhead_regime")
_TOTAL_PREVIEW = ("gpu", "recipe", "shape_set", "M", "baseline_time", "lowp_time", "speedup")
# rows per evaluate() call: bounds memory (every term's pieces are live at once)
# and sets how often the progress callback fires
_CHUNK = 1 << 18


@dataclass
class _Block:
    """One (model, shape set) pair of a sweep: its rows as arrays."""

    meta: dict[str, Any]
    shapes: ShapeSet
    values: dict[str, np.ndarray]

    def column(self, name: str) -> np.ndarray:
        n = len(self.shapes)
        if name in self.meta:
            value = self.meta[name]
            return np.full(n, value, dtype=object if isinstance(value, str) else None)
        if name in ("M", "K", "N"):
            return getattr(self.shapes, name)
        if name == "count":
            return self.shapes.counts
        if name == "name":
            return np.array(self.shapes.names, dtype=object)
        return self.values[name]


class SweepResult(Table):
    """The table ``sweep()`` returns; see ``COLUMNS`` for its columns.

    ``model_total()`` sums each (model, shape set) over its rows, weighted by
    counts.
    """

    def __init__(self, blocks: list[_Block], caption: str = ""):
        self._blocks = blocks
        super().__init__({c: _concat([b.column(c) for b in blocks]) for c in COLUMNS},
                         caption, _PREVIEW)

    def to_xarray(self):
        """An ``xarray.Dataset`` with dimensions gpu, recipe, shape (and mode,
        fuse, preset where they vary), the seven outputs as variables
        (``frames.to_xarray``; xarray is optional, imported only here):
        ``sweep(model_grid(["tensorwise", "rowwise"], ["h100", "b200"]),
        "llama3-8b").to_xarray()`` has sizes gpu 2, recipe 2, shape 7.
        """
        return to_xarray(self._blocks, OUTPUTS)

    def model_total(self) -> Table:
        """Per (model, shape set): count-weighted total times and overall speedup.

        ``speedup = sum(count * baseline_time) / sum(count * lowp_time)``;
        ``flops``: count-weighted FLOPs of the layers' GEMMs in the model's
        mode (3 GEMMs in training, 1 in inference); ``M`` is the token count
        of a model set (NaN when it varies across rows).
        """
        rows = []
        for b in self._blocks:
            w, m = b.shapes.counts, b.shapes.M
            base = float(np.sum(w * b.values["baseline_time"]))
            lowp = float(np.sum(w * b.values["lowp_time"]))
            gemms = 3 if b.meta["mode"] == "training" else 1
            rows.append({
                **{c: b.meta[c] for c in _MODEL_COLUMNS + ("shape_set",)},
                "M": (b.shapes.tokens if b.shapes.tokens is not None  # experts see top_k x
                      else float(m[0]) if np.all(m == m[0]) else math.nan),
                "layers": len(b.shapes), "count": float(np.sum(w)),
                "flops": gemms * b.shapes.total_flops,
                "baseline_time": base, "lowp_time": lowp, "speedup": base / lowp,
            })
        # strings as object arrays, as in the sweep's own columns
        return Table({c: np.array([r[c] for r in rows],
                                  dtype=object if isinstance(rows[0][c], str) else None)
                      for c in rows[0]}, self.caption, _TOTAL_PREVIEW)


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
    along="cube")``, NaN if none) with ``faster_on_cube``: whether the cube
    of the same FLOPs, ``cube_size = (M K N)**(1/3)``, lies where low
    precision is faster.

    >>> import roofline_sym as rs
    >>> ms = model_grid(["tensorwise", "rowwise"], ["h100", "b200"])
    >>> res = sweep(ms, (8192, 8192, [512, 8192]))
    >>> len(res), res["gpu"][:2].tolist(), res["speedup"][:2].round(3).tolist()
    (8, ['H100 SXM', 'H100 SXM'], [0.724, 1.652])
    >>> res["faster"][:2].tolist(), res["faster_on_cube"][:2].tolist()
    ([False, True], [False, True])
    """
    models = items(models, "sweep: models (bound rs.linear(...).on(hw), or a list of them)",
                   Linear)
    if not models:
        raise ValueError("no models to sweep")
    for m in models:
        if m.hardware is None:
            raise ValueError(f"{m!r} has no hardware: bind one with .on(hw) (or build the "
                             "list with model_grid)")
    sets = _shape_sets(shapes)
    total = len(models) * sum(len(s) for s in sets)
    check_size(total, f"a sweep of {len(models)} model(s) over {total // len(models)} "
               "shapes", MAX_ROWS)
    done = 0
    blocks = []
    for model in models:
        x_star, be = _cube_context(model)
        for s in sets:
            values = _evaluate(model, s, be, progress, done, total)
            done += len(s)
            meta = {"gpu": model.hardware.name, "recipe": model.recipe.name,
                    "mode": model.mode, "fuse": model.fuse, "preset": model.preset,
                    "shape_set": s.name, "cube_breakeven": x_star}
            blocks.append(_Block(meta, s, values))
    return SweepResult(blocks, describe_models(models))


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
def _shape_sets(shapes: Any) -> list[ShapeSet]:
    if isinstance(shapes, (ShapeSet, str)):
        return [shape_set(shapes)]
    if isinstance(shapes, Mapping):
        missing = {"M", "K", "N"} - set(shapes)
        if missing:
            raise ValueError(f"shape mapping lacks {sorted(missing)}; give M, K and N")
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


def _cube_context(model: Linear) -> tuple[float, Any]:
    """The model's cube break-even: (smallest root or step, or NaN; the BreakEven)."""
    be = breakeven(model, along="cube")
    roots = be.crossing_values  # a block-scale step that crosses counts too
    return (float(roots[0]) if len(roots) else math.nan), be


def _regimes(model: Linear, m: np.ndarray, k: np.ndarray,
             n: np.ndarray) -> dict[str, np.ndarray]:
    """Per row and kernel group, the regime holding most of the group's time.

    Each term's time and regime come from ``Linear.evaluate_terms``; a group's
    label is the regime whose terms add up to the most time, so one slow
    compute-bound GEMM outweighs two launch-bound small ones.
    """
    terms = model.evaluate_terms(m, k, n)
    per_group = {(side, group): np.zeros((len(REGIMES),) + m.shape)
                 for _, side, group in _GROUPS}
    present = set()
    for t in model.terms:
        acc = per_group.get((t.side, t.group))
        if acc is None:
            continue  # e.g. the bf16 activation of fused inference: not labelled
        present.add((t.side, t.group))
        time, labels = terms[t.name]
        for i, r in enumerate(REGIMES):
            acc[i] += np.where(labels == r, time, 0.0)
    names = np.array(REGIMES, dtype=object)
    # a group without kernels (none in the shipped recipes) is labelled "none"
    return {col: names[np.argmax(per_group[(side, group)], axis=0)]
            if (side, group) in present else np.full(m.shape, "none", dtype=object)
            for col, side, group in _GROUPS}


def _evaluate(model: Linear, s: ShapeSet, be, progress, done: int,
              total: int) -> dict[str, np.ndarray]:
    parts: list[dict[str, np.ndarray]] = []
    grouped: dict[float, Linear] = {1.0: model}
    for start in range(0, len(s), _CHUNK):
        sl = slice(start, start + _CHUNK)
        m, k, n = s.M[sl], s.K[sl], s.N[sl]
        out = _rows(model, m, k, n, s.groups[sl], grouped)
        out["faster"] = out["lowp_time"] < out["baseline_time"]
        cube = np.cbrt(m * k * n)
        out["cube_size"] = cube
        out["faster_on_cube"] = be.is_faster(cube)
        parts.append(out)
        if progress is not None:
            progress(done + min(start + _CHUNK, len(s)), total)
    return {key: _concat([p[key] for p in parts]) for key in parts[0]}


def _rows(model: Linear, m: np.ndarray, k: np.ndarray, n: np.ndarray, groups: np.ndarray,
          models: dict[float, Linear]) -> dict[str, np.ndarray]:
    """The outputs and regimes of rows; a row of a grouped GEMM (groups > 1)
    by the model with that many experts (``Linear.with_groups``)."""
    out: dict[str, np.ndarray] = {}
    for g in np.unique(groups):
        rows = slice(None) if len(np.unique(groups)) == 1 else groups == g
        if g not in models:
            models[g] = model.with_groups(int(g))
        mg = models[g]
        part = dict(mg.evaluate(M=m[rows], K=k[rows], N=n[rows]))
        part.update(_regimes(mg, m[rows], k[rows], n[rows]))
        if isinstance(rows, slice):
            return part
        for key, v in part.items():
            out.setdefault(key, np.empty(len(m), dtype=v.dtype))[rows] = v
    return out


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
