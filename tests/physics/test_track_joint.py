"""Track joint, integrator and recording against closed forms (docs/physics.md §2, §5, §6)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ellipk

from tests.physics import analytic
from tests.physics.analytic import qlog_error, run
from trackrider.errors import InputError
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch
from trackrider.jit import njit
from trackrider.physics import kernels as kn
from trackrider.physics import track_joint as tj
from trackrider.physics.sections import SECTIONS

G = 9.81


def box_car(**kw):
    spec = dict(mass=600.0, length=2.0, width=1.2, height=1.0, cg_height=0.0, rider_height=0.0)
    spec.update(kw)
    return CarSpec(**spec)


def test_channels_cover_the_architecture_columns():
    wanted = ("s x y z speed accel g_vertical g_lateral g_longitudinal wheel_load lateral_load motor_force "
              "kinetic_energy potential_energy qw qx qy qz vx vy vz wx wy wz roll_torque resistance_force "
              "section flags track coupler_force tractive_force notch dynamic_brake brake_force brake_pressure "
              "pipe_pressure g_vertical_front g_lateral_front g_longitudinal_front g_vertical_rear g_lateral_rear "
              "g_longitudinal_rear").split()
    assert ch.NAMES == tuple(wanted)
    assert [ch.INDEX[n] for n in wanted] == list(range(ch.N_CHANNELS))
    # the recorded section codes never change (results carry them)
    assert {name: t.code for name, t in SECTIONS.items()} == dict(lift=0, launch=1, brake=2, trim=3, booster=4,
                                                                   station=5)


def test_rotation_error_is_the_rotation_vector_not_twice_it():
    """``maths.frame_rotation_error`` of a body turned by θ from a frame F is Fᵀ θ (θ·T, θ·N, θ·B),
    not the seed's −2θ: by its series for a car near its frame (|θ| < 1e-4) and through M's quaternion
    beyond (up to a half turn, whose sign is either), within 1e-15 rad of the turn plus 1e-15 of it."""
    from tests.physics.analytic import qexp
    from trackrider.physics.maths import frame_rotation_error

    rng = np.random.default_rng(1)
    for scale in (1e-12, 1e-8, 5e-5, 2e-4, 0.3, 1.5, 3.0, np.pi):
        for _ in range(20):
            qf = rng.normal(size=4)
            qf /= np.linalg.norm(qf)
            axis = rng.normal(size=3)
            theta = axis / np.linalg.norm(axis) * scale * (1.0 if scale == np.pi else rng.uniform(0.5, 1.0))
            F, RA = analytic.qrot(qf), analytic.qrot(analytic.qmul(qexp(theta), qf))
            got = np.array(frame_rotation_error(np.ascontiguousarray(RA), *F[:, 0], *F[:, 1], *F[:, 2]))
            want = F.T @ theta
            err = np.max(np.abs(got - want))
            if scale == np.pi:
                err = min(err, np.max(np.abs(got + want)))
            assert err < 1e-15 + 1e-15 * np.linalg.norm(theta), (scale, err)


def test_at_rest_on_level_track_is_one_g_and_mg_wheel_load():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0))
    w.add_train("a", 0, 1, box_car(cg_height=0.5, rider_height=1.1), start_s=50.0)
    t, r, st = run(w, 500, 50)
    assert st.ok
    assert r[-1, 0, ch.G_VERTICAL] == pytest.approx(1.0, abs=1e-9)
    assert r[-1, 0, ch.G_LATERAL] == pytest.approx(0.0, abs=1e-9)
    assert r[-1, 0, ch.WHEEL_LOAD] == pytest.approx(600.0 * G, rel=1e-9)
    assert r[-1, 0, ch.SPEED] == pytest.approx(0.0, abs=1e-9)
    assert int(r[-1, 0, ch.FLAGS]) & ch.ON_TRACK
    assert r[-1, 0, ch.POTENTIAL_ENERGY] == pytest.approx(600.0 * G * 0.5)


def test_turned_car_is_aligned_in_one_step_at_erp_one_without_overshoot():
    w = World(dt=1e-3, erp=1.0)
    w.add_track(analytic.straight(100.0))
    w.add_train("a", 0, 1, box_car(cg_height=0.4), start_s=50.0)
    w._build()
    axis = np.array([0.3, -0.5, 0.8])
    axis /= np.linalg.norm(axis)
    a = 0.01
    dq = np.concatenate([[np.cos(a / 2)], np.sin(a / 2) * axis])
    w.quat[0] = dq  # frame is identity on this straight
    w.pos[0] = [50.0, 0.0, 0.4] + np.array([0.0, 0.0, 0.0])
    errs = []
    for _ in range(3):
        w.run(1, 1)
        out = np.zeros(3)
        qlog_error(w.quat[0], np.array([1.0, 0, 0, 0]), out)
        errs.append(np.linalg.norm(out))
    # after one step: the 0.01 rad error is gone up to second-order terms of the quaternion step
    assert errs[0] < 1e-6
    assert errs[1] < 1e-6 and errs[2] < 1e-6


def test_frictionless_drop_speed_on_the_straight_after_a_curve():
    track, z_top = analytic.drop_then_straight(R=15.0, angle_deg=45.0, run_in=20.0, run_out=60.0)
    w = World(dt=1e-3)
    w.add_track(track)
    w.add_train("a", 0, 1, box_car(), start_s=0.0)
    t, r, st = run(w, 5000, 10)
    level = r[:, 0, ch.S] > 20.0 + 15.0 * np.pi / 4 + 1.0
    assert level.sum() > 10
    v = r[level, 0, ch.SPEED]
    assert np.all(np.abs(v / np.sqrt(2 * G * z_top) - 1) < 2e-3)


def _loop_world(v0, R=10.0, dt=1e-3):
    w = World(dt=dt)
    w.add_track(analytic.vertical_circle(R))
    w.add_train("a", 0, 1, box_car(length=3.0, width=1.0, height=1.0), start_s=0.0, start_speed=v0)
    return w


def test_speed_and_g_at_the_top_of_a_circular_loop():
    R, v0, m = 10.0, 25.0, 600.0
    Iyy = m / 12 * (3.0**2 + 1.0)  # box 3×1×1 about its left axis
    t, r, st = run(_loop_world(v0, R), 2000, 1)
    i = np.argmax(r[:, 0, ch.Z])
    v_top = r[i, 0, ch.SPEED]
    # energy with the rotational term: ½(m + I/R²) v² + m g z = const
    v_exp = np.sqrt(v0**2 - 4 * G * R * m / (m + Iyy / R**2))
    assert abs(v_top / v_exp - 1) < 3e-3
    assert r[i, 0, ch.G_VERTICAL] == pytest.approx(v_top**2 / (G * R) - 1, abs=0.03)
    # and the point-mass oracle is really different (the rotational term matters here)
    assert abs(np.sqrt(v0**2 - 4 * G * R) / v_exp - 1) > 3e-3


def test_physical_pendulum_period_on_a_vertical_circle():
    R, m = 10.0, 600.0
    Iyy = m / 12 * (3.0**2 + 1.0)
    v0 = 1.5
    w = _loop_world(v0, R, dt=1e-3)
    t, r, st = run(w, 30000, 1)
    v = r[:, 0, ch.SPEED]
    # upward zero crossings of the speed, interpolated
    idx = np.nonzero((v[:-1] < 0) & (v[1:] >= 0))[0]
    tc = t[idx] + (0 - v[idx]) / (v[idx + 1] - v[idx]) * (t[idx + 1] - t[idx])
    period = np.mean(np.diff(tc))
    L_eq = (m * R**2 + Iyy) / (m * R)
    theta0 = np.arccos(1 - 0.5 * (m + Iyy / R**2) * v0**2 / (m * G * R))
    T_exact = 4 * np.sqrt(L_eq / G) * ellipk(np.sin(theta0 / 2) ** 2)
    assert len(tc) >= 4
    assert abs(period / T_exact - 1) < 2e-3


@pytest.mark.parametrize("factor, lifts", [(0.9, False), (1.1, True)])
def test_railway_overturning_threshold_on_a_flat_curve(factor, lifts):
    R, gauge, h_cg = 20.0, 1.0, 1.0
    v = factor * np.sqrt(G * R * (gauge / 2) / h_cg)
    w = World(dt=1e-3)
    w.add_track(analytic.flat_circle(R), gauge=gauge)
    w.add_train("a", 0, 1, box_car(cg_height=h_cg, rider_height=1.5), wheels="railway", start_s=0.0,
                start_speed=v)
    t, r, st = run(w, 1000, 10)
    F2, M = r[5:, 0, ch.WHEEL_LOAD], r[5:, 0, ch.ROLL_TORQUE]
    q_left, q_right = F2 / 2 + M / gauge, F2 / 2 - M / gauge
    inner = q_left  # counter-clockwise circle: the left rail is the inner one
    assert np.all(q_right > 0)
    assert np.all(inner < 0) if lifts else np.all(inner > 0)
    # lateral load supplies the centripetal force
    assert np.mean(r[5:, 0, ch.LATERAL_LOAD]) == pytest.approx(600 * v**2 / R, rel=1e-3)


def test_railway_car_lifts_off_a_crest_that_a_coaster_car_is_held_to():
    R = 10.0
    # outside of a vertical circle: the top of a hill. Flip the loop's frame (B outward).
    tr = analytic.vertical_circle(R)
    data = tr.data.copy()
    data[:, 6:12] *= -1  # N, B -> -N, -B : riding on the outside
    from trackrider.curves.compact import CompactTrack
    hill = CompactTrack(data, tr.ds, tr.length, tr.closed)
    s_top = np.pi * R
    v = 1.2 * np.sqrt(G * R)
    res = {}
    for wheels in ("railway", "coaster"):
        w = World(dt=1e-3)
        w.add_track(hill)
        w.add_train("a", 0, 1, box_car(), wheels=wheels, start_s=s_top - 1.0, start_speed=v)
        t, r, st = run(w, 150, 1)
        res[wheels] = r
    rail, coast = res["railway"], res["coaster"]
    assert np.any(rail[:, 0, ch.FLAGS].astype(int) & ch.SUPPORT_CLAMPED)
    assert np.all(rail[:, 0, ch.WHEEL_LOAD] >= -1e-6)
    assert np.min(coast[:, 0, ch.WHEEL_LOAD]) < -0.2 * 600 * G   # held down by up-stop wheels


def test_car_running_off_an_open_end_is_an_event_not_a_crash():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(20.0))
    w.add_train("a", 0, 1, box_car(), start_s=18.0, start_speed=5.0)
    t, r, st = run(w, 1000, 10)
    assert st.ok
    flags = r[:, 0, ch.FLAGS].astype(int)
    assert flags[0] & ch.ON_TRACK and not flags[0] & ch.RAN_OFF
    assert flags[-1] & ch.RAN_OFF
    assert r[-1, 0, ch.Z] < -1.0  # free: it falls
    assert np.all(np.isfinite(r[:, 0, ch.X]))


def test_two_identical_runs_are_bit_for_bit_identical():
    outs = []
    for _ in range(2):
        w = World(dt=1e-3)
        w.add_track(analytic.hilly_circle(R=30.0, amp=1.5, n=2001))
        w.add_train("a", 0, 4, box_car(cg_height=0.3), start_s=10.0, start_speed=8.0)
        w.set_resistance(rolling=0.01, drag_area=0.5)
        t, r, st = run(w, 1500, 7)
        outs.append((r, w.pos.copy(), w.quat.copy(), w.vel.copy()))
    for a, b in zip(outs[0], outs[1]):
        assert np.array_equal(a, b, equal_nan=True)


def test_non_finite_state_stops_the_run_with_time_and_entity():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0))
    w.add_train("a", 0, 2, box_car(), start_s=50.0)
    w.add_body("ball", 1.0, size=(0.1, 0.1, 0.1), position=(0, 0, 5))
    w._build()
    w.vel[2] = [np.inf, 0, 0]
    st = w.run(100, 1)
    assert st.status == "diverged" and st.entity == 2 and st.label == ("ball", 1)
    assert st.t == pytest.approx(1e-3)


def test_bad_input_raises_input_error_naming_the_key():
    w = World()
    w.add_track(analytic.straight(10.0))
    with pytest.raises(InputError, match="car.mass"):
        w.add_train("a", 0, 1, box_car(mass=-1.0))
    with pytest.raises(InputError, match="start_s"):
        w.add_train("a", 0, 3, box_car(), start_s=1.0)
    with pytest.raises(InputError, match="wheels"):
        w.add_train("a", 0, 1, box_car(), wheels="maglev", start_s=5.0)
    with pytest.raises(InputError, match="type"):
        w.add_section("catapult", 0, 1.0, 2.0)
    with pytest.raises(InputError, match="to"):
        w.add_section("lift", 0, 5.0, 2.0, speed=1.0, max_force=1e3)
    with pytest.raises(InputError, match=r"^max_force: missing \(required\)$"):
        w.add_section("lift", 0, 2.0, 5.0, speed=1.0)
    with pytest.raises(InputError, match=r"^dt: must be > 0 s, got 0$"):   # the parameter's name, not a file key
        World(dt=0.0)


def test_zero_g_over_a_ballistic_parabola_hill():
    u = 15.0
    track, s_top = analytic.ballistic_hill(u=u)
    w = World(dt=1e-3)
    w.add_track(track)
    # enter at the speed that crosses the top at u (energy: v² = u² + 2 g Δz)
    s0 = s_top - 20.0
    from trackrider.curves.compact import C_P
    z0 = np.interp(s0, np.arange(len(track.data)) * track.ds, track.data[:, C_P + 2])
    w.add_train("a", 0, 1, box_car(), start_s=s0, start_speed=np.sqrt(u**2 + 2 * G * (0.0 - z0)))
    t, r, st = run(w, 2500, 5)
    over = np.abs(r[:, 0, ch.S] - s_top) < 15.0
    assert over.sum() > 100
    assert np.max(np.abs(r[over, 0, ch.G_VERTICAL])) < 0.02
    assert np.max(np.abs(r[over, 0, ch.G_LONGITUDINAL])) < 0.02
    # and the same car on the level reads 1 g: the hill really is what makes it weightless
    assert np.all(r[over, 0, ch.WHEEL_LOAD] < 0.02 * 600 * G)


def test_motor_row_is_the_rate_of_change_of_s():
    # row 6 J = [T, r_m × T] is d s/dt for an anchor on the curve: a car driven by a booster
    # moves s by ∫ speed dt
    w = World(dt=1e-3)
    w.add_track(analytic.hilly_circle(R=30.0, amp=2.0, waves=3, n=4001))
    w.add_train("a", 0, 1, box_car(cg_height=0.6), start_s=5.0, start_speed=3.0)
    w.add_section("booster", 0, 0.0, 1000.0, speed=8.0, max_force=2000.0)
    t, r, st = run(w, 3000, 1)
    s = np.unwrap(r[:, 0, ch.S] * 2 * np.pi / w._tracks[0].length) * w._tracks[0].length / (2 * np.pi)
    ds_dt = np.diff(s) / w.dt  # semi-implicit Euler: s_i − s_{i−1} = h v_i
    np.testing.assert_allclose(ds_dt, r[1:, 0, ch.SPEED], rtol=0, atol=2e-4)


def test_eval_track_point_is_eval_track_bit_for_bit():
    """The Newton step's P, T, P'' evaluation repeats eval_track's arithmetic: equal to the bit."""
    from numba import njit

    from trackrider.curves.compact import C_DT, C_P, C_T, NCOL, eval_track
    from trackrider.physics.track_joint import eval_track_point

    @njit(cache=False)
    def point(data, n, ds, length, closed, s, out):
        eval_track_point(data, 0, n, ds, length, closed, s, out)

    for ct in (analytic.hilly_circle(R=30.0, amp=3.0, waves=3, n=2001), analytic.drop_then_straight()[0]):
        full, part = np.zeros(NCOL), np.zeros(NCOL)
        for s in np.random.default_rng(3).uniform(-5.0, ct.length + 5.0, 200):
            eval_track(ct.data, 0, len(ct.data), ct.ds, ct.length, ct.closed, s, full)
            point(ct.data, len(ct.data), ct.ds, ct.length, ct.closed, s, part)
            for c in (C_P, C_T, C_DT):
                assert np.array_equal(full[c:c + 3], part[c:c + 3])


@njit(error_model="numpy", _nrt=False)
def _track_block(bodies, cars, erp_h, trk, wk, closed):
    """Car 0's track block and projection: the closed form (``closed``) or the general one."""
    kn.update_rotations(bodies)
    rx, ry, rz = tj.track_arm(0, bodies, cars)
    t = tj.track_targets(0, bodies, cars, erp_h, rx, ry, rz)
    tj.track_rows_of(0, cars, rx, ry, rz, t, trk)
    if closed:
        tj.fixed_track_block(0, bodies, cars, rx, ry, rz, t, trk, wk)
    else:
        tj.prepare_track_block(0, bodies, cars, trk, wk)
        tj.project_track(0, bodies, trk, wk)


