"""One angular row about a hinge's axis: angle limits, or a motor / damper (PHYSICS.md §3).

    a_w = R_a ax,   J = [0, −a_w, 0, a_w]   (J·u = (ω_b − ω_a)·a_w = dθ/dt)
    θ = atan2((r_a × r_b)·a_w, r_a·r_b), reference normals r_a = R_a p_1, r_b = R_b p_2
        (equal at the start: θ = 0)
    limits [lo, hi] (``slack``): the nearer one is a one-sided row (``common.one_sided``)
    motor / damper: target JF_V, bounds ±JF_TQ·h, damping c as softness γ = 1/(h c)
        (c = 0: a rigid motor)

Parameters: JF_AX, JF_P1, JF_P2 (limits), JF_MIN, JF_MAX, JF_V, JF_TQ, JF_C.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JF_AX, JF_C, JF_MAX, JF_MIN, JF_P1, JF_P2, JF_TQ, JF_V, axis_w, \
    one_sided, set_row
from trackrider.physics.maths import cross


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rows.m[j] = 1
    axx, axy, axz = axis_w(a, bodies.rot, jf, j, JF_AX)
    set_row(rows.J, j, 0, (0.0, 0.0, 0.0), (-axx, -axy, -axz), (0.0, 0.0, 0.0), (axx, axy, axz))
    if joints.slack[j]:
        u0, u1, u2 = axis_w(a, bodies.rot, jf, j, JF_P1)
        w0, w1, w2 = axis_w(b, bodies.rot, jf, j, JF_P2)
        c0, c1, c2 = cross(u0, u1, u2, w0, w1, w2)
        th = np.arctan2(c0 * axx + c1 * axy + c2 * axz, u0 * w0 + u1 * w1 + u2 * w2)
        one_sided(j, th, jf[j, JF_MIN], jf[j, JF_MAX], h, erp_h, rows)
    else:
        rows.target[j, 0] = jf[j, JF_V]
        rows.lo[j, 0] = -jf[j, JF_TQ] * h
        rows.hi[j, 0] = jf[j, JF_TQ] * h
        if jf[j, JF_C] > 0.0:
            rows.gamma[j] = 1.0 / (h * jf[j, JF_C])
