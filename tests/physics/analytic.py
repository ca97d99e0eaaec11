"""Analytic tracks as ``CompactTrack`` tables, for physics tests (no spline fitting).

Each builder samples exact P, T, frame axes, Darboux vector, curvature and P'' at
equal arc-length spacing. Frames are the "up" frame where defined (zero bank), so a car
is upright on level track.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import build_table


def _table(P, T, N, B, Om, dT, length, closed):
    kappa = np.linalg.norm(dT, axis=1)
    return build_table(P, T, N, B, Om, kappa, dT, np.zeros(len(P)), length, closed)


def straight(length=100.0, pitch_deg=0.0, n=201, origin=(0.0, 0.0, 0.0)):
    """Straight track along +x rising at ``pitch_deg``; up frame."""
    a = np.radians(pitch_deg)
    s = np.linspace(0.0, length, n)
    T = np.tile([np.cos(a), 0.0, np.sin(a)], (n, 1))
    P = np.asarray(origin) + s[:, None] * T
    N = np.tile([0.0, 1.0, 0.0], (n, 1))
    B = np.cross(T, N)
    Z = np.zeros((n, 3))
    return _table(P, T, N, B, Z, Z, length, False)


def flat_circle(R=20.0, n=801, bank_deg=0.0, closed=True, turns=1.0):
    """Level circle of radius R (counter-clockwise seen from above), optionally banked."""
    L = 2 * np.pi * R * turns
    s = np.linspace(0.0, L, n)
    th = s / R
    P = np.column_stack([R * np.sin(th), R - R * np.cos(th), np.zeros(n)])
    T = np.column_stack([np.cos(th), np.sin(th), np.zeros(n)])
    dT = np.column_stack([-np.sin(th), np.cos(th), np.zeros(n)]) / R
    N0 = np.column_stack([-np.sin(th), np.cos(th), np.zeros(n)])
    B0 = np.tile([0.0, 0.0, 1.0], (n, 1))
    b = np.radians(bank_deg)
    N = np.cos(b) * N0 + np.sin(b) * B0
    B = np.cross(T, N)
    Om = np.tile([0.0, 0.0, 1.0 / R], (n, 1))
    return _table(P, T, N, B, Om, dT, L, closed)


def vertical_circle(R=10.0, n=801, closed=True):
    """Vertical circle in the x-z plane, starting at the bottom moving +x; the car rides
    inside (B points to the centre): a loop. Frame = Frenet, no twist."""
    L = 2 * np.pi * R
    s = np.linspace(0.0, L, n)
    th = s / R
    P = np.column_stack([R * np.sin(th), np.zeros(n), R - R * np.cos(th)])
    T = np.column_stack([np.cos(th), np.zeros(n), np.sin(th)])
    dT = np.column_stack([-np.sin(th), np.zeros(n), np.cos(th)]) / R
    B = dT * R
    N = np.cross(B, T)
    Om = np.cross(T, dT)
    return _table(P, T, N, B, Om, dT, L, closed)


def drop_then_straight(R=15.0, angle_deg=45.0, run_in=20.0, run_out=60.0, n_per_m=20):
    """A straight descending at ``angle_deg``, a circular pull-out of radius R, then level straight.

    Returns (track, z_drop_per_s) where z(s) is the exact height function.
    """
    a = np.radians(angle_deg)
    La = R * a
    L = run_in + La + run_out
    n = int(L * n_per_m) + 1
    s = np.linspace(0.0, L, n)
    P = np.zeros((n, 3)); T = np.zeros((n, 3)); dT = np.zeros((n, 3))
    # arc centre: the level part is at z=0, arc tangent to it at x = x1
    z_top = run_in * np.sin(a) + R * (1 - np.cos(a))
    x0 = 0.0
    for i, si in enumerate(s):
        if si <= run_in:
            T[i] = [np.cos(a), 0, -np.sin(a)]
            P[i] = [x0 + si * np.cos(a), 0, z_top - si * np.sin(a)]
        elif si <= run_in + La:
            phi = a - (si - run_in) / R  # current descent angle
            x_end_in = x0 + run_in * np.cos(a)
            cx = x_end_in + R * np.sin(a)
            T[i] = [np.cos(phi), 0, -np.sin(phi)]
            P[i] = [cx - R * np.sin(phi), 0, R - R * np.cos(phi)]
            dT[i] = np.array([np.sin(phi), 0, np.cos(phi)]) / R
        else:
            x_end = x0 + run_in * np.cos(a) + R * np.sin(a)
            T[i] = [1, 0, 0]
            P[i] = [x_end + (si - run_in - La), 0, 0]
    N = np.tile([0.0, 1.0, 0.0], (n, 1))
    B = np.cross(T, N)
    Om = np.cross(T, dT)
    return _table(P, T, N, B, Om, dT, L, False), z_top


def hilly_circle(R=40.0, amp=2.0, waves=3, n=4001):
    """Closed circuit: a circle of radius R with height A cos(k θ) (k waves); up frame.

    Arc length is computed numerically; frames by finite differences on a fine grid.
    """
    th = np.linspace(0.0, 2 * np.pi, 40001)
    x, y, z = R * np.sin(th), R - R * np.cos(th), amp * np.cos(waves * th)
    d = np.sqrt(np.diff(x) ** 2 + np.diff(y) ** 2 + np.diff(z) ** 2)
    sg = np.concatenate([[0], np.cumsum(d)])
    L = sg[-1]
    s = np.linspace(0.0, L, n)
    thi = np.interp(s, sg, th)
    # exact derivatives in θ, then to arc length
    def pos(t):
        return np.column_stack([R * np.sin(t), R - R * np.cos(t), amp * np.cos(waves * t)])
    def d1(t):
        return np.column_stack([R * np.cos(t), R * np.sin(t), -amp * waves * np.sin(waves * t)])
    def d2(t):
        return np.column_stack([-R * np.sin(t), R * np.cos(t), -amp * waves ** 2 * np.cos(waves * t)])
    P = pos(thi)
    r1 = d1(thi); r2 = d2(thi)
    sp = np.linalg.norm(r1, axis=1)
    T = r1 / sp[:, None]
    # P'' = (r2 - (r2·T) T) / sp²
    dT = (r2 - np.sum(r2 * T, axis=1)[:, None] * T) / sp[:, None] ** 2
    up = np.array([0.0, 0.0, 1.0])
    B = up - T[:, 2:3] * T
    B /= np.linalg.norm(B, axis=1)[:, None]
    N = np.cross(B, T)
    # Darboux Ω = T × P'' + ρ T, with ρ = dφ/ds: roll rate of the up frame, by finite differences
    Om = np.cross(T, dT)
    # twist: ρ = (dN/ds)·B  (N' = Ω × N, so N'·B = Ω·(N × B) = Ω·T)
    dN = np.gradient(N, s, axis=0)
    rho = np.sum(dN * B, axis=1)
    Om = Om - np.sum(Om * T, axis=1)[:, None] * T + rho[:, None] * T
    return _table(P, T, N, B, Om, dT, L, True)


def run(world, n_steps, record_every=1):
    """Run ``world`` and return (t (m,), samples (m, n_entities, N_CHANNELS), status)."""
    ts, ss = [], []
    status = world.run(n_steps, record_every, lambda t, s: (ts.append(t.copy()), ss.append(s.copy())))
    if not ts:
        return np.zeros(0), np.zeros((0, world.n_entities, 28)), status
    return np.concatenate(ts), np.concatenate(ss), status


def ballistic_hill(u=15.0, half_width=25.0, n=4001, g=9.81):
    """A hill shaped like a free-fall parabola z = −g x²/(2u²) over x ∈ [−w, w] (in x-z):
    a point crossing its top at speed ``u`` feels zero G all along. Returns (track, s_top)."""
    x = np.linspace(-half_width, half_width, 200001)
    z = -g * x**2 / (2 * u**2)
    d = np.sqrt(np.diff(x) ** 2 + np.diff(z) ** 2)
    sg = np.concatenate([[0], np.cumsum(d)])
    L = sg[-1]
    s = np.linspace(0.0, L, n)
    xs = np.interp(s, sg, x)
    c = g / u**2
    P = np.column_stack([xs, np.zeros(n), -0.5 * c * xs**2])
    r1 = np.column_stack([np.ones(n), np.zeros(n), -c * xs])
    r2 = np.column_stack([np.zeros(n), np.zeros(n), -c * np.ones(n)])
    sp = np.linalg.norm(r1, axis=1)
    T = r1 / sp[:, None]
    dT = (r2 - np.sum(r2 * T, axis=1)[:, None] * T) / sp[:, None] ** 2
    N = np.tile([0.0, 1.0, 0.0], (n, 1))
    B = np.cross(T, N)
    Om = np.cross(T, dT)
    return _table(P, T, N, B, Om, dT, L, False), float(np.interp(0.0, x, sg))


def qmul(a, b):
    """Quaternion product a ⊗ b (w, x, y, z), numpy (independent of the kernels' _qmul)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def qexp(v):
    """Unit quaternion of the rotation vector v (rad)."""
    a = np.linalg.norm(v)
    if a < 1e-15:
        return np.array([1.0, 0, 0, 0])
    return np.concatenate([[np.cos(a / 2)], np.sin(a / 2) * v / a])


def qrot(q):
    """Rotation matrix of the unit quaternion q (w, x, y, z), numpy."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def qlog_error(qa, qf, out=None):
    """Rotation vector θ (rad, world axes) of qa ⊗ qf* (a body of orientation ``qa`` turned by θ away
    from ``qf``), sign-fixed (scalar part ≥ 0); numpy, independent of the kernels. Also into ``out``."""
    d = qmul(np.asarray(qa, float), np.array([qf[0], -qf[1], -qf[2], -qf[3]]))
    if d[0] < 0.0:
        d = -d
    vn = np.linalg.norm(d[1:])
    th = d[1:] * (2.0 if vn < 1e-12 else 2.0 * np.arctan2(vn, d[0]) / vn)
    if out is not None:
        out[:] = th
    return th
