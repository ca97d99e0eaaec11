"""One definition per setting: the loader, World's Python API and the renderer agree on
defaults and bounds, and their errors name the key where it was given."""
from __future__ import annotations

import dataclasses

import pytest

from trackrider.errors import InputError
from trackrider.physics import joints
from trackrider.settings import (
    BodyConfig,
    TrackConfig,
    TrainConfig,
    CarSpec,
    CouplingSpec,
    ResistanceConfig,
    SectionConfig,
    SimulationConfig,
    build,
    check,
    default_of,
    settings_of,
)

SETTINGS_CLASSES = [CarSpec, CouplingSpec, SimulationConfig, ResistanceConfig, SectionConfig, BodyConfig, TrackConfig,
                    TrainConfig, *(joints.settings(k) for k in joints.USER_KINDS)]
#: fields that are not settings: names, resolved references, nested tables, loaded data
NOT_SETTINGS = {SectionConfig: ["track_index"], BodyConfig: ["name"],
                TrackConfig: ["name", "curve", "segments", "roll", "track", "length"],
                TrainConfig: ["name", "track", "track_index", "car", "coupling", "color"]}
SAMPLE = {"mass": 600.0, "duration": 1.0, "ground_a": (0.0, 0.0, 1.0), "ground_b": (1.0, 0.0, 1.0),
          "axis": (0.0, 1.0, 0.0), "type": "brake", "s_from": 0.0, "s_to": 1.0, "max_force": 1.0,
          "position": (0.0, 0.0, 0.0), "size": (1.0, 1.0, 1.0), "name": "x", "curve": None, "segments": None,
          "track": "main", "track_index": 0}


@pytest.mark.parametrize("cls", SETTINGS_CLASSES, ids=lambda c: c.__name__)
def test_every_field_is_a_setting_and_its_default_passes_its_own_bounds(cls):
    fields = [f.name for f in dataclasses.fields(cls)]
    assert [f for f in fields if f not in settings_of(cls)] == NOT_SETTINGS.get(cls, [])
    values = dict(SAMPLE, car=CarSpec(mass=600.0))
    obj = cls(**{k: v for k, v in values.items() if k in fields
                 and dataclasses.fields(cls)[fields.index(k)].default is dataclasses.MISSING
                 and dataclasses.fields(cls)[fields.index(k)].default_factory is dataclasses.MISSING})
    if cls is BodyConfig:
        obj.size = SAMPLE["size"]
    expected = dataclasses.replace(obj, speed=0.0) if cls is SectionConfig else obj
    assert check(obj) == expected


def test_world_signature_defaults_are_the_settings_defaults():
    import inspect

    from trackrider.physics import World

    for method, cls in ((World.__init__, SimulationConfig), (World.add_track, TrackConfig),
                        (World.add_train, TrainConfig), (World.set_resistance, ResistanceConfig),
                        (World.add_body, BodyConfig)):
        specs = settings_of(cls)
        for name, p in inspect.signature(method).parameters.items():
            if name in specs and p.default is not inspect.Parameter.empty and p.default is not None:
                assert p.default == default_of(cls, name), (method.__name__, name)


def test_section_kinds_are_the_physics_kinds():
    from trackrider.physics.sections import SECTIONS

    assert settings_of(SectionConfig)["type"].choices == tuple(SECTIONS)


def test_the_public_names_are_one_class():
    from trackrider.physics import CarSpec as PhysicsCar, CouplingSpec as PhysicsCoupling
    from trackrider.scenario import CarConfig, CouplingConfig, ResistanceConfig as R, SimulationConfig as S

    assert PhysicsCar is CarConfig is CarSpec and PhysicsCoupling is CouplingConfig is CouplingSpec
    assert R is ResistanceConfig and S is SimulationConfig


def test_world_defaults_are_the_settings_defaults():
    from trackrider.physics import World

    w = World()
    assert (w.dt, w.iterations, w.erp, w.gravity) == (SimulationConfig.dt, SimulationConfig.iterations,
                                                       SimulationConfig.erp, SimulationConfig.gravity)
    assert w._res == ResistanceConfig()


def test_renderer_car_defaults_are_the_physics_defaults():
    from trackrider.render.spec import TrainSpec

    t = TrainSpec("a", 0, 1)
    for name in ("length", "width", "height", "cg_height", "rider_height", "hang"):
        assert getattr(t, name) == getattr(CarSpec, name)


