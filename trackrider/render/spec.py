"""What the scene is made of: tracks (geometry and gauge), trains (car sizes,
colour) and free bodies. Built from a loaded ``Scenario`` or by hand.

No VTK here.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trackrider.render.recording import quat_to_matrix
from trackrider.settings import CarSpec, TrackConfig, TrainConfig

#: train colours (RGB 0..255), one per train in scenario order, cycled
TRAIN_COLOURS = [
    (30, 90, 220),  # blue
    (215, 30, 40),  # red
    (30, 160, 60),  # green
    (140, 60, 190),  # purple
    (240, 130, 20),  # orange
    (20, 170, 180),  # teal
]
#: free bodies
BODY_COLOUR = (120, 120, 130)


@dataclass
class TrackSpec:
    """A track to draw.

    geometry : object with ``length`` (m), ``closed`` (bool) and
        ``frames(s_array)`` returning ``position, tangent, normal, binormal``
        arrays (n, 3) — a ``trackrider.curves.Track``.
    gauge : rail gauge, m.
    """

    name: str
    geometry: Any
    gauge: float = TrackConfig.gauge
    style: str | None = None  # "steel" | "railway"; None: railway when every train on it runs on railway wheels
    body: str | None = None  # the [[body]] that carries it (it moves with that body), None: fixed to the world


@dataclass
class TrainSpec:
    """A train to draw: ``cars`` alike boxes ``length × width × height`` (m) whose
    centre of mass is ``cg_height`` (m) above the track curve; the rider point is
    ``rider_height`` (m) above the track curve; ``colour`` RGB 0..255."""

    name: str
    track_index: int
    cars: int
    length: float = CarSpec.length   # the defaults are the physics' (trackrider.settings)
    width: float = CarSpec.width
    height: float = CarSpec.height
    cg_height: float = CarSpec.cg_height
    rider_height: float = CarSpec.rider_height
    colour: tuple = TRAIN_COLOURS[0]
    wheels: str = TrainConfig.wheels  # "coaster" | "railway"
    suspended: bool = False  # cars hang ``hang`` m below their trolleys (recorded as ``<name>.body``)
    hang: float = CarSpec.hang
    rows: int | None = None  # rows of seats (None: from the length)
    seats_per_row: int | None = None  # seats in a row (None: from the width)
    role: str = TrainConfig.role  # "counterweight": no riders, so no G on the overlay
    model: str = TrainConfig.model  # what the cars are drawn as (settings.VEHICLE_MODELS)
    grade: float = 0.0  # rad, the track's typical pitch along its direction (a funicular car's steps)
    #: a train of ``[[train.vehicle]]``: this car's vehicle ``kind`` (``locomotive``, ``coach``, ``wagon``)
    vehicle_kind: str | None = None
    #: a train of ``[[train.vehicle]]``: per car (from the front) the spec it is drawn from — its
    #: vehicle's size and kind (cars of one ``[[train.vehicle]]`` share one)
    per_car: list = field(default_factory=list)
    #: cars on bogies (``car.bogies``: ``two``, ``jacobs``, ``trailered``): the train's rows are its wheel frames, its
    #: bodies ``<name>.body``; the frames' pivots ``bogie_spacing`` apart, each ``bogie_wheelbase`` long,
    #: the body's centre of mass ``cg_forward`` ahead of their middle
    bogies: str = "none"
    bogie_spacing: float = 0.0
    bogie_wheelbase: float = 2.0
    cg_forward: float = 0.0

    def car(self, car: int) -> "TrainSpec":
        """The spec car ``car`` (1 = the lead car) is drawn from."""
        return self.per_car[car - 1] if 1 <= car <= len(self.per_car) else self

    def frame_car(self, frame: int) -> int:
        """The car (1 = the lead car) whose wheel frame ``frame`` (1 = the lead frame) is, on bogies: two
        frames a car; a Jacobs set's frame: the car behind it (the last frame: the last car); a trailered
        train's: the car it carries at its rear (the first two: the first car)."""
        if self.bogies == "jacobs":
            return min(frame, self.cars)
        if self.bogies == "trailered":
            return max(frame - 1, 1)
        return (frame + 1) // 2 if self.bogies == "two" else frame

    @property
    def kind(self) -> str:
        """How its cars are drawn, in general: ``coaster`` (seats, riders,
        restraints, wheel assemblies), ``railway`` (railway vehicles: see
        ``vehicle``), ``suspended`` (a trolley on the rail, the car hanging below
        it) or ``box`` (too small to seat anyone, or its rider point at the rail:
        a plain box)."""
        if self.suspended:
            return "suspended"
        if self.model not in ("auto", "coaster"):
            return "railway"
        if self.model == "auto" and self.wheels == "railway":
            return "railway"
        if self.length >= 1.2 and self.width >= 0.6 and self.rider_height > 0.3:
            return "coaster"
        return "box"

    def vehicle(self, car: int) -> str:
        """What car ``car`` (1 = the lead car) is drawn as: one of
        ``settings.VEHICLE_KINDS`` (``coaster``, ``locomotive``, ``coach``,
        ``wagon``, ``hopper``, ``flat``), ``suspended`` or ``box``. The train's
        ``model`` decides: ``auto`` — coaster cars (or boxes, ``kind``) on coaster
        wheels; on railway wheels a coach when the train is one car, else a
        locomotive and then wagons in blocks of five box wagons, five hoppers,
        five flat wagons; a kind — every car that kind; ``freight`` — a
        locomotive, then the wagons; ``passenger`` — a locomotive, then coaches."""
        kind = self.kind
        if kind in ("suspended", "box", "coaster"):
            return kind
        model = self.model
        if model == "auto" and self.vehicle_kind is not None:   # its [[train.vehicle]] kind
            if self.vehicle_kind in ("locomotive", "coach"):
                return self.vehicle_kind
            return ("wagon", "hopper", "flat")[(max(car - 2, 0) // 5) % 3]
        if model == "auto":
            model = "coach" if self.cars == 1 else "freight"
        if model == "freight":
            return "locomotive" if car == 1 else ("wagon", "hopper", "flat")[((car - 2) // 5) % 3]
        if model == "passenger":
            return "locomotive" if car == 1 else "coach"
        return model

    def seat_layout(self) -> tuple[int, int]:
        """(rows, seats per row): ``CarSpec.seat_layout``'s rule (the riders counted for capacity)."""
        return CarSpec.seat_layout(self)


@dataclass
class BodySpec:
    """A free body drawn as a box of ``size`` (m, body axes); ``position`` (m) and
    ``orientation`` (unit quaternion w, x, y, z, body → world) its pose at the
    start, where the tracks it carries are given."""

    name: str
    size: tuple = (0.3, 0.3, 0.3)
    colour: tuple = BODY_COLOUR
    position: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)


@dataclass
class LinkSpec:
    """A joint drawn as a rod from ``anchor_a`` on ``a`` to ``anchor_b`` on ``b``:
    ``a``, ``b`` recorded labels ``(name, car_no)`` or None for the world (the
    anchor then a world point), anchors in the body's axes, m."""

    a: tuple | None
    anchor_a: tuple
    b: tuple | None
    anchor_b: tuple


@dataclass
class SwitchSpec:
    """A switch (points) to draw: on track ``track`` at ``at`` (``"start"``,
    ``"end"`` or m along it), its ``branches`` ``[(track index, "start" |
    "end")]`` named ``branch_names``, set to branch ``position`` at the start;
    ``throws`` ``[(t, branch index, s moving)]``: each throw of the run,
    finished at t s (``summary.json`` ``switches``), its points moving for
    ``throw_time`` s before (a train trailing through forces them over at once)."""

    name: str
    track: int
    at: Any
    branches: list
    branch_names: list
    position: int = 0
    throw_time: float = 5.0
    throws: list = field(default_factory=list)

    def state(self, t: float) -> tuple[int, bool]:
        """(the branch set at time ``t`` s, whether the points are moving then)."""
        pos = self.position
        for tt, to, moving in self.throws:
            if tt <= t:
                pos = to
            elif tt - moving < t:
                return pos, True
            else:
                break
        return pos, False


@dataclass
class SceneSpec:
    tracks: list = field(default_factory=list)
    trains: list = field(default_factory=list)
    bodies: list = field(default_factory=list)
    links: list = field(default_factory=list)
    switches: list = field(default_factory=list)

    def set_throws(self, summary_switches) -> None:
        """Take each switch's throws from a run's ``summary.json`` ``switches``
        (``{name: {"throws": [{"t", "to"}, ...]}}``)."""
        for sw in self.switches:
            rec = (summary_switches or {}).get(sw.name) or {}
            sw.throws = sorted((float(th["t"]), sw.branch_names.index(th["to"]),
                                0.0 if th.get("by") == "run_through" else sw.throw_time)
                               for th in rec.get("throws", []) if th.get("to") in sw.branch_names)

    def trains_on(self, k: int) -> list:
        """The trains that run on track ``k``: those that start on it; on a track no
        train starts on (a network's loop, a siding), every train of the scene."""
        return [t for t in self.trains if t.track_index == k] or list(self.trains)

    def track_style(self, k: int) -> str:
        """``steel``, ``railway`` or ``hanging`` (a steel track carrying suspended cars) for track ``k``."""
        on = self.trains_on(k)
        if any(t.suspended for t in on):
            return "hanging"
        style = self.tracks[k].style
        if style:
            return style
        return "railway" if on and all(t.wheels == "railway" for t in on) else "steel"

    def carried(self, k: int) -> bool:
        """Is track ``k`` carried by a body (drawn moving with it, not with the static structure)?"""
        body = self.tracks[k].body
        return body is not None and any(b.name == body for b in self.bodies)

    def rail_depth(self, k: int) -> float:
        """Rail tops this far under the curve of track ``k`` (m): the bottom of the
        lowest car box on it, at least 0.1 m (suspended cars: unused)."""
        on = [t for t in self.trains_on(k) if not t.suspended]
        return max([t.height / 2.0 - t.cg_height for t in on] + [0.1])

    def entity(self, label):
        """``(spec, role)`` of a recorded entity ``(name, car_no)``: role ``car``
        (a train's car, or a suspended train's trolley: ``trolley``), ``hanging``
        (the body of a suspended car, recorded as ``<train>.body``), ``body`` (a
        free body), or ``(None, None)`` when the scene does not know it."""
        name, car = label
        for tr in self.trains:
            if tr.name == name:
                if tr.bogies != "none":     # a wheel frame (its car's spec)
                    return tr.car(tr.frame_car(car)), "bogie"
                return tr.car(car), ("trolley" if tr.suspended else "car")
        for b in self.bodies:
            if b.name == name:
                return b, "body"
        for tr in self.trains:
            if tr.suspended and name == f"{tr.name}.body":
                return tr, "hanging"
            if tr.bogies != "none" and name == f"{tr.name}.body":
                return tr.car(car), "carbody"
        return None, None

    def box_of(self, label) -> tuple[tuple, tuple, float, float] | None:
        """(size (l, w, h) m, colour, cg_height m, rider_height m) of a recorded
        entity ``(name, car_no)``, or None when the scene does not know it."""
        name, car = label
        for tr in self.trains:
            if tr.name == name and tr.bogies != "none":   # a wheel frame
                tr = tr.car(tr.frame_car(car))
                return (tr.bogie_wheelbase, tr.width, 0.5), tr.colour, 0.0, 0.0
            if tr.name == name or (tr.bogies != "none" and name == f"{tr.name}.body"):
                tr = tr.car(car)
                return (tr.length, tr.width, tr.height), tr.colour, tr.cg_height, tr.rider_height
        for b in self.bodies:
            if b.name == name:
                return tuple(b.size), b.colour, 0.0, 0.0
        return None


def _body_size(body) -> tuple:
    if getattr(body, "size", None) is not None:
        return tuple(float(v) for v in body.size)
    inertia = getattr(body, "inertia", None)
    mass = float(getattr(body, "mass", 1.0) or 1.0)
    if inertia is not None:
        # the solid box with this inertia: I_x = m (b² + c²) / 12, ...
        ix, iy, iz = (float(v) for v in inertia)
        sq = [max(6.0 * (iy + iz - ix) / mass, 1e-4), max(6.0 * (ix + iz - iy) / mass, 1e-4), max(6.0 * (ix + iy - iz) / mass, 1e-4)]
        return tuple(v ** 0.5 for v in sq)
    return (0.3, 0.3, 0.3)


def _train_colour(tr, i: int) -> tuple:
    """``train.color``, else the train's name when it names a colour ("red"), else the i-th of ``TRAIN_COLOURS``."""
    from trackrider.colours import parse_colour

    if getattr(tr, "color", None):
        return tuple(tr.color)
    named = parse_colour(tr.name) if not tr.name.startswith("#") else None
    return named if named is not None else TRAIN_COLOURS[i % len(TRAIN_COLOURS)]


def _grade(geometry) -> float:
    """The median pitch of a track along its direction, rad (a funicular's grade)."""
    t = np.asarray(geometry.frames(np.linspace(0.0, float(geometry.length), 200)).tangent, dtype=float)
    return float(np.median(np.arcsin(np.clip(t[:, 2], -1.0, 1.0))))


def _start_point(scenario, end, anchor) -> tuple | None:
    """World point where ``anchor`` (body axes; None: the centre) on a ``[[body]]`` end starts;
    None for another kind of end (a car's start pose is known only once the world is built)."""
    if not (isinstance(end, tuple) and end and end[0] == "body"):
        return None
    b = scenario.bodies[end[1]]
    rot = quat_to_matrix(np.asarray(getattr(b, "orientation", None) or (1.0, 0.0, 0.0, 0.0), float))
    p = np.asarray([float(v) for v in b.position]) + rot @ np.asarray(anchor or (0.0, 0.0, 0.0), float)
    return tuple(float(v) for v in p)


def scene_from_scenario(scenario) -> SceneSpec:
    """The scene of a loaded ``trackrider.scenario.Scenario``."""
    tracks = [TrackSpec(name=t.name, geometry=t.track, gauge=float(t.gauge), style=getattr(t, "style", None),
                        body=None if getattr(t, "body", "world") in (None, "world") else str(t.body))
              for t in scenario.tracks]
    trains = []
    for i, tr in enumerate(scenario.trains):
        car = tr.car
        trains.append(
            TrainSpec(
                name=tr.name,
                track_index=int(tr.track_index),
                cars=int(tr.cars),
                length=float(car.length),
                width=float(car.width),
                height=float(car.height),
                cg_height=float(car.cg_height),
                rider_height=float(car.rider_height),
                colour=_train_colour(tr, i),
                wheels=str(tr.wheels),
                suspended=bool(tr.suspended),
                hang=float(car.hang),
                rows=getattr(car, "rows", None),
                seats_per_row=getattr(car, "seats_per_row", None),
                role=str(tr.role),
                model=str(getattr(tr, "model", "auto")),
                grade=_grade(tracks[int(tr.track_index)].geometry),
                bogies=str(getattr(car, "bogies", "none")),
                bogie_spacing=float(getattr(car, "bogie_spacing", None) or 0.0),
                bogie_wheelbase=float(getattr(car, "bogie_wheelbase", 2.0)),
                cg_forward=float(getattr(car, "cg_forward", 0.0)),
            )
        )
    for spec, tr in zip(trains, scenario.trains):
        if getattr(tr, "vehicles", None):   # each car drawn with its own vehicle's size and kind
            for v in tr.vehicles:
                one = dataclasses.replace(spec, length=float(v.length), width=float(v.width),
                                          height=float(v.height), cg_height=float(v.cg_height),
                                          rider_height=float(v.rider_height), vehicle_kind=str(v.kind), per_car=[],
                                          bogie_spacing=float(v.bogie_spacing or 0.0),
                                          bogie_wheelbase=float(v.bogie_wheelbase), cg_forward=float(v.cg_forward))
                spec.per_car += [one] * int(v.count)
    names = {t.name for t in trains}
    bodies = [BodySpec(name=b.name, size=_body_size(b), position=tuple(float(v) for v in b.position),
                       orientation=tuple(float(v) for v in (getattr(b, "orientation", None) or (1.0, 0.0, 0.0, 0.0))))
              for b in getattr(scenario, "bodies", []) if b.name not in names]
    links = []
    for j in getattr(scenario, "joints", []) or []:
        ends = []
        for end in (j.end_a, j.end_b):
            if isinstance(end, tuple) and end and end[0] == "car":
                ends.append((scenario.trains[end[1]].name, int(end[2]) + 1))
            elif isinstance(end, tuple) and end and end[0] == "body":
                ends.append((scenario.bodies[end[1]].name, 1))
            else:
                ends.append(None)
        anchors = [tuple(float(v) for v in a) if a is not None else None for a in (j.anchor_a, j.anchor_b)]
        for i in (0, 1):   # a world end's default anchor: where the other end's anchor starts
            if ends[i] is None and anchors[i] is None:
                anchors[i] = _start_point(scenario, (j.end_a, j.end_b)[1 - i], anchors[1 - i])
        links.append(LinkSpec(ends[0], anchors[0] or (0.0, 0.0, 0.0), ends[1], anchors[1] or (0.0, 0.0, 0.0)))
    switches = [SwitchSpec(name=sw["name"], track=int(sw["track"]), at=sw["at"], branches=list(sw["branches"]),
                           branch_names=list(sw["branch_names"]), position=int(sw["position"]),
                           throw_time=float(sw["throw_time"]))
                for sw in getattr(scenario, "switches", []) or []]
    return SceneSpec(tracks=tracks, trains=trains, bodies=bodies, links=links, switches=switches)
