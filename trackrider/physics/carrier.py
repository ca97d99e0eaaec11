"""A track carried by a body: the track joint's track-body terms and the exact coupling of a body
and the cars on its tracks (docs/physics.md §9).

A *carrier* is a body that carries tracks; the cars on them are its members. A track's table is
where it lies at the start; with the body's pose then (``tracks.pos0``, ``rot0``) and now
(``X_t``, ``R_t``), a point of the table moves to ``X_t + Q (p − pos0)``, a direction to ``Q e``,
``Q = R_t rot0ᵀ`` (``move_frame``).

Rows 1–5 of a car ``b`` on a moving track gain the body's columns ``H_b`` (``d = P − X_t``):

    rows 1–2 (e = N_w, B_w)   [−e, −(d × e)]
    rows 3–5 (e = T, N_w, B_w) [(Ω·e) T, −e + (Ω·e)(d × T)]

Block elimination (``A_b = G_b W_b G_bᵀ``, ``P_b = A_b⁻¹ G_b W_b``, ``W̃_b`` as on the world):
the carrier with its cars attached has the mass matrix ``K = W_t⁻¹ + Σ_b H_bᵀ A_b⁻¹ H_b`` and the
mobility ``W̃_t = K⁻¹``; a car follows the body as ``E_b = −P_bᵀ H_b``. An impulse ``f`` on car
``b`` moves the carrier by ``ΔU = W̃_t E_bᵀ f``, car ``b`` by ``W̃_b f + E_b ΔU``, every other
member ``c`` by ``E_c ΔU``, and changes the track impulses by ``−P_b f − Y_b ΔU`` (``Y = A⁻¹ H``)
and ``−Y_c ΔU``: the members' rows 1–5 stay exact (``track_joint.carrier_impulse``). The joint that
holds a carrier to the world (its first hinge, prismatic or ball joint to the world) is solved
with it exactly: its block projected through ``W̃_t``, then ``W̃_t ← W̃_t − W̃_t Jᵀ (J W̃_t Jᵀ)⁻¹ J W̃_t``
(``kfold``; its impulses change by ``−P g`` for a generalised impulse ``g`` on the carrier).
Chains of couplers on a carrier: ``S = S_tridiagonal + U W̃_t Uᵀ`` (``U_k = E_aᵀ h_a + E_bᵀ h_b``),
solved exactly by Woodbury (``factor_carrier_chains``, ``solve_carrier_chains``).
"""
from __future__ import annotations

from trackrider.curves.compact import C_B, C_DT, C_N, C_OMEGA, C_P, C_T
from trackrider.jit import njit
from trackrider.physics.car_blocks import (F_Y, G_N, G_ROWS, R_ROLL, W_U, _third, block_apply, block_rhs, block_solve,
                                           solve_train)
from trackrider.physics.couplings import chain_impulses
from trackrider.physics.joints.dispatch import prepare_joint
from trackrider.physics.maths import body_mobility, cross, frame_turn, gauss_jordan, invert_spd
from trackrider.physics.track_joint import apply_impulse, carrier_motion, fold_impulse


