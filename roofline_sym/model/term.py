"""A term of a cost: its identity, the work it does, and its roofline time.

Every cost in a model is a sum of terms, one per GEMM and per kernel.  A
term is named by a ``TermId`` (side, kind, role, kernel), carries its
``Work`` (FLOPs at a GEMM dtype's peak, bytes moved) and keeps its time as
regime pieces (``compute``, ``memory``, ``launch``), so a breakdown, a regime
label and a break-even split all read the structure instead of taking a
``Max`` apart again.

A term's ``time`` is a ``TermTime``: a SymPy expression that prints as
the term's name and is its roofline ``Max`` on ``.doit()`` (``expr``), so a
model's totals are short sums of names.

``roofline_pieces`` is the one place a kernel's time is priced:
``Max(F / (P_d eta_d), B / (BW eta_mem), t_launch)``.  ``roofline_times`` is
its numeric twin for arrays of rows, compiled from it.

>>> from roofline_sym.symbols import M, K
>>> t = Term.roofline(TermId("lowp", "cast", "input", "amax"), Work(bytes=2 * M * K))
>>> t.name, t.expr
('lowp.cast.input.amax', Max(t_launch, 2*K*M/(BW*eta_mem)))
>>> t.time, t.time.doit() == t.expr
(lowp.cast.input.amax, True)
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence, overload

import numpy as np
import sympy

from .. import symbols as S
from ..errors import InputError, InputTypeError
from ..validate import expression, unknown_name
from .term_time import TermTime, roofline_max

__all__ = [
    "TermId",
    "Work",
    "Term",
    "RegimeSummary",
    "Regime",
    "REGIMES",
    "REGIME_LETTERS",
    "GEMM_TIME_MODELS",
    "LAUNCH_FLOORS",
    "EFFICIENCY_MODELS",
    "HOST_TIMERS",
    "roofline_pieces",
    "roofline_piece_times",
    "roofline_times",
]



class Regime(enum.Flag):
    """What bounds a time: ``COMPUTE``, ``MEMORY`` or ``LAUNCH``; where the terms
    of a group differ, their combination (``MEMORY | LAUNCH``).  Written as the
    regime names joined by ``+`` in this order, or as their letters; the empty
    combination (no term) is ``-``.

    >>> both = Regime.parse("launch+memory")
    >>> both == Regime.MEMORY | Regime.LAUNCH, str(both), both.letters
    (True, 'memory+launch', 'M+L')
    >>> str(Regime.of(["compute", "memory", "compute"])), Regime.COMPUTE in Regime.of(["compute"])
    ('compute+memory', True)
    """

    COMPUTE = 1
    MEMORY = 2
    LAUNCH = 4

    @property
    def names(self) -> tuple[str, ...]:
        """The single regimes in it, by name, in the order compute, memory, launch."""
        return tuple(r.name.lower() for r in _SINGLE if r in self and r.name)

    @property
    def letters(self) -> str:
        """``C``, ``M``, ``L`` joined by ``+`` (``-`` for none): tables and legends."""
        return "+".join(n[0].upper() for n in self.names) or "-"

    @property
    def order(self) -> tuple[int, ...]:
        """A sort key: single regimes first by position, combinations after
        their first member; the empty combination last."""
        return tuple(REGIMES.index(n) for n in self.names) or (len(REGIMES),)

    def __str__(self) -> str:
        return "+".join(self.names) or "-"

    @classmethod
    def parse(cls, text: str) -> "Regime":
        """From ``compute``, ``memory+launch``, ...; ``""`` or ``-``: none."""
        if text in ("", "-"):
            return cls(0)
        out = cls(0)
        for part in text.split("+"):
            if part not in REGIMES:
                raise unknown_name("regime", part, REGIMES)
            out |= cls[part.upper()]
        return out

    @classmethod
    def of(cls, regimes: Iterable["str | Regime"]) -> "Regime":
        """The combination of several regimes (names or members)."""
        out = cls(0)
        for r in regimes:
            out |= r if isinstance(r, Regime) else cls.parse(r)
        return out


_SINGLE = (Regime.COMPUTE, Regime.MEMORY, Regime.LAUNCH)
# the names as terms' pieces, sweeps and break-evens write them
REGIMES = tuple(str(r) for r in _SINGLE)
# one-letter labels for tables and plot legends
REGIME_LETTERS = {str(r): r.letters for r in _SINGLE}
# roofline: a GEMM costs Max(compute, memory, launch); compute: FLOPs only (the seed)
GEMM_TIME_MODELS = ("roofline", "compute")
# per_kernel: every kernel costs Max(bytes / BWeff, L) (torchao); empty_kernels:
# bytes are summed at BWeff, and only kernels that move no bytes pay L (the seed)
LAUNCH_FLOORS = ("per_kernel", "empty_kernels")
# how the time was measured (devices.timers): under CUDA events around eager launches
# every kernel's floor is the host's time per launch (t_host), since the GPU idles
# while the host issues the next kernel; a graph replay or a profiler's sum of
# kernel times sees the GPU's own launch floor (t_launch) only
HOST_TIMERS = ("events",)
# flat: one efficiency per GEMM dtype and one for memory (torchao, the seed);
# size: every GEMM class and kernel class has a fixed time in seconds (t0_fp8_rowwise,
# t0_cast) before its work runs at the asymptotic rate, kernels run at their class's efficiency (eta_cast, ...), scaled GEMMs at
# their family's factor (kappa_rowwise, ...): the default model
EFFICIENCY_MODELS = ("size", "flat")


# -- identity ---------------------------------------------------------------------
@dataclass(frozen=True)
class TermId:
    """What a term is: ``side`` (``baseline``, ``lowp``), ``kind`` (``gemm``,
    ``cast``, ``activation``), ``role`` (the GEMM's name, or the tensor a kernel
    works on) and ``kernel`` (a cast kernel's name).

    Its ``name`` is the dotted string a breakdown is keyed by; ``parse`` reads
    one back.

    >>> TermId.parse("lowp.cast.input.amax")
    TermId(side='lowp', kind='cast', role='input', kernel='amax')
    >>> str(TermId("baseline", "gemm", "output")), TermId("lowp", "cast", "weight").group
    ('baseline.gemm.output', 'overhead')
    """

    side: str
    kind: str
    role: str | None = None
    kernel: str | None = None

    def __post_init__(self) -> None:
        for part in (self.side, self.kind, self.role, self.kernel):
            if part is not None and (not isinstance(part, str) or not part or "." in part):
                raise InputError(f"term id parts are names without dots, not {part!r}")
        if self.kernel is not None and self.role is None:
            raise InputError(f"term id {self.side}.{self.kind}: a kernel needs a role")

    @classmethod
    def parse(cls, name: str) -> "TermId":
        """The id of a dotted name (``side.kind[.role[.kernel]]``)."""
        parts = name.split(".") if isinstance(name, str) else []
        if not 2 <= len(parts) <= 4:
            raise InputError(f"{name!r} is not a term name (side.kind[.role[.kernel]])")
        return cls(*parts)

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(p for p in (self.side, self.kind, self.role, self.kernel) if p is not None)

    @property
    def name(self) -> str:
        return ".".join(self.parts)

    def __str__(self) -> str:
        return self.name

    @property
    def detail(self) -> tuple[str, ...]:
        """The parts after the kind: the GEMM, or the role and the kernel."""
        return self.parts[2:]

    @property
    def group(self) -> str:
        """The total the term adds to: ``gemm`` or ``overhead`` (``<side>_<group>_time``)."""
        return "gemm" if self.kind == "gemm" else "overhead"


# -- the roofline -----------------------------------------------------------------
@dataclass(frozen=True)
class Work:
    """What a GEMM or kernel does: ``flops`` at the peak of GEMM dtype ``dtype``
    (``None``: not a GEMM) and ``bytes`` moved; a kernel's class ``kind``
    (``symbols.KERNEL_KINDS``), a scaled GEMM's ``scaling`` family
    (``symbols.SCALING_FAMILIES``; ``None`` for bf16), whether a GEMM runs
    as a grouped (MoE) kernel and whether it accumulates fast (``fast_accum``
    False: its partial sums promoted to fp32 as it runs)."""

    flops: sympy.Expr = sympy.Integer(0)
    dtype: str | None = None
    bytes: sympy.Expr = sympy.Integer(0)
    kind: str = "cast"
    scaling: str | None = None
    grouped: bool = False
    fast_accum: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "flops", expression(self.flops, "Work flops"))
        object.__setattr__(self, "bytes", expression(self.bytes, "Work bytes"))
        if self.kind not in S.KERNEL_KINDS:
            raise unknown_name("kernel kind", self.kind, S.KERNEL_KINDS)
        if self.scaling is not None and self.scaling not in S.SCALING_FAMILIES:
            raise unknown_name("scaling family", self.scaling, S.SCALING_FAMILIES)


def roofline_pieces(work: Work, *, gemm_time: str = "roofline",
                    launch_floor: str = "per_kernel", efficiency: str = "flat",
                    timer: str = "graph") -> tuple[tuple[str, sympy.Expr], ...]:
    """The regime pieces of a GEMM's or kernel's time: the one roofline.

    A GEMM: ``compute`` = F / (P_d eta_d), then (``gemm_time="roofline"``)
    ``memory`` = B / (BW eta_mem) and ``launch`` = t_launch.  A kernel:
    ``memory``, and ``launch`` under ``launch_floor="per_kernel"``; a kernel
    that moves no bytes costs ``launch`` alone.

    ``efficiency="size"`` (the default model) gives every GEMM and kernel a
    fixed time in seconds, Hockney's form t0 + work / rate: a GEMM's compute is
    t0_class + F / (P_d eta_d kappa_family [kappa_grouped_d] [kappa_accum_d]) and its memory
    t0_class + B / (BW eta_mem), with its class's fixed time (dtype, scaling
    family, grouped) paid in either regime, a kernel's memory
    t0_kind + B / (BW eta_kind), so small GEMMs and kernels run below their
    asymptotic rate, a faster dtype gets no shorter fixed time for free, and
    each kernel class has its own achievable bandwidth.

    ``timer="events"`` (``HOST_TIMERS``): the launch piece is the host's time
    per eager launch, ``t_host``, in place of ``t_launch``.

    >>> from roofline_sym.symbols import M, K, N
    >>> roofline_pieces(Work(2 * M * K * N, "fp8", M * K), gemm_time="compute")
    (('compute', 2*K*M*N/(P_fp8*eta_fp8)),)
    >>> roofline_pieces(Work(bytes=4 * M), launch_floor="empty_kernels")
    (('memory', 4*M/(BW*eta_mem)),)
    >>> roofline_pieces(Work(bytes=4 * M, kind="transpose"), efficiency="size")[0]
    ('memory', t0_transpose + 4*M/(BW*eta_transpose))
    >>> roofline_pieces(Work(bytes=4 * M), timer="events")[-1]
    ('launch', t_host)
    """
    if gemm_time not in GEMM_TIME_MODELS:
        raise InputError(f"unknown GEMM time model {gemm_time!r}; known: {GEMM_TIME_MODELS}")
    if launch_floor not in LAUNCH_FLOORS:
        raise InputError(f"unknown launch floor {launch_floor!r}; known: {LAUNCH_FLOORS}")
    if efficiency not in EFFICIENCY_MODELS:
        raise InputError(f"unknown efficiency model {efficiency!r}; known: {EFFICIENCY_MODELS}")
    sized = efficiency == "size"
    launch = ("launch", S.host_launch() if timer in HOST_TIMERS else S.launch_overhead())
    if work.dtype is not None:
        rate = S.peak_flops(work.dtype) * S.gemm_efficiency(work.dtype)
        fixed: sympy.Expr = sympy.Integer(0)
        if sized:
            if work.scaling is not None:
                rate = rate * S.scaling_efficiency(work.scaling)
            if work.grouped:
                rate = rate * S.grouped_efficiency(work.dtype)
            if not work.fast_accum:
                rate = rate * S.accumulation_efficiency(work.dtype)
            # paid in either regime: launch, prologue, epilogue of the kernel
            fixed = S.gemm_fixed_time(S.gemm_class(work.dtype, work.scaling, work.grouped))
        compute = ("compute", fixed + work.flops / rate)
        if gemm_time == "compute":
            return (compute,)
        memory = ("memory", fixed + work.bytes / (S.mem_bw() * S.mem_efficiency()))
        return compute, memory, launch
    if work.bytes == 0:
        return (launch,)
    if sized:
        memory = ("memory", S.kernel_fixed_time(work.kind)
                  + work.bytes / (S.mem_bw() * S.kernel_efficiency(work.kind)))
    else:
        memory = ("memory", work.bytes / (S.mem_bw() * S.mem_efficiency()))
    return (memory, launch) if launch_floor == "per_kernel" else (memory,)


# the numeric twin: per (dtype, moves bytes), the pieces compiled from roofline_pieces
_FLOPS, _BYTES = sympy.Dummy("F", positive=True), sympy.Dummy("B", positive=True)


@cache
def _compiled_pieces(dtype: str | None,
                     moves_bytes: bool) -> tuple[list[int], list[str], Callable[..., Any]]:
    pieces = roofline_pieces(Work(_FLOPS, dtype, _BYTES if moves_bytes else 0))
    params = sorted(set().union(*(e.free_symbols for _, e in pieces)) - {_FLOPS, _BYTES},
                    key=str)
    fn = sympy.lambdify([_FLOPS, _BYTES, *params], [e for _, e in pieces], modules="numpy")
    return [REGIMES.index(r) for r, _ in pieces], [str(p) for p in params], fn


def roofline_piece_times(dtype: Any, flops: Any, nbytes: Any,
                         values: Mapping[str, Any]) -> np.ndarray:
    """Per row, the times of the ``roofline_pieces`` (default options) of a
    GEMM (``dtype[i]`` a GEMM dtype) or kernel (``""``) doing ``flops[i]`` and
    moving ``nbytes[i]``: an array ``(len(REGIMES), rows)``, ``-inf`` where a
    row has no such piece.  ``values``: hardware values by symbol name
    (``P_fp8``, ``eta_fp8``, ``BW``, ``eta_mem``, ``t_launch``), numbers or
    per-row arrays.

    >>> v = {"P_bf16": 1e15, "eta_bf16": 0.5, "BW": 1e12, "eta_mem": 0.5, "t_launch": 2e-6}
    >>> roofline_piece_times(["bf16", ""], [1e12, 0.0], [1e6, 0.0], v).tolist()
    [[0.002, -inf], [2e-06, -inf], [2e-06, 2e-06]]
    """
    dtype = np.asarray(dtype, dtype=object)
    flops = np.broadcast_to(np.asarray(flops, dtype=np.float64), dtype.shape)
    nbytes = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), dtype.shape)
    out = np.full((len(REGIMES),) + dtype.shape, -np.inf)
    for d in dict.fromkeys(dtype.ravel().tolist()):
        for moves in (True, False):
            mask = (dtype == d) & ((nbytes > 0) == moves)
            if not mask.any():
                continue
            rows, names, fn = _compiled_pieces(d or None, moves)
            args = [np.broadcast_to(np.asarray(values[n], dtype=np.float64), dtype.shape)[mask]
                    for n in names]
            with np.errstate(all="ignore"):
                for i, piece in zip(rows, fn(flops[mask], nbytes[mask], *args)):
                    out[i][mask] = piece
    return out


@overload
def roofline_times(dtype: Any, flops: Any, nbytes: Any, values: Mapping[str, Any],
                   regimes: Literal[False] = False) -> np.ndarray: ...
@overload
def roofline_times(dtype: Any, flops: Any, nbytes: Any, values: Mapping[str, Any],
                   regimes: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def roofline_times(dtype: Any, flops: Any, nbytes: Any, values: Mapping[str, Any],
                   regimes: bool) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...
def roofline_times(dtype: Any, flops: Any, nbytes: Any, values: Mapping[str, Any],
                   regimes: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Per row, the time: the largest of ``roofline_piece_times``; with
    ``regimes=True`` also each row's regime.

    >>> v = {"P_bf16": 1e15, "eta_bf16": 0.5, "BW": 1e12, "eta_mem": 0.5, "t_launch": 2e-6}
    >>> t, r = roofline_times(["bf16", ""], [1e12, 0.0], [1e6, 0.0], v, regimes=True)
    >>> t.tolist(), r.tolist()
    ([0.002, 2e-06], ['compute', 'launch'])
    """
    pieces = roofline_piece_times(dtype, flops, nbytes, values)
    times: np.ndarray = pieces.max(axis=0)
    if not regimes:
        return times
    return times, np.array(REGIMES, dtype=object)[pieces.argmax(axis=0)]


