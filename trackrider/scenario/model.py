"""Typed, validated scenario objects (what ``load_scenario`` returns).

Every field is in SI units (m, kg, s, N) unless its comment says otherwise;
angles are degrees as in the TOML file. The objects are plain dataclasses:
they hold settings only, never runtime state (``build_world`` turns them into a
``trackrider.physics.World``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trackrider.settings import BodyConfig, CarSpec, CouplingSpec, ResistanceConfig, SectionConfig, SimulationConfig  # noqa: F401 (the model's tables)

#: a joint end: ("car", train_index, car_index_0_based) | ("body", body_index) | "world"
JointEnd = Any


@dataclass
class TrackConfig:
    """``[[track]]``: one track, from a curve file or from segments.

    ``track`` is the loaded ``trackrider.curves.Track``; ``length`` its arc
    length in m; ``gauge`` the rail gauge in m (default 1.0); ``roll`` the bank
    knots ``[(s m, degrees), ...]``; ``frame`` ``up | minimal | frenet`` or
    None (the file's own frame for NL2 files, else ``up``).
    """

    name: str
    curve: Path | None
    segments: list[dict] | None
    format: str
    frame: str | None
    closed: bool | None
    gauge: float
    roll: list[tuple[float, float]] | None
    track: Any = None
    length: float = 0.0
    style: str | None = None  # drawing only: "steel" | "railway" (None: from the trains' wheels)


#: ``[train.car]`` and ``[train.coupling]``: the physics' own settings (trackrider.settings)
CarConfig = CarSpec
CouplingConfig = CouplingSpec


@dataclass
class TrainConfig:
    """``[[train]]``: a train of ``cars`` alike cars on track ``track_index``.

    start_s m is the arc length of the lead car's anchor; start_speed m/s
    along the track (signed); wheels ``coaster`` (support both ways) or
    ``railway`` (support one way); ``suspended`` (the file's ``train.suspended``, kept
    as ``car.suspended``): each car body hangs below its track trolley on a hinge along
    the direction of travel.
    """

    name: str
    track: str
    track_index: int
    cars: int
    wheels: str
    start_s: float
    start_speed: float
    car: CarSpec
    coupling: CouplingSpec
    #: ``riders`` (default) or ``counterweight``: a weight with no riders (no G at a rider, no airtime)
    role: str = "riders"
    color: tuple[int, int, int] | None = None  # drawing only: RGB 0..255 (None: a colour per train)

    @property
    def suspended(self) -> bool:
        """The cars hang below their trolleys (``car.suspended``)."""
        return self.car.suspended

    @property
    def pitch(self) -> float:
        """Distance between the anchors of consecutive cars, m."""
        return self.car.length + self.coupling.gap

    def car_s(self) -> list[float]:
        """Arc length of every car's anchor at the start, lead car first, m."""
        return [self.start_s - i * self.pitch for i in range(self.cars)]


@dataclass
class JointConfig:
    """``[[joint]]``: an extra joint between cars, bodies or the world.

    ``a``/``b`` are the file's words (``"red:1"``, ``"bob"``, ``"world"``);
    ``end_a``/``end_b`` the resolved ends as ``build_world`` passes them to
    ``World.add_joint``; ``params`` the type's own keys (ground_a, ratio, ...).
    """

    type: str
    a: str
    b: str
    end_a: JointEnd
    end_b: JointEnd
    anchor_a: tuple[float, float, float] | None = None
    anchor_b: tuple[float, float, float] | None = None
    params: dict = field(default_factory=dict)


@dataclass
class Scenario:
    """A validated scenario. ``path`` is the scenario file's absolute path;
    ``document`` the raw TOML document after overrides (for reference)."""

    path: Path
    simulation: SimulationConfig
    tracks: list[TrackConfig]
    trains: list[TrainConfig]
    sections: list[SectionConfig]
    bodies: list[BodyConfig]
    joints: list[JointConfig]
    resistance: ResistanceConfig
    title: str = ""
    description: str = ""
    document: dict = field(default_factory=dict, repr=False)
    #: warnings raised while loading (a kinked curve fit ...), one line each; summary.json lists them
    warnings: list = field(default_factory=list, repr=False)
    #: the ``--set`` / sweep overrides applied to the file (dotted key -> value); summary.json keeps them
    overrides: dict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        """The scenario file's stem (``classic_coaster``)."""
        return self.path.stem

    def track_by_name(self, name: str) -> TrackConfig:
        for t in self.tracks:
            if t.name == name:
                return t
        raise KeyError(name)
