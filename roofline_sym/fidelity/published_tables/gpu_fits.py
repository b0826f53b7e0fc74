"""Each GPU's fit to the published tables, as its hardware record says.

A fitted GPU's record (``[gpu.calibration]`` in ``data/default.toml``)
becomes a ``Spec``: which published rows it is fitted to, which numbers are
fixed from single-kernel measurements (with the measurement), and which
numbers the speedups fit.  ``fit_gpu(spec)`` reruns the fit; ``write_dataset``
writes the results into the same file through its writer
(``devices.toml_io``), and a test checks that a refit reproduces them.  ``transfer`` carries a fit to a GPU without
measurements of its own (the same die at another bandwidth, or a part of
the same generation): latencies stay latencies, class ratios stay ratios.

>>> from roofline_sym.fidelity.published_tables import gpu_fits
>>> gpu_fits.SPECS["H100 SXM"].free[:3]
('eta_bf16', 'eta_fp8', 'kappa_rowwise')
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ... import symbols as S
from ...devices import Hardware, dataset, hardware, list_hardware
from ...devices.calibration import Carried, Fitted
from ...devices.toml_io import cited_sources, edit_entries, load_hardware, write_hardware
from ...devices import implementations as impls
from ...devices.hardware_entry import fixed_time_prior
from ...errors import InputError
from ...families import BLOCK_SCALED
from ...progress import with_progress
from .gemm_kernels import GemmRows, gemm_rows
from .joint_fit import FIXED_LIMIT, RATE_LIMIT, SpeedupFit, fit_speedups
from .speedup_table import SpeedupTable, published
from .rows import predictable

__all__ = ["Spec", "SPECS", "SUPERSEDED", "TEST_SET", "spec_of", "rows", "scored", "kernel_rows",
           "fit_gpu",
           "prior_entry", "unfitted",
           "transfer", "TRANSFERS", "dataset_fields", "profile_toml", "write_dataset", "fitted_gpus"]


@dataclass(frozen=True)
class Spec:
    """``gpu``: the default-dataset entry; ``gpus``: the GPU keys of the
    published rows it is fitted to (every source on them but the
    ``SUPERSEDED``, or only ``sources`` where given); ``workloads``: which of
    their workloads; ``fixed``: numbers set before the fit, each ``(value,
    where it was measured)``; ``priors``: where the free numbers start and
    what they keep when no row pins them, each ``(value, reason)`` (a free
    fixed time without one inherits its ``fixed_time_prior``, a factor 1);
    ``free``: the numbers the fit may move."""

    gpu: str
    sources: tuple[str, ...]
    workloads: tuple[str, ...]
    fixed: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    free: tuple[str, ...] = ()
    # the GPU keys of the kernel and speedup rows this GPU's fit reads (the same
    # die under another name: an H800 is an H100 with less interconnect)
    gpus: tuple[str, ...] = ()
    priors: Mapping[str, tuple[float, str]] = field(default_factory=dict)


# Sources kept as the test set (published/README.md, "The test set"): scored by
# the shipped model at first sight (first_sight.csv) and kept out of every fit
# and of leave-one-source-out, their kernel rows too, so that their score stays
# a test score that no model choice has read
TEST_SET: tuple[str, ...] = ("primus-turbo-764d7a9-mi300x-blockwise", "ao-pr940-roofline-h100",
                             "rocmblog-hipblaslt-tuning-mi325x")
# the written data keep a little inside the limits: a 16^3 GEMM also moves a few
# bytes, twice as many in bf16, on top of its fixed time
_FIXED_FLOOR = FIXED_LIMIT - 0.01


def _best_priors(hw: Hardware, source: str) -> dict[str, tuple[float, str]]:
    """``hw``'s best-shape GEMM fractions as priors (``eta_<dtype>``), citing ``source``."""
    return {f"eta_{d}": (float(v), source) for d, v in hw.best_shape_efficiency.items()}


