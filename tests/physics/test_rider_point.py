"""G-forces at a rider point away from the centre of mass, and coupler forces of a
1000-car train (docs/physics.md §5, §6).

Vertical circle of radius R, car riding inside, rider at height h above the track
curve (towards the centre), car's centre of mass on the curve. With θ the angle
from the bottom (T = (cos θ, 0, sin θ), B towards the centre) and v the speed on the
curve, the rider point turns with ω = v/R and α = v̇/R, v̇ = −g sin θ:
    f·B = ω² (R − h) + g cos θ      →  g_vertical     = v² (R − h)/(g R²) + cos θ
    f·T = α (R − h) + g sin θ       →  g_longitudinal = (h/R) sin θ
The second checks the α × r term, the first ω × (ω × r).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import run
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch

G = 9.81


@pytest.mark.parametrize("h", [0.0, 1.0, 2.0])
def test_rider_point_g_round_a_vertical_loop(h):
    R = 10.0
    w = World(dt=1e-3)
    w.add_track(analytic.vertical_circle(R=R))
    w.add_train("a", 0, 1, CarSpec(mass=500.0, length=1.0, width=1.0, height=1.0, cg_height=0.0,
                                  rider_height=h), start_s=0.0, start_speed=25.0)
    t, r, st = run(w, 4000, 1)
    assert st.ok
    x, z, v = r[:, 0, ch.X], r[:, 0, ch.Z], r[:, 0, ch.SPEED]
    theta = np.arctan2(x, R - z) % (2 * np.pi)
    lap = np.concatenate([[True], np.diff(theta) > 0])
    lap = np.logical_and.accumulate(lap)  # first lap only
    assert theta[lap].max() > 1.9 * np.pi  # it went round
    gv = v ** 2 * (R - h) / (G * R ** 2) + np.cos(theta)
    gl = h / R * np.sin(theta)
    np.testing.assert_allclose(r[lap, 0, ch.G_VERTICAL], gv[lap], atol=2e-3)
    # 3e-3 g measured (0.028 g before the sample counted the step's whole turn): the car's axes at
    # the end of the step lag the frame by a fraction of h ω, which tips ≈ 5e-4 of the 6 g
    # centripetal force into T
    np.testing.assert_allclose(r[lap, 0, ch.G_LONGITUDINAL], gl[lap], atol=4e-3)
    np.testing.assert_allclose(r[lap, 0, ch.G_LATERAL], 0.0, atol=1e-6)


def test_thousand_car_train_held_on_a_grade_has_exact_coupler_forces():
    """A stop brake under the lead car holds 1000 cars: coupler i carries (n − i) m g sin α."""
    n, M, pitch = 1000, 600.0, 2.0
    w = World(dt=1e-3)
    L = n * 2.5 + 200.0
    w.add_track(analytic.straight(L, pitch_deg=pitch, n=int(L) + 1))
    s0 = n * 2.5 + 100.0
    w.add_train("a", 0, n, CarSpec(mass=M, length=2.0, width=1.2, height=1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=s0)
    w.add_section("brake", 0, s0 - 1.0, s0 + 1.0, speed=0.0, max_force=1e9)
    # The brake row is solved exactly with the chain: the train is held from the first steps on
    # (with Gauss–Seidel beside the chain solve it was 0.55 % short after 0.1 s): check after 0.1 s.
    t, r, st = run(w, 100, 100)
    assert st.ok
    F = np.abs(w.jlam[: n - 1, 0] / w.dt)
    expected = M * G * np.sin(np.radians(pitch)) * np.arange(n - 1, 0, -1)
    np.testing.assert_allclose(F, expected, rtol=1e-3)
    assert np.all(np.abs(r[-1, :, ch.SPEED]) < 1e-6)
