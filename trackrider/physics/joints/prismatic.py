"""Prismatic joint: b slides along an axis fixed in a and may not turn relative to a (one 5×5
block; docs/physics.md §3; seed "Prismatic Constraint").

    d = p_b − p_a,  n_1, n_2 ⟂ axis, fixed in a (world axes if a is the world)
    line rows  C_k = d·n_k; the axis moves with a, so (Dirk Gregorius's point)
               Ċ_k = (ṗ_b − ṗ_a)·n_k + d·(ω_a × n_k)
                   = n_k·(v_b + ω_b × r_b) − n_k·(v_a + ω_a × r_a) + ω_a·(n_k × d)
               J_k = [−n_k, −(r_a + d) × n_k, n_k, r_b × n_k]   (r_a + d = p_b − x_a)
    angle rows q_b = q_a ⊗ q_rel at rest; θ = rotvec(q_b ⊗ (q_a ⊗ q_rel)*) (world axes),
               Ċ_e ≈ (ω_b − ω_a)·e,  J_e = [0, −e, 0, e] for e = x, y, z
    targets −erp/h · C.

Parameters: LA, LB, NORMAL_1, NORMAL_2 (normals in a), Q_REL (q_rel). Travel limits and the
spring are a second joint row of kind slide (``slide.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints import slide as sl
from trackrider.physics.joints.common import LA, LB, anchor, axis_normals, axis_w, extra_row, param_columns, set_row
from trackrider.physics.maths import cross, qmul, rotvec
from trackrider.settings import MAX_COEFF, MAX_LENGTH, VECTOR, check_nonzero, check_ordered, setting

# parameter columns: the axis in a's axes; two normals of it in a's axes; b's rest attitude relative to a,
# q_a0* ⊗ q_b0 (w, x, y, z)
AXIS, NORMAL_1, NORMAL_2, Q_REL, END = param_columns(3, 3, 3, 4)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    quat = bodies.quat
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    jJ, jt = rows.J, rows.target
    rows.m[j] = 5
    dx, dy, dz = pbx - pax, pby - pay, pbz - paz
    lx, ly, lz = rax + dx, ray + dy, raz + dz
    for k in range(2):
        nx, ny, nz = axis_w(a, bodies.rot, jf, j, NORMAL_1 + 3 * k)
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
    tw, tx, ty, tz = qmul(qaw, qax, qay, qaz, jf[j, Q_REL], jf[j, Q_REL + 1], jf[j, Q_REL + 2], jf[j, Q_REL + 3])
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
    f[AXIS:AXIS + 3] = ax_a
    f[NORMAL_1:NORMAL_1 + 3] = c.Ra.T @ n1
    f[NORMAL_2:NORMAL_2 + 3] = c.Ra.T @ n2
    qa_c = c.qa * np.array([1.0, -1.0, -1.0, -1.0])
    w1, x1, y1, z1 = qa_c
    w2, x2, y2, z2 = c.qb
    f[Q_REL:Q_REL + 4] = (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)
    x0 = float((c.pb - c.pa) @ ax_w)
    extra = []
    lo, hi = p.get("min_travel"), p.get("max_travel")
    if lo is not None or hi is not None:
        g = extra_row(f)
        g[sl.AXIS:sl.AXIS + 3] = ax_a
        g[sl.MIN_TRAVEL] = -1e30 if lo is None else x0 + lo
        g[sl.MAX_TRAVEL] = 1e30 if hi is None else x0 + hi
        extra.append(("slide", 1, g))
    if p.get("stiffness") or p.get("damping"):
        g = extra_row(f)
        g[sl.AXIS:sl.AXIS + 3] = ax_a
        g[sl.STIFFNESS] = p.get("stiffness") or 0.0
        g[sl.DAMPING] = p.get("damping") or 0.0
        g[sl.REST] = x0 + (p.get("rest") or 0.0)
        extra.append(("slide", 0, g))
    return extra


# ----------------------------------------------------------------------------- in Python
@dataclass
class Settings:
    """``prismatic``: b slides along ``axis`` (as for hinge) and may not turn relative to a;
    ``min_travel``/``max_travel`` m from the start (end stops); a spring ``stiffness`` N/m,
    ``damping`` N·s/m along the axis, at rest at travel ``rest`` m (default 0: the start)."""

    axis: tuple = setting(kind=VECTOR)
    min_travel: float | None = setting(None, unit="m", maximum=MAX_LENGTH)
    max_travel: float | None = setting(None, unit="m", maximum=MAX_LENGTH)
    stiffness: float | None = setting(None, unit="N/m", gt=0, maximum=MAX_COEFF)
    damping: float | None = setting(None, unit="N·s/m", ge=0, maximum=MAX_COEFF)
    rest: float = setting(0.0, unit="m", maximum=MAX_LENGTH)

    def _rules(self, error):
        check_nonzero(error, self.axis)
        check_ordered(error, "min_travel", "max_travel", self.min_travel, self.max_travel)


ANCHOR_B_AT_A = True
NO_WORLD_END = None
START_WORDS = None   # no position check of its own (``position_error``)


def position_error(pa, pb, p, pa0, pb0):
    """None: b slides along the axis; its position rows are checked by the energy test."""
    return None


def unrecorded_energy(p) -> bool:
    """A spring at rest elsewhere than the start may start stretched: energy the channels do not record."""
    return bool(p.get("stiffness")) and bool(p.get("rest"))
