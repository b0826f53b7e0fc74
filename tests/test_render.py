r"""LaTeX and tables: golden strings, structure, and everything compiles with pdflatex."""

import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import sympy

import roofline_sym as rs
from roofline_sym import output as R
from roofline_sym import symbols as S

sys.path.insert(0, str(Path(__file__).parent))
from latex_util import compile_latex, document, have_pdflatex  # noqa: E402

M, K, N, x = rs.M, rs.K, rs.N, rs.x
P8, E8 = S.peak_flops("fp8"), S.gemm_efficiency("fp8")
BW, EM, TL = S.mem_bw(), S.mem_efficiency(), S.launch_overhead()


# -- golden strings ---------------------------------------------------------------------
GOLDEN = [
    (2 * M * K * N / (P8 * E8), r"\frac{2 K M N}{P_{\mathrm{fp8}} \eta_{\mathrm{fp8}}}"),
    (sympy.Max(TL, 4 * K * M / (BW * EM), evaluate=False),
     r"\max\left(\frac{4 K M}{\mathrm{BW} \eta_{\mathrm{mem}}}, t_{\mathrm{launch}}\right)"),
    # GEMM terms before kernel terms, compute piece first inside max
    (TL + sympy.Max(2 * K * M * N / (P8 * E8), TL, evaluate=False),
     r"\max\left(\frac{2 K M N}{P_{\mathrm{fp8}} \eta_{\mathrm{fp8}}}, t_{\mathrm{launch}}\right)"
     r" + t_{\mathrm{launch}}"),
    # exact numbers: long round integers in powers of ten, never a long float
    (sympy.Rational(1, 500000), r"\frac{1}{5 \cdot 10^{5}}"),
    (K * M * N / 397244100000000, r"\frac{K M N}{3.972441 \cdot 10^{14}}"),
    (-sympy.Rational(7, 1000000), r"- \frac{7}{10^{6}}"),
    (4096 * M + 131072 + sympy.Rational(3, 2) * N, r"4096 M + \frac{3 N}{2} + 131072"),
    (sympy.Float(2.59262139949703e-15) * K * M * N, r"2.59262 \cdot 10^{-15} K M N"),
    (S.peak_flops("bf16") * S.gemm_efficiency("bf16"),
     r"P_{\mathrm{bf16}} \eta_{\mathrm{bf16}}"),
]


@pytest.mark.parametrize("expr, tex", GOLDEN)
def test_golden_latex(expr, tex):
    assert R.latex(expr) == tex


def test_latex_is_exported_and_the_same():
    assert rs.latex(2 * M) == R.latex(2 * M) == "2 M"


@pytest.mark.parametrize("attr, tex", [
    ("speedup", r"\frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp8}}}"),
    ("lowp_time", r"T^{\mathrm{gemm}}_{\mathrm{fp8}} + T^{\mathrm{ovhd}}_{\mathrm{fp8}}"),
])
def test_named_subexpressions(attr, tex):
    m = rs.linear("tensorwise", mode="inference", fuse=True)
    assert R.latex(getattr(m, attr), model=m) == tex
    # bound models too (named by structure, not by symbols)
    mb = m.on("h100")
    assert R.latex(getattr(mb, attr), model=mb) == tex


def test_fp4_recipes_name_their_side_fp4():
    m = rs.linear("mxfp4_cutlass")
    assert R.latex(m.speedup, model=m) == r"\frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp4}}}"


def test_bound_expressions_have_no_long_floats():
    # written out (.doit()): the terms' definitions, where the numbers are
    tex = R.latex(rs.linear("mxfp8_cublas", fuse=True).on("b200").speedup.doit())
    assert not re.search(r"\d\.\d{7,}", tex) and "e-" not in tex and "e+" not in tex
    assert r"\cdot 10^{" in tex


