"""Suspended cars: a car body hanging below its track trolley on a hinge along the direction of
travel swings out in a curve to the angle where the rider feels no lateral G."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.errors import InputError
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch
from trackrider.physics.world import _rot

G = 9.81


def _run_flat_curve(R=50.0, v=15.0, hang=1.5, steps=15000):
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=2001))
    w.add_train("s", track=k, cars=2, car=CarSpec(mass=500.0, length=2.0, width=1.2, height=1.2,
                                                   rider_height=-1.2, suspended=True, hang=hang,
                                                   swing_damping=3000.0), start_s=10.0, start_speed=v)
    t, s, st = analytic.run(w, steps, 10)
    return w, t, s, st


def test_suspended_car_swings_out_to_atan_v2_over_gR():
    """Flat circle R = 50 m at ~15 m/s, swing damped: at steady state the body hangs at
    atan(v²/(g R)) within 1° (exactly: tan φ = v² (R + hang sin φ)/(g R²), within 0.02°), the rider
    (on the body, 1.2 m below the rail) feels no lateral G (< 1e-3 g) and g_vertical = 1/cos φ."""
    R, hang = 50.0, 1.5
    w, t, s, st = _run_flat_curve(R=R, hang=hang)
    assert st.ok
    assert w.entity_labels == [("s", 1), ("s", 2), ("s.body", 1), ("s.body", 2)]
    last = t > t[-1] - 1.0
    for car, body in ((0, 2), (1, 3)):
        v = s[last, car, ch.SPEED].mean()
        ups = np.array([_rot(q)[:, 2] for q in s[last, body, ch.QW:ch.QZ + 1]])
        phi = np.arccos(ups[:, 2])
        assert np.max(np.abs(np.degrees(phi) - np.degrees(np.arctan(v * v / (G * R))))) < 1.0
        exact = np.arctan(v * v * (R + hang * np.sin(phi)) / (G * R * R))
        assert np.max(np.abs(np.degrees(phi - exact))) < 0.02
        assert np.max(np.abs(s[last, car, ch.G_LATERAL])) < 1e-3
        np.testing.assert_allclose(s[last, car, ch.G_VERTICAL], 1.0 / np.cos(phi), rtol=1e-3)
        # it swung outward (away from the centre at (0, R))
        com = s[last, body, ch.X:ch.Y + 1] - [0.0, R]
        piv = s[last, car, ch.X:ch.Y + 1] - [0.0, R]
        assert np.all(np.linalg.norm(com, axis=1) > np.linalg.norm(piv, axis=1) + 0.5)


def test_suspended_car_rejects_bad_hang():
    w = World()
    k = w.add_track(analytic.straight(50.0))
    with pytest.raises(InputError) as e:
        w.add_train("s", track=k, car=CarSpec(mass=500.0, length=2.0, width=1.0, height=1.0, suspended=True,
                                               hang=0.0), start_s=10.0)
    assert e.value.where == "car.hang"


def test_undamped_suspended_train_conserves_energy_and_lists_its_hinges():
    """No damper, frictionless level circle: trolleys + swinging bodies keep their kinetic energy
    within 1e-3 over 10 s while the bodies swing (they start hanging straight down). The swing
    hinges are listed in World.joints (for energy groups)."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=30.0, n=2001))
    w.add_train("s", track=k, cars=2, car=CarSpec(mass=500.0, length=2.0, width=1.2, height=1.2,
                                                   suspended=True, hang=1.5), start_s=10.0, start_speed=12.0)
    t, s, st = analytic.run(w, 10000, 10)
    assert st.ok
    E = (s[:, :, ch.KINETIC_ENERGY] + s[:, :, ch.POTENTIAL_ENERGY]).sum(1)
    E0 = 0.5 * (2 * 500.0 + 2 * 50.0) * 12.0 ** 2          # the swing exchanges KE and PE only
    assert np.max(np.abs(E - E[0])) / E0 < 1e-3
    up = np.array([_rot(q)[:, 2] for q in s[:, 2, ch.QW:ch.QZ + 1]])
    assert np.degrees(np.arccos(up[:, 2])).max() > 30.0    # it swings (out to ~2 × 26°)
    hinges = [j for j in w.joints if j.get("suspension")]
    assert [(j["a"], j["b"]) for j in hinges] == [(("car", 0, 0), ("body", 0)), (("car", 0, 1), ("body", 1))]
