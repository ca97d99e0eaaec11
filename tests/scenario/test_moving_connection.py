"""A scenario's connections to a track on a moving body (docs/scenarios.md, "Moving tracks"):
not checked for alignment when loaded (the turntable's deck meets its road only after the turn),
an end–end one or a switch across bodies is one `error:` line naming the key."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.scenario import build_world, load_scenario

ROOT = Path(__file__).resolve().parents[2]
TURNTABLE = (ROOT / "scenarios" / "turntable.toml").read_text(encoding="utf-8")


def test_a_connection_to_a_moving_track_is_not_checked_for_alignment_when_built(tmp_path):
    """The deck's end starts 24 m from the road it joins: the world builds all the same."""
    p = tmp_path / "t.toml"
    p.write_text(TURNTABLE, encoding="utf-8")
    w = build_world(load_scenario(p))
    names = w.track_names
    assert [(names[c["a"][0]], c["a"][1], names[c["b"][0]], c["b"][1]) for c in w._connections] == \
        [("deck_track", 1, "west_road", 0)]


@pytest.mark.parametrize("old, new, expected", [
    ('b = "west_road:start"', 'b = "west_road:end"',
     "connection[0].b: a connection to a track on another body joins an end to a start"),
])
def test_a_connection_to_a_moving_track_that_cannot_be_crossed_is_an_error(tmp_path, old, new, expected):
    assert old in TURNTABLE
    p = tmp_path / "t.toml"
    p.write_text(TURNTABLE.replace(old, new), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(p), "--out", str(out)])
    assert r.exit_code == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], r.stderr
    assert not out.exists()
