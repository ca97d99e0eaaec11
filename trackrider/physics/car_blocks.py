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


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _pair(jJ, j1, r1, a1, b1, w, g2, k2, a2, b2):
    """J_{row 1} W̃ J_{row 2}ᵀ over the bodies the two rows share (row 2's W̃Jᵀ cached in ``w``)."""
    s = 0.0
    if a1 >= 0:
        if a1 == a2:
            for i in range(6):
                s += jJ[j1, r1, i] * w[g2, k2, i]
        if a1 == b2:
            for i in range(6):
                s += jJ[j1, r1, i] * w[g2, k2, 6 + i]
    if b1 >= 0:
        if b1 == a2:
            for i in range(6):
                s += jJ[j1, r1, 6 + i] * w[g2, k2, i]
        if b1 == b2:
            for i in range(6):
                s += jJ[j1, r1, 6 + i] * w[g2, k2, 6 + i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_blocks(t, blk, joints, rows, trk, cars):
    """Cache W̃Jᵀ, PJᵀ of every row of train ``t``'s groups and factor its block tridiagonal system."""
    jJ, Wt, Pm = rows.J, trk.mobility, trk.to_track
    ej, er, w, p, L, E = blk.ej, blk.er, blk.w, blk.p, blk.L, blk.E
    g0 = blk.tfirst[t]
    for gi in range(blk.tcount[t]):
        g = g0 + gi
        n = 0
        for q in range(2):
            j = blk.gj[g, q]
            if j < 0:
                continue
            for r in range(rows.m[j]):
                ej[g, n] = j
                er[g, n] = r
                n += 1
        blk.n[g] = n
        for k in range(n):
            j, r = ej[g, k], er[g, k]
            for e in range(2):
                body = joints.a[j] if e == 0 else joints.b[j]
                o = 6 * e
                for i in range(6):
                    s = 0.0
                    if body >= 0:
                        for q in range(6):
                            s += Wt[body, i, q] * jJ[j, r, o + q]
                    w[g, k, o + i] = s
                for i in range(5):
                    s = 0.0
                    if 0 <= body < cars.n and cars.held[body]:
                        for q in range(6):
                            s += Pm[body, i, q] * jJ[j, r, o + q]
                    p[g, k, 5 * e + i] = s
        # the diagonal block A_g (lower triangle, into L[g]), minus E_g E_gᵀ
        for k in range(n):
            j, r = ej[g, k], er[g, k]
            a1, b1 = joints.a[j], joints.b[j]
            for l in range(k + 1):
                j2 = ej[g, l]
                L[g, k, l] = _pair(jJ, j, r, a1, b1, w, g, l, joints.a[j2], joints.b[j2])
            L[g, k, k] += rows.gamma[j]
        if gi > 0:
            h = g - 1
            nh = blk.n[h]
            for k in range(n):
                j, r = ej[g, k], er[g, k]
                a1, b1 = joints.a[j], joints.b[j]
                # B_g row k, then E_g row k = L_h⁻¹ (B_g row k)ᵀ (forward substitution)
                for l in range(nh):
                    j2 = ej[h, l]
                    s = _pair(jJ, j, r, a1, b1, w, h, l, joints.a[j2], joints.b[j2])
                    for m in range(l):
                        s -= L[h, l, m] * E[g, k, m]
                    E[g, k, l] = s / L[h, l, l]
            for k in range(n):
                for l in range(k + 1):
                    s = 0.0
                    for m in range(nh):
                        s += E[g, k, m] * E[g, l, m]
                    L[g, k, l] -= s
        # Cholesky of the pivot block in place
        for k in range(n):
            for l in range(k + 1):
                s = L[g, k, l]
                for m in range(l):
                    s -= L[g, k, m] * L[g, l, m]
                if l == k:
                    L[g, k, k] = np.sqrt(s) if s > 1e-300 else 1e-150
                else:
                    L[g, k, l] = s / L[g, l, l]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def block_solve(t, blk):
    """``blk.y`` ← S⁻¹ ``blk.y`` for train ``t`` (S factored by ``factor_blocks``)."""
    L, E, y = blk.L, blk.E, blk.y
    g0, ng = blk.tfirst[t], blk.tcount[t]
    for gi in range(ng):
        g = g0 + gi
        n = blk.n[g]
        if gi > 0:
            nh = blk.n[g - 1]
            for k in range(n):
                s = y[g, k]
                for m in range(nh):
                    s -= E[g, k, m] * y[g - 1, m]
                y[g, k] = s
        for k in range(n):
            s = y[g, k]
            for m in range(k):
                s -= L[g, k, m] * y[g, m]
            y[g, k] = s / L[g, k, k]
    for gi in range(ng - 1, -1, -1):
        g = g0 + gi
        n = blk.n[g]
        if gi < ng - 1:
            n1 = blk.n[g + 1]
            for m in range(n):
                s = y[g, m]
                for k in range(n1):
                    s -= E[g + 1, k, m] * y[g + 1, k]
                y[g, m] = s
        for k in range(n - 1, -1, -1):
            s = y[g, k]
            for m in range(k + 1, n):
                s -= L[g, m, k] * y[g, m]
            y[g, k] = s / L[g, k, k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_blocks(t, blk, joints, rows, trk, cars, bodies):
    """One exact solve of train ``t``'s swivel and coupler rows (rows 1–5 of its frames stay exact)."""
    jJ, jt, jgam, jlam = rows.J, rows.target, rows.gamma, joints.lam
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    ej, er, w, p, y = blk.ej, blk.er, blk.w, blk.p, blk.y
    g0, ng = blk.tfirst[t], blk.tcount[t]
    for g in range(g0, g0 + ng):
        for k in range(blk.n[g]):
            j, r = ej[g, k], er[g, k]
            a, b = joints.a[j], joints.b[j]
            s = jt[j, r] - jgam[j] * jlam[j, r]
            for i in range(3):
                s -= jJ[j, r, i] * vel[a, i] + jJ[j, r, 3 + i] * omg[a, i]
                s -= jJ[j, r, 6 + i] * vel[b, i] + jJ[j, r, 9 + i] * omg[b, i]
            y[g, k] = s
    block_solve(t, blk)
    for g in range(g0, g0 + ng):
        for k in range(blk.n[g]):
            j, r = ej[g, k], er[g, k]
            dl = y[g, k]
            jlam[j, r] += dl
            a, b = joints.a[j], joints.b[j]
            for i in range(3):
                vel[a, i] += w[g, k, i] * dl
                omg[a, i] += w[g, k, 3 + i] * dl
                vel[b, i] += w[g, k, 6 + i] * dl
                omg[b, i] += w[g, k, 9 + i] * dl
            if a < cars.n and cars.held[a]:
                for i in range(5):
                    lamT[a, i] -= p[g, k, i] * dl
            if b < cars.n and cars.held[b]:
                for i in range(5):
                    lamT[b, i] -= p[g, k, 5 + i] * dl


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def block_train_mode(t, first, nframes, blk, joints, rows, cars, crow):
    """``crow.s`` of the frames ``first`` … ``first + nframes − 1`` of train ``t`` (a rigid train of
    cars on bogies: its one free motion, ``couplings.train_mode``): a unit impulse on the first
    frame's row along T, μ_0 = 1, changes frame i's row velocity by Δv_i = s_i s_0 once the
    swivels and couplers have answered (one solve of the blocks), so s_i = Δv_i / √Δv_0. False if
    the train is not rigid (a soft coupler, a frame off its track or without its support row)."""
    jJ, ej, er, y, dv = rows.J, blk.ej, blk.er, blk.y, blk.dv
    g0, ng = blk.tfirst[t], blk.tcount[t]
    for i in range(nframes):
        b = first + i
        if b >= cars.n or not cars.held[b] or not cars.support[b] or not crow.c[b] > 0.0:
            return False
        dv[b] = 0.0
    for g in range(g0, g0 + ng):
        for q in range(2):
            j = blk.gj[g, q]
            if j >= 0 and rows.gamma[j] != 0.0:
                return False
    # r = −J Δu_0, Δu_0 = W̃ f_0ᵀ on the first frame (crow.w)
    b0 = first
    for g in range(g0, g0 + ng):
        for k in range(blk.n[g]):
            j, r = ej[g, k], er[g, k]
            s = 0.0
            if joints.a[j] == b0:
                for i in range(6):
                    s -= jJ[j, r, i] * crow.w[b0, i]
            if joints.b[j] == b0:
                for i in range(6):
                    s -= jJ[j, r, 6 + i] * crow.w[b0, i]
            y[g, k] = s
    block_solve(t, blk)
    dv[b0] = crow.c[b0]
    for g in range(g0, g0 + ng):
        for k in range(blk.n[g]):
            j, r = ej[g, k], er[g, k]
            x = y[g, k]
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
