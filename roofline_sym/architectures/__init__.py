"""Transformers described as data: built-in architectures and Hugging Face configs.

>>> from roofline_sym.architectures import architecture
>>> a = architecture("mixtral-8x7b")
>>> a.moe.experts, a.moe.top_k, a.params, a.active_params
(8, 2, 46702792704, 12879925248)
"""

from .builtin import architecture, list_architectures, parse_architectures
from .config import MODEL_TYPES, from_config, read_config
from .shape import MLA, Architecture, ArchitectureError, LinearShape, MoE

__all__ = ["Architecture", "MoE", "MLA", "LinearShape", "ArchitectureError", "architecture",
           "list_architectures", "parse_architectures", "from_config", "read_config",
           "MODEL_TYPES"]
