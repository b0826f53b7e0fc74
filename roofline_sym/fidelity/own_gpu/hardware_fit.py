"""Fit the cost model's hardware numbers to measured times.

What is fitted: the GEMM efficiency per dtype (``eta_bf16``, ``eta_fp8``),
the memory efficiency ``eta_mem`` and the launch floor ``t_launch``.  Peaks
and bandwidth stay the datasheet's: times only identify the products
``P_d * eta_d`` and ``BW * eta_mem``, so the fractions carry the fit.  The
fit minimises the squared log-time error over all rows, each row priced by
its term ``Max(F / (P_d eta_d), B / (BW eta_mem), t_launch)``, with a small
Levenberg-Marquardt on log-parameters (numpy only).  ``Calibration.to_toml``
writes the result as a hardware file that ``load_hardware`` reads.

Optional extension, ``size_dependent=True``: a fixed time per GEMM in
seconds for each GEMM class measured, ``t0_<class>`` (``t0_bf16``,
``t0_fp8_tensorwise``, ``t0_fp8_rowwise``: the class of a row is the one its
component ``gemm.<class>.<gemm>`` names), the same number and form as the
default model's (``t0_<class> + F / (P_d eta_d)``: launch, prologue,
epilogue, wave quantisation): what makes small GEMMs slower than the
roofline (torchao: about 2x below 1024).  The hardware entry keeps
``eta_d`` (the large-GEMM limit) and ``gemm_fixed_s`` (each class's
``t0``); ``Calibration.evaluate`` binds it to a default-preset model, which
prices GEMMs the same way.

>>> from roofline_sym.fidelity.own_gpu.timing import grid
>>> truth = {"eta_bf16": 0.75, "eta_fp8": 0.62, "eta_mem": 0.85, "t_launch": 3e-6}
>>> meas = synthesize("h200", grid("quick"), truth, noise=0.0)
>>> cal = fit_hardware(meas, "h200")
>>> cal.values
{'eta_bf16': 0.75, 'eta_fp8': 0.62, 'eta_mem': 0.85, 't_launch': 3e-06}
>>> cal.hardware.name, cal.hardware.gemm_efficiency["fp8"]
('H200 SXM (calibrated)', 31/50)
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ... import symbols as S
from ...devices import Hardware, hardware as lookup_hardware, load_hardware
from ...devices.toml_io import (TOML_FIELDS, cited_sources, hardware_toml, toml_fields,
                                write_hardware)
from ...errors import InputError
from ...model.layer import Linear
from ...model.term import roofline_piece_times
from ...devices.ranges import RANGES
from ...validate import unknown_name
from .components import GEMM_CLASSES, Case, model_times
from .timing import RepeatPolicy, grid, run
from .measurement_file import SYNTHETIC_GPU, Measurements, parse_csv, read_csv, write_measurements

__all__ = ["Calibration", "fit_hardware", "synthesize", "hardware_values", "resolve_hardware"]

# Significant digits kept in a fitted value: timing noise is ~1%, and short
# decimals keep the TOML readable and its exact Rationals small.
_DIGITS = 4


def hardware_values(hw: Hardware) -> dict[str, float]:
    """``{symbol name: float}`` of a hardware entry (``P_fp8``, ``eta_mem``...).

    >>> hardware_values(lookup_hardware("h200"))["eta_fp8"]
    0.6914
    """
    return {str(k): float(v) for k, v in hw.stated.items()}


@dataclass(frozen=True, eq=False)
class Calibration:
    """A fitted hardware entry and how it was fitted.

    ``hardware``: the calibrated ``Hardware``; ``values``: the fitted numbers
    by symbol name; ``fixed_s``: the fixed time per GEMM of each GEMM class
    measured (seconds, ``t0_<class>`` by class) of a size-dependent fit
    (empty otherwise);
    ``rms_log_error``: the fit's root-mean-square ``log(pred / measured)``;
    ``source``: the measurement file fitted to (``fit_hardware``) or the hardware file
    read back (``load``); ``meas_sources``: the ``[sources]`` citation keys
    that the entry's sources cite; ``toml_sources``: per ``Hardware`` field,
    the source as written in the file read back (citing ``meas_sources``).
    """

    hardware: Hardware
    base: Hardware
    values: Mapping[str, float]
    fixed_s: Mapping[str, float] = field(default_factory=dict)
    source: str = ""
    rows: int = 0
    rms_log_error: float = math.nan
    notes: tuple[str, ...] = ()
    meas_sources: Mapping[str, str] = field(default_factory=dict)
    toml_sources: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, hw: Hardware, base: Hardware | None = None, *,
           sources: Mapping[str, str] | None = None,
           entry_sources: Mapping[str, str] | None = None,
           source: str = "") -> "Calibration":
        """Wrap a hardware entry (e.g. a calibrated TOML loaded back) as a Calibration.

        ``sources``: the ``[sources]`` table of the file ``hw`` was read from,
        ``entry_sources``: its ``[gpu.sources]`` (TOML field -> source text);
        with them ``to_toml`` writes the entry back with its own citations
        (``load`` passes both).  ``source``: that file's path.
        """
        values = {k: v for k, v in hardware_values(hw).items()
                  if k.startswith("eta_") or k == "t_launch"}
        toml_sources = {TOML_FIELDS[k]: v for k, v in (entry_sources or {}).items()
                        if k in TOML_FIELDS}
        return cls(hw, base or hw, values,
                   {c: float(v) for c, v in hw.gemm_fixed_s.items()
                    if v and c in GEMM_CLASSES},
                   source=os.fspath(source), meas_sources=dict(sources or {}),
                   toml_sources=toml_sources)

    @classmethod
    def load(cls, path: str | os.PathLike[str], base: Hardware | None = None) -> "Calibration":
        """A calibrated hardware TOML (one entry, as ``to_toml`` writes) read back,
        with its ``[sources]`` and per-field sources, so ``to_toml`` can write it again."""
        ds = load_hardware(path)  # validates, with errors naming the file
        if len(ds) != 1:
            raise InputError(f"{path}: expected one calibrated entry, found "
                             f"{len(ds)} ({', '.join(ds.names())})")
        keys, entry_sources = cited_sources(path)
        return cls.of(ds.entries[0], base, sources=keys, entry_sources=entry_sources[0],
                      source=os.fspath(path))

    @property
    def size_dependent(self) -> bool:
        return bool(self.fixed_s)

    def parameters(self) -> dict[str, Any]:
        """Hardware values by symbol name."""
        return hardware_values(self.hardware)

    def costs(self, gemm_classes: Any, flops: Any, nbytes: Any
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-row ``(dtype, flops, bytes)`` of rows of GEMM class ``gemm_classes``
        (``""``: a kernel) priced as this calibration prices them: a GEMM's
        fixed time ``t0_<class>`` counted as the work it is worth at the GEMM's
        rates (``t0 P eta`` FLOPs, ``t0 BW eta_mem`` bytes), so the flat
        roofline of ``model_times`` gives ``t0 + Max(F / (P eta), B / (BW
        eta_mem))``, the default model's form.

        >>> cal = Calibration.of(lookup_hardware("h200"))
        >>> d, f, b = cal.costs(["fp8_rowwise", ""], [1e9, 0.0], [1e6, 1e6])
        >>> d.tolist(), bool(f[0] > 1e9 and b[0] > 1e6), float(b[1])
        (['fp8', ''], True, 1000000.0)
        """
        classes = np.asarray(gemm_classes, dtype=object)
        d = np.array([_dtype(c) for c in classes.tolist()], dtype=object).reshape(classes.shape)
        f = np.array(flops, dtype=np.float64, copy=True)
        b = np.array(nbytes, dtype=np.float64, copy=True)
        v = self.parameters()
        for c in set(classes.tolist()) - {""}:
            t0 = float(self.hardware.fixed_time("gemm_fixed_s", c) or 0)
            rows = (classes == c) & (f > 0)
            f[rows] += t0 * v[f"P_{_dtype(c)}"] * v[f"eta_{_dtype(c)}"]
            b[rows] += t0 * v["BW"] * v["eta_mem"]
        return d, f, b

    def predict(self, measurements: Measurements) -> np.ndarray:
        """The calibrated model's time of each row."""
        _, flops, nbytes = measurements.costs
        return model_times(*self.costs(measurements.gemm_classes, flops, nbytes),
                           self.parameters())

    def evaluate(self, model: Linear, M: Any, K: Any, N: Any) -> dict[str, np.ndarray]:
        """``model.evaluate`` with this calibration (``model``: an unbound ``Linear``).

        >>> import roofline_sym as rs
        >>> cal = Calibration.of(rs.hardware("h200"))
        >>> m = rs.linear("tensorwise")
        >>> bool(cal.evaluate(m, 8192, 8192, 8192)["speedup"]
        ...      == m.on(rs.hardware("h200")).evaluate(8192, 8192, 8192)["speedup"])
        True
        """
        if model.hardware is not None:
            raise InputError("Calibration.evaluate needs an unbound model (no .on(hw))")
        if self.fixed_s and model.options.efficiency != "size":
            raise InputError("a size-dependent calibration prices GEMMs with their fixed "
                             "times: evaluate a model with efficiency='size'")
        # the size-dependent model's t0 + F / (P eta) is the fit's own form
        return model.on(self.hardware).evaluate(M, K, N)

    # -- the hardware file -----------------------------------------------------------
    def to_toml(self, path: str | os.PathLike[str]) -> Path:
        """Write the calibrated entry as a hardware TOML file (the schema of
        ``roofline_sym/data/default.toml``), only once it loads back through
        ``load_hardware`` (``devices.toml_io.write_hardware``); a text that does
        not raises ``HardwareError`` and leaves no file behind."""
        return write_hardware(self.toml(), path)

    def toml(self) -> str:
        """The hardware TOML text (see ``to_toml``)."""
        hw = self.hardware
        origin = Path(self.source).name if self.source else ""
        if self.rows:
            origin = f"Fitted to {origin or 'measurements'}."
        else:
            origin = (f"Written back from {origin}." if origin
                      else f"Written from the entry {hw.name!r}.")
        comments = ["roofline_sym hardware file written by roofline_sym.fidelity.own_gpu.hardware_fit.", origin]
        if any("SYNTHETIC" in n for n in hw.notes):
            comments.append("SYNTHETIC measurements: this is not a calibration of a real GPU.")
        field_sources = {t: self._toml_source(h) for t, h in toml_fields(hw).items()}
        keys = dict(self.meas_sources)
        for key, hw_of_key in (("BASE", self.base), ("ENTRY", hw)):
            if key not in keys and any(_cites(text, key) for text in field_sources.values()):
                keys[key] = _entry_citation(hw_of_key)
        return hardware_toml(hw, field_sources, keys, dataset="calibrated", comments=comments,
                             description=f"{hw.name}: achievable fractions and launch "
                                         "floor fitted to measured times")

    def _toml_source(self, hw_field: str) -> str:
        # an entry read back from a file keeps that file's source texts; fitted
        # fields cite MEAS (already in key form); the rest cite BASE and keep
        # the base entry's own citation text after the semicolon, or, for an
        # entry not derived from the base, ENTRY and the entry's own text
        if hw_field in self.toml_sources:
            return self.toml_sources[hw_field]
        text = self.hardware.sources.get(hw_field, "")
        if text.startswith("MEAS") and "MEAS" in self.meas_sources:
            return text
        base_text = self.base.sources.get(hw_field, "no source given in the base entry")
        if not text or text == base_text:
            return f"BASE; {base_text}"
        return f"ENTRY; {text}"


