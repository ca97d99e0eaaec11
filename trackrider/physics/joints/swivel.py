"""Swivel: a car body on a wheel frame (bogie), free to yaw and pitch about the pivot (docs/physics.md
"Bogies").

    rows 0–2   a ball joint's (``ball.prepare``): the pivot p_a (on the frame) = p_b (on the body)
    row 3      (with ROLL = w ≠ 0) the body's roll held by the frame, the row scaled by w:
               u_w = R_a u (the frame's up axis), y_w = R_b y (the body's left axis)
               C = u_w·y_w,   Ċ = (ω_a × u_w)·y_w + u_w·(ω_b × y_w) = ω_a·(u_w × y_w) − ω_b·(u_w × y_w)
               J = w [0, u_w × y_w, 0, −(u_w × y_w)],   target −w erp/h · C

The body turns freely about the frame's up axis (yaw: ``y_w`` stays ⟂ ``u_w``) and about its own
left axis (pitch: ``y_w`` does not move), so a body on two frames follows a vertical curve as a
chord. A body on two frames has a roll row on each, w its lever weight there (front (L/2 + e)/L,
rear (L/2 − e)/L): solved in its train's blocks the two are one row J_front + J_rear with one
impulse μ (``car_blocks._share_roll``), so each frame carries w μ of the body's roll moment — two
separate rows would be one constraint twice on a track of constant cant (the split arbitrary)
and two that disagree on a twisting one. Parameters: LA, LB, UP (in a's axes), LEFT (in b's axes), ROLL (w, 0:
no row 3), LIMIT (the ``swivel_limit``, rad, 0: not watched; and c|c|, c its cosine), SPLIT (time and yaw of the first step
the body turned beyond it, ``watch``; time −1: not yet).

The body's yaw on its frame, ψ = atan2(y_a·x_b, x_a·x_b) (its forward axis about the frame's up
axis), is checked at the end of every step (``watch``), so a car that passes a too-tight spot
between two recorded samples is seen (docs/physics.md "Bogies", the ``split`` event).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints import CODES, ball
from trackrider.physics.joints.common import axis_w, param_columns, set_row
from trackrider.physics.maths import cross

UP, LEFT, ROLL, LIMIT, SPLIT, END = param_columns(3, 3, 1, 2, 2)
J_SWIVEL = CODES["swivel"]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    ball.prepare(j, joints, bodies, h, erp_h, rows)
    jf = joints.param
    a, b = joints.a[j], joints.b[j]
    w = jf[j, ROLL]
    if w != 0.0:
        rows.m[j] = 4
        ux, uy, uz = axis_w(a, bodies.rot, jf, j, UP)
        yx, yy, yz = axis_w(b, bodies.rot, jf, j, LEFT)
        c0, c1, c2 = cross(ux, uy, uz, yx, yy, yz)
        c0, c1, c2 = w * c0, w * c1, w * c2
        set_row(rows.J, j, 3, (0.0, 0.0, 0.0), (c0, c1, c2), (0.0, 0.0, 0.0), (-c0, -c1, -c2))
        rows.target[j, 3] = -erp_h * w * (ux * yx + uy * yy + uz * yz)
        rows.lo[j, 3] = -np.inf
        rows.hi[j, 3] = np.inf


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def watch(t, joints, rot):
    """At time ``t`` (the end of a step): every watched swivel whose body has turned on its frame
    by more than its LIMIT for the first time keeps ``(t, ψ)`` in its SPLIT columns."""
    jf = joints.param
    for j in range(joints.kind.shape[0]):
        if joints.kind[j] != J_SWIVEL or not jf[j, LIMIT] > 0.0 or jf[j, SPLIT] >= 0.0:
            continue
        Ra, Rb = rot[joints.a[j]], rot[joints.b[j]]
        x = Ra[0, 0] * Rb[0, 0] + Ra[1, 0] * Rb[1, 0] + Ra[2, 0] * Rb[2, 0]
        y = Ra[0, 1] * Rb[0, 0] + Ra[1, 1] * Rb[1, 0] + Ra[2, 1] * Rb[2, 0]
        if x * abs(x) < jf[j, LIMIT + 1] * (x * x + y * y):   # cos ψ < cos(limit), without an angle each step
            yaw = np.arctan2(y, x)
            if abs(yaw) > jf[j, LIMIT]:
                jf[j, SPLIT] = t
                jf[j, SPLIT + 1] = yaw


def columns(c):
    """Parameter columns at creation (``common.Created``): the frame's up and the body's left axes,
    the weight of this swivel's roll row (``p["roll"]``, 0: none) and the yaw it watches
    (``p["limit"]``, rad, 0: none); no extra rows."""
    c.f[UP:UP + 3] = (0.0, 0.0, 1.0)
    c.f[LEFT:LEFT + 3] = (0.0, 1.0, 0.0)
    c.f[ROLL] = float(c.p.get("roll", 0.0))
    c.f[LIMIT] = float(c.p.get("limit", 0.0))
    c.f[LIMIT + 1] = np.cos(c.f[LIMIT]) * abs(np.cos(c.f[LIMIT]))   # c|c|, c = cos(limit)
    c.f[SPLIT] = -1.0
    return []


# ----------------------------------------------------------------------------- in Python
ANCHOR_B_AT_A = False
NO_WORLD_END = "a swivel joins a car body to its wheel frame"
START_WORDS = "its pivot starts {:.4g} m apart"


def position_error(pa, pb, p, pa0, pb0):
    """Distance between the pivot's two points, m."""
    return np.linalg.norm(pb - pa, axis=-1)


def unrecorded_energy(p) -> bool:
    return False
