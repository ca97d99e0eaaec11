"""The divergence test of every recorded chunk: impossible numbers end the run (docs/outputs.md,
"diverged"); ``run_world`` applies it before the ride is measured."""
from __future__ import annotations

import numpy as np

from trackrider.physics import channels as ch


# ----------------------------------------------------------------------------------
# divergence: impossible numbers end the run (docs/outputs.md, "diverged")
# ----------------------------------------------------------------------------------

#: a group's mechanical energy may rise at most this fraction above what it had to spend
ENERGY_RISE_LIMIT = 0.10
#: ... of at least the energy of its mass raised by this height, m (a group at rest)
ENERGY_FLOOR_HEIGHT = 1.0
#: a sample is calm while every test stays below this fraction of its limit; in a diverged run the
#: figures after the last calm sample before the divergence are withheld (docs/outputs.md)
CALM_FRACTION = 0.1

def entity_groups(n_entities, entity_ends):
    """Connected groups of entities: ``entity_ends`` is an iterable of (a, b) entity indices (−1: the world)."""
    parent = list(range(n_entities))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in entity_ends:
        if a >= 0 and b >= 0:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict = {}
    for e in range(n_entities):
        groups.setdefault(find(e), []).append(e)
    return [np.asarray(g, dtype=int) for g in groups.values()]


