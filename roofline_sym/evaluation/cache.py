"""Fused kernels compiled by numba, kept on disk so a second process does not compile.

A kernel's source (``Program.fused_source``) is made by this package from a
model's operations; numba compiles it to machine code, which is code that
will run.  So the cache lives in the user's own cache directory
(``$XDG_CACHE_HOME/roofline_sym/kernels``, else ``~/.cache/...``), never a
shared temporary folder; its folders are made with the user's permissions
only (0700) and refused, for a compilation in memory, if they are anyone
else's, readable or writable by others, or links.  An entry is a folder named
by a hash of the source (and of numba's and Python's versions) holding the
source as ``kernel.py`` (numba keeps its machine code next to it); it is used
only if that file is a plain file (not a link), the user's and private, holding
exactly the source the library makes now (``read_private``, as the command
line's results cache reads its entries).  Anything else
found there is deleted unread and the kernel compiled afresh.

numba is imported here, and only when a kernel is compiled.

>>> src = "import numpy as np\\n\\n\\ndef kernel(x):\\n    return x + 1\\n"
>>> len(entry_name(src)), entry_name(src) == entry_name(src + " ")
(32, False)
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import types
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..errors import UnavailableError

__all__ = ["available", "loaded", "compile_kernel", "kernel_dir", "cache_folder", "private",
           "read_private", "replace_file", "entry_name", "forget", "MissingNumbaError"]

# bumped when the layout of an entry changes
_FORMAT = "1"
# kernels compiled or loaded in this process, by a hash of their source
_KERNELS: dict[str, Callable[..., Any]] = {}
_LOCK = threading.RLock()


class MissingNumbaError(UnavailableError, ImportError):
    """The fused kernel was asked for and numba is not installed."""


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether numba can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def _numba() -> Any:
    try:
        import numba
    except ImportError:
        raise MissingNumbaError("the fused kernel needs numba: pip install "
                                "'roofline-sym[fast]' (or evaluate with engine='numpy')") from None
    return numba


def entry_name(source: str) -> str:
    """The name of ``source``'s cache entry: a hash of it, of numba's version (the
    machine code's format) and of Python's."""
    import hashlib
    import importlib.metadata  # here: it imports the email package

    try:
        numba_version = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba_version = "none"
    key = "\0".join([_FORMAT, numba_version, sys.version, source])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _key(source: str) -> str:
    import hashlib

    return hashlib.sha256(source.encode()).hexdigest()


def loaded(source: str) -> bool:
    """Whether ``source``'s kernel is compiled (or loaded) in this process."""
    return _key(source) in _KERNELS


def forget() -> int:
    """Let go of the kernels loaded in this process (the disk cache stays);
    returns how many there were."""
    with _LOCK:
        n = len(_KERNELS)
        _KERNELS.clear()
        return n


def kernel_dir() -> Path | None:
    """The kernels' cache folder, made if missing (0700), or None where it cannot
    be made or is not the user's own and private."""
    return cache_folder("kernels")


def cache_folder(name: str) -> Path | None:
    """The folder ``roofline_sym/<name>`` in the user's cache directory
    (``$XDG_CACHE_HOME``, else ``~/.cache``), made if missing (0700), or None
    where it cannot be made or is not the user's own and private."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for part in ("roofline_sym", name):
            folder = folder / part
            try:
                folder.mkdir(mode=0o700)
            except FileExistsError:
                pass
            if not _private(folder):
                return None
    except OSError:
        return None
    return folder


def _private(path: Path) -> bool:
    """A real folder (not a link), the user's, that nobody else may read or write."""
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and private(st)


def private(st: os.stat_result) -> bool:
    """Whether what ``st`` describes is the user's and nobody else may read or write it."""
    owner = getattr(os, "getuid", lambda: st.st_uid)()
    return st.st_uid == owner and not st.st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def read_private(path: Path) -> bytes | None:
    """``path``'s bytes, or None where it is not a plain file (a link is not
    followed), not the user's and private, or cannot be read.  The checks are
    made on what was opened: nothing can be swapped in between."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    st = os.fstat(fd)  # a folder opens too, but is no file to read
    if not (stat.S_ISREG(st.st_mode) and private(st)):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read()
        except OSError:
            return None


def replace_file(path: Path, data: bytes) -> None:
    """``path`` replaced in one step by a new file (0600, as ``mkstemp`` makes it)
    holding ``data``: a reader sees the old file or the whole new one.  Raises
    OSError where the folder cannot be written (the temporary file removed)."""
    import tempfile  # here: only a run that writes an entry needs it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def compile_kernel(source: str) -> Callable[..., Any]:
    """``source``'s function ``kernel`` compiled by numba (nogil, IEEE arithmetic:
    no fast-math, numpy's rules for division by zero), from the disk cache
    where an entry holds exactly this source, else compiled and kept there."""
    key = _key(source)
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
        numba = _numba()
        name = entry_name(source)
        folder = kernel_dir()
        path = _entry(folder / name, source) if folder is not None else None
        module = types.ModuleType(f"roofline_sym_kernel_{name}")
        module.__file__ = str(path) if path else f"<roofline_sym kernel {name}>"
        # the verified text is compiled, not the file re-read: what runs is what
        # was compared; numba finds its machine code next to the file by its name
        code = compile(source, module.__file__, "exec")
        exec(code, module.__dict__)
        # numba's cache loads a kernel's globals by importing its module by name
        sys.modules[module.__name__] = module
        kernel: Callable[..., Any] = numba.njit(nogil=True, cache=path is not None,
                                                error_model="numpy")(module.__dict__["kernel"])
        _KERNELS[key] = kernel
        return kernel


def _entry(folder: Path, source: str) -> Path | None:
    """The entry's ``kernel.py``, holding exactly ``source``: kept if it does,
    else (a foreign or broken entry) the folder is emptied and written afresh.
    None where the entry cannot be written."""
    import shutil

    path = folder / "kernel.py"
    try:
        if (folder.is_dir() and not folder.is_symlink() and _private(folder)
                and read_private(path) == source.encode()):
            return path
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(mode=0o700)
        replace_file(path, source.encode())
        return path
    except OSError:
        return None
