"""The numba kernels of the physics core: rows, chain solve, PGS, integrator, run loop.

Everything here takes flat contiguous arrays and scalars. ``run_chunk`` advances
the world by many steps in one call (no Python per step). Units SI.

Body state (``nb`` bodies: every car first, then every free body)
    pos (nb,3) m, quat (nb,4) w,x,y,z body→world, vel (nb,3) m/s, omg (nb,3) rad/s
    (world axes), inv_mass (nb,), inv_ib (nb,3) inverse inertia in body axes
    (car axes forward, left, up), ib (nb,3).

Mobility. Every body carries a 6×6 mobility ``Wt`` used by all non-track rows:
for a free body it is ``W = diag(1/m, I_w⁻¹)``; for a car on its track it is the
mobility *with the track rows enforced*, ``W̃ = W − W Gᵀ A⁻¹ G W`` (``G`` the five
track rows 1–5, ``A = G W Gᵀ``), and ``P = A⁻¹ G W`` (5×6) maps a generalised
impulse ``f`` on the car to the track-row impulses that keep rows 1–5 satisfied
(``Δλ_T = −P f``). After one exact projection onto rows 1–5 at the start of a
step, every later impulse is applied through ``W̃`` so rows 1–5 stay exactly
satisfied and their impulses stay exact: the 5×5 block of each track joint is
solved exactly, and for trains the coupler rows reduce to a block-tridiagonal
system solved exactly (block LDLᵀ, O(cars)).

Step (the loop of ``run_chunk``): frames at each car's s → transport velocities with the
frame → integrate velocities (gravity, gyroscopic, explicit drag) → prepare track
blocks and project → prepare joints, factor the chains → warm start bounded rows →
iterations (exact chain solve ↔ PGS sweep of bounded rows) → final chain solve →
one-sided support check (redo with the new active set) → integrate positions →
update s → record.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_DT, C_N, C_OMEGA, C_P, C_T, NCOL, eval_track
from trackrider.jit import njit
from trackrider.physics import channels as ch

# ---- joint kind codes (one row table for all joints; new kinds are additions)
J_DISTANCE = 0
J_BALL = 1
J_PULLEY = 2
J_BALL_TRACK = 3    # ball coupler between two track-bound cars: only its row along the track
J_HINGE = 4         # ball (3 rows) + two angular rows keeping an axis: one 5×5 block
J_PRISMATIC = 5     # two line rows (moving-axis term) + three angle rows: one 5×5 block
J_HINGE_AXIS = 6    # one angular row about a hinge axis: angle limits (JI_SLACK) or motor / damper
J_SLIDE = 7         # one row along a prismatic axis: limits (JI_SLACK) or spring / damper
NJR = 5             # rows per joint at most (jJ (nj, NJR, 12), jt, jlo, jhi, jlam (nj, NJR))

# ---- car float columns (car_f)
CF_S = 0            # arc length of the anchor, m
CF_CG = 1           # cg_height, m
CF_RIDER = 2        # rider_height, m
CF_GAUGE = 3        # m
CF_SPEED = 4        # last tangential speed, m/s (for accel)
CF_L1 = 5           # track rows 1..5 impulses of the last step (5 columns), N·s
CF_L6 = 10          # motor row impulse
CF_L7 = 11          # anti-rollback ratchet impulse
CF_L8 = 12          # rolling-friction row impulse
CF_TR = 13          # transport impulse along N, B (2) and torque about T (1)
CF_FEXP = 16        # explicit resistance force along T last step, N
CF_PREV = 17        # frame axes T, N, B of the last step (9 columns)
CF_DAVIS = 26       # Davis A, B, C (3)
CF_HANGR = 29       # suspended car: rider point above the hanging body's centre of mass along its up, m
NCF = 30
# ---- car int columns (car_i)
CI_TRACK = 0
CI_ONESIDED = 1     # 1: railway (support one-sided)
CI_ON = 2           # 1: held by its track joint
CI_SUPPORT = 3      # 1: support row active this step
CI_SECTION = 4      # active section index, -1 none
CI_HASPREV = 5      # 1: CF_PREV holds a frame
CI_RANOFF = 6
CI_HANG = 7         # suspended car: body index of the hanging body, -1 none
NCI = 8

# ---- joint float columns (jf)
JF_LA = 0           # anchor a in body a axes (or world point if a is the world), 3
JF_LB = 3           # anchor b, 3
JF_GA = 6           # pulley ground anchor a, 3
JF_GB = 9           # pulley ground anchor b, 3
JF_LEN = 12         # rest length (distance) / C_i (pulley), m
JF_RATIO = 13
JF_K = 14           # stiffness N/m (0: rigid)
JF_C = 15           # damping N·s/m
JF_MIN = 16         # slack range min length, m (distance, when JI_SLACK)
JF_MAX = 17
JF_AX = 18          # hinge / prismatic axis in body a axes (world axes if a is the world), 3
JF_P1 = 21          # hinge: 1st axis normal in b axes; prismatic: 1st normal in a axes; limit: ref in a, 3
JF_P2 = 24          # hinge: 2nd axis normal in b axes; prismatic: 2nd normal in a axes; limit: ref in b, 3
JF_Q = 27           # prismatic: rest relative rotation q_a0* ⊗ q_b0 (w, x, y, z), 4
JF_TQ = 31          # hinge motor max torque N·m / slide: unused (inf: unbounded)
JF_V = 32           # hinge motor target angular speed rad/s
NJF = 33
# ---- joint int columns (ji)
JI_KIND = 0
JI_A = 1            # body index, -1 world
JI_B = 2
JI_SLACK = 3        # 1: one-sided (rope / slack range)
JI_CHAIN = 4        # 1: solved exactly by the chain solver of a train
NJI = 5


# ----------------------------------------------------------------------------- small maths
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _qmul(aw, ax, ay, az, bw, bx, by, bz):
    """Quaternion product a ⊗ b (w, x, y, z)."""
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _rotvec(w, x, y, z):
    """Rotation vector (rad) of the unit quaternion (w, x, y, z), sign-fixed (w ≥ 0)."""
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vn = np.sqrt(x * x + y * y + z * z)
    f = 2.0 if vn < 1e-12 else 2.0 * np.arctan2(vn, w) / vn
    return f * x, f * y, f * z


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _mv(R, v0, v1, v2):
    """R v for a 3×3 R."""
    return (R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2, R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2,
            R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2)


@njit(cache=True, error_model="numpy", _nrt=False)
def quat_to_mat(q, R):
    """Rotation matrix (3,3) of the unit quaternion ``q`` (w, x, y, z)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - w * z)
    R[0, 2] = 2.0 * (x * z + w * y)
    R[1, 0] = 2.0 * (x * y + w * z)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - w * x)
    R[2, 0] = 2.0 * (x * z - w * y)
    R[2, 1] = 2.0 * (y * z + w * x)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True, error_model="numpy", _nrt=False)
