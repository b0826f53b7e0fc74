"""Presets: named bundles of model options.

A model option is one modelling choice (how a GEMM's time is priced, whether
every kernel pays the launch floor, how scale bytes are counted, ...).  A
preset fixes all of them; any one can be overridden by keyword:

>>> opts = options("torchao", gemm_time="compute")
>>> opts.gemm_time, opts.recipe_table
('compute', 'torchao')
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Protocol

from ..devices import DATASETS
from ..devices.implementations import IMPLEMENTATIONS
from ..devices.timers import TIMERS
from ..validate import InputTypeError, choice, show, unknown_name
from .recipes import TABLES, list_recipes
from .term import EFFICIENCY_MODELS, GEMM_TIME_MODELS, LAUNCH_FLOORS

__all__ = ["Options", "PRESETS", "options", "preset_recipes", "grouped_options", "describe", "describe_models",
           "LAUNCH_FLOORS", "GEMM_SCALES", "GROUPED_MODELS"]

# format: scales read at their own format and block, per operand (default);
# torchao: floor((m k + k n) / block) scales at the operand's element size,
# for MX and NVFP4 recipes only (torchao 0.18).
GEMM_SCALES = ("format", "torchao")

# How a grouped (MoE) layer is priced, as the options it sets:
# layer: the dense layer's GEMMs and kernels, the weight held once per expert;
# torchao: torchao's MoE roofline (benchmarks/prototype/moe_training/mxfp8/
# roofline_unified.py): GEMMs at compute alone, kernels at memory alone, its
# MXFP8 cast table
GROUPED_MODELS = {
    "layer": {},
    "torchao": {"recipe_table": "torchao_moe", "gemm_time": "compute",
                "launch_floor": "empty_kernels"},
}


@dataclass(frozen=True)
class Options:
    """The modelling choices of a linear-layer model.

    - ``gemm_time``: ``roofline`` = Max(compute, memory, launch) per GEMM;
      ``compute`` = FLOPs at the achievable peak only.
    - ``launch_floor``: see ``LAUNCH_FLOORS``.
    - ``recipe_table``: cast-kernel table, ``default`` or ``torchao``.
    - ``gemm_scales``: see ``GEMM_SCALES``.
    - ``dataset``: hardware dataset a GPU name is looked up in by ``.on()``.
    - ``torch_compile_limitations``: the seed's pessimistic dynamic/delayed casts.
    - ``fuse``: the default of ``linear(fuse=...)``: casts fused with their
      producers (the seed document always fuses input and grad_output).
    - ``efficiency``: ``size`` (GEMM and kernel rates grow with their size,
      kernels run at their class's bandwidth) or ``flat`` (one efficiency per
      GEMM dtype and one for memory); see ``term.roofline_pieces``.
    - ``workload_kernels``: price the kernels a workload runs around the layer
      (a norm, an activation, gradient accumulation); without them a workload
      only sets fusion and whether casts run (torchao's and the seed's view).
    - ``grouped``: how a grouped (MoE) layer is priced, see ``GROUPED_MODELS``.
    - ``implementation``: the library that runs the low-precision GEMMs
      (``devices.implementations``: ``torch``, ``cutlass``, ``triton``,
      ``deepgemm``, ``fbgemm``, ``te``); applied when the model is bound, by
      the size-dependent model only.
    - ``timer``: how the time is measured (``devices.timers``): ``graph`` (the
      default: kernels back to back from the GPU's queue, as a CUDA-graph
      replay or a training step that keeps the queue full runs them; each
      kernel's floor is the GPU's launch floor ``t_launch``), ``profiler`` (a
      sum of kernel times: the same), ``events`` (CUDA events around eager
      launches: each kernel's floor is the host's time per launch ``t_host``).
    """

    gemm_time: str = "roofline"
    launch_floor: str = "per_kernel"
    recipe_table: str = "default"
    gemm_scales: str = "format"
    dataset: str = "default"
    torch_compile_limitations: bool = False
    fuse: bool = False
    efficiency: str = "size"
    workload_kernels: bool = True
    grouped: str = "layer"
    implementation: str = "torch"
    timer: str = "graph"

    def __post_init__(self) -> None:
        for name, valid in (("gemm_time", GEMM_TIME_MODELS), ("launch_floor", LAUNCH_FLOORS),
                            ("recipe_table", TABLES), ("gemm_scales", GEMM_SCALES),
                            ("dataset", DATASETS), ("efficiency", EFFICIENCY_MODELS),
                            ("grouped", tuple(GROUPED_MODELS)),
                            ("implementation", IMPLEMENTATIONS), ("timer", TIMERS)):
            choice(getattr(self, name), valid, f"option {name}")
        for name in ("torch_compile_limitations", "fuse", "workload_kernels"):
            if not isinstance(getattr(self, name), bool):
                raise InputTypeError(f"option {name} must be True or False, not "
                                     f"{show(getattr(self, name))}")


PRESETS: dict[str, Options] = {
    # this project's model: the kernels torchao runs, scales at their own size,
    # size-dependent efficiencies per kernel class, calibrated hardware
    "default": Options(),
    # torchao 0.18.0, testing/training/roofline_utils.py and its benchmark scripts
    "torchao": Options(recipe_table="torchao", gemm_scales="torchao", dataset="torchao",
                       efficiency="flat", workload_kernels=False, grouped="torchao"),
    # the seed document: compute-only GEMMs, summed cast traffic, Meta's H100
    "seed": Options(gemm_time="compute", launch_floor="empty_kernels",
                    recipe_table="torchao", gemm_scales="torchao", dataset="seed", fuse=True,
                    efficiency="flat", workload_kernels=False),
}

_OPTION_NAMES = tuple(f.name for f in fields(Options))


def options(preset: str = "default", **overrides: Any) -> Options:
    """The options of ``preset`` with ``overrides`` applied (validated)."""
    choice(preset, tuple(PRESETS), "preset")
    for name in overrides:
        if name not in _OPTION_NAMES:
            raise unknown_name("model option", name, _OPTION_NAMES)
    return replace(PRESETS[preset], **overrides)


def preset_recipes(mode: str = "training", preset: str = "default") -> list[str]:
    """Recipe names for ``mode`` under ``preset`` (``rs.list_recipes``); in
    training the last two, ``dynamic`` and ``delayed``, are the seed document's
    fp8 scalings, which no torchao recipe runs (``roofline-sym recipes`` marks
    where each comes from).

    >>> "mxfp8_cublas" in preset_recipes("training")
    True
    >>> preset_recipes("training")[-2:]
    ['dynamic', 'delayed']
    """
    return list_recipes(mode, options(preset).recipe_table)


def grouped_options(opts: Options, **overrides: Any) -> Options:
    """The options of a grouped layer: ``opts`` with its ``grouped`` model's
    choices, then ``overrides`` (the caller's own) again on top.

    >>> grouped_options(options("torchao")).gemm_time
    'compute'
    >>> grouped_options(options("default")) == options("default")
    True
    """
    return replace(opts, **{**GROUPED_MODELS[opts.grouped], **overrides})


def describe(preset: str, fuse: bool, opts: Options | None = None,
             dataset: str | None = None, workload: str = "linear") -> str:
    """The options a model was made with, in words, for table captions and titles.

    ``dataset``: where its hardware came from (default: the options');
    ``workload``: what surrounds the layer.  Options that differ from the
    preset's are named.

    >>> describe("default", False)
    'preset default, casts not fused, dataset default, workload linear'
    >>> describe("torchao", True, options("torchao", gemm_time="compute"))
    'preset torchao, casts fused, dataset torchao, workload linear, gemm_time=compute'
    """
    opts = options(preset) if opts is None else opts
    base = PRESETS[preset]
    words = [f"preset {preset}", "casts fused" if fuse else "casts not fused",
             f"dataset {dataset or opts.dataset}", f"workload {workload}"]
    words += [f"{f.name}={getattr(opts, f.name)}" for f in fields(Options)
              if f.name not in ("fuse", "dataset") and getattr(opts, f.name) != getattr(base, f.name)]
    return ", ".join(words)


class _Model(Protocol):
    """What ``describe_models`` reads of a model (a ``Linear``, which imports this module)."""

    preset: str
    fuse: bool
    options: Options


def describe_models(models: Iterable[_Model]) -> str:
    """``describe`` of models (``Linear``): once when they agree; where they
    differ in one option, its values joined (``dataset custom / default``).

    >>> from roofline_sym.model.layer import linear
    >>> describe_models([linear("tensorwise"), linear("rowwise", fuse=True)])
    'preset default, casts not fused / fused, dataset default, workload linear'
    """
    seen = list(dict.fromkeys(
        describe(m.preset, m.fuse, m.options,
                 getattr(getattr(m, "hardware", None), "dataset", None),
                 getattr(getattr(m, "workload", None), "name", "linear")) for m in models))
    split = [text.split(", ") for text in seen]
    if len(seen) < 2 or len({len(p) for p in split}) > 1:
        return seen[0] if len(seen) == 1 else "mixed: " + " | ".join(seen)
    keys = [[part.split(" ")[0] for part in p] for p in split]
    if any(k != keys[0] for k in keys):
        return "mixed: " + " | ".join(seen)
    out = []
    for i, key in enumerate(keys[0]):
        values = list(dict.fromkeys(p[i][len(key):].strip() for p in split))
        out.append(f"{key} {' / '.join(values)}" if len(values) > 1 else split[0][i])
    return ", ".join(out)
