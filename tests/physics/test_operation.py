"""Trains that meet (docs/physics.md §8; physics/operation.py): contact rows between trains on a track,
against momentum conservation and Newton's restitution law."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import run
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch

M = 500.0


def _meet(restitution, cars=3, track=None, v_behind=10.0, v_ahead=4.0, steps=12000, mass_ahead=M):
    w = World(dt=1e-3)
    w.set_operation(restitution=restitution)
    k = w.add_track(track if track is not None else analytic.straight(400.0))
    w.add_train("A", k, cars, CarSpec(mass=M, length=2.0, width=1.2, height=1.0), start_s=100.0,
                start_speed=v_behind)
    w.add_train("B", k, cars, CarSpec(mass=mass_ahead, length=2.0, width=1.2, height=1.0), start_s=150.0,
                start_speed=v_ahead)
    t, r, st = run(w, steps, 10)
    assert st.ok
    return w, t, r


@pytest.mark.parametrize("cars", [1, 3, 7])
def test_an_inelastic_meeting_leaves_both_trains_at_the_common_speed(cars):
    """Equal trains at 10 and 4 m/s, restitution 0: both leave at (10 + 4)/2 = 7 m/s (1 %)."""
    w, t, r = _meet(0.0, cars=cars, steps=14000)
    final = r[-1, :, ch.SPEED]
    assert np.all(np.abs(final - 7.0) < 0.07)
    # momentum along the (straight, level) track is conserved at every sample
    p = (r[:, :, ch.SPEED]).sum(axis=1) * M
    assert np.max(np.abs(p - p[0])) < 1e-6 * abs(p[0])
    # the cars never overlap: gap between A's lead and B's last car ≥ −1 mm
    gap = r[:, 2 * cars - 1, ch.S] - r[:, 0, ch.S] - 2.0
    assert gap.min() > -1e-3
    ev = [e for e in w.operation.events if e["kind"] == "collision"]
    assert len(ev) == 2 and {e["train"] for e in ev} == {"A", "B"}
    assert ev[0]["closing_speed"] == pytest.approx(6.0, rel=1e-3)


@pytest.mark.parametrize("cars", [1, 3, 7])
def test_an_elastic_meeting_exchanges_the_speeds(cars):
    """Restitution 1 between equal trains: they exchange speeds (10 ↔ 4 m/s) within 1 %, in one
    step (the contact's effective mass is the two trains', the chains' Schur complement)."""
    w, t, r = _meet(1.0, cars=cars, steps=14000)
    sp = r[-1, :, ch.SPEED]
    assert np.all(np.abs(sp[:cars] - 4.0) < 0.04)
    assert np.all(np.abs(sp[cars:] - 10.0) < 0.1)


def test_restitution_half_with_unequal_masses_follows_newtons_law():
    """m_A = 500, m_B = 1000 per car, e = 0.5: v_A' = (m_A v_A + m_B v_B − m_B e (v_A − v_B))/(m_A + m_B)."""
    e, vA, vB, mA, mB = 0.5, 10.0, 4.0, M, 2 * M
    w, t, r = _meet(e, cars=3, mass_ahead=mB, steps=14000)
    vA1 = (mA * vA + mB * vB - mB * e * (vA - vB)) / (mA + mB)
    vB1 = (mA * vA + mB * vB + mA * e * (vA - vB)) / (mA + mB)
    assert r[-1, :3, ch.SPEED] == pytest.approx(np.full(3, vA1), rel=0.01)
    assert r[-1, 3:, ch.SPEED] == pytest.approx(np.full(3, vB1), rel=0.01)


@pytest.mark.parametrize("bogies", ["none", "two", "jacobs", "trailered"])
def test_trains_of_cars_on_bogies_meet_as_whole_trains(bogies):
    """Two trains of two cars (500 kg each, on bogies: their wheel frames and bodies) meet on a
    straight level track at 10 and 4 m/s, restitution 0. Their contact row joins the front wheel
    frame behind and the rear wheel frame ahead; with every swivel and coupler exact (the car
    blocks), an impulse on it moves each train as a whole, so its compliance is 1/M_A + 1/M_B
    (M = 1000 kg a train; a Jacobs set's two bodies share three 50 kg frames: 1050 kg; 1e-9
    relative) and both trains leave at the common 7 m/s (0.1 %), without overlapping (1 mm)."""
    w = World(dt=1e-3)
    w.set_operation(restitution=0.0)
    k = w.add_track(analytic.straight(400.0))
    spec = dict(mass=M, length=4.0, width=1.2, height=1.0)
    if bogies != "none":
        spec.update(bogies=bogies, bogie_spacing=2.5, bogie_mass=50.0)
    w.add_train("A", k, 2, CarSpec(**spec), start_s=100.0, start_speed=10.0)
    w.add_train("B", k, 2, CarSpec(**spec), start_s=150.0, start_speed=4.0)
    t, r, st = run(w, 12000, 10)
    assert st.ok
    mass = 2 * M + (50.0 if bogies == "jacobs" else 0.0)
    assert w.ops.k[0] == pytest.approx(2.0 / mass, rel=1e-9)
    frames = w.ops.ahead[0] + 1      # the trains' wheel frames (or cars), then the bodies
    assert np.all(np.abs(r[-1, :frames, ch.SPEED] - 7.0) < 7e-3)
    gap = r[:, w.ops.ahead[0], ch.S] - r[:, w.ops.behind[0], ch.S] - w.ops.touch[0]
    assert gap.min() > -1e-3


def test_trains_on_a_closed_circle_stay_apart_and_keep_momentum_along_the_track():
    """Two trains on a level circle, one catching up: after the inelastic meeting they circle
    together at the mean speed (1 %), never overlapping."""
    R = 40.0
    track = analytic.flat_circle(R=R)
    w, t, r = _meet(0.0, cars=3, track=track, v_behind=12.0, v_ahead=6.0, steps=20000)
    assert np.all(np.abs(r[-1, :, ch.SPEED] - 9.0) < 0.09)
    L = 2 * np.pi * R
    gap = (r[:, 5, ch.S] - r[:, 0, ch.S]) % L - 2.0
    assert gap.min() > -1e-3


def test_without_other_trains_on_the_track_there_is_no_contact():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(400.0))
    w.add_track(analytic.straight(400.0, origin=(0.0, 10.0, 0.0)))
    w.add_train("A", 0, 2, CarSpec(mass=M, length=2.0, width=1.2, height=1.0), start_s=100.0, start_speed=10.0)
    w.add_train("B", 1, 2, CarSpec(mass=M, length=2.0, width=1.2, height=1.0), start_s=105.0, start_speed=4.0)
    run(w, 10, 1)
    assert w.ops is None and w.operation is None
