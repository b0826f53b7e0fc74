"""Bound expressions to numbers, fast: the code generator and its runtime.

It knows expressions, not models (it imports nothing of ``model/``, which
calls it).  By job:

- ``operations``: expressions to operations (coefficients hoisted, value
  numbering, shared sums and products);
- ``program``: one request's operations scheduled, as numpy code over chunks
  in place, as elementwise numpy for lazy arrays, and as the scalar loop of
  a fused kernel;
- ``compiled``: ``compile_terms`` (once per structure), ``CompiledTerms``,
  ``BoundTerms``, the ``Layout`` that says how terms make the outputs;
  ``.source(outputs)`` shows the generated code;
- ``runtime``: a call: inputs checked, chunks over threads, numpy or the
  fused kernel (``fast_pays``);
- ``cache``: fused kernels compiled by numba (the ``fast`` extra), kept on
  disk in the user's cache folder, checked against their source;
- ``lazy``: dask arrays, block by block.
"""
