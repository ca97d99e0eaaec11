"""Kernels of a ride's operation: trains that meet, held block sections, and the watch that hands
control back to Python at block boundaries (docs/physics.md, "Trains that meet"; docs/physics.md §8).

Trains that meet. Consecutive trains on one track (ordered along +s; on a closed track the last
is followed by the first) are joined by a one-sided *contact row* between the front car of the
train behind and the rear car of the train ahead. Its Jacobian is each car's row along the
tangent at its anchor, ``J = [−(T, r_m×T) behind, +(T, r_m×T) ahead]``, so ``J u`` is the rate of
change of the gap between the two cars' ends along the track (``ds_ahead/dt − ds_behind/dt``).
The gap is ``g = wrap(s_ahead − s_behind) − touch`` (``touch``: half the two cars' lengths). The
row is speculative (the gap may close by at most ``g`` in the step) and one-sided, ``λ ≥ 0``:

    J u ≥ −g/h  (g ≥ 0)        J u ≥ −erp/h · g  (g < 0: push back out)
    J u ≥ e · v_c              when the contact closes within the step at v_c > 0.05 m/s

(``e``: restitution; ``v_c``: closing speed at the start of the step). Its effective mass is that
of the two *trains*, not of two cars: with every coupler row of a train held exact by the chain
solve (``couplings.py``), the compliance of a row on the chain's end car is the Schur complement

    k = f W̃ fᵀ − (f W̃ H_endᵀ)² (S⁻¹)_end,end

(``S`` the chain's tridiagonal coupler matrix, ``H_end`` the coupler at that end). With
``S = L D Lᵀ`` (the Thomas factorisation of ``factor_chain``), ``(S⁻¹)_last = 1/D'_last`` and
``(S⁻¹)_00 = Σ_k y_k²/D'_k`` with ``y_0 = 1, y_k = −(F_{k−1}/D'_{k−1}) y_{k−1}``. A train of cars
on bogies is solved by its car blocks instead (``car_blocks.py``; its chain's links are never
factored): there ``k = f W̃ fᵀ − rᵀ S⁻¹ r`` with ``r = J W̃ fᵀ`` over the blocks' rows on the end
frame, ``S⁻¹ r`` by one solve of the factored blocks (``_blocks_end_compliance``). A projected
Gauss–Seidel update with this ``k``, followed by the chain solves, makes the contact exact in one
iteration when no other bounded row acts on those cars; otherwise the usual iterations converge.
Impulses are equal and opposite along the track: momentum along the track is conserved.

Held sections. A block section's mode (set by ``trackrider.physics.blocks`` between kernel
calls): 0 its kind's own behaviour, 1 *hold* — drive and brake (±max_force) towards the speed
profile ``min(speed, √(2 a d))`` that stops the train's lead car at ``hold_s`` (``d`` its
distance to go; a car knows its distance to its lead car, ``lead_off``), 2 *drive* — drive and
brake towards ``speed`` like a booster (a station dispatching, a block brake passing trains);
both towards ``sdir`` along s (+1, or −1 for a train running towards −s: its lead car is then
the one in front that way, and ``hold_s`` is measured from the section's ``from``).

The watch. After each step every car's move from ``s_old`` to ``s`` is checked against the
watch points of its track (block starts, block sections' ends, station stop marks); a crossing,
reaching step ``until``, or a row in a track network's log (a change of track, a switch set),
ends ``run_chunk`` early (status 2) so the Python block logic runs.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from trackrider.curves.compact import C_T
from trackrider.jit import njit
from trackrider.physics.car_blocks import F_Y, G_N, G_ROWS, W_C, _third, block_solve
from trackrider.physics.maths import cross, row_mobility, row_velocity
from trackrider.physics.track_joint import apply_impulse

#: closing speeds below this are resting contact, not collisions (m/s)
COLLISION_SPEED = 0.05
#: a contact row is set up when the gap could close to within this in the step (m)
CONTACT_MARGIN = 0.02
#: hits kept per kernel call (a call ends early when the buffer fills)
MAX_HITS = 64

Ops = namedtuple("Ops", [
    # sections (ns,): mode 0 own / 1 hold / 2 drive, the lead car's stop point, the profile's
    # deceleration, the track's length if closed (else 0), the way (along s, ±1) the train held
    # or driven runs
    "mode", "hold_s", "decel", "loop", "sdir",
    # cars (ncars,): its lead car's s less its own (the lead: the car in front the way its train
    # runs), s before the step
    "lead_off", "s_old",
    # contacts (nc,): front car of the train behind, rear car of the train ahead, anchor distance
    # when touching, track loop length (0 open), chain of each train (−1 none)
    "behind", "ahead", "touch", "cloop", "chain_b", "chain_a",
    # contacts, work: impulse, target, compliance, rows (nc, 6), closing speed at the step's start,
    # active this step, touching at the end of the last step
    "lam", "target", "k", "row_b", "row_a", "closing", "active", "was",
    # hits (MAX_HITS, 3): step, contact, closing speed; nhits (1,)
    "hits", "nhits",
    # watch: points (np,) m and their track (np,); stop at step ``until[0]`` (−1 never)
    "points", "ptrack", "until",
    # scalars
    "restitution",
])


def make_ops(n_sections: int, n_cars: int, n_contacts: int, n_points: int, restitution: float) -> Ops:
    """Zeroed operation arrays (filled by ``World._build`` and ``blocks.Operation``)."""
    z, zi = np.zeros, (lambda n: np.zeros(n, np.int64))
    ns, ncar, nc, npt = max(n_sections, 1), max(n_cars, 1), max(n_contacts, 1), max(n_points, 1)
    return Ops(zi(ns), z(ns), z(ns), z(ns), np.ones(ns), z(ncar), z(ncar),
               np.full(nc, -1, np.int64)[:n_contacts], np.full(nc, -1, np.int64)[:n_contacts],
               z(nc)[:n_contacts], z(nc)[:n_contacts], np.full(nc, -1, np.int64)[:n_contacts],
               np.full(nc, -1, np.int64)[:n_contacts],
               z(nc), z(nc), z(nc), z((nc, 6)), z((nc, 6)), z(nc), zi(nc), zi(nc),
               z((MAX_HITS, 3)), zi(1), z(npt)[:n_points], zi(npt)[:n_points], np.full(1, -1, np.int64),
               float(restitution))


def idle_ops(n_sections: int, n_cars: int) -> Ops:
    """The ``Ops`` of a world with no contacts between trains and no block sections: no contact, no
    watch point, and no ``until`` entry (``run_chunk`` runs none of the operation's kernels then;
    passing a record rather than None keeps one compiled kernel for every world)."""
    ops = make_ops(n_sections, n_cars, 0, 0, 0.0)
    return ops._replace(until=ops.until[:0])


# ----------------------------------------------------------------------------- held sections
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def held_row(ops, sec, speed, fmax, h, s, b, dirb):
    """(target, lo, hi) of car ``b``'s section row in a section whose mode is hold (1) or drive (2):
    towards ``ops.sdir[sec]`` (±1) along s, so along the car's own T (``dirb``: ±1, the way it
    faces) towards ``sdir · dirb``."""
    F = fmax * h
    sd = ops.sdir[sec] * dirb
    if ops.mode[sec] == 2:
        return sd * speed, -F, F
    d = ops.sdir[sec] * (ops.hold_s[sec] - (s + ops.lead_off[b]))
    L = ops.loop[sec]
    if L > 0.0:
        d = (d + 0.5 * L) % L - 0.5 * L
    if d <= 0.0:
        return 0.0, -F, F
    return sd * min(speed, np.sqrt(2.0 * ops.decel[sec] * d)), -F, F


# ----------------------------------------------------------------------------- contacts
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _car_row_t(b, bodies, cars, f):
    """f = (T, r_m × T): car ``b``'s row along the tangent at its anchor (r_m = −cg·up)."""
    fr = cars.frame[b]
    R = bodies.rot[b]
    cg = cars.cg[b]
    rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
    c0, c1, c2 = cross(rx, ry, rz, fr[C_T], fr[C_T + 1], fr[C_T + 2])
    f[0], f[1], f[2] = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    f[3], f[4], f[5] = c0, c1, c2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _chain_end_compliance(b, f, t, chains, joints):
    """(f W̃ H_endᵀ)² (S⁻¹)_end,end: what the chain of train ``t`` takes off car ``b``'s own
    compliance f W̃ fᵀ (0 when ``t`` has no chain or ``b`` is not one of its end cars)."""
    if t < 0 or chains.count[t] == 0:
        return 0.0
    j0, n = chains.first[t], chains.count[t]
    jl = j0 + n - 1
    cw, cd, cf = chains.w, chains.d, chains.f
    if joints.a[j0] == b:
        g = 0.0
        for i in range(6):
            g += cw[j0, i] * f[i]
        y = 1.0
        sinv = 1.0 / cd[j0]
        for k in range(1, n):
            y = -cf[j0 + k - 1] / cd[j0 + k - 1] * y
            sinv += y * y / cd[j0 + k]
            if y * y < 1e-30:
                break
        return g * g * sinv
    if joints.b[jl] == b:
        g = 0.0
        for i in range(6):
            g += cw[jl, 6 + i] * f[i]
        return g * g / cd[jl]
    return 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def _block_row_on(b, f, g, k, grp, wp, joints):
    """Row ``k`` of car-block group ``g`` times W̃ fᵀ on frame ``b`` (its W̃Jᵀ there, cached by
    ``factor_blocks``: W̃ is symmetric); 0 when the row does not act on ``b``."""
    j = grp[g, G_ROWS + 2 * k]
    x, c = _third(grp, g, k, joints)
    s = 0.0
    for e in range(3):
        body = joints.a[j] if e == 0 else joints.b[j] if e == 1 else c
        if body == b:
            o = 6 * e if e < 2 else W_C
            for i in range(6):
                s += f[i] * wp[g, k, o + i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _blocks_end_compliance(b, f, t, blk, joints):
    """rᵀ S⁻¹ r, r = J W̃ fᵀ: what the car blocks of train ``t`` (cars on bogies, ``car_blocks.py``,
    factored this step) take off frame ``b``'s own compliance f W̃ fᵀ for a row ``f`` on it (S⁻¹ r:
    one solve of the blocks; their solution column is scratch)."""
    grp, wp, fac = blk.group, blk.wp, blk.fac
    g0, ng = blk.train[t, 0], blk.train[t, 1]
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            fac[g, k, F_Y] = _block_row_on(b, f, g, k, grp, wp, joints)
    block_solve(t, blk)
    out = 0.0
    for g in range(g0, g0 + ng):
        for k in range(grp[g, G_N]):
            out += _block_row_on(b, f, g, k, grp, wp, joints) * fac[g, k, F_Y]
    return out


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _train_end_compliance(b, f, t, tmp, joints):
    """What train ``t``'s exact solve (−1: none) takes off end car ``b``'s compliance f W̃ fᵀ: its car
    blocks' (cars on bogies: the chain's links are never factored) or its chain's."""
    if t >= 0 and tmp.blocks.train[t, 1] > 0:
        return _blocks_end_compliance(b, f, t, tmp.blocks, joints)
    return _chain_end_compliance(b, f, t, tmp.chains, joints)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare_contacts(cfg, bodies, cars, joints, ops, tmp):
    """Rows, targets and compliances of the contacts that may act this step, and their warm
    start (after the chains are factored). Returns True if any contact is active."""
    h = cfg.h
    any_active = False
    for c in range(ops.behind.shape[0]):
        bb, ba = ops.behind[c], ops.ahead[c]
        ops.active[c] = 0
        if not (cars.held[bb] and cars.held[ba]):
            ops.lam[c] = 0.0
            continue
        d = cars.s[ba] - cars.s[bb]
        if ops.cloop[c] > 0.0:
            d = d % ops.cloop[c]
        gap = d - ops.touch[c]
        vc = cars.speed0[bb] - cars.speed0[ba]   # closing speed at the start of the step
        ops.closing[c] = vc
        if gap - h * max(vc, 0.0) > CONTACT_MARGIN and ops.lam[c] == 0.0:
            continue
        ops.active[c] = 1
        any_active = True
        fb, fa = ops.row_b[c], ops.row_a[c]
        _car_row_t(bb, bodies, cars, fb)
        _car_row_t(ba, bodies, cars, fa)
        Wt, Wn = tmp.trk.mobility, tmp.trk.rank1
        k = row_mobility(bb, fb, fb, Wt, Wn) + row_mobility(ba, fa, fa, Wt, Wn)
        k -= _train_end_compliance(bb, fb, ops.chain_b[c], tmp, joints)
        k -= _train_end_compliance(ba, fa, ops.chain_a[c], tmp, joints)
        ops.k[c] = k
        tgt = -gap / h if gap >= 0.0 else -cfg.erp_h * gap
        if ops.restitution > 0.0 and vc > COLLISION_SPEED and gap <= h * vc:
            tgt = max(tgt, ops.restitution * vc)
        ops.target[c] = tgt
        lam = ops.lam[c] * cfg.warm
        ops.lam[c] = lam
        if lam != 0.0:
            apply_impulse(bb, fb, -lam, tmp.trk, cars, bodies)
            apply_impulse(ba, fa, lam, tmp.trk, cars, bodies)
    return any_active


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def contacts_active(ops):
    """True if a contact row acts this step (``prepare_contacts`` set it up)."""
    for c in range(ops.active.shape[0]):
        if ops.active[c]:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_contacts(bodies, cars, ops, trk):
    """One projected Gauss–Seidel update of every active contact (λ ≥ 0); largest change."""
    dmax = 0.0
    for c in range(ops.behind.shape[0]):
        if not ops.active[c] or not ops.k[c] > 0.0:
            continue
        bb, ba = ops.behind[c], ops.ahead[c]
        fb, fa = ops.row_b[c], ops.row_a[c]
        ju = row_velocity(ba, fa, bodies.vel, bodies.omg) - row_velocity(bb, fb, bodies.vel, bodies.omg)
        old = ops.lam[c]
        new = max(old + (ops.target[c] - ju) / ops.k[c], 0.0)
        dl = new - old
        if dl != 0.0:
            ops.lam[c] = new
            apply_impulse(bb, fb, -dl, trk, cars, bodies)
            apply_impulse(ba, fa, dl, trk, cars, bodies)
            dmax = max(dmax, abs(dl))
    return dmax


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def finish_contacts(step, ops):
    """After the solve: a contact that starts pushing while closing faster than
    ``COLLISION_SPEED`` is a hit (kept for the collision events)."""
    for c in range(ops.behind.shape[0]):
        touching = 1 if (ops.active[c] and ops.lam[c] > 0.0) else 0
        if touching and not ops.was[c] and ops.closing[c] > COLLISION_SPEED:
            n = ops.nhits[0]
            if n < ops.hits.shape[0]:
                ops.hits[n, 0] = step
                ops.hits[n, 1] = c
                ops.hits[n, 2] = ops.closing[c]
                ops.nhits[0] = n + 1
        ops.was[c] = touching


# ----------------------------------------------------------------------------- the watch
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def keep_positions(cars, ops):
    for b in range(cars.n):
        ops.s_old[b] = cars.s[b]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def watch(step, cars, tracks, ops):
    """True when the Python block logic must run after this step: a car crossed a watch point of
    its track (either way), a car ran off, the hit buffer filled, step ``until`` is reached, or a
    track network logged a row (a car changed track, a switch moved: ``network.py``)."""
    if ops.until[0] >= 0 and step >= ops.until[0]:
        return True
    if tracks.nlog[0] > 0:
        return True
    if ops.nhits[0] >= ops.hits.shape[0] - 4:
        return True
    for b in range(cars.n):
        if not cars.held[b]:
            continue
        if not cars.on_track[b]:
            return True
        s0, s1 = ops.s_old[b], cars.s[b]
        t = cars.track[b]
        L = tracks.length[t]
        closed = tracks.closed[t]
        d = s1 - s0
        if closed:
            d = (d + 0.5 * L) % L - 0.5 * L
        if d == 0.0:
            continue
        for p in range(ops.points.shape[0]):
            if ops.ptrack[p] != t:
                continue
            x = ops.points[p] - s0
            if closed:
                x = (x + 0.5 * L) % L - 0.5 * L
            if (d > 0.0 and 0.0 < x <= d) or (d < 0.0 and d <= x < 0.0):
                return True
    return False
