"""A train's couplers solved exactly: the chain solve (docs/physics.md §3–4).

Chain (one train): couplers j0 … j0+n−1 (one row each: distance or track ball, ``joints/``),
coupler k joins bodies (a_k, b_k) with b_k = a_{k+1}. With rows 1–5 of every car eliminated
(W̃, ``track_joint.py``), the coupler system S Δλ = r is tridiagonal:

    D_k = H_k W̃ H_kᵀ + γ_k,   F_k = H_k^b W̃_{b_k} H_{k+1}^aᵀ
    LDLᵀ (Thomas): D'_k = D_k − F_{k−1}²/D'_{k−1}
    forward  y_k = r_k − F_{k−1} y_{k−1}/D'_{k−1};   back  x_k = (y_k − F_k x_{k+1})/D'_k

Per coupler ``chains.w`` = W̃ Hᵀ and ``chains.p`` = P Hᵀ of both ends are cached, so a solve
costs O(1) per coupler: Δu = w Δλ, Δλ_T = −p Δλ (the cars' track rows stay exact).

Rigid trains (``train_mode``, ``train_rows_scalar``). With rigid couplers (γ = 0) and every car
on its track with its support row (W̃ of rank one: W̃ = w wᵀ/c, w = W̃fᵀ, c = f·w), a train has
one free motion: car i moves as w_i q_i X, with q_0 = 1 and q_{k+1} = −(H_k^a·w_a)/(H_k^b·w_b) q_k
(coupler k keeps H_k Δu = 0). Its generalised mass is M = Σ c_i q_i², a row impulse μ_i on car i
is the generalised impulse c_i q_i μ_i, so with s_i = c_i q_i / √M the row velocities change by
Δv_i = s_i Y, Y = Σ_j s_j Δμ_j. Every bounded row r of car i (softness γ_r) has the impulse
clamp((t_r − v_i − s_i Y)/γ_r, lo_r, hi_r): the whole train's rows are one scalar equation in Y,
Y = Σ_i s_i (μ_i(Y) − μ_i⁰), continuous, piecewise linear and increasing (slope ≥ 1), solved
exactly by Newton's method inside a bracket (exact once in the root's piece). Rows that are one
set point share one target and softness (``group_rows``: equal cars, equal forces). The impulses
are then applied and the couplers re-solved (``solve_chain``), which gives the same velocities.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.joints.distance import prepare as prepare_distance
from trackrider.physics.track_joint import closed_to_track
from trackrider.physics.rows import ABSENT, HOLD_SOFTNESS, MAX_GROUPS, ROW_SOFTNESS, SAME_TARGET


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def dot6(x, h0, h1, h2, h3, h4, h5):
    """x · h of a row ``x`` of six and six numbers, summed in order from 0 (as a loop from s = 0)."""
    s = 0.0
    s += x[0] * h0
    s += x[1] * h1
    s += x[2] * h2
    s += x[3] * h3
    s += x[4] * h4
    s += x[5] * h5
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def factor_chain(t, chains, joints, rows, trk, cars, bodies, h, erp_h, done):
    """Cache w, p and factor the tridiagonal system of train ``t``'s chain: ``chains.w``, ``.p``, ``.d``,
    ``.f`` (a call: it gets only the words of these records it reads, ``jit_cache.drop_dead_arguments``).
    A chain made in blocks (``chains.inner``, ``split_chains``) also has its couplers' rows made here
    (``chain_block``), those of each chunk of bodies already made by the chunk when ``done``
    (``kernels.step_chunk``)."""
    j0, n = chains.first[t], chains.count[t]
    cw, cf, jJ = chains.w, chains.f, rows.J
    if n > 0 and chains.inner[j0]:   # made in blocks
        if not done:
            chain_block(j0, j0 + n, True, h, erp_h, chains, joints, bodies, rows, trk, cars)
            return
        j = j0
        for c in range(chains.jr.shape[1]):   # the gaps between the chunks' blocks, in order along the chain
            s, e = chains.jr[t, c, 0], chains.jr[t, c, 1]
            if e > s:
                if s > j:
                    chain_block(j, s, False, h, erp_h, chains, joints, bodies, rows, trk, cars)
                j = e
        if j < j0 + n:
            chain_block(j, j0 + n, False, h, erp_h, chains, joints, bodies, rows, trk, cars)
        for c in range(chains.jr.shape[1]):   # the off-diagonals at each block's two ends
            s, e = chains.jr[t, c, 0], chains.jr[t, c, 1]
            if e > s:
                if s > j0:
                    cf[s - 1] = coupler_link(s - 1, cw, jJ)
                if e < j0 + n:
                    cf[e - 1] = coupler_link(e - 1, cw, jJ)
        for k in range(n):
            pivot(j0 + k, k, chains.d, cf)
        cf[j0 + n - 1] = 0.0
    else:
        factor_pass(j0, n, chains, joints, rows, trk, cars)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def factor_pass(j0, n, chains, joints, rows, trk, cars):
    """Each coupler's terms (``coupler_terms``), its pivot (``pivot``) and its off-diagonal with the next,
    coupler by coupler along the chain (the pivots' divisions overlap the next coupler's terms)."""
    for k in range(n):
        j = j0 + k
        coupler_terms(j, chains, joints, rows, trk, cars)
        pivot(j, k, chains.d, chains.f)
        chains.f[j] = coupler_link(j, chains.w, rows.J) if k < n - 1 else 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def pivot(j, k, cd, cf):
    """The LDLᵀ (Thomas) pivot of coupler ``j``, the ``k``-th of its chain: D'_k = D_k − F_{k−1}²/D'_{k−1}."""
    d = cd[j]
    if k > 0:
        d -= cf[j - 1] * cf[j - 1] / cd[j - 1]
    if d < 1e-300:
        d = 1e-300
    cd[j] = d


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def chain_block(j0, j1, whole, h, erp_h, chains, joints, bodies, rows, trk, cars):
    """Couplers ``j0`` … ``j1 − 1`` of a chain made in blocks (``split_chains``): each one's row
    (``joints/distance.prepare``), its terms (``coupler_terms``) and the off-diagonal of each with the
    next in the block; ``whole``: the block is the whole chain, its pivots too (``factor_pass``). One
    compiled function for a chunk of bodies (``kernels.step_chunk``, on a thread) and for the serial
    stage, so that both round alike (LLVM chooses which product of a sum it fuses into a multiply-add
    by the code around it: docs/physics.md "Both cores")."""
    for j in range(j0, j1):
        prepare_distance(j, joints, bodies, h, erp_h, rows, False)   # (a chain's couplers have no slack)
    if whole:
        factor_pass(j0, j1 - j0, chains, joints, rows, trk, cars)
        return
    for j in range(j0, j1):
        coupler_terms(j, chains, joints, rows, trk, cars)
    for j in range(j0, j1 - 1):
        chains.f[j] = coupler_link(j, chains.w, rows.J)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def coupler_terms(j, chains, joints, rows, trk, cars):
    """Coupler ``j``'s W̃Hᵀ and PHᵀ at both ends (``chains.w``, ``.p``) and its diagonal H W̃ Hᵀ + γ
    (``chains.d``, before the pivots): a W̃ of rank one (``trk.rank1``: n and 1/μ) as n (n·h)/μ, 12
    multiplies an end where the whole W̃ takes 36."""
    jJ, Wt, Wn, Pm, cw, cp = rows.J, trk.mobility, trk.rank1, trk.to_track, chains.w, chains.p
    for e in range(2):
        body = joints.a[j] if e == 0 else joints.b[j]
        o = 6 * e
        # the row's six columns at this end, read once (each store below could alias them)
        h0, h1, h2 = jJ[j, 0, o], jJ[j, 0, o + 1], jJ[j, 0, o + 2]
        h3, h4, h5 = jJ[j, 0, o + 3], jJ[j, 0, o + 4], jJ[j, 0, o + 5]
        imu = Wn[body, 6]
        car = body < cars.n and cars.held[body]
        if imu > 0.0:   # W̃ h = n (n·h)/μ: 12 multiplies, not 36; P h from Zᵀ M n/μ and the arm
            nh = dot6(Wn[body], h0, h1, h2, h3, h4, h5)
            g = nh * imu
            for i in range(6):
                cw[j, o + i] = Wn[body, i] * g
            (cp[j, 5 * e], cp[j, 5 * e + 1], cp[j, 5 * e + 2], cp[j, 5 * e + 3],
             cp[j, 5 * e + 4]) = closed_to_track(body, h0, h1, h2, h3, h4, h5, nh, trk, cars.frame)
        else:
            W = Wt[body]
            for i in range(6):
                cw[j, o + i] = dot6(W[i], h0, h1, h2, h3, h4, h5)
            P = Pm[body]
            for r in range(5):
                cp[j, 5 * e + r] = dot6(P[r], h0, h1, h2, h3, h4, h5) if car else 0.0
    d = rows.gamma[j]
    for i in range(12):
        d += jJ[j, 0, i] * cw[j, i]
    chains.d[j] = d


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def coupler_link(j, cw, jJ):
    """The off-diagonal F_j = H_j^b W̃ H_{j+1}^aᵀ of couplers ``j`` and ``j + 1``."""
    s = 0.0
    for i in range(6):
        s += cw[j, 6 + i] * jJ[j + 1, 0, i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def chain_impulses(j0, n, chains, joints, rows, bodies):
    """``chains.y`` = S⁻¹ r for the ``n`` couplers of a chain from ``j0``: r = t − γλ − J u of each
    at the velocities now, S its tridiagonal system factored (LDLᵀ: ``chains.d``, ``chains.f``)."""
    chain_rhs(j0, n, joints.a, joints.b, joints.lam, rows.J, rows.target, rows.gamma, chains.d, chains.f, chains.y,
              bodies.vel, bodies.omg)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def chain_rhs(j0, n, ja, jb, jlam, jJ, jt, jgam, cd, cf, cy, vel, omg):
    """``chain_impulses`` on the arrays it reads and writes. The divisions by the pivots are off the
    recursion (each coupler's ratios depend on the factor alone), so a long chain's passes wait on a
    multiply and a subtract per coupler, not on a division (docs/physics.md "Speed and compile time")."""
    for k in range(n):
        j = j0 + k
        a = ja[j]
        b = jb[j]
        r = jt[j, 0] - jgam[j] * jlam[j, 0]
        for i in range(3):
            r -= jJ[j, 0, i] * vel[a, i] + jJ[j, 0, 3 + i] * omg[a, i]
            r -= jJ[j, 0, 6 + i] * vel[b, i] + jJ[j, 0, 9 + i] * omg[b, i]
        if k > 0:   # the pivot's ratio first: along the chain only a multiply and a subtract wait
            r -= (cf[j - 1] / cd[j - 1]) * cy[j - 1]
        cy[j] = r
    for k in range(n - 1, -1, -1):
        j = j0 + k
        q = 1.0 / cd[j]
        if k < n - 1:
            cy[j] = cy[j] * q - (cf[j] * q) * cy[j + 1]
        else:
            cy[j] = cy[j] * q


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def solve_chain(t, chains, joints, rows, trk, cars, bodies):
    """One exact solve of train ``t``'s coupler rows (rows 1–5 of its cars stay exact;
    ``solve_chain_rows``: a call that passes these records whole would cost more than the solve of a
    short train)."""
    solve_chain_rows(chains.first[t], chains.count[t], joints.a, joints.b, joints.lam, rows.J, rows.target,
                     rows.gamma, chains.w, chains.p, chains.d, chains.f, chains.y, bodies.vel, bodies.omg, trk.lam,
                     cars.n, cars.held)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_chain_rows(j0, n, ja, jb, jlam, jJ, jt, jgam, cw, cp, cd, cf, cy, vel, omg, lamT, ncars, car_on):
    """``solve_chain`` of the ``n`` couplers from ``j0`` on the arrays it reads and writes."""
    chain_rhs(j0, n, ja, jb, jlam, jJ, jt, jgam, cd, cf, cy, vel, omg)
    for k in range(n):
        j = j0 + k
        dl = cy[j]
        jlam[j, 0] += dl
        a = ja[j]
        b = jb[j]
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


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def train_car(t, i, chains, joints, single):
    """The i-th car of train ``t``'s chain (``single`` ≥ 0: a car outside any chain, i = 0)."""
    if single >= 0:
        return single
    j0 = chains.first[t]
    return joints.a[j0] if i == 0 else joints.b[j0 + i - 1]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def train_mode(t, chains, joints, rows, cars, crow, single):
    """``crow.s`` of the cars of a rigid train ``t`` (or of the car ``single``). False if the train
    is not rigid (a soft coupler, a car off its track or without its support row: the cars' rows
    then alternate with the chain solve, ``kernels.solve_car_rows``)."""
    n = 1 if single >= 0 else chains.count[t] + 1
    jJ = rows.J
    q = 1.0
    msum = 0.0
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        if b >= cars.n or not cars.held[b] or not cars.support[b] or not crow.c[b] > 0.0:
            return False
        if i > 0:
            j = chains.first[t] + i - 1
            if rows.gamma[j] != 0.0:
                return False
            a = joints.a[j]
            ha = 0.0
            hb = 0.0
            for k in range(6):
                ha += jJ[j, 0, k] * crow.w[a, k]
                hb += jJ[j, 0, 6 + k] * crow.w[b, k]
            if abs(hb) <= 1e-12 * abs(ha) or hb == 0.0:
                return False
            q = -ha / hb * q
        crow.s[b] = crow.c[b] * q
        msum += crow.c[b] * q * q
    f = 1.0 / np.sqrt(msum)
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        crow.s[b] *= f
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def train_rows_residual(t, y, chains, joints, crow, single, apply):
    """(F(Y), F'(Y)) of the scalar equation of train ``t`` (see the module docstring); ``apply``:
    store each row's impulse at Y in ``crow.lam`` and return instead the change of each car's
    total in ``crow.mu``."""
    n = 1 if single >= 0 else chains.count[t] + 1
    F = y
    dF = 1.0
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        s = crow.s[b]
        v = crow.v[b] + s * y
        d = 0.0
        for r in range(3):
            if crow.present[b, r] == ABSENT:
                continue
            g = crow.gamma[b, r]
            if crow.group[b, r] >= 0:
                x = s * (crow.ystar[b, r] - y) / g  # one row of a set point (group_rows)
            else:
                x = (crow.target[b, r] - v) / g
            lo, hi = crow.lo[b, r], crow.hi[b, r]
            if x <= lo:
                x = lo
            elif x >= hi:
                x = hi
            else:
                dF += s * s / g
            d += x - crow.lam[b, r]
            if apply:
                crow.lam[b, r] = x
        F -= s * d
        if apply:
            crow.mu[b] = d
    return F, dF


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def train_rows_scalar(t, chains, joints, crow, single, row_t, bodies):
    """Solve train ``t``'s scalar equation for Y (Newton inside a bracket, exact in the root's
    linear piece) and store its rows' impulses; ``crow.mu`` = each car's change of impulse."""
    n = 1 if single >= 0 else chains.count[t] + 1
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        s = 0.0
        for k in range(3):
            s += row_t[b, k] * bodies.vel[b, k] + row_t[b, 3 + k] * bodies.omg[b, k]
        crow.v[b] = s
    group_rows(t, chains, joints, crow, single)
    y = 0.0
    lo = -np.inf
    hi = np.inf
    for it in range(200):
        F, dF = train_rows_residual(t, y, chains, joints, crow, single, False)
        if F == 0.0:
            break
        if F < 0.0:
            lo = y
        else:
            hi = y
        y1 = y - F / dF
        if y1 == y:
            break  # the root to rounding
        if not (lo < y1 < hi):  # overshot past a known point (both ends finite then): bisect
            y1 = 0.5 * (lo + hi)
            if not lo < y1 < hi:
                break
        y = y1
    train_rows_residual(t, y, chains, joints, crow, single, True)


