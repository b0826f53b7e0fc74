"""Test settings shared by the suite.

Hypothesis runs under the ``ci`` profile: a modest number of examples and no
per-example deadline (a shared CI machine is slow at times), so the whole
suite stays within its time budget.  ``HYPOTHESIS_PROFILE=thorough`` runs
the fuzz tests (tests/test_fuzz.py) with many more examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
