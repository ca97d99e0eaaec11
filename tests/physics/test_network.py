"""Track networks: connections and switches against closed forms (docs/physics.md §12)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics.analytic import run
from trackrider.curves import Track
from trackrider.curves.segments import arc, start, straight
from trackrider.errors import InputError
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch

G = 9.81


def car(**kw):
    spec = dict(mass=500.0, length=2.0, width=1.2, height=1.0, cg_height=0.0, rider_height=0.0)
    spec.update(kw)
    return CarSpec(**spec)


def seg_track(*segs):
    return Track.from_segments(list(segs))


def end_pose(tr):
    """(position, heading, pitch) of a track's end, degrees."""
    f = tr.frames(np.array([tr.length]))
    T = f.tangent[0]
    return f.position[0], float(np.degrees(np.arctan2(T[1], T[0]))), float(np.degrees(np.arcsin(T[2])))


def energy(r):
    return r[:, :, ch.KINETIC_ENERGY].sum(axis=1) + r[:, :, ch.POTENTIAL_ENERGY].sum(axis=1)


def test_a_car_runs_through_a_connection_with_s_carried_and_energy_conserved():
    # a downhill straight joined to a valley: a frictionless car runs on from one to the other;
    # v² = v0² + 2 g Δz at every sample (tolerance 1e-3 relative in energy), s continues as s − L
    a = seg_track(start(pitch=-10.0), straight(20.0))
    p, hd, pt = end_pose(a)
    b = seg_track(start(position=tuple(p), heading=hd, pitch=pt), straight(5.0), arc(30.0, 10.0, "pitch"),
                  straight(40.0))
    w = World(dt=1e-3)
    ta, tb = w.add_track(a), w.add_track(b)
    w.add_connection((ta, "end"), (tb, "start"))
    w.add_train("t", ta, 1, car(), start_s=5.0, start_speed=2.0)
    t, r, st = run(w, 6000, 10)
    assert st.ok
    trk = r[:, 0, ch.TRACK]
    assert trk[0] == ta and trk[-1] == tb
    k = int(np.argmax(trk == tb))
    # s continues: the distance run is continuous across the change (s on B = s on A − L_A)
    ds = (r[k, 0, ch.S] + a.length) - r[k - 1, 0, ch.S]
    assert ds == pytest.approx(r[k, 0, ch.SPEED] * 0.01, rel=0.02)
    # world position continuous: no jump beyond v·dt
    step = np.linalg.norm(np.diff(r[:, 0, ch.X:ch.Z + 1], axis=0), axis=1)
    assert step[k - 1] == pytest.approx(step[k - 2], rel=0.05)
    # energy: its change over the sample across the connection is the one over the sample before
    # (1e-7 of the kinetic energy: the scheme's own small drift on the slope, nothing at the
    # connection), within 1e-3 of it over the ride (the valley's kinks of curvature trade a little)
    e, ke = energy(r), r[:, 0, ch.KINETIC_ENERGY].max()
    assert abs((e[k] - e[k - 1]) - (e[k - 1] - e[k - 2])) < 1e-7 * ke
    assert np.max(np.abs(e - e[0])) < 1e-3 * ke
    v2 = r[:, 0, ch.SPEED] ** 2
    z0 = r[0, 0, ch.Z]
    np.testing.assert_allclose(v2, r[0, 0, ch.SPEED] ** 2 + 2 * G * (z0 - r[:, 0, ch.Z]), rtol=2e-3, atol=2e-3)
    ev = [e for e in w.network.events if e["kind"] == "track_change"]
    assert len(ev) == 1 and ev[0]["from"] == "track0" and ev[0]["to"] == "track1"


def test_an_end_end_connection_flips_s_and_the_car_runs_on_facing_minus_s():
    # track B is laid backwards: it ends where A ends, pointing the other way; the car crosses
    # onto B at s = L_B − (s − L_A), facing −s: s decreases while the car goes forwards
    a = seg_track(start(), straight(20.0))
    b = seg_track(start(position=(50.0, 0.0, 0.0), heading=180.0), straight(30.0))
    w = World(dt=1e-3)
    ta, tb = w.add_track(a), w.add_track(b)
    w.add_connection((ta, "end"), (tb, "end"))
    w.add_train("t", ta, 1, car(), start_s=15.0, start_speed=5.0)
    t, r, st = run(w, 3000, 10)
    assert st.ok
    on_b = r[:, 0, ch.TRACK] == tb
    assert on_b[-1]
    # x grows at 5 m/s all along; on B, s = 50 − x
    np.testing.assert_allclose(r[:, 0, ch.X], 15.0 + 5.0 * t, atol=1e-6)
    np.testing.assert_allclose(r[on_b, 0, ch.S], 50.0 - r[on_b, 0, ch.X], atol=1e-6)
    np.testing.assert_allclose(r[:, 0, ch.SPEED], 5.0, atol=1e-9)
    # the car faces +x all along (no turn at the connection): quaternion unchanged
    np.testing.assert_allclose(r[:, 0, ch.QW], 1.0, atol=1e-9)
    np.testing.assert_allclose(r[:, 0, ch.G_VERTICAL], 1.0, atol=1e-6)


