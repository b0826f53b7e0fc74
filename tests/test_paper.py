r"""Paper-ready LaTeX: complete blocks that fit a column, numbers a paper prints.

Every block is compiled with pdflatex in ``\documentclass[twocolumn]{article}``
and the log is read for "Overfull \hbox" (more than 1 pt fails the test).
"""

import bisect
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.output.layout import measure, width_pt

sys.path.insert(0, str(Path(__file__).parent))
from latex_util import compile_latex, have_pdflatex, overfull, twocolumn  # noqa: E402

COLUMN = r"\columnwidth"


@lru_cache(maxsize=None)
def _model(recipe, mode="training", fuse=True, gpu=None, preset="default"):
    m = rs.linear(recipe, mode=mode, fuse=fuse, preset=preset)
    return m.on(gpu) if gpu else m


# (label, block): speedups, overhead times, breakdowns, break-evens (numeric and symbolic)
@lru_cache(maxsize=None)
def _blocks(width=COLUMN):
    out = []
    # per-tensor scales, block scales with ceilings, fp4, inference; fused and not
    for recipe, mode, fuse, gpus in (("tensorwise", "training", False, (None, "h100")),
                                     ("tensorwise", "training", True, (None, "h100")),
                                     ("blockwise", "training", False, ("h100",)),
                                     ("mxfp8_cublas", "training", False, (None,)),
                                     ("nvfp4", "inference", True, (None, "b200")),
                                     ("mxfp8", "inference", False, (None, "b200"))):
        for m in (_model(recipe, mode, fuse, gpu) for gpu in gpus):
            tag = f"{recipe} {mode} fuse={fuse} {m.hardware.name if m.hardware else 'symbolic'}"
            out += [(f"{tag}: speedup", rs.latex(m.speedup, width=width)),
                    (f"{tag}: speedup, model names", rs.latex(m.speedup, model=m, width=width)),
                    (f"{tag}: overhead", rs.latex(m.lowp_overhead_time, width=width)),
                    (f"{tag}: overhead, model names",
                     rs.latex(m.lowp_overhead_time, model=m, width=width))]
    sym, bound = _model("tensorwise"), _model("tensorwise", gpu="h100")
    mx = _model("mxfp8_cublas", gpu="b200")
    out += [
        ("breakdown, bound", rs.latex(bound, width=width)),
        ("breakdown, symbolic", _model("mxfp8_cublas").latex(width=width)),
        ("break-even, symbolic", rs.breakeven(sym, solve_for="M").latex(width=width)),
        ("break-even, bound", rs.breakeven(bound, solve_for="M").latex(width=width)),
        ("break-even, bound, K fixed",
         rs.breakeven(bound, solve_for="M", K=4096).latex(width=width)),
        ("break-even, bound, block counts", rs.breakeven(mx, solve_for="M").latex(width=width)),
        ("break-even, seed preset",
         rs.breakeven(_model("dynamic", preset="seed"), solve_for="M").latex(width=width)),
        ("break-even, numeric M", rs.breakeven(bound, solve_for="M", K=8192, N=8192)
         .latex(width=width)),
        ("break-even, numeric cube", rs.breakeven(mx, along="cube").latex(width=width)),
        ("break-even, two roots and a tie", rs.breakeven(
            _model("nvfp4", "inference", preset="torchao", gpu="NVIDIA B200"), solve_for="M",
            K=64, N=64).latex(width=width)),
        ("break-even, always", rs.breakeven(_model("tensorwise", "inference", gpu="h100"),
                                            solve_for="M", K=65536, N=65536).latex(width=width)),
        ("break-even, bandwidth", rs.breakeven(_model("mxfp8_cublas"), solve_for="BW", M=4096,
                                               K=4096, N=4096, hardware="b200")
         .latex(width=width)),
    ]
    return tuple(out)


def _number_problems(tex: str) -> list[str]:
    """Numbers a paper would not print: 8 or more digits, or more than 4 decimals."""
    words = re.sub(r"\\(text|mathrm)\{[^}]*\}|\\[A-Za-z]+", " ", tex)
    return [n for n in re.findall(r"\d+(?:\.\d+)?", words)
            if len(n.split(".")[0]) >= 8 or len(n.partition(".")[2]) > 4]


