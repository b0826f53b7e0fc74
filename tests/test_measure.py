"""The measurement harness without a GPU: grid, components, loop, CSV, budget."""

import io
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.fidelity.own_gpu import components, cuda, timing as ms
from roofline_sym.fidelity.own_gpu import measurement_file as mfile
from roofline_sym.fidelity.own_gpu.hardware_fit import hardware_values
from roofline_sym.fidelity.own_gpu.components import COMPONENTS, Case
from roofline_sym.fidelity.own_gpu.measurement_file import COLUMNS, parse_csv
from roofline_sym.fidelity.own_gpu.timing import RepeatPolicy

H200 = hardware_values(rs.hardware("h200"))


# -- components ------------------------------------------------------------------------
def test_every_cast_kernel_of_the_measured_recipes_has_an_implementation():
    casts = [c for c in COMPONENTS if c.startswith("cast.")]
    used = set()
    for comp in casts:
        _, r, role, kernel = comp.split(".")
        used.add((r, "weight" if role == "weight" else "act", kernel))
        Case(comp, 64, 32, 48).op  # resolves, or says which kernel has no implementation
    assert used == set(components.CAST_IMPLS), "CAST_IMPLS has stale or missing kernels"
    n_kernels = sum(len(ks) for r in components.CAST_RECIPES
                    for ks in rs.linear(r, fuse=False).recipe.kernels.values())
    # tensorwise: amax, amax_final and casts, 3 + 4 + 3; rowwise: a row cast, a
    # column amax and a column cast per tensor (3 x 3) and two rescales, each a
    # scale product and the in-place multiply (2 x 2)
    assert len(casts) == n_kernels == 23


@pytest.mark.parametrize("component, op", [
    ("gemm.bf16.output", ("gemm", "bf16", 16, 32, 48, None)),
    ("gemm.fp8_tensorwise.output", ("gemm", "fp8_tensorwise", 16, 32, 48, True)),
    ("gemm.fp8_tensorwise.grad_input", ("gemm", "fp8_tensorwise", 16, 48, 32, False)),
    ("gemm.fp8_rowwise.grad_weight", ("gemm", "fp8_rowwise", 32, 16, 48, False)),
    ("cast.tensorwise.input.amax", ("amax", 16, 32)),
    ("cast.tensorwise.weight.cast_dim1", ("tw_cast_t", 32, 48)),
    ("cast.tensorwise.grad_output.cast_dim0_dim1", ("tw_cast_dim0_dim1", 16, 48)),
    ("cast.rowwise.input.amax_cols", ("rw_amax_cols", 16, 32)),
    ("cast.rowwise.input.cast_cols", ("rw_cast_cols", 16, 32)),
    ("cast.rowwise.weight.amax_cols", ("rw_amax_cols", 32, 48)),
    ("cast.rowwise.weight.cast_rows", ("rw_cast_cols", 32, 48)),
    ("cast.rowwise.weight.cast_cols", ("rw_rows", 32, 48)),
    ("cast.rowwise.grad_weight.rescale", ("rescale", 32, 48)),
    ("micro.copy", ("copy", 16)),
    ("micro.launch", ("launch",)),
])
def test_case_op_follows_the_training_layouts(component, op):
    # output (M, K, N), grad_input (M, N, K), grad_weight (K, M, N)
    assert Case(component, 16, 32, 48).op == op


@pytest.mark.parametrize("shape", [(4096, 8192, 1024), (512, 512, 512), (16, 16, 16)])
def test_model_times_equal_the_linear_models_terms(shape):
    M, K, N = shape
    comps = [c for c in COMPONENTS if not c.startswith("micro.")]
    d, f, b = components.costs(comps, M, K, N)
    times = components.model_times(d, f, b, H200)
    for comp, t in zip(comps, times):
        term = components.model_term(comp).xreplace(rs.hardware("h200").parameters)
        expected = float(term.expr.subs({rs.M: M, rs.K: K, rs.N: N}))
        assert t == pytest.approx(expected, rel=1e-12), comp


