"""Module paths from before the layers became packages, served at their new homes.

Every module once sat at the top of the package (``roofline_sym.recipes``,
``roofline_sym.render``, ...).  A finder on ``sys.meta_path`` serves each
old path as the module it moved to (the same object, so attributes and
patches agree).  ``MOVED`` paths warn (DeprecationWarning naming the new
path); ``PUBLIC`` paths are the package's module attributes (``rs.measure``,
``rs.calibrate``, ``rs.fidelity``, ``rs.plot``) and do not.

An old path whose name is a public function (``roofline_sym.linear``,
``.breakeven``, ``.sweep``, ``.hardware``) imports with ``from
roofline_sym.linear import Linear``; ``Package`` keeps the package's
attribute the function, as it always was (``rs.linear`` is never a module).

>>> import importlib, warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old = importlib.import_module("roofline_sym.recipes")
>>> old is importlib.import_module("roofline_sym.model.recipes")
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any, Sequence

__all__ = ["MOVED", "PUBLIC", "Package", "install"]

# old module (below roofline_sym) -> its module now
MOVED = {
    "breakeven": "solve",
    "components": "fidelity.own_gpu.components",
    "formats": "model.formats",
    "gemm": "model.gemm",
    "hardware": "devices",
    "linear": "model.linear",
    "measure_cuda": "fidelity.own_gpu.cuda",
    "measurements": "fidelity.own_gpu.measurement_file",
    "presets": "model.presets",
    "recipes": "model.recipes",
    "render": "output",
    "shapes": "numeric.shapes",
    "sources": "devices.sources",
    "sweep": "numeric.sweep",
    "term": "model.term",
}
# module attributes of the package: rs.measure is roofline_sym.fidelity.own_gpu.timing
PUBLIC = {
    "measure": "fidelity.own_gpu.timing",
    "calibrate": "fidelity.own_gpu.hardware_fit",
    "plot": "output.plot",
}
_PACKAGE = __name__.rpartition(".")[0]


class _Alias(importlib.abc.Loader):
    """Loads an old path as the module it moved to (an importlib loader)."""

    def __init__(self, old: str, new: str, warn: bool) -> None:
        self.old, self.new, self.warn = old, new, warn

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.warn:
            warnings.warn(f"{self.old} moved to {self.new}; import it from there",
                          DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # already executed; the import system gave it the old path's spec:
        # give back its own
        module.__spec__ = self.own_spec


class _Finder:
    """Finds the old paths (a ``sys.meta_path`` finder)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != _PACKAGE or not (name in MOVED or name in PUBLIC):
            return None
        new = f"{_PACKAGE}.{MOVED.get(name) or PUBLIC[name]}"
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new, name in MOVED))


class Package(types.ModuleType):
    """The package module: importing a submodule never rebinds a public name.

    Python sets a submodule as an attribute of its package after importing
    it; for an old path such as ``roofline_sym.linear`` that would replace the
    public function ``linear`` with a module.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        current = self.__dict__.get(name)
        if (isinstance(value, types.ModuleType) and name in self.__dict__.get("__all__", ())
                and current is not None and not isinstance(current, types.ModuleType)):
            return
        super().__setattr__(name, value)


def install(package: types.ModuleType) -> None:
    """Serve the old paths (once) and guard the package's public names."""
    package.__class__ = Package
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
