"""Cars integrated in the vector lanes (physics/car_lanes.py) give the scalar stages' numbers to the bit
(docs/physics.md, "Cars in lanes")."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.jit import njit
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import car_lanes
from trackrider.physics import kernels as kn

from .analytic import hilly_circle, straight


@njit(error_model="numpy", _nrt=False)
def scalar_integrate(h, tracks, bodies, cars, carrier, lam, E, fr2):
    """``kernels.stage_integrate`` as it is without the lanes: every body, then every car."""
    for b in range(bodies.pos.shape[0]):
        kn.integrate_body(b, h, tracks, bodies, cars, carrier)
    for b in range(cars.n):
        kn.integrate_car(b, tracks, bodies, cars, carrier, lam, E, fr2)


@njit(error_model="numpy", _nrt=False)
def lanes_integrate(h, tracks, bodies, cars, carrier, lam, E, wk):
    kn.integrate_chunk(0, bodies.pos.shape[0], h, tracks, bodies, cars, carrier, lam, E, wk)


@njit(error_model="numpy", _nrt=False)
def block_is_plain(j0, n, cars, carrier):
    return car_lanes.plain_block(j0, n, cars, carrier)


def world(n_cars, track, speed=12.0, start=None):
    w = World(dt=1e-3)
    w.add_track(track)
    w.add_train("t", 0, n_cars, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=n_cars * 2.5 + 5.0 if start is None else start,
                start_speed=speed)
    w.run(30, 30)
    return w


def state(w):
    b, c = w.records.bodies, w.records.cars
    return [b.pos, b.quat, b.rot, b.vel, b.omg, c.s, c.frame, c.prev_frame, c.has_prev, c.lam_track, c.on_track,
            c.ran_off, c.held]


def both_ways(w, h=None, lam=None):
    """The integration of ``w``'s present state by the scalar loops and by ``integrate_chunk``: the
    arrays each leaves (the world is left as it was)."""
    h = w.dt if h is None else h
    tmp = w._temps
    lam = tmp.trk.lam if lam is None else lam
    saved = [a.copy() for a in state(w)]
    r = w.records
    scalar_integrate(h, r.tracks, r.bodies, r.cars, tmp.trk.carrier, lam, tmp.trk.E, tmp.wk.fr2)
    one = [a.copy() for a in state(w)]
    for a, s in zip(state(w), saved):
        a[...] = s
    lanes_integrate(h, r.tracks, r.bodies, r.cars, tmp.trk.carrier, lam, tmp.trk.E, tmp.wk)
    two = [a.copy() for a in state(w)]
    for a, s in zip(state(w), saved):
        a[...] = s
    return one, two


def assert_same_bits(one, two):
    for a, b in zip(one, two):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n_cars", [1, 7, 8, 13, 15, 24])
def test_lanes_give_the_scalar_stages_bits_on_a_closed_track(n_cars):
    w = world(n_cars, hilly_circle(R=60.0, amp=3.0, waves=5, n=4001), speed=25.0)
    lam = np.random.default_rng(1).normal(size=w._temps.trk.lam.shape)
    for _ in range(5):
        one, two = both_ways(w, lam=lam)
        assert_same_bits(one, two)
        assert not np.array_equal(one[6], w.records.cars.frame)   # the frames moved
        w.run(37, 37)


def test_lanes_give_the_scalar_stages_bits_across_a_closed_tracks_seam():
    """Cars whose new s passes the closed track's length (the wrap of s) and the rows about s = 0."""
    track = hilly_circle(R=40.0, amp=1.0, waves=3, n=2001)
    L = 2.0 * np.pi * 40.0
    w = world(11, track, speed=30.0, start=L - 1.2)
    s0 = w.records.cars.s[0]
    crossed = False
    for _ in range(150):
        one, two = both_ways(w)
        assert_same_bits(one, two)
        crossed = crossed or one[5][0] < s0
        w.run(1, 1)
    assert crossed


def test_a_block_with_a_car_off_an_open_tracks_end_goes_the_scalar_way():
    """A train running off an open track's end: its last block goes through the scalar stages (which
    set RAN_OFF), with the bodies the lanes moved — the same bits as the scalar stages throughout."""
    w = world(10, straight(60.0), speed=40.0, start=57.0)
    ran = False
    for _ in range(200):
        one, two = both_ways(w)
        assert_same_bits(one, two)
        ran = ran or bool(one[11].any())
        w.run(1, 1)
    assert ran


def test_a_large_newton_step_goes_the_scalar_way():
    """A step larger than ``SHIFT_MAX`` (a car moved 10 m in one step): the frame evaluated again at
    the new s, as the scalar stage does."""
    w = world(9, hilly_circle(R=60.0, amp=3.0, waves=5, n=4001))
    one, two = both_ways(w, h=0.2)
    assert_same_bits(one, two)


def test_blocks_that_are_not_plain_go_the_scalar_way():
    """A car facing −s or no longer held makes its block scalar; the others stay in the lanes."""
    w = world(20, hilly_circle(R=60.0, amp=3.0, waves=5, n=4001))
    c = w.records.cars
    c.held[3] = 0
    one, two = both_ways(w)
    assert_same_bits(one, two)
    assert not block_is_plain(0, 8, c, w._temps.trk.carrier)
    assert block_is_plain(8, 8, c, w._temps.trk.carrier)
    c.held[3] = 1
    c.dir[12] = -1.0
    one, two = both_ways(w)
    assert_same_bits(one, two)
    assert block_is_plain(0, 8, c, w._temps.trk.carrier)
    assert not block_is_plain(8, 8, c, w._temps.trk.carrier)