def _entry_citation(hw: Hardware) -> str:
    return (f"roofline_sym {hw.dataset} dataset, entry {hw.name!r}; its citation "
            "for each value follows the semicolon")


def _cites(text: str, key: str) -> bool:
    """Whether a source text cites ``key`` (keys come before the first semicolon)."""
    return key in (t.strip() for t in text.split(";", 1)[0].split(","))


def _sig(value: float, digits: int = _DIGITS) -> float:
    return float(f"{value:.{digits}g}")


def _dtype(gemm_class: str) -> str:
    """The dtype whose peak a GEMM class runs at: the first word of its name
    (``symbols.gemm_class``: ``fp8_rowwise`` runs at ``P_fp8``); ``""`` stays ``""``."""
    return gemm_class.split("_")[0]


# -- the fit ------------------------------------------------------------------------------
class _Problem:
    """Residuals ``log(model) - log(measured)`` and their Jacobian in the
    log-parameters ``x`` (``eta_<d>``, ``eta_mem``, ``t_launch``, ``t0_<class>``).

    Each row is priced by the model's own roofline (``roofline_piece_times``)
    with the fitted values, a size-dependent GEMM of class c taking
    ``t0_c + F / (P_d eta_d)`` (priced as ``F + t0_c P_d eta_d`` FLOPs).  A
    row's time is its largest piece, so its gradient is that piece's: -1 in
    the efficiency of memory, +1 in the launch floor, and for a GEMM
    -F / (F + F0) in ``log eta_d`` and F0 / (F + F0) in ``log t0_c``
    (F0 = t0_c P_d eta_d)."""

    def __init__(self, dtype: np.ndarray, classes: np.ndarray, flops: np.ndarray,
                 nbytes: np.ndarray, times: np.ndarray, peaks: Mapping[str, float], bw: float,
                 names: Sequence[str]) -> None:
        self.names = names
        self.index = {n: i for i, n in enumerate(names)}
        self.dtype, self.flops, self.nbytes = dtype, flops, nbytes
        self.log_t = np.log(times)
        self.peaks, self.bw = peaks, bw
        self.masks: dict[str, np.ndarray] = {d: dtype == d for d in set(dtype.tolist()) - {""}}
        # the GEMM rows of each class: a class's rows run at its dtype's rate
        self.classes: dict[str, np.ndarray] = {c: classes == c
                                               for c in set(classes.tolist()) - {""}}

    def _b0(self, x: np.ndarray, c: str) -> float:
        """The bytes the fixed time ``t0_<c>`` is worth at the fitted bandwidth."""
        if f"t0_{c}" not in self.index:
            return 0.0
        return (math.exp(x[self.index[f"t0_{c}"]]) * self.bw
                * math.exp(x[self.index["eta_mem"]]))

    def _f0(self, x: np.ndarray, c: str) -> float:
        """The FLOPs the fixed time ``t0_<c>`` is worth at the fitted rate."""
        if f"t0_{c}" not in self.index:
            return 0.0
        d = _dtype(c)
        return (math.exp(x[self.index[f"t0_{c}"]]) * self.peaks[d]
                * math.exp(x[self.index[f"eta_{d}"]]))

    def pieces(self, x: np.ndarray) -> np.ndarray:
        """``log`` of each row's roofline pieces at ``x`` (``-inf``: no such piece)."""
        values = {"BW": self.bw, "eta_mem": math.exp(x[self.index["eta_mem"]]),
                  "t_launch": math.exp(x[self.index["t_launch"]])}
        flops, nbytes = self.flops.copy(), self.nbytes.copy()
        for d in self.masks:
            values[f"P_{d}"] = self.peaks[d]
            values[f"eta_{d}"] = math.exp(x[self.index[f"eta_{d}"]])
        for c, mask in self.classes.items():
            flops[mask] += self._f0(x, c)
            nbytes[mask] += self._b0(x, c)
        with np.errstate(divide="ignore"):
            logs: np.ndarray = np.log(np.maximum(
                roofline_piece_times(self.dtype, flops, nbytes, values), 0.0))
        return logs

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pieces = self.pieces(x)
        active = pieces.argmax(axis=0)
        r = pieces.max(axis=0) - self.log_t
        J = np.zeros((r.size, x.size))
        J[active == 1, self.index["eta_mem"]] = -1.0
        for c, mask in self.classes.items():
            t0 = self.index.get(f"t0_{c}")
            rows = mask & (active == 0)
            f0 = self._f0(x, c)
            J[rows, self.index[f"eta_{_dtype(c)}"]] = -self.flops[rows] / (self.flops[rows] + f0)
            if t0 is not None:
                J[rows, t0] = f0 / (self.flops[rows] + f0)
                # a GEMM's fixed time in its memory piece too
                rows = mask & (active == 1)
                b0 = self._b0(x, c)
                J[rows, self.index["eta_mem"]] = -self.nbytes[rows] / (self.nbytes[rows] + b0)
                J[rows, t0] = b0 / (self.nbytes[rows] + b0)
        J[active == 2, self.index["t_launch"]] = 1.0
        return r, J, active


