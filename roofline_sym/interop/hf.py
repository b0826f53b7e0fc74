"""Shape sets from Hugging Face: a config, or a model id found locally.

``shape_set`` takes what ``numeric.shapes.shape_set`` takes (a shipped set's
name, a ``ShapeSet``) and also a ``transformers`` config, a model id or
directory whose config is on this machine (``local_files_only``: nothing is
downloaded), or an ``nn.Module``.  A config becomes its model built on the
meta device (no weights allocated), then ``shapes_from_module``.  torch and
transformers are imported only for those.

A config's set leaves out the output projection (``lm_head``, the model's
output embeddings), as the shipped model sets do: they hold the linear
layers of the transformer blocks, the ones float8 training converts (the
output projection usually stays in bf16 for accuracy); ``lm_head=True``
keeps it.  A module you pass keeps every ``nn.Linear``.

A name that is a path or a model id (it holds a ``/``) and is not a shipped
set is read as a config: without transformers the error names the ``hf``
extra, and a config on neither the path nor in the local cache is said to
be missing.  The warnings torch, torchao and transformers log while they
load (kernels this machine cannot run, deprecations) say nothing about the
shapes and are kept off the output.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from typing import Any, Iterator

from ..errors import InputError, UnknownNameError
from ..numeric.shapes import ShapeSet, list_shape_sets, shape_set as shipped_set
from .modules import module_shapes, shapes_from_module

__all__ = ["shape_set", "DEFAULT_TOKENS"]

# M of a model built from a config when none is given (the Llama 3 sets' default)
DEFAULT_TOKENS = 8192


def _is_config(obj: Any) -> bool:
    return hasattr(obj, "model_type") and callable(getattr(obj, "to_dict", None))


def shape_set(name: Any, M: Any = None, *, lm_head: bool = False, **params: Any) -> ShapeSet:
    """A shape set: shipped (by name), a Hugging Face config or local model id,
    or a ``torch.nn.Module``; model sets take the token count ``M``.

    ``params``: a shipped set's own parameters.  A config or module without
    ``M`` is taken at 8192 tokens.  ``lm_head``: keep a config's output
    projection (left out by default, as in the shipped sets).

    >>> shape_set("llama3-8b", M=4096).tokens
    4096.0
    """
    if isinstance(name, ShapeSet) or (isinstance(name, str) and name in list_shape_sets()):
        return shipped_set(name, M, **params)
    if params:
        raise InputError(f"parameters {sorted(params)} apply to shipped shape sets only")
    tokens = DEFAULT_TOKENS if M is None else M
    if hasattr(name, "named_modules"):
        return shapes_from_module(name, M=tokens)
    if _is_config(name):
        return _from_config(name, tokens, lm_head=lm_head)
    if isinstance(name, str):
        config = _local_config(name)
        if config is not None:
            return _from_config(config, tokens, label=name, lm_head=lm_head)
        if _names_a_config(name):
            raise UnknownNameError(
                f"shape set {name!r}: no Hugging Face config.json at that path, nor a "
                "model id of that name in this machine's Hugging Face cache (nothing is "
                "downloaded: save the config there, or give its directory)")
    return shipped_set(name, M)  # the usual error, naming the shipped sets


def _names_a_config(name: str) -> bool:
    """A path or a model id (``org/model``) rather than a shipped set's name.

    >>> _names_a_config("mistralai/Mistral-7B-v0.1"), _names_a_config("llama3-8b")
    (True, False)
    """
    return "/" in name or os.sep in name or os.path.exists(name)


@contextlib.contextmanager
def _third_party_quiet() -> Iterator[None]:
    """Logged warnings (torchao's "Failed to load" of CUDA kernels, torch's
    deprecations) and Python warnings of torch, torchao and transformers
    silenced while they load and build a model; restored after."""
    before = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"(torch|torchao|transformers)(\.|$)")
            yield
    finally:
        logging.disable(before)


def _local_config(name: str) -> Any:
    """The config of a local directory or cached model id, or None; without
    transformers an ``ImportError`` naming the extra where ``name`` is a path
    or model id, else None."""
    try:
        with _third_party_quiet():
            from transformers import AutoConfig
    except ImportError:
        if _names_a_config(name):
            raise ImportError(f"shape set {name!r} is read as a Hugging Face config, which "
                              "needs transformers and torch: pip install 'roofline-sym[hf]'",
                              name="transformers") from None
        return None
    try:
        with _third_party_quiet():
            return AutoConfig.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError, KeyError):
        return None


def _from_config(config: Any, M: Any, label: str | None = None,
                 lm_head: bool = False) -> ShapeSet:
    try:
        with _third_party_quiet():
            import torch
            import transformers
    except ImportError:
        raise ImportError("a shape set from a Hugging Face config needs torch and "
                          "transformers: pip install 'roofline-sym[hf]'") from None
    with torch.device("meta"), _third_party_quiet():
        try:
            model = transformers.AutoModelForCausalLM.from_config(config)
        except ValueError:  # not a causal language model
            model = transformers.AutoModel.from_config(config)
    name = label or getattr(config, "name_or_path", "") or config.model_type
    head = None if lm_head else _output_projection(model)
    if head is None:
        return shapes_from_module(model, M=M, name=name)
    return module_shapes(model, M, None, name, None, lambda fqn: fqn == head,
                         f", without {head} (the output projection; lm_head=True keeps it)")


def _output_projection(model: Any) -> str | None:
    """The module path of a model's output embeddings (``lm_head``), if it has them."""
    get = getattr(model, "get_output_embeddings", None)
    head = get() if callable(get) else None
    return next((fqn for fqn, mod in model.named_modules() if mod is head), None) \
        if head is not None else None
