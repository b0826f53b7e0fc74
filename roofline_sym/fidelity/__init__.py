"""How well the model predicts measurements: two pipelines.

``published_tables`` holds the model to the speedups and GEMM kernel times
that papers, pull requests and READMEs published (read, predict a row, the
joint fit, the per-GPU fits behind the shipped data, cross-validation,
prediction intervals, the scorecard).  ``own_gpu`` measures a GPU of one's
own (the components timed, the shape grid, CUDA timing, the measurement
file, the hardware fit, the comparison).  Nothing here loads at ``import
roofline_sym``; each name below loads its module on first use.

>>> import roofline_sym as rs
>>> rs.fidelity.speedup_band is rs.fidelity.published_tables.intervals.speedup_band
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .own_gpu.comparison import (GOALS, Report, composed_components, measured_report,
                                     sample_path)
    from .published_tables.cross_validation import leave_one_source_out
    from .published_tables.intervals import breakeven_range, speedup_band
    from .published_tables.joint_fit import fit_speedups
    from .published_tables.prediction import predict_speedups
    from .published_tables.scorecard import heldout
    from .published_tables.scorecard import published_report
    from .published_tables.speedup_table import SpeedupTable, published
    from .published_tables.speedup_table import read as read_speedups
    from .published_tables.step_prediction import predict_steps
    from .published_tables.step_table import read_steps
    from .published_tables.stored_residuals import stored_cross_validation

# every name's module and its name there, loaded on first access: a module
# that needs one pipeline (the main job's intervals) does not load the other
_WHERE = {
    **dict.fromkeys(["GOALS", "Report", "composed_components", "measured_report",
                     "sample_path"], "own_gpu.comparison"),
    "leave_one_source_out": "published_tables.cross_validation",
    "breakeven_range": "published_tables.intervals",
    "speedup_band": "published_tables.intervals",
    "fit_speedups": "published_tables.joint_fit",
    "predict_speedups": "published_tables.prediction",
    "heldout": "published_tables.scorecard",
    "published_report": "published_tables.scorecard",
    "SpeedupTable": "published_tables.speedup_table",
    "published": "published_tables.speedup_table",
    "read_speedups": "published_tables.speedup_table",
    "stored_cross_validation": "published_tables.stored_residuals",
    "read_steps": "published_tables.step_table",
    "predict_steps": "published_tables.step_prediction",
}
_RENAMED = {"read_speedups": "read"}

__all__ = ["Report", "measured_report", "sample_path", "GOALS", "composed_components",
           "predict_speedups", "published", "published_report", "heldout", "SpeedupTable",
           "read_speedups", "leave_one_source_out", "breakeven_range", "speedup_band",
           "fit_speedups", "stored_cross_validation", "read_steps", "predict_steps"]


_PIPELINES = ("own_gpu", "published_tables")


def __getattr__(name: str) -> Any:
    if name in _PIPELINES:  # rs.fidelity.own_gpu.measure
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"),
                    _RENAMED.get(name, name))
    globals()[name] = value  # found once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_PIPELINES))
