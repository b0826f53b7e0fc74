"""What a step needs of a GPU beyond its GEMM and memory figures: the attention
core's efficiency and the overlap of communication (per tensor-core
generation), and the links it talks over (per GPU), read from
``data/step.toml`` with a source for each.

>>> sys = system("h100")
>>> sys.scale_up_gpus, float(sys.values[S.link_bandwidth("scale_up")])
(8, 450000000000.0)
>>> float(sys.values[S.attention_efficiency("forward")])
0.6
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Mapping

import sympy

from .. import symbols as S
from ..devices import Hardware, hardware, implementations
from ..devices.toml_io import tomllib
from ..errors import InputError
from ..validate import show

__all__ = ["System", "system", "GENERATION_FIELDS", "LINK_FIELDS"]

# a generation's numbers: TOML key -> (symbol, smallest, largest)
GENERATION_FIELDS = {
    "attention_forward": (S.attention_efficiency("forward"), 0.05, 1.0),
    "attention_backward": (S.attention_efficiency("backward"), 0.05, 1.0),
    "overlap": (S.overlap_fraction(), 0.0, 1.0),
    "step_fixed_s": (S.step_fixed_time(), 0.0, 10.0),
}
# a GPU's links: TOML key -> (symbol, smallest, largest); bandwidths in bytes/s
LINK_FIELDS = {
    "scale_up_bytes_per_s": (S.link_bandwidth("scale_up"), 1e9, 1e13),
    "scale_out_bytes_per_s": (S.link_bandwidth("scale_out"), 1e8, 1e12),
    "scale_up_efficiency": (S.link_efficiency("scale_up"), 0.05, 1.0),
    "scale_out_efficiency": (S.link_efficiency("scale_out"), 0.05, 1.0),
}


@dataclass(frozen=True)
class System:
    """A GPU's step numbers: ``values`` ``{symbol: exact value}``;
    ``scale_up_gpus`` (None: links unknown); ``sources`` per table."""

    gpu: str
    generation: str
    values: Mapping[sympy.Symbol, sympy.Rational]
    scale_up_gpus: int | None
    sources: Mapping[str, str]

    @property
    def has_links(self) -> bool:
        return self.scale_up_gpus is not None


@cache
def _data() -> dict[str, Any]:
    text = resources.files("roofline_sym").joinpath("data", "step.toml").read_text("utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    return data


def _number(table: Mapping[str, Any], key: str, where: str, low: float,
            high: float) -> sympy.Rational:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"step.toml: {where}: {key} must be a number, not {show(value)}")
    if not low <= value <= high:
        raise InputError(f"step.toml: {where}: {key} = {value} outside {low:g}..{high:g}")
    return sympy.Rational(repr(value))  # the decimal as written, exactly


def _generation(name: str) -> tuple[dict[sympy.Symbol, sympy.Rational], str]:
    tables = _data()["generation"]
    table = tables.get(name, tables["default"])
    where = f"generation.{name if name in tables else 'default'}"
    values = {sym: _number(table, key, where, lo, hi)
              for key, (sym, lo, hi) in GENERATION_FIELDS.items()}
    return values, str(table.get("source", ""))


def system(gpu: Hardware | str) -> System:
    """The step numbers of ``gpu`` (an entry or a name of the default dataset).

    A GPU whose links the data do not give has none (``has_links`` False):
    a step over several GPUs on it is an error naming it.
    """
    hw = gpu if isinstance(gpu, Hardware) else hardware(gpu)
    generation = implementations.generation(hw) or "default"
    values, gen_source = _generation(generation)
    sources = {"generation": gen_source}
    table = _data()["gpu"].get(hw.name)
    scale_up: int | None = None
    if table is not None:
        where = f'gpu."{hw.name}"'
        values.update({sym: _number(table, key, where, lo, hi)
                       for key, (sym, lo, hi) in LINK_FIELDS.items()})
        scale_up = int(_number(table, "scale_up_gpus", where, 1, 1 << 16))
        sources["links"] = str(table.get("source", ""))
    return System(hw.name, generation, values, scale_up, sources)
