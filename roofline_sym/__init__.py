"""roofline_sym: cost models of low-precision linear layers as SymPy expressions.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="training", fuse=True).on(rs.hardware("h100"))
>>> float(m.evaluate(M=16384, K=8192, N=8192)["speedup"]) > 1
True
"""

from typing import TYPE_CHECKING

from . import renderers
from .exports import lazy
from .symbols import K, M, N, x

if TYPE_CHECKING:
    from . import fidelity
    from .architectures import architecture
    from .devices import Hardware, hardware, list_hardware, load_hardware
    from .interop import float8_module_filter, shape_set, shapes_from_module
    from .model import OUTPUTS, Linear, limits, list_workloads, linear, sensitivity
    from .model.presets import preset_recipes as list_recipes
    from .numeric import ShapeSet, SweepResult, grid, list_shape_sets, model_grid, sweep
    from .output import breakeven_table, latex, latex_preamble
    from .output import plot
    from .solve import BreakEven, breakeven
    from .steps import step

# every public name's module, imported on first use: `import roofline_sym` loads
# the shape symbols and nothing else (no model is built, no printer loaded);
# rs.linear loads the model, rs.plot matplotlib's module, rs.fidelity its own
_WHERE: dict[str, str | tuple[str, str]] = {
    **dict.fromkeys(["Hardware", "hardware", "list_hardware", "load_hardware"], ".devices"),
    **dict.fromkeys(["float8_module_filter", "shape_set", "shapes_from_module"], ".interop"),
    **dict.fromkeys(["OUTPUTS", "Linear", "limits", "list_workloads", "linear", "sensitivity"],
                    ".model"),
    "list_recipes": (".model.presets", "preset_recipes"),
    **dict.fromkeys(["ShapeSet", "SweepResult", "grid", "list_shape_sets", "model_grid", "sweep"],
                    ".numeric"),
    **dict.fromkeys(["breakeven_table", "latex", "latex_preamble"], ".output"),
    **dict.fromkeys(["BreakEven", "breakeven"], ".solve"),
    "step": ".steps",
    "architecture": ".architectures",
    "__version__": "._version",
}
# names whose value is a module (rs.plot is roofline_sym.output.plot)
_MODULE_ATTRIBUTES = {"fidelity": ".fidelity", "plot": ".output.plot"}

__getattr__, __dir__ = lazy(__name__, _WHERE, _MODULE_ATTRIBUTES)

# the output layer's LaTeX writers (inline, then blocks of a width), imported the
# first time a model or a break-even is written: model.latex() needs no import of them
_WRITERS = (f"{__name__}.output.blocks", f"{__name__}.output.paper")
for _module in _WRITERS:
    renderers.defer(_module)
del _module


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
