"""Fuzzing the parsers: hardware and shape-set TOML, shape CSV and JSON,
measurement CSV, formula and number text, command-line arguments.

Whatever the input, a parser returns a valid result (every number plausible,
every shape a real layer) or refuses it with a ``ValueError`` that names the
file; it never crashes with another exception type, never runs the text.
Examples per test: the ``ci`` hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.fidelity.own_gpu import measurement_file as ms
from roofline_sym.fidelity.own_gpu.comparison import sample_path
from roofline_sym.devices.ranges import RANGES, field_kind
from roofline_sym.validate import SHAPE_MAX, InputTypeError, formula, parse_number
from test_hardware import GOOD as HARDWARE_FILE

WORK = Path(tempfile.mkdtemp(prefix="roofline-fuzz-"))
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

# numbers and other values as they could be written in a file
LITERALS = ["0", "-1", "1", "1.5", "2e-6", "1e-300", "1e-320", "5e-324", "1e300", "1e400",
            "inf", "-inf", "nan", "+nan", "1_000", "0x10", "0o7", "0b1", "9007199254740993",
            "9007199254740992", "3e12", "1e15", "0.9", "0.005", "true", '"3e12"', '""',
            '"\\u001b[31m"', "[]", "[1, 2]", "{ bf16 = 1e15 }", "{}", "[[[[1]]]]", "8192",
            "8192.0", "1e17", "-0.0", "1e-9", "1e4"]
messy_text = st.text(st.characters(codec="utf-8"), max_size=60)


def _file(name: str, text: str) -> Path:
    path = WORK / name
    path.write_text(text, encoding="utf-8")
    return path


def _named_refusal(exc: BaseException, path: Path) -> None:
    """A refusal of a file's content: a ValueError naming the file, one line."""
    assert isinstance(exc, ValueError), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert msg.startswith(str(path)) or path.name in msg, msg
    assert "\n" not in msg and not CONTROL.search(msg), repr(msg)


def _loaded(load, path: Path):
    """``load(path)``, or None where it refuses the file as it should."""
    try:
        return load(path)
    except Exception as exc:  # noqa: BLE001 - the refusal is judged here
        _named_refusal(exc, path)
        return None


def _edited(text: str, edits) -> str:
    """``text`` with the values of some ``key = value`` lines replaced."""
    for index, literal in edits:
        spans = [m.span() for m in VALUES.finditer(text)]
        start, end = spans[index % len(spans)]
        text = text[:start] + literal + text[end:]
    return text


# -- hardware TOML ---------------------------------------------------------------------
GOOD = HARDWARE_FILE
VALUES = re.compile(r"(?<== )[^\n]+")  # the value of every key = value line


def _plausible(hw: rs.Hardware) -> None:
    for name, value in [*((f"peak_flops.{k}", v) for k, v in hw.peak_flops.items()),
                        *((f"gemm_efficiency.{k}", v) for k, v in hw.gemm_efficiency.items()),
                        ("mem_bw", hw.mem_bw), ("mem_efficiency", hw.mem_efficiency),
                        ("launch_overhead", hw.launch_overhead),
                        ("memory_bytes", hw.memory_bytes)]:
        if value is not None:
            assert value in RANGES[field_kind(name)], (name, value)


@given(edits=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(LITERALS)), max_size=3))
def test_hardware_toml_with_edited_values(edits):
    for hw in _loaded(rs.load_hardware, _file("edited.toml", _edited(GOOD, edits))) or ():
        _plausible(hw)


@given(text=st.one_of(messy_text, st.builds(lambda a, b: GOOD[:a] + b + GOOD[a:],
                                            st.integers(0, len(GOOD)), messy_text)))
def test_hardware_toml_from_any_text(text):
    for hw in _loaded(rs.load_hardware, _file("any.toml", text)) or ():
        _plausible(hw)


# -- shape files -----------------------------------------------------------------------
def _real_layers(shapes: rs.ShapeSet) -> None:
    for column in (shapes.M, shapes.K, shapes.N, shapes.counts):
        assert np.all(column >= 1) and np.all(column == np.floor(column))
    assert np.all(np.stack([shapes.M, shapes.K, shapes.N]) <= SHAPE_MAX)
    assert not any(CONTROL.search(n) for n in shapes.names)


cells = st.one_of(st.sampled_from(LITERALS + ["", " ", "4096", "a,b", '"1"', "\x1b[31m"]),
                  messy_text)


@given(header=st.sampled_from(["M,K,N", "M,K,N,name,count", "m,k,n", "M,K", "M,M,K,N", ""]),
       rows=st.lists(st.lists(cells, min_size=1, max_size=5), max_size=4), bom=st.booleans())
def test_shape_csv(header, rows, bom):
    text = ("\ufeff" if bom else "") + header + "\n" + "\n".join(",".join(r) for r in rows)
    shapes = _loaded(rs.ShapeSet.from_file, _file("shapes.csv", text))
    if shapes is not None:
        _real_layers(shapes)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 2 ** 60), messy_text,
              st.floats(allow_nan=False, allow_infinity=False),
              st.sampled_from([1024, 4096, 8192, 1.5, 2 ** 53 + 1])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["M", "K", "N", "name", "count",
                                                             "m", "x", "shapes"]),
                                            inner, max_size=5)),
    max_leaves=20)


