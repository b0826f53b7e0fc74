"""Where the numbers in the data files come from.

Every number in a shipped (or user) data file carries a source: citation
keys defined in the file's ``[sources]`` table, optionally followed by
``; note``, or ``assumed; reason`` / ``derived; arithmetic`` for numbers no
document states.

>>> keys = {"NV": "NVIDIA H100 datasheet"}
>>> problem("NV; dense rate", keys) is None, problem("XX", keys)[:27]
(True, 'cites unknown source key(s)')
>>> expand("NV; dense rate", keys)
'NVIDIA H100 datasheet; dense rate'
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["problem", "expand", "SPECIAL"]

# words standing for "no document": the reason must follow a semicolon
SPECIAL = ("assumed", "derived")


def _cited(text: str) -> list[str]:
    return [t.strip() for t in text.split(";", 1)[0].split(",")]


def problem(text: Any, keys: Mapping[str, str]) -> str | None:
    """What is wrong with a source text, or None."""
    if not isinstance(text, str) or not text.strip():
        return "must be a non-empty string"
    cited = _cited(text)
    unknown = [t for t in cited if t not in keys and t.lower() not in SPECIAL]
    if unknown:
        return (f"cites unknown source key(s) {', '.join(map(repr, unknown))}; define them "
                "in [sources] or write 'assumed; <reason>' / 'derived; <arithmetic>'")
    if any(t.lower() in SPECIAL for t in cited) and ";" not in text:
        return "'assumed' and 'derived' need a reason after a semicolon"
    return None


def expand(text: str, keys: Mapping[str, str]) -> str:
    """The source text with citation keys replaced by their full citations."""
    rest = text.partition(";")[2].strip()
    return "; ".join([keys.get(t, t) for t in _cited(text)] + ([rest] if rest else []))
