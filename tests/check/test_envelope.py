"""Acceleration envelopes (trackrider/check/envelope.py, results.py): exact answers on square pulses,
ramps and ellipse points; a run checked at several recording rates; bad envelope files."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import trackrider as tr
from trackrider.check.envelope import (combined_check, duration_check, load_envelope, onset_check,
                                       parse_envelope)
from trackrider.check.results import check_timeseries
from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "envelope_example.toml"
DOC = {
    "vertical": {"positive": [[2.0, 10.0], [4.0, 1.0], [6.0, 0.1]], "negative": [[-0.5, 5.0], [-1.5, 0.5]],
                 "onset": 10.0},
    "lateral": {"limits": [[1.0, 4.0], [2.0, 0.4]], "onset": 6.0},
    "longitudinal": {"positive": [[1.0, 8.0], [2.0, 1.0]], "negative": [[-1.0, 8.0], [-2.5, 0.2]]},
    "combined": [{"axes": ["lateral", "vertical"], "lateral": 1.5, "vertical": [-1.0, 4.0]}],
}
ENV = parse_envelope(DOC, "test.toml")
DT = 0.001


def pulse(level, duration, rest=1.0, dt=DT):
    """A square pulse: ``round(duration / dt) + 1`` samples at ``level`` (lasting ``duration`` between the
    first and last), ``rest`` elsewhere."""
    t = np.arange(0.0, 2.0 + duration + 1.0, dt)
    g = np.full(len(t), rest)
    n = int(round(duration / dt)) + 1
    g[1000:1000 + n] = level
    return t, g


def allowed(axis, level):
    return float(ENV.durations[axis].duration_at(ENV.durations[axis].signal(level)))


@pytest.mark.parametrize("axis,level", [
    ("vertical+", 5.0),       # between points: 10^(−0.5) s
    ("vertical+", 4.0),       # at a point
    ("vertical+", 2.7),       # between the first points
    ("vertical-", -1.0),      # airtime, between points
    ("lateral", 1.7), ("lateral", -1.7),    # |G|, either way
    ("longitudinal+", 1.5), ("longitudinal-", -2.0),
])
def test_a_square_pulse_violates_exactly_when_it_lasts_longer_than_allowed(axis, level):
    lim = ENV.durations[axis]
    d_max = allowed(axis, level)
    n_ok = math.floor(d_max / DT + 1e-9)                 # the longest pulse (in samples) that is allowed
    for n, bad in ((n_ok, False), (n_ok + 1, True)):      # one sample either side of the boundary
        t, g = pulse(level, n * DT, rest=0.0)
        found, _, margin = duration_check(t, lim.signal(g), lim)
        assert bool(found) is bad, (n * DT, d_max)
        if bad:
            v = found[0]
            assert v.level == pytest.approx(lim.signal(level)) and v.duration == pytest.approx(n * DT, abs=1e-12)
            assert v.limit == pytest.approx(d_max, rel=1e-12) and v.t0 == pytest.approx(1.0, abs=1e-12)
        assert (margin[0] < 0) is bad          # the margin (g) says the same


def test_pulses_below_the_first_level_and_beyond_the_last():
    lim = ENV.durations["vertical+"]
    t, g = pulse(1.99, 100.0)                             # below the first level: no limit
    assert duration_check(t, lim.signal(g), lim)[0] == []
    t, g = pulse(6.2, 0.002)                              # beyond the last level: never allowed
    found = duration_check(t, lim.signal(g), lim)[0]
    assert len(found) == 1 and found[0].limit == 0.0 and found[0].level == 6.0 and found[0].peak == 6.2
    assert found[0].duration == pytest.approx(0.002 + 2 * DT * 0.2 / 5.2, rel=1e-9)   # interpolated ends


def test_the_worst_level_of_a_smooth_bump_matches_brute_force():
    lim = ENV.durations["vertical+"]
    t = np.arange(0.0, 6.0, 0.01)
    g = 1.0 + 4.2 * np.exp(-((t - 3.0) / 0.8) ** 2)
    found, pts, (room, stay) = duration_check(t, lim.signal(g), lim)

    def longest(level):      # the stay at or above `level`, its ends interpolated
        i = np.flatnonzero(g >= level)
        a, b = i[0], i[-1]
        return (t[b] - t[a] + 0.01 * (g[a] - level) / (g[a] - g[a - 1])
                + 0.01 * (g[b] - level) / (g[b] - g[b + 1]))
    levels = np.linspace(2.0, 5.19, 3191)
    ratio = np.array([longest(x) / lim.duration_at(x) for x in levels])
    assert bool(found) == bool((ratio > 1).any()) is True
    k = int(np.argmax(ratio))                       # reported where the stay exceeds its limit most, by factor
    assert found[0].level == pytest.approx(levels[k], abs=2e-3)
    assert found[0].duration / found[0].limit == pytest.approx(ratio[k], rel=1e-6)
    allowed_level = lim.level_at(np.array([longest(x) for x in levels]))
    assert room == pytest.approx(np.min(allowed_level - levels), abs=1e-5)       # the margin, g


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_ramp_violates_an_onset_limit_exactly_when_its_slope_exceeds_it(sign):
    t = np.arange(0.0, 3.0, 0.01)
    for r, bad in ((10.0 * (1 - 1e-9), False), (10.0 * (1 + 1e-9), True)):
        g = 1.0 + sign * r * np.clip(t - 1.0, 0.0, 0.3)
        found, peak = onset_check(t, g, ENV.onset["vertical"])
        assert bool(found) is bad and abs(peak.rate) == pytest.approx(r, rel=1e-12)
        if bad:      # the slopes sit at the intervals' middles, 1.005 … 1.295 s (their ends interpolated)
            assert len(found) == 1 and found[0].duration == pytest.approx(0.29 + 0.02 * (1 - 10 / r), abs=1e-9)
            assert found[0].t0 == pytest.approx(1.005 - 0.01 * (1 - 10 / r), abs=1e-9)
            assert np.sign(found[0].rate) == sign


@pytest.mark.parametrize("angle", [0.3, 2.0, 3.6, 5.5])       # one point in each quadrant
def test_a_point_just_inside_the_combined_ellipse_passes_and_just_outside_fails(angle):
    ell = ENV.combined[0]
    c, s = math.cos(angle), math.sin(angle)
    A = 1.5
    B = 4.0 if s > 0 else 1.0
    for scale, bad in ((1 - 1e-9, False), (1 + 1e-9, True)):
        lat, vert = np.array([scale * A * c]), np.array([scale * B * s])
        found, peak = combined_check(np.array([0.0]), lat, vert, ell)
        assert bool(found) is bad and peak.ratio == pytest.approx(scale, rel=1e-12)


def _timeseries(t, g_by_channel, cars=1):
    """A timeseries dict of one train ``red`` (``cars`` alike cars) with the given filtered G."""
    n = len(t)
    ts = {"t": np.repeat(t, cars), "train": np.array(["red"] * (n * cars)), "car": np.tile(np.arange(1, cars + 1), n),
          "s": np.repeat(10.0 * t, cars), "flags": np.ones(n * cars)}
    for ch, name in zip(("vertical", "lateral", "longitudinal"),
                        ("g_vertical_filtered", "g_lateral_filtered", "g_longitudinal_filtered")):
        ts[name] = np.repeat(g_by_channel.get(ch, np.full(n, 1.0 if ch == "vertical" else 0.0)), cars)
    return ts


def test_check_of_a_run_names_axis_level_duration_limit_time_s_car_section():
    t, g = pulse(5.0, 0.5)
    summary = {"trains": {"red": {"cars": 2}}, "filter": {"cutoff_hz": 5.0, "applied": True}}
    check = check_timeseries(_timeseries(t, {"vertical": g}, cars=2), summary, ENV,
                             {"red": [("loop", 5.0, 20.0, None)]})
    dur = [v for v in check["violations"] if v["test"] == "duration"]
    assert [(v["axis"], v["car"]) for v in dur] == [("vertical+", 1), ("vertical+", 2)]
    v = dur[0]
    assert v["level_g"] == 5.0 and v["duration_s"] == pytest.approx(0.5) and v["limit_s"] == pytest.approx(
        10 ** -0.5) and v["t"] == pytest.approx(1.0) and v["s"] == pytest.approx(10.0) and v["section"] == "loop"
    assert check["passed"] is False and check["violations_total"] == len(check["violations"])
    m = check["margins"]["durations"]["vertical+"]
    assert m["margin"] < 0 and m["car"] == 1
    assert check["margins"]["onset"]["vertical"]["margin"] == pytest.approx(10.0 - 4.0 / DT)
    assert check["ride_points"]["vertical+"][0][1] == pytest.approx(5.0)


def test_envelope_results_do_not_depend_on_record_hz(tmp_path):
    """A smooth ride (a clothoid loop, one car): the same violations and figures at every recording rate
    above twice the filter's cut-off (5 Hz)."""
    env = tmp_path / "env.toml"
    env.write_text("""
[vertical]
positive = [[2.0, 3.0], [3.0, 0.8], [3.5, 0.3]]
onset = 4.0
[[combined]]
axes = ["longitudinal", "vertical"]
longitudinal = 0.5
vertical = [-1.0, 3.5]
""")
    p = tmp_path / "s.toml"
    p.write_text(f"""
[simulation]
duration = 5.5
record_hz = 100
[[track]]
segments = [{{ type = "straight", length = 40.0 }}, {{ type = "loop", radius = 5.0, transition = "clothoid" }},
            {{ type = "straight", length = 60.0 }}]
[[train]]
start_s = 20.0
start_speed = 20.0
[train.car]
mass = 600.0
cg_height = 0.3
rider_height = 1.1
[check]
envelope = "{env.name}"
""")
    results = {}
    for hz in (20, 50, 200, 1000):
        r = tr.simulate(tr.load_scenario(p, {"simulation.record_hz": hz}))
        results[hz] = r.summary["check"]
    ref = results[1000]
    assert not ref["passed"] and {(v["test"], v["axis"]) for v in ref["violations"]} == {
        ("duration", "vertical+"), ("onset", "vertical"), ("combined", "longitudinal+vertical")}
    for hz, c in results.items():
        assert [(v["test"], v["axis"]) for v in c["violations"]] == [(v["test"], v["axis"]) for v in
                                                                      ref["violations"]], hz
        for v, w in zip(c["violations"], ref["violations"]):     # (in time order, each the same stretch)
            for key in ("level_g", "rate_g_per_s", "ratio"):
                if key in w:
                    assert v[key] == pytest.approx(w[key], abs=0.02 * max(1.0, abs(w[key]))), (hz, key)
            assert v["duration_s"] == pytest.approx(w["duration_s"], abs=0.02), hz
            assert v["t"] == pytest.approx(w["t"], abs=0.02), hz
        for kind, table in ref["margins"].items():
            for axis, m in table.items():
                tol = 0.02 * max(1.0, abs(m.get("rate_g_per_s", 1.0)))      # g; an onset's in proportion
                assert c["margins"][kind][axis]["margin"] == pytest.approx(m["margin"], abs=tol), (hz, axis)


