"""Railway longitudinal dynamics in the step: the driver, locomotives, the automatic air brake,
the draft gears' modes, the couplers' forces (docs/physics.md §10). Every stage takes the ``Rail``
record (``state.py``); a world without railway vehicles has none (``run_chunk``'s ``rail`` is None
and none of this is compiled).

Per step, before the solve (``stage_rail``): the driver's steps whose time or lead-car position
has come are taken (notch, dynamic brake, brake handle); each car's brake pipe takes the newest
brake command that has reached it — a command issued at t₀ reaches a car at distance d along the
train from the nearest locomotive at t₀ + d/c (c the service or emergency propagation speed) — and
its cylinder pressure moves towards ``cyl_max × min(1, (p0 − pipe)/full_service)`` at the fill
or release rate; the air brake's force ``cyl × rigging × μ_shoe(v)``, at most the adhesion
``μ(v) m g cos``, bounds the car's friction row (``cars.brake``: it holds a car at rest too); each
locomotive's force ``notch/notches × TE(v)`` (``TE = min(F_max, P/v)`` or its curve) less its
dynamic brake ``setting × DB(v)`` against the motion, limited by adhesion ``μ(v) m_adh g cos``:
beyond it the wheels slip and the force drops to ``slip_factor`` × the limit until the demand
falls to that. The force is explicit (``apply_traction``, after the velocities' stage).

The draft gears (``joints/draft_gear.py``): a deflecting gear's force is explicit
(``apply_gear_forces``, with the traction); after the solve (``gear_modes``) each gear's mode is
checked against it and changed (the step is then redone, as for the railway supports). After the step
(``rail_after``): the couplers' forces, extremes and work, the brakes' work, the stops.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_T
from trackrider.jit import njit
from trackrider.physics.joints import CODES
from trackrider.physics.joints import draft_gear as dg
from trackrider.physics.rows import friction_bound

J_DRAFT_GEAR = CODES["draft_gear"]

# Rail.curve columns
CURVE_TE, CURVE_DB, CURVE_ADHESION, CURVE_SHOE = 0, 1, 2, 3
# Rail.d_brake codes
BRAKE_NONE, BRAKE_RELEASE, BRAKE_SERVICE, BRAKE_EMERGENCY = 0, 1, 2, 3
# Rail.d_fired columns
FIRED_T, FIRED_S, FIRED_V, STOP_T, STOP_S = 0, 1, 2, 3, 4
# Rail.energy columns
ENERGY_TRACTION, ENERGY_DYNAMIC, ENERGY_AIR = 0, 1, 2
#: a train whose lead car is slower than this has stopped (m/s); a brake application at a lower
#: speed awaits no stop
STOP_SPEED = 0.01
#: wheel-slip onsets kept in the log
SLIP_LOG = 1000


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def curve_at(rail, b, which, x):
    """Car ``b``'s curve ``which`` (CURVE_*) at ``x`` (a speed, m/s): piecewise linear between its
    points, constant beyond the first and the last; 0 for a car without that curve."""
    start, count = rail.curve[b, which, 0], rail.curve[b, which, 1]
    if count == 0:
        return 0.0
    knots = rail.knots
    last = start + count - 1
    if x <= knots[start, 0]:
        return knots[start, 1]
    if x >= knots[last, 0]:
        return knots[last, 1]
    k = start
    while knots[k + 1, 0] < x:
        k += 1
    x0, x1 = knots[k, 0], knots[k + 1, 0]
    return knots[k, 1] + (knots[k + 1, 1] - knots[k, 1]) * (x - x0) / (x1 - x0)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def take_driver_steps(t0, cars, rail):
    """The driver's steps whose time (≤ ``t0``, the step's start) or lead-car position has come."""
    for k in range(rail.d_train.shape[0]):
        if not np.isnan(rail.d_fired[k, FIRED_T]):
            continue
        tr = rail.d_train[k]
        lead = rail.lead[tr]
        if np.isnan(rail.d_time[k]):
            if not cars.s[lead] >= rail.d_pos[k]:
                continue
        elif not t0 >= rail.d_time[k]:
            continue
        v = cars.speed0[lead]
        rail.d_fired[k, FIRED_T] = t0
        rail.d_fired[k, FIRED_S] = cars.s[lead]
        rail.d_fired[k, FIRED_V] = v
        notch, dyn = rail.d_notch[k], rail.d_dyn[k]
        for b in range(cars.n):
            if rail.train[b] != tr or not rail.loco[b] or (rail.d_loco[k] >= 0 and rail.d_loco[k] != rail.unit[b]):
                continue
            if notch >= 0.0:
                rail.notch[b] = notch
                if notch > 0.0:
                    rail.dyn[b] = 0.0
            if dyn >= 0.0:
                rail.dyn[b] = dyn
                if dyn > 0.0:
                    rail.notch[b] = 0.0
        code = rail.d_brake[k]
        if code == BRAKE_RELEASE:
            rail.pending[tr] = -1
        elif code != BRAKE_NONE:
            rail.pending[tr] = k if v > STOP_SPEED else -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def brake_pipes(t0, h, gmag, bodies, cars, rail):
    """Each braked car's pipe (the newest brake command that has reached it by ``t0``), cylinder
    (towards its target at the fill or release rate over the step) and air-brake force
    (``cars.brake``: cylinder × rigging × shoe friction, at most the adhesion)."""
    nd = rail.d_train.shape[0]
    for b in range(cars.n):
        cars.brake[b] = 0.0
        if not rail.braked[b]:
            continue
        tr = rail.train[b]
        for k in range(rail.cmd[b] + 1, nd):
            code = rail.d_brake[k]
            if rail.d_train[k] != tr or code == BRAKE_NONE or np.isnan(rail.d_fired[k, FIRED_T]):
                continue
            c = rail.c_emergency[tr] if code == BRAKE_EMERGENCY else rail.c_service[tr]
            if rail.d_fired[k, FIRED_T] + rail.dist[b] / c <= t0:
                rail.cmd[b] = k
        p0 = rail.p0[tr]
        k = rail.cmd[b]
        if k < 0 or rail.d_brake[k] == BRAKE_RELEASE:
            pipe = p0
        elif rail.d_brake[k] == BRAKE_EMERGENCY:
            pipe = 0.0
        else:
            pipe = p0 - rail.d_reduction[k]
        rail.pipe[b] = pipe
        target = min(1.0, (p0 - pipe) / rail.full_service[tr]) * rail.cyl_max[tr]
        d = target - rail.cyl[b]
        d = min(max(d, -h * rail.release_rate[tr]), h * rail.fill_rate[tr])
        rail.cyl[b] += d
        if rail.rigging[b] > 0.0 and rail.cyl[b] > 0.0:
            v = abs(cars.speed0[b])
            force = rail.cyl[b] * rail.rigging[b] * curve_at(rail, b, CURVE_SHOE, v)
            grip = curve_at(rail, b, CURVE_ADHESION, v) * rail.grip_mass[b] * gmag * abs(cars.frame[b, C_B + 2])
            cars.brake[b] = min(force, grip)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def traction(t0, h, gmag, bodies, cars, rail):
    """Each locomotive's force along T this step (``rail.f_trac``): its notch of the tractive-effort
    curve, less its dynamic brake against the motion (at most stopping the car in the step), limited
    by adhesion with wheel slip (the module docstring)."""
    for b in range(cars.n):
        rail.f_trac[b] = 0.0
        if not rail.loco[b] or not cars.held[b]:
            continue
        v = cars.speed0[b]
        av = abs(v)
        f = 0.0
        if rail.notch[b] > 0.0:
            if rail.power[b] > 0.0:
                full = rail.te_max[b] if av * rail.te_max[b] <= rail.power[b] else rail.power[b] / av
            else:
                full = curve_at(rail, b, CURVE_TE, av)
            f = rail.notch[b] / rail.notches[b] * full
        if rail.dyn[b] > 0.0 and v != 0.0:
            fd = min(rail.dyn[b] * curve_at(rail, b, CURVE_DB, av), av * rail.grip_mass[b] / h)
            f -= fd if v > 0.0 else -fd
        grip = curve_at(rail, b, CURVE_ADHESION, av) * rail.adh_mass[b] * gmag * abs(cars.frame[b, C_B + 2])
        slip = rail.slip_factor[b] * grip
        if rail.slipping[b]:
            if abs(f) <= slip:
                rail.slipping[b] = 0
        elif abs(f) > grip:
            rail.slipping[b] = 1
            n = rail.nslip[0]
            if n < rail.slips.shape[0]:
                rail.slips[n, 0] = t0
                rail.slips[n, 1] = b
            rail.nslip[0] = n + 1
        if rail.slipping[b]:
            f = slip if f > 0.0 else -slip
        rail.f_trac[b] = f


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_rail(step, cfg, bodies, cars, joints, rail):
    """Before the step's solve: the draft gears' rates, the driver, the brake pipes and cylinders, the
    locomotives' forces."""
    t0 = (step - 1) * cfg.h
    for i in range(rail.gears.shape[0]):
        j = rail.gears[i]
        joints.param[j, dg.XD0] = dg.rate(j, joints, bodies)
    take_driver_steps(t0, cars, rail)
    brake_pipes(t0, cfg.h, cfg.gmag, bodies, cars, rail)
    traction(t0, cfg.h, cfg.gmag, bodies, cars, rail)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def apply_traction(cfg, bodies, cars, rail):
    """The locomotives' forces as impulses along T (after the velocities' stage, every attempt)."""
    vel = bodies.vel
    for b in range(cars.n):
        f = rail.f_trac[b]
        if f != 0.0:
            fr = cars.frame[b]
            dv = cfg.h * f * bodies.inv_mass[b]
            for i in range(3):
                vel[b, i] += dv * fr[C_T + i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def push(b, lin, ang, lam, bodies):
    """Impulse ``lam`` (lin, ang) on body ``b`` with its plain mass and inertia (the track rows'
    projection follows)."""
    im = bodies.inv_mass[b]
    R = bodies.rot[b]
    for i in range(3):
        bodies.vel[b, i] += lam * im * lin[i]
    # I_w⁻¹ τ = R diag(inv_ib) Rᵀ τ
    for k in range(3):
        tk = (R[0, k] * ang[0] + R[1, k] * ang[1] + R[2, k] * ang[2]) * bodies.inv_ib[b, k] * lam
        for i in range(3):
            bodies.omg[b, i] += R[i, k] * tk


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def apply_gear_forces(cfg, bodies, joints, rail):
    """The deflecting draft gears' forces (``draft_gear.impulse``), explicit: applied before the track
    rows' projection, every attempt (a gear's mode may change between attempts)."""
    for i in range(rail.gears.shape[0]):
        j = rail.gears[i]
        lam = dg.impulse(j, joints, bodies, cfg.h)
        if lam != 0.0:
            _, n, c, d = dg.bar(j, joints, bodies)
            push(joints.a[j], (-n[0], -n[1], -n[2]), (-c[0], -c[1], -c[2]), lam, bodies)
            push(joints.b[j], n, d, lam, bodies)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def coupler_impulse(j, joints):
    """The impulse of coupler ``j`` this step: its row's (the chain solve's) and a draft gear's explicit one."""
    lam = joints.lam[j, 0]
    if joints.kind[j] == J_DRAFT_GEAR:
        lam += joints.param[j, dg.FORCE]
    return lam


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def gear_modes(cfg, bodies, joints, rows, rail):
    """After a solve: each draft gear's mode checked against it (``draft_gear.check_mode``); True if
    one changed (the step is redone)."""
    changed = False
    for i in range(rail.gears.shape[0]):
        if dg.check_mode(rail.gears[i], joints, bodies, cfg.h):
            changed = True
    return changed


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def anchor_speed(b, bodies, cars):
    """Car ``b``'s anchor velocity along T."""
    fr = cars.frame[b]
    R = bodies.rot[b]
    cg = cars.cg[b]
    w = bodies.omg[b]
    rx, ry, rz = -cg * R[0, 2], -cg * R[1, 2], -cg * R[2, 2]
    a0 = w[1] * rz - w[2] * ry
    a1 = w[2] * rx - w[0] * rz
    a2 = w[0] * ry - w[1] * rx
    v = bodies.vel[b]
    return (v[0] + a0) * fr[C_T] + (v[1] + a1) * fr[C_T + 1] + (v[2] + a2) * fr[C_T + 2]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def rail_after(step, cfg, bodies, cars, res, joints, rows, trk, rail):
    """After the step's solve (before the positions move): the couplers' forces and their extremes, the
    draft gears' work, the air brakes' share of each friction row and the work of brakes and
    traction; the stop awaited after a brake application."""
    h = cfg.h
    t = step * h
    for b in range(cars.n):
        j = rail.coupler[b]
        if j < 0:
            rail.f_coupler[b] = np.nan
            continue
        f = -coupler_impulse(j, joints) / h
        rail.f_coupler[b] = f
        pk = rail.peak[j]
        if f > pk[0]:
            pk[0], pk[1], pk[2] = f, t, cars.s[b]
        if -f > pk[3]:
            pk[3], pk[4], pk[5] = -f, t, cars.s[b]
    for i in range(rail.gears.shape[0]):
        j = rail.gears[i]
        # the work of the step's impulse: times the mean of the rates before and after it
        rail.e_gear[j] -= coupler_impulse(j, joints) * 0.5 * (joints.param[j, dg.XD0] + dg.rate(j, joints, bodies))
    for b in range(cars.n):
        rail.f_brake[b] = 0.0
        if not cars.held[b]:
            continue
        v = anchor_speed(b, bodies, cars)
        if cars.brake[b] > 0.0 and cars.lam_friction[b] != 0.0:
            bound = friction_bound(b, cfg, bodies, cars, res, trk.lam)
            share = cars.lam_friction[b] * min(1.0, cars.brake[b] * h / bound) if bound > 0.0 else 0.0
            rail.f_brake[b] = share / h
            rail.energy[b, ENERGY_AIR] -= share * v
        f = rail.f_trac[b]
        if f != 0.0:
            if rail.dyn[b] > 0.0 and rail.notch[b] == 0.0:
                rail.energy[b, ENERGY_DYNAMIC] -= h * f * v
            else:
                rail.energy[b, ENERGY_TRACTION] += h * f * v
    for tr in range(rail.pending.shape[0]):
        k = rail.pending[tr]
        if k >= 0:
            lead = rail.lead[tr]
            if anchor_speed(lead, bodies, cars) <= STOP_SPEED:
                rail.d_fired[k, STOP_T] = t
                rail.d_fired[k, STOP_S] = cars.s[lead]
                rail.pending[tr] = -1
