"""Distance joint: a rigid or soft bar between two anchors, or a slack range (PHYSICS.md §3).

    p_a, p_b   the anchors in the world (``common.anchor``), r_a, r_b their lever arms
    C = |p_b − p_a| − L,   n = (p_b − p_a)/|p_b − p_a|
    Ċ = J·u,  J = [−n, −(r_a × n), n, r_b × n],   K = J W̃ Jᵀ
    soft (stiffness k, damping c): γ = 1/(h(c + h k)), target −(h k/(c + h k))/h · C
    rigid: target −erp/h · C
    slack range [L_min, L_max] (``slack``): one row, at L_min it only pushes (λ ≥ 0), at
    L_max it only pulls (λ ≤ 0) (``common.one_sided``).

Parameters: JF_LA, JF_LB, JF_LEN, JF_K, JF_C, JF_MIN, JF_MAX. Train couplers are distance joints
solved by the chain (``couplings.py``) unless they have slack.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JF_C, JF_K, JF_LA, JF_LB, JF_LEN, JF_MAX, JF_MIN, JI_SLACK, anchor, \
    one_sided, set_row
from trackrider.physics.maths import cross


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows, free_joints):
    """Row, target and softness of distance joint ``j`` (``free_joints`` False: no slack range
    in this world)."""
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, JF_LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, JF_LB)
    rows.m[j] = 1
    dx, dy, dz = pbx - pax, pby - pay, pbz - paz
    ln = np.sqrt(dx * dx + dy * dy + dz * dz)
    if ln < 1e-9:
        nx, ny, nz = 1.0, 0.0, 0.0
    else:
        nx, ny, nz = dx / ln, dy / ln, dz / ln
    c0, c1, c2 = cross(rax, ray, raz, nx, ny, nz)
    d0, d1, d2 = cross(rbx, rby, rbz, nx, ny, nz)
    set_row(rows.J, j, 0, (-nx, -ny, -nz), (-c0, -c1, -c2), (nx, ny, nz), (d0, d1, d2))
    if free_joints and joints.slack[j]:
        one_sided(j, ln, jf[j, JF_MIN], jf[j, JF_MAX], h, erp_h, rows)
    else:
        C = ln - jf[j, JF_LEN]
        k = jf[j, JF_K]
        c = jf[j, JF_C]
        if k > 0.0 or c > 0.0:
            den = c + h * k
            rows.gamma[j] = 1.0 / (h * den)
            rows.target[j, 0] = -(h * k / den) / h * C
        else:
            rows.target[j, 0] = -erp_h * C


def columns(c):
    """Parameter columns at creation (``common.Created``): the length (default: where the anchors
    start), a spring, a slack range [min_length, max_length] (a one-sided row)."""
    f, p = c.f, c.p
    cur = float(np.linalg.norm(c.pb - c.pa))
    f[JF_LEN] = p["length"] if p.get("length") is not None else cur
    f[JF_K] = p.get("stiffness") or 0.0
    f[JF_C] = p.get("damping") or 0.0
    if p.get("min_length") is not None or p.get("max_length") is not None:
        c.i[JI_SLACK] = 1
        f[JF_MIN] = p.get("min_length") if p.get("min_length") is not None else 0.0
        f[JF_MAX] = p.get("max_length") if p.get("max_length") is not None else 1e30
    return []
