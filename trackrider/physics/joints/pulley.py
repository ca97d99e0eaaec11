"""Pulley: a rope from anchor a over ground point g_a and g_b to anchor b, with a ratio
(PHYSICS.md §3; seed "Pulley Constraint", here in 3D).

    u = p − g,  l = |u|,  n = u/l  (per side)
    C = C_i − (l_a + r l_b)
    J = [−n_a, −(r_a × n_a), −r n_b, −r (r_b × n_b)]
    a rope (``slack``) only pulls: λ ≥ 0, speculative target −C/h while slack; rigid: −erp/h · C

Parameters: JF_LA, JF_LB, JF_GA, JF_GB, JF_RATIO, JF_LEN (C_i).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JF_GA, JF_GB, JF_LA, JF_LB, JF_LEN, JF_RATIO, JI_SLACK, anchor, set_row
from trackrider.physics.maths import cross


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, JF_LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, JF_LB)
    rows.m[j] = 1
    r_ = jf[j, JF_RATIO]
    ux, uy, uz = pax - jf[j, JF_GA], pay - jf[j, JF_GA + 1], paz - jf[j, JF_GA + 2]
    la = np.sqrt(ux * ux + uy * uy + uz * uz)
    nax, nay, naz = (ux / la, uy / la, uz / la) if la > 1e-9 else (0.0, 0.0, 1.0)
    ux, uy, uz = pbx - jf[j, JF_GB], pby - jf[j, JF_GB + 1], pbz - jf[j, JF_GB + 2]
    lb = np.sqrt(ux * ux + uy * uy + uz * uz)
    nbx, nby, nbz = (ux / lb, uy / lb, uz / lb) if lb > 1e-9 else (0.0, 0.0, 1.0)
    c0, c1, c2 = cross(rax, ray, raz, nax, nay, naz)
    d0, d1, d2 = cross(rbx, rby, rbz, nbx, nby, nbz)
    set_row(rows.J, j, 0, (-nax, -nay, -naz), (-c0, -c1, -c2), (-r_ * nbx, -r_ * nby, -r_ * nbz),
            (-r_ * d0, -r_ * d1, -r_ * d2))
    C = jf[j, JF_LEN] - (la + r_ * lb)
    if joints.slack[j]:
        rows.lo[j, 0] = 0.0
        rows.target[j, 0] = -C / h if C >= 0.0 else -erp_h * C
    else:
        rows.target[j, 0] = -erp_h * C


def columns(c):
    """Parameter columns at creation (``common.Created``): the ground points, the ratio and the
    rope's length C_i from where the anchors start; a rope (``slack``) only pulls."""
    f, p = c.f, c.p
    f[JF_GA:JF_GA + 3] = p["ground_a"]
    f[JF_GB:JF_GB + 3] = p["ground_b"]
    f[JF_RATIO] = p["ratio"]
    f[JF_LEN] = np.linalg.norm(c.pa - p["ground_a"]) + p["ratio"] * np.linalg.norm(c.pb - p["ground_b"])
    c.i[JI_SLACK] = 1 if p["slack"] else 0
    return []