def test_gemm_terms_come_before_casts():
    m = rs.linear("tensorwise", fuse=True)
    tex = R.latex(m.lowp_time.doit())
    assert tex.index(r"P_{\mathrm{fp8}}") < tex.index(r"\eta_{\mathrm{transpose}}")
    # as names: GEMMs (output, then the backward ones), then kernels by tensor
    names = R.latex(m.lowp_time).split(" + ")
    assert names[:4] == [r"t^{\mathrm{fp8}}_{Y}", r"t^{\mathrm{fp8}}_{dX}", r"t^{\mathrm{fp8}}_{dW}",
                         r"t^{\mathrm{amax}}_{X}"]


# -- breakdown ---------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _model(recipe="tensorwise", mode="training", fuse=True, gpu=None):
    m = rs.linear(recipe, mode=mode, fuse=fuse)
    return m.on(gpu) if gpu else m


def test_breakdown_has_one_line_per_term_in_order():
    m = _model()
    tex = R.breakdown(m)
    lines = tex.splitlines()
    assert lines[0] == r"\begin{aligned}" and lines[-1] == r"\end{aligned}"
    term_lines = [ln for ln in lines if ln.startswith("t^{")]
    assert len(term_lines) == len(m.terms)
    # baseline first, then GEMMs before casts on the low-precision side
    heads = [ln.split(" &=")[0] for ln in term_lines]
    assert heads[:3] == [rf"t^{{\mathrm{{bf16}}}}_{{{g}}}" for g in ("Y", "dX", "dW")]
    assert all(h.startswith(r"t^{\mathrm{fp8}}") for h in heads[3:6])
    kernels = [k.name for role in ("input", "weight", "grad_output")
               for k in m.recipe.kernels[role]]
    assert [h.split("}}_")[0] for h in heads[6:]] == [
        r"t^{\mathrm{" + k.replace("_", r"\_") for k in kernels]
    # the speedup, then each side's time as the sum of its terms' names
    assert lines[1:3] == [r"S &= \frac{T_{\mathrm{bf16}}}{T_{\mathrm{fp8}}} \\",
                          r"T_{\mathrm{bf16}} &= " + " + ".join(heads[:3]) + r" \\"]
    assert lines[3].startswith(r"T_{\mathrm{fp8}} &= " + " + ".join(heads[3:6]))


def test_model_latex_and_repr_latex():
    m = _model(mode="inference")
    assert m.latex() == R.breakdown(m) == R.latex(m)
    assert m._repr_latex_().startswith(r"$\displaystyle \begin{aligned}")
    assert m._repr_latex_().endswith("$")


# -- break-even -------------------------------------------------------------------------------
def test_numeric_breakeven_golden():
    m = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    be = rs.breakeven(m, solve_for="M", K=8192, N=8192)
    assert be.latex() == "\n".join([
        r"\begin{aligned}",
        r"&\text{at } K = N = 8192 \\",
        r"M^{*} &\approx 1093.83 && \text{bf16 GEMMs: compute; fp8 GEMMs: compute; "
        r"casts: 5 launch, 5 memory} \\",
        r"\text{low precision is} &\begin{cases} \text{slower} & \text{if } M < 1093.83 \\ "
        r"\text{faster} & \text{if } M > 1093.83 \end{cases}",
        r"\end{aligned}",
    ])
    assert be._repr_latex_() == f"$\\displaystyle {be.latex()}$"


def test_symbolic_breakeven_has_closed_form_sign_and_conditions():
    be = rs.breakeven(_model(), solve_for="M")
    tex = be.latex()
    assert tex.startswith(r"\begin{aligned}" + "\nM^{*} &= \\frac{")
    assert r"M > M^{*} & \text{if } a > 0" in tex
    assert r"\text{valid while} &\begin{cases}" in tex
    # one cases row per distinct inequality (identical GEMMs share one; the fp8
    # output GEMM accumulates fast and the backward ones do not, so they differ)
    valid = tex.split(r"\text{valid while}")[1]
    assert valid.count(r"\geq") == 12 + valid.count(r"$\geq$")
    assert r"fp8 GEMM grad\_input, grad\_weight: compute $\geq$ launch" in tex
    assert r"bf16 GEMM output, grad\_input, grad\_weight: compute $\geq$ memory" in tex
    assert r"\text{valid while}" not in be.latex(conditions=False)


