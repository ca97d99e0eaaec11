"""Tracks built from segments (a track's `segments`, docs/curves.md)."""
import math

import numpy as np
import pytest

from trackrider.curves import Track, arc, clothoid, helix, loop, straight
from trackrider.curves.segments import start
from trackrider.errors import InputError

from tests.curves.curves_helpers import darboux_fd_error


def test_straight_and_start():
    tr = Track.from_segments([start((1.0, 2.0, 3.0), heading=90.0, pitch=10.0), straight(20.0)])
    assert tr.length == pytest.approx(20.0, rel=1e-12)
    f = tr.frame(20.0)
    p = math.radians(10.0)
    assert f.position == pytest.approx([1.0, 2.0 + 20 * math.cos(p), 3.0 + 20 * math.sin(p)], abs=1e-12)
    assert f.binormal[2] > 0.98 and f.roll == pytest.approx(0.0, abs=1e-9)


def test_arc_pitch_and_yaw():
    tr = Track.from_segments([arc(10.0, 90.0, axis="pitch")])
    f = tr.frame(tr.length)
    assert tr.length == pytest.approx(10 * math.pi / 2, rel=1e-12)
    assert f.position == pytest.approx([10.0, 0.0, 10.0], abs=1e-12)
    assert f.tangent == pytest.approx([0, 0, 1], abs=1e-12)
    tr = Track.from_segments([arc(25.0, -45.0)])  # yaw, negative = right
    f = tr.frames(np.linspace(0, tr.length, 50))
    assert f.curvature == pytest.approx(np.full(50, 1 / 25), rel=1e-12)
    assert f.torsion == pytest.approx(np.zeros(50), abs=1e-12)
    end = f[49]
    assert end.position == pytest.approx([25 * math.sin(math.pi / 4), -25 * (1 - math.cos(math.pi / 4)), 0], abs=1e-9)


def test_yaw_arc_keeps_grade_and_helix_closed_forms():
    r, p = 10.0, 5.0
    c = p / (2 * math.pi)
    grade = math.degrees(math.atan2(c, r))
    tr = Track.from_segments([start(pitch=grade), helix(r, p, 2.0)])
    assert tr.length == pytest.approx(4 * math.pi * math.hypot(r, c), rel=1e-12)
    f = tr.frames(np.linspace(0, tr.length, 100))
    assert f.curvature == pytest.approx(np.full(100, r / (r * r + c * c)), rel=1e-9)
    assert f.torsion == pytest.approx(np.full(100, c / (r * r + c * c)), rel=1e-9)
    assert f[99].position == pytest.approx([0.0, 0.0, 2 * p], abs=1e-9)  # axis vertical: back above the start
    # a yaw arc entered on that grade is the same helix piece
    tr2 = Track.from_segments([start(pitch=grade), arc(r, 720.0)])
    assert tr2.frame(tr2.length).position == pytest.approx([0.0, 0.0, 2 * p], abs=1e-9)


def test_clothoid_curvature_is_linear():
    tr = Track.from_segments([straight(5.0), clothoid(40.0, end_radius=20.0), arc(20.0, 30.0),
                              clothoid(40.0, start_radius=20.0), straight(5.0)])
    s = np.linspace(5.0, 45.0, 81)
    f = tr.frames(s)
    assert f.curvature == pytest.approx((s - 5.0) / 40.0 / 20.0, abs=1e-12)  # κ(s) = s/A², A² = L R
    assert tr.frame(tr.length).curvature == pytest.approx(0.0, abs=1e-12)
    heading = math.degrees(math.atan2(*tr.frame(tr.length).tangent[1::-1]))
    assert heading == pytest.approx(math.degrees(40 / 20) + 30.0, abs=1e-9)  # 2 × L/(2R) + arc


