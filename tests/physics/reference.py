"""Reference computations for verifying the solver (numpy/scipy; slow, not for production).

``one_step_rows(world)`` runs the first stages of one step on a copy of the world's state and
returns the kernel's rows (track rows ``G``, targets, coupler rows), the velocities before any
projection, and the kernel's coupler impulses after the step's solve.
``exact_bounded_solve(world)`` solves the same step's rows with the cars' bounded rows (sections,
friction) independently (sparse assembly, active set, sparse LU); ``bounded_row_error(world)``
compares the kernel's impulses with it.
``exact_coupler_impulses(rows)`` assembles the same step's equality system independently
(sparse ``J``, block-diagonal ``W``) and solves ``(J W Jᵀ + Γ) λ = t − J u*`` directly.
``exact_joint_impulses(world, joints)`` does the same with every row of the given joints (a train
of cars on bogies: its couplers and swivels) and returns each joint's impulses.
``hang_joints(world)`` lists a world's couplers and its suspended cars' hinges and dampers, the
joints whose rows ``exact_joint_impulses`` and ``exact_bounded_solve`` solve for suspended trains.
"""
from __future__ import annotations

import numpy as np

from trackrider.physics.sections import SECTIONS


def _one_step(w, iterations, bounded):
    """The stages of one step up to its solve on copies of ``w``'s state: (world records, temps)."""
    import copy

    from trackrider.physics import kernels as kn
    from trackrider.physics import state as st

    w._build()
    rec = w.records
    copy_rec = lambda r: type(r)(*[np.copy(x) if isinstance(x, np.ndarray) else x for x in r])  # noqa: E731
    world = st.WorldState(rec.tracks, copy_rec(rec.bodies), copy_rec(rec.cars), rec.sections, rec.res,
                          copy_rec(rec.joints), rec.programs)
    tmp = copy.deepcopy(w._temps)
    h = w.dt
    cfg = st.Step(h, 0.0, 0.0, -w.gravity, w.gravity, w.erp / h, iterations, w.warm_start, 1, 1)
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


def _section_row(kind, speed, fmax, h, v):
    """(target, lower, upper) of a section row (docs/physics.md "Sections"), written again here."""
    F = fmax * h
    forward = v >= 0.0
    if kind == SECTIONS["lift"].code:
        return speed, 0.0, F
    if kind == SECTIONS["brake"].code:
        return 0.0, -F, F
    if kind == SECTIONS["launch"].code:
        return (speed, 0.0, F) if forward else (-speed, -F, 0.0)
    if kind == SECTIONS["trim"].code:
        return (speed, -F, 0.0) if forward else (-speed, 0.0, F)
    return (speed, -F, F) if forward else (-speed, -F, F)


def _body_mobilities(bodies):
    """W of every body (6×6 blocks: 1/m, R I⁻¹ Rᵀ)."""
    from trackrider.physics import kernels as kn

    out = []
    R = np.zeros((3, 3))
    for b in range(bodies.pos.shape[0]):
        kn.quat_to_mat(bodies.quat[b], R)
        m = np.zeros((6, 6))
        m[:3, :3] = np.eye(3) * bodies.inv_mass[b]
        m[3:, 3:] = R @ np.diag(bodies.inv_ib[b]) @ R.T
        out.append(m)
    return out


