"""What every joint kind shares: the anchor columns, row writers, anchors and axes, the default
anchors (one rule for ``World`` and ``checks``).

A joint is one row block (``Rows``: up to ``NJR`` rows, each J = [lin a, ang a, lin b, ang b]
of 12 numbers) between bodies a and b (−1: the world). Its parameters are one row of
``Joints.param``: the anchors (``LA``, ``LB``) here, then the kind's own columns, named in its
module (``param_columns``).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.maths import mv
from trackrider.physics.state import NJR  # noqa: F401  (rows per joint at most)

# ---- parameter columns (Joints.param) every kind has
LA = 0              # anchor a in body a axes (or world point if a is the world), 3
LB = 3              # anchor b, 3
#: columns of a joint's parameter row (the widest kind's ``param_columns`` end fits: tests/test_registries.py)
NJF = 28


def param_columns(*widths):
    """First column of each of a kind's parameters of ``widths`` (after the anchors), and the end."""
    out, c = [], LB + 3
    for w in widths:
        out.append(c)
        c += w
    return (*out, c)


# ---- columns of the integer table World builds (split into Joints.kind, .a, .b, .slack, .chain)
JI_KIND = 0
JI_A = 1            # body index, -1 world
JI_B = 2
JI_SLACK = 3        # 1: one-sided (rope / slack range)
JI_CHAIN = 4        # 1: solved exactly by the chain solver of a train
NJI = 5


