"""The report of a ride with stations and block sections: the operation table, the block-occupancy
timeline, the operation events in words; nothing of it for a ride without blocks."""
from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.report.data import BlockLane, RunData, TrainData, intervals, shared_blocks
from trackrider.report.figures import block_timeline
from trackrider.report.page import events_in_words
from trackrider.report.units import KMH, Units

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def _timeline_svg(page: str) -> ET.Element:
    i = page.index("<h3>Block occupancy</h3>")
    m = re.compile(r"<svg.*?</svg>", re.S).search(page, i)
    return ET.fromstring(m.group(0))


def _groups(svg: ET.Element, prefix: str) -> list[ET.Element]:
    return [g for g in svg.iter(f"{SVG}g") if g.get("id", "").startswith(prefix)]


def _shapes(groups: list[ET.Element]) -> list[ET.Element]:
    """The shapes drawn in ``groups``: each a ``<path>`` (not a definition) or a ``<use>`` of one."""
    out = []
    for g in groups:
        defined = {id(p) for d in g.iter(f"{SVG}defs") for p in d.iter(f"{SVG}path")}
        out += [e for e in g.iter() if (e.tag == f"{SVG}path" and id(e) not in defined) or e.tag == f"{SVG}use"]
    return out


def _visits_from_csv(results: Path) -> dict:
    """{(train, block): number of stays}, a stay being a maximal run of recorded instants at which any car
    of the train has that ``block`` — computed from timeseries.csv alone."""
    blocks_at: dict = {}          # train -> {t: set of blocks}
    times: list = []
    with open(results / "timeseries.csv", newline="") as f:
        for row in csv.DictReader(f):
            t = float(row["t"])
            if not times or times[-1] != t:
                times.append(t)
            b = row["block"]
            per = blocks_at.setdefault(row["train"], {}).setdefault(t, set())
            if b not in ("", "nan") and float(b) >= 0:
                per.add(int(float(b)))
    stays: dict = {}
    for train, per_t in blocks_at.items():
        before: set = set()
        for t in times:
            now = per_t.get(t, set())
            for b in now - before:
                stays[(train, b)] = stays.get((train, b), 0) + 1
            before = now
    return stays


def test_timeline_bars_are_the_block_stays_of_the_csv(two_train_run):
    page = (two_train_run / "report.html").read_text(encoding="utf-8")
    summary = json.loads((two_train_run / "summary.json").read_text())
    assert summary["operation"] and "block" in summary["columns"]
    assert '<h2 id="operation">Operation: stations and blocks</h2>' in page
    svg = _timeline_svg(page)
    stays = _visits_from_csv(two_train_run)
    assert sum(stays.values()) >= 8           # both trains pass through several blocks in 160 s
    for train, colour in (("red", "#cd1e23"), ("blue", "#1e5adc")):     # the video's colours of red, blue
        bars = _shapes(_groups(svg, f"blocks-visits-{train}-"))
        assert len(bars) == sum(n for (tr, _), n in stays.items() if tr == train), train
        for bar in bars:
            assert f"fill: {colour}" in bar.get("style", ""), (train, bar.get("style"))
    # the lanes: one per block, numbered as the block column, named by the block section that starts it
    text = " ".join(el.text or "" for el in svg.iter(f"{SVG}text"))
    for label in ("block 0: station", "block 1: lift", "block 2: mid brake (brake)",
                  "block 3: final brake (brake)"):
        assert label in text, label
    assert "block 4" not in text and "(lift)" not in text       # the type only when the name is not it
    # a hatched bar per hold, a triangle per dispatch
    events = summary["events"]
    holds = len(_shapes(_groups(svg, "blocks-holds-")))
    assert holds == sum(ev["kind"] == "block_hold" for ev in events) >= 3
    dispatches = _groups(svg, "blocks-dispatches")
    n_disp = sum(ev["kind"] == "dispatch" for ev in events)
    assert n_disp >= 2 and len(dispatches) == 1 and len(_shapes(dispatches)) == n_disp
    assert not _groups(svg, "blocks-collisions")
    assert "No two trains were ever recorded in one block at once." in page
    # merged, not one rectangle per sample: the figure stays small
    n_samples = int(round(summary["simulated_s"] * summary["record_hz"]))
    assert sum(stays.values()) < n_samples / 20
    size = len(ET.tostring(svg))
    assert size < 40_000, size


