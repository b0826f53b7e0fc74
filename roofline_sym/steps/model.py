"""A whole step's cost model: named terms, their totals, bound and evaluated.

Per side, the step time composes the groups of terms (``pieces.TERM_GROUPS``)::

    compute = linear + attention + pointwise
    step    = compute * (1 + (pp - 1) / m)                 # the pipeline bubble
            + comm_exposed + Max(0, comm - phi * compute)   # what compute does not hide
            + optimizer + fixed

``evaluate`` runs the compiled path every layer model runs
(``evaluation.compiled``): the terms as labelled pieces, compiled once per
structure, with sequence length and local batch in the places of two shapes.

>>> from roofline_sym.steps.composition import step
>>> s = step("llama3-8b", "tensorwise").on("h100")
>>> out = s.evaluate(seq_len=[2048, 8192], local_batch=1)
>>> bool((out["baseline_step_s"] > 0).all()), sorted(s.groups("lowp", seq_len=2048, local_batch=1))[:3]
(True, ['attention', 'bubble', 'comm'])
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import sympy

from .. import renderers
from .. import symbols as S
from ..devices import Hardware, hardware, implementations
from ..evaluation.compiled import BoundTerms, CompiledTerms, Layout, compile_terms
from ..model.presets import options
from ..validate import positive_array
from .parallel import StepInputError
from .assembly import assemble
from .break_even import StepBreakEven, step_breakeven, step_sensitivity
from .linears import layer_models
from .pieces import LABELS, TERM_GROUPS, StepTerm
from .spec import StepSpec
from .systems import System, system
from .writing import StepPieces

__all__ = ["Step", "STEP_OUTPUTS", "GROUP_NAMES", "SIDES", "step_layout"]

SIDES = ("baseline", "lowp")
STEP_OUTPUTS = ("baseline_step_s", "lowp_step_s", "speedup", "tokens_per_s_baseline",
                "tokens_per_s_lowp", "mfu_baseline", "mfu_lowp")
# the shares Step.groups reports
GROUP_NAMES = ("linear", "attention", "pointwise", "optimizer", "comm", "bubble", "fixed")
_SHARED = ("overlap", "tokens", "ideal")


def _symbol(side: str, group: str) -> sympy.Symbol:
    return sympy.Symbol(f"{side}_{group}", positive=True)


def step_layout(bubble: sympy.Rational) -> Layout:
    """How the groups make a step's outputs (``bubble``: ``(pp - 1) / m``)."""
    groups: list[tuple[Hashable, sympy.Symbol]] = [
        ((side, g), _symbol(side, g)) for side in SIDES for g in TERM_GROUPS]
    groups += [(("shared", g), _symbol("shared", g)) for g in _SHARED]
    phi, tokens, ideal = (_symbol("shared", g) for g in _SHARED)
    outputs: dict[str, sympy.Expr] = {}
    per_side: dict[str, dict[str, sympy.Expr]] = {}
    for side in SIDES:
        g = {name: _symbol(side, name) for name in TERM_GROUPS}
        compute = g["linear"] + g["attention"] + g["pointwise"]
        exposed = g["comm_exposed"] + sympy.Max(0, g["comm"] - phi * compute)
        per_side[side] = {"linear": g["linear"], "attention": g["attention"],
                          "pointwise": g["pointwise"], "optimizer": g["optimizer"],
                          "comm": exposed, "bubble": bubble * compute, "fixed": g["fixed"]}
        outputs[f"{side}_step_s"] = sympy.Add(*per_side[side].values())
    outputs["speedup"] = outputs["baseline_step_s"] / outputs["lowp_step_s"]
    for side in SIDES:
        outputs[f"tokens_per_s_{side}"] = tokens / outputs[f"{side}_step_s"]
    for side in SIDES:
        outputs[f"mfu_{side}"] = ideal / outputs[f"{side}_step_s"]
    for side in SIDES:
        outputs.update({f"{side}_{name}_s": e for name, e in per_side[side].items()})
    return Layout(tuple(groups), tuple(outputs.items()), LABELS)


