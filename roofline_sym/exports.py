"""A package's public names, each imported from its module on first use.

A package's ``__init__`` names where each of its public names lives; ``lazy``
makes the module functions (PEP 562) that import that module when the name
is first read and keep the value in the package, so ``import roofline_sym``
loads the symbols and nothing else, and ``rs.linear`` loads the model.  The
package imports the same names under ``typing.TYPE_CHECKING`` for type
checkers and for tests/test_layers.py, which reads them as its imports.

>>> import sys, types
>>> pkg = types.ModuleType("pkg")
>>> sys.modules["pkg"] = pkg
>>> pkg.__getattr__, pkg.__dir__ = lazy("pkg", {"dumps": "json", "join": ("os.path", "join")})
>>> pkg.dumps([1])
'[1]'
>>> "dumps" in vars(pkg), {"dumps", "join"} <= set(dir(pkg))
(True, True)
>>> del sys.modules["pkg"]
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping

__all__ = ["lazy"]


def lazy(package: str, where: Mapping[str, str | tuple[str, str]],
         modules: Mapping[str, str] | None = None
         ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps a public name
    to its module (relative names, ``.model``, are relative to ``package``), or
    to ``(module, name there)``; ``modules`` maps a name to a module that is
    the value itself (``rs.plot``).  Any other name that is a subpackage or
    module of ``package`` is imported as such (``rs.devices``)."""
    modules = dict(modules or {})

    def __getattr__(name: str) -> Any:
        if name in modules:
            return importlib.import_module(modules[name], package)
        found = where.get(name)
        if found is None:
            if not name.startswith("_"):
                try:
                    return importlib.import_module(f"{package}.{name}")
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{name}":
                        raise  # a module that is there failed to import another
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = (found, name) if isinstance(found, str) else found
        value = getattr(importlib.import_module(module, package), attribute)
        setattr(sys.modules[package], name, value)  # found once
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where) | set(modules))

    return __getattr__, __dir__
