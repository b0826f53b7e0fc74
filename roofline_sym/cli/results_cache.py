"""The main job's text kept in the user's cache folder: a second run prints it
without building, solving or compiling again.

The text is a function of the package's files (source and data), of Python's,
SymPy's, mpmath's and numpy's versions and of the machine's architecture, and of
nothing else: the main job reads no option, no environment variable and no
file outside the package.  ``fingerprint`` hashes all of them.  An entry
lives in ``$XDG_CACHE_HOME/roofline_sym/results`` (else ``~/.cache/...``), a
folder private to the user as the kernels' (``evaluation.cache``); it is a
file only the user may read or write whose first line is its fingerprint.  It
is used only if that line is the fingerprint this installation makes now and
the file is a plain file, the user's and private; anything else is ignored,
and the text computed and stored afresh.  Nothing in an entry is run: it is
printed (through the command line's escaping of control characters).

>>> len(fingerprint("main_job")), fingerprint("main_job") == fingerprint("other")
(64, False)
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

import mpmath  # type: ignore[import-untyped]  # SymPy's own dependency, no stubs
import numpy
import sympy

from ..errors import InputError
from ..evaluation.cache import cache_folder, read_private, replace_file

__all__ = ["cached_text", "fingerprint", "package_digest", "FOLDER"]

# bumped when the layout of an entry changes
_FORMAT = "1"
# the cache folder's name under roofline_sym/
FOLDER = "results"
_PACKAGE = Path(__file__).resolve().parents[1]


def package_digest(root: Path = _PACKAGE) -> bytes:
    """A hash of every file under ``root`` (names and contents, ``__pycache__``
    left out): the package's source and data.  Reading them all costs a few
    milliseconds, a fraction of what the cache saves."""
    return _digest(str(root))


@lru_cache(maxsize=4)
def _digest(root: str) -> bytes:
    h = hashlib.sha256()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                data = f.read()
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            h.update(f"{relative}\0{len(data)}\0".encode())
            h.update(data)
    return h.digest()


def fingerprint(name: str) -> str:
    """The hash an entry ``name`` must carry: of the entry's format and name,
    Python's, SymPy's, mpmath's (SymPy's numbers) and numpy's versions, the
    machine's architecture and ``package_digest()`` (which changes with the
    package's version, as its files do)."""
    key = "\0".join([_FORMAT, name, sys.version, sympy.__version__, mpmath.__version__,
                     numpy.__version__, platform.machine()])
    return hashlib.sha256(key.encode() + b"\0" + package_digest()).hexdigest()


def cached_text(name: str, compute: Callable[[], str]) -> str:
    """The text of entry ``name`` where it is valid (see the module), else
    ``compute()``, stored for the next run (where the folder can be written)."""
    if not re.fullmatch(r"[a-z_]+", name):
        raise InputError(f"an entry's name is lower-case letters and _, not {name!r}")
    folder = cache_folder(FOLDER)
    if folder is None:
        return compute()
    key = fingerprint(name)
    path = folder / f"{name}.txt"
    text = _read(path, key)
    if text is None:
        text = compute()
        _write(path, key, text)
    return text


def _read(path: Path, key: str) -> str | None:
    """The text after ``key``'s line in ``path``, or None where the file is not
    a plain file (a link is not followed), not the user's and private, or does
    not begin with ``key``."""
    data = read_private(path)
    if data is None:
        return None
    header, _, body = data.partition(b"\n")
    if header != key.encode():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _write(path: Path, key: str, text: str) -> None:
    """``path`` replaced, in one step, by a file (0600) of ``key``'s line and
    ``text``; nothing where the folder cannot be written."""
    try:
        replace_file(path, key.encode() + b"\n" + text.encode("utf-8"))
    except OSError:
        pass
