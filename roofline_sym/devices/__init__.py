"""The hardware layer: GPU entries, the shipped datasets, their TOML files and sources.

``hardware_entry`` (``Hardware``, validated field by field), ``ranges``
(the plausible range of every number), ``datasets``
(``Dataset``: lookup by name, alias or device name), ``toml_io`` (the
hardware file's reader and writer), ``catalog`` (the shipped datasets,
``hardware()``), ``sources`` (citations), ``implementations`` (the GEMM
libraries' profiles) and ``timers`` (how a measurement was timed).

>>> from roofline_sym.devices import hardware
>>> hardware("h100").name
'H100 SXM'
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .catalog import DATASETS, dataset, hardware, list_hardware
    from .datasets import Dataset
    from .hardware_entry import (Hardware, HardwareError, MissingHardwareValueError,
                                 UnknownHardwareError)
    from .toml_io import load_hardware

# each name's module, imported on first use
_WHERE = {
    **dict.fromkeys(["DATASETS", "dataset", "hardware", "list_hardware"], ".catalog"),
    "Dataset": ".datasets",
    **dict.fromkeys(["Hardware", "HardwareError", "MissingHardwareValueError",
                     "UnknownHardwareError"], ".hardware_entry"),
    "load_hardware": ".toml_io",
}

__all__ = ["Hardware", "Dataset", "HardwareError", "UnknownHardwareError",
           "MissingHardwareValueError", "DATASETS", "hardware", "list_hardware",
           "load_hardware", "dataset"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
