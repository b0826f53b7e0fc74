"""torchao's layer filters, decided by the model: which ``nn.Linear`` to convert.

torchao converts a model's linear layers to float8 for training
(``convert_to_float8_training(model, config=..., module_filter_fn=f)``) and
quantizes them for inference (``quantize_(model, config, filter_fn=f)``);
both ask ``f(module, fqn)`` for every module.  ``float8_module_filter``
answers with the cost model of a GPU, a recipe and a token count: True for
an ``nn.Linear`` whose predicted speedup exceeds ``min_speedup``, False for
every other module, and for a layer whose sizes the recipe's kernels cannot
take (torchao's float8 needs multiples of 16; block scalings their block).
Decisions are cached per (in_features, out_features).  torch is imported
when the filter is first called.
"""

from __future__ import annotations

import math
from typing import Any, Sequence


from ..devices import Hardware
from ..errors import InputError
from ..model.formats import scaling
from ..model.layer import Linear, linear
from ..validate import SHAPE_MAX, items, positive_number

__all__ = ["ModuleFilter", "float8_module_filter"]


class ModuleFilter:
    """``(module, fqn) -> bool`` for torchao: keep the ``nn.Linear`` layers the
    bound ``model`` predicts faster than ``min_speedup`` at ``M`` tokens.

    ``speedup(K, N)`` is the prediction itself; ``multiple``: the size every
    K and N must be a multiple of; ``skip_fqns``: modules whose name contains
    one of these are never converted (as torchao's ``filter_fqns``).
    """

    def __init__(self, model: Linear, M: float, min_speedup: float = 1.0,
                 skip_fqns: Sequence[str] = ()):
        if model.hardware is None:
            raise InputError(f"{model!r} has no hardware: bind one with .on(hw)")
        self.model, self.M = model, positive_number(M, "M (tokens per layer)", SHAPE_MAX)
        self.min_speedup = positive_number(min_speedup, "min_speedup")
        self.skip_fqns = tuple(items(skip_fqns, "skip_fqns (module names to skip)", str))
        self.multiple = _multiple(model)
        self._speedups: dict[tuple[int, int], float] = {}

    def speedup(self, K: int, N: int) -> float:
        """The predicted speedup of an ``in_features=K, out_features=N`` layer."""
        key = (int(K), int(N))
        if key not in self._speedups:
            self._speedups[key] = float(self.model.evaluate(self.M, K, N)["speedup"])
        return self._speedups[key]

    def keeps(self, K: int, N: int) -> bool:
        """Whether a ``K -> N`` linear layer is converted."""
        if K % self.multiple or N % self.multiple:
            return False
        return self.speedup(K, N) > self.min_speedup

    def __call__(self, module: Any, fqn: str = "") -> bool:
        import torch

        if not isinstance(module, torch.nn.Linear):
            return False
        if any(s in fqn for s in self.skip_fqns):
            return False
        return self.keeps(module.in_features, module.out_features)

    def __repr__(self) -> str:
        return (f"ModuleFilter({self.model!r}, M={self.M:g}, "
                f"min_speedup={self.min_speedup:g})")


def _multiple(model: Linear) -> int:
    """The size K and N must be a multiple of: 16 (float8 GEMMs), or a block
    of the recipe's scalings when larger."""
    sizes = [16]
    for gemm in model.recipe.gemm_scaling:
        for s in model.recipe.scalings(gemm):
            if s is not None:
                sizes += [b for b in scaling(s).block if b is not None and b > 1]
    return math.lcm(*sizes)


def float8_module_filter(gpu: str | Hardware, recipe: str, M: Any, *,
                         min_speedup: float = 1.0, mode: str = "training",
                         preset: str = "default", skip_fqns: Sequence[str] = (),
                         **linear_options: Any) -> ModuleFilter:
    """A ``module_filter_fn`` for torchao, decided per GPU, recipe and token count.

    ``M``: the tokens each layer sees (batch x sequence); ``mode``:
    ``training`` (``convert_to_float8_training``) or ``inference``
    (``quantize_``'s ``filter_fn``); ``linear_options``: ``fuse``,
    ``workload`` or any model option of ``rs.linear``.

    >>> import torch, roofline_sym as rs
    >>> keep = rs.float8_module_filter("h100", "rowwise", M=8192)
    >>> keep(torch.nn.Linear(8192, 8192, device="meta"), "mlp.up_proj")
    True
    >>> keep(torch.nn.Linear(1024, 256, device="meta"), "attn.k_proj")
    False
    >>> keep(torch.nn.LayerNorm(8192, device="meta"), "norm")
    False
    """
    m = positive_number(M, "M (tokens per layer)", SHAPE_MAX)
    model = linear(recipe, mode=mode, preset=preset, **linear_options).on(gpu)
    return ModuleFilter(model, m, min_speedup, skip_fqns)
