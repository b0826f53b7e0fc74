"""A step's terms: named times, each a sum of roofline maxima times how often it runs.

A ``StepTerm`` is ``weight * (Max(pieces_1) + Max(pieces_2) + ...)``: a
linear layer's GEMMs and casts times the blocks that hold it, one kernel
times the layers, a collective times the micro-batches.  Its name says the
side and what runs (``baseline.attention.core.backward``,
``lowp.comm.fsdp.all_gather``); its ``group`` is what ``Step.groups`` adds
it to.  The pricing helpers build pieces with the layer model's roofline
(``model.term.roofline_pieces``), so a norm kernel costs what a cast of the
same bytes costs, and a collective its bytes over the link's bus bandwidth.

>>> from roofline_sym.symbols import SEQ_LEN as S, LOCAL_BATCH as B
>>> t = StepTerm("baseline.pointwise.norm.forward", "pointwise",
...              (kernel_pieces(4 * S * B * 4096, "norm"),), weight=64)
>>> t.expr
64*Max(t_launch, 16384*B*S/(BW*eta_norm) + t0_norm)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import sympy

from .. import symbols as S
from ..errors import InputError
from ..model.term import Work, roofline_pieces
from ..model.term_time import roofline_max

__all__ = ["Pieces", "StepTerm", "TERM_GROUPS", "LABELS", "kernel_pieces", "gemm_like_pieces",
           "network_pieces", "scaled"]

Pieces = tuple[tuple[str, sympy.Expr], ...]
# what a term adds into: comm hides under compute (FSDP, DDP, ring attention),
# comm_exposed does not (tensor- and expert-parallel collectives on the critical path)
TERM_GROUPS = ("linear", "attention", "pointwise", "optimizer", "comm", "comm_exposed", "fixed")
# the regimes a piece may be in: the roofline's and the network's
LABELS = ("compute", "memory", "launch", "network")


@dataclass(frozen=True)
class StepTerm:
    """``weight * sum(Max(pieces) for pieces in parts)``, named and grouped."""

    name: str
    group: str
    parts: tuple[Pieces, ...]
    weight: sympy.Expr = sympy.Integer(1)

    def __post_init__(self) -> None:
        if self.group not in TERM_GROUPS:
            raise InputError(f"term {self.name}: unknown group {self.group!r}")
        if not self.parts or any(not p for p in self.parts):
            raise InputError(f"term {self.name}: no pieces")
        object.__setattr__(self, "weight", sympy.sympify(self.weight))

    @property
    def side(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def expr(self) -> sympy.Expr:
        """The time per step, written out."""
        total: sympy.Expr = self.weight * sympy.Add(*(roofline_max([e for _, e in p])
                                                      for p in self.parts))
        return total

    def weighted_parts(self) -> tuple[Pieces, ...]:
        """Each part with its pieces times the weight (``w Max(a, b) = Max(w a, w b)``,
        ``w > 0``): what the compiled evaluation sums."""
        return tuple(tuple((r, self.weight * e) for r, e in p) for p in self.parts)

    def xreplace(self, mapping: Mapping[sympy.Basic, Any]) -> "StepTerm":
        return StepTerm(self.name, self.group,
                        tuple(tuple((r, e.xreplace(mapping)) for r, e in p) for p in self.parts),
                        self.weight.xreplace(mapping))


def scaled(pieces: Pieces, factor: sympy.Expr) -> Pieces:
    """``pieces`` of one run times ``factor`` > 0 (a kernel run ``factor`` times)."""
    return tuple((r, factor * e) for r, e in pieces)


def kernel_pieces(nbytes: sympy.Expr, kind: str, *, efficiency: str = "size",
                  launch_floor: str = "per_kernel") -> Pieces:
    """A memory-bound kernel moving ``nbytes``: the layer model's kernel roofline."""
    return roofline_pieces(Work(bytes=nbytes, kind=kind), efficiency=efficiency,
                           launch_floor=launch_floor)


def gemm_like_pieces(flops: sympy.Expr, nbytes: sympy.Expr, dtype: str,
                     efficiency: sympy.Expr) -> Pieces:
    """A fused kernel of GEMMs (the attention core): ``flops`` at ``dtype``'s peak
    times ``efficiency``, its ``nbytes`` at the memory's rate, the launch floor."""
    return (("compute", flops / (S.peak_flops(dtype) * efficiency)),
            ("memory", nbytes / (S.mem_bw() * S.mem_efficiency())),
            ("launch", S.launch_overhead()))


def network_pieces(nbytes: sympy.Expr, across: int | None = None) -> Pieces:
    """A collective putting ``nbytes`` on each GPU's link (the bus bytes: the
    buffer times ``(n-1)/n``, twice for an all-reduce) at the bus bandwidth.

    Within one scale-up domain (``across`` None) that is the scale-up link's.
    A group across domains with ``across`` members in each also crosses the
    network: NCCL runs one ring per NIC, so each domain's ``across`` NICs share
    the traffic that leaves it, and the slower of the two bounds:
    ``Max(bytes / BW_up, bytes / (across * BW_out))``.
    """
    up = ("network", nbytes / (S.link_bandwidth("scale_up") * S.link_efficiency("scale_up")))
    launch = ("launch", S.launch_overhead())
    if across is None:
        return (up, launch)
    out = ("network", nbytes / (across * S.link_bandwidth("scale_out")
                                * S.link_efficiency("scale_out")))
    return (up, out, launch)
