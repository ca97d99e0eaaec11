"""Reference computations for verifying the solver (numpy/scipy; slow, not for production).

``one_step_rows(world)`` runs the first stages of one step on a copy of the world's state and
returns the kernel's rows (track rows ``G``, targets, coupler rows), the velocities before any
projection, and the kernel's coupler impulses after the step's solve.
``exact_coupler_impulses(rows)`` assembles the same step's equality system independently
(sparse ``J``, block-diagonal ``W``) and solves ``(J W Jᵀ + Γ) λ = t − J u*`` directly.
"""
from __future__ import annotations

import numpy as np


def one_step_rows(w):
    """Run the first stages of one step on a copy of ``w`` and return the kernel's rows, the
    velocities before any projection, and the kernel's coupler impulses after the step's solve."""
    from trackrider.physics import kernels as kn

    w._build()
    pk = w._packed
    nb = w.pos.shape[0]
    nj = w.ji.shape[0]
    pos, quat, vel, omg = w.pos.copy(), w.quat.copy(), w.vel.copy(), w.omg.copy()
    car_f, car_i, car_frame = w.car_f.copy(), w.car_i.copy(), w.car_frame.copy()
    jlam = w.jlam.copy()
    z = np.zeros
    Wt, Pm, G, tgt, lamT = z((nb, 6, 6)), z((nb, 5, 6)), z((nb, 5, 6)), z((nb, 5)), z((nb, 5))
    jJ, jt, jlo, jhi, jgam, jm = z((nj, 3, 12)), z((nj, 3)), z((nj, 3)), z((nj, 3)), z(nj), z(nj, np.int64)
    cw, cp, cd, cf, cy = z((nj, 12)), z((nj, 10)), z(nj), z(nj), z(nj)
    rowf = z((nb, 6))
    R, W, A, Ainv, work, K, Kinv = z((3, 3)), z((6, 6)), z((5, 5)), z((5, 5)), z((8, 8)), z((3, 3)), z((3, 3))
    qf, theta, rr = z(4), z(3), z(16)
    car_on = z(nb, np.int64)
    h = w.dt
    kn.py_stage_frames(pk.data, pk.row0, pk.nrows, pk.ds, pk.length, pk.closed, w.ncars, car_f, car_i, car_frame,
                       car_on, w.sec_kind, w.sec_track, w.sec_from, w.sec_to)
    kn.py_stage_velocities(h, 0.0, 0.0, -w.gravity, pos, quat, vel, omg, w.inv_mass, w.inv_ib, w.ib, w.mass, w.ncars,
                           car_f, car_i, car_frame, car_on, w.res, R, W)
    u_star = np.hstack([vel, omg]).copy()
    kn.py_stage_prepare(w.erp / h, h, pos, quat, vel, omg, w.inv_mass, w.inv_ib, w.ncars, car_f, car_i, car_frame,
                        car_on, w.ji, w.jf, w.tr_j0, w.tr_nj, Wt, Pm, G, tgt, lamT, jJ, jt, jlo, jhi, jgam, jm,
                        cw, cp, cd, cf, R, W, A, Ainv, work, qf, theta, rr, True)
    kn.py_stage_solve(h, w.iterations, w.warm_start, w.gravity, quat, vel, omg, w.mass, w.ncars, car_f, car_i,
                      car_frame, car_on, w.sec_kind, w.sec_speed, w.sec_fmax, w.res, w.ji, jlam, w.tr_j0, w.tr_nj,
                      Wt, Pm, lamT, jJ, jt, jlo, jhi, jgam, jm, cw, cp, cd, cf, cy, rowf, R, K, Kinv, work, False,
                      True)
    return dict(G=G, tgt=tgt, jJ=jJ, jt=jt, jgam=jgam, ji=w.ji, u_star=u_star, quat=quat, inv_mass=w.inv_mass,
                inv_ib=w.inv_ib, lam_c=jlam[:nj, 0].copy(), lamT=lamT.copy())


def exact_coupler_impulses(rows):
    """Sparse direct solve of (J W Jᵀ + Γ) λ = t − J u* for all equality rows of the step."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from trackrider.physics import kernels as kn

    G, tgt, jJ, jt, jgam, ji = rows["G"], rows["tgt"], rows["jJ"], rows["jt"], rows["jgam"], rows["ji"]
    nb = G.shape[0]
    nj = ji.shape[0]
    nrow = 5 * nb + nj
    I, Jc, V = [], [], []
    t = np.zeros(nrow)
    for b in range(nb):
        for r in range(5):
            for k in range(6):
                I.append(5 * b + r); Jc.append(6 * b + k); V.append(G[b, r, k])
            t[5 * b + r] = tgt[b, r]
    for j in range(nj):
        a, b = ji[j, kn.JI_A], ji[j, kn.JI_B]
        for k in range(6):
            I.append(5 * nb + j); Jc.append(6 * a + k); V.append(jJ[j, 0, k])
            I.append(5 * nb + j); Jc.append(6 * b + k); V.append(jJ[j, 0, 6 + k])
        t[5 * nb + j] = jt[j, 0]
    J = sp.csr_matrix((V, (I, Jc)), shape=(nrow, 6 * nb))
    blocks = []
    R = np.zeros((3, 3))
    for b in range(nb):
        kn.quat_to_mat(rows["quat"][b], R)
        Wb = np.zeros((6, 6))
        Wb[:3, :3] = np.eye(3) * rows["inv_mass"][b]
        Wb[3:, 3:] = R @ np.diag(rows["inv_ib"][b]) @ R.T
        blocks.append(Wb)
    Wm = sp.block_diag(blocks, format="csr")
    Kmat = (J @ Wm @ J.T).tocsc() + sp.diags(np.concatenate([np.zeros(5 * nb), jgam[:nj]]))
    rhs = t - J @ rows["u_star"].reshape(-1)
    lam = spla.spsolve(Kmat.tocsc(), rhs)
    return lam[5 * nb:], lam[: 5 * nb].reshape(nb, 5)
