"""Prismatic joint: b slides along an axis fixed in a and may not turn relative to a (one 5×5
block; PHYSICS.md §3; seed "Prismatic Constraint").

    d = p_b − p_a,  n_1, n_2 ⟂ axis, fixed in a (world axes if a is the world)
    line rows  C_k = d·n_k; the axis moves with a, so (Dirk Gregorius's point)
               Ċ_k = (ṗ_b − ṗ_a)·n_k + d·(ω_a × n_k)
                   = n_k·(v_b + ω_b × r_b) − n_k·(v_a + ω_a × r_a) + ω_a·(n_k × d)
               J_k = [−n_k, −(r_a + d) × n_k, n_k, r_b × n_k]   (r_a + d = p_b − x_a)
    angle rows q_b = q_a ⊗ q_rel at rest; θ = rotvec(q_b ⊗ (q_a ⊗ q_rel)*) (world axes),
               Ċ_e ≈ (ω_b − ω_a)·e,  J_e = [0, −e, 0, e] for e = x, y, z
    targets −erp/h · C.

Parameters: JF_LA, JF_LB, JF_P1, JF_P2 (normals in a), JF_Q (q_rel). Travel limits and the
spring are a second joint row of kind slide (``slide.py``).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JF_AX, JF_C, JF_K, JF_LA, JF_LB, JF_LEN, JF_MAX, JF_MIN, JF_P1, JF_P2, JF_Q, \
    anchor, axis_normals, axis_w, set_row
from trackrider.physics.maths import cross, qmul, rotvec


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    quat = bodies.quat
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, JF_LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, JF_LB)
    jJ, jt = rows.J, rows.target
    rows.m[j] = 5
    dx, dy, dz = pbx - pax, pby - pay, pbz - paz
    lx, ly, lz = rax + dx, ray + dy, raz + dz
    for k in range(2):
        nx, ny, nz = axis_w(a, bodies.rot, jf, j, JF_P1 + 3 * k)
        c0, c1, c2 = cross(lx, ly, lz, nx, ny, nz)
        d0, d1, d2 = cross(rbx, rby, rbz, nx, ny, nz)
        set_row(jJ, j, k, (-nx, -ny, -nz), (-c0, -c1, -c2), (nx, ny, nz), (d0, d1, d2))
        jt[j, k] = -erp_h * (dx * nx + dy * ny + dz * nz)
    if a >= 0:
        qaw, qax, qay, qaz = quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]
    else:
        qaw, qax, qay, qaz = 1.0, 0.0, 0.0, 0.0
    if b >= 0:
        qbw, qbx, qby, qbz = quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]
    else:
        qbw, qbx, qby, qbz = 1.0, 0.0, 0.0, 0.0
    tw, tx, ty, tz = qmul(qaw, qax, qay, qaz, jf[j, JF_Q], jf[j, JF_Q + 1], jf[j, JF_Q + 2], jf[j, JF_Q + 3])
    ew, ex_, ey_, ez_ = qmul(qbw, qbx, qby, qbz, tw, -tx, -ty, -tz)
    th0, th1, th2 = rotvec(ew, ex_, ey_, ez_)
    set_row(jJ, j, 2, (0.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0))
    set_row(jJ, j, 3, (0.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    set_row(jJ, j, 4, (0.0, 0.0, 0.0), (0.0, 0.0, -1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    jt[j, 2] = -erp_h * th0
    jt[j, 3] = -erp_h * th1
    jt[j, 4] = -erp_h * th2
    rows.lo[j, 3], rows.hi[j, 3], rows.lo[j, 4], rows.hi[j, 4] = -np.inf, np.inf, -np.inf, np.inf


def columns(c):
    """Parameter columns at creation (``common.Created``): the axis in a's axes, two normals in
    a's, b's orientation relative to a; a travel limit and a spring are extra rows (``slide``:
    (kind, slack, columns))."""
    f, p = c.f, c.p
    ax_a = p["axis"]
    ax_w = c.Ra @ ax_a
    n1, n2 = axis_normals(ax_w)
    f[JF_AX:JF_AX + 3] = ax_a
    f[JF_P1:JF_P1 + 3] = c.Ra.T @ n1
    f[JF_P2:JF_P2 + 3] = c.Ra.T @ n2
    qa_c = c.qa * np.array([1.0, -1.0, -1.0, -1.0])
    w1, x1, y1, z1 = qa_c
    w2, x2, y2, z2 = c.qb
    f[JF_Q:JF_Q + 4] = (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)
    x0 = float((c.pb - c.pa) @ ax_w)
    extra = []
    lo, hi = p.get("min_travel"), p.get("max_travel")
    if lo is not None or hi is not None:
        g = f.copy()
        g[JF_MIN] = -1e30 if lo is None else x0 + lo
        g[JF_MAX] = 1e30 if hi is None else x0 + hi
        extra.append(("slide", 1, g))
    if p.get("stiffness") or p.get("damping"):
        g = f.copy()
        g[JF_K] = p.get("stiffness") or 0.0
        g[JF_C] = p.get("damping") or 0.0
        g[JF_LEN] = x0 + (p.get("rest") or 0.0)
        extra.append(("slide", 0, g))
    return extra
