"""The only place where roofline_sym makes SymPy symbols.

Shape symbols are positive reals (not integers: ``solve`` with integer symbols
silently drops non-integer break-even points).  Hardware symbols come from one
cached factory, so every module that asks for "the fp8 peak" gets the very same
``Symbol`` and ``xreplace`` with ``Hardware.parameters`` always hits.

>>> from roofline_sym.symbols import M, peak_flops, gemm_efficiency
>>> peak_flops("fp8"), gemm_efficiency("fp8")
(P_fp8, eta_fp8)
>>> M.is_positive
True
"""

from __future__ import annotations

from functools import cache

import sympy

__all__ = [
    "M",
    "K",
    "N",
    "SHAPE_SYMBOLS",
    "x",
    "peak_flops",
    "gemm_efficiency",
    "mem_bw",
    "mem_efficiency",
    "launch_overhead",
    "half_flops",
    "mem_half_bytes",
    "kernel_efficiency",
    "scaling_efficiency",
    "grouped_efficiency",
    "KERNEL_KINDS",
    "SCALING_FAMILIES",
    "hardware_symbol",
    "is_hardware_symbol",
    "may_be_zero",
    "latex_name",
]

M, K, N = sympy.symbols("M K N", positive=True)
SHAPE_SYMBOLS = (M, K, N)
# the parameter of a ray through shape space, e.g. M = K = N = x
x = sympy.Symbol("x", positive=True)

# name -> LaTeX, filled by the factory below; used by output.printer.
_LATEX: dict[sympy.Symbol, str] = {}


@cache
def _make(name: str, latex: str, positive: bool = True) -> sympy.Symbol:
    # half sizes may be 0 (no size effect); every other hardware number is > 0
    sym = (sympy.Symbol(name, positive=True) if positive
           else sympy.Symbol(name, nonnegative=True, real=True))
    _LATEX[sym] = latex
    return sym


def peak_flops(dtype: str) -> sympy.Symbol:
    """Dense peak FLOP/s of GEMMs with ``dtype`` inputs (``P_bf16``)."""
    return _make(f"P_{dtype}", rf"P_{{\mathrm{{{dtype}}}}}")


def gemm_efficiency(dtype: str) -> sympy.Symbol:
    """Achievable fraction of ``peak_flops(dtype)`` for a large GEMM (``eta_fp8``)."""
    return _make(f"eta_{dtype}", rf"\eta_{{\mathrm{{{dtype}}}}}")


def mem_bw() -> sympy.Symbol:
    """Peak memory bandwidth in bytes/s (``BW``)."""
    return _make("BW", r"\mathrm{BW}")


def mem_efficiency() -> sympy.Symbol:
    """Achievable fraction of the peak bandwidth (``eta_mem``)."""
    return _make("eta_mem", r"\eta_{\mathrm{mem}}")


def launch_overhead() -> sympy.Symbol:
    """The time floor of one kernel, seconds (``t_launch``)."""
    return _make("t_launch", r"t_{\mathrm{launch}}")


# Kernel classes: what limits a memory-bound kernel's achievable bandwidth.
# cast: a contiguous cast (its amax pass included); transpose: a cast or copy
# that reads or writes across rows (column scales, column-major output);
# reduce: an amax reduction that only reads; elementwise: a pointwise op
# (activation, gradient accumulation); norm: a normalization; rescale: a GEMM
# output multiplied by its operands' row and column scales.
KERNEL_KINDS = ("cast", "transpose", "reduce", "elementwise", "norm", "rescale")
# Scaling families of low-precision GEMMs (their kernels differ in speed).
SCALING_FAMILIES = ("tensorwise", "rowwise", "blockwise", "mx", "nvfp4")
_GEMM_DTYPES = ("bf16", "fp16", "fp8", "fp4")  # devices.entry.GEMM_DTYPES


def half_flops(dtype: str) -> sympy.Symbol:
    """FLOPs at which a ``dtype`` GEMM reaches half its large-GEMM rate
    (``F_half_fp8``): time = (F + F_half) / (P eta)."""
    return _make(f"F_half_{dtype}", rf"F_{{1/2,\mathrm{{{dtype}}}}}", positive=False)


