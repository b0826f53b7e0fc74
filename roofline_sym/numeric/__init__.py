"""Numbers at many shapes: shape sets (``shapes``) and sweeps over them (``sweep``).

This package re-exports nothing, so the function ``sweep`` never hides the
module of the same name.
"""
