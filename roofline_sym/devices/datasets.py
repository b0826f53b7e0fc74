"""A dataset: named hardware entries, looked up by name, alias or device name.

A device name is what ``torch.cuda.get_device_name()`` returns; an alias that
starts with a vendor (``NVIDIA``, ``AMD``) also answers without it, as some
drivers and tools print it.

>>> from roofline_sym.devices import dataset
>>> dataset("default").get("NVIDIA H100 80GB HBM3").name
'H100 SXM'
>>> dataset("default").get("H100 80GB HBM3").name, dataset("default").get("Instinct MI300X").name
('H100 SXM', 'MI300X')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterator, Mapping

from ..validate import InputTypeError, close_matches, escape, show, unknown_name
from .hardware_entry import Hardware, HardwareError, UnknownHardwareError, normalize

__all__ = ["Dataset"]

# the vendor words that open device names (normalized)
_VENDORS = ("nvidia-", "amd-")


def _without_vendor(key: str) -> str | None:
    """A normalized device name without its vendor word; None if it has none."""
    for vendor in _VENDORS:
        if key.startswith(vendor) and len(key) > len(vendor):
            return key[len(vendor):]
    return None


@dataclass(frozen=True)
class Dataset:
    """A named set of hardware entries, looked up by name, alias or device name."""

    name: str
    entries: tuple[Hardware, ...]
    description: str = ""
    path: str | None = None
    _index: Mapping[str, Hardware] = field(init=False, repr=False, compare=False)
    # device names without their vendor word, where that names one entry and
    # is no name or alias of its own ("h100-80gb-hbm3"; never "h100" from a
    # query "NVIDIA H100": only aliases that carry a vendor are shortened)
    _bare: Mapping[str, Hardware] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, Hardware] = {}
        where = f"{self.path}: " if self.path else ""
        for hw in self.entries:
            for key in {normalize(hw.name), *map(normalize, hw.aliases)}:
                if key in index and index[key] is not hw:
                    raise HardwareError(
                        f"{where}entry {hw.name!r}, field 'aliases': {key!r} "
                        f"already names {index[key].name!r}"
                    )
                index[key] = hw
        object.__setattr__(self, "_index", MappingProxyType(index))
        bare: dict[str, Hardware | None] = {}
        for key, hw in index.items():
            short = _without_vendor(key)
            if short is not None and short not in index:
                # two entries sharing a shortened name: neither gets it
                bare[short] = hw if bare.get(short, hw) is hw else None
        object.__setattr__(self, "_bare", MappingProxyType(
            {k: hw for k, hw in bare.items() if hw is not None}))

    def describe(self) -> str:
        """A readable table of the entries' peaks and bandwidth, for the command line."""
        lines = [f"{self.name} dataset: {self.description}",
                 f"{'name':<24}{'bf16 TF/s':>10}{'fp8 TF/s':>10}{'fp4 TF/s':>10}{'TB/s':>8}  "
                 "aliases"]
        for h in self.entries:
            peaks = [h.peak_flops.get(d) for d in ("bf16", "fp8", "fp4")]
            cells = "".join(f"{float(p) / 1e12:>10g}" if p else f"{'-':>10}" for p in peaks)
            lines.append(f"{h.name:<24}{cells}{float(h.mem_bw) / 1e12:>8g}  "
                         f"{', '.join(h.aliases[:3])}")
        return escape("\n".join(lines))

    def names(self) -> list[str]:
        return [hw.name for hw in self.entries]

    def __iter__(self) -> Iterator[Hardware]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> Hardware:
        """Exact (normalized) match on name or alias, or on a device-name alias
        without its vendor word; no prefix guessing."""
        if isinstance(name, Hardware):
            return name
        if not isinstance(name, str):
            raise InputTypeError(f"hardware must be a name (str) or a Hardware entry, not "
                                 f"{type(name).__name__} {show(name)}")
        query = normalize(name)
        hit = self._index.get(query) or self._bare.get(query)
        if hit is not None:
            return hit
        # suggestions only: names starting with, then containing the query, then
        # close spellings ("NVIDIA H100" -> H100 SXM, H100 PCIe, H100 NVL)
        keys = list(self._index)
        starts = [k for k in keys if query and k.startswith(query)]
        contains = [k for k in keys if query and query in k and k not in starts]
        close = close_matches(query, keys, n=5, cutoff=0.5)
        hint = list(dict.fromkeys(self._index[k].name for k in starts + contains + close))[:5]
        raise unknown_name("hardware", name, self.names(), error=UnknownHardwareError,
                           extra=f" in the {self.name} dataset", suggestions=hint)
