"""Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (default ``ci``).

- ``ci``: the size the suite is run at (about a minute on two cores); the
  examples are derived from each test (``derandomize``), so a failure in CI
  fails the same way on every machine.
- ``thorough``: ten times the examples, drawn at random; run it after
  changing the model, the solver or the compiled evaluation.
- ``quick``: a handful of examples, for editing a test.

A property test asks for a multiple of the profile's ``max_examples`` where
its examples are cheaper or dearer than most:
``@settings(max_examples=3 * settings.default.max_examples)``.
"""

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

# compiled kernels go to a cache folder of the test run, not the user's
_CACHE = tempfile.mkdtemp(prefix="roofline_sym-tests-")
os.environ["XDG_CACHE_HOME"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=30, derandomize=True, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)
settings.register_profile("quick", max_examples=5, derandomize=True, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