BAD = [
    ("[vertical]\npositive = [[3.0, 1.0], [2.0, 0.5]]\n", "vertical.positive[1]", "levels must increase"),
    ("[vertical]\nnegative = [[-1.0, 1.0], [-0.5, 0.5]]\n", "vertical.negative[1]", "levels must decrease"),
    ("[vertical]\npositive = [[2.0, 1.0], [3.0, 2.0]]\n", "vertical.positive[1]", "durations must not grow"),
    ("[vertical]\npositive = [[2.0, -1.0]]\n", "vertical.positive[0]", "must be > 0"),
    ("[vertical]\npositive = [[2.0, 1.0, 3.0]]\n", "vertical.positive[0]", "a pair"),
    ("[vertical]\nup = [[2.0, 1.0]]\n", "vertical.up", "unknown key"),
    ("[lateral]\nlimits = [[-1.0, 1.0]]\n", "lateral.limits[0]", "must be > 0"),
    ("[vertical]\nonset = 'fast'\n", "vertical.onset", "must be a number"),
    ("[[combined]]\naxes = ['lateral', 'lateral']\nlateral = 1.0\n", "combined[0].axes", "two different axes"),
    ("[[combined]]\naxes = ['lateral', 'vertical']\nlateral = 1.0\nvertical = [1.0, 2.0]\n",
     "combined[0].vertical", "[negative, positive]"),
    ("title = 'x'\n", "title", "unknown key"),
    ("name = 'empty'\n", "vertical", "sets no limit"),
    ("[vertical\n", None, "not valid TOML"),
]


