"""``roofline-sym recipes``: the recipe names of a mode, each marked with where it
comes from (``-v``: with its description and the torchao call that runs it)."""

from __future__ import annotations

import argparse

from ..model.presets import PRESETS, options
from ..model.recipes import MODES, list_recipes, recipe
from ..model.torchao_calls import TORCHAO_CALLS, WHY_NOT, origin
from ..numeric.table import Table
from . import common

NAME = "recipes"
HELP = "list recipe names, where each comes from and the torchao call that runs it"
EXAMPLES = "  roofline-sym recipes --mode inference -v"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", default="training", choices=MODES, help=common.MODE_HELP)
    p.add_argument("--preset", default="default", choices=tuple(PRESETS),
                   help=common.PRESET_HELP)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="with descriptions and the torchao call of each")
    common.output_options(p)


def run(args: argparse.Namespace) -> int:
    table = options(args.preset).recipe_table
    rows = [{"recipe": name, "origin": origin(args.mode, name),
             "description": recipe(name, args.mode, table).description,
             "torchao": TORCHAO_CALLS.get(args.mode, {}).get(name) or WHY_NOT.get(name, "")}
            for name in list_recipes(args.mode, table)]

    def text() -> None:
        width = max(len(r["recipe"]) for r in rows) + 2
        for r in rows:
            mark = "" if r["origin"] == "torchao" else f"  [{r['origin']}]"
            if not args.verbose:
                print(f"{r['recipe']}{mark}")
                continue
            print(f"{r['recipe']:<{width}}{r['description']}{mark}")
            call = TORCHAO_CALLS.get(args.mode, {}).get(r["recipe"])
            print(f"{'':<{width}}{'torchao: ' + call if call else r['torchao']}")

    common.emit(Table.from_rows(rows, keys=("recipe",)), args, text)
    return 0