@pytest.mark.parametrize("seed", range(6))
def test_closed_form_track_block_equals_the_general_form(seed):
    """A supported car on a fixed track: W̃ = n nᵀ/μ, P = Zᵀ − (Zᵀ M n) nᵀ/μ and the projection
    u' = Z t + σ n (track_joint.fixed_track_block) equal W − W Gᵀ A⁻¹ G W, A⁻¹ G W and the
    projection through A (prepare_track_block, project_track) to rounding, on a turning, twisting
    frame with a car off its frame (non-zero targets), off-diagonal inertia and a high cg."""
    from tests.physics.analytic import qexp, qmul
    from trackrider.curves.compact import C_B, C_N, C_OMEGA, C_P, C_T, NCOL
    from trackrider.physics import state as st

    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    Q *= np.sign(np.linalg.det(Q))
    fr = np.zeros(NCOL)
    fr[C_T:C_T + 3], fr[C_N:C_N + 3], fr[C_B:C_B + 3] = Q[:, 0], Q[:, 1], Q[:, 2]
    fr[C_P:C_P + 3] = rng.normal(size=3) * 10
    fr[C_OMEGA:C_OMEGA + 3] = rng.normal(size=3) * 0.3
    qf = np.zeros(4)
    kn.mat_to_quat(np.ascontiguousarray(Q), qf)
    q = qmul(qexp(rng.normal(size=3) * 0.02), qf)
    cg = 0.3 + rng.random()
    pos = fr[C_P:C_P + 3] + cg * Q[:, 2] + rng.normal(size=3) * 0.01
    cars = st.make_cars(1)
    cars.frame[0], cars.cg[0], cars.support[0], cars.held[0] = fr, cg, 1, 1
    ib = np.array([200.0, 700.0, 400.0]) * (1 + rng.random(3))
    z = np.zeros
    bodies = st.Bodies(pos[None].copy(), q[None].copy(), rng.normal(size=(1, 3)) * 10, rng.normal(size=(1, 3)),
                       np.array([1 / 600.0]), 1.0 / ib[None], ib[None].copy(), np.array([600.0]), z((1, 3, 3)))
    a, b = st.make_temps(1, 0, [], []), st.make_temps(1, 0, [], [])
    v0, w0 = bodies.vel.copy(), bodies.omg.copy()
    _track_block(bodies, cars, 20.0, a.trk, a.wk, False)
    v1, w1 = bodies.vel.copy(), bodies.omg.copy()
    bodies.vel[:], bodies.omg[:] = v0, w0
    _track_block(bodies, cars, 20.0, b.trk, b.wk, True)
    assert np.max(np.abs(a.trk.target)) > 1e-3   # the projection moves the car
    np.testing.assert_array_equal(a.trk.J, b.trk.J)
    np.testing.assert_array_equal(a.trk.target, b.trk.target)
    Wa, Wb = tj.mobility_of(a.trk, 0), tj.mobility_of(b.trk, 0)
    assert b.trk.rank1[0, 6] > 0.0 and not a.trk.rank1[0, 6] > 0.0   # closed form: W̃ by its n and 1/μ
    np.testing.assert_allclose(Wb, Wa, rtol=0, atol=1e-12 * np.max(np.abs(Wa)))
    Pa, Pb = tj.to_track_of(a.trk, cars.frame, 0), tj.to_track_of(b.trk, cars.frame, 0)   # closed form: P by Zᵀ M n/μ
    np.testing.assert_allclose(Pb, Pa, rtol=0, atol=1e-11 * np.max(np.abs(Pa)))
    np.testing.assert_allclose(b.trk.lam, a.trk.lam, rtol=0, atol=1e-11 * np.max(np.abs(a.trk.lam)))
    np.testing.assert_allclose(bodies.vel, v1, rtol=0, atol=1e-12 * np.max(np.abs(v1)))
    np.testing.assert_allclose(bodies.omg, w1, rtol=0, atol=1e-12 * np.max(np.abs(w1)))
    # the projected velocity satisfies the rows: G u' = t
    u = np.concatenate([bodies.vel[0], bodies.omg[0]])
    np.testing.assert_allclose(b.trk.J[0] @ u, b.trk.target[0], rtol=0, atol=1e-12 * np.max(np.abs(u)))
