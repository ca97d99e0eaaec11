"""A mechanism's program: joint settings that follow profiles in time, a joint's cycle of holds and
releases, and what the joints that hold or drive a body carrying tracks report (docs/physics.md §9,
docs/scenarios.md "Driving a mechanism").

* A *drive* is a joint row's parameter column (a motor's speed, its force or torque bound) that
  follows a profile of knots ``(t, value)``: linear between knots, the first value before them and
  the last after. ``stage_programs`` writes it each step for the time at the end of the step.
* A *cycle* is a list of phases, each ``hold`` (the joint's angle or travel locked where it is when
  the phase begins: its hold row, ``slide``/``hinge_axis`` ``MODE_HOLD``) or ``release``; a phase
  begins at the start (the first), at a time, or once a named train has stood still
  (|speed| < ``STOP_SPEED`` for every car, on a track of the joint's body) for ``for`` seconds. Each
  change is logged (``Programs.log``) for the events ``joint_hold`` / ``joint_release``.
* A *reported* joint (each user joint with an end that carries tracks) is recorded after each
  recorded step into the sample's rows after the entities (``record_joints``): its travel, speed,
  drive, power, force, torque and hold (``channels.JOINT_CHANNELS``).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.physics import channels as ch
from trackrider.physics.joints.common import LA, LB, anchor
from trackrider.physics.maths import cross, mv

#: a train stands still while every car's speed along its track is below this, m/s
STOP_SPEED = 0.01
#: phase changes logged per kernel call (more are dropped from the events, never from the physics)
MAX_LOG = 256
HOLD, RELEASE = 1, 0
AT_START, AT_TIME, WHEN_STOPPED = 0, 1, 2


# ----------------------------------------------------------------------------- in the step
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def profile_value(knots, first, count, t):
    """The profile of ``count`` knots from ``first`` at time ``t``: linear between knots, constant
    outside them."""
    if t <= knots[first, 0]:
        return knots[first, 1]
    last = first + count - 1
    if t >= knots[last, 0]:
        return knots[last, 1]
    for i in range(first, last):
        t0, t1 = knots[i, 0], knots[i + 1, 0]
        if t <= t1:
            if t1 <= t0:
                return knots[i + 1, 1]
            u = (t - t0) / (t1 - t0)
            return knots[i, 1] + u * (knots[i + 1, 1] - knots[i, 1])
    return knots[last, 1]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _stopped(p, prog, cars, tracks):
    """The train of phase ``p`` stands still on a track of the phase's body."""
    for b in range(prog.pcar0[p], prog.pcar0[p] + prog.pncar[p]):
        if not cars.held[b] or tracks.body[cars.track[b]] != prog.pbody[p] or abs(cars.speed0[b]) >= STOP_SPEED:
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_programs(step, h, cars, joints, tracks, prog):
    """Before the step ``step`` (ending at t = step·h): each drive's column, each cycle's next phase."""
    t = step * h
    jf = joints.param
    for d in range(prog.dj.shape[0]):
        jf[prog.dj[d], prog.dcol[d]] = profile_value(prog.knots, prog.dfirst[d], prog.dcount[d], t)
    for c in range(prog.cj.shape[0]):
        nx = prog.cphase[c] + 1
        if nx >= prog.ccount[c]:
            continue
        p = prog.cfirst[c] + nx
        go = False
        if prog.pwhen[p] == AT_TIME:
            go = t >= prog.pt[p] - 0.5 * h
        elif prog.pwhen[p] == WHEN_STOPPED:
            if _stopped(p, prog, cars, tracks):
                prog.ctime[c] += h
                go = prog.ctime[c] >= prog.pfor[p] - 0.5 * h
            else:
                prog.ctime[c] = 0.0
        if go:
            prog.cphase[c] = nx
            prog.ctime[c] = 0.0
            jf[prog.cj[c], prog.ccol[c]] = 2.0 if prog.pstate[p] == HOLD else 0.0
            n = prog.nlog[0]
            if n < prog.log.shape[0]:
                prog.log[n, 0] = step
                prog.log[n, 1] = c
                prog.log[n, 2] = nx
                prog.nlog[0] = n + 1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def record_joints(h, bodies, joints, rows, prog, out):
    """Each reported joint's sample into ``out[nb + r]`` (``channels.JOINT_CHANNELS``; the rest NaN)."""
    nb = bodies.pos.shape[0]
    jf, rot, pos, vel, omg = joints.param, bodies.rot, bodies.pos, bodies.vel, bodies.omg
    for r in range(prog.rj.shape[0]):
        o = out[nb + r]
        for c in range(o.shape[0]):
            o[c] = np.nan
        j = prog.rj[r]
        a, b = joints.a[j], joints.b[j]
        side = prog.rside[r]
        e = a if side == 0 else b
        # the joint's whole impulse on the carrier: its rows' columns at that end
        f0 = f1 = f2 = t0 = t1 = t2 = 0.0
        drive = 0.0
        for q in range(prog.rn[r]):
            jq = j + q
            for k in range(rows.m[jq]):
                lam = joints.lam[jq, k]
                f0 += rows.J[jq, k, side] * lam
                f1 += rows.J[jq, k, side + 1] * lam
                f2 += rows.J[jq, k, side + 2] * lam
                t0 += rows.J[jq, k, side + 3] * lam
                t1 += rows.J[jq, k, side + 4] * lam
                t2 += rows.J[jq, k, side + 5] * lam
                if q > 0:
                    drive += lam
        rx, ry, rz, px, py, pz = anchor(e, rot, pos, jf, j, LA if side == 0 else LB)
        c0, c1, c2 = cross(rx, ry, rz, f0, f1, f2)
        o[ch.J_FORCE] = np.sqrt(f0 * f0 + f1 * f1 + f2 * f2) / h
        o[ch.J_TORQUE] = np.sqrt((t0 - c0) ** 2 + (t1 - c1) ** 2 + (t2 - c2) ** 2) / h
        o[ch.J_DRIVE] = drive / h
        ax = prog.raxis[r]
        if a >= 0:
            u0, u1, u2 = mv(rot[a], ax[0], ax[1], ax[2])
        else:
            u0, u1, u2 = ax[0], ax[1], ax[2]
        if prog.rkind[r] == 2:   # prismatic: x = d·u, ẋ = (ṗ_b − ṗ_a)·u + d·(ω_a × u)
            rax, ray, raz, pax, pay, paz = anchor(a, rot, pos, jf, j, LA)
            rbx, rby, rbz, pbx, pby, pbz = anchor(b, rot, pos, jf, j, LB)
            dx, dy, dz = pbx - pax, pby - pay, pbz - paz
            va0 = va1 = va2 = wa0 = wa1 = wa2 = 0.0
            if a >= 0:
                w0, w1, w2 = cross(omg[a, 0], omg[a, 1], omg[a, 2], rax, ray, raz)
                va0, va1, va2 = vel[a, 0] + w0, vel[a, 1] + w1, vel[a, 2] + w2
                wa0, wa1, wa2 = omg[a, 0], omg[a, 1], omg[a, 2]
            vb0 = vb1 = vb2 = 0.0
            if b >= 0:
                w0, w1, w2 = cross(omg[b, 0], omg[b, 1], omg[b, 2], rbx, rby, rbz)
                vb0, vb1, vb2 = vel[b, 0] + w0, vel[b, 1] + w1, vel[b, 2] + w2
            n0, n1, n2 = cross(wa0, wa1, wa2, u0, u1, u2)
            o[ch.J_TRAVEL] = dx * u0 + dy * u1 + dz * u2 - prog.rx0[r]
            o[ch.J_SPEED] = (vb0 - va0) * u0 + (vb1 - va1) * u1 + (vb2 - va2) * u2 + dx * n0 + dy * n1 + dz * n2
        elif prog.rkind[r] == 1:   # hinge: θ from the reference normals, θ̇ = (ω_b − ω_a)·a_w
            ref = prog.rref[r]
            if a >= 0:
                q0, q1, q2 = mv(rot[a], ref[0], ref[1], ref[2])
            else:
                q0, q1, q2 = ref[0], ref[1], ref[2]
            if b >= 0:
                s0, s1, s2 = mv(rot[b], ref[3], ref[4], ref[5])
            else:
                s0, s1, s2 = ref[3], ref[4], ref[5]
            c0, c1, c2 = cross(q0, q1, q2, s0, s1, s2)
            o[ch.J_TRAVEL] = np.arctan2(c0 * u0 + c1 * u1 + c2 * u2, q0 * s0 + q1 * s1 + q2 * s2)
            w = 0.0
            for i in range(3):
                wi = (omg[b, i] if b >= 0 else 0.0) - (omg[a, i] if a >= 0 else 0.0)
                w += wi * (u0 if i == 0 else (u1 if i == 1 else u2))
            o[ch.J_SPEED] = w
        o[ch.J_POWER] = o[ch.J_DRIVE] * o[ch.J_SPEED]
        hold = prog.rhold[r]
        o[ch.J_HELD] = 0.0 if hold < 0 else (1.0 if rows.hi[hold, 0] != 0.0 or rows.lo[hold, 0] != 0.0 else 0.0)


