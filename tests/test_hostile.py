"""Hostile input at every public entry point: nothing runs as code, nothing
crashes with an internal exception type, nothing passes silently.

Every payload of ``PAYLOADS`` goes into every argument of ``ENTRIES`` (and
hostile strings and files into the command line).  An entry point may accept
a value (it is then a fine input), or refuse it with a ``TypeError`` (wrong
type), a ``ValueError`` (bad value; ``HardwareError`` is one) or a
``LookupError`` naming what was not found: one line, no raw control
characters, no numpy ``array(...)`` text.  Code in any payload would create
``SENTINEL``; it must never appear.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import sys
import tempfile
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.cli.cmd_plot import draw
from roofline_sym.errors import RooflineError
from roofline_sym.fidelity.own_gpu import measurement_file as ms
from roofline_sym.fidelity.own_gpu.comparison import sample_path
from roofline_sym.model.gemm import Gemm
from roofline_sym.model.term import Work
from roofline_sym.validate import MAX_ELEMENTS
from test_hardware import GOOD as _HW

WORK = Path(tempfile.mkdtemp(prefix="roofline-hostile-"))
SENTINEL = WORK / "EXECUTED"
CODE = [
    f"__import__('pathlib').Path({str(SENTINEL)!r}).touch()",
    f"exec(\"__import__('pathlib').Path({str(SENTINEL)!r}).touch()\")",
    f"(lambda: __import__('pathlib').Path({str(SENTINEL)!r}).touch())()",
    "().__class__.__bases__[0].__subclasses__()",
    "M.__class__.__init__.__globals__",
    "__import__('sys').modules.__setitem__('pwned', 1)",
]


class Hostile:
    """A user object whose every conversion raises (its own errors may propagate)."""

    def __repr__(self):
        raise RuntimeError("hostile")

    __float__ = __index__ = __len__ = __iter__ = __repr__


def _deep(depth: int) -> list:
    out = cur = []
    for _ in range(depth):
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    return out


PAYLOADS = [
    None, True, object(), Hostile(), b"8192", bytearray(b"1"), {1}, {"a": 1}, [], (), 1j,
    _deep(3000), np.array(["x"]), np.str_(CODE[0]), "\x1b[31mred\x1b[0m", "", " ", "x" * 50_000,
    (c for c in "ab"), sympy.Symbol("y"), sympy.oo, sympy.nan, sympy.zoo, sympy.I,
    sympy.Interval(0, 1), *CODE, [CODE[0]], (CODE[0],), {CODE[0]: 1}, {"x": CODE[0]},
    np.array([CODE[0]]),
    0, -1, 1.5, math.nan, math.inf, -math.inf, 1e-320, 5e-324, 1e300, 2 ** 53 + 1, 2 ** 70,
    10 ** 400, Fraction(1, 3), Decimal("1e5"), Decimal("nan"), np.float32(1e30), np.int64(-5),
    np.uint64(2 ** 63), np.bool_(True), np.ma.array([1.0, 2.0], mask=[0, 1]),
    np.array([1.0, math.nan]), np.array([]), [1, [2]], np.array([[1, 2], [3, 4]]), "8192",
    "1e5", np.array([1e-320]), np.ones(MAX_ELEMENTS + 1, dtype=np.int8),
]

H100 = rs.hardware("h100")
UNBOUND = rs.linear("tensorwise")
BOUND = UNBOUND.on("h100")
MX = rs.linear("mxfp8_cublas").on("b200")
NUMERIC = rs.breakeven(BOUND, solve_for="M", K=4096, N=4096)
SYMBOLIC = rs.breakeven(UNBOUND, solve_for="M")
HW_VALUES = {str(s): float(v) for s, v in H100.parameters.items()
             if s in UNBOUND.free_hardware_symbols}
P_FP8 = rs.symbols.peak_flops("fp8")
MEASUREMENTS = ms.read_csv(sample_path())

ENTRIES = {
    "hardware(name)": lambda p: rs.hardware(p),
    "hardware(dataset)": lambda p: rs.hardware("h100", dataset=p),
    "list_hardware": lambda p: rs.list_hardware(p),
    "load_hardware": lambda p: rs.load_hardware(p),
    "linear(recipe)": lambda p: rs.linear(p),
    "linear(mode)": lambda p: rs.linear("tensorwise", mode=p),
    "linear(fuse)": lambda p: rs.linear("tensorwise", fuse=p),
    "linear(preset)": lambda p: rs.linear("tensorwise", preset=p),
    "linear(option)": lambda p: rs.linear("tensorwise", gemm_time=p),
    "linear(seed role)": lambda p: rs.linear({"input": p, "weight": "dynamic",
                                              "grad_output": "dynamic"}, preset="seed"),
    "on": lambda p: UNBOUND.on(p),
    "replace(mem_efficiency)": lambda p: H100.replace(mem_efficiency=p),
    "replace(launch_overhead)": lambda p: H100.replace(launch_overhead=p),
    "replace(mem_bw)": lambda p: H100.replace(mem_bw=p),
    "replace(peak_flops)": lambda p: H100.replace(peak_flops=p),
    "replace(peak_flops.fp8)": lambda p: H100.replace(peak_flops={"bf16": 989.4e12, "fp8": p}),
    "replace(gemm_efficiency)": lambda p: H100.replace(gemm_efficiency={"bf16": p}),
    "replace(name)": lambda p: H100.replace(name=p),
    "replace(aliases)": lambda p: H100.replace(aliases=p),
    "replace(l2_bytes)": lambda p: H100.replace(l2_bytes=p),
    "replace(block_scaling)": lambda p: H100.replace(block_scaling=p),
    "Hardware(name)": lambda p: rs.Hardware(p, peak_flops={"bf16": 1e15}, mem_bw=2e12),
    "evaluate(M)": lambda p: BOUND.evaluate(M=p, K=4096, N=4096),
    "evaluate(M, K, N)": lambda p: BOUND.evaluate(p, p, p),
    "evaluate(BW)": lambda p: UNBOUND.evaluate(4096, 4096, 4096, **{**HW_VALUES, "BW": p}),
    "evaluate(eta_fp8)": lambda p: UNBOUND.evaluate(4096, 4096, 4096,
                                                    **{**HW_VALUES, "eta_fp8": p}),
    "evaluate(t_launch)": lambda p: UNBOUND.evaluate(4096, 4096, 4096,
                                                     **{**HW_VALUES, "t_launch": p}),
    "evaluate_terms": lambda p: BOUND.evaluate_terms(p, 4096, 4096),
    "hardware_axis": lambda p: UNBOUND.hardware_axis(p),
    "breakeven(model)": lambda p: rs.breakeven(p),
    "breakeven(solve_for)": lambda p: rs.breakeven(BOUND, solve_for=p, K=4096, N=4096),
    "breakeven(along)": lambda p: rs.breakeven(BOUND, along=p),
    "breakeven(ray value)": lambda p: rs.breakeven(BOUND, along={rs.M: p, rs.K: rs.x,
                                                                 rs.N: rs.x}),
    "breakeven(K)": lambda p: rs.breakeven(MX, solve_for="M", K=p, N=4096),
    "breakeven(hardware)": lambda p: rs.breakeven(UNBOUND, solve_for="M", K=4096, N=4096,
                                                  hardware=p),
    "breakeven(regime)": lambda p: rs.breakeven(UNBOUND, solve_for="M", regime=p),
    "breakeven(BW)": lambda p: rs.breakeven(UNBOUND, solve_for="M", K=4096, N=4096,
                                            **{**HW_VALUES, "BW": p}),
    "breakeven(eta_bf16)": lambda p: rs.breakeven(UNBOUND, solve_for="M", K=4096, N=4096,
                                                  **{**HW_VALUES, "eta_bf16": p}),
    "subs(values)": lambda p: SYMBOLIC.subs(p),
    "subs(K)": lambda p: SYMBOLIC.subs({rs.K: p, rs.N: 4096, **H100.parameters}),
    "subs(P_fp8)": lambda p: SYMBOLIC.subs({rs.K: 4096, rs.N: 4096,
                                            **{**H100.parameters, P_FP8: p}}),
    "is_faster": lambda p: NUMERIC.is_faster(p),
    "regime_at": lambda p: NUMERIC.regime_at(p),
    "latex(expr)": lambda p: rs.latex(p),
    "latex(model)": lambda p: rs.latex(rs.M, model=p),
    "latex(symbol_names)": lambda p: rs.latex(rs.M, symbol_names=p),
    "shape_set(name)": lambda p: rs.shape_set(p),
    "shape_set(M)": lambda p: rs.shape_set("llama3-8b", M=p),
    "shape_set(param)": lambda p: rs.shape_set("dsv3-16b-671b", dim=p),
    "grid": lambda p: rs.grid(p, 1024, 1024),
    "from_arrays(M)": lambda p: rs.ShapeSet.from_arrays(p, 1024, 1024),
    "from_arrays(counts)": lambda p: rs.ShapeSet.from_arrays(1024, 1024, 1024, counts=p),
    "from_arrays(names)": lambda p: rs.ShapeSet.from_arrays(1024, 1024, 1024, names=p),
    "from_file": lambda p: rs.ShapeSet.from_file(p),
    "load_shape_sets": lambda p: rs.numeric.load_shape_sets(p),
    "sweep(models)": lambda p: rs.sweep(p, "pow2"),
    "sweep(shapes)": lambda p: rs.sweep(BOUND, p),
    "sweep((M, K, N))": lambda p: rs.sweep(BOUND, (p, 4096, 4096)),
    "model_grid(recipes)": lambda p: rs.model_grid(p, "h100"),
    "model_grid(hardware)": lambda p: rs.model_grid("tensorwise", p),
    "list_recipes(mode)": lambda p: rs.list_recipes(p),
    "list_recipes(preset)": lambda p: rs.list_recipes("training", preset=p),
    "element": lambda p: rs.model.element(p),
    "scaling": lambda p: rs.model.scaling(p),
    "breakdown": lambda p: rs.output.breakdown(p),
    "breakeven_table(results)": lambda p: rs.breakeven_table(p),
    "breakeven_table(fmt)": lambda p: rs.breakeven_table([NUMERIC], fmt=p),
    "breakeven_rows(recipes)": lambda p: rs.output.breakeven_rows(p, ["h100"]),
    "breakeven_rows(gpus)": lambda p: rs.output.breakeven_rows(["tensorwise"], p),
    "Gemm(scale_bytes)": lambda p: Gemm("g", rs.M, rs.K, rs.N, "fp8_e4m3", scale_bytes=p),
    "Gemm(m)": lambda p: Gemm("g", p, rs.K, rs.N, "fp8_e4m3"),
    "Gemm(operand)": lambda p: Gemm("g", rs.M, rs.K, rs.N, p),
    "Work(bytes)": lambda p: Work(bytes=p),
    "parse_csv": lambda p: ms.parse_csv(p),
    "read_csv": lambda p: ms.read_csv(p),
    "own_gpu.fit_hardware(file)": lambda p: rs.fidelity.own_gpu.fit_hardware(p),
    "own_gpu.fit_hardware(base)": lambda p: rs.fidelity.own_gpu.fit_hardware(MEASUREMENTS, p),
    "fidelity.measured_report(hardware)":
        lambda p: rs.fidelity.measured_report(MEASUREMENTS, p, False),
    "plot.speedup_heatmap(model)": lambda p: rs.plot.speedup_heatmap(p),
    "plot.speedup_heatmap(resolution)": lambda p: rs.plot.speedup_heatmap(
        BOUND, resolution=p, breakeven=False),
    "plot.speedup_heatmap(m_range)": lambda p: rs.plot.speedup_heatmap(
        BOUND, m_range=p, resolution=2, breakeven=False),
    "plot.breakeven_curves(models)": lambda p: rs.plot.breakeven_curves(p, points=2),
    "plot.breakeven_curves(points)": lambda p: rs.plot.breakeven_curves([BOUND], points=p),
    "plot.roofline(shape)": lambda p: rs.plot.roofline(BOUND, shape=p),
    "cmd_plot.draw(kind)": lambda p: draw(p, [BOUND], WORK / "x.png"),
    "cmd_plot.draw(path)": lambda p: draw("roofline", [BOUND], p),
}

_ARRAY_TEXT = re.compile(r"(?<![a-z])array\(")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _refusal_problem(exc: BaseException) -> str | None:
    """What is wrong with how an entry point refused a payload, or None."""
    if isinstance(exc, RuntimeError) and str(exc) == "hostile":
        return None  # the payload's own error, raised by its own method
    # a refusal is the library's own error; a bare KeyError, IndexError or
    # TypeError would be a lookup or a call gone wrong inside it
    if not isinstance(exc, RooflineError):
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    msg = str(exc)
    if not msg.strip():
        return f"{type(exc).__name__} without a message"
    if "\n" in msg or _CONTROL.search(msg):
        return f"a message with line breaks or control characters: {msg[:200]!r}"
    if _ARRAY_TEXT.search(msg):
        return f"numpy array text in the message: {msg[:200]!r}"
    if len(msg) > 2000:
        return f"a message of {len(msg)} characters"
    return None


@pytest.fixture(scope="module", autouse=True)
def _matplotlib_agg():
    import matplotlib

    matplotlib.use("Agg")


def test_the_corpus_is_large():
    assert len(ENTRIES) >= 85 and len(PAYLOADS) >= 60
    assert len(ENTRIES) * len(PAYLOADS) >= 5000


@pytest.mark.parametrize("entry", ENTRIES)
def test_hostile_payloads(entry):
    call = ENTRIES[entry]
    problems = []
    for payload in PAYLOADS:
        start = time.perf_counter()
        try:
            call(payload)
        except BaseException as exc:  # noqa: BLE001 - every outcome is judged below
            problem = _refusal_problem(exc)
            if problem:
                problems.append(f"{rs.validate.show(payload)[:60]}: {problem}")
        if time.perf_counter() - start > 10:
            problems.append(f"{rs.validate.show(payload)[:60]}: took over 10 s")
        assert not SENTINEL.exists() and "pwned" not in sys.modules, \
            f"{entry} ran code from {rs.validate.show(payload)}"
    assert not problems, problems


# -- the command line ------------------------------------------------------------------
_TEXT = CODE[:2] + ["", "\x1b[31m", "\x1b]0;title\x07", "\u202e", "nan", "-1", "1e400", "2**10",
                    "9007199254740993", "1.5", "x" * 5000, "K=1e300,N=1", "M=1,M=2", "1,2,3,4",
                    "\x00", "tensorwse"]
_CLI = [
    ["hardware", "{}"], ["hardware", "--dataset", "{}"], ["recipes", "--mode", "{}"],
    ["formula", "--recipe", "{}"], ["formula", "--term", "{}"],
    ["formula", "--breakeven", "--at", "{}"],
    ["eval", "--gpu", "{}"], ["eval", "--shape", "{}"], ["eval", "--recipe", "{}"],
    ["breakeven", "--solve-for", "{}", "--at", "K=1,N=1"],
    ["breakeven", "--solve-for", "M", "--at", "{}"],
    ["sweep", "--shapes", "{}", "--recipe", "tensorwise"],
    ["sweep", "--shapes", "llama3-8b", "--recipe", "tensorwise", "-M", "{}"],
    ["sweep", "--shapes", "pow2", "--recipe", "tensorwise", "-o", "{}"],
    ["plot", "{}", "-o", "x.png"],
    ["plot", "roofline", "--recipe", "tensorwise", "--shape", "{}", "-o", "y.png"],
    ["fidelity", "{}"], ["fidelity", str(sample_path()), "--gpu", "{}", "--no-calibrate"],
    ["fidelity", str(sample_path()), "--gpu", "h200", "--write-hardware", "{}"],
]
def _files() -> list[str]:
    sample = sample_path().read_text()
    lines = sample.splitlines()
    head = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    columns = lines[head].split(",")

    def cell(column, value):
        out = list(lines)
        row = out[head + 1].split(",")
        row[columns.index(column)] = value
        out[head + 1] = ",".join(row)
        return "\n".join(out) + "\n"

    texts = {
        "eta.toml": _HW.replace("mem_efficiency = 0.9", "mem_efficiency = 1e-300"),
        "launch.toml": _HW.replace("launch_overhead_s = 2e-6", "launch_overhead_s = 1e-320"),
        "nested.toml": "a = " + "[" * 3000 + "]" * 3000 + "\n",
        "ansi.toml": _HW.replace('name = "Toy"', 'name = "Toy\\u001b[2J"'),
        "notes.toml": _HW.replace('name = "Toy"', 'name = "Toy"\nnotes = ["\\u001b[31m"]'),
        "code.toml": _HW.replace("mem_bw_bytes_per_s = 3e12",
                                 f"mem_bw_bytes_per_s = {CODE[0]!r}".replace("'", '"', 1)),
        "bom.toml": "\ufeff" + _HW,
        "frac.csv": "M,K,N\n1.5,4096,4096\n",
        "big.csv": "M,K,N\n9007199254740993,4096,4096\n",
        "ansi.csv": "M,K,N,name\n1024,4096,4096,\x1b[31mred\n",
        "nested.json": "[" * 100_000 + "]" * 100_000,
        "huge.json": '[{"M": 1e300, "K": 4096, "N": 4096}]',
        "m300.csv": cell("M", "1e300"), "m17.csv": cell("M", "100000000000000000"),
        "t300.csv": cell("time_s", "1e-300"), "gpu.csv": cell("gpu", "\x1b[31mH200"),
        "bom.csv": "\ufeff" + sample,
    }
    out = []
    for name, text in texts.items():
        (WORK / name).write_text(text, encoding="utf-8")
        out.append(str(WORK / name))
    (WORK / "folder.toml").mkdir(exist_ok=True)
    return out + [str(WORK / "folder.toml"), str(WORK / "missing.csv"), "/dev/null"]


_FILE_CLI = [["hardware", "--hardware-file", "{}"],
             ["eval", "--hardware-file", "{}", "--recipe", "tensorwise"],
             ["sweep", "--shapes", "{}", "--recipe", "tensorwise", "--gpu", "h100"],
             ["fidelity", "{}", "--gpu", "h200", "--no-regimes"]]


def _run(argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _cli_problem(argv, code, out, err) -> str | None:
    if code not in (0, 2):
        return f"exit {code}"
    if code == 2 and (err.count("\n") != 1 or "Traceback" in err):
        return f"not one line: {err[:300]!r}"
    if _CONTROL.search(out + err.replace("\n", "")):
        return f"control characters echoed: {(out + err)[:200]!r}"
    if code == 0 and re.search(r"(?<![\w.-])(nan|inf)(?![\w])", out, re.I):
        return f"NaN or inf printed: {out[:300]!r}"
    return None


def test_hostile_command_lines(monkeypatch):
    monkeypatch.chdir(WORK)  # whatever a command writes lands here
    cases = ([[a.replace("{}", x) if a == "{}" else a for a in t] for t in _CLI for x in _TEXT]
             + [[a.replace("{}", f) if a == "{}" else a for a in t]
                for t in _FILE_CLI for f in _files()])
    assert len(cases) >= 400
    problems = []
    for argv in cases:
        code, out, err = _run(argv)
        problem = _cli_problem(argv, code, out, err)
        if problem:
            problems.append(f"{[a[:40] for a in argv]}: {problem}")
        assert not SENTINEL.exists(), f"{argv} ran code"
    assert not problems, problems
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


# -- what the issue found, one by one ------------------------------------------------
def test_text_is_never_evaluated():
    for text in CODE:
        with pytest.raises(ValueError, match="not allowed|not a formula|unknown name"):
            rs.latex(text)
        with pytest.raises(ValueError):
            Gemm("g", rs.M, rs.K, rs.N, "fp8_e4m3", scale_bytes=text)
        for wrapped in ([text], (text,), {text: 1}, np.array([text])):
            with pytest.raises(TypeError):
                rs.latex(wrapped)
    with pytest.raises(TypeError):
        rs.latex(rs.M, model=CODE[0])
    assert not SENTINEL.exists() and "pwned" not in sys.modules
    # what text may be: a formula of the model's symbols, parsed by a whitelist
    assert rs.latex("2*M*K*N/(P_fp8*eta_fp8)") == rs.latex(
        2 * rs.M * rs.K * rs.N / (P_FP8 * rs.symbols.gemm_efficiency("fp8")))


@pytest.mark.parametrize("call, message", [
    (lambda: H100.replace(mem_efficiency=1e-300), r"mem_efficiency'?: 1e-300 is outside \(0.01, 1\]"),
    (lambda: H100.replace(launch_overhead=1e-320), r"1e-320 s is outside \[1e-07, 0.001\] s"),
    (lambda: H100.replace(gemm_efficiency={"bf16": 1.5}), r"gemm_efficiency.bf16'?: 1.5 is "),
    (lambda: UNBOUND.evaluate(1, 1, 1, **{**HW_VALUES, "BW": 1e-320}), r"BW = 1e-320 B/s"),
    (lambda: UNBOUND.evaluate(1, 1, 1, **{**HW_VALUES, "eta_fp8": 5}), r"eta_fp8 = 5 is outside"),
    (lambda: UNBOUND.evaluate(1, 1, 1, **{**HW_VALUES, "t_launch": 1e6}), r"t_launch = 1e\+06 s"),
    (lambda: rs.breakeven(UNBOUND, solve_for="M", K=8, N=8, **{**HW_VALUES, "eta_bf16": 1.5}),
     "eta_bf16 = 1.5 is outside"),
    (lambda: rs.breakeven(UNBOUND, solve_for="M", K=8, N=8, **{**HW_VALUES, "BW": 1e-320}),
     "BW = 1e-320"),
    (lambda: SYMBOLIC.subs({rs.K: 8, rs.N: 8, **{**H100.parameters, P_FP8: 1e-300}}),
     "P_fp8 = 1e-300 FLOP/s is outside"),
])
def test_implausible_hardware_is_refused_naming_field_value_and_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call", [
    lambda: rs.hardware(5), lambda: rs.hardware(None), lambda: UNBOUND.on(5),
    lambda: UNBOUND.on(None), lambda: UNBOUND.on(rs.devices.dataset("default")),
    lambda: rs.breakeven(UNBOUND, solve_for="M", K=8, N=8, hardware=5),
    lambda: rs.latex(None), lambda: rs.linear("tensorwise", preset=[]),
    lambda: rs.sweep(5, "pow2"),
])
def test_wrong_types_are_type_errors_naming_the_argument(call):
    with pytest.raises(TypeError) as info:
        call()
    assert re.search(r"hardware|latex|preset|sweep|model", str(info.value))


def test_silently_wrong_inputs_are_refused():
    with pytest.raises(ValueError, match=r"at most 2\*\*53; got 9007199254740993"):
        BOUND.evaluate(M=2 ** 53 + 1, K=8, N=8)
    with pytest.raises(ValueError, match="whole numbers"):
        rs.shape_set("llama3-8b", M=1.5)
    with pytest.raises(TypeError, match="masked arrays"):
        BOUND.evaluate(M=np.ma.array([1.0, 2.0], mask=[0, 1]), K=8, N=8)
    with pytest.raises(ValueError, match="positive and finite"):
        NUMERIC.is_faster([math.nan])
    with pytest.raises(ValueError, match="at most"):
        rs.grid(np.arange(1, 1001), np.arange(1, 1001), np.arange(1, 1001))
    with pytest.raises(ValueError, match="do not broadcast"):
        BOUND.evaluate(M=[1, 2], K=[1, 2, 3], N=8)
    with pytest.raises(ValueError, match="did you mean 'tensorwise'"):
        rs.linear("tensorwse")


@pytest.mark.parametrize("call, error, message", [
    # the entry points of grouped layers, torchao filters and compiled evaluation
    (lambda: rs.linear("rowwise", groups=10 ** 12), ValueError, r"groups .* 1\.\.1048576"),
    (lambda: rs.linear("rowwise", groups="8"), TypeError, "groups"),
    (lambda: rs.float8_module_filter("h100", "rowwise", M=8192, min_speedup=math.nan),
     ValueError, "min_speedup must be positive and finite"),
    (lambda: rs.float8_module_filter("h100", "rowwise", M=8192, skip_fqns=[b"output"]),
     TypeError, "skip_fqns"),
    (lambda: UNBOUND.hardware_axis(["h100"], ndim=-1), ValueError, "ndim must be in 0..32"),
    (lambda: UNBOUND.hardware_axis({"h100": 1}), TypeError, "gpus"),
    (lambda: BOUND.evaluate(8, 8, 8, dtype="garbage"), TypeError, "dtype must be a floating"),
])
def test_numbers_and_names_of_the_newer_entry_points_are_checked(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_one_name_where_names_are_taken_is_one_item():
    keep = rs.float8_module_filter("h100", "rowwise", M=8192, skip_fqns="output")
    assert keep.skip_fqns == ("output",)
    assert UNBOUND.hardware_axis("h100")["BW"].shape == (1,)


def test_formula_at_takes_only_shapes_and_the_models_hardware_values():
    for at, message in (("regime=4", "unknown --at name 'regime'"),
                        ("M=8", "'M' (M is solved for)")):
        code, out, err = _run(["formula", "--breakeven", "--recipe", "rowwise", "--at", at])
        assert code == 2 and message in err and err.count("\n") == 1
    code, out, err = _run(["formula", "--breakeven", "--recipe", "rowwise", "--at",
                           "BW=3e12,K=8192,N=8192"])
    assert code == 0 and "BW = 3000000000000" in out


def test_the_corpus_ran_nothing():
    assert not SENTINEL.exists() and "pwned" not in sys.modules
