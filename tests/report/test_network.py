"""The report's network section (docs/report.md): a plan of the tracks, switches and connections
of a track network, and each switch's settings and throws, for scenarios/passing_loop.toml and
scenarios/funicular.toml; none for a layout of one track."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from trackrider.report.data import load_run


@pytest.fixture(scope="module")
def loop_run(run_with_report):
    """passing_loop for 40 s: the west points thrown to the loop and back to main."""
    return run_with_report("passing_loop", 40)


def _section(page: str, anchor: str) -> str:
    i = page.index(f'id="{anchor}"')
    j = page.find("<h2", i + 1)
    return page[i: j if j > 0 else len(page)]


def test_the_plan_puts_tracks_and_switches_where_the_scenario_has_them(loop_run):
    run = load_run(loop_run)
    plan = run.network
    assert [name for name, _p in plan["tracks"]] == ["west", "main", "loop", "east"]
    # west is 400 m along x from the origin, main 300 m on from its end: the points at x = 400 and 700 m
    west, east = plan["switches"]
    np.testing.assert_allclose(west["point"], [400.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(east["point"], [700.0, 0.0, 0.0], atol=1e-6)
    assert [w for w, _p in west["branches"]] == ["main", "loop"]
    # each branch's stretch starts at the switch point (the east points' branches end there)
    for sw in (west, east):
        for _w, p in sw["branches"]:
            assert min(np.linalg.norm(p[0] - sw["point"]), np.linalg.norm(p[-1] - sw["point"])) < 1e-6
    summary = json.loads((loop_run / "summary.json").read_text())
    throws = summary["switches"]["west points"]["throws"]
    assert [to for _t, to in west["throws"]] == [th["to"] for th in throws] == ["loop", "main"]
    assert west["position"] == "main" and west["end"] == summary["switches"]["west points"]["position"]
    assert plan["connections"] == []


def test_the_page_shows_the_network_plan_and_the_switch_table(loop_run):
    page = (loop_run / "report.html").read_text()
    net = _section(page, "network")
    svg = net[net.index("<svg"): net.index("</svg>")]
    for name in ("west", "main", "loop", "east", "west points", "east points"):
        assert re.search(rf">\s*{re.escape(name)}\b", svg), name
    rows = re.findall(r"<tr><td class=\"l\">(.*?)</td>", net)
    assert rows == ["west points", "east points"]
    summary = json.loads((loop_run / "summary.json").read_text())
    for th in summary["switches"]["west points"]["throws"]:
        assert f"{th['t']:.1f} → {th['to']}" in net


def test_the_funicular_plan_has_its_loop_at_the_top_of_the_lower_track(run_with_report):
    run = load_run(run_with_report("funicular", 2))
    lower, upper = run.network["switches"]
    # the lower track: 45 m at 20° from the origin, heading along x
    c, s = math.cos(math.radians(20.0)), math.sin(math.radians(20.0))
    np.testing.assert_allclose(lower["point"], [45.0 * c, 0.0, 45.0 * s], atol=1e-6)
    assert upper["position"] == "right:end" and lower["position"] == "left"
    page = (run.path / "report.html").read_text()
    assert 'id="network"' in page


def test_a_single_track_has_no_network_section(classic_run):
    assert load_run(classic_run).network is None
    assert 'id="network"' not in (classic_run / "report.html").read_text()


def test_the_block_timeline_shows_every_block_a_train_is_in_on_the_network(loop_run):
    # passing_loop's block sections: west home, the main signal, the loop station and east home,
    # each a block of the network, and the stretch of "east" between the east points and east home
    # that the main signal's and the loop station's blocks share (after the merge). The westbound
    # train starts on "east", running towards −s, in east home's block; the eastbound train enters
    # west home's block at 300 m along "west"; each has bars in the lanes it visits
    from trackrider.report.figures import block_timeline

    run = load_run(loop_run)
    summary = json.loads((loop_run / "summary.json").read_text())
    blocks = [["west home"], ["main signal"], ["loop station"], ["east home"], ["main signal", "loop station"]]
    assert summary["operation"]["network_blocks"] == blocks
    assert list(run.block_lanes) == [("", k) for k in range(5)]
    assert [lane.label for lane in run.block_lanes.values()][:4] == ["west home", "main signal", "loop station",
                                                                     "east home"]
    assert run.block_lanes[("", 4)].type == "shared"
    west = run.train("westbound").series["block"]
    assert np.all(west[0] == 3)
    svg, facts = block_timeline(run)
    assert facts["lanes"] == 5
    for train, k in (("westbound", 3), ("westbound", 4), ("westbound", 1), ("eastbound", 0), ("eastbound", 2)):
        assert f'id="blocks-visits-{train}-{k}"' in svg, (train, k)
