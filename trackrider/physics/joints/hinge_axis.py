"""One angular row about a hinge's axis: angle limits (end stops), a motor / damper, or a hold
(docs/physics.md §3, §9).

    a_w = R_a ax,   J = [0, −a_w, 0, a_w]   (J·u = (ω_b − ω_a)·a_w = dθ/dt)
    θ = atan2((r_a × r_b)·a_w, r_a·r_b), reference normals r_a = R_a p_1, r_b = R_b p_2
        (equal at the start: θ = 0)
    limits [lo, hi] (``slack``): the nearer one is a one-sided row (``common.one_sided``); with a
        buffer (STOP_K N·m/rad, STOP_C N·m·s/rad: a spring and damper that only push) a soft
        one-sided row once the stop is reached
    MODE_MOTOR motor / damper: target SPEED, bounds ±MAX_TORQUE·h, damping c as softness γ = 1/(h c)
        (c = 0: a rigid motor)
    MODE_HOLD  while ACTIVE: target −erp/h (θ − HOLD_AT), unbounded (the angle locked); ACTIVE 2: lock
        where it is now; 0: released (no row)

Parameters: AXIS, REF_A, REF_B (limits, hold), MIN_ANGLE, MAX_ANGLE, SPEED, MAX_TORQUE, DAMPING, MODE,
HOLD_AT, ACTIVE, STOP_K, STOP_C. A motor's speed and torque may follow a profile in time
(``programs.py`` writes the columns each step).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import axis_w, buffered_stop, hold_row, one_sided, param_columns, set_row
from trackrider.physics.maths import cross

# parameter columns: the hinge's axis in a's axes; reference normals in a's and b's axes (equal at the start);
# angle limits rad; motor speed rad/s; its torque bound N·m (inf: unbounded); damping N·m·s/rad; the row's mode;
# a hold's angle rad and state; the end stops' buffer N·m/rad, N·m·s/rad
(AXIS, REF_A, REF_B, MIN_ANGLE, MAX_ANGLE, SPEED, MAX_TORQUE, DAMPING, MODE, HOLD_AT, ACTIVE, STOP_K, STOP_C,
 END) = param_columns(3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
MODE_MOTOR, MODE_HOLD = 0, 2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def angle(j, a, b, rot, jf, axx, axy, axz):
    """θ of b relative to a about the axis, from the reference normals (0 at the start)."""
    u0, u1, u2 = axis_w(a, rot, jf, j, REF_A)
    w0, w1, w2 = axis_w(b, rot, jf, j, REF_B)
    c0, c1, c2 = cross(u0, u1, u2, w0, w1, w2)
    return np.arctan2(c0 * axx + c1 * axy + c2 * axz, u0 * w0 + u1 * w1 + u2 * w2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rows.m[j] = 1
    axx, axy, axz = axis_w(a, bodies.rot, jf, j, AXIS)
    set_row(rows.J, j, 0, (0.0, 0.0, 0.0), (-axx, -axy, -axz), (0.0, 0.0, 0.0), (axx, axy, axz))
    if joints.slack[j]:
        th = angle(j, a, b, bodies.rot, jf, axx, axy, axz)
        if jf[j, STOP_K] > 0.0 or jf[j, STOP_C] > 0.0:
            buffered_stop(j, th, jf[j, MIN_ANGLE], jf[j, MAX_ANGLE], jf[j, STOP_K], jf[j, STOP_C], h, rows)
        else:
            one_sided(j, th, jf[j, MIN_ANGLE], jf[j, MAX_ANGLE], h, erp_h, rows)
    elif jf[j, MODE] == MODE_HOLD:
        hold_row(j, angle(j, a, b, bodies.rot, jf, axx, axy, axz), HOLD_AT, ACTIVE, True, erp_h, joints, rows)
    else:
        rows.target[j, 0] = jf[j, SPEED]
        rows.lo[j, 0] = -jf[j, MAX_TORQUE] * h
        rows.hi[j, 0] = jf[j, MAX_TORQUE] * h
        if jf[j, DAMPING] > 0.0:
            rows.gamma[j] = 1.0 / (h * jf[j, DAMPING])
