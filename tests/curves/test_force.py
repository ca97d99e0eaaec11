"""Force-vector design (trackrider/curves/force.py, docs/physics.md §7): closed forms, signs, errors, export.

Closed forms: ``normal_g = lateral_g = 0`` from level flight is the ballistic
parabola; level with ``normal_g = 1`` and ``lateral_g = v²/(gR)`` a horizontal
circle of radius R; rolled to φ with ``normal_g = 1/cos φ`` a level circle of
radius ``v²/(g tan φ)``. The signs are checked against trackrider's own frame
(``Frame.normal`` = rider's left, ``roll`` > 0 = right rail lower) by
differentiating the designed heartline, and against the simulated
``g_lateral`` in the design → simulate test.
"""
from __future__ import annotations

import math
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, PchipInterpolator
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.curves import Track, load_curve
from trackrider.curves.force import Schedule, design_heartline, pchip_slopes
from trackrider.curves.track import design_track
from trackrider.curves.io import save_curve
from trackrider.curves.segments import force, geometric, start
from trackrider.errors import InputError

G = 9.81
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


# --------------------------------------------------------------------------- closed forms
def test_zero_g_from_level_flight_is_the_ballistic_parabola():
    v0, z0 = 20.0, 30.0
    d = design_heartline([start((0, 0, z0), speed=v0, heart=1.1), force(length=40.0, normal_g=0.0, lateral_g=0.0)])
    x, y, z = d.position.T
    zh = z0 + 1.1  # the heartline starts 1.1 m above the rail's first point
    assert d.s[-1] == pytest.approx(40.0, abs=1e-9)
    # positions within 1 cm over 40 m of heartline (measured: ~1e-9 m)
    assert np.max(np.abs(z - (zh - G * x**2 / (2 * v0**2)))) < 0.01
    assert np.max(np.abs(y)) < 0.01
    # x advances at v0 in time; speed from energy
    assert np.max(np.abs(x - v0 * d.t)) < 0.01
    assert np.max(np.abs(d.speed - np.sqrt(v0**2 + 2 * G * (zh - z)))) < 1e-6
    assert np.max(np.abs(d.normal_g)) < 1e-9 and np.max(np.abs(d.lateral_g)) < 1e-9


def test_level_with_lateral_g_is_a_horizontal_circle_at_constant_speed():
    v, R = 18.0, 40.0
    d = design_heartline([start(speed=v, heart=1.1), force(length=math.pi * R, normal_g=1.0, lateral_g=v**2 / (G * R))])
    centre = np.array([0.0, R, 1.1])  # positive lateral_g turns left (+y from heading +x)
    r = np.linalg.norm(d.position - centre, axis=1)
    assert np.max(np.abs(r - R)) < 0.01  # within 1 cm over a half turn (measured ~1e-12 m)
    assert np.ptp(d.position[:, 2]) < 0.01
    assert np.ptp(d.speed) < 1e-9
    assert d.position[-1] == pytest.approx([0.0, 2 * R, 1.1], abs=0.01)


@pytest.mark.parametrize("phi_deg", [30.0, -45.0])
def test_rolled_and_held_with_normal_g_1_over_cos_is_a_level_circle(phi_deg):
    v, phi = 15.0, math.radians(phi_deg)
    R = v**2 / (G * math.tan(abs(phi)))
    # a straight rolling at a constant rate, then the banked force segment
    segs = [start(speed=v, heart=1.1), geometric(duration=1.0, roll_rate=phi_deg),
            force(length=math.pi * R, normal_g=1 / math.cos(phi), lateral_g=0.0)]
    d = quiet(design_heartline, segs)
    m = d.segment == 2
    P = d.position[m]
    # bank reached: up tipped towards the rider's right for positive roll
    U0 = d.up[m][0]
    assert U0 == pytest.approx([0.0, -math.sin(phi), math.cos(phi)], abs=1e-9)
    # a right-hand (positive roll) banked turn turns right: centre at −y
    centre = P[0, :2] + np.array([0.0, -math.copysign(R, phi_deg)])
    r = np.linalg.norm(P[:, :2] - centre, axis=1)
    assert np.max(np.abs(r - R)) < 0.01
    assert np.ptp(P[:, 2]) < 0.01
    assert np.ptp(d.speed[m]) < 1e-6