# ----------------------------------------------------------------------------- geometry
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def move_frame(fr, t, tracks, bodies):
    """Turn the table frame ``fr`` (curves/compact.py columns) of track ``t`` in place to where its
    body has carried it: P = X + Q (P₀ − pos0), T, N, B, Ω, P'' by Q = R rot0ᵀ."""
    k = tracks.body[t]
    R, R0, X, X0 = bodies.rot[k], tracks.rot0[t], bodies.pos[k], tracks.pos0[t]
    for c in (C_P, C_T, C_N, C_B, C_OMEGA, C_DT):
        if c == C_P:
            a0, a1, a2 = fr[c] - X0[0], fr[c + 1] - X0[1], fr[c + 2] - X0[2]
        else:
            a0, a1, a2 = fr[c], fr[c + 1], fr[c + 2]
        # rot0ᵀ a: the vector in the body's axes, then R of it
        l0 = R0[0, 0] * a0 + R0[1, 0] * a1 + R0[2, 0] * a2
        l1 = R0[0, 1] * a0 + R0[1, 1] * a1 + R0[2, 1] * a2
        l2 = R0[0, 2] * a0 + R0[1, 2] * a1 + R0[2, 2] * a2
        for i in range(3):
            v = R[i, 0] * l0 + R[i, 1] * l1 + R[i, 2] * l2
            fr[c + i] = v + X[i] if c == C_P else v


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def to_table(t, tracks, bodies, x0, x1, x2):
    """A world point where track ``t``'s table has it: pos0 + rot0 Rᵀ (x − X) (``move_frame``'s inverse)."""
    k = tracks.body[t]
    R, R0, X, X0 = bodies.rot[k], tracks.rot0[t], bodies.pos[k], tracks.pos0[t]
    a0, a1, a2 = x0 - X[0], x1 - X[1], x2 - X[2]
    l0 = R[0, 0] * a0 + R[1, 0] * a1 + R[2, 0] * a2
    l1 = R[0, 1] * a0 + R[1, 1] * a1 + R[2, 1] * a2
    l2 = R[0, 2] * a0 + R[1, 2] * a1 + R[2, 2] * a2
    return (X0[0] + R0[0, 0] * l0 + R0[0, 1] * l1 + R0[0, 2] * l2,
            X0[1] + R0[1, 0] * l0 + R0[1, 1] * l1 + R0[1, 2] * l2,
            X0[2] + R0[2, 0] * l0 + R0[2, 1] * l1 + R0[2, 2] * l2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def point_velocity(k, bodies, x0, x1, x2):
    """Velocity of the point (x0, x1, x2) fixed in body ``k``: V + W × (x − X)."""
    vel, omg, pos = bodies.vel, bodies.omg, bodies.pos
    c0, c1, c2 = cross(omg[k, 0], omg[k, 1], omg[k, 2], x0 - pos[k, 0], x1 - pos[k, 1], x2 - pos[k, 2])
    return vel[k, 0] + c0, vel[k, 1] + c1, vel[k, 2] + c2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def relative_speed(b, bodies, cars, trk):
    """Speed of car ``b``'s anchor along T relative to its moving track: T·(v_A − V_P)."""
    k = trk.kbody[trk.carrier[b]]
    fr = cars.frame[b]
    R = bodies.rot[b]
    cg = cars.cg[b]
    vel, omg = bodies.vel, bodies.omg
    a0, a1, a2 = cross(omg[b, 0], omg[b, 1], omg[b, 2], -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
    p0, p1, p2 = point_velocity(k, bodies, fr[C_P], fr[C_P + 1], fr[C_P + 2])
    return ((vel[b, 0] + a0 - p0) * fr[C_T] + (vel[b, 1] + a1 - p1) * fr[C_T + 1]
            + (vel[b, 2] + a2 - p2) * fr[C_T + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def relative_along(b, bodies, cars, trk, e):
    """Velocity of car ``b``'s anchor along the frame axis at column ``e`` relative to its track point."""
    k = trk.kbody[trk.carrier[b]]
    fr = cars.frame[b]
    R = bodies.rot[b]
    cg = cars.cg[b]
    vel, omg = bodies.vel, bodies.omg
    a0, a1, a2 = cross(omg[b, 0], omg[b, 1], omg[b, 2], -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
    p0, p1, p2 = point_velocity(k, bodies, fr[C_P], fr[C_P + 1], fr[C_P + 2])
    return (vel[b, 0] + a0 - p0) * fr[e] + (vel[b, 1] + a1 - p1) * fr[e + 1] + (vel[b, 2] + a2 - p2) * fr[e + 2]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def keep_table_axes(b, tracks, bodies, cars):
    """``cars.prev_frame[b]`` = car ``b``'s frame axes (T, N, B) in its track's table, rot0 R_tᵀ e, from its
    frame now and its track body's rotation now (before the step moves it)."""
    t = cars.track[b]
    R, R0 = bodies.rot[tracks.body[t]], tracks.rot0[t]
    fr, pf = cars.frame[b], cars.prev_frame[b]
    for a in range(3):
        c = C_T if a == 0 else (C_N if a == 1 else C_B)
        l0 = R[0, 0] * fr[c] + R[1, 0] * fr[c + 1] + R[2, 0] * fr[c + 2]
        l1 = R[0, 1] * fr[c] + R[1, 1] * fr[c + 1] + R[2, 1] * fr[c + 2]
        l2 = R[0, 2] * fr[c] + R[1, 2] * fr[c + 1] + R[2, 2] * fr[c + 2]
        for i in range(3):
            pf[3 * a + i] = R0[i, 0] * l0 + R0[i, 1] * l1 + R0[i, 2] * l2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def turn_local(b, tracks, bodies, cars, x0, x1, x2):
    """R' x, R' = F_new (Q F_l,old)ᵀ: the turn of car ``b``'s frame along its track in the track body's
    axes only (F_l,old the last frame in the table, ``keep_table_axes``; Q = R_t rot0ᵀ the body's pose
    now). The body's own turn is left to the motion: a car at rest on a turning body is not
    transported, the body's rotation makes its centrifugal and Coriolis accelerations."""
    t = cars.track[b]
    R, R0 = bodies.rot[tracks.body[t]], tracks.rot0[t]
    fr, pf = cars.frame[b], cars.prev_frame[b]
    # y = Qᵀ x = rot0 Rᵀ x
    l0 = R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2
    l1 = R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2
    l2 = R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2
    y0 = R0[0, 0] * l0 + R0[0, 1] * l1 + R0[0, 2] * l2
    y1 = R0[1, 0] * l0 + R0[1, 1] * l1 + R0[1, 2] * l2
    y2 = R0[2, 0] * l0 + R0[2, 1] * l1 + R0[2, 2] * l2
    return frame_turn(fr, pf, y0, y1, y2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def relative_twist(b, bodies, trk):
    """Car ``b``'s velocity and angular velocity relative to its track body's motion, at the
    positions now: (v − V − W × (x − X), ω − W)."""
    k = trk.kbody[trk.carrier[b]]
    vel, omg = bodies.vel, bodies.omg
    p0, p1, p2 = point_velocity(k, bodies, bodies.pos[b, 0], bodies.pos[b, 1], bodies.pos[b, 2])
    return (vel[b, 0] - p0, vel[b, 1] - p1, vel[b, 2] - p2,
            omg[b, 0] - omg[k, 0], omg[b, 1] - omg[k, 1], omg[b, 2] - omg[k, 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def turn_relative(b, tracks, bodies, cars, trk):
    """Car ``b``'s velocities as the next transport will make them (no reaction on the body): the
    body's motion at the car plus R' of the motion relative to it (``turn_local``)."""
    k = trk.kbody[trk.carrier[b]]
    r0, r1, r2, r3, r4, r5 = relative_twist(b, bodies, trk)
    p0, p1, p2 = point_velocity(k, bodies, bodies.pos[b, 0], bodies.pos[b, 1], bodies.pos[b, 2])
    v0, v1, v2 = turn_local(b, tracks, bodies, cars, r0, r1, r2)
    w0, w1, w2 = turn_local(b, tracks, bodies, cars, r3, r4, r5)
    omg = bodies.omg
    return p0 + v0, p1 + v1, p2 + v2, omg[k, 0] + w0, omg[k, 1] + w1, omg[k, 2] + w2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def body_mass_matrix(k, bodies, K):
    """K = diag(m I3, R diag(I) Rᵀ) of body ``k`` (its mass matrix, world axes)."""
    R = bodies.rot[k]
    for i in range(6):
        for j in range(6):
            K[i, j] = 0.0
    m = bodies.mass[k]
    K[0, 0], K[1, 1], K[2, 2] = m, m, m
    for i in range(3):
        for j in range(3):
            s = 0.0
            for q in range(3):
                s += R[i, q] * bodies.ib[k, q] * R[j, q]
            K[3 + i, 3 + j] = s


# ----------------------------------------------------------------------------- the track rows
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def moving_track_block(b, bodies, cars, trk, wk):
    """After ``track_joint.prepare_track_block`` of car ``b`` on a moving track (its rows, A's
    Cholesky factor in ``wk.A``, P, W̃): the body's columns H, Y = A⁻¹ H, E = −Pᵀ H and the
    residual's z = A⁻¹ (t − G u − H U) for the carrier's projection (``carrier_project``)."""
    k = trk.kbody[trk.carrier[b]]
    fr = cars.frame[b]
    H, Y, E, G, Pm = trk.H, trk.Y, trk.E, trk.J, trk.to_track
    A, Ainv, rr = wk.A, wk.Ainv, wk.rr
    pos, vel, omg = bodies.pos, bodies.vel, bodies.omg
    dx, dy, dz = fr[C_P] - pos[k, 0], fr[C_P + 1] - pos[k, 1], fr[C_P + 2] - pos[k, 2]
    Tx, Ty, Tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    Ox, Oy, Oz = fr[C_OMEGA], fr[C_OMEGA + 1], fr[C_OMEGA + 2]
    tx, ty, tz = cross(dx, dy, dz, Tx, Ty, Tz)
    for r in range(5):
        c = C_N if r == 0 else (C_B if r == 1 else (C_T if r == 2 else (C_N if r == 3 else C_B)))
        ex, ey, ez = fr[c], fr[c + 1], fr[c + 2]
        if r < 2:
            c0, c1, c2 = cross(dx, dy, dz, ex, ey, ez)
            H[b, r, 0], H[b, r, 1], H[b, r, 2], H[b, r, 3], H[b, r, 4], H[b, r, 5] = -ex, -ey, -ez, -c0, -c1, -c2
        else:
            oe = Ox * ex + Oy * ey + Oz * ez
            H[b, r, 0], H[b, r, 1], H[b, r, 2] = oe * Tx, oe * Ty, oe * Tz
            H[b, r, 3], H[b, r, 4], H[b, r, 5] = -ex + oe * tx, -ey + oe * ty, -ez + oe * tz
    if not cars.support[b]:
        for i in range(6):
            H[b, 1, i] = 0.0
    # Y = A⁻¹ H, column by column (A = L Lᵀ in wk.A, inverse pivots on wk.Ainv's diagonal)
    for i in range(7):
        for r in range(5):
            if i < 6:
                e = H[b, r, i]
            else:   # the residual t − G u − H U
                e = trk.target[b, r]
                for q in range(3):
                    e -= G[b, r, q] * vel[b, q] + G[b, r, 3 + q] * omg[b, q]
                    e -= H[b, r, q] * vel[k, q] + H[b, r, 3 + q] * omg[k, q]
                if r == 1 and not cars.support[b]:
                    e = 0.0
            for q in range(r):
                e -= A[r, q] * rr[q]
            rr[r] = e * Ainv[r, r]
        for r in range(4, -1, -1):
            e = rr[r]
            for q in range(r + 1, 5):
                e -= A[q, r] * rr[q]
            rr[r] = e * Ainv[r, r]
        for r in range(5):
            if i < 6:
                Y[b, r, i] = rr[r]
            else:
                trk.z[b, r] = rr[r]
    for i in range(6):
        for j in range(6):
            s = 0.0
            for r in range(5):
                s -= Pm[b, r, i] * H[b, r, j]
            E[b, i, j] = s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_apply(k, g, scale, trk, cars, bodies, dU):
    """A generalised impulse ``scale·g`` on carrier ``k``'s body through W̃_t: the body and its
    members move (``carrier_motion``), the joint that holds it takes −P g."""
    t = trk.kbody[k]
    W = trk.mobility
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += W[t, i, j] * g[j]
        dU[i] = scale * s
    carrier_motion(k, dU, trk, cars.held, bodies.vel, bodies.omg, True)
    fold_impulse(k, g, scale, trk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_project(k, cfg, bodies, cars, joints, rows, trk, wk, free_joints):
    """The exact projection of carrier ``k`` and its cars onto their track rows (each car's block
    from ``moving_track_block``), the carrier's mobility W̃_t, and the joint that holds it to the
    world (``trk.kfold``) projected and folded into W̃_t."""
    t = trk.kbody[k]
    K, W, dU = trk.kK[k], wk.W, wk.rr
    H, Y, z = trk.H, trk.Y, trk.z
    body_mass_matrix(t, bodies, K)
    for m in range(trk.kfirst[k], trk.kfirst[k + 1]):
        b = trk.kcars[m]
        if not cars.held[b]:
            continue
        for i in range(6):
            for j in range(6):
                s = 0.0
                for r in range(5):
                    s += H[b, r, i] * Y[b, r, j]
                K[i, j] += s
    Wt = trk.mobility[t]
    invert_spd(K, 6, Wt, wk.M)
    for i in range(6):   # symmetric to rounding
        for j in range(i + 1, 6):
            s = 0.5 * (Wt[i, j] + Wt[j, i])
            Wt[i, j] = s
            Wt[j, i] = s
    # ΔU = W̃_t Σ Hᵀ z; each car's λ = z − Y ΔU, Δu = W Gᵀ λ
    for i in range(6):
        s = 0.0
        for m in range(trk.kfirst[k], trk.kfirst[k + 1]):
            b = trk.kcars[m]
            if cars.held[b]:
                for r in range(5):
                    s += H[b, r, i] * z[b, r]
        dU[6 + i] = s
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += Wt[i, j] * dU[6 + j]
        dU[i] = s
    vel, omg = bodies.vel, bodies.omg
    for i in range(3):
        vel[t, i] += dU[i]
        omg[t, i] += dU[3 + i]
    G = trk.J
    for m in range(trk.kfirst[k], trk.kfirst[k + 1]):
        b = trk.kcars[m]
        if not cars.held[b]:
            continue
        body_mobility(b, bodies.rot, bodies.inv_mass, bodies.inv_ib, W)
        f0 = f1 = f2 = 0.0
        for r in range(5):
            dl = z[b, r]
            for j in range(6):
                dl -= Y[b, r, j] * dU[j]
            trk.lam[b, r] += dl
            for i in range(3):
                vel[b, i] += W[0, 0] * G[b, r, i] * dl
            f0 += G[b, r, 3] * dl
            f1 += G[b, r, 4] * dl
            f2 += G[b, r, 5] * dl
        for i in range(3):
            omg[b, i] += W[3 + i, 3] * f0 + W[3 + i, 4] * f1 + W[3 + i, 5] * f2
    for r in range(5):
        trk.klam[k, r] = 0.0
    j = trk.kfold[k]
    if j >= 0:
        fold_joint(k, j, cfg, bodies, cars, joints, rows, trk, wk, free_joints)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def fold_joint(k, j, cfg, bodies, cars, joints, rows, trk, wk, free_joints):
    """Joint ``j`` holds carrier ``k`` to the world: its block projected through W̃_t (the carrier
    with its cars), then W̃_t ← W̃_t − W̃_t Jᵀ P, P = (J W̃_t Jᵀ)⁻¹ J W̃_t (``trk.kP``)."""
    t = trk.kbody[k]
    prepare_joint(j, joints, bodies, cfg.h, cfg.erp_h, rows, free_joints)
    o = 0 if joints.a[j] == t else 6
    m = rows.m[j]
    Wt = trk.mobility[t]
    Kj, Kinv, work, JW, dU = wk.K, wk.Kinv, wk.M, trk.kP[k], wk.rr
    for r in range(m):   # J W̃_t (m×6), into kP for now
        for i in range(6):
            s = 0.0
            for q in range(6):
                s += rows.J[j, r, o + q] * Wt[q, i]
            JW[r, i] = s
    for r in range(m):
        for c in range(m):
            s = 0.0
            for q in range(6):
                s += JW[r, q] * rows.J[j, c, o + q]
            Kj[r, c] = s
        Kj[r, r] += rows.gamma[j]
    invert_spd(Kj, m, Kinv, work)
    vel, omg = bodies.vel, bodies.omg
    for r in range(m):
        e = rows.target[j, r]
        for q in range(3):
            e -= rows.J[j, r, o + q] * vel[t, q] + rows.J[j, r, o + 3 + q] * omg[t, q]
        work[7, r] = e
    for r in range(m):
        s = 0.0
        for c in range(m):
            s += Kinv[r, c] * work[7, c]
        trk.klam[k, r] = s
    # the joint's impulse on the body: its velocity (W̃_t before the fold) and the members'
    for i in range(6):
        s = 0.0
        for r in range(m):
            s += JW[r, i] * trk.klam[k, r]
        dU[i] = s
    carrier_motion(k, dU, trk, cars.held, bodies.vel, bodies.omg, True)
    # P = (J W̃ Jᵀ)⁻¹ J W̃; W̃ ← W̃ − (J W̃)ᵀ P
    for r in range(m):
        for i in range(6):
            s = 0.0
            for c in range(m):
                s += Kinv[r, c] * JW[c, i]
            work[r, i] = s
    for i in range(6):
        for q in range(6):
            s = 0.0
            for r in range(m):
                s += JW[r, i] * work[r, q]
            Wt[i, q] -= s
    for r in range(5):
        for i in range(6):
            trk.kP[k, r, i] = work[r, i] if r < m else 0.0
    for r in range(m, 5):
        trk.klam[k, r] = 0.0


# ----------------------------------------------------------------------------- the transport
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _transported(c, cars):
    return cars.held[c] and cars.has_prev[c] and cars.support[c]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_transport(k, tracks, bodies, cars, trk, wk, scratch):
    """The transport of the cars on carrier ``k``'s tracks (docs/physics.md §9): each car's motion
    relative to the body, rel, is turned with its frame's turn along the track in the body's axes,
    R' (``turn_local``): u' = Φ U + R' rel, U the body's motion now. The impulse a car takes is a
    track impulse (recorded with rows 1–3, ``cars.transport``); the body takes its reaction,
    ΔU = W_t g, g = −Σ Φᵀ M (u' − u) (its own mobility: what the cars then do with it is the
    projection's). ``scratch.v0t`` holds each car's velocities after it (the G channels)."""
    t = trk.kbody[k]
    W, g, Iw = wk.W, wk.rr, wk.R
    pos, vel, omg, mass, ib = bodies.pos, bodies.vel, bodies.omg, bodies.mass, bodies.ib
    for i in range(6):
        g[i] = 0.0
    n = 0
    for m in range(trk.kfirst[k], trk.kfirst[k + 1]):
        c = trk.kcars[m]
        if not _transported(c, cars):
            continue
        n += 1
        r0, r1, r2, r3, r4, r5 = relative_twist(c, bodies, trk)
        v0, v1, v2 = turn_local(c, tracks, bodies, cars, r0, r1, r2)
        w0, w1, w2 = turn_local(c, tracks, bodies, cars, r3, r4, r5)
        o0, o1, o2 = vel[c, 0], vel[c, 1], vel[c, 2]
        q0, q1, q2 = omg[c, 0], omg[c, 1], omg[c, 2]
        p0, p1, p2 = point_velocity(t, bodies, pos[c, 0], pos[c, 1], pos[c, 2])
        vel[c, 0], vel[c, 1], vel[c, 2] = p0 + v0, p1 + v1, p2 + v2
        omg[c, 0], omg[c, 1], omg[c, 2] = omg[t, 0] + w0, omg[t, 1] + w1, omg[t, 2] + w2
        Rc = bodies.rot[c]
        for i in range(3):
            for j in range(3):
                s = 0.0
                for q in range(3):
                    s += Rc[i, q] * ib[c, q] * Rc[j, q]
                Iw[i, j] = s
        mc = mass[c]
        d0, d1, d2 = pos[c, 0] - pos[t, 0], pos[c, 1] - pos[t, 1], pos[c, 2] - pos[t, 2]
        f0, f1, f2 = mc * (vel[c, 0] - o0), mc * (vel[c, 1] - o1), mc * (vel[c, 2] - o2)
        a0, a1, a2 = omg[c, 0] - q0, omg[c, 1] - q1, omg[c, 2] - q2
        x0, x1, x2 = cross(d0, d1, d2, f0, f1, f2)
        g[0] -= f0
        g[1] -= f1
        g[2] -= f2
        g[3] -= Iw[0, 0] * a0 + Iw[0, 1] * a1 + Iw[0, 2] * a2 + x0
        g[4] -= Iw[1, 0] * a0 + Iw[1, 1] * a1 + Iw[1, 2] * a2 + x1
        g[5] -= Iw[2, 0] * a0 + Iw[2, 1] * a1 + Iw[2, 2] * a2 + x2
        transport_impulse(c, bodies, cars, o0, o1, o2, q0, q1, q2)
        for i in range(3):
            scratch.v0t[c, i] = vel[c, i]
            scratch.v0t[c, 3 + i] = omg[c, i]
    if n == 0:
        return
    body_mobility(t, bodies.rot, bodies.inv_mass, bodies.inv_ib, W)
    for i in range(3):
        s = 0.0
        w = 0.0
        for j in range(6):
            s += W[i, j] * g[j]
            w += W[3 + i, j] * g[j]
        vel[t, i] += s
        omg[t, i] += w


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def transport_impulse(b, bodies, cars, v0, v1, v2, w0, w1, w2):
    """``cars.transport[b]``: the impulse car ``b`` took from (v, ω) to its velocities now, along N
    and B, and its angular impulse about T, I_w (ω' − ω)·T, less the moment of the linear one
    applied at the anchor r_m = −cg·u (the orientation rows' share)."""
    fr = cars.frame[b]
    vel, omg, ib = bodies.vel, bodies.omg, bodies.ib
    tr = cars.transport[b]
    m = bodies.mass[b]
    dpx, dpy, dpz = m * (vel[b, 0] - v0), m * (vel[b, 1] - v1), m * (vel[b, 2] - v2)
    tr[0] = dpx * fr[C_N] + dpy * fr[C_N + 1] + dpz * fr[C_N + 2]
    tr[1] = dpx * fr[C_B] + dpy * fr[C_B + 1] + dpz * fr[C_B + 2]
    Rb = bodies.rot[b]
    s = 0.0
    for i in range(3):
        dwb = Rb[0, i] * (omg[b, 0] - w0) + Rb[1, i] * (omg[b, 1] - w1) + Rb[2, i] * (omg[b, 2] - w2)
        tb = Rb[0, i] * fr[C_T] + Rb[1, i] * fr[C_T + 1] + Rb[2, i] * fr[C_T + 2]
        s += ib[b, i] * dwb * tb
    cg = cars.cg[b]
    c0, c1, c2 = cross(-cg * Rb[0, 2], -cg * Rb[1, 2], -cg * Rb[2, 2], dpx, dpy, dpz)
    tr[2] = s - (c0 * fr[C_T] + c1 * fr[C_T + 1] + c2 * fr[C_T + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_resistance(b, t, h, F, bodies, cars):
    """The share of track body ``t`` of an explicit resistance force ``F`` (N, along T) on car ``b``:
    the impulse −h F T at the car's centre of mass, on the body's own mass (before the projection)."""
    fr = cars.frame[b]
    pos, R = bodies.pos, bodies.rot[t]
    j0, j1, j2 = -h * F * fr[C_T], -h * F * fr[C_T + 1], -h * F * fr[C_T + 2]
    im = bodies.inv_mass[t]
    bodies.vel[t, 0] += im * j0
    bodies.vel[t, 1] += im * j1
    bodies.vel[t, 2] += im * j2
    m0, m1, m2 = cross(pos[b, 0] - pos[t, 0], pos[b, 1] - pos[t, 1], pos[b, 2] - pos[t, 2], j0, j1, j2)
    for q in range(3):
        lq = (R[0, q] * m0 + R[1, q] * m1 + R[2, q] * m2) * bodies.inv_ib[t, q]
        for i in range(3):
            bodies.omg[t, i] += R[i, q] * lq


# ----------------------------------------------------------------------------- chains on a carrier
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _tri_columns(j0, n, cd, cf, X, c0, c1):
    """X[j0 : j0 + n, c0 : c1] ← S⁻¹ X (S the chain's tridiagonal system, LDLᵀ in cd, cf)."""
    for c in range(c0, c1):
        for q in range(n):
            j = j0 + q
            if q > 0:
                X[j, c] -= cf[j - 1] * X[j - 1, c] / cd[j - 1]
        for q in range(n - 1, -1, -1):
            j = j0 + q
            if q < n - 1:
                X[j, c] = (X[j, c] - cf[j] * X[j + 1, c]) / cd[j]
            else:
                X[j, c] = X[j, c] / cd[j]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carried_chain(k, tr, chains):
    """(first coupler, couplers) of train ``tr``'s chain if it runs on carrier ``k``'s tracks, else (0, 0)
    (a train of cars on bogies is solved by its car blocks: the callers take ``carried_blocks`` first)."""
    if chains.carrier[tr] != k:
        return 0, 0
    return chains.first[tr], chains.count[tr]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def carried_blocks(k, tr, chains, blk):
    """Groups of train ``tr``'s car blocks (cars on bogies, ``car_blocks.py``) if it runs on carrier
    ``k``'s tracks, else 0."""
    if chains.carrier[tr] != k:
        return 0
    return blk.train[tr, 1]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_carrier_blocks(tr, blk, joints, rows, trk, cars, Gm):
    """Train ``tr``'s car blocks on a carrier (after ``car_blocks.factor_blocks``): each row's U (its
    velocity per unit of the body's, Σ E_cᵀ j_c over its ends c held on a track), S⁻¹ U by six solves
    of the blocks (``blk.wp`` from column ``W_U``), and Gm += Σ U (S⁻¹ U)ᵀ over its rows."""
    E, jJ = trk.E, rows.J
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0, ng = blk.train[tr, 0], blk.train[tr, 1]
    for g in range(g0, g0 + ng):
        for kr in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * kr], grp[g, G_ROWS + 2 * kr + 1]
            x, c = _third(grp, g, kr, joints)
            for i in range(6):
                wp[g, kr, W_U + i] = 0.0
            for e in range(3):
                body = joints.a[j] if e == 0 else joints.b[j] if e == 1 else c
                if body < 0 or body >= cars.n or not cars.held[body]:
                    continue
                jr, rr, o = (j, r, 6 * e) if e < 2 else (x, R_ROLL, 0)
                for i in range(6):
                    s = 0.0
                    for q in range(6):
                        s += E[body, q, i] * jJ[jr, rr, o + q]
                    wp[g, kr, W_U + i] += s
    for i in range(6):
        for g in range(g0, g0 + ng):
            for kr in range(grp[g, G_N]):
                fac[g, kr, F_Y] = wp[g, kr, W_U + i]
        block_solve(tr, blk)
        for g in range(g0, g0 + ng):
            for kr in range(grp[g, G_N]):
                wp[g, kr, W_U + 6 + i] = fac[g, kr, F_Y]
    for g in range(g0, g0 + ng):
        for kr in range(grp[g, G_N]):
            for i in range(6):
                for r in range(6):
                    Gm[i, r] += wp[g, kr, W_U + i] * wp[g, kr, W_U + 6 + r]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_carrier_chains(k, chains, blk, joints, rows, trk, cars, wk):
    """After ``couplings.factor_chain`` of the trains on carrier ``k`` (their tridiagonal S with the
    cars' own W̃; a train of cars on bogies: its car blocks, ``factor_carrier_blocks``): U (each
    coupler's velocity per unit of the body's, U_j = E_aᵀ h_a + E_bᵀ h_b), S⁻¹ U, and
    C⁻¹ = (I + Σ Uᵀ S⁻¹ U W̃_t)⁻¹ (Woodbury, ``solve_carrier_chains``)."""
    t = trk.kbody[k]
    E, Wt = trk.E, trk.mobility
    Gm, C = wk.W, wk.M
    for i in range(6):
        for q in range(6):
            Gm[i, q] = 0.0
    for tr in range(chains.first.shape[0]):
        if carried_blocks(k, tr, chains, blk) > 0:
            factor_carrier_blocks(tr, blk, joints, rows, trk, cars, Gm)
            continue
        j0, n = carried_chain(k, tr, chains)
        if n == 0:
            continue
        for j in range(j0, j0 + n):
            a, b = joints.a[j], joints.b[j]
            for i in range(6):
                s = 0.0
                for r in range(6):
                    s += E[a, r, i] * rows.J[j, 0, r] + E[b, r, i] * rows.J[j, 0, 6 + r]
                chains.u[j, i] = s
                chains.zu[j, i] = s
        _tri_columns(j0, n, chains.d, chains.f, chains.zu, 0, 6)
        for j in range(j0, j0 + n):
            for i in range(6):
                for r in range(6):
                    Gm[i, r] += chains.u[j, i] * chains.zu[j, r]
    for i in range(6):   # C = I + G W̃_t
        for q in range(6):
            s = 1.0 if i == q else 0.0
            for r in range(6):
                s += Gm[i, r] * Wt[t, r, q]
            C[i, q] = s
    gauss_jordan(C, 6, chains.kC[k], True)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_carrier_chains(k, chains, blk, joints, rows, trk, cars, bodies, wk):
    """One exact solve of the coupler rows of every train on carrier ``k`` with the body (a train of
    cars on bogies: its swivels and couplers, its car blocks):
    x = y − S⁻¹U W̃_t C⁻¹ Uᵀ y, y = S⁻¹ r (Woodbury); the impulses applied to the cars (their own
    W̃, as ``couplings.solve_chain`` and ``car_blocks.solve_blocks``) and, through the body, Σ U x to
    the carrier."""
    grp, wp, fac = blk.group, blk.wp, blk.fac
    t = trk.kbody[k]
    jlam, cw, cp, cy = joints.lam, chains.w, chains.p, chains.y
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    q6 = wk.rr
    for i in range(12):
        q6[i] = 0.0
    for tr in range(chains.first.shape[0]):
        ng = carried_blocks(k, tr, chains, blk)
        if ng > 0:   # y = S⁻¹ r of its blocks
            block_rhs(tr, blk, joints, rows, bodies)
            block_solve(tr, blk)
            for gr in range(blk.train[tr, 0], blk.train[tr, 0] + ng):
                for kr in range(grp[gr, G_N]):
                    for i in range(6):
                        q6[i] += wp[gr, kr, W_U + i] * fac[gr, kr, F_Y]
            continue
        j0, n = carried_chain(k, tr, chains)
        if n == 0:
            continue
        chain_impulses(j0, n, chains, joints, rows, bodies)
        for j in range(j0, j0 + n):
            for i in range(6):
                q6[i] += chains.u[j, i] * cy[j]
    # w = W̃_t C⁻¹ Uᵀ y
    Ci = chains.kC[k]
    for i in range(6):
        s = 0.0
        for r in range(6):
            s += Ci[i, r] * q6[r]
        q6[6 + i] = s
    for i in range(6):
        s = 0.0
        for r in range(6):
            s += trk.mobility[t, i, r] * q6[6 + r]
        q6[i] = s
    g = wk.fr2
    for i in range(6):
        g[i] = 0.0
    for tr in range(chains.first.shape[0]):
        ng = carried_blocks(k, tr, chains, blk)
        if ng > 0:   # x = y − S⁻¹U w of its blocks, applied
            for gr in range(blk.train[tr, 0], blk.train[tr, 0] + ng):
                for kr in range(grp[gr, G_N]):
                    dl = fac[gr, kr, F_Y]
                    for i in range(6):
                        dl -= wp[gr, kr, W_U + 6 + i] * q6[i]
                    fac[gr, kr, F_Y] = dl
                    for i in range(6):
                        g[i] += wp[gr, kr, W_U + i] * dl
            block_apply(tr, blk, joints, rows, trk, cars, bodies)
            continue
        j0, n = carried_chain(k, tr, chains)
        for j in range(j0, j0 + n):
            dl = cy[j]
            for i in range(6):
                dl -= chains.zu[j, i] * q6[i]
            jlam[j, 0] += dl
            a, b = joints.a[j], joints.b[j]
            for i in range(3):
                vel[a, i] += cw[j, i] * dl
                omg[a, i] += cw[j, 3 + i] * dl
                vel[b, i] += cw[j, 6 + i] * dl
                omg[b, i] += cw[j, 9 + i] * dl
            for r in range(5):
                lamT[a, r] -= cp[j, r] * dl
                lamT[b, r] -= cp[j, 5 + r] * dl
            for i in range(6):
                g[i] += chains.u[j, i] * dl
    carrier_apply(k, g, 1.0, trk, cars, bodies, wk.rr)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_carried_chains(bodies, cars, joints, tmp):
    """One exact solve of every train's chain of couplers (cars on bogies: their car blocks) in a world
    with moving tracks: those on the world alone (``car_blocks.solve_train``), those on a carrier with its body (``solve_carrier_chains``)."""
    for t in range(tmp.chains.first.shape[0]):
        if tmp.chains.carrier[t] < 0:
            solve_train(t, bodies, cars, joints, tmp)
    for k in range(tmp.trk.kbody.shape[0]):
        solve_carrier_chains(k, tmp.chains, tmp.blocks, joints, tmp.rows, tmp.trk, cars, bodies, tmp.wk)


# ----------------------------------------------------------------------------- rows along T
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def moving_row(b, f, bodies, cars, trk, crow):
    """Car ``b``'s rows along T (``f`` = [T, r_m × T] on the car) act relative to its moving track: the
    body's columns g = −[T, (P − X_t) × T] (``crow.g``), the impulse a = E_bᵀ f + g they put on it
    through the car's track rows and their own, and their mobility with the body free,
    cf = f W̃_b fᵀ + aᵀ W̃_t a."""
    t = trk.kbody[trk.carrier[b]]
    fr = cars.frame[b]
    pos = bodies.pos
    c0, c1, c2 = cross(fr[C_P] - pos[t, 0], fr[C_P + 1] - pos[t, 1], fr[C_P + 2] - pos[t, 2],
                       fr[C_T], fr[C_T + 1], fr[C_T + 2])
    g, a, E, W = crow.g[b], crow.a[b], trk.E, trk.mobility
    g[0], g[1], g[2], g[3], g[4], g[5] = -fr[C_T], -fr[C_T + 1], -fr[C_T + 2], -c0, -c1, -c2
    crow.moving[b] = t
    for i in range(6):
        s = g[i]
        for q in range(6):
            s += E[b, q, i] * f[q]
        a[i] = s
    cf = 0.0
    for i in range(6):
        wf = 0.0
        wa = 0.0
        for q in range(6):
            wf += W[b, i, q] * f[q]
            wa += W[t, i, q] * a[q]
        cf += f[i] * wf + a[i] * wa
    crow.cf[b] = cf


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def moving_row_impulse(b, f, lam, bodies, cars, trk, crow):
    """The track body's share of the impulse ``lam`` of car ``b``'s rows along T (``f``) on a moving track
    (``moving_row``), after the car's own (``apply_impulse``)."""
    moving_row(b, f, bodies, cars, trk, crow)
    apply_impulse(crow.moving[b], crow.g[b], lam, trk, cars, bodies)
