"""Storing trains on a track network (docs/scenarios.md, "Track networks": routes, storing a train):
a train at rest asks no switch for its branch, and ``scenarios/coaster_storage.toml`` dispatches
a train from storage into the circuit and later stores the other, the two never in one block."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.physics.analytic import run
from tests.physics.test_network import level_switch
from trackrider.physics import channels as ch
from trackrider.physics.network import CLAIM_SPEED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("speed", [-0.5 * CLAIM_SPEED, -1.0])
def test_a_train_at_rest_asks_no_switch_for_its_branch(speed):
    # a car on the branch "div", 5 m from the points, routed back through them onto "main"; the
    # points are set for "main". Moving towards them at 1 m/s it asks for "div" (trailing, so as
    # not to run through): thrown at once (its anchor is beyond the 2 m clearance), set after the
    # 1 s throw, before it arrives (5 s). Creeping at half CLAIM_SPEED it asks for nothing: a
    # train stopped in a station near a switch (or rocking on a hold) must not throw it.
    w, tm, td = level_switch(0, train_at=5.0, speed=speed, cars=1, on_branch=True, throw_time=1.0)
    w.set_route(0, [td, tm])
    t, r, st = run(w, 2000, 10)
    assert st.ok
    sets = [e for e in w.network.events if e["kind"] == "switch_set"]
    if speed > -CLAIM_SPEED:
        assert not sets and not w.network.throws[0]
    else:
        assert [e["to"] for e in sets] == ["div"] and sets[0]["t"] == pytest.approx(1.0, abs=2.5e-3)


@pytest.fixture(scope="module")
def storage_run():
    from trackrider import load_scenario, simulate

    sc = load_scenario(ROOT / "scenarios" / "coaster_storage.toml")
    return sc, simulate(sc)


def _arrays(res, col):
    ts = res.timeseries
    n = len(set(zip(ts["train"], ts["car"])))
    return np.asarray(ts[col]).reshape(-1, n)


@pytest.mark.slow
def test_coaster_storage_dispatches_from_storage_then_stores_the_first_train(storage_run):
    sc, res = storage_run
    assert res.status == "completed"
    ev = res.summary["events"]
    kinds = [e["kind"] for e in ev]
    for bad in ("block_overrun", "collision", "switch_run_through", "split", "ran_off_track", "stalled"):
        assert bad not in kinds, bad
    # blue leaves storage when its dwell ends (30 s: red is on the lift, the way is clear)
    out = [e for e in ev if e["kind"] == "dispatch" and e["section"] == "storage station"]
    assert [(e["train"], e["t"]) for e in out] == [("blue", pytest.approx(30.0, abs=0.01))]
    # red is stored there after its route (two laps), and stays: at rest on "storage" to the end
    stored = [e for e in ev if e["kind"] == "stored"]
    assert [(e["train"], e["section"]) for e in stored] == [("red", "storage station")]
    names = [t.name for t in sc.tracks]
    train = _arrays(res, "train")[0]
    track, speed, t = _arrays(res, "track"), _arrays(res, "speed"), _arrays(res, "t")[:, 0]
    red, blue = train == "red", train == "blue"
    after = t >= stored[0]["t"] + 1.0         # stopped (it was stored 2 cm short of its stop, creeping in)
    assert np.all(track[after][:, red] == names.index("storage"))
    assert np.max(np.abs(speed[after][:, red])) < 0.05
    # ... while blue runs on round the circuit, straight on through the switch track
    assert np.any(track[after][:, blue] == names.index("main"))
    assert not np.any(track[after][:, blue] == names.index("storage"))
    # the two trains are never in one block (the block column: the network's blocks, a stretch two
    # blocks share after the merge its own) at any recorded instant
    block = _arrays(res, "block")
    for i in range(len(t)):
        a = set(block[i, red][block[i, red] >= 0].tolist())
        b = set(block[i, blue][block[i, blue] >= 0].tolist())
        assert not a & b, (t[i], a, b)
    # the switches' throws are in summary.json, each one a switch_set event; after red is stored the
    # points are only ever set for blue's way, straight on
    sw = res.summary["switches"]
    sets = [(e["t"], e["switch"], e["to"]) for e in ev if e["kind"] == "switch_set"]
    listed = sorted((x["t"], name, x["to"]) for name, s in sw.items() for x in s["throws"])
    assert listed == sorted(sets) and listed
    assert {"storage"} <= {x["to"] for x in sw["storage points"]["throws"]}
    assert all(to in ("main", "main:end") for tt, _, to in sets if tt > stored[0]["t"])
    assert sw["storage points"]["position"] == "main"


def test_a_routed_train_locks_the_points_it_approaches_with_no_block_section_before_them():
    # no block section protects the points: a train routed onto "div" approaches them at 10 m/s
    # (points set for "div", 25 m ahead at 0.5 s, reached at 3.0 s); at 0.5 s a program asks for
    # "main" with a 4 s throw. Thrown then, the points would be moving when the car arrives (a
    # split: the test above without a route). Locked by the approaching train's route, the request
    # waits (switch_blocked at 0.5 s), the car takes "div" at 3.0 s, and the throw starts once its
    # anchor has cleared the points by the clearance (2 m: 3.2 s) and ends 4 s later (7.2 s)
    w, tm, td = level_switch(1, train_at=10.0, speed=10.0, cars=1, program=[(0.5, 0)], throw_time=4.0)
    w.set_route(0, [tm, td])
    t, r, st = run(w, 8000, 10)
    assert st.ok
    got = [(e["kind"], e.get("to")) for e in w.network.events]
    assert got == [("switch_blocked", "main"), ("track_change", "div"), ("switch_set", "main")]
    for e, t_closed in zip(w.network.events, (0.5, 3.0, 7.2)):
        assert e["t"] == pytest.approx(t_closed, abs=2.5e-3), e        # a step or two
    assert np.all(r[t > 3.01, 0, ch.TRACK] == td)
