"""The core import stays light: no torch, and little beyond sympy + numpy."""

import json
import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_import_loads_no_torch():
    assert _run("import sys, roofline_sym; print('torch' in sys.modules)") == "False"


def test_import_loads_no_optional_integration():
    code = ("import sys, roofline_sym as rs; rs.shapes_from_module; rs.float8_module_filter;"
            "rs.shape_set('llama3-8b'); rs.linear('mxfp8_cublas', groups=8).on('b200')"
            ".evaluate(4096, 4096, 4096); print(sorted(m for m in ('torch', 'transformers', "
            "'dask', 'distributed', 'xarray', 'pandas', 'numba') if m in sys.modules))")
    assert _run(code) == "[]"


def test_building_a_model_loads_no_torch():
    code = ("import sys, roofline_sym as rs; m = rs.linear('mxfp8_cublas').on('b200');"
            "m.evaluate(4096, 4096, 4096); print('torch' in sys.modules)")
    assert _run(code) == "False"


def test_import_cost_at_most_1_3x_sympy_numpy():
    # one process: time sympy+numpy, then the extra cost of roofline_sym on top;
    # with bytecode written (the first run) and read (the best of the others), as
    # an installed package has it: compiling sources is not work an import does
    code = ("import time; t0 = time.perf_counter(); import sympy, numpy;"
            "t1 = time.perf_counter(); import roofline_sym; t2 = time.perf_counter();"
            "print((t2 - t0) / (t1 - t0))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ratios = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3)]
    assert min(ratios) <= 1.3, ratios


@pytest.mark.parametrize("name", ["M", "K", "N"])
def test_shape_symbols_positive_not_integer(name):
    import roofline_sym as rs

    sym = getattr(rs, name)
    assert sym.is_positive and sym.is_integer is None


def test_old_module_paths_are_the_new_modules_with_a_warning():
    code = textwrap.dedent("""
        import importlib, json, types, warnings
        import roofline_sym as rs
        from roofline_sym import _compat
        out = {}
        for old, new in {**_compat.MOVED, **_compat.PUBLIC}.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                module = importlib.import_module("roofline_sym." + old)
            target = importlib.import_module("roofline_sym." + new)
            out[old] = [module is target, module.__spec__.name == target.__name__,
                        [str(w.message) for w in caught if w.category is DeprecationWarning]]
        from roofline_sym.linear import Linear
        import roofline_sym.breakeven
        out["functions"] = [isinstance(getattr(rs, n), types.FunctionType)
                            for n in ("linear", "breakeven", "sweep", "hardware")]
        out["linear_class"] = Linear is rs.Linear
        print(json.dumps(out))
    """)
    out = json.loads(_run(code))
    from roofline_sym import _compat

    for old, new in _compat.MOVED.items():
        same, spec_kept, warned = out[old]
        assert same and spec_kept, old
        assert warned == [f"roofline_sym.{old} moved to roofline_sym.{new}; import it from there"]
    for old in _compat.PUBLIC:
        assert out[old][:2] == [True, True] and out[old][2] == [], old
    assert out["functions"] == [True] * 4 and out["linear_class"]


def test_module_attributes_load_lazily():
    code = ("import sys, roofline_sym as rs; before = 'roofline_sym.fidelity.own_gpu.hardware_fit' in "
            "sys.modules; m = rs.calibrate; print(before, m.__name__)")
    assert _run(code) == "False roofline_sym.fidelity.own_gpu.hardware_fit"
