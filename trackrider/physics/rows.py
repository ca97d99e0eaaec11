"""The generic solve of bounded rows: projected Gauss–Seidel over joint row blocks and the
cars' scalar rows along T (PHYSICS.md §4). A joint's rows come from its kind (``joints/``);
nothing here depends on the kind."""
from __future__ import annotations

from trackrider.jit import njit
from trackrider.physics.maths import apply_impulse, invert_spd, row_mobility, row_velocity


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_block(j, joints, rows, trk, K):
    """K = J W̃ Jᵀ + γ I (m×m) of joint ``j``."""
    a = joints.a[j]
    b = joints.b[j]
    m = rows.m[j]
    jJ, Wt = rows.J, trk.mobility
    for r in range(m):
        for c in range(m):
            s = 0.0
            if a >= 0:
                s += row_mobility(a, jJ[j, r, 0:6], jJ[j, c, 0:6], Wt)
            if b >= 0:
                s += row_mobility(b, jJ[j, r, 6:12], jJ[j, c, 6:12], Wt)
            K[r, c] = s
        K[r, r] += rows.gamma[j]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_velocity(j, r, joints, rows, bodies):
    """J·u of row ``r`` of joint ``j``."""
    a = joints.a[j]
    b = joints.b[j]
    s = 0.0
    if a >= 0:
        s += row_velocity(a, rows.J[j, r, 0:6], bodies.vel, bodies.omg)
    if b >= 0:
        s += row_velocity(b, rows.J[j, r, 6:12], bodies.vel, bodies.omg)
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_apply(j, r, dl, joints, rows, trk, cars, bodies):
    """Apply impulse ``dl`` of row ``r`` of joint ``j`` to both its bodies."""
    a = joints.a[j]
    b = joints.b[j]
    if a >= 0:
        apply_impulse(a, rows.J[j, r, 0:6], dl, trk, cars, bodies)
    if b >= 0:
        apply_impulse(b, rows.J[j, r, 6:12], dl, trk, cars, bodies)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_joint_pgs(j, joints, rows, trk, cars, bodies, wk):
    """One projected Gauss–Seidel update of a bounded (or unchained) joint; its m rows as one block.

    Returns the largest change of an impulse (N·s), for the convergence test.
    """
    K, Kinv, work = wk.K, wk.Kinv, wk.M
    jlam = joints.lam
    m = rows.m[j]
    joint_block(j, joints, rows, trk, K)
    if m == 1:
        if K[0, 0] <= 0.0:
            return 0.0
        Kinv[0, 0] = 1.0 / K[0, 0]
    else:
        invert_spd(K, m, Kinv, work)
    for r in range(m):  # residuals (work row 7)
        work[7, r] = rows.target[j, r] - joint_velocity(j, r, joints, rows, bodies) - rows.gamma[j] * jlam[j, r]
    dmax = 0.0
    for r in range(m):
        dl = 0.0
        for c in range(m):
            dl += Kinv[r, c] * work[7, c]
        old = jlam[j, r]
        new = min(max(old + dl, rows.lo[j, r]), rows.hi[j, r])  # one-sided rows are scalar (m = 1)
        dl = new - old
        jlam[j, r] = new
        if dl != 0.0:
            joint_apply(j, r, dl, joints, rows, trk, cars, bodies)
        dmax = max(dmax, abs(dl))
    return dmax


# Motor (row 6), anti-rollback ratchet and rolling friction share J = [T, r_m × T] (T·v_A):
#   motor target v_set, bounds [F_min h, F_max h] by section kind; ratchet target 0, [0, ∞);
#   friction target 0, bounds ±(μ·|wheel force| + Davis A) h  or ±m μ g h ("nl2").
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def solve_car_row(b, f, target, lam_old, lo, hi, trk, cars, bodies):
    """Scalar PGS update of a car row along T; returns the new accumulated impulse."""
    k = row_mobility(b, f, f, trk.mobility)
    if k <= 0.0:
        return lam_old
    dl = (target - row_velocity(b, f, bodies.vel, bodies.omg)) / k
    new = min(max(lam_old + dl, lo), hi)
    dl = new - lam_old
    if dl != 0.0:
        apply_impulse(b, f, dl, trk, cars, bodies)
    return new
