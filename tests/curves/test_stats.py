"""A layout's figures (drops, steepest angle, inversions, bank), ``trackrider curve SCENARIO.toml``
and its ``--plot``, and the curve-file export that loads back as the same track."""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.curves import Track, load_curve, save_curve, save_nl2
from trackrider.curves.io import (EXPORT_TOL_POSITION, EXPORT_TOL_RADIUS, export_deviation, export_samples)
from trackrider.curves.stats import drops, inversions, layout_figures, zigzag
from trackrider.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

#: a 60° drop between two R = 10 m pitch arcs (27.32 m high), then a loop: known figures
R, STEEP, LONG = 10.0, 60.0, 20.0
DROP = 2 * R * (1 - math.cos(math.radians(STEEP))) + LONG * math.sin(math.radians(STEEP))
KNOWN = [
    {"type": "start", "position": [0.0, 0.0, 40.0], "heading": 0.0, "pitch": 0.0},
    {"type": "straight", "length": 10.0},
    {"type": "arc", "radius": R, "angle": -STEEP, "axis": "pitch"},
    {"type": "straight", "length": LONG},
    {"type": "arc", "radius": R, "angle": STEEP, "axis": "pitch"},
    {"type": "straight", "length": 20.0},
    {"type": "loop", "radius": 10.0},
    {"type": "straight", "length": 30.0},
]


def test_zigzag_drops_and_inversions_of_arrays():
    z = np.array([0.0, 1.0, 2.0, 3.0, 2.99, 3.0, 1.0, 0.0, 0.0, 0.0, 1.0, 5.0, 4.0])
    assert zigzag(z, 0.05) == [0, 5, 9, 11, 12]          # a dip of 1 cm does not end the climb
    s = np.arange(len(z), dtype=float)
    pitch = -np.degrees(np.arctan(np.gradient(z)))
    found = drops(s, z, -pitch)
    assert [d["height"] for d in found] == [3.0, 1.0]
    assert found[0]["s_from"] == 5.0 and found[0]["s_to"] == 9.0
    # the rider's up: upright, over the top of a loop, upright; a roll that dips twice below the
    # horizontal without coming back up in between is one inversion
    up = np.cos(np.radians(np.r_[np.linspace(0, 360, 37), np.zeros(5), 0, 95, 100, 95, 100, 0]))
    assert len(inversions(up)) == 2
    assert inversions(np.ones(10)) == []


def test_layout_figures_of_a_known_drop_and_loop():
    track = Track.from_segments(KNOWN)
    f = layout_figures(track)
    drop = f["biggest_drop"]
    assert drop["height"] == pytest.approx(DROP, abs=1e-3)
    assert drop["steepest_deg"] == pytest.approx(STEEP, abs=0.01)
    assert drop["z_from"] == pytest.approx(40.0, abs=1e-6) and drop["s_from"] <= 10.05
    assert f["z_max"] == pytest.approx(40.0, abs=1e-6)
    assert len(f["inversions"]) == 1
    loop_from = 10 + 2 * R * math.radians(STEEP) + LONG + 20
    assert loop_from < f["inversions"][0]["s_from"] < f["inversions"][0]["s_to"] < loop_from + 2 * math.pi * 10.5
    assert f["min_radius"] == pytest.approx(10.0, rel=1e-3)
    assert f["max_bank_upright"] < 1.0 and f["closed"] is False


def test_curve_prints_a_scenario_tracks_figures_and_plots_it(tmp_path):
    r = runner.invoke(app, ["curve", str(ROOT / "scenarios" / "classic_coaster.toml")])
    assert r.exit_code == 0, r.stderr
    track = load_scenario(ROOT / "scenarios" / "classic_coaster.toml").tracks[0].track
    f = layout_figures(track)
    for line in (f"length:           {track.length:.3f} m", f"biggest drop:     {f['biggest_drop']['height']:.2f} m",
                 f"inversions:       {len(f['inversions'])}", "segments, frame minimal"):
        assert line in r.stdout, line
    png = tmp_path / "two.png"
    r = runner.invoke(app, ["curve", str(ROOT / "scenarios" / "two_train_coaster.toml"), "--track", "circuit",
                            "--plot", str(png)])
    assert r.exit_code == 0, r.stderr
    import imageio.v3 as iio

    img = iio.imread(png)
    assert img.shape[1] == 1100 and img.shape[0] > 400 and np.ptp(img[..., :3]) > 100
    # an existing plot is kept without --overwrite; a curve file plots too
    r = runner.invoke(app, ["curve", str(ROOT / "curves" / "first_drop.csv"), "--plot", str(png)])
    assert r.exit_code == 2 and "--overwrite" in r.stderr
    r = runner.invoke(app, ["curve", str(ROOT / "curves" / "first_drop.csv"), "--plot", str(png), "--overwrite"])
    assert r.exit_code == 0 and "biggest drop" in r.stdout


