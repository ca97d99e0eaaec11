"""Cars built procedurally, as ``Quads`` in the car's body frame (x forward,
y left, z up, origin at the recorded centre of mass). No VTK here.

- ``coaster``: a chassis on four wheel assemblies (road wheel on the rail, an
  up-stop wheel under it, a guide wheel beside it), an open tub, ``rows ×
  seats`` seats, a rider in each (torso, head, arms, legs) and a lap bar per row
  or a shoulder restraint per seat;
- railway vehicles (``trackrider.render.vehicles``): a locomotive, a coach or
  funicular car, box, hopper and flat wagons, by the train's ``model``;
- ``suspended``: the trolley on the rails (the train's recorded car) and the
  gondola hanging from its pivot (``<train>.body``), seats, riders, restraints;
- ``box``: a plain box (cars too small to seat anyone, free bodies).

Heights: the track curve is ``cg_height`` below the origin (coaster, railway;
the rails ``rail_depth`` below the curve); a suspended car's pivot, on the
curve, is ``hang`` above its origin. A rider's heart (``rider_height`` above the
curve, or along the body from the pivot) is 0.35 m above the seat pan; the eyes
are 0.5 m above the heart.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.render import geometry as geo

#: rider's eyes above the heart line (``rider_height``), m
EYES_ABOVE_HEART = 0.5
#: seat pan below the heart line, m
SEAT_BELOW_HEART = 0.35

DARK = (45, 45, 50)
WHEEL = (30, 30, 32)
HUB = (170, 170, 175)
STEEL = (150, 150, 158)
GRIP = (62, 62, 68)
SEAT = (35, 35, 40)
PAD = (25, 25, 28)
SHIRTS = ((230, 230, 225), (40, 110, 200), (200, 60, 50), (250, 200, 40), (60, 150, 80), (130, 80, 160),
          (240, 140, 40), (50, 50, 55))
SKINS = ((240, 200, 170), (200, 150, 110), (150, 100, 70), (225, 180, 140), (110, 75, 55))
TROUSERS = ((40, 50, 80), (60, 60, 65), (90, 70, 50), (30, 35, 45))
HAIR = ((40, 30, 20), (90, 60, 30), (20, 20, 20), (180, 150, 90))


@dataclass
class CarModel:
    """The quads of one car in its body frame and the eye points of its riders
    ``eyes[row][seat]`` (m, body frame; empty for cars without riders); ``view``:
    (the direction they look, their up) in the body frame when it is not along
    the car (a funicular car's passengers look out level)."""

    quads: geo.Quads
    eyes: list
    view: tuple | None = None


def _shade(colour, f):
    return tuple(int(min(255, max(0, round(c * f)))) for c in colour)


def seat_positions(length, width, rows, seats):
    """(x of each row's seat centre, front row first; y of each seat, left first), m."""
    pitch = (length - 0.3) / rows
    xs = [0.5 * length - 0.15 - pitch * (i + 0.5) for i in range(rows)]
    span = width - 0.2
    ys = [((seats - 1) / 2.0 - j) * span / seats for j in range(seats)]
    return xs, ys


def _rider(x, y, zs, zf, k, arms_up: bool, head: bool, seat_w: float) -> list:
    """A seated rider: hips at the seat pan ``zs`` above ``x, y``, feet on the floor ``zf``."""
    shirt, skin = SHIRTS[k % len(SHIRTS)], SKINS[(3 * k + 1) % len(SKINS)]
    legs, hair = TROUSERS[(k + 2) % len(TROUSERS)], HAIR[(5 * k) % len(HAIR)]
    sw = min(0.36, 0.85 * seat_w)
    parts = [
        geo.box((x - 0.12, y, zs + 0.33), (0.22, sw, 0.52), shirt),                         # torso
        geo.beam((x - 0.05, y, zs + 0.08), (x + 0.3, y, zs + 0.12), 0.75 * sw, 0.14, legs),  # thighs
        geo.beam((x + 0.3, y, zs + 0.1), (x + 0.36, y, zf + 0.05), 0.7 * sw, 0.12, legs),   # shins
        geo.cylinder((x - 0.1, y, zs + 0.58), (x - 0.1, y, zs + 0.68), 0.05, skin, sides=6),  # neck
    ]
    if head:
        parts.append(geo.sphere((x - 0.08, y, zs + 0.82), 0.115, skin, n_lon=8, n_lat=5, scale=(1.0, 0.85, 1.1)))
        parts.append(geo.sphere((x - 0.1, y, zs + 0.86), 0.118, hair, n_lon=8, n_lat=3, scale=(1.0, 0.88, 0.95)))
    for side in (1.0, -1.0):
        sh = np.array([x - 0.12, y + side * 0.5 * (sw + 0.08), zs + 0.55])
        if arms_up:
            elbow = sh + np.array([0.05, side * 0.08, 0.28])
            hand = elbow + np.array([0.04, side * 0.05, 0.28])
        else:
            elbow = sh + np.array([0.1, side * 0.02, -0.25])
            hand = np.array([x + 0.2, y + side * 0.12, zs + 0.3])
        parts.append(geo.beam(sh, elbow, 0.09, 0.09, shirt))
        parts.append(geo.beam(elbow, hand, 0.08, 0.08, skin))
    return parts


def _seating(length, width, rows, seats, zs, zf, colour, shoulder: bool, headless=None, wall_top=None):
    """Seats, riders and restraints of an open car; returns (parts, eyes)."""
    xs, ys = seat_positions(length, width, rows, seats)
    seat_w = (width - 0.2) / seats - 0.04
    parts, eyes = [], []
    for i, x in enumerate(xs):
        row_eyes = []
        for j, y in enumerate(ys):
            k = 3 * i + j
            parts.append(geo.box((x - 0.02, y, zs - 0.04), (0.46, seat_w, 0.08), SEAT))           # pan
            back = (x - 0.27, y, zs + 0.28 + (0.08 if shoulder else 0.0))
            parts.append(geo.box(back, (0.08, seat_w, 0.6 + (0.16 if shoulder else 0.0)), _shade(colour, 0.45)))  # back
            parts.append(geo.box((x - 0.02, y, 0.5 * (zs - 0.08 + zf)), (0.4, seat_w * 0.8, zs - 0.08 - zf), DARK))
            head = headless != (i, j)
            parts += _rider(x, y, zs, zf, k, arms_up=(head and (i + j) % 2 == 1), head=head, seat_w=seat_w)
            row_eyes.append(np.array([x + 0.02, y, zs + SEAT_BELOW_HEART + EYES_ABOVE_HEART]))
            if shoulder:
                for side in (1.0, -1.0):
                    pts = np.array([
                        [x - 0.26, y + side * 0.11, zs + 0.78],
                        [x - 0.1, y + side * 0.12, zs + 0.74],
                        [x + 0.08, y + side * 0.12, zs + 0.55],
                        [x + 0.16, y + side * 0.1, zs + 0.3],
                    ])
                    parts.append(geo.polyline_tube(pts, 0.045, PAD, sides=6))
                    # a grab handle on the front of the restraint (in the rider's view)
                    parts.append(geo.cylinder((x + 0.14, y + side * 0.11, zs + 0.42), (x + 0.3, y + side * 0.11, zs + 0.6),
                                              0.02, GRIP, sides=8))
                parts.append(geo.beam((x + 0.16, y + 0.12, zs + 0.3), (x + 0.16, y - 0.12, zs + 0.3), 0.09, 0.07, PAD))
        if not shoulder:  # a lap bar across the row, on a post from the floor
            y0, y1 = ys[0] + 0.5 * seat_w, ys[-1] - 0.5 * seat_w
            parts.append(geo.cylinder((x + 0.22, y0, zs + 0.3), (x + 0.22, y1, zs + 0.3), 0.04, PAD, sides=8))
            for y in ys:
                parts.append(geo.beam((x + 0.42, y, zf), (x + 0.22, y, zs + 0.3), 0.05, 0.05, STEEL))
                # a handlebar on the lap bar (in the rider's view)
                parts.append(geo.cylinder((x + 0.22, y, zs + 0.3), (x + 0.3, y, zs + 0.56), 0.02, GRIP, sides=8))
                parts.append(geo.cylinder((x + 0.3, y + 0.17, zs + 0.56), (x + 0.3, y - 0.17, zs + 0.56), 0.025, PAD, sides=6))
        eyes.append(row_eyes)
    return parts, eyes


def _nose(x0, x1, w2, z_bottom, zs, colour, ring: int = 20) -> list:
    """A car's shaped front from ``x0`` (just ahead of the front row's feet) to its
    tip ``x1``: a smooth shell lofted through rounded cross-sections, a cowl in
    front of the riders whose crest (0.56 m over the seat pan ``zs`` in the middle,
    lower towards the sides, with a light trim along it) falls and narrows to the
    tip; ``w2`` the car's half width, ``z_bottom`` its underside."""
    # stations: (fraction of the way to the tip, half width, top above the seat pan in the middle)
    stations = ((0.0, w2, 0.5), (0.15, w2, 0.56), (0.4, w2 - 0.03, 0.44), (0.72, w2 - 0.1, 0.26),
                (0.93, w2 - 0.17, 0.13), (1.0, w2 - 0.22, 0.06))
    ang = 2.0 * np.pi * (np.arange(ring) + 0.5) / ring
    cy, cz = np.cos(ang), np.sin(ang)
    # a rounded rectangle: a superellipse of exponent 6 (flat sides, round corners)
    ry = np.sign(cy) * np.abs(cy) ** (1.0 / 3.0)
    rz = np.sign(cz) * np.abs(cz) ** (1.0 / 3.0)
    crown = 0.1  # the crest is this much lower at the sides than in the middle
    rings = []
    for f, hw, top in stations:
        x = x0 + f * (x1 - x0)
        zt = zs + top
        zb = z_bottom + 0.06 * f
        z = 0.5 * (zt + zb) + 0.5 * (zt - zb) * rz - crown * np.where(rz > 0, rz, 0.0) * ry ** 2
        rings.append(np.column_stack([np.full(ring, x), hw * ry, z]))
    crest = x0 + 0.15 * (x1 - x0)
    ys = np.linspace(-w2 + 0.03, w2 - 0.03, 9)
    trim = geo.polyline_tube(np.column_stack([np.full(9, crest), ys, zs + 0.56 + 0.012 - crown * (ys / w2) ** 2]),
                             0.022, _shade(colour, 1.6) if max(colour) < 160 else _shade(colour, 0.55), sides=6)
    return [geo.loft(rings, colour), trim]


def _coaster_wheels(x, gauge, rail_top, rail_r, colour) -> list:
    """A wheel assembly on each rail at ``x``: road wheel on top, up-stop
    wheel under, guide wheel outside, on a yoke; ``rail_top`` z of the rail top."""
    parts = []
    rw = 0.11
    for side in (1.0, -1.0):
        y = side * 0.5 * gauge
        yo = y + side * (rail_r + 0.1)
        zc = rail_top - rail_r
        parts.append(geo.cylinder((x, y - 0.04, rail_top + rw), (x, y + 0.04, rail_top + rw), rw, WHEEL, sides=8))
        parts.append(geo.cylinder((x, y - 0.035, rail_top - 2 * rail_r - 0.07), (x, y + 0.035, rail_top - 2 * rail_r - 0.07),
                                  0.07, WHEEL, sides=6))
        parts.append(geo.cylinder((x, yo, zc - 0.035), (x, yo, zc + 0.035), 0.075, WHEEL, sides=6))
        # the yoke: an outer plate holding the three axles
        yp = y + side * (rail_r + 0.22)
        top, bot = rail_top + 2 * rw + 0.04, rail_top - 2 * rail_r - 0.16
        parts.append(geo.box((x, yp, 0.5 * (top + bot)), (0.34, 0.05, top - bot), DARK))
        parts.append(geo.box((x, 0.5 * (y + yp), top), (0.3, abs(yp - y) + 0.12, 0.06), DARK))
        parts.append(geo.box((x, y, rail_top + rw), (0.06, 0.14, 0.06), HUB))  # hub
    # the axle beam joining the two sides
    parts.append(geo.box((x, 0.0, rail_top + 2 * rw + 0.07), (0.2, gauge + 0.2, 0.1), colour))
    return parts


def coaster_car(length, width, height, cg, rider_height, gauge, rail_depth, colour, rows, seats,
                shoulder=False, headless=None, rail_radius=0.07, wheels=True) -> CarModel:
    """A coaster car (see the module doc); ``headless`` (row, seat): that rider has no head (the on-ride eyes);
    ``wheels=False``: without its wheel assemblies (a car on bogies: drawn where its frames are)."""
    dz = -cg  # track-curve heights -> body frame
    rail_top = -rail_depth + dz
    zs = rider_height - SEAT_BELOW_HEART + dz
    zf = max(zs - 0.42, rail_top + 0.32)
    wall_top = zs + 0.3
    parts = []
    # chassis: two longitudinal beams over the wheel assemblies and the floor pan
    ax = 0.5 * length - 0.3
    if wheels:
        parts += _coaster_wheels(ax, gauge, rail_top, rail_radius, _shade(colour, 0.6))
        parts += _coaster_wheels(-ax, gauge, rail_top, rail_radius, _shade(colour, 0.6))
    chassis_z = rail_top + 0.34
    parts.append(geo.box((0.0, 0.0, 0.5 * (chassis_z + zf)), (length - 0.2, 0.5 * gauge, max(zf - chassis_z, 0.06) + 0.06), DARK))
    for side in (1.0, -1.0):
        parts.append(geo.box((0.0, side * 0.3 * gauge, chassis_z), (length - 0.1, 0.12, 0.12), DARK))
    # the tub: floor, side walls, rear wall and a raked nose
    body, trim = colour, _shade(colour, 0.75)
    w2 = 0.5 * width
    parts.append(geo.box((0.0, 0.0, zf - 0.05), (length - 0.1, width, 0.1), trim))
    for side in (1.0, -1.0):
        parts.append(geo.box((-0.05, side * (w2 - 0.04), 0.5 * (zf - 0.1 + wall_top)), (length - 0.2, 0.08, wall_top - zf + 0.1), body))
        parts.append(geo.box((-0.05, side * (w2 - 0.02), wall_top), (length - 0.16, 0.12, 0.05), trim))  # coping
    parts.append(geo.box((-0.5 * length + 0.08, 0.0, 0.5 * (zf - 0.1 + wall_top)), (0.12, width, wall_top - zf + 0.1), body))
    front_row = seat_positions(length - 0.2, width, rows, seats)[0][0] - 0.05
    parts += _nose(front_row + 0.42, 0.5 * length + 0.05, w2, zf - 0.1, zs, body)
    seating, eyes = _seating(length - 0.2, width, rows, seats, zs, zf, colour, shoulder, headless)
    parts += [geo.transformed(p, np.eye(3), (-0.05, 0.0, 0.0)) for p in seating]
    eyes = [[e + np.array([-0.05, 0.0, 0.0]) for e in row] for row in eyes]
    return CarModel(geo.Quads.merge(parts), eyes)


def trolley(gauge, colour, rail_radius=0.07, rail_up=0.35) -> CarModel:
    """A suspended car's trolley, its origin on the pivot (the track curve), the
    rails ``rail_up`` above it: on each rail at each of its two axles a wheel
    assembly (a road wheel on the rail, an up-stop wheel under it, a guide wheel
    outside it, on axle stubs from a tapered side plate), the plates joined
    along each side by a tube and across under the rails by two cross tubes; a
    coloured fairing on the frame and the hinge's bearing (the pivot) under it."""
    parts = []
    rr = rail_radius
    rw, ru, rg = 0.1, 0.07, 0.075  # road, up-stop and guide wheels' radii
    z_road, z_up = rail_up + rr + rw, rail_up - rr - ru
    z_frame = z_up - ru - 0.08  # the cross tubes, under the up-stop wheels
    for side in (1.0, -1.0):
        y = side * 0.5 * gauge
        y_guide = y + side * (rr + rg + 0.005)
        y_plate = y_guide + side * (rg + 0.06)
        for x in (0.45, -0.45):
            parts.append(geo.cylinder((x, y - 0.045, z_road), (x, y + 0.045, z_road), rw, WHEEL, sides=12))
            parts.append(geo.cylinder((x, y - 0.03, z_up), (x, y + 0.03, z_up), ru, WHEEL, sides=10))
            parts.append(geo.cylinder((x, y_guide, rail_up - 0.03), (x, y_guide, rail_up + 0.03), rg, WHEEL, sides=10))
            for z in (z_road, z_up):  # axle stubs from the plate, with hubs
                parts.append(geo.cylinder((x, y_plate, z), (x, y + side * 0.05, z), 0.03, HUB, sides=6))
            parts.append(geo.cylinder((x, y_guide, rail_up + 0.03), (x, y_guide, rail_up + 0.1), 0.025, HUB, sides=6))
            # the side plate: wide at the axles, tapered towards the frame
            c = np.array([
                [x - 0.16, y_plate - 0.02, z_frame], [x + 0.16, y_plate - 0.02, z_frame],
                [x + 0.16, y_plate + 0.02, z_frame], [x - 0.16, y_plate + 0.02, z_frame],
                [x - 0.09, y_plate - 0.02, z_road + 0.06], [x + 0.09, y_plate - 0.02, z_road + 0.06],
                [x + 0.09, y_plate + 0.02, z_road + 0.06], [x - 0.09, y_plate + 0.02, z_road + 0.06],
            ])
            parts.append(geo.hexa(c[None], DARK))
            parts.append(geo.cylinder((x, y_plate, z_frame), (x, -y_plate, z_frame), 0.055, DARK, sides=10)
                         if side > 0 else geo._empty())
        parts.append(geo.cylinder((0.45, y_plate, z_frame + 0.04), (-0.45, y_plate, z_frame + 0.04), 0.04, DARK, sides=8))
    # the fairing: a low wedge in the train's colour over the middle of the frame
    wf = 0.5 * gauge - 0.05
    c = np.array([
        [-0.55, -wf, z_frame - 0.12], [0.6, -0.6 * wf, z_frame - 0.1], [0.6, 0.6 * wf, z_frame - 0.1], [-0.55, wf, z_frame - 0.12],
        [-0.5, -wf, z_frame + 0.02], [0.5, -0.7 * wf, z_frame + 0.02], [0.5, 0.7 * wf, z_frame + 0.02], [-0.5, wf, z_frame + 0.02],
    ])
    parts.append(geo.hexa(c[None], colour))
    # the hinge's bearing along the track, under the frame
    parts.append(geo.cylinder((-0.22, 0.0, 0.0), (0.22, 0.0, 0.0), 0.11, STEEL, sides=12))
    return CarModel(geo.Quads.merge(parts), [])


def hanging_car(length, width, height, hang, rider_height, colour, rows, seats, headless=None) -> CarModel:
    """The gondola of a suspended car, its origin at its centre of mass, its
    pivot ``hang`` above: an arm from the pivot down behind the front row to a
    frame over the rear, an open tub with seats, riders and lap bars."""
    heart = hang + rider_height  # the heart line in the body frame
    zs = heart - SEAT_BELOW_HEART
    zf = max(zs - 0.42, -0.5 * height)
    wall_top = zs + 0.28
    body, trim = colour, _shade(colour, 0.75)
    w2 = 0.5 * width
    parts = [geo.box((0.0, 0.0, zf - 0.06), (length, width, 0.12), trim)]
    for side in (1.0, -1.0):
        parts.append(geo.box((0.0, side * (w2 - 0.04), 0.5 * (zf + wall_top)), (length, 0.08, wall_top - zf), body))
    parts.append(geo.box((-0.5 * length + 0.04, 0.0, 0.5 * (zf + wall_top)), (0.08, width, wall_top - zf), body))
    front_row = seat_positions(length - 0.3, width, rows, seats)[0][0] + 0.05
    parts += _nose(front_row + 0.42, 0.5 * length + 0.1, w2, zf - 0.12, zs, body)
    seating, eyes = _seating(length - 0.3, width, rows, seats, zs, zf, colour, False, headless)
    parts += [geo.transformed(p, np.eye(3), (0.05, 0.0, 0.0)) for p in seating]
    eyes = [[e + np.array([0.05, 0.0, 0.0]) for e in row] for row in eyes]
    # the hanger: from the pivot straight down to a frame above the heads, then down the back
    xs, _ys = seat_positions(length - 0.3, width, rows, seats)
    x_arm = (xs[0] - 0.45 if rows > 1 else -0.3) + 0.05
    top = zs + 1.2
    parts.append(geo.beam((x_arm, 0.0, hang), (x_arm, 0.0, top), 0.22, 0.16, DARK, up=(1.0, 0.0, 0.0)))
    parts.append(geo.beam((x_arm + 0.05, 0.0, top), (-0.5 * length + 0.05, 0.0, top), 0.2, 0.12, trim))
    for side in (1.0, -1.0):
        parts.append(geo.beam((-0.5 * length + 0.05, side * (w2 - 0.1), wall_top), (-0.5 * length + 0.05, side * 0.1, top),
                              0.1, 0.1, trim, up=(1.0, 0.0, 0.0)))
    return CarModel(geo.Quads.merge(parts), eyes)


def plain_box(size, colour) -> CarModel:
    return CarModel(geo.box((0.0, 0.0, 0.0), size, colour), [])


def car_model(spec, role: str, gauge: float, rail_depth: float, rail_radius: float, shoulder: bool,
              headless=None, car: int = 1) -> CarModel:
    """The model of a recorded entity: ``spec`` a ``TrainSpec`` (role ``car``,
    ``trolley``, ``hanging``; ``car`` its number, 1 = the lead car) or a
    ``BodySpec`` (role ``body``). ``headless`` (row, seat): the on-ride rider,
    drawn without a head (a railway vehicle: its cab or front compartment drawn
    from inside instead)."""
    if role == "body":
        return plain_box(tuple(spec.size), spec.colour)
    if role == "bogie":
        return bogie_model(spec, gauge, rail_depth, rail_radius, car)
    if role == "carbody":   # a car on bogies: its body without running gear, origin at its centre of mass
        model = car_model(spec, "car", gauge, rail_depth, rail_radius, shoulder, headless, car)
        e = spec.cg_forward
        return CarModel(geo.transformed(model.quads, np.eye(3), (-e, 0.0, 0.0)) if e else model.quads,
                        [[p - np.array([e, 0.0, 0.0]) for p in row] for row in model.eyes], model.view)
    gear = spec.bogies == "none"
    rows, seats = spec.seat_layout()
    if role == "trolley":
        return trolley(gauge, spec.colour, rail_radius)
    if role == "hanging":
        return hanging_car(spec.length, spec.width, spec.height, spec.hang, spec.rider_height, spec.colour,
                           rows, seats, headless)
    kind = spec.vehicle(car)
    if kind == "coaster":
        return coaster_car(spec.length, spec.width, spec.height, spec.cg_height, spec.rider_height, gauge,
                           rail_depth, spec.colour, rows, seats, shoulder, headless, rail_radius, wheels=gear)
    if kind in ("box", "suspended"):
        return plain_box((spec.length, spec.width, spec.height), spec.colour)
    from trackrider.render import vehicles as rv

    box = (spec.length, spec.width, spec.height, spec.cg_height, gauge, rail_depth, spec.colour)
    cab = headless is not None
    if kind == "locomotive":
        built = rv.locomotive(*box, cab=cab, gear=gear)
    elif kind == "coach":
        built = rv.coach(*box, grade=spec.grade, cab=cab, gear=gear)
    elif kind == "hopper":
        built = rv.hopper_wagon(*box, gear=gear)
    elif kind == "flat":
        built = rv.flat_wagon(*box, load_colour=rv.CONTAINERS[(car - 1) % len(rv.CONTAINERS)], gear=gear)
    else:
        built = rv.box_wagon(*box, gear=gear)
    return CarModel(built.quads, built.eyes, built.view)


def bogie_model(spec, gauge: float, rail_depth: float, rail_radius: float, car: int) -> CarModel:
    """One wheel frame of car ``car`` on bogies (``spec`` its car's), centred on its pivot on the track
    curve: a railway bogie (three axles under a locomotive, else two, ``bogie_wheelbase`` apart) or a
    coaster car's wheel assembly on each rail."""
    kind = spec.vehicle(spec.frame_car(car))
    if kind in ("coaster", "box", "suspended"):
        return CarModel(geo.Quads.merge(_coaster_wheels(0.0, gauge, -rail_depth, rail_radius, _shade(spec.colour, 0.6))),
                        [])
    from trackrider.render import vehicles as rv

    return CarModel(rv.bogie(spec.length, spec.width, spec.height, spec.cg_height, gauge, rail_depth,
                             spec.bogie_wheelbase, axles=3 if kind == "locomotive" else 2), [])


def model_key(spec, role: str, car: int):
    """What distinguishes one entity's model from another's of the same spec and role
    (cars alike share one model): the vehicle kind, and a flat wagon's load."""
    if role not in ("car", "carbody", "bogie") or not hasattr(spec, "vehicle"):
        return None
    if role == "bogie":
        return "bogie", spec.vehicle(spec.frame_car(car)) == "locomotive"
    kind = spec.vehicle(car)
    return (kind, (car - 1) % 5) if kind == "flat" else kind
