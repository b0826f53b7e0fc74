"""roofline_sym: cost models of low-precision linear layers as SymPy expressions.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="training", fuse=True).on(rs.hardware("h100"))
>>> float(m.evaluate(M=16384, K=8192, N=8192)["speedup"]) > 1
True
"""

import importlib
from typing import Any

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
from .model import (MODES, OUTPUTS, PRESETS, WORKLOADS, Linear, Options, Workload, element,
                    limits, list_workloads, linear, scaling, sensitivity)
from .model.presets import options as _options
from .model.recipes import list_recipes as _list_recipes
from .numeric import (ShapeSet, SweepResult, Table, grid, list_shape_sets, load_shape_sets,
                      model_grid, sweep, sweep_chunks, sweep_totals, write_sweep)
from .solve import BreakEven, breakeven
from .output import breakdown, breakeven_rows, breakeven_table, latex, latex_preamble
from .interop import float8_module_filter, shape_set, shapes_from_module
from .symbols import K, M, N, x



# module attributes, loaded on first access (so `import roofline_sym` loads no
# torch, matplotlib or scipy): rs.measure is roofline_sym.fidelity.own_gpu.timing
_MODULE_ATTRIBUTES = {
    "measure": "fidelity.own_gpu.timing",
    "calibrate": "fidelity.own_gpu.hardware_fit",
    "fidelity": "fidelity",
    "plot": "output.plot",
}


def __getattr__(name: str) -> Any:
    if name in _MODULE_ATTRIBUTES:
        return importlib.import_module(f"{__name__}.{_MODULE_ATTRIBUTES[name]}")
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'roofline_sym' has no attribute {name!r}")


def list_recipes(mode: str = "training", preset: str = "default") -> list[str]:
    """Recipe names for ``mode`` under ``preset``.

    >>> "mxfp8_cublas" in list_recipes("training")
    True
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
