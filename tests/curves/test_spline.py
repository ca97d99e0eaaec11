"""Spline fit and arc-length parametrisation against closed forms."""
import numpy as np
import pytest

from trackrider.curves import Track

from tests.curves.curves_helpers import helix_points


def test_circle_curvature_torsion_length():
    R = 10.0
    t = np.linspace(0, 2 * np.pi, 121)[:-1]
    tr = Track.from_points(np.column_stack([R * np.cos(t), R * np.sin(t), np.zeros_like(t)]), closed=True)
    assert tr.closed
    assert tr.length == pytest.approx(2 * np.pi * R, rel=1e-6)  # arc length exact to 1e-6
    f = tr.frames(np.linspace(0, tr.length, 997))
    assert np.allclose(f.curvature, 1 / R, rtol=2e-3)  # κ = 1/R within 0.2 %
    assert np.abs(f.torsion).max() < 1e-6  # τ = 0


@pytest.mark.parametrize("r,c", [(5.0, 1.0), (15.0, 3.0 / (2 * np.pi))])
def test_helix_curvature_torsion_length(r, c):
    tr = Track.from_points(helix_points(r, c, 3.0, 500))
    assert tr.length == pytest.approx(6 * np.pi * np.hypot(r, c), rel=1e-6)
    s = np.linspace(0, tr.length, 800)
    f = tr.frames(s)
    assert np.allclose(f.curvature, r / (r * r + c * c), rtol=2e-3)  # within 0.2 %
    assert np.allclose(f.torsion, c / (r * r + c * c), rtol=1e-2)  # within 1 %, sign kept (right-handed: τ > 0)


def test_unit_speed_by_finite_differences():
    tr = Track.from_points(helix_points(4.0, 0.7, 2.0, 300))
    s = np.linspace(0.01, tr.length - 0.01, 1000)
    h = 1e-3
    speed = np.linalg.norm(tr.frames(s + h).position - tr.frames(s - h).position, axis=1) / (2 * h)
    assert np.abs(speed - 1).max() < 1e-6  # |P'(s)| = 1 within 1e-6


def test_lengths_of_analytic_curves():
    # a parabola z = x²/(2a) over x ∈ [0, X]: length in closed form
    a, X = 20.0, 30.0
    x = np.linspace(0, X, 400)
    tr = Track.from_points(np.column_stack([x, np.zeros_like(x), x * x / (2 * a)]))
    u = X / a
    exact = a / 2 * (u * np.sqrt(1 + u * u) + np.arcsinh(u))
    assert tr.length == pytest.approx(exact, rel=1e-6)
    # a straight: exact
    x = np.linspace(0, 50, 11)
    tr = Track.from_points(np.column_stack([x, 2 * x, -x]))
    assert tr.length == pytest.approx(50 * np.sqrt(6), rel=1e-12)


def test_continuity_at_knots():
    """Position, tangent, curvature and torsion have no jump across the spline's knots (quintic: C4)."""
    t = np.linspace(0, 2 * np.pi, 40)
    pts = np.column_stack([np.sin(t) + 2 * np.sin(2 * t), np.cos(t) - 2 * np.cos(2 * t), -np.sin(3 * t)]) * 10
    tr = Track.from_points(pts[:-1], closed=True)
    ks = tr.point_s[1:-1]
    eps = 1e-7
    fa, fb = tr.frames(ks - eps), tr.frames(ks + eps)
    assert np.abs(fa.position - fb.position).max() < 1e-6
    assert np.abs(fa.tangent - fb.tangent).max() < 1e-6
    assert np.abs(fa.curvature - fb.curvature).max() < 1e-6
    assert np.abs(fa.torsion - fb.torsion).max() < 1e-5


def test_closed_track_is_periodic():
    t = np.linspace(0, 2 * np.pi, 50)[:-1]
    pts = np.column_stack([30 * np.cos(t), 20 * np.sin(t), 3 * np.sin(2 * t)])
    for frame in ("up", "minimal"):
        tr = Track.from_points(pts, closed=True, frame=frame)
        a, b = tr.frames(np.array([1e-9, tr.length - 1e-9]))[0], tr.frames(np.array([tr.length - 1e-9]))[0]
        for name in ("position", "tangent", "normal", "binormal", "darboux"):
            assert np.abs(getattr(a, name) - getattr(b, name)).max() < 1e-6, (frame, name)
        assert tr.frame(tr.length + 5.0).position == pytest.approx(tr.frame(5.0).position, abs=1e-9)


def test_fit_10000_points_is_fast():
    import time

    pts = helix_points(20.0, 2.0, 100.0, 10_000)
    t0 = time.perf_counter()
    tr = Track.from_points(pts)
    dt = time.perf_counter() - t0
    assert dt < 10.0  # target: a few seconds at most (bench/track_eval.py measures it)
    assert tr.length == pytest.approx(200 * np.pi * np.hypot(20.0, 2.0), rel=1e-6)


def test_closest_s_recovers_arc_length():
    tr = Track.from_points(helix_points(6.0, 1.0, 2.0, 300))
    s = np.linspace(1.0, tr.length - 1.0, 25)
    f = tr.frames(s)
    off = f.position + 0.3 * f.binormal - 0.2 * f.normal  # displaced across the track, not along it
    assert np.abs(tr.closest_s(off) - s).max() < 1e-6
    assert tr.closest_s(f.position[3]) == pytest.approx(s[3], abs=1e-8)


def test_gauss_legendre_rule_is_numpys_to_the_bit():
    """The 8-point rule written out in ``curves._kernels`` is numpy's ``leggauss(8)`` mapped to [0, 1], exactly
    (so the arc lengths, and every track, are those computed from it)."""
    from trackrider.curves import _kernels as K

    x, w = np.polynomial.legendre.leggauss(8)
    assert K.GL_NODES.tobytes() == np.ascontiguousarray(0.5 * (x + 1.0)).tobytes()
    assert K.GL_WEIGHTS.tobytes() == np.ascontiguousarray(0.5 * w).tobytes()
    assert K.GL_NODES.flags.c_contiguous and K.GL_WEIGHTS.flags.c_contiguous
    assert abs(np.sum(K.GL_WEIGHTS * K.GL_NODES ** 15) - 1.0 / 16.0) < 1e-15     # exact to degree 15
