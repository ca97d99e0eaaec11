"""Design checks without an envelope (trackrider/check/design.py): G steps at joints, jerk, loops and
helices without transitions; and a ride on a clothoid against its closed form."""
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import trackrider as tr
from trackrider.check.design import (Thresholds, energy_speed, jerk_findings, joint_findings, track_findings)
from trackrider.cli import app
from trackrider.curves import Track, clothoid, loop, straight
from trackrider.curves.track import design_track
from trackrider.curves.segments import force, start

G = 9.81


def constant(v):
    return lambda s, z=None: np.full(np.shape(s), float(v))


def test_straight_into_a_circular_loop_warns_naming_the_joint_and_the_g_step():
    R, v = 8.0, 15.0
    track = Track.from_segments([straight(20.0), loop(R), straight(20.0)])
    found = joint_findings(track, constant(v), Thresholds(), label="t")
    assert [f.s for f in found] == pytest.approx([20.0, 20.0 + track.length - 40.0], abs=1e-9)
    alpha = math.atan(0.3 * R / (2 * math.pi * R))
    step = v * v * math.cos(alpha) ** 2 / (R * G)      # the loop's curvature is cos²α / R
    entry = found[0]
    assert entry.values["g_step"] == pytest.approx(step, rel=1e-9)
    assert entry.values["g_step_vertical"] > 0.99 * step          # nearly all of it vertical (the plane leans α)
    assert "segments[0] (straight) → segments[1] (loop, R 8 m) at s = 20.0 m" in entry.message
    assert f"the G steps by {step:.2f} g" in entry.message and "entered without a transition" in entry.message
    assert "segments[1] (loop, R 8 m) is left without a transition" in found[1].message


def test_the_same_loop_with_clothoid_transitions_does_not_warn():
    track = Track.from_segments([straight(20.0), loop(8.0, transition="clothoid"), straight(20.0)])
    assert track_findings(track, constant(15.0), Thresholds()) == []
    # a clothoid into a circular loop is a transition too (curvature continuous up to the loop's lean)
    track = Track.from_segments([straight(20.0), clothoid(10.0, end_radius=8.0, axis="pitch"), loop(8.0),
                                 clothoid(10.0, start_radius=8.0, axis="pitch"), straight(5.0)])
    assert [f for f in joint_findings(track, constant(15.0), Thresholds()) if "transition" in f.message] == []


def test_jerk_of_a_clothoid_at_constant_speed_is_v3_over_r_l_g():
    R, L, v = 50.0, 10.0, 20.0
    track = Track.from_segments([straight(20.0), clothoid(L, end_radius=R), straight(1.0)])
    jerk = v ** 3 / (R * L * G)                      # d/dt (v² κ / g), κ = s / (R L)
    found = jerk_findings(track, constant(v), Thresholds(jerk=0.9 * jerk))
    assert len(found) == 1 and found[0].values["jerk"] == pytest.approx(jerk, rel=1e-6)
    assert found[0].values["s_from"] == pytest.approx(20.0, abs=0.26)          # to a sample (0.25 m)
    assert found[0].values["s_to"] == pytest.approx(20.0 + L, abs=0.26)
    assert "segments[1] (clothoid)" in found[0].message
    assert jerk_findings(track, constant(v), Thresholds(jerk=1.01 * jerk)) == []
    # the joint into the arc that follows is a G step, not a jerk
    track = Track.from_segments([straight(20.0), clothoid(L, end_radius=R), straight(5.0)])
    steps = joint_findings(track, constant(v), Thresholds(g_step=0.1))
    assert len(steps) == 1 and steps[0].values["g_step"] == pytest.approx(v * v / (R * G), rel=1e-6)


def test_force_design_joint_step_from_the_design():
    track = design_track([start((0, 0, 20.0), speed=15.0), force(length=20.0, normal_g=1.0),
                          force(length=20.0, normal_g=2.5), force(length=20.0, normal_g=[[0.0, 2.5], [10.0, 1.0]])])
    found = joint_findings(track, energy_speed(track, None), Thresholds())
    assert len(found) == 1 and found[0].values["g_step"] == pytest.approx(1.5, abs=1e-9)
    assert "segments[1] → segments[2]" in found[0].message


