"""The hardware layer: GPU entries, the shipped datasets, their TOML files and sources.

>>> from roofline_sym.devices import hardware
>>> hardware("h100").name
'H100 SXM'
"""

from .catalog import (
    DATASETS,
    Dataset,
    Hardware,
    HardwareError,
    MissingHardwareValueError,
    UnknownHardwareError,
    dataset,
    hardware,
    list_hardware,
    load_hardware,
)

__all__ = ["Hardware", "Dataset", "HardwareError", "UnknownHardwareError",
           "MissingHardwareValueError", "DATASETS", "hardware", "list_hardware",
           "load_hardware", "dataset"]
