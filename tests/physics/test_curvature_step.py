"""A curvature step (a straight meeting an arc, no clothoid) gives a raw G spike at the rider point:
the car's angular velocity must jump by Δω = v/R there, so the rider point (r above the centre of
mass) changes velocity by Δω·r at once. The spike is that real impulse, spread over the time the
car needs to cross one table spacing of the interpolated track (or one step): its integral is
Δω·r, whatever h and the table spacing; only its height depends on them."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch

G = 9.81


@pytest.mark.parametrize("dt,n_per_m", [(1e-3, 10), (5e-4, 40)])
def test_curvature_step_spike_is_the_rigid_car_impulse(dt, n_per_m):
    R, rider = 15.0, 1.1
    track, _ = analytic.drop_then_straight(R=R, angle_deg=45.0, run_in=20.0, run_out=60.0, n_per_m=n_per_m)
    w = World(dt=dt)
    k = w.add_track(track)
    w.add_train("a", k, cars=1, car=CarSpec(mass=500.0, length=2.0, width=1.2, height=1.0, rider_height=rider),
                start_s=1.0, start_speed=5.0)
    t, s, st = analytic.run(w, int(3.5 / dt), 1)
    assert st.ok
    gl, ss, v = s[:, 0, ch.G_LONGITUDINAL], s[:, 0, ch.S], s[:, 0, ch.SPEED]
    for s_step in (20.0, 20.0 + R * np.radians(45.0)):     # into the arc, out of it
        near = np.abs(ss - s_step) < 0.3
        i = np.argmin(np.abs(ss - s_step))
        dv = np.sum(gl[near]) * G * dt                      # velocity change of the rider point, m/s
        assert abs(abs(dv) - v[i] / R * rider) < 0.03 * v[i] / R * rider
        # the height of the spike: the impulse over max(h, ds/v)
        ds = 1.0 / n_per_m
        peak = v[i] / R * rider / max(dt, ds / v[i]) / G
        assert 0.3 * peak < np.max(np.abs(gl[near])) < 1.5 * peak
