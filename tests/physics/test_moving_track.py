"""A track carried by a moving body (docs/physics.md §9): closed forms for a car on a turning,
falling, lifted or gliding track, at track-body/car mass ratios from 1/1000 to 1000, and the
mechanism's holds, releases, motors and buffers."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.errors import InputError
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch

G = 9.81


def run(world, n_steps, every=10):
    """(t, samples, joint samples, status) of ``world`` run ``n_steps`` steps."""
    ts, ss, js = [], [], []
    status = world.run(n_steps, every, lambda t, s: (ts.append(t.copy()), ss.append(s.copy())),
                       joint_sink=lambda t, s: js.append(s.copy()))
    return np.concatenate(ts), np.concatenate(ss), (np.concatenate(js) if js else None), status


def deck(m_car, ratio, z=-0.5, **joint):
    """A 20 m deck (mass ratio·m_car) on a vertical prismatic joint carrying a level straight track
    at height z + 0.5, one car of m_car at s = 8 m on it."""
    w = World(dt=1e-3)
    b = w.add_body("deck", ratio * m_car, size=(20.0, 3.0, 0.5), position=(10.0, 0.0, z))
    k = w.add_track(analytic.straight(20.0, n=201, origin=(0.0, 0.0, z + 0.5)), body=b)
    w.add_train("car", k, 1, CarSpec(m_car, 2.0, 1.2, 1.0, cg_height=0.5), start_s=8.0)
    w.add_joint("prismatic", "world", ("body", b), axis=(0, 0, 1), name="lift", **joint)
    return w


def test_bead_on_a_rotating_rod():
    """A frictionless car at rest relative to a level radial track turned at ω about a vertical axis
    through its start (a body of huge inertia): r = r₀ cosh ωt, ṙ = r₀ω sinh ωt, and the lateral row
    carries the Coriolis force 2mωṙ; over 4 s (r grows ×3.8)."""
    w0, r0, m = 0.5, 5.0, 100.0
    w = World(dt=1e-3)
    b = w.add_body("table", 1e9, inertia=(1e12, 1e12, 1e12), position=(0, 0, 0), angular_velocity=(0, 0, w0))
    k = w.add_track(analytic.straight(60.0, n=601), body=b)
    w.add_train("bead", k, 1, CarSpec(m, 1.0, 0.5, 0.5), start_s=r0)
    w.add_joint("hinge", "world", ("body", b), anchor_a=(0, 0, 0), axis=(0, 0, 1))
    t, s, _, st = run(w, 4000)
    assert st.status == "ok"
    r, rd = s[:, 0, ch.S], s[:, 0, ch.SPEED]
    np.testing.assert_allclose(r, r0 * np.cosh(w0 * t), rtol=1e-5)
    np.testing.assert_allclose(rd, r0 * w0 * np.sinh(w0 * t), atol=1e-4)
    # the lateral load lags one step of its growth (≤ 0.5 N at 4 s)
    np.testing.assert_allclose(s[:, 0, ch.LATERAL_LOAD], 2 * m * w0 * rd, rtol=1e-3, atol=0.5)
    np.testing.assert_allclose(s[:, 1, ch.WZ], w0, atol=1e-7)


def test_free_turntable_keeps_angular_momentum_and_energy():
    """The bead on a turntable of finite inertia and no motor: angular momentum about the axis is
    kept to rounding (≤ 1e-12 relative), energy to 1e-5 (the scheme's); ω and ṙ at each r follow
    from the two laws."""
    I_t, w0, r0, m = 400.0, 1.0, 2.0, 100.0
    w = World(dt=1e-3)
    b = w.add_body("table", 500.0, inertia=(300.0, 300.0, I_t), position=(0, 0, 0), angular_velocity=(0, 0, w0))
    k = w.add_track(analytic.straight(30.0, n=301), body=b)
    w.add_train("bead", k, 1, CarSpec(m, 1.0, 0.5, 0.5), start_s=r0)
    w.add_joint("hinge", "world", ("body", b), anchor_a=(0, 0, 0), axis=(0, 0, 1))
    t, s, _, st = run(w, 4000)
    assert st.status == "ok"
    Icz = w.trains[0]["inertia"][2]
    x, y, vx, vy = (s[:, 0, c] for c in (ch.X, ch.Y, ch.VX, ch.VY))
    L = I_t * s[:, 1, ch.WZ] + m * (x * vy - y * vx) + Icz * s[:, 0, ch.WZ]
    L0 = (I_t + Icz + m * r0 ** 2) * w0
    E0 = L0 * w0 / 2
    assert np.max(np.abs(L - L0)) / L0 < 1e-12
    assert np.max(np.abs(s[:, :, ch.KINETIC_ENERGY].sum(1) - E0)) / E0 < 1e-5
    r = s[:, 0, ch.S]
    assert r[-1] > 4 * r0
    wz = L0 / (I_t + Icz + m * r ** 2)
    np.testing.assert_allclose(s[:, 1, ch.WZ], wz, atol=5e-4)
    np.testing.assert_allclose(s[:, 0, ch.SPEED], np.sqrt((2 * E0 - (I_t + Icz + m * r ** 2) * wz ** 2) / m), atol=1e-5)


@pytest.mark.parametrize("ratio", [0.001, 1.0, 1000.0])
def test_free_fall_with_the_track(ratio):
    """A car on a level track on a deck on a vertical prismatic joint, nothing holding it: both fall
    at g, the rider feels 0 g and the wheels carry nothing, at deck/car mass ratios 1/1000 … 1000;
    the car stays on its track (≤ 1 mm; it is to rounding)."""
    m = 1000.0
    w = deck(m, ratio)
    t, s, _, st = run(w, 2000)
    assert st.status == "ok"
    np.testing.assert_allclose(s[:, 0, ch.VZ], -G * t, atol=1e-9)
    np.testing.assert_allclose(s[:, 1, ch.VZ], -G * t, atol=1e-9)
    assert np.max(np.abs(s[:, 0, ch.WHEEL_LOAD])) < 1e-5 * m * G
    assert np.max(np.abs(s[:, 0, ch.G_VERTICAL])) < 1e-9
    assert np.max(np.abs((s[:, 0, ch.Z] - 0.5) - (s[:, 1, ch.Z] + 0.5))) < 1e-3
    np.testing.assert_allclose(s[:, 0, ch.S], 8.0, atol=1e-9)


def test_counterweighted_drop_track():
    """The drop deck (M) on a rope over a pulley to a counterweight (Mc), a car (m) on it:
    a = g (M + m − Mc)/(M + m + Mc), rider G = 1 − a/g, wheel load m (g − a), to 1e-6."""
    m, M, Mc = 1000.0, 3000.0, 2500.0
    w = World(dt=1e-3)
    b = w.add_body("drop", M, size=(20.0, 3.0, 0.5), position=(10.0, 0, 19.5))
    cw = w.add_body("cw", Mc, size=(1.0, 1.0, 1.0), position=(10.0, 10.0, 10.0))
    k = w.add_track(analytic.straight(20.0, n=201, origin=(0, 0, 20.0)), body=b)
    w.add_train("car", k, 1, CarSpec(m, 2.0, 1.2, 1.0, cg_height=0.5), start_s=10.0)
    w.add_joint("prismatic", "world", ("body", b), axis=(0, 0, 1))
    w.add_joint("pulley", ("body", b), ("body", cw), ground_a=(10.0, 0, 30.0), ground_b=(10.0, 10.0, 30.0))
    t, s, _, st = run(w, 1500)
    assert st.status == "ok"
    a = G * (M + m - Mc) / (M + m + Mc)
    np.testing.assert_allclose(-s[:, 1, ch.VZ], a * t, rtol=1e-6)
    np.testing.assert_allclose(s[5:, 0, ch.WHEEL_LOAD], m * (G - a), rtol=1e-6)
    np.testing.assert_allclose(s[5:, 0, ch.G_VERTICAL], 1 - a / G, rtol=1e-6)


@pytest.mark.parametrize("ratio", [0.001, 1.0, 1000.0])
def test_elevator_lift(ratio):
    """A prismatic motor whose speed profile ramps at a: the deck and the car rise at a, the wheels
    carry m (g + a) and the motor pushes (M + m)(g + a), to 1e-6; its power is that force × speed."""
    m, a = 1000.0, 1.5
    M = ratio * m
    w = deck(m, ratio, motor_speed=((0.0, 0.0), (2.0, 2 * a), (3.0, 2 * a)), max_force=1e12)
    t, s, j, st = run(w, 2000)
    assert st.status == "ok"
    assert w.mechanisms == [dict(name="lift", kind="prismatic", body="deck")]
    ramp = (t > 0.05) & (t < 1.95)
    np.testing.assert_allclose(s[ramp, 1, ch.VZ], a * t[ramp], rtol=1e-6)
    np.testing.assert_allclose(s[ramp, 0, ch.WHEEL_LOAD], m * (G + a), rtol=1e-6)
    np.testing.assert_allclose(j[ramp, 0, ch.J_DRIVE], (M + m) * (G + a), rtol=1e-6)
    np.testing.assert_allclose(j[ramp, 0, ch.J_SPEED], a * t[ramp], rtol=1e-6)
    np.testing.assert_allclose(j[ramp, 0, ch.J_POWER], (M + m) * (G + a) * a * t[ramp], rtol=2e-6)
    np.testing.assert_allclose(j[ramp, 0, ch.J_TRAVEL], a * t[ramp] ** 2 / 2, rtol=1e-2, atol=1e-3)


def test_galilean_invariance():
    """A banked circle with a car at speed, once fixed and once on a platform driven at a constant
    velocity (3, −2, 1) m/s by a prismatic motor along it, at platform/car mass ratios 1/1000 … 1000:
    the car's s, speed and G histories agree to 1e-8 (rounding)."""
    track = analytic.flat_circle(R=20.0, n=801, bank_deg=30.0)

    def one(M=None):
        w = World(dt=1e-3)
        body = None
        if M is not None:
            vel = np.array([3.0, -2.0, 1.0])
            body = w.add_body("platform", M, size=(40.0, 40.0, 1.0), position=(0, 0, -1), velocity=vel)
            w.add_joint("prismatic", "world", ("body", body), axis=tuple(vel), motor_speed=float(np.linalg.norm(vel)))
        k = w.add_track(track, body=body)
        w.add_train("car", k, 1, CarSpec(500.0, 2.0, 1.2, 1.0), start_s=0.0, start_speed=12.0)
        return run(w, 3000)[1][:, 0]

    fixed = one()
    for M in (0.5, 500.0, 5e5):
        moving = one(M)
        for c in (ch.S, ch.SPEED, ch.G_VERTICAL, ch.G_LATERAL, ch.G_LONGITUDINAL):
            np.testing.assert_allclose(moving[:, c], fixed[:, c], atol=1e-8, err_msg=f"{ch.NAMES[c]} M = {M}")


def test_hold_release_and_buffer():
    """A deck held by its joint's cycle until its train has stood still on it for 0.5 s, then
    released: it stays put while held (drive = (M + m) g), falls at g after, and its buffered end
    stop (k, c) brings deck and car to rest (M + m) g / k past the stop."""
    m, M, k, drop = 1000.0, 4000.0, 2e6, 1.0
    w = deck(m, M / m, min_travel=-drop, stop_stiffness=k, stop_damping=2e5,
             cycle=[dict(state="hold"), dict(state="release", stopped="car", **{"for": 0.5})])
    t, s, j, st = run(w, 4000)
    assert st.status == "ok"
    events = [(e["kind"], e["joint"], round(e["t"], 3)) for e in w.mechanism_events]
    assert events[0] == ("joint_release", "lift", pytest.approx(0.5, abs=2e-3))
    held = t < 0.49
    np.testing.assert_allclose(s[held, 1, ch.Z], -0.5, atol=1e-9)
    np.testing.assert_allclose(j[held, 0, ch.J_DRIVE], (M + m) * G, rtol=1e-6)
    assert np.all(j[held, 0, ch.J_HELD] == 1)
    fall = (t > 0.52) & (s[:, 1, ch.Z] > -0.5 - drop)
    acc = np.gradient(s[fall, 1, ch.VZ], t[fall])
    np.testing.assert_allclose(acc[1:-1], -G, rtol=1e-6)
    np.testing.assert_allclose(s[fall, 0, ch.G_VERTICAL], 0.0, atol=1e-6)
    np.testing.assert_allclose(s[-1, 1, ch.Z], -0.5 - drop - (M + m) * G / k, atol=1e-4)
    np.testing.assert_allclose(s[-1, 0, ch.WHEEL_LOAD], m * G, rtol=1e-4)


def test_turntable_motor_profile():
    """A hinge motor turns a heavy table through a speed profile (trapezoid: 0 → 0.2 rad/s in 2 s,
    held, back to 0): the angle is the profile's integral, the torque I α on the ramps."""
    I = 2e5
    w = World(dt=1e-3)
    b = w.add_body("table", 5e4, inertia=(1e5, 1e5, I), position=(0, 0, -0.5))
    k = w.add_track(analytic.straight(20.0, n=201, origin=(-10.0, 0.0, 0.0)), body=b)
    w.add_train("loco", k, 1, CarSpec(1000.0, 4.0, 2.0, 2.0), start_s=10.0)
    prof = ((0.0, 0.0), (2.0, np.degrees(0.2)), (4.0, np.degrees(0.2)), (6.0, 0.0))
    w.add_joint("hinge", "world", ("body", b), anchor_a=(0, 0, -0.5), axis=(0, 0, 1), name="drive",
                motor_speed=tuple((tt, np.radians(v)) for tt, v in prof))
    t, s, j, st = run(w, 6000)
    assert st.status == "ok"
    tt = np.linspace(0.0, 6.0, 60001)
    speed = np.interp(tt, [0, 2, 4, 6], [0, 0.2, 0.2, 0])
    theta = np.interp(t, tt, np.concatenate([[0.0], np.cumsum((speed[1:] + speed[:-1]) / 2 * np.diff(tt))]))
    np.testing.assert_allclose(j[:, 0, ch.J_TRAVEL], theta, atol=2e-3)
    Iz = I + w.trains[0]["inertia"][2]
    ramp = (t > 0.1) & (t < 1.9)
    np.testing.assert_allclose(j[ramp, 0, ch.J_DRIVE], Iz * 0.1, rtol=1e-3)


def test_bad_input():
    w = World()
    with pytest.raises(InputError, match="no body with index 0"):
        w.add_track(analytic.straight(20.0), body=0)
    b = w.add_body("deck", 100.0, size=(1, 1, 1), position=(0, 0, 0))
    w.add_track(analytic.straight(20.0), body=b)
    w.add_train("car", 0, 1, CarSpec(100.0, 1.0, 0.5, 0.5), start_s=5.0)
    with pytest.raises(InputError, match="no train named 'cra'"):
        w.add_joint("prismatic", "world", ("body", b), axis=(0, 0, 1),
                    cycle=[dict(state="hold"), dict(state="release", stopped="cra")])
    with pytest.raises(InputError, match="must not decrease"):
        w.add_joint("prismatic", "world", ("body", b), axis=(0, 0, 1), motor_speed=((1.0, 0.0), (0.5, 1.0)))


def _spinning_train(bogies, cars, steps=500):
    """A train of ``cars`` 20 t cars (12 m, on bogies 8 m apart with cg_forward 0.8 m, or plain) on a
    radial track on a 200 t turntable spinning freely at 0.5 rad/s, the train at rest on the track
    at the start: it slides outwards (each car's m ω² r pulls the couplers taut), run ``steps`` steps (0.5 s)."""
    w = World(dt=1e-3)
    b = w.add_body("table", 2.0e5, inertia=(1e7, 1e7, 1e7), position=(0, 0, 0), angular_velocity=(0, 0, 0.5))
    length = 15.0 * cars + 60.0
    k = w.add_track(analytic.straight(length, n=int(length) * 10 + 1), body=b)
    spec = dict(mass=20000.0, length=12.0, width=3.0, height=3.0, cg_height=1.2)
    if bogies != "none":
        spec.update(bogies=bogies, bogie_spacing=8.0, bogie_mass=2000.0, cg_forward=0.8)
    w.add_train("t", k, cars, CarSpec(**spec), coupling=CouplingSpec(gap=1.0), start_s=15.0 * cars + 5.0)
    w.add_joint("hinge", "world", ("body", b), anchor_a=(0, 0, 0), axis=(0, 0, 1))
    if steps:
        w.run(steps, steps)
    return w


def _carried_joint_error(w):
    """The couplers' and swivels' impulses of one step of ``w`` (the kernel's solve) against a direct
    sparse solve of every equality row of the same step: each car's track rows 1–5 with their
    carrier's columns ``H`` (§9), every joint's rows (swivels, couplers, the hinge that holds the
    carrier). Returns the largest difference over the largest of those impulses."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from tests.physics.reference import _body_mobilities, _joint_rows, _one_step
    from trackrider.physics.joints import CODES
    from trackrider.physics.joints.common import JI_CHAIN, JI_KIND

    wd, tmp = _one_step(w, w.iterations, True)
    bodies, cars, trk = wd.bodies, wd.cars, tmp.trk
    nb = bodies.pos.shape[0]
    I, C, V, t, gam, where = [], [], [], [], [], []

    def add(body, vec, row):
        for q in range(6):
            if vec[q] != 0.0:
                I.append(row), C.append(6 * body + q), V.append(vec[q])

    for b in range(w.ncars):
        for r in range(5) if cars.held[b] else ():
            if r != 1 or cars.support[b]:
                add(b, trk.J[b, r], len(t))
                if trk.carrier[b] >= 0:
                    add(trk.kbody[trk.carrier[b]], trk.H[b, r], len(t))
                t.append(trk.target[b, r]), gam.append(0.0), where.append((-1, r))
    joints = list(range(w.ji.shape[0]))
    for j, r, parts, t_, gam_ in _joint_rows(w, tmp, joints)[1]:
        for body, vec in parts:
            if body >= 0:
                add(body, vec, len(t))
        t.append(t_), gam.append(gam_), where.append((j, r))
    J = sp.csr_matrix((V, (I, C)), shape=(len(t), 6 * nb))
    W = sp.block_diag(_body_mobilities(bodies), format="csr")
    u = np.hstack([tmp.scratch.vel0, tmp.scratch.omg0])[:nb].reshape(-1)
    lam = spla.spsolve((J @ W @ J.T + sp.diags(np.array(gam))).tocsc(), np.array(t) - J @ u)
    kinds = (CODES["distance"], CODES["swivel"])
    mine = [(i, j, r) for i, (j, r) in enumerate(where)
            if j >= 0 and w.ji[j, JI_KIND] in kinds and w.ji[j, JI_CHAIN] in (0, 1, 3)]
    exact = np.array([lam[i] for i, _, _ in mine])
    kernel = np.array([wd.joints.lam[j, r] for _, j, r in mine])
    assert np.max(np.abs(exact)) / w.dt > 50e3        # the joints are loaded (> 50 kN)
    return float(np.max(np.abs(kernel - exact)) / np.max(np.abs(exact)))


@pytest.mark.parametrize("bogies,cars", [("none", 3), ("none", 10), ("none", 30), ("two", 3), ("two", 10),
                                         ("two", 30), ("jacobs", 10), ("trailered", 10)])
def test_couplers_on_a_spinning_turntable_against_a_direct_solve(bogies, cars):
    """The couplers (and a train of cars on bogies: the swivels) of a train on a moving track against
    a direct solve of the step's equality rows (``_carried_joint_error``) within 1e-9: a plain train's
    chain and a bogie train's car blocks (two bogies a car, a Jacobs set, trailered) are solved exactly
    with the carrier (§9, Woodbury: measured 1.8e-13 … 4.0e-13 of the largest impulse)."""
    assert _carried_joint_error(_spinning_train(bogies, cars)) < 1e-9


def _angular_momentum_z(w):
    """Every body's angular momentum about the world's z axis (through the origin)."""
    w._build()
    bd = w.records.bodies
    L = 0.0
    for k in range(bd.pos.shape[0]):
        x, v, R = bd.pos[k], bd.vel[k], bd.rot[k]
        Iw = R @ np.diag(bd.ib[k]) @ R.T
        L += bd.mass[k] * (x[0] * v[1] - x[1] * v[0]) + (Iw @ bd.omg[k])[2]
    return L


@pytest.mark.parametrize("bogies", ["none", "two"])
def test_a_train_with_rolling_resistance_on_a_free_turntable_keeps_its_angular_momentum(bogies):
    """A 10-car train sliding out on a turntable that turns freely on its vertical hinge, with rolling
    resistance (bounded friction rows along T, between each wheel frame and the table: internal
    forces): the angular momentum of the table and every body about the axis, from the end of the
    first step, is kept within 1e-8 relative over 1 s (measured: 1.0e-9 plain, 9.4e-10 on bogies: the
    friction rows act at the track point, the car's row at its anchor, which its rows 1–2 keep there
    to the step's position error) while the friction takes kinetic energy (it falls every sample)."""
    w = _spinning_train(bogies, 10, steps=0)
    w.set_resistance(rolling=0.02, drag_area=0.0)
    w.run(1, 1)
    L0 = _angular_momentum_z(w)
    t, s, _, st = run(w, 1000, 50)
    assert st.status == "ok"
    assert abs(_angular_momentum_z(w) - L0) / abs(L0) < 1e-8
    ke = s[:, :, ch.KINETIC_ENERGY].sum(1)
    assert np.all(np.diff(ke) < 0.0)
    assert s[-1, 0, ch.S] > s[0, 0, ch.S] + 0.5      # it slid out
