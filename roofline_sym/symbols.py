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
>>> print(sympy.latex(peak_flops("fp8") * M))  # SymPy writes what rs.latex writes
M P_{\\mathrm{fp8}}
"""

from __future__ import annotations

from functools import cache

import sympy
from sympy.printing.printer import Printer
from .errors import InputError
from .families import FAMILIES, NAMES

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
    "host_launch",
    "gemm_fixed_time",
    "kernel_fixed_time",
    "gemm_class",
    "GEMM_CLASSES",
    "kernel_efficiency",
    "scaling_efficiency",
    "grouped_efficiency",
    "accumulation_efficiency",
    "KERNEL_KINDS",
    "SCALING_FAMILIES",
    "hardware_symbol",
    "is_hardware_symbol",
    "may_be_zero",
    "latex_name",
    "SEQ_LEN",
    "LOCAL_BATCH",
    "STEP_SYMBOLS",
    "attention_efficiency",
    "link_bandwidth",
    "link_efficiency",
    "overlap_fraction",
    "step_fixed_time",
    "LINK_SCOPES",
    "ATTENTION_PASSES",
]

M, K, N = sympy.symbols("M K N", positive=True)
SHAPE_SYMBOLS = (M, K, N)
# the parameter of a ray through shape space, e.g. M = K = N = x
x = sympy.Symbol("x", positive=True)
# a whole step's shapes: sequence length and local batch (sequences per GPU
# per micro-batch); tokens per GPU are their product
SEQ_LEN, LOCAL_BATCH = sympy.symbols("S B", positive=True)
STEP_SYMBOLS = (SEQ_LEN, LOCAL_BATCH)

# name -> LaTeX, filled by the factory below; used by output.printer, and by
# SymPy's own LaTeX printer (``sympy.latex``, a notebook's display) through its
# system-wide ``symbol_names`` setting: one notation for each symbol in every
# printer, with symbols that stay plain SymPy symbols
_LATEX: dict[sympy.Symbol, str] = {}
Printer.set_global_settings(symbol_names=_LATEX)


@cache
def _make(name: str, latex: str, positive: bool = True) -> sympy.Symbol:
    # fixed times may be 0 (none stated by a user); every other hardware number is > 0
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


def host_launch() -> sympy.Symbol:
    """The host's time per eager kernel launch as a CUDA-event timer sees it,
    seconds (``t_host``): the floor of every kernel under ``timer="events"``."""
    return _make("t_host", r"t_{\mathrm{host}}")


# Kernel classes: what limits a memory-bound kernel's achievable bandwidth.
# cast: a contiguous cast (its amax pass included); transpose: a cast or copy
# that reads or writes across rows (column scales, column-major output);
# reduce: an amax reduction that only reads; elementwise: a pointwise op
# (activation, gradient accumulation); norm: a normalization; rescale: a GEMM
# output multiplied by its operands' row and column scales.
KERNEL_KINDS = ("cast", "cast4", "transpose", "reduce", "elementwise", "norm", "rescale")
# Scaling families of low-precision GEMMs (their kernels differ in speed): families.py
SCALING_FAMILIES = NAMES
_GEMM_DTYPES = ("bf16", "fp16", "fp8", "fp4")  # devices.hardware_entry.GEMM_DTYPES


def gemm_class(dtype: str, scaling: str | None = None, grouped: bool = False) -> str:
    """The class of a GEMM for its fixed time: dtype, scaling family, grouped.

    >>> gemm_class("bf16"), gemm_class("fp8", "rowwise"), gemm_class("fp4", "nvfp4", True)
    ('bf16', 'fp8_rowwise', 'fp4_nvfp4_grouped')
    """
    name = dtype if scaling is None else f"{dtype}_{scaling}"
    return f"{name}_grouped" if grouped else name


# every GEMM class a hardware entry may give a fixed time for
GEMM_CLASSES = tuple(gemm_class(d, f, g) for g in (False, True)
                     for d, f in (("bf16", None), ("fp16", None),
                                  *sorted(((d, f.name) for f in FAMILIES for d in f.dtypes),
                                          key=lambda c: c[0] == "fp4")))


def gemm_fixed_time(cls: str) -> sympy.Symbol:
    """The fixed time of a GEMM of class ``cls`` (``gemm_class``), seconds
    (``t0_fp8_rowwise``): a GEMM's compute time is t0 + F / rate, Hockney's
    form with the start-up in seconds, so a faster dtype gets no shorter one."""
    if cls not in GEMM_CLASSES:
        raise InputError(f"unknown GEMM class {cls!r}; known: {', '.join(GEMM_CLASSES)}")
    label = cls.replace("_", ",")
    return _make(f"t0_{cls}", rf"t_{{0,\mathrm{{{label}}}}}", positive=False)


def kernel_efficiency(kind: str) -> sympy.Symbol:
    """Achievable fraction of the peak bandwidth for kernels of class ``kind``
    (``eta_cast``, ``eta_transpose``, ...; see ``KERNEL_KINDS``)."""
    if kind not in KERNEL_KINDS:
        raise InputError(f"unknown kernel kind {kind!r}; known: {', '.join(KERNEL_KINDS)}")
    return _make(f"eta_{kind}", rf"\eta_{{\mathrm{{{kind}}}}}")


def kernel_fixed_time(kind: str) -> sympy.Symbol:
    """The fixed time of a kernel of class ``kind``, seconds (``t0_cast``): its
    memory time is t0 + B / (BW eta_kind)."""
    if kind not in KERNEL_KINDS:
        raise InputError(f"unknown kernel kind {kind!r}; known: {', '.join(KERNEL_KINDS)}")
    return _make(f"t0_{kind}", rf"t_{{0,\mathrm{{{kind}}}}}", positive=False)


def scaling_efficiency(family: str) -> sympy.Symbol:
    """A low-precision GEMM's rate with ``family`` scaling relative to its
    dtype's (``kappa_blockwise``)."""
    if family not in SCALING_FAMILIES:
        raise InputError(f"unknown scaling family {family!r}; "
                         f"known: {', '.join(SCALING_FAMILIES)}")
    return _make(f"kappa_{family}", rf"\kappa_{{\mathrm{{{family}}}}}")


