"""The measured components, and what the cost model predicts for each.

A component is one GEMM (bf16 or fp8, three per linear layer), one cast
kernel of the tensorwise or rowwise recipe, or a micro-benchmark.  ``Case``
is a component at a linear-layer shape: the operation the harness runs and
the FLOPs and bytes the model charges for it (``costs``, ``model_times``).

>>> c = Case("gemm.fp8_rowwise.grad_input", M=16384, K=8192, N=1024)
>>> c.op                 # grad_input = grad_output @ weight.T: (m, k, n) = (M, N, K)
('gemm', 'fp8_rowwise', 16384, 1024, 8192, False)
>>> c.dtype, c.flops, c.bytes    # torchao: the per-tensor kernel, unit scales (no reads)
('fp8', 274877906944.0, 293601280.0)
>>> Case("cast.rowwise.input.amax_cols", 16384, 8192, 1024).op   # an fp32 scale per column
('rw_amax_cols', 16384, 8192)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Callable, Sequence

import numpy as np
import sympy

from ... import symbols as S
from ...errors import InputError
from ...model.formats import element
from ...model.layer import Linear, linear
from ...model.recipes import gemm_dims, recipe, tensor_dims
# the time of a row is the model's roofline, numerically
from ...model.term import Term, TermId, Work, roofline_times as model_times
from ...validate import unknown_name

__all__ = [
    "GEMM_NAMES",
    "GEMM_CLASSES",
    "CAST_RECIPES",
    "CAST_IMPLS",
    "MICRO",
    "COMPONENTS",
    "Case",
    "gemm_class_of",
    "model_term",
    "costs",
    "model_times",
]


# -- components and the model terms that predict them ---------------------------
GEMM_NAMES = tuple(gemm_dims("training"))  # output, grad_input, grad_weight
# GEMM name in a component (gemm.<name>.<gemm>) -> (recipe whose model prices it,
# side of the model); the class of its fixed time is the model term's
# (gemm_class_of: rowwise's backward GEMMs run as the per-tensor kernel)
GEMM_CLASSES = {
    "bf16": ("tensorwise", "baseline"),
    "fp8_tensorwise": ("tensorwise", "lowp"),
    "fp8_rowwise": ("rowwise", "lowp"),
}
CAST_RECIPES = ("tensorwise", "rowwise")

# (recipe, "act" or "weight", kernel) -> (implementation, transposed): the
# operation the harness runs for a kernel of model/recipes.py.  "transposed": the
# kernel reads the bf16 transpose (dim1 x dim0) an earlier kernel wrote.
CAST_IMPLS: dict[tuple[str, str, str], tuple[str, bool]] = {
    ("tensorwise", "act", "amax"): ("amax", False),
    ("tensorwise", "act", "amax_final"): ("amax_final", False),
    ("tensorwise", "act", "cast_dim0_dim1"): ("tw_cast_dim0_dim1", False),
    ("tensorwise", "weight", "amax"): ("amax", False),
    ("tensorwise", "weight", "amax_final"): ("amax_final", False),
    ("tensorwise", "weight", "cast_dim0"): ("tw_cast", False),
    ("tensorwise", "weight", "cast_dim1"): ("tw_cast_t", False),
    ("rowwise", "act", "cast_rows"): ("rw_rows", False),
    ("rowwise", "act", "amax_cols"): ("rw_amax_cols", False),
    ("rowwise", "act", "cast_cols"): ("rw_cast_cols", False),
    # the weight is stored N x K: its row cast scales the columns of K x N
    ("rowwise", "weight", "amax_cols"): ("rw_amax_cols", False),
    ("rowwise", "weight", "cast_rows"): ("rw_cast_cols", False),
    ("rowwise", "weight", "cast_cols"): ("rw_rows", False),
    ("rowwise", "act", "scale_product"): ("scale_product", False),
    ("rowwise", "act", "rescale"): ("rescale", False),
}
MICRO = ("micro.launch", "micro.copy")


def _cast_components() -> tuple[str, ...]:
    # derived from model/recipes.py, so a kernel added there shows up here (and a
    # test fails until CAST_IMPLS says how to run it)
    return tuple(f"cast.{r}.{role}.{k.name}" for r in CAST_RECIPES
                 for role, kernels in recipe(r, "training").kernels.items() for k in kernels)


COMPONENTS = (
    *(f"gemm.{cls}.{g}" for cls in GEMM_CLASSES for g in GEMM_NAMES),
    *_cast_components(),
    *MICRO,
)
_COMPONENT_SET = frozenset(COMPONENTS)


@cache
def _linear(recipe_name: str) -> Linear:
    # standalone kernels read their input from memory: the unfused model, priced
    # with flat efficiencies (what the component fit calibrates)
    return linear(recipe_name, mode="training", fuse=False, preset="default", efficiency="flat")


def model_term(component: str) -> Term:
    """The model's term for a component (unbound: hardware symbols free).

    GEMMs and casts are terms of ``linear(recipe, fuse=False)``; the micro
    benchmarks are a bf16 copy kernel and a kernel that moves nothing.

    >>> model_term("cast.tensorwise.weight.amax_final").expr
    t_launch
    >>> model_term("micro.copy").expr
    Max(t_launch, 4*M/(BW*eta_mem))
    """
    kind, *rest = _parts(component)
    if kind == "micro":  # micro.copy: M elements of bf16 read and written
        nbytes = 2 * element("bf16").bytes * S.M if rest == ["copy"] else 0
        return Term.roofline(TermId("micro", *rest), Work(bytes=nbytes))
    if kind == "gemm":
        gemm_class, gemm = rest
        recipe_name, side = GEMM_CLASSES[gemm_class]
        id = TermId(side, "gemm", gemm)
    else:
        recipe_name, role, kernel = rest
        id = TermId("lowp", "cast", role, kernel)
    return next(t for t in _linear(recipe_name).terms if t.id == id)


@cache
def _cost(component: str) -> tuple[str, Callable[..., list[np.ndarray | float]]]:
    """(dtype, f(M, K, N) -> (flops, bytes)): the work of the component's term."""
    work = model_term(component).work
    fn = sympy.lambdify(S.SHAPE_SYMBOLS, [work.flops, work.bytes], modules="numpy")
    return work.dtype or "", fn


