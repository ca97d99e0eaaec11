"""What the report reads and derives: summary ``at`` entries (s, section), section names, coupler forces."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from trackrider.errors import InputError
from trackrider.metrics import section_at
from trackrider.record import read_timeseries
from trackrider.report.data import coupler_forces, load_run

TABLE_KEYS = ("max_g_vertical", "min_g_vertical", "max_abs_g_lateral", "max_abs_g_longitudinal", "max_speed",
              "min_speed", "airtime_s", "max_wheel_load", "max_l_over_v")


def test_every_extreme_has_time_car_s_and_section(classic_run):
    summary = json.loads((classic_run / "summary.json").read_text())
    ts = read_timeseries(classic_run)
    red = summary["trains"]["red"]
    for key in TABLE_KEYS:
        at = red["at"][key]
        assert set(at) >= {"t", "car", "s", "section"}, key
        # s is the position of that car at that instant in timeseries.csv (7 significant digits)
        row = np.flatnonzero((np.abs(ts["t"] - at["t"]) < 1e-9) & (ts["car"] == at["car"]))
        assert row.size == 1, key
        assert at["s"] == pytest.approx(ts["s"][row[0]], rel=1e-6, abs=1e-4), key
        assert at["section"] == section_at(at["s"], [("chain lift", 3.0, 80.0, None),
                                                     ("brake run", 233.0, 290.0, None)]), key
    # the top of the chain lift (s ≈ 79.6) is not a crest passed (the chain sets the speed there): the
    # slowest crest is the one after the loop, off the sections (s ≈ 178 for the middle car)
    assert red["at"]["min_crest_speed"]["section"] is None
    assert 170.0 < red["at"]["min_crest_speed"]["s"] < 220.0
    # airtime: its longest stretch, no longer than the train's airtime
    air = red["at"]["airtime_s"]
    assert 0.0 < air["duration_s"] <= red["airtime_s"] + 1e-9
    row = np.flatnonzero((np.abs(ts["t"] - air["t"]) < 1e-9) & (ts["car"] == air["car"]))
    assert ts["g_vertical_filtered"][row[0]] < 0.0
    earlier = np.flatnonzero((np.abs(ts["t"] - (air["t"] - summary["record_dt"])) < 1e-9) & (ts["car"] == air["car"]))
    assert ts["g_vertical_filtered"][earlier[0]] >= 0.0          # where the stretch begins


def test_section_at():
    sections = [("lift", 3.0, 80.0, None), ("section[1]", 70.0, 90.0, None)]
    assert section_at(50.0, sections) == "lift"
    assert section_at(75.0, sections) == "lift"          # the first in scenario order wins
    assert section_at(85.0, sections) == "section[1]"
    assert section_at(95.0, sections) is None and section_at(None, sections) is None
    assert section_at(float("nan"), sections) is None
    # a closed track of 100 m: the second lap's s falls in the same section
    assert section_at(150.0, [("station", 40.0, 60.0, 100.0)]) == "station"


def _scenario(tmp_path, sections: str, pitch: float = 0.0):
    path = tmp_path / "launch.toml"
    path.write_text(textwrap.dedent(f"""
        title = "three cars, the lead one launched"
        [simulation]
        duration = 0.6
        dt = 0.001
        record_hz = 100
        [[track]]
        name = "main"
        segments = [{{ type = "start", position = [0.0, 0.0, 0.0], heading = 0.0, pitch = {pitch} }},
                    {{ type = "straight", length = 100.0 }}]
        [[train]]
        name = "red"
        track = "main"
        cars = 3
        start_s = 10.0
        start_speed = 1.0
        [train.car]
        mass = 600.0
        rider_height = 0.0
        [train.coupling]
        gap = 0.5
        """) + textwrap.dedent(sections))
    return path


@pytest.mark.parametrize("pitch", [0.0, 10.0])
def test_coupler_forces_of_a_train_pulled_by_its_lead_car(tmp_path, pitch):
    """Only the lead car is on the launch (3 kN): the train accelerates as one, a = F/3m less
    gravity's pull along the grade, and the couplers carry what the cars behind need: 2F/3 and F/3."""
    from trackrider.sim import simulate

    path = _scenario(tmp_path, """
        [[section]]
        type = "launch"
        name = "catapult"
        from = 9.0
        to = 11.0
        speed = 50.0
        max_force = 3000.0
        """, pitch)
    simulate(path, out_dir=tmp_path / "out")
    run = load_run(tmp_path / "out")
    tr = run.trains[0]
    assert tr.sections[0].label == "catapult" and tr.car_mass == 600.0
    forces = coupler_forces(tr)
    assert forces.shape == (len(run.t), 2)
    assert np.allclose(tr.series["motor_force"][:, 0], 3000.0)      # still on the launch
    np.testing.assert_allclose(forces[:, 0], 2000.0, rtol=2e-3)
    np.testing.assert_allclose(forces[:, 1], 1000.0, rtol=2e-3)


def test_section_names_must_be_unique(tmp_path):
    from trackrider.scenario import load_scenario

    path = _scenario(tmp_path, """
        [[section]]
        type = "launch"
        name = "go"
        from = 20.0
        to = 30.0
        speed = 10.0
        max_force = 3000.0
        [[section]]
        type = "brake"
        name = "go"
        from = 40.0
        to = 50.0
        max_force = 3000.0
        """)
    with pytest.raises(InputError, match=r"section\[1\]\.name.*'go' is already the name of section\[0\]"):
        load_scenario(path)
    path.write_text(path.read_text().replace('name = "go"\nfrom = 40.0', 'name = 7\nfrom = 40.0'))
    with pytest.raises(InputError, match=r"section\[1\]\.name.*must be a string"):
        load_scenario(path)
