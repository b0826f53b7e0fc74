"""Which layers a model total converts to low precision.

``model_total(convert=...)`` prices the layers it converts at their
low-precision time and the others at bf16.  ``convert`` is one of

- ``"all"`` (the default): every linear layer of the set;
- ``"profitable"``: the layers low precision makes faster;
- a torchao ``module_filter_fn(module, fqn)`` (``rs.float8_module_filter``,
  or torchao's own): asked about a meta-device ``nn.Linear(K, N)`` of each
  row, under each of the row's layer names;
- a collection of layer names (as the set writes them): those, and only
  those.

A row merges layers of one shape (names joined with `` + ``); a decision
that differs between a row's layers is refused, not averaged.

>>> import numpy as np
>>> from roofline_sym.numeric.shapes import shape_set
>>> s = shape_set("llama3-8b")
>>> rule = Conversion.of({"mlp.up_proj", "mlp.down_proj"}, s)
>>> rule.keeps(s, slice(None), np.ones(7, bool)).tolist()
[False, False, False, False, False, True, True]
>>> rule.covers
'the named linear layers'
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import InputError
from ..validate import InputTypeError, show, unknown_name
from .shapes import ShapeSet

__all__ = ["Conversion", "KINDS"]

KINDS = ("all", "profitable")


@dataclass(frozen=True)
class Conversion:
    """A rule choosing the converted rows of a shape set (see the module)."""

    kind: str  # "all", "profitable", "filter" or "names"
    rule: Any = None

    @classmethod
    def of(cls, convert: Any, *sets: ShapeSet) -> "Conversion":
        """The rule ``convert`` names; layer names are checked against ``sets``."""
        if convert is None:
            return cls("all")
        if isinstance(convert, str):
            if convert not in KINDS:
                raise unknown_name("convert", convert, KINDS,
                                   extra=", a module filter or a collection of layer names")
            return cls(convert)
        if callable(convert):
            return cls("filter", convert)
        if isinstance(convert, Collection) and all(isinstance(n, str) for n in convert):
            names = frozenset(convert)
            known = {part for s in sets for name in s.names for part in name.split(" + ")}
            unknown = sorted(names - known) if sets else []
            if unknown:
                raise unknown_name("layer", unknown[0], sorted(known), where="convert: ",
                                   extra=" in the shape set")
            return cls("names", names)
        raise InputTypeError("convert must be 'all', 'profitable', a module filter "
                             "(module, fqn) -> bool or a collection of layer names, not "
                             f"{type(convert).__name__} {show(convert)}")

    @property
    def covers(self) -> str:
        """What a total under this rule sums, in words."""
        return {"all": "all linear layers", "profitable": "linear layers where faster",
                "filter": "linear layers the filter keeps",
                "names": "the named linear layers"}[self.kind]

    def keeps(self, shapes: ShapeSet, rows: slice, faster: np.ndarray) -> np.ndarray:
        """Per row of ``shapes[rows]``: converted or not (``faster``: low
        precision is faster there)."""
        if self.kind == "all":
            return np.ones(len(faster), dtype=bool)
        if self.kind == "profitable":
            return np.asarray(faster, dtype=bool)
        names = shapes.names[rows]
        ks, ns = shapes.K[rows], shapes.N[rows]
        if self.kind == "names":
            decide: Callable[[str, float, float], bool] = lambda part, k, n: part in self.rule
        else:
            decide = _filter_decision(self.rule)
        out = np.empty(len(names), dtype=bool)
        for i, (name, k, n) in enumerate(zip(names, ks, ns)):
            votes = {bool(decide(part, k, n)) for part in name.split(" + ")}
            if len(votes) > 1:
                raise InputError(f"convert: the layers of row {name!r} (one shape) are not all "
                                 "converted or all kept; give them apart (a set built "
                                 "without merging) or decide them alike")
            out[i] = votes.pop()
        return out


def _filter_decision(keep: Callable[[Any, str], Any]) -> Callable[[str, float, float], bool]:
    """``(layer name, K, N) -> bool`` from a torchao ``module_filter_fn``: it is
    asked about a meta-device ``nn.Linear(K, N)`` (one per shape); the
    library's own filter (``keeps`` and ``skip_fqns``) answers without torch."""
    own: Any = keep
    if callable(getattr(own, "keeps", None)) and hasattr(own, "skip_fqns"):
        skip = tuple(own.skip_fqns)
        return lambda name, k, n: not any(s in name for s in skip) and bool(own.keeps(k, n))
    try:
        import torch
    except ImportError:
        raise ImportError("convert= with a module filter needs torch: pip install "
                          "'roofline-sym[torch]' (or pass 'profitable' or layer names)",
                          name="torch") from None
    modules: dict[tuple[int, int], Any] = {}

    def decide(name: str, k: float, n: float) -> bool:
        key = (int(k), int(n))
        if key not in modules:
            modules[key] = torch.nn.Linear(*key, bias=False, device="meta")
        return bool(keep(modules[key], name))

    return decide
