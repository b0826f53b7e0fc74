"""How a step is spread over GPUs: torchtitan's parallel degrees, checked.

``dp_shard * dp_replicate * tp * pp * cp == gpus`` (``dp_shard`` None: the
GPUs the other degrees leave); ``ep`` divides ``dp_shard * cp``.  The device
mesh is laid out as torchtitan's, ``[pp, dp_replicate, dp_shard, cp, tp]``
with ``tp`` innermost, so a group's members lie ``stride`` GPUs apart and it
spans ``size * stride`` consecutive GPUs: within one scale-up domain or
across the network (``span``).

>>> p = Parallelism.of(gpus=16, tp=2)
>>> p.dp_shard, p.span("dp_shard"), p.span("tp")
(8, 16, 2)
>>> Parallelism.of(gpus=8, tp=3)
Traceback (most recent call last):
...
roofline_sym.steps.parallel.StepInputError: dp_replicate*tp*pp*cp = 3 does not divide gpus=8 (dp_replicate=1, tp=3, pp=1, cp=1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..validate import count, show

__all__ = ["Parallelism", "StepInputError", "DEGREES", "AC_MODES", "STEP_MODES"]

# the mesh's dimensions, outermost first (torchtitan's order)
DEGREES = ("pp", "dp_replicate", "dp_shard", "cp", "tp")
# activation checkpointing: none, selective (pointwise ops re-run), full (the forward re-runs)
AC_MODES = ("none", "selective", "full")
STEP_MODES = ("training", "prefill", "decode")


class StepInputError(InputError):
    """A step's input that cannot be: a bad degree, size or option, named."""


def _degree(value: Any, name: str) -> int:
    try:
        return count(value, name, minimum=1, maximum=1 << 20)
    except (TypeError, ValueError) as exc:
        raise StepInputError(f"{name} must be a whole number >= 1, not {show(value)}") from exc


@dataclass(frozen=True)
class Parallelism:
    """The degrees of a step (see the module); build with ``Parallelism.of``."""

    gpus: int
    dp_shard: int
    dp_replicate: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1

    @classmethod
    def of(cls, gpus: Any = 1, dp_shard: Any = None, dp_replicate: Any = 1, tp: Any = 1,
           pp: Any = 1, cp: Any = 1, ep: Any = 1) -> "Parallelism":
        n = _degree(gpus, "gpus")
        rest = {k: _degree(v, k) for k, v in
                (("dp_replicate", dp_replicate), ("tp", tp), ("pp", pp), ("cp", cp))}
        others = rest["dp_replicate"] * rest["tp"] * rest["pp"] * rest["cp"]
        if dp_shard is None:
            if n % others:
                raise StepInputError(
                    f"dp_replicate*tp*pp*cp = {others} does not divide gpus={n} ("
                    + ", ".join(f"{k}={v}" for k, v in rest.items()) + ")")
            shard = n // others
        else:
            shard = _degree(dp_shard, "dp_shard")
            if shard * others != n:
                raise StepInputError(
                    f"the degrees' product dp_shard*dp_replicate*tp*pp*cp = {shard * others} "
                    f"is not gpus={n} (dp_shard={shard}, "
                    + ", ".join(f"{k}={v}" for k, v in rest.items()) + ")")
        expert = _degree(ep, "ep")
        if (shard * rest["cp"]) % expert:
            raise StepInputError(f"ep={expert} must divide dp_shard*cp = {shard * rest['cp']}")
        return cls(n, shard, ep=expert, **rest)

    def stride(self, dim: str) -> int:
        """GPUs between neighbours of a group of ``dim`` (the product of the inner degrees)."""
        inner = DEGREES[DEGREES.index(dim) + 1:]
        out = 1
        for d in inner:
            out *= int(getattr(self, d))
        return out

    def span(self, dim: str) -> int:
        """Consecutive GPUs a group of ``dim`` covers (``ep`` is carved out of
        ``dp_shard * cp``, innermost first)."""
        if dim == "ep":
            return self.ep * self.tp
        return int(getattr(self, dim)) * self.stride(dim)

    @property
    def replica_gpus(self) -> int:
        """GPUs that share one data-parallel rank's sequences: ``tp * cp * pp``."""
        return self.tp * self.cp * self.pp
