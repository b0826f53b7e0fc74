"""The scaling families of low-precision GEMMs: one registry, read everywhere.

A family is how a low-precision GEMM's operands carry their scales: one per
tensor, one per row, one per block of a fixed shape.  Each family has a rate
factor on every GPU (``kappa_<family>``) and a fixed time per GEMM class
(``t0_<dtype>_<family>``); a block-scaled one needs the GPU's block-scaled
GEMMs (a hardware entry's ``block_scaling``).  The symbols, the hardware
entries, the recipes, the layer model and the fits take the list from here,
so a new family is one entry below (plus the recipes that use it).

>>> NAMES
('tensorwise', 'rowwise', 'blockwise', 'mx', 'nvfp4')
>>> BLOCK_SCALED, family_of("mx_32x32"), family_of(None)
(('mx', 'nvfp4'), 'mx', 'tensorwise')
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import UnknownNameError

__all__ = ["Family", "FAMILIES", "NAMES", "BLOCK_SCALED", "family_of"]


@dataclass(frozen=True)
class Family:
    """``name``; ``dtypes``: the GEMM input dtypes it scales (each a GEMM
    class ``<dtype>_<name>``); ``scale``: the element format of its scales;
    ``block``: the shape of the elements one scale covers (rows, columns;
    None: all of them); ``block_scaled``: whether its GEMMs need the GPU's
    block-scaled tensor-core instructions."""

    name: str
    dtypes: tuple[str, ...]
    scale: str
    block: tuple[int | None, int | None]
    block_scaled: bool = False


FAMILIES = (
    Family("tensorwise", ("fp8",), "fp32", (None, None)),
    Family("rowwise", ("fp8",), "fp32", (1, None)),
    Family("blockwise", ("fp8",), "fp32", (1, 128)),  # DeepSeek-V3's, weights 128 x 128
    Family("mx", ("fp8", "fp4"), "e8m0", (1, 32), block_scaled=True),
    Family("nvfp4", ("fp4",), "fp8_e4m3", (1, 16), block_scaled=True),
)
NAMES = tuple(f.name for f in FAMILIES)
BLOCK_SCALED = tuple(f.name for f in FAMILIES if f.block_scaled)


def family_of(scaling_name: str | None) -> str:
    """The family of a scaling scheme's name (``blockwise_1x128`` ->
    ``blockwise``; None, one scale per tensor, -> ``tensorwise``); the
    longest family name the scheme's name starts with."""
    if scaling_name is None:
        return "tensorwise"
    found = [f for f in NAMES if scaling_name.startswith(f)]
    if not found:
        raise UnknownNameError(f"{scaling_name!r} is no scaling of a known family "
                               f"({', '.join(NAMES)})")
    return max(found, key=len)
