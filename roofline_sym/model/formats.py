"""Element formats and scaling schemes: bits, bytes and block sizes, exactly.

An element format is a storage type (bf16, fp8 e4m3, fp4 e2m1, e8m0, ...); its
``compute`` field names the GEMM peak it runs at (``"fp8"`` for both fp8
encodings).  A scaling scheme says how many scales an operand carries and in
which format, for an operand laid out as ``outer x inner`` with ``inner`` the
GEMM contraction axis.

>>> from roofline_sym.model.formats import element, scaling
>>> element("fp4_e2m1").bytes
1/2
>>> scaling("mx").scale_bytes(4096, 8192)
1048576
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import sympy

from ..validate import InputTypeError, choice, show, unknown_name
from .rounding import ceiling

__all__ = [
    "ElementFormat",
    "Scaling",
    "ELEMENTS",
    "SCALINGS",
    "element",
    "scaling",
]


@dataclass(frozen=True)
class ElementFormat:
    """A storage format of tensor elements or scales.

    >>> element("e8m0").bytes, element("e8m0").compute
    (1, None)
    """

    name: str
    bits: int
    compute: str | None  # the peak_flops key a GEMM on this format uses
    torch_name: str | None = None

    @property
    def bytes(self) -> sympy.Rational:
        return sympy.Rational(self.bits, 8)

    def torch_dtype(self) -> Any:
        """The matching ``torch.dtype`` (imports torch on first use)."""
        if self.torch_name is None:
            raise InputTypeError(f"{self.name} has no torch dtype")
        import torch  # optional dependency, imported only here

        return getattr(torch, self.torch_name)


ELEMENTS: dict[str, ElementFormat] = {
    f.name: f
    for f in (
        ElementFormat("fp32", 32, "fp32", "float32"),
        ElementFormat("bf16", 16, "bf16", "bfloat16"),
        ElementFormat("fp16", 16, "fp16", "float16"),
        ElementFormat("fp8_e4m3", 8, "fp8", "float8_e4m3fn"),
        ElementFormat("fp8_e5m2", 8, "fp8", "float8_e5m2"),
        # two fp4 values share one byte in torch's float4_e2m1fn_x2
        ElementFormat("fp4_e2m1", 4, "fp4", "float4_e2m1fn_x2"),
        ElementFormat("e8m0", 8, None, "float8_e8m0fnu"),
    )
}
_ALIASES = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "e4m3": "fp8_e4m3",
    "float8_e4m3fn": "fp8_e4m3",
    "fp8": "fp8_e4m3",
    "e5m2": "fp8_e5m2",
    "float8_e5m2": "fp8_e5m2",
    "e2m1": "fp4_e2m1",
    "fp4": "fp4_e2m1",
    "float4_e2m1fn_x2": "fp4_e2m1",
    "float8_e8m0fnu": "e8m0",
}


def element(name: str) -> ElementFormat:
    """Look up an element format by name or common alias (``"e4m3"``, ``"fp4"``)."""
    if not isinstance(name, str):
        raise InputTypeError(f"an element format is a name, not {show(name)}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in ELEMENTS:
        raise unknown_name("element format", name, [*ELEMENTS, *_ALIASES])
    return ELEMENTS[key]


@dataclass(frozen=True)
class Scaling:
    """How an ``outer x inner`` operand (``inner`` = contraction axis) is scaled.

    ``block`` is (outer, inner) elements per scale; ``None`` spans the axis.
    ``global_scale`` is an extra per-tensor scale (NVFP4's fp32 one).

    >>> scaling("rowwise").count(4096, 8192)
    4096
    >>> scaling("blockwise_128x128").count(256, 8192)
    128
    """

    name: str
    scale: ElementFormat
    block: tuple[int | None, int | None]
    global_scale: ElementFormat | None = None

    def count(
        self,
        outer: sympy.Expr,
        inner: sympy.Expr,
        rounding: Callable[[sympy.Expr], sympy.Expr] = ceiling,
    ) -> sympy.Expr:
        """Number of block scales; a partial block still needs its scale (ceiling)."""
        per = [
            sympy.Integer(1) if b is None else (dim if b == 1 else rounding(dim / b))
            for dim, b in zip((outer, inner), self.block)
        ]
        return per[0] * per[1]

    def scale_bytes(
        self,
        outer: sympy.Expr,
        inner: sympy.Expr,
        rounding: Callable[[sympy.Expr], sympy.Expr] = ceiling,
    ) -> sympy.Expr:
        """Bytes of all scales of one operand, global scale included."""
        extra = self.global_scale.bytes if self.global_scale else 0
        return self.count(outer, inner, rounding) * self.scale.bytes + extra


SCALINGS: dict[str, Scaling] = {
    s.name: s
    for s in (
        Scaling("tensorwise", ELEMENTS["fp32"], (None, None)),
        Scaling("rowwise", ELEMENTS["fp32"], (1, None)),
        Scaling("mx", ELEMENTS["e8m0"], (1, 32)),
        # MX with square blocks, so one scale tensor serves both layouts
        Scaling("mx_32x32", ELEMENTS["e8m0"], (32, 32)),
        Scaling("nvfp4", ELEMENTS["fp8_e4m3"], (1, 16), ELEMENTS["fp32"]),
        Scaling("nvfp4_no_global", ELEMENTS["fp8_e4m3"], (1, 16)),
        Scaling("blockwise_1x128", ELEMENTS["fp32"], (1, 128)),
        Scaling("blockwise_128x128", ELEMENTS["fp32"], (128, 128)),
    )
}


def scaling(name: str) -> Scaling:
    """Look up a scaling scheme: tensorwise, rowwise, mx, nvfp4, blockwise_*."""
    return SCALINGS[choice(name, tuple(SCALINGS), "scaling")]
