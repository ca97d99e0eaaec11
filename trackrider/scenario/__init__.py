"""Scenario files: TOML → validated ``Scenario`` → physics ``World``.

>>> from trackrider.scenario import load_scenario, build_world   # doctest: +SKIP
>>> world = build_world(load_scenario("scenarios/classic_coaster.toml"))  # doctest: +SKIP
"""
from trackrider.scenario.build import build_world
from trackrider.scenario.load import apply_overrides, load_scenario, read_toml
from trackrider.scenario.model import (
    BodyConfig,
    CarConfig,
    CouplingConfig,
    JointConfig,
    ResistanceConfig,
    Scenario,
    SectionConfig,
    SimulationConfig,
    TrackConfig,
    TrainConfig,
)

__all__ = [
    "load_scenario", "build_world", "apply_overrides", "read_toml", "Scenario", "SimulationConfig",
    "TrackConfig", "TrainConfig", "CarConfig", "CouplingConfig", "SectionConfig", "BodyConfig",
    "JointConfig", "ResistanceConfig",
]
