"""The GEMM shapes of a ``torch.nn.Module``: a ``ShapeSet`` per model.

Without inputs every ``nn.Linear`` gives a row ``(M, in_features,
out_features)`` at the token count ``M`` you pass; parameters are never
read, so a model built on the meta device (no memory) works.  With
``example_inputs`` the module runs once, under ``torch.no_grad()``, and hooks
record the GEMM each ``nn.Linear`` and ``nn.Conv1d/2d/3d`` call runs: a
linear layer's rows are its input's elements over ``in_features``, a
convolution is an implicit GEMM (rows: batch x output positions; K: input
channels per group x kernel elements; N: output channels per group; one GEMM
per convolution group).  Meta tensors as inputs keep the run free.

Experts held as 3D parameters (a module with ``num_experts`` and the hidden
size, as transformers' fused MoE experts ``[experts, out, in]`` or
``[experts, in, out]``) are grouped GEMMs: ``groups`` = the experts, M = top_k
x tokens (``top_k``, else the model config's ``num_experts_per_tok``).  Such
experts do not run on meta tensors (their routing depends on the values), so
they are found without ``example_inputs`` only.

Rows of the same (M, K, N, groups) merge: counts add up and names join with
" + ", each name the module's path with its block number written ``*``
(``model.layers.*.mlp.up_proj``).  torch is imported when called.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import InputError, InputTypeError
from ..numeric.shapes import ShapeSet
from ..validate import items

if TYPE_CHECKING:
    import torch

__all__ = ["shapes_from_module", "module_shapes", "layer_pattern"]


def layer_pattern(fqn: str) -> str:
    """A module path with its block number (the first index after a name)
    written ``*``.

    >>> layer_pattern("model.layers.11.self_attn.q_proj"), layer_pattern("2")
    ('model.layers.*.self_attn.q_proj', '2')
    >>> layer_pattern("blocks.3.mlp.0")
    'blocks.*.mlp.0'
    """
    return re.sub(r"(?<=[^.\d]\.)\d+(?=\.|$)", "*", fqn, count=1)


# (module path, M, K, N, count[, groups]): one GEMM as found
_Record = tuple[str, float, float, float, float] | tuple[str, float, float, float, float, float]


def _merge(records: list[_Record], name: str, tokens: float | None,
           description: str) -> ShapeSet:
    rows: dict[tuple[float, ...], list[Any]] = {}  # [names, count]
    for fqn, m, k, n, count, *groups in records:
        row = rows.setdefault((m, k, n, groups[0] if groups else 1.0), [[], 0])
        pattern = layer_pattern(fqn) or "(module)"
        if pattern not in row[0]:
            row[0].append(pattern)
        row[1] += count
    if not rows:
        raise InputError(f"{name}: no nn.Linear (or, traced, convolution) layer found")
    values = list(rows.values())
    ms, ks, ns, gs = zip(*rows)
    return ShapeSet(name, ms, ks, ns, tuple(" + ".join(v[0]) for v in values),
                    np.array([v[1] for v in values], dtype=np.float64),
                    description=description, tokens=tokens,
                    groups=gs)


def shapes_from_module(module: Any, M: Any = None, *, example_inputs: Any = None,
                       name: str | None = None, top_k: int | None = None,
                       skip_fqns: Sequence[str] = ()) -> ShapeSet:
    """One row per distinct GEMM shape of ``module``'s linear layers.

    ``M``: the token count (rows of every layer's input) when the module does
    not run; ``example_inputs``: a tensor, a tuple of positional arguments or
    a dict of keyword arguments to run the module with (meta tensors are
    enough), which also finds convolutions and each layer's own M; ``top_k``:
    experts per token of a mixture of experts' fused expert weights;
    ``skip_fqns``: layers whose module path contains one of these are left
    out (as torchao's ``filter_fqns``; ``("lm_head",)`` keeps the output
    projection out of the set).

    >>> import torch
    >>> with torch.device("meta"):
    ...     mlp = torch.nn.Sequential(torch.nn.Linear(4096, 14336), torch.nn.SiLU(),
    ...                               torch.nn.Linear(14336, 4096), torch.nn.Linear(4096, 14336))
    >>> s = shapes_from_module(mlp, M=8192)
    >>> s.names, s.K.tolist(), s.counts.tolist()
    (('0 + 3', '2'), [4096.0, 14336.0], [2.0, 1.0])
    >>> shapes_from_module(mlp, example_inputs=torch.empty(4, 128, 4096, device="meta")).M.tolist()
    [512.0, 512.0]
    """
    skip = tuple(items(skip_fqns, "skip_fqns (module names to leave out)", str))
    return module_shapes(module, M, example_inputs, name, top_k,
                         lambda fqn: any(s in fqn for s in skip),
                         f", without {', '.join(skip)}" if skip else "")


def module_shapes(module: Any, M: Any, example_inputs: Any, name: str | None,
                  top_k: int | None, leave_out: Callable[[str], bool],
                  note: str = "") -> ShapeSet:
    """``shapes_from_module`` with the layers ``leave_out(module path)`` selects
    left out, and ``note`` added to the set's description."""
    try:
        import torch
    except ImportError:
        raise ImportError("shapes_from_module needs torch: pip install 'roofline-sym[torch]'",
                          name="torch") from None

    if not isinstance(module, torch.nn.Module):
        raise InputTypeError(f"expected a torch.nn.Module, got {type(module).__name__}")
    label = name or type(module).__name__
    if example_inputs is None:
        if M is None:
            raise InputError("give M= (the token count) or example_inputs= to run the module")
        m = _tokens(M)
        records: list[_Record] = [
            (fqn, m, float(mod.in_features), float(mod.out_features), 1)
            for fqn, mod in module.named_modules() if isinstance(mod, torch.nn.Linear)]
        records += _experts(module, m, top_k)
        return _merge([r for r in records if not leave_out(r[0])], label, m,
                      f"nn.Linear layers of {label} at M = {m:g}{note}")
    if M is not None:
        raise InputError("give M= or example_inputs=, not both: traced layers have their own M")
    records = _trace(module, example_inputs)
    return _merge([r for r in records if not leave_out(r[0])], label, None,
                  f"GEMMs of {label}, traced{note}")


def _experts(module: "torch.nn.Module", M: float, top_k: int | None) -> list[_Record]:
    """Grouped rows of the experts held as 3D parameters ``[experts, a, b]``."""
    records: list[_Record] = []
    for fqn, mod in module.named_modules():
        experts = getattr(mod, "num_experts", None)
        hidden = next((getattr(mod, a) for a in ("hidden_dim", "hidden_size")
                       if isinstance(getattr(mod, a, None), int)), None)
        if not isinstance(experts, int) or hidden is None:
            continue
        for pname, p in mod.named_parameters(recurse=False):
            if p.ndim != 3 or p.shape[0] != experts or hidden not in p.shape[1:]:
                continue
            k = _top_k(module, top_k, fqn)
            other = p.shape[2] if p.shape[1] == hidden else p.shape[1]
            # down projections return to the hidden size; the others leave it
            K, N = (other, hidden) if "down" in pname else (hidden, other)
            records.append((f"{fqn}.{pname}", M * k, float(K), float(N), 1, float(experts)))
    return records


def _top_k(module: "torch.nn.Module", top_k: int | None, fqn: str) -> int:
    if top_k is None:
        config: Any = getattr(module, "config", None)  # any object, a transformers config
        if callable(getattr(config, "get_text_config", None)):  # multimodal models
            config = config.get_text_config()
        top_k = getattr(config, "num_experts_per_tok", None)
    if not isinstance(top_k, int) or top_k < 1:
        raise InputError(f"{fqn} holds experts: give top_k= (experts per token); the module "
                         "has no config.num_experts_per_tok")
    return top_k


def _tokens(M: Any) -> float:
    try:
        m = float(M)
    except (TypeError, ValueError):
        raise InputError(f"M must be a positive number (the token count), not {M!r}") from None
    if not (math.isfinite(m) and m > 0):
        raise InputError(f"M must be a positive number (the token count), not {M!r}")
    return m


def _trace(module: "torch.nn.Module", example_inputs: Any) -> list[_Record]:
    import torch  # loaded already: shapes_from_module imported it

    nn = torch.nn
    convs = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
    records: list[_Record] = []

    def hook(fqn: str) -> Callable[["torch.nn.Module", tuple[Any, ...], Any], None]:
        def record(mod: "torch.nn.Module", args: tuple[Any, ...], output: Any) -> None:
            if isinstance(mod, nn.Linear):
                rows = args[0].numel() // mod.in_features
                records.append((fqn, float(rows), float(mod.in_features),
                                float(mod.out_features), 1))
            elif isinstance(mod, convs):  # hooked: linear layers and these only
                positions = output.numel() // mod.out_channels
                k = mod.in_channels // mod.groups * math.prod(mod.kernel_size)
                records.append((fqn, float(positions), float(k),
                                float(mod.out_channels // mod.groups), mod.groups))
        return record

    handles = [mod.register_forward_hook(hook(fqn)) for fqn, mod in module.named_modules()
               if isinstance(mod, (nn.Linear, *convs))]
    try:
        with torch.no_grad():
            if isinstance(example_inputs, dict):
                module(**example_inputs)
            elif isinstance(example_inputs, (tuple, list)):
                module(*example_inputs)
            else:
                module(example_inputs)
    finally:
        for h in handles:
            h.remove()
    return records
