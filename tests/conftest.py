"""What every test folder shares: the markers of tests that need a system feature, and one
session fixture that compiles the physics kernels before the first test that runs them (so that
no single test's time includes the compile: ``pytest --durations`` shows the tests' own)."""
from __future__ import annotations

import shutil

import pytest

#: the report's browser tests: Debian's chromium, headless
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def pytest_runtest_setup(item):
    """``@pytest.mark.requires_gl``: skipped where off-screen OpenGL (EGL + Mesa) is missing (the
    probe says why); ``@pytest.mark.requires_chromium``: skipped without chromium."""
    if item.get_closest_marker("requires_gl"):
        from trackrider.render.probe import check_rendering

        problem = check_rendering()
        if problem:
            pytest.skip(f"no off-screen OpenGL: {problem}")
    if item.get_closest_marker("requires_chromium") and CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")


@pytest.fixture(scope="session")
def warm_kernels():
    """Compile the kernels once per session: a short run of a train on a lift (its bounded rows)
    and a pendulum on a hinge (every joint kind), from the cache when it is warm."""
    from tests.physics import analytic
    from trackrider.physics import CarSpec, World

    w = World(dt=1e-3)
    w.add_track(analytic.straight(60.0))
    w.add_train("a", 0, 2, CarSpec(600.0, 2.0, 1.2, 1.0), start_s=20.0)
    w.add_section("lift", 0, 0.0, 60.0, speed=2.0, max_force=1e4)
    b = w.add_body("p", 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 0.0, 50.0))
    w.add_joint("hinge", "world", ("body", b), anchor_a=(0.0, 0.0, 51.0), axis=(0.0, 1.0, 0.0))
    w.run(2, 1, lambda t, s: None)
