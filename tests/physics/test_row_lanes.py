"""The start of a step for plain cars in the vector lanes (physics/row_lanes.py): the scalar stages'
numbers up to rounding, the same bytes whether or not the lanes hold the block from its integration
(docs/physics.md, "Cars in lanes")."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.jit import njit
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import car_lanes, row_lanes
from trackrider.physics import kernels as kn

from .analytic import hilly_circle


@njit(error_model="numpy", _nrt=False)
def scalar_rows(cfg, bodies, cars, res, trk, wk):
    """``rows_chunk`` as it is without the lanes: stage by stage over every body."""
    nb = bodies.pos.shape[0]
    kn.stage_transport(0, nb, bodies, cars, trk.carrier)
    kn.stage_forces(0, nb, cfg, bodies, cars, res, trk.carrier, trk.kbody)
    kn.stage_track_rows(0, nb, cfg, bodies, cars, trk, wk)


@njit(error_model="numpy", _nrt=False)
def rows_by_blocks(cfg, bodies, cars, res, trk, wk):
    kn.rows_chunk(0, bodies.pos.shape[0], cfg, bodies, cars, res, trk, wk)


@njit(error_model="numpy", _nrt=False)
def block_is_plain(j0, n, bodies, cars, carrier):
    return row_lanes.rows_plain(j0, n, bodies, cars, carrier)


def world(n_cars, speed=25.0, rolling=0.0, drag=0.0):
    w = World(dt=1e-3)
    if rolling or drag:
        w.set_resistance(rolling=rolling, drag_area=drag)
    w.add_track(hilly_circle(R=60.0, amp=3.0, waves=5, n=4001))
    w.add_train("t", 0, n_cars, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=n_cars * 2.5 + 5.0, start_speed=speed)
    w.run(30, 30)
    return w


def outputs(w):
    r, trk = w.records, w._temps.trk
    return [r.bodies.vel, r.bodies.omg, trk.lam, trk.zr, trk.rank1, r.cars.transport, r.cars.f_explicit]


def both_ways(w):
    """The rows stages of ``w``'s present state stage by stage and by ``rows_chunk``: the arrays each
    leaves (the world is left as it was)."""
    tmp, r = w._temps, w.records
    saved = [a.copy() for a in outputs(w)]
    scalar_rows(w._step_records(1)[False], r.bodies, r.cars, r.res, tmp.trk, tmp.wk)
    one = [a.copy() for a in outputs(w)]
    for a, s in zip(outputs(w), saved):
        a[...] = s
    rows_by_blocks(w._step_records(1)[False], r.bodies, r.cars, r.res, tmp.trk, tmp.wk)
    two = [a.copy() for a in outputs(w)]
    for a, s in zip(outputs(w), saved):
        a[...] = s
    return one, two


def assert_close(one, two, n_cars, mass=600.0):
    """Each output within a few units of the last digit of the terms it is made of: velocities, P and
    n of their own size, impulses (a difference of momenta) of m|v|."""
    names = ["vel", "omg", "lam", "zr", "rank1", "transport", "f_explicit"]
    momentum = mass * float(np.max(np.abs(one[0][:n_cars])))
    for name, a, b in zip(names, one, two):
        a, b = a[:n_cars], b[:n_cars]
        scale = momentum if name in ("lam", "transport") else max(float(np.max(np.abs(a))), 1e-300)
        assert np.max(np.abs(a - b)) <= 1e-14 * scale, name


@pytest.mark.parametrize("n_cars", [7, 8, 13, 16, 24])
def test_lanes_give_the_scalar_stages_numbers(n_cars):
    w = world(n_cars)
    r, tmp = w.records, w._temps
    assert block_is_plain(0, min(n_cars, car_lanes.NB), r.bodies, r.cars, tmp.trk.carrier)
    one, two = both_ways(w)
    assert_close(one, two, n_cars)


def test_lanes_take_resistance_a_car_without_a_frame_before_and_a_body_turned_far():
    w = world(16, drag=0.8)
    r = w.records
    r.cars.has_prev[3] = 0     # not transported
    # a body turned 1e-3 rad about its frame's T (the rotation error's far branch)
    q = r.bodies.quat[5].copy()
    half = 0.5e-3
    dq = np.array([np.cos(half), *(np.sin(half) * r.cars.frame[5, 3:6])])
    w0, v0 = dq[0], dq[1:]
    w1, v1 = q[0], q[1:]
    qw, x, y, z = r.bodies.quat[5] = [w0 * w1 - v0 @ v1, *(w0 * v1 + w1 * v0 + np.cross(v0, v1))]
    r.bodies.rot[5] = [[1 - 2 * (y * y + z * z), 2 * (x * y - qw * z), 2 * (x * z + qw * y)],
                       [2 * (x * y + qw * z), 1 - 2 * (x * x + z * z), 2 * (y * z - qw * x)],
                       [2 * (x * z - qw * y), 2 * (y * z + qw * x), 1 - 2 * (x * x + y * y)]]
    one, two = both_ways(w)
    assert_close(one, two, 16)
    assert np.all(one[6][:16] != 0.0)           # the drag acts on every car
    assert np.all(one[5][3] == 0.0) and np.all(two[5][3] == 0.0)   # no transport without a frame before
    assert abs(one[2][5, 2]) > 100 * abs(one[2][4, 2])   # car 5's roll row turns it back


def test_a_run_gives_the_same_bytes_whether_or_not_the_lanes_keep_the_block():
    """The rows of a step right after its integration (``kernels.step_chunk``, the lanes holding the block)
    and at its start (after a recorded step): a run recorded every step and one recorded every 50th
    end in the same bytes."""
    ends = []
    for every in (1, 50):
        w = world(13)
        w.run(200, every)
        ends.append([a.copy() for a in (w.records.bodies.pos, w.records.bodies.vel, w.records.bodies.omg,
                                        w.records.cars.s)])
    for a, b in zip(*ends):
        assert a.tobytes() == b.tobytes()


def test_chunks_begin_where_blocks_of_cars_do():
    for nb in (1, 7, 8, 500, 1001, 1003):
        for nc in (1, 2, 3, 16):
            edges = [car_lanes.chunk_edge.py_func(c, nb, nc) for c in range(nc + 1)]
            assert edges[0] == 0 and edges[-1] == nb
            assert all(e % car_lanes.NB == 0 for e in edges[:-1])
            assert edges == sorted(edges)
