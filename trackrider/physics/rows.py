"""Bounded rows: the generic projected Gauss–Seidel update of joint row blocks (docs/physics.md §4; a
joint's rows come from its kind, ``joints/``, nothing here depends on the kind), and the cars'
bounded rows along T (targets, bounds, softness), which are solved with the chain
(``couplings.train_rows_scalar``, ``kernels.solve_car_rows``)."""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics.maths import invert_spd, row_mobility, row_velocity  # noqa: F401
from trackrider.physics.track_joint import apply_impulse


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def joint_block(j, joints, rows, trk, K):
    """K = J W̃ Jᵀ + γ I (m×m) of joint ``j``."""
    a = joints.a[j]
    b = joints.b[j]
    m = rows.m[j]
    jJ, Wt, Wn = rows.J, trk.mobility, trk.rank1
    for r in range(m):
        for c in range(m):
            s = 0.0
            if a >= 0:
                s += row_mobility(a, jJ[j, r, 0:6], jJ[j, c, 0:6], Wt, Wn)
            if b >= 0:
                s += row_mobility(b, jJ[j, r, 6:12], jJ[j, c, 6:12], Wt, Wn)
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


# The cars' bounded rows along T: section row (motor/brake, row 6), anti-rollback ratchet and rolling
# friction share J = f = [T, r_m × T] (T·v_A):
#   section: target v_set, bounds [F_min h, F_max h] by section kind; ratchet target 0, [0, ∞);
#   friction target 0, bounds ±(μ·|wheel force| + Davis A) h  or ±m μ g h ("nl2").
# They are solved exactly with the chain (``couplings.train_rows_scalar``, ``kernels.solve_car_rows``).
# Each row has a small softness γ (a free row holds J·u = target − γ λ): ROW_SOFTNESS · S for section
# rows, HOLD_SOFTNESS · S for the ratchet and friction rows, S the row's mobility in its train
# (``couplings.train_mode``: s²; a car's own f W̃ fᵀ when a train is not rigid, whose rows then
# alternate with the chain solve): a free section row holds its speed to within 3e-5 of the velocity
# change its impulse makes in the step (a launch at full thrust 6e-7 m/s below its speed, a train
# held on a 5° grade by a brake creeps at 3e-8 m/s), a ratchet or friction row to within 1e-8. Rows
# of one rigid train that are one set point (targets within SAME_TARGET) share one target and one
# softness and split their load by least squares (``couplings.group_rows``, docs/physics.md).
ABSENT = 0   # CarRows.present: the car has no such row this step
PRESENT = 1
ROW_SOFTNESS = 3e-5
HOLD_SOFTNESS = 1e-8     # ratchet and friction rows: they hold a car at rest
MAX_PASSES = 50          # rigid trains: passes while the friction bounds move (3-6 in practice)
SAME_TARGET = 1e-3       # m/s: rows of one train whose targets differ by less are one set point
MAX_GROUPS = 16          # groups of redundant rows per train (couplings.group_rows)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def friction_bound(b, cfg, bodies, cars, res, lamT):
    """Impulse bound of car ``b``'s friction row from this step's wheel impulses (rows 1, 2 and the
    transport's share): μ·|(λ1, λ2)| + A h, or m μ g h in nl2 mode; plus a railway car's air brake
    (``cars.brake`` h, docs/physics.md §10)."""
    if res.nl2:
        bound = cars.drag[b, 1] * res.rolling * cfg.gmag * cfg.h
    else:
        l1 = lamT[b, 0] + cars.transport[b, 0]
        l2 = lamT[b, 1] + cars.transport[b, 1]
        bound = res.rolling * np.sqrt(l1 * l1 + l2 * l2) + cars.davis[b, 0] * cfg.h
    if cars.brake[b] > 0.0:
        bound += cars.brake[b] * cfg.h
    return bound
