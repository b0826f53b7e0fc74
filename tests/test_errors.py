"""One error type: every error the library defines or raises is a ``RooflineError``,
and the command line's exit code tells bad input (2) from a bug (1)."""

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym import cli, errors
from roofline_sym.cli import main
from roofline_sym.errors import RooflineError

PACKAGE = Path(rs.__file__).parent

def _modules():
    for info in pkgutil.walk_packages([str(PACKAGE)], "roofline_sym."):
        if not info.name.endswith("__main__"):  # runs the CLI
            yield importlib.import_module(info.name)


def _error_classes():
    for module in _modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                yield cls


def test_every_error_class_is_a_roofline_error():
    classes = set(_error_classes())
    # the ones named in the package's documentation are among those found
    assert {rs.devices.HardwareError, rs.devices.UnknownHardwareError,
            rs.devices.MissingHardwareValueError, cli.common.UserError} <= classes
    strays = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes
                    if not issubclass(c, RooflineError))
    assert not strays


def test_each_kind_is_also_the_builtin_error_it_stands_for():
    # so `except KeyError` / `except TypeError` written against the built-ins still work
    assert issubclass(errors.RooflineError, ValueError)
    assert issubclass(errors.InputTypeError, TypeError)
    assert issubclass(errors.UnknownNameError, KeyError)
    assert issubclass(errors.SelectionError, IndexError)
    assert issubclass(errors.UnavailableError, RuntimeError)
    assert issubclass(rs.devices.UnknownHardwareError, LookupError)
    # KeyError's str() quotes its message; this one does not
    assert str(errors.UnknownNameError("unknown GPU 'x'")) == "unknown GPU 'x'"


_BUILTINS = {"ValueError", "TypeError", "KeyError", "RuntimeError", "IndexError", "LookupError"}


def test_no_builtin_error_is_raised_directly():
    # a refusal of input is one of the library's errors; an AssertionError marks
    # what only a bug can reach
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id in _BUILTINS:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.exc.func.id}")
    assert not found


def test_a_library_error_is_a_user_error_exit_2(capsys):
    code = main(["eval", "--gpu", "h100", "--recipe", "tensorwse", "--shape", "8192,8192,8192"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("roofline-sym: error: unknown training recipe 'tensorwse' (did you mean "
                   "'tensorwise'?); " + err.split("; ", 1)[1])
    assert err.count("\n") == 1


def _broken_run(args):
    return {}["no such key"]  # a bug: a bare KeyError from a dict lookup


def _with_a_bug(monkeypatch):
    hardware = cli.command("hardware")
    monkeypatch.setattr(hardware, "run", _broken_run)


def test_any_other_exception_is_an_internal_error_exit_1(capsys, monkeypatch):
    _with_a_bug(monkeypatch)
    monkeypatch.delenv(cli.DEBUG_VARIABLE, raising=False)
    code = main(["hardware", "h100"])
    err = capsys.readouterr().err
    assert code == 1
    first, second = err.splitlines()
    assert first == "roofline-sym: internal error: KeyError: 'no such key'"
    assert "bug" in second and f"{cli.DEBUG_VARIABLE}=1" in second
    assert "Traceback" not in err


def test_the_debug_variable_prints_the_traceback(capsys, monkeypatch):
    _with_a_bug(monkeypatch)
    monkeypatch.setenv(cli.DEBUG_VARIABLE, "1")
    code = main(["hardware", "h100"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("Traceback (most recent call last):")
    assert "_broken_run" in err and "roofline-sym: internal error: KeyError" in err


@pytest.mark.parametrize("argv", [
    ["sweep", "--gpu", "h100", "--shapes", "no-such-shape-set"],
    ["hardware", "no-such-gpu"],
    ["breakeven", "--gpu", "h100", "--recipe", "rowwise", "--solve-for", "M", "--at", "K=0"],
])
def test_bad_input_exits_2(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("roofline-sym: error: ") and err.count("\n") == 1