# -- terms --------------------------------------------------------------------------
@dataclass(frozen=True)
class Term:
    """A named time: the maximum of its regime ``pieces``; ``work``: what it does;
    ``label``: what a GEMM's LaTeX name shows above ``t`` (its side's dtype,
    ``t^{\mathrm{fp8}}_{\mathrm{output}}``; None: the GEMM's dtype)."""

    id: TermId
    pieces: tuple[tuple[str, sympy.Expr], ...]
    work: Work = field(default_factory=Work)
    label: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, TermId):
            raise InputTypeError(f"a term's id is a TermId, not {self.id!r}")
        unknown = {r for r, _ in self.pieces} - set(REGIMES)
        if unknown or not self.pieces:
            raise InputError(f"term {self.id}: bad pieces {self.pieces!r}")

    @classmethod
    def roofline(cls, id: TermId, work: Work, *, gemm_time: str = "roofline",
                 launch_floor: str = "per_kernel", efficiency: str = "flat",
                 label: str | None = None, timer: str = "graph") -> "Term":
        """The term of ``work`` priced by ``roofline_pieces``."""
        return cls(id, roofline_pieces(work, gemm_time=gemm_time, launch_floor=launch_floor,
                                       efficiency=efficiency, timer=timer), work, label)

    @property
    def name(self) -> str:
        return self.id.name

    @property
    def side(self) -> str:
        return self.id.side

    @property
    def group(self) -> str:
        """``gemm`` or ``overhead`` (casts and other memory-bound kernels)."""
        return self.id.group

    @cached_property
    def expr(self) -> sympy.Expr:
        """The time written out: the ``Max`` of the pieces (the term's definition)."""
        return roofline_max([e for _, e in self.pieces])

    @cached_property
    def time(self) -> sympy.Expr:
        """The time as a named SymPy expression (``TermTime``): prints as the
        term's name, ``.doit()`` is ``expr``; a number once every piece is one."""
        return TermTime.of(self.name, self.pieces, self.label or self.work.dtype)

    def xreplace(self, mapping: Mapping[sympy.Basic, Any]) -> "Term":
        return Term(self.id, tuple((r, e.xreplace(mapping)) for r, e in self.pieces), self.work,
                    self.label)

    def regime(self, values: Mapping[sympy.Basic, Any]) -> str:
        """The regime whose piece is the maximum at numeric ``values``."""
        scores = [float(e.xreplace(values)) for _, e in self.pieces]
        return self.pieces[scores.index(max(scores))][0]


