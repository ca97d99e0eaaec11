"""Free bodies and the joints of issue 7: ball (double / triple pendulum), hinge, prismatic,
their limit / motor / spring rows, and finite-difference checks of every new Jacobian.

Energy of a pendulum is measured as the step-centred energy of the semi-implicit Euler scheme:
kinetic energy after the step plus the potential energy at the middle of the step,
``KE_{n+1} + (PE_n + PE_{n+1})/2``. The raw end-of-step sum ``KE + PE`` of the recorded channels
oscillates by O(h ω) (±0.13 % of the swing energy for the double pendulum below at 1 ms) without
drifting; the step-centred sum removes that first-order term and shows the real drift.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import qexp, qlog_error, qmul
from trackrider.physics import World
from trackrider.physics import channels as ch
from trackrider.physics import joints as jk
from trackrider.physics import kernels as kn
from trackrider.physics.joints import common as jc
from trackrider.physics.joints import hinge, hinge_axis, prismatic, slide

G = 9.81
RNG = np.random.default_rng(11)


def rot(q):
    R = np.zeros((3, 3))
    kn.quat_to_mat(np.asarray(q, dtype=np.float64), R)
    return R


def chain_pendulum(lengths, masses, angles, size=0.1, dt=1e-3, erp=0.2, omegas=None):
    """Planar (x–z) chain of small boxes on ball joints, pivot at the origin: body k hangs l_k below
    the previous body's centre. Returns the world."""
    w = World(dt=dt, iterations=20, erp=erp)
    p_prev = np.zeros(3)
    prev = "world"
    vel = np.zeros(3)
    for k, (l, m, th) in enumerate(zip(lengths, masses, angles)):
        p = p_prev + l * np.array([np.sin(th), 0.0, -np.cos(th)])
        if omegas is not None:
            vel = vel + omegas[k] * l * np.array([np.cos(th), 0.0, np.sin(th)])
        b = w.add_body(f"b{k}", m, size=(size, size, size), position=p, velocity=vel,
                       angular_velocity=(0.0, omegas[k] if omegas is not None else 0.0, 0.0))
        w.add_joint("ball", ("body", b), prev, anchor_a=p_prev - p, anchor_b=(0.0, 0.0, 0.0) if prev != "world"
                    else p_prev)
        prev = ("body", b)
        p_prev = p
    return w


def centred_energy(s):
    KE = s[:, :, ch.KINETIC_ENERGY].sum(1)
    PE = s[:, :, ch.POTENTIAL_ENERGY].sum(1)
    return KE[1:] + 0.5 * (PE[1:] + PE[:-1]), KE + PE


def rest_energy(lengths, masses):
    z, e = 0.0, 0.0
    for l, m in zip(lengths, masses):
        z -= l
        e += m * G * z
    return e


def test_double_pendulum_energy_20s():
    """Seed 004's double pendulum, large swing (0.5, 0.9 rad): step-centred energy within 0.1 % of
    the swing energy over 20 s at dt = 1 ms; the ball joints hold to 1e-4 m."""
    L, M = (1.0, 0.8), (2.0, 1.0)
    w = chain_pendulum(L, M, (0.5, 0.9))
    t, s, st = analytic.run(w, 20000, 1)
    assert st.ok
    Ec, Eraw = centred_energy(s)
    swing = Eraw[0] - rest_energy(L, M)
    assert swing > 5.0
    assert np.max(np.abs(Ec - Ec[0])) / swing < 1e-3
    assert np.max(np.abs(Eraw - Eraw[0])) / swing < 3e-3   # the raw O(h ω) band, no drift
    r1 = np.hypot(s[:, 0, ch.X], s[:, 0, ch.Z])
    d12 = np.sqrt((s[:, 1, ch.X] - s[:, 0, ch.X]) ** 2 + (s[:, 1, ch.Y] - s[:, 0, ch.Y]) ** 2
                  + (s[:, 1, ch.Z] - s[:, 0, ch.Z]) ** 2)
    assert np.max(np.abs(r1 - L[0])) < 1e-4 and np.max(np.abs(d12 - L[1])) < 1e-4


