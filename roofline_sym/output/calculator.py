"""The calculator page: the layer model in a browser, with no server.

``calculator_data`` gathers, as plain JSON-able data, every GPU's hardware
numbers (with their sources), every recipe of both modes with its terms,
and for each GPU a recipe runs on, the band around its predicted speedup
(``band``: a bound model's factors ``(low, high)``, from the residual pools)
and any hardware value the binding changes; ``write_calculator`` writes the
page: that data, every model as a JavaScript function
(``javascript.model_function``: SymPy's JavaScript printer), the page's
script and style (``calculator_page/``: no formula in them) and the HTML,
both as a fragment for the documentation site and as a page of its own.

>>> data = calculator_data(lambda m: (0.9, 1.1), gpus=["h100"], modes=["inference"])
>>> [g["name"] for g in data["gpus"]], data["models"]["inference/tensorwise"]["on"]["H100 SXM"]
(['H100 SXM'], {'band': [0.9, 1.1]})
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import sympy

from .. import symbols as S
from .._version import version
from ..devices import Hardware, hardware, list_hardware
from ..errors import InputError, RooflineError
from ..model.layer import Linear, linear
from ..model.recipes import MODES, list_recipes
from ..steps.composition import step
from ..steps.model import Step
from ..validate import items
from .javascript import model_function, parameter_names, step_function

__all__ = ["calculator_data", "block_steps", "write_calculator", "PAGE_FILES", "DEFAULT_GPU",
           "STEP_MODELS", "STEP_RECIPES", "STEP_GPUS"]

# the page's own script, style and form: static files shipped beside this module
_PAGE = Path(__file__).with_name("calculator_page")
# what write_calculator writes (the generated ones and the copies of _PAGE's)
PAGE_FILES = ("calculator-data.js", "calculator-models.js", "calculator.js", "calculator.css",
              "calculator-form.html", "calculator.html")
# the GPU the page opens on (the command line's main job's)
DEFAULT_GPU = "H100 SXM"

# the whole steps the page offers: training on one node of 8 GPUs, FSDP over them
STEP_MODELS = ("llama3-8b", "llama3-70b")
STEP_RECIPES = ("tensorwise", "rowwise", "mxfp8_cublas")
STEP_GPUS = 8

Band = Callable[[Linear], tuple[float, float]]
# a bound step's band factors (low, high) around its speedup
StepBand = Callable[[Step], tuple[float, float]]


def _number(value: Any, what: str) -> float:
    out = float(value)
    if not math.isfinite(out):  # JSON has no NaN: a value the page cannot show
        raise InputError(f"{what} is {out}: the calculator needs finite numbers")
    return out


def _gpu_entry(hw: Hardware, names: set[str], sources: dict[str, int]) -> dict[str, Any]:
    """A GPU's values of the symbols ``names`` and, per field, the index of its
    citation in ``sources`` (GPUs share most of theirs: each text is kept once)."""
    params = {str(s): _number(v, f"{hw.name}: {s}") for s, v in hw.parameters.items()
              if str(s) in names}
    cited = {k: sources.setdefault(str(v), len(sources)) for k, v in hw.sources.items()}
    return {"name": hw.name, "aliases": list(hw.aliases), "params": dict(sorted(params.items())),
            "sources": cited}


def block_steps(model: Linear) -> dict[str, list[float]]:
    """Per shape symbol, the block sizes its block counts step by (``ceiling(K/32)``
    steps at every multiple of 32 of ``K``): where a time may jump along it.

    >>> import roofline_sym as rs
    >>> block_steps(rs.linear("mxfp8_cublas")), block_steps(rs.linear("tensorwise"))
    ({'K': [32.0], 'M': [32.0], 'N': [32.0]}, {})
    """
    steps: dict[str, set[float]] = {}
    for t in model.terms:
        for _, e in t.pieces:
            for count in e.atoms(sympy.ceiling, sympy.floor):
                c, shape = count.args[0].as_coeff_Mul()
                if shape not in S.SHAPE_SYMBOLS or not c.is_Rational or c <= 0:
                    raise InputError(f"{t.name}: the block count {count} is not one of a "
                                     "shape's blocks")
                steps.setdefault(str(shape), set()).add(float(1 / c))
    return {k: sorted(v) for k, v in sorted(steps.items())}


def _model_entry(model: Linear, gpus: Sequence[Hardware], band: Band,
                 base: dict[str, dict[str, float]]) -> dict[str, Any]:
    names = parameter_names(model)
    entry: dict[str, Any] = {
        "recipe": model.recipe.name, "mode": model.mode, "lowp": model.lowp_label,
        "description": model.recipe.description, "params": names,
        "terms": [{"name": t.name, "regimes": [r for r, _ in t.pieces]} for t in model.terms],
        "steps": block_steps(model),
        "on": {}, "unsupported": {}}
    for hw in gpus:
        reason = model.unsupported_reason(hw)
        if reason:
            entry["unsupported"][hw.name] = reason
            continue
        bound = model.on(hw)
        assert bound.hardware is not None  # bound: on() sets it
        lo, hi = band(bound)
        on: dict[str, Any] = {"band": [_number(lo, "band low"), _number(hi, "band high")]}
        # the binding may change a value (a library's rates): kept per model, by name
        values = {str(s): _number(v, f"{hw.name}: {s}")
                  for s, v in bound.hardware.values_for(model.free_hardware_symbols).items()}
        changed = {k: v for k, v in sorted(values.items()) if base[hw.name].get(k) != v}
        if changed:
            on["params"] = changed
        entry["on"][hw.name] = on
    return entry


def _step_entry(unbound: Step, gpus: Sequence[Hardware], band: StepBand,
                base: dict[str, dict[str, float]]) -> dict[str, Any]:
    spec = unbound.spec
    entry: dict[str, Any] = {
        "model": spec.arch.name, "recipe": spec.recipe, "gpus": spec.parallel.gpus,
        "params": sorted(str(x) for x in unbound.free_hardware_symbols), "on": {},
        "unsupported": {}}
    for hw in gpus:
        try:  # a recipe the GPU cannot run, links not known: the step says which
            bound = unbound.on(hw)
        except RooflineError as exc:
            entry["unsupported"][hw.name] = str(exc)
            continue
        lo, hi = band(bound)
        values = {str(x): _number(v, f"{hw.name}: {x}") for x, v in bound.hardware_values.items()}
        entry["on"][hw.name] = {
            "band": [_number(lo, "band low"), _number(hi, "band high")],
            "params": {k: v for k, v in sorted(values.items()) if base[hw.name].get(k) != v}}
    return entry


@cache
def _step(model: str, recipe: str) -> Step:
    # built once per process: a step's model does not change while it runs
    return step(model, recipe, gpus=STEP_GPUS)


def _step_data(band: StepBand, entries: Sequence[Hardware],
               steps: Iterable[tuple[str, str]] | None,
               base: dict[str, dict[str, float]]) -> dict[str, Any]:
    pairs = list(steps) if steps is not None else [(m, r) for m in STEP_MODELS
                                                    for r in STEP_RECIPES]
    return {f"{m}/{r}": _step_entry(_step(m, r), entries, band, base) for m, r in pairs}


def calculator_data(band: Band, gpus: Iterable[str] | None = None,
                    modes: Iterable[str] = MODES, interval: float = 0.8,
                    step_band: StepBand | None = None,
                    steps: Iterable[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The page's data: ``gpus`` (default: every GPU of the default dataset),
    the recipes of ``modes`` (preset ``default``), the ``band`` of each
    bound model (factors around its speedup, holding ``interval`` of
    measurements) and the models' term names and regime pieces, keyed
    ``"<mode>/<recipe>"``; with ``step_band``, whole ``steps`` too ((model,
    recipe) pairs, default ``STEP_MODELS`` x ``STEP_RECIPES``, each on
    ``STEP_GPUS`` GPUs with FSDP over all), keyed ``"<model>/<recipe>"``:
    each GPU's values where they are not its own, and the band."""
    entries = [hardware(g) for g in items(list(gpus) if gpus is not None else list_hardware(),
                                          "gpus", str)]
    models = {f"{mode}/{r}": linear(r, mode=mode) for mode in modes for r in list_recipes(mode)}
    names = {n for m in models.values() for n in parameter_names(m)}
    sources: dict[str, int] = {}
    gpu_data = [_gpu_entry(hw, names, sources) for hw in entries]
    base = {g["name"]: g["params"] for g in gpu_data}
    return {
        "version": version(), "interval": interval, "preset": "default",
        "default_gpu": DEFAULT_GPU if DEFAULT_GPU in base else gpu_data[0]["name"],
        "gpus": gpu_data, "sources": list(sources),
        "modes": {mode: list_recipes(mode) for mode in modes},
        "models": {key: _model_entry(m, entries, band, base) for key, m in models.items()},
        "steps": {} if step_band is None else _step_data(step_band, entries, steps, base),
    }


