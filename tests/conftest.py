"""Suite-wide test configuration.

One Hypothesis profile for the whole suite: no per-example deadline, so no
outcome depends on how loaded the machine is, and in CI (``CI`` set, as
``.ci/run`` runs) a derandomized, fixed-seed search, so a run is reproducible
and a red gate can be replayed from the same commit.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = "ci" if os.environ.get("CI") else "dev"

settings.register_profile(
    "dev",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(PROFILE)
