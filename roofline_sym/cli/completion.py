"""Shell completion for ``roofline-sym``, generated from its argparse parser.

``roofline-sym --print-completion bash`` (or ``zsh``) prints a script that
completes commands, options, choices (``--mode``, ``--preset``, ...) and
file names for options that take a file.  Install it with, e.g.,
``roofline-sym --print-completion bash > ~/.local/share/bash-completion/completions/roofline-sym``
or ``eval "$(roofline-sym --print-completion bash)"`` in ``~/.bashrc``.

>>> import argparse
>>> p = argparse.ArgumentParser(prog="demo")
>>> _ = p.add_argument("--mode", choices=["a", "b"])
>>> "--mode) COMPREPLY=( $(compgen -W 'a b'" in script(p, "bash")
True
"""

from __future__ import annotations

import argparse
import shlex
from typing import Sequence

from ..errors import InputError

__all__ = ["SHELLS", "script"]

SHELLS = ("bash", "zsh")
# options whose value is a file (completed as file names); others complete nothing
_FILE_WORDS = ("FILE", ".csv", ".toml", ".png", ".json", "OUT")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, str]]:
    """(every option string, {option: how its value completes})."""
    words: list[str] = []
    values: dict[str, str] = {}
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        words += action.option_strings
        if action.nargs == 0:
            continue
        if action.choices:
            how = "-W " + shlex.quote(" ".join(map(str, action.choices)))
        elif any(w in f"{action.metavar or ''}" for w in _FILE_WORDS):
            how = "-f"
        else:
            continue
        for opt in action.option_strings:
            values[opt] = how
    return words, values


def _positional_choices(parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for action in parser._actions:
        if not action.option_strings and action.choices and not isinstance(
                action, argparse._SubParsersAction):
            out += list(map(str, action.choices))
    return out


def _case(parser: argparse.ArgumentParser, indent: str, extra: Sequence[str] = ()) -> list[str]:
    words, values = _options(parser)
    words = list(extra) + words + _positional_choices(parser)
    lines = [f"{indent}case \"$prev\" in"]
    for opt, how in values.items():
        lines.append(f"{indent}    {opt}) COMPREPLY=( $(compgen {how} -- \"$cur\") ); return ;;")
    lines += [f"{indent}esac",
              f"{indent}COMPREPLY=( $(compgen -W {shlex.quote(' '.join(words))} -- \"$cur\") )"]
    return lines


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser`` for ``shell`` (``bash`` or ``zsh``)."""
    if shell not in SHELLS:
        raise InputError(f"no completion for shell {shell!r}; shells: {', '.join(SHELLS)}")
    prog = parser.prog
    func = "_" + "".join(c if c.isalnum() else "_" for c in prog)
    commands = _subparsers(parser)
    lines = []
    if shell == "zsh":
        lines += ["autoload -U +X bashcompinit && bashcompinit"]
    lines += [f"{func}() {{",
              "    local cur prev cmd i",
              "    cur=\"${COMP_WORDS[COMP_CWORD]}\"",
              "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
              "    cmd=\"\"",
              "    for ((i = 1; i < COMP_CWORD; i++)); do",
              "        case \"${COMP_WORDS[i]}\" in",
              f"            {'|'.join(commands) or '__none__'}) cmd=\"${{COMP_WORDS[i]}}\"; break ;;",
              "        esac",
              "    done",
              "    case \"$cmd\" in"]
    for name, sub in commands.items():
        lines.append(f"        {name})")
        lines += _case(sub, " " * 12)
        lines.append("            ;;")
    lines.append("        *)")
    lines += _case(parser, " " * 12, list(commands)) + ["            ;;", "    esac", "}", f"complete -o default -F {func} {prog}"]
    return "\n".join(lines) + "\n"
