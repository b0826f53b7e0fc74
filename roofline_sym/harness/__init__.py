"""Measuring on a GPU and holding the model to it.

``components`` (what is timed, what the model charges for it),
``measurements`` (the CSV format), ``measure_cuda`` (torch and CUDA, imported
only when timing), ``measure`` (grids, the timing loop), ``calibrate``
(fitting hardware numbers to measured times) and ``fidelity`` (predicted vs
measured).  Nothing here loads at ``import roofline_sym``.
"""