def grouped_efficiency(dtype: str) -> sympy.Symbol:
    """A grouped (MoE) GEMM's rate relative to a dense ``dtype`` GEMM's
    (``kappa_grouped_bf16``)."""
    return _make(f"kappa_grouped_{dtype}", rf"\kappa_{{\mathrm{{grouped,{dtype}}}}}")


def accumulation_efficiency(dtype: str) -> sympy.Symbol:
    """A ``dtype`` GEMM's rate without fast accumulation (its partial sums
    promoted to fp32 as it runs: torchao's backward GEMMs) relative to the
    fast-accumulation rate (``kappa_accum_fp8``)."""
    return _make(f"kappa_accum_{dtype}", rf"\kappa_{{\mathrm{{accum,{dtype}}}}}")


# the two links a GPU talks over: its scale-up domain (NVLink, xGMI) and the
# scale-out network (InfiniBand, Ethernet) between domains
LINK_SCOPES = ("scale_up", "scale_out")
# the passes of the attention core, each with its own achievable fraction
ATTENTION_PASSES = ("forward", "backward")


def attention_efficiency(direction: str) -> sympy.Symbol:
    """Achievable fraction of the GEMM peak for the attention core's
    ``forward`` or ``backward`` pass (``eta_attn_forward``).

    >>> attention_efficiency("backward")
    eta_attn_backward
    """
    if direction not in ATTENTION_PASSES:
        raise InputError(f"unknown attention pass {direction!r}; known: "
                         f"{', '.join(ATTENTION_PASSES)}")
    return _make(f"eta_attn_{direction}", rf"\eta_{{\mathrm{{attn,{direction[:3]}}}}}")


def link_bandwidth(scope: str) -> sympy.Symbol:
    """Per-GPU bandwidth of a link, one direction, bytes/s (``BW_scale_up``)."""
    if scope not in LINK_SCOPES:
        raise InputError(f"unknown link scope {scope!r}; known: {', '.join(LINK_SCOPES)}")
    return _make(f"BW_{scope}", rf"\mathrm{{BW}}_{{\mathrm{{{scope.replace('_', '-')}}}}}")