@pytest.mark.skipif(not have_pdflatex(), reason="pdflatex not on PATH")
def test_every_block_fits_a_column_of_a_two_column_article(tmp_path):
    labels, blocks = zip(*_blocks())
    source, starts = twocolumn(blocks, rs.latex_preamble())
    result = compile_latex(source, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    log = (tmp_path / "doc.log").read_text()
    wide = [(pt, labels[bisect.bisect_right(starts, line) - 1]) for pt, line in overfull(log)]
    assert not [w for w in wide if w[0] > 1.0], wide


@pytest.mark.parametrize("label, block", _blocks(), ids=[b[0] for b in _blocks()])
def test_blocks_are_complete_and_print_short_numbers(label, block):
    assert block.startswith("\\begin{align*}\n") and block.endswith("\n\\end{align*}")
    assert not _number_problems(block), _number_problems(block)


def test_numbers_rounded_to_the_digits_asked():
    # torchao's model and table: goldens that do not move with this model's calibration
    m = _model("tensorwise", fuse=False, gpu="NVIDIA H100", preset="torchao")
    four = rs.breakeven(m, solve_for="M", K=8192, N=8192).latex(width=COLUMN)
    six = rs.breakeven(m, solve_for="M", K=8192, N=8192).latex(width=COLUMN, digits=6)
    assert r"M^{*} &\approx 1150 " in four and r"M^{*} &\approx 1150.31 " in six
    closed = rs.breakeven(m, solve_for="M").latex(width=COLUMN)
    assert closed.splitlines()[1:3] == [
        r"M^{*} &= 931.2 \frac{K N + 1.656 \cdot 10^{6}}{K N - 698.4 \left(K + N\right)} \\",
        r"a &= 3.891 \cdot 10^{-15} \left(K N - 698.4 \left(K + N\right)\right) \\"]


def test_symbolic_formulas_keep_their_symbols():
    tex = rs.breakeven(_model("tensorwise"), solve_for="M").latex(width=COLUMN)
    assert tex.splitlines()[1] == r"M^{*} &= \frac{b}{a} \\"
    assert r"P_{\mathrm{fp8}} \eta_{\mathrm{fp8}}" in tex and r"t_{\mathrm{launch}}" in tex
    assert r"precision is faster where $a\,(M - M^{*}) > 0$" in tex


def test_long_parts_are_named_and_defined_below():
    m = _model("tensorwise", gpu="h100")
    named = rs.latex(m.speedup, model=m, width=COLUMN).splitlines()
    assert named[1] == r"S &= \frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp8}}} \\"
    bf16 = [rf"t^{{\mathrm{{bf16}}}}_{{{g}}}" for g in ("Y", "dX", "dW")]
    assert named[2] == r"\intertext{where} T_{\mathrm{bf16}} &= " + " + ".join(bf16) + r" \\"
    # every term is defined below, once: one row starts with each name
    heads = [row.split(" &=")[0] for row in named]
    assert all(heads.count(rs.latex(t.time)) == 1 for t in m.terms)
    generic = rs.latex(m.speedup, width=COLUMN).splitlines()
    # the bf16 sum fits the line; the long fp8 sum is named
    assert generic[1] == r"&\frac{" + " + ".join(bf16) + r"}{E_{1}} \\"


def test_without_width_the_inline_latex_is_unchanged():
    m = _model("tensorwise", mode="inference")
    assert rs.latex(m.speedup, model=m) == r"\frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp8}}}"
    assert m.latex().startswith(r"\begin{aligned}")


@pytest.mark.parametrize("spec, points", [
    (r"\columnwidth", 229.5), (r"0.5\textwidth", 172.5), ("8.4cm", 239.0), ("240pt", 240.0),
    (300, 300.0), (r"\linewidth", 229.5)])
def test_widths(spec, points):
    assert width_pt(spec) == pytest.approx(points, abs=0.1)


@pytest.mark.parametrize("spec", ["", "wide", r"\paperwidth", "-3pt", "0pt", 0])
def test_bad_widths_say_what_to_write(spec):
    with pytest.raises(ValueError, match="width"):
        width_pt(spec)


def test_measure_errs_wide_but_not_far():
    # pdflatex: 36.5 pt and 90.1 pt; the layout adds 4 % and a margin of 3 pt
    assert 36.5 <= measure(r"\frac{2 K M N}{P_{\mathrm{fp8}} \eta_{\mathrm{fp8}}}") < 42
    assert 89 <= measure(r"\frac{K M + K N + 2 M N}{3.082 \cdot 10^{12}}") < 98


def test_preamble_lists_the_packages():
    pre = rs.latex_preamble()
    assert r"\usepackage{amsmath}" in pre and r"\usepackage{booktabs}" in pre


def test_formula_latex_prints_complete_blocks(capsys):
    assert main(["formula", "--recipe", "tensorwise", "--latex"]) == 0
    out = capsys.readouterr().out
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 7
    assert all(b.startswith("\\begin{align*}") and b.endswith("\\end{align*}") for b in blocks)
    assert blocks[-1].splitlines()[1].startswith(r"S &= \frac{T_{\mathrm{bf16}}}")
    assert main(["formula", "--recipe", "tensorwise", "--gpu", "h100", "--breakeven", "--latex",
                 "--at", "K=8192,N=8192"]) == 0
    assert re.search(r"M\^\{\*\} &\\approx \d+", capsys.readouterr().out)
    assert main(["formula", "--latex", "--width", "wide"]) == 2
    assert "width 'wide'" in capsys.readouterr().err
