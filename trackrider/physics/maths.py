"""Small maths of the kernels: 3-vectors as scalars, quaternions (w, x, y, z), a track frame's turn,
6×6 mobilities and inverses, a Cholesky factor in place, and the impulse / velocity of one generalised row on one body."""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_N, C_T
from trackrider.jit import njit


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def qmul(aw, ax, ay, az, bw, bx, by, bz):
    """Quaternion product a ⊗ b (w, x, y, z)."""
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def rotvec(w, x, y, z):
    """Rotation vector (rad) of the unit quaternion (w, x, y, z), sign-fixed (w ≥ 0)."""
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vn = np.sqrt(x * x + y * y + z * z)
    f = 2.0 if vn < 1e-12 else 2.0 * np.arctan2(vn, w) / vn
    return f * x, f * y, f * z


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def mv(R, v0, v1, v2):
    """R v for a 3×3 R."""
    return (R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2, R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2,
            R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def frame_turn(fr, pf, x0, x1, x2):
    """R x with R = F_new F_oldᵀ: F_new the frame ``fr`` (T, N, B), F_old ``pf`` (9: T, N, B)."""
    a0 = pf[0] * x0 + pf[1] * x1 + pf[2] * x2
    a1 = pf[3] * x0 + pf[4] * x1 + pf[5] * x2
    a2 = pf[6] * x0 + pf[7] * x1 + pf[8] * x2
    return (fr[C_T] * a0 + fr[C_N] * a1 + fr[C_B] * a2, fr[C_T + 1] * a0 + fr[C_N + 1] * a1 + fr[C_B + 1] * a2,
            fr[C_T + 2] * a0 + fr[C_N + 2] * a1 + fr[C_B + 2] * a2)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def rotation_of(w, x, y, z):
    """The entries of the rotation matrix of the unit quaternion (w, x, y, z), row by row."""
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def quat_to_mat(q, R):
    """Rotation matrix (3,3) of the unit quaternion ``q`` (w, x, y, z)."""
    (R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2],
     R[2, 0], R[2, 1], R[2, 2]) = rotation_of(q[0], q[1], q[2], q[3])


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def quat_step(w, x, y, z, o0, o1, o2, hw):
    """The unit quaternion (w, x, y, z) turned by the angular velocity ω = (o0, o1, o2) over a step
    h = 2 ``hw``: q + h/2 (0, ω) ⊗ q, normalised (one division, not four)."""
    nw = w + hw * (-o0 * x - o1 * y - o2 * z)
    nx = x + hw * (o0 * w + o1 * z - o2 * y)
    ny = y + hw * (o1 * w + o2 * x - o0 * z)
    nz = z + hw * (o2 * w + o0 * y - o1 * x)
    n = 1.0 / np.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    return nw * n, nx * n, ny * n, nz * n


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def closest_predictor(rx, ry, rz, t0, t1, t2, k0, k1, k2):
    """``kernels.predict_step`` from r = A − P, the unit tangent T and K = P'' at P."""
    d = rx * t0 + ry * t1 + rz * t2
    x = rx * k0 + ry * k1 + rz * k2
    kk = k0 * k0 + k1 * k1 + k2 * k2
    return d * (1.0 + x) - d * d * d * kk * (1.0 / 3.0)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def closest_newton(dx, dy, dz, t0, t1, t2, k0, k1, k2):
    """``kernels.newton_step`` from d = A − P, the unit tangent T and P'' (k) at P."""
    f = dx * t0 + dy * t1 + dz * t2
    fp = -1.0 + dx * k0 + dy * k1 + dz * k2
    if fp > -0.2:
        fp = -1.0
    return -f / fp


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def shepperd(m00, m01, m02, m10, m11, m12, m20, m21, m22):
    """The quaternion (w, x, y, z) of the rotation matrix with these entries by Shepperd's method
    (from its largest of trace and diagonal), not yet normalised."""
    tr = m00 + m11 + m22
    if tr > 0.0:
        S = np.sqrt(tr + 1.0) * 2.0
        return 0.25 * S, (m21 - m12) / S, (m02 - m20) / S, (m10 - m01) / S
    if m00 > m11 and m00 > m22:
        S = np.sqrt(1.0 + m00 - m11 - m22) * 2.0
        return (m21 - m12) / S, 0.25 * S, (m01 + m10) / S, (m02 + m20) / S
    if m11 > m22:
        S = np.sqrt(1.0 + m11 - m00 - m22) * 2.0
        return (m02 - m20) / S, (m01 + m10) / S, 0.25 * S, (m12 + m21) / S
    S = np.sqrt(1.0 + m22 - m00 - m11) * 2.0
    return (m10 - m01) / S, (m02 + m20) / S, (m12 + m21) / S, 0.25 * S


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def mat_to_quat(R, q):
    """Unit quaternion (w, x, y, z) of the rotation matrix ``R`` (Shepperd's method)."""
    q[0], q[1], q[2], q[3] = shepperd(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for k in range(4):
        q[k] /= n


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _col_dot(x, y, z, R, j):
    """(x, y, z) · R[:, j]."""
    return x * R[0, j] + y * R[1, j] + z * R[2, j]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def frame_rotation_error(R, Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz):
    """The rotation vector θ of R Fᵀ (a body of rotation ``R`` turned by θ away from the frame
    F = [T N B]) in the frame's axes: (θ·T, θ·N, θ·B), the rotation vector of M = Fᵀ R.
    v = vee(M − Mᵀ)/2 = sin|θ| θ̂, cos|θ| = (tr M − 1)/2. A car's rows keep |θ| ≪ 1e-4: there
    (|v|² < 1e-8, cos > 0) θ = v |θ|/sin|θ| by the series 1 + |v|²/6 + 3|v|⁴/40 (the first term left
    out, 5|v|⁶/112, is below 1e-25 of θ): no square root, division or arctangent. Otherwise by M's
    quaternion (``_rotation_error_far``). docs/physics.md §2, "Speed and compile time"."""
    m01 = _col_dot(Tx, Ty, Tz, R, 1)
    m02 = _col_dot(Tx, Ty, Tz, R, 2)
    m10 = _col_dot(Nx, Ny, Nz, R, 0)
    m12 = _col_dot(Nx, Ny, Nz, R, 2)
    m20 = _col_dot(Bx, By, Bz, R, 0)
    m21 = _col_dot(Bx, By, Bz, R, 1)
    v0 = 0.5 * (m21 - m12)
    v1 = 0.5 * (m02 - m20)
    v2 = 0.5 * (m10 - m01)
    s2 = v0 * v0 + v1 * v1 + v2 * v2
    if s2 < 1e-8:
        m00 = _col_dot(Tx, Ty, Tz, R, 0)
        m11 = _col_dot(Nx, Ny, Nz, R, 1)
        m22 = _col_dot(Bx, By, Bz, R, 2)
        c = 0.5 * (m00 + m11 + m22 - 1.0)
        if c > 0.0:
            f = 1.0 + s2 * (1.0 / 6.0 + s2 * (3.0 / 40.0))
            return f * v0, f * v1, f * v2
    return _rotation_error_far(_col_dot(Tx, Ty, Tz, R, 0), m01, m02, m10, _col_dot(Nx, Ny, Nz, R, 1), m12, m20, m21,
                               _col_dot(Bx, By, Bz, R, 2))


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _rotation_error_far(m00, m01, m02, m10, m11, m12, m20, m21, m22):
    """``frame_rotation_error`` of a body turned 1e-4 rad or more from its frame (a call: rarely
    taken), from M's entries: M's quaternion by Shepperd's method (``shepperd``: exact up to a half
    turn and at it), then θ = 2 atan2(|q_v|, q_w) q_v/|q_v|, q_w ≥ 0."""
    w, x, y, z = shepperd(m00, m01, m02, m10, m11, m12, m20, m21, m22)
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vn = np.sqrt(x * x + y * y + z * z)
    if vn == 0.0:
        return 0.0, 0.0, 0.0
    f = 2.0 * np.arctan2(vn, w) / vn
    return f * x, f * y, f * z


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def invert_spd(A, n, Ainv, work):
    """Inverse of the leading n×n block of a symmetric positive definite ``A`` (Gauss–Jordan on a copy
    in ``work``, no pivoting)."""
    for i in range(n):
        for j in range(n):
            work[i, j] = A[i, j]
    gauss_jordan(work, n, Ainv, False)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def gauss_jordan(A, n, Ainv, pivot):
    """Inverse of the leading n×n block of ``A`` into ``Ainv`` by Gauss–Jordan elimination (``A`` is
    overwritten): with partial pivoting (``pivot``; a pivot below 1e-300 in size taken as 1e-300) or
    without (a symmetric positive definite ``A``: a pivot below 1e-300 taken as 1e-300)."""
    for i in range(n):
        for j in range(n):
            Ainv[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        if pivot:
            p = c
            for i in range(c + 1, n):
                if abs(A[i, c]) > abs(A[p, c]):
                    p = i
            if p != c:
                for j in range(n):
                    A[c, j], A[p, j] = A[p, j], A[c, j]
                    Ainv[c, j], Ainv[p, j] = Ainv[p, j], Ainv[c, j]
        piv = A[c, c]
        if (abs(piv) if pivot else piv) < 1e-300:
            piv = 1e-300
        ip = 1.0 / piv
        for j in range(n):
            A[c, j] *= ip
            Ainv[c, j] *= ip
        for i in range(n):
            if i != c:
                f = A[i, c]
                if f != 0.0:
                    for j in range(n):
                        A[i, j] -= f * A[c, j]
                        Ainv[i, j] -= f * Ainv[c, j]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def cholesky(fac, g, n, col, reciprocal):
    """The lower triangle of the n×n block at ``fac[g, :n, col:col + n]`` factored in place, L Lᵀ;
    ``reciprocal``: 1/L_kk on the diagonal (its solves multiply), else L_kk (they divide). A pivot
    that is not positive (a row that depends on the others) gives L_kk = 1e-150: its row's impulse
    stays ~0."""
    for k in range(n):
        for l in range(k + 1):
            s = fac[g, k, col + l]
            for q in range(l):
                s -= fac[g, k, col + q] * fac[g, l, col + q]
            if l != k:
                fac[g, k, col + l] = s * fac[g, l, col + l] if reciprocal else s / fac[g, l, col + l]
            elif reciprocal:
                fac[g, k, col + k] = 1.0 / np.sqrt(s) if s > 1e-300 else 1e150
            else:
                fac[g, k, col + k] = np.sqrt(s) if s > 1e-300 else 1e-150


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def body_mobility(b, rot, inv_mass, inv_ib, W):
    """W = diag(1/m I3, R diag(inv_ib) Rᵀ) of body ``b`` (R = ``rot[b]``) into W (6,6)."""
    R = rot[b]
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


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def row_velocity(b, f, vel, omg):
    """J·u of body ``b`` for a 6-vector row ``f``."""
    return (f[0] * vel[b, 0] + f[1] * vel[b, 1] + f[2] * vel[b, 2]
            + f[3] * omg[b, 0] + f[4] * omg[b, 1] + f[5] * omg[b, 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def row_mobility(b, f, g, Wt, Wn):
    """fᵀ W̃_b g (``mobility_at``)."""
    s = 0.0
    for i in range(6):
        t = 0.0
        for k in range(6):
            t += mobility_at(Wt, Wn, b, i, k) * g[k]
        s += f[i] * t
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def mobility_at(Wt, Wn, b, i, k):
    """Entry (i, k) of body ``b``'s mobility W̃ (``trk.mobility``, ``trk.rank1``). A car on a fixed track
    in closed form (``Wn[b, 6]`` = 1/μ > 0) has W̃ = n nᵀ/μ, which is not stored: the entry is made as
    ``form_mobility`` makes it, (n_i/μ) n_k with i ≤ k (so a product with it has the bits it had when
    W̃ was stored); any other body's W̃ is stored (docs/physics.md "Speed and compile time")."""
    imu = Wn[b, 6]
    if imu > 0.0:
        if i <= k:
            return (Wn[b, i] * imu) * Wn[b, k]
        return (Wn[b, k] * imu) * Wn[b, i]
    return Wt[b, i, k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def form_mobility(Wt, Wn, b):
    """Store body ``b``'s W̃ = n nᵀ/μ from its n and 1/μ (``Wn[b]``), for a reader that changes it whole."""
    imu = Wn[b, 6]
    for i in range(6):
        ni = Wn[b, i] * imu
        for j in range(i, 6):
            w = ni * Wn[b, j]
            Wt[b, i, j] = w
            Wt[b, j, i] = w
