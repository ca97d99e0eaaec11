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
SHOWCASE = ("classic_coaster", "launched_coaster", "funicular", "weight_drop", "freight", "pendulum", "first_drop",
            "distributed_traction", "slack_run_in")


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
    ts = result.load_timeseries()
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
    # one rope: both cars move at the same speed all the way (the descending one towards −s); in
    # the loop the rope runs straight from each car, 1.95 m off the line, to the pulley (0.05 m/s)
    assert np.max(np.abs(up["speed"] + down["speed"])) < 0.05
    assert res.summary["trains"]["ascending"]["max_speed"] == pytest.approx(5.0, abs=0.05)
    # one track with a passing loop: each car always on its own side, no run-through
    names = [t.name for t in sc.tracks]
    assert [names[int(k)] for k in np.unique(up["track"])] == ["lower", "left", "upper"]
    assert [names[int(k)] for k in np.unique(down["track"])] == ["lower", "right", "upper"]
    assert "switch_run_through" not in {e["kind"] for e in res.summary["events"]}
    # started symmetric, they pass at the loop's middle (0.5 m), 3.9 m apart across it
    lo = sc.tracks[1].track.frames(np.array([0.0, sc.tracks[1].length])).position[:, 0]
    k = int(np.argmin(np.abs(up["x"] - down["x"]) + 1e3 * (up["track"] != names.index("left"))))
    assert up["x"][k] == pytest.approx(lo.mean(), abs=0.5)
    assert abs(up["y"][k] - down["y"][k]) > 3.0
    # both stop in their stations, a service stop: both station brakes at their force F, the pair
    # decelerates at (2F − (m_down − m_up) g sin α + μ (m_up + m_down) g cos α) / (m_up + m_down)
    # (1.15 m/s²), and the descending car's riders feel sin α + that / g along the car (1 %)
    f_stop = sc.sections[-1].max_force
    a_stop = (2.0 * f_stop - G * ((m_down - m_up) * math.sin(alpha) - mu * (m_up + m_down) * math.cos(alpha))) \
        / (m_up + m_down)
    assert a_stop < 1.5   # a service stop, not an emergency one
    j = at(up, 40.0)
    assert up["accel"][j] == pytest.approx(-a_stop, rel=0.01) and down["accel"][j] == pytest.approx(a_stop, rel=0.01)
    assert down["g_longitudinal"][j] == pytest.approx(math.sin(alpha) + a_stop / G, rel=0.01)
    assert abs(up["speed"][-1]) < 0.01 and abs(down["speed"][-1]) < 0.01
    assert names[int(up["track"][-1])] == "upper" and up["s"][-1] > 31.0
    assert names[int(down["track"][-1])] == "lower" and down["s"][-1] < 14.0
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


def test_distributed_traction_holds_speed_up_the_grade():
    sc, res = run("distributed_traction", duration=16.0)   # in the curve at t = 10 s (R 400 m at 14 s)
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


