"""One row along a prismatic joint's axis: travel limits (end stops), a spring / damper, a motor,
or a hold (docs/physics.md §3, §9).

    u = R_a ax (fixed in a),  d = p_b − p_a,  x = d·u
    C = x − x_rest,  J = [−u, −(r_a + d) × u, u, r_b × u]   (the moving-axis term of the line rows)
    limits [lo, hi] on x (``slack``): one-sided (``common.one_sided``); with a buffer (STOP_K, STOP_C:
        a spring and damper that only push) a soft one-sided row once the stop is reached
    MODE_SPRING  spring k / damper c: γ = 1/(h(c + h k)), target −k/(c + h k) · C
    MODE_MOTOR   target SPEED (m/s), bounds ±MAX_FORCE·h
    MODE_HOLD    while ACTIVE: target −erp/h (x − HOLD_AT), unbounded (the travel locked); ACTIVE 2: lock
                 where it is now (HOLD_AT ← x, then 1); ACTIVE 0: released (no row)

Parameters: LA, LB, AXIS, MIN_TRAVEL, MAX_TRAVEL, STIFFNESS, DAMPING, REST (x_rest), MODE, SPEED,
MAX_FORCE, HOLD_AT, ACTIVE, STOP_K, STOP_C. A motor's speed and force may follow a profile in time
(``programs.py`` writes the columns each step).
"""
from __future__ import annotations

from trackrider.jit import njit
from trackrider.physics.joints.common import (LA, LB, anchor, axis_w, buffered_stop, hold_row, one_sided, param_columns,
                                              set_row)
from trackrider.physics.maths import cross

# parameter columns: the axis in a's axes; travel limits m; spring N/m, damper N·s/m; its rest travel m; the
# row's mode; a motor's speed m/s and force bound N; a hold's travel m and state; the end stops' buffer N/m, N·s/m
(AXIS, MIN_TRAVEL, MAX_TRAVEL, STIFFNESS, DAMPING, REST, MODE, SPEED, MAX_FORCE, HOLD_AT, ACTIVE, STOP_K, STOP_C,
 END) = param_columns(3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
MODE_SPRING, MODE_MOTOR, MODE_HOLD = 0, 1, 2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    rows.m[j] = 1
    dx, dy, dz = pbx - pax, pby - pay, pbz - paz
    ux, uy, uz = axis_w(a, bodies.rot, jf, j, AXIS)
    c0, c1, c2 = cross(rax + dx, ray + dy, raz + dz, ux, uy, uz)
    d0, d1, d2 = cross(rbx, rby, rbz, ux, uy, uz)
    set_row(rows.J, j, 0, (-ux, -uy, -uz), (-c0, -c1, -c2), (ux, uy, uz), (d0, d1, d2))
    x = dx * ux + dy * uy + dz * uz
    if joints.slack[j]:
        if jf[j, STOP_K] > 0.0 or jf[j, STOP_C] > 0.0:
            buffered_stop(j, x, jf[j, MIN_TRAVEL], jf[j, MAX_TRAVEL], jf[j, STOP_K], jf[j, STOP_C], h, rows)
        else:
            one_sided(j, x, jf[j, MIN_TRAVEL], jf[j, MAX_TRAVEL], h, erp_h, rows)
    elif jf[j, MODE] == MODE_MOTOR:
        rows.target[j, 0] = jf[j, SPEED]
        rows.lo[j, 0] = -jf[j, MAX_FORCE] * h
        rows.hi[j, 0] = jf[j, MAX_FORCE] * h
    elif jf[j, MODE] == MODE_HOLD:
        hold_row(j, x, HOLD_AT, ACTIVE, False, erp_h, joints, rows)
    else:
        k = jf[j, STIFFNESS]
        c = jf[j, DAMPING]
        den = c + h * k
        if den > 0.0:
            rows.gamma[j] = 1.0 / (h * den)
            rows.target[j, 0] = -(k / den) * (x - jf[j, REST])
