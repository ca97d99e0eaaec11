"""Suspended cars solved exactly: each hanging body folded into its trolley (docs/physics.md,
"Suspended cars").

A suspended car is a trolley ``a`` on its track and a body ``g`` hanging on a hinge below it
(``World``: the hinge's five rows and, with a swing damper, its sixth row about the axis, of
softness γ = 1/(h c)). No other row acts on the body (``World`` folds a hang only then), so the
hang's m rows couple the trolley to the body alone. With W̃_a the trolley's mobility with its
track rows enforced (``track_joint.py``), W_g the body's, J = [J_a, J_g] the hang's rows:

    K = J_a W̃_a J_aᵀ + J_g W_g J_gᵀ + Γ     the hang's rows with both ends free
    M = J_g W_g J_gᵀ + Γ                    ... with the trolley held

One exact projection onto the hang's rows at the start of a step (``fold_hangs``: λ = K⁻¹ r,
the trolley through W̃_a, so its track rows stay exact) and from then on the trolley's mobility
with the body answering every impulse on it,

    Ŵ_a = W̃_a − W̃_a J_aᵀ K⁻¹ J_a W̃_a,    P̂_a = P_a (I − J_aᵀ K⁻¹ J_a W̃_a)

(``trk.mobility``, ``trk.to_track``: what the chain, the car's rows along T and contacts use),
so the train's chain stays tridiagonal in its couplers (a Schur complement: K's rows eliminated
car by car). An impulse f on the trolley moves it by Ŵ_a f; the body's share, the hang's
impulses Δλ = −K⁻¹ J_a W̃_a f, is taken once at the end of the solve (``answer_hangs``): the
trolley has moved by Ŵ_a f, which leaves the hang's rows the residual r = −J_a Ŵ_a f = M Δλ, so
Δλ = M⁻¹ r with the trolley held — exact, whatever the impulses were. The trolley keeps rank one
(Ŵ_a lies in W̃_a's range), so a rigid train's bounded rows stay one scalar equation
(``couplings.train_mode``), now with the hanging bodies' inertia in it.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.maths import cholesky, form_mobility
from trackrider.physics.state import HR
from trackrider.physics.track_joint import form_to_track

# columns of Hangs.fac (per row k of a hang): Cholesky rows of K and M (1/L_kk on the diagonal),
# W̃_a J_aᵀ, P_a J_aᵀ, W_g J_gᵀ, L_K⁻¹ J_a W̃_a and L_K⁻¹ J_a P_aᵀ (the fold's work; on a trolley's
# one motion s and q), the right-hand side and solution
H_K, H_M, H_WA, H_PA, H_WG, H_Z, H_V, H_Y = 0, HR, 2 * HR, 2 * HR + 6, 2 * HR + 11, 2 * HR + 17, 2 * HR + 23, 2 * HR + 28


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def hang_row(hg, h, k):
    """(joint, row) of row ``k`` of hang ``h``: the hinge's rows 0–4, then its damper's row."""
    if k < 5:
        return hg.joint[h, 0], k
    return hg.joint[h, 1], 0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def residual_solve(h, m, col, hg, joints, rows, bodies):
    """``fac[h, :m, H_Y]`` = (L Lᵀ)⁻¹ r (L at column ``col``), r = t − γλ − J u of the hang's rows now."""
    fac, jJ, vel, omg = hg.fac, rows.J, bodies.vel, bodies.omg
    j0 = hg.joint[h, 0]
    a, g = joints.a[j0], joints.b[j0]
    for k in range(m):
        j, r = hang_row(hg, h, k)
        s = rows.target[j, r] - rows.gamma[j] * joints.lam[j, r]
        for i in range(3):
            s -= jJ[j, r, i] * vel[a, i] + jJ[j, r, 3 + i] * omg[a, i]
            s -= jJ[j, r, 6 + i] * vel[g, i] + jJ[j, r, 9 + i] * omg[g, i]
        for q in range(k):
            s -= fac[h, k, col + q] * fac[h, q, H_Y]
        fac[h, k, H_Y] = s * fac[h, k, col + k]
    for k in range(m - 1, -1, -1):
        s = fac[h, k, H_Y]
        for q in range(k + 1, m):
            s -= fac[h, q, col + k] * fac[h, q, H_Y]
        fac[h, k, H_Y] = s * fac[h, k, col + k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def fold_hangs(bodies, cars, joints, rows, trk, hg):
    """Each hang's rows projected exactly (λ = K⁻¹ r, the trolley through W̃_a and its track rows'
    impulses by P_a) and its trolley's ``trk.mobility`` and ``trk.to_track`` replaced by Ŵ_a and
    P̂_a; M factored for ``answer_hangs``. After ``stage_track_rows`` and the joints' rows, before
    the chains are factored. A trolley on its track with its support row has W̃_a = v vᵀ (one
    motion), and then K = s sᵀ + M (s = J_a v) is solved through M alone (Sherman–Morrison):
    K⁻¹ = M⁻¹ − q qᵀ/β, q = M⁻¹ s, β = 1 + s·q, so Ŵ_a = W̃_a/β and P̂_a = P_a − P_a J_aᵀ q vᵀ/β;
    any other trolley (off its track) by K's Cholesky factor."""
    fac, jJ, Wt, Pm = hg.fac, rows.J, trk.mobility, trk.to_track
    vel, omg, lamT = bodies.vel, bodies.omg, trk.lam
    for h in range(hg.joint.shape[0]):
        j0 = hg.joint[h, 0]
        a, g = joints.a[j0], joints.b[j0]
        m = 5 if hg.joint[h, 1] < 0 else HR
        held = a < cars.n and cars.held[a] == 1
        if trk.rank1[a, 6] > 0.0:   # the trolley's W̃ and P become Ŵ_a, P̂_a (the chain's factor reads them whole)
            form_mobility(Wt, trk.rank1, a)
            form_to_track(a, trk, cars.frame)
            trk.rank1[a, 6] = 0.0
        im = bodies.inv_mass[g]
        for k in range(m):           # W_g J_gᵀ (a free body: diag(1/m, I_w⁻¹)), M's lower triangle
            j, r = hang_row(hg, h, k)
            joints.lam[j, r] = 0.0   # solved exactly: no warm start
            for i in range(3):
                fac[h, k, H_WG + i] = im * jJ[j, r, 6 + i]
                fac[h, k, H_WG + 3 + i] = (Wt[g, 3 + i, 3] * jJ[j, r, 9] + Wt[g, 3 + i, 4] * jJ[j, r, 10]
                                           + Wt[g, 3 + i, 5] * jJ[j, r, 11])
            for l in range(k + 1):
                sg = 0.0
                for i in range(6):
                    sg += jJ[j, r, 6 + i] * fac[h, l, H_WG + i]
                fac[h, k, H_M + l] = sg + rows.gamma[j] if l == k else sg
        cholesky(fac, h, m, H_M, True)
        if held and cars.support[a] == 1:
            # v: W̃_a's column of its largest diagonal entry over its square root; s = J_a v
            c = 0
            for i in range(1, 6):
                if Wt[a, i, i] > Wt[a, c, c]:
                    c = i
            f = 1.0 / np.sqrt(Wt[a, c, c])
            for k in range(m):
                j, r = hang_row(hg, h, k)
                sk = 0.0
                for i in range(6):
                    sk += jJ[j, r, i] * Wt[a, i, c]
                fac[h, k, H_Z] = sk * f
            # q = M⁻¹ s (H_Z + 1), z = M⁻¹ r (H_Y): the projection y = z − q (s·z)/β
            for k in range(m):
                x = fac[h, k, H_Z]
                for q in range(k):
                    x -= fac[h, k, H_M + q] * fac[h, q, H_Z + 1]
                fac[h, k, H_Z + 1] = x * fac[h, k, H_M + k]
            for k in range(m - 1, -1, -1):
                x = fac[h, k, H_Z + 1]
                for q in range(k + 1, m):
                    x -= fac[h, q, H_M + k] * fac[h, q, H_Z + 1]
                fac[h, k, H_Z + 1] = x * fac[h, k, H_M + k]
            residual_solve(h, m, H_M, hg, joints, rows, bodies)
            beta = 1.0
            sz = 0.0
            for k in range(m):
                beta += fac[h, k, H_Z] * fac[h, k, H_Z + 1]
                sz += fac[h, k, H_Z] * fac[h, k, H_Y]
            sz /= beta
            sy = 0.0
            e0 = e1 = e2 = e3 = e4 = e5 = 0.0    # J_aᵀ y
            d0 = d1 = d2 = d3 = d4 = d5 = 0.0    # J_aᵀ q
            for k in range(m):
                j, r = hang_row(hg, h, k)
                y = fac[h, k, H_Y] - fac[h, k, H_Z + 1] * sz
                qk = fac[h, k, H_Z + 1]
                joints.lam[j, r] += y
                sy += fac[h, k, H_Z] * y
                for i in range(3):
                    vel[g, i] += fac[h, k, H_WG + i] * y
                    omg[g, i] += fac[h, k, H_WG + 3 + i] * y
                e0 += jJ[j, r, 0] * y
                e1 += jJ[j, r, 1] * y
                e2 += jJ[j, r, 2] * y
                e3 += jJ[j, r, 3] * y
                e4 += jJ[j, r, 4] * y
                e5 += jJ[j, r, 5] * y
                d0 += jJ[j, r, 0] * qk
                d1 += jJ[j, r, 1] * qk
                d2 += jJ[j, r, 2] * qk
                d3 += jJ[j, r, 3] * qk
                d4 += jJ[j, r, 4] * qk
                d5 += jJ[j, r, 5] * qk
            sy *= f                              # the trolley moves by W̃_a J_aᵀ y = v (s·y)
            for i in range(3):
                vel[a, i] += Wt[a, i, c] * sy
                omg[a, i] += Wt[a, 3 + i, c] * sy
            ib = 1.0 / beta
            for i in range(5):
                lamT[a, i] -= (Pm[a, i, 0] * e0 + Pm[a, i, 1] * e1 + Pm[a, i, 2] * e2 + Pm[a, i, 3] * e3
                               + Pm[a, i, 4] * e4 + Pm[a, i, 5] * e5)
                x = (Pm[a, i, 0] * d0 + Pm[a, i, 1] * d1 + Pm[a, i, 2] * d2 + Pm[a, i, 3] * d3
                     + Pm[a, i, 4] * d4 + Pm[a, i, 5] * d5) * ib * f
                for q in range(6):
                    Pm[a, i, q] -= x * Wt[a, q, c]
            for i in range(6):
                for q in range(6):
                    Wt[a, i, q] *= ib
            continue
        # a trolley off its track: K = J_a W̃_a J_aᵀ + M by its Cholesky factor
        for k in range(m):
            j, r = hang_row(hg, h, k)
            for i in range(6):
                sa = 0.0
                for q in range(6):
                    sa += Wt[a, i, q] * jJ[j, r, q]
                fac[h, k, H_WA + i] = sa
            for i in range(5):
                x = 0.0
                if held:
                    for q in range(6):
                        x += Pm[a, i, q] * jJ[j, r, q]
                fac[h, k, H_PA + i] = x
        for k in range(m):
            j, r = hang_row(hg, h, k)
            for l in range(k + 1):
                sa = 0.0
                sg = 0.0
                for i in range(6):
                    sa += jJ[j, r, i] * fac[h, l, H_WA + i]
                    sg += jJ[j, r, 6 + i] * fac[h, l, H_WG + i]
                fac[h, k, H_K + l] = sa + sg + rows.gamma[j] if l == k else sa + sg
        cholesky(fac, h, m, H_K, True)
        apply_hang(h, m, H_K, a, held, hg, joints, rows, bodies, lamT)
        # the fold: Z = L⁻¹ J_a W̃_a (row k of J_a W̃_a is (W̃_a J_aᵀ)_k: W̃_a symmetric), V = L⁻¹ J_a P_aᵀ
        for k in range(m):
            for i in range(6):
                x = fac[h, k, H_WA + i]
                for q in range(k):
                    x -= fac[h, k, H_K + q] * fac[h, q, H_Z + i]
                fac[h, k, H_Z + i] = x * fac[h, k, H_K + k]
            for i in range(5):
                x = fac[h, k, H_PA + i]
                for q in range(k):
                    x -= fac[h, k, H_K + q] * fac[h, q, H_V + i]
                fac[h, k, H_V + i] = x * fac[h, k, H_K + k]
        for i in range(6):     # Ŵ_a = W̃_a − Zᵀ Z (symmetric as computed)
            for c in range(i + 1):
                x = 0.0
                for k in range(m):
                    x += fac[h, k, H_Z + i] * fac[h, k, H_Z + c]
                Wt[a, i, c] -= x
                if c != i:
                    Wt[a, c, i] = Wt[a, i, c]
        if held:               # P̂_a = P_a − Vᵀ Z
            for i in range(5):
                for c in range(6):
                    x = 0.0
                    for k in range(m):
                        x += fac[h, k, H_V + i] * fac[h, k, H_Z + c]
                    Pm[a, i, c] -= x


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def apply_hang(h, m, col, a, held, hg, joints, rows, bodies, lamT):
    """Hang ``h``'s rows solved for their residual now by the factor at column ``col``
    (``residual_solve``: K's with both ends free, M's with the trolley held) and the impulses Δλ
    applied: the body moved by W_g J_gᵀ Δλ and, if ``a`` ≥ 0, the trolley ``a`` by W̃_a J_aᵀ Δλ
    (its track rows' impulses by P_a J_aᵀ Δλ when ``held``)."""
    fac, vel, omg = hg.fac, bodies.vel, bodies.omg
    g = joints.b[hg.joint[h, 0]]
    residual_solve(h, m, col, hg, joints, rows, bodies)
    for k in range(m):
        j, r = hang_row(hg, h, k)
        y = fac[h, k, H_Y]
        joints.lam[j, r] += y
        for i in range(3):
            vel[g, i] += fac[h, k, H_WG + i] * y
            omg[g, i] += fac[h, k, H_WG + 3 + i] * y
        if a >= 0:
            for i in range(3):
                vel[a, i] += fac[h, k, H_WA + i] * y
                omg[a, i] += fac[h, k, H_WA + 3 + i] * y
            if held:
                for i in range(5):
                    lamT[a, i] -= fac[h, k, H_PA + i] * y


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def answer_hangs(bodies, joints, rows, trk, hg):
    """Each hanging body's share of the impulses its trolley took through Ŵ_a since ``fold_hangs``:
    the hang's rows solved with the trolley held, Δλ = M⁻¹ r, the body moved by W_g J_gᵀ Δλ (the
    trolley has already moved by it). At the end of the step's solve."""
    for h in range(hg.joint.shape[0]):
        apply_hang(h, 5 if hg.joint[h, 1] < 0 else HR, H_M, -1, False, hg, joints, rows, bodies, trk.lam)
