"""Sizes derived from values are checked before anything is allocated (docs/scenarios.md, "Limits")."""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest

import trackrider as tr
from trackrider.curves import Track
from trackrider.curves.segments import MIN_RADIUS, build_segment_curve
from trackrider.errors import InputError


@pytest.mark.parametrize("radius", [1e-9, 8e-6, 0.4])
def test_a_radius_below_the_resolvable_one_is_refused_at_once(radius):
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"segments\[1\]\.end_radius.*smallest radius"):
        build_segment_curve([{"type": "straight", "length": 5.0},
                             {"type": "clothoid", "length": 5.0, "end_radius": radius}])
    assert time.perf_counter() - t0 < 1.0
    build_segment_curve([{"type": "arc", "radius": MIN_RADIUS, "angle": 90.0}])   # the limit itself is fine


def test_too_many_frame_nodes_are_refused_before_allocating():
    # 1000 turns of the tightest helix ... times 40 of them: beyond the node limit
    segs = [{"type": "helix", "radius": 0.5, "pitch": 1.0, "turns": 1000.0}] * 40
    with pytest.raises(InputError, match="frame nodes"):
        build_segment_curve(segs)


@pytest.mark.parametrize("value", [1e300, -2e6])
def test_absurd_coordinates_are_bad_input_naming_the_line(tmp_path, value):
    f = tmp_path / "c.csv"
    rows = [[i * 10.0, 0.0, 0.0] for i in range(10)]
    rows[3][1] = value
    f.write_text("x,y,z\n" + "".join(f"{x!r},{y!r},{z!r}\n" for x, y, z in rows))
    with pytest.raises(InputError, match=r"line 5: coordinate .* beyond"):
        tr.load_curve(f)


def test_points_spanning_more_than_the_longest_track_are_refused(tmp_path, monkeypatch):
    """Refused from the points alone, before any fit (a fit over 300 km would take long)."""
    import trackrider.curves.track as track_module

    pts = np.column_stack([np.linspace(0.0, 3e5, 10), np.linspace(0.0, 1e3, 10), np.zeros(10)])
    monkeypatch.setattr(track_module, "SplineCurve", lambda *a, **k: pytest.fail("fitted before the check"))
    with pytest.raises(InputError, match=r"^points: the points span 300\.002 km, more than a track may be \(200 km\)"):
        Track.from_points(pts)


def test_a_kinked_polyline_is_reported_with_s_and_point():
    pts = np.array([[0, 0, 0], [10, 0, 0], [20, 0, 0], [20.2, 0.1, 0], [35, 0, 0], [50, 0, 0]], float)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        track = Track.from_points(pts)
    text = " | ".join(str(w.message) for w in caught)
    assert track.length > 1.02 * 50.0
    assert "longer than the polyline" in text and "s = " in text and "point" in text
    assert "radius falls to" in text


def test_smooth_curves_are_not_reported():
    s = np.linspace(0, 2 * math.pi, 60)
    pts = np.column_stack([40 * np.cos(s), 40 * np.sin(s), 5 * np.sin(2 * s)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Track.from_points(pts[:-1], closed=True)


@pytest.mark.slow
def test_a_76_km_railway_curve_is_checked_fast(tmp_path):
    """A long line is not bad input: 38 000 points over 76 km load and report in seconds."""
    rng = np.random.default_rng(1)
    h = 0.0
    x = y = 0.0
    rows = []
    while len(rows) * 2.0 < 76_000:
        curv = rng.choice([0.0, 1 / 1200, -1 / 1500])
        for _ in range(int(rng.uniform(500, 3000) / 2.0)):
            h += curv * 2.0
            x += 2.0 * math.cos(h)
            y += 2.0 * math.sin(h)
            rows.append(f"{x:.3f},{y:.3f},0\n")
    f = tmp_path / "line.csv"
    f.write_text("x,y,z\n" + "".join(rows))
    from trackrider.curves import curve_report

    t0 = time.perf_counter()
    report = curve_report(f)
    assert report["length"] > 76_000
    assert time.perf_counter() - t0 < 20
