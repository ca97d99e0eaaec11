"""A train of cars on bogies solved exactly: each car's swivel rows and the couplers as one block
tridiagonal system along the train (docs/physics.md "Bogies", "The car blocks").

A car on bogies is its body on two wheel frames (``bogies.py``): the swivels join the body to
each frame (three ball rows each, and the front one's roll row: 7 rows), the couplers join a car's
rear frame to the next car's front frame (one row). With rows 1–5 of every frame eliminated (W̃,
``track_joint.py``) the rows of one train, taken in groups along it

    [car 0's swivels] [coupler 0] [car 1's swivels] [coupler 1] …     (``bogies = "two"``)
    [body 0's swivels] [body 1's swivels] …                           (``"jacobs"``: shared frames)

couple only neighbouring groups (they share a frame), so S = J W̃ Jᵀ + Γ is block tridiagonal,
diagonal blocks A_g (7×7 or 1×1), below them B_g = S_{g, g−1}. Block Cholesky along the train:

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
from trackrider.physics.maths import cholesky
from trackrider.physics.state import GR

# columns of CarBlocks.group: the group's two joints, its rows this step, then (joint, row) of row k
G_J0, G_J1, G_N, G_ROWS = 0, 1, 2, 3
# columns of CarBlocks.fac (per row k of a group): L[k, :], E[k, :], y[k]
F_L, F_E, F_Y = 0, GR, 2 * GR


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _pair(jJ, j1, r1, a1, b1, wp, g2, k2, a2, b2):
    """J_{row 1} W̃ J_{row 2}ᵀ over the bodies the two rows share (row 2's W̃Jᵀ cached in ``wp``)."""
    s = 0.0
    if a1 >= 0:
        if a1 == a2:
            for i in range(6):
                s += jJ[j1, r1, i] * wp[g2, k2, i]
        if a1 == b2:
            for i in range(6):
                s += jJ[j1, r1, i] * wp[g2, k2, 6 + i]
    if b1 >= 0:
        if b1 == a2:
            for i in range(6):
                s += jJ[j1, r1, 6 + i] * wp[g2, k2, i]
        if b1 == b2:
            for i in range(6):
                s += jJ[j1, r1, 6 + i] * wp[g2, k2, 6 + i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_blocks(t, blk, joints, rows, trk, cars):
    """Cache W̃Jᵀ, PJᵀ of every row of train ``t``'s groups and factor its block tridiagonal system."""
    jJ, Wt, Pm = rows.J, trk.mobility, trk.to_track
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0 = blk.train[t, 0]
    for gi in range(blk.train[t, 1]):
        g = g0 + gi
        n = 0
        for q in range(2):
            j = grp[g, G_J0 + q]
            if j < 0:
                continue
            for r in range(rows.m[j]):
                grp[g, G_ROWS + 2 * n] = j
                grp[g, G_ROWS + 2 * n + 1] = r
                n += 1
        grp[g, G_N] = n
        for k in range(n):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            for e in range(2):
                body = joints.a[j] if e == 0 else joints.b[j]
                o = 6 * e
                for i in range(6):
                    s = 0.0
                    if body >= 0:
                        for q in range(6):
                            s += Wt[body, i, q] * jJ[j, r, o + q]
                    wp[g, k, o + i] = s
                for i in range(5):
                    s = 0.0
                    if 0 <= body < cars.n and cars.held[body]:
                        for q in range(6):
                            s += Pm[body, i, q] * jJ[j, r, o + q]
                    wp[g, k, 12 + 5 * e + i] = s
        # the diagonal block A_g (lower triangle, into L), minus E_g E_gᵀ
        for k in range(n):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            a1, b1 = joints.a[j], joints.b[j]
            for l in range(k + 1):
                j2 = grp[g, G_ROWS + 2 * l]
                fac[g, k, F_L + l] = _pair(jJ, j, r, a1, b1, wp, g, l, joints.a[j2], joints.b[j2])
            fac[g, k, F_L + k] += rows.gamma[j]
        if gi > 0:
            h = g - 1
            nh = grp[h, G_N]
            for k in range(n):
                j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
                a1, b1 = joints.a[j], joints.b[j]
                # B_g row k, then E_g row k = L_h⁻¹ (B_g row k)ᵀ (forward substitution)
                for l in range(nh):
                    j2 = grp[h, G_ROWS + 2 * l]
                    s = _pair(jJ, j, r, a1, b1, wp, h, l, joints.a[j2], joints.b[j2])
                    for m in range(l):
                        s -= fac[h, l, F_L + m] * fac[g, k, F_E + m]
                    fac[g, k, F_E + l] = s / fac[h, l, F_L + l]
            for k in range(n):
                for l in range(k + 1):
                    s = 0.0
                    for m in range(nh):
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
                for m in range(nh):
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
            for m in range(n):
                s = fac[g, m, F_Y]
                for k in range(n1):
                    s -= fac[g + 1, k, F_E + m] * fac[g + 1, k, F_Y]
                fac[g, m, F_Y] = s
        for k in range(n - 1, -1, -1):
            s = fac[g, k, F_Y]
            for m in range(k + 1, n):
                s -= fac[g, m, F_L + k] * fac[g, m, F_Y]
            fac[g, k, F_Y] = s / fac[g, k, F_L + k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_blocks(t, blk, joints, rows, trk, cars, bodies):
    """One exact solve of train ``t``'s swivel and coupler rows (rows 1–5 of its frames stay exact)."""
    jJ, jt, jgam, jlam = rows.J, rows.target, rows.gamma, joints.lam
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            a, b = joints.a[j], joints.b[j]
            s = jt[j, r] - jgam[j] * jlam[j, r]
            for i in range(3):
                s -= jJ[j, r, i] * vel[a, i] + jJ[j, r, 3 + i] * omg[a, i]
                s -= jJ[j, r, 6 + i] * vel[b, i] + jJ[j, r, 9 + i] * omg[b, i]
            fac[g, k, F_Y] = s
    block_solve(t, blk)
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
        for q in range(2):
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
            fac[g, k, F_Y] = s
    block_solve(t, blk)
    dv[b0] = crow.c[b0]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            j, r = grp[g, G_ROWS + 2 * k], grp[g, G_ROWS + 2 * k + 1]
            x = fac[g, k, F_Y]
            for e in range(2):
                body = joints.a[j] if e == 0 else joints.b[j]
                if first <= body < first + nframes:
                    s = 0.0
                    for i in range(6):
                        s += crow.w[body, i] * jJ[j, r, 6 * e + i]
                    dv[body] += s * x
    if not dv[b0] > 0.0:
        return False
    f = 1.0 / np.sqrt(dv[b0])
    for i in range(nframes):
        crow.s[first + i] = dv[first + i] * f
    return True
