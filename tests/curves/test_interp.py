"""trackrider.curves.interp against the scipy.interpolate objects it replaces (to ~1e-12 relative)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.interpolate import BPoly, CubicSpline as ScipyCubicSpline, PchipInterpolator

from trackrider.curves.interp import CubicSpline, QuinticHermite, pchip_slopes

RTOL = 1e-12


def _knots(rng, n, irregular=True):
    h = rng.uniform(0.2, 3.0, n - 1) if irregular else np.full(n - 1, 1.3)
    x0 = rng.uniform(-5, 5)
    return np.concatenate([[x0], x0 + np.cumsum(h)])


def _close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * scale)


@pytest.mark.parametrize("bc", ["not-a-knot", "natural", "periodic"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 9, 200])
def test_cubic_spline_matches_scipy(bc, n):
    if bc == "periodic" and n < 3:
        pytest.skip("scipy's periodic spline needs 3 points")
    rng = np.random.default_rng(n)
    for irregular in (False, True):
        x = _knots(rng, n, irregular)
        y = np.sin(x) + rng.normal(0, 0.3, n)
        if bc == "periodic":
            y[-1] = y[0]
        ref = ScipyCubicSpline(x, y, bc_type=bc)
        ours = CubicSpline(x, y, bc_type=bc)
        xq = np.concatenate([x, np.linspace(x[0] - 2, x[-1] + 2, 1001)])
        scale = max(1.0, float(np.max(np.abs(y))))
        for nu in (0, 1, 2):
            _close(ours(xq, nu), ref(xq, nu), scale * max(1.0, float(np.max(np.abs(ref(xq, nu))))))
        _close(ours.derivative()(xq), ref.derivative()(xq), scale * 10)
        _close(ours(x), y, scale)   # interpolates


def test_cubic_spline_conditions_hold():
    """Closed-form checks, no scipy: a cubic is reproduced by not-a-knot; natural ends have y'' = 0;
    the periodic spline is C2 across the period."""
    x = np.array([0.0, 0.7, 1.5, 2.0, 3.1, 4.0, 5.2])
    cubic = lambda t: 0.5 * t**3 - t**2 + 2 * t - 1  # noqa: E731
    s = CubicSpline(x, cubic(x))
    t = np.linspace(0, 5.2, 77)
    np.testing.assert_allclose(s(t), cubic(t), atol=1e-12)
    nat = CubicSpline(x, np.cos(x), bc_type="natural")
    np.testing.assert_allclose(nat(x[[0, -1]], 2), 0.0, atol=1e-12)
    y = np.sin(2 * np.pi * x / 5.2)
    y[-1] = y[0]
    per = CubicSpline(x, y, bc_type="periodic")
    for nu in (0, 1, 2):
        assert per(np.array([0.0]), nu)[0] == pytest.approx(per(np.array([5.2 - 1e-13]), nu)[0], abs=1e-9)
    np.testing.assert_allclose(per(t + 5.2), per(t), atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_pchip_slopes_match_scipy(seed):
    rng = np.random.default_rng(100 + seed)
    n = [2, 3, 4, 7, 30, 300][seed]
    x = _knots(rng, n)
    y = np.round(rng.normal(0, 1, n), 1)  # rounding makes flats and equal neighbours
    if n > 4:
        y[n // 2 : n // 2 + 3] = y[n // 2]   # a flat run
    ref = PchipInterpolator(x, y).derivative()(x)
    _close(pchip_slopes(x, y), ref, max(1.0, float(np.max(np.abs(ref)))))


@pytest.mark.parametrize("n", [2, 3, 8, 100])
def test_quintic_hermite_matches_bpoly(n):
    rng = np.random.default_rng(7 + n)
    x = _knots(rng, n)
    y, m, c = rng.normal(0, 1, (3, n))
    ref = BPoly.from_derivatives(x, np.column_stack([y, m, c]), orders=5)
    q = QuinticHermite(x, y, m, c)
    xq = np.concatenate([x, np.linspace(x[0], x[-1], 2001)])
    for nu in (0, 1, 2):
        r = ref.derivative(nu)(xq) if nu else ref(xq)
        _close(q(xq, nu), r, max(1.0, float(np.max(np.abs(r)))))
    # the knot conditions, exactly as given (no scipy)
    np.testing.assert_allclose(q(x), y, atol=1e-12)
    np.testing.assert_allclose(q(x, 1), m, atol=1e-11)
    np.testing.assert_allclose(q(x, 2), c, atol=1e-10)
    np.testing.assert_allclose(q.derivative()(xq), q(xq, 1), atol=0)


def test_quintic_hermite_reproduces_a_quintic():
    p = np.polynomial.Polynomial([0.3, -1.0, 0.5, 0.25, -0.1, 0.02])
    x = np.array([-1.0, 0.2, 0.9, 2.5])
    q = QuinticHermite(x, p(x), p.deriv(1)(x), p.deriv(2)(x))
    t = np.linspace(-1, 2.5, 101)
    np.testing.assert_allclose(q(t), p(t), atol=1e-13)
    np.testing.assert_allclose(q(t, 1), p.deriv(1)(t), atol=1e-12)


def test_track_building_imports_no_scipy_interpolate():
    """Building tracks (segments, points open and closed, roll knots, the up frame) imports no scipy.interpolate."""
    code = ("import sys\n"
            "from trackrider.curves import Track, start, straight, arc, loop\n"
            "segs = [start([0, 0, 1], 0, 0), straight(10), arc(15, 90, 'yaw'), straight(5), loop(8), straight(10)]\n"
            "t = Track.from_segments(segs, roll=[[0, 0], [12, 20], [30, 0]])\n"
            "t.compact()\n"
            "import numpy as np\n"
            "th = np.linspace(0, 6.283185307179586, 30, endpoint=False)\n"
            "pts = np.column_stack([20 * np.cos(th), 20 * np.sin(th), 3 + np.sin(2 * th)])\n"
            "Track.from_points(pts, closed=True).compact()\n"
            "Track.from_points(pts[:20], roll=[[0, 0], [10, 15], [30, 0]]).compact()\n"
            "print('scipy.interpolate' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- the quintic point-curve fit

def _scipy_quintic(u, y, periodic):
    """Breaks and coefficients of scipy's make_interp_spline(k=5) on [u0, u_end] (PPoly.from_spline)."""
    from scipy.interpolate import BSpline, PPoly, make_interp_spline

    spl = make_interp_spline(u, y, k=5, bc_type="periodic" if periodic else None)
    cs = []
    for d in range(y.shape[1]):
        pp = PPoly.from_spline(BSpline(spl.t, spl.c[:, d], spl.k))
        cs.append(pp.c)
    x = pp.x
    c = np.stack(cs, axis=-1)
    idx = np.nonzero((x[1:] > x[:-1]) & (x[:-1] >= u[0]) & (x[1:] <= u[-1]))[0]
    return np.append(x[idx], x[idx[-1] + 1]), np.transpose(c[:, idx], (1, 0, 2))


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("n", [6, 7, 9, 13, 400])
def test_quintic_interpolant_matches_scipy(n, periodic):
    from trackrider.curves.interp import quintic_interpolant

    rng = np.random.default_rng(n + 31 * periodic)
    for spread in (0.0, 0.9):   # equal spacing, and spacings varying 10:1
        u = np.concatenate([[0.0], np.cumsum(1.0 + spread * rng.uniform(-1, 1, n - 1))])
        y = rng.normal(0, 3, (n, 3))
        if periodic:
            y[-1] = y[0]
        b, c = quintic_interpolant(u, y, periodic)
        br, cr = _scipy_quintic(u, y, periodic)
        np.testing.assert_array_equal(b, br)
        assert c.shape == cr.shape
        _close(c, cr, float(np.max(np.abs(cr))))
        # and, without scipy: it interpolates, and is C4 at interior breaks (C4 across the period if periodic)
        h = np.diff(b)
        i = np.clip(np.searchsorted(b, u, side="right") - 1, 0, len(h) - 1)
        vals = np.array([[np.polyval(c[i[j], :, d], u[j] - b[i[j]]) for d in range(3)] for j in range(n)])
        np.testing.assert_allclose(vals, y, atol=1e-9 * float(np.max(np.abs(y))))
        pairs = [(j, j + 1) for j in range(len(h) - 1)] + ([(len(h) - 1, 0)] if periodic else [])
        for a, z in pairs:
            for m in range(5):
                left = np.array([np.polyval(np.polyder(c[a, :, d], m), h[a]) for d in range(3)])
                right = np.array([np.polyval(np.polyder(c[z, :, d], m), 0.0) for d in range(3)])
                np.testing.assert_allclose(left, right, atol=1e-7 * max(1.0, float(np.max(np.abs(left)))))