def test_operation_table(two_train_run):
    page = (two_train_run / "report.html").read_text(encoding="utf-8")
    op = json.loads((two_train_run / "summary.json").read_text())["operation"]
    tp = op["throughput_trains_per_hour"]
    assert tp is not None and f"{tp:.1f} trains an hour, {op['riders_per_hour']:.0f} riders an hour" in page
    for name, tr in op["trains"].items():
        lap = "—" if tr["mean_lap_time"] is None else f"{tr['mean_lap_time']:.1f}"
        assert re.search(rf'<td class="l"><span class="swatch"[^>]*></span>{name}</td><td>{tr["riders"]}</td>'
                         rf'<td>{tr["laps"]}</td><td>{lap}</td>', page), name
    assert op["trains"]["red"]["laps"] == 1          # red's first lap ends at about 115 s
    st = op["stations"]["station"]
    assert f'<td class="l">station</td><td>{st["dispatches"]}</td>' in page
    events = json.loads((two_train_run / "summary.json").read_text())["events"]
    for k, (name, bs) in enumerate(op["block_sections"].items()):
        n = sum(ev["kind"] == "block_hold" and ev["section"] == name for ev in events)
        assert (f'<td class="l">{name}</td><td class="l">{bs["type"]}</td><td>{k}</td>'
                f'<td>{bs["held_s"]:.1f}</td><td>{n}</td>') in page, name


def test_operation_events_in_words(two_train_run):
    page = (two_train_run / "report.html").read_text(encoding="utf-8")
    events = json.loads((two_train_run / "summary.json").read_text())["events"]
    lap = next(ev for ev in events if ev["kind"] == "lap")
    assert f"train {lap['train']} completed a lap in {lap['lap_time']:.1f} s." in page
    rel = next(ev for ev in events if ev["kind"] == "block_release")
    assert (f"At {rel['t']:.2f} s, train {rel['train']} was released by {rel['section']} after "
            f"{rel['held_s']:.1f} s held.") in page
    hold = next(ev for ev in events if ev["kind"] == "block_hold")
    assert f"train {hold['train']} was held by {hold['section']}: the block ahead was occupied." in page
    assert "train red was dispatched from station." in page


def test_no_operation_without_blocks(classic_run):
    page = (classic_run / "report.html").read_text(encoding="utf-8")
    assert "operation" not in json.loads((classic_run / "summary.json").read_text())
    for text in ("Operation: stations and blocks", "Block occupancy", 'class="swatch"', "trains an hour"):
        assert text not in page, text


def _synthetic_run() -> RunData:
    """Two one-car trains on a circuit of three blocks, 0–10 s at 1 Hz; blue runs through the station's
    hold into red in block 1."""
    t = np.arange(11.0)
    red = np.array([0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2], float)[:, None]
    blue = np.array([2, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1], float)[:, None]
    trains = [TrainData(name=n, cars=[1], wheels="coaster", series={"block": b, "s": np.zeros_like(b)},
                        summary={}, track_name="loop", colour=c)
              for n, b, c in (("red", red, "#cd1e23"), ("blue", blue, "#1e5adc"))]
    events = [{"t": 1.0, "train": "red", "car": 1, "kind": "dispatch", "section": "st"},
              {"t": 3.9, "train": "blue", "car": 1, "kind": "block_overrun", "section": "st", "speed": 2.0,
               "block_ahead_held_by": "red"},
              {"t": 4.0, "train": "blue", "car": 1, "kind": "collision", "other_train": "red", "other_car": 1,
               "closing_speed": 1.5},
              {"t": 4.0, "train": "red", "car": 1, "kind": "collision", "other_train": "blue", "other_car": 1,
               "closing_speed": 1.5},
              {"t": 7.0, "train": "red", "car": 1, "kind": "block_hold", "section": "lift"},
              {"t": 9.5, "train": "red", "car": 1, "kind": "stalled", "section": "lift"}]
    lanes = {("loop", 0): BlockLane("loop", 0, "st", "station", 0.0),
             ("loop", 1): BlockLane("loop", 1, "lift", "lift", 30.0),
             ("loop", 2): BlockLane("loop", 2, "section[3]", "brake", 200.0)}
    return RunData(path=Path("synthetic"), summary={"events": events, "operation": {}}, t=t, trains=trains,
                   title="synthetic", description="", block_lanes=lanes)


