"""Trailered cars, the split event, resistance and G of cars on bogies (docs/physics.md "Bogies"),
against closed forms."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.curves import Track
from trackrider.curves.segments import arc, start, straight
from trackrider.physics import CarSpec, World
from trackrider.physics import bogies
from trackrider.physics import channels as ch
from trackrider.physics.world import _rot
from trackrider.sim import run_world

G = 9.81
L, LENGTH, M, MF = 2.0, 2.6, 800.0, 80.0


def _car(**kw):
    args = dict(mass=M, length=LENGTH, width=1.2, height=1.0, cg_height=0.4, bogies="trailered", bogie_spacing=L,
                bogie_mass=MF)
    args.update(kw)
    return CarSpec(**args)


def test_trailered_cars_on_a_circle_yaw_as_the_chord_from_their_hitch_to_their_frame():
    """Level circle R = 20 m, four trailered cars (L = 2 m from hitch to axle, hitch at the rear end of
    the body ahead, d = (ℓ − L)/2 = 0.3 m behind its rear pivot): the first car is the chord between its
    two frames, x_0 = −L/2R; car c's hitch lies at r² = R² − 2 d R x_{c−1} + d² from the centre, so its
    body, the chord from its frame to its hitch, makes asin(−x_c) with the tangent at its frame,
    x_c = (r² − R² − L²)/(2RL) (1e-4 rad); each frame carries the G of its own body."""
    R, n, d = 20.0, 4, (LENGTH - L) / 2
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("t", track=k, car=_car(), cars=n, start_s=60.0, start_speed=8.0)
    assert w.entity_labels == [("t", c) for c in range(1, n + 2)] + [("t.body", c) for c in range(1, n + 1)]
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    x = [-L / (2 * R)]
    for c in range(1, n):
        r2 = R * R - 2 * d * R * x[-1] + d * d
        x.append((r2 - R * R - L * L) / (2 * R * L))
    assert abs(np.arcsin(-x[1]) - np.arcsin(-x[0])) > 0.005      # the hitch behind the pivot matters
    for c in range(n):
        fwd = _rot(s[-1, n + 1 + c, ch.QW:ch.QZ + 1])[:, 0]
        th = s[-1, c + 1, ch.S] / R              # the car's rear frame
        tangent = np.array([np.cos(th), np.sin(th), 0.0])
        assert abs(np.arccos(np.clip(fwd @ tangent, -1, 1)) - np.arcsin(-x[c])) < 1e-4
    # the frames' G are their bodies' (frames 1, 2: body 1; frame c + 1: body c)
    g = s[-1, :, ch.G_LATERAL]
    assert g[0] == g[1] and g[1] != g[2]


def test_trailered_static_wheel_loads_follow_the_lever_rule_through_the_hitches():
    """At rest on a level straight, cg_forward e = 0.2 m: each frame carries the weight
    ``bogies.lever_weights`` gives it (a trailered car's front share on the body ahead's rear end,
    passed on by that car's lever: a hand-worked check of the three-car sums below), within 1 N."""
    e, n = 0.2, 3
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(100.0))
    car = _car(cg_forward=e)
    w.add_train("t", track=k, car=car, cars=n, start_s=60.0)
    t, s, st = analytic.run(w, 2000, 100)
    assert st.ok
    front = 0.5 + e / L
    b0, b = M - 2 * MF, M - MF
    h2 = b * front                                          # car 3's front on car 2's rear end
    h1 = b * front + h2 * (L - LENGTH) / (2 * L)            # car 2's front on car 1's rear end
    exact = [MF + b0 * front + h1 * (L - LENGTH) / (2 * L), MF + b0 * (1 - front) + h1 * (L + LENGTH) / (2 * L),
             MF + b * (1 - front) + h2 * (L + LENGTH) / (2 * L), MF + b * (1 - front)]
    np.testing.assert_allclose(bogies.lever_weights([car] * n, "trailered"), exact, rtol=1e-12)
    assert sum(exact) == pytest.approx(n * M)     # the first car's two frames, one each behind
    np.testing.assert_allclose(s[-1, :n + 1, ch.WHEEL_LOAD], np.array(exact) * G, atol=1.0)


