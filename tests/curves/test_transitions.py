"""Transitions in the segment builders: arcs and helices eased in and out, the clothoid loop
(trackrider/curves/transitions.py), against closed forms."""
import math

import numpy as np
import pytest

from trackrider.curves import Track, arc, clothoid, helix, loop, straight
from trackrider.curves.segments import build_segment_curve, start
from trackrider.curves.transitions import loop_length
from trackrider.errors import InputError


def _kappa(curve, s):
    return np.linalg.norm(curve.eval(np.asarray(s, float))[2], axis=1)


def test_arc_with_transition_turns_its_angle_with_curvature_ramped_linearly():
    R, L, angle = 20.0, 10.0, 90.0
    c = build_segment_curve([straight(10.0), arc(R, angle, transition=L), straight(10.0)])
    arc_len = math.radians(angle) * R - L          # the two clothoids turn L/R between them
    assert c.length == pytest.approx(20.0 + 2 * L + arc_len, rel=1e-12)
    s = 10.0 + np.linspace(0.0, L, 11)
    assert _kappa(c, s) == pytest.approx((s - 10.0) / (R * L), abs=1e-12)        # 0 → 1/R linearly
    mid = 10.0 + L + np.linspace(0.0, arc_len, 7)
    assert _kappa(c, mid) == pytest.approx(np.full(7, 1.0 / R), rel=1e-12)
    P, T, _, _ = c.eval(np.array([c.length]))
    assert T[0] == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)                     # turned 90° left
    # the curve is symmetric about the bisector: the exit lies where the mirror image of the entry does
    assert P[0, 0] - 10.0 == pytest.approx(P[0, 1] - 10.0, abs=1e-9)


def test_pitch_arc_and_helix_transitions():
    c = build_segment_curve([straight(5.0), arc(20.0, 30.0, axis="pitch", transition=5.0)])
    T = c.eval(np.array([c.length]))[1][0]
    assert math.degrees(math.asin(T[2])) == pytest.approx(30.0, abs=1e-9)
    grade = math.degrees(math.atan(10.0 / (2 * math.pi * 15.0)))
    c = build_segment_curve([start(pitch=grade), helix(15.0, 10.0, 2.0, transition=8.0)])
    s = np.linspace(0.0, c.length, 400)
    _, T, _, _ = c.eval(s)
    assert np.degrees(np.arcsin(T[:, 2])) == pytest.approx(np.full(400, grade), abs=1e-9)   # the grade is kept
    k_helix = 15.0 / (15.0 ** 2 + (10.0 / (2 * math.pi)) ** 2)
    assert _kappa(c, [4.0])[0] == pytest.approx(0.5 * k_helix, rel=1e-9)            # half-way up its ramp
    assert T[-1][:2] == pytest.approx(T[0][:2], abs=1e-9)                           # two whole turns


def test_transition_too_long_is_refused_naming_the_key():
    with pytest.raises(InputError, match=r"segments\[1\]\.transition: transitions of 40 m turn an arc by 114.6°"):
        build_segment_curve([straight(1.0), arc(20.0, 90.0, transition=40.0)])
    with pytest.raises(InputError, match=r"segments\[1\]\.transition"):
        build_segment_curve([straight(1.0), helix(10.0, 5.0, 0.1, transition=20.0)])
    with pytest.raises(InputError, match=r"segments\[0\]\.entry_radius: applies to a clothoid loop"):
        build_segment_curve([loop(8.0, entry_radius=20.0)])
    with pytest.raises(InputError, match=r"segments\[0\]\.entry_radius: must be at least"):
        build_segment_curve([loop(8.0, transition="clothoid", entry_radius=5.0)])
    with pytest.raises(InputError, match=r"segments\[0\]\.transition: must be one of none, clothoid"):
        build_segment_curve([loop(8.0, transition="euler")])


