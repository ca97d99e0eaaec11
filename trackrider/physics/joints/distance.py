"""Distance joint: a rigid or soft bar between two anchors, or a slack range (docs/physics.md §3).

    p_a, p_b   the anchors in the world (``common.anchor``), r_a, r_b their lever arms
    C = |p_b − p_a| − L,   n = (p_b − p_a)/|p_b − p_a|
    Ċ = J·u,  J = [−n, −(r_a × n), n, r_b × n],   K = J W̃ Jᵀ
    soft (stiffness k, damping c): γ = 1/(h(c + h k)), target −(h k/(c + h k))/h · C
    rigid: target −erp/h · C
    slack range [L_min, L_max] (``slack``): one row, at L_min it only pushes (λ ≥ 0), at
    L_max it only pulls (λ ≤ 0) (``common.one_sided``).

Parameters: LA, LB, LENGTH, STIFFNESS, DAMPING, MIN_LENGTH, MAX_LENGTH. Train couplers are distance joints
solved by the chain (``couplings.py``) unless they have slack.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.common import JI_SLACK, LA, LB, anchor_inline, one_sided, param_columns
from trackrider.physics.maths import cross
from trackrider.settings import MAX_COEFF, MAX_LENGTH, check_ordered, setting

# parameter columns: rest length m; stiffness N/m (0: rigid); damping N·s/m; slack range [min, max] m
LENGTH, STIFFNESS, DAMPING, MIN_LENGTH, MAX_LENGTH, END = param_columns(1, 1, 1, 1, 1)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def bar(j, joints, bodies):
    """(length, n, r_a × n, r_b × n) of the bar of joint ``j`` between its anchors (n along x when
    they meet); a draft gear's bar too (``draft_gear.py``)."""
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor_inline(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor_inline(b, bodies.rot, bodies.pos, jf, j, LB)
    dx, dy, dz = pbx - pax, pby - pay, pbz - paz
    ln = np.sqrt(dx * dx + dy * dy + dz * dz)
    if ln < 1e-9:
        nx, ny, nz = 1.0, 0.0, 0.0
    else:
        nx, ny, nz = dx / ln, dy / ln, dz / ln
    return ln, (nx, ny, nz), cross(rax, ray, raz, nx, ny, nz), cross(rbx, rby, rbz, nx, ny, nz)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def prepare(j, joints, bodies, h, erp_h, rows, free_joints):
    """Row, target and softness of distance joint ``j`` (``free_joints`` False: no slack range
    in this world). Its one row only: ``dispatch.prepare_joint`` does not clear the others (a
    distance joint never writes them: they stay empty from the start). Inlined into its callers
    (``kernels.stage_joint_rows`` calls it for every train's couplers, each step): a call would
    pass every array of three records, which costs more than the row (~75 ns a coupler)."""
    jf = joints.param
    ln, n, c, d = bar(j, joints, bodies)
    rows.m[j] = 1
    J = rows.J
    J[j, 0, 0], J[j, 0, 1], J[j, 0, 2] = -n[0], -n[1], -n[2]
    J[j, 0, 3], J[j, 0, 4], J[j, 0, 5] = -c[0], -c[1], -c[2]
    J[j, 0, 6], J[j, 0, 7], J[j, 0, 8] = n
    J[j, 0, 9], J[j, 0, 10], J[j, 0, 11] = d
    rows.gamma[j] = 0.0
    rows.lo[j, 0] = -np.inf
    rows.hi[j, 0] = np.inf
    if free_joints and joints.slack[j]:
        one_sided(j, ln, jf[j, MIN_LENGTH], jf[j, MAX_LENGTH], h, erp_h, rows)
    else:
        C = ln - jf[j, LENGTH]
        k = jf[j, STIFFNESS]
        c = jf[j, DAMPING]
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
    f[LENGTH] = p["length"] if p.get("length") is not None else cur
    f[STIFFNESS] = p.get("stiffness") or 0.0
    f[DAMPING] = p.get("damping") or 0.0
    if p.get("min_length") is not None or p.get("max_length") is not None:
        c.i[JI_SLACK] = 1
        f[MIN_LENGTH] = p.get("min_length") if p.get("min_length") is not None else 0.0
        f[MAX_LENGTH] = p.get("max_length") if p.get("max_length") is not None else 1e30
    return []


# ----------------------------------------------------------------------------- in Python
@dataclass
class Settings:
    """``distance``: a bar of ``length`` m (default: the distance at the start), or a spring
    of ``stiffness`` N/m and ``damping`` N·s/m; ``min_length``/``max_length`` m: a slack range."""

    length: float | None = setting(None, unit="m", ge=0, maximum=MAX_LENGTH)
    stiffness: float | None = setting(None, unit="N/m", gt=0, maximum=MAX_COEFF)
    damping: float | None = setting(None, unit="N·s/m", ge=0, maximum=MAX_COEFF)
    min_length: float | None = setting(None, unit="m", ge=0, maximum=MAX_LENGTH)
    max_length: float | None = setting(None, unit="m", ge=0, maximum=MAX_LENGTH)

    def _rules(self, error):
        check_ordered(error, "min_length", "max_length", self.min_length, self.max_length)


ANCHOR_B_AT_A = False
NO_WORLD_END = None
START_WORDS = "its length is {:.4g} m off at the start"


def position_error(pa, pb, p, pa0, pb0):
    """Distance from its length (or its slack range), m, of anchors ``pa``, ``pb`` (m, 3); None for a
    spring (no position constraint)."""
    if p.get("stiffness"):
        return None
    d = np.linalg.norm(pb - pa, axis=-1)
    lo, hi = p.get("min_length"), p.get("max_length")
    if lo is not None or hi is not None:
        lo = 0.0 if lo is None else lo
        hi = np.inf if hi is None else hi
        return np.maximum(lo - d, 0.0) + np.maximum(d - hi, 0.0)
    length = p["length"] if p.get("length") is not None else float(np.linalg.norm(pb0 - pa0))
    return np.abs(d - length)


def unrecorded_energy(p) -> bool:
    """A spring given its own length may start stretched: energy the channels do not record."""
    return bool(p.get("stiffness")) and p.get("length") is not None
