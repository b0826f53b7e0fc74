"""Numbers at many shapes: shape sets (``shapes``), tables (``table``), sweeps
of models over shape sets (``sweep_table``), conversions for other
libraries (``convert``, ``frames``).

>>> from roofline_sym.numeric import grid, sweep_totals
>>> len(grid(M=[1024, 2048], K=4096, N=4096))
2
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .shapes import ShapeSet, grid, list_shape_sets, load_shape_sets
    from .sweep_table import (SweepResult, model_grid, sweep, sweep_chunks, sweep_totals,
                              write_sweep)
    from .table import Table

# each name's module, imported on first use
_WHERE = {
    **dict.fromkeys(["ShapeSet", "grid", "list_shape_sets", "load_shape_sets"], ".shapes"),
    **dict.fromkeys(["SweepResult", "model_grid", "sweep", "sweep_chunks", "sweep_totals",
                     "write_sweep"], ".sweep_table"),
    "Table": ".table",
}

__all__ = ["ShapeSet", "grid", "list_shape_sets", "load_shape_sets", "sweep", "sweep_chunks",
           "sweep_totals", "write_sweep", "model_grid", "SweepResult", "Table"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
