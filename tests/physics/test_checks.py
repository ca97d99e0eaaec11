"""trackrider/physics/checks.py: joint and track constraints read from a world and from samples."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.curves import Track
from trackrider.errors import InputError
from trackrider.physics import World
from trackrider.physics import channels as ch
from trackrider.physics.checks import JointGeometry, TrackGeometry, check_start


def pendulum_world(anchor_b=(0.0, 0.0, 2.0)):
    w = World(dt=0.001)
    w.add_body("bob", 1.0, size=(0.1, 0.1, 0.1), position=(1.0, 0.0, 2.0))
    w.add_joint("ball", ("body", 0), "world", anchor_a=(-1.0, 0.0, 0.0), anchor_b=anchor_b)
    w.n_entities   # build
    return w


def test_a_joint_that_starts_together_passes_and_one_apart_is_named():
    assert len(check_start(pendulum_world()).joints) == 1
    with pytest.raises(InputError, match=r"joint\[0\].*start 3 m apart"):
        check_start(pendulum_world(anchor_b=(0.0, 0.0, 5.0)))


def test_joint_violation_from_recorded_positions():
    geo = JointGeometry.from_world(pendulum_world())
    s = np.zeros((2, 1, ch.N_CHANNELS))
    s[:, 0, ch.QW] = 1.0
    s[0, 0, [ch.X, ch.Y, ch.Z]] = (0.0, 1.0, 2.0)          # anchor at (-1, 1, 2): 1.414 m off the pivot
    s[1, 0, [ch.X, ch.Y, ch.Z]] = (1.0, 0.0, 2.0)          # kept
    v = geo.violation(s)
    assert v[0, 0] == pytest.approx(np.sqrt(2.0)) and v[1, 0] == pytest.approx(0.0)


def test_a_car_off_its_track_by_more_than_0_1_m_is_found_at_its_first_instant():
    x = np.linspace(0.0, 100.0, 21)
    track = Track.from_points(np.column_stack([x, np.zeros_like(x), np.zeros_like(x)]))
    geo = TrackGeometry([track], car_track=[0], car_cg=[0.5])
    m = 200
    s = np.zeros((m, 1, ch.N_CHANNELS))
    s[:, 0, ch.QW] = 1.0
    s[:, 0, ch.S] = np.linspace(10.0, 20.0, m)
    s[:, 0, ch.X] = s[:, 0, ch.S]
    s[:, 0, ch.Z] = 0.5                                     # the centre of mass cg above the curve
    s[:, 0, ch.FLAGS] = ch.ON_TRACK
    assert geo.first_violation(s) is None
    s[137:, 0, ch.Y] = 0.3                                  # thrown sideways from instant 137
    assert geo.first_violation(s)[:2] == (137, 0)
    s[137:, 0, ch.FLAGS] = ch.ON_TRACK | ch.RAN_OFF         # a car that ran off is on no track
    assert geo.first_violation(s) is None
