"""The fused kernel (numba, the ``fast`` extra), threads, and the kernel cache on disk.

Kernels are compiled for a toy model of four terms (a fraction of a second
each); the shipped models' kernels are checked behind the ``slow`` marker.
"""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import sympy

import roofline_sym as rs
from roofline_sym.evaluation import cache, runtime
from roofline_sym.evaluation.compiled import Layout, compile_terms
from roofline_sym.symbols import K, M, N

P, BW, L = sympy.symbols("P_toy BW_toy L_toy", positive=True)
A, B, C = sympy.symbols("a b c", positive=True)
# three groups, one without terms; a ratio of sums with the empty group in both
LAYOUT = Layout(groups=(("a", A), ("b", B), ("c", C)),
                outputs=(("ta", A), ("tb", B), ("tc", C), ("ratio", (A + C) / (B + C))),
                labels=("compute", "memory", "launch"))
GEMM = ("a", (("compute", 2 * M * K * N / P), ("memory", 2 * (M * K + K * N + M * N) / BW),
              ("launch", L)))
# a block-scaled operand (a ceiling), and a kernel that only launches
BLOCKED = ("b", (("compute", 2 * M * K * N / P),
                 ("memory", (M * K + sympy.ceiling(K / 32) * M) / BW), ("launch", L)))
LAUNCH = ("b", (("launch", 3 * L),))
TERMS = [GEMM, GEMM, BLOCKED, LAUNCH]  # the GEMM twice: counted twice, computed once
VALUES = {P: sympy.Integer(10) ** 15, BW: 3 * sympy.Integer(10) ** 12,
          L: sympy.Rational(2, 10**6)}

numba = pytest.importorskip("numba")


