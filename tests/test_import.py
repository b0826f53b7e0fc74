"""The core import stays light: no torch, and little beyond sympy + numpy."""

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_import_loads_no_torch():
    assert _run("import sys, roofline_sym; print('torch' in sys.modules)") == "False"


def test_building_a_model_loads_no_torch():
    code = ("import sys, roofline_sym as rs; m = rs.linear('mxfp8_cublas').on('b200');"
            "m.evaluate(4096, 4096, 4096); print('torch' in sys.modules)")
    assert _run(code) == "False"


def test_import_cost_at_most_1_3x_sympy_numpy():
    # one process: time sympy+numpy, then the extra cost of roofline_sym on top
    code = ("import time; t0 = time.perf_counter(); import sympy, numpy;"
            "t1 = time.perf_counter(); import roofline_sym; t2 = time.perf_counter();"
            "print((t2 - t0) / (t1 - t0))")
    ratios = [float(_run(code)) for _ in range(3)]
    assert min(ratios) <= 1.3, ratios


@pytest.mark.parametrize("name", ["M", "K", "N"])
def test_shape_symbols_positive_not_integer(name):
    import roofline_sym as rs

    sym = getattr(rs, name)
    assert sym.is_positive and sym.is_integer is None