def test_components_compose_to_the_models_speedup():
    M, K, N = np.array([[512.0, 4096, 16384], [512, 8192, 8192], [512, 1024, 28672]])
    for recipe in components.CAST_RECIPES:
        lowp = [f"gemm.fp8_{recipe}.{g}" for g in components.GEMM_NAMES] + [
            c for c in COMPONENTS if c.startswith(f"cast.{recipe}.")]
        base = [f"gemm.bf16.{g}" for g in components.GEMM_NAMES]

        def total(comps):
            return sum(components.model_times(*components.costs([c] * 3, M, K, N), H200) for c in comps)

        want = rs.linear(recipe, fuse=False, efficiency="flat").on(
            rs.hardware("h200")).evaluate(M, K, N)["speedup"]
        np.testing.assert_allclose(total(base) / total(lowp), want, rtol=1e-12)


def test_unknown_component_and_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="unknown component 'gemm.fp4.output'"):
        Case("gemm.fp4.output", 1, 1, 1)
    with pytest.raises(ValueError, match="M must be a positive integer"):
        Case("micro.launch", 0, 1, 1)
    with pytest.raises(ValueError, match="K must be a positive integer"):
        Case("micro.launch", 1, 1.5, 1)


# -- the grid -----------------------------------------------------------------------------
def test_default_grid_has_the_issue_shapes_and_every_component():
    cases = ms.grid("default")
    shapes = {(c.M, c.K, c.N) for c in cases if c.kind != "micro"}
    cubes = {(x, x, x) for x in (512, 1024, 2048, 4096, 8192, 16384)}
    llama = {(m, k, n) for m in (8192, 16384)
             for k, n in ((8192, 8192), (8192, 1024), (8192, 28672), (28672, 8192))}
    assert shapes == cubes | llama
    layer = [c for c in COMPONENTS if not c.startswith("micro.")]
    for shape in shapes:
        assert sorted(c.component for c in cases if (c.M, c.K, c.N) == shape) == sorted(layer)
    assert len({(c.component, c.M, c.K, c.N) for c in cases}) == len(cases)
    micro = [c for c in cases if c.kind == "micro"]
    assert [c.component for c in micro].count("micro.launch") == 1
    assert len(micro) == 1 + len(ms.COPY_ELEMENTS)
    # the Llama q/o layer at M = 8192 is cube-8192: one shape, both names
    both = next(c for c in cases if (c.M, c.K, c.N) == (8192, 8192, 8192))
    assert both.shape == "cube-8192|llama3-70b.self_attn.q_proj+self_attn.o_proj@8192" and both.shape_set == "cube|llama3-70b"


def test_llama3_70b_layers():
    # q and o 8192 -> 8192; GQA with 8 KV heads of 128: k and v 8192 -> 1024;
    # gate and up 8192 -> 28672; down 28672 -> 8192
    llama = {(c.M, c.K, c.N) for c in ms.grid("default") if "llama3-70b" in c.shape_set}
    assert llama == {
        (m, k, n) for m in (8192, 16384)
        for k, n in ((8192, 8192), (8192, 1024), (8192, 28672), (28672, 8192))}


def test_fp8_gemm_dims_are_multiples_of_16():  # torch._scaled_mm needs them
    for c in ms.grid("default"):
        if c.kind == "gemm":
            assert all(d % 16 == 0 for d in c.op[2:5]), c


def test_unknown_grid():
    with pytest.raises(ValueError, match="unknown grid .huge.; valid: default, quick"):
        ms.grid("huge")


def test_default_grid_fits_the_six_minute_budget():
    cases = ms.grid("default")
    for gpu in ("h100-sxm", "h200"):
        assert 60 < ms.estimate_seconds(cases, gpu) < 6 * 60
    # even if every per-repeat overhead and compile took twice as long
    assert ms.estimate_seconds(cases, per_repeat_s=300e-6, per_op_s=0.06, compile_s=20,
                               first_compile_s=40) < 6 * 60
    assert ms.estimate_seconds(ms.grid("quick")) < ms.estimate_seconds(cases)


# -- the loop, with a fake timer ----------------------------------------------------------------
class FakeTimer:
    """Returns 1..repeats microseconds; records each call."""

    def __init__(self, probe_s=1e-3):
        self.calls = []
        self.probe_s = probe_s

    def __call__(self, fn, warmup, repeats):
        self.calls.append((fn, warmup, repeats))
        if repeats == 1:
            return [self.probe_s]
        return [1e-6 * (i + 1) for i in range(repeats)]


