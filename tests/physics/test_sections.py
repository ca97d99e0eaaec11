"""Sections (row 6 motors) and resistance against closed forms (issue 4, docs/physics.md §6)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import run
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch
from trackrider.physics.sections import SECTIONS

G = 9.81
M = 600.0


def car(**kw):
    spec = dict(mass=M, length=2.0, width=1.2, height=1.0, cg_height=0.0, rider_height=0.0)
    spec.update(kw)
    return CarSpec(**spec)


@pytest.mark.parametrize("cg", [0.0, 0.5])
def test_chain_lift_on_a_20_degree_straight(cg):
    a = np.radians(20.0)
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0, pitch_deg=20.0))
    w.add_train("a", 0, 1, car(cg_height=cg), start_s=5.0)
    w.add_section("lift", 0, 0.0, 100.0, speed=4.0, max_force=8e4)
    t, r, st = run(w, 4000, 10)
    late = t > 2.0
    assert np.all(np.abs(r[late, 0, ch.SPEED] - 4.0) < 0.01)
    assert np.all(np.abs(r[late, 0, ch.MOTOR_FORCE] / (M * G * np.sin(a)) - 1) < 0.02)
    assert np.all(r[late, 0, ch.SECTION] == SECTIONS["lift"].code)
    assert np.all(r[late, 0, ch.FLAGS].astype(int) & ch.MOTOR_ACTIVE)


def test_a_car_on_a_too_weak_lift_never_rolls_back():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0, pitch_deg=30.0))
    w.add_train("a", 0, 1, car(), start_s=10.0, start_speed=1.0)
    w.add_section("lift", 0, 0.0, 100.0, speed=4.0, max_force=0.2 * M * G)  # cannot hold m g sin 30°
    t, r, st = run(w, 3000, 10)
    assert np.all(r[:, 0, ch.SPEED] >= -1e-9)
    assert r[-1, 0, ch.SPEED] == pytest.approx(0.0, abs=1e-6)
    assert r[-1, 0, ch.MOTOR_FORCE] == pytest.approx(M * G * 0.5, rel=1e-3)  # motor + ratchet hold it


def test_launch_reaches_its_speed_within_v2_over_2a():
    F, v = 12000.0, 20.0
    a = F / M
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0))
    w.add_train("a", 0, 1, car(), start_s=10.0)
    w.add_section("launch", 0, 10.0, 150.0, speed=v, max_force=F)
    t, r, st = run(w, 6000, 5)
    reached = np.nonzero(r[:, 0, ch.SPEED] >= v - 1e-6)[0]
    assert reached.size
    d = r[reached[0], 0, ch.S] - 10.0
    assert d == pytest.approx(v**2 / (2 * a), rel=0.01)
    assert d <= v**2 / (2 * a) * 1.001
    # it then holds the speed and the thrust stays within its bound
    assert np.all(r[:, 0, ch.MOTOR_FORCE] <= F * (1 + 1e-9))
    assert r[-1, 0, ch.SPEED] == pytest.approx(v, abs=1e-6)


def test_stop_brake_stops_a_car_and_holds_it_on_a_grade():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0, pitch_deg=-5.0))  # downhill
    w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=8.0)
    w.add_section("brake", 0, 20.0, 60.0, speed=0.0, max_force=6000.0)
    t, r, st = run(w, 8000, 10)
    assert abs(r[-1, 0, ch.SPEED]) < 1e-6
    held = t > 6.0
    assert np.all(np.abs(r[held, 0, ch.SPEED]) < 1e-6)
    assert np.ptp(r[held, 0, ch.S]) < 1e-4
    assert r[-1, 0, ch.MOTOR_FORCE] == pytest.approx(-M * G * np.sin(np.radians(5.0)), rel=1e-3)
    assert np.all(np.abs(r[:, 0, ch.MOTOR_FORCE]) <= 6000.0 * (1 + 1e-9))
    assert 20.0 < r[-1, 0, ch.S] < 60.0


def test_trim_brake_caps_the_speed_and_only_decelerates():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(300.0, pitch_deg=-10.0))
    w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=2.0)
    w.add_section("trim", 0, 0.0, 300.0, speed=6.0, max_force=5e4)
    t, r, st = run(w, 10000, 10)
    v = r[:, 0, ch.SPEED]
    assert np.all(v <= 6.0 + 1e-6)
    assert v[-1] == pytest.approx(6.0, abs=1e-6)
    assert np.all(r[:, 0, ch.MOTOR_FORCE] <= 1e-9)
    below = v < 5.9
    assert np.all(np.abs(r[below, 0, ch.MOTOR_FORCE]) < 1e-9)


def test_booster_drives_and_brakes_towards_its_speed():
    for v0 in (2.0, 12.0):
        w = World(dt=1e-3)
        w.add_track(analytic.straight(200.0))
        w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=v0)
        w.add_section("booster", 0, 0.0, 200.0, speed=7.0, max_force=3000.0)
        t, r, st = run(w, 6000, 10)
        assert r[-1, 0, ch.SPEED] == pytest.approx(7.0, abs=1e-6)
        # at full force until it gets there: a = F/m
        assert abs(r[10, 0, ch.ACCEL]) == pytest.approx(3000.0 / M, rel=1e-6)


def test_section_switches_on_and_off_cleanly():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0))
    w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=3.0)
    w.add_section("booster", 0, 10.0, 20.0, speed=6.0, max_force=2000.0)
    t, r, st = run(w, 5000, 1)
    s = r[:, 0, ch.S]
    outside = (s < 9.99) | (s > 20.01)
    assert np.all(r[outside, 0, ch.MOTOR_FORCE] == 0.0)
    assert np.all(r[outside, 0, ch.SECTION] == -1)
    inside = (s > 10.01) & (s < 19.99)
    assert np.all(r[inside, 0, ch.SECTION] == SECTIONS["booster"].code)
    after = s > 20.5
    assert np.ptp(r[after, 0, ch.SPEED]) < 1e-9  # coasting at whatever it left with


def test_rolling_resistance_decelerates_at_mu_g_and_holds_a_stopped_car():
    mu = 0.02
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0))
    w.add_train("a", 0, 1, car(cg_height=0.4), start_s=5.0, start_speed=5.0)
    w.set_resistance(rolling=mu)
    t, r, st = run(w, 30000, 10)
    moving = r[:, 0, ch.SPEED] > 0.05
    assert np.allclose(r[moving, 0, ch.ACCEL][1:], -mu * G, rtol=1e-6)
    assert np.allclose(r[moving, 0, ch.RESISTANCE_FORCE][1:], -mu * M * G, rtol=1e-6)
    stop_t = 5.0 / (mu * G)
    still = np.abs(r[:, 0, ch.SPEED]) < 1e-12
    assert t[np.argmax(still)] == pytest.approx(stop_t, abs=0.02)
    stopped = t > stop_t + 0.5
    assert np.all(r[stopped, 0, ch.SPEED] == pytest.approx(0.0, abs=1e-12))
    assert np.all(r[stopped, 0, ch.RESISTANCE_FORCE] == pytest.approx(0.0, abs=1e-6))


def test_rolling_resistance_holds_a_car_on_a_grade_it_can_hold_without_chatter():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0, pitch_deg=0.5))
    w.add_train("a", 0, 1, car(), start_s=100.0)
    w.set_resistance(rolling=0.02)  # tan 0.5° = 0.0087 < 0.02
    t, r, st = run(w, 3000, 10)
    assert np.all(np.abs(r[:, 0, ch.SPEED]) < 1e-9)
    assert r[-1, 0, ch.RESISTANCE_FORCE] == pytest.approx(M * G * np.sin(np.radians(0.5)), rel=1e-6)


def test_drag_matches_the_closed_form_coasting_solution():
    cda, rho, v0 = 1.5, 1.2, 30.0
    k = 0.5 * rho * cda / M
    w = World(dt=1e-3)
    w.add_track(analytic.straight(1000.0))
    w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=v0)
    w.set_resistance(drag_area=cda, air_density=rho)
    t, r, st = run(w, 20000, 100)
    v = r[:, 0, ch.SPEED]
    np.testing.assert_allclose(v, v0 / (1 + k * v0 * t), rtol=2e-3)


def test_nl2_mode_friction_and_drag_per_unit_mass():
    mu, kd, v0 = 0.01, 2e-4, 30.0
    w = World(dt=1e-3)
    w.add_track(analytic.straight(1000.0))
    w.add_train("a", 0, 1, car(mass=900.0), start_s=5.0, start_speed=v0)
    w.set_resistance(rolling=mu, mode="nl2", nl2_drag=kd)
    t, r, st = run(w, 10000, 100)
    v = r[:, 0, ch.SPEED]
    # dv/dt = −μ g − k v²  →  v(t) = √(μg/k) tan(atan(v0 √(k/μg)) − √(μ g k) t)
    c = np.sqrt(mu * G / kd)
    v_exact = c * np.tan(np.arctan(v0 / c) - np.sqrt(mu * G * kd) * t)
    np.testing.assert_allclose(v, v_exact, rtol=2e-3)


def test_davis_resistance():
    A, B, C = 300.0, 20.0, 0.5
    w = World(dt=1e-3)
    w.add_track(analytic.straight(2000.0))
    w.add_train("a", 0, 1, car(), start_s=5.0, start_speed=20.0)
    w.set_resistance(davis=(A, B, C))
    t, r, st = run(w, 2000, 100)
    v = r[:, 0, ch.SPEED]
    F = r[:, 0, ch.RESISTANCE_FORCE]
    np.testing.assert_allclose(F, -(A + B * v + C * v * v), rtol=5e-3)


def test_lift_pulls_a_whole_train_with_force_shared_by_the_cars_on_it():
    a = np.radians(20.0)
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0, pitch_deg=20.0))
    w.add_train("a", 0, 5, car(), coupling=CouplingSpec("distance", 0.5), start_s=40.0, start_speed=3.0)
    w.add_section("lift", 0, 0.0, 200.0, speed=3.0, max_force=8e4)
    t, r, st = run(w, 3000, 10)
    late = t > 1.0
    total = r[late, :, ch.MOTOR_FORCE].sum(axis=1)
    np.testing.assert_allclose(total, 5 * M * G * np.sin(a), rtol=0.02)
    np.testing.assert_allclose(r[late, :, ch.SPEED], 3.0, atol=0.01)


def test_long_train_with_friction_rows_and_a_lift_stays_stable():
    # 200 cars: warm-started friction and motor rows alternate with the exact chain solve
    n, alpha = 200, np.radians(3.0)
    w = World(dt=2e-3)
    w.add_track(analytic.straight(1200.0, pitch_deg=3.0, n=2401))
    w.add_train("a", 0, n, car(cg_height=0.3), coupling=CouplingSpec("distance", 0.5), start_s=520.0)
    w.add_section("lift", 0, 400.0, 600.0, speed=2.0, max_force=4e4)
    w.set_resistance(rolling=0.003)
    t, r, st = run(w, 3000, 500)
    assert st.ok
    np.testing.assert_allclose(r[-1, :, ch.SPEED], 2.0, atol=1e-6)
    need = n * M * G * (np.sin(alpha) + 0.003 * np.cos(alpha))
    assert r[-1, :, ch.MOTOR_FORCE].sum() == pytest.approx(need, rel=1e-3)
    assert np.all(r[-1, :, ch.MOTOR_FORCE] <= 4e4 * (1 + 1e-9))


def test_sections_act_in_the_direction_of_travel_towards_minus_s():
    """Trim, booster and launch act on |v| in the direction of travel: a car running towards −s
    (down a grade that falls towards −s) is capped at −6 m/s by a trim, driven to −7 m/s by a
    booster, launched to −9 m/s; a lift still works towards +s only."""
    w = World(dt=1e-3)
    w.add_track(analytic.straight(300.0, pitch_deg=10.0))   # rises towards +s: a car rolls towards −s
    w.add_train("a", 0, 1, car(), start_s=295.0, start_speed=-2.0)
    w.add_section("trim", 0, 0.0, 300.0, speed=6.0, max_force=5e4)
    t, r, st = run(w, 10000, 10)
    v = r[:, 0, ch.SPEED]
    assert np.all(v >= -6.0 - 1e-6) and v[-1] == pytest.approx(-6.0, abs=1e-6)
    assert np.all(r[:, 0, ch.MOTOR_FORCE] >= -1e-9)          # pushes towards +s: against the motion
    for kind, speed, v0, F in (("booster", 7.0, -2.0, 3000.0), ("booster", 7.0, -12.0, 3000.0),
                               ("launch", 9.0, -1.0, 6000.0)):
        w = World(dt=1e-3)
        w.add_track(analytic.straight(400.0))
        w.add_train("a", 0, 1, car(), start_s=390.0, start_speed=v0)
        w.add_section(kind, 0, 0.0, 400.0, speed=speed, max_force=F)
        t, r, st = run(w, 6000, 10)
        assert r[-1, 0, ch.SPEED] == pytest.approx(-speed, abs=1e-6)
        assert abs(r[10, 0, ch.ACCEL]) == pytest.approx(F / M, rel=1e-6)


# ----------------------------------------------------------------------------- bounded rows exact
def _train_on(track, n, v0, kind, n_on, **opts):
    w = World(dt=1e-3)
    w.add_track(track)
    s0 = n * 2.5 + 5.0
    w.add_train("a", 0, n, car(cg_height=0.3, rider_height=1.1), coupling=CouplingSpec("distance", 0.5),
                start_s=s0, start_speed=v0)
    w.add_section(kind, 0, s0 - n_on * 2.5 + 1.0, s0 + 50.0, **opts)
    return w


@pytest.mark.parametrize("kind, v0, opts", [
    ("brake", 0.5, dict(max_force=60000.0)),                  # held after 0.1 s: rows inside their bounds
    ("booster", 12.0, dict(speed=12.0, max_force=20000.0)),  # some at their bounds, some free
])
def test_bounded_rows_are_exact_with_the_chain_in_one_step(kind, v0, opts):
    """The section rows of a 200-car train (60 cars on the section) and its couplers after one step's
    solve agree with an independent exact solve of the same step (sparse Schur complement and
    bounded-variable least squares, ``reference.exact_bounded_solve``) within 1e-8 of the largest
    impulse of each kind (measured: 1.0e-9 at most)."""
    from tests.physics.reference import exact_bounded_solve

    track = analytic.hilly_circle(R=100.0, amp=1.0, waves=4, n=4001)
    w = _train_on(track, 200, v0, kind, 60, **opts)
    w.run(100, 100)
    kernel, exact = exact_bounded_solve(w)
    for key in ("section", "coupler"):
        scale = np.max(np.abs(exact[key]))
        assert scale > 0.0
        assert np.max(np.abs(kernel[key] - exact[key])) <= 1e-8 * scale, (key, np.max(np.abs(kernel[key] - exact[key])) / scale)


def test_a_train_held_by_several_brakes_shares_the_load_equally():
    """20 cars at rest on a uniform 2° grade, the 5 lead cars on a stop brake: each braked car holds
    a fifth of the train, 4 m g sin α (the rows are redundant through the rigid couplers: one set
    point, split by least squares; docs/physics.md, "Rows that share a load"), from the first step
    on; together exactly n m g sin α."""
    a = np.radians(2.0)
    w = _train_on(analytic.straight(200.0, pitch_deg=2.0), 20, 0.0, "brake", 5, max_force=1e5)
    t, r, st = run(w, 200, 10)
    F = r[:, :, ch.MOTOR_FORCE]
    np.testing.assert_allclose(F[:, :5], 4 * M * G * np.sin(a), rtol=1e-6)
    np.testing.assert_allclose(F[1:, :5].sum(axis=1), 20 * M * G * np.sin(a), rtol=1e-6)
    assert np.all(F[:, 5:] == 0.0)
    assert np.all(np.abs(r[:, :, ch.SPEED]) < 1e-6)


# ----------------------------------------------------------------------------- rows that share a load
WAGON = dict(mass=20000.0, length=14.0, width=3.0, height=3.5, cg_height=1.5, rider_height=1.5)


@pytest.mark.parametrize("where", ["grade", "circle"])
def test_self_propelled_wagons_holding_speed_share_it_equally_and_their_couplers_carry_nothing(where):
    """30 wagons, each with a booster row, hold 15 m/s on a 1.5 % grade (or a level 400 m circle)
    against Davis resistance (docs/physics.md, "Rows that share a load"): every wagon pushes the
    same force, its own need m g sin α + A + B v + C v² (1e-4; equal to 1e-6 of each other), and
    no coupler carries anything (below 1e-6 of a wagon's weight) — at every recorded step."""
    n, v, A, B, C = 30, 15.0, 300.0, 6.0, 0.6
    alpha = np.arctan(0.015) if where == "grade" else 0.0
    w = World(dt=2e-3)
    if where == "grade":
        w.add_track(analytic.straight(2000.0, pitch_deg=np.degrees(alpha), n=4001))
        s0 = 600.0
    else:
        w.add_track(analytic.flat_circle(R=400.0, n=20001))
        s0 = 500.0
    w.add_train("a", 0, n, CarSpec(**WAGON), coupling=CouplingSpec("distance", 1.0), wheels="railway",
                start_s=s0, start_speed=v)
    w.add_section("booster", 0, 0.0, 1990.0 if where == "grade" else 2400.0, speed=v, max_force=4500.0)
    w.set_resistance(davis=(A, B, C))
    need = WAGON["mass"] * G * np.sin(alpha) + A + B * v + C * v * v
    for _ in range(5):
        t, r, st = run(w, 250, 25)
        assert st.ok
        F = r[:, :, ch.MOTOR_FORCE]
        np.testing.assert_allclose(F, need, rtol=1e-4)
        assert np.all(np.ptp(F, axis=1) <= 1e-6 * need)
        assert np.max(np.abs(w.jlam[: n - 1, 0])) / w.dt < 1e-6 * WAGON["mass"] * G


def test_a_lift_pulls_every_car_alike_and_the_couplers_carry_the_closed_form():
    """A 7-car train with its 4 lead cars on a chain lift up a 30° straight (the rest on the
    grade behind it) at 2 m/s: each lift car pulls n m g sin α / k, and the coupler behind car j
    carries T_j = Σ_{i≤j} (P_i − m g sin α) — j m g sin α (n/k − 1) within the lift, (n − j) m g
    sin α behind it (tension; 1e-4 of m g)."""
    n, k, a = 7, 4, np.radians(30.0)
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0, pitch_deg=30.0))
    w.add_train("a", 0, n, car(cg_height=0.4, rider_height=1.1), coupling=CouplingSpec("distance", 0.5),
                start_s=100.0, start_speed=2.0)
    w.add_section("lift", 0, 100.0 - (k - 1) * 2.5 - 1.0, 190.0, speed=2.0, max_force=2e4)
    t, r, st = run(w, 400, 20)
    assert st.ok
    mgs = M * G * np.sin(a)
    P = n * mgs / k
    np.testing.assert_allclose(r[-1, :k, ch.MOTOR_FORCE], P, rtol=1e-6)
    assert np.all(r[-1, k:, ch.MOTOR_FORCE] == 0.0)
    tension = -w.jlam[: n - 1, 0] / w.dt                    # λ > 0 pushes the ends apart
    j = np.arange(1, n)
    closed = np.where(j < k, j * mgs * (n / k - 1.0), (n - j) * mgs)
    np.testing.assert_allclose(tension, closed, atol=1e-4 * M * G)