def exact_joint_impulses(w, joints):
    """The step's equality rows solved directly: rows 1–5 of every car on its track (row 2 only with
    its support) and every row of the joints ``joints`` (indices into ``w.ji``; each kind's rows as
    the kernel prepared them this step), ``(J W Jᵀ + Γ) λ = t − J u*`` with ``J`` (sparse) and
    ``W`` (block diagonal) assembled here over all bodies, solved by a sparse LU. Returns (kernel,
    exact): per joint its impulses (one array of its rows) after the kernel's solve, and exact.
    A body's two swivels that both hold its roll (row 3) have one roll row between them, the sum
    of the two, and one impulse (docs/physics.md "Bogies")."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    world, tmp = _one_step(w, w.iterations, False)
    bodies, cars = world.bodies, world.cars
    nb = bodies.pos.shape[0]
    G, tgt = tmp.trk.J, tmp.trk.target
    I, C, V, t, gam, where = [], [], [], [], [], []

    def add(body, vec):
        for k in range(6):
            if vec[k] != 0.0:
                I.append(len(t)); C.append(6 * body + k); V.append(vec[k])

    for b in range(w.ncars):
        if cars.held[b]:
            for r in range(5):
                if r != 1 or cars.support[b]:
                    add(b, G[b, r]); t.append(tgt[b, r]); gam.append(0.0); where.append(-1)
    rear, rows = _joint_rows(w, tmp, joints)
    for j, _, parts, t_, gam_ in rows:
        for body, vec in parts:
            if body >= 0:
                add(body, vec)
        t.append(t_); gam.append(gam_); where.append(j)
    J = sp.csr_matrix((V, (I, C)), shape=(len(t), 6 * nb))
    Wm = sp.block_diag(_body_mobilities(bodies), format="csr")
    u_star = np.hstack([tmp.scratch.vel0, tmp.scratch.omg0])[:nb].reshape(-1)
    lam = spla.spsolve((J @ Wm @ J.T + sp.diags(np.array(gam))).tocsc(), np.array(t) - J @ u_star)
    where = np.array(where)
    exact = {j: lam[where == j] for j in joints}
    for jr, jf in rear.items():
        exact[jr] = np.append(exact[jr], exact[jf][3])
    kernel = {j: world.joints.lam[j, :int(tmp.rows.m[j])].copy() for j in joints}
    return kernel, exact


def _joint_rows(w, tmp, joints):
    """The step's rows of ``joints``: ({rear swivel: front swivel} of the bodies whose two swivels
    share one roll row, [(joint, row, [(body, J part)], target, gamma)]). A body's two swivels that both
    hold its roll (row 3) have one roll row between them, the sum of the two, and one impulse
    (docs/physics.md "Bogies"); it is listed under the front swivel."""
    from trackrider.physics.joints import CODES
    from trackrider.physics.joints.common import JI_A, JI_B, JI_KIND

    rolls = {}                     # body: its swivels with a roll row, front first
    for j in joints:
        if w.ji[j, JI_KIND] == CODES["swivel"] and tmp.rows.m[j] == 4:
            rolls.setdefault(int(w.ji[j, JI_B]), []).append(j)
    rear = {js[1]: js[0] for js in rolls.values() if len(js) == 2}
    front = {f: r for r, f in rear.items()}
    out = []
    for j in joints:
        for r in range(3 if j in rear else int(tmp.rows.m[j])):
            js = [j] + ([front[j]] if r == 3 and j in front else [])
            parts = [(w.ji[q, e], tmp.rows.J[q, r, 6 * k:6 * k + 6]) for q in js for k, e in enumerate((JI_A, JI_B))]
            out.append((j, r, parts, sum(tmp.rows.target[q, r] for q in js), tmp.rows.gamma[j]))
    return rear, out


def hang_joints(w):
    """(couplers, hinges, dampers) of world ``w``: the chained couplers and every suspended car's
    swing hinge and its damper row (``hinge_axis``), joint indices into ``w.ji``, read from the
    joints' kinds and ends (the hanging bodies are ``cars.hang``), not from the kernel's grouping."""
    from trackrider.physics.joints import CODES
    from trackrider.physics.joints.common import JI_A, JI_B, JI_CHAIN, JI_KIND

    ji = w.ji
    hang = {int(b): int(w.records.cars.hang[b]) for b in range(w.ncars) if w.records.cars.hang[b] >= 0}
    ends = [(int(ji[j, JI_A]), int(ji[j, JI_B])) for j in range(ji.shape[0])]
    couplers = [j for j in range(ji.shape[0]) if ji[j, JI_CHAIN] == 1]
    hinges = [j for j, (a, b) in enumerate(ends) if ji[j, JI_KIND] == CODES["hinge"] and hang.get(a) == b]
    dampers = [j for j, (a, b) in enumerate(ends) if ji[j, JI_KIND] == CODES["hinge_axis"] and hang.get(a) == b]
    return couplers, hinges, dampers


def exact_bounded_solve(w, max_passes=5000, joint_list=None):
    """The same step as the kernel's, solved independently: every row of every car (track rows 1–5,
    chained couplers, the bounded rows along T: section, ratchet, friction) assembled into one
    sparse ``J``, block-diagonal ``W``: the box-constrained problem ``(J W Jᵀ + Γ) λ = t − J u*``
    (bounded rows softened as the kernel's: ``rows.ROW_SOFTNESS`` times the row's mobility with the
    equality rows in place), the equality rows
    eliminated by a sparse LU (Schur complement onto the bounded rows), the bounded rows solved by
    bounded-variable least squares (scipy's BVLS: an exact active-set method), the friction bounds
    iterated with the wheel impulses until they stop moving. Only for worlds of trains (no joint
    outside the chains); ``joint_list``: the joints whose rows (all of them) are the step's joint rows
    (a train of cars on bogies: its couplers and swivels), by default every joint's row 0.

    Returns (kernel, exact): dicts of ``section`` (section + ratchet impulse per car), ``friction``
    and ``coupler`` arrays (N·s)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from scipy.optimize import lsq_linear
    from trackrider.physics.joints.common import JI_A, JI_B, JI_CHAIN
    from trackrider.physics.rows import HOLD_SOFTNESS, ROW_SOFTNESS, SAME_TARGET

    world, tmp = _one_step(w, w.iterations, True)
    bodies, cars, joints, res, secs = world.bodies, world.cars, world.joints, world.res, world.sections
    if joint_list is None and not np.all(w.ji[:, JI_CHAIN] == 1):
        raise ValueError("exact_bounded_solve: only trains (every joint a chained coupler)")
    h, g = w.dt, w.gravity
    nb, n = bodies.pos.shape[0], w.ncars
    G, tgt = tmp.trk.J, tmp.trk.target
    u_star = np.hstack([tmp.scratch.vel0, tmp.scratch.omg0])[:nb].reshape(-1)
    Wb = _body_mobilities(bodies)
    I, Jc, V, t, gam, kind = [], [], [], [], [], []   # kind: -1 equality, else (car, row: 0 section, 1 ratchet, 2 friction)
    track_row = {}

    def add(row, t_, gam_, kind_):
        for body, vec in row:
            for k in range(6):
                if vec[k] != 0.0:
                    I.append(len(t)); Jc.append(6 * body + k); V.append(vec[k])
        t.append(t_); gam.append(gam_); kind.append(kind_)

    for b in range(n):
        if not cars.held[b]:
            continue
        for r in range(5):
            if r == 1 and not cars.support[b]:
                continue
            track_row[(b, r)] = len(t)
            add([(b, G[b, r])], tgt[b, r], 0.0, -1)
    first_coupler = len(t)
    if joint_list is None:
        sel = [(j, 0) for j in range(w.ji.shape[0])]
        for j, r in sel:
            a, b = w.ji[j, JI_A], w.ji[j, JI_B]
            add([(a, tmp.rows.J[j, r, :6]), (b, tmp.rows.J[j, r, 6:])], tmp.rows.target[j, r], tmp.rows.gamma[j], -1)
    else:               # every row of the joints (a body's shared roll row once, under its front swivel)
        rows = _joint_rows(w, tmp, joint_list)[1]
        sel = [(j, r) for j, r, *_ in rows]
        for _, _, parts, t_, gam_ in rows:
            add([(body, vec) for body, vec in parts if body >= 0], t_, gam_, -1)
    bounded = []   # (row index, car, which, lo, hi)
    for b in range(n):
        sec = cars.section[b]
        friction = res.rolling > 0.0 or cars.davis[b, 0] > 0.0
        if not cars.held[b] or (sec < 0 and not friction):
            continue
        f = tmp.scratch.row_t[b]
        gb = 0.0  # (added to the Schur complement below)
        if sec >= 0:
            tv, lo, hi = _section_row(int(secs.kind[sec]), secs.speed[sec], secs.fmax[sec], h, cars.speed0[b])
            bounded.append([len(t), b, 0, lo, hi]); add([(b, f)], tv, gb, (b, 0))
            if secs.kind[sec] == SECTIONS["lift"].code:
                bounded.append([len(t), b, 1, 0.0, np.inf]); add([(b, f)], 0.0, gb, (b, 1))
        if friction:
            bounded.append([len(t), b, 2, 0.0, 0.0]); add([(b, f)], 0.0, gb, (b, 2))
    nrow = len(t)
    J = sp.csr_matrix((V, (I, Jc)), shape=(nrow, 6 * nb))
    Wm = sp.block_diag(Wb, format="csr")
    K = (J @ Wm @ J.T + sp.diags(np.array(gam))).tocsr()
    rhs = np.array(t) - J @ u_star
    # Schur complement onto the bounded rows: the equality rows (track, couplers) eliminated by a
    # sparse LU, then a dense box-constrained least-squares problem (BVLS, an exact active-set
    # method) for the bounded rows: S = L Lᵀ, min ½ μᵀ S μ − μᵀ r_B = ½ |Lᵀ μ − L⁻¹ r_B|² + const
    if not bounded:
        raise ValueError("exact_bounded_solve: the step has no bounded rows")
    brow = np.array([item[0] for item in bounded], dtype=int)
    erow = np.setdiff1d(np.arange(nrow), brow)
    lu = spla.splu(K[erow][:, erow].tocsc())
    KEB = K[erow][:, brow].toarray()
    X = lu.solve(KEB)
    xr = lu.solve(rhs[erow])
    S = K[brow][:, brow].toarray() - KEB.T @ X
    S = 0.5 * (S + S.T)
    # the softness of a bounded row: ROW_SOFTNESS (ratchet, friction: HOLD_SOFTNESS) times its own
    # mobility with every equality row in place (S's diagonal: for a rigid train the train's)
    soft = np.array([ROW_SOFTNESS if item[2] == 0 else HOLD_SOFTNESS for item in bounded])
    gam_b = soft * np.diag(S)
    rb = rhs[brow] - KEB.T @ xr
    # rows of one set point (one train, one class, targets within SAME_TARGET) act as one row
    # (docs/physics.md, "Rows that share a load"): a rigid train's S is s sᵀ on them, so their
    # right-hand side is projected onto s (the least-squares consistent targets) and they share one
    # softness, the class's times their mean mobility
    tb = np.array(t)[brow]
    train_of = np.array([w.entity_train[item[1]] for item in bounded])
    cls = np.array([0 if item[2] == 0 else 1 for item in bounded])
    done = np.zeros(len(bounded), bool)
    for i in range(len(bounded)):
        if done[i]:
            continue
        g = np.flatnonzero(~done & (train_of == train_of[i]) & (cls == cls[i]) & (np.abs(tb - tb[i]) <= SAME_TARGET))
        g = g[g >= i]
        done[g] = True
        if len(g) < 2:
            continue
        sv = S[g[0], g] / np.sqrt(S[g[0], g[0]])
        # S is s sᵀ on the group to rounding (one free motion). The rounding left by the Schur
        # complement (~1e-13 of S here), divided by the rows' small softness, would decide the split
        # at ~1e-5 of the load, so the group's block is its rank-one form exactly
        Sg = S[np.ix_(g, g)]
        if np.abs(Sg - np.outer(sv, sv)).max() > 1e-9 * np.abs(Sg).max():
            raise ValueError("exact_bounded_solve: a group of rows whose train has more than one free motion")
        S[np.ix_(g, g)] = np.outer(sv, sv)
        rb[g] = sv * (sv @ rb[g]) / (sv @ sv)
        gam_b[g] = soft[g] * np.mean(np.diag(S)[g])
    S[np.diag_indices_from(S)] += gam_b
    lam = np.zeros(nrow)

    def friction_bounds():
        for item in bounded:
            b = item[1]
            if item[2] != 2:
                continue
            if res.nl2:
                bound = bodies.mass[b] * res.rolling * g * h
            else:
                l1 = lam[track_row[(b, 0)]] + cars.transport[b, 0]
                l2 = (lam[track_row[(b, 1)]] if (b, 1) in track_row else 0.0) + cars.transport[b, 1]
                bound = res.rolling * np.hypot(l1, l2) + cars.davis[b, 0] * h
            item[3], item[4] = -bound, bound

    friction_bounds()
    tol = 1e-9 * float(np.max(bodies.mass)) * g * h
    for _ in range(max_passes):
        lo = np.array([item[3] for item in bounded])
        hi = np.array([item[4] for item in bounded])
        mu = np.where(lo == hi, lo, 0.0)
        free = lo < hi
        if np.any(free):
            Sf = S[np.ix_(free, free)]
            L = np.linalg.cholesky(Sf)
            rf = rb[free] - S[np.ix_(free, ~free)] @ mu[~free]
            sol = lsq_linear(L.T, np.linalg.solve(L, rf), bounds=(lo[free], hi[free]), method="bvls", tol=1e-15,
                             max_iter=100 * Sf.shape[0])
            mu[free] = sol.x
        lam[brow] = mu
        lam[erow] = xr - X @ mu
        old = hi.copy()
        friction_bounds()
        if np.all(np.abs(np.array([item[4] for item in bounded]) - old) <= tol):
            break
    else:
        raise RuntimeError("exact_bounded_solve: the friction bounds did not settle")
    exact = {"section": np.zeros(n), "friction": np.zeros(n),
             "coupler": lam[first_coupler:first_coupler + len(sel)].copy()}
    for row, b, which, lo, hi in bounded:
        exact["friction" if which == 2 else "section"][b] += lam[row]
    kernel = {"section": (cars.lam_motor + cars.lam_ratchet)[:n].copy(), "friction": cars.lam_friction[:n].copy(),
              "coupler": np.array([joints.lam[j, r] for j, r in sel])}
    return kernel, exact


def bounded_row_error(w):
    """Relative error of the step's bounded rows (section + ratchet, friction) and couplers after
    the kernel's solve, against ``exact_bounded_solve`` of the same step: each the largest
    impulse difference over the largest impulse of that kind (nan when the step has none)."""
    kernel, exact = exact_bounded_solve(w)
    out = {}
    for key in ("section", "friction", "coupler"):
        scale = float(np.max(np.abs(exact[key]))) if exact[key].size else 0.0
        out[key] = float(np.max(np.abs(kernel[key] - exact[key]))) / scale if scale > 0.0 else float("nan")
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