@pytest.fixture()
def kernels(tmp_path, monkeypatch):
    """A fresh, private cache folder and no kernel loaded in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.forget()
    yield tmp_path / "roofline_sym" / "kernels"
    cache.forget()


def _toy():
    return compile_terms(TERMS, LAYOUT).bind(VALUES)


def _shapes(n, seed=0):
    rng = np.random.default_rng(seed)
    # integers from 1 to 2**17, most not multiples of a block size; every regime
    return [np.round(np.exp(rng.uniform(0, np.log(2**17), n))) for _ in range(3)]


def _exact(m, k, n):
    """The toy's outputs at one shape in rational arithmetic (an oracle that
    shares no code with either engine)."""
    sub = {M: sympy.Integer(int(m)), K: sympy.Integer(int(k)), N: sympy.Integer(int(n)), **VALUES}
    totals = {"a": 0, "b": 0, "c": 0}
    for group, pieces in TERMS:
        totals[group] += max(e.xreplace(sub) for _, e in pieces)
    return {"ta": totals["a"], "tb": totals["b"], "tc": 0,
            "ratio": totals["a"] / totals["b"]}


def test_the_fused_kernel_equals_exact_values_and_the_numpy_path(kernels):
    toy = _toy()
    Ms, Ks, Ns = _shapes(5000)
    fused = toy.evaluate(Ms, Ks, Ns, regimes=True, engine="numba")
    plain = toy.evaluate(Ms, Ks, Ns, regimes=True, engine="numpy")
    assert set(fused) == set(plain) == {"ta", "tb", "tc", "ratio", "a", "b", "c"}
    for key in plain:  # the same operations in the same order: the same roundings
        np.testing.assert_allclose(fused[key], plain[key], rtol=1e-12, atol=0, err_msg=key)
    for key in "abc":  # the regimes, exactly; "c" has no terms
        np.testing.assert_array_equal(fused[key], plain[key])
    assert (fused["c"] == -1).all() and set(np.unique(fused["b"])) == {0, 1, 2}
    for i in range(0, 5000, 997):
        for name, value in _exact(Ms[i], Ks[i], Ns[i]).items():
            assert fused[name][i] == pytest.approx(float(value), rel=1e-12, abs=0), name
    # a scalar shape is an argument of another kernel, not an array
    one_k = toy.evaluate(Ms, 4096, Ns, outputs="ratio", engine="numba")["ratio"]
    np.testing.assert_allclose(one_k, toy.evaluate(Ms, 4096, Ns, outputs="ratio",
                                                   engine="numpy")["ratio"], rtol=1e-12, atol=0)


def test_results_do_not_depend_on_threads_or_engine_chunks(kernels):
    toy = _toy()
    Ms, Ks, Ns = _shapes(3 * runtime.CHUNK + 17, seed=1)
    ref = toy.evaluate(Ms, Ks, Ns, threads=1, engine="numpy")
    for engine in ("numpy", "numba"):
        for threads in (1, 2, 3, 7):
            out = toy.evaluate(Ms, Ks, Ns, threads=threads, engine=engine, chunk=10_000)
            for key in ref:
                if engine == "numpy":  # bit for bit
                    np.testing.assert_array_equal(out[key], ref[key], err_msg=key)
                else:
                    np.testing.assert_allclose(out[key], ref[key], rtol=1e-12, atol=0)
    real = rs.linear("mxfp8_cublas").on("b200")  # a shipped model, numpy on threads
    one = real.evaluate(Ms, Ks, Ns, threads=1)
    for threads in (2, 5):
        many = real.evaluate(Ms, Ks, Ns, threads=threads)
        for key in one:
            np.testing.assert_array_equal(many[key], one[key], err_msg=key)


@pytest.mark.parametrize("bad", [np.nan, -1.0, 0.0, 2.0**60])
def test_a_bad_shape_in_a_fused_run_is_named(kernels, bad):
    toy = _toy()
    Ms, Ks, Ns = _shapes(2 * runtime.CHUNK + 3, seed=2)
    Ks[-2] = bad  # in the last chunk of the second thread's part
    with pytest.raises(ValueError, match="^K must be positive|^K must be at most"):
        toy.evaluate(Ms, Ks, Ns, engine="numba", threads=2)


def test_requests_the_kernel_cannot_take_are_refused_or_go_to_numpy(kernels):
    toy = _toy()
    with pytest.raises(ValueError, match="engine='numba' takes float64"):
        toy.evaluate([1.0, 2.0], 1.0, 1.0, dtype=np.float32, engine="numba")
    with pytest.raises(ValueError, match="engine must be one of auto, numpy, numba"):
        toy.evaluate(1.0, 1.0, 1.0, engine="cuda")
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        toy.evaluate(1.0, 1.0, 1.0, threads=0)
    with pytest.raises(ValueError, match="threads must be at most 64"):
        rs.linear("rowwise").on("h100").evaluate(1.0, 1.0, 1.0, threads=65)
    # auto: a small request runs numpy, and compiles nothing
    toy.evaluate(*_shapes(1000), engine="auto")
    assert not list(kernels.glob("*/kernel.py")) if kernels.exists() else True


def test_kernels_are_kept_in_a_private_folder_and_loaded_by_the_next_process(kernels):
    toy = _toy()
    source = toy.source("ratio", kernel="fused")
    assert source.startswith("import numpy as np") and "def kernel(M_, K_, N_" in source
    Ms, Ks, Ns = _shapes(100)
    first = toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numba")["ratio"]
    for folder in (kernels.parent, kernels):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    (entry,) = kernels.iterdir()
    assert entry.name == cache.entry_name(source)
    assert (entry / "kernel.py").read_text() == source
    cache.forget()  # as a new process: numba finds its machine code next to the source
    kernel = cache.compile_kernel(source)
    again = toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numba")["ratio"]
    np.testing.assert_array_equal(again, first)
    assert sum(kernel.stats.cache_hits.values()) == 1 and not kernel.stats.cache_misses


def test_a_foreign_entry_is_not_run_but_replaced(kernels, tmp_path):
    toy = _toy()
    source = toy.source("ratio", kernel="fused")
    marker = tmp_path / "ran"
    entry = kernels / cache.entry_name(source)
    entry.mkdir(parents=True, mode=0o700)
    os.chmod(kernels.parent, 0o700)
    os.chmod(kernels, 0o700)
    # an entry under the right name whose code is not what the library makes
    (entry / "kernel.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n\n\n"
        "def kernel(*args):\n    return 0\n")
    (entry / "__pycache__").mkdir()
    (entry / "__pycache__" / "kernel.kernel-4.py311.nbi").write_bytes(b"not numba's")
    Ms, Ks, Ns = _shapes(50)
    out = toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numba")["ratio"]
    ref = toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numpy")["ratio"]
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=0)
    assert not marker.exists()
    assert (entry / "kernel.py").read_text() == source
    assert not (entry / "__pycache__" / "kernel.kernel-4.py311.nbi").exists() or \
        (entry / "__pycache__" / "kernel.kernel-4.py311.nbi").read_bytes() != b"not numba's"


@pytest.mark.parametrize("plant", ["link", "shared"])
def test_an_entry_holding_the_source_is_trusted_only_as_a_private_file(kernels, tmp_path,
                                                                       plant):
    # the right text, but through a link (its target can change under us) or in
    # a file others may write: the entry is written afresh (cache.read_private)
    toy = _toy()
    source = toy.source("ratio", kernel="fused")
    entry = kernels / cache.entry_name(source)
    entry.mkdir(parents=True, mode=0o700)
    os.chmod(kernels.parent, 0o700)
    os.chmod(kernels, 0o700)
    if plant == "link":
        target = tmp_path / "elsewhere.py"
        target.write_text(source)
        (entry / "kernel.py").symlink_to(target)
    else:
        (entry / "kernel.py").write_text(source)
        os.chmod(entry / "kernel.py", 0o666)
    cache.compile_kernel(source)
    written = entry / "kernel.py"
    assert not written.is_symlink() and written.read_text() == source
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o600


def test_a_cache_folder_others_can_write_is_not_used(kernels):
    kernels.mkdir(parents=True, mode=0o700)
    os.chmod(kernels.parent, 0o700)
    os.chmod(kernels, 0o777)
    assert cache.kernel_dir() is None
    toy = _toy()
    Ms, Ks, Ns = _shapes(50)
    out = toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numba")["ratio"]  # in memory
    np.testing.assert_allclose(out, toy.evaluate(Ms, Ks, Ns, outputs="ratio")["ratio"],
                               rtol=1e-12, atol=0)
    assert list(kernels.iterdir()) == []


def test_without_numba_auto_runs_numpy_and_numba_names_the_extra(kernels, monkeypatch):
    monkeypatch.setattr(cache, "available", lambda: False)
    monkeypatch.setitem(__import__("sys").modules, "numba", None)  # import numba fails
    monkeypatch.setattr(runtime, "FAST_MIN_COLD", 0)  # auto would take numba if it could
    toy = _toy()
    Ms, Ks, Ns = _shapes(3 * runtime.CHUNK)
    out = toy.evaluate(Ms, Ks, Ns, outputs="ratio")["ratio"]
    np.testing.assert_array_equal(out, toy.evaluate(Ms, Ks, Ns, outputs="ratio",
                                                    engine="numpy")["ratio"])
    with pytest.raises(cache.MissingNumbaError, match=r"roofline-sym\[fast\]"):
        toy.evaluate(Ms, Ks, Ns, engine="numba")


def test_auto_takes_the_kernel_once_the_numpy_work_would_have_paid_for_it(kernels,
                                                                          monkeypatch):
    monkeypatch.setattr(runtime, "FAST_MIN_COLD", 5 * runtime.CHUNK)
    toy = compile_terms(TERMS[1:], LAYOUT).bind(VALUES)  # a structure no other test runs
    program = toy.program(("ratio",))
    Ms, Ks, Ns = _shapes(3 * runtime.CHUNK, seed=3)
    toy.evaluate(Ms, Ks, Ns, outputs="ratio")
    assert program.numpy_shapes == 3 * runtime.CHUNK and not kernels.exists()
    toy.evaluate(Ms, Ks, Ns, outputs="ratio", engine="numpy")  # asked for numpy: numpy
    assert program.numpy_shapes == 6 * runtime.CHUNK and not kernels.exists()
    toy.evaluate(Ms, Ks, Ns, outputs="ratio")  # numpy work beyond its cost: now it pays
    assert program.numpy_shapes == 6 * runtime.CHUNK
    assert len(list(kernels.glob("*/kernel.py"))) == 1


def test_many_threads_evaluating_different_models_at_once_agree_with_serial(kernels):
    models = [rs.linear(r, mode=mode).on(g) for r, mode, g in
              [("tensorwise", "training", "h100"), ("rowwise", "inference", "h200"),
               ("mxfp8_cublas", "training", "b200"), ("nvfp4", "inference", "b200")]]
    toy = _toy()
    shapes = [_shapes(runtime.CHUNK + 1000 * i, seed=10 + i) for i in range(8)]
    jobs = [(m, s, e) for m in models for s in shapes[:4] for e in ("numpy",)]
    jobs += [(toy, s, "numba") for s in shapes[4:]]
    serial = [m.evaluate(*s, threads=1, engine=e) for m, s, e in jobs]
    barrier = threading.Barrier(8)

    def run(i):
        m, s, e = jobs[i]
        if i < 8:  # the first eight start together
            barrier.wait(timeout=60)
        return m.evaluate(*s, threads=2, engine=e)

    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(run, range(len(jobs))))
    for (m, _, e), a, b in zip(jobs, serial, together):
        for key in a:
            if e == "numpy":
                np.testing.assert_array_equal(b[key], a[key], err_msg=f"{m!r} {key}")
            else:
                np.testing.assert_allclose(b[key], a[key], rtol=1e-12, atol=0)


MODELS = [
    ("tensorwise", "training", True, "torchao", "NVIDIA H100"),
    ("mxfp8_cublas", "training", False, "default", "b200"),
    ("nvfp4", "inference", True, "default", "b200"),
    ("dynamic", "training", True, "seed", "NVIDIA H100"),
]


@pytest.mark.slow
@pytest.mark.parametrize("config", MODELS, ids=[m[0] for m in MODELS])
def test_shipped_models_fused_equal_numpy(kernels, config):
    recipe, mode, fuse, preset, gpu = config
    mb = rs.linear(recipe, mode=mode, fuse=fuse, preset=preset).on(gpu)
    Ms, Ks, Ns = _shapes(20_000, seed=7)
    plain = mb.compiled.evaluate(Ms, Ks, Ns, regimes=True, engine="numpy")
    fused = mb.compiled.evaluate(Ms, Ks, Ns, regimes=True, engine="numba")
    for key in plain:
        np.testing.assert_allclose(fused[key], plain[key], rtol=1e-12, atol=0,
                                   err_msg=str(key))


def test_max_is_pythons_only_where_no_maximum_can_see_nan(kernels):
    program = _toy().program(("ratio",))
    coefs = list(_toy().coefficients_bound)
    # the toy's maxima take sums and products of shapes and positive coefficients,
    # bounded by finite values at 2**53: Python's max (vectorized) is exact
    assert program.nan_free(coefs)
    assert "max(" in program.fused_source((True, True, True), (), True)
    assert "np.maximum" not in program.fused_source((True, True, True), (), True)
    # a coefficient large enough to overflow a product to inf (0 * inf would be
    # NaN), a zero, a negative one or NaN: np.maximum's rule is kept
    for bad in (1e300, 0.0, -1.0, float("nan"), float("inf")):
        assert not program.nan_free([bad] + coefs[1:]), bad
    # a difference may be NaN (inf - inf): not bounded from below, not nan-free
    diff = ("a", (("compute", M * K / P - N / BW), ("launch", L)))
    sub = compile_terms([diff, LAUNCH], LAYOUT).bind(VALUES)
    assert not sub.program(("ta",)).nan_free(list(sub.coefficients_bound))


@pytest.mark.parametrize("peak", [sympy.Integer(10) ** 15, sympy.Rational(1, 10**300)])
def test_the_fused_kernel_equals_numpy_with_and_without_pythons_max(kernels, peak):
    # a peak of 1e-300 makes 2MKN/P overflow to inf: the kernel keeps np.maximum
    toy = compile_terms(TERMS, LAYOUT).bind({**VALUES, P: peak})
    Ms, Ks, Ns = _shapes(3000, seed=3)
    fused = toy.evaluate(Ms, Ks, Ns, engine="numba")
    plain = toy.evaluate(Ms, Ks, Ns, engine="numpy")
    for name in plain:
        np.testing.assert_array_equal(fused[name], plain[name])


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_a_fraction_is_named_as_the_shapes_are_read(kernels, engine):
    toy = _toy()
    Ms, Ks, Ns = _shapes(2 * runtime.CHUNK + 3, seed=4)
    Ks[-2] = 4096.5  # in the last chunk of the second thread's part
    with pytest.raises(ValueError, match=r"^K must be whole numbers; got 4096\.5 "):
        toy.evaluate(Ms, Ks, Ns, engine=engine, threads=2, whole=True)
    # not asked for: a real shape, evaluated
    assert np.isfinite(toy.evaluate(Ms, Ks, Ns, engine=engine, whole=False)["ratio"]).all()
    # integers are whole; a whole float64 scalar and an int array take the kernel too
    ints = [a.astype(np.int64) for a in _shapes(1000, seed=5)]
    out = toy.evaluate(ints[0], 4096.0, ints[2], engine=engine, whole=True)["ratio"]
    ref = toy.evaluate(*(a.astype(float) for a in (ints[0], np.full(1000, 4096), ints[2])),
                       engine="numpy")["ratio"]
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=r"^N must be whole numbers; got 0\.25"):
        toy.evaluate(ints[0], 4096.0, 0.25, engine=engine, whole=True)


def test_a_model_names_a_fraction_first_with_either_engine(kernels):
    # the whole-number check runs inside the work now; its error still comes
    # first, whatever else is wrong and wherever it is, as a check before the work
    mb = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    Ms, Ks, Ns = _shapes(3 * runtime.CHUNK, seed=6)
    Ms[-1] = 8192.5  # the last chunk
    Ks[5] = -1.0  # the first chunk: a chunk's own check would find it first
    for engine in ("numpy", "numba"):
        for threads in (1, 2):
            with pytest.raises(ValueError, match=r"^M must be a whole number \(a layer's "
                               r"dimension\), got 8192\.5; evaluate\(\.\.\., integer_shapes"):
                mb.evaluate(Ms, Ks, Ns, outputs="speedup", engine=engine, threads=threads)
    Ms[-1] = 8192.0  # then the other error, as before
    with pytest.raises(ValueError, match="^K must be positive"):
        mb.evaluate(Ms, Ks, Ns, outputs="speedup", engine="numba", threads=2)
    with pytest.raises(ValueError, match="^M must be a whole number"):  # any error: after it
        mb.evaluate([8192.5], 8192, 8192, outputs="no such output")
    # float32 rounds 2**24 + 0.5 to a whole number: the float64 shapes are checked first
    with pytest.raises(ValueError, match=r"^M must be a whole number .* got 16777216\.5"):
        mb.evaluate(np.array([16777216.5, 4.0]), 8192, 8192, dtype=np.float32)


def test_broadcast_and_cast_shapes_take_the_kernel_a_chunk_at_a_time(kernels):
    # shapes at the full size, float64, in C order are read in place; others
    # (broadcast, integers, a strided view) are walked in chunks: the same values
    toy = _toy()
    Ms, Ks, Ns = _shapes(runtime.CHUNK + 50, seed=8)
    grid = (Ms[:300, None], Ks[None, :400], 2048.0)
    ref = toy.evaluate(*grid, engine="numpy")
    for args in (grid, (Ms[:300, None].astype(np.int32), Ks[None, :400], 2048)):
        out = toy.evaluate(*args, engine="numba", threads=2, whole=True)
        for key in ref:
            np.testing.assert_allclose(out[key], ref[key], rtol=1e-12, atol=0, err_msg=key)
    strided = toy.evaluate(Ms[::2], Ks[::2], Ns[::2], engine="numba", threads=2)["ratio"]
    np.testing.assert_array_equal(strided, toy.evaluate(Ms[::2].copy(), Ks[::2].copy(),
                                                        Ns[::2].copy(), engine="numba")["ratio"])


def test_an_output_that_is_zero_everywhere_is_allocated_zeroed_not_written(kernels):
    toy = _toy()  # "tc": the total of a group without terms
    program = toy.program(("tc", "ratio"))
    assert program.zero_outputs == (0,)
    assert "o0[" not in program.fused_source((True, True, True), (), True)
    assert "o0" not in program.source.split(":", 1)[1]  # the numpy chunk function's body
    Ms, Ks, Ns = _shapes(3000, seed=9)
    for engine in ("numpy", "numba"):
        out = toy.evaluate(Ms, Ks, Ns, outputs=("tc", "ratio"), engine=engine)
        assert (out["tc"] == 0).all() and not np.signbit(out["tc"]).any()
        out["tc"][0] = 1.0  # an array of its own, writable
        assert out["ratio"][0] > 0


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_outputs_are_written_into_arrays_given_by_name(kernels, engine):
    mb = rs.linear("tensorwise", fuse=True, preset="torchao").on("NVIDIA H100")
    Ms, Ks, Ns = _shapes(2 * runtime.CHUNK + 9, seed=10)
    ref = mb.evaluate(Ms, Ks, Ns, engine="numpy", threads=1)
    out = {name: np.full(Ms.shape, np.nan) for name in ("speedup", "baseline_overhead_time")}
    got = mb.evaluate(Ms, Ks, Ns, engine=engine, threads=2, out=out)
    for name in rs.OUTPUTS:  # written in place (the zero one too), the others made
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, atol=0, err_msg=name)
    assert all(got[name] is a for name, a in out.items())
    # refused: another shape, dtype or layout, a read-only array, an output not
    # asked for, memory shared with a shape (written while the shapes are read)
    frozen = np.empty(Ms.shape)
    frozen.flags.writeable = False
    for bad, match in [({"speedup": np.empty(3)}, r"has shape \(3,\), not the result's"),
                       ({"speedup": np.empty(Ms.shape, np.float32)}, "float32, not float64"),
                       ({"speedup": np.empty((Ms.size, 2))[:, 0]}, "not contiguous"),
                       ({"speedup": frozen}, "read-only"),
                       ({"speedup": list(Ms)}, "not a numpy array"),
                       ({"lowp_time": np.empty(Ms.shape)}, "not a requested output"),
                       ({"speedup": Ms}, "shares memory")]:
        with pytest.raises(ValueError, match=match):
            mb.evaluate(Ms, Ks, Ns, outputs="speedup", engine=engine, out=bad)
    with pytest.raises(TypeError, match="mapping"):
        mb.evaluate(Ms, Ks, Ns, outputs="speedup", out=[np.empty(Ms.shape)])
