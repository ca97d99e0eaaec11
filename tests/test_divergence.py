"""No impossible number reported as a result: the divergence test (trackrider.divergence.DivergenceCheck),
ran-off cars, the dt warning, counterweights; and the sweep size limits."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from trackrider.errors import InputError
from trackrider.divergence import DivergenceCheck, blank_ran_off
from trackrider.physics import channels as ch
from trackrider.record import read_timeseries

#: the kernels are compiled once, before the first test here (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("warm_kernels")

ROOT = Path(__file__).resolve().parents[1]
SC = ROOT / "scenarios"


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "trackrider.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def falling(m=10, g=9.81, mass=2.0, dt=0.1, gain=0.0):
    """One body falling from rest (energy kept), with ``gain`` J added per sample from sample 5 on."""
    t = dt * np.arange(1, m + 1)
    s = np.zeros((m, 1, ch.N_CHANNELS))
    v = g * t
    z = 100.0 - 0.5 * g * t ** 2
    s[:, 0, ch.Z] = z
    s[:, 0, ch.VZ] = -v
    s[:, 0, ch.QW] = 1.0
    s[:, 0, ch.KINETIC_ENERGY] = 0.5 * mass * v ** 2 + gain * np.maximum(np.arange(m) - 4, 0)
    s[:, 0, ch.POTENTIAL_ENERGY] = mass * g * z
    s[:, 0, [ch.S, ch.SPEED, ch.MOTOR_FORCE]] = np.nan
    return t, s


def test_a_body_that_keeps_its_energy_is_sane():
    t, s = falling()
    check = DivergenceCheck([np.array([0])], [2.0], 9.81, 0.1)
    assert check.check(t, s) is None


def test_energy_rising_more_than_10_percent_ends_at_the_first_such_sample():
    t, s = falling(gain=5.0)       # +5 J per sample on ~2 * 9.81 * 4.9 J of descent by then
    check = DivergenceCheck([np.array([0])], [2.0], 9.81, 0.1)
    i, entity, reason = check.check(t, s)
    assert entity == 0 and "energy rose" in reason
    spend = 0.5 * 2.0 * (9.81 * t) ** 2            # K0 = 0, no motor: what it descended
    rise = 5.0 * np.maximum(np.arange(10) - 4, 0)
    first = int(np.argmax(rise > 0.1 * np.maximum(spend, 2.0 * 9.81)))
    assert i == first


def test_a_non_finite_number_is_not_sane():
    t, s = falling()
    s[6, 0, ch.VX] = np.inf
    i, _, reason = DivergenceCheck([np.array([0])], [2.0], 9.81, 0.1).check(t, s)
    assert i == 6 and "non-finite" in reason


def test_ran_off_cars_have_empty_track_columns():
    s = np.ones((3, 2, ch.N_CHANNELS))
    s[:, :, ch.FLAGS] = ch.ON_TRACK
    s[2, 1, ch.FLAGS] = ch.RAN_OFF
    blank_ran_off(s)
    for c in ch.TRACK_CHANNELS:
        assert np.isnan(s[2, 1, c]) and not np.isnan(s[2, 0, c]) and not np.isnan(s[1, 1, c])


def test_a_heavy_body_on_a_feather_trolley_runs_sane(tmp_path):
    """A 1e6 kg hanging body on a 1e-6 kg trolley (a mass ratio of 1e12) at dt = 10 ms: the hinge is
    solved exactly with its trolley (docs/physics.md, suspended cars), so the run completes with sane
    figures (under PGS sweeps it drifted to a divergence)."""
    out = tmp_path / "r"
    p = cli("run", SC / "suspended_coaster.toml", "--out", out, "--quiet", "--duration", "20",
            "--set", "train.cars.car.mass=1e6", "--set", "train.cars.car.trolley_mass=1e-6",
            "--set", "simulation.dt=0.01", "--set", "simulation.record_hz=10")
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["trains"]["cars"]["max_speed"] < 30.0


def test_a_pulley_pulled_apart_ends_diverged_with_sane_outputs(tmp_path):
    """A 1 kg sled on a rope over a pulley to a 1e6 kg weight at dt = 10 ms: the PGS rope row cannot
    hold (joint violated): the run ends diverged, its outputs end at the last sane sample and the
    summary covers exactly those."""
    out = tmp_path / "r"
    p = cli("run", SC / "weight_drop.toml", "--out", out, "--quiet", "--duration", "20",
            "--set", "train.sled.car.mass=1", "--set", "train.weight.car.mass=1e6",
            "--set", "simulation.dt=0.01", "--set", "simulation.record_hz=10")
    assert p.returncode == 1 and p.stderr.startswith("error: simulation diverged"), p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "diverged"
    ts = read_timeseries(out)
    assert ts["t"][-1] < summary["diverged"]["t"]          # outputs end at the last sane sample
    assert np.all(np.isfinite(ts["x"])) and np.all(np.isfinite(ts["vx"]))
    # the summary covers the samples written: simulated up to the last one, not the whole chunk
    assert summary["simulated_s"] == pytest.approx(ts["t"][-1], abs=1e-9)
    assert summary["steps"] == round(ts["t"][-1] / 0.01)


def test_the_onset_of_a_divergence_is_the_last_calm_sample_before_it():
    """An energy rise that grows sample by sample: the run diverges where it passes its limit, and its
    onset is the last sample where the rise was below a tenth of the limit (``CALM_FRACTION``)."""
    from trackrider.divergence import CALM_FRACTION

    t, s = falling(m=30, gain=3.0)
    check = DivergenceCheck([np.array([0])], [2.0], 9.81, 0.1)
    i, _, _ = check.check(t[:12], s[:12]) or (None, None, None)   # two chunks: the onset may lie in either
    if i is None:
        i, _, _ = check.check(t[12:], s[12:])
        i += 12
    spend = 0.5 * 2.0 * (9.81 * t) ** 2
    limit = 0.1 * np.maximum(spend, 2.0 * 9.81)
    rise = 3.0 * np.maximum(np.arange(30) - 4, 0)
    assert i == int(np.argmax(rise > limit))
    calm = np.flatnonzero(rise[:i] < CALM_FRACTION * limit[:i])
    assert check.onset == pytest.approx(t[calm[-1]]) and calm[-1] < i - 1


def test_a_car_that_runs_off_while_on_a_rope_stops_counting(tmp_path):
    text = (SC / "weight_drop.toml").read_text()
    text = (text.replace('{ type = "straight", length = 350.0 }', '{ type = "straight", length = 40.0 }')
                .replace("from = 200.0", "from = 38.0").replace("to = 348.0", "to = 39.0"))
    scenario = tmp_path / "runoff.toml"
    scenario.write_text(text)
    out = tmp_path / "r"
    p = cli("run", scenario, "--out", out, "--quiet")
    summary = json.loads((out / "summary.json").read_text())
    assert p.returncode in (0, 1), p.stderr
    assert summary["status"] in ("ran_off_track", "diverged")
    ts = read_timeseries(out)
    off = (ts["flags"].astype(int) & ch.RAN_OFF) != 0
    assert off.any()
    for col in ("s", "speed", "wheel_load", "lateral_load", "motor_force"):
        assert np.all(np.isnan(ts[col][off])), col
    for train in summary["trains"].values():
        for key in ("max_speed", "min_speed"):
            assert abs(train[key]) < 100.0
        for key in ("max_g_vertical", "min_g_vertical", "max_abs_g_lateral"):
            assert train[key] is None or abs(train[key]) < 20.0


def test_a_long_time_step_is_warned_and_listed_in_the_summary(tmp_path):
    out = tmp_path / "r"
    p = cli("run", SC / "pendulum.toml", "--out", out, "--quiet", "--set", "simulation.dt=0.1",
            "--set", "simulation.record_hz=10")
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: train 'bead'") and "dt = 0.1 s" in lines[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["warnings"] == [lines[0][len("warning: "):]]


def test_a_counterweight_reports_no_rider_figures(tmp_path):
    from trackrider.sim import simulate

    r = simulate(SC / "weight_drop.toml", duration=3.0)
    weight, sled = r.summary["trains"]["weight"], r.summary["trains"]["sled"]
    assert weight["role"] == "counterweight" and sled["role"] == "riders"
    for key in ("max_g_vertical", "min_g_vertical", "max_abs_g_lateral", "max_abs_g_longitudinal", "airtime_s"):
        assert weight[key] is None and sled[key] is not None
    assert weight["max_speed"] > 3.0


@pytest.mark.parametrize("sweep", [
    '[sweep]\nscenario = "BASE"\nmethod = "random"\nsamples = 1000000000\n[axes]\n"resistance.rolling" = '
    '{min = 0.0, max = 0.01}\n',
    '[sweep]\nscenario = "BASE"\n[axes]\n"resistance.rolling" = {min = 0.0, max = 0.01, num = 100000}\n'
    '"train.red.car.mass" = {min = 300.0, max = 600.0, num = 100000}\n',
    '[sweep]\nscenario = "BASE"\n[axes]\n"resistance.rolling" = {min = 0.0, max = 0.01, num = 200}\n'
    '"train.red.car.mass" = {min = 300.0, max = 600.0, num = 200}\n',
])
def test_sweeps_beyond_the_size_limit_are_refused_at_once(tmp_path, sweep):
    from trackrider.sweep import load_sweep

    f = tmp_path / "s.toml"
    f.write_text(sweep.replace("BASE", str(SC / "sweep_tiny_base.toml")))
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="more than a sweep may"):
        load_sweep(f, check_scenario=False)
    assert time.perf_counter() - t0 < 5


def test_figures_from_the_drift_before_a_divergence_are_withheld(tmp_path):
    """docs/outputs.md, "Divergence": a figure taken after the run's last calm sample (every test below
    a tenth of its limit) is null, and a warning in ``warnings`` names the trains and the onset.

    The pulley of test_a_pulley_pulled_apart… at dt = 2 ms, recorded every step: its rope row
    stretches by a factor 1.3 … 5 per step from 4.4 s on (0.005 m at 4.486 s, the last calm sample;
    0.011 and 0.029 m at 4.488 and 4.49 s; 0.145 m at 4.492 s, diverged). Beside it, on a track of its
    own, a car rolls down a frictionless 10° straight: its speed v0 + g sin 10° t sets a new maximum
    at every sample, so its ``max_speed`` comes from the drift and is withheld, while its
    ``min_speed`` (the first sample) is kept. The run exits 1 with one ``error:`` line
    (docs/cli.md, exit codes), and the outputs still end at the last sane sample."""
    import re

    text = (SC / "weight_drop.toml").read_text()
    runner = ('[[track]]\nname = "slope"\nsegments = [\n'
              '  { type = "start", position = [0.0, 50.0, 100.0], heading = 0.0, pitch = -10.0 },\n'
              '  { type = "straight", length = 300.0 },\n]\n\n'
              '[[train]]\nname = "runner"\ntrack = "slope"\ncars = 1\nstart_s = 5.0\nstart_speed = 2.0\n'
              '[train.car]\nmass = 500.0\nlength = 2.0\nwidth = 1.2\nheight = 1.0\n\n')
    assert text.count("[[train]]\nname = \"sled\"") == 1
    scenario = tmp_path / "drift.toml"
    scenario.write_text(text.replace('[[train]]\nname = "sled"', runner + '[[train]]\nname = "sled"'))
    out = tmp_path / "r"
    dt, v0, sin10 = 0.002, 2.0, np.sin(np.radians(10.0))
    p = cli("run", scenario, "--out", out, "--quiet", "--duration", "10", "--set", "train.sled.car.mass=1",
            "--set", "train.weight.car.mass=1e6", "--set", f"simulation.dt={dt}",
            "--set", "simulation.record_hz=500")
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: simulation diverged at t = "), p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "diverged"
    t_div = summary["diverged"]["t"]
    [warning] = summary["warnings"]
    m = re.fullmatch(r"figures of runner from samples after t = (\S+) s are withheld \(null\): the state was "
                     rf"already drifting towards the divergence at t = {re.escape(f'{t_div:.6g}')} s", warning)
    assert m, warning
    onset = float(m.group(1))
    ts = read_timeseries(out)
    assert onset < ts["t"][-1] < t_div                  # samples of the drift are written; figures from them not
    run = ts["train"] == "runner"
    t, v = ts["t"][run], ts["speed"][run]
    np.testing.assert_allclose(v, v0 + 9.81 * sin10 * t, rtol=1e-6)     # (written to 7 digits)
    assert np.argmax(v) == len(v) - 1 and t[-1] > onset
    fig = summary["trains"]["runner"]
    assert fig["max_speed"] is None and fig["at"]["max_speed"] is None
    assert fig["min_speed"] == pytest.approx(v0 + 9.81 * sin10 * dt, abs=1e-9)
    assert fig["at"]["min_speed"]["t"] == pytest.approx(dt)
    # every figure kept, of every train, is from a sample up to the onset; the sled's top speed (161 m/s
    # as it reached the end of its track, before the rope gave) is one of them
    for name, train in summary["trains"].items():
        for key, at in train["at"].items():
            if at is not None:
                assert at["t"] <= onset, (name, key)
    assert summary["trains"]["sled"]["max_speed"] > 100.0
