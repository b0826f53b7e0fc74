"""The ``roofline-sym`` command line.

With no arguments it runs the main job on an embedded default (H100 SXM,
training, every recipe): each recipe's break-even shape (cube, and M at
K = N = 8192) with the regime behind it, and speedups at common shapes.
Subcommands: ``hardware``, ``recipes``, ``formula``, ``eval``,
``breakeven``, ``sensitivity``, ``sweep``, ``filter``, ``plot``, ``measure``,
``fidelity``, ``step``, ``calculator``.  Every error of the input (a ``RooflineError``, or a file that
cannot be opened) ends with one line on stderr and exit code 2; any other
exception is a bug in the library: "internal error" and exit code 1, with
the traceback where the environment variable ``ROOFLINE_SYM_DEBUG`` is set.

Each command is a module (``cmd_<name>``: its arguments and ``run``);
``common`` holds what they share; the layers below do the work.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
import warnings
from types import ModuleType
from typing import Any, Callable, Sequence, TextIO

from .._version import version
from ..errors import InputError, InputTypeError, RooflineError
from ..validate import escape
from . import completion
from .usage import Parser, UserError
from .results_cache import cached_text

__all__ = ["main", "COMMANDS", "command"]

# the commands in the order --help lists them, each the module cmd_<name>, imported
# by name when a command line is parsed: the main job (no arguments) needs none of
# them, nor what they import.  tests/test_layers.py counts these modules (and
# cmd_default) as imports of this package.
COMMANDS = ("hardware", "recipes", "formula", "plot", "measure", "fidelity", "eval",
            "breakeven", "sensitivity", "sweep", "filter", "step", "calculator")

EPILOG = """examples:
  roofline-sym                                   the main job (H100 SXM, training)
  roofline-sym hardware h200                     one GPU with the source of every number
  roofline-sym recipes --mode inference
  roofline-sym formula --recipe tensorwise --fuse --latex
  roofline-sym eval --gpu b200 --recipe mxfp8_cublas --shape 8192,8192,8192
  roofline-sym breakeven --gpu h200 --recipe rowwise --along cube
  roofline-sym breakeven --gpu h100 --recipe tensorwise --solve-for M --at K=8192,N=8192
  roofline-sym sensitivity --gpu h100 --recipe rowwise --shape 8192,8192,8192
  roofline-sym sweep --gpu h100 --gpu b200 --shapes llama3-70b -M 16384 --total
  roofline-sym filter --gpu h100 --recipe rowwise --shapes llama3-8b
  roofline-sym step --model llama3-8b --gpu h100 --gpus 8 --seq-len 8192 --recipe tensorwise
  roofline-sym plot heatmap --gpu h100 --recipe tensorwise --fuse -o heatmap.png
  roofline-sym --print-completion bash > ~/.local/share/bash-completion/completions/roofline-sym
"""


class _Version(argparse.Action):
    """``--version``: the installed version (pyproject's), read when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS,
                 help: str = "print the version and exit") -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit(0)