@cache
def _model_code(mode: str, recipe: str) -> str:
    # printed once per process: a model's source does not change while it runs
    return model_function(linear(recipe, mode=mode))


@cache
def _step_code(model: str, recipe: str) -> str:
    return step_function(_step(model, recipe))


def _models_script(keys: Iterable[str], steps: Iterable[str]) -> str:
    lines = ["// generated by roofline_sym.output.calculator from the SymPy models",
             "// (sympy.printing.jscode): do not edit", "var ROOFLINE_MODELS = {"]
    for key in keys:
        mode, recipe = key.split("/")
        lines.append(f"{json.dumps(key)}: {_model_code(mode, recipe)},")
    lines += ["};", "var ROOFLINE_STEPS = {"]
    for key in steps:
        model, recipe = key.split("/")
        lines.append(f"{json.dumps(key)}: {_step_code(model, recipe)},")
    lines.append("};")
    return "\n".join(lines) + "\n"


_STANDALONE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>roofline_sym calculator</title>
<link rel="stylesheet" href="calculator.css">
</head>
<body>
{form}
<script src="calculator-data.js"></script>
<script src="calculator-models.js"></script>
<script src="calculator.js"></script>
</body>
</html>
"""


def write_calculator(folder: str | Path, band: Band, gpus: Iterable[str] | None = None,
                     interval: float = 0.8, step_band: StepBand | None = None,
                     steps: Iterable[tuple[str, str]] | None = None) -> list[Path]:
    """Write the page's files (``PAGE_FILES``) into ``folder`` (created if
    missing): ``calculator_data``'s, its arguments as there.  A file whose text
    is unchanged is not rewritten (so a docs build stays incremental).
    Returns their paths; ``calculator.html`` opens in a browser as it is."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    data = calculator_data(band, gpus, interval=interval, step_band=step_band, steps=steps)
    form = (_PAGE / "form.html").read_text(encoding="utf-8")
    texts = {
        "calculator-data.js": "var ROOFLINE_DATA = " + json.dumps(data, separators=(",", ":"))
                              + ";\n",
        "calculator-models.js": _models_script(data["models"], data["steps"]),
        "calculator.js": (_PAGE / "calculator.js").read_text(encoding="utf-8"),
        "calculator.css": (_PAGE / "calculator.css").read_text(encoding="utf-8"),
        "calculator-form.html": form,
        "calculator.html": _STANDALONE.replace("{form}", form.rstrip("\n")),
    }
    paths = []
    for name in PAGE_FILES:
        path = out / name
        if not path.exists() or path.read_text(encoding="utf-8") != texts[name]:
            path.write_text(texts[name], encoding="utf-8")
        paths.append(path)
    return paths