# ----------------------------------------------------------------------------- redundant rows
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def group_rows(t, chains, joints, crow, single):
    """Rows of train ``t`` that are one set point act as one row (docs/physics.md, "Rows that share
    a load").

    A rigid train has one free motion Y; a row of car b changes its velocity by s_b Y. Rows of
    one class (section rows; ratchet and friction rows) whose targets differ by at most
    ``SAME_TARGET`` — every car's row of a booster, a lift or a held block section, the friction
    rows of a train at rest — are redundant: solved one by one, the tiny differences between the
    cars' row velocities (drift correction, the chain's geometry) would decide their split, and
    stiff rows turn those into full force one way on some cars and the other way on others.
    Instead the rows of a group get the least-squares consistent target of the train's motion,
    Y* = Σ s_b (t_b − v_b) / Σ s_b², and one softness, γ = γ₀ Σ s_b² / n (γ₀ the class's, n rows:
    each row as soft as alone), so that row b's impulse is s_b (Y* − Y) / γ clamped to its bounds:
    the group holds the train's motion as its rows did, and splits its load by least squares
    (equal cars, equal forces: the limit of small, equal softness).
    Rows alone in their group keep their own target (``crow.group`` −1)."""
    n = 1 if single >= 0 else chains.count[t] + 1
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        for r in range(3):
            crow.group[b, r] = -1
    ng = 0
    for i in range(n):
        b = train_car(t, i, chains, joints, single)
        for r in range(3):
            if crow.present[b, r] == ABSENT or crow.group[b, r] >= 0 or ng >= MAX_GROUPS:
                continue
            tr = crow.target[b, r]
            count = 0
            s2 = 0.0
            sv = 0.0
            for i2 in range(i, n):
                b2 = train_car(t, i2, chains, joints, single)
                s = crow.s[b2]
                for r2 in range(3):
                    if (crow.present[b2, r2] != ABSENT and crow.group[b2, r2] < 0 and (r2 == 0) == (r == 0)
                            and abs(crow.target[b2, r2] - tr) <= SAME_TARGET):
                        crow.group[b2, r2] = ng
                        count += 1
                        s2 += s * s
                        sv += s * (crow.target[b2, r2] - crow.v[b2])
            if count < 2:
                crow.group[b, r] = -1  # alone: its own row
                continue
            g = (ROW_SOFTNESS if r == 0 else HOLD_SOFTNESS) * s2 / count
            ystar = sv / s2
            for i2 in range(i, n):
                b2 = train_car(t, i2, chains, joints, single)
                for r2 in range(3):
                    if crow.group[b2, r2] == ng:
                        crow.ystar[b2, r2] = ystar
                        crow.gamma[b2, r2] = g
            ng += 1


