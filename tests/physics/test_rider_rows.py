"""Front and rear rider rows (``rider_rows = 2``, docs/physics.md §5): the specific force at two
points ``d`` ahead of and behind the rider point along the car's forward axis, in the car's axes.

A car whose heading follows its track's tangent turns at ω = v κ about its up axis, with yaw
acceleration α = dω/dt = v² κ′ + κ a_t. A row at ±d feels the rider point's specific force plus
α × (±d F) + ω × (ω × (±d F)): the first is ±α d along the car's left axis, the second −ω² d along
its forward axis. So on a constant-radius arc (α = 0) both rows feel the rider point's lateral G,
v²/(g R), and on a clothoid entry their lateral G differ by 2 d (v² κ′ + κ a_t)/g.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import fresnel

from tests.physics import analytic
from trackrider.curves.compact import build_table
from trackrider.errors import InputError
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch

G = 9.81
ROWS = (ch.G_VERTICAL_FRONT, ch.G_LATERAL_FRONT, ch.G_LONGITUDINAL_FRONT,
        ch.G_VERTICAL_REAR, ch.G_LATERAL_REAR, ch.G_LONGITUDINAL_REAR)


def level_clothoid(lead=20.0, length=60.0, kappa_rate=1.0 / 1200.0, n_per_m=20):
    """Level track along +x: a straight of ``lead`` m, then a clothoid turning left whose curvature
    grows at ``kappa_rate`` 1/m² (κ(s) = κ′ (s − lead)); positions from the Fresnel integrals; up frame."""
    L = lead + length
    s = np.linspace(0.0, L, int(L * n_per_m) + 1)
    u = np.clip(s - lead, 0.0, None)
    kappa = kappa_rate * u
    th = 0.5 * kappa_rate * u * u
    k = np.sqrt(np.pi / kappa_rate)
    S, C = fresnel(u / k)
    P = np.column_stack([np.minimum(s, lead) + k * C, k * S, np.zeros_like(s)])
    T = np.column_stack([np.cos(th), np.sin(th), np.zeros_like(s)])
    N = np.column_stack([-np.sin(th), np.cos(th), np.zeros_like(s)])
    B = np.tile([0.0, 0.0, 1.0], (len(s), 1))
    Om = np.column_stack([np.zeros_like(s), np.zeros_like(s), kappa])
    dT = kappa[:, None] * N
    return build_table(P, T, N, B, Om, kappa, dT, np.zeros(len(s)), L, False)


def _car(**kw):
    args = dict(mass=600.0, length=3.0, width=1.2, height=1.0, cg_height=0.5, rider_height=1.1, rider_rows=2)
    args.update(kw)
    return CarSpec(**args)


def test_rows_on_a_level_circle_feel_the_same_normal_g():
    """Level circle R = 20 m at 12 m/s, no cant: the front row, the rear row and the rider point feel
    v²/(g R) = 0.734 g to the left (0.005 g; measured 1e-4) and 1 g down; the rows' longitudinal G is
    the rigid car's −ω² d and +ω² d (0.005 g)."""
    R, v, d = 20.0, 12.0, 3.0 / 2 - 0.45
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("a", k, cars=2, car=_car(), start_s=10.0, start_speed=v)
    t, s, st = analytic.run(w, 2500, 10)
    assert st.ok
    s = s[t > 0.5]                                          # after the couplers settled (from ± 0.2 %)
    speed = s[:, :2, ch.SPEED]
    normal = speed ** 2 / (G * R)
    for c in (ch.G_LATERAL, ch.G_LATERAL_FRONT, ch.G_LATERAL_REAR):
        np.testing.assert_allclose(s[:, :2, c], normal, atol=5e-3)
    for c in (ch.G_VERTICAL, ch.G_VERTICAL_FRONT, ch.G_VERTICAL_REAR):
        np.testing.assert_allclose(s[:, :2, c], 1.0, atol=5e-3)
    w2 = (speed / R) ** 2
    np.testing.assert_allclose(s[:, :2, ch.G_LONGITUDINAL_FRONT] - s[:, :2, ch.G_LONGITUDINAL], -w2 * d / G,
                               atol=5e-3)
    np.testing.assert_allclose(s[:, :2, ch.G_LONGITUDINAL_REAR] - s[:, :2, ch.G_LONGITUDINAL], w2 * d / G,
                               atol=5e-3)