def test_run_times_each_distinct_op_once_with_the_policy():
    cases = ms.default_grid(cubes=[512], llama_tokens=[], micro=True)
    made, timer = [], FakeTimer(probe_s=0.004)
    policy = RepeatPolicy(warmup=2, min_repeats=5, max_repeats=40, target_s=0.1)
    rows = list(ms.run(cases, lambda c: made.append(c.op) or c.op, timer, policy=policy,
                       env={"gpu": "Fake GPU", "torch": "0", "cuda": "0"},
                       clocks=lambda: {"sm_clock_mhz": 1980.0, "ignored": 1}))
    assert len(rows) == len(cases)
    assert len(made) == len(set(made)) == len({c.op for c in cases})
    # a cube's three bf16 GEMMs are one op; fp8 output differs (fast accumulation)
    assert len({c.op for c in cases if c.component.startswith("gemm.bf16")}) == 1
    assert len({c.op for c in cases if c.component.startswith("gemm.fp8_rowwise")}) == 2
    # per op: a probe after the warm-up, then 0.1 / 0.004 = 25 repeats
    assert [(w, r) for _, w, r in timer.calls[:2]] == [(2, 1), (0, 25)]
    row = rows[0]
    assert set(row) == set(COLUMNS)
    assert row["time_s"] == pytest.approx(13e-6) and row["repeats"] == 25
    assert row["time_min_s"] == pytest.approx(1e-6) and row["time_max_s"] == pytest.approx(25e-6)
    assert row["gpu"] == "Fake GPU" and row["sm_clock_mhz"] == 1980.0 and row["schema"] == 1
    gemm = next(r for r in rows if r["component"] == "gemm.fp8_rowwise.output")
    assert gemm["dtype"] == "fp8" and gemm["flops"] == 2 * 512**3


def test_run_skips_an_op_that_fails_and_every_case_sharing_it():
    cases = ms.default_grid(cubes=[512], llama_tokens=[], micro=False)

    def make_op(case):
        if case.op[:2] == ("gemm", "fp8_rowwise"):
            raise RuntimeError("CUDA error: no rowwise fp8 here\nsecond line")
        return case

    skipped, messages = [], []
    rows = list(ms.run(cases, make_op, FakeTimer(), progress=messages.append,
                       on_skip=lambda c, why: skipped.append((c.component, why))))
    assert len(rows) == len(cases) - 3
    assert sorted(c for c, _ in skipped) == sorted(f"gemm.fp8_rowwise.{g}" for g in components.GEMM_NAMES)
    assert skipped[0][1] == "RuntimeError: CUDA error: no rowwise fp8 here"
    assert any("skipped" in m for m in messages)


def test_run_skips_an_op_whose_timer_returns_nonsense():
    case = Case("micro.launch", 1, 1, 1)
    skipped = []
    rows = list(ms.run([case], lambda c: c, lambda fn, warmup, repeats: [0.0] * repeats,
                       on_skip=lambda c, why: skipped.append(why)))
    assert rows == [] and "non-positive" in skipped[0]


# -- CSV ---------------------------------------------------------------------------------------
def _rows():
    cases = ms.default_grid(cubes=[512], llama_tokens=[], micro=True)
    return list(ms.run(cases, lambda c: c, FakeTimer(), env={"gpu": "Fake, GPU"}))


def test_csv_round_trip_with_schema_and_comments():
    rows = _rows()
    buf = io.StringIO()
    assert mfile.write_measurements(rows, buf, comments=["first", "second\nthird"]) == len(rows)
    text = buf.getvalue()
    assert text.splitlines()[:4] == ["# roofline_sym measurements, schema 1", "# first",
                                     "# second", "# third"]
    assert text.splitlines()[4] == ",".join(COLUMNS)
    m = parse_csv(text)
    assert [c.component for c in m.cases] == [r["component"] for r in rows]
    np.testing.assert_allclose(m.time_s, [r["time_s"] for r in rows], rtol=1e-6)
    assert m.gpu == "Fake, GPU" and not m.synthetic
    d, f, b = m.costs
    np.testing.assert_array_equal(b, [r["bytes"] for r in rows])
    again = io.StringIO()
    m.write(again)
    assert parse_csv(again.getvalue()).comments == m.comments


