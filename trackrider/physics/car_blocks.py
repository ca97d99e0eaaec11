"""A train of cars on bogies solved exactly: each car's swivel rows and the couplers as one block
tridiagonal system along the train (docs/physics.md "Bogies", "The car blocks").

A car on bogies is its body on two wheel frames (``bogies.py``): the swivels join the body to
each frame (three ball rows each, and one roll row the two share, its impulse split by the
lever rule: 7 rows, ``_share_roll``), the couplers join a car's body to the next car's body at
their ends (one row). With rows 1–5 of every frame eliminated (W̃, ``track_joint.py``) the rows
of one train, taken in groups along it

    [car 0's swivels, coupler 0] [car 1's swivels, coupler 1] …     (``bogies = "two"``)
    [body 0's swivels] [body 1's swivels] …                         (``"jacobs"``: shared frames)

couple only neighbouring groups (they share a body or a frame: coupler k acts on bodies k and
k + 1, so it goes with car k's swivels), so S = J W̃ Jᵀ + Γ is block tridiagonal, diagonal
blocks A_g (8×8 at most: ``state.GR``), below them B_g = S_{g, g−1}. Block Cholesky along the train:

    L_0 L_0ᵀ = A_0;   E_g = B_g L_{g−1}⁻ᵀ,   L_g L_gᵀ = A_g − E_g E_gᵀ
    forward  z_g = L_g⁻¹ (r_g − E_g z_{g−1});   back  x_g = L_g⁻ᵀ (z_g − E_{g+1}ᵀ x_{g+1})

As in the chain solve (``couplings.py``), W̃ Jᵀ and P Jᵀ of both ends of every row are cached, so a
solve is O(1) per row: Δu = w Δλ, Δλ_T = −p Δλ (the frames' track rows stay exact). The bar that
``bogies.py`` puts between one car's two pivots is not one of these rows: the body keeps its pivots
``L`` apart, so a bar would be that constraint twice (a singular S, the squeeze along the pivot line
split between the bar and the body at random); here the body carries it, and the bar's impulse stays
zero.

A rigid train of such cars (rigid couplers, every frame on its track with its support row) still has
one free motion, so the cars' bounded rows along T stay one scalar equation
(``couplings.train_rows_scalar``); ``block_train_mode`` finds the row velocities of that motion
exactly, by one solve of the blocks for a unit impulse on the first frame's row.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.couplings import solve_chain
from trackrider.physics.maths import cholesky, mobility_at
from trackrider.physics.state import GR
from trackrider.physics.track_joint import closed_to_track

# columns of CarBlocks.group: the group's joints (front swivel, rear swivel, coupler or -1), its rows
# this step, the rear swivel whose roll row is one with the front one's (row R_ROLL of the group, -1
# none), E_g's first nonzero column (its columns before it are zero), then (joint, row) of row k
G_J0, G_J1, G_J2, G_N, G_X, G_E0, G_ROWS = 0, 1, 2, 3, 4, 5, 6
R_ROLL = 3            # a car's shared roll row: its front swivel's row 3
W_C = 22              # columns of CarBlocks.wp: its third body's W̃ Jᵀ (6), P Jᵀ (5) from here
W_U = 33              # ... a train on a moving track: the row's U (6) and S⁻¹ U (6) from here (carrier.py)
# columns of CarBlocks.fac (per row k of a group): L[k, :], E[k, :], y[k]
F_L, F_E, F_Y = 0, GR, 2 * GR


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _acc(s, jJ, j1, r1, o1, body1, wp, g2, k2, a2, b2, c2):
    """s + row 1's part ``jJ[j1, r1, o1:o1 + 6]`` on ``body1`` times row 2's W̃Jᵀ on that body. Every
    entry is taken, its zeros too: a zero entry's product adds ±0 to a sum that starts at +0, which
    leaves it as it is (bitwise, the W̃Jᵀ being finite), and without a branch per entry the car
    blocks' factor costs 13 % less (``factor_blocks``, 100 cars on bogies: 71.3 → 61.9 µs)."""
    if body1 >= 0:
        for e in range(3):
            if body1 != (a2 if e == 0 else b2 if e == 1 else c2):
                continue
            w = 6 * e if e < 2 else W_C
            for i in range(6):
                s += jJ[j1, r1, o1 + i] * wp[g2, k2, w + i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _third(grp, g, k, joints):
    """The rear swivel and frame of group ``g``'s row ``k`` when it is the car's shared roll row
    (its third body: the rear frame, its part ``J[x, R_ROLL, 0:6]``), else (-1, -1)."""
    x = grp[g, G_X]
    if k == R_ROLL and x >= 0:
        return x, joints.a[x]
    return -1, -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _pair(jJ, j1, r1, a1, b1, x1, c1, wp, g2, k2, a2, b2, c2):
    """J_{row 1} W̃ J_{row 2}ᵀ over the bodies the two rows share (row 2's W̃Jᵀ cached in ``wp``; a
    shared roll row's third body ``c`` with its part in joint ``x``'s row)."""
    s = _acc(0.0, jJ, j1, r1, 0, a1, wp, g2, k2, a2, b2, c2)
    s = _acc(s, jJ, j1, r1, 6, b1, wp, g2, k2, a2, b2, c2)
    if c1 >= 0:
        s = _acc(s, jJ, x1, R_ROLL, 0, c1, wp, g2, k2, a2, b2, c2)
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _touches(grp, g, joints, a, b, c):
    """True if a row on bodies ``a``, ``b``, ``c`` (-1: none) shares a body with group ``g``'s joints
    (their ends: the frames, the body and, through the coupler, the next body; a shared roll row's
    third body is its rear swivel's frame, an end too)."""
    for q in range(3):
        j = grp[g, G_J0 + q]
        if j < 0:
            continue
        for e in (joints.a[j], joints.b[j]):
            if e >= 0 and (e == a or e == b or e == c):
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _share_roll(g, grp, joints, rows):
    """A body whose two swivels both hold its roll (``joints/swivel.py``, each row scaled by its
    frame's lever weight): one row, J = J_front + J_rear, one impulse μ, so each frame takes its
    weight's share w μ of the body's roll moment (docs/physics.md "Bogies"). The body's parts and
    the targets are summed into the front row (``rows``), the rear row keeps its frame's part;
    ``G_X`` names the rear swivel (-1: no shared row)."""
    jf, jr = grp[g, G_J0], grp[g, G_J1]
    grp[g, G_X] = -1
    if jf < 0 or jr < 0 or rows.m[jf] <= R_ROLL or rows.m[jr] <= R_ROLL or joints.b[jf] != joints.b[jr]:
        return
    grp[g, G_X] = jr
    for i in range(6, 12):
        rows.J[jf, R_ROLL, i] += rows.J[jr, R_ROLL, i]
        rows.J[jr, R_ROLL, i] = 0.0
    rows.target[jf, R_ROLL] += rows.target[jr, R_ROLL]
    rows.target[jr, R_ROLL] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _mobility_times(body, held, Jr, o, Wt, Wn, Pm, trk, frame, out, ow, op):
    """``out[ow:ow + 6]`` = W̃ jᵀ and (a frame on its track, ``held``) ``out[op:op + 5]`` = P jᵀ for the part
    ``j = Jr[o:o + 6]`` of a row on ``body`` (none: zeros). Column by column, over the nonzero entries
    of j only (a swivel's rows are half zeros), in the order of a plain product (the same sums); a
    free body's W is diag(1/m I₃, I⁻¹) (``maths.body_mobility``): its zero blocks are skipped too. A
    frame in closed form (``trk.rank1``) has P jᵀ from its Zᵀ M n/μ and arm
    (``track_joint.closed_to_track``)."""
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    p0 = p1 = p2 = p3 = p4 = 0.0
    closed = body >= 0 and held and Wn[body, 6] > 0.0
    if closed:
        nj = 0.0
        for q in range(6):
            nj += Wn[body, q] * Jr[o + q]
        p0, p1, p2, p3, p4 = closed_to_track(body, Jr[o], Jr[o + 1], Jr[o + 2], Jr[o + 3], Jr[o + 4], Jr[o + 5], nj,
                                             trk, frame)
    if body >= 0:
        for q in range(6):
            v = Jr[o + q]
            if v == 0.0:
                continue
            if held:
                s0 += mobility_at(Wt, Wn, body, 0, q) * v
                s1 += mobility_at(Wt, Wn, body, 1, q) * v
                s2 += mobility_at(Wt, Wn, body, 2, q) * v
                s3 += mobility_at(Wt, Wn, body, 3, q) * v
                s4 += mobility_at(Wt, Wn, body, 4, q) * v
                s5 += mobility_at(Wt, Wn, body, 5, q) * v
                if not closed:
                    p0 += Pm[body, 0, q] * v
                    p1 += Pm[body, 1, q] * v
                    p2 += Pm[body, 2, q] * v
                    p3 += Pm[body, 3, q] * v
                    p4 += Pm[body, 4, q] * v
            elif q == 0:
                s0 += Wt[body, 0, 0] * v
            elif q == 1:
                s1 += Wt[body, 1, 1] * v
            elif q == 2:
                s2 += Wt[body, 2, 2] * v
            else:
                s3 += Wt[body, 3, q] * v
                s4 += Wt[body, 4, q] * v
                s5 += Wt[body, 5, q] * v
    out[ow], out[ow + 1], out[ow + 2], out[ow + 3], out[ow + 4], out[ow + 5] = s0, s1, s2, s3, s4, s5
    out[op], out[op + 1], out[op + 2], out[op + 3], out[op + 4] = p0, p1, p2, p3, p4


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_blocks(t, blk, joints, rows, trk, cars):
    """Cache W̃Jᵀ, PJᵀ of every row of train ``t``'s groups and factor its block tridiagonal system."""
    jJ, Wt, Wn, Pm = rows.J, trk.mobility, trk.rank1, trk.to_track
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0 = blk.train[t, 0]
    for gi in range(blk.train[t, 1]):
        g = g0 + gi
        _share_roll(g, grp, joints, rows)
        n = 0
        for q in range(3):
            j = grp[g, G_J0 + q]
            if j < 0:
                continue
            for r in range(R_ROLL if q == 1 and grp[g, G_X] >= 0 else rows.m[j]):
                grp[g, G_ROWS + 2 * n] = j
                grp[g, G_ROWS + 2 * n + 1] = r
                n += 1
        grp[g, G_N] = n
        for k in range(n):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            x, c = _third(grp, g, k, joints)
            for e in range(3):
                body = joints.a[j] if e == 0 else joints.b[j] if e == 1 else c
                if e == 2 and c < 0:
                    break
                jr, o, ow, op = (j, 6 * e, 6 * e, 12 + 5 * e) if e < 2 else (x, 0, W_C, W_C + 6)
                _mobility_times(body, body >= 0 and body < cars.n and cars.held[body], jJ[jr, (r if e < 2 else R_ROLL)],
                                o, Wt, Wn, Pm, trk, cars.frame, wp[g, k], ow, op)
        # the diagonal block A_g (lower triangle, into L), minus E_g E_gᵀ
        for k in range(n):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            a1, b1 = joints.a[j], joints.b[j]
            x1, c1 = _third(grp, g, k, joints)
            for l in range(k + 1):
                j2 = grp[g, G_ROWS + 2 * l]
                fac[g, k, F_L + l] = _pair(jJ, j, r, a1, b1, x1, c1, wp, g, l, joints.a[j2], joints.b[j2],
                                           _third(grp, g, l, joints)[1])
            fac[g, k, F_L + k] += rows.gamma[j]
        if gi > 0:
            h = g - 1
            nh = grp[h, G_N]
            lt = nh      # h's first row on a body of g's: B_g's columns before it are zero
            for l in range(nh):
                j2 = grp[h, G_ROWS + 2 * l]
                if _touches(grp, g, joints, joints.a[j2], joints.b[j2], _third(grp, h, l, joints)[1]):
                    lt = l
                    break
            e0 = nh
            for k in range(n):
                j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
                a1, b1 = joints.a[j], joints.b[j]
                x1, c1 = _third(grp, g, k, joints)
                # B_g row k, then E_g row k = L_h⁻¹ (B_g row k)ᵀ (forward substitution, from its first
                # nonzero: groups touch through one body, often through one row, a coupler, of h)
                first = nh
                for l in range(lt):
                    fac[g, k, F_E + l] = 0.0
                for l in range(lt, nh):
                    j2 = grp[h, G_ROWS + 2 * l]
                    s = _pair(jJ, j, r, a1, b1, x1, c1, wp, h, l, joints.a[j2], joints.b[j2],
                              _third(grp, h, l, joints)[1])
                    if first == nh:
                        if s == 0.0:
                            fac[g, k, F_E + l] = 0.0
                            continue
                        first = l
                    for m in range(first, l):
                        s -= fac[h, l, F_L + m] * fac[g, k, F_E + m]
                    fac[g, k, F_E + l] = s / fac[h, l, F_L + l]
                e0 = min(e0, first)
            grp[g, G_E0] = e0
            for k in range(n):
                for l in range(k + 1):
                    s = 0.0
                    for m in range(e0, nh):
                        s += fac[g, k, F_E + m] * fac[g, l, F_E + m]
                    fac[g, k, F_L + l] -= s
        cholesky(fac, g, n, F_L, False)   # the pivot block in place


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def block_solve(t, blk):
    """y ← S⁻¹ y for train ``t`` (``blk.fac``'s column F_Y; S factored by ``factor_blocks``)."""
    grp, fac = blk.group, blk.fac
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for gi in range(ng):
        g = g0 + gi
        n = grp[g, G_N]
        if gi > 0:
            nh = grp[g - 1, G_N]
            for k in range(n):
                s = fac[g, k, F_Y]
                for m in range(grp[g, G_E0], nh):
                    s -= fac[g, k, F_E + m] * fac[g - 1, m, F_Y]
                fac[g, k, F_Y] = s
        for k in range(n):
            s = fac[g, k, F_Y]
            for m in range(k):
                s -= fac[g, k, F_L + m] * fac[g, m, F_Y]
            fac[g, k, F_Y] = s / fac[g, k, F_L + k]
    for gi in range(ng - 1, -1, -1):
        g = g0 + gi
        n = grp[g, G_N]
        if gi < ng - 1:
            n1 = grp[g + 1, G_N]
            for m in range(grp[g + 1, G_E0], n):
                s = fac[g, m, F_Y]
                for k in range(n1):
                    s -= fac[g + 1, k, F_E + m] * fac[g + 1, k, F_Y]
                fac[g, m, F_Y] = s
        for k in range(n - 1, -1, -1):
            s = fac[g, k, F_Y]
            for m in range(k + 1, n):
                s -= fac[g, m, F_L + k] * fac[g, m, F_Y]
            fac[g, k, F_Y] = s / fac[g, k, F_L + k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def block_rhs(t, blk, joints, rows, bodies):
    """``blk.fac``'s column F_Y = r = t − γλ − J u of every row of train ``t``'s groups at the velocities now."""
    jJ, jt, jgam, jlam = rows.J, rows.target, rows.gamma, joints.lam
    vel, omg = bodies.vel, bodies.omg
    grp, fac = blk.group, blk.fac
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            a, b = joints.a[j], joints.b[j]
            s = jt[j, r] - jgam[j] * jlam[j, r]
            for i in range(3):
                s -= jJ[j, r, i] * vel[a, i] + jJ[j, r, 3 + i] * omg[a, i]
                s -= jJ[j, r, 6 + i] * vel[b, i] + jJ[j, r, 9 + i] * omg[b, i]
            x, c = _third(grp, g, k, joints)
            if c >= 0:
                for i in range(3):
                    s -= jJ[x, R_ROLL, i] * vel[c, i] + jJ[x, R_ROLL, 3 + i] * omg[c, i]
            fac[g, k, F_Y] = s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def block_apply(t, blk, joints, rows, trk, cars, bodies):
    """The impulses Δλ in ``blk.fac``'s column F_Y of train ``t``'s rows applied: λ += Δλ, each end's
    velocities by its W̃ Jᵀ Δλ, a frame's track impulses by −P Jᵀ Δλ (its rows 1–5 stay exact)."""
    jlam = joints.lam
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            dl = fac[g, k, F_Y]
            jlam[j, r] += dl
            a, b = joints.a[j], joints.b[j]
            for i in range(3):
                vel[a, i] += wp[g, k, i] * dl
                omg[a, i] += wp[g, k, 3 + i] * dl
                vel[b, i] += wp[g, k, 6 + i] * dl
                omg[b, i] += wp[g, k, 9 + i] * dl
            if a < cars.n and cars.held[a]:
                for i in range(5):
                    lamT[a, i] -= wp[g, k, 12 + i] * dl
            if b < cars.n and cars.held[b]:
                for i in range(5):
                    lamT[b, i] -= wp[g, k, 17 + i] * dl
            x, c = _third(grp, g, k, joints)
            if c >= 0:
                jlam[x, R_ROLL] += dl
                for i in range(3):
                    vel[c, i] += wp[g, k, W_C + i] * dl
                    omg[c, i] += wp[g, k, W_C + 3 + i] * dl
                if c < cars.n and cars.held[c]:
                    for i in range(5):
                        lamT[c, i] -= wp[g, k, W_C + 6 + i] * dl


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_blocks(t, blk, joints, rows, trk, cars, bodies):
    """One exact solve of train ``t``'s swivel and coupler rows (rows 1–5 of its frames stay exact)."""
    block_rhs(t, blk, joints, rows, bodies)
    block_solve(t, blk)
    block_apply(t, blk, joints, rows, trk, cars, bodies)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def solve_train(t, bodies, cars, joints, tmp):
    """One exact solve of train ``t``'s rows on their own: its car blocks (cars on bogies) or its
    chain of couplers (``couplings.solve_chain``); nothing for a train of one car."""
    if tmp.blocks.train[t, 1] > 0:
        solve_blocks(t, tmp.blocks, joints, tmp.rows, tmp.trk, cars, bodies)
    elif tmp.chains.count[t] > 0:
        solve_chain(t, tmp.chains, joints, tmp.rows, tmp.trk, cars, bodies)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def block_train_mode(t, first, nframes, blk, joints, rows, cars, crow):
    """``crow.s`` of the frames ``first`` … ``first + nframes − 1`` of train ``t`` (a rigid train of
    cars on bogies: its one free motion, ``couplings.train_mode``): a unit impulse on the first
    frame's row along T, μ_0 = 1, changes frame i's row velocity by Δv_i = s_i s_0 once the
    swivels and couplers have answered (one solve of the blocks), so s_i = Δv_i / √Δv_0. False if
    the train is not rigid (a soft coupler, a frame off its track or without its support row)."""
    jJ, grp, fac, dv = rows.J, blk.group, blk.fac, blk.dv
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for i in range(nframes):
        b = first + i
        if b >= cars.n or not cars.held[b] or not cars.support[b] or not crow.c[b] > 0.0:
            return False
        dv[b] = 0.0
    for g in range(g0, g0 + ng):
        for q in range(3):
            j = grp[g, G_J0 + q]
            if j >= 0 and rows.gamma[j] != 0.0:
                return False
    # r = −J Δu_0, Δu_0 = W̃ f_0ᵀ on the first frame (crow.w)
    b0 = first
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            s = 0.0
            if joints.a[j] == b0:
                for i in range(6):
                    s -= jJ[j, r, i] * crow.w[b0, i]
            if joints.b[j] == b0:
                for i in range(6):
                    s -= jJ[j, r, 6 + i] * crow.w[b0, i]
            x, c = _third(grp, g, k, joints)
            if c == b0:
                for i in range(6):
                    s -= jJ[x, R_ROLL, i] * crow.w[b0, i]
            fac[g, k, F_Y] = s
    block_solve(t, blk)
    dv[b0] = crow.c[b0]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            y = fac[g, k, F_Y]
            x, c = _third(grp, g, k, joints)
            for e in range(3):
                body = joints.a[j] if e == 0 else joints.b[j] if e == 1 else c
                jr, rr, o = (j, r, 6 * e) if e < 2 else (x, R_ROLL, 0)
                if first <= body < first + nframes:
                    s = 0.0
                    for i in range(6):
                        s += crow.w[body, i] * jJ[jr, rr, o + i]
                    dv[body] += s * y
    if not dv[b0] > 0.0:
        return False
    f = 1.0 / np.sqrt(dv[b0])
    for i in range(nframes):
        crow.s[first + i] = dv[first + i] * f
    return True
