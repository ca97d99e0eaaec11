"""Typed, validated scenario objects (what ``load_scenario`` returns).

Every field is in SI units (m, kg, s, N) unless its comment says otherwise;
angles are degrees as in the TOML file. The tables' settings (default, unit,
bounds) are defined once in ``trackrider.settings``, which the physics ``World``
and the renderer use too. The objects are plain dataclasses:
they hold settings only, never runtime state (``build_world`` turns them into a
``trackrider.physics.World``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trackrider.settings import (  # noqa: F401 (the model's tables, defined with their settings)
    BodyConfig,
    CarSpec,
    CouplingSpec,
    OperationConfig,
    ResistanceConfig,
    SectionConfig,
    SimulationConfig,
    TrackConfig,
    TrainConfig,
)

#: ``[train.car]`` and ``[train.coupling]``: the physics' own names
CarConfig = CarSpec
CouplingConfig = CouplingSpec

#: a joint end: ("car", train_index, car_index_0_based) | ("body", body_index) | "world"
JointEnd = Any


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
    operation: OperationConfig = field(default_factory=OperationConfig)
    #: ``[check]``: an envelope to check runs against, the design checks' thresholds (trackrider.check.config)
    check: Any = None
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
