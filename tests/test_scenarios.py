"""Every bundled scenario runs, and its headline numbers are physically plausible.

Each file in ``scenarios/`` (sweep files aside) runs briefly through the CLI;
the bundled showcase scenarios are simulated (shortened where the story
allows) and checked against closed-form figures with stated tolerances.
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.scenario import load_scenario
from trackrider.sim import simulate

#: the kernels are compiled once, before the first test here (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("warm_kernels")

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").glob("*.toml")
                   if "sweep" not in tomllib.loads(p.read_text(encoding="utf-8")))
G = 9.81
SHOWCASE = ("classic_coaster", "launched_coaster", "funicular", "weight_drop", "freight", "pendulum", "first_drop")


def test_showcase_scenarios_are_bundled():
    names = {p.stem for p in SCENARIOS}
    assert set(SHOWCASE) <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_scenario_validates_and_runs_briefly(path, tmp_path):
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().startswith("#"), "each scenario starts with a comment header saying what it shows"
    runner = CliRunner()
    assert runner.invoke(app, ["validate", str(path)]).stdout == "ok\n"
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--out", str(out), "--duration", "0.2", "--quiet"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert (out / "timeseries.csv").stat().st_size > 0
    assert (out / "summary.json").stat().st_size > 0


def run(name, duration=None):
    sc = load_scenario(ROOT / "scenarios" / f"{name}.toml")
    return sc, simulate(sc, duration=duration)


def series(result, train, car=1):
    ts = result.timeseries
    m = (ts["train"] == train) & (ts["car"] == car)
    return {k: np.asarray(v)[m] for k, v in ts.items() if k != "train"}


def at(d, t):
    return int(np.searchsorted(d["t"], t))


def test_pendulum_period_matches_physical_pendulum():
    sc, res = run("pendulum", duration=6.0)
    car = sc.trains[0].car
    R = 2.0
    m = car.mass
    I_c = m * (car.length**2 + car.height**2) / 12.0       # about the car's left axis
    theta0 = sc.trains[0].start_s / R
    T0 = 2 * math.pi * math.sqrt((m * R**2 + I_c) / (m * G * R))
    T = T0 * (1 + theta0**2 / 16 + 11 * theta0**4 / 3072)  # finite amplitude
    d = series(res, "bead")
    v, t = d["speed"], d["t"]
    i = np.nonzero((v[:-1] < 0) & (v[1:] >= 0))[0]
    crossings = t[i] - v[i] * (t[i + 1] - t[i]) / (v[i + 1] - v[i])
    assert len(crossings) >= 2
    assert np.mean(np.diff(crossings)) == pytest.approx(T, rel=2e-3)
    # the bottom speed from energy, the G at the bottom from v²/R
    v_max = math.sqrt(2 * G * R * (1 - math.cos(theta0)) * m * R**2 / (m * R**2 + I_c))
    summary = res.summary["trains"]["bead"]
    assert summary["max_speed"] == pytest.approx(v_max, rel=5e-3)
    assert summary["max_g_vertical"] == pytest.approx(1 + v_max**2 / (G * R), abs=5e-3)
    assert abs(summary["energy_drift"]) < 5e-3
    # the free body on a 2 m rod beside it: a simple pendulum (the rod lets the bob turn freely)
    bob = series(res, "bob")
    x = bob["x"] - 6.0
    assert np.allclose(np.hypot(x, bob["z"] - 2.0), 2.0, atol=1e-4)
    i = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    crossings = bob["t"][i] - x[i] * (bob["t"][i + 1] - bob["t"][i]) / (x[i + 1] - x[i])
    T_rod = 2 * math.pi * math.sqrt(2.0 / G) * (1 + theta0**2 / 16 + 11 * theta0**4 / 3072)
    assert np.mean(np.diff(crossings)) == pytest.approx(T_rod, rel=2e-3)


def test_first_drop_speed_from_height():
    sc, res = run("first_drop")
    track = sc.tracks[0].track
    d = series(res, "car")
    z0 = track.frame(sc.trains[0].start_s).position[2]
    v0 = sc.trains[0].start_speed
    for i in (len(d["t"]) // 2, len(d["t"]) - 1):
        z = track.frame(float(d["s"][i])).position[2]
        assert d["speed"][i] == pytest.approx(math.sqrt(v0**2 + 2 * G * (z0 - z)), rel=5e-3)
    assert res.status == "completed"


def test_classic_coaster_headlines():
    sc, res = run("classic_coaster", duration=34.0)
    assert res.status == "completed"
    red = res.summary["trains"]["red"]
    d = series(res, "red", 1)
    # the chain lift holds 4 m/s and pulls m g sin 25° per car (how the
    # rigidly coupled cars share it is the solver's choice: check the train's total)
    i = at(d, 10.0)
    assert d["speed"][i] == pytest.approx(4.0, abs=0.02)
    car = sc.trains[0].car
    lift_force = car.mass * G * math.sin(math.radians(25.0))
    rolling = sc.resistance.rolling * car.mass * G * math.cos(math.radians(25.0))
    total = sum(series(res, "red", k)["motor_force"][i] for k in (1, 2, 3))
    assert total == pytest.approx(3 * (lift_force + rolling), rel=0.03)
    # from the 23 m crest at 4 m/s to the 1 m valley: at most √(4² + 2 g · 22)
    v_bound = math.sqrt(4.0**2 + 2 * G * 22.1)
    assert 0.93 * v_bound < red["max_speed"] <= v_bound * 1.005
    # a clothoid loop (12 m round at its ends, 6.5 m at the top): 4.2–5.2 g, riders above 0 g over the top
    assert 4.2 < red["max_g_vertical"] < 5.2
    loop = (d["s"] > 150.3) & (d["s"] < 203.4)
    top = np.argmax(np.where(loop, d["z"], -np.inf))
    entry = int(np.argmax(loop))
    # the train's energy per kg from the front car's loop entry to its top (the coupled
    # cars share one speed; their mean height counts): lost only to rolling resistance
    # (at most the 5.2 g peak normal load) and drag (at least at the top's speed, at most
    # at the entry's) over the distance run
    z_mean = np.mean([series(res, "red", k)["z"] for k in (1, 2, 3)], axis=0)
    lost = (0.5 * (d["speed"][entry] ** 2 - d["speed"][top] ** 2)
            - G * (z_mean[top] - z_mean[entry]))
    run_m = d["s"][top] - d["s"][entry]
    drag = 0.5 * sc.resistance.air_density * sc.resistance.drag_area / car.mass * run_m
    low = drag * d["speed"][top] ** 2
    high = drag * d["speed"][entry] ** 2 + sc.resistance.rolling * 5.2 * G * run_m
    assert low < lost < high
    assert np.min(d["g_vertical_filtered"][loop]) > 0.0      # riders pressed into their seats at the top
    assert red["max_abs_g_lateral"] < 0.5
    # the brake run stops the train inside it
    assert abs(d["speed"][-1]) < 0.05
    assert 233.0 <= d["s"][-1] <= 290.0


def test_launched_coaster_headlines():
    sc, res = run("launched_coaster", duration=14.0)
    blue = res.summary["trains"]["blue"]
    d = series(res, "blue", 1)
    # LSM: the launch reaches its target speed with at most max_force/m acceleration
    assert blue["max_speed"] == pytest.approx(40.0, abs=0.3)
    a_max = 7000.0 / 650.0
    i = at(d, 1.0)
    assert 0.8 * a_max < d["speed"][i] / d["t"][i] <= a_max * 1.01
    # over the 75 m top hat (v_top² ≈ v₀² − 2 g h, less drag) with airtime, then down
    assert blue["min_crest_speed"] > 2.0
    assert blue["min_g_vertical"] < 0.0 and blue["airtime_s"] > 0.5
    assert 4.0 < blue["max_g_vertical"] < 5.6
    assert d["s"][-1] > 320.0 and res.status == "completed"


def test_funicular_counterbalance():
    sc, res = run("funicular")
    up, down = series(res, "ascending"), series(res, "descending")
    m_up, m_down = sc.trains[0].car.mass, sc.trains[1].car.mass
    alpha = math.radians(20.0)
    mu = sc.resistance.rolling
    a = G * ((m_down - m_up) * math.sin(alpha) - mu * (m_up + m_down) * math.cos(alpha)) / (m_up + m_down)
    i = at(up, 2.0)
    assert up["speed"][i] == pytest.approx(a * up["t"][i], rel=0.02)
    # one rope: both cars move at the same speed all the way
    assert np.max(np.abs(up["speed"] - down["speed"])) < 0.02
    assert res.summary["trains"]["descending"]["max_speed"] == pytest.approx(5.0, abs=0.05)
    # both stop in their stations
    assert abs(up["speed"][-1]) < 0.01 and abs(down["speed"][-1]) < 0.01
    assert up["s"][-1] > 120.0 and down["s"][-1] > 120.0
    assert res.status == "completed"


def test_weight_drop_block_and_tackle():
    sc, res = run("weight_drop", duration=6.0)
    sled, weight = series(res, "sled"), series(res, "weight")
    r = 4.0
    m_t = sc.trains[0].cars * sc.trains[0].car.mass
    m_w = sc.trains[1].car.mass
    a_w = m_w * G / (m_w + r**2 * m_t)
    i = at(sled, 1.5)
    assert weight["speed"][i] == pytest.approx(a_w * weight["t"][i], rel=0.01)
    assert sled["speed"][i] == pytest.approx(r * weight["speed"][i], rel=0.01)
    v_sled = r * math.sqrt(2 * a_w * 10.0)   # after the 10 m drop
    assert res.summary["trains"]["sled"]["max_speed"] == pytest.approx(v_sled, rel=0.01)


def test_freight_holds_speed_up_the_grade():
    sc, res = run("freight", duration=16.0)   # the lead wagon enters the curve at t = 10 s, its R 400 m at 14 s
    assert sc.trains[0].cars >= 50
    ts = res.timeseries
    late = ts["t"] > 2.0
    assert np.all(np.abs(ts["speed"][late] - 15.0) < 0.05)
    car = sc.trains[0].car
    A, B, C = sc.resistance.davis
    grade = car.mass * G * math.sin(math.atan(0.015))
    davis = A + B * 15.0 + C * 15.0**2
    assert np.mean(ts["motor_force"][late]) == pytest.approx(grade + davis, rel=0.02)
    # every wagon's booster pushes alike, at every sample (docs/physics.md, "Rows that share a load"):
    # on the straight each its own need, in the curve within 0.1 % of each other
    n = sc.trains[0].cars
    F = ts["motor_force"].reshape(-1, n)
    straight = ts["t"].reshape(-1, n)[:, 0] < 10.0
    np.testing.assert_allclose(F[straight], grade + davis, rtol=1e-4)
    assert np.all(np.ptp(F, axis=1) <= 1e-3 * (grade + davis))
    assert res.summary["events"] == [] and res.status == "completed"
    # in the curve: lateral G v²/(gR) and flange load m v²/R on the lead wagon
    R = 400.0
    curve = (ts["car"] == 1) & (ts["t"] > 14.2)      # past the 60 m transition
    v = ts["speed"][curve]
    np.testing.assert_allclose(ts["g_lateral"][curve], v**2 / (G * R), rtol=0.01)
    # (the couplers' chords add a small lateral share: within 2 %)
    np.testing.assert_allclose(np.abs(ts["lateral_load"][curve]), car.mass * v**2 / R, rtol=0.02)
