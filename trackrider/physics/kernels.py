"""The step of the physics core and the run loop (numba): ``run_chunk`` and its stages.

Every kernel takes a few named records (``state.py``): ``bodies``, ``cars``, ``joints``,
``tracks``, ``sections``, ``res`` (resistance), ``cfg`` (the step's settings) and the work
records ``tmp`` (``trk``: track rows and mobilities, ``rows``: joint rows, ``chains``,
``scratch``, ``wk``: small temporaries). Units SI.

Mobility. Every body carries a 6×6 mobility W̃ (``trk.mobility``) used by all non-track rows:
for a free body it is ``W = diag(1/m, I_w⁻¹)``; for a car on its track it is the mobility
*with the track rows enforced*, ``W̃ = W − W Gᵀ A⁻¹ G W`` (``G`` the five track rows 1–5,
``A = G W Gᵀ``; a supported car on a fixed track has ``W̃ = n nᵀ/μ``, kept as its n and 1/μ in
``trk.rank1``, its entries made by ``maths.mobility_at``), and ``P = A⁻¹ G W`` (``trk.to_track``, 5×6;
such a car keeps ``Zᵀ M n/μ`` and its arm in ``trk.zr``, ``track_joint.closed_to_track``) maps a
generalised impulse ``f`` on the car to the track-row impulses that keep rows 1–5 satisfied
(``Δλ_T = −P f``). After one
exact projection onto rows 1–5 at the start of a step, every later impulse is applied through
``W̃`` so rows 1–5 stay exactly satisfied and their impulses stay exact: the 5×5 block of each
track joint is solved exactly (``track_joint.py``), for trains the coupler rows reduce to a
tridiagonal system solved exactly, and a rigid train's bounded rows along T (sections, ratchet,
friction) to one scalar equation solved exactly with it (``couplings.py``, ``solve_car_rows``).

The step is the list of stages in ``run_chunk``; joint kinds are in ``joints/``, the generic
bounded-row solve in ``rows.py``.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_DT, C_N, C_P, C_T, eval_track, shift_frame, wrap_arc_length
from trackrider.jit import njit, prange
from trackrider.physics import car_lanes
from trackrider.physics.row_lanes import rows_block, rows_plain
from trackrider.physics import channels as ch
from trackrider.physics.car_blocks import block_train_mode, factor_blocks, solve_train
from trackrider.physics.couplings import chain_block, factor_chain, train_car, train_mode, train_rows_scalar
from trackrider.physics.hang_blocks import answer_hangs, fold_hangs
from trackrider.physics.joints import distance
from trackrider.physics.joints.dispatch import J_DISTANCE, prepare_joint
from trackrider.physics.joints.swivel import watch as swivel_watch
from trackrider.physics.network import car_frame, pass_junction, regroup, reverse_frame, stage_switches
from trackrider.physics.maths import body_mobility, cross, mat_to_quat, mobility_at, quat_to_mat  # noqa: F401
from trackrider.physics.maths import closest_newton, closest_predictor, frame_turn, quat_step  # noqa: F401
from trackrider.physics.operation import (contacts_active, finish_contacts, held_row, keep_positions,
                                          prepare_contacts, solve_contacts, watch)
from trackrider.physics.railway import apply_gear_forces, apply_traction, gear_modes, rail_after, stage_rail
from trackrider.physics.rows import ABSENT, HOLD_SOFTNESS, MAX_PASSES, PRESENT, ROW_SOFTNESS
from trackrider.physics.rows import friction_bound, joint_apply, solve_joint_pgs
from trackrider.physics.sections import SECTIONS
from trackrider.physics.state import Work
from trackrider.physics.programs import record_joints, stage_programs
from trackrider.physics.track_joint import (apply_impulse, eval_track_point, fixed_track_block, prepare_track_block,
                                           project_track, in_closed_form, track_arm, track_rows_of,
                                           track_targets)
from trackrider.physics.carrier import (carrier_project, carrier_resistance, carrier_transport, factor_carrier_chains,
                                        keep_table_axes, move_frame, moving_row, moving_row_impulse, moving_track_block,
                                        relative_along, relative_speed, solve_carried_chains, to_table,
                                        transport_impulse, turn_relative)

# section type codes (``sections.SECTIONS``) and which types have the anti-rollback ratchet, by code
S_LIFT, S_LAUNCH, S_BRAKE = SECTIONS["lift"].code, SECTIONS["launch"].code, SECTIONS["brake"].code
S_TRIM, S_BOOSTER, S_STATION = SECTIONS["trim"].code, SECTIONS["booster"].code, SECTIONS["station"].code
HAS_RATCHET = np.array([t.ratchet for t in sorted(SECTIONS.values(), key=lambda t: t.code)])


# ----------------------------------------------------------------------------- stages
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_start_speed(b0, b1, bodies, cars, trk):
    """Each car's anchor speed along T before the step (for the accel channel); on a moving track
    relative to it (docs/physics.md §9). The cars among bodies ``b0`` … ``b1 − 1``."""
    vel, omg = bodies.vel, bodies.omg
    for b in range(b0, min(b1, cars.n)):
        fr = cars.frame[b]
        if trk.carrier[b] >= 0:
            if cars.has_prev[b]:
                cars.speed0[b] = relative_speed(b, bodies, cars, trk)
        elif cars.has_prev[b]:
            cg = cars.cg[b]
            R = bodies.rot[b]
            a0, a1, a2 = cross(omg[b, 0], omg[b, 1], omg[b, 2], -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
            cars.speed0[b] = ((vel[b, 0] + a0) * fr[C_T] + (vel[b, 1] + a1) * fr[C_T + 1]
                              + (vel[b, 2] + a2) * fr[C_T + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def update_rotations(bodies):
    """``bodies.rot[b]`` = the rotation matrix of ``bodies.quat[b]`` for every body (kept up to date
    by ``stage_integrate``; run at the start of a chunk, in case the quaternions were set from Python)."""
    for b in range(bodies.pos.shape[0]):
        quat_to_mat(bodies.quat[b], bodies.rot[b])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stage_frames(b0, b1, cars, sections):
    """The section each car is on (a change zeroes its section-row impulses); frames are current
    (``stage_integrate`` evaluates each car's frame right after its s update). The cars among bodies
    ``b0`` … ``b1 − 1``."""
    for b in range(b0, min(b1, cars.n)):
        cars.held[b] = cars.on_track[b]
        if cars.held[b]:
            t = cars.track[b]
            sec = -1
            for k in range(sections.kind.shape[0]):
                if sections.track[k] == t and sections.s_from[k] <= cars.s[b] <= sections.s_to[k]:
                    sec = k
                    break
            if sec != cars.section[b]:
                cars.lam_motor[b] = 0.0
                cars.lam_ratchet[b] = 0.0
                cars.section[b] = sec
        else:
            cars.section[b] = -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def keep_velocities(b0, b1, bodies, scratch):
    """Velocities at the start of the step (``scratch.vel0``, ``omg0``) of bodies ``b0`` … ``b1 − 1``."""
    for b in range(b0, b1):
        for i in range(3):
            scratch.vel0[b, i] = bodies.vel[b, i]
            scratch.omg0[b, i] = bodies.omg[b, i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def restore_velocities(bodies, scratch):
    """Back to the velocities at the start of the step (to redo it with new supports)."""
    for b in range(bodies.pos.shape[0]):
        for i in range(3):
            bodies.vel[b, i] = scratch.vel0[b, i]
            bodies.omg[b, i] = scratch.omg0[b, i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def has_bounded_rows(cars, joints, res, free_joints, car_rows):
    """True if any row of the step is bounded (joints outside a chain, sections, friction); a world
    without such joints (``free_joints`` False) or car rows (``car_rows`` False) skips their loop."""
    if free_joints:
        for j in range(joints.kind.shape[0]):
            if joints.chain[j] == 0:
                return True
    if not car_rows:
        return False
    for b in range(cars.n):
        if cars.held[b] and (cars.section[b] >= 0 or res.rolling > 0.0 or cars.davis[b, 0] > 0.0
                             or cars.brake[b] > 0.0):
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_transport(b0, b1, bodies, cars, carrier):
    """Transport each car's velocity with its frame (a car on a moving track: ``carrier.carrier_transport``,
    after this). The track turns a car's velocity field with its frame, R = F_new F_oldᵀ
    (parallel transport; a projection instead would lose (h v κ)² of the kinetic energy per
    step). The impulse it takes is a track-joint impulse, recorded with rows 1, 2 and 3.
    The cars among bodies ``b0`` … ``b1 − 1`` (``0, nb``: every car; a chunk: ``rows_chunk``).
    ``carrier``: ``trk.carrier``."""
    for b in range(b0, min(b1, cars.n)):
        transport_car(b, bodies, cars, carrier)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def transport_car(b, bodies, cars, carrier):
    """``stage_transport`` of car ``b``: each vector turned into the old frame's axes and out of the
    new one's (``maths.frame_turn``: 36 multiplies for the two, where forming R took 45)."""
    vel, omg = bodies.vel, bodies.omg
    tr = cars.transport[b]
    tr[0] = 0.0
    tr[1] = 0.0
    tr[2] = 0.0
    if cars.held[b] and cars.has_prev[b] and cars.support[b] and carrier[b] < 0:
        fr = cars.frame[b]
        pf = cars.prev_frame[b]
        v0, v1, v2 = vel[b, 0], vel[b, 1], vel[b, 2]
        w0, w1, w2 = omg[b, 0], omg[b, 1], omg[b, 2]
        vel[b, 0], vel[b, 1], vel[b, 2] = frame_turn(fr, pf, v0, v1, v2)
        omg[b, 0], omg[b, 1], omg[b, 2] = frame_turn(fr, pf, w0, w1, w2)
        transport_impulse(b, bodies, cars, v0, v1, v2, w0, w1, w2)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_forces(b0, b1, cfg, bodies, cars, res, carrier, kbody):
    """Gravity, the gyroscopic term and explicit resistance, after the transport; on a moving track the
    resistance acts on the speed relative to the track and the body takes its reaction
    (``carrier.carrier_resistance``). Bodies ``b0`` … ``b1 − 1`` (``0, nb``: all; a chunk: ``rows_chunk``).
    ``carrier``, ``kbody``: ``trk.carrier``, ``trk.kbody``."""
    for b in range(b0, b1):
        body_forces(b, cfg, bodies)
    for b in range(b0, min(b1, cars.n)):
        car_resistance(b, cfg, bodies, cars, res, carrier, kbody)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def body_forces(b, cfg, bodies):
    """Gravity and the gyroscopic term of body ``b`` (``stage_forces``)."""
    h = cfg.h
    vel, omg = bodies.vel, bodies.omg
    inv_ib, ib = bodies.inv_ib, bodies.ib
    if bodies.inv_mass[b] > 0.0:
        vel[b, 0] += h * cfg.gx
        vel[b, 1] += h * cfg.gy
        vel[b, 2] += h * cfg.gz
    Rb = bodies.rot[b]
    # gyroscopic: ω_body, L = I ω_body, Δω = −h I⁻¹ (ω × L)
    wb0 = Rb[0, 0] * omg[b, 0] + Rb[1, 0] * omg[b, 1] + Rb[2, 0] * omg[b, 2]
    wb1 = Rb[0, 1] * omg[b, 0] + Rb[1, 1] * omg[b, 1] + Rb[2, 1] * omg[b, 2]
    wb2 = Rb[0, 2] * omg[b, 0] + Rb[1, 2] * omg[b, 1] + Rb[2, 2] * omg[b, 2]
    t0, t1, t2 = cross(wb0, wb1, wb2, ib[b, 0] * wb0, ib[b, 1] * wb1, ib[b, 2] * wb2)
    d0, d1, d2 = -h * inv_ib[b, 0] * t0, -h * inv_ib[b, 1] * t1, -h * inv_ib[b, 2] * t2
    for i in range(3):
        omg[b, i] += Rb[i, 0] * d0 + Rb[i, 1] * d1 + Rb[i, 2] * d2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def car_resistance(b, cfg, bodies, cars, res, carrier, kbody):
    """The explicit resistance of car ``b`` (``stage_forces``)."""
    h = cfg.h
    pos, vel, omg = bodies.pos, bodies.vel, bodies.omg
    cars.f_explicit[b] = 0.0
    if cars.held[b]:
        fr = cars.frame[b]
        vt = vel[b, 0] * fr[C_T] + vel[b, 1] * fr[C_T + 1] + vel[b, 2] * fr[C_T + 2]
        moving = carrier[b] >= 0
        k = 0
        if moving:   # relative to the track
            k = kbody[carrier[b]]
            c0, c1, c2 = cross(omg[k, 0], omg[k, 1], omg[k, 2], pos[b, 0] - pos[k, 0], pos[b, 1] - pos[k, 1],
                               pos[b, 2] - pos[k, 2])
            vt -= (vel[k, 0] + c0) * fr[C_T] + (vel[k, 1] + c1) * fr[C_T + 1] + (vel[k, 2] + c2) * fr[C_T + 2]
        if res.nl2:
            F = -cars.drag[b, 1] * res.nl2_drag * vt * abs(vt)
        else:
            F = -(0.5 * res.air_density * cars.drag[b, 0] + cars.davis[b, 2]) * vt * abs(vt) - cars.davis[b, 1] * vt
        if F != 0.0:
            # an explicit force may at most stop the car in one step (no reversal)
            lim = abs(vt) * bodies.mass[b] / h
            if F > lim:
                F = lim
            elif F < -lim:
                F = -lim
            cars.f_explicit[b] = F
            dv = h * F * bodies.inv_mass[b]
            for i in range(3):
                vel[b, i] += dv * fr[C_T + i]
            if moving:
                carrier_resistance(b, k, h, F, bodies, cars)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_track_rows(b0, b1, cfg, bodies, cars, trk, wk):
    """Track blocks (rows 1–5, W̃, P) of every car and the exact projection of its velocity onto
    them; every other body's mobility W. The cars on a moving track get their blocks with the track
    body's columns (``carrier.moving_track_block``); ``stage_carriers`` projects them with it.
    Bodies ``b0`` … ``b1 − 1`` (``0, nb``: all; a chunk: ``rows_chunk``)."""
    for b in range(b0, b1):
        track_rows_body(b, cfg.erp_h, bodies, cars, trk, wk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def track_rows_body(b, erp_h, bodies, cars, trk, wk):
    """``stage_track_rows`` of body ``b``."""
    if b < cars.n and cars.held[b]:
        # its rows' targets, once for both forms below (an inlined function is typed once per place:
        # "Compile time")
        rx, ry, rz = track_arm(b, bodies, cars)
        t = track_targets(b, bodies, cars, erp_h, rx, ry, rz)
        if in_closed_form(b, cars, trk.carrier):   # the common case (W̃ of rank one)
            fixed_track_block(b, bodies, cars, rx, ry, rz, t, trk, wk)
        else:
            for r in range(5):
                trk.lam[b, r] = 0.0
            track_rows_of(b, cars, rx, ry, rz, t, trk)
            trk.rank1[b, 6] = 0.0
            prepare_track_block(b, bodies, cars, trk, wk)
            if trk.carrier[b] < 0:
                project_track(b, bodies, trk, wk)
            else:
                moving_track_block(b, bodies, cars, trk, wk)
    else:
        for r in range(5):
            trk.lam[b, r] = 0.0
        trk.rank1[b, 6] = 0.0
        body_mobility(b, bodies.rot, bodies.inv_mass, bodies.inv_ib, trk.mobility[b])


# A long train's per-car stages on all threads (a world of ``state.PARALLEL_BODIES`` bodies or more,
# without carriers: ``tmp.par``): from a step's start velocities to its track rows (transport, forces,
# track block and projection) and the integration, each a body's own arithmetic on its own arrays.
# Each chunk of bodies has its own work arrays (``state.Lanes``) and each body the same arithmetic as
# in the serial stages, so the results do not depend on the threads (docs/physics.md, "Both cores").
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def lane(par, c):
    """The ``Work`` of chunk ``c`` of ``par`` (``state.Lanes``)."""
    return Work(par.R[c], par.W[c], par.A[c], par.Ainv[c], par.M[c], par.K[c], par.Kinv[c], par.fr2[c], par.rr[c],
                par.lx[c])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def rows_chunk(b0, b1, cfg, bodies, cars, res, trk, wk):
    """``stage_transport``, ``stage_forces`` and ``stage_track_rows`` of bodies ``b0`` … ``b1 − 1`` (no
    carriers, no railway: each body's work reads and writes only its own arrays), by the blocks of
    ``car_lanes.NB`` cars of ``integrate_chunk`` (``rows_group``), then the bodies after the cars."""
    c1 = min(b1, cars.n)
    j0 = b0
    while j0 < b1:
        j1 = min(j0 + car_lanes.NB, c1) if j0 < c1 else b1
        rows_group(j0, j1, cfg, bodies, cars, res, trk, wk, False)
        j0 = j1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rows_group(j0, j1, cfg, bodies, cars, res, trk, wk, integrated):
    """``rows_chunk`` of bodies ``j0`` … ``j1 − 1``: a block of ``car_lanes.MIN_CARS`` cars or more whose
    blocks are in closed form (``row_lanes.rows_plain``) through the vector lanes (``row_lanes.rows_block``;
    ``integrated``: the lanes hold the block from its integration), any other stage by stage."""
    n = min(j1, cars.n) - j0
    if n >= car_lanes.MIN_CARS and rows_plain(j0, n, bodies, cars, trk.carrier):
        rows_block(j0, n, cfg, bodies, cars, res, trk, wk.lx, integrated)
    else:
        stage_transport(j0, j1, bodies, cars, trk.carrier)
        stage_forces(j0, j1, cfg, bodies, cars, res, trk.carrier, trk.kbody)
        stage_track_rows(j0, j1, cfg, bodies, cars, trk, wk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, parallel=True)
def par_rows(cfg, bodies, cars, res, trk, par):
    """``rows_chunk`` on all threads, by chunks of bodies."""
    nb, nc = bodies.pos.shape[0], par.W.shape[0]
    for c in prange(nc):
        rows_chunk(car_lanes.chunk_edge(c, nb, nc), car_lanes.chunk_edge(c + 1, nb, nc), cfg, bodies, cars, res, trk,
                   lane(par, c))


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def threaded_rows(cfg, bodies, cars, res, trk, par):
    """``par_rows`` when ``par`` (``tmp.par``) is not None and ``cfg.threaded``, then True; else False
    (and not compiled when ``par`` is None)."""
    if par is not None:
        if cfg.threaded != 0:
            par_rows(cfg, bodies, cars, res, trk, par)
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def integrate_chunk(b0, b1, h, tracks, bodies, cars, carrier, lam, E, wk):
    """``stage_integrate`` of bodies ``b0`` … ``b1 − 1``: each body's pose, then each car's s and frame
    (``0, nb``: the whole stage; a chunk, ``par_integrate``: no carriers and no network, where each car
    reads only its own body); ``wk``: work. Without a network or a moving track each car reads only
    its own body, and the cars go by blocks of ``car_lanes.NB``: a block of ``car_lanes.MIN_CARS`` plain
    cars or more through the vector lanes (``car_lanes.integrate_block``), any other through the scalar
    stages. Returns whether its last group went through the lanes (its numbers are then in ``wk.lx``)."""
    fr2 = wk.fr2
    lanes = car_lanes.lanes_allowed(tracks)
    laned = False
    c1 = min(b1, cars.n)
    # groups of bodies: without the lanes one, [b0, b1); with them each block of cars, then the bodies
    # after the cars (each of integrate_body and integrate_car written once: each is typed once per
    # place it is inlined, docs/physics.md "Compile time")
    j0 = b0
    while j0 < b1:
        j1 = min(j0 + car_lanes.NB, c1) if lanes and j0 < c1 else b1
        n = min(j1, c1) - j0   # its cars (none in the group after them)
        plain = lanes and n >= car_lanes.MIN_CARS and car_lanes.plain_block(j0, n, cars, carrier)
        laned = plain and car_lanes.integrate_block(j0, n, h, tracks, bodies, cars, lam, wk.lx)
        if not laned:
            if not plain:   # (a plain block the lanes gave back has moved its bodies)
                for b in range(j0, j1):
                    integrate_body(b, h, tracks, bodies, cars, carrier)
            for b in range(j0, j0 + max(n, 0)):
                integrate_car(b, tracks, bodies, cars, carrier, lam, E, fr2)
        j0 = j1
    return laned


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, parallel=True)
def par_integrate(h, tracks, bodies, cars, trk, par):
    """``integrate_chunk`` on all threads, by chunks of bodies."""
    nb, nc = bodies.pos.shape[0], par.fr2.shape[0]
    for c in prange(nc):
        integrate_chunk(car_lanes.chunk_edge(c, nb, nc), car_lanes.chunk_edge(c + 1, nb, nc), h, tracks, bodies, cars,
                        trk.carrier, trk.lam, trk.E,
                        lane(par, c))


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def threaded_integrate(cfg, tracks, bodies, cars, trk, par):
    """``par_integrate`` when ``par`` (``tmp.par``) is not None and ``cfg.threaded``, then True; else False
    (and not compiled when ``par`` is None)."""
    if par is not None:
        if cfg.threaded != 0:
            par_integrate(cfg.h, tracks, bodies, cars, trk, par)
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def step_chunk(c, b0, b1, cfg, tracks, bodies, cars, sections, res, joints, trk, rows, chains, scratch, wk):
    """Bodies ``b0`` … ``b1 − 1`` (chunk ``c``; −1: every body, serially) from one step's integration to
    the next step's track rows, block by block of ``car_lanes.NB`` cars: ``integrate_chunk``, then the
    next step's start (each car's start speed and section, the start velocities kept:
    ``stage_start_speed``, ``stage_frames``, ``keep_velocities``) and ``rows_group`` (a block the
    integration's lanes hold goes on in them); then the bodies after the cars; then (a chunk) the
    couplers of a chain made in blocks whose two cars are both in the chunk (``chains.jr``: their rows
    and their terms of the chain's factor, ``couplings.chain_block``). Each body's and each such
    coupler's work reads and writes only its own arrays (no carriers, no network, no railway)."""
    c1 = min(b1, cars.n)
    j0 = b0
    while j0 < b1:
        j1 = min(j0 + car_lanes.NB, c1) if j0 < c1 else b1
        laned = integrate_chunk(j0, j1, cfg.h, tracks, bodies, cars, trk.carrier, trk.lam, trk.E, wk)
        stage_start_speed(j0, j1, bodies, cars, trk)
        stage_frames(j0, j1, cars, sections)
        keep_velocities(j0, j1, bodies, scratch)
        rows_group(j0, j1, cfg, bodies, cars, res, trk, wk, laned)
        j0 = j1
    if c < 0:
        return
    for t in range(chains.jr.shape[0]):
        if chains.jr[t, c, 1] > chains.jr[t, c, 0]:
            chain_block(chains.jr[t, c, 0], chains.jr[t, c, 1], False, cfg.h, cfg.erp_h, chains, joints, bodies, rows,
                        trk, cars)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, parallel=True)