def test_loop_exits_beside_entry():
    R, off = 12.0, 4.0
    tr = Track.from_segments([straight(10.0), loop(R, offset=off, side="right"), straight(10.0)])
    alpha = math.atan2(off / (2 * math.pi), R)
    assert tr.length == pytest.approx(20 + 2 * math.pi * R / math.cos(alpha), rel=1e-12)
    end = tr.frame(tr.length)
    assert end.tangent == pytest.approx([1, 0, 0], abs=1e-12)
    assert end.position[1] == pytest.approx(-off * math.cos(alpha), abs=1e-9)
    assert end.position[2] == pytest.approx(0.0, abs=1e-9)
    f = tr.frames(np.linspace(10.5, tr.length - 10.5, 200))
    assert f.curvature == pytest.approx(np.full(200, R / (R * R + (off / (2 * math.pi)) ** 2)), rel=1e-9)
    assert f.position[:, 2].max() == pytest.approx(2 * R, abs=1e-2)
    assert darboux_fd_error(tr, np.linspace(10.5, tr.length - 10.5, 300)) < 1e-6


def test_closed_segments():
    segs = [straight(50.0), arc(20.0, 180.0), straight(50.0), arc(20.0, 180.0)]
    tr = Track.from_segments(segs, closed=True)
    assert tr.closed and tr.length == pytest.approx(100 + 40 * math.pi, rel=1e-12)
    with pytest.raises(InputError, match="closed = true but the segments end"):
        Track.from_segments(segs[:-1], closed=True)


@pytest.mark.parametrize("segs,where,match", [
    ([{"type": "straight"}], r"segments\[0\]\.length", "missing required key"),
    ([{"type": "straight", "length": -1}], r"segments\[0\]\.length", "must be > 0"),
    ([straight(1), {"type": "arc", "radius": 5, "angle": 10, "axis": "roll"}], r"segments\[1\]\.axis", "one of"),
    ([{"type": "spiral", "length": 3}], r"segments\[0\]\.type", "unknown segment type"),
    ([{"type": "helix", "radius": 5, "turns": 1, "pich": 2}], r"segments\[0\]\.pich", "unknown key"),
    ([straight(1), start()], r"segments\[1\]\.type", "must come first"),
    ([{"type": "arc", "radius": "big", "angle": 10}], r"segments\[0\]\.radius", "must be a number"),
    ([{"type": "clothoid", "length": 10}], r"segments\[0\]\.end_radius", "needs start_radius or end_radius"),
    ([arc(5, 90, "pitch"), arc(5, 10, "yaw")], r"segments\[1\]\.axis", "vertical"),
])
def test_segment_errors_name_the_key(segs, where, match):
    with pytest.raises(InputError, match=match) as e:
        Track.from_segments(segs, source="s.toml")
    assert e.value.where is not None and __import__("re").fullmatch(where, e.value.where)
    assert str(e.value).startswith("s.toml: segments[")


def test_tangent_alone_and_cross_products_equal_the_full_evaluation_to_the_bit():
    """``SegmentCurve.tangent`` (the level-point search of the up frame) and the segments' own cross
    product give the very numbers of ``eval`` and ``np.cross``: a faster build, the same track."""
    from trackrider.curves.segments import _cross

    tr = Track.from_segments([straight(10.0), clothoid(12.0, end_radius=20.0, axis="pitch"),
                              loop(12.0), helix(15.0, 8.0, 1.5), arc(30.0, 60.0)])
    curve = tr._curve
    s = np.concatenate([np.linspace(0.0, tr.length, 777), [0.0, tr.length], curve.s0])
    assert curve.tangent(s).tobytes() == curve.eval(s)[1].tobytes()
    for x in s[::50]:
        assert curve.tangent(np.array([x])).tobytes() == curve.eval(np.array([x]))[1].tobytes()
    rng = np.random.default_rng(3)
    k, a, b = rng.standard_normal(3), rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    assert _cross(k, a).tobytes() == np.cross(k, a).tobytes()
    assert _cross(a, b).tobytes() == np.cross(a, b).tobytes()