def _sample_text():
    return textwrap.dedent("""\
        # roofline_sym measurements, schema 1
        schema,component,shape_set,shape,M,K,N,time_s
        1,micro.launch,micro,launch,1,1,1,2.5e-06
        1,gemm.bf16.output,cube,cube-512,512,512,512,1.2e-05
        """)


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace(",time_s", ",seconds"),
     "line 2: missing column(s) 'time_s' (required:"),
    (lambda t: t.replace("1.2e-05", "fast"), "line 4, column time_s: 'fast' is not a number"),
    (lambda t: t.replace("1.2e-05", ""), "line 4, column time_s: '' is not a number"),
    (lambda t: t.replace("1.2e-05", "-1e-5"), "line 4, column time_s: '-1e-5' is not positive"),
    (lambda t: t.replace("1.2e-05", "inf"), "line 4, column time_s: 'inf' is not finite"),
    (lambda t: t.replace("cube,cube-512,512", "cube,cube-512,512.5"),
     "line 4, column M: '512.5' is not an integer"),
    (lambda t: t.replace("gemm.bf16.output", "gemm.int8.output"),
     "line 4, column component: unknown component 'gemm.int8.output'"),
    (lambda t: t.replace("cube,cube-512,512", "cube,cube-512,1e300"),
     "line 4, column M: '1e300' is beyond 2**53"),
    (lambda t: t.replace("cube,cube-512,512", "cube,cube-512,100000000000000000"),
     "line 4, column M: '100000000000000000' is beyond 2**53"),
    (lambda t: t.replace("cube,cube-512,512", "cube,cube-512,9007199254740993"),
     "line 4, column M: '9007199254740993' is beyond 2**53"),
    (lambda t: t.replace("1.2e-05", "1e-300"),
     "line 4, column time_s: '1e-300': 1e-300 s is outside [1e-08, 10000] s"),
    (lambda t: t.replace("1.2e-05", "1e6"), "column time_s: '1e6': 1e+06 s is outside"),
    (lambda t: t.replace("cube,cube-512", "cube,cube\x1b[2J"),
     "line 4, column shape: 'cube\\x1b[2J' contains control characters"),
    (lambda t: t.replace("1.2e-05", "1\x00"), "line 4, column time_s: '1\\x00' is not a number"),
    (lambda t: t.replace("1,micro", "2,micro"), "line 3, column schema: '2' is not a supported"),
    (lambda t: t.replace(",2.5e-06", ""), "line 3: 7 fields, but the header has 8"),
    (lambda t: "# nothing\n", "no header row"),
    (lambda t: t.split("1,micro")[0], "no measurement rows after the header"),
])
def test_bad_files_say_which_line_and_column(edit, message):
    with pytest.raises(ValueError) as err:
        parse_csv(edit(_sample_text()), "bad.csv")
    assert str(err.value).startswith("bad.csv: ")
    assert message in str(err.value)


