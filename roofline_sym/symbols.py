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
    "hardware_symbol",
    "is_hardware_symbol",
    "latex_name",
]

M, K, N = sympy.symbols("M K N", positive=True)
SHAPE_SYMBOLS = (M, K, N)
# the parameter of a ray through shape space, e.g. M = K = N = x
x = sympy.Symbol("x", positive=True)

# name -> LaTeX, filled by the factory below; used by output.printer.
_LATEX: dict[sympy.Symbol, str] = {}


@cache
def _make(name: str, latex: str) -> sympy.Symbol:
    sym = sympy.Symbol(name, positive=True)
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


def hardware_symbol(name: str) -> sympy.Symbol:
    """A hardware symbol by its name (``"BW"``, ``"P_fp8"``, ``"eta_mem"``, ...).

    ``P_<dtype>`` and ``eta_<dtype>`` exist for the GEMM dtypes bf16, fp16, fp8, fp4.

    >>> hardware_symbol("P_fp8") is peak_flops("fp8")
    True
    """
    gemm_dtypes = ("bf16", "fp16", "fp8", "fp4")  # devices.entry.GEMM_DTYPES
    makers = {"BW": mem_bw, "eta_mem": mem_efficiency, "t_launch": launch_overhead}
    if name in makers:
        return makers[name]()
    kind, _, dtype = name.partition("_")
    if kind in ("P", "eta") and dtype in gemm_dtypes:
        return (peak_flops if kind == "P" else gemm_efficiency)(dtype)
    raise ValueError(f"unknown hardware symbol {name!r}; known: BW, eta_mem, t_launch, "
                     f"P_<dtype> and eta_<dtype> for the GEMM dtypes {', '.join(gemm_dtypes)}")


def is_hardware_symbol(sym: sympy.Basic) -> bool:
    return sym in _LATEX


def latex_name(sym: sympy.Symbol) -> str:
    """Readable LaTeX for a roofline_sym symbol (shape symbols print as themselves)."""
    return _LATEX.get(sym, sympy.latex(sym))