def link_efficiency(scope: str) -> sympy.Symbol:
    """Achievable fraction of ``link_bandwidth(scope)`` as a collective's bus
    bandwidth (nccl-tests' busbw; ``eta_scale_up``)."""
    if scope not in LINK_SCOPES:
        raise InputError(f"unknown link scope {scope!r}; known: {', '.join(LINK_SCOPES)}")
    return _make(f"eta_{scope}", rf"\eta_{{\mathrm{{{scope.replace('_', '-')}}}}}")


def overlap_fraction() -> sympy.Symbol:
    """The fraction of a step's compute time under which overlappable
    communication hides (``phi_overlap``): exposed = Max(0, comm - phi * compute)."""
    return _make("phi_overlap", r"\varphi_{\mathrm{overlap}}")


def step_fixed_time() -> sympy.Symbol:
    """A step's fixed time, seconds, paid once per step on both sides (``t_step``)."""
    return _make("t_step", r"t_{\mathrm{step}}", positive=False)


def hardware_symbol(name: str) -> sympy.Symbol:
    """A hardware symbol by its name (``"BW"``, ``"P_fp8"``, ``"eta_mem"``, ...).

    ``P_<dtype>`` and ``eta_<dtype>`` exist for the GEMM
    dtypes bf16, fp16, fp8, fp4; ``eta_<kind>`` for the ``KERNEL_KINDS``;
    ``kappa_<family>`` for the ``SCALING_FAMILIES``, ``kappa_grouped_<dtype>``,
    ``kappa_accum_<dtype>``.

    >>> hardware_symbol("P_fp8") is peak_flops("fp8")
    True
    >>> hardware_symbol("eta_cast"), hardware_symbol("t0_fp8_rowwise")
    (eta_cast, t0_fp8_rowwise)
    """
    makers = {"BW": mem_bw, "eta_mem": mem_efficiency, "t_launch": launch_overhead,
              "phi_overlap": overlap_fraction, "t_step": step_fixed_time,
              "t_host": host_launch}
    if name in makers:
        return makers[name]()
    for scope in LINK_SCOPES:
        if name in (f"BW_{scope}", f"eta_{scope}"):
            return (link_bandwidth if name.startswith("BW") else link_efficiency)(scope)
    if name.startswith("eta_attn_") and name[9:] in ATTENTION_PASSES:
        return attention_efficiency(name[9:])
    if name.startswith("t0_") and name[3:] in GEMM_CLASSES:
        return gemm_fixed_time(name[3:])
    if name.startswith("t0_") and name[3:] in KERNEL_KINDS:
        return kernel_fixed_time(name[3:])
    if name.startswith("kappa_grouped_") and name[14:] in _GEMM_DTYPES:
        return grouped_efficiency(name[14:])
    if name.startswith("kappa_accum_") and name[12:] in _GEMM_DTYPES:
        return accumulation_efficiency(name[12:])
    kind, _, rest = name.partition("_")
    if kind in ("P", "eta") and rest in _GEMM_DTYPES:
        return (peak_flops if kind == "P" else gemm_efficiency)(rest)
    if kind == "eta" and rest in KERNEL_KINDS:
        return kernel_efficiency(rest)
    if kind == "kappa" and rest in SCALING_FAMILIES:
        return scaling_efficiency(rest)
    raise InputError(f"unknown hardware symbol {name!r}; known: BW, eta_mem, t_launch, "
                     "t_host, "
                     f"t0_<GEMM class> and t0_<kernel kind>, "
                     f"P_<dtype> and eta_<dtype> for the GEMM dtypes "
                     f"{', '.join(_GEMM_DTYPES)}, eta_<kind> for the kernel kinds "
                     f"{', '.join(KERNEL_KINDS)}, kappa_<family> for "
                     f"{', '.join(SCALING_FAMILIES)}")


def is_hardware_symbol(sym: sympy.Basic) -> bool:
    return sym in _LATEX


def may_be_zero(name: str) -> bool:
    """Whether the hardware number named ``name`` may be 0 (a fixed time)."""
    return name.startswith("t0_") or name == "t_step"


def latex_name(sym: sympy.Symbol) -> str:
    """Readable LaTeX for a roofline_sym symbol (shape symbols print as themselves)."""
    name: str = _LATEX.get(sym, sympy.latex(sym))
    return name