def spec_of(hw: Hardware, raw_sources: Mapping[str, str] | None = None) -> Spec:
    """The fit of a GPU whose record holds a fitted ``calibration``;
    ``raw_sources``: its ``[gpu.sources]`` as written (the best-shape source
    its priors cite; default: the entry's, citation keys expanded)."""
    c = hw.calibration
    if not isinstance(c, Fitted):
        raise InputError(f"{hw.name} has no fitted calibration in its hardware record")
    for impl in c.profiles:
        impls.check_implementation(impl, f"{hw.name}, calibration profiles: ")
    best = (raw_sources or hw.sources).get("best_shape_efficiency", "")
    return Spec(hw.name, sources=c.sources, workloads=c.workloads, fixed=dict(c.fixed),
                free=c.numbers(), gpus=c.fitted_to,
                priors={**_best_priors(hw, best), **c.priors})


def _shipped_file() -> Path:
    return Path(__file__).parents[2] / "data" / "default.toml"


def _raw_sources(path: Path) -> dict[str, dict[str, str]]:
    """``{entry name: {TOML field: source as written}}`` of a hardware file."""
    return {hw.name: raw for hw, raw in zip(load_hardware(path).entries, cited_sources(path)[1])}


def _records(path: Path | None = None) -> tuple[dict[str, Spec], dict[str, tuple[str, bool]],
                                                 tuple[str, ...]]:
    """The fits, transfers and superseded sources the GPU records of a hardware
    file (default: the shipped one) hold."""
    path = path or _shipped_file()
    entries = load_hardware(path).entries
    raw = _raw_sources(path)
    specs = {hw.name: spec_of(hw, raw[hw.name]) for hw in entries
             if isinstance(hw.calibration, Fitted)}
    transfers = {hw.name: (hw.calibration.origin, hw.calibration.same_rates) for hw in entries
                 if isinstance(hw.calibration, Carried)}
    superseded = tuple(s for hw in entries if isinstance(hw.calibration, Fitted)
                       for s in hw.calibration.superseded)
    return specs, transfers, superseded


# Each fitted GPU's fit, each carried GPU's origin (GPU -> (the calibrated GPU its
# efficiency model is carried over from, whether its low-precision GEMM rates keep
# the fitted ratio to bf16)), and the rows kept for the record, neither fitted nor
# scored (published/README.md says why for each): as the GPU records of
# data/default.toml hold them; read on first use (module ``__getattr__``): importing
# this module, as the main job's prediction bands do, reads no hardware file
SPECS: dict[str, Spec]
TRANSFERS: dict[str, tuple[str, bool]]
SUPERSEDED: tuple[str, ...]
_RECORDS = ("SPECS", "TRANSFERS", "SUPERSEDED")


@cache
def _shipped_records() -> tuple[dict[str, Spec], dict[str, tuple[str, bool]], tuple[str, ...]]:
    return _records()


def __getattr__(name: str) -> Any:
    if name in _RECORDS:
        return _shipped_records()[_RECORDS.index(name)]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def fitted_gpus() -> frozenset[str]:
    """The shipped GPUs whose record holds a fitted calibration (the names of
    ``SPECS``), from the default dataset as the catalog read it: no second
    reading of the hardware file.

    >>> "H100 SXM" in fitted_gpus()
    True
    """
    return frozenset(hw.name for hw in dataset("default").entries
                     if isinstance(hw.calibration, Fitted))


def rows(spec: Spec, table: SpeedupTable | None = None,
         exclude: tuple[str, ...] = ()) -> SpeedupTable:
    """The rows ``spec`` is fitted to (from ``table``, default the published),
    without the sources in ``exclude``."""
    t = published() if table is None else table
    keep = (scored(t) & np.isin(t.workload, spec.workloads) & ~np.isin(t.source_id, exclude)
            & np.isin(t.gpu, spec.gpus))
    if spec.sources:
        keep &= np.isin(t.source_id, spec.sources)
    return t.select(keep)


