"""roofline_sym: cost models of low-precision linear layers as SymPy expressions.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="training", fuse=True).on(rs.hardware("h100"))
>>> float(m.evaluate(M=16384, K=8192, N=8192)["speedup"]) > 1
True
"""

import importlib
from typing import Any

from ._version import version as _version
from .architectures import architecture
from .devices import Hardware, hardware, list_hardware, load_hardware
from .interop import float8_module_filter, shape_set, shapes_from_module
from .model import OUTPUTS, Linear, limits, list_workloads, linear, sensitivity
from .model.presets import options as _options
from .model.recipes import list_recipes as _list_recipes
from .numeric import ShapeSet, SweepResult, grid, list_shape_sets, model_grid, sweep
from .output import breakeven_table, latex, latex_preamble
from .solve import BreakEven, breakeven
from .steps import step
from .symbols import K, M, N, x


# module attributes, loaded on first access (so `import roofline_sym` loads no
# torch, matplotlib or scipy): rs.plot is roofline_sym.output.plot
_MODULE_ATTRIBUTES = {"fidelity": "fidelity", "plot": "output.plot"}


def __getattr__(name: str) -> Any:
    if name in _MODULE_ATTRIBUTES:
        return importlib.import_module(f"{__name__}.{_MODULE_ATTRIBUTES[name]}")
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


# what a user needs at the top; the rest is one package down (rs.devices:
# Dataset and the hardware errors; rs.model: presets, workloads, formats;
# rs.numeric: streamed sweeps; rs.output: LaTeX pieces; rs.fidelity.own_gpu:
# measuring and fitting a GPU of one's own)
__all__ = [
    "M", "K", "N", "x",
    "linear", "Linear", "list_recipes", "list_workloads", "OUTPUTS", "step",
    "hardware", "list_hardware", "load_hardware", "Hardware",
    "breakeven", "BreakEven", "limits", "sensitivity",
    "latex", "latex_preamble", "breakeven_table",
    "shape_set", "ShapeSet", "list_shape_sets", "grid", "sweep", "SweepResult", "model_grid",
    "shapes_from_module", "float8_module_filter", "architecture",
    "fidelity", "plot",
]
