"""The model held to published measurements (papers, pull requests, READMEs).

``speedup_table`` (the speedup tables: read, validated, the shipped one),
``gemm_kernels`` (GEMM kernel rows, the fit's anchors), ``rows`` (a row's
GPU, family, model and predicted speedup), ``prediction``
(``predict_speedups``: rows predicted, with intervals), ``joint_fit`` (hardware numbers
fitted to speedups and kernel rows in one objective), ``gpu_fits`` (each
GPU's fit as data, transfers to GPUs without rows, the shipped data
written), ``cross_validation`` (leave one source out), ``intervals``
(prediction bands from its residuals), ``scorecard`` (presets compared
source by source, held-out splits).
"""
