"""Connections to a track on a moving body (docs/physics.md §12, "Moving tracks"): a transfer
table joins the line only while its track's ends are aligned with the fixed tracks (1 mm, 0.5°);
a car crossing keeps its world position and velocity and the table's load from it starts and
stops; a car that reaches an unaligned end runs off it."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.errors import InputError
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch

G = 9.81
M, m = 2000.0, 500.0          # the table's and the car's mass, kg


def table_line(v0, shift=0.0, motor=None, max_travel=None, cars=1):
    """A level line along +x: a fixed track "in" (0 … 10 m), a 10 m transfer table (a body on a
    prismatic joint across the line, along +y) whose track starts ``shift`` m to −y of the line,
    and a fixed track "out" (20 … 30 m). A frictionless car starts at x = 2 m at ``v0`` m/s."""
    w = World(dt=1e-3)
    a = w.add_track(analytic.straight(10.0, n=101), name="in")
    b = w.add_body("table", M, size=(10.0, 3.0, 0.5), position=(15.0, -shift, -0.25))
    k = w.add_track(analytic.straight(10.0, n=101, origin=(10.0, -shift, 0.0)), body=b, name="table")
    c = w.add_track(analytic.straight(10.0, n=101, origin=(20.0, 0.0, 0.0)), name="out")
    w.add_train("car", a, cars, CarSpec(m, 2.0, 1.2, 1.0, cg_height=0.5), start_s=2.0 + 2.5 * (cars - 1), start_speed=v0)
    joint = dict(motor_speed=0.0) if motor is None else dict(motor_speed=motor, max_force=5000.0)
    if max_travel is not None:
        joint.update(min_travel=0.0, max_travel=max_travel)
    w.add_joint("prismatic", "world", ("body", b), axis=(0, 1, 0), name="slide", **joint)
    w.add_connection((a, "end"), (k, "start"))
    w.add_connection((k, "end"), (c, "start"))
    return w


def run(w, n_steps, every=10):
    ts, ss, js = [], [], []
    st = w.run(n_steps, every, lambda t, s: (ts.append(t.copy()), ss.append(s.copy())),
               joint_sink=lambda t, s: js.append(s.copy()))
    return np.concatenate(ts), np.concatenate(ss), np.concatenate(js), st


def changes(w):
    return [(e["from"], e["to"], e["t"]) for e in w.network.events if e["kind"] == "track_change"]


def test_a_car_crosses_onto_a_table_at_rest_and_off_again_with_energy_and_position_continuous():
    """Frictionless, level, the table aligned and held: the car runs on at v0 (energy to 1e-9
    relative), x = 2 + v0 t and y = 0 (≤ 1 mm) throughout; ``s`` carries over (s − 10 m on the
    table, again on "out"); the joint carries the table's weight, and the car's while it is on the
    table: (M + m) g there, M g before and after (1e-6 relative)."""
    v0 = 2.0
    w = table_line(v0)
    t, s, j, st = run(w, 13000)
    assert st.status == "ok"
    assert [(a, b) for a, b, _ in changes(w)] == [("in", "table"), ("table", "out")]
    (_, _, t1), (_, _, t2) = changes(w)
    assert abs(t1 - 4.0) < 2e-3 and abs(t2 - 9.0) < 2e-3
    x, y = s[:, 0, ch.X], s[:, 0, ch.Y]
    assert np.max(np.abs(x - (2.0 + v0 * t))) < 1e-3
    assert np.max(np.abs(y)) < 1e-3
    ke = s[:, 0, ch.KINETIC_ENERGY] + s[:, 1, ch.KINETIC_ENERGY]
    assert np.max(np.abs(ke / (0.5 * m * v0 ** 2) - 1.0)) < 1e-9
    np.testing.assert_allclose(s[:, 0, ch.SPEED], v0, rtol=1e-9)
    on = (t > t1 + 0.05) & (t < t2 - 0.05)
    before, after = t < t1 - 0.05, t > t2 + 0.05
    np.testing.assert_allclose(s[on, 0, ch.S], x[on] - 10.0, atol=1e-9)
    np.testing.assert_allclose(s[after, 0, ch.S], x[after] - 20.0, atol=1e-9)
    np.testing.assert_allclose(s[on, 0, ch.TRACK], 1)
    np.testing.assert_allclose(j[on, 0, ch.J_FORCE], (M + m) * G, rtol=1e-6)
    np.testing.assert_allclose(j[before | after, 0, ch.J_FORCE], M * G, rtol=1e-6)


def test_a_car_that_reaches_the_table_before_it_is_aligned_runs_off():
    """The table starts 3 m to the side and slides over at 1 m/s to its end stop on the line
    (t ≈ 3.2 s); a car at 4 m/s reaches the end of "in" at t = 2 s, the table still 1.2 m away:
    no track change, the car runs off (its RAN_OFF flag: ``ran_off_track``) at x = 10 m."""
    w = table_line(4.0, shift=3.0, motor=1.0, max_travel=3.0)
    t, s, j, st = run(w, 2500)
    assert changes(w) == []
    assert 1.0 < 3.0 - j[t == 2.0, 0, ch.J_TRAVEL][0] < 1.5
    off = np.flatnonzero(s[:, 0, ch.FLAGS].astype(np.int64) & ch.RAN_OFF)
    assert abs(t[off[0]] - 2.0) < 0.02
    assert abs(s[off[0], 0, ch.X] - 10.0) < 0.05


def test_a_table_that_becomes_aligned_is_then_crossed():
    """The same table, the car at 2 m/s: the table reaches its stop (y = 0, within 1 mm) at 3 s,
    the car the end of "in" at 4 s: it crosses onto the table and on to "out" with its energy
    (1e-9 relative) and x = 2 + v0 t, y = 0 (≤ 1 mm) all the way."""
    v0 = 2.0
    w = table_line(v0, shift=3.0, motor=1.0, max_travel=3.0)
    t, s, j, st = run(w, 13000)
    assert st.status == "ok"
    assert [(a, b) for a, b, _ in changes(w)] == [("in", "table"), ("table", "out")]
    late = t > 3.5
    assert np.max(np.abs(j[late, 0, ch.J_TRAVEL] - 3.0)) < 1e-3
    assert np.max(np.abs(s[:, 0, ch.X] - (2.0 + v0 * t))) < 1e-3
    assert np.max(np.abs(s[:, 0, ch.Y])) < 1e-3
    np.testing.assert_allclose(s[:, 0, ch.KINETIC_ENERGY], 0.5 * m * v0 ** 2, rtol=1e-9)


def test_a_connection_to_a_moving_track_joins_an_end_to_a_start():
    w = World(dt=1e-3)
    a = w.add_track(analytic.straight(10.0, n=101), name="in")
    b = w.add_body("table", M, size=(10.0, 3.0, 0.5), position=(15.0, 0.0, -0.25))
    k = w.add_track(analytic.straight(10.0, n=101, origin=(20.0, 0.0, 0.0)), body=b)
    with pytest.raises(InputError, match="joins an end to a start"):
        w.add_connection((a, "end"), (k, "end"))
    with pytest.raises(InputError, match="branches are on its track's body"):
        w.add_switch("sw", a, "end", [k, (k, "end")])


def test_a_two_car_train_crosses_car_by_car_and_the_table_carries_the_cars_on_it():
    """Two coupled frictionless cars (2.5 m apart) over the table at rest: each changes track when
    its own anchor reaches the end (t = 2.75 s and 4 s onto the table, 7.75 s and 9 s off it); the
    joint carries M g plus m g for each car on the table (1e-6 relative); speed and energy stay
    (1e-9 relative)."""
    v0 = 2.0
    w = table_line(v0, cars=2)
    t, s, j, st = run(w, 12000)
    assert st.status == "ok"
    ev = changes(w)
    assert [(a, b) for a, b, _ in ev] == [("in", "table")] * 2 + [("table", "out")] * 2
    np.testing.assert_allclose([e[2] for e in ev], [2.75, 4.0, 7.75, 9.0], atol=2e-3)
    on = ((t > 2.8) & (t < 3.95)) * 1 + ((t > 4.05) & (t < 7.7)) * 2 + ((t > 7.8) & (t < 8.95)) * 1
    steady = np.abs(t[:, None] - np.array([2.75, 4.0, 7.75, 9.0])).min(axis=1) > 0.05
    np.testing.assert_allclose(j[steady, 0, ch.J_FORCE], (M + m * on[steady]) * G, rtol=1e-6)
    np.testing.assert_allclose(s[:, :2, ch.SPEED], v0, rtol=1e-9)
    np.testing.assert_allclose(s[:, :2, ch.KINETIC_ENERGY].sum(axis=1), m * v0 ** 2, rtol=1e-9)
