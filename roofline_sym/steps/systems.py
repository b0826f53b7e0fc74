"""What a step needs of a GPU: the attention core's efficiency and the
overlap of communication per tensor-core generation (``data/step.toml``, a
source for each), and the links the GPU talks over, from its hardware record
(``Hardware.link_bw``, ``link_efficiency``, ``scale_up_gpus``).

>>> sys = system("h100")
>>> sys.scale_up_gpus, float(sys.values[S.link_bandwidth("scale_up")])
(8, 450000000000.0)
>>> 0.25 <= float(sys.values[S.attention_efficiency("forward")]) <= 0.85  # fitted
True
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

__all__ = ["System", "system", "generation_tables", "GENERATION_FIELDS"]

# a generation's numbers: TOML key -> (symbol, smallest, largest)
GENERATION_FIELDS = {
    "attention_forward": (S.attention_efficiency("forward"), 0.05, 1.0),
    "attention_backward": (S.attention_efficiency("backward"), 0.05, 1.0),
    "overlap": (S.overlap_fraction(), 0.0, 1.0),
    "step_fixed_s": (S.step_fixed_time(), 0.0, 10.0),
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


def generation_tables() -> dict[str, dict[str, Any]]:
    """Every generation's table of step.toml (``default``: a generation without one)."""
    tables: dict[str, dict[str, Any]] = _data()["generation"]
    return {name: dict(table) for name, table in tables.items()}


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

    A GPU whose record does not give its links has none (``has_links``
    False): a step over several GPUs on it is an error naming it.
    """
    hw = gpu if isinstance(gpu, Hardware) else hardware(gpu)
    generation = implementations.generation(hw) or "default"
    values, gen_source = _generation(generation)
    sources = {"generation": gen_source}
    if hw.has_links:
        links = {S.link_bandwidth(s) for s in S.LINK_SCOPES} | {
            S.link_efficiency(s) for s in S.LINK_SCOPES}
        values.update({s: v for s, v in hw.stated.items() if s in links})
        sources["links"] = "; ".join(hw.sources.get(f, "") for f in (
            "link_bw", "link_efficiency", "scale_up_gpus"))
    return System(hw.name, generation, values, hw.scale_up_gpus, sources)
