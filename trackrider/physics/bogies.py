"""Cars on bogies (docs/physics.md "Bogies"): how ``World`` builds a train whose cars ride on two
wheel frames each (``CarSpec.bogies = "two"``) or share them (``"jacobs"``: N bodies on N + 1 frames). Python only: the kernels see wheel frames as a
train's cars (each on its own track joint), the car bodies as bodies after the free bodies and
the suspended cars' hanging bodies, and swivels (``joints/swivel.py``) between them.

A train of N cars on bogies is, to the kernels, a train of 2N wheel frames (front, rear, front,
…) and N car bodies: the couplers join the car bodies, a body's rear end to the next body's front
end (on the line through its pivots, ``length`` / 2 from their middle: ``World._coupler_rows``;
``expand`` places each next car so that the ends are the coupler's length apart); the train's
chain links its frames in order, by a bar between the two pivots of one car (the body keeps that
distance, so the bar is never solved: ``car_blocks.py``) and a link, never solved either, from a
car's rear frame to the next car's front frame; the body hangs by a swivel on each frame. A
Jacobs set has no couplers: every link of its chain is such a bar, and
neighbouring bodies hang on their shared frame by one swivel each. A railway train's vehicles on
bogies are expanded the same way, each with its own spacing, masses and lengths; ``rail.py`` gives
each frame its part of its vehicle's traction, brake and adhesion (``lever_weights``).

A trailered train (``"trailered"``: N bodies on N + 1 frames) has its first car on two frames like
``"two"``; every other car's body rides on one frame at its rear pivot and is hitched at its front
pivot to the car ahead, at that body's rear end (``length`` / 2 behind the middle of its pivots), by
a swivel without its roll row (a ball joint: ``joints/swivel.py``); its rear swivel holds its roll.
Its chain's links are all bars that are never solved (the hitch between bodies carries the train).
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_N, C_P, C_T
from trackrider.errors import InputError


def _chord_behind(world, ct, s_front, chord, pf=None):
    """Arc length s < ``s_front`` whose point is ``chord`` m from the point at ``s_front`` (or from
    the point ``pf``, near it)."""
    if pf is None:
        pf = world._frame(ct, s_front)[C_P:C_P + 3]
    s = s_front - chord
    for _ in range(30):
        fr = world._frame(ct, s)
        d = pf - fr[C_P:C_P + 3]
        dist = float(np.linalg.norm(d))
        step = (dist - chord) / max(float(np.dot(d, fr[C_T:C_T + 3])) / dist, 1e-3)
        s += step
        if abs(step) < 1e-12:
            break
    return s


def _body_end(world, ct, s_a, s_b, beyond):
    """The end of a body whose pivots are at ``s_a`` and ``s_b``, ``beyond`` m past the pivot at ``s_b``
    on the chord (the body's forward axis, ``place_bodies``), and the chord's direction from a to b."""
    pa, pb = world._frame(ct, s_a)[C_P:C_P + 3], world._frame(ct, s_b)[C_P:C_P + 3]
    u = (pb - pa) / np.linalg.norm(pb - pa)
    return pb + beyond * u, u


def _place_body_behind(world, ct, s_front, s_rear, half_front, half_back, spacing, gap, ctype, offset):
    """Arc length of the front pivot of the next car on two bogies (its rear pivot ``spacing`` behind
    it, by chord) so that its body's front end meets the coupler of the body ahead, whose pivots are at
    ``s_front`` and ``s_rear``: a bar coupler ``gap + offset`` long between the ends (``half_*``: a pivot
    to its end of the body), or a ball ``gap`` between them (along the bodies' mean axis)."""
    pa, ua = _body_end(world, ct, s_front, s_rear, half_front)      # ua: backwards along the body ahead
    s = s_rear - (half_front + half_back + gap + offset)
    for _ in range(30):
        pb, ub = _body_end(world, ct, _chord_behind(world, ct, s, spacing), s, half_back)
        if ctype == "ball":
            n = (ub - ua) / np.linalg.norm(ub - ua)
            step = float(np.dot((pa + 0.5 * gap * ua) - (pb + 0.5 * gap * ub), n))
        else:
            step = float(np.linalg.norm(pa - pb)) - (gap + offset)
        s += step
        if abs(step) < 1e-12:
            break
    return s


def expand(world, t, ct, car, frame_inertia_height=0.5):
    """Turn the train ``t`` (``World.add_train``'s dict, its cars placed as plain cars) into its
    wheel frames, and keep what its car bodies need under ``t["bogie"]`` (per car: a railway train's
    vehicles each have their own spacing, masses and lengths)."""
    n, kind = t["n"], car.bogies
    jacobs, trailered = kind == "jacobs", kind == "trailered"
    specs = t.get("vehicles") or [car] * n
    gap, ctype, offset = t["gap"], t["ctype"], t["coupling"].start_offset()
    halves = [(v.length - v.bogie_spacing) / 2.0 for v in specs]   # a pivot to its end of the body
    s = [t["s"][0] + specs[0].bogie_spacing / 2.0]
    links = []
    for c, v in enumerate(specs):
        if trailered and c > 0:   # behind the hitch, at the rear end of the body ahead
            p_rear = world._frame(ct, s[-1])[C_P:C_P + 3]
            front = world._frame(ct, s[-2])[C_P:C_P + 3] if c == 1 else hitch
            hitch = p_rear - halves[c - 1] * (front - p_rear) / np.linalg.norm(front - p_rear)
            s.append(_chord_behind(world, ct, s[-1], v.bogie_spacing, hitch))
            links.append(float(np.linalg.norm(world._frame(ct, s[-1])[C_P:C_P + 3] - p_rear)))
            continue
        if c > 0 and not jacobs:   # the bodies' ends a coupler apart (the bodies: chords between pivots)
            s.append(_place_body_behind(world, ct, s[-2], s[-1], halves[c - 1], halves[c], v.bogie_spacing, gap,
                                        ctype, offset))
            links.append(None)
        s.append(_chord_behind(world, ct, s[-1], v.bogie_spacing))
        links.append(v.bogie_spacing)
    if not ct.closed:
        for i, sv in enumerate(s):
            if not 0.0 <= sv <= ct.length:
                raise InputError(f"wheel frame {i + 1} would start at s = {sv:.3f} m, outside the track [0, "
                                 f"{ct.length:.3f}] m (start_s, cars, car.length, bogie_spacing)", where="start_s")
    H = frame_inertia_height
    body_mass, body_inertia, frame_mass, frame_inertia = [], [], [], []
    for v, inertia in zip(specs, t["inertias"]):
        mb = v.frame_mass
        body_mass.append(v.mass - (2.0 if kind == "two" or (trailered and not body_mass) else 1.0) * mb)
        body_inertia.append(inertia * (body_mass[-1] / v.mass))
        frame_mass.append(mb)
        wb, W = v.bogie_wheelbase, v.width
        frame_inertia.append(mb / 12.0 * np.array([W ** 2 + H ** 2, wb ** 2 + H ** 2, wb ** 2 + W ** 2]))
    t["bogie"] = dict(cars=n, spacing=[v.bogie_spacing for v in specs], mass=body_mass, inertia=body_inertia,
                      cg=[v.cg_height for v in specs], forward=[v.cg_forward for v in specs],
                      rider=[v.rider_height for v in specs], length=[v.length for v in specs], jacobs=jacobs,
                      rows=[v.row_offsets for v in specs], kind=kind, links=links, weights=lever_weights(specs, kind),
                      swivel_limit=[np.radians(v.swivel_limit) for v in specs])
    # frame k's car: k // 2 (two bogies each), in a Jacobs set the body behind it (the last frame: the
    # last car), trailered: the car it carries at its rear (the first two: the first car)
    owner = [min(k, n - 1) for k in range(n + 1)] if jacobs else [max(k - 1, 0) for k in range(n + 1)] \
        if trailered else [k // 2 for k in range(2 * n)]
    t.update(n=len(s), s=s, mass=frame_mass[0], inertia=frame_inertia[0], cg=0.0,
             masses=[frame_mass[c] for c in owner], lengths=[2.0 * halves[c] for c in owner],
             inertias=[frame_inertia[c] for c in owner], cgs=[0.0] * len(s),
             riders=[specs[c].rider_height for c in owner], rows=[(0.0, 0.0)] * len(s))   # rows: the bodies' (below)


def frames_of(bg, c):
    """The front and rear wheel frames (indices in the train) of car ``c`` (a trailered car after the
    first: −1, its rear frame)."""
    if bg["kind"] == "trailered":
        return (0, 1) if c == 0 else (-1, c + 1)
    return (c, c + 1) if bg["jacobs"] else (2 * c, 2 * c + 1)


def link_row(t, c):
    """The bar between two pivots when link c (frames c, c + 1) is one (every link of a Jacobs set
    and of a trailered train; c even for cars on two bogies each): the distance kind's columns
    ``(anchor a, anchor b, length)``; None for a coupler. The bars are never solved
    (``car_blocks.py``)."""
    bg = t.get("bogie")
    if bg is None or bg["links"][c] is None:
        return None
    return np.zeros(3), np.zeros(3), bg["links"][c]


def place_bodies(world, b, labels, etrain) -> int:
    """Each car body of a train on bogies, between its frames' pivots (a trailered car's: between its
    hitch on the body ahead and its frame; after the free bodies and the hanging bodies); its swivels
    are listed in ``world._swivels``. Returns the next body."""
    from trackrider.physics.world import _quat_from_axes, _rot

    pos, quat, vel, omg, cars = world.pos, world.quat, world.vel, world.omg, world.cars
    world._swivels = []
    world.swivels = SwivelWatch()
    for ti, t in enumerate(world._trains):
        bg = t.get("bogie")
        if bg is None:
            continue
        f0, nf = world._car0[ti], t["n"]        # a car's Davis resistance and drag area (per vehicle): shared
        cars.davis[f0:f0 + nf] *= bg["cars"] / nf   # by its frames; its nl2 resistance by their lever weights
        cars.drag[f0:f0 + nf, 0] *= bg["cars"] / nf
        cars.drag[f0:f0 + nf, 1] = bg["weights"]
        bg["body"] = list(range(b, b + bg["cars"]))     # each car's body (its couplers: World._coupler_rows)
        for c in range(bg["cars"]):
            L, e, cg = bg["spacing"][c], bg["forward"][c], bg["cg"][c]
            ff, fr = (f0 + k for k in frames_of(bg, c))
            pr = pos[fr]
            if ff >= f0:                        # frames' centres: their pivots, on the curve
                pf, up, wf, vf = pos[ff], _rot(quat[ff])[:, 2], omg[ff], vel[ff]
            else:                               # a trailered car's front: its hitch at the rear end of the body ahead
                Ra = _rot(quat[b - 1])
                ra = Ra @ hitch_a
                pf, up, wf, vf = pos[b - 1] + ra, Ra[:, 2], omg[b - 1], vel[b - 1] + np.cross(omg[b - 1], ra)
            fwd = (pf - pr) / np.linalg.norm(pf - pr)
            up = up + _rot(quat[fr])[:, 2]
            up -= np.dot(up, fwd) * fwd
            up /= np.linalg.norm(up)
            q = _quat_from_axes(fwd, np.cross(up, fwd), up)
            quat[b] = q
            mid = 0.5 * (pf + pr)
            pos[b] = mid + e * fwd + cg * up
            w = 0.5 * (wf + omg[fr])
            omg[b] = w
            vel[b] = 0.5 * (vf + np.cross(w, pos[b] - pf) + vel[fr] + np.cross(w, pos[b] - pr))
            world.mass[b] = bg["mass"][c]
            world.inv_mass[b] = 1.0 / bg["mass"][c]
            world.ib[b] = bg["inertia"][c]
            for f in (ff, fr):                  # the car's G-forces: its body's, at its rider point (a
                if f < f0 or (f == fr and cars.hang[f] >= 0):   # Jacobs set's shared frame: the body behind it)
                    continue
                cars.hang[f] = b
                cars.hang_rider[f] = bg["rider"][c] - cg
                cars.rows[f] = bg["rows"][c]
            labels.append((t["name"] + ".body", c + 1))
            etrain.append(-1)
            front = ("idx", ff) if ff >= f0 else ("idx", b - 1)
            # roll rows: each frame's lever weight (a trailered car's hitch holds none: its frame all)
            rolls = (0.5 + e / L, 0.5 - e / L) if ff >= f0 else (0.0, 1.0)
            for k, (a, xa, x) in enumerate(((front, np.zeros(3) if ff >= f0 else hitch_a, L / 2.0 - e),
                                            (("idx", fr), np.zeros(3), -L / 2.0 - e))):
                on_frame = k == 1 or ff >= f0     # (not a trailered car's hitch: no frame to turn on)
                if on_frame:
                    world.swivels.pairs.append((t["name"], (fr if k else ff) - f0 + 1, len(world._swivels), c + 1))
                world._swivels.append(dict(kind="swivel", a=a, b=("idx", b), anchor_a=xa,
                                           anchor_b=np.array([x, 0.0, -cg]),
                                           p=dict(roll=rolls[k], limit=bg["swivel_limit"][c] if on_frame else 0.0),
                                           train=ti, car=c, frame=k))
            hitch_a = np.array([-bg["length"][c] / 2.0 - e, 0.0, -cg])  # the next car's hitch, in this body
            b += 1
    return b


def lever_weights(specs, kind: str) -> list:
    """Per wheel frame of a train of cars ``specs`` on bogies (front, rear, car by car; a Jacobs set's
    and a trailered train's N + 1 frames from the front), kg: the mass whose weight its wheels carry
    at rest — its own and its bodies' shares by the lever rule (front ``(L/2 + e)/L``, rear
    ``(L/2 − e)/L``; a trailered car's front share rests on the body ahead, at its rear end, and goes
    to that car's pivots by the same rule: front ``(L − ℓ)/2L``, rear ``(L + ℓ)/2L``)."""
    n = len(specs)
    if kind == "two":
        weight = [v.frame_mass for v in specs for _ in range(2)]
    else:
        weight = [specs[min(k, n - 1) if kind == "jacobs" else max(k - 1, 0)].frame_mass for k in range(n + 1)]
    hitch = 0.0             # a trailered train: the load on the hitch behind the car, from the back
    for c in range(n - 1, -1, -1):
        v = specs[c]
        L = v.bogie_spacing
        body = v.mass - (1.0 if kind == "jacobs" or (kind == "trailered" and c > 0) else 2.0) * v.frame_mass
        front = 0.5 + v.cg_forward / L
        wf = body * front + hitch * (L - v.length) / (2.0 * L)
        wr = body * (1.0 - front) + hitch * (L + v.length) / (2.0 * L)
        if kind == "trailered" and c > 0:
            weight[c + 1] += wr
            hitch = wf
            continue
        ff, fr = (c, c + 1) if kind != "two" else (2 * c, 2 * c + 1)
        weight[ff] += wf
        weight[fr] += wr
    return weight


def vehicle_of(t, frame: int) -> tuple:
    """``(car, bogie)`` of wheel frame ``frame`` (0-based in the train): the 0-based car and 1 for its
    front frame, 2 for its rear (a Jacobs set's shared frame: the car behind it, 1)."""
    bg = t["bogie"]
    if bg["jacobs"]:
        n = bg["cars"]
        return (frame, 1) if frame < n else (n - 1, 2)
    return frame // 2, 1 + frame % 2


class SwivelWatch:
    """The ``split`` events of cars on bogies (docs/physics.md "Bogies"): a body turned (yawed) on one
    of its wheel frames by more than its ``swivel_limit`` — its frames on diverging branches of a
    switch, or a curve too tight for it — once per body. The kernel checks every step
    (``joints/swivel.watch``: the time and yaw of the first step beyond, in the swivel's parameter
    columns); ``push`` reports what the recorded samples so far have reached."""

    def __init__(self):
        self.pairs = []     # (train, frame's car number, swivel (World._swivels index), body number)
        self.events = []
        self._split = set()
        self._jf, self._joint = None, []

    def bind(self, jf, swivel_j):
        """The world's joint parameters ``jf`` and the joint of each swivel (``World._build_joints``)."""
        self._jf, self._joint = jf, swivel_j

    def push(self, t):
        """Report the splits up to the last sample time ``t[-1]`` (a chunk cut short by a divergence
        reports none after its last sane sample)."""
        from trackrider.physics.joints import swivel

        if self._jf is None or len(t) == 0:
            return
        found = {}
        for train, car, k, body in self.pairs:
            split = self._jf[self._joint[k], swivel.SPLIT:swivel.SPLIT + 2]
            if (train, body) in self._split or not 0.0 <= split[0] <= t[-1] + 1e-9:
                continue
            if (train, body) not in found or split[0] < found[(train, body)][1]:
                found[(train, body)] = (car, float(split[0]), float(split[1]), self._jf[self._joint[k], swivel.LIMIT])
        for (train, body), (car, ts, yaw, limit) in sorted(found.items(), key=lambda kv: kv[1][1]):
            self._split.add((train, body))
            self.events.append(dict(t=round(ts, 9), train=train, car=car, kind="split", body=body,
                                    angle=round(float(np.degrees(yaw)), 3),
                                    swivel_limit=round(float(np.degrees(limit)), 6)))
