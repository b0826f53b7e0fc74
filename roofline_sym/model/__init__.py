"""The cost model: formats, recipes, GEMMs and kernels priced as roofline terms, ``Linear``.

The modules, bottom up: ``formats`` (element formats, scalings), ``term``
(a term's identity and its roofline pieces), ``gemm``, ``recipes`` (cast
kernels as data), ``presets`` (bundles of model options), ``outputs`` (the
groups and outputs a model's terms add into, given to the evaluation package)
and ``linear`` (``Linear``, ``linear()``).  Import names from those modules; this package
re-exports nothing, so no function can hide a module of the same name.
"""
