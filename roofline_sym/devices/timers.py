"""Timers: how a measurement was timed, as a speedup table records it.

A kernel's fixed time (launch, prologue, epilogue) is what the source's
timer saw, and timers differ: a CUDA-graph replay (vLLM's and FBGEMM's
``do_bench_cudagraph``, a serving engine's decode step) runs the kernels back
to back from the GPU's own queue; CUDA events or a synchronized clock around
eager launches (triton ``do_bench``, ``torch.utils.benchmark``) also see the
host between them when the kernels are short; a profiler's sum of kernel
times (torchao's benchmarks, CUPTI) sees neither.  A speedup table's optional
``timer`` column names which one a source used (``graph``, ``events``,
``profiler``; blank: not stated).  The model prices it (``timer=`` of
``rs.linear``): under ``events`` every kernel's floor is the host's time per
launch (``t_host``, the entry's ``host_launch_s``, else its launch floor);
published rows are predicted with their own timer, a blank one with the
default, ``graph``.

>>> TIMERS
('graph', 'events', 'profiler')
>>> check_timer(" graph "), check_timer("")
('graph', '')
"""

from __future__ import annotations

from typing import Any

from ..validate import cell_choice

__all__ = ["TIMERS", "check_timer"]

TIMERS = ("graph", "events", "profiler")


def check_timer(name: Any, where: str = "") -> str:
    """A speedup table's ``timer`` cell: one of ``TIMERS`` or ``""`` (blank,
    not stated); anything else is an error with close matches, after
    ``where`` (the place in a file)."""
    return cell_choice(name, TIMERS, "timer", where)
