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
neighbouring bodies hang on their shared frame by one swivel each.
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
    wheel frames, and keep what its car bodies need under ``t["bogie"]``."""
    n, L, jacobs = t["n"], car.bogie_spacing, car.bogies == "jacobs"
    mb = car.frame_mass
    body_mass = car.mass - (1.0 if jacobs else 2.0) * mb
    half = (car.length - L) / 2.0          # a pivot to its end of the body
    gap, ctype, offset = t["gap"], t["ctype"], t["coupling"].start_offset()
    s = [t["s"][0] + L / 2.0]
    for c in range(n):
        if c > 0 and not jacobs:
            s.append(world._place_behind(ct, s[-1], 2.0 * half, 2.0 * half, gap, ctype, offset))
        s.append(_chord_behind(world, ct, s[-1], L))
    if not ct.closed:
        for i, sv in enumerate(s):
            if not 0.0 <= sv <= ct.length:
                raise InputError(f"wheel frame {i + 1} would start at s = {sv:.3f} m, outside the track [0, "
                                 f"{ct.length:.3f}] m (start_s, cars, car.length, bogie_spacing)", where="start_s")
    wb, W, H = car.bogie_wheelbase, car.width, frame_inertia_height
    frame_inertia = mb / 12.0 * np.array([W ** 2 + H ** 2, wb ** 2 + H ** 2, wb ** 2 + W ** 2])
    body_inertia = t["inertias"][0] * (body_mass / car.mass)
    t["bogie"] = dict(cars=n, spacing=L, mass=body_mass, inertia=body_inertia, cg=car.cg_height,
                      forward=car.cg_forward, rider=car.rider_height, length=car.length, jacobs=jacobs)
    m = len(s)
    t.update(n=m, s=s, mass=mb, inertia=frame_inertia, cg=0.0, masses=[mb] * m, lengths=[2.0 * half] * m,
             inertias=[frame_inertia] * m, cgs=[0.0] * m, riders=[car.rider_height] * m)


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
    return np.zeros(3), np.zeros(3), bg["spacing"]


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
        L, e, cg = bg["spacing"], bg["forward"], bg["cg"]
        for c in range(bg["cars"]):
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
            world.mass[b] = bg["mass"]
            world.inv_mass[b] = 1.0 / bg["mass"]
            world.ib[b] = bg["inertia"]
            for f in (ff, fr):                  # the car's G-forces: its body's, at its rider point
                if cars.hang[f] >= 0:           # a Jacobs set's shared frame: the front car's body
                    continue
                cars.hang[f] = b
                cars.hang_rider[f] = bg["rider"] - cg
            labels.append((t["name"] + ".body", c + 1))
            etrain.append(-1)
            for k, (f, x) in enumerate(((ff, L / 2.0 - e), (fr, -L / 2.0 - e))):
                world._swivels.append(dict(kind="swivel", a=("idx", f), b=("idx", b), anchor_a=np.zeros(3),
                                           anchor_b=np.array([x, 0.0, -cg]), p=dict(roll=k == 0),
                                           train=ti, car=c, frame=k))
            b += 1
    return b
