"""Cars on bogies (docs/physics.md "Bogies"): how ``World`` builds a train whose cars ride on two
wheel frames each (``CarSpec.bogies = "two"``) or share them (``"jacobs"``: N bodies on N + 1 frames). Python only: the kernels see wheel frames as a
train's cars (each on its own track joint), the car bodies as bodies after the free bodies and
the suspended cars' hanging bodies, and swivels (``joints/swivel.py``) between them.

A train of N cars on bogies is, to the kernels, a train of 2N wheel frames (front, rear, front,
…): the couplers join the rear frame of a car to the front frame of the car behind it, at the
ends of the car bodies (``length``) measured along the frames; the two frames of one car are
joined in the chain by a rigid bar between their pivots (the body keeps that distance too, so the
bar only takes over the squeeze along the pivot line, which moves nothing), and the body by a
swivel on each frame. A Jacobs set has no couplers: every link of its chain is such a bar, and
neighbouring bodies hang on their shared frame by one swivel each. A railway train's vehicles on
bogies are expanded the same way, each with its own spacing, masses and lengths; ``rail.py`` gives
each frame its part of its vehicle's traction, brake and adhesion (``lever_weights``).
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_N, C_P, C_T
from trackrider.errors import InputError


def _chord_behind(world, ct, s_front, chord):
    """Arc length s < ``s_front`` whose point is ``chord`` m from the point at ``s_front``."""
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


def expand(world, t, ct, car, frame_inertia_height=0.5):
    """Turn the train ``t`` (``World.add_train``'s dict, its cars placed as plain cars) into its
    wheel frames, and keep what its car bodies need under ``t["bogie"]`` (per car: a railway train's
    vehicles each have their own spacing, masses and lengths)."""
    n, jacobs = t["n"], car.bogies == "jacobs"
    specs = t.get("vehicles") or [car] * n
    gap, ctype, offset = t["gap"], t["ctype"], t["coupling"].start_offset()
    halves = [(v.length - v.bogie_spacing) / 2.0 for v in specs]   # a pivot to its end of the body
    s = [t["s"][0] + specs[0].bogie_spacing / 2.0]
    for c, v in enumerate(specs):
        if c > 0 and not jacobs:
            s.append(world._place_behind(ct, s[-1], 2.0 * halves[c - 1], 2.0 * halves[c], gap, ctype, offset))
        s.append(_chord_behind(world, ct, s[-1], v.bogie_spacing))
    if not ct.closed:
        for i, sv in enumerate(s):
            if not 0.0 <= sv <= ct.length:
                raise InputError(f"wheel frame {i + 1} would start at s = {sv:.3f} m, outside the track [0, "
                                 f"{ct.length:.3f}] m (start_s, cars, car.length, bogie_spacing)", where="start_s")
    H = frame_inertia_height
    body_mass, body_inertia, frame_mass, frame_inertia = [], [], [], []
    for v, inertia in zip(specs, t["inertias"]):
        mb = v.frame_mass
        body_mass.append(v.mass - (1.0 if jacobs else 2.0) * mb)
        body_inertia.append(inertia * (body_mass[-1] / v.mass))
        frame_mass.append(mb)
        wb, W = v.bogie_wheelbase, v.width
        frame_inertia.append(mb / 12.0 * np.array([W ** 2 + H ** 2, wb ** 2 + H ** 2, wb ** 2 + W ** 2]))
    t["bogie"] = dict(cars=n, spacing=[v.bogie_spacing for v in specs], mass=body_mass, inertia=body_inertia,
                      cg=[v.cg_height for v in specs], forward=[v.cg_forward for v in specs],
                      rider=[v.rider_height for v in specs], length=[v.length for v in specs], jacobs=jacobs,
                      rows=[v.row_offsets for v in specs],
                      weights=lever_weights(specs, jacobs))
    # frame k's car: k // 2 (two bogies each), in a Jacobs set the body behind it (the last frame: the last car)
    owner = [min(k, n - 1) for k in range(n + 1)] if jacobs else [k // 2 for k in range(2 * n)]
    t.update(n=len(s), s=s, mass=frame_mass[0], inertia=frame_inertia[0], cg=0.0,
             masses=[frame_mass[c] for c in owner], lengths=[2.0 * halves[c] for c in owner],
             inertias=[frame_inertia[c] for c in owner], cgs=[0.0] * len(s),
             riders=[specs[c].rider_height for c in owner], rows=[(0.0, 0.0)] * len(s))   # rows: the bodies' (below)


def frames_of(bg, c):
    """The front and rear wheel frames (indices in the train) of car ``c``."""
    return (c, c + 1) if bg["jacobs"] else (2 * c, 2 * c + 1)


def link_row(t, c):
    """The bar between one car's two pivots when link c (frames c, c + 1) is one (every link of a
    Jacobs set; c even for cars on two bogies each): the distance kind's columns ``(anchor a, anchor
    b, length)``; None for a coupler."""
    bg = t.get("bogie")
    if bg is None or (c % 2 and not bg["jacobs"]):
        return None
    return np.zeros(3), np.zeros(3), bg["spacing"][c if bg["jacobs"] else c // 2]


def place_bodies(world, b, labels, etrain) -> int:
    """Each car body of a train on bogies, between its frames' pivots (after the free bodies and the
    hanging bodies); its swivels are listed in ``world._swivels``. Returns the next body."""
    from trackrider.physics.world import _quat_from_axes, _rot

    pos, quat, vel, omg, cars = world.pos, world.quat, world.vel, world.omg, world.cars
    world._swivels = []
    for ti, t in enumerate(world._trains):
        bg = t.get("bogie")
        if bg is None:
            continue
        f0 = world._car0[ti]                    # a car's Davis resistance (per vehicle): shared by its frames
        cars.davis[f0:f0 + t["n"]] *= bg["cars"] / t["n"]
        for c in range(bg["cars"]):
            L, e, cg = bg["spacing"][c], bg["forward"][c], bg["cg"][c]
            ff, fr = (world._car0[ti] + k for k in frames_of(bg, c))
            pf, pr = pos[ff], pos[fr]          # frames' centres: their pivots, on the curve
            fwd = (pf - pr) / np.linalg.norm(pf - pr)
            up = _rot(quat[ff])[:, 2] + _rot(quat[fr])[:, 2]
            up -= np.dot(up, fwd) * fwd
            up /= np.linalg.norm(up)
            q = _quat_from_axes(fwd, np.cross(up, fwd), up)
            quat[b] = q
            mid = 0.5 * (pf + pr)
            pos[b] = mid + e * fwd + cg * up
            w = 0.5 * (omg[ff] + omg[fr])
            omg[b] = w
            vel[b] = 0.5 * (vel[ff] + np.cross(w, pos[b] - pf) + vel[fr] + np.cross(w, pos[b] - pr))
            world.mass[b] = bg["mass"][c]
            world.inv_mass[b] = 1.0 / bg["mass"][c]
            world.ib[b] = bg["inertia"][c]
            for f in (ff, fr):                  # the car's G-forces: its body's, at its rider point
                if cars.hang[f] >= 0:           # a Jacobs set's shared frame: the front car's body
                    continue
                cars.hang[f] = b
                cars.hang_rider[f] = bg["rider"][c] - cg
                cars.rows[f] = bg["rows"][c]
            labels.append((t["name"] + ".body", c + 1))
            etrain.append(-1)
            for k, (f, x) in enumerate(((ff, L / 2.0 - e), (fr, -L / 2.0 - e))):
                world._swivels.append(dict(kind="swivel", a=("idx", f), b=("idx", b), anchor_a=np.zeros(3),
                                           anchor_b=np.array([x, 0.0, -cg]), p=dict(roll=k == 0),
                                           train=ti, car=c, frame=k))
            b += 1
    return b


def lever_weights(specs, jacobs: bool) -> list:
    """Per wheel frame of a train of cars ``specs`` on bogies (front, rear, car by car; a Jacobs set's
    N + 1 frames from the front), kg: the mass whose weight its wheels carry at rest — its own and
    its bodies' shares by the lever rule (front ``(L/2 + e)/L``, rear ``(L/2 − e)/L``)."""
    n = len(specs)
    weight = [specs[min(k, n - 1)].frame_mass for k in range(n + 1)] if jacobs else \
        [v.frame_mass for v in specs for _ in range(2)]
    for c, v in enumerate(specs):
        body = v.mass - (1.0 if jacobs else 2.0) * v.frame_mass
        front = 0.5 + v.cg_forward / v.bogie_spacing
        ff, fr = (c, c + 1) if jacobs else (2 * c, 2 * c + 1)
        weight[ff] += body * front
        weight[fr] += body * (1.0 - front)
    return weight


def vehicle_of(t, frame: int) -> tuple:
    """``(car, bogie)`` of wheel frame ``frame`` (0-based in the train): the 0-based car and 1 for its
    front frame, 2 for its rear (a Jacobs set's shared frame: the car behind it, 1)."""
    bg = t["bogie"]
    if bg["jacobs"]:
        n = bg["cars"]
        return (frame, 1) if frame < n else (n - 1, 2)
    return frame // 2, 1 + frame % 2