def mat_to_quat(R, q):
    """Unit quaternion (w, x, y, z) of the rotation matrix ``R`` (Shepperd's method)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        S = np.sqrt(tr + 1.0) * 2.0
        q[0] = 0.25 * S
        q[1] = (R[2, 1] - R[1, 2]) / S
        q[2] = (R[0, 2] - R[2, 0]) / S
        q[3] = (R[1, 0] - R[0, 1]) / S
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        S = np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2.0
        q[0] = (R[2, 1] - R[1, 2]) / S
        q[1] = 0.25 * S
        q[2] = (R[0, 1] + R[1, 0]) / S
        q[3] = (R[0, 2] + R[2, 0]) / S
    elif R[1, 1] > R[2, 2]:
        S = np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2.0
        q[0] = (R[0, 2] - R[2, 0]) / S
        q[1] = (R[0, 1] + R[1, 0]) / S
        q[2] = 0.25 * S
        q[3] = (R[1, 2] + R[2, 1]) / S
    else:
        S = np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2.0
        q[0] = (R[1, 0] - R[0, 1]) / S
        q[1] = (R[0, 2] + R[2, 0]) / S
        q[2] = (R[1, 2] + R[2, 1]) / S
        q[3] = 0.25 * S
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for k in range(4):
        q[k] /= n


@njit(cache=True, error_model="numpy", _nrt=False)
def rotation_error(qa, qf, theta):
    """Rotation vector θ (rad, world axes) of ``q_A ⊗ q_F*``, sign-fixed (scalar part ≥ 0).

    A car turned by θ away from its frame has ``q_A = exp(θ/2) ⊗ q_F``; the result is θ
    exactly (not the seed's −2θ).
    """
    aw, ax, ay, az = qa[0], qa[1], qa[2], qa[3]
    bw, bx, by, bz = qf[0], -qf[1], -qf[2], -qf[3]
    w = aw * bw - ax * bx - ay * by - az * bz
    x = aw * bx + ax * bw + ay * bz - az * by
    y = aw * by - ax * bz + ay * bw + az * bx
    z = aw * bz + ax * by - ay * bx + az * bw
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vn = np.sqrt(x * x + y * y + z * z)
    if vn < 1e-12:
        f = 2.0
    else:
        f = 2.0 * np.arctan2(vn, w) / vn
    theta[0] = f * x
    theta[1] = f * y
    theta[2] = f * z


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def invert_spd(A, n, Ainv, work):
    """Inverse of the leading n×n block of a symmetric positive definite ``A`` (Gauss–Jordan)."""
    for i in range(n):
        for j in range(n):
            work[i, j] = A[i, j]
            Ainv[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        p = work[c, c]
        if p < 1e-300:
            p = 1e-300
        ip = 1.0 / p
        for j in range(n):
            work[c, j] *= ip
            Ainv[c, j] *= ip
        for i in range(n):
            if i != c:
                f = work[i, c]
                if f != 0.0:
                    for j in range(n):
                        work[i, j] -= f * work[c, j]
                        Ainv[i, j] -= f * Ainv[c, j]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def body_mobility(b, quat, inv_mass, inv_ib, R, W):
    """W = diag(1/m I3, R diag(inv_ib) Rᵀ) of body ``b`` into W (6,6)."""
    quat_to_mat(quat[b], R)
    for i in range(6):
        for j in range(6):
            W[i, j] = 0.0
    im = inv_mass[b]
    W[0, 0] = im
    W[1, 1] = im
    W[2, 2] = im
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R[i, k] * inv_ib[b, k] * R[j, k]
            W[3 + i, 3 + j] = s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def apply_impulse(b, f, scale, Wt, Pm, lamT, car_on, ncars, vel, omg):
    """Apply generalised impulse ``scale·f`` (6) to body ``b`` through its mobility W̃.

    For a car on its track the track-row impulses change by −P f (rows 1–5 stay satisfied).
    """
    for i in range(3):
        dv = 0.0
        dw = 0.0
        for k in range(6):
            dv += Wt[b, i, k] * f[k]
            dw += Wt[b, 3 + i, k] * f[k]
        vel[b, i] += scale * dv
        omg[b, i] += scale * dw
    if b < ncars and car_on[b]:
        for r in range(5):
            s = 0.0
            for k in range(6):
                s += Pm[b, r, k] * f[k]
            lamT[b, r] -= scale * s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def row_velocity(b, f, vel, omg):
    """J·u of body ``b`` for a 6-vector row ``f``."""
    return (f[0] * vel[b, 0] + f[1] * vel[b, 1] + f[2] * vel[b, 2]
            + f[3] * omg[b, 0] + f[4] * omg[b, 1] + f[5] * omg[b, 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def row_mobility(b, f, g, Wt):
    """fᵀ W̃_b g."""
    s = 0.0
    for i in range(6):
        t = 0.0
        for k in range(6):
            t += Wt[b, i, k] * g[k]
        s += f[i] * t
    return s


# ----------------------------------------------------------------------------- track joint
# Track joint (PHYSICS.md §2; seed 001), track fixed in the world (Jt = Rt = 0).
# Anchor A.P = x + r_m on the curve, r_m = −cg·u (u: car up axis); frame (T, N_w, B_w, Ω) at s.
#   row 1  C = (A.P − P)·N_w      J = [N_w, r_m × N_w]      target erp/h (P − A.P)·N_w   ±∞
#   row 2  C = (A.P − P)·B_w      J = [B_w, r_m × B_w]      target erp/h (P − A.P)·B_w   [0,∞) railway
#   rows 3–5, e ∈ (T, N_w, B_w): relative angular velocity about e equals (Ω·e)·(T·v_A):
#          J = [−(Ω·e) T, e − (Ω·e)(r_m × T)]              target −erp/h θ·e, θ = rotvec(q_A ⊗ q_F*)
#   (Ċ of rows 1–2 is J·u on the curve since dP/dt = T ṡ ⟂ N_w, B_w; rows 3–5 are velocity rows.)
#   K = A = G W Gᵀ (5×5), solved exactly once per step; W̃, P as in the module docstring.
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare_track_block(b, fr, quat, pos, inv_mass, inv_ib, cg, erp_h, support_on,
                        G, tgt, Wt, Pm, R, W, A, Ainv, work, qf, theta):
    """Fill G (5,6), targets, W̃ and P of car ``b`` from its frame ``fr`` (NCOL).

    Leaves the car's mobility W (6,6) in ``W`` and the Cholesky factor of A in ``A`` (inverse pivots
    on ``Ainv``'s diagonal) for ``project_track``.
    """
    body_mobility(b, quat, inv_mass, inv_ib, R, W)
    ux, uy, uz = R[0, 2], R[1, 2], R[2, 2]
    rx, ry, rz = -cg * ux, -cg * uy, -cg * uz
    ax, ay, az = pos[b, 0] + rx, pos[b, 1] + ry, pos[b, 2] + rz
    dx, dy, dz = fr[C_P] - ax, fr[C_P + 1] - ay, fr[C_P + 2] - az
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    Ox, Oy, Oz = fr[C_OMEGA], fr[C_OMEGA + 1], fr[C_OMEGA + 2]
    # rows 1, 2
    c0, c1, c2 = _cross(rx, ry, rz, Nx, Ny, Nz)
    G[b, 0, 0], G[b, 0, 1], G[b, 0, 2], G[b, 0, 3], G[b, 0, 4], G[b, 0, 5] = Nx, Ny, Nz, c0, c1, c2
    tgt[b, 0] = erp_h * (dx * Nx + dy * Ny + dz * Nz)
    c0, c1, c2 = _cross(rx, ry, rz, Bx, By, Bz)
    G[b, 1, 0], G[b, 1, 1], G[b, 1, 2], G[b, 1, 3], G[b, 1, 4], G[b, 1, 5] = Bx, By, Bz, c0, c1, c2
    tgt[b, 1] = erp_h * (dx * Bx + dy * By + dz * Bz)
    # rows 3-5: rotation error against the frame quaternion ([T N B] columns)
    work[0, 0], work[1, 0], work[2, 0] = Tx, Ty, Tz
    work[0, 1], work[1, 1], work[2, 1] = Nx, Ny, Nz
    work[0, 2], work[1, 2], work[2, 2] = Bx, By, Bz
    mat_to_quat(work, qf)
    rotation_error(quat[b], qf, theta)
    tx, ty, tz = _cross(rx, ry, rz, Tx, Ty, Tz)
    for k in range(3):
        if k == 0:
            ex, ey, ez = Tx, Ty, Tz
        elif k == 1:
            ex, ey, ez = Nx, Ny, Nz
        else:
            ex, ey, ez = Bx, By, Bz
        oe = Ox * ex + Oy * ey + Oz * ez
        G[b, 2 + k, 0] = -oe * Tx
        G[b, 2 + k, 1] = -oe * Ty
        G[b, 2 + k, 2] = -oe * Tz
        G[b, 2 + k, 3] = ex - oe * tx
        G[b, 2 + k, 4] = ey - oe * ty
        G[b, 2 + k, 5] = ez - oe * tz
        tgt[b, 2 + k] = -erp_h * (theta[0] * ex + theta[1] * ey + theta[2] * ez)
    if not support_on:
        for k in range(6):
            G[b, 1, k] = 0.0
        tgt[b, 1] = 0.0
    # WG[r] = W G[r]ᵀ (W block diagonal: 1/m I3 and I_w⁻¹), stored in Pm[b] for now
    im = W[0, 0]
    for r in range(5):
        Pm[b, r, 0] = im * G[b, r, 0]
        Pm[b, r, 1] = im * G[b, r, 1]
        Pm[b, r, 2] = im * G[b, r, 2]
        for i in range(3):
            Pm[b, r, 3 + i] = W[3 + i, 3] * G[b, r, 3] + W[3 + i, 4] * G[b, r, 4] + W[3 + i, 5] * G[b, r, 5]
    for r in range(5):
        for c in range(r, 5):
            s = 0.0
            for k in range(6):
                s += G[b, r, k] * Pm[b, c, k]
            A[r, c] = s
            A[c, r] = s
    if not support_on:
        for c in range(5):
            A[1, c] = 0.0
            A[c, 1] = 0.0
        A[1, 1] = 1.0
    # Cholesky A = L Lᵀ in place (lower triangle of A; Ainv[r, r] keeps 1/L_rr)
    for r in range(5):
        d = A[r, r]
        for k in range(r):
            d -= A[r, k] * A[r, k]
        if d < 1e-300:
            d = 1e-300
        lr = np.sqrt(d)
        A[r, r] = lr
        Ainv[r, r] = 1.0 / lr
        for c in range(r + 1, 5):
            e = A[c, r]
            for k in range(r):
                e -= A[c, k] * A[r, k]
            A[c, r] = e * Ainv[r, r]
    # P = A⁻¹ WG (5,6): two triangular solves per column, into work rows 0..4
    for i in range(6):
        for r in range(5):
            e = Pm[b, r, i]
            for k in range(r):
                e -= A[r, k] * work[k, i]
            work[r, i] = e * Ainv[r, r]
        for r in range(4, -1, -1):
            e = work[r, i]
            for k in range(r + 1, 5):
                e -= A[k, r] * work[k, i]
            work[r, i] = e * Ainv[r, r]
    # W̃ = W − WGᵀ P (symmetric)
    for i in range(6):
        for j in range(i, 6):
            s = W[i, j]
            for r in range(5):
                s -= Pm[b, r, i] * work[r, j]
            Wt[b, i, j] = s
            Wt[b, j, i] = s
    for r in range(5):
        for i in range(6):
            Pm[b, r, i] = work[r, i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def project_track(b, G, tgt, Ainv, W, vel, omg, lamT, rr, A):
    """Exact projection of car ``b``'s velocity onto rows 1–5: Δλ = A⁻¹(t − G u), u += W Gᵀ Δλ.

    ``A`` holds the Cholesky factor and ``Ainv``'s diagonal its inverse pivots (``prepare_track_block``).
    """
    for r in range(5):
        e = tgt[b, r] - row_velocity(b, G[b, r], vel, omg)
        for k in range(r):
            e -= A[r, k] * rr[5 + k]
        rr[5 + r] = e * Ainv[r, r]
    for r in range(4, -1, -1):
        e = rr[5 + r]
        for k in range(r + 1, 5):
            e -= A[k, r] * rr[5 + k]
        rr[5 + r] = e * Ainv[r, r]
        lamT[b, r] += rr[5 + r]
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    for r in range(5):
        dl = rr[5 + r]
        vel[b, 0] += W[0, 0] * G[b, r, 0] * dl
        vel[b, 1] += W[0, 0] * G[b, r, 1] * dl
        vel[b, 2] += W[0, 0] * G[b, r, 2] * dl
        f0 += G[b, r, 3] * dl
        f1 += G[b, r, 4] * dl
        f2 += G[b, r, 5] * dl
    for i in range(3):
        omg[b, i] += W[3 + i, 3] * f0 + W[3 + i, 4] * f1 + W[3 + i, 5] * f2


# ----------------------------------------------------------------------------- joints
# Distance (PHYSICS.md §3): C = |p_b − p_a| − L, n = (p_b − p_a)/|p_b − p_a|,
#   J = [−n, −(r_a × n), n, r_b × n], K = J W̃ Jᵀ; soft: γ = 1/(h(c + h k)), β = h k/(c + h k),
#   target −β/h C, effective mass 1/(K + γ); slack range [L_min, L_max]: one-sided rows.
# Ball (seed 002): C = p_a − p_b (3 rows), J_k = [e_k, r_a × e_k, −e_k, −(r_b × e_k)], 3×3 block.
# Pulley (seed 000 in 3D): u = p − g, l = |u|, n = u/l, C = C_i − (l_a + r l_b),
#   J = [−n_a, −(r_a × n_a), −r n_b, −r (r_b × n_b)]; a rope (slack) only pulls: λ ≥ 0,
#   speculative target −C/h while slack.
@njit("void(float64[:, :, ::1], int64, int64, " + ", ".join(["float64"] * 12) + ")",
      cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _set_row(jJ, j, r, l0, l1, l2, a0, a1, a2, m0, m1, m2, b0, b1, b2):
    jJ[j, r, 0], jJ[j, r, 1], jJ[j, r, 2], jJ[j, r, 3], jJ[j, r, 4], jJ[j, r, 5] = l0, l1, l2, a0, a1, a2
    jJ[j, r, 6], jJ[j, r, 7], jJ[j, r, 8], jJ[j, r, 9], jJ[j, r, 10], jJ[j, r, 11] = m0, m1, m2, b0, b1, b2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _ball_rows(j, jJ, jt, rax, ray, raz, rbx, rby, rbz, ex_, ey_, ez_, erp_h):
    """Rows 0–2 of a ball joint (C = p_a − p_b = (ex_, ey_, ez_)): J_k = [e_k, r_a × e_k, −e_k, −(r_b × e_k)]."""
    for r in range(3):
        ex = 1.0 if r == 0 else 0.0
        ey = 1.0 if r == 1 else 0.0
        ez = 1.0 if r == 2 else 0.0
        c0, c1, c2 = _cross(rax, ray, raz, ex, ey, ez)
        d0, d1, d2 = _cross(rbx, rby, rbz, ex, ey, ez)
        _set_row(jJ, j, r, ex, ey, ez, c0, c1, c2, -ex, -ey, -ez, -d0, -d1, -d2)
    jt[j, 0] = -erp_h * ex_
    jt[j, 1] = -erp_h * ey_
    jt[j, 2] = -erp_h * ez_


@njit("UniTuple(float64, 3)(int64, float64[:, ::1], float64[:, ::1], int64, int64, float64[:, ::1])",
      cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _axis_w(a, quat, jf, j, col, R):
    """World direction of the vector jf[j, col:col+3] fixed in body ``a`` (world axes if a < 0: the world)."""
    if a < 0:
        return jf[j, col], jf[j, col + 1], jf[j, col + 2]
    quat_to_mat(quat[a], R)
    return _mv(R, jf[j, col], jf[j, col + 1], jf[j, col + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _anchor(a, quat, pos, jf, j, col, R):
    """Lever arm r = R_a jf[j, col:col+3] and world point p = x_a + r of a joint anchor on body
    ``a`` (the world if a < 0: r = 0, p = jf[j, col:col+3])."""
    if a < 0:
        return 0.0, 0.0, 0.0, jf[j, col], jf[j, col + 1], jf[j, col + 2]
    rx, ry, rz = _axis_w(a, quat, jf, j, col, R)
    return rx, ry, rz, pos[a, 0] + rx, pos[a, 1] + ry, pos[a, 2] + rz


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _one_sided(j, x, lo, hi, h, erp_h, jt, jlo, jhi):
    """Limit row of a coordinate x (J·u = ẋ) kept in [lo, hi]: the nearer bound is active; a
    speculative target −C/h while inside (no impulse until the limit would be crossed this step)."""
    if x - lo < hi - x:
        C = x - lo           # must stay ≥ 0: λ ≥ 0
        jt[j, 0] = -erp_h * C if C < 0.0 else -C / h
        jlo[j, 0] = 0.0
    else:
        C = x - hi           # must stay ≤ 0: λ ≤ 0
        jt[j, 0] = -erp_h * C if C > 0.0 else -C / h
        jhi[j, 0] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare_joint(j, ji, jf, pos, quat, h, erp_h, jJ, jt, jlo, jhi, jgam, jm, R, free_joints):
    """Fill rows, targets, bounds and softness of joint ``j``.

    ``free_joints`` is None when every joint of the world is a train's chained coupler (rigid or
    soft distance, ball along the track): numba then prunes the other kinds at compile time.
    """
    kind = ji[j, JI_KIND]
    a = ji[j, JI_A]
    b = ji[j, JI_B]
    rax, ray, raz, pax, pay, paz = _anchor(a, quat, pos, jf, j, JF_LA, R)
    rbx, rby, rbz, pbx, pby, pbz = _anchor(b, quat, pos, jf, j, JF_LB, R)
    jgam[j] = 0.0
    for r in range(3):
        jlo[j, r] = -np.inf
        jhi[j, r] = np.inf
        for k in range(12):
            jJ[j, r, k] = 0.0
    if kind == J_DISTANCE:
        jm[j] = 1
        dx, dy, dz = pbx - pax, pby - pay, pbz - paz
        ln = np.sqrt(dx * dx + dy * dy + dz * dz)
        if ln < 1e-9:
            nx, ny, nz = 1.0, 0.0, 0.0
        else:
            nx, ny, nz = dx / ln, dy / ln, dz / ln
        c0, c1, c2 = _cross(rax, ray, raz, nx, ny, nz)
        d0, d1, d2 = _cross(rbx, rby, rbz, nx, ny, nz)
        _set_row(jJ, j, 0, -nx, -ny, -nz, -c0, -c1, -c2, nx, ny, nz, d0, d1, d2)
        if free_joints is not None and ji[j, JI_SLACK]:
            # slack range: at L_min push only (λ ≥ 0), at L_max pull only (λ ≤ 0)
            _one_sided(j, ln, jf[j, JF_MIN], jf[j, JF_MAX], h, erp_h, jt, jlo, jhi)
        else:
            C = ln - jf[j, JF_LEN]
            k = jf[j, JF_K]
            c = jf[j, JF_C]
            if k > 0.0 or c > 0.0:
                den = c + h * k
                jgam[j] = 1.0 / (h * den)
                jt[j, 0] = -(h * k / den) / h * C
            else:
                jt[j, 0] = -erp_h * C
    elif kind == J_BALL_TRACK:
        # Ball coupler of two cars that are both held by their track joints: of the three ball
        # rows only the one along the track is independent of the track rows (the other two
        # would make the system singular), so C = (p_a − p_b)·n with n the mean forward axis.
        jm[j] = 1
        quat_to_mat(quat[a], R)
        nx, ny, nz = R[0, 0], R[1, 0], R[2, 0]
        quat_to_mat(quat[b], R)
        nx, ny, nz = nx + R[0, 0], ny + R[1, 0], nz + R[2, 0]
        nn = np.sqrt(nx * nx + ny * ny + nz * nz)
        nx, ny, nz = nx / nn, ny / nn, nz / nn
        c0, c1, c2 = _cross(rax, ray, raz, nx, ny, nz)
        d0, d1, d2 = _cross(rbx, rby, rbz, nx, ny, nz)
        _set_row(jJ, j, 0, nx, ny, nz, c0, c1, c2, -nx, -ny, -nz, -d0, -d1, -d2)
        jt[j, 0] = -erp_h * ((pax - pbx) * nx + (pay - pby) * ny + (paz - pbz) * nz)
        k = jf[j, JF_K]
        c = jf[j, JF_C]
        if k > 0.0 or c > 0.0:
            den = c + h * k
            jgam[j] = 1.0 / (h * den)
            jt[j, 0] = -(k / den) * ((pax - pbx) * nx + (pay - pby) * ny + (paz - pbz) * nz)
    elif free_joints is None:
        pass  # only chained couplers in this world (the kinds above): the rest is not compiled
    elif kind == J_BALL:
        jm[j] = 3
        _ball_rows(j, jJ, jt, rax, ray, raz, rbx, rby, rbz, pax - pbx, pay - pby, paz - pbz, erp_h)
    elif kind == J_HINGE:
        # Hinge = ball + two angular rows. Axis a fixed in body a (a_w = R_a ax), normals b1, b2 fixed
        # in b (b_k = R_b p_k, ⟂ axis at the start). Ball rows as J_BALL; angular rows
        #   C_k = a_w·b_k,  Ċ_k = (ω_a × a)·b_k + a·(ω_b × b_k) = ω_a·(a × b_k) − ω_b·(a × b_k)
        #   J_k = [0, a × b_k, 0, −(a × b_k)],  target −erp/h C_k,  K = J W̃ Jᵀ (5×5 block with the ball).
        jm[j] = 5
        _ball_rows(j, jJ, jt, rax, ray, raz, rbx, rby, rbz, pax - pbx, pay - pby, paz - pbz, erp_h)
        axx, axy, axz = _axis_w(a, quat, jf, j, JF_AX, R)
        for k in range(2):
            bx_, by_, bz_ = _axis_w(b, quat, jf, j, JF_P1 + 3 * k, R)
            c0, c1, c2 = _cross(axx, axy, axz, bx_, by_, bz_)
            _set_row(jJ, j, 3 + k, 0.0, 0.0, 0.0, c0, c1, c2, 0.0, 0.0, 0.0, -c0, -c1, -c2)
            jt[j, 3 + k] = -erp_h * (axx * bx_ + axy * by_ + axz * bz_)
            jlo[j, 3 + k] = -np.inf
            jhi[j, 3 + k] = np.inf
    elif kind == J_PRISMATIC:
        # Prismatic (seed 003): d = p_b − p_a, normals n1, n2 ⟂ axis fixed in body a (world if a is the
        # world). Line rows C_k = d·n_k; the axis moves with a, so (Dirk Gregorius's point)
        #   Ċ_k = (ṗ_b − ṗ_a)·n_k + d·(ω_a × n_k)
        #       = n_k·(v_b + ω_b × r_b) − n_k·(v_a + ω_a × r_a) + ω_a·(n_k × d)
        #   J_k = [−n_k, −(r_a + d) × n_k, n_k, r_b × n_k]   (r_a + d = p_b − x_a: the lever arm to p_b)
        # Angle rows: q_b = q_a ⊗ q_rel at rest; θ = rotvec(q_b ⊗ (q_a ⊗ q_rel)*) (world axes),
        #   Ċ_e ≈ (ω_b − ω_a)·e, J_e = [0, −e, 0, e] for e = x, y, z; targets −erp/h C. One 5×5 block.
        jm[j] = 5
        dx, dy, dz = pbx - pax, pby - pay, pbz - paz
        lx, ly, lz = rax + dx, ray + dy, raz + dz
        for k in range(2):
            nx, ny, nz = _axis_w(a, quat, jf, j, JF_P1 + 3 * k, R)
            c0, c1, c2 = _cross(lx, ly, lz, nx, ny, nz)
            d0, d1, d2 = _cross(rbx, rby, rbz, nx, ny, nz)
            _set_row(jJ, j, k, -nx, -ny, -nz, -c0, -c1, -c2, nx, ny, nz, d0, d1, d2)
            jt[j, k] = -erp_h * (dx * nx + dy * ny + dz * nz)
        if a >= 0:
            qaw, qax, qay, qaz = quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]
        else:
            qaw, qax, qay, qaz = 1.0, 0.0, 0.0, 0.0
        if b >= 0:
            qbw, qbx, qby, qbz = quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]
        else:
            qbw, qbx, qby, qbz = 1.0, 0.0, 0.0, 0.0
        tw, tx, ty, tz = _qmul(qaw, qax, qay, qaz, jf[j, JF_Q], jf[j, JF_Q + 1], jf[j, JF_Q + 2], jf[j, JF_Q + 3])
        ew, ex_, ey_, ez_ = _qmul(qbw, qbx, qby, qbz, tw, -tx, -ty, -tz)
        th0, th1, th2 = _rotvec(ew, ex_, ey_, ez_)
        _set_row(jJ, j, 2, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)
        _set_row(jJ, j, 3, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
        _set_row(jJ, j, 4, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        jt[j, 2] = -erp_h * th0
        jt[j, 3] = -erp_h * th1
        jt[j, 4] = -erp_h * th2
        jlo[j, 3], jhi[j, 3], jlo[j, 4], jhi[j, 4] = -np.inf, np.inf, -np.inf, np.inf
    elif kind == J_HINGE_AXIS:
        # One row about the hinge axis a_w: J = [0, −a_w, 0, a_w] (J·u = (ω_b − ω_a)·a_w = dθ/dt).
        # Angle θ = atan2((r_a × r_b)·a_w, r_a·r_b) with reference normals r_a = R_a p_a, r_b = R_b p_b
        # (equal at the start: θ = 0). Limits [lo, hi] (JI_SLACK): the nearer one is a one-sided row
        # like the slack distance; else motor/damper: target JF_V, bounds ±JF_TQ h, damping c as
        # softness γ = 1/(h c) (c = 0: rigid motor).
        jm[j] = 1
        axx, axy, axz = _axis_w(a, quat, jf, j, JF_AX, R)
        _set_row(jJ, j, 0, 0.0, 0.0, 0.0, -axx, -axy, -axz, 0.0, 0.0, 0.0, axx, axy, axz)
        if ji[j, JI_SLACK]:
            u0, u1, u2 = _axis_w(a, quat, jf, j, JF_P1, R)
            w0, w1, w2 = _axis_w(b, quat, jf, j, JF_P2, R)
            c0, c1, c2 = _cross(u0, u1, u2, w0, w1, w2)
            th = np.arctan2(c0 * axx + c1 * axy + c2 * axz, u0 * w0 + u1 * w1 + u2 * w2)
            _one_sided(j, th, jf[j, JF_MIN], jf[j, JF_MAX], h, erp_h, jt, jlo, jhi)
        else:
            jt[j, 0] = jf[j, JF_V]
            jlo[j, 0] = -jf[j, JF_TQ] * h
            jhi[j, 0] = jf[j, JF_TQ] * h
            if jf[j, JF_C] > 0.0:
                jgam[j] = 1.0 / (h * jf[j, JF_C])
    elif kind == J_SLIDE:
        # One row along the prismatic axis u (fixed in a): C = d·u − x_rest, J = [−u, −(r_a + d) × u, u, r_b × u]
        # (same moving-axis term as the line rows). Limits [lo, hi] on x = d·u (JI_SLACK): one-sided
        # like the slack distance; else spring k / damper c in soft form γ = 1/(h(c + hk)), target
        # −k/(c + hk)·C (PHYSICS.md §3).
        jm[j] = 1
        dx, dy, dz = pbx - pax, pby - pay, pbz - paz
        ux, uy, uz = _axis_w(a, quat, jf, j, JF_AX, R)
        c0, c1, c2 = _cross(rax + dx, ray + dy, raz + dz, ux, uy, uz)
        d0, d1, d2 = _cross(rbx, rby, rbz, ux, uy, uz)
        _set_row(jJ, j, 0, -ux, -uy, -uz, -c0, -c1, -c2, ux, uy, uz, d0, d1, d2)
        x = dx * ux + dy * uy + dz * uz
        if ji[j, JI_SLACK]:
            _one_sided(j, x, jf[j, JF_MIN], jf[j, JF_MAX], h, erp_h, jt, jlo, jhi)
        else:
            k = jf[j, JF_K]
            c = jf[j, JF_C]
            den = c + h * k
            if den > 0.0:
                jgam[j] = 1.0 / (h * den)
                jt[j, 0] = -(k / den) * (x - jf[j, JF_LEN])
    else:  # J_PULLEY
        jm[j] = 1
        r_ = jf[j, JF_RATIO]
        ux, uy, uz = pax - jf[j, JF_GA], pay - jf[j, JF_GA + 1], paz - jf[j, JF_GA + 2]
        la = np.sqrt(ux * ux + uy * uy + uz * uz)
        nax, nay, naz = (ux / la, uy / la, uz / la) if la > 1e-9 else (0.0, 0.0, 1.0)
        ux, uy, uz = pbx - jf[j, JF_GB], pby - jf[j, JF_GB + 1], pbz - jf[j, JF_GB + 2]
        lb = np.sqrt(ux * ux + uy * uy + uz * uz)
        nbx, nby, nbz = (ux / lb, uy / lb, uz / lb) if lb > 1e-9 else (0.0, 0.0, 1.0)
        c0, c1, c2 = _cross(rax, ray, raz, nax, nay, naz)
        d0, d1, d2 = _cross(rbx, rby, rbz, nbx, nby, nbz)
        _set_row(jJ, j, 0, -nax, -nay, -naz, -c0, -c1, -c2, -r_ * nbx, -r_ * nby, -r_ * nbz,
                 -r_ * d0, -r_ * d1, -r_ * d2)
        C = jf[j, JF_LEN] - (la + r_ * lb)
        if ji[j, JI_SLACK]:
            jlo[j, 0] = 0.0
            jt[j, 0] = -C / h if C >= 0.0 else -erp_h * C
        else:
            jt[j, 0] = -erp_h * C


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_block(j, ji, jJ, jgam, jm, Wt, K):
    """K = J W̃ Jᵀ + γ I (m×m) of joint ``j``."""
    a = ji[j, JI_A]
    b = ji[j, JI_B]
    m = jm[j]
    for r in range(m):
        for c in range(m):
            s = 0.0
            if a >= 0:
                s += row_mobility(a, jJ[j, r, 0:6], jJ[j, c, 0:6], Wt)
            if b >= 0:
                s += row_mobility(b, jJ[j, r, 6:12], jJ[j, c, 6:12], Wt)
            K[r, c] = s
        K[r, r] += jgam[j]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_velocity(j, r, ji, jJ, vel, omg):
    a = ji[j, JI_A]
    b = ji[j, JI_B]
    s = 0.0
    if a >= 0:
        s += row_velocity(a, jJ[j, r, 0:6], vel, omg)
    if b >= 0:
        s += row_velocity(b, jJ[j, r, 6:12], vel, omg)
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_apply(j, r, dl, ji, jJ, Wt, Pm, lamT, car_on, ncars, vel, omg):
    a = ji[j, JI_A]
    b = ji[j, JI_B]
    if a >= 0:
        apply_impulse(a, jJ[j, r, 0:6], dl, Wt, Pm, lamT, car_on, ncars, vel, omg)
    if b >= 0:
        apply_impulse(b, jJ[j, r, 6:12], dl, Wt, Pm, lamT, car_on, ncars, vel, omg)


# Chain (one train): couplers j0..j0+n−1 (one row each: distance or track ball), joint k joins
# bodies (a_k, b_k) with b_k = a_{k+1}. With rows 1–5 of every car eliminated (W̃), the coupler
# system S Δλ = r is tridiagonal: D_k = H_k W̃ H_kᵀ + γ_k, F_k = H_k^b W̃_{b_k} H_{k+1}^aᵀ.
# LDLᵀ (Thomas): D'_k = D_k − F_{k−1}²/D'_{k−1}; forward y_k = r_k − F_{k−1} y_{k−1}/D'_{k−1};
# back x_k = (y_k − F_k x_{k+1})/D'_k.  Per coupler we cache w = W̃ Hᵀ and p = P Hᵀ of both
# ends so a solve costs O(1) per coupler: Δu = w Δλ, Δλ_T = −p Δλ.
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_chain(j0, n, ji, jJ, jgam, Wt, Pm, car_on, ncars, cw, cp, cd, cf):
    for k in range(n):
        j = j0 + k
        for e in range(2):
            body = ji[j, JI_A + e]
            o = 6 * e
            for i in range(6):
                s = 0.0
                for q in range(6):
                    s += Wt[body, i, q] * jJ[j, 0, o + q]
                cw[j, o + i] = s
            for r in range(5):
                s = 0.0
                if body < ncars and car_on[body]:
                    for q in range(6):
                        s += Pm[body, r, q] * jJ[j, 0, o + q]
                cp[j, 5 * e + r] = s
        d = jgam[j]
        for i in range(12):
            d += jJ[j, 0, i] * cw[j, i]
        if k > 0:
            d -= cf[j - 1] * cf[j - 1] / cd[j - 1]
        if d < 1e-300:
            d = 1e-300
        cd[j] = d
        if k < n - 1:
            s = 0.0
            for i in range(6):
                s += cw[j, 6 + i] * jJ[j + 1, 0, i]
            cf[j] = s
        else:
            cf[j] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_chain(j0, n, ji, jJ, jt, jgam, jlam, lamT, car_on, ncars, vel, omg, cw, cp, cd, cf, cy):
    """One exact solve of a train's coupler rows (rows 1–5 of its cars stay exact)."""
    for k in range(n):
        j = j0 + k
        a = ji[j, JI_A]
        b = ji[j, JI_B]
        r = jt[j, 0] - jgam[j] * jlam[j, 0]
        for i in range(3):
            r -= jJ[j, 0, i] * vel[a, i] + jJ[j, 0, 3 + i] * omg[a, i]
            r -= jJ[j, 0, 6 + i] * vel[b, i] + jJ[j, 0, 9 + i] * omg[b, i]
        if k > 0:
            r -= cf[j - 1] * cy[j - 1] / cd[j - 1]
        cy[j] = r
    for k in range(n - 1, -1, -1):
        j = j0 + k
        if k < n - 1:
            cy[j] = (cy[j] - cf[j] * cy[j + 1]) / cd[j]
        else:
            cy[j] = cy[j] / cd[j]
    for k in range(n):
        j = j0 + k
        dl = cy[j]
        jlam[j, 0] += dl
        a = ji[j, JI_A]
        b = ji[j, JI_B]
        for i in range(3):
            vel[a, i] += cw[j, i] * dl
            omg[a, i] += cw[j, 3 + i] * dl
            vel[b, i] += cw[j, 6 + i] * dl
            omg[b, i] += cw[j, 9 + i] * dl
        if a < ncars and car_on[a]:
            for r in range(5):
                lamT[a, r] -= cp[j, r] * dl
        if b < ncars and car_on[b]:
            for r in range(5):
                lamT[b, r] -= cp[j, 5 + r] * dl


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_joint_pgs(j, ji, jJ, jt, jlo, jhi, jgam, jm, jlam, Wt, Pm, lamT, car_on, ncars, vel, omg,
                    K, Kinv, work):
    """One projected Gauss–Seidel update of a bounded (or unchained) joint; blocks of 3 for ball.

    Returns the largest change of an impulse (N·s), for the convergence test.
    """
    m = jm[j]
    joint_block(j, ji, jJ, jgam, jm, Wt, K)
    if m == 1:
        if K[0, 0] <= 0.0:
            return 0.0
        Kinv[0, 0] = 1.0 / K[0, 0]
    else:
        invert_spd(K, m, Kinv, work)
    for r in range(m):  # residuals (work row 7)
        work[7, r] = jt[j, r] - joint_velocity(j, r, ji, jJ, vel, omg) - jgam[j] * jlam[j, r]
    dmax = 0.0
    for r in range(m):
        dl = 0.0
        for c in range(m):
            dl += Kinv[r, c] * work[7, c]
        old = jlam[j, r]
        new = min(max(old + dl, jlo[j, r]), jhi[j, r])  # one-sided rows are scalar (m = 1)
        dl = new - old
        jlam[j, r] = new
        if dl != 0.0:
            joint_apply(j, r, dl, ji, jJ, Wt, Pm, lamT, car_on, ncars, vel, omg)
        dmax = max(dmax, abs(dl))
    return dmax


