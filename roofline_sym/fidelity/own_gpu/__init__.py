"""The model held to a GPU of one's own (``roofline-sym measure``, ``fidelity``).

``components`` (what is timed and what the model charges for it),
``timing`` (the shape grids and the timing loop), ``cuda`` (torch and CUDA,
imported only when timing), ``measurement_file`` (the CSV),
``hardware_fit`` (efficiencies, launch floor and fixed times fitted to the
file), ``comparison`` (predicted vs measured, before and after the fit).
"""

from .comparison import measured_report, sample_path
from .cuda import MeasureError
from .hardware_fit import Calibration, fit_hardware, synthesize
from .measurement_file import Measurements, read_csv
from .timing import GRIDS, grid, measure

__all__ = ["measure", "grid", "GRIDS", "MeasureError", "Measurements", "read_csv", "fit_hardware",
           "synthesize", "Calibration", "measured_report", "sample_path"]
