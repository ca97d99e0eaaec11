"""Hinge: a ball joint plus two angular rows that keep an axis (one 5×5 block; PHYSICS.md §3).

    rows 0–2   the ball rows (``ball.ball_rows``)
    a_w = R_a ax (axis fixed in a),  b_k = R_b p_k (k = 1, 2: normals fixed in b, ⟂ axis at the start)
    C_k = a_w·b_k
    Ċ_k = (ω_a × a_w)·b_k + a_w·(ω_b × b_k) = ω_a·(a_w × b_k) − ω_b·(a_w × b_k)
    J_k = [0, a_w × b_k, 0, −(a_w × b_k)],   target −erp/h · C_k,   K = J W̃ Jᵀ (5×5 with the ball)

Parameters: JF_LA, JF_LB, JF_AX, JF_P1, JF_P2. Angle limits, motor and damper are a second
joint row of kind hinge_axis (``hinge_axis.py``).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.ball import ball_rows
from trackrider.physics.joints.common import JF_AX, JF_C, JF_LA, JF_LB, JF_MAX, JF_MIN, JF_P1, JF_P2, JF_TQ, JF_V, anchor, \
    axis_normals, axis_w, set_row
from trackrider.physics.maths import cross


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, JF_LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, JF_LB)
    rows.m[j] = 5
    ball_rows(j, rows, (rax, ray, raz), (rbx, rby, rbz), (pax - pbx, pay - pby, paz - pbz), erp_h)
    axx, axy, axz = axis_w(a, bodies.rot, jf, j, JF_AX)
    for k in range(2):
        bx_, by_, bz_ = axis_w(b, bodies.rot, jf, j, JF_P1 + 3 * k)
        c0, c1, c2 = cross(axx, axy, axz, bx_, by_, bz_)
        set_row(rows.J, j, 3 + k, (0.0, 0.0, 0.0), (c0, c1, c2), (0.0, 0.0, 0.0), (-c0, -c1, -c2))
        rows.target[j, 3 + k] = -erp_h * (axx * bx_ + axy * by_ + axz * bz_)
        rows.lo[j, 3 + k] = -np.inf
        rows.hi[j, 3 + k] = np.inf


def columns(c):
    """Parameter columns at creation (``common.Created``): the axis in a's axes and two normals in
    b's; a limit and a motor / damper are extra rows (``hinge_axis``: (kind, slack, columns))."""
    f, p = c.f, c.p
    ax_a = p["axis"]
    n1, n2 = axis_normals(c.Ra @ ax_a)
    f[JF_AX:JF_AX + 3] = ax_a
    f[JF_P1:JF_P1 + 3] = c.Rb.T @ n1
    f[JF_P2:JF_P2 + 3] = c.Rb.T @ n2
    extra = []
    lo, hi = p.get("min_angle"), p.get("max_angle")
    if lo is not None or hi is not None:
        g = f.copy()
        g[JF_P1:JF_P1 + 3] = c.Ra.T @ n1
        g[JF_P2:JF_P2 + 3] = c.Rb.T @ n1
        g[JF_MIN] = -1e30 if lo is None else lo
        g[JF_MAX] = 1e30 if hi is None else hi
        extra.append(("hinge_axis", 1, g))
    if p.get("motor_speed") is not None or p.get("damping"):
        g = f.copy()
        g[JF_V] = p.get("motor_speed") or 0.0
        g[JF_TQ] = p["max_torque"] if p.get("max_torque") is not None else np.inf
        g[JF_C] = p.get("damping") or 0.0
        extra.append(("hinge_axis", 0, g))
    return extra