class Step:
    """A step's cost model; build it with ``rs.step()``.

    ``terms``: every named term (``breakdown`` writes them out); ``shared``:
    the overlap fraction, the tokens per GPU and the ideal time (model FLOPs
    at the bf16 peak), which tokens/s and MFU divide.  ``hardware``: the GPU
    it is bound to (None: symbolic).
    """

    def __init__(self, spec: StepSpec, terms: Sequence[StepTerm],
                 shared: Mapping[str, sympy.Expr], hw: Hardware | None = None,
                 unbound: "Step | None" = None, system: System | None = None) -> None:
        self.spec, self.terms, self.shared = spec, tuple(terms), dict(shared)
        self.hardware, self.system = hw, system
        self.unbound = self if hw is None else unbound
        self._values: dict[sympy.Symbol, sympy.Rational] = {}

    # -- the model as expressions
    @property
    def breakdown(self) -> dict[str, sympy.Expr]:
        """Every named term's time per step: ``{"lowp.linear.mlp.gate_proj": ..., ...}``."""
        return {t.name: t.expr for t in self.terms}

    def _totals(self) -> dict[sympy.Symbol, sympy.Expr]:
        sums: dict[sympy.Symbol, sympy.Expr] = {
            _symbol(side, g): sympy.Integer(0) for side in SIDES for g in TERM_GROUPS}
        for t in self.terms:
            sums[_symbol(t.side, t.group)] += t.expr
        sums.update({_symbol("shared", k): v for k, v in self.shared.items()})
        return sums

    @cached_property
    def expressions(self) -> dict[str, sympy.Expr]:
        """Every output (``STEP_OUTPUTS`` and each side's group totals) as SymPy."""
        sums = self._totals()
        return {name: e.xreplace(sums) for name, e in self.layout.outputs}

    @property
    def baseline_step_time(self) -> sympy.Expr:
        return self.expressions["baseline_step_s"]

    @property
    def lowp_step_time(self) -> sympy.Expr:
        return self.expressions["lowp_step_s"]

    @property
    def speedup(self) -> sympy.Expr:
        return self.expressions["speedup"]

    @cached_property
    def layout(self) -> Layout:
        return step_layout(self.spec.bubble)

    @property
    def free_hardware_symbols(self) -> set[sympy.Symbol]:
        free: set[sympy.Symbol] = set()
        for t in self.terms:
            for part in t.parts:
                for _, e in part:
                    free |= e.free_symbols
        for e in self.shared.values():
            free |= e.free_symbols
        return {s for s in free if S.is_hardware_symbol(s)}

    # -- binding
    def on(self, hw: Hardware | str) -> "Step":
        """Bind a GPU (an entry or a name): its numbers, the library's profile,
        its step numbers (``data/step.toml``) and its links and scale-up domain
        (its hardware record)."""
        if self.hardware is not None:
            assert self.unbound is not None
            return self.unbound.on(hw)
        entry = hardware(hw, dataset=options(self.spec.preset).dataset)
        sysinfo = system(entry)
        spec = replace(self.spec, scale_up_gpus=sysinfo.scale_up_gpus or self.spec.scale_up_gpus)
        unbound = self if spec == self.spec else Step(spec, *assemble(spec))
        models = layer_models(spec)
        for m in models:
            problem = m.unsupported_reason(entry)
            if problem:
                raise StepInputError(problem)
        if options(spec.preset, **dict(spec.options)).efficiency == "size":
            entry = implementations.apply(entry, spec.implementation,
                                          models[0].recipe.family("output"))
        values = unbound._values_on(entry, sysinfo)
        terms = [t.xreplace(values) for t in unbound.terms]
        shared = {k: sympy.sympify(e).xreplace(values) for k, e in unbound.shared.items()}
        bound = Step(spec, terms, shared, entry, unbound, sysinfo)
        bound._values = values
        return bound

    def _values_on(self, entry: Hardware, sysinfo: System) -> dict[sympy.Symbol, sympy.Rational]:
        needed = self.free_hardware_symbols
        links = {S.link_bandwidth(s) for s in S.LINK_SCOPES} | {
            S.link_efficiency(s) for s in S.LINK_SCOPES}
        if needed & links and not sysinfo.has_links:
            raise StepInputError(
                f"the links of {entry.name} ({entry.dataset} dataset) are not known: a step "
                f"over {self.spec.parallel.gpus} GPUs needs its NVLink / xGMI and network "
                "bandwidth (give link_bw_bytes_per_s, link_efficiency and scale_up_gpus in "
                "its hardware record)")
        step_values = {s: v for s, v in sysinfo.values.items() if s in needed}
        values = entry.values_for(needed - set(step_values))
        values.update(step_values)
        return values

    # -- evaluation
    @cached_property
    def compiled(self) -> CompiledTerms | BoundTerms:
        """The terms compiled for arrays; a bound step passes its exact numbers."""
        unbound = self.unbound if self.unbound is not None else self
        compiled = compile_terms(unbound._term_specs(), unbound.layout)
        if self.hardware is None:
            return compiled
        return compiled.bind(self._values)

    def _term_specs(self) -> list[tuple[Hashable, tuple[tuple[str, sympy.Expr], ...]]]:
        shapes = {S.SEQ_LEN: S.M, S.LOCAL_BATCH: S.K}
        out: list[tuple[Hashable, tuple[tuple[str, sympy.Expr], ...]]] = []
        for t in self.terms:
            for part in t.weighted_parts():
                out.append(((t.side, t.group), tuple((r, e.xreplace(shapes)) for r, e in part)))
        for key, e in self.shared.items():
            out.append((("shared", key), (("compute", sympy.sympify(e).xreplace(shapes)),)))
        return out

    def evaluate(self, seq_len: Any, local_batch: Any, outputs: Sequence[str] | None = None,
                 *, dtype: Any = np.float64, threads: int | None = None,
                 engine: str = "auto", **hardware_values: Any) -> dict[str, np.ndarray]:
        """The step's outputs (``STEP_OUTPUTS`` by default; also any side's group
        total, ``lowp_comm_s``) at ``seq_len`` and ``local_batch`` (numpy
        broadcasting; whole numbers).  An unbound step takes its hardware
        numbers by name (``BW=3.35e12``, ``BW_scale_up=4.5e11``, ...)."""
        seq = positive_array(seq_len, "seq_len", 2.0 ** 31, integer=True)
        batch = positive_array(local_batch, "local_batch", 2.0 ** 31, integer=True)
        names = STEP_OUTPUTS if outputs is None else tuple(outputs)
        result = self.compiled.evaluate(seq, batch, 1, hardware_values, outputs=names,
                                        dtype=dtype, threads=threads, engine=engine)
        return {str(k): v for k, v in result.items()}

    def groups(self, side: str, *, seq_len: Any, local_batch: Any,
               **hardware_values: Any) -> dict[str, float]:
        """The share of ``side``'s step time of each group (``GROUP_NAMES``) at one
        point; the shares add up to 1."""
        if side not in SIDES:
            raise StepInputError(f"side must be one of {', '.join(SIDES)}, not {side!r}")
        names = [f"{side}_{g}_s" for g in GROUP_NAMES] + [f"{side}_step_s"]
        out = self.evaluate(seq_len, local_batch, names, **hardware_values)
        total = float(out[f"{side}_step_s"])
        return {g: float(out[f"{side}_{g}_s"]) / total for g in GROUP_NAMES}

    @property
    def hardware_values(self) -> dict[sympy.Symbol, sympy.Rational]:
        """The exact hardware numbers a bound step was bound with (empty: unbound)."""
        return dict(self._values)

    def _breakeven_(self, solve_for: str = "S", **fixed: Any) -> StepBreakEven:
        """``rs.breakeven(step, solve_for="S", local_batch=1)`` (``break_even``)."""
        return step_breakeven(self, solve_for, **fixed)

    def _sensitivity_(self, at: Any) -> dict[sympy.Symbol, float]:
        """``rs.sensitivity(step, at=(seq_len, local_batch))`` (``break_even``)."""
        if at is None or isinstance(at, (str, bytes)) or len(at) != 2:
            raise StepInputError(f"a step's sensitivity is taken at a point, "
                                 f"at=(seq_len, local_batch), not {at!r}")
        return step_sensitivity(self, *at)

    # -- display
    @property
    def lowp_label(self) -> str:
        """The dtype the low-precision side is named by (``fp8``, ``fp4``)."""
        return layer_models(self.spec)[0].lowp_label

    def _latex_pieces_(self, definitions: bool = False) -> StepPieces:
        return StepPieces(self.terms, self.spec.bubble, self.lowp_label, definitions)

    def latex(self, definitions: bool = False) -> str:
        """The step as an ``aligned`` block (``writing``); ``definitions``: every
        term written out too."""
        return renderers.render(self._latex_pieces_(definitions))

    def __repr__(self) -> str:
        bound = f", hardware={self.hardware.name!r}" if self.hardware else ""
        p = self.spec.parallel
        return (f"Step({self.spec.arch.name!r}, {self.spec.recipe!r}, mode={self.spec.mode!r}, "
                f"gpus={p.gpus}{bound})")

