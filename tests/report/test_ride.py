"""The ride as the page shows it: the statistics table against a layout with known figures, charts
against time and track position that the page's script can zoom, G–G on fixed axes, events counted
and folded, and a railway train's page (no coaster rows; couplers against time and along the train)."""
from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

#: a level start at 40 m, a 60° drop between two R = 10 m pitch arcs (27.32 m high), a loop of R = 10 m
R, STEEP, LONG = 10.0, 60.0, 20.0
DROP = 2 * R * (1 - math.cos(math.radians(STEEP))) + LONG * math.sin(math.radians(STEEP))
KNOWN = f"""
title = "A drop and a loop"
[simulation]
duration = 14.0
dt = 0.001
record_hz = 100
[[track]]
name = "main"
segments = [
  {{ type = "start", position = [0.0, 0.0, 40.0], heading = 0.0, pitch = 0.0 }},
  {{ type = "straight", length = 10.0 }},
  {{ type = "arc", radius = {R}, angle = -{STEEP}, axis = "pitch" }},
  {{ type = "straight", length = {LONG} }},
  {{ type = "arc", radius = {R}, angle = {STEEP}, axis = "pitch" }},
  {{ type = "straight", length = 20.0 }},
  {{ type = "loop", radius = 10.0 }},
  {{ type = "straight", length = 60.0 }},
]
[[train]]
name = "red"
track = "main"
cars = 1
start_s = 5.0
start_speed = 2.0
[train.car]
mass = 600.0
length = 2.0
"""


def _stats(page: str, train: str) -> dict:
    """The statistics table of ``train``: {statistic: (value, where)}."""
    part = page[page.index(f"Train {train}:"):]
    table = re.search(r'<table class="stats">(.*?)</table>', part, re.S).group(1)
    rows = re.findall(r'<tr><td class="l">(.*?)</td><td>(.*?)</td><td class="l">(.*?)</td></tr>', table)
    return {html.unescape(a): (html.unescape(b), html.unescape(c)) for a, b, c in rows}


@pytest.fixture(scope="module")
def known_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("known")
    (d / "known.toml").write_text(KNOWN, encoding="utf-8")
    out = d / "res"
    r = runner.invoke(app, ["run", str(d / "known.toml"), "--out", str(out), "-q", "--report"])
    assert r.exit_code == 0, r.stderr
    return out


def test_statistics_of_a_known_drop_and_loop(known_run):
    page = (known_run / "report.html").read_text(encoding="utf-8")
    summary = json.loads((known_run / "summary.json").read_text())
    stats = _stats(page, "red")
    assert stats["biggest drop"][0] == f"{DROP:.1f} m"                 # 27.3 m
    assert stats["its steepest angle"][0] == f"{STEEP:.1f}°"
    assert stats["highest point"][0] == "40.0 m"
    # one inversion: the rider's up vector (the car's orientation) went below the horizontal once,
    # in the loop (which starts 10 + 2·R·60° + 20 + 20 m along the track)
    inv = stats["inversions (the rider's up below the horizontal)"]
    assert inv[0] == "1"
    s_inv = float(re.search(r"s = ([\d.]+) m", inv[1]).group(1))
    loop_from = 10 + 2 * R * math.radians(STEEP) + LONG + 20
    assert loop_from < s_inv < loop_from + math.pi * 10
    red = summary["trains"]["red"]
    assert stats["top speed"][0] == f"{red['max_speed'] * 3.6:.1f} km/h"
    # the top speed is that of the drop: √(v₀² + 2 g h), less a little drag and friction
    assert red["max_speed"] == pytest.approx(math.sqrt(2.0 ** 2 + 2 * 9.81 * DROP), rel=0.02)
    # it runs off the end of the track after 60 m of straight: the ride ends there
    off = [ev["t"] for ev in summary["events"] if ev["kind"] == "ran_off_track"]
    assert stats["ride time"] == (f"{off[0] - 0.01:.1f} s", "from moving off to running off the end of the track")
    assert "lift time" not in stats                                       # no lift
    assert stats["track length"][1] == "open track"


def test_the_ride_is_charted_against_time_and_track_position_and_zooms(known_run):
    page = (known_run / "report.html").read_text(encoding="utf-8")
    alt = re.search(r'<div class="alt">(.*?)</div>\s*<h3>', page, re.S).group(1)
    assert 'data-view="against time"' in alt and 'data-view="against track position"' in alt
    specs = [json.loads(html.unescape(m)) for m in re.findall(r'data-zoom="([^"]*)"', alt)]
    assert len(specs) == 2
    for spec in specs:
        assert len(spec["axes"]) == 5                     # vertical, lateral, longitudinal G, roll rate, jerk
        ids = set(re.findall(r'id="([^"]+)"', alt))
        for ax in spec["axes"]:
            x0, y0, x1, y1 = ax["box"]
            assert x0 < x1 and y0 < y1
            assert ax["axis"] in ids and ax["stretch"] and all(i in ids for i in ax["stretch"])
            assert all(m[0] in ids for m in ax["move"])
        # the panels share x and stack down the figure
        assert len({tuple(a["box"][::2]) for a in spec["axes"]}) == 1
        assert all(a["box"][3] < b["box"][1] for a, b in zip(spec["axes"], spec["axes"][1:]))
    t_spec, s_spec = specs
    assert t_spec["label"] == "time (s)" and s_spec["label"].startswith("track position s")
    assert t_spec["lim"][0] <= 0.0 and t_spec["lim"][1] >= 14.0
    for label in ("roll rate (°/s)", "jerk, car 1 (g/s)"):
        assert label in alt, label


