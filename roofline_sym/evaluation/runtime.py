"""Running a program: arguments checked, outputs allocated, chunks over threads.

The shapes are walked in chunks of ``chunk`` (broadcast, in C order, cast to
the dtype); each chunk runs either the numpy program (in place, in a few
scratch buffers kept between calls, in cache) or the fused numba kernel (the
``fast`` extra: one loop, every output in one pass, no scratch).  The flat
range of shapes is split into contiguous parts, one per thread (numpy and
numba both release the GIL while they compute); every value is computed
alone, so the results do not depend on the thread count or on the chunk.

``fast_pays`` decides where the kernel is worth it: its compilation (or its
load from the disk cache, ``cache.py``, and numba's import) costs a fraction
of a second once per process, so it runs for large inputs only.

Arrays that are not numpy arrays but implement the numpy protocols (dask)
take the program's elementwise version, without chunks or ``out=``, so they
stay lazy.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise").on("h100")
>>> import numpy as np
>>> M = np.linspace(1, 2**16, 300_000)
>>> one = m.compiled.evaluate(M, 4096, 4096, threads=1)["speedup"]
>>> two = m.compiled.evaluate(M, 4096, 4096, threads=2)["speedup"]
>>> bool((one == two).all())
True
"""

from __future__ import annotations

import numbers
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from ..errors import InputError
from ..devices.ranges import hardware_array
from ..validate import (SHAPE_MAX, InputTypeError, broadcast_shape, first_fraction, is_masked,
                        positive_array, show, unknown_name)
from . import cache
from .operations import SHAPES
from .program import Program

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["Run", "CHUNK", "ENGINES", "MAX_THREADS", "Evaluator", "output_names", "fast_pays",
           "release_scratch", "usable_cpus"]

# shapes per chunk: a dozen scratch buffers of this many float64 stay in the
# last-level cache, and each numpy call does enough work to hide its overhead
CHUNK = 1 << 16
ENGINES = ("auto", "numpy", "numba")
# threads one call may use; beyond the cores they only take turns
MAX_THREADS = 64
# when the fused kernel pays: once loaded in this process, from a couple of
# chunks; before, when this program's numpy work (in this call and the earlier
# ones) reaches what numba's import and the kernel's load from the disk cache
# cost (about 0.9 s, first compilation 1.5 s; numpy takes about 30 ns a shape):
# never more than about twice the time of the better choice made in hindsight
FAST_MIN_LOADED = 2 * CHUNK
FAST_MIN_COLD = 1 << 25


class Evaluator(Protocol):
    """What a run asks of compiled terms (``compiled.CompiledTerms``, ``BoundTerms``)."""

    @property
    def coefficients_bound(self) -> tuple[float, ...] | None: ...
    @property
    def free_names(self) -> tuple[str, ...]: ...
    @property
    def group_keys(self) -> tuple[Hashable, ...]: ...
    @property
    def group_members(self) -> tuple[tuple[int, ...], ...]: ...
    def program(self, outputs: Sequence[str] | None = None, terms: bool = False) -> Program: ...
    def coefficient_values(self, *hardware: Any) -> list[Any]: ...


def output_names(outputs: Sequence[str] | str | None, known: tuple[str, ...]) -> tuple[str, ...]:
    """The outputs requested: names of ``known``, one name, or None (all)."""
    names = known if outputs is None else (outputs,) if isinstance(outputs, str) \
        else tuple(outputs)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown output(s) {unknown}; outputs are {', '.join(known)}")
    if len(set(names)) < len(names):
        raise InputError(f"outputs {list(names)} name one twice")
    return names


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fast_pays(size: int, loaded: bool, before: int = 0) -> bool:
    """Whether the fused kernel is worth it for ``size`` shapes (``loaded``:
    already compiled or loaded in this process; ``before``: shapes the same
    program ran with numpy in this process).

    >>> fast_pays(10**6, loaded=True), fast_pays(10**6, loaded=False)
    (True, False)
    >>> fast_pays(10**6, loaded=False, before=10**8)
    True
    """
    return size >= FAST_MIN_LOADED and (loaded or size + before >= FAST_MIN_COLD)


def _is_lazy(value: Any) -> bool:
    """An array of another library (dask) that numpy functions dispatch to."""
    return (not isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple))
            and (hasattr(value, "__array_function__") or hasattr(value, "__array_ufunc__")))