def mem_half_bytes() -> sympy.Symbol:
    """Bytes at which a kernel reaches half its achievable bandwidth
    (``B_half``): time = (B + B_half) / (BW eta)."""
    return _make("B_half", r"B_{1/2}", positive=False)


def kernel_efficiency(kind: str) -> sympy.Symbol:
    """Achievable fraction of the peak bandwidth for kernels of class ``kind``
    (``eta_cast``, ``eta_transpose``, ...; see ``KERNEL_KINDS``)."""
    if kind not in KERNEL_KINDS:
        raise ValueError(f"unknown kernel kind {kind!r}; known: {', '.join(KERNEL_KINDS)}")
    return _make(f"eta_{kind}", rf"\eta_{{\mathrm{{{kind}}}}}")


def scaling_efficiency(family: str) -> sympy.Symbol:
    """A low-precision GEMM's rate with ``family`` scaling relative to its
    dtype's (``kappa_blockwise``)."""
    if family not in SCALING_FAMILIES:
        raise ValueError(f"unknown scaling family {family!r}; "
                         f"known: {', '.join(SCALING_FAMILIES)}")
    return _make(f"kappa_{family}", rf"\kappa_{{\mathrm{{{family}}}}}")


def grouped_efficiency(dtype: str) -> sympy.Symbol:
    """A grouped (MoE) GEMM's rate relative to a dense ``dtype`` GEMM's
    (``kappa_grouped_bf16``)."""
    return _make(f"kappa_grouped_{dtype}", rf"\kappa_{{\mathrm{{grouped,{dtype}}}}}")


def hardware_symbol(name: str) -> sympy.Symbol:
    """A hardware symbol by its name (``"BW"``, ``"P_fp8"``, ``"eta_mem"``, ...).

    ``P_<dtype>``, ``eta_<dtype>`` and ``F_half_<dtype>`` exist for the GEMM
    dtypes bf16, fp16, fp8, fp4; ``eta_<kind>`` for the ``KERNEL_KINDS``;
    ``kappa_<family>`` for the ``SCALING_FAMILIES``, ``kappa_grouped_<dtype>``.

    >>> hardware_symbol("P_fp8") is peak_flops("fp8")
    True
    >>> hardware_symbol("eta_cast"), hardware_symbol("F_half_bf16")
    (eta_cast, F_half_bf16)
    """
    makers = {"BW": mem_bw, "eta_mem": mem_efficiency, "t_launch": launch_overhead,
              "B_half": mem_half_bytes}
    if name in makers:
        return makers[name]()
    if name.startswith("F_half_") and name[7:] in _GEMM_DTYPES:
        return half_flops(name[7:])
    if name.startswith("kappa_grouped_") and name[14:] in _GEMM_DTYPES:
        return grouped_efficiency(name[14:])
    kind, _, rest = name.partition("_")
    if kind in ("P", "eta") and rest in _GEMM_DTYPES:
        return (peak_flops if kind == "P" else gemm_efficiency)(rest)
    if kind == "eta" and rest in KERNEL_KINDS:
        return kernel_efficiency(rest)
    if kind == "kappa" and rest in SCALING_FAMILIES:
        return scaling_efficiency(rest)
    raise ValueError(f"unknown hardware symbol {name!r}; known: BW, eta_mem, t_launch, "
                     f"B_half, P_<dtype>, eta_<dtype> and F_half_<dtype> for the GEMM dtypes "
                     f"{', '.join(_GEMM_DTYPES)}, eta_<kind> for the kernel kinds "
                     f"{', '.join(KERNEL_KINDS)}, kappa_<family> for "
                     f"{', '.join(SCALING_FAMILIES)}")


def is_hardware_symbol(sym: sympy.Basic) -> bool:
    return sym in _LATEX


def may_be_zero(name: str) -> bool:
    """Whether the hardware number named ``name`` may be 0 (a half size)."""
    return name == "B_half" or name.startswith("F_half_")


def latex_name(sym: sympy.Symbol) -> str:
    """Readable LaTeX for a roofline_sym symbol (shape symbols print as themselves)."""
    name: str = _LATEX.get(sym, sympy.latex(sym))
    return name
