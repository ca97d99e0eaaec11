"""Block sections on a track network (physics/blocks.py ``Paths``; docs/physics.md, "Block sections"):
blocks that reach across connections, and a train held at a block section before a switch that
is not set for its route — against the hold's closed-form stop."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics.analytic import run
from tests.physics.test_network import car, seg_track
from trackrider.curves.segments import arc, start, straight
from trackrider.physics import World
from trackrider.physics import channels as ch

V, A_HOLD = 10.0, 1.5          # approach speed (the sections' speed), the hold's deceleration (blocks.HOLD_DECEL)


def stop_of(r, t, k=0):
    """(time, s) at which car ``k`` first comes to rest (speed < 1 mm/s)."""
    i = int(np.argmax(np.abs(r[:, k, ch.SPEED]) < 1e-3))
    assert i > 0
    return t[i], r[i, k, ch.S]


def closed_form_stop(s0, s_from, hold_s, t0=0.0):
    """A car at ``s0`` at speed V held by a section from ``s_from``: it runs on at V until the
    profile √(2 a d) (d to ``hold_s``) falls below V, then slows at a: the time it stops."""
    d_brake = V * V / (2.0 * A_HOLD)
    return t0 + (hold_s - d_brake - s0) / V + V / A_HOLD


def events(w, kind):
    return [e for e in w.operation.events + w.network.events if e["kind"] == kind]


def test_a_block_reaches_across_connections_and_holds_a_train_until_the_one_ahead_leaves_it():
    # three straight tracks joined end to start: a (200 m) → c (200 m) → e (200 m), a block brake
    # on each (a: 50–100, c: 100–150, e: 0–40). Train B runs ahead on c; train A, behind on a,
    # reaches its block brake while B is still on the stretch to c's block brake and in c's block
    # (across the connection): A is held and stops at hold_s = 99 m on the hold's profile, and is
    # let go when B's last car passes onto e (into the next block). Each track alone would
    # have let A go (the blocks of one track end at its end).
    w = World(dt=1e-3)
    ta = w.add_track(seg_track(start(), straight(200.0)), name="a")
    tc = w.add_track(seg_track(start(position=(200.0, 0.0, 0.0)), straight(200.0)), name="c")
    te = w.add_track(seg_track(start(position=(400.0, 0.0, 0.0)), straight(200.0)), name="e")
    w.add_connection((ta, "end"), (tc, "start"))
    w.add_connection((tc, "end"), (te, "start"))
    for tk, lo, hi, name in ((ta, 50.0, 100.0, "brake a"), (tc, 100.0, 150.0, "brake c"), (te, 0.0, 40.0, "brake e")):
        w.add_section("brake", tk, lo, hi, speed=V, max_force=1e5, block=True, name=name)
    w.add_train("A", ta, 1, car(), start_s=0.0, start_speed=V)
    w.add_train("B", tc, 1, car(), start_s=20.0, start_speed=V)
    t, r, st = run(w, 30000, 10)
    assert st.ok
    holds = events(w, "block_hold")
    assert [(e["train"], e["section"]) for e in holds] == [("A", "brake a")]
    assert holds[0]["t"] == pytest.approx(5.0, abs=2e-3)            # A's anchor reaches 50 m at 10 m/s
    # A stops at hold_s (1 mm) at the closed-form time (20 ms: the profile's last millimetres)
    t_stop, s_stop = stop_of(r, t, 0)
    assert s_stop == pytest.approx(99.0, abs=1e-3)
    assert t_stop == pytest.approx(closed_form_stop(0.0, 50.0, 99.0), abs=0.02)
    # while braking on the profile its deceleration is the hold's (1e-3 relative)
    mid = (t > 8.0) & (t < 12.0)
    acc = np.gradient(r[:, 0, ch.SPEED], t)[mid]
    np.testing.assert_allclose(acc, -A_HOLD, rtol=1e-3)
    # released when B (at 10 m/s) passes c's end: t = (200 − 20)/10 = 18 s (the change of track)
    rel = events(w, "block_release")
    assert rel[0]["train"] == "A" and rel[0]["t"] == pytest.approx(18.0, abs=2e-3)
    # and then it goes: the block brake drives it at its speed onto c
    assert r[-1, 0, ch.TRACK] == tc and r[-1, 0, ch.SPEED] == pytest.approx(V, rel=1e-3)


def switch_world(throw_time):
    """A level straight ``a`` (300 m) with points at 200 m to a branch ``b`` (an arc of 200 m radius,
    then straight); a block brake on a (100–160 m) before the points and one on b (60–100 m); a
    one-car train at 20 m, 10 m/s, routed a → b while the points are set for a."""
    w = World(dt=1e-3)
    ta = w.add_track(seg_track(start(), straight(300.0)), name="a")
    tb = w.add_track(seg_track(start(position=(200.0, 0.0, 0.0)), arc(200.0, 10.0), straight(100.0)), name="b")
    w.add_switch("points", ta, 200.0, [ta, tb], position=0, throw_time=throw_time, branch_names=["a", "b"])
    w.add_section("brake", ta, 100.0, 160.0, speed=V, max_force=1e5, block=True, name="home")
    w.add_section("brake", tb, 60.0, 100.0, speed=V, max_force=1e5, block=True, name="branch")
    w.set_route(w.add_train("T", ta, 1, car(), start_s=20.0, start_speed=V), [ta, tb])
    return w, ta, tb


def test_a_train_is_held_before_points_not_set_for_its_route_and_goes_when_they_are():
    # the points take 20 s to throw: the train, asking for them as it reaches the block brake
    # before them (t = 8 s), is held there — block_hold names the switch — and stops at
    # hold_s = 159 m on the hold's profile (closed form); when the points are set (t = 28 s) it is
    # released, driven on at the brake's speed and takes the branch
    w, ta, tb = switch_world(20.0)
    t, r, st = run(w, 40000, 10)
    assert st.ok
    hold = events(w, "block_hold")
    assert len(hold) == 1 and hold[0]["section"] == "home" and hold[0]["switch"] == "points"
    assert hold[0]["t"] == pytest.approx(8.0, abs=2e-3)
    t_stop, s_stop = stop_of(r, t)
    assert s_stop == pytest.approx(159.0, abs=1e-3)
    assert t_stop == pytest.approx(closed_form_stop(20.0, 100.0, 159.0), abs=0.02)
    # stopping distance from the speed: v²/(2a) from where the profile takes over (1 mm)
    i0 = int(np.argmax(r[:, 0, ch.SPEED] < V - 1e-3))
    assert 159.0 - r[i0, 0, ch.S] == pytest.approx(V * V / (2 * A_HOLD), abs=1e-2 + V * 0.01)
    sset = events(w, "switch_set")
    assert len(sset) == 1 and sset[0]["to"] == "b" and sset[0]["t"] == pytest.approx(28.0, abs=2e-3)
    rel = events(w, "block_release")
    assert rel[0]["t"] == pytest.approx(sset[0]["t"], abs=2e-3)
    assert rel[0]["held_s"] == pytest.approx(20.0, abs=4e-3)
    change = events(w, "track_change")
    assert [(e["from"], e["to"]) for e in change] == [("a", "b")]
    assert r[-1, 0, ch.TRACK] == tb
    assert not events(w, "switch_run_through") and not events(w, "split")


def test_points_set_in_time_do_not_stop_the_train():
    # a 1 s throw: the points are set long before the profile would brake (t = 9 s), so the
    # train is held only while they move, runs through the block brake at 10 m/s and takes the branch
    w, ta, tb = switch_world(1.0)
    t, r, st = run(w, 30000, 10)
    assert st.ok
    assert events(w, "switch_set")[0]["t"] == pytest.approx(9.0, abs=2e-3)
    assert np.min(r[:, 0, ch.SPEED]) == pytest.approx(V, rel=1e-3)
    assert r[-1, 0, ch.TRACK] == tb


def test_a_lift_pulls_towards_plus_s_of_its_track_a_car_facing_minus_s():
    # a start–start connection: a car backing along A (towards A's start, +x) crosses onto B's
    # start facing −s of B (its nose towards −x) and runs on towards +s of B, backwards. B's lift
    # (5–35 m, 3 m/s) pulls along +s of B, not along the car's nose: the car is taken from 2 to
    # 3 m/s towards +x (1e-3), its own speed −3 m/s; its ratchet holds against −s of B, so it
    # does not stop the car (along the car's nose, as before, the lift would brake and reverse it
    # and the ratchet would stop it dead)
    w = World(dt=1e-3)
    ta = w.add_track(seg_track(start(position=(20.0, 0.0, 0.0), heading=180.0), straight(20.0)), name="A")
    tb = w.add_track(seg_track(start(position=(20.0, 0.0, 0.0)), straight(40.0)), name="B")
    w.add_connection((ta, "start"), (tb, "start"))
    w.add_section("lift", tb, 5.0, 35.0, speed=3.0, max_force=2e4)
    w.add_train("t", ta, 1, car(), start_s=4.0, start_speed=-2.0)
    t, r, st = run(w, 8000, 10)
    assert st.ok
    assert [(e["from"], e["to"]) for e in w.network.events if e["kind"] == "track_change"] == [("A", "B")]
    assert t[-1] > 7.9 and r[-1, 0, ch.TRACK] == tb and 5.0 < r[-1, 0, ch.S] < 35.0
    assert r[-1, 0, ch.VX] == pytest.approx(3.0, rel=1e-3)
    assert r[-1, 0, ch.SPEED] == pytest.approx(-3.0, rel=1e-3)


def test_the_passing_loop_trains_never_share_a_block_and_both_reach_their_ends():
    # scenarios/passing_loop.toml: block sections on the line both ways (west home, main signal,
    # the loop station, east home). Over the whole run no part of the network (the ``block``
    # column) holds cars of both trains at one sample; the eastbound train (towards +s) is held
    # at west home while the west points are thrown to the loop, the westbound one (towards −s)
    # at the main signal while they are thrown back — after the eastbound train has cleared them
    # — and it passes the eastbound train dwelling in the loop station; both end at rest, the
    # eastbound train on "east", the westbound one on "west"
    from pathlib import Path

    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    sc = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "passing_loop.toml")
    res = simulate(sc)
    assert res.status == "completed"
    ts = res.timeseries
    t, who, block, track = ts["t"], np.asarray(ts["train"]), ts["block"], ts["track"]
    owners: dict = {}
    for key, name in zip(zip(np.round(t, 6).tolist(), block.tolist()), who.tolist()):
        if key[1] >= 0:
            owners.setdefault(key, set()).add(name)
    assert owners and max(len(v) for v in owners.values()) == 1
    names = [tk.name for tk in sc.tracks]
    # both trains are seen in several blocks (the check is not empty)
    for name in ("eastbound", "westbound"):
        assert len({b for b in block[who == name].tolist() if b >= 0}) >= 3
    ev = res.summary["events"]
    holds = [(e["train"], e["section"], e.get("switch")) for e in ev if e["kind"] == "block_hold"]
    assert holds == [("eastbound", "west home", "west points"), ("westbound", "main signal", "west points")]
    dispatch = [e["t"] for e in ev if e["kind"] == "dispatch" and e["section"] == "loop station"]
    on_main = t[(who == "westbound") & (track == names.index("main"))]
    assert len(dispatch) == 1 and on_main.max() < dispatch[0]      # it passed while the other dwelt
    for name, end in (("eastbound", "east"), ("westbound", "west")):
        last = (who == name) & (t == t[-1])
        assert np.all(track[last] == names.index(end)) and np.all(np.abs(ts["speed"][last]) < 0.05)
    kinds = {e["kind"] for e in ev}
    assert not kinds & {"collision", "block_overrun", "switch_run_through", "split", "ran_off_track"}
