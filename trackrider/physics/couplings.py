"""A train's couplers solved exactly: the chain solve (PHYSICS.md §3–4).

Chain (one train): couplers j0 … j0+n−1 (one row each: distance or track ball, ``joints/``),
coupler k joins bodies (a_k, b_k) with b_k = a_{k+1}. With rows 1–5 of every car eliminated
(W̃, ``track_joint.py``), the coupler system S Δλ = r is tridiagonal:

    D_k = H_k W̃ H_kᵀ + γ_k,   F_k = H_k^b W̃_{b_k} H_{k+1}^aᵀ
    LDLᵀ (Thomas): D'_k = D_k − F_{k−1}²/D'_{k−1}
    forward  y_k = r_k − F_{k−1} y_{k−1}/D'_{k−1};   back  x_k = (y_k − F_k x_{k+1})/D'_k

Per coupler ``chains.w`` = W̃ Hᵀ and ``chains.p`` = P Hᵀ of both ends are cached, so a solve
costs O(1) per coupler: Δu = w Δλ, Δλ_T = −p Δλ (the cars' track rows stay exact).
"""
from __future__ import annotations

from trackrider.jit import njit


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_chain(t, chains, joints, rows, trk, cars):
    """Cache w, p and factor the tridiagonal system of train ``t``'s chain."""
    j0, n = chains.first[t], chains.count[t]
    jJ, Wt, Pm = rows.J, trk.mobility, trk.to_track
    cw, cp, cd, cf = chains.w, chains.p, chains.d, chains.f
    ncars, car_on = cars.n, cars.held
    for k in range(n):
        j = j0 + k
        for e in range(2):
            body = joints.a[j] if e == 0 else joints.b[j]
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
        d = rows.gamma[j]
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
def solve_chain(t, chains, joints, rows, trk, cars, bodies):
    """One exact solve of train ``t``'s coupler rows (rows 1–5 of its cars stay exact)."""
    j0, n = chains.first[t], chains.count[t]
    jJ, jt, jgam, jlam = rows.J, rows.target, rows.gamma, joints.lam
    cw, cp, cd, cf, cy = chains.w, chains.p, chains.d, chains.f, chains.y
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    ncars, car_on = cars.n, cars.held
    for k in range(n):
        j = j0 + k
        a = joints.a[j]
        b = joints.b[j]
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
        a = joints.a[j]
        b = joints.b[j]
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
