"""Loading: typed values and defaults, relative paths, overrides, geometry checks, build_world."""
from __future__ import annotations

import pickle
import textwrap

import pytest
from tests.scenario.scenario_texts import BASE

from trackrider.errors import InputError
from trackrider.scenario import build_world, load_scenario


def test_base_loads_with_types_and_defaults(write):
    sc = load_scenario(write(BASE))
    assert sc.path.is_absolute() and sc.name == "s"
    sim = sc.simulation
    assert (sim.duration, sim.dt, sim.record_hz) == (1.0, 0.001, 50.0)
    assert (sim.iterations, sim.erp, sim.gravity, sim.filter_hz) == (20, 0.2, 9.81, 5.0)
    assert sim.n_steps == 1000 and sim.record_every == 20
    (track,) = sc.tracks
    assert track.length == pytest.approx(60.0, abs=1e-6) and track.gauge == 1.0 and track.closed is False
    (red,) = sc.trains
    assert red.cars == 2 and red.wheels == "coaster" and red.car.mass == 500.0
    assert red.car_s() == [20.0, 17.5]
    assert sc.sections[0].speed == 0.0            # a brake's speed defaults to 0 (stop brake)
    assert sc.joints[0].end_a == ("body", 0) and sc.joints[0].end_b == "world"
    assert sc.resistance.mode == "physical" and sc.resistance.rolling == 0.0
    pickle.loads(pickle.dumps(sc))                 # sweeps send scenarios to worker processes


def test_curve_path_is_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "curves").mkdir()
    (tmp_path / "scen").mkdir()
    pts = "\n".join(f"{x},0,{0.01 * x}" for x in range(0, 41))
    (tmp_path / "curves" / "ramp.csv").write_text("x,y,z\n" + pts + "\n")
    path = tmp_path / "scen" / "s.toml"
    path.write_text(textwrap.dedent("""
        [simulation]
        duration = 1.0
        [[track]]
        curve = "../curves/ramp.csv"
        [[train]]
        start_s = 10.0
        [train.car]
        mass = 100.0
        """))
    sc = load_scenario(path)
    assert sc.tracks[0].curve == (tmp_path / "curves" / "ramp.csv").resolve()
    assert sc.tracks[0].length == pytest.approx(40.0 * (1 + 1e-4) ** 0.5, rel=1e-4)
    assert sc.tracks[0].name == "main" and sc.trains[0].track == "main"


def test_overrides_by_name_and_index(write):
    path = write(BASE)
    sc = load_scenario(path, {"train.red.car.mass": 650.0, "train.0.cars": 3, "simulation.duration": 2.5,
                              "section.0.max_force": 1000.0, "body.bob.mass": 4.0})
    assert sc.trains[0].car.mass == 650.0 and sc.trains[0].cars == 3
    assert sc.simulation.duration == 2.5 and sc.sections[0].max_force == 1000.0 and sc.bodies[0].mass == 4.0
    assert load_scenario(path).trains[0].car.mass == 500.0      # the file itself is untouched


@pytest.mark.parametrize("overrides,match", [
    ({"train.blue.cars": 2}, r"override train\.blue\.cars: no train named 'blue'"),
    ({"train.red.car.mas": 1.0}, r"did you mean 'mass'"),
    ({"resistance.rolling": 0.01}, r"no key 'resistance'"),            # not in the base document
    ({"train.red.car.mass": "heavy"}, r"train\[0\]\.car\.mass: must be a number"),
    ({"train.red.car.mass": -1.0}, r"train\[0\]\.car\.mass: must be > 0"),
    ({"simulation.duration.x": 1}, r"is a value, not a table"),
])
def test_bad_overrides(write, overrides, match):
    with pytest.raises(InputError, match=match):
        load_scenario(write(BASE), overrides)


@pytest.mark.parametrize("old,new,match", [
    ("start_s = 20.0", "start_s = 70.0", r"train\[0\]\.start_s: 70 m is off the track 'main' \(0 \.\. 60 m\)"),
    ("start_s = 20.0", "start_s = 1.0", r"train\[0\]\.start_s: the train does not fit .* start_s ≥ 2\.5 m"),
    ("to = 50.0", "to = 75.0", r"section\[0\]\.to: 75 m is beyond the end of the track"),
    ("from = 40.0", "from = -5.0", r"section\[0\]\.from: -5 m is off the track"),
    ('name = "main"', 'name = "main"\nroll = [[10.0, 5.0], [80.0, 0.0]]', r"track\[0\]\.roll\[1\]: .*80.* (off|outside) the track"),
])
def test_geometry_checks(write, old, new, match):
    assert old in BASE
    with pytest.raises(InputError, match=match):
        load_scenario(write(BASE.replace(old, new, 1)))


def test_closed_track_shorter_than_the_train(write):
    text = BASE.replace('segments = [{type = "start", position = [0.0, 0.0, 10.0]}, {type = "straight", length = 60.0}]',
                        'closed = true\nsegments = [{type = "arc", radius = 0.5, angle = 360.0, axis = "yaw"}]')
    with pytest.raises(InputError, match=r"train\[0\]\.cars: 2 cars .* longer than the closed track"):
        load_scenario(write(text))


def test_geometry_errors_from_the_builder_name_the_key(write):
    text = BASE.replace('name = "main"', 'name = "main"\nclosed = true')
    with pytest.raises(InputError, match=r"track\[0\]\.closed: closed = true but the segments end"):
        load_scenario(write(text))


def test_sweep_file_is_named_as_such(write):
    with pytest.raises(InputError, match="sweep file"):
        load_scenario(write('[sweep]\nscenario = "x.toml"\n[axes]\n"train.red.car.mass" = [1.0, 2.0]\n'))


def test_build_world_maps_every_table(write):
    sc = load_scenario(write(BASE))
    world = build_world(sc)
    assert world.dt == sc.simulation.dt
    assert [tuple(x) for x in world.entity_labels] == [("red", 1), ("red", 2), ("bob", 1)]
    assert list(world.entity_train) == [0, 0, -1]
    assert world.car_s.tolist() == pytest.approx([20.0, 17.5])


def test_build_world_maps_a_prismatic_joint(write):
    text = BASE.replace('type = "distance"\na = "bob"', 'type = "prismatic"\naxis = [1.0, 0.0, 0.0]\na = "bob"')
    sc = load_scenario(write(text))
    world = build_world(sc)
    assert [j["kind"] for j in world.joints][:1] == ["prismatic"]