@cache
def _parts(component: str) -> tuple[str, ...]:
    """A component's name in parts: ``("gemm", kind, gemm)``, ``("cast", recipe,
    role, kernel)`` or ``("micro", name)``; read once per name."""
    check_component(component)
    return tuple(component.split("."))


def check_component(component: str, where: str = "") -> None:
    """A ValueError naming the close matches unless ``component`` is one of ``COMPONENTS``."""
    if component not in _COMPONENT_SET:
        raise unknown_name("component", component, COMPONENTS, where=where)


@cache
def gemm_class_of(component: str) -> str:
    """The GEMM class of a component's model term (``symbols.GEMM_CLASSES``: the
    class of its fixed time ``t0_<class>``), ``""`` for a kernel or a micro-benchmark.

    >>> gemm_class_of("gemm.fp8_rowwise.output"), gemm_class_of("cast.rowwise.input.cast_rows")
    ('fp8_rowwise', '')
    >>> gemm_class_of("gemm.fp8_rowwise.grad_input")  # torchao: the per-tensor kernel
    'fp8_tensorwise'
    """
    work = model_term(component).work
    return S.gemm_class(work.dtype, work.scaling, work.grouped) if work.dtype else ""


def costs(components: Sequence[str] | np.ndarray, M: Any, K: Any, N: Any
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the model's (dtype, FLOPs, bytes) of ``components[i]`` at shape i.

    >>> d, f, b = costs(["gemm.bf16.output", "micro.launch"], [512, 1], [512, 1], [512, 1])
    >>> d.tolist(), f.tolist(), b.tolist()
    (['bf16', ''], [268435456.0, 0.0], [1572864.0, 0.0])
    """
    comps = np.asarray(components, dtype=object)
    shape = [np.broadcast_to(np.asarray(v, dtype=np.float64), comps.shape) for v in (M, K, N)]
    dtype = np.full(comps.shape, "", dtype=object)
    flops, nbytes = np.zeros(comps.shape), np.zeros(comps.shape)
    for comp in dict.fromkeys(comps.tolist()):
        mask = comps == comp
        d, fn = _cost(comp)
        f, b = fn(*(a[mask] for a in shape))
        dtype[mask], flops[mask], nbytes[mask] = d, f, b
    return dtype, flops, nbytes


# -- cases ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One component at one linear-layer shape; ``op`` is what actually runs.

    Cases whose ``op`` is equal (the three GEMMs of a cube, an amax shared by
    roles of equal shape) are timed once.
    """

    component: str
    M: int
    K: int
    N: int
    shape: str = ""
    shape_set: str = ""

    def __post_init__(self) -> None:
        check_component(self.component)
        for name in ("M", "K", "N"):
            value = getattr(self, name)
            if isinstance(value, bool) or not float(value).is_integer() or value <= 0:
                raise InputError(f"case {self.component}: {name} must be a positive "
                                 f"integer, not {value!r}")
            object.__setattr__(self, name, int(value))

    @property
    def kind(self) -> str:
        """``gemm``, ``cast`` or ``micro``."""
        return _parts(self.component)[0]

    @cached_property
    def op(self) -> tuple[Any, ...]:
        """The operation: ``("gemm", class, m, k, n, fast_accum)``, ``(impl, d0, d1)``..."""
        kind, *rest = _parts(self.component)
        dims = {S.M: self.M, S.K: self.K, S.N: self.N}
        if kind == "gemm":
            gemm_class, gemm = rest
            m, k, n = (dims[d] for d in gemm_dims("training")[gemm])
            # torchao's Float8LinearConfig: fast accumulation in the forward GEMM only
            fast = model_term(self.component).work.fast_accum if gemm_class != "bf16" else None
            return ("gemm", gemm_class, m, k, n, fast)
        if kind == "cast":
            recipe_name, role, kernel = rest
            key = (recipe_name, "weight" if role == "weight" else "act", kernel)
            if key not in CAST_IMPLS:
                raise InputError(f"no implementation of kernel {kernel!r} of {recipe_name} "
                                 f"({role}) in components.CAST_IMPLS")
            impl, transposed = CAST_IMPLS[key]
            d0, d1 = (dims[d] for d in tensor_dims("training")[role])
            return (impl, d1, d0) if transposed else (impl, d0, d1)
        return ("launch",) if self.component == "micro.launch" else ("copy", self.M)

    @cached_property
    def _cost(self) -> tuple[str, float, float]:
        d, f, b = costs([self.component], self.M, self.K, self.N)
        return d[0], float(f[0]), float(b[0])

    @property
    def dtype(self) -> str:
        """The GEMM peak the model prices it at (``bf16``, ``fp8``), or ``""``."""
        return self._cost[0]

    @property
    def gemm_class(self) -> str:
        """The GEMM class whose fixed time it takes (``fp8_rowwise``), or ``""``."""
        return gemm_class_of(self.component)

    @property
    def flops(self) -> float:
        return self._cost[1]

    @property
    def bytes(self) -> float:
        return self._cost[2]