def test_a_byte_order_mark_reads_like_none(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text(_sample_text(), encoding="utf-8-sig")  # the mark before the first comment
    assert path.read_bytes().startswith(b"\xef\xbb\xbf#")
    m = mfile.read_csv(path)
    assert len(m) == 2 and m.comments[0] == mfile.HEADER_LINE
    assert len(parse_csv("\ufeff" + _sample_text())) == 2


def test_read_csv_of_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read measurement file"):
        mfile.read_csv(tmp_path / "nope.csv")


def test_optional_columns_may_be_empty_or_absent():
    m = parse_csv("component,M,K,N,time_s,bytes,repeats\nmicro.launch,1,1,1,3e-6,,\n")
    assert len(m) == 1 and m.gpu == ""


# -- torch: optional, and never at import -----------------------------------------------------
def test_harness_grid_loop_and_csv_work_without_torch():
    code = textwrap.dedent("""
        import io, sys
        sys.modules["torch"] = None          # any `import torch` now fails
        from roofline_sym.fidelity.own_gpu import cuda, timing as ms
        from roofline_sym.fidelity.own_gpu import measurement_file as mfile
        from roofline_sym import fidelity
        from roofline_sym.fidelity.own_gpu import hardware_fit
        timer = lambda f, warmup, repeats: [1e-5] * repeats
        rows = list(ms.run(ms.grid("quick"), lambda c: c, timer))
        buf = io.StringIO(); mfile.write_measurements(rows, buf)
        assert len(mfile.parse_csv(buf.getvalue())) == len(rows) == 134
        try:
            ms.measure("out.csv")
        except cuda.MeasureError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "measuring needs torch with CUDA" in out.stdout


def test_measure_without_a_gpu_says_so(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(cuda.MeasureError, match="needs a CUDA GPU"):
        ms.measure(tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def _nbytes(obj):
    torch = pytest.importorskip("torch")
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    return 0


@pytest.mark.parametrize("component", [c for c in COMPONENTS])
def test_torch_ops_move_the_bytes_the_model_charges(component):
    """Each op, run eagerly on CPU at a small shape, reads its inputs and writes
    its outputs: their bytes match the model's, up to the small vectors the
    model leaves out (amax partials, the 4-byte tensorwise scale)."""
    torch = pytest.importorskip("torch")
    ops = cuda.TorchOps(torch, device="cpu", compile=False)
    M, K, N = 64, 32, 48
    case = Case(component, *((M, K, N) if not component.startswith("micro.") else
                             (M if component == "micro.copy" else 1, 1, 1)))
    fn = ops(case)
    out = fn()
    moved = _nbytes(fn.args) + _nbytes(list(fn.keywords.values())) + _nbytes(out)
    slack = 8 if case.kind != "cast" else 4 * (M + K + N) + 8
    charged = case.bytes
    if case.kind == "cast":  # a second pass over the same input (amax, then cast)
        _, r, role, name = component.split(".")
        kernel = next(k for k in rs.linear(r).recipe.kernels[role] if k.name == name)
        charged -= 2 * (len(kernel.reads) - len(set(kernel.reads))) * case.op[1] * case.op[2]
    assert abs(moved - charged) <= slack, (moved, charged)
    if case.kind == "gemm":
        m, k, n = case.op[2:5]
        assert tuple(out.shape) == (m, n) and out.dtype == torch.bfloat16
        assert case.flops == 2 * m * k * n


def test_measure_writes_the_file_with_injected_ops_and_timer(tmp_path):
    """The whole driver, on CPU: torch ops run eagerly, timed by the wall clock."""
    torch = pytest.importorskip("torch")
    import time as _time

    def wall_clock(fn, warmup, repeats):
        for _ in range(warmup):
            fn()
        out = []
        for _ in range(repeats):
            t0 = _time.perf_counter()
            fn()
            out.append(_time.perf_counter() - t0)
        return out

    ops = cuda.TorchOps(torch, device="cpu", compile=False)
    cases = [Case(c, 32, 64, 16, "tiny", "test") for c in COMPONENTS if not c.startswith("micro.")]
    cases += [Case("micro.launch", 1, 1, 1), Case("micro.copy", 1024, 1, 1)]
    messages = []
    path = ms.measure(tmp_path / "cpu.csv", cases, make_op=ops, timer=wall_clock,
                      env={"gpu": "cpu", "torch": torch.__version__, "cuda": ""},
                      policy=RepeatPolicy(warmup=1, min_repeats=2, max_repeats=3, target_s=1e-4),
                      progress=messages.append)
    m = mfile.read_csv(path)
    assert len(m) == len(cases) and m.gpu == "cpu"
    assert m.comments[0] == "roofline_sym measurements, schema 1"
    assert m.comments[-1].startswith("finished: 34 rows")
    assert "timer function" in m.comments[2]
    assert messages[0].startswith("measuring 34 cases on cpu")
    assert messages[-1].startswith("wrote 34")


def test_measure_without_torch_writes_skips_as_comments(tmp_path):
    def make_op(case):
        if case.kind == "cast":
            raise MemoryError("out of memory")
        return case

    path = ms.measure(tmp_path / "fake.csv", ms.default_grid(cubes=[512], llama_tokens=[]),
                      make_op=make_op, timer=FakeTimer(), env={"gpu": "Fake"}, progress=None)
    m = mfile.read_csv(path)
    assert {c.kind for c in m.cases} == {"gemm", "micro"}
    assert sum(c.startswith("skipped cast.") for c in m.comments) == 23
