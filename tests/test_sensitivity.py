"""Elasticities of the speedup to the hardware numbers, checked against finite
differences of ``evaluate`` with one hardware value perturbed."""

import math

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym.cli import main

CASES = [("tensorwise", "training", "default", "h100", (4096, 8192, 8192)),
         ("mxfp8_cublas", "training", "default", "b200", (512, 4096, 14336)),
         ("rowwise", "inference", "torchao", "NVIDIA H100", (16, 8192, 8192)),
         ("dynamic", "training", "seed", "NVIDIA H100", (8192, 8192, 8192))]


def _log_speedup(model, shape, values):
    names = {str(s): float(v) for s, v in values.items()}
    return math.log(float(model.evaluate(*shape, outputs=("speedup",), **names)["speedup"]))


@pytest.mark.parametrize("recipe, mode, preset, gpu, shape", CASES)
def test_elasticities_are_the_slopes_of_log_speedup(recipe, mode, preset, gpu, shape):
    m = rs.linear(recipe, mode=mode, preset=preset)
    got = rs.sensitivity(m, at=shape, hardware=gpu)
    assert got == pytest.approx(rs.sensitivity(m.on(gpu), at=shape))  # bound: the same
    values = m.on(gpu).hardware.values_for(m.free_hardware_symbols)
    assert list(got) == sorted(m.free_hardware_symbols, key=str)
    h = 1e-5
    for x, e in got.items():
        # central difference in ln x: x e^(+-h)
        up = _log_speedup(m, shape, {**values, x: values[x] * math.exp(h)})
        down = _log_speedup(m, shape, {**values, x: values[x] * math.exp(-h)})
        assert e == pytest.approx((up - down) / (2 * h), abs=1e-6), x


def test_arrays_along_m_match_points_and_symbolic_forms_substitute():
    mb = rs.linear("tensorwise").on("h100")
    ms = np.array([256.0, 2048.0, 16384.0])
    along = rs.sensitivity(mb, at=(ms, 8192, 8192))
    for i, m_value in enumerate(ms):
        point = rs.sensitivity(mb, at=(m_value, 8192, 8192))
        for x, e in point.items():
            assert along[x][i] == pytest.approx(e, rel=1e-9, abs=1e-12)
    symbolic = rs.sensitivity(rs.linear("tensorwise"))  # hardware symbols free
    x = next(s for s in symbolic if str(s) == "BW")
    at = {rs.M: 2048, rs.K: 8192, rs.N: 8192, **mb.hardware.parameters}
    assert float(symbolic[x].xreplace(at)) == pytest.approx(along[x][1], rel=1e-9)


def test_bad_input_is_refused():
    m = rs.linear("rowwise")
    with pytest.raises(ValueError, match="hardware"):
        rs.sensitivity(m, at=(1, 2, 3))
    with pytest.raises(ValueError, match="already bound"):
        rs.sensitivity(m.on("h100"), at=(1, 2, 3), hardware="h200")
    with pytest.raises(TypeError, match="shape"):
        rs.sensitivity(m.on("h100"), at="8192,8192,8192")
    with pytest.raises(ValueError):
        rs.sensitivity(m.on("h100"), at=(-1, 2, 3))
    with pytest.raises(TypeError, match="rs.linear"):
        rs.sensitivity(sympy.Symbol("x"), at=(1, 2, 3))


def test_cli_prints_the_largest_first(capsys):
    assert main(["sensitivity", "--gpu", "h100", "--recipe", "rowwise",
                 "--shape", "8192,8192,8192"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in out if ln and ln.split()[0] in {"P_bf16", "BW", "t_launch"}]
    assert rows and all(len(r) >= 2 for r in rows)
    numbers = [abs(float(ln.split()[-1])) for ln in out[2:] if ln.strip()]
    assert numbers == sorted(numbers, reverse=True)
    assert main(["sensitivity", "--gpu", "h100", "--recipe", "rowwise", "--json"]) == 0