@pytest.mark.parametrize("force", [0.0, 3000.0])
def test_rows_on_a_clothoid_entry_differ_by_the_yaw_acceleration(force):
    """Level clothoid entry (κ′ = 1/1200 m⁻²) at 15 m/s, coasting (a_t = 0) and launched by a
    constant 3 kN on a 600 kg car (a_t ≈ 5 m/s², the anchor's measured ``accel``): front − rear
    lateral G = 2 d (v² κ′ + κ a_t)/g, d = 1.05 m: 0.04 g coasting, 0.07 … 0.21 g launched.

    The formula is first order in d: the rows are points of the rigid car, d along its forward axis,
    whose heading follows the track's tangent at its anchor, so α = d(v κ)/dt exactly, and the rows'
    lateral G differ by 2 d α / g with no d² term (ω² d is along the forward axis). What is left is the
    simulation's: the car's yaw follows the tangent through the track joint's rows, and the sample's α
    is the step's Δω/h against an ``accel`` that is the anchor's Δv/h — O(h) apart while a_t and κ
    change. Tolerance 2e-4 g (measured 5e-8 g coasting, 6e-5 g launched)."""
    d, v0, kr, lead = 1.05, 15.0, 1.0 / 1200.0, 20.0
    w = World(dt=1e-3)
    k = w.add_track(level_clothoid(lead=lead, length=60.0, kappa_rate=kr))
    w.add_train("a", k, cars=1, car=_car(), start_s=5.0, start_speed=v0)
    if force:
        w.add_section("launch", k, 0.0, 80.0, speed=100.0, max_force=force)
    t, s, st = analytic.run(w, 3500, 5)
    assert st.ok
    ss, v, a = s[:, 0, ch.S], s[:, 0, ch.SPEED], s[:, 0, ch.ACCEL]
    np.testing.assert_allclose(a[5:], force / 600.0, atol=0.1)   # (5 m/s², 4.95 in the curve; coasting 0.005)
    inside = (ss > lead + 3.0) & (ss < lead + 55.0)
    assert inside.sum() > 100
    kappa = kr * (ss - lead)
    alpha = v * v * kr + kappa * a
    diff = s[:, 0, ch.G_LATERAL_FRONT] - s[:, 0, ch.G_LATERAL_REAR]
    np.testing.assert_allclose(diff[inside], 2 * d * alpha[inside] / G, atol=2e-4)
    # each row: the rider point's lateral G (v² κ / g) ± d α / g
    np.testing.assert_allclose(s[inside, 0, ch.G_LATERAL], (v * v * kappa / G)[inside], atol=2e-4)
    np.testing.assert_allclose(s[inside, 0, ch.G_LATERAL_FRONT] - s[inside, 0, ch.G_LATERAL],
                               (d * alpha / G)[inside], atol=2e-4)
    # on the straight before it the rows feel what the rider point feels
    before = ss < lead - 3.0
    np.testing.assert_allclose(s[before, 0, ch.G_LATERAL_FRONT], s[before, 0, ch.G_LATERAL], atol=1e-6)


def test_rows_of_a_car_on_bogies_are_in_its_body():
    """Level circle R = 60 m at 10 m/s, a 12 m car body on bogies 8 m apart (cg_forward 0.5 m): the
    body is the chord between its pivots, turning at ω = v/R about the circle's centre, so every point
    of it feels ω² √(R² − L²/4) / g to its left (0.005 g), the rows as the rider point; the rows sit
    0.45 m inside the body's ends: longitudinal G ∓ ω² (5.55 ∓ 0.5)/g from the rider point's (0.005 g)."""
    R, v, L, e = 60.0, 10.0, 8.0, 0.5
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=8001))
    car = _car(mass=20000.0, length=12.0, width=2.8, height=2.5, cg_height=1.2, rider_height=1.8,
               bogies="two", bogie_spacing=L, cg_forward=e)
    w.add_train("a", k, cars=1, car=car, start_s=30.0, start_speed=v)
    t, s, st = analytic.run(w, 3000, 10)
    assert st.ok
    last = s[-50:]
    om2 = (last[:, 0, ch.SPEED] / R) ** 2
    for frame in (0, 1):      # both frames report their body's rows
        for c in (ch.G_LATERAL, ch.G_LATERAL_FRONT, ch.G_LATERAL_REAR):
            np.testing.assert_allclose(last[:, frame, c], om2 * np.sqrt(R * R - L * L / 4) / G, atol=5e-3)
        for c, x in ((ch.G_LONGITUDINAL_FRONT, 6.0 - 0.45 - e), (ch.G_LONGITUDINAL_REAR, -(6.0 - 0.45) - e)):
            np.testing.assert_allclose(last[:, frame, c] - last[:, frame, ch.G_LONGITUDINAL], -om2 * x / G,
                                       atol=5e-3)
    assert np.all(np.isnan(last[:, 2, list(ROWS)]))       # the body's own row: a free body's, no rows


def test_one_row_records_no_rows():
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=20.0))
    w.add_train("a", k, cars=2, car=_car(rider_rows=1), start_speed=5.0)
    w.add_train("b", k, cars=1, car=_car(), start_s=60.0, start_speed=5.0)
    t, s, st = analytic.run(w, 20, 10)
    assert st.ok
    assert np.all(np.isnan(s[:, :2][:, :, list(ROWS)]))
    assert np.all(np.isfinite(s[:, 2][:, list(ROWS)]))
    assert w.trains[0]["rider_rows"] == 1 and w.trains[1]["rider_rows"] == 2


@pytest.mark.parametrize("kw,words", [(dict(rider_rows=3), "rider_rows"), (dict(rider_rows=0), "rider_rows"),
                                      (dict(length=0.9), "length > 0.9 m")])
def test_bad_rider_rows_are_refused(kw, words):
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=20.0))
    with pytest.raises(InputError, match=words):
        w.add_train("a", k, cars=1, car=_car(**kw))