def _shape_input(value: Any, name: str) -> np.ndarray:
    """A shape argument as an array of ints or floats; its values are checked
    chunk by chunk (``_check``)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.dtype.kind not in "iuf" or is_masked(value):
        positive_array(value, name)  # raises the message for non-numbers
        raise InputError(f"{name} must be a number or array of numbers, not {value!r}")
    if raw.dtype.kind in "iu" and raw.size and raw.max() > SHAPE_MAX:
        # compared as integers: 2**53 + 1 would round to 2**53 as a float
        positive_array(value, name, limit=SHAPE_MAX)
    return raw


def _check(x: np.ndarray, original: Any, name: str) -> None:
    """Shapes in ``x`` positive, finite and at most 2**53, or the error of
    ``validate.positive_array`` for the whole argument."""
    if x.size and not (x.min() > 0 and x.max() <= SHAPE_MAX):
        positive_array(original, name, limit=SHAPE_MAX)  # raises, naming the problem
        raise InputError(f"{name} must be positive and finite, at most 2**53, in "
                         f"{x.dtype} (got a value that is not)")


# a float's bits as an unsigned integer grow with the float from +0 to +inf, then
# NaN; negative floats (the sign bit) are larger still: so "bits at most those of
# 2**53" is "0 <= x <= 2**53", and only +0 is left for the shape product to catch
_MAX_BITS = {np.dtype(np.float64): (np.uint64, int(np.float64(SHAPE_MAX).view(np.uint64))),
             np.dtype(np.float32): (np.uint32, int(np.float32(SHAPE_MAX).view(np.uint32)))}


def _check_whole(x: np.ndarray, name: str, buf: np.ndarray | None = None) -> None:
    """Shapes in ``x`` whole numbers, or a ValueError naming ``name`` and the first
    fraction (NaN, infinities and values <= 0 are ``_check``'s); a block of
    ``CHUNK`` at a time (``buf``: one block of scratch), no array-sized temporaries.

    >>> _check_whole(np.array([1.0, 2.5]), "M")
    Traceback (most recent call last):
    ...
    roofline_sym.errors.InputError: M must be whole numbers; got 2.5 (element 1 of 2)
    """
    if x.dtype.kind != "f":
        return  # integers are whole
    flat = x.reshape(-1)
    i = first_fraction(flat, buf, CHUNK)
    if i is not None:
        raise InputError(f"{name} must be whole numbers; got {show(flat[i].item())} "
                         f"(element {i} of {flat.size})")


def _check_bits(x: np.ndarray, original: Any, name: str) -> None:
    """``_check`` but for +0: one reduction (a shape product's minimum finds zeros)."""
    kind, bound = _MAX_BITS.get(x.dtype, (None, 0))
    if kind is None or (x.size and np.maximum.reduce(x.view(kind)) > bound):
        _check(x, original, name)


def _count(value: Any, name: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise InputError(f"{name} must be a positive integer, not {value!r}")
    if int(value) > maximum:
        raise InputError(f"{name} must be at most {maximum}, not {value}")
    return int(value)


def _options(dtype: Any, chunk: Any, threads: Any, engine: str
             ) -> tuple[np.dtype, int, int | None]:
    """A run's options checked: a floating dtype, a chunk size, a thread count, an engine."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise InputTypeError(f"dtype must be a floating type (float64, float32), not "
                             f"{show(dtype)}") from None
    if dtype.kind != "f":
        raise InputError(f"dtype must be a floating type (float64, float32), not {dtype}")
    if engine not in ENGINES:
        raise InputError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    return (dtype, _count(chunk, "chunk", 2 ** 40),
            None if threads is None else _count(threads, "threads", MAX_THREADS))


def _walked_and_fixed(shapes: list[np.ndarray], given: tuple[Any, Any, Any],
                      values: list[Any], dtype: np.dtype, whole: bool
                      ) -> tuple[list[tuple[int, np.ndarray]], list[float | None]]:
    """The arrays the iterator walks (argument index, array) and the scalar
    arguments (None where walked): M, K, N, then the coefficients."""
    walked: list[tuple[int, np.ndarray]] = []
    fixed: list[float | None] = []
    for i, a in enumerate(shapes):
        if a.ndim == 0:
            _check(a.reshape(1).astype(dtype), given[i], SHAPES[i])
            if whole:
                _check_whole(a, SHAPES[i])
            fixed.append(float(a))
        else:
            walked.append((i, a))
            fixed.append(None)
    for i, v in enumerate(values, start=3):
        if isinstance(v, float):  # a bound model's coefficients
            fixed.append(v)
            continue
        v = np.asarray(v, dtype=dtype)
        if v.size == 1:
            fixed.append(float(v.reshape(-1)[0]))
        else:
            walked.append((i, v))
            fixed.append(None)
    return walked, fixed


def _choose_kernel(part: _Part, engine: str, size: int) -> None:
    """The fused kernel where it is asked for or pays (``part.kernel``), else numpy:
    then shapes a narrower dtype could round to whole are checked before the work."""
    program, fixed = part.program, part.fixed
    fusable = (part.terms != "terms" and part.dtype == np.float64 and program.fusable
               and all(f is not None for f in fixed[3:]))
    if engine == "numba" and not fusable:
        raise InputError("engine='numba' takes float64 shapes and one value per hardware "
                         "symbol (no per-shape arrays), and no term times")
    if fusable and (engine == "numba" or (engine == "auto" and size >= FAST_MIN_LOADED
                                          and cache.available())):
        # no maximum can see NaN: Python's max, which numba vectorizes, is exact
        nan_free = program.nan_free([f for f in fixed[3:] if f is not None])  # all are
        source = program.fused_source(tuple(f is None for f in fixed[:3]),
                                      part.ev.group_members if part.terms else (), nan_free,
                                      bool(part.whole))
        if engine == "numba" or fast_pays(size, cache.loaded(source), program.numpy_shapes):
            part.kernel = cache.compile_kernel(source)
    if part.kernel is None:
        program.numpy_shapes += size  # a benign race: a count to decide by
        # a narrower dtype (float64 shapes in float32) may round a fraction to
        # a whole number: those shapes are checked whole before the work
        narrow = [(i, a) for i, a in part.walked if i in part.whole
                  and a.dtype.itemsize > part.dtype.itemsize]
        for i, a in narrow:
            _check_whole(a, SHAPES[i])
        part.whole = tuple(i for i in part.whole if i not in dict(narrow))


class Run:
    """One evaluation: arguments checked, outputs allocated, chunks run.

    ``terms``: False, True (group regimes, per chunk) or "terms" (every term's
    time and regime, kept whole).  ``engine``: one of ``ENGINES``.  ``whole``:
    shapes must be whole numbers, checked as they are read for the work
    (chunk by chunk, or inside the fused kernel).  ``out``: arrays to write
    outputs into, by name (``_given_outputs``).
    """

    def __init__(self, ev: Evaluator, M: Any, K: Any, N: Any,
                 hardware_values: Mapping[str, Any], outputs: tuple[str, ...],
                 terms: bool | str, dtype: Any, chunk: int, threads: int | None = None,
                 engine: str = "auto", whole: bool = False,
                 out: Mapping[str, Any] | None = None):
        dtype, chunk, threads = _options(dtype, chunk, threads, engine)
        bound = ev.coefficients_bound
        hw = self._hardware(ev.free_names, hardware_values, bound is not None)
        program = ev.program(outputs, bool(terms))
        # every term's time and regime (terms="terms")
        self.times: list[np.ndarray] = []
        self.regimes: list[np.ndarray] = []
        self.result: dict[Any, np.ndarray]
        if any(_is_lazy(v) for v in (M, K, N, *hw)):
            if out:
                raise InputTypeError("out= takes numpy arrays; lazy arrays make their own")
            if terms:
                raise InputTypeError("term times and regimes need numpy arrays; evaluate() "
                                     "takes lazy ones")
            self.result = self._lazy(ev, program, (M, K, N), hw, dtype)
            return
        shapes = [_shape_input(v, n) for v, n in zip((M, K, N), SHAPES)]
        hw_shape = np.broadcast_shapes(*(np.shape(h) for h in hw))
        # a request that does not broadcast, or is too large to hold, fails here
        shape = broadcast_shape({**dict(zip(SHAPES, shapes)), **dict(zip(ev.free_names, hw))})
        size = int(np.prod(shape))
        # coefficients: fixed numbers (bound), numbers or arrays at the hardware's
        # own shape, or, for hardware arrays larger than a chunk, made per chunk
        per_chunk = bound is None and int(np.prod(hw_shape)) > chunk
        if bound is not None:
            values: list[Any] = list(bound)
        elif per_chunk:
            values = hw
        else:
            with np.errstate(all="ignore"):
                values = ev.coefficient_values(*hw)
        walked, fixed = _walked_and_fixed(shapes, (M, K, N), values, dtype, whole)
        given = _given_outputs(out or {}, outputs, shape, dtype, [*shapes, *hw])
        sinks, groups = self._allocate(ev, program, outputs, given, shape, dtype, terms)
        part = _Part(ev, program, (M, K, N), walked, fixed, sinks, groups, terms, dtype,
                     chunk, per_chunk)
        part.direct = all(a.dtype == dtype and a.flags.c_contiguous and a.size == size
                          for _, a in walked)
        if whole:  # checked chunk by chunk where the chunk's cast keeps fractions
            part.whole = tuple(i for i, a in walked if i < 3 and a.dtype.kind == "f")
        _choose_kernel(part, engine, size)
        _in_parts(part, size, _threads(threads, size, chunk), chunk)

    def _allocate(self, ev: Evaluator, program: Program, outputs: tuple[str, ...],
                  given: dict[str, np.ndarray], shape: tuple[int, ...], dtype: np.dtype,
                  terms: bool | str) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The result arrays (``out=``'s where given), and the flat views the work
        writes: every output, then term times and regimes or group regimes."""
        for i in program.zero_outputs:  # not written by the work
            if outputs[i] in given:
                given[outputs[i]].fill(0.0)
        # an output that is 0 everywhere is not written: zeroed pages, never touched
        self.result = {name: given[name] if name in given else
                       (np.zeros if i in program.zero_outputs else np.empty)(shape, dtype=dtype)
                       for i, name in enumerate(outputs)}
        sinks = [self.result[name].reshape(-1) for name in outputs]
        n_terms = len(program.operations.term_operands)
        if terms == "terms":
            self.times = [np.empty(shape) for _ in range(n_terms)]
            self.regimes = [np.empty(shape, dtype=np.int8) for _ in range(n_terms)]
            sinks += [a.reshape(-1) for a in self.times + self.regimes]
        groups: list[np.ndarray] = []
        if terms is True:
            for key in ev.group_keys:
                self.result[key] = np.empty(shape, dtype=np.int8)
            groups = [self.result[key].reshape(-1) for key in ev.group_keys]
        return sinks, groups

    @staticmethod
    def _hardware(names: Sequence[str], values: Mapping[str, Any], bound: bool) -> list[Any]:
        if bound:
            if values:
                raise InputError(f"unknown hardware value(s) {sorted(values)}; this model's "
                                 "free symbols are []")
            return []
        missing = [n for n in names if n not in values]
        if missing:
            raise InputError(f"model has free hardware symbols {missing}: bind a GPU with "
                             ".on(hw) or pass them by name to evaluate()")
        unknown = sorted(set(values) - set(names), key=str)
        if unknown:
            raise unknown_name("hardware value", unknown[0], list(names),
                               extra=" (not a free symbol of this model)")
        # each value within its plausible range (devices.ranges.RANGES)
        return [values[n] if _is_lazy(values[n]) else hardware_array(values[n], n)
                for n in names]

    @staticmethod
    def _lazy(ev: Evaluator, program: Program, shapes: Sequence[Any], hw: list[Any],
              dtype: np.dtype) -> dict[str, Any]:
        """The elementwise path for arrays of other libraries (dask): no chunks, no
        ``out=``, nothing materialized."""
        shapes = [s.astype(dtype) if _is_lazy(s) else np.asarray(s, dtype=dtype)
                  for s in shapes]
        bound = ev.coefficients_bound
        coefs = list(bound) if bound is not None else ev.coefficient_values(*hw)
        with np.errstate(all="ignore"):
            values = program.plain(*shapes, *coefs)
        return dict(zip(program.outputs, values))


def _given_outputs(out: Mapping[str, Any], outputs: tuple[str, ...], shape: tuple[int, ...],
                   dtype: np.dtype, inputs: Sequence[Any]) -> dict[str, np.ndarray]:
    """The arrays of ``out=``, checked: each a requested output's, a writable
    numpy array of the result's shape and dtype, in C order (written in place),
    sharing no memory with the inputs or with each other.

    >>> _given_outputs({"t": np.empty(3)}, ("t",), (3,), np.dtype(np.float64), [])["t"].shape
    (3,)
    >>> _given_outputs({"t": np.empty(2)}, ("t",), (3,), np.dtype(np.float64), [])
    Traceback (most recent call last):
    ...
    roofline_sym.errors.InputError: out['t'] has shape (2,), not the result's (3,) (outputs are written in place)
    """
    if not isinstance(out, Mapping):
        raise InputTypeError(f"out must be a mapping of output names to arrays, not {show(out)}")
    unknown = [k for k in out if k not in outputs]
    if unknown:
        raise InputError(f"out names {show(unknown[0])}, which is not a requested output "
                         f"({', '.join(outputs)})")
    given: dict[str, np.ndarray] = {}
    for name, a in out.items():
        problem = (f"is not a numpy array but {show(a)}" if not isinstance(a, np.ndarray)
                   else f"has shape {a.shape}, not the result's {shape}" if a.shape != shape
                   else f"is {a.dtype}, not {dtype}" if a.dtype != dtype
                   else "is not contiguous in C order" if not a.flags.c_contiguous
                   else "is read-only" if not a.flags.writeable else None)
        if problem:
            raise InputError(f"out[{name!r}] {problem} (outputs are written in place)")
        # outputs are written while the inputs are still read
        others = [*inputs, *given.values()]
        if any(isinstance(b, np.ndarray) and np.may_share_memory(a, b) for b in others):
            raise InputError(f"out[{name!r}] shares memory with an input or another output")
        given[name] = a
    return given


def _threads(threads: int | None, size: int, chunk: int) -> int:
    """Threads for ``size`` shapes: as asked, else one per core, each with at
    least two chunks to do; never more than there are chunks."""
    chunks = -(-size // chunk)
    if threads is None:
        return max(1, min(usable_cpus(), chunks // 2))
    return max(1, min(threads, chunks))


class _Part:
    """The work of one run over a contiguous range of its shapes."""

    def __init__(self, ev: Evaluator, program: Program, originals: tuple[Any, Any, Any],
                 walked: list[tuple[int, np.ndarray]], fixed: list[Any],
                 sinks: list[np.ndarray], groups: list[np.ndarray], terms: bool | str,
                 dtype: np.dtype, chunk: int, per_chunk: bool):
        self.ev, self.program, self.originals = ev, program, originals
        self.walked, self.fixed, self.sinks, self.groups = walked, fixed, sinks, groups
        self.terms, self.dtype, self.chunk, self.per_chunk = terms, dtype, chunk, per_chunk
        self.kernel: Callable[..., Any] | None = None
        # the shapes (indices) whose chunks are checked whole
        self.whole: tuple[int, ...] = ()
        # the walked arrays are of the dtype, in C order, at the full shape (not
        # broadcast): the fused kernel reads them in place, a range in one call
        self.direct = False

    def __call__(self, lo: int, hi: int) -> None:
        # overflow to inf and 0/0 are values here, not warnings (per thread: errstate is)
        with np.errstate(all="ignore"):
            if self.kernel is not None:
                self._fused(lo, hi)
            else:
                with _Borrowed() as scratch:
                    self._numpy(lo, hi, scratch)

    def _shaped(self) -> list[tuple[int, str, Any]]:
        return [(i, SHAPES[i], self.originals[i]) for i, _ in self.walked if i < 3]

    def _fused(self, lo: int, hi: int) -> None:
        kernel = self.kernel
        assert kernel is not None
        coefs = self.fixed[3:]
        if self.direct:  # the shapes as they are: one call for the whole range
            blocks: Iterator[tuple[tuple[np.ndarray, ...], int]] = iter(
                [(tuple(a.reshape(-1)[lo:hi] for _, a in self.walked), hi - lo)])
        else:  # broadcast or cast to float64 a chunk at a time
            blocks = _chunks(self.walked, lo, hi, self.dtype, self.chunk)
        start = lo
        for views, n in blocks:
            args = list(self.fixed[:3])
            for (i, _), v in zip(self.walked, views):
                args[i] = np.ascontiguousarray(v)  # one compiled layout
            end = start + n
            bad = kernel(*args, *coefs, *(s[start:end] for s in self.sinks),
                         *(g[start:end] for g in self.groups), n)
            if bad:  # named by the numpy checks, chunk by chunk (they raise)
                for views, _ in _chunks(self.walked, start, end, self.dtype, self.chunk):
                    self._check_chunk(dict(zip((i for i, _ in self.walked), views)))
            start = end

    def _check_chunk(self, views: Mapping[int, np.ndarray]) -> None:
        """Raise for a bad shape of a chunk (``views``: by index): not positive,
        finite and at most 2**53, then (those checked whole) not whole."""
        shaped = self._shaped()
        for i, name, original in shaped:
            _check(views[i], original, name)
        for i, name, _ in shaped:
            if i in self.whole:
                _check_whole(views[i], name)

    def _numpy(self, lo: int, hi: int, kept: "_Borrowed") -> None:
        program, dtype, chunk, sinks = self.program, self.dtype, self.chunk, self.sinks
        width = min(chunk, hi - lo)
        scratch = kept.take(dtype, chunk, width, program.n_buffers)
        members = self.ev.group_members
        n_terms = len(program.operations.term_operands)
        if self.terms is True:  # term times per chunk; the group regimes are kept
            n_labels = program.operations.n_labels
            times = kept.take(dtype, chunk, width, n_terms + n_labels + 1, "terms")
            acc = times[n_terms:]  # a sum per label, and the largest of them
            scratch = (times[:n_terms] + kept.take(np.dtype(np.int8), chunk, width, n_terms)
                       + scratch)
        check = _check_bits if program.checks_zero else _check
        shaped = self._shaped()
        # the whole shapes' check rounds into a scratch buffer, free once a chunk is done
        whole_buf = None if not self.whole else scratch[-1] if program.n_buffers else \
            kept.take(dtype, chunk, width, 1, "whole")[0]
        start = lo
        for views, n in _chunks(self.walked, lo, hi, dtype, chunk):
            args = list(self.fixed)
            for (i, _), v in zip(self.walked, views):
                args[i] = v
            if self.per_chunk:
                args[3:] = [c if np.ndim(c) == 0 else np.asarray(c, dtype=dtype)
                            for c in self.ev.coefficient_values(*args[3:])]
            end = start + n
            bufs = scratch if n == width else [b[:n] for b in scratch]
            least = program.run(*args, *(s[start:end] for s in sinks), *bufs)
            # the shapes checked after the chunk's work, while they are in cache
            for i, name, original in shaped:
                check(args[i], original, name)
            if program.checks_zero and not least > 0:  # a zero shape (or underflow)
                for i, name, original in shaped:
                    _check(args[i], original, name)
            for i, name, _ in shaped:
                if i in self.whole:
                    _check_whole(args[i], name, whole_buf)
            if self.terms is True:
                _group_regimes(members, bufs[:n_terms], bufs[n_terms:2 * n_terms],
                               [a[:n] for a in acc], [g[start:end] for g in self.groups])
            start = end


def _chunks(walked: list[tuple[int, np.ndarray]], lo: int, hi: int, dtype: np.dtype,
            chunk: int) -> Iterator[tuple[tuple[np.ndarray, ...], int]]:
    """``(views, n)``: the walked arrays' elements ``lo`` to ``hi`` (broadcast, in
    C order, cast to ``dtype``), at most ``chunk`` at a time."""
    if not walked:
        if hi > lo:
            yield (), hi - lo
        return
    it = np.nditer([a for _, a in walked],
                   flags=["external_loop", "buffered", "zerosize_ok", "ranged"],
                   op_flags=[["readonly"]] * len(walked), op_dtypes=[dtype] * len(walked),
                   casting="unsafe", buffersize=chunk, order="C")
    with it:
        if hi <= lo:
            return
        it.iterrange = (lo, hi)  # type: ignore[misc]  # settable with "ranged"
        for views in it:
            # numpy's stubs miss it: over one array, nditer yields the array itself
            views = (views,) if len(walked) == 1 else views  # type: ignore[assignment]
            yield views, views[0].size


# the threads that run parts of calls, started when first needed and kept (with
# their scratch buffers) for the next call
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor  # here: it imports logging

            _POOL = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="roofline_sym")
        return _POOL


def _in_parts(part: _Part, size: int, n_threads: int, chunk: int) -> None:
    """``part`` over ``[0, size)`` in ``n_threads`` contiguous ranges (whole
    chunks each), the first in this thread; the first range's error is raised,
    as a serial run would raise it."""
    chunks = -(-size // chunk)
    bounds = [min(size, chunk * (chunks * t // n_threads)) for t in range(n_threads + 1)]
    if n_threads == 1:
        part(0, size)
        return
    futures: list[Future[None]] = [_pool().submit(part, bounds[t], bounds[t + 1])
                                   for t in range(1, n_threads)]
    errors: list[BaseException | None] = []
    try:
        part(bounds[0], bounds[1])
        errors.append(None)
    except Exception as e:  # raised below, after the other threads are done
        errors.append(e)
    for f in futures:
        errors.append(f.exception())
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first


# Scratch buffers kept between calls: a fresh buffer costs its pages' first
# touch (for a dozen buffers of a chunk, about as much as a dozen operations on
# them), which repeated calls (a sweep's chunks) would pay each time.  Kept for
# whichever thread runs a part next (the pool's threads take turns), by kind
# (dtype, chunk, use): at most one set per core of each.
_KEPT: dict[tuple[str, int, str], list[list[np.ndarray]]] = {}
_KEPT_LOCK = threading.Lock()


class _Borrowed:
    """The scratch buffers one part uses, taken from the kept ones and given
    back when it is done (``with``)."""

    def __init__(self) -> None:
        self.sets: list[tuple[tuple[str, int, str], list[np.ndarray]]] = []

    def take(self, dtype: np.dtype, chunk: int, width: int, count: int,
             use: str = "ops") -> list[np.ndarray]:
        """``count`` buffers of ``width`` elements (views of kept buffers of
        ``chunk``; small ones, and chunks far above ``CHUNK``, are made afresh)."""
        if chunk > 4 * CHUNK or width * dtype.itemsize < 1 << 16:
            return [np.empty(width, dtype=dtype) for _ in range(count)]
        key = (dtype.str, chunk, use)
        with _KEPT_LOCK:
            free = _KEPT.get(key)
            buffers = free.pop() if free else []
        buffers.extend(np.empty(chunk, dtype=dtype) for _ in range(count - len(buffers)))
        self.sets.append((key, buffers))
        return [b[:width] for b in buffers[:count]]

    def __enter__(self) -> "_Borrowed":
        return self

    def __exit__(self, *exc: object) -> None:
        cores = usable_cpus()
        with _KEPT_LOCK:
            if len(_KEPT) > 8:  # a few kinds at most
                _KEPT.clear()
            for key, buffers in self.sets:
                free = _KEPT.setdefault(key, [])
                if len(free) < cores:
                    free.append(buffers)
        self.sets = []


def release_scratch() -> int:
    """Let go of the kept scratch buffers; returns the bytes released.

    >>> import roofline_sym as rs
    >>> _ = rs.linear("tensorwise").on("h100").evaluate([4096.0] * 100_000, 4096, 4096)
    >>> release_scratch() > 0, release_scratch()
    (True, 0)
    """
    with _KEPT_LOCK:
        kept = [b for sets in _KEPT.values() for buffers in sets for b in buffers]
        _KEPT.clear()
    return sum(b.nbytes for b in kept)


def _group_regimes(groups: Sequence[Sequence[int]], times: list[np.ndarray],
                   regimes: list[np.ndarray], acc: list[np.ndarray],
                   outs: list[np.ndarray]) -> None:
    """Per group, the label whose terms hold the most time (the first on ties,
    as ``np.argmax``); ``acc``: a buffer per label and one more."""
    *sums, best = acc
    last = len(sums) - 1
    for members, out in zip(groups, outs):
        if not members:
            out.fill(-1)
            continue
        for a in sums:
            a.fill(0.0)
        for i in members:
            for r, a in enumerate(sums):
                np.add(a, times[i], out=a, where=np.equal(regimes[i], r))
        out.fill(last)
        np.copyto(best, sums[last])
        for r in range(last - 1, -1, -1):  # downwards: an equal earlier label wins
            np.copyto(out, r, where=np.greater_equal(sums[r], best))
            np.maximum(best, sums[r], out=best)