def test_numeric_cases_for_ties_and_two_roots():
    m = rs.linear("nvfp4", mode="inference", fuse=True, preset="torchao").on("NVIDIA B200")
    tex = rs.breakeven(m, solve_for="M", K=64, N=64).latex()
    assert tex.count(r"M^{*} &\approx") == 2
    assert (r"\text{equal} & \text{if } M < 48346.1 \\ \text{slower} & \text{if } "
            r"48346.1 < M < 64131.3 \\ \text{faster}") in tex


def test_always_and_never():
    always = rs.breakeven(_model(mode="inference", gpu="h100"), solve_for="M",
                          K=65536, N=65536)
    never = rs.breakeven(_model("mxfp8_cublas", gpu="b200"), solve_for="M", K=256, N=256)
    assert r"\text{faster} & \text{for all } M > 0" in always.latex()
    assert r"\text{slower} & \text{for all } M > 0" in never.latex()
    table = R.breakeven_table([always, never], fmt="markdown")
    assert table.splitlines()[2:] == [
        "| tensorwise | H100 SXM | none | - | always | K = N = 65536 |",
        "| mxfp8_cublas | B200 (HGX) | none | - | never | K = N = 256 |",
        "",
        "*preset default, casts fused, dataset default, workload linear*",
    ]


def test_hardware_variable_breakeven():
    be = rs.breakeven(rs.linear("mxfp8_cublas", fuse=True, preset="torchao"), solve_for="BW",
                      M=4096, K=4096, N=4096, hardware="NVIDIA B200")
    tex = be.latex()
    assert r"\mathrm{BW}^{*} &\approx 2.17338 \cdot 10^{12}" in tex
    assert r"\text{if } \mathrm{BW} > 2.17338 \cdot 10^{12}" in tex


# -- tables ---------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _rows():
    # torchao's model and table: goldens that do not move with this model's calibration
    return tuple(R.breakeven_rows(["tensorwise", "mxfp4_cutlass"], ["NVIDIA H100", "NVIDIA B200"],
                                  preset="torchao"))


def test_markdown_table_golden():
    assert R.breakeven_table(list(_rows()), fmt="markdown") == "\n".join([
        "| recipe | GPU | x* | regime at x* (GEMMs / casts) | faster | solved at |",
        "|:---|:---|---:|:---|:---|:---|",
        "| tensorwise | NVIDIA H100 | 2563 | compute / memory | x > 2563 | M = K = N = x |",
        "| tensorwise | NVIDIA B200 | 2390 | compute / memory+launch | x > 2390 | M = K = N = x |",
        "| mxfp4_cutlass | NVIDIA H100 | n/a | n/a | n/a |  |",
        "| mxfp4_cutlass | NVIDIA B200 | 1740 | compute+launch / launch | x > 1740 | "
        "M = K = N = x |",
        "",
        "*preset torchao, casts not fused, dataset torchao, workload linear*",
    ])
    assert R.breakeven_table(list(_rows()), fmt="markdown", layout="grid") == "\n".join([
        "| recipe (x*) | NVIDIA H100 | NVIDIA B200 |",
        "|:---|---:|---:|",
        "| tensorwise | 2563 | 2390 |",
        "| mxfp4_cutlass | n/a | 1740 |",
        "",
        "*preset torchao, casts not fused, dataset torchao, workload linear*",
    ])


def test_latex_table_is_booktabs_and_escaped():
    tex = R.breakeven_table(list(_rows()), fmt="latex", layout="long")
    lines = tex.splitlines()
    assert lines[0] == r"\begin{tabular}{llrlll}" and lines[-1] == r"\end{tabular}"
    assert [r"\toprule", r"\midrule", r"\bottomrule"] == [
        ln for ln in lines if ln in (r"\toprule", r"\midrule", r"\bottomrule")]
    assert r"mxfp4\_cutlass & NVIDIA B200 & 1740 & compute+launch / launch & $x$ $>$ 1740 & " \
           r"$M = K = N = x$ \\" in lines


