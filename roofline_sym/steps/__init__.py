"""A whole training or serving step: every linear through the layer model,
the attention core, the memory-bound kernels, the optimizer and the
collectives, in bf16 and in a low-precision recipe, as named SymPy terms.

- ``spec``: the step's inputs, checked; ``parallel``: the parallel degrees;
- ``linears``, ``attention``, ``pointwise``, ``communication``: the terms of
  each part (``pieces``: what a term is); ``assembly``: all of them;
- ``systems``: a GPU's step numbers (attention efficiency, overlap, links);
- ``model``: ``Step`` (breakdown, binding, evaluation); ``composition``: ``step()``.
"""

from .composition import step
from .model import GROUP_NAMES, STEP_OUTPUTS, Step
from .parallel import Parallelism, StepInputError

__all__ = ["step", "Step", "STEP_OUTPUTS", "GROUP_NAMES", "Parallelism", "StepInputError"]
