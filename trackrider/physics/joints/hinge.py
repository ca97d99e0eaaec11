"""Hinge: a ball joint plus two angular rows that keep an axis (one 5×5 block; docs/physics.md §3).

    rows 0–2   the ball rows (``ball.ball_rows``)
    a_w = R_a ax (axis fixed in a),  b_k = R_b p_k (k = 1, 2: normals fixed in b, ⟂ axis at the start)
    C_k = a_w·b_k
    Ċ_k = (ω_a × a_w)·b_k + a_w·(ω_b × b_k) = ω_a·(a_w × b_k) − ω_b·(a_w × b_k)
    J_k = [0, a_w × b_k, 0, −(a_w × b_k)],   target −erp/h · C_k,   K = J W̃ Jᵀ (5×5 with the ball)

Parameters: LA, LB, AXIS, NORMAL_1, NORMAL_2. Angle limits, motor and damper are a second
joint row of kind hinge_axis (``hinge_axis.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints import hinge_axis as hx
from trackrider.physics.joints.ball import ball_rows
from trackrider.physics.joints.common import LA, LB, anchor, axis_normals, axis_w, extra_row, param_columns, set_row
from trackrider.physics.maths import cross
from trackrider.settings import MAX_COEFF, VECTOR, check_nonzero, check_ordered, setting

# parameter columns: the axis in a's axes (world axes if a is the world), two normals of it in b's axes
AXIS, NORMAL_1, NORMAL_2, END = param_columns(3, 3, 3)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    rax, ray, raz, pax, pay, paz = anchor(a, bodies.rot, bodies.pos, jf, j, LA)
    rbx, rby, rbz, pbx, pby, pbz = anchor(b, bodies.rot, bodies.pos, jf, j, LB)
    rows.m[j] = 5
    ball_rows(j, rows, (rax, ray, raz), (rbx, rby, rbz), (pax - pbx, pay - pby, paz - pbz), erp_h)
    axx, axy, axz = axis_w(a, bodies.rot, jf, j, AXIS)
    for k in range(2):
        bx_, by_, bz_ = axis_w(b, bodies.rot, jf, j, NORMAL_1 + 3 * k)
        c0, c1, c2 = cross(axx, axy, axz, bx_, by_, bz_)
        set_row(rows.J, j, 3 + k, (0.0, 0.0, 0.0), (c0, c1, c2), (0.0, 0.0, 0.0), (-c0, -c1, -c2))
        rows.target[j, 3 + k] = -erp_h * (axx * bx_ + axy * by_ + axz * bz_)
        rows.lo[j, 3 + k] = -np.inf
        rows.hi[j, 3 + k] = np.inf


def columns(c):
    """Parameter columns at creation (``common.Created``): the axis in a's axes and two normals in
    b's; a limit and a motor / damper are extra rows (``hinge_axis``: (kind, slack, columns))."""
    f, p = c.f, c.p
    ax_a = p["axis"]
    n1, n2 = axis_normals(c.Ra @ ax_a)
    f[AXIS:AXIS + 3] = ax_a
    f[NORMAL_1:NORMAL_1 + 3] = c.Rb.T @ n1
    f[NORMAL_2:NORMAL_2 + 3] = c.Rb.T @ n2
    extra = []
    lo, hi = p.get("min_angle"), p.get("max_angle")
    if lo is not None or hi is not None:
        g = extra_row(f)
        g[hx.AXIS:hx.AXIS + 3] = ax_a
        g[hx.REF_A:hx.REF_A + 3] = c.Ra.T @ n1
        g[hx.REF_B:hx.REF_B + 3] = c.Rb.T @ n1
        g[hx.MIN_ANGLE] = -1e30 if lo is None else lo
        g[hx.MAX_ANGLE] = 1e30 if hi is None else hi
        extra.append(("hinge_axis", 1, g))
    if p.get("motor_speed") is not None or p.get("damping"):
        g = extra_row(f)
        g[hx.AXIS:hx.AXIS + 3] = ax_a
        g[hx.SPEED] = p.get("motor_speed") or 0.0
        g[hx.MAX_TORQUE] = p["max_torque"] if p.get("max_torque") is not None else np.inf
        g[hx.DAMPING] = p.get("damping") or 0.0
        extra.append(("hinge_axis", 0, g))
    return extra


# ----------------------------------------------------------------------------- in Python
@dataclass
class Settings:
    """``hinge``: a ball joint that also keeps ``axis`` (in a's axes; the world's when a is
    the world; any length ≠ 0): b turns relative to a only about it. ``min_angle``,
    ``max_angle``: the angle b has turned since the start (radians; degrees in files,
    −360 … 360); ``motor_speed`` (rad/s; °/s in files) with ``max_torque`` N·m (default
    unbounded); ``damping`` N·m·s/rad."""

    axis: tuple = setting(kind=VECTOR)
    min_angle: float | None = setting(None, unit="°", ge=-360, le=360, degrees=True)
    max_angle: float | None = setting(None, unit="°", ge=-360, le=360, degrees=True)
    motor_speed: float | None = setting(None, unit="°/s", ge=-1e6, le=1e6, degrees=True)
    max_torque: float | None = setting(None, unit="N·m", gt=0, maximum=MAX_COEFF)
    damping: float | None = setting(None, unit="N·m·s/rad", ge=0, maximum=MAX_COEFF)

    def _rules(self, error):
        check_nonzero(error, self.axis)
        if self.max_torque is not None and self.motor_speed is None:
            raise error("max_torque", "needs motor_speed (the motor's target speed)")
        check_ordered(error, "min_angle", "max_angle", self.min_angle, self.max_angle)


ANCHOR_B_AT_A = True
NO_WORLD_END = None
START_WORDS = "its ends start {:.4g} m apart"


def position_error(pa, pb, p, pa0, pb0):
    """Distance between the anchors, m (its axis is checked by the energy test)."""
    return np.linalg.norm(pb - pa, axis=-1)


def unrecorded_energy(p) -> bool:
    """A motor (not a damper: speed 0) does work the channels do not record."""
    return (p.get("motor_speed") or 0.0) != 0.0
