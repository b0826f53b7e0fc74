"""The fitted step numbers written into ``data/step.toml``, with their priors
and the runs they came from.

Only the ``[generation.<name>]`` tables change: their ``FITTED`` keys take
the fitted values (three significant digits), ``prior_<key>`` keeps each
prior, ``fitted`` says which runs moved them; every other line (comments, the
``source`` of each prior, the GPUs' link tables) stays as it is.

>>> text = '[generation.x]\\nattention_forward = 0.6\\nsource = "FA-3"\\n\\n[gpu."y"]\\nz = 1\\n'
>>> numbers = {"x": {"attention_forward": 0.5, "attention_backward": 0.4,
...                  "overlap": 0.9, "step_fixed_s": 0.0}}
>>> priors = {"x": {"attention_forward": 0.6, "attention_backward": 0.45,
...                 "overlap": 0.8, "step_fixed_s": 0.0}}
>>> print(step_numbers_text(text, numbers, priors, {"x": "two runs"}))
[generation.x]
attention_forward = 0.5
attention_backward = 0.4
overlap = 0.9
step_fixed_s = 0
prior_attention_forward = 0.6
prior_attention_backward = 0.45
prior_overlap = 0.8
prior_step_fixed_s = 0
fitted = "two runs"
source = "FA-3"
<BLANKLINE>
[gpu."y"]
z = 1
<BLANKLINE>
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Mapping

from ...steps.parts import FITTED

__all__ = ["step_numbers_text", "write_step_numbers", "step_toml_path"]

_HEADER = re.compile(r"^\[generation\.([A-Za-z0-9_-]+)\]\s*$")
_KEY = re.compile(r"^([A-Za-z0-9_]+)\s*=")


def _value(v: float) -> str:
    text = f"{v:.3g}"
    return "0" if abs(float(text)) < 1e-9 else text  # a fit's 0 comes back as 1e-17


def _block(numbers: Mapping[str, float], priors: Mapping[str, float], fitted: str) -> list[str]:
    lines = [f"{k} = {_value(numbers[k])}" for k in FITTED]
    lines += [f"prior_{k} = {_value(priors[k])}" for k in FITTED]
    return lines + [f"fitted = {json.dumps(fitted)}"]


def step_numbers_text(text: str, numbers: Mapping[str, Mapping[str, float]],
                      priors: Mapping[str, Mapping[str, float]],
                      fitted: Mapping[str, str]) -> str:
    """``text`` (step.toml) with each generation's numbers, priors and ``fitted``
    note replaced."""
    ours = set(FITTED) | {f"prior_{k}" for k in FITTED} | {"fitted"}
    out: list[str] = []
    section = None
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            section = header.group(1)
            out.append(line)
            if section in numbers:
                out += _block(numbers[section], priors[section], fitted[section])
            continue
        if line.startswith("["):
            section = None
        key = _KEY.match(line)
        if section in numbers and key and key.group(1) in ours:
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def step_toml_path() -> Path:
    return Path(str(resources.files("roofline_sym").joinpath("data", "step.toml")))


def write_step_numbers(numbers: Mapping[str, Mapping[str, float]],
                       priors: Mapping[str, Mapping[str, float]],
                       fitted: Mapping[str, str], path: str | Path | None = None) -> Path:
    """Write the numbers into step.toml (``path``: another copy)."""
    target = Path(path) if path is not None else step_toml_path()
    text = target.read_text(encoding="utf-8")
    target.write_text(step_numbers_text(text, numbers, priors, fitted), encoding="utf-8")
    return target
