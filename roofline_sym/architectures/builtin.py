"""The built-in architectures (``data/architectures.toml``) and the one way to name one.

``architecture`` takes a built-in name (any case), a path to a Hugging Face
``config.json`` (or its directory), a mapping of config keys, or an
``Architecture``; every number of a built-in has a source.

>>> architecture("Llama3-8B").params
8030261248
>>> try:
...     architecture("llama3-8")
... except ValueError as exc:
...     print(str(exc)[:73])
unknown architecture 'llama3-8' (did you mean 'llama3-8b', 'llama3.1-8b',
"""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from ..devices import sources as citations
from ..validate import show, unknown_name
from .config import from_config, read_config
from .shape import Architecture, ArchitectureError

__all__ = ["architecture", "list_architectures", "parse_architectures"]

_ENTRY_KEYS = {"name", "aliases", "description", "config", "sources"}


def _fail(origin: str, what: str) -> ArchitectureError:
    return ArchitectureError(f"{origin}: {what}")


def _entry(raw: Any, i: int, keys: Mapping[str, str], origin: str) -> Architecture:
    """One [[architecture]]: its config read by ``from_config``, each key cited."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise _fail(origin, f"architecture #{i + 1}: expected a table with a name")
    at = f"architecture {raw['name']!r}"
    stray = sorted(set(raw) - _ENTRY_KEYS)
    if stray:
        raise unknown_name("field", stray[0], sorted(_ENTRY_KEYS), error=ArchitectureError,
                           where=f"{origin}: {at}: ")
    config, sources = raw.get("config"), raw.get("sources", {})
    if not isinstance(config, dict) or not isinstance(sources, dict):
        raise _fail(origin, f"{at}: config and sources must be tables")
    for key in sources:
        if key != "config" and key not in config:
            raise _fail(origin, f"{at}: sources cite {key!r}, which is not a config key")
    cited = {}
    for key in config:
        text = sources.get(key, sources.get("config"))
        problem = "has no source" if text is None else citations.problem(text, keys)
        if problem or not isinstance(text, str):
            raise _fail(origin, f"{at}, config key {key}: source {problem}")
        cited[key] = citations.expand(text, keys)
    return from_config(config, f"{origin}: {at}", name=raw["name"], citations=cited)


def parse_architectures(data: Mapping[str, Any], origin: str) -> dict[str, Architecture]:
    """Every architecture of a TOML document in the built-in schema, by lower-case
    name and alias."""
    stray = set(data) - {"sources", "architecture"}
    if stray:
        raise _fail(origin, f"unknown top-level key(s) {sorted(stray)}; expected [sources] "
                    "and [[architecture]]")
    keys, entries = data.get("sources", {}), data.get("architecture")
    if not isinstance(keys, dict) or not isinstance(entries, list) or not entries:
        raise _fail(origin, "expected a [sources] table and [[architecture]] entries")
    out: dict[str, Architecture] = {}
    aliases: dict[str, Architecture] = {}
    for i, raw in enumerate(entries):
        arch = _entry(raw, i, keys, origin)
        names = raw.get("aliases", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _fail(origin, f"architecture {arch.name!r}: aliases must be a list of names")
        for name in [arch.name, *names]:
            if name.lower() in out or name.lower() in aliases:
                raise _fail(origin, f"architecture name {name!r} defined twice")
        out[arch.name.lower()] = arch
        aliases.update({n.lower(): arch for n in names})
    return {**out, **aliases}


@cache
def _builtins() -> Mapping[str, Architecture]:
    text = resources.files("roofline_sym").joinpath("data", "architectures.toml").read_text(
        "utf-8")
    return MappingProxyType(parse_architectures(tomllib.loads(text),
                                                "roofline_sym/data/architectures.toml"))


def list_architectures() -> list[str]:
    """Names of the built-in architectures, aliases last.

    >>> list_architectures()[:3]
    ['llama2-7b', 'llama3-8b', 'llama3-70b']
    """
    return list(_builtins())


def architecture(name_or_path: str | os.PathLike[str] | Architecture | Mapping[str, Any]
                 ) -> Architecture:
    """A built-in architecture by name, a config.json file or directory, a mapping
    of config keys, or an ``Architecture`` (returned as it is)."""
    if isinstance(name_or_path, Architecture):
        return name_or_path
    if isinstance(name_or_path, Mapping):
        return from_config(name_or_path)
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ArchitectureError(f"an architecture is a name, a config.json path, a mapping "
                                f"or an Architecture, not {type(name_or_path).__name__} "
                                f"{show(name_or_path)}")
    text = os.fspath(name_or_path)
    if isinstance(text, str) and text.lower() in _builtins():
        return _builtins()[text.lower()]
    if isinstance(name_or_path, os.PathLike) or text.endswith(".json") or os.path.isdir(text):
        return read_config(text)
    raise unknown_name("architecture", text, list_architectures(), error=ArchitectureError,
                       extra=", nor a config.json path")