@pytest.mark.parametrize("text,key,words", BAD)
def test_bad_envelope_files_are_one_error_line_naming_the_file_and_key(tmp_path, text, key, words):
    p = tmp_path / "env.toml"
    p.write_text(text)
    r = CliRunner().invoke(app, ["check", str(tmp_path), "--envelope", str(p)])
    assert r.exit_code == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {p}: " + (f"{key}: " if key else ""))
    assert words in r.stderr and "Traceback" not in r.stderr


def test_restraint_classes(tmp_path):
    env = load_envelope(EXAMPLE)
    assert env.restraints == ("lap_bar",) and env.durations["vertical-"].levels[0] == 0.5
    lap = load_envelope(EXAMPLE, "lap_bar")
    assert lap.durations["vertical-"].levels.tolist() == [0.2, 0.5]
    assert lap.durations["vertical+"].levels.tolist() == env.durations["vertical+"].levels.tolist()
    r = CliRunner().invoke(app, ["check", str(tmp_path), "--envelope", str(EXAMPLE), "--restraint", "belt"])
    assert r.exit_code == 2 and "restraint: no restraint class 'belt'" in r.stderr and "lap_bar" in r.stderr


def test_run_with_an_envelope_reports_and_check_reproduces_it(checked_run, tmp_path):
    out, stdout = checked_run
    summary = json.loads((out / "summary.json").read_text())
    check = summary["check"]
    assert "check: " in stdout and check["filter"]["cutoff_hz"] == 5.0
    events = summary["events"]
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    assert sum(e["kind"] == "envelope_exceeded" for e in events) == check["violations_total"]
    # the results stand alone: the envelope is kept with the scenario in inputs/ (and the copy names it)
    manifest = json.loads((out / "inputs" / "manifest.json").read_text())
    kept = [c["copy"] for c in manifest["curves"] if c["original"] == str(EXAMPLE)]
    assert kept == ["curves/envelope_example.toml"] and (out / "inputs" / kept[0]).is_file()
    assert f'envelope = "{kept[0]}"' in (out / "inputs" / "classic.toml").read_text()
    r = CliRunner().invoke(app, ["check", str(out), "--envelope", str(EXAMPLE), "--json"])
    assert r.exit_code == (0 if check["passed"] else 3)
    again = json.loads(r.stdout)
    assert again["violations"] == check["violations"] and again["margins"] == check["margins"]
    # --save replaces the check (and its events) in summary.json, nothing else
    import shutil

    copy = shutil.copytree(out, tmp_path / "copy")
    before = {k: v for k, v in summary.items() if k not in ("check", "events", "events_dropped")}
    r = CliRunner().invoke(app, ["check", str(copy), "--envelope", str(EXAMPLE), "--restraint", "lap_bar", "--save"])
    saved = json.loads((copy / "summary.json").read_text())
    assert {k: v for k, v in saved.items() if k not in ("check", "events", "events_dropped")} == before
    assert saved["check"]["envelope"]["restraint"] == "lap_bar"
    assert sum(e["kind"] == "envelope_exceeded" for e in saved["events"]) == saved["check"]["violations_total"]


