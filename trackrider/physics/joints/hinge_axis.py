"""One angular row about a hinge's axis: angle limits, or a motor / damper (docs/physics.md §3).

    a_w = R_a ax,   J = [0, −a_w, 0, a_w]   (J·u = (ω_b − ω_a)·a_w = dθ/dt)
    θ = atan2((r_a × r_b)·a_w, r_a·r_b), reference normals r_a = R_a p_1, r_b = R_b p_2
        (equal at the start: θ = 0)
    limits [lo, hi] (``slack``): the nearer one is a one-sided row (``common.one_sided``)
    motor / damper: target SPEED, bounds ±MAX_TORQUE·h, damping c as softness γ = 1/(h c)
        (c = 0: a rigid motor)

Parameters: AXIS, REF_A, REF_B (limits), MIN_ANGLE, MAX_ANGLE, SPEED, MAX_TORQUE, DAMPING.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import axis_w, one_sided, param_columns, set_row
from trackrider.physics.maths import cross

# parameter columns: the hinge's axis in a's axes; reference normals in a's and b's axes (equal at the start);
# angle limits rad; motor speed rad/s; its torque bound N·m (inf: unbounded); damping N·m·s/rad
AXIS, REF_A, REF_B, MIN_ANGLE, MAX_ANGLE, SPEED, MAX_TORQUE, DAMPING, END = param_columns(3, 3, 3, 1, 1, 1, 1, 1)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rows.m[j] = 1
    axx, axy, axz = axis_w(a, bodies.rot, jf, j, AXIS)
    set_row(rows.J, j, 0, (0.0, 0.0, 0.0), (-axx, -axy, -axz), (0.0, 0.0, 0.0), (axx, axy, axz))
    if joints.slack[j]:
        u0, u1, u2 = axis_w(a, bodies.rot, jf, j, REF_A)
        w0, w1, w2 = axis_w(b, bodies.rot, jf, j, REF_B)
        c0, c1, c2 = cross(u0, u1, u2, w0, w1, w2)
        th = np.arctan2(c0 * axx + c1 * axy + c2 * axz, u0 * w0 + u1 * w1 + u2 * w2)
        one_sided(j, th, jf[j, MIN_ANGLE], jf[j, MAX_ANGLE], h, erp_h, rows)
    else:
        rows.target[j, 0] = jf[j, SPEED]
        rows.lo[j, 0] = -jf[j, MAX_TORQUE] * h
        rows.hi[j, 0] = jf[j, MAX_TORQUE] * h
        if jf[j, DAMPING] > 0.0:
            rows.gamma[j] = 1.0 / (h * jf[j, DAMPING])