def test_table_inputs():
    be = _rows()[0].result
    by_mapping = R.breakeven_table({("tensorwise", "H100"): be}, fmt="markdown")
    assert "| tensorwise | H100 | 2563 |" in by_mapping
    with pytest.raises(ValueError, match="symbolic"):
        R.breakeven_table([rs.breakeven(_model(), solve_for="M")])
    with pytest.raises(ValueError, match="fmt"):
        R.breakeven_table([be], fmt="html")
    with pytest.raises(ValueError, match="BreakEven"):
        R.breakeven_table([("a", "b", 3)])


# -- everything compiles -----------------------------------------------------------------------------
def _all_outputs():
    m = _model("mxfp8_cublas")
    mb = _model("mxfp8_cublas", gpu="b200")
    inf = _model("tensorwise", mode="inference", gpu="h100")
    math = [
        *(R.latex(e) for e, _ in GOLDEN),
        R.latex(m.speedup, model=m), R.latex(mb.speedup), R.latex(mb.lowp_time, model=mb),
        m.latex(), mb.latex(), inf.latex(),
        rs.breakeven(m, solve_for="M").latex(),
        rs.breakeven(_model(), solve_for="M", K=4096).latex(),
        rs.breakeven(mb, along="cube").latex(),
        rs.breakeven(mb, solve_for="M", K=4096, N=4096).latex(),
        rs.breakeven(inf, solve_for="M", K=65536, N=65536).latex(),
        rs.breakeven(rs.linear("nvfp4", mode="inference", fuse=True, preset="torchao")
                     .on("NVIDIA B200"), solve_for="M", K=64, N=64).latex(),
        rs.breakeven(m, solve_for="BW", M=4096, K=4096, N=4096, hardware="b200").latex(),
    ]
    rows = list(_rows())
    tables = [R.breakeven_table(rows), R.breakeven_table(rows, layout="grid"),
              R.breakeven_table(rows, layout="long")]
    markdown = [R.breakeven_table(rows, fmt="markdown"),
                R.breakeven_table(rows, fmt="markdown", layout="grid")]
    return math, tables, markdown