# ----------------------------------------------------------------------------- in Python
#: a phase's keys (a cycle is a list of them)
PHASE_KEYS = ("state", "at", "stopped", "for")
STATES = {"hold": HOLD, "release": RELEASE}
#: how long a train must have stood still when a phase does not say (``for``), s
DEFAULT_STOPPED_FOR = 0.5


def check_cycle(cycle, train_names, where: str = "cycle", path=None) -> list[dict]:
    """A joint's cycle of holds and releases, checked: a list of phases ``{state = "hold" | "release",
    at = t}`` or ``{state, stopped = "train", for = s}``; the first may have neither (it begins at the
    start). Returns ``[dict(state, when, t, train, for_s)]`` (``train`` its index in ``train_names``)."""
    from trackrider.errors import InputError
    from trackrider.settings import NUMBER, STRING, Setting, check_value, describe

    if isinstance(cycle, (str, bytes, dict)) or not hasattr(cycle, "__len__") or not 1 <= len(cycle) <= 1000:
        raise InputError(f"must be a list of 1 … 1000 phases ({{state = \"hold\" | \"release\", at = t}} or "
                         f"{{state, stopped = \"train\", for = s}}), got {describe(cycle)}", path=path, where=where)
    out = []
    for i, phase in enumerate(cycle):
        at = f"{where}[{i}]"
        if not isinstance(phase, dict):
            raise InputError(f"must be a table {{state = …, at = … | stopped = …}}, got {describe(phase)}", path=path,
                             where=at)
        for key in phase:
            if key not in PHASE_KEYS:
                raise InputError(f"unknown key; allowed here: {', '.join(PHASE_KEYS)}", path=path, where=f"{at}.{key}")
        if "state" not in phase:
            raise InputError("missing (required): hold or release", path=path, where=f"{at}.state")
        state = check_value(Setting(STRING, choices=tuple(STATES)), phase["state"], f"{at}.state", path)
        if "at" in phase and "stopped" in phase:
            raise InputError("a phase begins at a time or when a train has stopped, not both", path=path,
                             where=f"{at}.stopped")
        if "for" in phase and "stopped" not in phase:
            raise InputError("applies to a phase that begins when a train has stopped (stopped = \"train\")",
                             path=path, where=f"{at}.for")
        p = dict(state=STATES[state], when=AT_START, t=0.0, train=-1, for_s=0.0)
        if "at" in phase:
            p.update(when=AT_TIME, t=check_value(Setting(NUMBER, "s", ge=0.0, maximum=1e9), phase["at"], f"{at}.at",
                                                  path))
        elif "stopped" in phase:
            name = check_value(Setting(STRING), phase["stopped"], f"{at}.stopped", path)
            if name not in train_names:
                from trackrider.settings import _did_you_mean

                raise InputError(f"no train named {name!r}{_did_you_mean(name, train_names)} (trains: "
                                 f"{', '.join(train_names) or 'none'})", path=path, where=f"{at}.stopped")
            p.update(when=WHEN_STOPPED, train=list(train_names).index(name),
                     for_s=check_value(Setting(NUMBER, "s", ge=0.0, maximum=1e6), phase.get("for", DEFAULT_STOPPED_FOR),
                                       f"{at}.for", path))
        elif i > 0:
            raise InputError("a phase after the first begins at a time (at = t) or when a train has stopped "
                             "(stopped = \"train\")", path=path, where=at)
        out.append(p)
    return out
