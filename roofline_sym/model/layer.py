"""The cost of one linear layer in bf16 and in a low-precision recipe.

A ``Linear`` holds named time terms (each GEMM, each cast kernel) as SymPy
expressions in M, K, N and the hardware symbols.  ``.on(hw)`` binds a GPU
(exact values); ``.evaluate`` computes the seven times and the speedup for
arrays of shapes.

>>> import roofline_sym as rs
>>> m = rs.linear("tensorwise", mode="training", fuse=True, preset="torchao")
>>> out = m.on("NVIDIA H100").evaluate(M=8192, K=8192, N=8192)
>>> round(float(out["speedup"]), 3)
1.624
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from .. import renderers
from .. import symbols as S
from ..devices import Hardware, hardware, implementations
from ..errors import InputError, UnknownNameError
from ..families import BLOCK_SCALED, family_of
from ..validate import InputTypeError, count, first_fraction, items, show
from ..evaluation.compiled import BoundTerms, CompiledTerms
from ..evaluation.lazy import evaluate_lazy, is_lazy
from .formats import element, scaling
from .gemm import Gemm
from .outputs import OUTPUTS, compile_model_terms
from .presets import Options, grouped_options, options
from .recipes import (FUSABLE_ROLES, MODES, Kernel, Recipe, gemm_dims, gemm_weight, list_recipes,
                      recipe as get_recipe, role_dims, tensor_dims)
from .term import Term, TermId, Work
from .workloads import Workload, workload as get_workload

__all__ = ["Linear", "linear", "with_hardware", "OUTPUTS", "BreakdownPieces"]


@dataclass(frozen=True)
class BreakdownPieces:
    """What a model's LaTeX shows: every term (its name prints itself, ``time``;
    its definition, ``expr``), by side in model order, and the named totals
    (``OUTPUTS``); the output layer writes it."""

    recipe: str
    lowp_label: str
    terms: tuple[Term, ...]
    totals: tuple[tuple[str, sympy.Expr], ...]


# With fusion modeling, inference compares Act -> Linear: bf16 runs the
# activation as its own kernel (read + write the bf16 input), while the
# low-precision cast absorbs it.  Training counts no such term.
_BF16_ACTIVATION = Kernel("activation", ("bf16",), ("bf16",))


def _gemm_scale_bytes(r: Recipe, gemm: str, m: sympy.Expr, k: sympy.Expr, n: sympy.Expr,
                      opts: Options, groups: int) -> sympy.Expr:
    a, b = r.scalings(gemm)
    copies = groups if gemm_weight(gemm) == "b" else 1  # the weight's scales, per expert
    if opts.gemm_scales == "format":
        return sum((c * scaling(s).scale_bytes(dim, k)
                    for s, dim, c in ((a, m, 1), (b, n, copies)) if s), sympy.Integer(0))
    # torchao: MX / NVFP4 only, floor over both operands, at the operand's size
    if a is None or family_of(a) not in BLOCK_SCALED:
        return sympy.Integer(0)
    block = scaling(a).block[1]
    return sympy.floor((m * k + copies * k * n) / block) * element(r.gemm_format(gemm)).bytes


def _lowp_label(r: Recipe) -> str:
    dtypes = sorted(r.dtypes - {"bf16"})
    if not dtypes:  # an emulated recipe: every GEMM runs in bf16
        return "bf16"
    return dtypes[0] if len(dtypes) == 1 else "lowp"


def _terms(r: Recipe, mode: str, fuse: bool, opts: Options, w: Workload,
           groups: int = 1) -> tuple[Term, ...]:
    def price(id: TermId, work: Work) -> Term:
        # a GEMM's name shows its side's dtype: t^{bf16}, t^{fp8} (even for a GEMM a
        # recipe keeps in bf16, which is still a low-precision-side term)
        label = _lowp_label(r) if id.side == "lowp" else "bf16"
        return Term.roofline(id, work, gemm_time=opts.gemm_time, launch_floor=opts.launch_floor,
                             efficiency=opts.efficiency, label=label, timer=opts.timer)

    def gemm(name: str, m: sympy.Expr, k: sympy.Expr, n: sympy.Expr, operand: str,
             scale_bytes: sympy.Expr = sympy.Integer(0)) -> Gemm:
        return Gemm(name, m, k, n, operand, scale_bytes=scale_bytes, groups=groups,
                    weight=gemm_weight(name))

    def copies(tensor: str) -> int:  # a grouped layer holds one weight per expert
        return groups if tensor == "weight" else 1

    # grouped (MoE) GEMM kernels, priced at their own rate in the default model
    grouped = groups > 1 or w.grouped_gemms

    terms = []
    for name, (m, k, n) in gemm_dims(mode).items():
        g = gemm(name, m, k, n, "bf16")
        terms.append(price(TermId("baseline", "gemm", name),
                           Work(g.flops, g.dtype, g.bytes, grouped=grouped)))
    if mode == "inference" and fuse and w.casts:
        terms.append(price(TermId("baseline", "activation", "input"),
                           Work(bytes=_BF16_ACTIVATION.bytes(*role_dims(mode)["input"]),
                                kind="elementwise")))
    if opts.workload_kernels:
        terms += [price(TermId(side, "workload", k.tensor, k.name),
                        Work(bytes=copies(k.tensor) * k.bytes, kind=k.kind))
                  for side in ("baseline", "lowp") for k in w.kernels]
    for name, (m, k, n) in gemm_dims(mode).items():
        g = gemm(name, m, k, n, r.gemm_format(name),
                 _gemm_scale_bytes(r, name, m, k, n, opts, groups))
        terms.append(price(TermId("lowp", "gemm", name),
                           Work(g.flops, g.dtype, g.bytes, scaling=r.family(name),
                                grouped=grouped,
                                fast_accum=name not in r.slow_accum_gemms)))
    if not w.casts:
        return tuple(terms)
    dims = dict(tensor_dims(mode))
    quantize_writes_layout = implementations.quantize_writes_scale_layout(opts.implementation)
    casts = [(role, role, ks) for role, ks in r.kernels.items()]
    if w.quantize_weight:  # the stored weight (N x K, contracted along K) cast on the fly
        dims["weight"] = (S.N, S.K)
        casts.append(("weight", "input", r.kernels["input"]))
    for role, _, kernels in casts:
        d0, d1 = dims[role]
        # inference casts never fuse their read: the activation is fused instead
        fused = fuse and mode == "training" and role in FUSABLE_ROLES
        for cast in kernels:
            if role == "weight" and cast.relayout and not w.weight_scale_relayout:
                continue  # the weight cast wrote its scales in the GEMM's layout
            if cast.relayout and quantize_writes_layout:
                continue  # the library's quantize kernel wrote them in the GEMM's layout
            nbytes = copies(role) * cast.bytes(d0, d1, fused)
            if nbytes == 0 and cast.reads and opts.launch_floor == "empty_kernels":
                continue  # fused away entirely: the seed counts no launch for it
            terms.append(price(TermId("lowp", "cast", role, cast.name),
                               Work(bytes=nbytes, kind=cast.kind)))
    return tuple(terms)


class Linear:
    """A linear layer's cost model; see ``linear()``.

    Attributes are SymPy expressions: ``baseline_gemm_time``,
    ``baseline_overhead_time``, ``lowp_gemm_time``, ``lowp_overhead_time``,
    ``baseline_time``, ``lowp_time``, ``speedup``; ``terms`` keeps every named
    part with its regime pieces; ``groups``: the experts of a grouped layer
    (None: a dense layer).
    """

    def __init__(self, recipe: Recipe, mode: str, fuse: bool, preset: str,
                 opts: Options, terms: tuple[Term, ...], hw: Hardware | None = None,
                 unbound: "Linear | None" = None, workload: Workload | None = None,
                 groups: int | None = None, spec: Mapping[str, Any] | None = None):
        self.unbound = self if hw is None else unbound  # the model before .on()
        self.groups = groups
        self._spec = dict(spec or {})  # linear()'s arguments, to rebuild it grouped
        self.recipe = recipe
        self.mode = mode
        self.fuse = fuse
        self.workload = workload or get_workload("linear")
        self.preset = preset
        self.options = opts
        self.terms = terms
        self.hardware = hw

    # -- the seven quantities -------------------------------------------------
    def _sum(self, side: str, group: str) -> sympy.Expr:
        return sympy.Add(*(t.time for t in self.terms if (t.side, t.group) == (side, group)))

    @cached_property
    def baseline_gemm_time(self) -> sympy.Expr:
        return self._sum("baseline", "gemm")

    @cached_property
    def baseline_overhead_time(self) -> sympy.Expr:
        return self._sum("baseline", "overhead")

    @cached_property
    def lowp_gemm_time(self) -> sympy.Expr:
        return self._sum("lowp", "gemm")

    @cached_property
    def lowp_overhead_time(self) -> sympy.Expr:
        return self._sum("lowp", "overhead")

    @property
    def baseline_time(self) -> sympy.Expr:
        return self.baseline_gemm_time + self.baseline_overhead_time

    @property
    def lowp_time(self) -> sympy.Expr:
        return self.lowp_gemm_time + self.lowp_overhead_time

    @property
    def speedup(self) -> sympy.Expr:
        return self.baseline_time / self.lowp_time

    @property
    def expressions(self) -> dict[str, sympy.Expr]:
        """The seven quantities by name."""
        return {name: getattr(self, name) for name in OUTPUTS}

    @property
    def breakdown(self) -> dict[str, sympy.Expr]:
        """Every named term: ``{"lowp.gemm.output": ..., "lowp.cast.input.amax": ...}``."""
        return {t.name: t.expr for t in self.terms}

    @property
    def free_hardware_symbols(self) -> set[sympy.Symbol]:
        return set(self._free_hardware_symbols)

    @cached_property
    def _free_hardware_symbols(self) -> frozenset[sympy.Symbol]:
        # once per model: a walk of every term (solves and bindings ask again)
        free: set[sympy.Symbol] = set()
        for t in self.terms:
            for _, e in t.pieces:  # the pieces' symbols: those of t.expr, their Max
                free |= e.free_symbols
        return frozenset(s for s in free if S.is_hardware_symbol(s))

    @property
    def dtypes(self) -> set[str]:
        """Every GEMM peak the model uses (bf16 and the recipe's)."""
        return {"bf16"} | self.recipe.dtypes

    @property
    def lowp_label(self) -> str:
        """The dtype the low-precision side is named by (``fp8``, ``fp4``;
        ``lowp`` for a recipe mixing several)."""
        return _lowp_label(self.recipe)

    # -- binding and evaluation ---------------------------------------------
    def on(self, hw: Hardware | str) -> "Linear":
        """Bind hardware (an entry or a name in the preset's dataset), exactly.

        A bound model rebinds from its unbound terms.
        """
        if self.hardware is not None:
            if self.unbound is None:  # a bound model built without its unbound one
                raise InputError(f"{self!r} keeps no unbound model to rebind: build it "
                                 "with linear()")
            return self.unbound.on(hw)
        hw = hardware(hw, dataset=self.options.dataset)  # a name, or an entry as it is
        if self.options.efficiency == "size":  # the library's rates and fixed times
            hw = implementations.apply(hw, self.options.implementation,
                                       self.recipe.family("output"))
        problem = self.unsupported_reason(hw)
        if problem:
            raise InputError(problem)
        values = hw.values_for(self.free_hardware_symbols)
        terms = tuple(t.xreplace(values) for t in self.terms)
        return Linear(self.recipe, self.mode, self.fuse, self.preset, self.options, terms, hw,
                      unbound=self, workload=self.workload, groups=self.groups,
                      spec=self._spec)

    def with_groups(self, groups: int | None) -> "Linear":
        """The same layer with its weight over ``groups`` experts (None:
        dense), built by ``linear()`` with this model's arguments and bound to
        the same hardware.

        >>> m = linear("mxfp8_cublas").on("b200")
        >>> m.with_groups(8)
        Linear('mxfp8_cublas', mode='training', fuse=False, preset='default', groups=8, hardware='B200 (HGX)')
        """
        if groups == self.groups:
            return self
        if not self._spec:
            raise InputError(f"{self!r} was not built by linear(): rebuild it with groups=")
        model = linear(**{**self._spec, "groups": groups})
        return model if self.hardware is None else model.on(self.hardware)

    def unsupported_reason(self, hw: Hardware) -> str | None:
        """Why this recipe cannot run on ``hw`` (a dtype or block scaling it
        lacks), or None.

        >>> linear("mxfp8_cublas").unsupported_reason(hardware("h100"))[:38]
        "recipe 'mxfp8_cublas' needs MX block-s"
        """
        return self.recipe.unsupported_reason(hw)

    @cached_property
    def compiled(self) -> CompiledTerms | BoundTerms:
        """The terms compiled for arrays (``evaluation/``): once per structure of
        the unbound terms; a bound model passes its exact numbers to that.
        ``.source(outputs)`` shows the code it runs."""
        if self.hardware is not None and self.unbound is not None:
            unbound = compile_model_terms(self.unbound.terms)
            values = self.hardware.parameters
            if all(s in values for s in unbound.free):
                return unbound.bind(values)
        return compile_model_terms(self.terms)

    def evaluate_terms(self, M: Any, K: Any, N: Any, *, integer_shapes: bool = True,
                       **hardware_values: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Every term's time and regime at shapes ``M, K, N``.

        Returns ``{term name: (seconds, regime labels)}``, arrays broadcast.
        Shapes are whole numbers unless ``integer_shapes=False`` (as ``evaluate``).

        >>> m = linear("tensorwise", fuse=True).on("h100")
        >>> t, regime = m.evaluate_terms(1024, 8192, 8192)["lowp.gemm.output"]
        >>> str(regime)
        'compute'
        """
        if integer_shapes:
            M, K, N = _whole_shapes(M, K, N)
        times = self.compiled.term_times(M, K, N, hardware_values)
        return {t.name: value for t, value in zip(self.terms, times)}

    def hardware_axis(self, gpus: Sequence[Hardware | str], ndim: int = 0) -> dict[str, np.ndarray]:
        """This model's hardware values for several GPUs, stacked on a leading axis.

        Arrays have shape ``(len(gpus),) + (1,) * ndim``, so they broadcast
        against shapes with ``ndim`` dimensions; pass them to ``evaluate``.

        >>> m = linear("tensorwise", fuse=True)
        >>> out = m.evaluate(8192, 8192, 8192, **m.hardware_axis(["h100", "h200", "b200"]))
        >>> out["speedup"].round(2)
        array([1.81, 1.88, 1.78])
        """
        if self.hardware is not None:
            raise InputError(f"{self!r} is bound to {self.hardware.name}: use the unbound "
                             "model to evaluate several GPUs at once")
        entries = [hardware(g, dataset=self.options.dataset)
                   for g in items(gpus, "hardware_axis: gpus", (Hardware, str))]
        ndim = count(ndim, "hardware_axis: ndim", maximum=32)  # numpy's limit is 64 axes
        for hw in entries:
            problem = self.unsupported_reason(hw)
            if problem:
                raise InputError(problem)
        needed = self.free_hardware_symbols
        rows = [hw.values_for(needed) for hw in entries]
        shape = (len(entries),) + (1,) * ndim
        return {str(s): np.array([float(r[s]) for r in rows]).reshape(shape) for s in needed}

    def evaluate(self, M: Any, K: Any, N: Any, outputs: Sequence[str] | str | None = OUTPUTS,
                 dtype: Any = np.float64, *, threads: int | None = None, engine: str = "auto",
                 integer_shapes: bool = True, out: Mapping[str, np.ndarray] | None = None,
                 **hardware_values: Any) -> dict[str, np.ndarray]:
        """The seven quantities (or only ``outputs``) at shapes ``M, K, N`` (numpy
        broadcasting).

        Shapes are taken as float64 (no integer overflow; ``dtype=np.float32``
        halves the memory, to about 7 digits) and must be positive and finite.
        They are a layer's dimensions, so whole numbers (``8192.5`` is an
        error naming the argument), as in shape sets and on the command line;
        ``integer_shapes=False`` evaluates the model as the function of real
        ``M, K, N`` it is (a continuous curve, a plot's grid, a break-even root).
        An unbound model takes its hardware symbols by name, e.g.
        ``BW=3.35e12``; arrays evaluate many GPUs at once (``hardware_axis``).
        ``outputs``: the names to return (default: all of ``OUTPUTS``); the work
        runs in cache-sized chunks, in place, computing only what they need,
        over ``threads`` threads (None: every core, for inputs large enough; the
        values do not depend on it).  ``engine``: ``"auto"`` (numba's fused
        loop where it pays: ``pip install roofline-sym[fast]``, large inputs),
        ``"numpy"`` or ``"numba"``.  ``out``: arrays to write outputs into, by
        name (each of the result's shape and dtype, in C order): repeated calls
        then reuse memory instead of paying for fresh pages.  Dask arrays stay
        lazy: the result holds dask arrays, computed block by block (on a
        ``dask.distributed`` cluster, on its workers).

        >>> m = linear("rowwise", preset="torchao").on("NVIDIA H100")
        >>> m.evaluate(M=[4096, 8192], K=8192, N=8192, outputs=("speedup",))["speedup"].round(3)
        array([1.323, 1.461])
        >>> round(float(m.evaluate(4096.5, 8192, 8192, integer_shapes=False)["speedup"]), 3)
        1.323

        With dask (``pip install roofline-sym[dask]``):
        ``m.evaluate(M=dask.array.from_array(ms, chunks=2**20), K=8192, N=8192)["speedup"]``
        is a dask array; ``.compute()`` evaluates it.
        """
        if is_lazy(M, K, N, *hardware_values.values()):
            if out:
                raise InputTypeError("out= takes numpy arrays; lazy arrays make their own")
            if integer_shapes:
                M, K, N = _whole_shapes(M, K, N)
            return evaluate_lazy(self.compiled, outputs, M, K, N, hardware_values, dtype)
        # whole shapes checked as they are read for the work (in the fused kernel,
        # or chunk by chunk): one pass over them, not two
        try:
            return self.compiled.evaluate(M, K, N, hardware_values, outputs=outputs,
                                          dtype=dtype, threads=threads, engine=engine,
                                          whole=integer_shapes, out=out)
        except Exception as exc:
            error = exc
        if integer_shapes:  # a fraction anywhere is named first, before any other error
            _whole_shapes(M, K, N)
        raise error

    # -- display ---------------------------------------------------------------
    def latex(self, *, width: Any = None, digits: int | None = None) -> str:
        """The breakdown as an ``aligned`` block for display math (``output.breakdown``);
        with ``width`` (``r"\\columnwidth"``), an ``align*`` block that fits it."""
        return renderers.render(self._latex_pieces_(), width=width, digits=digits)

    def _latex_pieces_(self) -> "BreakdownPieces":
        return BreakdownPieces(self.recipe.name, self.lowp_label, self.terms,
                               tuple(self.expressions.items()))

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"

    def __repr__(self) -> str:
        bound = f", hardware={self.hardware.name!r}" if self.hardware else ""
        work = "" if self.workload.name == "linear" else f", workload={self.workload.name!r}"
        groups = "" if self.groups is None else f", groups={self.groups}"
        return (f"Linear({self.recipe.name!r}, mode={self.mode!r}, fuse={self.fuse}, "
                f"preset={self.preset!r}{work}{groups}{bound})")


def _whole_shapes(*shapes: Any) -> tuple[Any, ...]:
    """``M, K, N`` as given when every value is a whole number (others, such as
    text, NaN or -1, are left to the evaluation's checks); a positive fraction is a
    ``ValueError`` naming the argument.  A dask array is checked block by
    block as it is computed; another library's array is not converted (that
    would compute it) and not checked.

    >>> _whole_shapes(8192, [1024.0, 2048], 4096)
    (8192, [1024.0, 2048], 4096)
    >>> _whole_shapes(8192.5, 8192, 8192)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    roofline_sym.errors.InputError: M must be a whole number (a layer's dimension), got 8192.5; ...
    """
    return tuple(_whole(v, name) for v, name in zip(shapes, "MKN"))


def _whole(value: Any, name: str) -> Any:
    if is_lazy(value):
        return value.map_blocks(_whole, name, dtype=value.dtype)
    if not isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple)) and (
            hasattr(value, "__array_function__") or hasattr(value, "__array_ufunc__")):
        return value  # another library's array: converting it would compute it
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return value
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            return value
    if arr.dtype.kind != "f":
        return value  # integers are whole; anything else is not a number
    # NaN, infinities and values <= 0 are left to the evaluation's own message
    flat = arr.reshape(-1)
    i = first_fraction(flat)
    if i is not None:
        raise InputError(f"{name} must be a whole number (a layer's dimension), got "
                         f"{show(flat[i].item())}; evaluate(..., integer_shapes=False) "
                         "evaluates the model at real shapes (a continuous curve, a "
                         "break-even root)")
    return value


def _recipe(name: Any, mode: str, opts: Options) -> Recipe:
    """The recipe ``name`` of ``mode``; a name of the other mode only is named as
    such (``nvfp4`` in training: an inference recipe), not just unknown."""
    try:
        return get_recipe(name, mode, opts.recipe_table, opts.torch_compile_limitations)
    except UnknownNameError as exc:
        if not isinstance(name, str) or not isinstance(mode, str) or mode not in MODES:
            raise
        other = next((m for m in MODES if m != mode), None)
        if other is None or name not in list_recipes(other, opts.recipe_table):
            raise
        raise InputError(f"recipe {name!r} exists for {other}, not {mode}: pass "
                         f"mode={other!r} (--mode {other}); {mode} recipes: "
                         f"{', '.join(list_recipes(mode, opts.recipe_table))}") from exc


def linear(recipe: str | Mapping[str, str], mode: str = "training", fuse: bool | None = None,
           preset: str = "default", workload: str | Workload = "linear",
           groups: int | None = None, **option_overrides: Any) -> Linear:
    """Build the cost model of one linear layer.

    ``recipe``: a name from ``list_recipes(mode)``, or the seed's ``dynamic`` /
    ``delayed`` / a role mapping of them.  ``fuse``: model the casts of input
    and grad_output fused with their producers (training) or an activation
    before the layer (inference); None takes the preset's (seed: True, the
    others: False).  ``preset``: ``default``, ``torchao``,
    ``seed``; ``workload``: what surrounds the layer (``workloads.WORKLOADS``:
    ``linear``, ``gemm``, ``ln-linear-sigmoid``, ``relu-linear``, ...), which
    adds its kernels on both sides and sets the fusion (a ``fuse`` that
    contradicts it is refused); ``groups``: G experts (a mixture of experts):
    the M tokens are routed among them, weights are ``[G, K, N]``; forward
    and grad_input are 2D x 3D grouped GEMMs, grad_weight a 2D x 2D one, the
    weight's casts run over all G experts (``groups=1`` is the dense layer;
    preset ``torchao`` prices grouped layers with torchao's MoE roofline,
    see ``presets.GROUPED_MODELS``); ``option_overrides``: any field of
    ``presets.Options``.

    >>> m = linear("rowwise", mode="inference")
    >>> sorted(m.breakdown)[:2]
    ['baseline.gemm.output', 'lowp.cast.input.cast']
    >>> moe = linear("mxfp8_cublas", groups=8).on("b200")
    >>> round(float(moe.evaluate(M=65536, K=7168, N=2048)["speedup"]), 2)
    1.52
    """
    spec = dict(recipe=recipe, mode=mode, fuse=fuse, preset=preset, workload=workload,
                **option_overrides)
    groups = _check_groups(groups)
    opts = options(preset, **option_overrides)
    if groups is not None:
        opts = grouped_options(opts, **option_overrides)
    r = _recipe(recipe, mode, opts)
    w = get_workload(workload, mode)
    if fuse is not None and not isinstance(fuse, bool):
        raise InputTypeError(f"fuse must be True or False, not {show(fuse)}")
    if w.fuse is not None and fuse is not None and fuse != w.fuse:
        raise InputError(f"workload {w.name!r} {'fuses' if w.fuse else 'does not fuse'} its "
                         f"casts; drop fuse={fuse} or pick workload='linear'")
    fuse = w.fuse if w.fuse is not None else (opts.fuse if fuse is None else fuse)
    return Linear(r, mode, fuse, preset, opts, _terms(r, mode, fuse, opts, w, groups or 1),
                  workload=w, groups=groups, spec=spec)


def with_hardware(model: Any, hw: Hardware | str | None, what: str,
                  keyword: str = "hardware") -> Linear:
    """``model`` bound to ``hw`` (a model already bound, when ``hw`` is None): the
    check ``what`` (a function's name) makes of a model it is given with a
    ``keyword=`` for hardware."""
    if not isinstance(model, Linear):
        raise InputTypeError(f"{what} takes a model from rs.linear(), not "
                             f"{type(model).__name__} {show(model)}")
    if hw is None:
        return model
    if model.hardware is not None:
        raise InputError(f"the model is already bound to {model.hardware.name}; pass the "
                         f"unbound model with {keyword}=, or no {keyword}=")
    return model.on(hw)  # checks the GPU runs the recipe


def _check_groups(groups: Any) -> int | None:
    if groups is None:
        return None
    # beyond a million experts no router or weight layout is real
    return count(groups, "groups (the number of experts, or None)", minimum=1, maximum=2 ** 20)
