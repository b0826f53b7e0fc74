"""How well the model predicts measurements: two pipelines.

``published_tables`` holds the model to the speedups and GEMM kernel times
that papers, pull requests and READMEs published (read, predict a row, the
joint fit, the per-GPU fits behind the shipped data, cross-validation,
prediction intervals, the scorecard).  ``own_gpu`` measures a GPU of one's
own (the components timed, the shape grid, CUDA timing, the measurement
file, the hardware fit, the comparison).  Nothing here loads at ``import
roofline_sym``; ``rs.fidelity`` loads it on first use.
"""

from .own_gpu.comparison import GOALS, Report, cli, composed_components, report, sample_path
from .published_tables.cross_validation import leave_one_source_out
from .published_tables.intervals import breakeven_range, speedup_band
from .published_tables.joint_fit import fit_speedups
from .published_tables.prediction import predict_speedups
from .published_tables.scorecard import heldout
from .published_tables.scorecard import report as published_report
from .published_tables.speedup_table import SpeedupTable, published
from .published_tables.speedup_table import read as read_speedups
from .published_tables.stored_residuals import stored_cross_validation

__all__ = ["Report", "report", "cli", "sample_path", "GOALS", "composed_components",
           "predict_speedups", "published", "published_report", "heldout", "SpeedupTable",
           "read_speedups", "leave_one_source_out", "breakeven_range", "speedup_band",
           "fit_speedups", "stored_cross_validation"]
