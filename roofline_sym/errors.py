"""The library's errors: one base, ``RooflineError``, a few kinds below it.

Every error the library raises on purpose derives from ``RooflineError``,
a ``ValueError`` (so ``except ValueError`` written before it existed keeps
working).  Each kind also derives from the built-in error a Python
programmer would expect (``TypeError`` for a wrong type, ``KeyError`` for a
name not found, ``RuntimeError`` for what this machine cannot do), so
either ``except`` catches it.  The command line answers a ``RooflineError``
with one line and exit code 2 (the input is wrong) and anything else with
"internal error" and exit code 1 (the library is wrong).

>>> issubclass(UnknownNameError, KeyError) and issubclass(UnknownNameError, RooflineError)
True
>>> str(UnknownNameError("unknown recipe 'x'"))
"unknown recipe 'x'"
"""

from __future__ import annotations

__all__ = ["RooflineError", "InputError", "InputTypeError", "UnknownNameError",
           "SelectionError", "DataFileError", "UnavailableError"]


class RooflineError(ValueError):
    """The base of every error the library raises on purpose."""


class InputError(RooflineError):
    """A value a user or a file supplied is wrong: not a number, out of its
    plausible range, too large a request; the message names the argument,
    option or file field."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (also a ``TypeError``)."""


class UnknownNameError(InputError, KeyError):
    """A name (recipe, column, GPU, ...) that matches nothing; the message
    suggests close matches (also a ``KeyError``, shown without its quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class SelectionError(InputError, IndexError):
    """Rows picked by a mask or indices that do not fit the table (also an
    ``IndexError``)."""


class DataFileError(InputError):
    """A data file (CSV, JSON, TOML) is malformed; the message names the
    file, line and field."""


class UnavailableError(RooflineError, RuntimeError):
    """What was asked needs something this machine lacks (a CUDA GPU, an
    optional package); also a ``RuntimeError``."""
