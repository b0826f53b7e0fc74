"""The package's version: pyproject.toml's, read from the installed metadata.

>>> version() == "0+unknown" or version()[0].isdigit()
True
"""

__all__ = ["version"]


def version() -> str:
    """The installed version of ``roofline-sym`` (``0+unknown`` in a tree never installed)."""
    from importlib.metadata import PackageNotFoundError, version as _metadata  # on first use

    try:
        return _metadata("roofline-sym")
    except PackageNotFoundError:
        return "0+unknown"