def _modes(L, M, size):
    I = [m / 12.0 * 2 * size ** 2 for m in M]
    (l1, l2), (m1, m2) = L, M
    Mm = np.array([[m1 * l1 ** 2 + I[0] + m2 * l1 ** 2, m2 * l1 * l2], [m2 * l1 * l2, m2 * l2 ** 2 + I[1]]])
    K = np.diag([(m1 + m2) * G * l1, m2 * G * l2])
    ev, vec = np.linalg.eig(np.linalg.solve(Mm, K))
    order = np.argsort(ev)
    return np.sqrt(ev[order]), vec[:, order]


@pytest.mark.parametrize("mode", [0, 1])
def test_double_pendulum_normal_modes(mode):
    """Started in a normal mode of the linearised system (amplitude 0.02 rad), the pendulum
    oscillates at that mode's frequency: period from zero crossings over 20 s within 0.2 %."""
    L, M, size = (1.0, 0.8), (2.0, 1.0), 0.1
    om, vec = _modes(L, M, size)
    v = vec[:, mode] / np.max(np.abs(vec[:, mode])) * 0.02
    w = chain_pendulum(L, M, v, size=size)
    t, s, st = analytic.run(w, 20000, 1)
    assert st.ok
    th1 = np.arctan2(s[:, 0, ch.X], -s[:, 0, ch.Z])
    th2 = np.arctan2(s[:, 1, ch.X] - s[:, 0, ch.X], -(s[:, 1, ch.Z] - s[:, 0, ch.Z]))
    for th in (th1, th2):
        i = np.nonzero(np.sign(th[1:]) != np.sign(th[:-1]))[0]
        tc = t[i] - th[i] * (t[i + 1] - t[i]) / (th[i + 1] - th[i])
        period = 2.0 * (tc[-1] - tc[0]) / (len(tc) - 1)
        assert abs(period / (2 * np.pi / om[mode]) - 1.0) < 2e-3
    # the other mode is absent: the ratio θ2/θ1 stays the eigenvector's
    k = np.argmax(np.abs(th1))
    assert abs(th2[k] / th1[k] - v[1] / v[0]) < 0.02 * abs(v[1] / v[0])


def test_triple_pendulum_stable_energy():
    """Triple pendulum, large swing: runs 20 s stably, step-centred energy within 0.5 %."""
    L, M = (1.0, 0.8, 0.6), (2.0, 1.5, 1.0)
    w = chain_pendulum(L, M, (0.8, 1.2, 1.6))
    t, s, st = analytic.run(w, 20000, 1)
    assert st.ok and np.all(np.isfinite(s[:, :, ch.X]))
    Ec, Eraw = centred_energy(s)
    swing = Eraw[0] - rest_energy(L, M)
    assert np.max(np.abs(Ec - Ec[0])) / swing < 5e-3


def test_prismatic_slides_at_g_sin_alpha_and_holds_at_limit():
    """A body on a prismatic joint to the world along a 30° incline: travel = ½ g sin α t² until the
    1 m limit, then it stays there (within 1 mm) without turning."""
    alpha = np.radians(30.0)
    u = np.array([np.cos(alpha), 0.0, -np.sin(alpha)])
    w = World(dt=1e-3)
    b = w.add_body("slider", 5.0, size=(0.3, 0.2, 0.1), position=(0.0, 0.0, 0.0))
    w.add_joint("prismatic", "world", ("body", b), axis=u, max_travel=1.0)
    t, s, st = analytic.run(w, 2000, 1)
    assert st.ok
    x = s[:, 0, ch.X:ch.Z + 1] @ u
    lateral = s[:, 0, ch.X:ch.Z + 1] - x[:, None] * u
    a = G * np.sin(alpha)
    t_hit = np.sqrt(2.0 / a)
    free = t < 0.9 * t_hit
    # semi-implicit Euler: x_n = ½ a t_n² + ½ a h t_n exactly
    np.testing.assert_allclose(x[free], 0.5 * a * t[free] ** 2, atol=0.5 * a * 1e-3 * t[free].max() + 1e-9)
    held = t > t_hit + 0.2
    assert np.max(np.abs(x[held] - 1.0)) < 1e-3
    assert np.max(np.abs(s[held, 0, ch.VX:ch.VZ + 1])) < 1e-2
    assert np.max(np.abs(lateral)) < 1e-6
    assert np.max(np.abs(s[:, 0, ch.WX:ch.WZ + 1])) < 1e-9


