"""Malformed scenarios: each gives one ``error:`` line naming file and key/line, exit 2, nothing written.

Every case is run through ``trackrider validate`` and ``trackrider run --out``
(typer's CliRunner): the output folder must not appear.
"""
from __future__ import annotations

import pytest
from tests.scenario.scenario_texts import BASE
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.errors import InputError
from trackrider.scenario import load_scenario


def edit(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


# (id, scenario text or bytes, substrings the one-line message must contain)
CASES = [
    ("toml_syntax", edit("cars = 2", "cars = = 2"), ["line 14, column 8", "malformed TOML"]),
    ("toml_unclosed_table", "[simulation\nduration = 1\n", ["line 1, column", "malformed TOML"]),
    ("toml_duplicate_key", edit("cars = 2", "cars = 2\ncars = 3"), ["malformed TOML"]),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", ["binary"]),
    ("bad_utf8", b"[simulation]\nduration = 1.0\n# caf\xe9\n", ["UTF-8", "line 3"]),
    ("empty_file", "", ["simulation", "missing"]),
    ("missing_duration", edit("duration = 1.0", ""), ["simulation.duration", "missing"]),
    ("negative_duration", edit("duration = 1.0", "duration = -1.0"), ["simulation.duration", "must be > 0"]),
    ("string_duration", edit("duration = 1.0", 'duration = "ten"'), ["simulation.duration", "must be a number"]),
    ("nan_duration", edit("duration = 1.0", "duration = nan"), ["simulation.duration", "finite"]),
    ("zero_dt", edit("dt = 0.001", "dt = 0.0"), ["simulation.dt", "must be > 0"]),
    ("zero_gravity", edit("record_hz = 50", "record_hz = 50\ngravity = 0.0"), ["simulation.gravity", "must be > 0"]),
    ("erp_above_one", edit("record_hz = 50", "record_hz = 50\nerp = 1.5"), ["simulation.erp", "≤ 1"]),
    ("float_iterations", edit("record_hz = 50", "record_hz = 50\niterations = 2.5"),
     ["simulation.iterations", "integer"]),
    ("absurd_steps", edit("duration = 1.0", "duration = 1e7"), ["simulation.duration", "1e+10 steps"]),
    ("record_faster_than_step", edit("record_hz = 50", "record_hz = 5000"), ["simulation.record_hz", "faster"]),
    ("unknown_top_table", edit("[simulation]", "[simulaton]"), ["simulaton", "did you mean 'simulation'"]),
    ("unknown_train_key", edit("start_s = 20.0", "strat_s = 20.0"), ["train[0].strat_s", "did you mean 'start_s'"]),
    ("zero_mass", edit("mass = 500.0", "mass = 0.0"), ["train[0].car.mass", "must be > 0"]),
    ("bool_mass", edit("mass = 500.0", "mass = true"), ["train[0].car.mass", "must be a number"]),
    ("missing_car", edit("[train.car]\nmass = 500.0", ""), ["train[0].car", "missing"]),
    ("zero_cars", edit("cars = 2", "cars = 0"), ["train[0].cars", "≥ 1"]),
    ("bad_wheels", edit('cars = 2', 'cars = 2\nwheels = "railways"'), ["train[0].wheels", "did you mean 'railway'"]),
    ("unknown_track_ref", edit('track = "main"\ncars', 'track = "mian"\ncars'),
     ["train[0].track", "no track named 'mian'", "did you mean 'main'"]),
    ("track_single_table", edit("[[track]]", "[track]"), ["track", "[[track]]"]),
    ("curve_and_segments", edit('name = "main"', 'name = "main"\ncurve = "x.csv"'), ["track[0]", "exactly one"]),
    ("curve_file_missing", edit('segments = [{type = "start", position = [0.0, 0.0, 10.0]}, '
                                '{type = "straight", length = 60.0}]', 'curve = "nowhere/first_drop.csv"'),
     ["track[0].curve", "not found"]),
    ("unknown_segment_type", edit('type = "straight"', 'type = "spiral"'),
     ["track[0].segments[1].type", "must be one of"]),
    ("negative_segment_length", edit("length = 60.0", "length = -60.0"),
     ["track[0].segments[1].length", "must be > 0"]),
    ("section_from_after_to", edit("from = 40.0", "from = 55.0"), ["section[0].to", "greater than from"]),
    ("section_unknown_type", edit('type = "brake"', 'type = "brakes"'), ["section[0].type", "did you mean 'brake'"]),
    ("joint_car_out_of_range", edit('a = "bob"', 'a = "red:9"'), ["joint[0].a", "1 .. 2"]),
    ("joint_unknown_body", edit('a = "bob"', 'a = "bobb"'), ["joint[0].a", "did you mean 'bob'"]),
    ("joint_train_without_car", edit('a = "bob"', 'a = "red"'), ["joint[0].a", "red:1"]),
    ("zero_quaternion", edit("position = [0.0, 3.0, 5.0]", "position = [0.0, 3.0, 5.0]\norientation = [0, 0, 0, 0]"),
     ["body[0].orientation", "zero"]),
    ("short_position", edit("position = [0.0, 3.0, 5.0]", "position = [0.0, 3.0]"),
     ["body[0].position", "3 numbers"]),
    ("duplicate_names", edit('name = "bob"', 'name = "red"'), ["body[0].name", "already"]),
    ("bad_coupling", edit("[[section]]", '[train.coupling]\ntype = "chain"\n\n[[section]]'),
     ["train[0].coupling.type", "must be one of"]),
    ("roll_knots_not_increasing", edit('name = "main"', 'name = "main"\nroll = [[10.0, 5.0], [5.0, 0.0]]'),
     ["track[0].roll[1]", "increasing"]),
    ("resistance_mode", BASE + '\n[resistance]\nmode = "nl3"\n', ["resistance.mode", "did you mean 'nl2'"]),
    ("pulley_zero_ratio", BASE + '\n[[joint]]\ntype = "pulley"\na = "red:1"\nb = "bob"\nground_a = [0, 0, 1]\n'
     'ground_b = [0, 1, 1]\nratio = 0.0\n', ["joint[1].ratio", "must be > 0"]),
    ("nothing_to_simulate", "[simulation]\nduration = 1.0\n", ["nothing to simulate"]),
    ("hang_without_suspended", edit("mass = 500.0", "mass = 500.0\nhang = 1.5"),
     ["train[0].car.hang", "suspended = true"]),
    ("zero_hang", edit("cars = 2", "cars = 2\nsuspended = true").replace("mass = 500.0", "mass = 500.0\nhang = 0.0"),
     ["train[0].car.hang", "must be > 0"]),
    ("hinge_zero_axis", BASE + '\n[[joint]]\ntype = "hinge"\na = "bob"\nb = "world"\naxis = [0, 0, 0]\n',
     ["joint[1].axis", "zero"]),
    ("hinge_torque_without_speed", BASE + '\n[[joint]]\ntype = "hinge"\na = "bob"\nb = "world"\naxis = [0, 1, 0]\n'
     'max_torque = 10.0\n', ["joint[1].max_torque", "motor_speed"]),
    ("hinge_limits_reversed", BASE + '\n[[joint]]\ntype = "hinge"\na = "bob"\nb = "world"\naxis = [0, 1, 0]\n'
     'min_angle = 30.0\nmax_angle = -30.0\n', ["joint[1].max_angle", "min_angle"]),
    ("prismatic_negative_stiffness", BASE + '\n[[joint]]\ntype = "prismatic"\na = "world"\nb = "bob"\n'
     'axis = [0, 0, 1]\nstiffness = -5.0\n', ["joint[1].stiffness", "must be > 0"]),
    ("prismatic_unknown_key", BASE + '\n[[joint]]\ntype = "prismatic"\na = "world"\nb = "bob"\n'
     'axis = [0, 0, 1]\nmin_angle = 3.0\n', ["joint[1].min_angle", "unknown key"]),
]


@pytest.mark.parametrize("case_id,text,expected", CASES, ids=[c[0] for c in CASES])
def test_malformed_scenario_is_one_line_error_exit_2_nothing_written(case_id, text, expected, write, tmp_path):
    path = write(text)
    runner = CliRunner()
    for args in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr, result.exception)
        err = result.stderr
        assert err.startswith("error: "), err
        assert err.count("\n") == 1 and err.endswith("\n"), repr(err)
        assert "Traceback" not in err and "Traceback" not in result.stdout
        assert str(path) in err, err
        for piece in expected:
            assert piece in err, (piece, err)
        assert result.stdout == ""
        assert not (tmp_path / "out").exists()


def test_at_least_25_malformed_cases():
    assert len(CASES) >= 25


def test_loader_raises_input_error_with_path_and_where(write):
    path = write(edit("mass = 500.0", "mass = -3.0"))
    with pytest.raises(InputError, match=r"train\[0\]\.car\.mass: must be > 0 kg, got -3") as info:
        load_scenario(path)
    assert info.value.path == str(path)
    assert info.value.where == "train[0].car.mass"


def test_toml_error_reports_line_and_column(write):
    path = write("[simulation]\nduration = 1.0\ndt = \n")
    with pytest.raises(InputError) as info:
        load_scenario(path)
    assert info.value.where == "line 3, column 6"


def test_absurdly_long_segment_track_is_refused_before_building(write):
    path = write(edit("length = 60.0", "length = 60.0}, {type = \"helix\", radius = 900000.0, turns = 2.0"))
    with pytest.raises(InputError, match=r"track\[0\]\.segments: the track would be 1\.131e\+04 km long"):
        load_scenario(path)