def test_gg_diagram_axes_are_fixed_and_symmetric():
    from trackrider.report import figures
    from trackrider.report.data import RunData, TrainData
    from trackrider.report.units import Units

    t = np.linspace(0.0, 10.0, 101)
    series = {"g_lateral_filtered": 0.1 * np.sin(t)[:, None], "g_vertical_filtered": (1.0 + 0.5 * np.cos(t))[:, None]}
    tr = TrainData(name="a", cars=[1], wheels="coaster", series=series, summary={})
    run = RunData(path=Path("x"), summary={}, t=t, trains=[tr], title="", description="")
    svg = figures.gg_diagram([run], "a", Units())
    # ±0.1 g of lateral G is drawn on a ±2 g axis, vertical on 1 ± 3 g: the tick labels say so
    labels = re.findall(r">(−?\d)</text>", svg)
    assert {"−2", "2"} <= set(labels) and {"−2", "4"} <= set(labels)
    series["g_lateral_filtered"] = 2.6 * np.sin(t)[:, None]             # beyond: widened in whole g
    assert {"−3", "3"} <= set(re.findall(r">(−?\d)</text>", figures.gg_diagram([run], "a", Units())))


def test_events_are_counted_and_folded(two_train_run):
    page = (two_train_run / "report.html").read_text(encoding="utf-8")
    events = json.loads((two_train_run / "summary.json").read_text())["events"]
    part = page[page.index('<h2 id="events">'):]
    counts = re.search(r"<p>(\d+) events: (.*?)\.</p>", part)
    assert int(counts.group(1)) == len(events)
    for kind in {ev["kind"] for ev in events}:
        n = sum(ev["kind"] == kind for ev in events)
        assert f"{kind} × {n}" in counts.group(2)
    folded = re.search(r"<details><summary>each event in words \((\d+)\)</summary><ul>(.*?)</ul>", part, re.S)
    assert int(folded.group(1)) == len(events) and folded.group(2).count("<li>") == len(events)
    # the operation summary comes before the events
    assert page.index('<h2 id="operation">') < page.index('<h2 id="events">')


def test_a_railway_train_gets_a_railway_page(run_with_report):
    out = run_with_report("distributed_traction", 20)
    page = (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text())
    stats = _stats(page, "freight")
    assert stats["steepest grade"][0] == "1.50 %"
    assert stats["smallest curve radius"][0] == "400 m"
    assert stats["train"][0] == "55 cars, 1100 t"
    # no coaster rows: no G, no airtime, no crests, no G–G diagram
    for word in ("vertical G", "airtime", "over a crest", "G–G diagram", "The ride: G"):
        assert word not in page, word
    for word in ("largest coupler pull", "largest coupler push", "smallest inner-rail load",
                 "Coupler forces against time", "Coupler forces along the train", "Along the train",
                 "The line from above"):
        assert word in page, word
    assert "Driving: speed, notch and brakes" not in page     # boosters, not locomotives
    # coupler forces against time zoom like the ride's charts
    spec = json.loads(html.unescape(re.search(r'data-zoom="([^"]*)"', page).group(1)))
    assert spec["label"] == "time (s)" and spec["lim"][1] >= 20.0
    assert summary["trains"]["freight"]["wheels"] == "railway"


def test_a_locomotive_hauled_train_reports_its_recorded_coupler_forces(run_with_report):
    """The rebuilt freight (vehicles of different masses, draft gears): the train's mass is the sum of
    its vehicles', and the coupler extremes are the recorded coupler_force's (docs/outputs.md)."""
    from trackrider.record import read_timeseries

    out = run_with_report("freight", 20)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert _stats(page, "freight")["train"][0] == "32 cars on 64 bogies, 2040 t"
    ts = read_timeseries(out)
    pull = np.nanmax(ts["coupler_force"])
    assert f"{pull / 1e3:.1f} kN" in page and "largest coupler pull" in page
    assert "Driving: speed, notch and brakes" in page and "notch 8" in page      # the driver's command marked


def test_a_one_car_railway_train_has_no_empty_coupler_panels(run_with_report):
    out = run_with_report("funicular", 3)
    page = (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text())
    railway = [n for n, t in summary["trains"].items() if t["wheels"] == "railway" and t["cars"] == 1]
    if not railway:
        pytest.skip("funicular has no one-car railway train")
    assert "coupler force between car n and n + 1" not in page
    assert "Coupler forces against time" not in page
