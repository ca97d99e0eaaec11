"""The track joint: five rows holding a car's anchor on its curve, with its frame (docs/physics.md §2).

The sixth row along the tangent is free (the car rolls); the section, ratchet and friction rows
along T are in ``kernels.py`` (``stage_warm_start`` / ``stage_solve``). Each step the block of every
car is formed once and its velocity projected exactly: in closed form for a supported car on a fixed
track (``fixed_track_block``), else with its 5×5 matrix factored (``project_track``); later
impulses go through the car's mobility W̃ with these rows enforced (``apply_impulse``), on a track carried
by a body also through that body and the cars on it (``carrier_impulse``; ``carrier.py``).
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import (C_B, C_DT, C_N, C_OMEGA, C_P, C_T, hermite_weights, segment,
                                      wrap_arc_length)
from trackrider.jit import njit
from trackrider.physics.maths import cross, body_mobility, frame_rotation_error, mobility_at, row_velocity


# Track joint (docs/physics.md §2; seed 001), track fixed in the world (Jt = Rt = 0).
# Anchor A.P = x + r_m on the curve, r_m = −cg·u (u: car up axis); frame (T, N_w, B_w, Ω) at s.
#   row 1  C = (A.P − P)·N_w      J = [N_w, r_m × N_w]      target erp/h (P − A.P)·N_w   ±∞
#   row 2  C = (A.P − P)·B_w      J = [B_w, r_m × B_w]      target erp/h (P − A.P)·B_w   [0,∞) railway
#   rows 3–5, e ∈ (T, N_w, B_w): relative angular velocity about e equals (Ω·e)·(T·v_A):
#          J = [−(Ω·e) T, e − (Ω·e)(r_m × T)]              target −erp/h θ·e, θ = rotvec(R_A Fᵀ)
#   (Ċ of rows 1–2 is J·u on the curve since dP/dt = T ṡ ⟂ N_w, B_w; rows 3–5 are velocity rows.)
#   K = A = G W Gᵀ (5×5), solved exactly once per step; W̃, P as in the module docstring.
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def in_closed_form(b, cars, carrier):
    """Whether held car ``b``'s block is in closed form (``fixed_track_block``): supported by a fixed
    track (``carrier``: ``trk.carrier``). Its rows and targets are then not stored."""
    return carrier[b] < 0 and cars.support[b] != 0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def track_arm(b, bodies, cars):
    """r_m = −cg·u of car ``b``: its anchor from its centre of mass (u: the body's up axis). Made once
    for the rows, their targets and the closed form (``kernels.track_rows_body``), so that each use
    rounds as the others (LLVM fuses a product into a multiply-add only where it is used once)."""
    cg, R = cars.cg[b], bodies.rot[b]
    return -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def track_targets(b, bodies, cars, erp_h, rx, ry, rz):
    """The targets of car ``b``'s rows 1–5 from its frame ``cars.frame[b]`` and its arm ``r``
    (``track_arm``); row 2's zero without support. A car in closed form needs only these
    (``fixed_track_block``); its rows are not stored."""
    fr = cars.frame[b]
    pos = bodies.pos
    R = bodies.rot[b]
    ax, ay, az = pos[b, 0] + rx, pos[b, 1] + ry, pos[b, 2] + rz
    dx, dy, dz = fr[C_P] - ax, fr[C_P + 1] - ay, fr[C_P + 2] - az
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    # rows 3-5: the car's rotation away from its frame F = [T N B], in the frame's axes (θ·T, θ·N, θ·B)
    e0, e1, e2 = frame_rotation_error(R, fr[C_T], fr[C_T + 1], fr[C_T + 2], Nx, Ny, Nz, Bx, By, Bz)
    t1 = erp_h * (dx * Bx + dy * By + dz * Bz) if cars.support[b] else 0.0
    return erp_h * (dx * Nx + dy * Ny + dz * Nz), t1, -erp_h * e0, -erp_h * e1, -erp_h * e2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def track_rows_of(b, cars, rx, ry, rz, t, trk):
    """The rows J (5,6) of car ``b`` from its frame ``cars.frame[b]`` and arm ``r``, and their targets
    ``t`` (``track_targets``), into ``trk.J``, ``trk.target`` (row 2 zero without support)."""
    fr, support_on = cars.frame[b], cars.support[b]
    G, tgt = trk.J, trk.target
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    Ox, Oy, Oz = fr[C_OMEGA], fr[C_OMEGA + 1], fr[C_OMEGA + 2]
    # rows 1, 2
    c0, c1, c2 = cross(rx, ry, rz, Nx, Ny, Nz)
    G[b, 0, 0], G[b, 0, 1], G[b, 0, 2], G[b, 0, 3], G[b, 0, 4], G[b, 0, 5] = Nx, Ny, Nz, c0, c1, c2
    c0, c1, c2 = cross(rx, ry, rz, Bx, By, Bz)
    G[b, 1, 0], G[b, 1, 1], G[b, 1, 2], G[b, 1, 3], G[b, 1, 4], G[b, 1, 5] = Bx, By, Bz, c0, c1, c2
    # rows 3-5
    tx, ty, tz = cross(rx, ry, rz, Tx, Ty, Tz)
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
    for r in range(5):
        tgt[b, r] = t[r]
    if not support_on:
        for k in range(6):
            G[b, 1, k] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def prepare_track_block(b, bodies, cars, trk, wk):
    """Fill W̃ and P of car ``b`` from its rows J (5,6) (``track_rows_of``, made before): the
    general form (A = G W Gᵀ factored), for any car (``fixed_track_block`` is the closed form of a
    supported car on a fixed track).

    Leaves the car's mobility W (6,6) in ``wk.W`` and the Cholesky factor of A in ``wk.A`` (inverse
    pivots on ``wk.Ainv``'s diagonal) for ``project_track``.
    """
    support_on = cars.support[b]
    G, Wt, Pm = trk.J, trk.mobility, trk.to_track
    W, A, Ainv, work = wk.W, wk.A, wk.Ainv, wk.M
    body_mobility(b, bodies.rot, bodies.inv_mass, bodies.inv_ib, W)
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


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def project_track(b, bodies, trk, wk):
    """Exact projection of car ``b``'s velocity onto rows 1–5: Δλ = A⁻¹(t − G u), u += W Gᵀ Δλ.

    ``wk.A`` holds the Cholesky factor and ``wk.Ainv``'s diagonal its inverse pivots
    (``prepare_track_block``).
    """
    G, tgt, lamT = trk.J, trk.target, trk.lam
    vel, omg = bodies.vel, bodies.omg
    A, Ainv, W, rr = wk.A, wk.Ainv, wk.W, wk.rr
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


# A supported car on a fixed track in closed form. Rows 1–5 leave the car one motion, rolling along
# its curve at unit speed: n = [T + r_m × Ω, Ω] (v_A = T, ω = Ω; G n = 0), so with M = W⁻¹ =
# diag(m I3, I_w) and μ = nᵀ M n the mobility with the rows enforced is W̃ = n nᵀ / μ. The columns
# of Z (6×5): [N, 0], [B, 0], [r_m × e, e] for e = T, N, B satisfy G Z = I5 (row by row from the
# rows above), and M W̃ = I − Gᵀ P, so P = Zᵀ Gᵀ P = Zᵀ (I − M W̃) = Zᵀ − (Zᵀ M n) nᵀ / μ; and the exact projection of u onto G u = t is u' = Z t + σ n with σ = nᵀ M (u − Z t) / μ, its
# impulses Δλ = Zᵀ M (u' − u). No 5×5 factor, no W: ~300 flops against ~1100 of the general form.
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def fixed_track_block(b, bodies, cars, rx, ry, rz, t, trk, wk):
    """``prepare_track_block`` and ``project_track`` of a supported car ``b`` on a fixed track, in
    closed form (the same W̃, P and projection up to rounding), from its rows' targets ``t``
    (``track_targets``) and arm ``r`` (``track_arm``). Its rows themselves (``trk.J``, ``trk.target``)
    are not stored: nothing reads them; their impulses ``trk.lam`` are set here. Of W̃ and P only
    n, 1/μ (``trk.rank1``), Zᵀ M n/μ and r (``trk.zr``) are stored: their readers make the rest
    (``maths.mobility_at``, ``closed_to_track``)."""
    fr, R, m, ib = cars.frame[b], bodies.rot[b], bodies.mass[b], bodies.ib
    lam = trk.lam
    vel, omg = bodies.vel, bodies.omg
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    Ox, Oy, Oz = fr[C_OMEGA], fr[C_OMEGA + 1], fr[C_OMEGA + 2]
    # n and μ = m |n_v|² + Ωᵀ I_w Ω (I_w Ω = R diag(ib) Rᵀ Ω)
    c0, c1, c2 = cross(rx, ry, rz, Ox, Oy, Oz)
    n0, n1, n2 = Tx + c0, Ty + c1, Tz + c2
    IOx, IOy, IOz = inertia_times(R, ib[b, 0], ib[b, 1], ib[b, 2], Ox, Oy, Oz)
    mu = m * (n0 * n0 + n1 * n1 + n2 * n2) + (Ox * IOx + Oy * IOy + Oz * IOz)
    imu = 1.0 / mu
    z0, z1, z2, z3, z4 = z_terms(m, n0, n1, n2, rx, ry, rz, IOx, IOy, IOz, Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz)
    r1 = trk.rank1[b]
    r1[0], r1[1], r1[2], r1[3], r1[4], r1[5] = n0, n1, n2, Ox, Oy, Oz
    r1[6] = imu   # W̃ itself is not stored: its readers make its entries (maths.mobility_at)
    # P = Zᵀ − (Zᵀ M n / μ) nᵀ is not stored either: its readers take P f from Zᵀ M n / μ and the arm
    # (closed_to_track)
    zr = trk.zr[b]
    zr[0], zr[1], zr[2], zr[3], zr[4] = z0 * imu, z1 * imu, z2 * imu, z3 * imu, z4 * imu
    zr[5], zr[6], zr[7] = rx, ry, rz
    # the projection: Z t = [t0 N + t1 B + r_m × ω_t, ω_t], ω_t = t2 T + t3 N + t4 B; w = u − Z t
    t0, t1, t2, t3, t4 = t
    wtx, wty, wtz = t2 * Tx + t3 * Nx + t4 * Bx, t2 * Ty + t3 * Ny + t4 * By, t2 * Tz + t3 * Nz + t4 * Bz
    e0, e1, e2 = cross(rx, ry, rz, wtx, wty, wtz)
    zx, zy, zz = t0 * Nx + t1 * Bx + e0, t0 * Ny + t1 * By + e1, t0 * Nz + t1 * Bz + e2
    mvx, mvy, mvz = m * (vel[b, 0] - zx), m * (vel[b, 1] - zy), m * (vel[b, 2] - zz)
    Ix, Iy, Iz = inertia_times(R, ib[b, 0], ib[b, 1], ib[b, 2], omg[b, 0] - wtx, omg[b, 1] - wty, omg[b, 2] - wtz)
    sigma = (n0 * mvx + n1 * mvy + n2 * mvz + Ox * Ix + Oy * Iy + Oz * Iz) * imu
    # Δλ = Zᵀ M (σ n − w) = σ Zᵀ M n − Zᵀ M w
    y0, y1, y2 = cross(mvx, mvy, mvz, rx, ry, rz)
    y0, y1, y2 = y0 + Ix, y1 + Iy, y2 + Iz
    # (from zero: 0 + Δλ, as the general form adds to impulses it clears)
    lam[b, 0] = 0.0 + (sigma * z0 - (Nx * mvx + Ny * mvy + Nz * mvz))
    lam[b, 1] = 0.0 + (sigma * z1 - (Bx * mvx + By * mvy + Bz * mvz))
    lam[b, 2] = 0.0 + (sigma * z2 - (Tx * y0 + Ty * y1 + Tz * y2))
    lam[b, 3] = 0.0 + (sigma * z3 - (Nx * y0 + Ny * y1 + Nz * y2))
    lam[b, 4] = 0.0 + (sigma * z4 - (Bx * y0 + By * y1 + Bz * y2))
    vel[b, 0], vel[b, 1], vel[b, 2] = zx + sigma * n0, zy + sigma * n1, zz + sigma * n2
    omg[b, 0], omg[b, 1], omg[b, 2] = wtx + sigma * Ox, wty + sigma * Oy, wtz + sigma * Oz


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def z_terms(m, n0, n1, n2, rx, ry, rz, IOx, IOy, IOz, Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz):
    """Zᵀ M n of a car in closed form (``fixed_track_block``; ``row_lanes.lanes_rows``): rows N·(m n_v),
    B·(m n_v), e·(m n_v × r_m + I_w Ω) (e = T, N, B; ``IO`` = I_w Ω)."""
    q0, q1, q2 = cross(n0, n1, n2, rx, ry, rz)
    s0, s1, s2 = m * q0 + IOx, m * q1 + IOy, m * q2 + IOz
    return (m * (Nx * n0 + Ny * n1 + Nz * n2), m * (Bx * n0 + By * n1 + Bz * n2), Tx * s0 + Ty * s1 + Tz * s2,
            Nx * s0 + Ny * s1 + Nz * s2, Bx * s0 + By * s1 + Bz * s2)


def mobility_of(trk, b: int) -> np.ndarray:
    """Body ``b``'s W̃ (6, 6), a copy, as the kernels read it (``maths.mobility_at``: a car in closed form
    has only its n and 1/μ stored)."""
    n, imu = trk.rank1[b, :6], trk.rank1[b, 6]
    if not imu > 0.0:
        return trk.mobility[b].copy()
    W = np.empty((6, 6))
    for i in range(6):
        for j in range(i, 6):
            W[i, j] = W[j, i] = (n[i] * imu) * n[j]
    return W


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def inertia_times(R, i0, i1, i2, x0, x1, x2):
    """I_w x = R diag(i0, i1, i2) Rᵀ x."""
    b0 = i0 * (R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2)
    b1 = i1 * (R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2)
    b2 = i2 * (R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2)
    return (R[0, 0] * b0 + R[0, 1] * b1 + R[0, 2] * b2, R[1, 0] * b0 + R[1, 1] * b1 + R[1, 2] * b2,
            R[2, 0] * b0 + R[2, 1] * b1 + R[2, 2] * b2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def closed_to_track(b, f0, f1, f2, f3, f4, f5, nf, trk, frame):
    """P f of car ``b`` in closed form (``trk.rank1[b, 6]`` > 0; ``nf`` = n·f): with the rows of Zᵀ
    [N, 0], [B, 0], [r_m × e, e] (e = T, N, B) and z = Zᵀ M n/μ (``trk.zr``), P f = Zᵀ f − z (n·f) =
    [N·f_v, B·f_v, T·g, N·g, B·g] − z (n·f), g = f_v × r_m + f_ω (``(r_m × e)·f_v = e·(f_v × r_m)``)."""
    fr, zr = frame[b], trk.zr[b]
    rx, ry, rz = zr[5], zr[6], zr[7]
    g0 = (f1 * rz - f2 * ry) + f3
    g1 = (f2 * rx - f0 * rz) + f4
    g2 = (f0 * ry - f1 * rx) + f5
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    return (Nx * f0 + Ny * f1 + Nz * f2 - zr[0] * nf, Bx * f0 + By * f1 + Bz * f2 - zr[1] * nf,
            Tx * g0 + Ty * g1 + Tz * g2 - zr[2] * nf, Nx * g0 + Ny * g1 + Nz * g2 - zr[3] * nf,
            Bx * g0 + By * g1 + Bz * g2 - zr[4] * nf)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def form_to_track(b, trk, frame):
    """Store car ``b``'s P (in closed form: not stored) from its frame, arm and Zᵀ M n/μ, for a reader
    that changes it whole (``hang_blocks.fold_hangs``)."""
    fr, zr, n, Pm = frame[b], trk.zr[b], trk.rank1[b], trk.to_track
    rx, ry, rz = zr[5], zr[6], zr[7]
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Nx, Ny, Nz = fr[C_N], fr[C_N + 1], fr[C_N + 2]
    Bx, By, Bz = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    p_row(Pm, b, 0, Nx, Ny, Nz, 0.0, 0.0, 0.0, zr[0], n)
    p_row(Pm, b, 1, Bx, By, Bz, 0.0, 0.0, 0.0, zr[1], n)
    tx, ty, tz = cross(rx, ry, rz, Tx, Ty, Tz)
    p_row(Pm, b, 2, tx, ty, tz, Tx, Ty, Tz, zr[2], n)
    a0, a1, a2 = cross(rx, ry, rz, Nx, Ny, Nz)
    p_row(Pm, b, 3, a0, a1, a2, Nx, Ny, Nz, zr[3], n)
    a0, a1, a2 = cross(rx, ry, rz, Bx, By, Bz)
    p_row(Pm, b, 4, a0, a1, a2, Bx, By, Bz, zr[4], n)


def to_track_of(trk, frame, b: int) -> np.ndarray:
    """Car ``b``'s P (5, 6), a copy, as the kernels read it (``closed_to_track``: a car in closed form has
    only Zᵀ M n/μ and its arm stored)."""
    if not trk.rank1[b, 6] > 0.0:
        return trk.to_track[b].copy()
    fr, zr, n = frame[b], trk.zr[b], trk.rank1[b, :6]
    r = zr[5:8]
    T, N, B = fr[C_T:C_T + 3], fr[C_N:C_N + 3], fr[C_B:C_B + 3]
    Z = np.array([[*N, 0, 0, 0], [*B, 0, 0, 0], [*np.cross(r, T), *T], [*np.cross(r, N), *N], [*np.cross(r, B), *B]])
    return Z - np.outer(zr[:5], n)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def p_row(Pm, b, r, a0, a1, a2, a3, a4, a5, f, n):
    """Row ``r`` of car ``b``'s P: the row (a0 … a5) − f n."""
    Pm[b, r, 0] = a0 - f * n[0]
    Pm[b, r, 1] = a1 - f * n[1]
    Pm[b, r, 2] = a2 - f * n[2]
    Pm[b, r, 3] = a3 - f * n[3]
    Pm[b, r, 4] = a4 - f * n[4]
    Pm[b, r, 5] = a5 - f * n[5]