# ----------------------------------------------------------------------------- car rows along T
# Motor (row 6), anti-rollback ratchet and rolling friction share J = [T, r_m × T] (T·v_A):
#   motor target v_set, bounds [F_min h, F_max h] by section kind; ratchet target 0, [0, ∞);
#   friction target 0, bounds ±(μ·|wheel force| + Davis A) h  or ±m μ g h ("nl2").
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_car_row(b, f, target, lam_old, lo, hi, Wt, Pm, lamT, car_on, ncars, vel, omg):
    """Scalar PGS update of a car row along T; returns the new accumulated impulse."""
    k = row_mobility(b, f, f, Wt)
    if k <= 0.0:
        return lam_old
    dl = (target - row_velocity(b, f, vel, omg)) / k
    new = min(max(lam_old + dl, lo), hi)
    dl = new - lam_old
    if dl != 0.0:
        apply_impulse(b, f, dl, Wt, Pm, lamT, car_on, ncars, vel, omg)
    return new


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def section_row(kind, speed, fmax, h, v):
    """(target speed, lower, upper impulse bound) of row 6 for a section kind.

    ``v`` is the car's speed along T at the start of the step. A lift works towards +s only
    (it is a chain: a car rolling back is held by its ratchet); launch, trim and booster act
    in the car's direction of travel (towards −s when v < 0: target −speed, bounds mirrored);
    a brake holds either way.
    """
    F = fmax * h
    if kind == ch.LIFT:
        return speed, 0.0, F
    if kind == ch.BRAKE:
        return 0.0, -F, F
    if kind == ch.LAUNCH:
        return (speed, 0.0, F) if v >= 0.0 else (-speed, -F, 0.0)
    if kind == ch.TRIM:
        return (speed, -F, 0.0) if v >= 0.0 else (-speed, 0.0, F)
    return (speed, -F, F) if v >= 0.0 else (-speed, -F, F)  # booster


