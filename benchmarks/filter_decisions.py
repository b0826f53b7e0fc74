"""Which linear layers to convert to float8: torchao's fixed thresholds
(``_auto_filter_for_recipe``, tuned on H100) against ``rs.float8_module_filter``
(the calibrated default model, per GPU and token count).

Prints the Markdown tables of docs/from-model-to-verdict.md:

    python benchmarks/filter_decisions.py
"""

import torch
from torchao.float8.float8_linear_utils import _auto_filter_for_recipe

import roofline_sym as rs

SETS = ("llama3-8b", "llama3-70b", "dsv3-671b")
GPUS = ("h100", "b200")
RECIPES = ("rowwise", "tensorwise")


def table(recipe: str) -> list[str]:
    auto = _auto_filter_for_recipe(recipe, filter_fqns=[])
    names = [rs.hardware(g).name for g in GPUS]
    lines = [f"| set (M) | layer | K | N | torchao | " + " | ".join(names) + " |",
             "|---|---|---:|---:|:---:|" + ":---:|" * len(GPUS)]
    agree = total = 0
    for name in SETS:
        shapes = rs.shape_set(name)
        filters = [rs.float8_module_filter(g, recipe, M=shapes.tokens) for g in GPUS]
        for layer, m, k, n, _ in shapes:
            with torch.device("meta"):
                module = torch.nn.Linear(int(k), int(n), bias=False)
            theirs = auto(module, layer)
            ours = [f(module, layer) for f in filters]
            agree += sum(o == theirs for o in ours)
            total += len(ours)
            cells = [f"{'yes' if o else 'no'} ({f.speedup(k, n):.2f})"
                     for o, f in zip(ours, filters)]
            lines.append(f"| {name} ({m:g}) | {layer} | {k:g} | {n:g} | "
                         f"{'yes' if theirs else 'no'} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Same decision as torchao: {agree} of {total} (layer, GPU) pairs.")
    return lines


if __name__ == "__main__":
    for recipe in RECIPES:
        print(f"### {recipe}\n")
        print("\n".join(table(recipe)))
        print()