def test_timeline_marks_collisions_deadlocks_and_shared_blocks():
    run = _synthetic_run()
    svg_text, facts = block_timeline(run)
    # red stays in blocks 0, 1, 2; blue in 2, 0, 1: three stays each
    assert facts["bars"] == 6 and facts["lanes"] == 3
    assert facts["dispatches"] == 1 and facts["collisions"] == 2 and facts["holds"] == 1 and facts["overruns"] == 1
    # blue entered red's block 1 at t = 4 and both stayed to t = 8
    assert [(s["k"], s["i0"], s["i1"]) for s in facts["shared"]] == [(1, 4, 8)]
    svg = ET.fromstring(svg_text)
    assert len(_shapes(_groups(svg, "blocks-collisions"))) == 2
    assert len(_shapes(_groups(svg, "blocks-overruns"))) == 1
    text = " ".join(el.text or "" for el in svg.iter(f"{SVG}text"))
    assert "stalled at 9.5 s: red held at lift longer than max_hold" in text and "two trains in one block" in text
    assert "block 2: section[3] (brake)" in text and "block 0: st (station)" in text
    # the open hold runs to the end of the run
    holds = _groups(svg, "blocks-holds-")
    assert len(holds) == 1 and holds[0].get("id") == "blocks-holds-1"


def test_operation_event_sentences():
    run = _synthetic_run()
    text = events_in_words(run, Units("metric"))
    assert f"car 1 of blue collided with car 1 of red at s = 0.0 m, closing at {1.5 * KMH:.1f} km/h." in text
    assert "train red had been held by lift longer than max_hold: the blocks are deadlocked" in text
    assert "train red was dispatched from st." in text
    assert ("train blue ran through the end of st, which was holding it for red ahead, at "
            f"{2.0 * KMH:.1f} km/h: the section cannot stop it.") in text
    from trackrider.report.page import _operation_event

    who, words, after = _operation_event({"t": 3.0, "train": "blue", "car": 1, "kind": "block_overrun",
                                          "section": "mid brake", "speed": 5.0, "block_ahead_held_by": "red"},
                                         Units("metric"))
    assert (who + " " + words + after) == ("train blue ran through the end of mid brake, which was holding it for "
                                           "red ahead, at 18.0 km/h: the section cannot stop it")


def test_intervals_and_shared_blocks():
    assert intervals(np.array([0, 1, 1, 0, 1, 0, 0, 1], bool)) == [(1, 2), (4, 4), (7, 7)]
    assert intervals(np.zeros(4, bool)) == []
    visits = [{"train": "a", "track": "x", "k": 0, "i0": 0, "i1": 5},
              {"train": "b", "track": "x", "k": 0, "i0": 6, "i1": 9},      # after a: fine
              {"train": "a", "track": "x", "k": 1, "i0": 3, "i1": 9},
              {"train": "b", "track": "x", "k": 1, "i0": 9, "i1": 12}]     # one common instant: shared
    assert shared_blocks(visits) == [{"track": "x", "k": 1, "trains": ("a", "b"), "i0": 9, "i1": 9}]


def test_deadlocked_ride(tmp_path):
    """max_hold = 5 s: blue, held on the final brake while red loads in the station, stalls the run at 5 s."""
    out = tmp_path / "stalled"
    result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / "two_train_coaster.toml"), "--out", str(out),
                                      "--duration", "60", "--set", "operation.max_hold=5", "-q", "--report"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "stalled"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "the blocks are deadlocked (see the events)" in page
    assert ("train blue had been held by final brake longer than max_hold: the blocks are deadlocked and the "
            "run ends.") in page
    assert "<b>Throughput</b>: not measured" in page
    svg = _timeline_svg(page)
    text = " ".join(el.text or "" for el in svg.iter(f"{SVG}text"))
    assert "stalled at 5.0 s: blue held at final brake longer than max_hold" in text
    # the hold still on at the end is drawn (hatched, on the final brake's lane 3)
    assert [g.get("id") for g in _groups(svg, "blocks-holds-")] == ["blocks-holds-3"]