@pytest.mark.skipif(not have_pdflatex(), reason="pdflatex not on PATH")
def test_everything_compiles_with_pdflatex(tmp_path):
    math, tables, markdown = _all_outputs()
    # Markdown goes in verbatim: it must not break a LaTeX document either
    verbatim = ["\\begin{verbatim}\n" + md + "\n\\end{verbatim}" for md in markdown]
    result = compile_latex(document(math, tables + verbatim), tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def test_docs_examples_run():
    from latex_util import doc_blocks

    blocks = doc_blocks(Path(__file__).parents[1] / "docs" / "render.md")
    assert len(blocks) >= 5
    scope: dict = {}
    for block in blocks:
        if "plot." not in block:
            exec(compile(block, "docs/render.md", "exec"), scope)
    assert "T_{\\mathrm{bf16}}" in scope["rs"].latex(scope["m"].speedup, model=scope["m"])


# -- one notation in every printer ------------------------------------------------------
ALL_HARDWARE_SYMBOLS = sorted(
    ["BW", "eta_mem", "t_launch", "t_host"]
    + [f"{p}_{d}" for p in ("P", "eta", "kappa_grouped", "kappa_accum")
       for d in ("bf16", "fp16", "fp8", "fp4")]
    + [f"{p}_{k}" for p in ("eta", "t0") for k in S.KERNEL_KINDS]
    + [f"kappa_{f}" for f in S.SCALING_FAMILIES]
    + [f"t0_{c}" for c in S.GEMM_CLASSES]
    + [f"{p}_{s}" for p in ("BW", "eta") for s in S.LINK_SCOPES])


@pytest.mark.parametrize("name", ALL_HARDWARE_SYMBOLS)
def test_sympy_and_rs_latex_write_a_symbol_alike(name):
    sym = S.hardware_symbol(name)
    assert sympy.latex(sym) == rs.latex(sym) == S.latex_name(sym)
    # a name SymPy would write by itself (P_{fp8}, t_{0 fp8 rowwise}) never shows
    assert r"\mathrm" in sympy.latex(sym) or sym.name.startswith(("eta", "kappa"))


def test_a_model_prints_its_symbols_alike_in_sympy_and_rs_latex():
    # the hardware entries' every symbol, in one model's expressions
    hw_symbols = set(rs.hardware("h100").parameters)
    assert {s.name for s in hw_symbols} <= set(ALL_HARDWARE_SYMBOLS)
    expr = rs.linear("rowwise", mode="training").lowp_time.doit()
    ours, theirs = rs.latex(expr), sympy.latex(expr)
    for sym in expr.free_symbols - set(rs.M.free_symbols | rs.K.free_symbols | rs.N.free_symbols):
        assert S.latex_name(sym) in ours and S.latex_name(sym) in theirs



# -- a break-even table fits a paper's column ----------------------------------------------
def _wide_rows():
    # long recipe and GPU names, a GPU that cannot run one: the widest common case
    return R.breakeven_rows(["tensorwise", "mxfp8_32x32_flexible_gemm_layout", "rowwise"],
                            ["NVIDIA H100", "NVIDIA B200"], preset="torchao")


def test_the_default_table_fits_a_column_and_a_wide_one_keeps_the_long_layout():
    from roofline_sym.output.layout import width_pt
    from roofline_sym.output.breakeven_tables import tabular_width

    rows = _wide_rows()
    long = R.breakeven_table(rows, layout="long")
    assert tabular_width(long) > width_pt(r"\columnwidth") + 150  # the long layout: far too wide
    tex = R.breakeven_table(rows)  # layout="auto", width=\columnwidth
    assert tex.splitlines()[0] == r"\begin{tabular}{@{}llrl@{}}"
    assert tabular_width(tex) <= width_pt(r"\columnwidth")
    # every row is still named, and the shape and options moved under the table
    assert tex.count(r"\\") > len(rows) and r"flexible\_" in tex and "$M = K = N = x$" in tex
    assert "C / M" in tex and "preset torchao" in tex
    assert R.breakeven_table(rows, width="700pt") == long
    assert R.breakeven_table(rows, layout="column") == tex
    with pytest.raises(ValueError, match="column"):
        R.breakeven_table(rows, fmt="markdown", layout="column")


@pytest.mark.skipif(not have_pdflatex(), reason="pdflatex not on PATH")
def test_the_default_table_fits_a_two_column_articles_column_in_a_float(tmp_path):
    from roofline_sym.output.breakeven_tables import tabular_width

    tables = [R.breakeven_table(_wide_rows()), R.breakeven_table(list(_rows())),
              R.breakeven_table(R.breakeven_rows(["tensorwise"], ["NVIDIA H100"],
                                                 preset="torchao", solve_for="M", K=8192,
                                                 N=8192))]
    body = "\n".join(
        rf"\begin{{table}}\centering {t}\caption{{Break-even}}\end{{table}}"
        rf"\setbox0=\hbox{{{t}}}\typeout{{WIDTH={i}=\the\wd0}}" for i, t in enumerate(tables))
    source = ("\\documentclass[twocolumn]{article}\n\\usepackage{amsmath}\n"
              "\\usepackage{booktabs}\n\\begin{document}\n" + body + "\nText.\n\\end{document}\n")
    result = compile_latex(source, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Overfull" not in result.stdout
    widths = {int(i): float(w) for i, w in re.findall(r"WIDTH=(\d)=([\d.]+)pt", result.stdout)}
    for i, t in enumerate(tables):
        # TeX's width within the column; the estimate errs wide, by little
        assert widths[i] <= 229.5 and widths[i] <= tabular_width(t) <= 1.15 * widths[i] + 5
