"""What the command line needs before any command: its parser, its user error,
the default GPU.

Kept apart from ``common`` (what the commands share, which imports the model,
the shape sets and the tables) so that the main job, which parses no
arguments, loads none of that when its text is in the results cache.

>>> Parser(prog="roofline-sym").parse_args([])
Namespace()
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..errors import InputError

__all__ = ["UserError", "Parser", "DEFAULT_GPU"]

DEFAULT_GPU = "h100-sxm"


class UserError(InputError):
    """A problem with the command line's input: one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
