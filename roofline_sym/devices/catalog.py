"""The shipped hardware datasets and lookup by name.

``default`` (this project's: 16 GPUs, every number sourced), ``torchao``
(torchao 0.18's table, as torchao has it) and ``seed`` (the seed document's
constants), from ``roofline_sym/data/<name>.toml``.

>>> import roofline_sym as rs
>>> hw = rs.hardware("h100-sxm")
>>> hw.name, float(hw.mem_bw)
('H100 SXM', 3350000000000.0)
>>> rs.hardware("NVIDIA H200").name
'H200 SXM'
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from .datasets import Dataset
from .entry import Hardware
from .toml_io import parse, tomllib

__all__ = ["DATASETS", "dataset", "hardware", "list_hardware"]

DATASETS = ("default", "torchao", "seed")


@cache
def dataset(name: str = "default") -> Dataset:
    """A shipped dataset: ``default``, ``torchao`` (torchao 0.18) or ``seed``."""
    if name not in DATASETS:
        raise ValueError(f"unknown hardware dataset {name!r}; known: {', '.join(DATASETS)}")
    text = resources.files("roofline_sym").joinpath("data", f"{name}.toml").read_text("utf-8")
    return parse(tomllib.loads(text), f"roofline_sym/data/{name}.toml", name)


def hardware(name: str | Hardware, dataset: str | Dataset = "default") -> Hardware:
    """Look up hardware by name, alias or ``torch.cuda.get_device_name()`` string.

    >>> hardware("NVIDIA H100", dataset="torchao").name
    'NVIDIA H100'
    """
    if isinstance(name, Hardware):
        return name
    return _dataset(dataset).get(name)


def list_hardware(dataset: str | Dataset = "default") -> list[str]:
    """Names of the entries of a dataset.

    >>> "H200 SXM" in list_hardware()
    True
    """
    return _dataset(dataset).names()


def _dataset(ds: str | Dataset) -> Dataset:
    return ds if isinstance(ds, Dataset) else dataset(ds)
