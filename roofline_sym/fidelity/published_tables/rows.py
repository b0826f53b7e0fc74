"""Predicting a speedup table: each row's GPU, recipe and workload as a model.

A row names a GPU (``h100``), a recipe as the measurement source wrote it
(``mxfp8_cublas`` for inference means the inference recipe ``mxfp8``), a
mode and a workload; ``row_model`` turns that into the model the preset
builds and the hardware entry of the preset's dataset.  ``predict`` groups
the rows by model and evaluates each group at once.  The measured column is
never read.

>>> from roofline_sym.fidelity.published_tables.speedup_table import read
>>> t = read([{"gpu": "h100", "recipe": "rowwise", "mode": "training",
...            "workload": "ln-linear-sigmoid", "M": 16384, "K": 8192, "N": 8192}])
>>> float(predict(t)[0]) > 1
True
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ...devices import Hardware, UnknownHardwareError, hardware
from ...errors import InputError
from ...model.layer import Linear, linear
from ...model.presets import PRESETS
from ...model.recipes import list_recipes
from ...model.workloads import WORKLOADS
from ...validate import unknown_name
from .speedup_table import SpeedupTable, read

__all__ = ["predict", "row_model", "row_gpu", "row_family", "predictable", "GPU_KEYS",
           "UnsupportedRowError"]

# GPU keys of the published tables -> entry per dataset where the key itself is
# not a name or alias there (torchao's table knows five GPUs; the seed one)
GPU_KEYS = {
    "torchao": {"h100": "NVIDIA H100", "h100-96gb-hbm2e": "NVIDIA H100", "h800": "NVIDIA H100",
                "h200": "NVIDIA H100", "b200": "NVIDIA B200", "gb200": "NVIDIA GB200",
                "b300": "NVIDIA B300 SXM6 AC", "mi300x": "AMD Instinct MI300X"},
    "seed": {"h100": "NVIDIA H100", "h100-96gb-hbm2e": "NVIDIA H100", "h800": "NVIDIA H100"},
}
# recipe names of the measurement sources -> this library's, per mode
_RECIPES = {("tensorwise_delayed", "training"): "delayed"}
# workloads that time more than one linear layer: no single-shape prediction
_WHOLE_MODEL = ("e2e-", "moe-layer", "toy-")


class UnsupportedRowError(InputError):
    """A row the model cannot predict (a whole-model workload, a missing shape)."""


def _recipe_name(recipe: str, mode: str) -> str:
    return _RECIPES.get((recipe, mode), recipe)


@cache
def row_gpu(key: str, dataset: str = "default") -> Hardware:
    """The hardware entry a row's GPU key names in ``dataset``."""
    try:
        return hardware(key, dataset=dataset)
    except UnknownHardwareError:
        if key in GPU_KEYS.get(dataset, {}):
            return hardware(GPU_KEYS[dataset][key], dataset=dataset)
        raise


@cache
def _model(recipe: str, mode: str, workload: str, groups: int, preset: str,
           implementation: str = "torch", timer: str = "") -> Linear:
    # one group: linear's default (None), a dense layer; a blank timer: the preset's
    return linear(_recipe_name(recipe, mode), mode=mode, preset=preset, workload=workload,
                  groups=None if groups == 1 else groups, implementation=implementation,
                  timer=timer or PRESETS[preset].timer)


@cache
def _bound(model: Linear, gpu: Hardware) -> Linear:
    return model.on(gpu)


def row_model(table: SpeedupTable, i: int, preset: str = "default") -> Linear:
    """The bound model that predicts row ``i`` of ``table`` under ``preset``.

    Errors name the row: an unknown GPU, recipe or workload, a whole-model
    workload (``UnsupportedRowError``), a recipe the GPU cannot run.
    """
    model = _row_linear(table, i, preset)
    try:
        gpu = row_gpu(str(table.gpu[i]), PRESETS[preset].dataset)
    except UnknownHardwareError as exc:
        raise InputError(f"{table.where(i, 'gpu')}: {exc}") from None
    try:
        return _bound(model, gpu)
    except ValueError as exc:
        raise InputError(f"{table.where(i)}: {exc}") from None


def _row_linear(table: SpeedupTable, i: int, preset: str) -> Linear:
    """Row ``i``'s model before it is bound to a GPU; errors name the row."""
    where = table.where(i)
    workload = str(table.workload[i])
    if workload.startswith(_WHOLE_MODEL):
        raise UnsupportedRowError(f"{where}: workload {workload!r} times a whole model, not "
                                  "one layer shape; only single-shape workloads are predicted "
                                  f"({', '.join(WORKLOADS)})")
    if np.isnan([table.M[i], table.K[i], table.N[i]]).any():
        raise UnsupportedRowError(f"{where}: M, K and N are needed for a prediction")
    if workload not in WORKLOADS:
        raise unknown_name("workload", workload, WORKLOADS, where=f"{table.where(i, 'workload')}: ")
    mode, recipe = str(table.mode[i]), str(table.recipe[i])
    try:
        model = _model(recipe, mode, workload, int(table.groups[i]), preset,
                       str(table.implementation[i]), str(table.timer[i]))
    except (ValueError, TypeError) as exc:
        if "recipe" in str(exc) and recipe not in list_recipes(mode) and mode in (
                "training", "inference"):
            raise unknown_name(f"{mode} recipe", recipe, list_recipes(mode),
                               where=f"{table.where(i, 'recipe')}: ") from None
        raise InputError(f"{where}: {exc}") from None
    return model


def unbound_row_model(table: SpeedupTable, i: int, preset: str = "default") -> Linear:
    """Row ``i``'s model before ``.on(gpu)``, to bind to a refitted entry (or
    a GPU of one's own file: the row's GPU key need not name a shipped one)."""
    return _row_linear(table, i, preset)


def row_family(table: SpeedupTable, i: int) -> str | None:
    """The scaling family of row ``i``'s low-precision output GEMM."""
    family: str | None = unbound_row_model(table, i).recipe.family("output")
    return family


def predictable(table: SpeedupTable) -> np.ndarray:
    """Which rows are single-shape rows a model can predict (shape given, not
    a whole-model workload)."""
    single = np.array([not str(w).startswith(_WHOLE_MODEL) for w in table.workload], bool)
    ok: np.ndarray = single & ~np.isnan(np.stack([table.M, table.K, table.N])).any(axis=0)
    return ok


def predict(table: Any, preset: str = "default", *, unsupported: str = "raise") -> np.ndarray:
    """One predicted speedup per row of ``table`` (see ``speedup_table.read``
    for what a table may be), in row order.  ``measured_speedup`` is never
    read.  ``unsupported="nan"`` leaves rows no single-shape model predicts
    (whole-model workloads, blank shapes) NaN instead of raising.
    """
    if unsupported not in ("raise", "nan"):
        raise InputError(f"unsupported must be 'raise' or 'nan', not {unsupported!r}")
    if preset not in PRESETS:
        raise InputError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    table = read(table)
    out = np.full(len(table), np.nan)
    groups: dict[int, tuple[Linear, list[int]]] = {}  # by bound model
    for i in range(len(table)):
        try:
            model = row_model(table, i, preset)
        except UnsupportedRowError:
            if unsupported == "raise":
                raise
            continue
        groups.setdefault(id(model), (model, []))[1].append(i)
    for model, rows in groups.values():
        idx = np.array(rows)
        out[idx] = model.evaluate(table.M[idx], table.K[idx], table.N[idx])["speedup"]
    return out
