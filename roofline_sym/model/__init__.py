"""The cost model: formats, recipes, GEMMs and kernels priced as roofline terms, ``Linear``.

The modules, bottom up: ``formats`` (element formats, scalings), ``term``
(a term's identity and its roofline pieces), ``term_time`` (a term as a
named SymPy expression), ``gemm``, ``recipes`` (cast kernels as data),
``workloads`` (what surrounds the layer), ``presets`` (bundles of model
options), ``outputs`` (the groups and outputs a model's terms add into,
given to the evaluation package), ``layer`` (``Linear``, ``linear()``),
``asymptotes`` (the speedup's small- and large-shape limits) and
``elasticity`` (``sensitivity``).

>>> from roofline_sym.model import MODES, linear
>>> MODES, linear("rowwise").mode
(('training', 'inference'), 'training')
"""

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .asymptotes import Limits, limits
    from .elasticity import sensitivity
    from .formats import element, scaling
    from .layer import OUTPUTS, Linear, linear
    from .presets import PRESETS, Options
    from .recipes import MODES, list_recipes
    from .workloads import WORKLOADS, Workload, list_workloads

# each name's module, imported on first use
_WHERE = {
    "Limits": ".asymptotes", "limits": ".asymptotes", "sensitivity": ".elasticity",
    "element": ".formats", "scaling": ".formats",
    **dict.fromkeys(["OUTPUTS", "Linear", "linear"], ".layer"),
    "PRESETS": ".presets", "Options": ".presets", "MODES": ".recipes",
    "list_recipes": ".recipes",
    **dict.fromkeys(["WORKLOADS", "Workload", "list_workloads"], ".workloads"),
}

__all__ = ["Linear", "linear", "OUTPUTS", "MODES", "list_recipes", "PRESETS", "Options",
           "Workload", "WORKLOADS", "list_workloads", "element", "scaling", "Limits", "limits",
           "sensitivity"]

__getattr__, __dir__ = lazy(__name__, _WHERE)
