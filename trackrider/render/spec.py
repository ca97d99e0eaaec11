"""What the scene is made of: tracks (geometry and gauge), trains (car sizes,
colour) and free bodies. Built from a loaded ``Scenario`` or by hand.

No VTK here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    gauge : rail gauge, m (default 1.0).
    """

    name: str
    geometry: Any
    gauge: float = 1.0


@dataclass
class TrainSpec:
    """A train to draw: ``cars`` alike boxes ``length × width × height`` (m) whose
    centre of mass is ``cg_height`` (m) above the track curve; the rider point is
    ``rider_height`` (m) above the track curve; ``colour`` RGB 0..255."""

    name: str
    track_index: int
    cars: int
    length: float = 2.0
    width: float = 1.2
    height: float = 1.0
    cg_height: float = 0.0
    rider_height: float = 1.1
    colour: tuple = TRAIN_COLOURS[0]


@dataclass
class BodySpec:
    """A free body drawn as a box of ``size`` (m, body axes)."""

    name: str
    size: tuple = (0.3, 0.3, 0.3)
    colour: tuple = BODY_COLOUR


@dataclass
class SceneSpec:
    tracks: list = field(default_factory=list)
    trains: list = field(default_factory=list)
    bodies: list = field(default_factory=list)

    def box_of(self, label) -> tuple[tuple, tuple, float, float] | None:
        """(size (l, w, h) m, colour, cg_height m, rider_height m) of a recorded
        entity ``(name, car_no)``, or None when the scene does not know it."""
        name, _car = label
        for tr in self.trains:
            if tr.name == name:
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


def scene_from_scenario(scenario) -> SceneSpec:
    """The scene of a loaded ``trackrider.scenario.Scenario``."""
    tracks = [TrackSpec(name=t.name, geometry=t.track, gauge=float(t.gauge)) for t in scenario.tracks]
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
                colour=TRAIN_COLOURS[i % len(TRAIN_COLOURS)],
            )
        )
    bodies = [BodySpec(name=b.name, size=_body_size(b)) for b in getattr(scenario, "bodies", [])]
    return SceneSpec(tracks=tracks, trains=trains, bodies=bodies)