def par_step(cfg, tracks, bodies, cars, sections, res, joints, trk, rows, chains, scratch, par):
    """``step_chunk`` on all threads, by chunks of bodies: one parallel region between two steps
    where ``par_integrate`` and ``par_rows`` take two."""
    nb, nc = bodies.pos.shape[0], par.fr2.shape[0]
    for c in prange(nc):
        step_chunk(c, car_lanes.chunk_edge(c, nb, nc), car_lanes.chunk_edge(c + 1, nb, nc), cfg, tracks, bodies, cars,
                   sections, res, joints, trk, rows, chains, scratch, lane(par, c))


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def threaded_step(cfg, tracks, bodies, cars, sections, res, joints, tmp, par):
    """``par_step`` when ``par`` (``tmp.par``) is not None and ``cfg.threaded``, then True; else False
    (and not compiled when ``par`` is None)."""
    if par is not None:
        if cfg.threaded != 0:
            par_step(cfg, tracks, bodies, cars, sections, res, joints, tmp.trk, tmp.rows, tmp.chains, tmp.scratch, par)
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def serial_step(cfg, tracks, bodies, cars, sections, res, joints, tmp):
    """``step_chunk`` of every body on this thread (``run_chunk``: the chains made in blocks are then
    made whole by the next step's ``stage_joint_rows``); True."""
    step_chunk(-1, 0, bodies.pos.shape[0], cfg, tracks, bodies, cars, sections, res, joints, tmp.trk, tmp.rows,
               tmp.chains, tmp.scratch, tmp.wk)
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stage_joint_rows(cfg, bodies, cars, joints, tmp, free_joints, carried, done):
    """Every joint's rows (by kind, ``joints/``); each train's chain factored (``couplings.py``;
    ``carried``: the joints that hold a carrier are solved with it, ``stage_carriers``). A chain made in
    blocks (``chains.inner``) has its couplers' rows made with its factor; ``done``: each chunk of
    bodies made its block already (``step_chunk``)."""
    inner = tmp.chains.inner
    for j in range(joints.kind.shape[0]):
        if joints.chain[j] == 5:   # a bar the car blocks replace (car_blocks.py): never used
            continue
        if inner[j]:   # a coupler of a chain made in blocks: with its chain's factor
            continue
        if carried and joints.chain[j] == 2:   # holds a carrier, solved with it (stage_carriers)
            continue
        if joints.kind[j] == J_DISTANCE:   # a train's coupler, most often: inlined (distance.prepare)
            distance.prepare(j, joints, bodies, cfg.h, cfg.erp_h, tmp.rows, free_joints)
        else:
            prepare_joint(j, joints, bodies, cfg.h, cfg.erp_h, tmp.rows, free_joints)
    if tmp.hangs.joint.shape[0] > 0:   # suspended cars (hang_blocks.py); a call passes every array it takes
        fold_hangs(bodies, cars, joints, tmp.rows, tmp.trk, tmp.hangs)
    for t in range(tmp.chains.first.shape[0]):
        if tmp.blocks.train[t, 1] > 0:   # cars on bogies: swivels and couplers in blocks (car_blocks.py)
            factor_blocks(t, tmp.blocks, joints, tmp.rows, tmp.trk, cars)
        elif tmp.chains.count[t] > 0:
            factor_chain(t, tmp.chains, joints, tmp.rows, tmp.trk, cars, bodies, cfg.h, cfg.erp_h, done)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, part):
    """A world with moving tracks (docs/physics.md §9), by ``part`` of the step: 0 after
    ``stage_transport``, the transport of the cars on each carrier (``carrier.carrier_transport``);
    1 after ``stage_track_rows``, each carrier projected with its cars and the joint that holds it
    (``carrier.carrier_project``); 2 after ``stage_joint_rows``, the chains on each carrier
    factored with it (``carrier.factor_carrier_chains``). Only ``run_chunk``'s ``carried`` worlds
    call it: a world without moving tracks carries none of this in its stages."""
    trk = tmp.trk
    for k in range(trk.kbody.shape[0]):
        if part == 0:
            carrier_transport(k, tracks, bodies, cars, trk, tmp.wk, tmp.scratch)
        elif part == 1:
            carrier_project(k, cfg, bodies, cars, joints, tmp.rows, trk, tmp.wk, free_joints)
        else:
            factor_carrier_chains(k, tmp.chains, tmp.blocks, joints, tmp.rows, trk, cars, tmp.wk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def section_row(kind, speed, fmax, h, v):
    """(target speed, lower, upper impulse bound) of a car's section row for a section kind.

    ``v`` is the car's speed along T at the start of the step. A lift works towards +s only
    (it is a chain: a car rolling back is held by its ratchet); launch, trim and booster act
    in the car's direction of travel (towards −s when v < 0: target −speed, bounds mirrored);
    a brake holds either way. One branch per type of ``sections.SECTIONS``; a code without one is
    an error, never another type's rule.
    """
    F = fmax * h
    if kind == S_LIFT:
        return speed, 0.0, F
    if kind == S_BRAKE:
        return 0.0, -F, F
    if kind == S_LAUNCH:
        return (speed, 0.0, F) if v >= 0.0 else (-speed, -F, 0.0)
    if kind == S_TRIM:
        return (speed, -F, 0.0) if v >= 0.0 else (-speed, 0.0, F)
    if kind == S_BOOSTER or kind == S_STATION:   # a station dispatches as a booster (else blocks hold it)
        return (speed, -F, F) if v >= 0.0 else (-speed, -F, F)
    raise ValueError("a section type without its branch in kernels.section_row")


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def car_section_row(sections, sec, b, cars, h, ops):
    """(target, lo, hi) of car ``b``'s row in section ``sec``: its kind's, or, for a block section
    the block logic holds or drives (``ops.mode``), the held row (``operation.py``)."""
    if ops is not None:
        if ops.mode[sec] != 0:
            return held_row(ops, sec, sections.speed[sec], sections.fmax[sec], h, cars.s[b], b, cars.dir[b])
    tv, lo, hi = section_row(sections.kind[sec], sections.speed[sec], sections.fmax[sec], h, cars.speed0[b])
    if cars.dir[b] < 0.0 and sections.kind[sec] == S_LIFT:   # a lift pulls towards +s of its track
        return -tv, -hi, -lo
    return tv, lo, hi


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stage_warm_start(cfg, bodies, cars, sections, res, joints, tmp, free_joints, car_rows, ops):
    """Bounded rows start from their last impulses × ``cfg.warm`` (clamped to this step's bounds);
    chained couplers and the swivels of cars on bogies start from zero (their solve is exact). Fills
    each car's row along T (no car has one when ``car_rows`` is False: their impulses are zero)."""
    warm, h = cfg.warm, cfg.h
    rows, trk, row_t = tmp.rows, tmp.trk, tmp.scratch.row_t
    jlam = joints.lam
    for j in range(joints.kind.shape[0]):
        if joints.chain[j] == 0:
            if not free_joints:
                continue
            for r in range(rows.m[j]):
                jlam[j, r] = min(max(jlam[j, r] * warm, rows.lo[j, r]), rows.hi[j, r])
                if jlam[j, r] != 0.0:
                    joint_apply(j, r, jlam[j, r], joints, rows, trk, cars, bodies)
        elif joints.chain[j] == 1:
            for r in range(3):
                jlam[j, r] = 0.0
        elif joints.chain[j] == 3:   # a swivel in its train's blocks (car_blocks.py)
            for r in range(rows.m[j]):
                jlam[j, r] = 0.0
    for b in range(cars.n):
        if not (car_rows and cars.held[b]):
            cars.lam_motor[b] = 0.0
            cars.lam_ratchet[b] = 0.0
            cars.lam_friction[b] = 0.0
            continue
        sec = cars.section[b]
        if sec < 0 and res.rolling == 0.0 and cars.davis[b, 0] == 0.0 and cars.brake[b] == 0.0:
            cars.lam_motor[b] = 0.0
            cars.lam_ratchet[b] = 0.0
            cars.lam_friction[b] = 0.0
            continue
        fr = cars.frame[b]
        R = bodies.rot[b]
        cg = cars.cg[b]
        rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
        c0, c1, c2 = cross(rx, ry, rz, fr[C_T], fr[C_T + 1], fr[C_T + 2])
        row_t[b, 0], row_t[b, 1], row_t[b, 2] = fr[C_T], fr[C_T + 1], fr[C_T + 2]
        row_t[b, 3], row_t[b, 4], row_t[b, 5] = c0, c1, c2
        cars.lam_motor[b] *= warm
        cars.lam_ratchet[b] *= warm
        cars.lam_friction[b] *= warm
        if sec < 0:
            cars.lam_motor[b] = 0.0
            cars.lam_ratchet[b] = 0.0
        else:
            tv, lo, hi = car_section_row(sections, sec, b, cars, h, ops)
            cars.lam_motor[b] = min(max(cars.lam_motor[b], lo), hi)
            if not HAS_RATCHET[sections.kind[sec]]:
                cars.lam_ratchet[b] = 0.0
            else:
                cars.lam_ratchet[b] = max(cars.lam_ratchet[b] * cars.dir[b], 0.0) * cars.dir[b]
        lam = cars.lam_motor[b] + cars.lam_ratchet[b] + cars.lam_friction[b]
        if lam != 0.0:
            apply_impulse(b, row_t[b], lam, trk, cars, bodies)
            if trk.carrier[b] >= 0:   # relative to the moving track: the body takes its share
                moving_row_impulse(b, row_t[b], lam, bodies, cars, trk, tmp.crow)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def prepare_car_rows(cfg, bodies, cars, sections, res, tmp, ops):
    """Each car's row along T, f = [T, r_m × T], its mobilities W̃fᵀ and f W̃ fᵀ (every car on its
    track: a rigid train's motion needs them all), and its bounded rows this step (``rows.py``):
    section, ratchet, friction, with targets and bounds. Returns True if any car has such rows."""
    crow, trk, row_t = tmp.crow, tmp.trk, tmp.scratch.row_t
    any_rows = False
    for b in range(cars.n):
        for r in range(3):
            crow.lam[b, r] = 0.0
            crow.present[b, r] = ABSENT
        if not cars.held[b]:
            continue
        fr = cars.frame[b]
        R = bodies.rot[b]
        cg = cars.cg[b]
        c0, c1, c2 = cross(-cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2], fr[C_T], fr[C_T + 1], fr[C_T + 2])
        row_t[b, 0], row_t[b, 1], row_t[b, 2] = fr[C_T], fr[C_T + 1], fr[C_T + 2]
        row_t[b, 3], row_t[b, 4], row_t[b, 5] = c0, c1, c2
        c = 0.0
        for i in range(6):
            s = 0.0
            for q in range(6):
                s += mobility_at(trk.mobility, trk.rank1, b, i, q) * row_t[b, q]
            crow.w[b, i] = s
            c += row_t[b, i] * s
        crow.c[b] = c
        if trk.carrier[b] >= 0:
            moving_row(b, row_t[b], bodies, cars, trk, crow)
        sec = cars.section[b]
        friction = res.rolling > 0.0 or cars.davis[b, 0] > 0.0 or cars.brake[b] > 0.0
        if (sec < 0 and not friction) or not c > 0.0:
            continue
        any_rows = True
        crow.lam[b, 0], crow.lam[b, 1], crow.lam[b, 2] = cars.lam_motor[b], cars.lam_ratchet[b], cars.lam_friction[b]
        if sec >= 0:
            tv, lo, hi = car_section_row(sections, sec, b, cars, cfg.h, ops)
            crow.target[b, 0], crow.lo[b, 0], crow.hi[b, 0] = tv, lo, hi
            crow.present[b, 0] = PRESENT
            if HAS_RATCHET[sections.kind[sec]]:
                lo, hi = (0.0, np.inf) if cars.dir[b] > 0.0 else (-np.inf, 0.0)   # against −s of the track
                crow.target[b, 1], crow.lo[b, 1], crow.hi[b, 1] = 0.0, lo, hi
                crow.present[b, 1] = PRESENT
        if friction:
            bound = friction_bound(b, cfg, bodies, cars, res, trk.lam)
            crow.target[b, 2], crow.lo[b, 2], crow.hi[b, 2] = 0.0, -bound, bound
            crow.present[b, 2] = PRESENT
    return any_rows


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def solve_chains(bodies, cars, joints, tmp):
    """One exact solve of every train's chain of couplers (a train of cars on bogies: its swivels and
    couplers), each on its own (``car_blocks.solve_train``). A world with moving tracks (``carried``)
    calls ``carrier.solve_carried_chains`` instead (the trains on a moving track with its body): its
    callers choose, so that this one stays small enough to be inlined."""
    for t in range(tmp.chains.first.shape[0]):
        solve_train(t, bodies, cars, joints, tmp)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def carrier_train_mode(t, chains, joints, trk, crow):
    """A rigid train on a moving track: its rows' scalar solve sees the train's motion relative to the
    body (``couplings.train_mode``); scale it by √(1 + β), β = vᵀ W̃_t v / (Σ s²)², v = Σ s_i a_i, so
    that the solve also counts the body's share along that motion (its passes then converge for a
    body of any mass; docs/physics.md §9)."""
    k = trk.kbody[chains.carrier[t]]
    v0 = v1 = v2 = v3 = v4 = v5 = 0.0
    s2 = 0.0
    for i in range(chains.count[t] + 1):
        b = train_car(t, i, chains, joints, -1)
        si = crow.s[b]
        s2 += si * si
        v0 += si * crow.a[b, 0]
        v1 += si * crow.a[b, 1]
        v2 += si * crow.a[b, 2]
        v3 += si * crow.a[b, 3]
        v4 += si * crow.a[b, 4]
        v5 += si * crow.a[b, 5]
    v = (v0, v1, v2, v3, v4, v5)
    q = 0.0
    for i in range(6):
        for j in range(6):
            q += v[i] * trk.mobility[k, i, j] * v[j]
    f = np.sqrt(1.0 + q / (s2 * s2)) if s2 > 0.0 else 1.0
    for i in range(chains.count[t] + 1):
        crow.s[train_car(t, i, chains, joints, -1)] *= f


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def solve_car_rows(cfg, bodies, cars, res, joints, tmp, tol, carried):
    """The cars' bounded rows with the couplers. When every train is rigid (``couplings.train_mode``)
    exactly: per pass one scalar equation per train (``couplings.train_rows_scalar``; a car outside
    the chains alone), the impulses applied, the couplers solved; again while a friction bound
    (from the new wheel impulses) moves by more than ``tol``. Otherwise each car's rows exactly for
    the car alone, alternating with the chain solve for ``cfg.iterations`` passes (Gauss–Seidel by
    blocks) or until nothing changes by more than ``tol``; the couplers are solved last.

    Rows of cars on a moving track act on its body too (``crow.moving``, ``crow.g``): each pass solves
    them for the train's motion relative to the body, the body then moves with their impulses, and
    passes go on until nothing changes by more than ``tol`` (docs/physics.md §9)."""
    chains, crow, row_t = tmp.chains, tmp.crow, tmp.scratch.row_t
    rigid = True
    coupled = False   # some rows act on a moving track's body: converge by passes
    for b in range(cars.n):
        crow.chained[b] = 0
    for t in range(chains.first.shape[0]):
        if chains.count[t] > 0 and rigid:
            if tmp.blocks.train[t, 1] > 0:   # cars on bogies: the mode through their blocks
                ok = block_train_mode(t, train_car(t, 0, chains, joints, -1), chains.count[t] + 1, tmp.blocks,
                                      joints, tmp.rows, cars, crow)
            else:
                ok = train_mode(t, chains, joints, tmp.rows, cars, crow, -1)
            if ok:
                for i in range(chains.count[t] + 1):
                    crow.chained[train_car(t, i, chains, joints, -1)] = 1
                if chains.carrier[t] >= 0:
                    carrier_train_mode(t, chains, joints, tmp.trk, crow)
            else:
                rigid = False
    for b in range(cars.n):
        if not rigid:
            crow.chained[b] = 0
        if crow.moving[b] >= 0 and crow.present[b, 0] + crow.present[b, 1] + crow.present[b, 2] > 0:
            coupled = True
        if crow.chained[b] == 0:
            if crow.moving[b] >= 0:
                crow.s[b] = np.sqrt(crow.cf[b])  # the car alone with its track body free
            else:
                crow.s[b] = np.sqrt(crow.c[b])  # the car alone: its row velocity changes by c μ
        s2 = crow.s[b] * crow.s[b]  # softness relative to the row's mobility in its train
        crow.gamma[b, 0] = ROW_SOFTNESS * s2
        crow.gamma[b, 1] = HOLD_SOFTNESS * s2
        crow.gamma[b, 2] = HOLD_SOFTNESS * s2
    if carried:   # the couplers consistent with the impulses so far
        solve_carried_chains(bodies, cars, joints, tmp)
    else:
        solve_chains(bodies, cars, joints, tmp)
    n_pass = MAX_PASSES if rigid else cfg.iterations
    for it in range(n_pass):
        if rigid:
            for t in range(chains.first.shape[0]):
                if chains.count[t] > 0:
                    train_rows_scalar(t, chains, joints, crow, -1, row_t, bodies)
        dmax = 0.0
        for b in range(cars.n):
            if crow.present[b, 0] == ABSENT and crow.present[b, 1] == ABSENT and crow.present[b, 2] == ABSENT:
                continue
            if crow.chained[b] == 0:
                train_rows_scalar(-1, chains, joints, crow, b, row_t, bodies)
            if crow.mu[b] != 0.0:
                apply_impulse(b, row_t[b], crow.mu[b], tmp.trk, cars, bodies)
                if crow.moving[b] >= 0:
                    apply_impulse(crow.moving[b], crow.g[b], crow.mu[b], tmp.trk, cars, bodies)
                dmax = max(dmax, abs(crow.mu[b]))
        if carried:
            solve_carried_chains(bodies, cars, joints, tmp)
        else:
            solve_chains(bodies, cars, joints, tmp)
        crow.passes[0] = it + 1
        moved = False
        for b in range(cars.n):
            if crow.present[b, 2] != ABSENT:
                bound = friction_bound(b, cfg, bodies, cars, res, tmp.trk.lam)
                if abs(bound - crow.hi[b, 2]) > tol + 1e-7 * bound:  # 1e-7 of the bound: ≪ the 1e-3 aim
                    moved = True
                crow.lo[b, 2] = -bound
                crow.hi[b, 2] = bound
        if not moved and ((rigid and not coupled) or dmax <= tol):
            break
    crow.passes[1] = max(crow.passes[1], crow.passes[0])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stage_solve(cfg, bodies, cars, sections, res, joints, tmp, any_bounded, free_joints, car_rows, ops, carried):
    """The step's rows after the track blocks: with no bounded row, one exact chain solve. Else the
    cars' bounded rows with the chains (``solve_car_rows``: exact for rigid trains); joints outside
    the chains (``free_joints`` True) and contacts between trains (``ops``, when one is active)
    alternate with it in PGS sweeps (``cfg.iterations``, each joint's rows as one block), and a
    last solve of the cars' rows and chains ends the step (equality rows exact, bounded rows within
    their bounds by construction). ``car_rows`` False: the world has no section and no friction
    (``car_rows_flag``; that code is skipped); ``ops`` None: no contacts, no block sections (not
    compiled; ``run_chunk`` passes an idle record instead, which has none)."""
    if any_bounded or carried:
        solve_rows(cfg, bodies, cars, sections, res, joints, tmp, any_bounded, free_joints, car_rows, ops, carried)
    else:
        solve_chains(bodies, cars, joints, tmp)
        if tmp.hangs.joint.shape[0] > 0:
            answer_hangs(bodies, joints, tmp.rows, tmp.trk, tmp.hangs)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def solve_rows(cfg, bodies, cars, sections, res, joints, tmp, any_bounded, free_joints, car_rows, ops, carried):
    """``stage_solve`` of a step with bounded rows or moving tracks (a call: ``stage_solve`` is inlined
    into ``run_chunk``, and the coasting step needs none of this)."""
    if not any_bounded:
        if carried:
            solve_carried_chains(bodies, cars, joints, tmp)
            keep_folded(joints, tmp.trk)
        else:
            solve_chains(bodies, cars, joints, tmp)
        if tmp.hangs.joint.shape[0] > 0:
            answer_hangs(bodies, joints, tmp.rows, tmp.trk, tmp.hangs)
        return
    sweeps = False
    if free_joints:   # joints outside the chains and the car blocks
        for j in range(joints.kind.shape[0]):
            if joints.chain[j] == 0:
                sweeps = True
                break
    if ops is not None:
        sweeps = sweeps or contacts_active(ops)
    # converged when no bounded impulse changed by more than 1e-9 m g h (heaviest body)
    tol = 0.0
    for b in range(bodies.mass.shape[0]):
        tol = max(tol, 1e-9 * bodies.mass[b] * cfg.gmag * cfg.h)
    rows_now = False
    if car_rows:
        rows_now = prepare_car_rows(cfg, bodies, cars, sections, res, tmp, ops)
    it = 0
    while True:
        if car_rows and rows_now:
            solve_car_rows(cfg, bodies, cars, res, joints, tmp, tol, carried)
        elif carried:
            solve_carried_chains(bodies, cars, joints, tmp)
        else:
            solve_chains(bodies, cars, joints, tmp)
        if not sweeps or it >= cfg.iterations:
            break
        dmax = 0.0
        if free_joints:
            for j in range(joints.kind.shape[0]):
                if joints.chain[j] == 0:
                    dmax = max(dmax, solve_joint_pgs(j, joints, tmp.rows, tmp.trk, cars, bodies, tmp.wk))
        if ops is not None:
            dmax = max(dmax, solve_contacts(bodies, cars, ops, tmp.trk))
        it += 1
        if dmax <= tol:
            it = cfg.iterations  # converged: finish with the exact solve
    if car_rows:
        lam, present = tmp.crow.lam, tmp.crow.present
        for b in range(cars.n):
            cars.lam_motor[b] = lam[b, 0] if present[b, 0] != ABSENT else 0.0
            cars.lam_ratchet[b] = lam[b, 1] if present[b, 1] != ABSENT else 0.0
            cars.lam_friction[b] = lam[b, 2] if present[b, 2] != ABSENT else 0.0
    if tmp.hangs.joint.shape[0] > 0:
        answer_hangs(bodies, joints, tmp.rows, tmp.trk, tmp.hangs)
    if carried:
        keep_folded(joints, tmp.trk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def keep_folded(joints, trk):
    """The impulses of each joint that holds a carrier (solved with it: ``carrier.fold_joint``)."""
    for k in range(trk.kbody.shape[0]):
        j = trk.kfold[k]
        if j >= 0:
            for r in range(5):
                joints.lam[j, r] = trk.klam[k, r]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_supports(cfg, bodies, cars, trk):
    """One-sided supports (railway): switch a row 2 off when its impulse would pull, on when the
    car would sink into the track by the end of the step. Returns True if anything changed."""
    h, pos, vel, omg = cfg.h, bodies.pos, bodies.vel, bodies.omg
    changed = False
    for b in range(cars.n):
        if not (cars.held[b] and cars.one_sided[b]):
            continue
        if cars.support[b]:
            if trk.lam[b, 1] + cars.transport[b, 1] < 0.0:
                cars.support[b] = 0
                changed = True
        else:
            fr = cars.frame[b]
            R = bodies.rot[b]
            cg = cars.cg[b]
            rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
            c0, c1, c2 = cross(omg[b, 0], omg[b, 1], omg[b, 2], rx, ry, rz)
            va = (vel[b, 0] + c0) * fr[C_B] + (vel[b, 1] + c1) * fr[C_B + 1] + (vel[b, 2] + c2) * fr[C_B + 2]
            if trk.carrier[b] >= 0:   # relative to the moving track
                va = relative_along(b, bodies, cars, trk, C_B)
            gap = ((pos[b, 0] + rx - fr[C_P]) * fr[C_B] + (pos[b, 1] + ry - fr[C_P + 1]) * fr[C_B + 1]
                   + (pos[b, 2] + rz - fr[C_P + 2]) * fr[C_B + 2])
            if gap + h * va < 0.0:
                cars.support[b] = 1
                changed = True
    return changed


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stage_integrate(cfg, tracks, bodies, cars, carrier, lam, E, wk):
    """Integrate positions (x += h v; q += h/2 (0,ω)⊗q, normalised), update each car's s.

    s is predicted from the last frame to third order (``predict_step``), then corrected by a Newton
    step of the closest-point condition f(s) = (A.P − P(s))·T(s) = 0 with f'(s) = −1 + (A.P − P)·P''(s)
    (docs/physics.md §2); on a fixed track the frame is evaluated once, at the predicted s, and moved
    by the Newton step (``closest_frame``, ``curves.compact.shift_frame``).
    Leaving an open track's end sets RAN_OFF and frees the car. On a moving track the same in the
    track's table, the anchor carried back by the body's new pose (``carrier.to_table``), and each
    car's frame axes in the table are kept for the next step's transport (``cars.prev_frame``).
    ``carrier``, ``lam``, ``E``: ``trk.carrier``, the step's track-row impulses ``trk.lam`` (kept as
    ``cars.lam_track``) and the cars' body columns ``trk.E`` (cleared for a car that leaves a moving
    track, ``network.pass_junction``). Every body moves before any car's s (a car on a moving track
    needs its body's new pose). ``integrate_chunk`` over every body (inlined: the call is that one).
    """
    integrate_chunk(0, bodies.pos.shape[0], cfg.h, tracks, bodies, cars, carrier, lam, E, wk)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def integrate_body(b, h, tracks, bodies, cars, carrier):
    """``stage_integrate``: body ``b``'s position and orientation (and its rotation matrix)."""
    pos, quat, omg = bodies.pos, bodies.quat, bodies.omg
    if b < cars.n and carrier[b] >= 0 and cars.held[b]:   # (its body moves after it: b < nb)
        keep_table_axes(b, tracks, bodies, cars)
    for i in range(3):
        pos[b, i] += h * bodies.vel[b, i]
    quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3] = quat_step(quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3],
                                                               omg[b, 0], omg[b, 1], omg[b, 2], 0.5 * h)
    quat_to_mat(quat[b], bodies.rot[b])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def integrate_car(b, tracks, bodies, cars, carrier, lam, E, fr2):
    """``stage_integrate``: car ``b``'s s, track and frame after its body moved (``fr2``: work)."""
    if not cars.held[b]:
        return
    pos = bodies.pos
    fr = cars.frame[b]
    if carrier[b] < 0:   # (on a moving track: the axes in its table, kept above)
        for k in range(3):
            cars.prev_frame[b, k] = fr[C_T + k]
            cars.prev_frame[b, 3 + k] = fr[C_N + k]
            cars.prev_frame[b, 6 + k] = fr[C_B + k]
    cars.has_prev[b] = 1
    for r in range(5):
        cars.lam_track[b, r] = lam[b, r]
    t = cars.track[b]
    R = bodies.rot[b]
    cg = cars.cg[b]
    ax, ay, az = pos[b, 0] - cg * R[0, 2], pos[b, 1] - cg * R[1, 2], pos[b, 2] - cg * R[2, 2]
    moving = carrier[b] >= 0
    if moving:   # in the track's table: the anchor where the body's new pose puts it
        ax, ay, az = to_table(t, tracks, bodies, ax, ay, az)
        eval_track_point(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], tracks.length[t],
                         tracks.closed[t], cars.s[b], fr2)
        s = cars.s[b] + predict_step(ax, ay, az, fr2)
    else:
        # predictor from the old frame (the frame's T is −T of the track for a car facing −s)
        d = predict_step(ax, ay, az, fr)
        s = cars.s[b] + d if cars.dir[b] > 0.0 else cars.s[b] - d
    ok = True
    framed = False
    step = 0.0
    if not (moving or tracks.net[0]):   # a fixed track: the frame at the predicted s, moved by the step
        s, step, framed = closest_frame(tracks, t, s, ax, ay, az, fr2)
    else:
        s = closest_s(tracks, t, s, ax, ay, az, fr2)
    if tracks.net[0]:   # a connection or switch passed: the next track (physics/network.py)
        s, ok = pass_junction(b, cars.s[b], s, cars, tracks, bodies, carrier, E, fr2)
        if cars.track[b] != t:
            if tracks.body[cars.track[b]] != tracks.body[t]:   # onto or off a moving track
                ax, ay, az = pos[b, 0] - cg * R[0, 2], pos[b, 1] - cg * R[1, 2], pos[b, 2] - cg * R[2, 2]
                moving = carrier[b] >= 0
                if moving:
                    ax, ay, az = to_table(cars.track[b], tracks, bodies, ax, ay, az)
            t = cars.track[b]
            s = closest_s(tracks, t, s, ax, ay, az, fr2)
    L = tracks.length[t]
    closed = tracks.closed[t]
    if not ok or (not closed and (s < 0.0 or s > L)):
        cars.on_track[b] = 0
        cars.ran_off[b] = 1
        cars.has_prev[b] = 0
        s = min(max(s, 0.0), L)
    elif framed:
        shift_frame(fr2, step, tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], L, closed, s, cars.frame[b])
        if cars.dir[b] < 0.0:
            reverse_frame(cars.frame[b])
    elif cars.dir[b] > 0.0:
        eval_track(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], L, closed, s, cars.frame[b])
        if moving:
            move_frame(cars.frame[b], t, tracks, bodies)
    else:
        car_frame(tracks, t, s, cars.dir[b], cars.frame[b])
    cars.s[b] = s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def closest_s(tracks, t, s, ax, ay, az, fr2):
    """One Newton step of the closest-point condition from ``s`` on track ``t`` for the anchor
    (``ax``, ``ay``, ``az``): error O(κ² (h v)⁴) from the predictor; none off an open track's ends."""
    L = tracks.length[t]
    closed = tracks.closed[t]
    if not closed and (s < 0.0 or s > L):
        return s
    eval_track_point(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], L, closed, s, fr2)
    s = s + newton_step(ax, ay, az, fr2)
    if closed:
        s = wrap_arc_length(s, L, True)
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def newton_step(ax, ay, az, fr):
    """−f/f' of the closest-point condition f(s) = (A − P)·T at the point of ``fr`` (its P, T, P''),
    f' = −1 + (A − P)·P'' (−1 where the anchor is so far inside a tight curve that f' > −0.2)."""
    return closest_newton(ax - fr[C_P], ay - fr[C_P + 1], az - fr[C_P + 2], fr[C_T], fr[C_T + 1], fr[C_T + 2],
                          fr[C_DT], fr[C_DT + 1], fr[C_DT + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def predict_step(ax, ay, az, fr):
    """The step along T of the closest point to the anchor (``ax``, ``ay``, ``az``) from the frame
    ``fr``'s point, to third order: with r = A − P, d = r·T and K = P'', the closest-point
    condition (A − P(s+δ))·T(s+δ) = 0 expanded in δ gives δ = (d − d³|K|²/3)/(1 − r·K); here
    d (1 + r·K) − d³|K|²/3 (r·K ≈ κ² d²/2: the terms left out are O(κ⁴ d⁵)). The Newton step that
    follows (``closest_s``, ``closest_frame``) then moves s by ~1e-10 m on a coaster's track at
    its speed, where r·T alone left O(κ² d³) (1e-7 m in a launch)."""
    return closest_predictor(ax - fr[C_P], ay - fr[C_P + 1], az - fr[C_P + 2], fr[C_T], fr[C_T + 1], fr[C_T + 2],
                             fr[C_DT], fr[C_DT + 1], fr[C_DT + 2])


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def closest_frame(tracks, t, s, ax, ay, az, fr):
    """``closest_s`` on a fixed track with the whole frame at ``s`` (``eval_track`` into ``fr``):
    returns the new s, its step from ``s`` (the frame there is ``fr`` moved by it,
    ``curves.compact.shift_frame``) and True; ``s`` itself, 0 and False off an open track's ends."""
    L = tracks.length[t]
    closed = tracks.closed[t]
    if not closed and (s < 0.0 or s > L):
        return s, 0.0, False
    eval_track(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], L, closed, s, fr)
    step = newton_step(ax, ay, az, fr)
    s2 = s + step
    if closed:
        s2 = wrap_arc_length(s2, L, True)
    return s2, step, True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def diverged_body(bodies):
    """The first body with a non-finite position or velocity, −1 if none."""
    pos, vel, omg = bodies.pos, bodies.vel, bodies.omg
    for b in range(pos.shape[0]):
        ok = True
        for i in range(3):
            if not (np.isfinite(pos[b, i]) and np.isfinite(vel[b, i]) and np.isfinite(omg[b, i])):
                ok = False
        if not ok:
            return b
    return -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def keep_start_velocities(cars, scratch):
    """Before a recorded step: each car's velocities after this step's transport (``v0t`` (nb, 6):
    velocity, angular velocity), i.e. vel0 turned by F_new F_oldᵀ as ``stage_transport`` will
    turn them (only on recorded steps)."""
    vel0, omg0, v0t = scratch.vel0, scratch.omg0, scratch.v0t
    for b in range(cars.n):
        if cars.held[b] and cars.has_prev[b] and cars.support[b]:
            fr, pf = cars.frame[b], cars.prev_frame[b]
            v0, v1, v2 = frame_turn(fr, pf, vel0[b, 0], vel0[b, 1], vel0[b, 2])
            w0, w1, w2 = frame_turn(fr, pf, omg0[b, 0], omg0[b, 1], omg0[b, 2])
        else:
            v0, v1, v2 = vel0[b, 0], vel0[b, 1], vel0[b, 2]
            w0, w1, w2 = omg0[b, 0], omg0[b, 1], omg0[b, 2]
        v0t[b, 0], v0t[b, 1], v0t[b, 2] = v0, v1, v2
        v0t[b, 3], v0t[b, 4], v0t[b, 5] = w0, w1, w2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def record_sample(cfg, tracks, bodies, cars, sections, trk, scratch, out, rail):
    """Write one sample (n_entities, N_CHANNELS) from the state after the step. A car on a moving
    track: ``s``, ``speed``, ``accel`` relative to its track, the rest world values (``rail``: a
    railway world's channels; idle, no cars, in any other)."""
    h, gmag, gx, gy, gz = cfg.h, cfg.gmag, cfg.gx, cfg.gy, cfg.gz
    pos, quat, vel, omg, mass, ib = bodies.pos, bodies.quat, bodies.vel, bodies.omg, bodies.mass, bodies.ib
    vel0, omg0, v0t = scratch.vel0, scratch.omg0, scratch.v0t
    ncars = cars.n
    nb = pos.shape[0]
    for b in range(nb):
        for c in range(ch.N_CHANNELS):
            out[b, c] = np.nan
        R = bodies.rot[b]
        m = mass[b]
        out[b, ch.X] = pos[b, 0]
        out[b, ch.Y] = pos[b, 1]
        out[b, ch.Z] = pos[b, 2]
        for k in range(4):
            out[b, ch.QW + k] = quat[b, k]
        for k in range(3):
            out[b, ch.VX + k] = vel[b, k]
            out[b, ch.WX + k] = omg[b, k]
        ke = 0.5 * m * (vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
        for k in range(3):
            wbk = R[0, k] * omg[b, 0] + R[1, k] * omg[b, 1] + R[2, k] * omg[b, 2]
            ke += 0.5 * ib[b, k] * wbk * wbk
        out[b, ch.KINETIC_ENERGY] = ke
        out[b, ch.POTENTIAL_ENERGY] = m * gmag * pos[b, 2]
        # specific force: f_cm = Δv/h − g (every non-gravitational impulse of the step / (m h));
        # a suspended car reports its hanging body's (gb), at its rider point, in that body's axes
        gb = b
        if b < ncars:
            rh = cars.rider[b] - cars.cg[b]
            if cars.hang[b] >= 0:
                gb = cars.hang[b]
                rh = cars.hang_rider[b]
                R = bodies.rot[gb]
        else:
            rh = 0.0
        # A car on its track: the velocities are turned with the frame (transport) at the start of
        # the next step for the motion of this one; count that turn here, Δv = R v_end − v_start
        # (R = F_new F_oldᵀ, v_start after this step's transport), so the sample holds the whole
        # turn of the step it covers (no one-step lag, no missing turn in the first sample).
        if gb == b and b < ncars and cars.on_track[b] and cars.has_prev[b] and cars.support[b]:
            fr, pf = cars.frame[b], cars.prev_frame[b]
            if trk.carrier[b] >= 0:   # the relative motion turned on the track body's motion
                ve0, ve1, ve2, we0, we1, we2 = turn_relative(b, tracks, bodies, cars, trk)
            else:
                ve0, ve1, ve2 = frame_turn(fr, pf, vel[b, 0], vel[b, 1], vel[b, 2])
                we0, we1, we2 = frame_turn(fr, pf, omg[b, 0], omg[b, 1], omg[b, 2])
            vs0, vs1, vs2 = v0t[b, 0], v0t[b, 1], v0t[b, 2]
            ws0, ws1, ws2 = v0t[b, 3], v0t[b, 4], v0t[b, 5]
        else:
            ve0, ve1, ve2 = vel[gb, 0], vel[gb, 1], vel[gb, 2]
            we0, we1, we2 = omg[gb, 0], omg[gb, 1], omg[gb, 2]
            vs0, vs1, vs2 = vel0[gb, 0], vel0[gb, 1], vel0[gb, 2]
            ws0, ws1, ws2 = omg0[gb, 0], omg0[gb, 1], omg0[gb, 2]
        fx = (ve0 - vs0) / h - gx
        fy = (ve1 - vs1) / h - gy
        fz = (ve2 - vs2) / h - gz
        rx, ry, rz = rh * R[0, 2], rh * R[1, 2], rh * R[2, 2]
        al0, al1, al2 = (we0 - ws0) / h, (we1 - ws1) / h, (we2 - ws2) / h
        c0, c1, c2 = cross(al0, al1, al2, rx, ry, rz)
        w0, w1, w2 = we0, we1, we2
        d0, d1, d2 = cross(w0, w1, w2, rx, ry, rz)
        e0, e1, e2 = cross(w0, w1, w2, d0, d1, d2)
        fx += c0 + e0
        fy += c1 + e1
        fz += c2 + e2
        out[b, ch.G_LONGITUDINAL] = (fx * R[0, 0] + fy * R[1, 0] + fz * R[2, 0]) / gmag
        out[b, ch.G_LATERAL] = (fx * R[0, 1] + fy * R[1, 1] + fz * R[2, 1]) / gmag
        out[b, ch.G_VERTICAL] = (fx * R[0, 2] + fy * R[1, 2] + fz * R[2, 2]) / gmag
        if b < ncars and cars.rows[b, 0] != cars.rows[b, 1]:
            # the front and rear rows, x along the body's forward axis F from the rider point: the rider
            # point's specific force + x (α × F + ω × (ω × F)), in the body's axes
            c0, c1, c2 = cross(al0, al1, al2, R[0, 0], R[1, 0], R[2, 0])
            d0, d1, d2 = cross(w0, w1, w2, R[0, 0], R[1, 0], R[2, 0])
            e0, e1, e2 = cross(w0, w1, w2, d0, d1, d2)
            for k in range(2):
                x = cars.rows[b, k]
                px, py, pz = fx + x * (c0 + e0), fy + x * (c1 + e1), fz + x * (c2 + e2)
                o = ch.G_VERTICAL_FRONT + 3 * k
                out[b, o] = (px * R[0, 2] + py * R[1, 2] + pz * R[2, 2]) / gmag
                out[b, o + 1] = (px * R[0, 1] + py * R[1, 1] + pz * R[2, 1]) / gmag
                out[b, o + 2] = (px * R[0, 0] + py * R[1, 0] + pz * R[2, 0]) / gmag
        if gb != b:
            R = bodies.rot[b]
        w0, w1, w2 = omg[b, 0], omg[b, 1], omg[b, 2]
        if b >= ncars:
            out[b, ch.FLAGS] = ch.FREE_BODY
            continue
        fr = cars.frame[b]
        cg = cars.cg[b]
        # anchor velocity along T
        a0, a1, a2 = cross(w0, w1, w2, -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2])
        vt = (vel[b, 0] + a0) * fr[C_T] + (vel[b, 1] + a1) * fr[C_T + 1] + (vel[b, 2] + a2) * fr[C_T + 2]
        if trk.carrier[b] >= 0 and cars.on_track[b]:
            vt = relative_speed(b, bodies, cars, trk)
        out[b, ch.S] = cars.s[b]
        out[b, ch.TRACK] = cars.track[b]
        out[b, ch.SPEED] = vt
        out[b, ch.ACCEL] = (vt - cars.speed0[b]) / h
        flags = 0
        lt, tr = cars.lam_track[b], cars.transport[b]
        if cars.ran_off[b]:
            flags |= ch.RAN_OFF
            out[b, ch.WHEEL_LOAD] = 0.0
            out[b, ch.LATERAL_LOAD] = 0.0
            out[b, ch.MOTOR_FORCE] = 0.0
            out[b, ch.ROLL_TORQUE] = 0.0
            out[b, ch.RESISTANCE_FORCE] = 0.0
            out[b, ch.SECTION] = -1.0
        else:
            flags |= ch.ON_TRACK
            out[b, ch.LATERAL_LOAD] = (lt[0] + tr[0]) / h
            out[b, ch.WHEEL_LOAD] = (lt[1] + tr[1]) / h
            out[b, ch.ROLL_TORQUE] = (lt[2] + tr[2]) / h
            out[b, ch.MOTOR_FORCE] = (cars.lam_motor[b] + cars.lam_ratchet[b]) / h
            out[b, ch.RESISTANCE_FORCE] = cars.lam_friction[b] / h + cars.f_explicit[b]
            sec = cars.section[b]
            out[b, ch.SECTION] = -1.0 if sec < 0 else float(sections.kind[sec])
            if cars.one_sided[b] and cars.support[b] == 0:
                flags |= ch.SUPPORT_CLAMPED
            if sec >= 0:
                flags |= ch.MOTOR_ACTIVE
            if cars.lam_friction[b] != 0.0 or cars.f_explicit[b] != 0.0:
                flags |= ch.RESISTANCE_ACTIVE
            if rail.train.shape[0] > 0:
                flags |= record_rail(b, cars, rail, out)
        out[b, ch.FLAGS] = float(flags)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def record_rail(b, cars, rail, out):
    """A railway car's channels (NaN where it has no such part); returns its flags. Its locomotive's
    force counts in ``motor_force`` (a motor)."""
    out[b, ch.COUPLER_FORCE] = rail.f_coupler[b]
    flags = 0
    if rail.loco[b]:
        f = rail.f_trac[b]
        out[b, ch.TRACTIVE_FORCE] = f
        out[b, ch.NOTCH] = rail.notch[b]
        out[b, ch.DYNAMIC_BRAKE] = rail.dyn[b]
        out[b, ch.MOTOR_FORCE] += f
        if f != 0.0:
            flags |= ch.MOTOR_ACTIVE
        if rail.slipping[b]:
            flags |= ch.WHEEL_SLIP
    if rail.braked[b]:
        out[b, ch.PIPE_PRESSURE] = rail.pipe[b]
        if rail.rigging[b] > 0.0:
            out[b, ch.BRAKE_PRESSURE] = rail.cyl[b]
            out[b, ch.BRAKE_FORCE] = rail.f_brake[b]
    return flags


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def rail_forces(cfg, bodies, cars, joints, rail):
    """A railway world's traction and draft-gear forces (``rail`` None: none, and not compiled)."""
    if rail is not None:
        apply_traction(cfg, bodies, cars, rail)
        apply_gear_forces(cfg, bodies, joints, rail)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def stages_to_rows(cfg, tracks, bodies, cars, res, joints, tmp, free_joints, carried, rail, railed, keep_u, par,
                   rows_done, blocks_done):
    """The stages of a step from its start velocities to its rows: the transport, the forces (a
    railway world's traction and draft gears when ``railed``: ``rail``), every car's track block
    with its exact projection, every joint's rows and the chains factored; on moving tracks
    (``carried``) each with its carriers' part (``stage_carriers``). ``keep_u``: the velocities
    before any projection (u*) kept in ``tmp.scratch.vel0``, ``omg0`` (``py_stages_to_solve``).
    ``par``: ``tmp.par``, the per-car stages on all threads (``threaded_rows``; None, a railway world or
    ``keep_u``: serial, by blocks of cars, ``rows_chunk``, but stage by stage over every body for a railway,
    moving tracks or ``keep_u``). ``rows_done``: the per-car stages ran already, at the end of the step
    before (``threaded_step``, ``serial_step``); ``blocks_done``: ... on the threads, with the chunks'
    blocks of couplers. Inlined into its callers: a call would pass every array of every record, each
    step."""
    if not rows_done and (railed or keep_u or not threaded_rows(cfg, bodies, cars, res, tmp.trk, par)):
        if not (railed or keep_u or carried):
            rows_chunk(0, bodies.pos.shape[0], cfg, bodies, cars, res, tmp.trk, tmp.wk)
        else:   # stage by stage over every body
            stage_transport(0, cars.n, bodies, cars, tmp.trk.carrier)
            if carried:
                stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 0)
            stage_forces(0, bodies.pos.shape[0], cfg, bodies, cars, res, tmp.trk.carrier, tmp.trk.kbody)
            if railed:
                rail_forces(cfg, bodies, cars, joints, rail)
            if keep_u:
                keep_velocities(0, bodies.pos.shape[0], bodies, tmp.scratch)
            stage_track_rows(0, bodies.pos.shape[0], cfg, bodies, cars, tmp.trk, tmp.wk)
            if carried:
                stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 1)
    stage_joint_rows(cfg, bodies, cars, joints, tmp, free_joints, carried, blocks_done)
    if carried:
        stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 2)


