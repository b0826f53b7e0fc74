"""roofline_sym: cost models of low-precision linear layers as SymPy expressions.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="training", fuse=True).on(rs.hardware("h100"))
>>> float(m.evaluate(M=16384, K=8192, N=8192)["speedup"]) > 1
True
"""

import importlib
import sys
from typing import Any

from . import _compat
from ._version import version as _version
from .devices import (
    Dataset,
    Hardware,
    HardwareError,
    MissingHardwareValueError,
    UnknownHardwareError,
    hardware,
    list_hardware,
    load_hardware,
)
from .model.elasticity import sensitivity
from .model.limits import limits
from .model.linear import OUTPUTS, Linear, linear
from .model.presets import PRESETS, Options, options as _options
from .model.recipes import MODES, list_recipes as _list_recipes
from .model.workloads import WORKLOADS, Workload, list_workloads
from .numeric.shapes import ShapeSet, grid, list_shape_sets, load_shape_sets
from .numeric.sweep import (SweepResult, Table, model_grid, sweep, sweep_chunks, sweep_totals,
                            write_sweep)
from .solve import BreakEven, breakeven
from .output import breakdown, breakeven_rows, breakeven_table, latex, latex_preamble
from .model.formats import element, scaling
from .interop import float8_module_filter, shape_set, shapes_from_module
from .symbols import K, M, N, x



def __getattr__(name: str) -> Any:
    if name in _compat.PUBLIC:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'roofline_sym' has no attribute {name!r}")


def list_recipes(mode: str = "training", preset: str = "default") -> list[str]:
    """Recipe names for ``mode`` under ``preset``; in training the last two,
    ``dynamic`` and ``delayed``, are the seed document's fp8 scalings, which no
    torchao recipe runs (``roofline-sym recipes`` marks where each comes from).

    >>> "mxfp8_cublas" in list_recipes("training")
    True
    >>> list_recipes("training")[-2:]
    ['dynamic', 'delayed']
    """
    return _list_recipes(mode, _options(preset).recipe_table)


__all__ = [
    "M", "K", "N", "x", "breakeven", "BreakEven", "latex", "latex_preamble", "breakdown",
    "breakeven_table",
    "breakeven_rows",
    "Hardware", "Dataset", "HardwareError", "UnknownHardwareError",
    "MissingHardwareValueError", "hardware", "list_hardware", "load_hardware",
    "Linear", "linear", "limits", "OUTPUTS", "sensitivity", "list_recipes", "MODES", "PRESETS",
    "Options",
    "Workload", "WORKLOADS", "list_workloads",
    "element", "scaling",
    "ShapeSet", "shape_set", "list_shape_sets", "load_shape_sets", "grid",
    "sweep", "sweep_chunks", "sweep_totals", "write_sweep", "SweepResult", "Table",
    "model_grid",
    "shapes_from_module", "float8_module_filter",
    "measure", "calibrate", "fidelity", "plot",
]

# Module attributes (rs.measure, rs.calibrate, rs.fidelity, rs.plot) load on
# first access (__getattr__); old module paths import through _compat.
_compat.install(sys.modules[__name__])