def test_prismatic_spring_oscillates_at_sqrt_k_over_m():
    """A vertical prismatic with a spring: period 2π √(m/k) within 0.5 %, centred on the sag m g/k
    (within 2 %). The soft-row spring is implicit: it damps with ζ ≈ h ω/2 (1 % here)."""
    m, k = 2.0, 800.0
    w = World(dt=1e-3)
    b = w.add_body("mass", m, size=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
    w.add_joint("prismatic", "world", ("body", b), axis=(0.0, 0.0, 1.0), stiffness=k)
    t, s, st = analytic.run(w, 5000, 1)
    assert st.ok
    z = s[:, 0, ch.Z] + m * G / k
    i = np.nonzero(np.sign(z[1:]) != np.sign(z[:-1]))[0]
    tc = t[i] - z[i] * (t[i + 1] - t[i]) / (z[i + 1] - z[i])
    period = 2.0 * (tc[-1] - tc[0]) / (len(tc) - 1)
    assert abs(period / (2 * np.pi * np.sqrt(m / k)) - 1.0) < 5e-3
    whole = (t >= tc[0]) & (t < tc[-1])
    assert abs(np.mean(z[whole])) < 0.02 * m * G / k


def test_hinge_keeps_axis_under_load():
    """A heavy plate on a horizontal hinge to the world, its centre of mass 0.5 m along the axis and
    0.8 m off it, swings under gravity (the load bends the axis): the body's axis stays on the world
    axis within 1e-4 rad and the pivot within 1e-4 m over 5 s; it swings in the hinge plane."""
    w = World(dt=1e-3)
    b = w.add_body("plate", 50.0, size=(0.4, 0.1, 0.4), position=(0.8, 0.5, 0.0))
    w.add_joint("hinge", ("body", b), "world", anchor_a=(-0.8, -0.5, 0.0), anchor_b=(0.0, 0.0, 0.0),
                axis=(0.0, 1.0, 0.0))
    t, s, st = analytic.run(w, 5000, 1)
    assert st.ok
    err = []
    for k in range(len(t)):
        R = rot(s[k, 0, ch.QW:ch.QZ + 1])
        ax = R[:, 1]
        err.append(np.arccos(min(1.0, ax[1])))
        piv = s[k, 0, ch.X:ch.Z + 1] + R @ np.array([-0.8, -0.5, 0.0])
        assert np.linalg.norm(piv) < 1e-4
    assert max(err) < 1e-4
    assert s[:, 0, ch.Z].min() < -0.7   # it did swing down


def test_hinge_limit_and_motor():
    """A hinge limit stops a falling arm 30° below the horizon (within 0.5°); a motor turns a wheel at
    its speed (1e-6 rad/s). The hinge angle is b's turn relative to a about the axis."""
    w = World(dt=1e-3)
    b = w.add_body("arm", 10.0, size=(1.0, 0.1, 0.1), position=(0.5, 0.0, 0.0))
    w.add_joint("hinge", ("body", b), "world", anchor_a=(-0.5, 0.0, 0.0), anchor_b=(0.0, 0.0, 0.0),
                axis=(0.0, 1.0, 0.0), min_angle=np.radians(-30.0), max_angle=np.radians(30.0))
    wheel = w.add_body("wheel", 10.0, size=(0.5, 0.1, 0.5), position=(5.0, 0.0, 0.0))
    w.add_joint("hinge", "world", ("body", wheel), axis=(0.0, 1.0, 0.0), motor_speed=2.0, max_torque=1e4)
    t, s, st = analytic.run(w, 3000, 1)
    assert st.ok
    # the arm (a) falls turning by φ > 0 about +y (R_y(φ) x = (cos φ, 0, −sin φ)); the world (b) turns by
    # θ = −φ relative to it: the min_angle −30° catches it
    ang = np.degrees(np.arcsin(-s[-1000:, 0, ch.Z] / 0.5))
    assert np.max(np.abs(ang - 30.0)) < 0.5
    assert np.max(np.abs(s[-1000:, 1, ch.WY] - 2.0)) < 1e-6


# ----------------------------------------------------------------------------- finite differences
def _two_bodies():
    pos = RNG.normal(size=(2, 3))
    quat = np.array([qexp(RNG.normal(size=3)) for _ in range(2)])
    return pos, quat


def _jf(kind, quat, slack=0):
    ji = np.zeros((1, jc.NJI), np.int64)
    jf = np.zeros((1, jc.NJF))
    ji[0, jc.JI_KIND], ji[0, jc.JI_A], ji[0, jc.JI_B], ji[0, jc.JI_SLACK] = kind, 0, 1, slack
    jf[0, jc.LA:jc.LA + 3] = RNG.normal(size=3)
    jf[0, jc.LB:jc.LB + 3] = RNG.normal(size=3)
    ax = RNG.normal(size=3)
    ax /= np.linalg.norm(ax)
    M = jk.kind(jk.KINDS[kind][0])
    jf[0, M.AXIS:M.AXIS + 3] = ax
    n1 = np.cross(ax, [1.0, 0.0, 0.0])
    n1 /= np.linalg.norm(n1)
    n2 = np.cross(ax, n1)
    Ra, Rb = rot(quat[0]), rot(quat[1])
    if kind == jk.CODES["hinge"]:  # normals in b axes
        jf[0, hinge.NORMAL_1:hinge.NORMAL_1 + 3] = Rb.T @ Ra @ n1
        jf[0, hinge.NORMAL_2:hinge.NORMAL_2 + 3] = Rb.T @ Ra @ n2
    elif kind == jk.CODES["prismatic"]:
        jf[0, prismatic.NORMAL_1:prismatic.NORMAL_1 + 3] = n1
        jf[0, prismatic.NORMAL_2:prismatic.NORMAL_2 + 3] = n2
        jf[0, prismatic.Q_REL:prismatic.Q_REL + 4] = qmul(quat[0] * [1, -1, -1, -1], quat[1])  # at rest: θ = 0
    elif kind == jk.CODES["hinge_axis"]:
        jf[0, hinge_axis.REF_A:hinge_axis.REF_A + 3] = n1
        jf[0, hinge_axis.REF_B:hinge_axis.REF_B + 3] = Rb.T @ Ra @ (np.cos(0.3) * n1 + np.sin(0.3) * n2)
        jf[0, hinge_axis.MIN_ANGLE], jf[0, hinge_axis.MAX_ANGLE] = -1.0, 1.0
    elif kind == jk.CODES["slide"]:
        jf[0, slide.MIN_TRAVEL], jf[0, slide.MAX_TRAVEL] = -10.0, 10.0
    return ji, jf


def _C(kind, pos, quat, jf, q_rel=None):
    Ra, Rb = rot(quat[0]), rot(quat[1])
    pa = pos[0] + Ra @ jf[0, jc.LA:jc.LA + 3]
    pb = pos[1] + Rb @ jf[0, jc.LB:jc.LB + 3]
    M = jk.kind(jk.KINDS[kind][0])
    ax = Ra @ jf[0, M.AXIS:M.AXIS + 3]
    if kind == jk.CODES["hinge"]:
        return np.concatenate([pa - pb, [ax @ (Rb @ jf[0, hinge.NORMAL_1:hinge.NORMAL_1 + 3]),
                                         ax @ (Rb @ jf[0, hinge.NORMAL_2:hinge.NORMAL_2 + 3])]])
    if kind == jk.CODES["prismatic"]:
        d = pb - pa
        th = np.zeros(3)
        tq = qmul(quat[0], jf[0, prismatic.Q_REL:prismatic.Q_REL + 4])
        qlog_error(quat[1], tq, th)
        return np.concatenate([[d @ (Ra @ jf[0, prismatic.NORMAL_1:prismatic.NORMAL_1 + 3]),
                                d @ (Ra @ jf[0, prismatic.NORMAL_2:prismatic.NORMAL_2 + 3])], th])
    if kind == jk.CODES["hinge_axis"]:
        ra = Ra @ jf[0, hinge_axis.REF_A:hinge_axis.REF_A + 3]
        rb = Rb @ jf[0, hinge_axis.REF_B:hinge_axis.REF_B + 3]
        return np.array([np.arctan2(np.cross(ra, rb) @ ax, ra @ rb)])
    return np.array([(pb - pa) @ ax])   # slide


@pytest.mark.parametrize("kind", [jk.CODES["hinge"], jk.CODES["prismatic"], jk.CODES["hinge_axis"], jk.CODES["slide"]])
def test_new_joint_rows_match_finite_differences(kind):
    """J·u = dC/dt (central differences, ε = 1e-6) at random states and motions, for every row of
    the hinge, the prismatic (with its moving-axis term), the hinge angle row and the slide row."""
    for _ in range(4):
        pos, quat = _two_bodies()
        ji, jf = _jf(kind, quat, slack=1 if kind in (jk.CODES["hinge_axis"], jk.CODES["slide"]) else 0)
        rows = kn.joint_rows(ji, jf, pos, quat, 1e-3, 0.0)
        jJ, jm = rows.J, rows.m
        m = jm[0]
        v = RNG.normal(size=(2, 3))
        w = RNG.normal(size=(2, 3))
        eps = 1e-6
        cs = []
        for sgn in (1, -1):
            p = pos + sgn * eps * v
            q = np.array([qmul(qexp(sgn * eps * w[b]), quat[b]) for b in range(2)])
            cs.append(_C(kind, p, q, jf))
        fd = (cs[0] - cs[1]) / (2 * eps)
        u = np.concatenate([v[0], w[0], v[1], w[1]])
        np.testing.assert_allclose(jJ[0, :m] @ u, fd, rtol=1e-6, atol=1e-7)


def test_slider_on_a_spinning_arm_conserves_angular_momentum():
    """No gravity: an arm spins on a vertical hinge, a slider on a prismatic along the arm flies
    outward (the moving axis: its Jacobian's ω_a·(n × d) term) and stops at its limit. Angular
    momentum about the hinge axis is conserved within 1e-3 throughout; kinetic energy within 1e-3
    until the limit catches the slider (then the perfectly plastic stop takes some)."""
    w = World(gravity=0.0, dt=1e-3)
    arm = w.add_body("arm", 10.0, size=(2.0, 0.1, 0.1), position=(0.0, 0.0, 0.0), angular_velocity=(0, 0, 1.0))
    sl = w.add_body("slider", 1.0, size=(0.1, 0.1, 0.1), position=(0.5, 0.0, 0.0), velocity=(0.0, 0.5, 0.0),
                    angular_velocity=(0, 0, 1.0))
    w.add_joint("hinge", "world", ("body", arm), anchor_a=(0.0, 0.0, 0.0), anchor_b=(0.0, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0))
    w.add_joint("prismatic", ("body", arm), ("body", sl), axis=(1.0, 0.0, 0.0), max_travel=0.4)
    t, s, st = analytic.run(w, 4000, 1)
    assert st.ok
    Iz = np.array([10.0 / 12 * (4.0 + 0.01), 1.0 / 12 * 0.02])
    m = np.array([10.0, 1.0])
    L = np.zeros(len(t))
    for k in (0, 1):
        L += Iz[k] * s[:, k, ch.WZ] + m[k] * (s[:, k, ch.X] * s[:, k, ch.VY] - s[:, k, ch.Y] * s[:, k, ch.VX])
    L0 = Iz[0] * 1.0 + Iz[1] * 1.0 + 1.0 * 0.5 * 0.5
    assert np.max(np.abs(L - L0)) / L0 < 1e-3
    r = np.hypot(s[:, 1, ch.X], s[:, 1, ch.Y])
    assert abs(r[-1] - 0.9) < 1e-3                      # held at its limit
    free = r < 0.85
    KE = s[:, :, ch.KINETIC_ENERGY].sum(1)
    KE0 = 0.5 * (Iz[0] + Iz[1]) + 0.5 * 1.0 * 0.25
    assert free.sum() > 100 and np.max(np.abs(KE[free] - KE0)) / KE0 < 1e-3
    assert np.max(np.abs(s[:, 1, ch.WZ] - s[:, 0, ch.WZ])) < 1e-6   # it turns with the arm