def _levenberg_marquardt(problem: _Problem, x0: np.ndarray, free: np.ndarray,
                         max_iter: int = 300) -> np.ndarray:
    """Minimise ``|r(x)|^2`` over the free entries of ``x`` (Marquardt scaling).

    The objective is piecewise smooth (a row changes piece where two pieces
    cross); a step that crosses badly raises the cost, is rejected, and the
    damping shortens the next one."""
    x = x0.copy()
    r, J, _ = problem(x)
    cost, lam = float(r @ r), 1e-3
    for _ in range(max_iter):
        Jf = J[:, free]
        A, g = Jf.T @ Jf, Jf.T @ r
        # the floor keeps a parameter no row depends on (a zero column) solvable
        D = np.diag(np.maximum(np.diag(A), 1e-9))
        step = np.linalg.solve(A + lam * D, -g)
        trial = x.copy()
        trial[free] += step
        r2, J2, _ = problem(trial)
        cost2 = float(r2 @ r2)
        if cost2 < cost:
            done = cost - cost2 <= 1e-13 * cost or np.max(np.abs(step)) < 1e-10
            x, r, J, cost, lam = trial, r2, J2, cost2, max(lam / 10, 1e-12)
            if done:
                break
        else:
            lam *= 10
            if lam > 1e12:
                break
    return x