def scored(table: SpeedupTable) -> np.ndarray:
    """Which rows a fit reads and a cross-validation scores: single-shape,
    measured, neither ``SUPERSEDED`` nor in the ``TEST_SET``."""
    ok: np.ndarray = (predictable(table) & ~np.isnan(table.measured)
                      & ~np.isin(table.source_id, _shipped_records()[2] + TEST_SET))
    return ok


def kernel_rows(spec: Spec, kernels: GemmRows | None = None,
                exclude: tuple[str, ...] = ()) -> GemmRows:
    """The GEMM kernel rows ``spec`` anchors its GEMM classes with."""
    k = gemm_rows() if kernels is None else kernels
    superseded = _shipped_records()[2]
    keep = np.isin(k.gpu, spec.gpus) & ~np.isin(k.source_id, exclude + superseded + TEST_SET)
    if spec.sources:
        keep &= np.isin(k.source_id, spec.sources)
    return k.select(keep)


def fit_gpu(spec: Spec, table: SpeedupTable | None = None, base: Hardware | None = None,
        exclude: tuple[str, ...] = (), kernels: GemmRows | None = None) -> SpeedupFit:
    """Rerun ``spec``'s joint fit on its speedup rows of ``table`` (default:
    the published measurements) and its GEMM kernel rows, from ``base``
    (default: the default dataset's entry); ``exclude``: source ids left out
    (leave-one-source-out)."""
    hw = prior_entry(spec, base)
    return fit_speedups(rows(spec, table, exclude), hw, spec.free,
                        kernels=kernel_rows(spec, kernels, exclude), shipped_profiles=False)


def prior_entry(spec: Spec, base: Hardware | None = None) -> Hardware:
    """``spec``'s GPU before any fit: its datasheet numbers, the ``fixed``
    kernel measurements, and every free number at its prior (no fitted value
    of the shipped entry survives, so a refit without a source cannot see it)."""
    hw = unfitted(base or hardware(spec.gpu))
    for name, (value, where) in {**spec.fixed, **spec.priors}.items():
        hw = hw.with_values({name: value}, source=where)
    return hw


def unfitted(hw: Hardware) -> Hardware:
    """``hw`` without the numbers a calibration fits or carries over (fixed
    times, scaled-, grouped-GEMM and slow-accumulation factors): each takes its prior."""
    return hw.replace(gemm_fixed_s={}, kernel_fixed_s={}, scaling_efficiency={},
                      grouped_efficiency={}, accumulation_efficiency={})


