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

from ..errors import InputError
from ..validate import choice
from .datasets import Dataset
from .hardware_entry import Hardware
from .toml_io import hardware_toml, parse, tomllib

__all__ = ["DATASETS", "dataset", "hardware", "list_hardware", "entry_toml"]

DATASETS = ("default", "torchao", "seed")


def dataset(name: str = "default") -> Dataset:
    """A shipped dataset: ``default``, ``torchao`` (torchao 0.18) or ``seed``."""
    return _parsed(choice(name, DATASETS, "hardware dataset"))


@cache
def _parsed(name: str) -> Dataset:
    return parse(tomllib.loads(_shipped(name)), f"roofline_sym/data/{name}.toml", name)


def _shipped(name: str) -> str:
    return resources.files("roofline_sym").joinpath("data", f"{name}.toml").read_text("utf-8")


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


def entry_toml(name: str, dataset: str | Dataset = "default") -> str:
    """One entry as a hardware file to start one's own from.

    The entry's numbers, notes and sources as its dataset has them (with the
    dataset's citation keys), renamed ``"<name> (custom)"`` and without
    aliases, so that it can stand next to the built-in entry in one command.
    ``roofline-sym hardware NAME --toml`` prints it.

    >>> from roofline_sym.devices.toml_io import parse
    >>> text = entry_toml("h100")
    >>> parse(tomllib.loads(text), "<text>").entries[0].name
    'H100 SXM (custom)'
    """
    ds = _dataset(dataset)
    hw = ds.get(name)
    shipped = ds.name in DATASETS and ds.path == f"roofline_sym/data/{ds.name}.toml"
    if shipped:
        text = _shipped(ds.name)
    elif ds.path:
        with open(ds.path, encoding="utf-8") as f:
            text = f.read()
    else:
        raise InputError(f"dataset {ds.name!r} has no file to read {hw.name}'s sources from")
    raw = tomllib.loads(text)
    sources = raw["gpu"][ds.entries.index(hw)].get("sources", {})
    mine = hw.replace(name=f"{hw.name} (custom)", aliases=())
    return hardware_toml(
        mine, sources, raw.get("sources", {}), dataset="custom",
        description=f"Started from {hw.name} of the {ds.name} dataset",
        comments=[f"{hw.name} from the {ds.name} dataset, as a file to start your own from:",
                  "change the numbers and their [gpu.sources], rename the entry, then e.g.",
                  f"  roofline-sym sweep --hardware-file THIS.toml --gpu '{mine.name}' "
                  f"--gpu '{hw.name}' --shapes llama3-8b -M 8192 --total"])
