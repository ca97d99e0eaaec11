import os

import pytest

os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_physics")


@pytest.fixture(autouse=True)
def _kernels_compiled(warm_kernels):
    """The kernels are compiled before the first physics test (tests/conftest.py)."""