@given(data=json_values)
def test_shape_json(data):
    shapes = _loaded(rs.ShapeSet.from_file, _file("shapes.json", json.dumps(data)))
    if shapes is not None:
        _real_layers(shapes)


SHAPE_TOML = """[sources]
S = "source"
[[set]]
name = "mine"
kind = "product"
M = [1024]
K = { base = 2, exponents = [10, 12] }
N = [4096, 8192]
[set.sources]
M = "S"
K = "S"
N = "S"
"""


@given(edits=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(LITERALS)), max_size=2))
def test_shape_set_toml(edits):
    sets = _loaded(rs.numeric.load_shape_sets, _file("sets.toml", _edited(SHAPE_TOML, edits)))
    for shapes in (sets or {}).values():
        _real_layers(shapes)


# -- measurement CSV --------------------------------------------------------------------
SAMPLE = sample_path().read_text().splitlines()[:20]
HEAD = next(i for i, line in enumerate(SAMPLE) if not line.startswith("#"))
COLUMNS = SAMPLE[HEAD].split(",")


@given(edits=st.lists(st.tuples(st.integers(1, len(SAMPLE) - HEAD - 1),
                                st.sampled_from(COLUMNS), cells), max_size=3),
       bom=st.booleans())
def test_measurement_csv(edits, bom):
    lines = list(SAMPLE)
    for row, column, value in edits:
        fields = lines[HEAD + row].split(",")
        fields[COLUMNS.index(column)] = value
        lines[HEAD + row] = ",".join(fields)
    text = ("\ufeff" if bom else "") + "\n".join(lines) + "\n"
    try:
        meas = ms.parse_csv(text, "fuzz.csv")
    except Exception as exc:  # noqa: BLE001
        _named_refusal(exc, Path("fuzz.csv"))
        assert "line" in str(exc) or "header" in str(exc) or "column" in str(exc)
        return
    shapes = meas.shapes
    assert np.all(shapes >= 1) and np.all(shapes <= SHAPE_MAX)
    assert np.all(shapes == np.floor(shapes))
    assert all(t in RANGES["time"] for t in meas.time_s)


# -- text: formulas and numbers ---------------------------------------------------------------
formula_text = st.one_of(
    messy_text,
    st.lists(st.sampled_from(["M", "K", "N", "x", "BW", "eta_mem", "P_fp8", "t_launch", "2",
                              "0.5", "+", "-", "*", "/", "**", "(", ")", ",", "Max(",
                              "ceiling(", "floor(", "__import__(", "'os'", ".system", "[",
                              "lambda", ":", "1e400", "0"]), max_size=12).map("".join))


@given(text=formula_text)
def test_formula_text_is_parsed_never_run(text):
    try:
        expr = formula(text)
    except ValueError as exc:
        assert "\n" not in str(exc) and not CONTROL.search(str(exc))
        return
    assert isinstance(expr, sympy.Basic)
    allowed = {rs.M, rs.K, rs.N, rs.x}
    assert all(s in allowed or rs.symbols.is_hardware_symbol(s) for s in expr.free_symbols)


number_text = st.one_of(messy_text, st.floats().map(repr), st.integers(-2 ** 70, 2 ** 70).map(str),
                        st.sampled_from(LITERALS))


@given(text=number_text, integer=st.booleans())
def test_number_text(text, integer):
    try:
        value = parse_number(text, "x", integer=integer, limit=SHAPE_MAX)
    except ValueError as exc:
        assert not isinstance(exc, InputTypeError)
        assert str(exc).startswith("x: ")
        return
    assert math.isfinite(value) and 0 < value <= SHAPE_MAX
    assert not integer or value.is_integer()


# -- the command line --------------------------------------------------------------------
TOKENS = ["hardware", "recipes", "formula", "eval", "breakeven", "sweep", "fidelity",
          "--gpu", "h100", "b200", "--recipe", "tensorwise", "mxfp8_cublas", "--shape",
          "8192,8192,8192", "1,2,3", "--at", "K=1024,N=2048", "--solve-for", "M", "--along",
          "cube", "--mode", "inference", "--preset", "torchao", "--json", "--csv", "--fuse",
          "--latex", "--breakeven", "--term", "lowp.gemm.output", "--shapes", "llama3-8b",
          "-M", "16384", "--total", "--dataset", "seed", "-o", "x.csv", "--max-rows", "3",
          "--no-calibrate", str(sample_path())]


@given(argv=st.lists(st.one_of(st.sampled_from(TOKENS), messy_text), max_size=7))
def test_command_line_arguments(argv):
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(WORK)  # whatever a command writes lands here
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    finally:
        os.chdir(here)
    assert code in (0, 2), (argv, err.getvalue())
    if code == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()
    assert not CONTROL.search(out.getvalue() + err.getvalue().replace("\n", ""))


@pytest.fixture(autouse=True)
def _agg():
    import matplotlib

    matplotlib.use("Agg")