def _initial(problem: _Problem, dtype: np.ndarray, flops: np.ndarray, nbytes: np.ndarray,
             times: np.ndarray, peaks: Mapping[str, float], bw: float, base: Hardware
             ) -> dict[str, float]:
    """Starting values read off the regimes' clearest rows."""
    kernels = dtype == ""
    launch_only = kernels & (nbytes == 0)
    t_launch = float(np.median(times[launch_only])) if launch_only.any() else float(times.min())
    big = kernels & (nbytes > 0) & (times > 5 * t_launch)
    if big.any():
        eta_mem = float(np.median(nbytes[big] / (bw * times[big])))
    else:
        eta_mem = float(base.mem_efficiency or 0.9)
    start = {"eta_mem": eta_mem, "t_launch": t_launch}
    for d, mask in problem.masks.items():
        cut = np.quantile(flops[mask], 0.75)
        top = mask & (flops >= cut)
        start[f"eta_{d}"] = float(np.median(flops[top] / (peaks[d] * times[top])))
    return {k: min(max(v, 1e-4), 1.5) if k != "t_launch" else v for k, v in start.items()}


def fit_hardware(measurements: Measurements | str | os.PathLike[str], base: Hardware | str | None = None, *,
        size_dependent: bool = False, name: str | None = None) -> Calibration:
    """Fit ``eta_<dtype>``, ``eta_mem`` and ``t_launch`` (and with
    ``size_dependent``, the fixed time per GEMM of each GEMM class measured,
    ``t0_<class>``, seconds) to a measurement file.

    ``base``: the entry whose peaks and bandwidth are used and whose other
    fields are kept (a name, a ``Hardware``, or None for the file's GPU).
    Efficiencies above 1 are clipped to 1 (with a warning and a note), the
    others refitted.  A parameter no row's time depends on keeps the base
    entry's value (and a note says so).
    """
    meas = measurements if isinstance(measurements, Measurements) else read_csv(measurements)
    base = resolve_hardware(base, meas)
    dtype, flops, nbytes = meas.costs
    classes = meas.gemm_classes
    times = meas.time_s
    dtypes = sorted(set(dtype.tolist()) - {""})
    measured = [c for c in GEMM_CLASSES if c in set(classes.tolist())]
    lacking = [d for d in dtypes if not base.supports(d)]
    if lacking:
        raise InputError(f"{meas.source}: has {'/'.join(lacking)} GEMM rows, but {base.name} "
                         f"has no {'/'.join(lacking)} peak to fit an efficiency against")
    peaks = {d: float(base.peak_flops[d]) for d in dtypes}
    bw = float(base.mem_bw)
    names = [f"eta_{d}" for d in dtypes] + ["eta_mem", "t_launch"]
    if size_dependent:
        names += [f"t0_{c}" for c in measured]
    problem = _Problem(dtype, classes, flops, nbytes, times, peaks, bw, names)
    start = _initial(problem, dtype, flops, nbytes, times, peaks, bw, base)
    for c in measured:  # a fixed cost of ~1 us per GEMM to start from
        start[f"t0_{c}"] = 1e-6
    x = np.log([start[n] for n in names])
    free = np.ones(len(names), dtype=bool)
    notes: list[str] = []
    while True:
        x = _levenberg_marquardt(problem, x, free)
        over = [i for i, n in enumerate(names) if n.startswith("eta_") and x[i] > 0 and free[i]]
        if not over:
            break
        for i in over:
            limit = "bandwidth" if names[i] == "eta_mem" else "peak"
            msg = (f"{names[i]} fitted to {math.exp(x[i]):.4g} > 1 (faster than "
                   f"{base.name}'s {limit} allows): clipped to 1, the other values refitted")
            warnings.warn(msg, stacklevel=2)
            notes.append(msg)
            x[i], free[i] = 0.0, False
    _, _, active = problem(x)
    fitted = {n: _sig(math.exp(v)) for n, v in zip(names, x)}
    for c in measured:
        # below a microsecond's millionth per GEMM, t0 is the fit running off
        # towards zero: no size dependence in these times
        if f"t0_{c}" in fitted and fitted[f"t0_{c}"] < 1e-12:
            fitted[f"t0_{c}"] = 0.0
    counts = _regime_counts(names, dtype, active)
    for n in ("eta_mem", "t_launch", *(f"eta_{d}" for d in dtypes)):
        if counts[n] == 0:
            kept = hardware_values(base).get(n)
            if kept is None:
                raise InputError(f"{meas.source}: no row is in the regime of {n}, and "
                                 f"{base.name} has no value for it to keep")
            fitted[n] = kept
            notes.append(f"{n}: no measured row is in its regime; kept {base.name}'s {kept:g}")
    r = problem(np.log(np.maximum([fitted[n] for n in names], 1e-300)))[0]
    return _fitted_calibration(meas, base, fitted, dtypes, counts, notes, float(np.sqrt(np.mean(r**2))),
                        name)