SEGMENT_COASTERS = ["classic_coaster", "two_train_coaster", "launched_coaster", "suspended_coaster", "force_designed"]


@pytest.mark.parametrize("name", SEGMENT_COASTERS)
def test_nl2_round_trip_of_the_bundled_segment_coasters(name, tmp_path):
    """Written to NoLimits 2's CSV and loaded back: every radius within 1 %, positions within 1 mm, the
    rider's up within 0.1° — checked here independently, every 2 cm, on the file itself."""
    track = load_scenario(ROOT / "scenarios" / f"{name}.toml").tracks[0].track
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # no deviation warning
        out = save_nl2(track, tmp_path / "rt.csv")
    back = load_curve(out)
    assert back.closed == track.closed
    s = np.linspace(0.0, track.length, int(track.length / 0.02) + 1)
    a = track.frames(s)
    b = back.frames(s * back.length / track.length)
    d = b.position - a.position
    d -= np.sum(d * a.tangent, axis=1)[:, None] * a.tangent
    assert np.linalg.norm(d, axis=1).max() < 1e-3
    assert np.degrees(np.arccos(np.clip(np.sum(a.binormal * b.binormal, axis=1), -1, 1))).max() < 0.1
    # radii: within 1 % of the track's own over ±5 cm (where a clothoid meets an arc the curvature
    # bends; radii above 10 km count as straight)
    k = a.curvature
    w = 3
    lo = np.min(np.lib.stride_tricks.sliding_window_view(np.pad(k, w, mode="edge"), 2 * w + 1), axis=1)
    hi = np.max(np.lib.stride_tricks.sliding_window_view(np.pad(k, w, mode="edge"), 2 * w + 1), axis=1)
    kb = b.curvature
    assert np.all(kb <= hi * 1.01 + 1e-4) and np.all(kb >= lo * 0.99 - 1e-4)
    assert 1.0 / kb.max() == pytest.approx(1.0 / k.max(), rel=0.01)    # the smallest radius kept


def test_export_refines_where_the_curvature_changes_and_warns_at_a_jump(tmp_path):
    """A clothoid meeting an arc (a kink in the curvature) needs points closer than 0.5 m there; a
    straight meeting a loop (a jump) cannot be kept by any spline: the export says by how much."""
    smooth = Track.from_segments([{"type": "straight", "length": 20.0},
                                  {"type": "clothoid", "length": 5.0, "end_radius": 8.0, "axis": "pitch"},
                                  {"type": "arc", "radius": 8.0, "angle": 60.0, "axis": "pitch"},
                                  {"type": "clothoid", "length": 5.0, "start_radius": 8.0, "axis": "pitch"},
                                  {"type": "straight", "length": 20.0}])
    uniform = np.linspace(0.0, smooth.length, int(np.ceil(smooth.length / 0.5)) + 1)
    assert not export_deviation(smooth, uniform)["ok"]          # 0.5 m alone is not enough …
    s, dev = export_samples(smooth)
    assert dev["ok"] and dev["position"] < EXPORT_TOL_POSITION and len(s) < 2 * len(uniform)
    assert np.diff(s).min() < 0.2                                # … so it is refined at the joints
    jump = Track.from_segments([{"type": "straight", "length": 20.0}, {"type": "loop", "radius": 10.0},
                                {"type": "straight", "length": 20.0}])
    with pytest.warns(UserWarning, match=r"a radius of .* where the track") as caught:
        save_curve(jump, tmp_path / "jump.json", "json")
    assert "jump.json" in str(caught[0].message)
    _, dev = export_samples(jump)
    assert not dev["ok"] and dev["radius"] > EXPORT_TOL_RADIUS