def test_a_pulley_is_a_rope_by_default_in_files_and_in_python(write_scenario):
    from trackrider.physics import World
    from trackrider.scenario import load_scenario

    assert joints.settings("pulley").slack is True
    w = World()
    a = w.add_body("a", 1.0, size=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
    b = w.add_body("b", 1.0, size=(0.1, 0.1, 0.1), position=(1.0, 0.0, 0.0))
    w.add_joint("pulley", ("body", a), ("body", b), ground_a=(0.0, 0.0, 5.0), ground_b=(1.0, 0.0, 5.0))
    assert w.joints[0]["p"]["slack"] is True
    sc = load_scenario(write_scenario(), load_tracks=False)
    assert sc.joints[0].params["slack"] is True


@pytest.fixture
def write_scenario(tmp_path):
    def write():
        path = tmp_path / "rope.toml"
        path.write_text('[simulation]\nduration = 1.0\n'
                        '[[body]]\nname = "a"\nmass = 1.0\nsize = [0.1, 0.1, 0.1]\nposition = [0, 0, 0]\n'
                        '[[body]]\nname = "b"\nmass = 1.0\nsize = [0.1, 0.1, 0.1]\nposition = [1, 0, 0]\n'
                        '[[joint]]\ntype = "pulley"\na = "a"\nb = "b"\nground_a = [0, 0, 5]\nground_b = [1, 0, 5]\n')
        return path
    return write


def test_one_check_names_the_file_key_or_the_parameter():
    with pytest.raises(InputError, match=r"^x\.toml: train\[0\]\.car\.mass: must be > 0 kg, got -1$"):
        check(CarSpec(mass=-1.0), "train[0].car", "x.toml", from_file=True)
    with pytest.raises(InputError, match=r"^car\.mass: must be > 0 kg, got -1$"):
        check(CarSpec(mass=-1.0), "car")
    with pytest.raises(InputError, match=r"coupling\.damping: needs stiffness"):
        check(CouplingSpec(damping=10.0), "coupling")


def test_angles_are_degrees_in_files_and_radians_in_python():
    import math

    HingeJoint, PulleyJoint = joints.settings("hinge"), joints.settings("pulley")

    f = build(HingeJoint, {"axis": [0, 1, 0], "max_angle": 90.0}, "joint[0]", from_file=True)
    assert f.max_angle == pytest.approx(math.pi / 2)
    with pytest.raises(InputError, match=r"joint\[0\]\.max_angle: must be ≤ 360 °, got 400"):
        build(HingeJoint, {"axis": [0, 1, 0], "max_angle": 400.0}, "joint[0]", from_file=True)
    with pytest.raises(InputError, match=r"^max_angle: must be ≤ 6\.28319 rad"):
        build(HingeJoint, {"axis": (0, 1, 0), "max_angle": 7.0})
    with pytest.raises(InputError, match=r"^axis: missing \(required\)$"):
        build(HingeJoint, {})
    with pytest.raises(InputError, match=r"^ratios: unknown key \(did you mean 'ratio'\?\)"):
        build(PulleyJoint, {"ground_a": (0, 0, 1), "ground_b": (0, 0, 1), "ratios": 2.0})


def test_weightless_world_but_not_a_weightless_scenario():
    from trackrider.physics import World

    assert World(gravity=0.0).gravity == 0.0
    with pytest.raises(InputError, match=r"simulation\.gravity: must be > 0 m/s², got 0 \(G-forces"):
        build(SimulationConfig, {"duration": 1.0, "gravity": 0.0}, "simulation", from_file=True)


def test_a_rule_across_tables_is_checked_by_the_loader_and_by_world_alike(tmp_path):
    """A distance coupling needs a gap when there are several cars: ``load_scenario`` (so
    ``validate``) refuses it at the file's key, ``World.add_train`` at its parameter."""
    from trackrider.physics import World
    from trackrider.scenario import load_scenario

    path = tmp_path / "gapless.toml"
    path.write_text('[simulation]\nduration = 1.0\n[[track]]\nsegments = [{type = "straight", length = 50.0}]\n'
                    '[[train]]\ncars = 2\nstart_s = 20.0\n[train.car]\nmass = 500.0\n'
                    '[train.coupling]\ngap = 0.0\n')
    with pytest.raises(InputError, match=r"gapless\.toml: train\[0\]\.coupling\.gap: must be > 0 for a distance"):
        load_scenario(path, load_tracks=False)
    from trackrider.curves import Track

    w = World()
    w.add_track(Track.from_segments([{"type": "straight", "length": 50.0}]))
    with pytest.raises(InputError, match=r"^coupling\.gap: must be > 0 for a distance"):
        w.add_train("a", 0, 2, CarSpec(mass=500.0), coupling=CouplingSpec(gap=0.0), start_s=20.0)