def test_energy_with_nl2_resistance_on_the_level():
    v0, mu, k = 20.0, 0.02, 0.001
    d = design_heartline([start(speed=v0), force(length=100.0)], rolling=mu)
    assert np.max(np.abs(d.speed**2 - (v0**2 - 2 * mu * G * d.s))) < 1e-6
    d = design_heartline([start(speed=v0), force(length=100.0)], nl2_drag=k)
    assert np.max(np.abs(d.speed - v0 * np.exp(-k * d.s))) < 1e-6
    assert d.longitudinal_g[0] == pytest.approx(-k * v0**2 / G)


def test_classic_segments_describe_the_heartline_and_carry_the_frame_without_roll():
    R = 12.0
    d = quiet(design_heartline, [start(speed=30.0, heart=1.0), geometric(duration=0.5, roll_rate=40.0),
                                 {"type": "arc", "radius": R, "angle": 90.0, "axis": "pitch"}])
    m = d.segment == 2
    P = d.position[m]
    centre = P[0] + R * np.array([0.0, 0.0, 1.0])  # a pitch arc bends up in the vertical plane
    assert np.max(np.abs(np.linalg.norm(P - centre, axis=1) - R)) < 1e-3
    assert np.max(np.abs(d.roll_rate[m])) == 0.0
    # no roll: the rider's up keeps its angle to the arc's plane normal (y)
    assert np.ptp(d.up[m][:, 1]) < 1e-6 and d.up[m][0, 1] == pytest.approx(-math.sin(math.radians(20.0)))


def test_a_classic_segment_continues_a_near_vertical_heartline_without_a_kink():
    d = design_heartline([start(speed=30.0), geometric(length=30.0, pitch_rate=2.99), {"type": "straight", "length": 10.0}])
    m = d.segment == 2
    assert d.tangent[m][0, 2] > 0.9999
    assert np.max(np.abs(d.tangent[m] - d.tangent[d.segment == 1][-1])) < 1e-12


# --------------------------------------------------------------------------- signs
def test_signs_agree_with_trackriders_frame_by_differentiating_the_heartline():
    """The specific force of a point riding the heartline, taken from the designed positions by finite
    differences and projected on the *rail track's* frame (Frame.normal = left, binormal = up), equals the
    design's lateral_g and normal_g: a flipped sign anywhere (left, roll, frame) fails this."""
    segs = [start((0, 0, 10), speed=16.0, heart=1.1),
            force(duration=3.0, normal_g=[[0, 1.0], [1.5, 1.6], [3.0, 1.2]],
                  lateral_g=[[0, 0.0], [1.5, 0.5], [3.0, 0.3]],
                  roll_rate=[[0, 0.0], [1.0, -20.0], [3.0, 0.0]], interp="cubic")]
    track = design_track(segs)
    d = track.design
    t = d.t
    spl = CubicSpline(t, d.position)
    a = spl(t, 2)
    f = a + np.array([0.0, 0.0, G])
    rail_s = np.interp(t, d.t[track.design_index], track.point_s)
    fr = track.frames(rail_s)
    inner = (t > 0.3) & (t < 2.7)
    assert np.max(np.abs((f * fr.normal).sum(1) / G - d.lateral_g)[inner]) < 2e-3
    assert np.max(np.abs((f * fr.binormal).sum(1) / G - d.normal_g)[inner]) < 2e-3
    assert d.lateral_g[inner].max() > 0.4 and d.normal_g[inner].max() > 1.5  # (the check is not vacuous)
    # a left turn (lateral_g > 0 on the level): the heading goes from +x towards +y
    assert d.position[-1, 1] > 5.0
    # the roll rate was negative (to the left): trackrider's roll is negative, right rail higher
    assert fr.roll[inner].min() < -10.0 and fr.roll[inner].max() < 0.5
    # rider's up is the rail frame's binormal at the rail points, within 0.1°
    ang = np.degrees(np.arccos(np.clip((track.frames(track.point_s).binormal * d.up[track.design_index]).sum(1),
                                       -1, 1)))
    assert ang.max() < 0.1


