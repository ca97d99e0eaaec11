"""Shared fixtures of the rendering tests: a synthetic ride (no simulator needed)."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.render.synthetic import synthetic_ride


@pytest.fixture(scope="session")
def ride():
    """A 4-car train on the analytic oval for 1.5 s, recorded at 100 Hz."""
    return synthetic_ride(cars=4, duration=1.5)
