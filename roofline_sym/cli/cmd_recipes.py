"""``roofline-sym recipes``: the recipe names of a mode (``-v``: with descriptions)."""

from __future__ import annotations

import argparse

from ..model.presets import PRESETS, options
from ..model.recipes import MODES, list_recipes, recipe

NAME = "recipes"
HELP = "list recipe names"
EXAMPLES = "  roofline-sym recipes --mode inference -v"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", default="training", choices=MODES)
    p.add_argument("--preset", default="default", choices=tuple(PRESETS))
    p.add_argument("-v", "--verbose", action="store_true", help="with descriptions")


def run(args: argparse.Namespace) -> int:
    table = options(args.preset).recipe_table
    for name in list_recipes(args.mode, table):
        desc = recipe(name, args.mode, table).description
        print(f"{name:<34}{desc}" if args.verbose else name)
    return 0