def transfer(fitted: Hardware, target: Hardware, same_generation: bool) -> dict[str, float]:
    """The size-dependent numbers of ``target`` carried over from ``fitted``:
    each kernel class at the same fraction of ``mem_efficiency``, every GEMM
    fixed time as it is (seconds: a launch, prologue and epilogue do not scale
    with the rates), every kernel fixed time as it is within a generation and
    at the bf16 GEMM's across, the scaled- and grouped-GEMM factors as they are, the
    slow-accumulation factor within a tensor-core generation, and
    (``same_generation``) each low-precision GEMM rate at the same ratio to
    the bf16 rate.  Returns ``{symbol name: value}`` for ``Hardware.with_values``.
    """
    out: dict[str, float] = {}
    if fitted.mem_efficiency is None:  # a calibrated entry has one
        raise InputError(f"{fitted.name} has no mem_efficiency to carry over")
    f_mem = float(fitted.mem_efficiency)
    t_mem = float(target.mem_efficiency or fitted.mem_efficiency)
    for kind, value in fitted.kernel_efficiency.items():
        out[f"eta_{kind}"] = round(min(1.0, float(value) * t_mem / f_mem), 4)
    # the fitted bf16 fraction is what typical GEMMs reach, below the best-shape
    # MAMF search the entries' own fractions come from: the target keeps the
    # fitted GPU's ratio of the two
    best = {k: float(v) for k, v in (target.best_shape_efficiency
                                     or target.gemm_efficiency).items()}
    origin = float(fitted.best_shape_efficiency.get("bf16", 0))
    typical = float(fitted.gemm_efficiency["bf16"]) / origin if origin else 1.0
    out["eta_bf16"] = round(min(1.0, best["bf16"] * typical), 4)
    if same_generation:
        bf16 = out["eta_bf16"] / float(fitted.gemm_efficiency["bf16"])
        for d, value in fitted.gemm_efficiency.items():
            if d != "bf16" and d in target.peak_flops:
                out[f"eta_{d}"] = round(min(1.0, float(value) * bf16), 4)
    else:  # every dtype's own best-shape fraction at the same typical share
        for d, value in best.items():
            if d != "bf16" and d in target.peak_flops:
                out[f"eta_{d}"] = round(min(1.0, value * typical), 4)
    for cls, value in fitted.gemm_fixed_s.items():
        if cls.split("_")[0] in target.peak_flops:
            out[f"t0_{cls}"] = _sig(float(value))
    # a kernel class's fixed time is the calibrated GPU's within its generation; across
    # generations the bf16 GEMM's (one launch of a data-parallel kernel): the H100's
    # cast class (about 17 us) is what torchao's training tables on Hopper pin, where the
    # B200's quantize kernels measure 4 us
    bf16_fixed = float(fitted.gemm_fixed_s["bf16"])
    within = impls.generation(fitted) == impls.generation(target)
    for kind, value in fitted.kernel_fixed_s.items():
        out[f"t0_{kind}"] = _sig(float(value) if within else bf16_fixed)
    for family, value in fitted.scaling_efficiency.items():
        out[f"kappa_{family}"] = float(value)
    for d, value in fitted.grouped_efficiency.items():
        if d in target.peak_flops:
            out[f"kappa_grouped_{d}"] = float(value)
    # how a GEMM accumulates is the tensor cores': carried within a generation only
    if within:
        for d, value in fitted.accumulation_efficiency.items():
            if d in target.peak_flops:
                out[f"kappa_accum_{d}"] = float(value)
    return out


def _sig(value: float) -> float:
    return float(f"{value:.4g}")


# -- writing the shipped data ------------------------------------------------------------
# the hardware fields the calibration writes, in file order
_WRITTEN = ("gemm_efficiency", "scaling_efficiency", "grouped_efficiency",
            "accumulation_efficiency", "kernel_efficiency",
            "gemm_fixed_s", "kernel_fixed_s")
_CITE = ("PUB; fitted jointly to {rows} measured speedups and {kernels} GEMM kernel rows "
         "of {sources} sources on {gpus} by fidelity/published_tables/gpu_fits.py "
         "(rs.fidelity.fit_speedups)")


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _ulp(x: float) -> float:
    """One unit in the 4th significant digit of ``x`` (> 0)."""
    return 10.0 ** (math.floor(math.log10(x)) - 3)


def _up(value: Any) -> float:
    """``value`` (> 0) rounded up to the 4 digits ``_fmt`` writes: the nearest
    4-digit number, one unit higher where that lies below.

    >>> _up(1.05101), _up(1.052), _up(0.99991)
    (1.052, 1.052, 1.0)
    """
    x = float(value)
    r = float(_fmt(x))
    return r if r >= x else float(_fmt(r + _ulp(r)))


def _down(value: Any) -> float:
    """``value`` (> 0) rounded down to the 4 digits ``_fmt`` writes.

    >>> _down(1.05185), _down(1.052), _down(1.0001)
    (1.051, 1.052, 1.0)
    """
    x = float(value)
    r = float(_fmt(x))
    return r if r <= x else float(_fmt(r - _ulp(r)))


