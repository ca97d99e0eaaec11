"""Ball coupler between two cars that are both held by their track joints (a train's coupler).

Of the three ball rows only the one along the track is independent of the cars' track rows
(the other two would make the system singular), so

    n = (x̂_a + x̂_b)/|x̂_a + x̂_b|   the mean forward axis of the two cars
    C = (p_a − p_b)·n,   J = [n, r_a × n, −n, −(r_b × n)]
    rigid: target −erp/h · C;   soft (k, c): γ = 1/(h(c + h k)), target −k/(c + h k) · C
    with free play (``slack``): C kept in [MIN, MAX] = [−slack/2, slack/2], one row that at MIN
    only pushes (λ ≥ 0) and at MAX only pulls (λ ≤ 0) (``common.one_sided``): the ball's two halves
    drawn apart or pushed together along the cars' mean axis by at most half the play.

Parameters: LA, LB, STIFFNESS, DAMPING, MIN, MAX. Solved by the chain (``couplings.py``), with free
play by the sweeps.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import LA, LB, anchor, one_sided, param_columns, set_row
from trackrider.physics.maths import cross

# parameter columns: stiffness N/m (0: rigid), damping N·s/m; free play: C's range [min, max] m
STIFFNESS, DAMPING, MIN, MAX, END = param_columns(1, 1, 1, 1)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    rows.m[j] = 1
    R = bodies.rot[a]
    nx, ny, nz = R[0, 0], R[1, 0], R[2, 0]
    R = bodies.rot[b]
    nx, ny, nz = nx + R[0, 0], ny + R[1, 0], nz + R[2, 0]
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    c0, c1, c2 = cross(rax, ray, raz, nx, ny, nz)
    d0, d1, d2 = cross(rbx, rby, rbz, nx, ny, nz)
    set_row(rows.J, j, 0, (nx, ny, nz), (c0, c1, c2), (-nx, -ny, -nz), (-d0, -d1, -d2))
    if joints.slack[j]:
        one_sided(j, (pax - pbx) * nx + (pay - pby) * ny + (paz - pbz) * nz, jf[j, MIN], jf[j, MAX], h, erp_h, rows)
        return
    rows.target[j, 0] = -erp_h * ((pax - pbx) * nx + (pay - pby) * ny + (paz - pbz) * nz)
    k = jf[j, STIFFNESS]
    c = jf[j, DAMPING]
    if k > 0.0 or c > 0.0:
        den = c + h * k
        rows.gamma[j] = 1.0 / (h * den)
        rows.target[j, 0] = -(k / den) * ((pax - pbx) * nx + (pay - pby) * ny + (paz - pbz) * nz)