def test_a_scenarios_check_table_names_the_envelope_file_and_key(tmp_path):
    base = (ROOT / "scenarios" / "pendulum.toml").read_text()
    runner = CliRunner()
    (tmp_path / "bad.toml").write_text("[vertical]\npositive = [[3.0, 1.0], [2.0, 2.0]]\n")
    for check, words in (('envelope = "bad.toml"', f"{tmp_path / 'bad.toml'}: vertical.positive[1]: levels must"),
                         ('envelope = "none.toml"', "check.envelope: envelope file not found"),
                         (f'envelope = "{EXAMPLE}"\nrestraint = "belt"', "check.restraint: the envelope"),
                         ('restraint = "lap_bar"', "check.restraint: applies to an envelope")):
        p = tmp_path / "s.toml"
        p.write_text(base + f"\n[check]\n{check}\n")
        r = runner.invoke(app, ["validate", str(p)])
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and words in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1
    p.write_text(base + f'\n[check]\nenvelope = "{EXAMPLE}"\nrestraint = "lap_bar"\n')
    assert runner.invoke(app, ["validate", str(p)]).exit_code == 0


def test_sweeps_count_the_violations(tmp_path):
    base = (ROOT / "scenarios" / "sweep_tiny_base.toml").read_text()
    (tmp_path / "base.toml").write_text(base + '\n[check]\nenvelope = "env.toml"\n')
    (tmp_path / "env.toml").write_text("[vertical]\npositive = [[0.9, 0.2]]\n")      # 2 s at ~1 g: every car
    (tmp_path / "sweep.toml").write_text('[sweep]\nscenario = "base.toml"\nmethod = "grid"\n'
                                         '[axes]\n"train.red.start_speed" = [2.0, 6.0]\n')
    r = CliRunner().invoke(app, ["sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "out"), "-j", "1",
                                 "-q"])
    assert r.exit_code == 0, r.stderr
    import csv

    rows = list(csv.DictReader(open(tmp_path / "out" / "sweep.csv")))
    assert [int(row["n_envelope_exceeded"]) for row in rows] == [2, 2]      # one per car of the 2-car train
