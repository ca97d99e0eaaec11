"""``World.run`` called step by step: the records it keeps between calls (trackrider/physics/world.py)."""
from __future__ import annotations

import numpy as np

from tests.physics import analytic
from tests.physics.analytic import run
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics.operation import idle_ops
from trackrider.physics.rail import idle_rail


def lift_world():
    """Three coupled cars pulled up a 20° lift, with rolling friction: the cars' bounded rows read the
    idle operation record (``car_rows``)."""
    w = World(dt=1e-3)
    w.set_resistance(rolling=0.002, drag_area=0.8)
    w.add_track(analytic.straight(100.0, pitch_deg=20.0))
    w.add_train("a", 0, 3, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3), coupling=CouplingSpec("distance", 0.5),
                start_s=20.0, start_speed=1.0)
    w.add_section("lift", 0, 10.0, 90.0, speed=4.0, max_force=8e4)
    return w


def test_stepping_a_call_at_a_time_gives_the_bytes_of_one_run():
    one = lift_world()
    t1, r1, s1 = run(one, 300, 1)
    many = lift_world()
    ts, rs = [], []
    for _ in range(300):
        t, r, s = run(many, 1, 1)
        ts.append(t)
        rs.append(r)
    assert s1.status == s.status == "ok"
    assert np.array_equal(np.concatenate(ts), t1)
    assert np.concatenate(rs).tobytes() == r1.tobytes()
    assert r1[-1, 0, 0] != r1[0, 0, 0]   # (the cars moved)


def test_a_setting_changed_between_calls_is_used_by_the_next():
    a, b = lift_world(), lift_world()
    run(a, 50, 10)
    run(b, 50, 10)
    b.erp = 0.5 * a.erp   # the kept step record was made with the old one
    ta, ra, _ = run(a, 50, 10)
    tb, rb, _ = run(b, 50, 10)
    assert np.array_equal(ta, tb)
    assert ra.tobytes() != rb.tobytes()
    fresh = lift_world()
    run(fresh, 50, 10)
    fresh.erp = b.erp
    _, rf, _ = run(fresh, 50, 10)
    assert rf.tobytes() == rb.tobytes()


def test_the_idle_records_kept_between_runs_are_only_read():
    w = lift_world()
    run(w, 400, 50)
    rail, ops = w._idle_records()
    assert rail is w._idle_records()[0] and ops is w._idle_records()[1]
    for kept, made in ((rail, idle_rail()), (ops, idle_ops(1, 3))):
        for x, y in zip(kept, made):
            if isinstance(x, np.ndarray):
                assert x.shape == y.shape and np.array_equal(x, y)
            else:
                assert x == y