# ----------------------------------------------------------------------------- the run loop
@njit(cache=True, error_model="numpy", _nrt=False)
def run_chunk(n_steps, step0, cfg, world, tmp, out_t, out, free_joints, car_rows, ops, rail):
    """Run ``n_steps`` steps after step ``step0``; record every ``cfg.record_every``-th into
    ``out`` (m, nb, N_CHANNELS) and its time into ``out_t``.

    ``world`` is the ``WorldState`` record (tracks, bodies, cars, sections, res, joints,
    programs), ``tmp`` the ``Temps`` (``state.make_temps``); ``free_joints`` False when every joint is a train's
    chained coupler (``free_joints_flag``); ``car_rows`` False when the world has no section and no
    friction (``car_rows_flag``); ``ops`` the ``operation.Ops``, idle (``operation.idle_ops``)
    when the world has no contacts between trains and no block sections; ``rail`` the ``state.Rail``
    of a railway world (``railway.py``: locomotives, air brakes, driver, draft gears), idle
    (``rail.idle_rail``: no cars) in any other. These are data, not types: one compiled kernel
    serves every world (its first run loads it, docs/cli.md).
    Returns (steps done, records written, status 0 ok / 1 diverged / 2 the block logic must run
    (``operation.watch``), entity of divergence).
    """
    tracks, bodies, cars, sections, res, joints, programs = world
    update_rotations(bodies)
    operated = ops.until.shape[0] > 0
    railed = rail.train.shape[0] > 0
    carried = tmp.trk.kbody.shape[0] > 0   # some track is on a moving body (carrier.py)
    # one parallel region from a step's integration to the next step's track rows (threaded_step):
    # only where nothing between them reads or writes what the next step's per-car stages do
    fused = not (operated or railed or carried or tracks.net[0]) and programs.cj.shape[0] == 0
    rows_done = False
    blocks_done = False
    nb = bodies.pos.shape[0]
    nrec = 0
    for n in range(n_steps):
        step = step0 + n + 1
        recorded = step % cfg.record_every == 0
        if tracks.net[0]:
            stage_switches(step, cars, tracks)
        if not rows_done:
            stage_start_speed(0, cars.n, bodies, cars, tmp.trk)
        stage_programs(step, cfg.h, cars, joints, tracks, programs)
        if not rows_done:
            stage_frames(0, cars.n, cars, sections)
        if railed:
            stage_rail(step, cfg, bodies, cars, joints, rail)
        if not rows_done:
            keep_velocities(0, nb, bodies, tmp.scratch)
        any_bounded = has_bounded_rows(cars, joints, res, free_joints, car_rows)
        if operated:
            keep_positions(cars, ops)
        if recorded:
            keep_start_velocities(cars, tmp.scratch)
        # again (at most 3 times; a railway world's draft gears 7) when a one-sided support or a draft
        # gear's mode switches
        for attempt in range(8 if railed else 4):
            if attempt > 0:
                restore_velocities(bodies, tmp.scratch)
            stages_to_rows(cfg, tracks, bodies, cars, res, joints, tmp, free_joints, carried, rail, railed, False,
                           tmp.par, rows_done and attempt == 0, blocks_done and attempt == 0)
            stage_warm_start(cfg, bodies, cars, sections, res, joints, tmp, free_joints, car_rows, ops)
            contact = False
            if operated:
                contact = prepare_contacts(cfg, bodies, cars, joints, ops, tmp)
            stage_solve(cfg, bodies, cars, sections, res, joints, tmp, any_bounded or contact, free_joints, car_rows,
                        ops, carried)
            redo = stage_supports(cfg, bodies, cars, tmp.trk)
            if railed:
                redo = gear_modes(cfg, bodies, joints, tmp.rows, rail) or redo
            if not redo:
                break
        if operated:
            finish_contacts(step, ops)
        if railed:
            rail_after(step, cfg, bodies, cars, res, joints, tmp.rows, tmp.trk, rail)
        # the next step's start and track rows with this integration, when it follows in this chunk unrecorded
        # (on the threads, or else serially block by block)
        blocks_done = (fused and n + 1 < n_steps and not recorded
                       and threaded_step(cfg, tracks, bodies, cars, sections, res, joints, tmp, tmp.par))
        rows_done = blocks_done or (fused and n + 1 < n_steps and not recorded
                                    and serial_step(cfg, tracks, bodies, cars, sections, res, joints, tmp))
        if not rows_done and (tracks.net[0] or not threaded_integrate(cfg, tracks, bodies, cars, tmp.trk, tmp.par)):
            stage_integrate(cfg, tracks, bodies, cars, tmp.trk.carrier, tmp.trk.lam, tmp.trk.E, tmp.wk)
        if free_joints:   # a car body turned on its wheel frame beyond its swivel limit (joints/swivel.py)
            swivel_watch(step * cfg.h, joints, bodies.rot)
        if carried and tracks.net[0]:   # cars may have moved onto or off a moving track
            regroup(cars, joints, tmp)
        bad = diverged_body(bodies)
        if bad >= 0:
            return n + 1, nrec, 1, bad
        if recorded and nrec < out.shape[0]:
            out_t[nrec] = step * cfg.h
            record_sample(cfg, tracks, bodies, cars, sections, tmp.trk, tmp.scratch, out[nrec], rail)
            record_joints(cfg.h, bodies, joints, tmp.rows, programs, out[nrec])
            nrec += 1
        if operated:
            if watch(step, cars, tracks, ops):
                return n + 1, nrec, 2, -1
    return n_steps, nrec, 0, -1