def _entry_fields(fit_: SpeedupFit, spec: Spec, target: Hardware,
                  carried: Mapping[str, float] | None = None, best_source: str = ""
                  ) -> dict[str, tuple[dict[str, float], str]]:
    """``{toml field: (values, source text)}`` of one GPU's calibrated
    numbers: ``fit_`` itself (``carried`` None) or carried over to ``target``
    (``best_source``: its best-shape fractions' source as written)."""
    hw = fit_.hardware if carried is None else unfitted(target).with_values(carried)
    n_sources = len(set(fit_.rows.source_id) | set(
        fit_.kernels.source_id if fit_.kernels is not None else ()))
    cite = _CITE.format(rows=len(fit_.rows), kernels=0 if fit_.kernels is None
                        else len(fit_.kernels), sources=n_sources, gpus="/".join(spec.gpus))
    if carried is not None:
        same = impls.generation(spec.gpu) == impls.generation(target)
        kernels = ("kernel fixed times as seconds" if same else
                   "kernel fixed times at its bf16 GEMM's, across generations")
        cite = (f"derived; {spec.gpu}'s calibration carried over by "
                "fidelity/published_tables/gpu_fits.transfer (GEMM fixed times as seconds, "
                f"{kernels}, kernel classes at the same fraction of "
                "mem_efficiency, rate factors as they are)")
    pinned = {x.name for x in fit_.numbers if x.fitted}
    out: dict[str, tuple[dict[str, float], str]] = {}

    def table(values: Mapping[str, Any]) -> dict[str, float]:
        return {k: float(v) for k, v in values.items()}

    def why(keys: Mapping[str, str]) -> str:
        return "; ".join(f"{k}: {v}" for k, v in keys.items())

    # GEMM fractions: fitted, else the prior (its source); every number within the
    # physical limits (``limited``), saying where that moved it
    capped, _ = limited(hw)
    eff = {d: capped.gemm_efficiency[d] for d in ("bf16", "fp8", "fp4")
           if d in capped.gemm_efficiency}
    notes = {d: f"capped at {RATE_LIMIT} x the bf16 fraction (the physical limit)"
             for d in eff if eff[d] != hw.gemm_efficiency[d]}
    for d in eff:
        name = f"eta_{d}"
        if carried is None and name not in pinned and name in spec.priors:
            notes[d] = f"prior kept, no row pins it ({spec.priors[name][1]})"
    if carried is None:
        out["gemm_efficiency"] = (table(eff), cite + (f" | {why(notes)}" if notes else ""))
    else:
        own = best_source or "assumed; no best-shape measurement"
        out["gemm_efficiency"] = (table(eff), f"{own} | {cite}; the fitted GPU's fraction of "
                                  "its MAMF carried over" + ("; low precision at the fitted "
                                  "ratio to bf16" if any(f"eta_{d}" in carried
                                                         for d in ("fp8", "fp4")) else ""))
    scale = {f: hw.parameters[S.scaling_efficiency(f)] for f in S.SCALING_FAMILIES}
    out["scaling_efficiency"] = (table(scale), cite + "; a family no row pins runs at its "
                                 "dtype's rate (1)")
    grouped = {d: hw.parameters[S.grouped_efficiency(d)] for d in ("bf16", "fp8", "fp4")
               if d in hw.peak_flops}
    out["grouped_efficiency"] = (table(grouped), cite + "; a dtype no row pins runs at the "
                                 "dense rate (1)")
    accum = {d: hw.parameters[S.accumulation_efficiency(d)] for d in ("fp8",)
             if d in hw.peak_flops}
    if accum:
        out["accumulation_efficiency"] = (
            table(accum), cite + "; without a slow-accumulation row for the GPU (or one of "
            "its tensor-core generation) the fast rate (1)")
    kernel = {k: hw.parameters[S.kernel_efficiency(k)] for k in S.KERNEL_KINDS}
    kept = "; ".join(f"{k} ({v[1]})" for k, v in spec.fixed.items() if k.startswith("eta_"))
    out["kernel_efficiency"] = (table(kernel), cite + f" | fixed before the fit: {kept}")
    # every class a GPU runs gets a number; the ones no row pins inherit their prior
    classes = [c for c in S.GEMM_CLASSES if c.split("_")[0] in hw.peak_flops
               and not c.startswith("fp16") and all(
                   hw.supports_block_scaling(f) for f in BLOCK_SCALED if f"_{f}" in c)]
    values = {c: float(capped.fixed_time("gemm_fixed_s", c) or 0) for c in classes}
    clamped = {c: f"raised to the bf16 class's / {_FIXED_FLOOR} (the physical limit)"
               for c in classes if values[c] != float(hw.fixed_time("gemm_fixed_s", c) or 0)}
    inherited = {c: f"prior, the {fixed_time_prior(c)} class's (no GEMM-only or layer row "
                    "pins it)" for c in classes
                 if f"t0_{c}" not in pinned and fixed_time_prior(c) is not None}
    inherited.update(clamped)
    out["gemm_fixed_s"] = (table(values), cite + (f" | {why(inherited)}" if inherited else ""))
    kvalues = {k: float(hw.fixed_time("kernel_fixed_s", k) or 0) for k in S.KERNEL_KINDS}
    kinherited = {k: "prior, the cast class's (no row pins it)" for k in S.KERNEL_KINDS
                  if f"t0_{k}" not in pinned and k != "cast"}
    out["kernel_fixed_s"] = (table(kvalues), cite + f" | {why(kinherited)}")
    return out