def test_a_balloon_loop_returns_the_train_reversed_with_energy_conserved():
    # a line A; at its end a loop B leaves and comes back to A's end head on (B: start and end both
    # at A's end): the train goes round and returns along A towards −s, facing −s
    R = 15.0
    a = seg_track(start(), straight(30.0))
    loop = seg_track(start(position=(30.0, 0.0, 0.0)), straight(10.0), arc(R, -60.0), arc(R, 300.0),
                     arc(R, -60.0), straight(10.0))
    p, hd, _ = end_pose(loop)
    assert np.linalg.norm(p - [30.0, 0.0, 0.0]) < 1e-6 and abs(abs(hd) - 180.0) < 1e-6
    w = World(dt=1e-3)
    ta, tb = w.add_track(a), w.add_track(loop)
    # the loop's two ends meet A's end: a spring switch, set for the loop's start
    w.add_switch("balloon", ta, "end", [(tb, "start"), (tb, "end")], position=0)
    w.add_train("t", ta, 1, car(), start_s=10.0, start_speed=6.0)
    duration = (20.0 + loop.length + 25.0) / 6.0
    t, r, st = run(w, int(duration / 1e-3), 10)
    assert st.ok
    kinds = [e["kind"] for e in w.network.events]
    assert kinds == ["track_change", "switch_run_through", "track_change"]
    assert r[-1, 0, ch.TRACK] == ta
    # back on A facing −s: s decreases by the distance run (the car's speed, along its forward axis,
    # trades a little with its yaw energy where the loop's curvature jumps: integrate it)
    v = np.concatenate([[6.0], r[:, 0, ch.SPEED]])
    run_m = float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(np.concatenate([[0.0], t]))))
    assert r[-1, 0, ch.S] == pytest.approx(30.0 - (run_m - 20.0 - loop.length), abs=5e-3)
    assert r[-1, 0, ch.SPEED] > 5.9 and r[-1, 0, ch.VX] == pytest.approx(-r[-1, 0, ch.SPEED], rel=1e-6)
    # energy: unchanged across each change of track (1e-9 relative between the samples around
    # it); over the whole ride within 1e-3 (the loop's kinks of curvature trade a little with yaw)
    e = energy(r)
    for k in np.flatnonzero(np.diff(r[:, 0, ch.TRACK])):
        assert abs((e[k + 1] - e[k]) - (e[k] - e[k - 1])) < 1e-7 * e[0]
    assert abs(e[-1] - e[0]) < 1e-3 * e[0]
    sw = w.network.summary(w.records.tracks)["balloon"]
    assert sw["position"] == sw["branches"][1] and [x["by"] for x in sw["throws"]] == ["run_through"]


def level_switch(position, train_at=30.0, speed=10.0, cars=3, R=50.0, on_branch=False, **sw):
    """A straight through track with a switch at 40 m to a level branch of radius R (no cant)."""
    main = seg_track(start(), straight(120.0))
    div = seg_track(start(position=(40.0, 0.0, 0.0)), arc(R, 40.0), straight(40.0))
    w = World(dt=1e-3)
    tm, td = w.add_track(main, name="main"), w.add_track(div, name="div")
    w.add_switch("points", tm, 40.0, [tm, td], position=position, branch_names=["main", "div"], **sw)
    w.add_train("t", td if on_branch else tm, cars, car(), start_s=train_at, start_speed=speed)
    return w, tm, td