# ----------------------------------------------------------------------------- Python entry points
# The stages carry no CPython wrapper (only run_chunk and a few maths functions do): tests and
# reference.py call them through these entry points, which compile only when used.
@njit(cache=True, error_model="numpy", _nrt=False)
def py_stages_to_solve(cfg, world, tmp, bounded, free_joints):
    """The stages of one step up to the solve (no support redo, no integration), and the track rows and
    targets of the cars in closed form stored too (``trk.J``, ``trk.target``): reference.py. ``bounded`` False: the
    equality rows only (no PGS iterations)."""
    tracks, bodies, cars, sections, res, joints, programs = world
    update_rotations(bodies)
    stage_start_speed(0, cars.n, bodies, cars, tmp.trk)
    stage_frames(0, cars.n, cars, sections)
    carried = tmp.trk.kbody.shape[0] > 0
    stages_to_rows(cfg, tracks, bodies, cars, res, joints, tmp, free_joints, carried, None, False, True, None, False,
                   False)
    stage_warm_start(cfg, bodies, cars, sections, res, joints, tmp, free_joints, True, None)
    stage_solve(cfg, bodies, cars, sections, res, joints, tmp, bounded, free_joints, True, None, carried)
    # the rows and targets of each car in closed form (its block does not store them; track_rows_body), as
    # its block made them: they depend on its pose and frame, which the solve leaves as they were
    for b in range(cars.n):
        if cars.held[b] and in_closed_form(b, cars, tmp.trk.carrier):
            rx, ry, rz = track_arm(b, bodies, cars)
            track_rows_of(b, cars, rx, ry, rz, track_targets(b, bodies, cars, cfg.erp_h, rx, ry, rz), tmp.trk)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_prepare_track_block(b, bodies, cars, erp_h, trk, wk):
    update_rotations(bodies)
    rx, ry, rz = track_arm(b, bodies, cars)
    track_rows_of(b, cars, rx, ry, rz, track_targets(b, bodies, cars, erp_h, rx, ry, rz), trk)
    prepare_track_block(b, bodies, cars, trk, wk)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_section_row(kind, speed, fmax, h, v):
    return section_row(kind, speed, fmax, h, v)


