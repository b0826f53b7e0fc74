"""Integrations: PyTorch modules, Hugging Face configs, torchao filters.

Each function imports its library (torch, transformers) when called, never
at import: ``import roofline_sym`` loads none of them.

- ``shapes_from_module(module, M=...)``: the GEMM shapes of an ``nn.Module``
  (meta device welcome), or traced from ``example_inputs``;
- ``shape_set(name_or_config, M=...)``: a shipped set, a Hugging Face config
  or a model id found locally (nothing is downloaded), or a module;
- ``float8_module_filter(gpu, recipe, M=...)``: torchao's
  ``module_filter_fn`` / ``filter_fn`` that keeps the layers predicted faster.
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .filters import ModuleFilter, float8_module_filter
    from .hf import shape_set
    from .modules import shapes_from_module

# each name's module, imported on first use
_WHERE = {"ModuleFilter": ".filters", "float8_module_filter": ".filters", "shape_set": ".hf",
          "shapes_from_module": ".modules"}

__all__ = ["shapes_from_module", "shape_set", "float8_module_filter", "ModuleFilter"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
