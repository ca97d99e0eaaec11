"""Constraint checks read from a built ``World`` and from recorded samples (no kernel state).

* ``JointGeometry.from_world(world)`` fixes every user joint's anchors in its
  bodies' axes by the rule ``World`` uses (``joints.common.default_anchors``).
* ``check_start(world)`` refuses a joint whose position constraint (its kind's
  ``position_error``: ball, hinge: the anchors apart; a rigid distance joint: its
  length off, or outside its min/max range; a pulley: its rope) is broken by more
  than ``START_TOLERANCE`` m at the start — bad input, naming the joint and the
  distance (``InputError``). The axis of a hinge or prismatic joint is given once
  (in a's axes) and b's is taken from the start, so it cannot start off.
* ``JointGeometry.violation(samples)`` gives the violation of each joint's
  position constraint, m, at each recorded instant, from the recorded
  positions and orientations (``trackrider.physics.channels``); the run's
  divergence test (``trackrider.divergence.DivergenceCheck``) ends a run whose
  constraint is violated by more than ``DIVERGED_VIOLATION`` m.
"""
from __future__ import annotations

import numpy as np

from trackrider.errors import InputError
from trackrider.physics import channels as ch
from trackrider.physics.joints import kind as joint_kind
from trackrider.physics.joints.common import default_anchors

#: a joint whose ends start further apart than this is bad input, m
START_TOLERANCE = 0.01
#: a constraint violated by more than this ends the run as diverged, m
DIVERGED_VIOLATION = 0.1


def _rot(q):
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) (w, x, y, z)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def entity_of(world, end) -> int:
    """Entity index of a joint end (−1 for the world), in ``World.entity_labels`` order."""
    if end == "world":
        return -1
    if end[0] == "idx":          # a suspended car's swing hinge names entities directly
        return int(end[1])
    trains = world.trains
    ncars = sum(int(t["n"]) for t in trains)
    if end[0] == "car":
        return sum(int(t["n"]) for t in trains[: end[1]]) + int(end[2])
    return ncars + int(end[1])


class JointGeometry:
    """The user joints' anchors and the position constraint each keeps."""

    def __init__(self, joints):
        #: per joint: dict(index, kind, a, b, la, lb, params)
        self.joints = joints

    @classmethod
    def from_world(cls, world) -> "JointGeometry":
        pos = np.asarray(world.pos, dtype=float)
        quat = np.asarray(world.quat, dtype=float)
        cg = []
        for t in world.trains:
            cg += [float(t.get("cg", 0.0))] * int(t["n"])

        def track_anchor(e):
            return np.array([0.0, 0.0, -cg[e]]) if e < len(cg) else np.zeros(3)

        def world_point(e, local):
            return pos[e] + _rot(quat[e]) @ local

        out = []
        for j, jd in enumerate(world.joints):
            if jd.get("suspension"):
                continue
            kind = jd["kind"]
            a, b = entity_of(world, jd["a"]), entity_of(world, jd["b"])
            la, lb = default_anchors(joint_kind(kind).ANCHOR_B_AT_A, jd["anchor_a"], jd["anchor_b"], a, b,
                                     track_anchor, world_point, lambda e, p: _rot(quat[e]).T @ (p - pos[e]))
            out.append(dict(index=j, kind=kind, a=a, b=b, la=np.asarray(la, float), lb=np.asarray(lb, float),
                            p=dict(jd.get("p", {}))))
        geo = cls(out)
        # the anchors at the start (a rope's length, a bar's default length)
        pa, pb = geo._ends(pos[None], quat[None])
        for k, jd in enumerate(geo.joints):
            jd["pa0"], jd["pb0"] = pa[0, k], pb[0, k]
        return geo

    def _ends(self, pos, quat):
        """World anchor points (m, n_joints, 3) of ends a and b; pos (m, ne, 3), quat (m, ne, 4)."""
        m = pos.shape[0]
        n = len(self.joints)
        pa = np.empty((m, n, 3))
        pb = np.empty((m, n, 3))
        for k, jd in enumerate(self.joints):
            for e, local, out in ((jd["a"], jd["la"], pa), (jd["b"], jd["lb"], pb)):
                if e < 0:
                    out[:, k] = local
                else:
                    out[:, k] = pos[:, e] + np.einsum("mij,j->mi", _rot(quat[:, e]), local)
        return pa, pb

    def _violations(self, pa, pb):
        """(m, n_joints) violation of each joint's position constraint, m (0: kept, NaN: not checked)."""
        m, n = pa.shape[:2]
        v = np.zeros((m, n))
        for k, jd in enumerate(self.joints):
            error = joint_kind(jd["kind"]).position_error(pa[:, k], pb[:, k], jd["p"], jd["pa0"], jd["pb0"])
            if error is not None:
                v[:, k] = error
        return v

    def violation(self, samples):
        """(m, n_joints) violation, m, at each recorded instant of ``samples`` (m, ne, N_CHANNELS)."""
        if not self.joints:
            return np.zeros((samples.shape[0], 0))
        pos = samples[:, :, [ch.X, ch.Y, ch.Z]]
        quat = samples[:, :, [ch.QW, ch.QX, ch.QY, ch.QZ]]
        return self._violations(*self._ends(pos, quat))

    def describe(self, k) -> str:
        """``joint[i] (kind)`` of the k-th checked joint."""
        jd = self.joints[k]
        return f"joint[{jd['index']}] ({jd['kind']})"