# ----------------------------------------------------------------------------- in Python
def split_chains(chains, nb, joints, blocks_train, nhangs, nk, distance_code):
    """Once per world: which chains are made in blocks (``chains.inner``) and each chunk of bodies'
    block of them (``chains.jr``, the chunks of ``kernels.par_step``: ``nb`` bodies in ``chains.jr.shape[1]``
    parts, ``car_lanes.chunk_edge``). In a world of ``state.PARALLEL_BODIES`` bodies or more without carriers or suspended
    cars, a train whose couplers are all distance couplers of its chain (rigid or sprung; no slack, no car
    blocks) has their rows made with the chain's factor (``chain_block``), and in a step that follows a
    fused one in a chunk of steps, a chunk makes the block of those whose two cars are both in it: the
    first run of consecutive couplers that are, after the blocks of the chunks before it."""
    from trackrider.physics.car_lanes import chunk_edge
    from trackrider.physics.state import PARALLEL_BODIES

    if nb < PARALLEL_BODIES or nk > 0 or nhangs > 0:
        return
    nc = chains.jr.shape[1]
    for t, (j0, n) in enumerate(zip(chains.first.tolist(), chains.count.tolist())):
        js = range(j0, j0 + n)
        if n == 0 or blocks_train[t, 1] > 0 or any(
                joints.kind[j] != distance_code or joints.chain[j] != 1 or joints.slack[j] for j in js):
            continue
        chains.inner[j0:j0 + n] = 1
        after = j0
        for c in range(nc):
            b0, b1 = chunk_edge.py_func(c, nb, nc), chunk_edge.py_func(c + 1, nb, nc)
            inside = {j for j in js if b0 <= joints.a[j] < b1 and b0 <= joints.b[j] < b1 and j >= after}
            if inside:
                s = e = min(inside)
                while e in inside:
                    e += 1
                chains.jr[t, c] = s, e
                after = e
