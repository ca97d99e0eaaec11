"""The railway keys of a scenario file (docs/scenarios.md, "Railway trains"): what they load to, and
the one-line errors naming the key."""
from __future__ import annotations

import textwrap

import pytest

from trackrider.errors import InputError
from trackrider.scenario import load_scenario

RAIL = textwrap.dedent(
    """
    [simulation]
    duration = 1.0
    dt = 0.002

    [[track]]
    name = "line"
    segments = [{type = "start", position = [0.0, 0.0, 0.0]}, {type = "straight", length = 600.0}]

    [[train]]
    name = "goods"
    track = "line"
    wheels = "railway"
    start_s = 300.0
    [train.coupling]
    type = "draft_gear"
    gap = 1.0
    [[train.vehicle]]
    kind = "locomotive"
    mass = 100000.0
    length = 20.0
    power = 3.0e6
    max_tractive_effort = 3.0e5
    adhesion = [[0.0, 0.33], [30.0, 0.25]]
    [[train.vehicle]]
    count = 5
    mass = 60000.0
    length = 15.0
    brake_rigging = 2.0e4
    [[train.driver]]
    time = 0.0
    notch = 8
    [[train.driver]]
    position = 350.0
    brake = 0.5
    """
)


def test_a_railway_train_loads_its_vehicles_brake_and_driver(write):
    sc = load_scenario(write(RAIL))
    tr = sc.trains[0]
    assert tr.cars == 6 and [v.kind for v in tr.car_specs()] == ["locomotive"] + ["wagon"] * 5
    loco = tr.vehicles[0]
    assert loco.notches == 8 and loco.slip_factor == 0.75 and loco.adhesion == ((0.0, 0.33), (30.0, 0.25))
    assert tr.brake is not None and tr.brake.propagation_speed == 250.0     # the defaults: a wagon has a brake
    assert [d.command() for d in tr.driver] == ["notch 8", "brake 0.5 bar"]
    assert tr.coupling.slack == 0.025 and tr.coupling.preload == 5e4          # a draft gear's defaults
    # positions from the vehicles' own lengths: 20/2 + 1 + 15/2 behind the lead, then 16 m apart
    assert tr.car_s()[:3] == [300.0, 281.5, 265.5] and tr.length == 20.0 + 5 * 15.0 + 5 * 1.0


@pytest.mark.parametrize("old, new, match", [
    ("count = 5", "count = 5\nkind = \"wagen\"", r"train\[0\]\.vehicle\[1\]\.kind: .*'wagen'"),
    ("count = 5", "count = 5\npower = 1.0e6", r"train\[0\]\.vehicle\[1\]\.power: applies to locomotives only"),
    ("power = 3.0e6\n", "", r"train\[0\]\.vehicle\[0\]\.power: a locomotive needs tractive_effort"),
    ("power = 3.0e6", "power = 3.0e6\ntractive_effort = [[0.0, 3.0e5]]",
     r"train\[0\]\.vehicle\[0\]\.power: give either tractive_effort"),
    ("adhesion = [[0.0, 0.33], [30.0, 0.25]]", "adhesion = [[10.0, 0.33], [5.0, 0.25]]",
     r"train\[0\]\.vehicle\[0\]\.adhesion: point 2: speeds must increase"),
    ("adhesion = [[0.0, 0.33], [30.0, 0.25]]", "adhesion = \"high\"",
     r"train\[0\]\.vehicle\[0\]\.adhesion: must be a number or an array of \[speed m/s, value\] pairs"),
    ("notch = 8", "notch = 9", r"train\[0\]\.driver\[0\]\.notch: must be ≤ 8"),
    ("notch = 8", "notch = 8\nposition = 5.0", r"train\[0\]\.driver\[0\]\.position: a driver step needs exactly one"),
    ("brake = 0.5", "brake = \"full\"", r"train\[0\]\.driver\[1\]\.brake: must be a number \(bar\) or one of release, "
     r"emergency, got 'full'"),
    ("brake = 0.5", "brake = 6.0", r"train\[0\]\.driver\[1\]\.brake: a reduction of 6 bar is more than"),
    ("brake_rigging = 2.0e4\n", "", r"train\[0\]\.driver\[1\]\.brake: no vehicle of the train has an air brake"),
    ("gap = 1.0", "gap = 1.0\ndamping = 1.0e5", r"train\[0\]\.coupling\.damping: does not apply to a draft gear"),
    ("gap = 1.0", "gap = 1.0\nunloading_stiffness = 3.0e7", r"train\[0\]\.coupling\.unloading_stiffness: must be ≤"),
    ('type = "draft_gear"', 'type = "distance"\npreload = 1.0', r"train\[0\]\.coupling\.preload: applies to type"),
    ("start_s = 300.0", "start_s = 300.0\ncars = 3", r"train\[0\]\.cars: give either \[\[train\.vehicle\]\]"),
    ("dt = 0.002", "dt = 0.06\nrecord_hz = 10", r"train\[0\]\.coupling\.stiffness: dt = 0\.06 s is above the draft gears' stable"),
    ("start_s = 300.0", "start_s = 50.0", r"train\[0\]\.start_s: the train does not fit"),
])
def test_railway_keys_refused_name_the_key(write, old, new, match):
    assert old in RAIL
    with pytest.raises(InputError, match=match):
        load_scenario(write(RAIL.replace(old, new, 1)))


def test_a_vehicle_table_must_be_an_array_of_tables(write):
    text = RAIL.split("[[train.vehicle]]\ncount")[0].replace("[[train.vehicle]]", "[train.vehicle]")
    with pytest.raises(InputError, match=r"train\[0\]\.vehicle: must be an array of tables: write "
                                         r"\[\[train\.vehicle\]\], not \[train\.vehicle\]"):
        load_scenario(write(text))
