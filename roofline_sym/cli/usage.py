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
import re
from typing import Any, NoReturn, Sequence

from ..errors import InputError

__all__ = ["UserError", "Parser", "DEFAULT_GPU"]

DEFAULT_GPU = "h100-sxm"


class UserError(InputError):
    """A problem with the command line's input: one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        return super().parse_known_args(
            None if args is None else attach_negatives(args), namespace)


# a value that starts with a minus and a digit: a negative number or list of
# numbers (no option's name starts with a digit)
_NEGATIVE = re.compile(r"-[0-9.]")


def attach_negatives(argv: Sequence[str]) -> list[str]:
    """``--shape -8192,8192,8192`` as ``--shape=-8192,8192,8192``: argparse
    reads a value that starts with a minus (and is not one plain number) as an
    option and answers "expected one argument"; attached, the value reaches
    its own check, which says what is wrong with it by name.

    >>> attach_negatives(["eval", "--shape", "-8192,8192,8192", "-M", "-5,1"])
    ['eval', '--shape=-8192,8192,8192', '-M-5,1']
    """
    out: list[str] = []
    for arg in argv:
        prev = out[-1] if out else ""
        if _NEGATIVE.match(arg) and prev.startswith("-") and "=" not in prev \
                and not _NEGATIVE.match(prev) and prev != "--":
            out[-1] = prev + ("=" if prev.startswith("--") else "") + arg
        else:
            out.append(arg)
    return out