def _bf16_class(cls: str) -> str:
    return "bf16_grouped" if cls.endswith("_grouped") else "bf16"


def dataset_fields(fits: Mapping[str, SpeedupFit] | None = None, path: str | None = None
                   ) -> dict[str, dict[str, tuple[dict[str, float], str]]]:
    """``{gpu name: {toml field: (values, source text)}}`` for every GPU the
    calibration of a hardware file (default: the shipped one) writes: the
    fitted GPUs (``fits``, default: refitted) and the GPUs carried from them."""
    file = Path(path) if path else _shipped_file()
    specs, transfers, _ = _records(file)
    entries = {hw.name: hw for hw in load_hardware(file).entries}
    fits = {g: fit_gpu(s, base=entries[g]) for g, s in specs.items()} if fits is None else fits
    out = {g: _entry_fields(f, specs[g], f.hardware) for g, f in fits.items()}
    raw = _raw_sources(file)
    for target, (origin, same) in transfers.items():
        if origin not in fits:  # only the GPUs carried from the fits given
            continue
        hw = entries[target]
        carried = transfer(fits[origin].hardware, hw, same)
        out[target] = _entry_fields(fits[origin], specs[origin], hw, carried,
                                    raw[target].get("best_shape_efficiency", ""))
    return out


def profile_toml(fits: Mapping[str, SpeedupFit], entries: Sequence[Hardware] | None = None
                 ) -> str:
    """The ``[[profile]]`` tables of ``data/implementations.toml`` from the fits,
    each within the physical limits on every GPU of its generation among
    ``entries`` (default: the shipped default dataset)."""
    entries = list(entries) if entries is not None else [hardware(g) for g in list_hardware()]
    lines = []
    for gpu, f in fits.items():
        gen = impls.generation(gpu)
        for (impl, family), nums in sorted(f.profiles().items()):
            rows = sorted({x for x in f.numbers if x.fitted and x.name.endswith(
                f".{impl}.{family}")}, key=lambda x: x.name)
            pins = sorted({s for x in rows for s in x.pinned_by})
            lines += ["", "[[profile]]", f'implementation = "{impl}"',
                      f'generation = "{gen}"', f'family = "{family}"']
            if "rate" in nums:
                lines.append(f"rate = {_fmt(min(nums['rate'], _down(_rate_cap(entries, gen, family))))}")
            if "fixed_s" in nums:
                lines.append(f"fixed_s = {_fmt(max(nums['fixed_s'], _up(_fixed_floor(entries, gen))))}")
            if "cast_fixed_s" in nums:
                lines.append(f"cast_fixed_s = {_fmt(nums['cast_fixed_s'])}")
            lines.append(f'source = "fitted with {gpu} (fidelity/published_tables/gpu_fits.py) to '
                         f'{", ".join(pins)}"')
    return "\n".join(lines) + "\n"


