"""What a user writes that is accepted but wrong: overlapping sections, joints that start apart,
counterweights, warnings kept for summary.json."""
from __future__ import annotations

import pytest
from tests.scenario.scenario_texts import BASE

from trackrider.errors import InputError
from trackrider.scenario import build_world, load_scenario

SECTION = """
[[section]]
type = "{kind}"
track = "main"
from = {a}
to = {b}
speed = 2.0
max_force = 1000.0
"""


def test_overlapping_sections_are_refused_naming_both(write):
    p = write(BASE + SECTION.format(kind="booster", a=45.0, b=55.0))
    with pytest.raises(InputError, match=r"section\[1\]: booster 45–55 m overlaps section\[0\] \(brake 40–50 m\)"):
        load_scenario(p)


def test_sections_that_only_touch_are_fine(write):
    sc = load_scenario(write(BASE + SECTION.format(kind="booster", a=50.0, b=55.0)))
    assert len(sc.sections) == 2


def test_a_joint_that_starts_400_m_apart_is_bad_input_naming_it(write):
    text = BASE.replace('type = "distance"', 'type = "ball"').replace("anchor_b = [0.0, 3.0, 8.0]",
                                                                      "anchor_b = [400.0, 3.0, 5.0]")
    with pytest.raises(InputError, match=r"joint\[0\]: the ball joint is violated at the start: its ends start "
                                         r"400 m apart"):
        build_world(load_scenario(write(text)))


def test_a_rigid_distance_joint_of_the_wrong_length_is_bad_input(write):
    text = BASE.replace("anchor_b = [0.0, 3.0, 8.0]", "anchor_b = [0.0, 3.0, 8.0]\nlength = 2.0")
    with pytest.raises(InputError, match=r"joint\[0\].*1 m off at the start"):
        build_world(load_scenario(write(text)))
    build_world(load_scenario(write(text.replace("length = 2.0", "length = 3.005"))))   # within 0.01 m


def test_role_defaults_to_riders_and_accepts_counterweight(write):
    assert load_scenario(write(BASE)).trains[0].role == "riders"
    sc = load_scenario(write(BASE.replace('name = "red"', 'name = "red"\nrole = "counterweight"')))
    assert sc.trains[0].role == "counterweight"
    with pytest.raises(InputError, match=r"train\[0\]\.role: must be one of riders, counterweight"):
        load_scenario(write(BASE.replace('name = "red"', 'name = "red"\nrole = "weight"')))


def test_curve_warnings_are_kept_on_the_scenario(write, tmp_path):
    (tmp_path / "kink.csv").write_text("x,y,z\n0,0,10\n10,0,10\n20,0,10\n20.2,0.1,10\n35,0,10\n50,0,10\n")
    text = BASE.replace('segments = [{type = "start", position = [0.0, 0.0, 10.0]}, {type = "straight", '
                        'length = 60.0}]', 'curve = "kink.csv"')
    with pytest.warns(UserWarning, match="longer than the polyline"):
        sc = load_scenario(write(text))
    assert any("longer than the polyline" in w for w in sc.warnings)
