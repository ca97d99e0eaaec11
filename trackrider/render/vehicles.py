"""Railway vehicles built in code, as ``Quads`` in the car's body frame (x
forward, y left, z up, origin at the recorded centre of mass): a diesel
locomotive, a passenger coach (on a grade, a funicular car whose compartments
step so that each floor is level) and freight wagons (box, hopper, flat with a
container), each on bogies (or, a funicular car, two axles) whose wheels stand
on the rails ``rail_depth`` below the track curve. No VTK here.

Each takes the car's box (``length``, ``width``, ``height``, ``cg`` the centre
of mass above the curve) and draws within it; ``cab=True`` builds the vehicle
the on-ride camera rides in: the glazing left out and the inside of its cab
(or front compartment) drawn, with ``eyes`` at the driver's (passenger's) eyes
(``Built``).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from trackrider.render import geometry as geo

DARK = (45, 45, 50)
UNDER = (38, 38, 42)
WHEEL = (58, 56, 55)
STEEL = (150, 150, 158)
GLASS = (40, 52, 64)
YELLOW = (240, 190, 30)
INSIDE = (70, 72, 78)
DESK = (88, 90, 96)
COAL = (32, 32, 35)
#: containers on flat wagons, by car number
CONTAINERS = ((170, 65, 40), (40, 95, 150), (205, 165, 40), (60, 125, 75), (150, 150, 150))


def _shade(colour, f):
    return tuple(int(min(255, max(0, round(c * f)))) for c in colour)


class Built(NamedTuple):
    """A vehicle: its ``quads`` (body frame), the eyes of whoever rides in its cab
    (``eyes[0][0]``, empty without one) and, when they look elsewhere than along
    the car, ``view``: (the direction they look, their up), body frame."""

    quads: geo.Quads
    eyes: list
    view: tuple | None = None


class _Frame:
    """A railway vehicle's heights (body frame, m): ``rail`` the rail tops, ``deck``
    the underframe's top (the running gear below it), ``top`` the box's top."""

    def __init__(self, length, width, height, cg, rail_depth):
        self.length, self.width = float(length), float(width)
        self.rail = -float(rail_depth) - float(cg)
        self.top = 0.5 * float(height)
        run = min(1.15, 0.33 * (self.top - self.rail))  # wheels and bogie frames
        self.deck = self.rail + run
        self.wheel = min(0.46, 0.4 * run)


def _wheelset(x, gauge, rail, r) -> list:
    """An axle at ``x`` with two flanged wheels whose treads stand on the rails (tops at ``rail``)."""
    zc = rail + r
    parts = [geo.cylinder((x, -0.5 * gauge - 0.12, zc), (x, 0.5 * gauge + 0.12, zc), 0.07, STEEL, sides=6)]
    for side in (1.0, -1.0):
        y = side * 0.5 * gauge
        parts.append(geo.cylinder((x, y - side * 0.02, zc), (x, y + side * 0.12, zc), r, WHEEL, sides=16))
        parts.append(geo.cylinder((x, y - side * 0.05, zc), (x, y - side * 0.02, zc), r + 0.03, WHEEL, sides=16))
    return parts


def _bogie(x, gauge, rail, r, axles=2, base=None, frame=DARK) -> list:
    """A bogie at ``x``: ``axles`` wheelsets (flanged wheels on the rails at ±gauge/2,
    their tops ``rail`` + 2r), shaped side frames outside the wheels with axle
    boxes and springs, a bolster across."""
    base = (1.8 if axles == 2 else 3.6) * r / 0.46 if base is None else base
    xs = [x + base * (k / (axles - 1) - 0.5) for k in range(axles)] if axles > 1 else [x]
    zc = rail + r
    parts = []
    for xw in xs:
        parts += _wheelset(xw, gauge, rail, r)
    half = 0.5 * base + 0.45 * r + 0.2
    for side in (1.0, -1.0):
        y = side * (0.5 * gauge + 0.22)
        # the side frame: deep in the middle, tapering over the axle boxes
        c = np.array([
            [x - half, y - 0.06, zc + 0.05], [x + half, y - 0.06, zc + 0.05],
            [x + half, y + 0.06, zc + 0.05], [x - half, y + 0.06, zc + 0.05],
            [x - half - 0.1, y - 0.06, zc + 0.3], [x + half + 0.1, y - 0.06, zc + 0.3],
            [x + half + 0.1, y + 0.06, zc + 0.3], [x - half - 0.1, y + 0.06, zc + 0.3],
        ])
        parts.append(geo.hexa(c[None], frame))
        parts.append(geo.box((x, y, zc - 0.12), (min(base, 1.2) * 0.6, 0.12, 0.3), frame))
        for xw in xs:  # axle boxes, and a spring over each
            parts.append(geo.box((xw, y, zc), (0.3, 0.16, 0.26), UNDER))
            parts.append(geo.cylinder((xw, y, zc + 0.13), (xw, y, zc + 0.3), 0.07, STEEL, sides=6))
    parts.append(geo.box((x, 0.0, zc + 0.3), (0.5, gauge + 0.5, 0.22), frame))  # bolster
    return parts


def bogie(length, width, height, cg, gauge, rail_depth, wheelbase, axles=2) -> geo.Quads:
    """The running gear of one wheel frame of a vehicle on bogies (``length`` … ``cg``: its vehicle's
    box, the wheels sized as the vehicle's own), centred on its pivot, which lies on the track curve:
    ``axles`` wheelsets ``wheelbase`` apart."""
    f = _Frame(length, width, height, cg, rail_depth)
    return geo.Quads.merge(_bogie(0.0, gauge, -float(rail_depth), f.wheel, axles=axles, base=wheelbase))


def _ends(length, z, gauge, width) -> list:
    """Buffers (shaft and head) and a coupler at both ends, at height ``z``."""
    parts = []
    for sgn in (1.0, -1.0):
        xe = sgn * 0.5 * length
        for side in (1.0, -1.0):
            y = side * min(0.88, 0.3 * width + 0.1, 0.5 * gauge + 0.1)
            parts.append(geo.cylinder((xe, y, z), (xe + sgn * 0.3, y, z), 0.09, DARK, sides=8))
            parts.append(geo.cylinder((xe + sgn * 0.3, y, z), (xe + sgn * 0.36, y, z), 0.19, STEEL, sides=10))
        parts.append(geo.box((xe + sgn * 0.2, 0.0, z - 0.05), (0.4, 0.25, 0.2), DARK))
    return parts


def _cab_inside(front, back, floor, ceiling, inner, sill, head, desk: bool = True) -> list:
    """The inside of a cab (or a front compartment) seen from within, from thin solids
    (the vehicle's own boxes are culled from inside): a desk (or a ledge) under a
    two-pane windscreen, its pillars and header, side walls under and over the side
    windows, a ceiling, a back wall."""
    parts = []
    if desk:
        parts.append(geo.box((front - 0.35, 0.0, 0.5 * (floor + sill)), (0.6, 2 * inner, sill - floor), DESK))
    else:
        parts.append(geo.box((front - 0.06, 0.0, 0.5 * (floor + sill)), (0.12, 2 * inner, sill - floor), INSIDE))
    parts.append(geo.box((front - 0.08, 0.0, 0.5 * (head + ceiling)), (0.16, 2 * inner, ceiling - head), INSIDE))
    for y in (inner - 0.12, 0.0, -(inner - 0.12)):  # windscreen pillars
        parts.append(geo.box((front - 0.08, y, 0.5 * (sill + head)), (0.16, 0.24 if y else 0.08, head - sill), INSIDE))
    for side in (1.0, -1.0):
        y = side * (inner - 0.04)
        parts.append(geo.box((0.5 * (front + back), y, 0.5 * (floor + sill + 0.1)), (front - back, 0.08, sill + 0.1 - floor),
                             INSIDE))
        parts.append(geo.box((0.5 * (front + back), y, 0.5 * (head + ceiling)), (front - back, 0.08, ceiling - head),
                             INSIDE))
        parts.append(geo.box((back + 0.3, y, 0.5 * (sill + head)), (0.2, 0.08, head - sill), INSIDE))  # a pillar
    parts.append(geo.box((0.5 * (front + back), 0.0, ceiling - 0.04), (front - back, 2 * inner, 0.08), INSIDE))
    parts.append(geo.box((back + 0.04, 0.0, 0.5 * (floor + ceiling)), (0.08, 2 * inner, ceiling - floor), INSIDE))
    return parts


def _windows(x0, x1, side_y, z0, z1, pane, pitch, out) -> None:
    """Dark glass panes ``pane`` m wide every ``pitch`` m between x0 and x1 on the side at
    ``side_y`` (just proud of it), from z0 to z1, appended to ``out``."""
    n = max(int((x1 - x0) // pitch), 1)
    gap = (x1 - x0 - n * pane) / n
    for k in range(n):
        xc = x0 + 0.5 * gap + pane * (k + 0.5) + gap * k
        out.append(geo.box((xc, side_y, 0.5 * (z0 + z1)), (pane, 0.05, z1 - z0), GLASS))


def locomotive(length, width, height, cg, gauge, rail_depth, colour, cab: bool = False, gear: bool = True):
    """A diesel road locomotive: a walkway deck on two three-axle bogies, a fuel tank
    between them, a full-width cab at the front (windscreen, side windows) behind a
    short nose, a long hood behind it (radiator fans, an exhaust stack, louvres),
    handrails, yellow ends and a yellow stripe along the deck. Returns (quads, eyes)."""
    f = _Frame(length, width, height, cg, rail_depth)
    L, W = f.length, f.width
    body, trim = colour, _shade(colour, 0.7)
    deck_top = f.deck + 0.3
    parts = [geo.box((0.0, 0.0, f.deck + 0.15), (L - 0.3, W, 0.3), trim)]
    for side in (1.0, -1.0):  # the yellow stripe along the deck's edge
        parts.append(geo.box((0.0, side * 0.5 * W, f.deck + 0.15), (L - 0.3, 0.03, 0.12), YELLOW))
    xb = 0.5 * L - max(0.22 * L, 2.4)
    for x in (xb, -xb):
        if gear:  # (a vehicle on bogies draws them where they are: ``bogie``)
            parts += _bogie(x, gauge, f.rail, f.wheel, axles=3, frame=DARK)
    parts.append(geo.cylinder((-0.25 * xb, 0.0, f.deck - 0.35), (0.25 * xb, 0.0, f.deck - 0.35), 0.42 * min(W / 3.0, 1.0) + 0.1,
                              UNDER, sides=12))  # the fuel tank
    parts += _ends(L - 0.3, f.deck + 0.1, gauge, W)
    # the cab: full width, behind a short nose
    nose = min(1.6, 0.1 * L)
    cab_front = 0.5 * L - 0.15 - nose
    cab_len = max(2.4, 0.15 * L)
    cab_back = cab_front - cab_len
    roof = f.top
    cw = W - 0.2
    parts.append(geo.box((0.5 * (cab_front + cab_back), 0.0, 0.5 * (deck_top + roof - 0.1)),
                         (cab_len, cw, roof - 0.1 - deck_top), body))
    parts.append(geo.box((0.5 * (cab_front + cab_back), 0.0, roof - 0.05), (cab_len + 0.15, cw + 0.1, 0.1), trim))
    eye_z = deck_top + 1.65
    sill, head = eye_z - 0.5, min(eye_z + 0.45, roof - 0.25)
    eyes = []
    if cab:
        parts += _cab_inside(cab_front, cab_back, deck_top, roof - 0.12, 0.5 * cw - 0.05, sill, head)
        eyes = [[np.array([cab_front - 1.0, 0.22 * cw, eye_z])]]  # the driver's seat, on the left
    else:
        for y in (0.25 * cw, -0.25 * cw):  # the windscreen's two panes
            parts.append(geo.box((cab_front + 0.01, y, 0.5 * (sill + head)), (0.05, 0.4 * cw, head - sill), GLASS))
        for side in (1.0, -1.0):
            _windows(cab_back + 0.2, cab_front - 0.2, side * (0.5 * cw + 0.01), sill + 0.05, head, 0.8, 1.05, parts)
    # the short nose, its top sloping to the front, yellow
    nt = deck_top + min(1.3, 0.45 * (roof - deck_top))
    nw = 0.5 * 0.78 * W
    c = np.array([
        [cab_front, -nw, deck_top], [0.5 * L - 0.15, -nw, deck_top], [0.5 * L - 0.15, nw, deck_top], [cab_front, nw, deck_top],
        [cab_front, -nw, nt], [0.5 * L - 0.3, -nw, nt - 0.25], [0.5 * L - 0.3, nw, nt - 0.25], [cab_front, nw, nt],
    ])
    parts.append(geo.hexa(c[None], YELLOW))
    for y in (0.3 * nw, -0.3 * nw):  # headlights
        parts.append(geo.cylinder((0.5 * L - 0.3, y, nt - 0.35), (0.5 * L - 0.12, y, nt - 0.35), 0.1, (235, 235, 210), sides=8))
    # the long hood: narrower, to the rear end (yellow)
    hw = 0.5 * 0.72 * W
    ht = roof - 0.3
    rear = -0.5 * L + 0.35
    parts.append(geo.box((0.5 * (cab_back + rear), 0.0, 0.5 * (deck_top + ht)), (cab_back - rear, 2 * hw, ht - deck_top), body))
    parts.append(geo.box((rear + 0.2, 0.0, 0.5 * (deck_top + ht)), (0.42, 2 * hw + 0.02, ht - deck_top + 0.02), YELLOW))
    for k in range(3):  # radiator fans at the rear of the roof
        x = rear + 0.9 + 1.1 * k
        parts.append(geo.cylinder((x, 0.0, ht), (x, 0.0, ht + 0.06), min(0.45, 0.8 * hw), DARK, sides=12))
    parts.append(geo.box((cab_back - 1.2, 0.0, ht + 0.2), (0.5, 0.3, 0.4), DARK))  # the exhaust stack
    for side in (1.0, -1.0):  # grilles high on the hood's sides, handrails along the walkway
        for k in range(int((cab_back - rear - 0.8) // 1.6)):
            x = cab_back - 0.9 - 1.6 * k
            parts.append(geo.box((x, side * (hw + 0.01), ht - 0.35), (1.1, 0.04, 0.3), (105, 105, 110)))
        yr = side * (0.5 * W - 0.08)
        zr = deck_top + 0.95
        parts.append(geo.cylinder((rear, yr, zr), (cab_back, yr, zr), 0.03, STEEL, sides=6))
        for x in np.linspace(rear + 0.1, cab_back - 0.1, max(int((cab_back - rear) // 2.0), 1) + 1):
            parts.append(geo.cylinder((x, yr, deck_top), (x, yr, zr), 0.025, STEEL, sides=6))
    return Built(geo.Quads.merge(parts), eyes)


def _roof_prism(x0, x1, half_width, z_eave, rise, colour, sides: int = 6) -> geo.Quads:
    """A curved roof from x0 to x1: its cross-section an arc from the eaves at
    ``z_eave``, ``half_width`` each side, up by ``rise``; closed at its ends."""
    ang = np.linspace(0.0, math.pi, sides + 1)
    prof = np.column_stack([half_width * np.cos(ang), z_eave + rise * np.sin(ang)])  # y, z from left to right
    n = len(prof)
    pts = np.concatenate([np.column_stack([np.full(n, x0), prof]), np.column_stack([np.full(n, x1), prof])])
    i = np.arange(n - 1)
    quads = [np.stack([i, i + 1, n + i + 1, n + i], axis=1), np.array([[0, n - 1, 2 * n - 1, n]])]  # the arc, the underside
    for off in (0, n):  # the end caps, as quads fanning from the middle of the underside
        k = np.arange((n - 1) // 2)
        quads.append(np.stack([off + k, off + k + 1, off + n - 2 - k, off + n - 1 - k], axis=1))
    quads = np.concatenate(quads)
    p = pts[quads]
    nrm = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
    centre = np.array([0.5 * (x0 + x1), 0.0, z_eave + 0.3 * rise])
    out = p.mean(axis=1) - centre
    nrm = np.where((np.sum(nrm * out, axis=1) < 0)[:, None], -nrm, nrm)
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
    return geo.Quads(pts, quads, np.tile(np.asarray(colour, np.uint8), (len(quads), 1)), nrm)


#: a coach on a track steeper than this (rad) is a funicular car, its compartments stepped
STEPPED_GRADE = math.radians(3.0)


def coach(length, width, height, cg, gauge, rail_depth, colour, grade: float = 0.0, cab: bool = False,
          gear: bool = True):
    """A passenger coach: a body with a band of windows, doors near its ends, a
    curved roof, gangways, on two bogies. On a grade steeper than 3° (``grade``,
    rad, positive when the front is uphill) a funicular car instead: compartments
    whose floors are level on the grade, stepping down towards the lower end,
    with glazed ends, on an underframe along the track with two axles.
    Returns (quads, eyes): with ``cab``, a passenger's eyes at the front window."""
    f = _Frame(length, width, height, cg, rail_depth)
    if abs(grade) > STEPPED_GRADE:
        return _funicular_car(f, gauge, colour, grade, cab)
    L, W = f.length, f.width
    trim = _shade(colour, 0.75)
    floor = f.deck + 0.2
    eave = f.top - 0.45
    parts = [geo.box((0.0, 0.0, f.deck + 0.1), (L - 0.4, W - 0.3, 0.2), UNDER)]
    parts.append(geo.box((0.0, 0.0, 0.5 * (floor + eave)), (L - 0.3, W, eave - floor), colour))
    parts.append(_roof_prism(-0.5 * L + 0.2, 0.5 * L - 0.2, 0.5 * W, eave, 0.45, (150, 152, 158)))
    xb = 0.5 * L - max(0.15 * L, 2.0)
    for x in (xb, -xb):
        if gear:  # (a vehicle on bogies draws them where they are: ``bogie``)
            parts += _bogie(x, gauge, f.rail, f.wheel)
    parts += _ends(L - 0.3, f.deck + 0.1, gauge, W)
    sill, head = floor + 0.85, min(floor + 1.75, eave - 0.1)
    door = 0.9
    for side in (1.0, -1.0):
        y = side * (0.5 * W + 0.01)
        parts.append(geo.box((0.0, y, sill - 0.12), (L - 0.3, 0.03, 0.1), trim))  # a stripe under the windows
        _windows(-0.5 * L + 0.3 + door + 0.4, 0.5 * L - 0.3 - door - 0.4, y, sill, head, 1.2, 1.6, parts)
        for x in (0.5 * L - 0.3 - 0.5 * door - 0.15, -0.5 * L + 0.3 + 0.5 * door + 0.15):  # doors, glazed above
            parts.append(geo.box((x, y, 0.5 * (floor + head)), (door, 0.03, head - floor), trim))
            parts.append(geo.box((x, y + side * 0.01, 0.5 * (sill + head)), (0.5 * door, 0.03, head - sill), GLASS))
    for sgn in (1.0, -1.0):  # gangways
        parts.append(geo.box((sgn * (0.5 * L - 0.12), 0.0, 0.5 * (floor + head)), (0.25, 1.1, head - floor + 0.2), DARK))
    eyes = []
    if cab:
        front = 0.5 * L - 0.15
        parts += _cab_inside(front, front - 3.0, floor, eave, 0.5 * W - 0.06, sill, head, desk=False)
        eyes = [[np.array([front - 0.6, 0.25 * W, floor + 1.6])]]  # beside the middle pillar
    return Built(geo.Quads.merge(parts), eyes)


def _funicular_car(f: _Frame, gauge, colour, grade, cab):
    """A funicular car (see ``coach``): compartments stepped on the grade."""
    L, W = f.length, f.width
    trim = _shade(colour, 0.75)
    s, c = math.sin(grade), math.cos(grade)
    up = np.array([s, 0.0, c])  # the world's up, in the car's frame (its front ``grade`` above level)
    level = np.array([c, 0.0, -s])  # the world's horizontal along the car
    # small wheels on two axles in pedestals (a funicular car has no bogies), a low underframe along the track
    wheel = min(f.wheel, 0.32)
    under_top = f.rail + 2.0 * wheel + 0.15
    parts = [geo.box((0.0, 0.0, under_top - 0.15), (L - 0.2, W - 0.4, 0.3), UNDER)]
    for x in (0.35 * L, -0.35 * L):
        parts += _wheelset(x, gauge, f.rail, wheel)
        for side in (1.0, -1.0):
            parts.append(geo.box((x, side * (0.5 * gauge + 0.25), f.rail + wheel + 0.1), (0.6, 0.14, 2 * wheel), DARK))
    n = max(int(round(L / 2.6)), 2)
    room = f.top + 0.5 - under_top  # a compartment's height, its floor to its roof (over the box a little)
    # the ends are upright in the world: their tops lean over the upper end, so that end starts further in
    lean = room * abs(s)
    edges = np.linspace(-0.5 * L + 0.15 + (lean if s < 0 else 0.0), 0.5 * L - 0.15 - (lean if s > 0 else 0.0), n + 1)
    eyes = []
    front_room = None
    for k in range(n):
        a, b = edges[k], edges[k + 1]
        mid = np.array([0.5 * (a + b), 0.0, under_top])
        half = 0.5 * (b - a) * c  # half its length, measured level
        # its floor level through the underframe's top at its middle, lifted until its lower end clears it
        lift = half * abs(s) / c + 0.05
        base = mid + lift * np.array([0.0, 0.0, 1.0])
        h = (under_top + room - (base[2] + half * abs(s))) / c  # its roof's upper corner at the same height
        corners = []
        for zz in (0.0, h):
            for xx, yy in ((-half, -0.5 * W), (half, -0.5 * W), (half, 0.5 * W), (-half, 0.5 * W)):
                corners.append(base + xx * level + yy * np.array([0.0, 1.0, 0.0]) + zz * up)
        corners = np.array(corners)
        parts.append(geo.hexa(corners[None], colour))
        # under it, down to the underframe: a wedge of frame (the floor is level, the underframe on the grade)
        foot = np.array([[a, -0.5 * W + 0.1, under_top], [b, -0.5 * W + 0.1, under_top],
                         [b, 0.5 * W - 0.1, under_top], [a, 0.5 * W - 0.1, under_top]])
        floor = corners[:4] + np.array([0.0, 0.1, 0.0]) * np.array([1.0, 1.0, -1.0, -1.0])[:, None]
        parts.append(geo.hexa(np.concatenate([foot, floor])[None], trim))
        eave = corners[4:] + 0.08 * np.array([-1.0, 1.0, 1.0, -1.0])[:, None] * level  # the roof, overhanging
        parts.append(geo.hexa(np.concatenate([eave, eave + 0.12 * up])[None], (150, 152, 158)))
        # windows on both sides, a door on the left; glazed ends on the first and last compartments
        z0, z1 = 0.4 * h, min(0.88 * h, h - 0.15)
        for side in (1.0, -1.0):
            if side > 0:
                parts.append(_panel(base, level, up, side * 0.5 * W, 0.0, min(0.75, half - 0.1), 0.05, h - 0.15, trim))
                parts.append(_panel(base, level, up, side * (0.5 * W + 0.01), 0.1, min(0.65, half - 0.2), z0, z1, GLASS))
                spans = ((-half + 0.2, -0.15),)
            else:
                spans = ((-half + 0.2, half - 0.2),)
            for u0, u1 in spans:
                if u1 - u0 > 0.3:
                    parts.append(_panel(base, level, up, side * 0.5 * W, u0, u1, z0, z1, GLASS))
        for end, sgn in ((k == n - 1, 1.0), (k == 0, -1.0)):
            if not end or (cab and sgn > 0):
                continue
            centre = base + sgn * (half + 0.02) * level + 0.5 * (z0 + z1) * up
            parts.append(geo.box(centre, (0.05, 0.8 * W, z1 - z0), GLASS, axes=(level, (0.0, 1.0, 0.0), up)))
        if k == n - 1:
            front_room = (base, half, h)
    if cab and front_room is not None:
        base, half, h = front_room
        # the front compartment from inside, in its own level frame
        inner = 0.5 * W - 0.06
        local = _cab_inside(half, -half, 0.0, h, inner, 0.4 * h, min(0.88 * h, h - 0.15), desk=False)
        rot = np.column_stack([level, [0.0, 1.0, 0.0], up])
        parts += [geo.transformed(p, rot, base) for p in local]
        eyes = [[base + (half - 0.6) * level + 0.25 * W * np.array([0.0, 1.0, 0.0]) + min(1.6, h - 0.3) * up]]
        # a passenger looks out level, a little down, not along the grade
        a = math.radians(8.0)
        return Built(geo.Quads.merge(parts), eyes, (math.cos(a) * level - math.sin(a) * up,
                                                    math.sin(a) * level + math.cos(a) * up))
    return Built(geo.Quads.merge(parts), eyes)


def _panel(base, level, up, y, u0, u1, z0, z1, colour) -> geo.Quads:
    """A thin panel (a window, a door) 4 cm proud of the side at ``y``, from ``u0`` to ``u1``
    along ``level`` and ``z0`` to ``z1`` along ``up`` from ``base`` (a compartment's frame)."""
    side = np.array([0.0, 1.0 if y > 0 else -1.0, 0.0])
    c = [base + uu * level + y * np.array([0.0, 1.0, 0.0]) + dd * side + zz * up
         for zz in (z0, z1) for uu, dd in ((u0, 0.0), (u1, 0.0), (u1, 0.04), (u0, 0.04))]
    return geo.hexa(np.array(c)[None], colour)


def box_wagon(length, width, height, cg, gauge, rail_depth, colour, gear: bool = True):
    """A covered goods wagon: a ribbed body with a sliding door each side and a curved roof, on two bogies."""
    f = _Frame(length, width, height, cg, rail_depth)
    L, W = f.length, f.width
    rib = _shade(colour, 0.8)
    floor = f.deck + 0.25
    eave = f.top - 0.3
    parts = [geo.box((0.0, 0.0, f.deck + 0.12), (L - 0.3, W - 0.2, 0.25), UNDER),
             geo.box((0.0, 0.0, 0.5 * (floor + eave)), (L - 0.3, W, eave - floor), colour),
             _roof_prism(-0.5 * L + 0.2, 0.5 * L - 0.2, 0.5 * W + 0.03, eave, 0.3, _shade(colour, 0.65))]
    xb = 0.5 * L - max(0.15 * L, 1.8)
    for x in (xb, -xb):
        if gear:  # (a vehicle on bogies draws them where they are: ``bogie``)
            parts += _bogie(x, gauge, f.rail, f.wheel)
    parts += _ends(L - 0.3, f.deck + 0.1, gauge, W)
    for side in (1.0, -1.0):
        y = side * (0.5 * W + 0.02)
        for x in np.linspace(-0.5 * L + 0.4, 0.5 * L - 0.4, max(int(L // 1.2), 2)):
            if abs(x) > 1.3:
                parts.append(geo.box((x, y, 0.5 * (floor + eave)), (0.08, 0.04, eave - floor), rib))
        parts.append(geo.box((0.0, y + side * 0.02, 0.5 * (floor + eave)), (2.4, 0.04, eave - floor - 0.1), rib))  # door
        parts.append(geo.box((0.0, y + side * 0.05, eave - 0.08), (4.9, 0.05, 0.08), DARK))  # its runner
    return Built(geo.Quads.merge(parts), [])


def hopper_wagon(length, width, height, cg, gauge, rail_depth, colour, gear: bool = True):
    """An open hopper wagon: sloping ends, ribbed sides, discharge chutes under it, a heap of load on top."""
    f = _Frame(length, width, height, cg, rail_depth)
    L, W = f.length, f.width
    body, rib = _shade(colour, 0.85), _shade(colour, 0.6)
    floor = f.deck + 0.2
    top = f.top - 0.1
    w2 = 0.5 * W
    parts = [geo.box((0.0, 0.0, f.deck + 0.1), (L - 0.3, 0.6, 0.2), UNDER)]
    c = np.array([
        [-0.5 * L + 1.4, -w2, floor], [0.5 * L - 1.4, -w2, floor], [0.5 * L - 1.4, w2, floor], [-0.5 * L + 1.4, w2, floor],
        [-0.5 * L + 0.2, -w2, top], [0.5 * L - 0.2, -w2, top], [0.5 * L - 0.2, w2, top], [-0.5 * L + 0.2, w2, top],
    ])
    parts.append(geo.hexa(c[None], body))
    for x in (0.22 * L, -0.22 * L):  # chutes under the floor, between the bogies
        ch = np.array([
            [x - 0.4, -0.5, f.rail + 0.45], [x + 0.4, -0.5, f.rail + 0.45], [x + 0.4, 0.5, f.rail + 0.45], [x - 0.4, 0.5, f.rail + 0.45],
            [x - 1.2, -w2 + 0.2, floor], [x + 1.2, -w2 + 0.2, floor], [x + 1.2, w2 - 0.2, floor], [x - 1.2, w2 - 0.2, floor],
        ])
        parts.append(geo.hexa(ch[None], rib))
    xb = 0.5 * L - max(0.12 * L, 1.6)
    for x in (xb, -xb):
        if gear:  # (a vehicle on bogies draws them where they are: ``bogie``)
            parts += _bogie(x, gauge, f.rail, f.wheel)
    parts += _ends(L - 0.3, f.deck + 0.1, gauge, W)
    for side in (1.0, -1.0):
        for x in np.linspace(-0.5 * L + 1.6, 0.5 * L - 1.6, max(int(L // 1.5), 2)):
            parts.append(geo.box((x, side * (w2 + 0.03), 0.5 * (floor + top)), (0.12, 0.06, top - floor), rib))
        parts.append(geo.box((0.0, side * (w2 + 0.03), top - 0.05), (L - 0.4, 0.08, 0.1), rib))
    heap = np.array([
        [-0.5 * L + 0.35, -w2 + 0.08, top - 0.05], [0.5 * L - 0.35, -w2 + 0.08, top - 0.05],
        [0.5 * L - 0.35, w2 - 0.08, top - 0.05], [-0.5 * L + 0.35, w2 - 0.08, top - 0.05],
        [-0.5 * L + 1.5, -0.3, top + 0.35], [0.5 * L - 1.5, -0.3, top + 0.35],
        [0.5 * L - 1.5, 0.3, top + 0.35], [-0.5 * L + 1.5, 0.3, top + 0.35],
    ])
    parts.append(geo.hexa(heap[None], COAL))
    return Built(geo.Quads.merge(parts), [])


def flat_wagon(length, width, height, cg, gauge, rail_depth, colour, load_colour=CONTAINERS[0], gear: bool = True):
    """A flat wagon: a deck with stakes on two bogies, carrying a ribbed container (``load_colour``)."""
    f = _Frame(length, width, height, cg, rail_depth)
    L, W = f.length, f.width
    deck = f.deck + 0.2
    parts = [geo.box((0.0, 0.0, f.deck + 0.1), (L - 0.3, W - 0.1, 0.2), colour),
             geo.box((0.0, 0.0, f.deck - 0.15), (L - 1.0, 0.5, 0.3), UNDER)]
    xb = 0.5 * L - max(0.15 * L, 1.8)
    for x in (xb, -xb):
        if gear:  # (a vehicle on bogies draws them where they are: ``bogie``)
            parts += _bogie(x, gauge, f.rail, f.wheel)
    parts += _ends(L - 0.3, f.deck + 0.05, gauge, W)
    for side in (1.0, -1.0):
        for x in np.linspace(-0.5 * L + 0.5, 0.5 * L - 0.5, 6):
            parts.append(geo.box((x, side * (0.5 * W - 0.05), deck + 0.2), (0.1, 0.1, 0.4), DARK))
    cl = min(L - 1.0, 12.2)
    ch = min(2.6, f.top - deck)
    cw = min(2.44, W - 0.3)
    parts.append(geo.box((0.0, 0.0, deck + 0.5 * ch), (cl, cw, ch), load_colour))
    rib = _shade(load_colour, 0.78)
    for side in (1.0, -1.0):
        for x in np.linspace(-0.5 * cl + 0.3, 0.5 * cl - 0.3, max(int(cl // 0.6), 2)):
            parts.append(geo.box((x, side * (0.5 * cw + 0.015), deck + 0.5 * ch), (0.12, 0.03, ch - 0.2), rib))
    return Built(geo.Quads.merge(parts), [])
