"""Ball joint: two anchors kept together (docs/physics.md §3; seed "Point-to-Point Constraint").

    C = p_a − p_b (3 rows, world axes e_k)
    Ċ_k = J_k·u,  J_k = [e_k, r_a × e_k, −e_k, −(r_b × e_k)],   target −erp/h · C_k
    K = J W̃ Jᵀ, a 3×3 block solved at once.

Parameters: LA, LB. ``ball_rows`` is also the first three rows of a hinge.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import LA, LB, anchor, param_columns, set_row
from trackrider.physics.maths import cross

END = param_columns()[0]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def ball_rows(j, rows, ra, rb, c, erp_h):
    """Rows 0–2 of a ball joint with lever arms ``ra``, ``rb`` and C = p_a − p_b = ``c`` (3-tuples)."""
    rax, ray, raz = ra
    rbx, rby, rbz = rb
    for r in range(3):
        ex = 1.0 if r == 0 else 0.0
        ey = 1.0 if r == 1 else 0.0
        ez = 1.0 if r == 2 else 0.0
        c0, c1, c2 = cross(rax, ray, raz, ex, ey, ez)
        d0, d1, d2 = cross(rbx, rby, rbz, ex, ey, ez)
        set_row(rows.J, j, r, (ex, ey, ez), (c0, c1, c2), (-ex, -ey, -ez), (-d0, -d1, -d2))
    rows.target[j, 0] = -erp_h * c[0]
    rows.target[j, 1] = -erp_h * c[1]
    rows.target[j, 2] = -erp_h * c[2]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    rows.m[j] = 3
    ball_rows(j, rows, (rax, ray, raz), (rbx, rby, rbz), (pax - pbx, pay - pby, paz - pbz), erp_h)


def columns(c):
    """Parameter columns at creation (``common.Created``): the anchors only; no extra rows."""
    return []


# ----------------------------------------------------------------------------- in Python
@dataclass
class Settings:
    """``ball``: the anchors meet; b turns freely about it."""


ANCHOR_B_AT_A = False
NO_WORLD_END = None
START_WORDS = "its ends start {:.4g} m apart"


def position_error(pa, pb, p, pa0, pb0):
    """Distance between the anchors, m."""
    return np.linalg.norm(pb - pa, axis=-1)


def unrecorded_energy(p) -> bool:
    return False