def test_a_frictionless_trailered_train_conserves_energy():
    """Four trailered cars on a hilly circle, no friction, no drag: frames and bodies keep their total
    energy within 1e-3 over 15 s."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=40.0, amp=1.5, waves=3, n=6001))
    w.add_train("t", track=k, car=_car(), cars=4, start_s=30.0, start_speed=12.0)
    t, s, st = analytic.run(w, 15000, 100)
    assert st.ok
    e = np.sum(s[:, :, ch.KINETIC_ENERGY] + s[:, :, ch.POTENTIAL_ENERGY], axis=1)
    assert np.max(np.abs(e - e[0])) / e[0] < 1e-3


@pytest.mark.parametrize("mode", ["physical", "nl2"])
@pytest.mark.parametrize("kind", ["two", "jacobs", "trailered"])
def test_a_bogie_trains_coasting_deceleration_equals_the_plain_trains(kind, mode):
    """Level straight, coasting from 20 m/s under aerodynamic drag and Davis B, C (or nl2 drag and
    friction): every frame of a train on bogies decelerates as the plain train of the same mass (the
    drag area, Davis terms and nl2 mass counted once per car, shared by its frames), 1e-6. A Jacobs
    set's N + 1 frames weigh a frame more than N cars: its plain twin's cars weigh bogie_mass / N more."""
    n = 1 if kind == "two" else 3
    acc = []
    for bog in ("none", kind):
        w = World(dt=1e-3)
        k = w.add_track(analytic.straight(400.0))
        if mode == "physical":
            w.set_resistance(drag_area=1.2, davis=(0.0, 30.0, 2.0))
        else:
            w.set_resistance(mode="nl2", rolling=0.02, nl2_drag=2e-4)
        if bog == "none":
            car = _car(bogies="none", bogie_spacing=None, bogie_mass=None,
                       mass=M + (MF / n if kind == "jacobs" else 0.0))
        else:
            car = _car(bogies=bog)
        w.add_train("t", track=k, car=car, cars=n, start_s=300.0, start_speed=20.0)
        t, s, st = analytic.run(w, 500, 100)
        assert st.ok
        rows = [i for i, lab in enumerate(w.entity_labels) if lab[0] == "t"]
        acc.append(s[-1, rows, ch.ACCEL])
    plain, bogie = acc
    assert np.all(plain < -0.1)
    np.testing.assert_allclose(bogie, plain[0], rtol=1e-6)


def _jacobs(n, R=150.0, **kw):
    """A Jacobs set of ``n`` coaches (pivots 18 m apart) at 10 m/s, on a level circle of radius ``R``
    (or the track ``kw["track"]``)."""
    w = World(dt=1e-3)
    k = w.add_track(kw.get("track") or analytic.flat_circle(R=R, n=4001))
    car = CarSpec(mass=30000.0, length=19.0, width=3.0, height=3.0, cg_height=1.5, rider_height=2.0, bogies="jacobs",
                  bogie_spacing=18.0, bogie_mass=3000.0, rider_rows=2)
    w.add_train("j", track=k, car=car, cars=n, start_s=120.0, start_speed=10.0, wheels="railway")
    return w


def test_every_body_of_a_jacobs_set_reports_its_rider_g():
    """Four bodies on five frames, level circle R = 150 m at 10 m/s: row k reports body k's G-forces (the
    body its frame leads), row 5 the last body's (its rear frame). Each body is the chord between its
    frames (L = 18 m), its rider point above the chord's middle, on a circle of radius √(R² − L²/4) about
    the centre at the track's angular rate v/R: g_lateral = v² √(R² − L²/4)/(g R²), g_vertical = 1 (1e-4;
    the shared frame's own v²/(g R) is 0.18 % more), and so do the front and back rows (rider_rows = 2)."""
    R, Lj = 150.0, 18.0
    w = _jacobs(4, R)
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    assert [lab for lab in w.entity_labels if lab[0] == "j"] == [("j", c) for c in range(1, 6)]
    v = s[-1, :5, ch.SPEED]
    exact = v ** 2 * np.sqrt(R * R - Lj * Lj / 4) / (G * R * R)
    for col in (ch.G_LATERAL, ch.G_LATERAL_FRONT, ch.G_LATERAL_REAR):
        np.testing.assert_allclose(np.abs(s[-1, :5, col]), exact, rtol=1e-4)
    for col in (ch.G_VERTICAL, ch.G_VERTICAL_FRONT, ch.G_VERTICAL_REAR):
        np.testing.assert_allclose(s[-1, :5, col], 1.0, atol=1e-4)
    assert np.all(np.abs(exact - v ** 2 / (G * R)) > 1e-3 * exact)   # not the track's own


