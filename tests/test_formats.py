"""Element formats and scalings: exact sizes, lookups, lazy torch mapping."""

import subprocess
import sys

import pytest
import sympy

from roofline_sym.model.formats import ELEMENTS, element, scaling


@pytest.mark.parametrize("name, nbytes, compute", [
    ("fp32", 4, "fp32"), ("bf16", 2, "bf16"), ("fp16", 2, "fp16"),
    ("fp8_e4m3", 1, "fp8"), ("fp8_e5m2", 1, "fp8"),
    ("fp4_e2m1", sympy.Rational(1, 2), "fp4"), ("e8m0", 1, None),
])
def test_element_sizes_are_exact(name, nbytes, compute):
    f = element(name)
    assert f.bytes == nbytes and isinstance(f.bytes, sympy.Rational)
    assert f.compute == compute


@pytest.mark.parametrize("alias, name", [
    ("e4m3", "fp8_e4m3"), ("float8_e4m3fn", "fp8_e4m3"), ("FP4", "fp4_e2m1"),
    ("bfloat16", "bf16"), ("float8_e8m0fnu", "e8m0"),
])
def test_aliases(alias, name):
    assert element(alias).name == name


def test_unknown_names_list_known():
    with pytest.raises(ValueError, match="valid: fp32"):
        element("fp6")
    with pytest.raises(ValueError, match="tensorwise"):
        scaling("per-channel")


@pytest.mark.parametrize("name, block, scale", [
    ("mx", (1, 32), "e8m0"), ("nvfp4", (1, 16), "fp8_e4m3"),
    ("blockwise_1x128", (1, 128), "fp32"), ("blockwise_128x128", (128, 128), "fp32"),
    ("rowwise", (1, None), "fp32"), ("tensorwise", (None, None), "fp32"),
])
def test_scaling_blocks(name, block, scale):
    s = scaling(name)
    assert s.block == block and s.scale.name == scale


def test_nvfp4_has_fp32_global_scale():
    assert scaling("nvfp4").global_scale.name == "fp32"


def test_torch_dtypes_when_torch_is_installed():
    torch = pytest.importorskip("torch")
    assert element("bf16").torch_dtype() is torch.bfloat16
    assert element("fp8_e4m3").torch_dtype() is torch.float8_e4m3fn
    assert element("fp4_e2m1").torch_dtype() is torch.float4_e2m1fn_x2


def test_formats_module_does_not_import_torch():
    code = ("import sys, roofline_sym.model.formats as f; f.element('bf16').bytes;"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_element_has_a_torch_name():
    assert all(f.torch_name for f in ELEMENTS.values())
