"""Implementations: which library runs the low-precision GEMMs, as data.

One shape on one GPU runs at different speeds under torch._scaled_mm
(cuBLASLt), CUTLASS (vLLM, FlashInfer, sgl-kernel), Triton (FBGEMM's and
torchao's), DeepGEMM, FBGEMM's CUTLASS kernels or Transformer Engine.  A
*profile* says how one implementation differs from ``torch`` (the default,
what torchao runs, and what a blank means) on one GPU generation for one
scaling family: a factor on the GEMM rate and, where data pin them, its own
fixed times in seconds: its GEMMs' and its quantize kernels' (the casts,
amax reductions and transposed casts it runs for that family: vLLM's CUDA
quantize ops are not torch.compile's Triton kernels).  Profiles live in
``data/implementations.toml``, each with its source or the assumption it
makes; a pair without a profile runs as ``torch`` does.  ``apply`` gives the
hardware entry an implementation sees.

>>> IMPLEMENTATIONS
('torch', 'cutlass', 'triton', 'deepgemm', 'fbgemm', 'te')
>>> generation("H100 SXM"), generation("B200 (HGX)")
('hopper', 'blackwell')
>>> apply(hardware_entry := __import__("roofline_sym").hardware("h100"), "torch") is hardware_entry
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Mapping

from .. import symbols as S
from ..errors import InputError
from ..validate import cell_choice, choice, show
from .catalog import dataset, hardware
from .hardware_entry import Hardware
from .toml_io import tomllib

__all__ = ["IMPLEMENTATIONS", "QUANTIZE_KINDS", "Profile", "profiles", "profile", "generation",
           "apply", "profile_values", "gemm_fixed_time", "quantize_fixed_time",
           "check_implementation",
           "quantize_writes_scale_layout"]

IMPLEMENTATIONS = ("torch", "cutlass", "triton", "deepgemm", "fbgemm", "te")
# the kernel classes of a recipe's quantize path (symbols.KERNEL_KINDS): what an
# implementation's own quantize kernels run; a layer's bf16 neighbours (norm,
# elementwise) and torchao's rescale are not the GEMM library's
QUANTIZE_KINDS = ("cast", "cast4", "transpose", "reduce")


@dataclass(frozen=True)
class Profile:
    """How ``implementation`` runs ``family``-scaled GEMMs on ``generation``:
    ``rate``: a factor on the rate torch reaches; ``fixed_s``: its GEMMs' own
    fixed time (None: the GPU's); ``cast_fixed_s``: its quantize kernels'
    (``QUANTIZE_KINDS``; None: the GPU's cast class); ``source``: the rows it
    was fitted to, or the assumption."""

    implementation: str
    generation: str
    family: str
    rate: float = 1.0
    fixed_s: float | None = None
    source: str = ""
    cast_fixed_s: float | None = None


def check_implementation(name: Any, where: str = "") -> str:
    """``name`` if it is a known implementation (blank: ``torch``), else an
    error with close matches, after ``where`` (the place in a file)."""
    return cell_choice(name, IMPLEMENTATIONS, "implementation", where, blank="torch")


@cache
def _data() -> dict[str, Any]:
    text = resources.files("roofline_sym").joinpath("data", "implementations.toml") \
        .read_text("utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    return data


@cache
def profiles() -> tuple[Profile, ...]:
    """Every shipped profile."""
    out = []
    for raw in _data().get("profile", []):
        impl, gen = check_implementation(raw["implementation"]), str(raw["generation"])
        family = choice(raw["family"], S.SCALING_FAMILIES, "scaling family")
        where = f"implementations.toml: {impl}/{gen}/{family}"

        def number(key: str) -> float | None:
            value = raw.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{where}: {key} must be a number, not {show(value)}")
            return float(value)

        rate = number("rate")
        p = Profile(impl, gen, family, 1.0 if rate is None else rate, number("fixed_s"),
                    str(raw.get("source", "")), number("cast_fixed_s"))
        if not 0.05 <= p.rate <= 1.5:
            raise InputError(f"{where}: rate {p.rate} outside 0.05..1.5")
        for name in ("fixed_s", "cast_fixed_s"):
            t = getattr(p, name)
            if t is not None and not 1e-7 <= t <= 1e-4:
                raise InputError(f"{where}: {name} {t} s outside 1e-7..1e-4")
        out.append(p)
    return tuple(out)


@cache
def _scale_layout_writers() -> frozenset[str]:
    table = _data().get("scale_layout_written_by_quantize", {})
    for name, source in table.items():
        check_implementation(name, "implementations.toml: scale_layout_written_by_quantize: ")
        if not isinstance(source, str) or not source.strip():
            raise InputError(f"implementations.toml: scale_layout_written_by_quantize: "
                             f"{name} needs its source")
    return frozenset(table)


def quantize_writes_scale_layout(implementation: str) -> bool:
    """Whether ``implementation``'s quantize kernels write MX/NVFP4 block scales
    in the layout its GEMMs read, so no re-layout kernel runs after the cast
    (``data/implementations.toml``, with the source).

    >>> quantize_writes_scale_layout("cutlass"), quantize_writes_scale_layout("torch")
    (True, False)
    """
    return check_implementation(implementation) in _scale_layout_writers()


def generation(gpu: Hardware | str) -> str | None:
    """The tensor-core generation of a GPU (``hopper``, ``blackwell``,
    ``cdna3``, ...): its entry's, else that of the default dataset's entry of
    the same name (a copy of a shipped GPU in a file of one's own), else None."""
    if not isinstance(gpu, Hardware):  # a name or alias of the default dataset
        gpu = hardware(gpu)
    if gpu.generation is not None:
        return gpu.generation
    return _default_generations().get(gpu.name)


@cache
def _default_generations() -> dict[str, str]:
    return {hw.name: hw.generation for hw in dataset("default").entries
            if hw.generation is not None}


def profile(implementation: str, gpu: Hardware | str, family: str) -> Profile | None:
    """The profile of ``implementation`` for ``family`` GEMMs on ``gpu``'s
    generation, or None (it runs as ``torch`` does)."""
    gen = generation(gpu)
    for p in profiles():
        if (p.implementation, p.generation, p.family) == (implementation, gen, family):
            return p
    return None


def profile_values(values: Mapping[str, float], implementation: str, gpu: Hardware,
                   trial: Mapping[str, float] | None = None, shipped: bool = True,
                   family: str | None = None) -> dict[str, float]:
    """The hardware numbers (by symbol name, of ``values``) that
    ``implementation`` changes on ``gpu``: each scaling family's factor times
    its profile's rate (kept within a rate factor's range), the family's GEMM
    classes at the profile's fixed time and, for a recipe of scaling
    ``family``, the quantize kernel classes (``QUANTIZE_KINDS``) at that
    family's quantize fixed time.  ``trial``: profile numbers by name
    (``rate.<impl>.<family>``, ``fixed.<impl>.<family>``,
    ``cast.<impl>.<family>``: a fit's) that replace the shipped profiles;
    ``shipped=False``: no shipped profile applies (a fit from priors).

    >>> import roofline_sym as rs
    >>> h100 = rs.hardware("h100")
    >>> v = {str(k): float(x) for k, x in h100.parameters.items()}
    >>> changed = profile_values(v, "cutlass", h100, {"rate.cutlass.rowwise": 0.5}, shipped=False)
    >>> list(changed), changed["kappa_rowwise"] == 0.5 * v["kappa_rowwise"]
    (['kappa_rowwise'], True)
    >>> quantize = profile_values(v, "cutlass", h100, {"cast.cutlass.rowwise": 5e-6},
    ...                           shipped=False, family="rowwise")
    >>> sorted(quantize)
    ['t0_cast', 't0_cast4', 't0_reduce', 't0_transpose']
    """
    trial = trial or {}
    out: dict[str, float] = {}
    if implementation == "torch":
        return out
    sibling = gemm_fixed_time(implementation, gpu, trial, shipped)
    for fam in S.SCALING_FAMILIES:  # every family's GEMMs (a recipe may mix them)
        known = profile(implementation, gpu, fam) if shipped else None
        rate = trial.get(f"rate.{implementation}.{fam}", known.rate if known else 1.0)
        t0 = trial.get(f"fixed.{implementation}.{fam}", known.fixed_s if known else None)
        if t0 is None:
            t0 = sibling
        if rate != 1.0:
            out[f"kappa_{fam}"] = min(max(values[f"kappa_{fam}"] * rate, 0.05), 1.5)
        if t0 is not None:
            for cls in S.GEMM_CLASSES:
                if f"_{fam}" in cls and f"t0_{cls}" in values:
                    out[f"t0_{cls}"] = t0
    if family is not None:
        cast = trial.get(f"cast.{implementation}.{family}")
        if cast is None:
            cast = quantize_fixed_time(implementation, gpu, family, own=shipped)
        if cast is not None:
            out.update({f"t0_{k}": cast for k in QUANTIZE_KINDS if f"t0_{k}" in values})
    return out


def gemm_fixed_time(implementation: str, gpu: Hardware | str,
                    trial: Mapping[str, float] | None = None, shipped: bool = True
                    ) -> float | None:
    """The GEMM fixed time ``implementation`` carries to a scaling family of
    ``gpu``'s generation that no row pins: the geometric mean of its other
    families' there (``trial``'s ``fixed.<impl>.<family>`` numbers, a fit's,
    else, with ``shipped``, the shipped profiles'), or None (the GPU's GEMM
    classes).  A library's start-up (launch, prologue, epilogue) is its own on
    a GPU whatever the scales: the data's fixed times agree within about 25%
    across families of one library and generation, its rates do not.

    >>> gemm_fixed_time("torch", "h100") is None
    True
    >>> round(gemm_fixed_time("cutlass", "h100") * 1e6, 1)  # blockwise, rowwise, tensorwise
    5.3
    """
    if implementation == "torch":
        return None
    trial = trial or {}
    named = (f"fixed.{implementation}.{family}" for family in S.SCALING_FAMILIES)
    found = [trial[name] for name in named if name in trial]
    if not found and shipped:
        gen = generation(gpu)
        found = [p.fixed_s for p in profiles()
                 if (p.implementation, p.generation) == (implementation, gen)
                 and p.fixed_s is not None]
    return _geometric_mean(found)


def _geometric_mean(times: list[float]) -> float | None:
    """The geometric mean of fixed times carried from elsewhere (one: itself,
    exactly; none: None)."""
    if len(times) < 2:
        return times[0] if times else None
    return float(math.exp(sum(map(math.log, times)) / len(times)))


def quantize_fixed_time(implementation: str, gpu: Hardware | str, family: str,
                        own: bool = True) -> float | None:
    """The fixed time of ``implementation``'s quantize kernels for a recipe of
    scaling ``family`` on ``gpu``: its profile's on ``gpu``'s generation
    (``own=False``: not that one, as a fit from priors), else the geometric
    mean of the same library's for that family on other generations (a
    kernel's start-up carried over in seconds, as a transfer carries fixed
    times between GPUs), else None (the GPU's cast class).

    >>> quantize_fixed_time("torch", "h100", "rowwise") is None
    True
    >>> blackwell = profile("cutlass", "b200", "tensorwise").cast_fixed_s
    >>> quantize_fixed_time("cutlass", "h200", "tensorwise") == blackwell  # carried
    True
    """
    gen = generation(gpu)
    known = profile(implementation, gpu, family) if own else None
    if known is not None and known.cast_fixed_s is not None:
        return known.cast_fixed_s
    found = [p.cast_fixed_s for p in profiles()
             if (p.implementation, p.family) == (implementation, family)
             and p.generation != gen and p.cast_fixed_s is not None]
    return _geometric_mean(found)


def apply(hw: Hardware, implementation: str, family: str | None = None) -> Hardware:
    """``hw`` as ``implementation`` sees it (``profile_values`` of the
    shipped profiles) running a recipe of scaling ``family``; ``torch``
    returns ``hw`` itself."""
    implementation = check_implementation(implementation)
    if implementation == "torch":  # no profile: nothing to read off hw
        return hw
    values = {str(k): float(v) for k, v in hw.parameters.items()}
    changes = profile_values(values, implementation, hw, family=family)
    if not changes:
        return hw
    return hw.with_values(changes, source=f"implementation profile {implementation!r} "
                                          "(data/implementations.toml)")
