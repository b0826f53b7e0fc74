"""The package's version: pyproject.toml's, read from the installed metadata.

>>> version() == "0+unknown" or version()[0].isdigit()
True
"""

from typing import Any

__all__ = ["version"]


def version() -> str:
    """The installed version of ``roofline-sym`` (``0+unknown`` in a tree never installed)."""
    from importlib.metadata import PackageNotFoundError, version as _metadata  # on first use

    try:
        return _metadata("roofline-sym")
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    # roofline_sym.__version__, read when asked (importlib.metadata is slow to load)
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