def limited(hw: Hardware, profiles: Mapping[str, float] | None = None
            ) -> tuple[Hardware, dict[str, float]]:
    """``hw`` and implementation ``profiles`` (``rate.<impl>.<family>``,
    ``fixed.<impl>.<family>``, ``cast.<impl>.<family>``) within the physical
    limits, as the shipped data are written: low-precision fractions at most
    RATE_LIMIT x bf16's (over the largest family factor), every low-precision
    GEMM fixed time at least its bf16 class's / (FIXED_LIMIT - 0.01), profile
    rates and GEMM fixed times likewise (a quantize fixed time has no limit)."""
    p = hw.parameters
    top = max(1.0, *(float(p[S.scaling_efficiency(f)]) for f in S.SCALING_FAMILIES))
    bf16 = float(hw.gemm_efficiency["bf16"])
    values: dict[str, float] = {}
    for d in ("fp8", "fp4"):
        if d in hw.gemm_efficiency and float(hw.gemm_efficiency[d]) > RATE_LIMIT * bf16 / top:
            values[f"eta_{d}"] = _down(RATE_LIMIT * bf16 / top)
    for c in hw.gemm_fixed_s:
        # 4 digits are written: rounded up, a floor stays a floor
        floor = float(hw.fixed_time("gemm_fixed_s", _bf16_class(c)) or 0) / _FIXED_FLOOR
        if float(hw.gemm_fixed_s[c]) < floor:
            values[f"t0_{c}"] = _up(floor)
    out = hw.with_values(values, source="capped at the physical limits") if values else hw
    kept = dict(profiles or {})
    for name, v in kept.items():
        what, _, family = name.split(".")
        if what == "rate":
            kept[name] = min(v, _down(_rate_cap([out], impls.generation(out), family)))
        elif what == "fixed":
            kept[name] = max(v, _up(_fixed_floor([out], impls.generation(out))))
    return out, kept


def _generation_gpus(entries: Sequence[Hardware], gen: str | None) -> list[Hardware]:
    return [hw for hw in entries if impls.generation(hw) == gen]


def _rate_cap(entries: Sequence[Hardware], gen: str | None, family: str) -> float:
    """The largest implementation rate factor for ``family`` that keeps every
    GPU of generation ``gen`` within the physical limit (RATE_LIMIT)."""
    caps = [1.5]
    for hw in _generation_gpus(entries, gen):
        p = hw.parameters
        for d in ("fp8", "fp4"):
            if S.gemm_efficiency(d) in p:
                caps.append(RATE_LIMIT * float(p[S.gemm_efficiency("bf16")]) / (
                    float(p[S.gemm_efficiency(d)]) * float(p[S.scaling_efficiency(family)])))
    return min(caps)


def _fixed_floor(entries: Sequence[Hardware], gen: str | None) -> float:
    """The shortest implementation fixed time every GPU of ``gen`` allows."""
    return max([float(hw.fixed_time("gemm_fixed_s", "bf16") or 0) / _FIXED_FLOOR
                for hw in _generation_gpus(entries, gen)] + [0.0])


def write_dataset(path: str | os.PathLike[str],
                  implementations_path: str | os.PathLike[str]) -> None:
    """Refit every fitted GPU of the hardware file at ``path`` and write the
    results into it, and the implementation profiles into
    ``implementations_path``, through the hardware file's writer.

    Both paths are required, so nothing writes into the installed package
    unless it is named; a path that does not exist yet starts as a copy of
    the shipped file.
    """
    data, impl = Path(path), Path(implementations_path)
    for target, shipped in ((data, _shipped_file()),
                            (impl, Path(__file__).parents[2] / "data" / "implementations.toml")):
        if not target.exists():
            target.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    specs = _records(data)[0]
    entries = {hw.name: hw for hw in load_hardware(data).entries}
    fits = {g: fit_gpu(s, base=entries[g])
            for g, s in with_progress(specs.items(), "refits", unit="GPU")}
    text = edit_entries(data.read_text(encoding="utf-8"), dataset_fields(fits, str(data)),
                        str(data))
    written = load_hardware(write_hardware(text, data))
    keep = impl.read_text(encoding="utf-8").split("\n[[profile]]")[0].rstrip("\n") + "\n"
    impl.write_text(keep + profile_toml(fits, written.entries), encoding="utf-8")
