"""Reference computations for verifying the solver (numpy/scipy; slow, not for production).

``one_step_rows(world)`` runs the first stages of one step on a copy of the world's state and
returns the kernel's rows (track rows ``G``, targets, coupler rows), the velocities before any
projection, and the kernel's coupler impulses after the step's solve.
``bounded_row_error(world)`` compares the cars' bounded rows (sections, friction) after the
step's solve with a converged solve of the same step.
``exact_coupler_impulses(rows)`` assembles the same step's equality system independently
(sparse ``J``, block-diagonal ``W``) and solves ``(J W Jᵀ + Γ) λ = t − J u*`` directly.
"""
from __future__ import annotations

import numpy as np


def _one_step(w, iterations, bounded):
    """The stages of one step up to its solve on copies of ``w``'s state: (world records, temps)."""
    import copy

    from trackrider.physics import kernels as kn
    from trackrider.physics import state as st

    w._build()
    rec = w.records
    copy_rec = lambda r: type(r)(*[np.copy(x) if isinstance(x, np.ndarray) else x for x in r])  # noqa: E731
    world = st.WorldState(rec.tracks, copy_rec(rec.bodies), copy_rec(rec.cars), rec.sections, rec.res,
                          copy_rec(rec.joints))
    tmp = copy.deepcopy(w._temps)
    h = w.dt
    cfg = st.Step(h, 0.0, 0.0, -w.gravity, w.gravity, w.erp / h, iterations, w.warm_start, 1)
    kn.py_stages_to_solve(cfg, world, tmp, bounded, True)
    return world, tmp


def one_step_rows(w):
    """Run the first stages of one step on a copy of ``w`` and return the kernel's rows, the
    velocities before any projection, and the kernel's coupler impulses after the step's solve."""
    world, tmp = _one_step(w, w.iterations, False)
    bodies, joints = world.bodies, world.joints
    nj = w.ji.shape[0]
    u_star = np.hstack([tmp.scratch.vel0, tmp.scratch.omg0])[: bodies.pos.shape[0]].copy()
    return dict(G=tmp.trk.J, tgt=tmp.trk.target, jJ=tmp.rows.J, jt=tmp.rows.target, jgam=tmp.rows.gamma, ji=w.ji,
                u_star=u_star, quat=bodies.quat, inv_mass=bodies.inv_mass, inv_ib=bodies.inv_ib,
                lam_c=joints.lam[:nj, 0].copy(), lamT=tmp.trk.lam.copy())


def bounded_row_error(w, converged_iterations=1_000_000):
    """Relative error of the cars' bounded rows after one step's solve with ``w.iterations``
    against a converged solve of the same step (``converged_iterations``, stopped at the solver's
    own tolerance 1e-9 m g h): ``{"section": ..., "friction": ...}``, each the largest impulse
    difference over the largest impulse of that kind (nan when the step has none)."""
    out = {}
    a, _ = _one_step(w, w.iterations, True)
    b, _ = _one_step(w, converged_iterations, True)
    n = w.ncars
    for key, fields in (("section", ("lam_motor", "lam_ratchet")), ("friction", ("lam_friction",))):
        la = sum(getattr(a.cars, f)[:n] for f in fields)
        lb = sum(getattr(b.cars, f)[:n] for f in fields)
        scale = float(np.max(np.abs(lb))) if n else 0.0
        out[key] = float(np.max(np.abs(la - lb))) / scale if scale > 0.0 else float("nan")
    return out


def exact_coupler_impulses(rows):
    """Sparse direct solve of (J W Jᵀ + Γ) λ = t − J u* for all equality rows of the step."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from trackrider.physics import kernels as kn
    from trackrider.physics.joints.common import JI_A, JI_B

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
        a, b = ji[j, JI_A], ji[j, JI_B]
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
