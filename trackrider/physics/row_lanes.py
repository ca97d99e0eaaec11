"""The start of a step for plain cars eight at a time, in the CPU's vector lanes (docs/physics.md,
"Cars in lanes").

A held car on a fixed track with its support row (its block in closed form, ``track_joint.in_closed_form``)
has, from its step's start velocities to its track rows, the arithmetic of ``kernels.transport_car``,
``kernels.body_forces``, ``kernels.car_resistance`` and ``kernels.track_rows_body`` (``track_arm``,
``track_targets``, ``fixed_track_block``): the velocities transported with the frame, gravity, the
gyroscopic term, explicit resistance, the rows' targets, n, 1/μ, Zᵀ M n/μ (for P) and the exact
projection. Here
``car_lanes.NB`` such cars go at once through loops over the lanes of the integration's flat buffer
(``Work.lx``, word ``k`` of lane ``l`` at ``k·NB + l``), which LLVM turns into vector instructions.
The words the integration holds (position, velocities, rotation, cg, the frame) are read where it
put them: right after a block's integration (``kernels.step_chunk``) they are there already; any
other time they are copied in first. The rest of a car's numbers go to words of their own
(``Y_*``, after ``car_lanes.LANE_WORDS``).

The operations are the scalar stages', but LLVM chooses other products to fuse into multiply-adds
in a loop over lanes than in one car's code, so a car's numbers here may differ from the scalar
stages' in their last digits. A car goes the same way whatever the threads: the blocks are the same
(``car_lanes.chunk_edge``), and whether a block is plain depends on its cars alone. A body turned
1e-4 rad or more from its frame has its rotation error made lane by lane by the scalar far branch
(``maths._rotation_error_far``), between the two vector loops.
"""
from __future__ import annotations

from trackrider.curves.compact import C_B, C_N, C_OMEGA, C_P, C_T
from trackrider.jit import njit
from trackrider.physics.car_lanes import (LANE_WORDS, NB, X_CG, X_FR, X_OMG, X_POS, X_ROT, X_VEL, at,
                                          copy_motion_in)
from trackrider.physics.maths import _rotation_error_far
from trackrider.physics.track_joint import in_closed_form, z_terms

