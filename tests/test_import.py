"""The core import stays light: no torch, and little beyond sympy + numpy (the
package loads its names on first use: ``exports.lazy``)."""

import os
import subprocess
import sys
from pathlib import Path

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


def test_import_cost_at_most_1_25x_sympy_numpy():
    # one process: time sympy+numpy, then the extra cost of roofline_sym on top;
    # with bytecode written (the first run) and read (the best of the others), as
    # an installed package has it: compiling sources is not work an import does
    code = ("import time; t0 = time.perf_counter(); import sympy, numpy;"
            "t1 = time.perf_counter(); import roofline_sym; t2 = time.perf_counter();"
            "print((t2 - t0) / (t1 - t0))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ratios = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3)]
    assert min(ratios) <= 1.25, ratios


def test_import_builds_nothing_and_loads_names_on_first_use():
    # the package's own modules after `import roofline_sym`: the symbols, the
    # lazy-name machinery and the LaTeX writers' table, nothing of a layer
    code = ("import sys, roofline_sym as rs; print(' '.join(sorted(m for m in sys.modules "
            "if m.startswith('roofline_sym.'))))")
    loaded = _run(code).split()
    assert {"roofline_sym.symbols", "roofline_sym.exports"} <= set(loaded)
    packages = [p.parent.name for p in Path(__file__).parents[1].glob("roofline_sym/*/__init__.py")]
    assert "model" in packages and not [m for m in loaded if m.split(".")[1] in packages]
    # a name loads its module; a model's LaTeX finds the output layer's writers,
    # which nothing imported before
    code = ("import sys, roofline_sym as rs; m = rs.linear('tensorwise'); "
            "print('roofline_sym.output.blocks' in sys.modules, m.latex()[:15], "
            "'roofline_sym.output.blocks' in sys.modules, rs.devices.__name__)")
    assert _run(code) == "False \\begin{aligned} True roofline_sym.devices"


@pytest.mark.parametrize("name", ["M", "K", "N"])
def test_shape_symbols_positive_not_integer(name):
    import roofline_sym as rs

    sym = getattr(rs, name)
    assert sym.is_positive and sym.is_integer is None


def test_module_attributes_load_lazily():
    code = ("import sys, roofline_sym as rs; before = 'roofline_sym.fidelity' in "
            "sys.modules; m = rs.fidelity; print(before, m.__name__, m.own_gpu.measure.__name__)")
    assert _run(code) == "False roofline_sym.fidelity measure"


def test_the_top_level_names_are_few_distinct_and_defined():
    import roofline_sym as rs

    assert len(rs.__all__) <= 34
    assert len(set(rs.__all__)) == len(rs.__all__)
    assert all(hasattr(rs, name) for name in rs.__all__)
    # one package down, not at the top
    assert not {"measure", "calibrate", "breakdown", "Table"} & set(rs.__all__)
    assert rs.devices.UnknownHardwareError and rs.model.MODES and rs.numeric.write_sweep