@njit(cache=True, error_model="numpy", _nrt=False)
def py_prepare_joint(j, joints, bodies, h, erp_h, rows, free_joints):
    update_rotations(bodies)
    prepare_joint(j, joints, bodies, h, erp_h, rows, free_joints)


def car_rows_flag(world, rail=None) -> bool:
    """``car_rows`` for run_chunk: False when no car can have a bounded row along T (no section, no
    rolling friction, no Davis A term, no air brake in ``rail``: that code is skipped), else True."""
    cars, sections, res = world.cars, world.sections, world.res
    braked = rail is not None and bool(np.any(rail.rigging[:cars.n] > 0.0))
    return not (sections.kind.shape[0] == 0 and res.rolling == 0.0 and not bool(np.any(cars.davis[:cars.n, 0] > 0.0))
                and not braked)


def free_joints_flag(joints) -> bool:
    """``free_joints`` for run_chunk: False when every joint is a train's chained coupler (the usual
    coaster or train: the other joints' code is skipped), else True."""
    return not (joints.chain.shape[0] == 0 or bool(np.all(joints.chain == 1)))


def joint_rows(ji, jf, pos, quat, h, erp_h):
    """Rows (``state.Rows``) of every joint of the tables ``ji`` (nj, NJI) and ``jf`` (nj, NJF) on
    bodies at ``pos``, ``quat`` — each kind's prepare, for tests and checks from Python."""
    from trackrider.physics import state as st
    from trackrider.physics.joints.common import JI_A, JI_B, JI_CHAIN, JI_KIND, JI_SLACK

    nj, nb = ji.shape[0], pos.shape[0]
    joints = st.Joints(ji[:, JI_KIND].copy(), ji[:, JI_A].copy(), ji[:, JI_B].copy(), ji[:, JI_SLACK].copy(),
                       ji[:, JI_CHAIN].copy(), np.ascontiguousarray(jf, dtype=np.float64), np.zeros((nj, st.NJR)))
    z = np.zeros
    bodies = st.Bodies(np.ascontiguousarray(pos, dtype=np.float64), np.ascontiguousarray(quat, dtype=np.float64),
                       z((nb, 3)), z((nb, 3)), np.ones(nb), np.ones((nb, 3)), np.ones((nb, 3)), np.ones(nb),
                       z((nb, 3, 3)))
    rows = st.make_temps(nb, nj, [], []).rows
    for j in range(nj):
        py_prepare_joint(j, joints, bodies, h, erp_h, rows, True)
    return rows