# the words of a lane after the integration's (each ``NB`` doubles)
Y_PF = LANE_WORDS            # the frame's axes before (T, N, B: ``cars.prev_frame``)
Y_M, Y_IM = Y_PF + 9, Y_PF + 10            # mass, 1/mass
Y_IB, Y_IIB = Y_PF + 11, Y_PF + 14         # principal inertia and its inverse
Y_PREV = Y_PF + 17                         # 1: the car has a frame before (it is transported)
Y_K2, Y_K1 = Y_PF + 18, Y_PF + 19          # resistance F = −K2 v|v| − K1 v
Y_TR, Y_FX = Y_PF + 20, Y_PF + 23          # out: the transport's impulse, the explicit force
Y_FAR, Y_E = Y_PF + 24, Y_PF + 25          # the rotation error: 1 where its far branch is needed; θ
Y_LAM, Y_ZR, Y_N1 = Y_PF + 28, Y_PF + 33, Y_PF + 41   # out: λ (5), Zᵀ M n/μ and r_m (8), n and 1/μ (7)
#: words per lane, the integration's and these
ROW_WORDS = Y_N1 + 7


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rows_plain(j0, n, bodies, cars, carrier):
    """True when cars ``j0`` … ``j0 + n − 1`` are all held, in closed form (``track_joint.in_closed_form``)
    and have mass."""
    for b in range(j0, j0 + n):
        if not (cars.held[b] and in_closed_form(b, cars, carrier) and bodies.inv_mass[b] > 0.0):
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_state_in(j0, n, bodies, cars, X):
    """The words the integration keeps (each lane's position, velocities, rotation, cg and frame)."""
    pos, vel, omg, rot, fr = bodies.pos, bodies.vel, bodies.omg, bodies.rot, cars.frame
    for l in range(NB):
        b = j0 + min(l, n - 1)
        copy_motion_in(b, l, pos, vel, omg, X)
        for i in range(3):
            for k in range(3):
                X[at(X_ROT + 3 * i + k, l)] = rot[b, i, k]
        X[at(X_CG, l)] = cars.cg[b]
        for k in range(C_OMEGA + 3):
            X[at(X_FR + k, l)] = fr[b, k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_car_in(j0, n, bodies, cars, res, X):
    """Each lane's own words: the frame before, mass, inertia and resistance."""
    ib, iib, pf = bodies.ib, bodies.inv_ib, cars.prev_frame
    for l in range(NB):
        b = j0 + min(l, n - 1)
        for k in range(9):
            X[at(Y_PF + k, l)] = pf[b, k]
        X[at(Y_M, l)] = bodies.mass[b]
        X[at(Y_IM, l)] = bodies.inv_mass[b]
        for i in range(3):
            X[at(Y_IB + i, l)] = ib[b, i]
            X[at(Y_IIB + i, l)] = iib[b, i]
        X[at(Y_PREV, l)] = 1.0 if cars.has_prev[b] else 0.0
        if res.nl2:
            X[at(Y_K2, l)] = cars.drag[b, 1] * res.nl2_drag
            X[at(Y_K1, l)] = 0.0
        else:
            X[at(Y_K2, l)] = 0.5 * res.air_density * cars.drag[b, 0] + cars.davis[b, 2]
            X[at(Y_K1, l)] = cars.davis[b, 1]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def axes_of(X, l):
    """Lane ``l``'s frame axes T, N, B."""
    return (X[at(X_FR + C_T, l)], X[at(X_FR + C_T + 1, l)], X[at(X_FR + C_T + 2, l)],
            X[at(X_FR + C_N, l)], X[at(X_FR + C_N + 1, l)], X[at(X_FR + C_N + 2, l)],
            X[at(X_FR + C_B, l)], X[at(X_FR + C_B + 1, l)], X[at(X_FR + C_B + 2, l)])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rotation_of_lane(X, l):
    """Lane ``l``'s rotation matrix, row by row."""
    return (X[at(X_ROT, l)], X[at(X_ROT + 1, l)], X[at(X_ROT + 2, l)], X[at(X_ROT + 3, l)], X[at(X_ROT + 4, l)],
            X[at(X_ROT + 5, l)], X[at(X_ROT + 6, l)], X[at(X_ROT + 7, l)], X[at(X_ROT + 8, l)])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lanes_error(X):
    """Vector: each body's rotation away from its frame (``maths.frame_rotation_error``, its near
    branch), word ``Y_FAR`` 1 where the far branch is needed."""
    for l in range(NB):
        Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz = axes_of(X, l)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_of_lane(X, l)
        m01 = Tx * r01 + Ty * r11 + Tz * r21
        m02 = Tx * r02 + Ty * r12 + Tz * r22
        m10 = Nx * r00 + Ny * r10 + Nz * r20
        m12 = Nx * r02 + Ny * r12 + Nz * r22
        m20 = Bx * r00 + By * r10 + Bz * r20
        m21 = Bx * r01 + By * r11 + Bz * r21
        v0 = 0.5 * (m21 - m12)
        v1 = 0.5 * (m02 - m20)
        v2 = 0.5 * (m10 - m01)
        s2 = v0 * v0 + v1 * v1 + v2 * v2
        m00 = Tx * r00 + Ty * r10 + Tz * r20
        m11 = Nx * r01 + Ny * r11 + Nz * r21
        m22 = Bx * r02 + By * r12 + Bz * r22
        c = 0.5 * (m00 + m11 + m22 - 1.0)
        f = 1.0 + s2 * (1.0 / 6.0 + s2 * (3.0 / 40.0))
        X[at(Y_FAR, l)] = 0.0 if (s2 < 1e-8) & (c > 0.0) else 1.0
        X[at(Y_E, l)], X[at(Y_E + 1, l)], X[at(Y_E + 2, l)] = f * v0, f * v1, f * v2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def far_errors(X):
    """Lane by lane: the far branch of the rotation error where ``lanes_error`` flagged it."""
    for l in range(NB):
        if X[at(Y_FAR, l)] != 0.0:
            Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz = axes_of(X, l)
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_of_lane(X, l)
            e0, e1, e2 = _rotation_error_far(
                Tx * r00 + Ty * r10 + Tz * r20, Tx * r01 + Ty * r11 + Tz * r21, Tx * r02 + Ty * r12 + Tz * r22,
                Nx * r00 + Ny * r10 + Nz * r20, Nx * r01 + Ny * r11 + Nz * r21, Nx * r02 + Ny * r12 + Nz * r22,
                Bx * r00 + By * r10 + Bz * r20, Bx * r01 + By * r11 + Bz * r21, Bx * r02 + By * r12 + Bz * r22)
            X[at(Y_E, l)], X[at(Y_E + 1, l)], X[at(Y_E + 2, l)] = e0, e1, e2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lanes_rows(h, gx, gy, gz, erp_h, X):
    """Vector: each car's transport, gravity, gyroscopic term and resistance, then its track block in
    closed form and the exact projection (``kernels.transport_car``, ``body_forces``,
    ``car_resistance``, ``track_joint.fixed_track_block``)."""
    for l in range(NB):
        Px, Py, Pz = X[at(X_FR + C_P, l)], X[at(X_FR + C_P + 1, l)], X[at(X_FR + C_P + 2, l)]
        Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz = axes_of(X, l)
        Ox, Oy, Oz = X[at(X_FR + C_OMEGA, l)], X[at(X_FR + C_OMEGA + 1, l)], X[at(X_FR + C_OMEGA + 2, l)]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_of_lane(X, l)
        m, im = X[at(Y_M, l)], X[at(Y_IM, l)]
        i0, i1, i2 = X[at(Y_IB, l)], X[at(Y_IB + 1, l)], X[at(Y_IB + 2, l)]
        cg = X[at(X_CG, l)]
        v0, v1, v2 = X[at(X_VEL, l)], X[at(X_VEL + 1, l)], X[at(X_VEL + 2, l)]
        w0, w1, w2 = X[at(X_OMG, l)], X[at(X_OMG + 1, l)], X[at(X_OMG + 2, l)]
        rx, ry, rz = -cg * r02, -cg * r12, -cg * r22   # the arm r_m (track_joint.track_arm)
        # the transport (maths.frame_turn) and its impulse (carrier.transport_impulse)
        a0 = X[at(Y_PF, l)] * v0 + X[at(Y_PF + 1, l)] * v1 + X[at(Y_PF + 2, l)] * v2
        a1 = X[at(Y_PF + 3, l)] * v0 + X[at(Y_PF + 4, l)] * v1 + X[at(Y_PF + 5, l)] * v2
        a2 = X[at(Y_PF + 6, l)] * v0 + X[at(Y_PF + 7, l)] * v1 + X[at(Y_PF + 8, l)] * v2
        u0, u1, u2 = Tx * a0 + Nx * a1 + Bx * a2, Ty * a0 + Ny * a1 + By * a2, Tz * a0 + Nz * a1 + Bz * a2
        a0 = X[at(Y_PF, l)] * w0 + X[at(Y_PF + 1, l)] * w1 + X[at(Y_PF + 2, l)] * w2
        a1 = X[at(Y_PF + 3, l)] * w0 + X[at(Y_PF + 4, l)] * w1 + X[at(Y_PF + 5, l)] * w2
        a2 = X[at(Y_PF + 6, l)] * w0 + X[at(Y_PF + 7, l)] * w1 + X[at(Y_PF + 8, l)] * w2
        o0, o1, o2 = Tx * a0 + Nx * a1 + Bx * a2, Ty * a0 + Ny * a1 + By * a2, Tz * a0 + Nz * a1 + Bz * a2
        dpx, dpy, dpz = m * (u0 - v0), m * (u1 - v1), m * (u2 - v2)
        tr0 = dpx * Nx + dpy * Ny + dpz * Nz
        tr1 = dpx * Bx + dpy * By + dpz * Bz
        dw0, dw1, dw2 = o0 - w0, o1 - w1, o2 - w2
        sw = 0.0
        sw += i0 * (r00 * dw0 + r10 * dw1 + r20 * dw2) * (r00 * Tx + r10 * Ty + r20 * Tz)
        sw += i1 * (r01 * dw0 + r11 * dw1 + r21 * dw2) * (r01 * Tx + r11 * Ty + r21 * Tz)
        sw += i2 * (r02 * dw0 + r12 * dw1 + r22 * dw2) * (r02 * Tx + r12 * Ty + r22 * Tz)
        c0, c1, c2 = ry * dpz - rz * dpy, rz * dpx - rx * dpz, rx * dpy - ry * dpx
        tr2 = sw - (c0 * Tx + c1 * Ty + c2 * Tz)
        prev = X[at(Y_PREV, l)] != 0.0
        if prev:
            v0, v1, v2, w0, w1, w2 = u0, u1, u2, o0, o1, o2
        X[at(Y_TR, l)] = tr0 if prev else 0.0
        X[at(Y_TR + 1, l)] = tr1 if prev else 0.0
        X[at(Y_TR + 2, l)] = tr2 if prev else 0.0
        # gravity and the gyroscopic term (kernels.body_forces)
        v0 += h * gx
        v1 += h * gy
        v2 += h * gz
        wb0 = r00 * w0 + r10 * w1 + r20 * w2
        wb1 = r01 * w0 + r11 * w1 + r21 * w2
        wb2 = r02 * w0 + r12 * w1 + r22 * w2
        l0, l1, l2 = i0 * wb0, i1 * wb1, i2 * wb2
        t0, t1, t2 = wb1 * l2 - wb2 * l1, wb2 * l0 - wb0 * l2, wb0 * l1 - wb1 * l0
        d0 = -h * X[at(Y_IIB, l)] * t0
        d1 = -h * X[at(Y_IIB + 1, l)] * t1
        d2 = -h * X[at(Y_IIB + 2, l)] * t2
        w0 += r00 * d0 + r01 * d1 + r02 * d2
        w1 += r10 * d0 + r11 * d1 + r12 * d2
        w2 += r20 * d0 + r21 * d1 + r22 * d2
        # explicit resistance (kernels.car_resistance), at most stopping the car in one step
        vt = v0 * Tx + v1 * Ty + v2 * Tz
        F = -X[at(Y_K2, l)] * vt * abs(vt) - X[at(Y_K1, l)] * vt
        lim = abs(vt) * m / h
        F = lim if F > lim else (-lim if F < -lim else F)
        X[at(Y_FX, l)] = F if F != 0.0 else 0.0
        if F != 0.0:
            dv = h * F * im
            v0 += dv * Tx
            v1 += dv * Ty
            v2 += dv * Tz
        # the rows' targets (track_joint.track_targets)
        dx, dy, dz = Px - (X[at(X_POS, l)] + rx), Py - (X[at(X_POS + 1, l)] + ry), Pz - (X[at(X_POS + 2, l)] + rz)
        g0 = erp_h * (dx * Nx + dy * Ny + dz * Nz)
        g1 = erp_h * (dx * Bx + dy * By + dz * Bz)
        g2, g3, g4 = -erp_h * X[at(Y_E, l)], -erp_h * X[at(Y_E + 1, l)], -erp_h * X[at(Y_E + 2, l)]
        # n and μ = m |n_v|² + Ωᵀ I_w Ω (track_joint.fixed_track_block)
        n0, n1, n2 = Tx + (ry * Oz - rz * Oy), Ty + (rz * Ox - rx * Oz), Tz + (rx * Oy - ry * Ox)
        b0 = i0 * (r00 * Ox + r10 * Oy + r20 * Oz)
        b1 = i1 * (r01 * Ox + r11 * Oy + r21 * Oz)
        b2 = i2 * (r02 * Ox + r12 * Oy + r22 * Oz)
        IOx, IOy, IOz = r00 * b0 + r01 * b1 + r02 * b2, r10 * b0 + r11 * b1 + r12 * b2, r20 * b0 + r21 * b1 + r22 * b2
        mu = m * (n0 * n0 + n1 * n1 + n2 * n2) + (Ox * IOx + Oy * IOy + Oz * IOz)
        imu = 1.0 / mu
        z0, z1, z2, z3, z4 = z_terms(m, n0, n1, n2, rx, ry, rz, IOx, IOy, IOz, Tx, Ty, Tz, Nx, Ny, Nz, Bx, By, Bz)
        X[at(Y_N1, l)], X[at(Y_N1 + 1, l)], X[at(Y_N1 + 2, l)] = n0, n1, n2
        X[at(Y_N1 + 3, l)], X[at(Y_N1 + 4, l)], X[at(Y_N1 + 5, l)] = Ox, Oy, Oz
        X[at(Y_N1 + 6, l)] = imu
        # P = Zᵀ − (Zᵀ M n / μ) nᵀ: its readers take it from Zᵀ M n / μ and the arm (track_joint.closed_to_track)
        X[at(Y_ZR, l)], X[at(Y_ZR + 1, l)], X[at(Y_ZR + 2, l)] = z0 * imu, z1 * imu, z2 * imu
        X[at(Y_ZR + 3, l)], X[at(Y_ZR + 4, l)] = z3 * imu, z4 * imu
        X[at(Y_ZR + 5, l)], X[at(Y_ZR + 6, l)], X[at(Y_ZR + 7, l)] = rx, ry, rz
        # the projection: Z g = [g0 N + g1 B + r_m × ω_g, ω_g], ω_g = g2 T + g3 N + g4 B; w = u − Z g
        wtx, wty, wtz = g2 * Tx + g3 * Nx + g4 * Bx, g2 * Ty + g3 * Ny + g4 * By, g2 * Tz + g3 * Nz + g4 * Bz
        e0, e1, e2 = ry * wtz - rz * wty, rz * wtx - rx * wtz, rx * wty - ry * wtx
        zx, zy, zz = g0 * Nx + g1 * Bx + e0, g0 * Ny + g1 * By + e1, g0 * Nz + g1 * Bz + e2
        mvx, mvy, mvz = m * (v0 - zx), m * (v1 - zy), m * (v2 - zz)
        x0, x1, x2 = w0 - wtx, w1 - wty, w2 - wtz
        b0 = i0 * (r00 * x0 + r10 * x1 + r20 * x2)
        b1 = i1 * (r01 * x0 + r11 * x1 + r21 * x2)
        b2 = i2 * (r02 * x0 + r12 * x1 + r22 * x2)
        Ix, Iy, Iz = r00 * b0 + r01 * b1 + r02 * b2, r10 * b0 + r11 * b1 + r12 * b2, r20 * b0 + r21 * b1 + r22 * b2
        sigma = (n0 * mvx + n1 * mvy + n2 * mvz + Ox * Ix + Oy * Iy + Oz * Iz) * imu
        y0, y1, y2 = mvy * rz - mvz * ry, mvz * rx - mvx * rz, mvx * ry - mvy * rx
        y0, y1, y2 = y0 + Ix, y1 + Iy, y2 + Iz
        X[at(Y_LAM, l)] = 0.0 + (sigma * z0 - (Nx * mvx + Ny * mvy + Nz * mvz))
        X[at(Y_LAM + 1, l)] = 0.0 + (sigma * z1 - (Bx * mvx + By * mvy + Bz * mvz))
        X[at(Y_LAM + 2, l)] = 0.0 + (sigma * z2 - (Tx * y0 + Ty * y1 + Tz * y2))
        X[at(Y_LAM + 3, l)] = 0.0 + (sigma * z3 - (Nx * y0 + Ny * y1 + Nz * y2))
        X[at(Y_LAM + 4, l)] = 0.0 + (sigma * z4 - (Bx * y0 + By * y1 + Bz * y2))
        X[at(X_VEL, l)], X[at(X_VEL + 1, l)], X[at(X_VEL + 2, l)] = zx + sigma * n0, zy + sigma * n1, zz + sigma * n2
        X[at(X_OMG, l)], X[at(X_OMG + 1, l)], X[at(X_OMG + 2, l)] = wtx + sigma * Ox, wty + sigma * Oy, wtz + sigma * Oz


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_rows_out(j0, n, bodies, cars, trk, X):
    """Each car's velocities, transport impulse, explicit force, track-row impulses, Zᵀ M n/μ and arm, n and
    1/μ."""
    vel, omg, lam, zr, r1 = bodies.vel, bodies.omg, trk.lam, trk.zr, trk.rank1
    for l in range(n):
        b = j0 + l
        for i in range(3):
            vel[b, i] = X[at(X_VEL + i, l)]
            omg[b, i] = X[at(X_OMG + i, l)]
            cars.transport[b, i] = X[at(Y_TR + i, l)]
        cars.f_explicit[b] = X[at(Y_FX, l)]
        for r in range(5):
            lam[b, r] = X[at(Y_LAM + r, l)]
        for k in range(8):
            zr[b, k] = X[at(Y_ZR + k, l)]
        for k in range(7):
            r1[b, k] = X[at(Y_N1 + k, l)]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rows_block(j0, n, cfg, bodies, cars, res, trk, X, integrated):
    """Cars ``j0`` … ``j0 + n − 1`` (``n`` ≤ ``NB``, ``rows_plain``) from their step's start velocities to
    their track rows, in the lanes; ``integrated``: the integration's lanes hold this block's position,
    velocities, rotation and frame already (``car_lanes.integrate_block`` just ran on it)."""
    if not integrated:
        copy_state_in(j0, n, bodies, cars, X)
    copy_car_in(j0, n, bodies, cars, res, X)
    lanes_error(X)
    far_errors(X)
    lanes_rows(cfg.h, cfg.gx, cfg.gy, cfg.gz, cfg.erp_h, X)
    copy_rows_out(j0, n, bodies, cars, trk, X)
