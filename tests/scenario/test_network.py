"""Network keys of a scenario: connections, switches, routes, ``start at`` (docs/scenarios.md)."""
from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.scenario import build_world, load_scenario

pytestmark = pytest.mark.usefixtures("warm_kernels")

NET = """
[simulation]
duration = 3.0
dt = 0.001
record_hz = 50

[[track]]
name = "a"
segments = [ { type = "start", pitch = -5.0 }, { type = "straight", length = 30.0 } ]

[[track]]
name = "b"
segments = [ { type = "start", at = "a:end" }, { type = "arc", radius = 40.0, angle = 30.0 },
             { type = "straight", length = 30.0 } ]

[[track]]
name = "c"
segments = [ { type = "start", at = "a:12" }, { type = "arc", radius = 60.0, angle = -20.0 },
             { type = "straight", length = 30.0 } ]

[[connection]]
a = "a:end"
b = "b:start"

[[switch]]
name = "points"
at = "a:12"
branches = ["a", "c"]
position = "a"
throw_time = 0.5
program = [[2.5, "c"]]

[[train]]
name = "t"
track = "a"
cars = 2
start_s = 5.0
start_speed = 8.0
route = ["a", "b"]
[train.car]
mass = 500.0
"""


def write(tmp_path, text):
    p = tmp_path / "net.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_network_scenario_loads_builds_and_runs_with_the_track_column(tmp_path):
    path = write(tmp_path, NET)
    sc = load_scenario(path)
    # `at` took the point of the earlier track: c starts at a's 12 m, heading and pitch with it
    b0 = sc.tracks[2].track.frames(np.array([0.0]))
    a12 = sc.tracks[0].track.frames(np.array([12.0]))
    np.testing.assert_allclose(b0.position, a12.position, atol=1e-9)
    np.testing.assert_allclose(b0.tangent, a12.tangent, atol=1e-9)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.stderr
    import json

    summary = json.loads((out / "summary.json").read_text())
    assert summary["columns"][-1] == "track"
    kinds = [e["kind"] for e in summary["events"]]
    assert kinds.count("track_change") == 2 and "switch_set" in kinds
    assert summary["switches"]["points"]["throws"][0]["to"] == "c"
    header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    assert header[-1] == "track"


@pytest.mark.parametrize("old,new,expected", [
    ('b = "b:start"', 'b = "b:end"', ["connection[0].b", "mm apart"]),
    ('segments = [ { type = "start", at = "a:end" }, { type = "arc"',
     'segments = [ { type = "start", at = "a:end", heading = 3.0 }, { type = "arc"', ["segments[0].heading"]),
    ('{ type = "start", at = "a:12" }', '{ type = "start", at = "a:12.3" }', ["switch[0]", "branch 1", "mm apart"]),
    ('b = "b:start"', 'b = "q:start"', ["connection[0].b", "no track named 'q'"]),
    ('position = "a"', 'position = "d"', ["switch[0].position", "not one of the branches"]),
    ('route = ["a", "b"]', 'route = ["b"]', ["train[0].route[0]"]),
    ('route = ["a", "b"]', 'route = ["a", "c", "b"]', ["train[0].route[2]", "'b' is not joined to 'c'"]),
    ('route = ["a", "b"]\n', 'route = ["a", "b"]\n[[section]]\ntype = "station"\ntrack = "b"\nfrom = 10.0\n'
     'to = 13.0\nspeed = 1.0\nmax_force = 1000.0\n',
     ["section[0]", "shorter than train 't'", "route runs on track 'b'", "never be cleared"]),
    ('program = [[2.5, "c"]]', 'program = [[2.5, "x"]]', ["switch[0].program[0]"]),
    ('program = [[2.5, "c"]]', 'program = [[1e300, "c"]]', ["switch[0].program[0]"]),
    ('throw_time = 0.5', 'throw_time = 1e300', ["switch[0].throw_time", "limit 3600"]),
    ('at = "a:12"\nbranches', 'at = "a"\nbranches', ["switch[0].at", "TRACK:S"]),
    ('[[switch]]', '[[connection]]\na = "a:end"\nb = "c:end"\n\n[[switch]]', ["connection[1].a", "already connected"]),
])
def test_bad_network_keys_are_one_error_line_naming_the_key(tmp_path, old, new, expected):
    assert old in NET
    path = write(tmp_path, NET.replace(old, new, 1))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    err = result.stderr
    assert err.startswith("error: ") and err.count("\n") == 1 and str(path) in err, err
    for piece in expected:
        assert piece in err, (piece, err)


def test_a_connection_that_does_not_meet_is_refused_when_built(tmp_path):
    # the tangents differ by 2°: refused with the angle named
    text = NET.replace('{ type = "start", at = "a:end" }', '{ type = "start", position = [29.886, 0.0, -2.6147], '
                       'heading = 0.0, pitch = -7.0 }')
    sc = load_scenario(write(tmp_path, text))
    with pytest.raises(Exception, match=r"connection\[0\]\.b: the (ends are|tangents differ)"):
        build_world(sc)


def test_a_start_at_point_carries_its_roll(tmp_path):
    # "a" banks to 25° by its end; "b" starts there with no roll of its own: it takes the 25° (its
    # up axis is a's to 1e-9) and the connection between them builds (without the roll the up
    # axes would differ by 25°: refused)
    text = NET.replace('name = "a"\n', 'name = "a"\nroll = [[0.0, 0.0], [20.0, 25.0], [30.0, 25.0]]\n', 1)
    sc = load_scenario(write(tmp_path, text))
    a, b = sc.tracks[0].track, sc.tracks[1].track
    fa, fb = a.frames(np.array([a.length])), b.frames(np.array([0.0, 5.0]))
    np.testing.assert_allclose(fb.roll, 25.0, atol=1e-9)
    np.testing.assert_allclose(fb.binormal[0], fa.binormal[0], atol=1e-9)
    build_world(sc)


def test_two_trains_starting_in_one_block_of_a_network_are_refused(tmp_path):
    # a block brake on "a" (1–11 m): its block runs on along a, over the points onto c, and across
    # the connection along b. Train t starts in it on a, train u on b — another track, the same
    # block: one error line naming u's start and both trains, exit 2, nothing written
    text = NET + ('\n[[train]]\nname = "u"\ntrack = "b"\ncars = 1\nstart_s = 40.0\n[train.car]\nmass = 500.0\n'
                  '\n[[section]]\ntype = "brake"\nname = "home"\ntrack = "a"\nfrom = 1.0\nto = 11.0\nblock = true\n'
                  'max_force = 5000.0\n')
    path = write(tmp_path, text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and not out.exists()
    err = result.stderr
    assert err.startswith("error: ") and err.count("\n") == 1 and str(path) in err, err
    for piece in ("train[1].start_s", "train 'u' starts in the block of home", "where train 't' is"):
        assert piece in err, (piece, err)
    # u further on, past a second block brake on b: the trains start in different blocks
    ok = text + ('\n[[section]]\ntype = "brake"\nname = "b home"\ntrack = "b"\nfrom = 10.0\nto = 30.0\n'
                 'block = true\nmax_force = 5000.0\n')
    load_scenario(write(tmp_path, ok))
