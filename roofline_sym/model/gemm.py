"""One GEMM ``out[m, n] = a[m, k] @ b[k, n]``: FLOPs, bytes and time.

FLOPs are ``2 m k n``.  Bytes are both operands in the operand format, the
scales read alongside them, and the output written once.  A grouped GEMM
(``groups`` = G experts) holds G copies of the layer's weight, as its
operand b (2D x 3D: forward, grad_input) or as its output (2D x 2D:
grad_weight); its FLOPs stay ``2 m k n``, the m rows being split among
the groups.  Time is priced by
``term.roofline_pieces``: ``Max(compute, memory, launch)`` or compute only
(the seed model); hardware stays symbolic until a model is bound to a GPU.

>>> from roofline_sym.symbols import M, K, N
>>> g = Gemm("output", M, K, N, operand="fp8_e4m3")
>>> g.flops, g.bytes
(2*K*M*N, K*M + K*N + 2*M*N)
>>> g.time("compute")
2*K*M*N/(P_fp8*eta_fp8)
>>> Gemm("output", M, K, N, groups=8, weight="b").bytes
2*K*M + 16*K*N + 2*M*N
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import InputError
from ..validate import expression
from .formats import ElementFormat, element
from .term import GEMM_TIME_MODELS, Term, TermId, Work

__all__ = ["Gemm", "GEMM_TIME_MODELS"]


def _format(f: str | ElementFormat) -> ElementFormat:
    return f if isinstance(f, ElementFormat) else element(f)


@dataclass(frozen=True)
class Gemm:
    """A GEMM with shape (m, k, n), ``k`` contracted; ``scale_bytes`` = scales read."""

    name: str
    m: sympy.Expr
    k: sympy.Expr
    n: sympy.Expr
    operand: str | ElementFormat = "bf16"
    output: str | ElementFormat = "bf16"
    scale_bytes: sympy.Expr = sympy.Integer(0)
    groups: int = 1
    weight: str | None = None  # "b" or "out": the operand held once per group

    def __post_init__(self) -> None:
        operand = _format(self.operand)
        object.__setattr__(self, "operand", operand)
        object.__setattr__(self, "output", _format(self.output))
        for dim in ("m", "k", "n", "scale_bytes"):  # text is parsed, never evaluated
            object.__setattr__(self, dim, expression(getattr(self, dim), f"Gemm {dim}"))
        if operand.compute is None:
            raise InputError(f"{operand.name} is a scale format, not a GEMM input")
        if self.weight not in (None, "b", "out"):
            raise InputError(f"weight must be 'b', 'out' or None, not {self.weight!r}")

    # the formats as __post_init__ left them (the fields' types are what __init__ takes)
    @property
    def _operand_format(self) -> ElementFormat:
        return _format(self.operand)

    @property
    def _output_format(self) -> ElementFormat:
        return _format(self.output)

    @property
    def dtype(self) -> str:
        """The peak this GEMM runs at (``bf16``, ``fp8``, ``fp4``)."""
        compute = self._operand_format.compute
        if compute is None:  # __post_init__ rejects scale formats
            raise AssertionError(f"{self.name}: operand {self._operand_format.name} has no peak")
        return compute

    @property
    def flops(self) -> sympy.Expr:
        return 2 * self.m * self.k * self.n

    @property
    def bytes_read(self) -> sympy.Expr:
        b = self.k * self.n * (self.groups if self.weight == "b" else 1)
        return (self.m * self.k + b) * self._operand_format.bytes + self.scale_bytes

    @property
    def bytes_written(self) -> sympy.Expr:
        return (self.m * self.n * (self.groups if self.weight == "out" else 1)
                * self._output_format.bytes)

    @property
    def bytes(self) -> sympy.Expr:
        return self.bytes_read + self.bytes_written

    @property
    def work(self) -> Work:
        return Work(self.flops, self.dtype, self.bytes)

    def pieces(self, model: str = "roofline") -> tuple[tuple[str, sympy.Expr], ...]:
        """The regime pieces of the time: compute, and for the roofline memory and launch."""
        return self.term("baseline", model).pieces

    def time(self, model: str = "roofline") -> sympy.Expr:
        return self.term("baseline", model).expr

    def term(self, side: str, model: str = "roofline") -> Term:
        """This GEMM's time as a ``Term`` (``<side>.gemm.<name>``); ``model``:
        one of ``GEMM_TIME_MODELS``."""
        return Term.roofline(TermId(side, "gemm", self.name), self.work, gemm_time=model)