@pytest.mark.parametrize("entry_radius", [math.inf, 20.0])
def test_clothoid_loop_closed_form(entry_radius):
    """Curvature linear in s from 1/entry_radius to 1/radius at the top (the highest point, tangent level)
    and back; the exit has the entry's tangent, `offset` along the loop's axis."""
    R, off = 7.0, 2.1
    segs = [straight(10.0), loop(R, offset=off, transition="clothoid", entry_radius=entry_radius), straight(10.0)]
    c = build_segment_curve(segs)
    L = loop_length(R, off, entry_radius)
    assert c.length == pytest.approx(20.0 + L, rel=1e-12)
    inv = 1.0 / R + (0.0 if math.isinf(entry_radius) else 1.0 / entry_radius)
    alpha = math.atan(off * inv / (4 * math.pi))
    k_entry = 0.0 if math.isinf(entry_radius) else math.cos(alpha) ** 2 / entry_radius
    k_top = math.cos(alpha) ** 2 / R                      # a helix's curvature: cos²α / radius
    half = L / 2                                         # entered level: the top is half-way round
    s = 10.0 + np.linspace(0.0, half, 41)
    assert _kappa(c, s) == pytest.approx(k_entry + (k_top - k_entry) * (s - 10.0) / half, rel=1e-9, abs=1e-12)
    s2 = 10.0 + half + np.linspace(0.0, half - 1e-9, 41)       # (at 10 + L the straight begins)
    assert _kappa(c, s2) == pytest.approx(k_top + (k_entry - k_top) * (s2 - 10.0 - half) / half, rel=1e-9,
                                          abs=1e-12)
    ss = np.linspace(0.0, c.length, 20001)
    P, T, _, _ = c.eval(ss)
    top = int(np.argmax(P[:, 2]))
    assert ss[top] == pytest.approx(10.0 + half, abs=2 * c.length / 20000)
    assert T[top][2] == pytest.approx(0.0, abs=1e-3) and T[top][0] < -0.99
    assert T[-1] == pytest.approx([1.0, 0.0, 0.0], abs=1e-12)
    a = np.array([math.sin(alpha), math.cos(alpha), 0.0])              # entered along +x, loop to the left
    ends = c.eval(np.array([10.0, 10.0 + L]))[0]
    assert float(np.dot(ends[1] - ends[0], a)) == pytest.approx(off, abs=1e-9)
    assert ends[1][2] == pytest.approx(ends[0][2], abs=1e-9)           # entered level: leaves at its height


def test_clothoid_loop_entered_climbing_tops_out_level():
    c = build_segment_curve([start(pitch=17.9), loop(6.5, transition="clothoid", entry_radius=12.0), straight(1.0)])
    ss = np.linspace(0.0, c.length, 20001)
    P, T, P2, _ = c.eval(ss)
    top = int(np.argmax(P[:, 2]))
    assert int(np.argmax(np.linalg.norm(P2, axis=1))) == pytest.approx(top, abs=2)   # tightest at the top
    assert math.degrees(math.asin(T[-1][2])) == pytest.approx(17.9, abs=1e-9)


def test_a_clothoids_g_ramps_linearly_with_s_at_constant_speed():
    """A car at constant speed v on a level clothoid feels lateral G = v² s / (R L g): linear in s
    (the design check's rider G at the rail; ``tests/check/test_design.py`` rides it)."""
    from trackrider.check.design import _curvature_vector, _rider_g

    R, L, v, g = 50.0, 40.0, 15.0, 9.81
    tr = Track.from_segments([straight(20.0), clothoid(L, end_radius=R), arc(R, 10.0)])
    s = np.linspace(0.0, L, 81)
    fr = tr.frames(20.0 + s)
    G = _rider_g(_curvature_vector(fr), fr.binormal, fr.normal, np.full(81, v * v), g)
    assert G[:, 1] == pytest.approx(v * v * s / (R * L * g), abs=1e-9)
    assert G[:, 0] == pytest.approx(np.ones(81), abs=1e-9)