def check_start(world) -> JointGeometry:
    """Refuse joints whose ends start apart (``InputError`` naming the joint and the distance)."""
    geo = JointGeometry.from_world(world)
    if not geo.joints:
        return geo
    v = geo._violations(*geo._ends(np.asarray(world.pos, float)[None], np.asarray(world.quat, float)[None]))[0]
    for k, jd in enumerate(geo.joints):
        if v[k] > START_TOLERANCE:
            what = joint_kind(jd["kind"]).START_WORDS.format(v[k])
            raise InputError(f"the {jd['kind']} joint is violated at the start: {what} (more than "
                             f"{START_TOLERANCE:g} m); move its anchors or the cars and bodies it joins",
                             where=f"joint[{jd['index']}]")
    return geo


class TrackGeometry:
    """The track joints' position constraint: each car's anchor on its track curve.

    ``tracks`` are the world's tracks (``Track`` objects with ``frames``), by track index.
    A car's anchor is its centre of mass less ``cg`` along its up axis; the constraint
    is its distance from the track point at the car's recorded ``s``.
    """

    #: at most this many recorded instants per chunk are tested first (all of a stretch that fails)
    PROBES = 64

    def __init__(self, tracks, car_track, car_cg):
        self.tracks = list(tracks)
        self.car_track = np.asarray(car_track, dtype=int)
        self.car_cg = np.asarray(car_cg, dtype=float)

    @classmethod
    def from_world(cls, world, tracks) -> "TrackGeometry":
        car_track, car_cg = [], []
        for t in world.trains:
            cg = 0.0 if t.get("suspended") else float(t.get("cg", 0.0))
            car_track += [int(t["track"])] * int(t["n"])
            car_cg += [cg] * int(t["n"])
        return cls(tracks, car_track, car_cg)

    def _rows(self, samples):
        """(m, n_cars) distance of each car's anchor from its track, m (NaN: not on its track)."""
        n = len(self.car_track)
        m = samples.shape[0]
        out = np.full((m, n), np.nan)
        if n == 0 or m == 0:
            return out
        smp = samples[:, :n]
        flags = np.nan_to_num(smp[:, :, ch.FLAGS], nan=0.0).astype(np.int64)
        on = ((flags & ch.ON_TRACK) != 0) & ((flags & ch.RAN_OFF) == 0) & np.isfinite(smp[:, :, ch.S])
        R = _rot(smp[:, :, [ch.QW, ch.QX, ch.QY, ch.QZ]])
        anchor = smp[:, :, [ch.X, ch.Y, ch.Z]] - R[..., :, 2] * self.car_cg[None, :, None]
        for k, track in enumerate(self.tracks):
            cars = np.flatnonzero(self.car_track == k)
            sel = on[:, cars]
            if not sel.any():
                continue
            i, j = np.nonzero(sel)
            p = track.frames(smp[i, cars[j], ch.S]).position
            out[i, cars[j]] = np.linalg.norm(anchor[i, cars[j]] - p, axis=1)
        return out

    def first_violation(self, samples, limit=DIVERGED_VIOLATION):
        """``(index, car entity, distance)`` of the first instant a car is further than ``limit`` m
        from its track, or None. Tests ``PROBES`` instants spread over the chunk, then every
        instant before the first that fails."""
        m = samples.shape[0]
        if m == 0 or len(self.car_track) == 0:
            return None
        probes = np.unique(np.linspace(0, m - 1, min(m, self.PROBES)).astype(int))
        d = self._rows(samples[probes])
        bad = np.flatnonzero(np.nan_to_num(d, nan=0.0).max(axis=1) > limit)
        if bad.size == 0:
            return None
        hi = int(probes[bad[0]])
        lo = int(probes[bad[0] - 1]) + 1 if bad[0] > 0 else 0
        d = self._rows(samples[lo:hi + 1])
        rows = np.flatnonzero(np.nan_to_num(d, nan=0.0).max(axis=1) > limit)
        i = int(rows[0])
        e = int(np.nanargmax(d[i]))
        return lo + i, e, float(d[i, e])
