import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests explore the same examples on every run: CI never turns red by chance, and a failure found
# once is found again. Widen the search locally with HYPOTHESIS_PROFILE=explore.
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(42)