class _Completion(argparse.Action):
    """``--print-completion SHELL``: the shell completion script, then exit."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if not isinstance(values, str):  # one value (nargs=None), one of SHELLS
            raise InputTypeError(f"--print-completion takes one shell name, not {values!r}")
        print(completion.script(parser, values), end="")
        parser.exit(0)



def command(name: str) -> ModuleType:
    """The module of command ``name`` (``cmd_<name>``; ``default``: the main job),
    imported on first use.

    >>> command("hardware").NAME
    'hardware'
    """
    if name not in COMMANDS + ("default",):
        raise InputError(f"no command {name!r}; the commands are {', '.join(COMMANDS)}")
    return importlib.import_module(f"{__name__}.cmd_{name}")


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = Parser(
        prog="roofline-sym", epilog=EPILOG, formatter_class=fmt,
        description="Roofline cost models of low-precision linear layers: break-even "
                    "shapes, formulas and sweeps.")
    p.add_argument("--version", action=_Version)
    p.add_argument("--print-completion", action=_Completion, choices=completion.SHELLS,
                   metavar="SHELL", help="print a completion script for bash or zsh and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = command(name)
        sp = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP,
                            formatter_class=fmt, epilog="examples:\n" + module.EXAMPLES)
        sp.set_defaults(func=module.run)
        module.arguments(sp)
    return p


# set (to anything but empty), an internal error prints its traceback
DEBUG_VARIABLE = "ROOFLINE_SYM_DEBUG"

# an optional package -> the extra that installs it
_EXTRAS = {"matplotlib": "plot", "scipy": "fit", "torch": "torch", "transformers": "hf",
           "dask": "dask", "xarray": "dask", "pandas": "dask"}


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
    print(f"roofline-sym: warning: {message}", file=sys.stderr)


class _Escaping:
    """A text stream that writes control characters as escapes (``\\x1b``):
    names and text from files are echoed as text, never acted on by the terminal.
    ``unescaped`` is the stream itself, for the progress line's own ``\\r``."""

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = stream

    def write(self, text: str) -> int:
        return self.unescaped.write(escape(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; every user error is one line on stderr and exit code 2,
    a bug "internal error" and exit code 1.

    Run as the program (``argv`` None: ``sys.argv``), the process ends with the
    command: Python's last garbage collection, which walks every object left
    (SymPy's caches, each module's) to free memory the exit frees anyway,
    is skipped (``gc.freeze``: a first run of the main job spends ~50 ms in it).
    """
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Escaping(sys.stdout), _Escaping(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams
        if argv is None:
            gc.freeze()


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # no arguments: the main job, without building the parser of every command
    args = _parser().parse_args(argv) if argv else argparse.Namespace(command=None)
    warnings.showwarning = _one_line_warning
    try:
        _no_empty_values(args)
        if args.command is None:
            # the main job's text from the cache where it holds this installation's;
            # the modules that compute it are imported only where it does not
            print(cached_text("main_job", lambda: str(command("default").text())), end="")
            return 0
        func: Callable[[argparse.Namespace], int] = args.func  # set_defaults: a command's run
        return func(args)
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ImportError as exc:  # an optional extra (matplotlib, scipy) is missing
        extra = _EXTRAS.get((exc.name or "").split(".")[0])
        hint = f" (pip install 'roofline-sym[{extra}]')" if extra and "pip" not in str(exc) else ""
        print(f"roofline-sym: error: {_one_line(str(exc))}{hint}", file=sys.stderr)
        return 2
    except (RooflineError, OSError) as exc:  # the input (or a file it names) is wrong
        print(f"roofline-sym: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except MemoryError:
        print("roofline-sym: error: out of memory; ask for fewer shapes, GPUs or recipes",
              file=sys.stderr)
        return 2
    except Exception as exc:  # anything else is the library's fault, not the input's
        _internal_error(exc)
        return 1


def _internal_error(exc: Exception) -> None:
    """A bug: said as one, with the traceback where ``DEBUG_VARIABLE`` is set."""
    if os.environ.get(DEBUG_VARIABLE):
        traceback.print_exception(exc, file=sys.stderr)
        how = "report it with the command line and the traceback above"
    else:
        how = (f"rerun with {DEBUG_VARIABLE}=1 for the traceback, and report it with the "
               "command line and that traceback")
    print(f"roofline-sym: internal error: {type(exc).__name__}: {_one_line(str(exc))}\n"
          f"roofline-sym: this is a bug in roofline-sym {version()}, not in the input; {how}",
          file=sys.stderr)


def _no_empty_values(args: argparse.Namespace) -> None:
    """An option given an empty text (``--shape ""``) is an error, never taken as absent."""
    for dest, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            flag = dest if dest in ("name", "file", "kind") else "--" + dest.replace("_", "-")
            raise UserError(f"{flag}: an empty value")


def _one_line(text: str) -> str:
    """A message as one line (a file's own error text may span several)."""
    return " ".join(text.split("\n"))