def test_passing_loop_trains_pass_in_the_loop_and_reach_their_ends():
    sc, res = run("passing_loop")
    east, west = series(res, "eastbound"), series(res, "westbound")
    names = [t.name for t in sc.tracks]
    # the line's tracks are its blocks: the two trains are never on one track at the same instant
    ts = res.timeseries
    tr = np.asarray(ts["track"]).reshape(len(east["t"]), -1)
    who = np.asarray(ts["train"]).reshape(len(east["t"]), -1)[0]
    for i in range(len(tr)):
        assert not set(tr[i, who == "eastbound"]) & set(tr[i, who == "westbound"]), east["t"][i]
    # the eastbound train took the loop and waited at its station while the westbound one passed on
    # the main line; both end at rest at the far ends of the line
    assert names[int(east["track"][len(east["t"]) // 2])] == "loop"
    assert "main" in {names[int(k)] for k in west["track"]} and "loop" not in {names[int(k)] for k in west["track"]}
    assert names[int(east["track"][-1])] == "east" and names[int(west["track"][-1])] == "west"
    assert abs(east["speed"][-1]) < 0.05 and abs(west["speed"][-1]) < 0.05
    kinds = [e["kind"] for e in res.summary["events"]]
    assert "switch_run_through" not in kinds and "ran_off_track" not in kinds
    assert res.status == "completed"


def _train_arrays(res, n, *names):
    ts = res.timeseries
    return (ts["t"].reshape(-1, n)[:, 0],) + tuple(np.asarray(ts[c]).reshape(-1, n) for c in names)


@pytest.mark.slow
def test_freight_starts_climbs_and_stops_where_a_point_mass_with_the_brakes_delays_stops():
    """The bundled locomotive-hauled freight, whole (docs/physics.md §10): 150 s, 32 vehicles on two
    bogies each (96 entities), 33 s of CPU at load 2.7 (it was cut to 10 wagons when it took 141 s wall
    at load 12). Climbing: the train's momentum balance, Σ m a = Σ traction + Σ resistance − M g sin θ
    (the couplers' forces cancel), within 0.5 % of the traction. In the steady pull, the whole train on
    the 1 % grade under power: every coupler carries what the vehicles behind it need, the rigid
    train's closed form (below) within 1 kN (measured 20 N; the forces are ±170 kN, and leaving out the
    wagons' Davis resistance would be off by 17 kN, their bogies' mass by 24 kN). Braking: a rigid
    point mass with each vehicle's brake force ramping in from its distance to the nearer
    locomotive / 250 m/s (cylinder 3.8 bar × 1.0/1.5 in 4 s), the grade and the Davis resistance stops
    within 1 % of the run's stopping distance (the slack and the gears are what differ); the train then
    stays held on the grade. No event but the driver's two steps (no wheel lift, flange climb or run
    off), and every figure in the summary finite, null only where docs/outputs.md says so."""
    from scipy.integrate import solve_ivp

    sc = load_scenario(ROOT / "scenarios" / "freight.toml")
    res = simulate(sc)
    tr = sc.trains[0]
    specs = tr.car_specs()
    n = len(specs)
    assert n == 32 and sc.simulation.duration == 150.0          # the bundled train, the bundled run
    m = np.array([v.mass for v in specs])
    M = m.sum()
    sin = math.sin(math.radians(0.5729))                          # the grade the file's vertical curve climbs to
    A, B, C = sc.resistance.davis
    # the wagons run on bogies: the rows are 2n wheel frames (front, rear) then the n bodies; each
    # frame's wheels carry half its vehicle (cg_forward 0), which moves with it on the straight grade
    assert all(v.bogies == "two" and v.cg_forward == 0.0 for v in specs)
    t, v, acc, ft, fr, s, cf = (a[:, :2 * n] if a.ndim == 2 else a
                                for a in _train_arrays(res, 3 * n, "speed", "accel", "tractive_force",
                                                       "resistance_force", "s", "coupler_force"))
    stop = res.summary["railway"]["freight"]["stops"][0]
    climb = (s[:, -1] > 760.0) & (t < stop["t_brake"])
    assert climb.sum() > 50
    traction = np.nansum(ft[climb], axis=1)
    balance = (np.repeat(m / 2.0, 2) * acc[climb]).sum(axis=1) - (traction + fr[climb].sum(axis=1) - M * G * sin)
    assert np.max(np.abs(balance)) < 5e-3 * traction.min()
    # the steady pull (the same samples: every bogie past the vertical curve's end at 750 m): the rigid
    # train's closed form from its speed v alone. Each locomotive pulls T = min(P/v, T_max) (notch 8 of
    # 8), each vehicle resists D = A + B v + C v², so
    # a = (2 T − M g sin θ − n D)/M and the coupler behind vehicle j carries
    # F_j = Σ_{i>j} (m_i (a + g sin θ) + D) − T (the rear locomotive pushes).
    loco = specs[0]
    assert loco.kind == specs[-1].kind == "locomotive" and specs[-1].power == loco.power
    vc = v[climb].reshape(-1, n, 2).mean(axis=2)
    T = np.minimum(loco.power / vc, loco.max_tractive_effort)
    D = A + B * vc + C * vc * vc
    a = (T[:, 0] + T[:, -1] - M * G * sin - D.sum(axis=1)) / M
    behind = np.cumsum((m * (a[:, None] + G * sin) + D)[:, ::-1], axis=1)[:, ::-1]
    expect = behind[:, 1:] - T[:, -1:]
    force = cf[climb][:, 1::2][:, :-1]              # on each vehicle's rear bogie's row; none behind the last
    assert np.max(np.abs(expect)) > 1.5e5 and expect[:, 0].min() > 0 > expect[:, -1].max()   # draft ahead, buff behind
    # a rigid pull: every bogie accelerating at a within 1e-3 m/s² (measured 3e-5). The middle coupler
    # carries no force and floats in its 25 mm of free play; where that closes (at 77.8 s, a 7 kN snatch,
    # the bogies' accel 7e-3 apart) the train is not one rigid body for two samples
    rigid = np.max(np.abs(acc[climb] - a[:, None]), axis=1) < 1e-3
    assert rigid.sum() > 60
    np.testing.assert_allclose(force[rigid], expect[rigid], atol=1e3)
    # the stop against a point mass
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = x[i - 1] + 0.5 * (specs[i - 1].length + specs[i].length) + tr.coupling.gap
    delay = np.minimum(x, x[-1] - x) / 250.0
    rig = np.array([v.brake_rigging for v in specs])
    cyl = 3.8 * 1.0 / 1.5

    def rhs(tt, y):
        p = np.clip((tt - delay) * 3.8 / 4.0, 0.0, cyl)
        vv = max(y[1], 0.0)
        f = -(p * rig * 0.25).sum() - M * G * sin - n * (A + B * vv + C * vv * vv)
        return [vv, f / M if y[1] > 0.0 else 0.0]

    halt = lambda tt, y: y[1]
    halt.terminal = True
    sol = solve_ivp(rhs, (0.0, 200.0), [0.0, stop["speed"]], events=halt, rtol=1e-10, atol=1e-10, max_step=0.05)
    assert stop["distance"] == pytest.approx(sol.y_events[0][0][0], rel=0.01)
    after = t > stop["t_stop"] + 1.0
    assert after.sum() > 10 and np.all(np.abs(v[after]) < 0.02)
    assert res.status == "completed"
    assert [e["kind"] for e in res.summary["events"]] == ["driver", "driver"]
    # the start from bunched slack snatches the couplers: the largest draft force is at the start
    assert res.summary["railway"]["freight"]["max_draft"]["t"] < 5.0
    # the summary's figures: finite numbers, null only for what this ride has none of (it never coasted,
    # passed no crest, had no airtime, has no sections)
    nulls = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, y in x.items():
                walk(y, f"{path}.{k}")
        elif isinstance(x, list):
            for k, y in enumerate(x):
                walk(y, f"{path}[{k}]")
        elif x is None and not path.endswith(".section"):     # the line has no sections
            nulls.append(path)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            assert math.isfinite(x), path

    walk(res.summary["trains"], "trains")
    walk(res.summary["railway"], "railway")
    assert sorted(nulls) == ["trains.freight.at.airtime_s", "trains.freight.at.min_crest_speed",
                             "trains.freight.energy_drift", "trains.freight.energy_drift_max_abs",
                             "trains.freight.min_crest_speed"]
    fs = res.summary["trains"]["freight"]
    assert fs["max_speed"] == pytest.approx(np.nanmax(v), abs=1e-4) and fs["airtime_s"] == 0.0


def test_slack_run_in_sends_the_buff_force_back_along_the_train_and_its_energy_adds_up():
    """The locomotive's dynamic brake at the sag: each coupler first carries buff later than the one
    ahead of it (the run-in travels back), the largest buff force is near the front, and the
    mechanical energy the train loses is the dynamic brake's, the draft gears' and the resistance's
    work plus what the gears still hold (½ k_u y², on their unloading curves), within 0.5 %."""
    from trackrider.physics.joints import draft_gear as dg
    from trackrider.scenario.build import build_world
    from trackrider.sim import run_world

    sc = load_scenario(ROOT / "scenarios" / "slack_run_in.toml")
    w = build_world(sc)
    res = run_world(w, sc.simulation.duration, sc.simulation.record_hz)
    n = sc.trains[0].cars
    t, cf, ke, pe, fr, v = _train_arrays(res, n, "coupler_force", "kinetic_energy", "potential_energy",
                                          "resistance_force", "speed")
    # the run-in: behind the wagons the sag had already bunched (the first 8 couplers), each coupler
    # passes 200 kN of buff (4 × the preload) after the one ahead, no faster than the elastic chain's
    # long wave, pitch × √(k/m) = 16 m × √(2e7 / 8e4) = 253 m/s
    late = t > 1.0
    first = np.array([t[late][np.argmax(cf[late, j] < -2e5)] for j in range(8, n - 1)])
    assert np.all(np.diff(first) > 0.0)
    assert 16.0 * (len(first) - 1) / (first[-1] - first[0]) < 16.0 * math.sqrt(2e7 / 8e4)
    rw = res.summary["railway"]["freight"]
    assert rw["max_buff"]["force"] == pytest.approx(-np.nanmin(cf), rel=0.05) and rw["max_buff"]["force"] > 3e5
    e = ke.sum(axis=1) + pe.sum(axis=1)
    p = (fr * v).sum(axis=1)
    resistance = -np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(t))
    jf = w.jf
    stored = sum(0.5 * jf[j, dg.K_UNLOAD] * max(jf[j, dg.SIDE] * jf[j, dg.X0] - jf[j, dg.HALF], 0.0) ** 2
                 for j in w.railway.record.gears if jf[j, dg.MODE] != dg.OPEN)
    lost = e[0] - e[-1]
    spent = rw["energy"]["dynamic_brake"] + rw["energy"]["draft_gear"] + resistance + stored
    assert lost == pytest.approx(spent, rel=5e-3)


def joints_csv(out):
    import csv

    with open(out / "joints.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in ("t", "travel", "speed", "drive", "power", "torque",
                                                                  "held")}


def test_drop_track_falls_with_its_train(tmp_path):
    sc = load_scenario(ROOT / "scenarios" / "drop_track.toml")
    res = simulate(sc, out_dir=tmp_path / "out")
    assert res.status == "completed"
    M, m = sc.bodies[0].mass, sc.trains[0].cars * sc.trains[0].car.mass
    j = joints_csv(tmp_path / "out")
    release = [e for e in res.summary["events"] if e["kind"] == "joint_release"]
    assert len(release) == 1 and release[0]["joint"] == "drop_lock"
    t0 = release[0]["t"]
    held = j["t"] < t0 - 0.05
    assert np.all(j["held"][held] == 1)
    np.testing.assert_allclose(j["drive"][held & (j["t"] > 1.0)], (M + m) * G, rtol=1e-6)   # the train stands
    car = series(res, "car")
    falling = (car["t"] > t0 + 0.05) & (car["t"] < t0 + 0.85)   # 4 m take 0.90 s
    np.testing.assert_allclose(car["g_vertical"][falling], 0.0, atol=1e-6)
    np.testing.assert_allclose(car["wheel_load"][falling], 0.0, atol=1e-3)
    k = 120000.0
    assert j["travel"][-1] == pytest.approx(-4.0 - (M + m) * G / k, abs=2e-3)
    assert car["wheel_load"][-1] == pytest.approx(sc.trains[0].car.mass * G, rel=1e-3)
    mech = res.summary["mechanisms"][0]
    hold = [e["t"] for e in res.summary["events"] if e["kind"] == "joint_hold"]   # locked again on the buffer
    assert len(hold) == 1
    assert mech["joint"] == "drop_lock" and mech["body"] == "drop"
    assert mech["held_s"] == pytest.approx(t0 + sc.simulation.duration - hold[0], abs=0.02)


def test_turntable_turns_the_loco_half_round(tmp_path):
    sc = load_scenario(ROOT / "scenarios" / "turntable.toml")
    res = simulate(sc, out_dir=tmp_path / "out")
    assert res.status == "completed"
    j = joints_csv(tmp_path / "out")
    assert abs(j["travel"][-1]) == pytest.approx(math.pi, abs=1e-6)
    loco = series(res, "loco")
    m, L, W = sc.trains[0].car.mass, sc.trains[0].car.length, sc.trains[0].car.width
    d = sc.trains[0].start_s - 12.0                                    # the loco's centre off the axis
    deck = sc.bodies[0]
    I_deck = deck.mass * (deck.size[0] ** 2 + deck.size[1] ** 2) / 12
    I = I_deck + m * (L ** 2 + W ** 2) / 12 + m * d ** 2
    alpha = math.radians(3.0) / 10.0
    ramp = (j["t"] > 0.5) & (j["t"] < 9.5)
    np.testing.assert_allclose(j["drive"][ramp], I * alpha, rtol=1e-3)
    steady = (j["t"] > 15.0) & (j["t"] < 55.0)
    assert np.max(np.abs(j["drive"][steady])) < 1.0
    turning = j["t"] < 75.0
    np.testing.assert_allclose(j["torque"][turning], m * G * d, rtol=2e-3)   # the loco's weight off the axis
    on_deck = loco["t"] < 75.0
    assert np.max(np.abs(loco["s"][on_deck] - sc.trains[0].start_s)) < 1e-3   # held by the station on the deck
    # the deck's end meets the west road only after the turn: the loco leaves by it once dispatched
    ev = [(e["kind"], e.get("from"), e.get("to"), e["t"]) for e in res.summary["events"]
          if e["kind"] in ("dispatch", "track_change")]
    assert [e[:3] for e in ev] == [("dispatch", None, None), ("track_change", "deck_track", "west_road")]
    assert ev[0][3] == pytest.approx(75.0, abs=0.01)
    assert ev[1][3] == pytest.approx(75.0 + (24.0 - sc.trains[0].start_s) / 1.5, abs=0.5)
    assert np.max(j["torque"][j["t"] > ev[1][3] + 5.0]) < 1.0               # the empty deck: no moment