def test_a_jacobs_row_is_the_body_its_frame_leads():
    """On a hilly circle (bodies pitching and rolling differently) row k's G-forces are body k's own
    (the ``j.body`` rows, whose centre of mass is the rider point here: rider_height = cg_height), the
    last row the last body's: 1e-9."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=150.0, amp=2.0, waves=6, n=6001))
    car = CarSpec(mass=30000.0, length=19.0, width=3.0, height=3.0, cg_height=1.5, rider_height=1.5,
                  bogies="jacobs", bogie_spacing=18.0, bogie_mass=3000.0)
    w.add_train("j", track=k, car=car, cars=3, start_s=120.0, start_speed=10.0, wheels="railway")
    t, s, st = analytic.run(w, 1500, 100)
    assert st.ok
    bodies = [i for i, lab in enumerate(w.entity_labels) if lab[0] == "j.body"]
    rows = s[:, :4, ch.G_VERTICAL:ch.G_LONGITUDINAL + 1]
    own = s[:, [bodies[0], bodies[1], bodies[2], bodies[2]], ch.G_VERTICAL:ch.G_LONGITUDINAL + 1]
    assert np.ptp(own[-1, :3, 0]) > 1e-3          # the bodies feel different forces
    np.testing.assert_allclose(rows, own, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("R, split", [(40.0, True), (300.0, False)])
def test_a_two_bogie_car_onto_a_tight_diverging_branch_splits(R, split):
    """A car on two bogies 10 m apart (swivel_limit 5°) takes a switch's diverging branch: on a branch of
    radius 40 m its body turns asin(L/2R) = 7.2° on its frames, beyond the limit: one ``split`` event
    (its car, t, angle beyond 5°); on a 300 m branch (1.0°) none."""
    main = Track.from_segments([start(), straight(150.0)])
    div = Track.from_segments([start(position=(40.0, 0.0, 0.0)), arc(R, 30.0), straight(40.0)])
    w = World(dt=1e-3)
    tm, td = w.add_track(main, name="main"), w.add_track(div, name="div")
    w.add_switch("points", tm, 40.0, [tm, td], position=1)
    car = CarSpec(mass=20000.0, length=13.0, width=3.0, height=3.0, cg_height=1.0, bogies="two", bogie_spacing=10.0,
                  bogie_mass=2000.0, swivel_limit=5.0)
    w.add_train("t", tm, 1, car, start_s=30.0, start_speed=10.0)
    r = run_world(w, 6.0, 100)
    events = [e for e in r.summary["events"] if e["kind"] == "split"]
    if not split:
        assert not events and r.summary["status"] == "completed"
        return
    assert len(events) == 1 and r.summary["status"] == "derailed"
    ev = events[0]
    assert ev["train"] == "t" and ev["car"] in (1, 2) and ev["body"] == 1
    assert 5.0 < abs(ev["angle"]) < np.degrees(np.arcsin(5.0 / R)) + 0.5


def _yaw(s, f, b):
    """The body's yaw on its frame (rad) in samples ``s``: its forward axis about the frame's up axis."""
    from trackrider.physics.checks import _rot as rots

    Rf, Rb = rots(s[:, f, ch.QW:ch.QZ + 1]), rots(s[:, b, ch.QW:ch.QZ + 1])
    return np.arctan2(np.einsum("nj,nj->n", Rf[:, :, 1], Rb[:, :, 0]), np.einsum("nj,nj->n", Rf[:, :, 0], Rb[:, :, 0]))


def test_a_split_between_two_recorded_samples_is_reported():
    """A car on two bogies 10 m apart (swivel_limit 5°) runs through a short 40 m bend (16°, 11.2 m of
    arc) at 10 m/s: for a moment both frames are on the arc and the body turns asin(L/2R) = 7.2° on
    them. Recorded at 100 Hz the samples see it (the yaw beyond 5° inside (0.5, 5.5) s, back under
    it after); recorded once in 6 s (no sample in the bend) the run reports the same ``split`` (the
    kernel checks every step): the same t and angle, just beyond 5°, at most 7.2°."""
    track = Track.from_segments([start(), straight(50.0), arc(40.0, 16.0), straight(80.0)])
    car = CarSpec(mass=20000.0, length=13.0, width=3.0, height=3.0, cg_height=1.0, bogies="two", bogie_spacing=10.0,
                  bogie_mass=2000.0, swivel_limit=5.0)

    def world():
        w = World(dt=1e-3)
        w.add_train("t", w.add_track(track), 1, car, start_s=35.0, start_speed=10.0)
        return w

    t, s, st = analytic.run(world(), 6000, 10)
    yaw = np.degrees(np.abs(np.stack([_yaw(s, 0, 2), _yaw(s, 1, 2)])).max(axis=0))
    over = t[yaw > 5.0]
    assert len(over) and 0.5 < over[0] and over[-1] < 5.5 and yaw.max() < np.degrees(np.arcsin(5.0 / 40.0)) + 0.05
    found = []
    for hz in (100.0, 1.0 / 6.0):
        r = run_world(world(), 6.0, hz)
        found.append([e for e in r.summary["events"] if e["kind"] == "split"])
        assert r.summary["status"] == "derailed"
    assert len(found[0]) == 1 and found[0] == found[1]
    ev = found[0][0]
    assert ev["body"] == 1 and ev["car"] in (1, 2) and abs(ev["t"] - over[0]) < 0.011
    assert 5.0 < abs(ev["angle"]) < 5.1