@pytest.mark.parametrize("closed", [False, True])
def test_point_curve_fit_is_scipys(monkeypatch, closed):
    """The fitted point-curve track is the one scipy's fit gives: length, point arc lengths, nodes."""
    from trackrider.curves import spline as S

    th = np.linspace(0, 2 * np.pi, 40, endpoint=not closed)
    pts = np.column_stack([30 * np.cos(th) + 3 * np.sin(3 * th), 20 * np.sin(th), 5 + 4 * np.sin(2 * th)])
    ours = S.SplineCurve(pts, closed)
    monkeypatch.setattr(S, "quintic_interpolant", lambda u, y, periodic: _scipy_quintic(u, y, periodic))
    ref = S.SplineCurve(pts, closed)
    assert ours.length == pytest.approx(ref.length, rel=1e-12)
    np.testing.assert_allclose(ours.point_s, ref.point_s, rtol=0, atol=1e-10)
    assert len(ours.node_s) == len(ref.node_s)
    P1 = ours.eval(ours.node_s, nodes=True)
    P2 = ref.eval(ref.node_s, nodes=True)
    for a, b in zip(P1, P2):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, float(np.max(np.abs(b)))))


def test_quintic_interpolant_many_points():
    """200 000 points (a 20 km curve every 0.1 m): the banded solve stays accurate."""
    from trackrider.curves.interp import quintic_interpolant

    n = 200_000
    rng = np.random.default_rng(5)
    u = np.concatenate([[0.0], np.cumsum(rng.uniform(0.08, 0.12, n - 1))])
    y = np.column_stack([np.sin(u / 50), np.cos(u / 70), u / 100])
    b, c = quintic_interpolant(u, y, False)
    assert len(b) == n - 4
    j = np.arange(0, n - 5, 997)
    np.testing.assert_allclose(c[j, -1, 0], np.sin(b[j] / 50), atol=1e-12)   # value at each piece's start
    np.testing.assert_allclose(c[j, -2, 1], -np.sin(b[j] / 70) / 70, atol=1e-9)   # slope: the curve's, closely