def _regime_counts(names: Sequence[str], dtype: np.ndarray, active: np.ndarray
                   ) -> dict[str, int]:
    counts = {n: 0 for n in names}
    for d in set(dtype.tolist()) - {""}:
        counts[f"eta_{d}"] = int(np.sum((dtype == d) & (active == 0)))
    counts["eta_mem"] = int(np.sum(active == 1))
    counts["t_launch"] = int(np.sum(active == 2))
    return counts


def _fitted_calibration(meas: Measurements, base: Hardware, fitted: dict[str, float],
                        dtypes: Sequence[str], counts: Mapping[str, int], notes: list[str],
                        rms: float, name: str | None) -> Calibration:
    values = {k: v for k, v in fitted.items() if not k.startswith("t0_")}
    # a fixed time below the smallest a hardware entry accepts (0.1 us, under what a
    # timed kernel resolves): the fit found none
    floor = RANGES["fixed_time"].low
    fixed_s = {k.removeprefix("t0_"): _sig(v, 3) if v >= floor else 0.0
               for k, v in fitted.items() if k.startswith("t0_")}
    file_name = Path(meas.source).name if meas.source else "measurements"
    digest = ""
    if meas.source and Path(meas.source).is_file():
        digest = hashlib.sha256(Path(meas.source).read_bytes()).hexdigest()[:16]
    gpu = meas.gpu or "an unnamed GPU"
    env = ", ".join(f"{c} {meas.columns[c][0]}" for c in ("torch", "cuda")
                    if meas.columns.get(c) and meas.columns[c][0])
    meas_text = (f"measurement file {file_name}" + (f" (sha256 {digest}...)" if digest else "")
                 + f": {len(meas)} rows from {gpu}" + (f", {env}" if env else "")
                 + "; fitted by roofline_sym.fidelity.own_gpu.hardware_fit (least squares on log time)")
    if meas.synthetic:
        meas_text += "; SYNTHETIC: generated by the model, not measured"
        notes = ["SYNTHETIC measurements: generated by the cost model, not measured on a GPU; "
                 "this entry is a test artefact, not a calibration.", *notes]
    sources = {
        "MEAS": meas_text,
        "BASE": _entry_citation(base),
    }
    eff_text = ", ".join(f"{d} over {counts[f'eta_{d}']} compute-bound GEMM rows" for d in dtypes)
    kept = [d for d in base.gemm_efficiency if d not in dtypes]
    hw_sources = dict(base.sources)
    hw_sources["gemm_efficiency"] = (f"MEAS{', BASE' if kept else ''}; {eff_text}"
                                     + (f"; {', '.join(kept)} kept from BASE" if kept else ""))
    hw_sources["mem_efficiency"] = f"MEAS; over {counts['eta_mem']} memory-bound rows"
    hw_sources["launch_overhead"] = f"MEAS; over {counts['t_launch']} launch-bound rows"
    # the component fit prices kernels at one memory efficiency and GEMMs by
    # their dtype alone: the entry drops the base's per-class efficiencies
    # the component fit prices kernels at Max(bytes / (BW eta_mem), t_launch): no
    # fixed time of their own; GEMMs have one only in a size-dependent fit
    classes = [c for c in S.GEMM_CLASSES if c.split("_")[0] in base.peak_flops]
    gemm_fixed = {c: 0.0 for c in classes} if not fixed_s else dict(fixed_s)
    hw_sources["kernel_fixed_s"] = "MEAS; the component fit prices kernels without one (0)"
    hw_sources["gemm_fixed_s"] = "MEAS; " + (", ".join(
        f"{c} a fixed {v * 1e6:.2g} us per GEMM" for c, v in fixed_s.items())
        + "; the other classes inherit their priors" if fixed_s else
        "a fit without size dependence: no fixed time (0)")
    if fixed_s:
        notes = notes + [
            "Size-dependent GEMM time t0_class + F / (P_d eta_d), F = 2 M K N: "
            "gemm_efficiency holds eta_d, gemm_fixed_s t0_class"]
    notes = [f"Fitted to {file_name}: {len(meas)} rows, rms log error {rms:.3f}.", *notes]
    efficiency = dict(base.gemm_efficiency)
    efficiency.update({d: values[f"eta_{d}"] for d in dtypes})
    aliases = (meas.gpu,) if meas.gpu and not meas.synthetic else ()
    try:
        hw = base.replace(
            name=name or f"{base.name} (calibrated)", aliases=aliases, gemm_efficiency=efficiency,
            mem_efficiency=values["eta_mem"], launch_overhead=values["t_launch"],
            gemm_fixed_s=gemm_fixed, kernel_efficiency={},
            kernel_fixed_s={k: 0.0 for k in S.KERNEL_KINDS},
            scaling_efficiency={}, sources=hw_sources, notes=tuple(notes), dataset="calibrated")
    except ValueError as exc:
        raise InputError(f"{meas.source}: the fitted values are not a valid hardware entry: "
                         f"{exc}") from None
    return Calibration(hw, base, values, fixed_s, meas.source, len(meas), rms, tuple(notes),
                       sources)


