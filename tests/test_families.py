"""The scaling families live in one registry (roofline_sym/families.py)."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import roofline_sym as rs
from roofline_sym import families
from roofline_sym import symbols as S
from roofline_sym.devices.hardware_entry import BLOCK_SCALINGS

PACKAGE = Path(rs.__file__).parent


def _spelled_lists(tree: ast.AST) -> list[int]:
    """Lines of tuple, list and set literals that spell out scaling families:
    three or more family names, or a block-scaled one beside another (two
    names alone may be recipes named like their family: ("tensorwise", "rowwise"))."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = {e.value for e in node.elts
                     if isinstance(e, ast.Constant) and e.value in families.NAMES}
            if len(named) >= 3 or (len(named) >= 2 and named & set(families.BLOCK_SCALED)):
                out.append(node.lineno)
    return out


def test_only_the_registry_spells_the_families():
    places = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py"))
              if (lines := _spelled_lists(ast.parse(p.read_text("utf-8"))))}
    # the registry names them one entry each, in Family(...) calls, not in a list
    assert places == {}, places
    # ... and the oracle sees a list where there is one
    assert _spelled_lists(ast.parse('x = ("mx", "nvfp4")')) == [1]
    assert _spelled_lists(ast.parse('x = ("tensorwise", "rowwise")')) == []


def test_every_reader_takes_the_registry():
    assert S.SCALING_FAMILIES == families.NAMES == (
        "tensorwise", "rowwise", "blockwise", "mx", "nvfp4")
    assert BLOCK_SCALINGS == families.BLOCK_SCALED == ("mx", "nvfp4")
    # one GEMM class per (dtype, family), dense and grouped, beside bf16 and fp16
    assert len(S.GEMM_CLASSES) == 2 * (2 + sum(len(f.dtypes) for f in families.FAMILIES))
    assert families.family_of("blockwise_128x128") == "blockwise"
    # the scaling schemes the formats price (variants of a family: mx_32x32,
    # blockwise_128x128) keep their family's scale format and, where the scheme
    # is the family's own, its block
    from roofline_sym.model.formats import SCALINGS

    for name, scheme in SCALINGS.items():
        family = next(f for f in families.FAMILIES if f.name == families.family_of(name))
        assert scheme.scale.name == family.scale, name
        if name == family.name or name == "blockwise_1x128":
            assert scheme.block == family.block, name


NEW_FAMILY = '''    Family("mxfp6", ("fp8",), "e8m0", (1, 32), block_scaled=True),
'''
USE_IT = r'''
import sympy
import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.model.term import Work, roofline_pieces

assert "mxfp6" in S.SCALING_FAMILIES and "fp8_mxfp6" in S.GEMM_CLASSES
# its pricing: a rate factor and a fixed time on a GPU that runs it
hw = rs.hardware("b200").replace(
    block_scaling=("mx", "nvfp4", "mxfp6"),
    scaling_efficiency={"mxfp6": 0.5}, gemm_fixed_s={"bf16": 4e-6, "fp8_mxfp6": 6e-6})
assert hw.parameters[S.scaling_efficiency("mxfp6")] == sympy.Rational(1, 2)
work = Work(2 * S.M * S.K * S.N, "fp8", 0, scaling="mxfp6")
t = sympy.Max(*(e for _, e in roofline_pieces(work, efficiency="size"))).xreplace(
    hw.parameters).subs({S.M: 8192, S.K: 8192, S.N: 8192})
big = 2 * 8192 ** 3 / (hw.peak_flops["fp8"] * hw.gemm_efficiency["fp8"] / 2)
print(float(t / big))
'''


def test_a_new_family_is_one_registry_entry(tmp_path):
    copy = tmp_path / "roofline_sym"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    registry = copy / "families.py"
    text = registry.read_text("utf-8")
    anchor = '    Family("nvfp4",'
    registry.write_text(text.replace(anchor, NEW_FAMILY + anchor, 1), "utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", USE_IT], env=env, capture_output=True,
                         text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    # a large GEMM at half its dtype's rate: its time over that of the plain rate's
    # half is 1 plus the fixed time's share (6 us of about 1.1 ms)
    assert 1.0 < float(out.stdout) < 1.01