# ----------------------------------------------------------------------------- one step
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_frames(tdata, trow0, tnrows, tds, tlen, tclosed, ncars, car_f, car_i, car_frame, car_on,
                 sec_kind, sec_track, sec_from, sec_to):
    """The section each car is on (a change zeroes its row-6 impulses); frames are current."""
    for b in range(ncars):
        car_on[b] = car_i[b, CI_ON]
        if car_on[b]:
            # car_frame[b] already holds the frame at s (finish_step evaluates it right after the
            # s update, while those table rows are still in cache)
            t = car_i[b, CI_TRACK]
            sec = -1
            for k in range(sec_kind.shape[0]):
                if sec_track[k] == t and sec_from[k] <= car_f[b, CF_S] <= sec_to[k]:
                    sec = k
                    break
            if sec != car_i[b, CI_SECTION]:
                car_f[b, CF_L6] = 0.0
                car_f[b, CF_L7] = 0.0
                car_i[b, CI_SECTION] = sec
        else:
            car_i[b, CI_SECTION] = -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_velocities(h, gx, gy, gz, pos, quat, vel, omg, inv_mass, inv_ib, ib, mass, ncars, car_f, car_i,
                     car_frame, car_on, res, R, W):
    """Transport each car's velocity with its frame; gravity, gyroscopic term, explicit resistance.

    Transport: the track turns a car's velocity field with its frame, R = F_new F_oldᵀ
    (parallel transport; a projection instead would lose (h v κ)² of the kinetic energy per
    step). The impulse it takes is a track-joint impulse, recorded with rows 1, 2 and 3.
    """
    nb = pos.shape[0]
    mu, cda, rho, mode, k_nl2 = res[0], res[1], res[2], res[3], res[4]
    for b in range(ncars):
        car_f[b, CF_TR] = 0.0
        car_f[b, CF_TR + 1] = 0.0
        car_f[b, CF_TR + 2] = 0.0
        if car_on[b] and car_i[b, CI_HASPREV] and car_i[b, CI_SUPPORT]:
            fr = car_frame[b]
            for i in range(3):
                for k in range(3):
                    R[i, k] = (fr[C_T + i] * car_f[b, CF_PREV + k] + fr[C_N + i] * car_f[b, CF_PREV + 3 + k]
                               + fr[C_B + i] * car_f[b, CF_PREV + 6 + k])
            v0, v1, v2 = vel[b, 0], vel[b, 1], vel[b, 2]
            w0, w1, w2 = omg[b, 0], omg[b, 1], omg[b, 2]
            for i in range(3):
                vel[b, i] = R[i, 0] * v0 + R[i, 1] * v1 + R[i, 2] * v2
                omg[b, i] = R[i, 0] * w0 + R[i, 1] * w1 + R[i, 2] * w2
            m = mass[b]
            dpx, dpy, dpz = m * (vel[b, 0] - v0), m * (vel[b, 1] - v1), m * (vel[b, 2] - v2)
            car_f[b, CF_TR] = dpx * fr[C_N] + dpy * fr[C_N + 1] + dpz * fr[C_N + 2]
            car_f[b, CF_TR + 1] = dpx * fr[C_B] + dpy * fr[C_B + 1] + dpz * fr[C_B + 2]
            # angular impulse about T: I_w (ω' − ω)·T, less the moment of the linear impulse
            # applied at the anchor r_m = −cg·u (the orientation rows' share)
            quat_to_mat(quat[b], W)
            s = 0.0
            for i in range(3):
                dwb = W[0, i] * (omg[b, 0] - w0) + W[1, i] * (omg[b, 1] - w1) + W[2, i] * (omg[b, 2] - w2)
                tb = W[0, i] * fr[C_T] + W[1, i] * fr[C_T + 1] + W[2, i] * fr[C_T + 2]
                s += ib[b, i] * dwb * tb
            cg = car_f[b, CF_CG]
            c0, c1, c2 = _cross(-cg * W[0, 2], -cg * W[1, 2], -cg * W[2, 2], dpx, dpy, dpz)
            car_f[b, CF_TR + 2] = s - (c0 * fr[C_T] + c1 * fr[C_T + 1] + c2 * fr[C_T + 2])
    for b in range(nb):
        if inv_mass[b] > 0.0:
            vel[b, 0] += h * gx
            vel[b, 1] += h * gy
            vel[b, 2] += h * gz
        quat_to_mat(quat[b], R)
        # gyroscopic: ω_body, L = I ω_body, Δω = −h I⁻¹ (ω × L)
        wb0 = R[0, 0] * omg[b, 0] + R[1, 0] * omg[b, 1] + R[2, 0] * omg[b, 2]
        wb1 = R[0, 1] * omg[b, 0] + R[1, 1] * omg[b, 1] + R[2, 1] * omg[b, 2]
        wb2 = R[0, 2] * omg[b, 0] + R[1, 2] * omg[b, 1] + R[2, 2] * omg[b, 2]
        t0, t1, t2 = _cross(wb0, wb1, wb2, ib[b, 0] * wb0, ib[b, 1] * wb1, ib[b, 2] * wb2)
        d0, d1, d2 = -h * inv_ib[b, 0] * t0, -h * inv_ib[b, 1] * t1, -h * inv_ib[b, 2] * t2
        for i in range(3):
            omg[b, i] += R[i, 0] * d0 + R[i, 1] * d1 + R[i, 2] * d2
    for b in range(ncars):
        car_f[b, CF_FEXP] = 0.0
        if car_on[b]:
            fr = car_frame[b]
            vt = vel[b, 0] * fr[C_T] + vel[b, 1] * fr[C_T + 1] + vel[b, 2] * fr[C_T + 2]
            if mode == 1.0:
                F = -mass[b] * k_nl2 * vt * abs(vt)
            else:
                F = -(0.5 * rho * cda + car_f[b, CF_DAVIS + 2]) * vt * abs(vt) - car_f[b, CF_DAVIS + 1] * vt
            if F == 0.0:
                continue
            # an explicit force may at most stop the car in one step (no reversal)
            lim = abs(vt) * mass[b] / h
            if F > lim:
                F = lim
            elif F < -lim:
                F = -lim
            car_f[b, CF_FEXP] = F
            dv = h * F * inv_mass[b]
            for i in range(3):
                vel[b, i] += dv * fr[C_T + i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_prepare(erp_h, h, pos, quat, vel, omg, inv_mass, inv_ib, ncars, car_f, car_i, car_frame, car_on,
                  ji, jf, tr_j0, tr_nj, Wt, Pm, G, tgt, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf,
                  R, W, A, Ainv, work, qf, theta, rr, free_joints):
    """Track blocks (G, W̃, P) and their exact projection; joint rows; chain factorisation."""
    nb = pos.shape[0]
    for b in range(nb):
        for r in range(5):
            lamT[b, r] = 0.0
        if b < ncars and car_on[b]:
            prepare_track_block(b, car_frame[b], quat, pos, inv_mass, inv_ib, car_f[b, CF_CG], erp_h,
                                car_i[b, CI_SUPPORT], G, tgt, Wt, Pm, R, W, A, Ainv, work, qf, theta)
            project_track(b, G, tgt, Ainv, W, vel, omg, lamT, rr, A)
        else:
            body_mobility(b, quat, inv_mass, inv_ib, R, W)
            for i in range(6):
                for k in range(6):
                    Wt[b, i, k] = W[i, k]
    for j in range(ji.shape[0]):
        prepare_joint(j, ji, jf, pos, quat, h, erp_h, jJ, jt, jlo, jhi, jgam, jm, R, free_joints)
    for t in range(tr_j0.shape[0]):
        if tr_nj[t] > 0:
            factor_chain(tr_j0[t], tr_nj[t], ji, jJ, jgam, Wt, Pm, car_on, ncars, cw, cp, cd, cf)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_solve(h, iterations, warm, gmag, quat, vel, omg, mass, ncars, car_f, car_i, car_frame, car_on,
                sec_kind, sec_speed, sec_fmax, res, ji, jlam, tr_j0, tr_nj,
                Wt, Pm, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf, cy, rowf, R, K, Kinv, work,
                any_bounded, free_joints):
    """Warm start bounded rows, then iterations of (exact chain solves ↔ PGS sweep of the
    bounded rows), then a final exact chain solve (equality rows exact; bounded rows within
    their bounds by construction). ``free_joints`` None: no joint outside the trains' chains
    (their PGS code is pruned at compile time)."""
    mu, mode = res[0], res[3]
    nj = ji.shape[0]
    ntr = tr_j0.shape[0]
    for j in range(nj):
        if ji[j, JI_CHAIN] == 0:
            if free_joints is None:
                continue
            for r in range(jm[j]):
                jlam[j, r] = min(max(jlam[j, r] * warm, jlo[j, r]), jhi[j, r])
                if jlam[j, r] != 0.0:
                    joint_apply(j, r, jlam[j, r], ji, jJ, Wt, Pm, lamT, car_on, ncars, vel, omg)
        else:
            for r in range(3):
                jlam[j, r] = 0.0
    for b in range(ncars):
        if not car_on[b]:
            car_f[b, CF_L6] = 0.0
            car_f[b, CF_L7] = 0.0
            car_f[b, CF_L8] = 0.0
            continue
        sec = car_i[b, CI_SECTION]
        if sec < 0 and mu == 0.0 and car_f[b, CF_DAVIS] == 0.0:
            car_f[b, CF_L6] = 0.0
            car_f[b, CF_L7] = 0.0
            car_f[b, CF_L8] = 0.0
            continue
        fr = car_frame[b]
        quat_to_mat(quat[b], R)
        cg = car_f[b, CF_CG]
        rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
        c0, c1, c2 = _cross(rx, ry, rz, fr[C_T], fr[C_T + 1], fr[C_T + 2])
        rowf[b, 0], rowf[b, 1], rowf[b, 2] = fr[C_T], fr[C_T + 1], fr[C_T + 2]
        rowf[b, 3], rowf[b, 4], rowf[b, 5] = c0, c1, c2
        car_f[b, CF_L6] *= warm
        car_f[b, CF_L7] *= warm
        car_f[b, CF_L8] *= warm
        if sec < 0:
            car_f[b, CF_L6] = 0.0
            car_f[b, CF_L7] = 0.0
        else:
            tv, lo, hi = section_row(sec_kind[sec], sec_speed[sec], sec_fmax[sec], h, car_f[b, CF_SPEED])
            car_f[b, CF_L6] = min(max(car_f[b, CF_L6], lo), hi)
            if sec_kind[sec] != ch.LIFT:
                car_f[b, CF_L7] = 0.0
            else:
                car_f[b, CF_L7] = max(car_f[b, CF_L7], 0.0)
        lam = car_f[b, CF_L6] + car_f[b, CF_L7] + car_f[b, CF_L8]
        if lam != 0.0:
            apply_impulse(b, rowf[b], lam, Wt, Pm, lamT, car_on, ncars, vel, omg)
    n_it = iterations if any_bounded else 0
    # converged when no bounded impulse changed by more than 1e-9 m g h (heaviest body)
    tol = 0.0
    for b in range(mass.shape[0]):
        tol = max(tol, 1e-9 * mass[b] * gmag * h)
    for it in range(n_it):
        for t in range(ntr):
            if tr_nj[t] > 0:
                solve_chain(tr_j0[t], tr_nj[t], ji, jJ, jt, jgam, jlam, lamT, car_on, ncars, vel, omg,
                            cw, cp, cd, cf, cy)
        dmax = 0.0
        for j in range(nj):
            if free_joints is not None and ji[j, JI_CHAIN] == 0:
                d = solve_joint_pgs(j, ji, jJ, jt, jlo, jhi, jgam, jm, jlam, Wt, Pm, lamT, car_on, ncars,
                                    vel, omg, K, Kinv, work)
                dmax = max(dmax, d)
        for b in range(ncars):
            if not car_on[b]:
                continue
            sec = car_i[b, CI_SECTION]
            if sec >= 0:
                tv, lo, hi = section_row(sec_kind[sec], sec_speed[sec], sec_fmax[sec], h, car_f[b, CF_SPEED])
                old = car_f[b, CF_L6]
                car_f[b, CF_L6] = solve_car_row(b, rowf[b], tv, old, lo, hi, Wt, Pm, lamT, car_on, ncars, vel, omg)
                dmax = max(dmax, abs(car_f[b, CF_L6] - old))
                if sec_kind[sec] == ch.LIFT:
                    old = car_f[b, CF_L7]
                    car_f[b, CF_L7] = solve_car_row(b, rowf[b], 0.0, old, 0.0, np.inf, Wt, Pm,
                                                    lamT, car_on, ncars, vel, omg)
                    dmax = max(dmax, abs(car_f[b, CF_L7] - old))
            if mode == 1.0:
                bound = mass[b] * mu * gmag * h
            else:
                l1 = lamT[b, 0] + car_f[b, CF_TR]
                l2 = lamT[b, 1] + car_f[b, CF_TR + 1]
                bound = mu * np.sqrt(l1 * l1 + l2 * l2) + car_f[b, CF_DAVIS] * h
            old = car_f[b, CF_L8]
            if bound > 0.0:
                car_f[b, CF_L8] = solve_car_row(b, rowf[b], 0.0, old, -bound, bound, Wt, Pm,
                                                lamT, car_on, ncars, vel, omg)
            else:
                car_f[b, CF_L8] = 0.0
            dmax = max(dmax, abs(car_f[b, CF_L8] - old))
        if dmax <= tol:
            break  # converged: finish with the exact chain solve below
    for t in range(ntr):
        if tr_nj[t] > 0:
            solve_chain(tr_j0[t], tr_nj[t], ji, jJ, jt, jgam, jlam, lamT, car_on, ncars, vel, omg,
                        cw, cp, cd, cf, cy)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_supports(h, pos, quat, vel, omg, ncars, car_f, car_i, car_frame, car_on, lamT, R):
    """One-sided supports (railway): switch a row 2 off when its impulse would pull, on when the
    car would sink into the track by the end of the step. Returns True if anything changed."""
    changed = False
    for b in range(ncars):
        if not (car_on[b] and car_i[b, CI_ONESIDED]):
            continue
        if car_i[b, CI_SUPPORT]:
            if lamT[b, 1] + car_f[b, CF_TR + 1] < 0.0:
                car_i[b, CI_SUPPORT] = 0
                changed = True
        else:
            fr = car_frame[b]
            quat_to_mat(quat[b], R)
            cg = car_f[b, CF_CG]
            rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
            c0, c1, c2 = _cross(omg[b, 0], omg[b, 1], omg[b, 2], rx, ry, rz)
            va = (vel[b, 0] + c0) * fr[C_B] + (vel[b, 1] + c1) * fr[C_B + 1] + (vel[b, 2] + c2) * fr[C_B + 2]
            gap = ((pos[b, 0] + rx - fr[C_P]) * fr[C_B] + (pos[b, 1] + ry - fr[C_P + 1]) * fr[C_B + 1]
                   + (pos[b, 2] + rz - fr[C_P + 2]) * fr[C_B + 2])
            if gap + h * va < 0.0:
                car_i[b, CI_SUPPORT] = 1
                changed = True
    return changed


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def has_bounded_rows(ncars, car_f, car_i, car_on, ji, mu):
    for j in range(ji.shape[0]):
        if ji[j, JI_CHAIN] == 0:
            return True
    for b in range(ncars):
        if car_on[b] and (car_i[b, CI_SECTION] >= 0 or mu > 0.0 or car_f[b, CF_DAVIS] > 0.0):
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def finish_step(h, pos, quat, vel, omg, ncars, car_f, car_i, car_frame, car_on,
                tdata, trow0, tnrows, tds, tlen, tclosed, lamT, R, fr2):
    """Integrate positions (x += h v; q += h/2 (0,ω)⊗q, normalised), update each car's s.

    s is predicted as s + h (T·v_A), then corrected by a Newton step of the closest-point
    condition f(s) = (A.P − P(s))·T(s) = 0 with f'(s) = −1 + (A.P − P)·P''(s) (PHYSICS.md §2).
    Leaving an open track's end sets RAN_OFF and frees the car.
    """
    nb = pos.shape[0]
    for b in range(nb):
        for i in range(3):
            pos[b, i] += h * vel[b, i]
        w, x, y, z = quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]
        o0, o1, o2 = omg[b, 0], omg[b, 1], omg[b, 2]
        hw = 0.5 * h
        nw = w + hw * (-o0 * x - o1 * y - o2 * z)
        nx = x + hw * (o0 * w + o1 * z - o2 * y)
        ny = y + hw * (o1 * w + o2 * x - o0 * z)
        nz = z + hw * (o2 * w + o0 * y - o1 * x)
        n = np.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3] = nw / n, nx / n, ny / n, nz / n
    for b in range(ncars):
        if not car_on[b]:
            continue
        fr = car_frame[b]
        for k in range(3):
            car_f[b, CF_PREV + k] = fr[C_T + k]
            car_f[b, CF_PREV + 3 + k] = fr[C_N + k]
            car_f[b, CF_PREV + 6 + k] = fr[C_B + k]
        car_i[b, CI_HASPREV] = 1
        for r in range(5):
            car_f[b, CF_L1 + r] = lamT[b, r]
        t = car_i[b, CI_TRACK]
        quat_to_mat(quat[b], R)
        cg = car_f[b, CF_CG]
        ax, ay, az = pos[b, 0] - cg * R[0, 2], pos[b, 1] - cg * R[1, 2], pos[b, 2] - cg * R[2, 2]
        L = tlen[t]
        closed = tclosed[t]
        # predictor: the old frame's closest-point step from the old s (first-order exact)
        s = car_f[b, CF_S] + ((ax - fr[C_P]) * fr[C_T] + (ay - fr[C_P + 1]) * fr[C_T + 1]
                              + (az - fr[C_P + 2]) * fr[C_T + 2])
        for it in range(1):  # one Newton step from the predictor: error O(κ² (h v)⁴)
            if not closed and (s < 0.0 or s > L):
                break
            eval_track(tdata, trow0[t], tnrows[t], tds[t], L, closed, s, fr2)
            dx, dy, dz = ax - fr2[C_P], ay - fr2[C_P + 1], az - fr2[C_P + 2]
            f = dx * fr2[C_T] + dy * fr2[C_T + 1] + dz * fr2[C_T + 2]
            fp = -1.0 + dx * fr2[C_DT] + dy * fr2[C_DT + 1] + dz * fr2[C_DT + 2]
            if fp > -0.2:
                fp = -1.0
            s = s - f / fp
            if closed:
                s = s % L
            if abs(f) < 1e-10:
                break
        if not closed and (s < 0.0 or s > L):
            car_i[b, CI_ON] = 0
            car_i[b, CI_RANOFF] = 1
            car_i[b, CI_HASPREV] = 0
            s = 0.0 if s < 0.0 else L
        else:
            eval_track(tdata, trow0[t], tnrows[t], tds[t], L, closed, s, car_frame[b])
        car_f[b, CF_S] = s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _turn(fr, car_f, b, x0, x1, x2):
    """R x with R = F_new F_oldᵀ: F_new the frame ``fr`` (T, N, B), F_old car_f[b, CF_PREV:+9]."""
    a0 = car_f[b, CF_PREV] * x0 + car_f[b, CF_PREV + 1] * x1 + car_f[b, CF_PREV + 2] * x2
    a1 = car_f[b, CF_PREV + 3] * x0 + car_f[b, CF_PREV + 4] * x1 + car_f[b, CF_PREV + 5] * x2
    a2 = car_f[b, CF_PREV + 6] * x0 + car_f[b, CF_PREV + 7] * x1 + car_f[b, CF_PREV + 8] * x2
    return (fr[C_T] * a0 + fr[C_N] * a1 + fr[C_B] * a2, fr[C_T + 1] * a0 + fr[C_N + 1] * a1 + fr[C_B + 1] * a2,
            fr[C_T + 2] * a0 + fr[C_N + 2] * a1 + fr[C_B + 2] * a2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def keep_start_velocities(ncars, car_f, car_i, car_frame, car_on, vel0, omg0, v0t):
    """Before a recorded step: each car's velocities after this step's transport (v0t (nb, 6):
    velocity, angular velocity), i.e. vel0 turned by F_new F_oldᵀ as ``stage_velocities`` will
    turn them (only on recorded steps)."""
    for b in range(ncars):
        if car_on[b] and car_i[b, CI_HASPREV] and car_i[b, CI_SUPPORT]:
            fr = car_frame[b]
            v0, v1, v2 = _turn(fr, car_f, b, vel0[b, 0], vel0[b, 1], vel0[b, 2])
            w0, w1, w2 = _turn(fr, car_f, b, omg0[b, 0], omg0[b, 1], omg0[b, 2])
        else:
            v0, v1, v2 = vel0[b, 0], vel0[b, 1], vel0[b, 2]
            w0, w1, w2 = omg0[b, 0], omg0[b, 1], omg0[b, 2]
        v0t[b, 0], v0t[b, 1], v0t[b, 2] = v0, v1, v2
        v0t[b, 3], v0t[b, 4], v0t[b, 5] = w0, w1, w2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def record_sample(h, gmag, gx, gy, gz, pos, quat, vel, omg, mass, ib, vel0, omg0, ncars, car_f, car_i, car_frame,
                  sec_kind, lamT, R, out, v0t):
    """Write one sample (n_entities, N_CHANNELS) from the state after the step."""
    nb = pos.shape[0]
    for b in range(nb):
        for c in range(ch.N_CHANNELS):
            out[b, c] = np.nan
        quat_to_mat(quat[b], R)
        m = mass[b]
        out[b, ch.X] = pos[b, 0]
        out[b, ch.Y] = pos[b, 1]
        out[b, ch.Z] = pos[b, 2]
        for k in range(4):
            out[b, ch.QW + k] = quat[b, k]
        for k in range(3):
            out[b, ch.VX + k] = vel[b, k]
            out[b, ch.WX + k] = omg[b, k]
        ke = 0.5 * m * (vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
        for k in range(3):
            wbk = R[0, k] * omg[b, 0] + R[1, k] * omg[b, 1] + R[2, k] * omg[b, 2]
            ke += 0.5 * ib[b, k] * wbk * wbk
        out[b, ch.KINETIC_ENERGY] = ke
        out[b, ch.POTENTIAL_ENERGY] = m * gmag * pos[b, 2]
        # specific force: f_cm = Δv/h − g (every non-gravitational impulse of the step / (m h));
        # a suspended car reports its hanging body's (gb), at its rider point, in that body's axes
        gb = b
        if b < ncars:
            rh = car_f[b, CF_RIDER] - car_f[b, CF_CG]
            if car_i[b, CI_HANG] >= 0:
                gb = car_i[b, CI_HANG]
                rh = car_f[b, CF_HANGR]
                quat_to_mat(quat[gb], R)
        else:
            rh = 0.0
        # A car on its track: the velocities are turned with the frame (transport) at the start of
        # the next step for the motion of this one; count that turn here, Δv = R v_end − v_start
        # (R = F_new F_oldᵀ, v_start after this step's transport), so the sample holds the whole
        # turn of the step it covers (no one-step lag, no missing turn in the first sample).
        if gb == b and b < ncars and car_i[b, CI_ON] and car_i[b, CI_HASPREV] and car_i[b, CI_SUPPORT]:
            fr = car_frame[b]
            ve0, ve1, ve2 = _turn(fr, car_f, b, vel[b, 0], vel[b, 1], vel[b, 2])
            we0, we1, we2 = _turn(fr, car_f, b, omg[b, 0], omg[b, 1], omg[b, 2])
            vs0, vs1, vs2 = v0t[b, 0], v0t[b, 1], v0t[b, 2]
            ws0, ws1, ws2 = v0t[b, 3], v0t[b, 4], v0t[b, 5]
        else:
            ve0, ve1, ve2 = vel[gb, 0], vel[gb, 1], vel[gb, 2]
            we0, we1, we2 = omg[gb, 0], omg[gb, 1], omg[gb, 2]
            vs0, vs1, vs2 = vel0[gb, 0], vel0[gb, 1], vel0[gb, 2]
            ws0, ws1, ws2 = omg0[gb, 0], omg0[gb, 1], omg0[gb, 2]
        fx = (ve0 - vs0) / h - gx
        fy = (ve1 - vs1) / h - gy
        fz = (ve2 - vs2) / h - gz
        rx, ry, rz = rh * R[0, 2], rh * R[1, 2], rh * R[2, 2]
        al0, al1, al2 = (we0 - ws0) / h, (we1 - ws1) / h, (we2 - ws2) / h
        c0, c1, c2 = _cross(al0, al1, al2, rx, ry, rz)
        w0, w1, w2 = we0, we1, we2
        d0, d1, d2 = _cross(w0, w1, w2, rx, ry, rz)
        e0, e1, e2 = _cross(w0, w1, w2, d0, d1, d2)
        fx += c0 + e0
        fy += c1 + e1
        fz += c2 + e2
        out[b, ch.G_LONGITUDINAL] = (fx * R[0, 0] + fy * R[1, 0] + fz * R[2, 0]) / gmag
        out[b, ch.G_LATERAL] = (fx * R[0, 1] + fy * R[1, 1] + fz * R[2, 1]) / gmag
        out[b, ch.G_VERTICAL] = (fx * R[0, 2] + fy * R[1, 2] + fz * R[2, 2]) / gmag
        if gb != b:
            quat_to_mat(quat[b], R)
        w0, w1, w2 = omg[b, 0], omg[b, 1], omg[b, 2]
        if b >= ncars:
            out[b, ch.FLAGS] = ch.FREE_BODY
            continue
        fr = car_frame[b]
        cg = car_f[b, CF_CG]
        # anchor velocity along T
        a0, a1, a2 = _cross(w0, w1, w2, -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
        vt = (vel[b, 0] + a0) * fr[C_T] + (vel[b, 1] + a1) * fr[C_T + 1] + (vel[b, 2] + a2) * fr[C_T + 2]
        out[b, ch.S] = car_f[b, CF_S]
        out[b, ch.SPEED] = vt
        out[b, ch.ACCEL] = (vt - car_f[b, CF_SPEED]) / h
        flags = 0
        if car_i[b, CI_RANOFF]:
            flags |= ch.RAN_OFF
            out[b, ch.WHEEL_LOAD] = 0.0
            out[b, ch.LATERAL_LOAD] = 0.0
            out[b, ch.MOTOR_FORCE] = 0.0
            out[b, ch.ROLL_TORQUE] = 0.0
            out[b, ch.RESISTANCE_FORCE] = 0.0
            out[b, ch.SECTION] = -1.0
        else:
            flags |= ch.ON_TRACK
            out[b, ch.LATERAL_LOAD] = (car_f[b, CF_L1] + car_f[b, CF_TR]) / h
            out[b, ch.WHEEL_LOAD] = (car_f[b, CF_L1 + 1] + car_f[b, CF_TR + 1]) / h
            out[b, ch.ROLL_TORQUE] = (car_f[b, CF_L1 + 2] + car_f[b, CF_TR + 2]) / h
            out[b, ch.MOTOR_FORCE] = (car_f[b, CF_L6] + car_f[b, CF_L7]) / h
            out[b, ch.RESISTANCE_FORCE] = car_f[b, CF_L8] / h + car_f[b, CF_FEXP]
            sec = car_i[b, CI_SECTION]
            out[b, ch.SECTION] = -1.0 if sec < 0 else float(sec_kind[sec])
            if car_i[b, CI_ONESIDED] and car_i[b, CI_SUPPORT] == 0:
                flags |= ch.SUPPORT_CLAMPED
            if sec >= 0:
                flags |= ch.MOTOR_ACTIVE
            if car_f[b, CF_L8] != 0.0 or car_f[b, CF_FEXP] != 0.0:
                flags |= ch.RESISTANCE_ACTIVE
        out[b, ch.FLAGS] = float(flags)


@njit(cache=True, error_model="numpy", _nrt=False)
def run_chunk(n_steps, record_every, step0, h, gx, gy, gz, erp, iterations, warm,
              tdata, trow0, tnrows, tds, tlen, tclosed,
              pos, quat, vel, omg, inv_mass, inv_ib, ib, mass,
              ncars, car_f, car_i, car_frame,
              sec_kind, sec_track, sec_from, sec_to, sec_speed, sec_fmax, res,
              ji, jf, jlam, tr_j0, tr_nj, out_t, out, scratch, free_joints):
    """Run ``n_steps`` steps; record every ``record_every``-th into ``out`` (m, nb, N_CHANNELS).

    ``scratch`` is the tuple of work arrays made by ``make_scratch``; ``free_joints`` None when
    every joint is a train's chained coupler (``free_joints_flag``), else True.
    Returns (steps done, records written, status 0 ok / 1 diverged, entity of divergence).
    """
    nb = pos.shape[0]
    nj = ji.shape[0]
    gmag = np.sqrt(gx * gx + gy * gy + gz * gz)
    (Wt, Pm, G, tgt, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf, cy, vel0, omg0, rowf,
     R, W, A, Ainv, work, K, Kinv, qf, theta, fr2, car_on, rr, v0t) = scratch
    nrec = 0
    for n in range(n_steps):
        for b in range(ncars):
            # speed before the step, for the accel channel
            fr = car_frame[b]
            if car_i[b, CI_HASPREV]:
                cg = car_f[b, CF_CG]
                quat_to_mat(quat[b], R)
                a0, a1, a2 = _cross(omg[b, 0], omg[b, 1], omg[b, 2], -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
                car_f[b, CF_SPEED] = ((vel[b, 0] + a0) * fr[C_T] + (vel[b, 1] + a1) * fr[C_T + 1]
                                      + (vel[b, 2] + a2) * fr[C_T + 2])
        # ---- one step (stages as in the module docstring)
        nb = pos.shape[0]
        erp_h = erp / h
        stage_frames(tdata, trow0, tnrows, tds, tlen, tclosed, ncars, car_f, car_i, car_frame, car_on,
                     sec_kind, sec_track, sec_from, sec_to)
        for b in range(nb):
            for i in range(3):
                vel0[b, i] = vel[b, i]
                omg0[b, i] = omg[b, i]
        any_bounded = has_bounded_rows(ncars, car_f, car_i, car_on, ji, res[0])
        if (step0 + n + 1) % record_every == 0:
            keep_start_velocities(ncars, car_f, car_i, car_frame, car_on, vel0, omg0, v0t)
        for attempt in range(4):
            if attempt > 0:  # redo with the new set of active supports
                for b in range(nb):
                    for i in range(3):
                        vel[b, i] = vel0[b, i]
                        omg[b, i] = omg0[b, i]
            stage_velocities(h, gx, gy, gz, pos, quat, vel, omg, inv_mass, inv_ib, ib, mass, ncars, car_f, car_i,
                             car_frame, car_on, res, R, W)
            stage_prepare(erp_h, h, pos, quat, vel, omg, inv_mass, inv_ib, ncars, car_f, car_i, car_frame, car_on,
                          ji, jf, tr_j0, tr_nj, Wt, Pm, G, tgt, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf,
                          R, W, A, Ainv, work, qf, theta, rr, free_joints)
            stage_solve(h, iterations, warm, gmag, quat, vel, omg, mass, ncars, car_f, car_i, car_frame, car_on,
                        sec_kind, sec_speed, sec_fmax, res, ji, jlam, tr_j0, tr_nj,
                        Wt, Pm, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf, cy, rowf, R, K, Kinv, work,
                        any_bounded, free_joints)
            if not stage_supports(h, pos, quat, vel, omg, ncars, car_f, car_i, car_frame, car_on, lamT, R):
                break
        finish_step(h, pos, quat, vel, omg, ncars, car_f, car_i, car_frame, car_on,
                    tdata, trow0, tnrows, tds, tlen, tclosed, lamT, R, fr2)
        bad = -1
        for b in range(nb):
            ok = True
            for i in range(3):
                if not (np.isfinite(pos[b, i]) and np.isfinite(vel[b, i]) and np.isfinite(omg[b, i])):
                    ok = False
            if not ok:
                bad = b
                break
        step = step0 + n + 1
        if bad >= 0:
            return n + 1, nrec, 1, bad
        if step % record_every == 0 and nrec < out.shape[0]:
            out_t[nrec] = step * h
            record_sample(h, gmag, gx, gy, gz, pos, quat, vel, omg, mass, ib, vel0, omg0, ncars, car_f, car_i,
                          car_frame, sec_kind, lamT, R, out[nrec], v0t)
            nrec += 1
    return n_steps, nrec, 0, -1



# ----------------------------------------------------------------------------- Python entry points
# The kernels carry no CPython wrapper (only run_chunk, quat_to_mat, mat_to_quat and rotation_error
# do): a wrapper unboxing ~40 arguments costs compile time, and these ones would be compiled in
# run_chunk's cold path for nothing (~1 s in all). Tests and reference.py call them through these
# entry points, which compile only when used.
@njit(cache=True, error_model="numpy", _nrt=False)
def py_stage_frames(*args):
    stage_frames(*args)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_stage_velocities(*args):
    stage_velocities(*args)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_stage_prepare(*args):
    stage_prepare(*args)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_stage_solve(*args):
    stage_solve(*args)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_prepare_track_block(*args):
    prepare_track_block(*args)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_prepare_joint(*args):
    prepare_joint(*args)


def free_joints_flag(ji):
    """``free_joints`` for run_chunk: None when every joint is a train's chained coupler (the
    usual coaster or train: the kernel is compiled without the other joints' code), else True."""
    if ji.shape[0] == 0 or bool(np.all(ji[:, JI_CHAIN] == 1)):
        return None
    return True


def make_scratch(nb, nj):
    """Work arrays of ``run_chunk`` for ``nb`` bodies and ``nj`` joints (allocated in Python, once)."""
    njx = max(nj, 1)
    nbx = max(nb, 1)
    Wt = np.zeros((nbx, 6, 6))
    Pm = np.zeros((nbx, 5, 6))
    G = np.zeros((nbx, 5, 6))
    tgt = np.zeros((nbx, 5))
    lamT = np.zeros((nbx, 5))
    jJ = np.zeros((njx, NJR, 12))
    jt = np.zeros((njx, NJR))
    jlo = np.zeros((njx, NJR))
    jhi = np.zeros((njx, NJR))
    jgam = np.zeros(njx)
    jm = np.zeros(njx, np.int64)
    cw = np.zeros((njx, 12))
    cp = np.zeros((njx, 10))
    cd = np.zeros(njx)
    cf = np.zeros(njx)
    cy = np.zeros(njx)
    vel0 = np.zeros((nbx, 3))
    omg0 = np.zeros((nbx, 3))
    rowf = np.zeros((nbx, 6))
    R = np.zeros((3, 3))
    W = np.zeros((6, 6))
    A = np.zeros((5, 5))
    Ainv = np.zeros((5, 5))
    work = np.zeros((8, 8))
    K = np.zeros((NJR, NJR))
    Kinv = np.zeros((NJR, NJR))
    qf = np.zeros(4)
    theta = np.zeros(3)
    fr2 = np.zeros(NCOL)
    car_on = np.zeros(nbx, np.int64)
    rr = np.zeros(16)
    v0t = np.zeros((nbx, 6))
    return (Wt, Pm, G, tgt, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf, cy, vel0, omg0, rowf,
            R, W, A, Ainv, work, K, Kinv, qf, theta, fr2, car_on, rr, v0t)