def resolve_hardware(hw: Hardware | str | None, meas: Measurements | None = None) -> Hardware:
    """A ``Hardware`` from an entry, a name (default dataset) or the file's GPU."""
    if isinstance(hw, Hardware):
        return hw
    if hw is None:
        if meas is None or not meas.device:
            raise InputError("no hardware given and the measurements name no GPU; "
                             "pass hardware=, e.g. 'h200'")
        try:
            return lookup_hardware(meas.device)
        except LookupError:
            raise InputError(f"{meas.source}: GPU {meas.gpu!r} is not in the default dataset; "
                             "pass hardware=, e.g. 'h200'") from None
    return lookup_hardware(hw)


# -- synthetic measurements ------------------------------------------------------------------
def synthesize(hardware: Hardware | str, cases: Any = None,
               truth: Mapping[str, float] | None = None, *,
               fixed_s: Mapping[str, float] | None = None, noise: float = 0.02,
               seed: int = 0, comments: Sequence[str] = ()) -> Measurements:
    """Measurements generated by the model: SYNTHETIC, for tests and the sample file.

    Runs the harness loop (``timing.run``) with a fake timer that returns the
    model's time of each op times lognormal noise (``sigma = noise``; one draw
    per op).  ``truth``: hardware values by symbol name replacing the entry's
    (``eta_fp8=...``); ``fixed_s``: a fixed time per GEMM (seconds) by GEMM
    class (``{"bf16": 5e-6, "fp8_rowwise": 6e-6}``; a class not named: none)
    for a size-dependent GEMM time ``t0_<class> + F / (P_d eta_d)``.  The result says it is synthetic in its comments and gpu column;
    ``comments`` are added to them (say how to regenerate it).

    >>> m = synthesize("h100", grid("quick"), noise=0.0)
    >>> m.synthetic, m.gpu
    (True, 'SYNTHETIC model of H100 SXM')
    """
    hw = resolve_hardware(hardware)
    values = hardware_values(hw)
    unknown = set(truth or {}) - set(values)
    if unknown:
        raise InputError(f"unknown hardware value(s) {sorted(unknown)}; {hw.name} has "
                         f"{sorted(values)}")
    values.update(truth or {})
    fixed_s = dict(fixed_s or {})
    for cls in fixed_s:
        if cls not in GEMM_CLASSES:
            raise unknown_name("GEMM class", cls, GEMM_CLASSES, where="fixed_s: ")
    rng = np.random.default_rng(seed)

    def timer(case: Case, warmup: int, repeats: int) -> list[float]:  # the op is the case
        flops, nbytes = float(case.flops), float(case.bytes)
        t0 = fixed_s.get(case.gemm_class, 0.0) if flops else 0.0
        # t0 + Max(F / (P eta), B / (BW eta_mem)): the fixed time as work at the rates
        if t0:
            flops += t0 * values[f"P_{case.dtype}"] * values[f"eta_{case.dtype}"]
            nbytes += t0 * values["BW"] * values["eta_mem"]
        t = model_times(np.array([case.dtype], dtype=object), np.array([flops]),
                        np.array([nbytes]), values)[0]
        return [float(t * math.exp(noise * rng.standard_normal()))] * repeats

    cases = grid("default") if cases is None else list(cases)
    rows = run(cases, make_op=lambda case: case, timer=timer,
               env={"gpu": f"{SYNTHETIC_GPU}{hw.name}"},
               policy=RepeatPolicy(warmup=0, min_repeats=1, max_repeats=1))
    described = ", ".join(f"{k}={v:g}" for k, v in sorted(values.items())
                          if k.startswith("eta_") or k == "t_launch")
    comments = [
        "SYNTHETIC: generated by roofline_sym.fidelity.own_gpu.hardware_fit.synthesize from the cost model; "
        "NOT measured on a GPU",
        f"model: {hw.name} ({hw.dataset} dataset) peaks and bandwidth, with {described}"
        + (", fixed_s " + ", ".join(f"{c}={v:g}" for c, v in fixed_s.items())
           if fixed_s else ""),
        f"noise: lognormal, sigma {noise:g}, seed {seed}",
        *comments,
    ]
    buf = io.StringIO()
    write_measurements(rows, buf, comments)
    return parse_csv(buf.getvalue(), "<synthetic>")
