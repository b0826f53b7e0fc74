"""A sweep as an ``xarray.Dataset``: dimensions gpu, recipe, shape.

``SweepResult.to_xarray()`` lays the rows of a sweep on a grid: one axis per
GPU, per recipe and per shape (the rows of its shape sets, in order, labelled
``set/layer``: ``ds.sel(shape="llama3-8b/mlp.up_proj")``), and one more for
each of mode, fuse and preset that takes several values in the sweep
(otherwise a scalar coordinate).  The variables are the seven outputs of
``Linear.evaluate``; a model the sweep did not run (a recipe a GPU lacks) is
NaN.  Along ``shape`` the
coordinates ``shape_set``, ``name``, ``M``, ``K``, ``N``, ``count`` and
``groups`` say which layer each index is.  xarray is imported here, when
called; it writes netCDF and zarr, and ``to_dataframe()`` gives the long table
back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from ..errors import InputError

if TYPE_CHECKING:
    import xarray

    from .shapes import ShapeSet

__all__ = ["to_xarray", "MODEL_DIMS"]

MODEL_DIMS = ("gpu", "recipe")
_OPTIONAL_DIMS = ("mode", "fuse", "preset")


def to_xarray(blocks: Sequence[Any], outputs: Sequence[str]) -> xarray.Dataset:
    """The blocks of a sweep (each: ``meta``, ``shapes``, ``values``) as a Dataset."""
    try:
        import xarray as xr
    except ImportError:
        raise ImportError("to_xarray() needs xarray, which is not installed: pip install "
                          "xarray (or roofline-sym[dask]); to_pandas() and to_csv() need "
                          "less") from None
    dims = list(MODEL_DIMS) + [d for d in _OPTIONAL_DIMS
                               if len({b.meta[d] for b in blocks}) > 1]
    axes = {d: list(dict.fromkeys(b.meta[d] for b in blocks)) for d in dims}
    sets: dict[tuple[str, int], tuple[ShapeSet, int]] = {}  # (set name, id): (set, offset)
    offset = 0
    for b in blocks:
        key = (b.meta["shape_set"], id(b.shapes))
        if not any(k[0] == key[0] and _same(s, b.shapes) for k, (s, _) in sets.items()):
            sets[key] = (b.shapes, offset)
            offset += len(b.shapes)
    data = {name: np.full([len(axes[d]) for d in dims] + [offset], np.nan) for name in outputs}
    seen = set()
    for b in blocks:
        at = tuple(axes[d].index(b.meta[d]) for d in dims)
        start = next(o for k, (s, o) in sets.items()
                     if k[0] == b.meta["shape_set"] and _same(s, b.shapes))
        where = at + (start,)
        if where in seen:
            raise InputError(f"two models of the sweep share {dict(zip(dims, where))}: "
                             "to_xarray needs one model per (gpu, recipe, mode, fuse, preset); "
                             "use to_pandas() for this sweep")
        seen.add(where)
        for name in outputs:
            data[name][at + (slice(start, start + len(b.shapes)),)] = b.values[name]
    shapes = [s for s, _ in sets.values()]
    # strings as fixed-width unicode: netCDF writers take those, not objects
    coords: dict[str, np.ndarray | tuple[str, np.ndarray]] = {d: np.array(axes[d]) for d in dims}
    coords["shape"] = _labels(shapes)
    per_shape = {
        "shape_set": np.array([s.name for s in shapes for _ in range(len(s))]),
        "name": np.array([n for s in shapes for n in s.names]),
        "M": np.concatenate([s.M for s in shapes]),
        "K": np.concatenate([s.K for s in shapes]),
        "N": np.concatenate([s.N for s in shapes]),
        "count": np.concatenate([s.counts for s in shapes]),
        "groups": np.concatenate([s.groups for s in shapes]),
    }
    coords.update({k: ("shape", v) for k, v in per_shape.items()})
    all_dims = tuple(dims) + ("shape",)
    for d in _OPTIONAL_DIMS:  # the same for every model: a scalar coordinate
        if d not in dims:
            coords[d] = np.array(blocks[0].meta[d])
    return xr.Dataset({name: (all_dims, arr, {"units": "1" if name == "speedup" else "s"})
                       for name, arr in data.items()}, coords=coords)


def _labels(shapes: Sequence[ShapeSet]) -> np.ndarray:
    """One label per row of the sets: ``set/layer`` (``llama3-8b/mlp.up_proj``),
    with ``#i`` (the row's index along ``shape``) where two would be equal."""
    labels = [f"{s.name}/{n}" for s in shapes for n in s.names]
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    return np.array([label if seen[label] == 1 else f"{label}#{i}"
                     for i, label in enumerate(labels)])


def _same(a: Any, b: Any) -> bool:
    """Whether two shape sets hold the same rows (a sweep rebuilds named sets)."""
    return a is b or (len(a) == len(b) and a.names == b.names and np.array_equal(a.M, b.M)
                      and np.array_equal(a.K, b.K) and np.array_equal(a.N, b.N))