@pytest.mark.parametrize("position", [0, 1])
def test_a_level_switch_sends_each_car_the_way_it_is_set_with_the_lateral_g_of_its_radius(position):
    R, v = 50.0, 10.0
    w, tm, td = level_switch(position, R=R, speed=v)
    s0 = w.car_s
    t, r, st = run(w, 6000, 10)
    assert st.ok
    changes = [e for e in w.network.events if e["kind"] == "track_change"]
    if position == 0:
        # straight on: nobody changes track, no lateral G (1e-6 g)
        assert not changes and np.all(r[:, :, ch.TRACK] == tm)
        assert np.max(np.abs(r[:, :, ch.G_LATERAL])) < 1e-6
        return
    # each car changes track at the step its anchor reaches the switch point: (40 − s0)/v (one step)
    assert [e["car"] for e in changes] == [1, 2, 3]
    for e, s in zip(changes, s0):
        assert e["from"] == "main" and e["to"] == "div"
        assert abs(e["t"] - (40.0 - s) / v) <= 1.5e-3
    # on the branch's arc (2 m after the switch to 2 m before its end): lateral G = v²/(g R), the
    # car's own speed (1e-4 relative); the sign: a left turn pushes the rider to the right (−)
    on_arc = (r[:, :, ch.TRACK] == td) & (r[:, :, ch.S] > 2.0) & (r[:, :, ch.S] < R * np.radians(40.0) - 2.0)
    assert on_arc.sum() > 100
    g_lat = np.abs(r[:, :, ch.G_LATERAL][on_arc])
    np.testing.assert_allclose(g_lat, r[:, :, ch.SPEED][on_arc] ** 2 / (G * R), rtol=1e-4)


def test_a_switch_is_not_thrown_under_a_train_and_throws_after_the_last_car_clears():
    # a 3-car train crawls over the points at 2 m/s; the program asks for the branch at 0.5 s, while
    # the train is over them: the request waits (switch_blocked) until the last car's anchor is a
    # car length (the clearance) past the point, then the switch takes its throw time (1 s)
    v = 2.0
    w, tm, td = level_switch(0, train_at=39.0, speed=v, program=[(0.5, 1)], throw_time=1.0)
    s_last = w.car_s[-1]
    t, r, st = run(w, 12000, 10)
    assert st.ok
    ev = [e for e in w.network.events if e["kind"] != "track_change"]
    assert [e["kind"] for e in ev] == ["switch_blocked", "switch_set"]
    assert ev[0]["t"] == pytest.approx(0.5, abs=1.5e-3) and ev[0]["to"] == "div"
    t_clear = (40.0 + 2.0 - s_last) / v
    assert ev[1]["t"] == pytest.approx(t_clear + 1.0, abs=2e-3)
    assert np.all(r[:, :, ch.TRACK] == tm)
    throws = w.network.summary(w.records.tracks)["points"]["throws"]
    assert throws == [{"t": ev[1]["t"], "to": "div", "by": "throw"}]


@pytest.mark.parametrize("from_branch", [True, False])
def test_trailing_through_a_switch_set_against_the_train_forces_it_over(from_branch):
    # a train backing (−s) towards the points from the branch while they are set for the main line
    # (or from the main line beyond them, set for the branch) forces them over and runs on
    v = -4.0
    w, tm, td = level_switch(0 if from_branch else 1, train_at=15.0 if from_branch else 50.0, speed=v, cars=2,
                             on_branch=from_branch)
    t, r, st = run(w, 4000, 10)
    assert st.ok
    kinds = [e["kind"] for e in w.network.events]
    assert kinds[0] == "switch_run_through"
    assert kinds.count("switch_run_through") == 1
    forced = w.network.events[0]
    assert forced["switch"] == "points" and forced["car"] == 2   # the rear car leads when backing
    assert forced["branch"] == ("div" if from_branch else "main")
    assert np.all(r[-1, :, ch.TRACK] == tm)
    np.testing.assert_allclose(r[:, :, ch.SPEED], v, rtol=1e-3)


def test_a_car_that_reaches_moving_points_derails_with_a_split_event():
    # the program throws the switch (1 s) while the train is 5 m short of it at 10 m/s, outside its
    # clearance: the lead car reaches the point mid-throw and leaves the track there
    w, tm, td = level_switch(0, train_at=30.0, speed=10.0, cars=1, program=[(0.5, 1)], throw_time=1.0)
    t, r, st = run(w, 1500, 10)
    kinds = [e["kind"] for e in w.network.events]
    assert kinds == ["split", "switch_set"]
    split = w.network.events[0]
    assert split["t"] == pytest.approx(1.0, abs=1.5e-3) and split["switch"] == "points"
    assert int(r[-1, 0, ch.FLAGS]) & ch.RAN_OFF