# ----------------------------------------------------------------------------- impulses
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def move_by(b, M, f, scale, vel, omg):
    """Body ``b``'s velocities change by ``scale·M[b] f`` (M (nb, 6, 6), f a 6-vector)."""
    for i in range(3):
        dv = 0.0
        dw = 0.0
        for k in range(6):
            dv += M[b, i, k] * f[k]
            dw += M[b, 3 + i, k] * f[k]
        vel[b, i] += scale * dv
        omg[b, i] += scale * dw


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def apply_impulse(b, f, scale, trk, cars, bodies):
    """Apply generalised impulse ``scale·f`` (6) to body ``b`` through its mobility W̃.

    For a car held by its track the track-row impulses change by −P f (rows 1–5 stay satisfied).
    """
    Wt, Wn, vel, omg = trk.mobility, trk.rank1, bodies.vel, bodies.omg
    for i in range(3):
        dv = 0.0
        dw = 0.0
        for k in range(6):
            dv += mobility_at(Wt, Wn, b, i, k) * f[k]
            dw += mobility_at(Wt, Wn, b, 3 + i, k) * f[k]
        vel[b, i] += scale * dv
        omg[b, i] += scale * dw
    if b < cars.n and cars.held[b]:
        if Wn[b, 6] > 0.0:   # in closed form: P f from Zᵀ M n/μ and the arm
            nf = 0.0
            for k in range(6):
                nf += Wn[b, k] * f[k]
            p0, p1, p2, p3, p4 = closed_to_track(b, f[0], f[1], f[2], f[3], f[4], f[5], nf, trk, cars.frame)
            trk.lam[b, 0] -= scale * p0
            trk.lam[b, 1] -= scale * p1
            trk.lam[b, 2] -= scale * p2
            trk.lam[b, 3] -= scale * p3
            trk.lam[b, 4] -= scale * p4
        else:
            P = trk.to_track
            for r in range(5):
                s = 0.0
                for k in range(6):
                    s += P[b, r, k] * f[k]
                trk.lam[b, r] -= scale * s
    if trk.carrier[b] >= 0:
        carrier_impulse(b, f, scale, trk, cars.n, cars.held, bodies.vel, bodies.omg)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_impulse(b, f, scale, trk, ncars, held, vel, omg):
    """The rest of an impulse ``scale·f`` on body ``b`` when ``b`` carries tracks or is a car on one
    (docs/physics.md §9; ``apply_impulse`` has moved ``b`` by its own W̃): the carrier moves by
    ΔU = W̃_t g, g = E_bᵀ f for a car (f for the carrier itself, whose own change is done), every car
    on it by E_c ΔU (its track impulses by −Y_c ΔU), the joint that holds it by −P g. ``ncars``,
    ``held``: ``cars.n``, ``cars.held``; ``vel``, ``omg``: the bodies' (arrays, not whole records: a
    call here costs every stage that may make it, docs/physics.md "What makes it fast")."""
    k = trk.carrier[b]
    t = trk.kbody[k]
    if b != t and (b >= ncars or not held[b]):
        return
    E, Wt = trk.E, trk.mobility
    if b == t:
        g0, g1, g2, g3, g4, g5 = f[0], f[1], f[2], f[3], f[4], f[5]
    else:   # g = E_bᵀ f
        g0 = g1 = g2 = g3 = g4 = g5 = 0.0
        for i in range(6):
            fi = f[i]
            g0 += E[b, i, 0] * fi
            g1 += E[b, i, 1] * fi
            g2 += E[b, i, 2] * fi
            g3 += E[b, i, 3] * fi
            g4 += E[b, i, 4] * fi
            g5 += E[b, i, 5] * fi
    g = (g0, g1, g2, g3, g4, g5)
    u0 = u1 = u2 = u3 = u4 = u5 = 0.0
    for j in range(6):
        gj = g[j] * scale
        u0 += Wt[t, 0, j] * gj
        u1 += Wt[t, 1, j] * gj
        u2 += Wt[t, 2, j] * gj
        u3 += Wt[t, 3, j] * gj
        u4 += Wt[t, 4, j] * gj
        u5 += Wt[t, 5, j] * gj
    carrier_motion(k, (u0, u1, u2, u3, u4, u5), trk, held, vel, omg, b != t)
    fold_impulse(k, g, scale, trk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_motion(k, dU, trk, held, vel, omg, move_body):
    """Carrier ``k``'s body moves by ``dU`` (6): each car on its tracks follows (E_c dU) and its
    track impulses change by −Y_c dU; the body itself too when ``move_body`` (docs/physics.md §9)."""
    t = trk.kbody[k]
    E, Y, lam = trk.E, trk.Y, trk.lam
    if move_body:
        for i in range(3):
            vel[t, i] += dU[i]
            omg[t, i] += dU[3 + i]
    for m in range(trk.kfirst[k], trk.kfirst[k + 1]):
        c = trk.kcars[m]
        if not held[c]:
            continue
        move_by(c, E, dU, 1.0, vel, omg)
        for r in range(5):
            s = 0.0
            for j in range(6):
                s += Y[c, r, j] * dU[j]
            lam[c, r] -= s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def fold_impulse(k, g, scale, trk):
    """The impulses of the joint that holds carrier ``k`` to the world (``trk.kfold``, solved with it)
    under a generalised impulse ``scale·g`` on the carrier: −P g."""
    if trk.kfold[k] >= 0:
        for r in range(5):
            s = 0.0
            for j in range(6):
                s += trk.kP[k, r, j] * g[j]
            trk.klam[k, r] -= scale * s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def eval_track_point(data, row0, nrows, ds, length, closed, s, out):
    """Position P, unit tangent T and P'' at arc length ``s`` into ``out`` (columns C_P, C_T, C_DT):
    what the closest-point Newton step needs, with exactly the arithmetic of
    ``curves.compact.eval_track`` for those columns (the other columns are left alone)."""
    s = wrap_arc_length(s, length, closed)
    a, u = segment(s, ds, nrows, row0)
    b = a + 1
    h00, h10, h01, h11 = hermite_weights(u, ds)
    tn = 0.0
    for k in range(3):
        out[C_P + k] = h00 * data[a, C_P + k] + h10 * data[a, C_T + k] + h01 * data[b, C_P + k] + h11 * data[b, C_T + k]
        t = h00 * data[a, C_T + k] + h10 * data[a, C_DT + k] + h01 * data[b, C_T + k] + h11 * data[b, C_DT + k]
        out[C_T + k] = t
        tn += t * t
    tn = 1.0 / np.sqrt(tn)
    for k in range(3):
        out[C_T + k] *= tn
    w = 1.0 - u
    for k in range(C_DT, C_DT + 3):
        out[k] = w * data[a, k] + u * data[b, k]