def test_design_speed_from_energy_and_sections(tmp_path):
    sc = tr.load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "classic_coaster.toml")
    from trackrider.check.design import scenario_speed

    v = scenario_speed(sc, 0)
    track = sc.tracks[0].track
    z = track.frames(np.array([10.0, 60.0, 160.0])).position[:, 2]
    lift = next(s for s in sc.sections if s.type == "lift")
    top = track.frame(lift.s_to).position[2]
    e = 0.5 * lift.speed ** 2 + G * top
    assert v(np.array([60.0]))[0] == pytest.approx(lift.speed)                 # on the lift: its speed
    assert v(np.array([160.0]))[0] == pytest.approx(math.sqrt(2 * (e - G * z[2])), rel=1e-9)


SCENARIO = """
[simulation]
duration = 2.0
[[track]]
name = "main"
segments = [{{ type = "straight", length = 30.0 }}, {{ type = "loop", radius = 8.0{loop} }},
            {{ type = "straight", length = 30.0 }}]
[[train]]
name = "red"
start_s = 10.0
start_speed = 20.0
[train.car]
mass = 500.0
{check}
"""


def test_validate_curve_and_run_warn(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.format(loop="", check=""))
    runner = CliRunner()
    for args in (["validate", str(p)], ["curve", str(p)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.stderr
        lines = [x for x in r.stderr.splitlines() if "design check" in x]
        assert len(lines) == 2 and lines[0].startswith("warning: s.toml: track[0] (main): design check: "
                                                       "segments[0] (straight) → segments[1] (loop, R 8 m)")
        assert "the G steps by 5.09 g" in lines[0]      # 20² cos²α / (8 g), tan α = 0.3 / 2π
    r = runner.invoke(app, ["run", str(p), "--out", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 0 and "design check" in r.stderr
    summary = tr.record.read_summary(tmp_path / "out")
    assert sum("design check" in w for w in summary["warnings"]) == 2
    # a transitioned loop: quiet; a threshold above the step: only the missing transition is said
    p.write_text(SCENARIO.format(loop=', transition = "clothoid"', check=""))
    assert "design check" not in runner.invoke(app, ["validate", str(p)]).stderr
    p.write_text(SCENARIO.format(loop="", check="[check]\ng_step = 6.0"))
    r = runner.invoke(app, ["validate", str(p)])
    assert "G steps" not in r.stderr and r.stderr.count("without a transition") == 2
    p.write_text(SCENARIO.format(loop="", check="[check]\ng_stp = 6.0"))
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and "check.g_stp: unknown key" in r.stderr


def test_a_ride_on_a_clothoid_feels_g_linear_in_s(tmp_path):
    """One car at constant speed (level, frictionless) on a clothoid: the recorded lateral G at the rider
    is v² s / (R L g), the closed form, to 1e-6 g."""
    p = tmp_path / "c.toml"
    p.write_text("""
[simulation]
duration = 4.0
record_hz = 200
[[track]]
segments = [{ type = "straight", length = 30.0 }, { type = "clothoid", length = 40.0, end_radius = 50.0 },
            { type = "arc", radius = 50.0, angle = 40.0 }]
[[train]]
start_s = 10.0
start_speed = 15.0
[train.car]
mass = 500.0
cg_height = 0.5
rider_height = 1.0
""")
    r = tr.simulate(tr.load_scenario(p))
    ts = r.timeseries
    s, v = ts["s"], ts["speed"]
    on = (s > 31.0) & (s < 69.0)
    assert on.sum() > 300 and np.ptp(v[on]) < 0.01
    expected = v[on] ** 2 * (s[on] - 30.0) / (50.0 * 40.0 * G)
    assert ts["g_lateral"][on] == pytest.approx(expected, abs=1e-6)
    assert ts["g_vertical"][on] == pytest.approx(np.ones(on.sum()), abs=1e-6)