@pytest.mark.parametrize("builder", [geometric, force])
def test_positive_roll_rate_rolls_right_and_matches_trackrider_roll(builder):
    track = quiet(design_track, [start(speed=20.0), builder(duration=1.0, roll_rate=[[0, 0], [0.5, 60], [1.0, 0]]),
                                 force(length=20.0, normal_g=1 / math.cos(math.radians(30.0)))])
    f = track.frame(track.length - 1.0)
    # 30° about T; in the force segment the heartline dips a little while it rolls at 1 g, which tilts T
    assert f.roll == pytest.approx(30.0, abs=0.1 if builder is geometric else 1.0)
    assert f.binormal[1] < 0  # up leans to the right (−y) on a +x heading


def test_force_segments_deliver_the_requested_forces_along_the_way():
    d = quiet(design_heartline, [start((0, 0, 20), speed=15.0),
                                 force(duration=2.0, normal_g=[[0, 1], [1, -0.5], [2, 2]],
                                       lateral_g=[[0, 0.5], [2, -0.5]],
                                       roll_rate=[[0, 0], [1, 90], [2, 0]], interp="cubic")])
    want_n = Schedule([[0, 1], [1, -0.5], [2, 2]], "cubic")
    want_l = Schedule([[0, 0.5], [2, -0.5]], "cubic")
    assert np.max(np.abs(d.normal_g - [want_n(t) for t in d.t])) < 1e-9
    assert np.max(np.abs(d.lateral_g - [want_l(t) for t in d.t])) < 1e-9


@pytest.mark.parametrize("key, axis, sign", [("pitch_rate", 2, 1.0), ("pitch_rate", 2, -1.0),
                                             ("yaw_rate", 1, 1.0), ("yaw_rate", 1, -1.0)])
def test_geometric_pitch_up_and_yaw_left(key, axis, sign):
    d = design_heartline([start((0, 0, 50), speed=20.0), geometric(length=20.0, **{key: sign * 2.0})])
    assert math.copysign(1.0, d.tangent[-1, axis]) == sign
    turned = math.degrees(math.acos(d.tangent[-1] @ [1.0, 0.0, 0.0]))
    assert turned == pytest.approx(40.0, abs=1e-6)  # 2°/m over 20 m


# --------------------------------------------------------------------------- rail
def test_rail_is_the_heartline_moved_down_by_heart_and_longer_while_rolling():
    h = 1.2
    track = quiet(design_track, [start((1, 2, 3), speed=10.0, heart=h), geometric(length=30.0, roll_rate=12.0)])
    d = track.design
    assert track.frame(0.0).position == pytest.approx([1, 2, 3], abs=1e-9)
    assert np.max(np.abs(d.rail - (d.position - h * d.up))) == 0.0
    # straight heartline rolling at ρ: the rail is a helix of radius h, |P_rail'| = sqrt(1 + (hρ)²)
    rho = math.radians(12.0)
    assert track.length == pytest.approx(30.0 * math.sqrt(1 + (h * rho) ** 2), abs=1e-3)


def test_pchip_matches_scipy_and_linear_knots_hold_beyond_the_ends():
    x = [0.0, 0.4, 1.0, 1.5, 2.5, 3.0]
    y = [1.0, 2.0, 2.0, -0.5, 0.3, 1.0]
    assert np.allclose(pchip_slopes(x, y), PchipInterpolator(x, y).derivative()(x), atol=1e-12)
    sch = Schedule([[a, b] for a, b in zip(x, y)], "cubic")
    q = np.linspace(0, 3, 301)
    assert np.allclose([sch(v) for v in q], PchipInterpolator(x, y)(q), atol=1e-12)
    lin = Schedule([[1.0, 2.0], [3.0, 4.0]])
    assert (lin(0.0), lin(2.0), lin(5.0)) == (2.0, 3.0, 4.0)
    assert Schedule(3.0)(1.0) == 3.0 and Schedule(90.0, scale=math.pi / 180)(0.0) == pytest.approx(math.pi / 2)


# --------------------------------------------------------------------------- errors and warnings
def test_too_slow_is_an_error_naming_segment_and_position():
    with pytest.raises(InputError, match=r"segments\[2\].*below 0.5 m/s.*m into the segment"):
        design_heartline([start(speed=10.0), force(length=5.0), geometric(length=100.0, pitch_rate=1.0)])


def test_folding_rail_is_an_error_naming_segment_and_position():
    # a crest of radius v²/(g·(1 − normal_g)) = 1.02 m < heart 1.1 m
    with pytest.raises(InputError, match=r"segments\[1\].*folds back.*s into the segment"):
        design_heartline([start(speed=4.0, heart=1.1), force(duration=1.0, normal_g=-0.6)])