@njit("void(float64[:, :, ::1], int64, int64, " + ", ".join(["UniTuple(float64, 3)"] * 4) + ")",
      cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def set_row(jJ, j, r, lin_a, ang_a, lin_b, ang_b):
    """Row ``r`` of joint ``j``: J = [lin_a, ang_a, lin_b, ang_b] (3-tuples)."""
    jJ[j, r, 0], jJ[j, r, 1], jJ[j, r, 2] = lin_a
    jJ[j, r, 3], jJ[j, r, 4], jJ[j, r, 5] = ang_a
    jJ[j, r, 6], jJ[j, r, 7], jJ[j, r, 8] = lin_b
    jJ[j, r, 9], jJ[j, r, 10], jJ[j, r, 11] = ang_b


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def reset_rows(j, rows):
    """Rows 0–2 of joint ``j`` empty and unbounded, no softness (a kind fills what it uses)."""
    rows.gamma[j] = 0.0
    for r in range(3):
        rows.lo[j, r] = -np.inf
        rows.hi[j, r] = np.inf
        for k in range(12):
            rows.J[j, r, k] = 0.0


@njit("UniTuple(float64, 3)(int64, float64[:, :, ::1], float64[:, ::1], int64, int64)",
      cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def axis_w(a, rot, jf, j, col):
    """World direction of the vector jf[j, col:col+3] fixed in body ``a`` (rotation ``rot[a]``;
    world axes if a < 0: the world)."""
    if a < 0:
        return jf[j, col], jf[j, col + 1], jf[j, col + 2]
    return mv(rot[a], jf[j, col], jf[j, col + 1], jf[j, col + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def anchor_inline(a, rot, pos, jf, j, col):
    """Lever arm r = R_a jf[j, col:col+3] and world point p = x_a + r of a joint anchor on body
    ``a`` (the world if a < 0: r = 0, p = jf[j, col:col+3]): the one rule, inlined where it is
    hottest (``distance.bar``: every coupler of every train, each step; a call there costs more
    than the arithmetic). ``anchor`` is the same, called."""
    if a < 0:
        return 0.0, 0.0, 0.0, jf[j, col], jf[j, col + 1], jf[j, col + 2]
    R = rot[a]
    v0, v1, v2 = jf[j, col], jf[j, col + 1], jf[j, col + 2]
    rx = R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2
    ry = R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2
    rz = R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2
    return rx, ry, rz, pos[a, 0] + rx, pos[a, 1] + ry, pos[a, 2] + rz


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def anchor(a, rot, pos, jf, j, col):
    """``anchor_inline``, called: lever arm and world point of a joint anchor on body ``a``."""
    return anchor_inline(a, rot, pos, jf, j, col)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def one_sided(j, x, lo, hi, h, erp_h, rows):
    """Limit row 0 of a coordinate x (J·u = ẋ) kept in [lo, hi]: the nearer bound is active; a
    speculative target −C/h while inside (no impulse until the limit would be crossed this step)."""
    if x - lo < hi - x:
        C = x - lo           # must stay ≥ 0: λ ≥ 0
        rows.target[j, 0] = -erp_h * C if C < 0.0 else -C / h
        rows.lo[j, 0] = 0.0
    else:
        C = x - hi           # must stay ≤ 0: λ ≤ 0
        rows.target[j, 0] = -erp_h * C if C > 0.0 else -C / h
        rows.hi[j, 0] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def buffered_stop(j, x, lo, hi, k, c, h, rows):
    """Limit row 0 of a coordinate x (J·u = ẋ) with a buffer at each end: no force inside [lo, hi];
    beyond the nearer end a spring k and damper c that only push back, γ = 1/(h(c + h k)), target
    −k/(c + h k)·C (C the depth past the end): the soft form of ``one_sided``."""
    den = c + h * k
    if x - lo < hi - x:
        C = x - lo           # pushes (λ ≥ 0) once C < 0
        rows.lo[j, 0] = 0.0
        if C >= 0.0:
            rows.hi[j, 0] = 0.0
    else:
        C = x - hi           # λ ≤ 0 once C > 0
        rows.hi[j, 0] = 0.0
        if C <= 0.0:
            rows.lo[j, 0] = 0.0
    rows.gamma[j] = 1.0 / (h * den)
    rows.target[j, 0] = -(k / den) * C


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def hold_row(j, x, hold_at, active, wrap, erp_h, joints, rows):
    """Row 0 as a hold of the coordinate x (J·u = ẋ) by the joint's state columns ``hold_at`` and
    ``active``: ACTIVE 2 locks where it is now (HOLD_AT ← x, then 1); while ACTIVE the target is
    −erp/h (x − HOLD_AT) (an angle's error wrapped to (−π, π] with ``wrap``), unbounded; ACTIVE 0:
    released (no row)."""
    jf = joints.param
    if jf[j, active] == 2.0:
        jf[j, hold_at] = x
        jf[j, active] = 1.0
    if jf[j, active] == 0.0:
        rows.lo[j, 0] = 0.0
        rows.hi[j, 0] = 0.0
        joints.lam[j, 0] = 0.0
    else:
        e = x - jf[j, hold_at]
        if wrap:
            e = (e + np.pi) % (2.0 * np.pi) - np.pi
        rows.target[j, 0] = -erp_h * e


# ----------------------------------------------------------------------------- at creation (Python)
class Created:
    """What ``World`` knows of a joint when it is added, for a kind's ``columns``: the table rows
    ``i`` (NJI ints) and ``f`` (NJF floats, anchors set), the parameters ``p`` (checked by
    ``trackrider.settings``), the anchors' world points ``pa``, ``pb``, the bodies' rotations
    ``Ra``, ``Rb`` and quaternions ``qa``, ``qb`` (the world: identity)."""

    def __init__(self, i, f, p, pa, pb, Ra, Rb, qa, qb, hold=False):
        self.i, self.f, self.p, self.pa, self.pb = i, f, p, pa, pb
        self.Ra, self.Rb, self.qa, self.qb = Ra, Rb, qa, qb
        #: the joint has a cycle of holds and releases: its kind adds a hold row (``columns``)
        self.hold = hold
        #: (extra row index, column, knots) of each setting that follows a profile (``profile``)
        self.drives = []
        #: the extra row index of the hold row (a kind's ``columns`` sets it), else None
        self.hold_row = None

    def profile(self, value, row: int, column: int) -> float:
        """The column value of a setting that may be a profile (knots ((t, v), …)): a profile is kept
        as a drive of extra row ``row``'s ``column`` (``programs.py`` writes it each step) and starts
        at its first value."""
        if isinstance(value, tuple):
            self.drives.append((row, column, value))
            return float(value[0][1])
        return float(value)


def axis_normals(ax_w):
    """Two unit normals of the world axis ``ax_w`` (a hinge's or a prismatic joint's, at creation)."""
    t = np.array([1.0, 0.0, 0.0]) if abs(ax_w[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    n1 = np.cross(ax_w, t)
    n1 /= np.linalg.norm(n1)
    n2 = np.cross(ax_w, n1)
    return n1, n2


def default_anchors(anchor_b_at_a, la, lb, a, b, track_anchor, to_world, to_local):
    """Anchors ``(la, lb)`` of a joint between entities ``a`` and ``b`` (−1: the world) from those
    given (None: the default), in their bodies' axes (a world point for the world). ``World`` and
    ``checks`` both use this rule:

    * a body's default anchor is ``track_anchor(e)`` (a car's track anchor (0, 0, −cg), a free
      body's centre);
    * when the kind keeps the anchors together from the start (``anchor_b_at_a``: hinge,
      prismatic), b's default anchor is where a's starts;
    * the world's default anchor is where the other end's anchor starts.

    ``to_world(e, local)`` is the world point of a point fixed in ``e``, ``to_local(e, p)`` the
    inverse."""
    if la is None and a >= 0:
        la = track_anchor(a)
    if lb is None and b >= 0:
        if anchor_b_at_a and la is not None:
            lb = to_local(b, to_world(a, la) if a >= 0 else la)
        else:
            lb = track_anchor(b)
    if la is None:
        la = to_world(b, lb)
    if lb is None:
        lb = to_world(a, la)
    return la, lb


def extra_row(f):
    """A new parameter row with the anchors of row ``f`` (a joint's extra row: a limit, a motor, a spring)."""
    g = np.zeros_like(f)
    g[LA:LB + 3] = f[LA:LB + 3]
    return g