class DivergenceCheck:
    """The divergence test of every recorded chunk (one for all runs, ``run_world`` applies it).

    An instant is not sane when any recorded number of an entity is non-finite,
    when a group's mechanical energy (kinetic + potential, summed over the
    entities joined by couplings and joints) rises above what it had to spend
    by more than ``ENERGY_RISE_LIMIT`` of that, or when a joint's position
    constraint is violated by more than ``checks.DIVERGED_VIOLATION`` m. What
    a group had to spend is ``K0 + (V0 − V_min) + W⁺``: its starting kinetic
    energy, the potential energy it has descended (the lowest level it reached
    so far) and the largest positive work its motors had done (``motor_force ×
    speed``, integrated over the recorded samples); the rise is
    ``E − E0 − W`` (W the motors' net work, brakes negative), and it must stay
    below ``ENERGY_RISE_LIMIT × max(spend, M g · ENERGY_FLOOR_HEIGHT)``. With the
    world's tracks, a car further than ``DIVERGED_VIOLATION`` m from its track
    is not sane either.
    Groups with a motorised hinge (its work is not recorded) or a spring joint
    given its own rest length (it may start stretched) skip the energy test.

    Parameters
    ----------
    groups : list of int arrays
        Entity groups (``entity_groups``).
    group_mass : sequence of float
        Mass of each group, kg.
    gravity : float
        m/s².
    record_dt : float
        s between samples.
    joints : trackrider.physics.checks.JointGeometry, optional
        The constraint test.
    skip_energy : sequence of bool, optional
        Per group: no energy test.
    """

    def __init__(self, groups, group_mass, gravity, record_dt, joints=None, skip_energy=None, tracks=None):
        self.tracks = tracks
        self.groups = [np.asarray(g, dtype=int) for g in groups]
        self.mass = np.asarray(group_mass, dtype=float)
        self.g = float(gravity)
        self.record_dt = float(record_dt)
        self.joints = joints
        self.skip = np.zeros(len(self.groups), bool) if skip_energy is None else np.asarray(skip_energy, bool)
        n = len(self.groups)
        self.e0 = np.full(n, np.nan)
        self.k0 = np.zeros(n)
        self.v0 = np.zeros(n)
        self.vmin = np.full(n, np.inf)
        self.work = np.zeros(n)
        self.work_max = np.zeros(n)
        self.prev_power = np.full(n, np.nan)
        self.calm_t = None   # time of the last calm sample so far
        self.onset = None    # after a divergence: the last calm sample before it (None: none was calm)

    @classmethod
    def from_world(cls, world, record_dt, tracks=None):
        """The check of a built ``World`` (its joints, masses and gravity); with ``tracks`` (the
        world's ``Track`` objects by index) also each car's distance from its track."""
        from trackrider.physics.checks import JointGeometry, TrackGeometry, entity_of
        from trackrider.physics.joints import kind as joint_kind

        n = int(world.n_entities)
        ends = []
        for k, t in enumerate(world.trains):           # couplings join the cars of a train
            first = entity_of(world, ("car", k, 0))
            ends += [(first, first + c) for c in range(1, int(t["n"]))]
        unrecorded = []     # an end of each joint that does work or stores energy the channels miss
        for jd in world.joints:
            a, b = entity_of(world, jd["a"]), entity_of(world, jd["b"])
            ends.append((a, b))
            if joint_kind(jd["kind"]).unrecorded_energy(jd.get("p", {})):
                unrecorded.append(a if a >= 0 else b)
        ends += list(world.contact_ends)   # trains that meet pass energy to each other
        groups = entity_groups(n, ends)
        mass = np.asarray(world.mass, dtype=float)[:n]
        skip = [any(e in g for e in unrecorded) for g in groups]
        track_geometry = TrackGeometry.from_world(world, tracks) if tracks else None
        return cls(groups, [float(mass[g].sum()) for g in groups], world.gravity, record_dt,
                   joints=JointGeometry.from_world(world), skip_energy=skip, tracks=track_geometry)

    def check(self, t, samples):
        """First instant of this chunk that is not sane: ``(index, entity or None, reason)``, or None."""
        m = len(t)
        if m == 0:
            return None
        bad_at = m
        found = None
        # non-finite numbers (track columns of bodies and ran-off cars are NaN by design)
        core = samples[:, :, [ch.X, ch.Y, ch.Z, ch.QW, ch.VX, ch.VY, ch.VZ, ch.KINETIC_ENERGY]]
        nonfinite = ~np.all(np.isfinite(core), axis=2)       # (m, ne)
        if nonfinite.any():
            i, e = np.argwhere(nonfinite)[0]
            bad_at, found = int(i), (int(i), int(e), "non-finite state")
        stress = np.zeros(m)     # the largest fraction of a test's limit reached, per sample
        # energy
        energy = samples[:, :, ch.KINETIC_ENERGY] + samples[:, :, ch.POTENTIAL_ENERGY]
        power = np.nan_to_num(samples[:, :, ch.MOTOR_FORCE] * samples[:, :, ch.SPEED], nan=0.0)
        for gi, members in enumerate(self.groups):
            e = energy[:bad_at, members].sum(axis=1)
            if e.size == 0:
                continue
            ke = samples[:bad_at, members, ch.KINETIC_ENERGY].sum(axis=1)
            pe = samples[:bad_at, members, ch.POTENTIAL_ENERGY].sum(axis=1)
            p = power[:bad_at, members].sum(axis=1)
            if np.isnan(self.e0[gi]):
                self.e0[gi], self.k0[gi], self.v0[gi] = e[0], ke[0], pe[0]
                self.prev_power[gi] = p[0]
            # motor work, trapezoid between samples (the first sample's interval from its own power)
            p_prev = np.concatenate([[self.prev_power[gi]], p[:-1]])
            w = self.work[gi] + np.cumsum(0.5 * (p_prev + p) * self.record_dt)
            vmin = np.minimum.accumulate(np.minimum(pe, self.vmin[gi]))
            wmax = np.maximum.accumulate(np.maximum(w, self.work_max[gi]))
            spend = self.k0[gi] + (self.v0[gi] - vmin) + np.maximum(wmax, 0.0)
            limit = ENERGY_RISE_LIMIT * np.maximum(spend, self.mass[gi] * self.g * ENERGY_FLOOR_HEIGHT)
            rise = e - self.e0[gi] - w
            if not self.skip[gi]:
                stress[:len(rise)] = np.maximum(stress[:len(rise)], rise / limit)
            over = np.flatnonzero(rise > limit) if not self.skip[gi] else np.empty(0, int)
            if over.size and int(over[0]) < bad_at:
                i = int(over[0])
                ent = int(members[np.argmax(np.abs(samples[i, members, ch.KINETIC_ENERGY]))])
                bad_at = i
                found = (i, ent, f"mechanical energy rose {rise[i]:.4g} J above what its motors and height "
                                 f"supplied (limit {limit[i]:.4g} J)")
            if bad_at > 0:
                self.work[gi] = w[bad_at - 1]
                self.work_max[gi] = wmax[bad_at - 1]
                self.vmin[gi] = vmin[bad_at - 1]
                self.prev_power[gi] = p[bad_at - 1]
        # constraints
        if self.joints is not None and self.joints.joints and bad_at > 0:
            from trackrider.physics.checks import DIVERGED_VIOLATION

            v = self.joints.violation(samples[:bad_at])
            if v.size:
                worst = np.nan_to_num(v, nan=np.inf).max(axis=1) / DIVERGED_VIOLATION
                stress[:len(worst)] = np.maximum(stress[:len(worst)], worst)
            over = np.argwhere(np.nan_to_num(v, nan=np.inf) > DIVERGED_VIOLATION)
            if over.size:
                i, k = over[0]
                jd = self.joints.joints[int(k)]
                ent = jd["a"] if jd["a"] >= 0 else jd["b"]
                bad_at = int(i)       # the earliest insane sample, whichever test finds it
                found = (int(i), int(ent), f"{self.joints.describe(int(k))} violated by {v[i, k]:.4g} m "
                                           f"(limit {DIVERGED_VIOLATION:g} m)")
        if self.tracks is not None and bad_at > 0:
            from trackrider.physics.checks import DIVERGED_VIOLATION

            hit = self.tracks.first_violation(samples[:bad_at])
            if hit is not None:
                i, ent, dist = hit
                found = (i, ent, f"{dist:.4g} m off its track (the track joint's limit is {DIVERGED_VIOLATION:g} m)")
        end = found[0] if found is not None else m
        calm = np.flatnonzero(stress[:end] < CALM_FRACTION)
        if calm.size:
            self.calm_t = float(t[calm[-1]])
        if found is not None:
            self.onset = self.calm_t
        return found


def blank_ran_off(samples):
    """After ``ran_off_track`` a car is on no track: its track columns become NaN (in place)."""
    flags = np.nan_to_num(samples[:, :, ch.FLAGS], nan=0.0).astype(np.int64)
    off = (flags & ch.RAN_OFF) != 0
    if off.any():
        for c in ch.TRACK_CHANNELS:
            samples[:, :, c] = np.where(off, np.nan, samples[:, :, c])
        for c in (ch.G_VERTICAL, ch.G_LATERAL, ch.G_LONGITUDINAL, ch.ACCEL) + ch.ROW_G:
            samples[:, :, c] = np.where(off, np.nan, samples[:, :, c])
    return samples
