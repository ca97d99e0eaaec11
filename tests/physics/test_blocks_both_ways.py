"""Block sections and stations for trains running towards −s (physics/blocks.py; docs/physics.md,
"Block sections"): the hold stops the lead car — the one in front towards −s — at the section's
``from`` + 1 m on the hold's profile (the closed form of the +s tests, mirrored), and a station
dwells and dispatches a train the way it came in."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics.analytic import run
from tests.physics.test_network import car, seg_track
from tests.physics.test_network_blocks import A_HOLD, V
from trackrider.curves.segments import start, straight
from trackrider.physics import World
from trackrider.physics import channels as ch


def closed_form_stop_minus(s0, hold_s):
    """A lead car at ``s0`` running at −V, held to stop at ``hold_s`` < ``s0``: it runs on at V until
    the profile √(2 a d) (d = s − hold_s) falls below V, then slows at a: the time it stops."""
    return (s0 - hold_s - V * V / (2.0 * A_HOLD)) / V + V / A_HOLD


def line(n_cars, s0):
    """A level straight (300 m) with block brakes "far" (20–60 m) and "home" (100–160 m); train B (one
    car) at rest at 80 m, in far's block; train A (``n_cars``) with its first car at ``s0`` running
    towards −s at V."""
    w = World(dt=1e-3)
    k = w.add_track(seg_track(start(), straight(300.0)), name="line")
    w.add_section("brake", k, 20.0, 60.0, speed=V, max_force=1e5, block=True, name="far")
    w.add_section("brake", k, 100.0, 160.0, speed=V, max_force=1e5, block=True, name="home")
    w.add_train("B", k, 1, car(), start_s=80.0, start_speed=0.0)
    w.add_train("A", k, n_cars, car(), start_s=s0, start_speed=-V)
    return w


@pytest.mark.parametrize("n_cars", [1, 2])
def test_a_train_running_towards_minus_s_is_held_at_from_plus_the_margin(n_cars):
    # the next block towards −s (far's: 20–100 m) holds B, so home holds A: A's lead car (its last
    # car, the one in front towards −s) stops at home's from + 1 m = 101 m (1 mm) at the closed-form
    # time (20 ms), braking at the hold's deceleration (1e-3); its other car stops a car's spacing
    # behind it, towards +s
    w = line(n_cars, 290.0)
    t, r, st = run(w, 40000, 10)
    assert st.ok
    lead = n_cars      # entities: B's car, then A's cars in train order; A's lead is its last car
    d = float(r[0, 1, ch.S] - r[0, lead, ch.S])
    i = int(np.argmax(np.abs(r[:, lead, ch.SPEED]) < 1e-3))
    assert i > 0
    assert r[i, lead, ch.S] == pytest.approx(101.0, abs=1e-3)
    assert t[i] == pytest.approx(closed_form_stop_minus(290.0 - d, 101.0), abs=0.02)
    assert np.all(r[i:, lead, ch.S] > 101.0 - 1e-3) and np.all(np.abs(r[i + 100:, lead, ch.SPEED]) < 1e-3)
    braking = (t > t[i] - V / A_HOLD + 0.5) & (t < t[i] - 0.5)
    acc = np.gradient(r[:, lead, ch.SPEED], t)[braking]
    np.testing.assert_allclose(acc, A_HOLD, rtol=1e-3)       # speed −V → 0: + a along the car's T
    hold = [e for e in w.operation.events if e["kind"] == "block_hold"]
    assert [(e["train"], e["section"]) for e in hold] == [("A", "home")]
    assert hold[0]["t"] == pytest.approx((290.0 - d - 160.0) / V, abs=2e-3)   # the lead car passes `to`
    assert not [e for e in w.operation.events if e["kind"] in ("block_overrun", "collision")]


def test_a_station_serves_a_train_running_towards_minus_s():
    # a station 100–160 m (dwell 5 s): a car arriving at −V stops at 101 m (1 mm; the +s stop mark
    # mirrored), dwells 5 s and is dispatched towards −s, driven to −V (1e-3) and on past from
    w = World(dt=1e-3)
    k = w.add_track(seg_track(start(), straight(300.0)), name="line")
    w.add_section("station", k, 100.0, 160.0, speed=V, max_force=1e5, dwell=5.0, name="station")
    w.add_train("A", k, 1, car(), start_s=290.0, start_speed=-V)
    t, r, st = run(w, 30000, 10)
    assert st.ok
    i = int(np.argmax(np.abs(r[:, 0, ch.SPEED]) < 1e-3))
    assert r[i, 0, ch.S] == pytest.approx(101.0, abs=1e-3)
    assert t[i] == pytest.approx(closed_form_stop_minus(290.0, 101.0), abs=0.02)
    ev = [e for e in w.operation.events if e["kind"] == "dispatch"]
    assert len(ev) == 1 and ev[0]["train"] == "A"
    # the dwell starts at the stop mark, 2 cm before the stop (√(2 · 0.02 / a) = 0.16 s earlier)
    assert ev[0]["t"] == pytest.approx(t[i] - np.sqrt(2 * 0.02 / A_HOLD) + 5.0, abs=0.02)
    assert np.all(r[(t > t[i]) & (t < ev[0]["t"] - 0.01), 0, ch.S] == pytest.approx(101.0, abs=1e-3))
    assert r[-1, 0, ch.S] < 100.0 and r[-1, 0, ch.SPEED] == pytest.approx(-V, rel=1e-3)