# -- regime summaries -----------------------------------------------------------------
_KIND_ORDER = ("gemm", "cast", "activation", "workload")


@dataclass(frozen=True)
class RegimeSummary:
    """The regime of every term of a model, grouped by side and kind, and the
    ways it is written (``text``, ``words``, ``letters``, ``short``).

    >>> s = RegimeSummary.of({"lowp.gemm.output": "compute", "lowp.cast.input.amax": "memory",
    ...                       "lowp.cast.input.amax_final": "launch"})
    >>> s.text()
    'lowp gemm: 1 compute; lowp cast: 1 memory, 1 launch'
    >>> s.letters(), s.short()
    ('gemm C1  cast M1 L1', 'compute / memory+launch')
    """

    entries: tuple[tuple[TermId, str], ...]

    @classmethod
    def of(cls, regimes: Mapping[TermId, str] | Mapping[str, str]) -> "RegimeSummary":
        """From ``{term id or name: regime}`` (names are parsed here, once)."""
        return cls(tuple((k if isinstance(k, TermId) else TermId.parse(k), r)
                         for k, r in regimes.items()))

    def counts(self, side: str, kind: str) -> Counter[str]:
        """``{regime: terms}`` of one (side, kind) group, in order of appearance."""
        return Counter(r for t, r in self.entries if (t.side, t.kind) == (side, kind))

    def _groups(self, sides: Sequence[str] = ("baseline", "lowp"),
                kinds: Sequence[str] = _KIND_ORDER) -> Iterator[tuple[str, str, Counter[str]]]:
        for side in sides:
            for kind in kinds:
                counts = self.counts(side, kind)
                if counts:
                    yield side, kind, counts

    def text(self) -> str:
        """``baseline gemm: 3 compute; lowp cast: 5 memory, 5 launch``."""
        return "; ".join(f"{side} {kind}: " + ", ".join(f"{c} {r}" for r, c in counts.items())
                         for side, kind, counts in self._groups())

    def words(self, side_label: Callable[[str], str]) -> str:
        """``bf16 GEMMs: compute; fp8 GEMMs: compute; casts: 5 launch, 5 memory``;
        ``side_label(side)`` names a side's GEMMs."""
        parts = []
        for side, kind, counts in self._groups():
            text = (next(iter(counts)) if len(counts) == 1 else
                    ", ".join(f"{c} {r}" for r, c in sorted(counts.items())))
            what = {"gemm": f"{side_label(side)} GEMMs", "cast": "casts",
                    "activation": "bf16 activation", "workload": f"{side} workload"}[kind]
            parts.append(f"{what}: {text}")
        return "; ".join(parts)

    def letters(self) -> str:
        """The low-precision side, compactly: ``gemm C3  cast M5 L5``."""
        return "  ".join(f"{kind} " + " ".join(
            f"{REGIME_LETTERS[r]}{c}" for r, c in sorted(counts.items(),
                                                         key=lambda rc: REGIMES.index(rc[0])))
            for _, kind, counts in self._groups(("lowp",), ("gemm", "cast")))

    def short(self, varying: Callable[[TermId], bool] = lambda t: True) -> str:
        """``compute / memory+launch``: the regimes of the GEMMs / of the
        low-precision kernels; only those of ``varying`` terms where a group has any."""
        def union(entries: list[tuple[TermId, str]]) -> str:
            pick = [r for t, r in entries if varying(t)] or [r for _, r in entries]
            return str(Regime.of(pick))

        gemms = [(t, r) for t, r in self.entries if t.kind == "gemm"]
        kernels = [(t, r) for t, r in self.entries if t.side == "lowp" and t.kind != "gemm"]
        return f"{union(gemms)} / {union(kernels)}"