def test_roll_rate_jump_warns_naming_the_joint_and_a_ramp_does_not():
    with pytest.warns(UserWarning, match=r"segments\[2\].*segments\[1\].*kinks by"):
        design_heartline([start(speed=10.0), force(length=10.0), force(length=10.0, roll_rate=4.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        design_heartline([start(speed=10.0), force(length=10.0),
                          force(length=10.0, roll_rate=[[0, 0], [5, 4], [10, 0]]), force(length=5.0)])


@pytest.mark.parametrize("segs, match", [
    ([{"type": "start"}, force(length=5.0)], r"segments\[0\].speed"),
    ([start(speed=10.0), {"type": "force", "length": 5.0, "duration": 1.0}], r"segments\[1\].length.*exactly one"),
    ([start(speed=10.0), {"type": "force", "length": 5.0, "normal_g": [[0, 1], [6, 1]]}],
     r"segments\[1\].normal_g\[1\].*outside"),
    ([start(speed=10.0), {"type": "force", "length": 5.0, "normal_g": [[1, 1], [0, 1]]}],
     r"segments\[1\].normal_g\[1\].*increasing"),
    ([start(speed=10.0), {"type": "force", "length": 5.0, "yaw_rate": 1.0}], r"segments\[1\].yaw_rate.*unknown"),
    ([start(speed=10.0), {"type": "geometric", "duration": 5.0, "interp": "spline"}], r"segments\[1\].interp"),
    ([start(speed=0.1), force(length=5.0)], r"segments\[0\].speed"),
])
def test_bad_design_segments(segs, match):
    with pytest.raises(InputError, match=match):
        design_heartline(segs)


def test_track_from_segments_builds_designs_and_refuses_frame_and_roll():
    segs = [start(speed=12.0), force(length=20.0, lateral_g=0.3)]
    assert Track.from_segments(segs).design.s[-1] == pytest.approx(20.0)
    with pytest.raises(InputError, match="frame"):
        Track.from_segments(segs, frame="minimal")
    with pytest.raises(InputError, match="roll"):
        Track.from_segments(segs, roll=[(0.0, 10.0)])
    with pytest.raises(InputError, match=r"segments\[0\].speed.*only"):
        Track.from_segments([start(speed=12.0), {"type": "straight", "length": 10.0}])


SCENARIO = """
[simulation]
duration = 1.0
[[track]]
name = "main"
segments = [
  {{type = "start", position = [0.0, 0.0, 5.0], speed = 15.0}},
  {{type = "force", length = 30.0}},
  {seg}
]
{extra}
[[train]]
cars = 1
start_s = 2.0
start_speed = 15.0
[train.car]
mass = 600.0
"""


def write(tmp_path, seg, extra=""):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(SCENARIO.format(seg=seg, extra=extra)))
    return p


def test_scenario_errors_name_the_track_segment_and_key(tmp_path):
    from trackrider.scenario import load_scenario

    with pytest.raises(InputError, match=r"s.toml: track\[0\].segments\[2\].normal_g\[0\]: must be a pair"):
        load_scenario(write(tmp_path, '{type = "force", length = 5.0, normal_g = [[0.0]]}'))
    with pytest.raises(InputError, match=r"s.toml: track\[0\].segments\[2\]: the design speed falls below"):
        load_scenario(write(tmp_path, '{type = "geometric", length = 200.0, pitch_rate = 1.0}'))
    for line, key in (("roll = [[0.0, 5.0]]", "roll"), ('frame = "minimal"', "frame"), ("closed = true", "closed")):
        write(tmp_path, '{type = "force", length = 5.0}')
        with pytest.raises(InputError, match=rf"track\[0\].{key}: "):
            load_scenario(_rewrite(tmp_path, line))


def _rewrite(tmp_path, line):
    p = tmp_path / "s.toml"
    p.write_text(p.read_text().replace('name = "main"', f'name = "main"\n{line}'))
    return p


def test_scenario_design_uses_gravity_and_nl2_resistance_and_warns_in_physical_mode(tmp_path):
    from trackrider.scenario import load_scenario

    p = write(tmp_path, '{type = "force", length = 10.0}', '[resistance]\nmode = "nl2"\nrolling = 0.05\n')
    d = load_scenario(p).tracks[0].track.design
    assert d.speed[-1] ** 2 == pytest.approx(15.0**2 - 2 * 0.05 * 9.81 * 40.0, abs=1e-6)
    p = write(tmp_path, '{type = "force", length = 10.0}', '[resistance]\nrolling = 0.05\n')
    with pytest.warns(UserWarning, match=r"track\[0\].segments: the force-vector design is frictionless"):
        d = load_scenario(p).tracks[0].track.design
    assert d.speed[-1] == pytest.approx(15.0)


# --------------------------------------------------------------------------- export
def designed_track():
    return quiet(design_track, [start((0, 0, 5), speed=18.0, heart=1.1), force(length=15.0),
                                force(duration=2.5, normal_g=[[0, 1], [1.2, -0.3], [2.5, 1]],
                                      roll_rate=[[0, 0], [1.25, 140], [2.5, 0]], interp="cubic"),
                                force(duration=2.0, normal_g=[[0, 1], [1.0, 1.6], [2.0, 1.0]],
                                      lateral_g=[[0, 0], [1.0, -0.4], [2.0, 0]], interp="cubic"),
                                force(length=10.0)])


def test_nl2_export_round_trip_keeps_length_and_frames(tmp_path):
    track = designed_track()
    p = save_curve(track, tmp_path / "d.csv", "nl2")
    back = load_curve(p)
    assert abs(back.length - track.length) < 1e-3  # within 1 mm
    s = np.linspace(0.0, track.length, 2000)
    a, b = track.frames(s), back.frames(np.clip(s, 0, back.length))
    for name in ("tangent", "normal", "binormal"):
        ang = np.degrees(np.arccos(np.clip((getattr(a, name) * getattr(b, name)).sum(1), -1, 1)))
        assert ang.max() < 0.1, name  # within 0.1°
    assert np.max(np.linalg.norm(a.position - b.position, axis=1)) < 1e-3


@pytest.mark.parametrize("fmt", ["points", "json"])
def test_points_and_json_exports_load_back(tmp_path, fmt):
    track = designed_track()
    back = load_curve(save_curve(track, tmp_path / f"d.{'csv' if fmt == 'points' else 'json'}", fmt))
    assert abs(back.length - track.length) < 1e-3
    s = np.linspace(1.0, track.length - 1.0, 500)
    ang = np.degrees(np.arccos(np.clip((track.frames(s).binormal * back.frames(s).binormal).sum(1), -1, 1)))
    assert ang.max() < 1.0


def test_cli_curve_export(tmp_path):
    scen = ROOT / "scenarios" / "force_designed.toml"
    out = tmp_path / "fvd.csv"
    r = runner.invoke(app, ["curve", str(scen), "--track", "main", "--export", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "wrote" in r.stdout and out.read_text().startswith('"No."')
    before = out.read_text()
    r = runner.invoke(app, ["curve", str(scen), "--export", str(out)])
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and "--overwrite" in r.stderr
    assert out.read_text() == before
    r = runner.invoke(app, ["curve", str(scen), "--export", str(out), "--export-format", "json", "--overwrite"])
    assert r.exit_code == 0 and out.read_text().startswith('{"points"')
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes\n")
    r = runner.invoke(app, ["curve", str(scen), "--export", str(mine), "--overwrite"])
    assert r.exit_code == 2 and mine.read_text() == "my notes\n"
    for args, match in [(["--track", "nope", "--export", str(tmp_path / "x.csv")], "no track named 'nope'"),
                        (["--export", str(tmp_path / "x.csv"), "--export-format", "dxf"], "--export-format"),
                        (["--track", "main", "--plot", str(tmp_path / "x.pdf")], "--plot must name a .png"),
                        (["--track", "nope"], "no track named 'nope'")]:
        r = runner.invoke(app, ["curve", str(scen)] + args)
        assert r.exit_code == 2 and match in r.stderr, r.stderr
        assert not (tmp_path / "x.csv").exists()
    # without --export: the track's figures (and the design checks' warnings, docs/checking.md)
    r = runner.invoke(app, ["curve", str(scen), "--track", "main"])
    assert r.exit_code == 0 and "track 'main'" in r.stdout and "length:" in r.stdout, r.stderr


# --------------------------------------------------------------------------- design → simulate
SIM_SCENARIO = """
[simulation]
duration = {duration}
dt = 0.001
record_hz = 100

[[track]]
name = "main"
segments = [
  {{type = "start", position = [0.0, 0.0, 2.0], speed = 20.0, heart = 1.1}},
  {{type = "force", length = 20.0}},
  # airtime hill
  {{type = "force", duration = 3.6, interp = "cubic", normal_g = [[0, 1], [0.6, 2.0], [1.2, 1.0], [1.6, -0.3], [2.2, -0.3], [2.6, 1.0], [3.6, 1.0]]}},
  {{type = "force", length = 12.0}},
  # a banked turn to the right with some lateral force: bank and forces ramp together
  {{type = "force", duration = 1.2, interp = "cubic", normal_g = [[0, 1], [1.2, 1.5]], lateral_g = [[0, 0], [1.2, -0.25]], roll_rate = [[0, 0], [0.3, 30], [0.6, 60], [0.9, 30], [1.2, 0]]}},
  {{type = "force", duration = 2.5, normal_g = 1.5, lateral_g = -0.25}},
  {{type = "force", length = 10.0, normal_g = 1.5, lateral_g = -0.25}},
]

[[train]]
cars = 1
start_s = 3.0
start_speed = 20.0
[train.car]
mass = 600.0
length = 2.0
cg_height = 1.1
rider_height = 1.1
"""


def test_design_then_simulate_one_car_on_the_heartline_feels_the_design(tmp_path):
    """One car whose centre of mass and rider are on the heartline reports the designed G (filtered) within
    0.05 g away from the segment joints. Measured: ≤ 0.01 g on the hill and in the turn."""
    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    p = tmp_path / "fvd.toml"
    p.write_text(SIM_SCENARIO.format(duration=10.5))
    sc = quiet(load_scenario, p)
    track = sc.tracks[0].track
    d = track.design
    res = simulate(sc)
    ts = res.timeseries
    s, v = np.asarray(ts["s"]), np.asarray(ts["speed"])
    rail_d = track.point_s
    idx = track.design_index
    joints = np.interp(d.joints, d.s[idx], rail_d)
    want_v = np.interp(s, rail_d, d.normal_g[idx])
    want_l = np.interp(s, rail_d, d.lateral_g[idx])
    far = (np.asarray(ts["t"]) > 0.5) & (s < track.length - 3.0)
    for j in joints:
        far &= np.abs(s - j) > 0.6 * np.maximum(v, 1.0)  # 0.6 s of travel: the 5 Hz filter's reach
    assert far.sum() > 200
    err_v = np.abs(np.asarray(ts["g_vertical_filtered"]) - want_v)[far]
    err_l = np.abs(np.asarray(ts["g_lateral_filtered"]) - want_l)[far]
    print(f"design vs simulated (filtered), away from joints: |Δg_vertical| ≤ {err_v.max():.4f} g, "
          f"|Δg_lateral| ≤ {err_l.max():.4f} g over {far.sum()} samples")
    assert err_v.max() < 0.05 and err_l.max() < 0.05, (err_v.max(), err_l.max())
    # the check is not vacuous: airtime, and a right-hand turn's negative lateral were ridden
    assert want_v[far].min() < -0.25 and want_l[far].min() < -0.24
    assert np.asarray(ts["g_lateral_filtered"])[far].min() < -0.2


def test_bundled_force_designed_scenario_rides_as_designed():
    """scenarios/force_designed.toml: the one car on the heartline feels the design's extremes (filtered)."""
    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    sc = load_scenario(ROOT / "scenarios" / "force_designed.toml")
    d = sc.tracks[0].track.design
    summary = simulate(sc).summary
    fig = summary["trains"]["fvd"]
    assert summary["status"] == "completed"
    assert fig["min_g_vertical"] == pytest.approx(d.normal_g.min(), abs=0.05)  # −0.2 g over the hill's crest
    assert fig["max_g_vertical"] == pytest.approx(d.normal_g.max(), abs=0.05)  # 2.63 g into the zero-g roll
    assert d.normal_g.min() == pytest.approx(-0.2, abs=1e-6) and np.max(np.abs(d.lateral_g)) < 1e-9
    assert fig["max_abs_g_lateral"] < 0.05
