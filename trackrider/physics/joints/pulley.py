"""Pulley: a rope from anchor a over ground point g_a and g_b to anchor b, with a ratio
(docs/physics.md §3; seed "Pulley Constraint", here in 3D).

    u = p − g,  l = |u|,  n = u/l  (per side)
    C = C_i − (l_a + r l_b)
    J = [−n_a, −(r_a × n_a), −r n_b, −r (r_b × n_b)]
    a rope (``slack``) only pulls: λ ≥ 0, speculative target −C/h while slack; rigid: −erp/h · C

Parameters: LA, LB, GROUND_A, GROUND_B, RATIO, ROPE (C_i).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JI_SLACK, LA, LB, anchor, param_columns, set_row
from trackrider.physics.maths import cross
from trackrider.settings import BOOLEAN, VECTOR, setting

# parameter columns: ground points (world, m, 3 each); ratio; rope length C_i = l_a + ratio l_b at the start, m
GROUND_A, GROUND_B, RATIO, ROPE, END = param_columns(3, 3, 1, 1)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    rows.m[j] = 1
    r_ = jf[j, RATIO]
    ux, uy, uz = pax - jf[j, GROUND_A], pay - jf[j, GROUND_A + 1], paz - jf[j, GROUND_A + 2]
    la = np.sqrt(ux * ux + uy * uy + uz * uz)
    nax, nay, naz = (ux / la, uy / la, uz / la) if la > 1e-9 else (0.0, 0.0, 1.0)
    ux, uy, uz = pbx - jf[j, GROUND_B], pby - jf[j, GROUND_B + 1], pbz - jf[j, GROUND_B + 2]
    lb = np.sqrt(ux * ux + uy * uy + uz * uz)
    nbx, nby, nbz = (ux / lb, uy / lb, uz / lb) if lb > 1e-9 else (0.0, 0.0, 1.0)
    c0, c1, c2 = cross(rax, ray, raz, nax, nay, naz)
    d0, d1, d2 = cross(rbx, rby, rbz, nbx, nby, nbz)
    set_row(rows.J, j, 0, (-nax, -nay, -naz), (-c0, -c1, -c2), (-r_ * nbx, -r_ * nby, -r_ * nbz),
            (-r_ * d0, -r_ * d1, -r_ * d2))
    C = jf[j, ROPE] - (la + r_ * lb)
    if joints.slack[j]:
        rows.lo[j, 0] = 0.0
        rows.target[j, 0] = -C / h if C >= 0.0 else -erp_h * C
    else:
        rows.target[j, 0] = -erp_h * C


def columns(c):
    """Parameter columns at creation (``common.Created``): the ground points, the ratio and the
    rope's length C_i from where the anchors start; a rope (``slack``) only pulls."""
    f, p = c.f, c.p
    f[GROUND_A:GROUND_A + 3] = p["ground_a"]
    f[GROUND_B:GROUND_B + 3] = p["ground_b"]
    f[RATIO] = p["ratio"]
    f[ROPE] = np.linalg.norm(c.pa - p["ground_a"]) + p["ratio"] * np.linalg.norm(c.pb - p["ground_b"])
    c.i[JI_SLACK] = 1 if p["slack"] else 0
    return []


# ----------------------------------------------------------------------------- in Python
@dataclass
class Settings:
    """``pulley``: C = l_a + ``ratio`` l_b, l the distance from an end's anchor to its fixed
    ground point ``ground_a``/``ground_b`` (m, world); ``slack``: a rope that only pulls
    (default true); joins two cars or bodies, not the world."""

    ground_a: tuple = setting(kind=VECTOR, unit="m")
    ground_b: tuple = setting(kind=VECTOR, unit="m")
    ratio: float = setting(1.0, gt=0, le=1000)
    slack: bool = setting(True, kind=BOOLEAN)


ANCHOR_B_AT_A = False
NO_WORLD_END = "a pulley joins two cars or bodies, not the world (its ground anchors are fixed)"
START_WORDS = "its length is {:.4g} m off at the start"


def rope(pa, pb, p):
    """l_a + ratio · l_b of anchors ``pa``, ``pb``, m."""
    return (np.linalg.norm(pa - np.asarray(p["ground_a"]), axis=-1)
            + p["ratio"] * np.linalg.norm(pb - np.asarray(p["ground_b"]), axis=-1))


def position_error(pa, pb, p, pa0, pb0):
    """The rope longer than at the start (a rope: only longer counts), m."""
    excess = rope(pa, pb, p) - float(rope(pa0, pb0, p))
    return np.maximum(excess, 0.0) if p.get("slack") else np.abs(excess)


def unrecorded_energy(p) -> bool:
    return False
