"""Finite-difference checks of every Jacobian row kind: J·u = dC/dt along a random motion."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import qexp, qlog_error, qmul
from trackrider.curves.compact import C_B, C_N, C_P, C_T, NCOL, eval_track
from trackrider.physics import joints as jk
from trackrider.physics import kernels as kn
from trackrider.physics import state as st
from trackrider.physics.joints import common as jc
from trackrider.physics.joints import distance, pulley
from trackrider.physics.track_joint import mobility_of

RNG = np.random.default_rng(7)


def moved(pos, q, v, w, eps):
    """State after moving for time eps at constant velocity v and angular velocity w (world)."""
    return pos + eps * v, qmul(qexp(eps * w), q)


def rot(q):
    R = np.zeros((3, 3))
    kn.quat_to_mat(q, R)
    return R


class Track:
    def __init__(self, ct):
        self.ct = ct

    def frame(self, s):
        out = np.zeros(NCOL)
        eval_track(self.ct.data, 0, len(self.ct.data), self.ct.ds, self.ct.length, self.ct.closed, s, out)
        return out

    def closest(self, x, s):
        for _ in range(30):
            f = self.frame(s)
            s += np.dot(x - f[C_P:C_P + 3], f[C_T:C_T + 3])
        return s


@pytest.mark.parametrize("cg", [0.0, 0.7])
def test_track_joint_rows_match_finite_differences(cg):
    trk = Track(analytic.hilly_circle(R=30.0, amp=3.0, waves=3, n=8001))
    s0 = 37.0
    fr = trk.frame(s0)
    T, N, B = fr[C_T:C_T + 3], fr[C_N:C_N + 3], fr[C_B:C_B + 3]
    qf = np.zeros(4)
    kn.mat_to_quat(np.ascontiguousarray(np.column_stack([T, N, B])), qf)
    pos = fr[C_P:C_P + 3] + cg * B
    cars = st.make_cars(1)
    cars.frame[0], cars.cg[0], cars.support[0] = fr, cg, 1
    z = np.zeros
    bodies = st.Bodies(pos[None].copy(), qf[None].copy(), z((1, 3)), z((1, 3)), np.array([1 / 600.0]),
                       np.array([[1 / 200.0, 1 / 300.0, 1 / 400.0]]), np.array([[200.0, 300.0, 400.0]]),
                       np.array([600.0]), z((1, 3, 3)))
    tmp = st.make_temps(1, 0, [], [])
    kn.py_prepare_track_block(0, bodies, cars, 0.0, tmp.trk, tmp.wk)
    G, Wt = tmp.trk.J, mobility_of(tmp.trk, 0)[None]
    axes = [T, N, B]

    def constraint(p, q):
        up = rot(q)[:, 2]
        anchor = p - cg * up
        s = trk.closest(anchor, s0)
        f = trk.frame(s)
        qfs = np.zeros(4)
        kn.mat_to_quat(np.ascontiguousarray(np.column_stack([f[C_T:C_T + 3], f[C_N:C_N + 3], f[C_B:C_B + 3]])), qfs)
        th = np.zeros(3)
        qlog_error(q, qfs, th)
        d = anchor - f[C_P:C_P + 3]
        return np.array([d @ f[C_N:C_N + 3], d @ f[C_B:C_B + 3]] + [th @ e for e in axes])

    for _ in range(5):
        v = RNG.normal(size=3) * 5
        w = RNG.normal(size=3) * 0.5
        u = np.concatenate([v, w])
        eps = 1e-5
        cp = constraint(*moved(pos, qf, v, w, eps))
        cm = constraint(*moved(pos, qf, v, w, -eps))
        fd = (cp - cm) / (2 * eps)
        Ju = G[0] @ u
        np.testing.assert_allclose(Ju, fd, atol=2e-4 * np.linalg.norm(u))
    # W̃ keeps the track rows satisfied: G W̃ = 0
    assert np.max(np.abs(G[0] @ Wt[0])) < 1e-12


def _joint_setup(kind, slack=False):
    nb = 2
    pos = RNG.normal(size=(nb, 3))
    quat = np.array([qexp(RNG.normal(size=3)) for _ in range(nb)])
    ji = np.zeros((1, jc.NJI), np.int64)
    jf = np.zeros((1, jc.NJF))
    ji[0, jc.JI_KIND], ji[0, jc.JI_A], ji[0, jc.JI_B] = kind, 0, 1
    jf[0, jc.LA:jc.LA + 3] = RNG.normal(size=3)
    jf[0, jc.LB:jc.LB + 3] = RNG.normal(size=3)
    if kind == jk.CODES["pulley"]:
        jf[0, pulley.GROUND_A:pulley.GROUND_A + 3] = pos[0] + [0.3, 0.2, 5.0]
        jf[0, pulley.GROUND_B:pulley.GROUND_B + 3] = pos[1] + [-0.4, 0.1, 4.0]
        jf[0, pulley.RATIO] = 1.7
        jf[0, pulley.ROPE] = 1.0
    if kind == jk.CODES["distance"]:
        jf[0, distance.LENGTH] = 1.0
    if kind == jk.CODES["ball_track"]:  # anchors meet: C = 0
        pa = pos[0] + rot(quat[0]) @ jf[0, jc.LA:jc.LA + 3]
        pos[1] = pa - rot(quat[1]) @ jf[0, jc.LB:jc.LB + 3]
    return pos, quat, ji, jf


def _joint_C(kind, pos, quat, jf, n_fixed=None):
    pa = pos[0] + rot(quat[0]) @ jf[0, jc.LA:jc.LA + 3]
    pb = pos[1] + rot(quat[1]) @ jf[0, jc.LB:jc.LB + 3]
    if kind == jk.CODES["distance"]:
        return np.array([np.linalg.norm(pb - pa) - jf[0, distance.LENGTH]])
    if kind == jk.CODES["ball"]:
        return pa - pb
    if kind == jk.CODES["ball_track"]:
        return np.array([(pa - pb) @ n_fixed])
    la = np.linalg.norm(pa - jf[0, pulley.GROUND_A:pulley.GROUND_A + 3])
    lb = np.linalg.norm(pb - jf[0, pulley.GROUND_B:pulley.GROUND_B + 3])
    return np.array([jf[0, pulley.ROPE] - (la + jf[0, pulley.RATIO] * lb)])


@pytest.mark.parametrize("kind", [jk.CODES["distance"], jk.CODES["ball"], jk.CODES["pulley"], jk.CODES["ball_track"]])
def test_joint_rows_match_finite_differences(kind):
    pos, quat, ji, jf = _joint_setup(kind)
    rows = kn.joint_rows(ji, jf, pos, quat, 1e-3, 0.0)
    jJ, jm = rows.J, rows.m
    m = jm[0]
    n_fixed = None
    if kind == jk.CODES["ball_track"]:
        n_fixed = rot(quat[0])[:, 0] + rot(quat[1])[:, 0]
        n_fixed /= np.linalg.norm(n_fixed)
    for _ in range(5):
        v = RNG.normal(size=(2, 3))
        w = RNG.normal(size=(2, 3))
        eps = 1e-6
        states = []
        for sgn in (1, -1):
            p = pos.copy()
            q = quat.copy()
            for b in range(2):
                p[b], q[b] = moved(pos[b], quat[b], v[b], w[b], sgn * eps)
            states.append(_joint_C(kind, p, q, jf, n_fixed))
        fd = (states[0] - states[1]) / (2 * eps)
        u = np.concatenate([v[0], w[0], v[1], w[1]])
        Ju = jJ[0, :m] @ u
        np.testing.assert_allclose(Ju, fd, rtol=1e-6, atol=1e-7)
