"""The few one-dimensional interpolants the track needs, in numpy (no ``scipy.interpolate``).

``scipy.interpolate`` takes 0.3–0.45 s to import (it imports ``scipy.optimize``,
``scipy.special`` and ``scipy.sparse`` and parses their docstrings), several times what
building a track's frame costs; ``validate`` and ``run`` would pay it for a handful of
small fits. So these are written out here (each agrees with the scipy object it replaces
to rounding, ~1e-13 relative; ``tests/curves/test_interp.py`` compares them):

* :class:`CubicSpline` — ``scipy.interpolate.CubicSpline`` with ``bc_type`` ``natural``,
  ``not-a-knot`` or ``periodic``: the same tridiagonal slope equations (de Boor,
  *A Practical Guide to Splines*, ch. IV), solved by the Thomas algorithm (the cyclic
  one by Sherman–Morrison, as scipy does), evaluated as cubic Hermite pieces.
* :func:`pchip_slopes` — the slopes of ``scipy.interpolate.PchipInterpolator`` at its
  knots (Fritsch & Butland's weighted harmonic mean, zero at extremes and flats;
  the ends by Moler's shape-preserving three-point formula).
* :class:`QuinticHermite` — ``scipy.interpolate.BPoly.from_derivatives(x, [y, y', y''],
  orders=5)``: on each interval the quintic with the given value, slope and second
  derivative at both ends, here in the power basis.
* :func:`quintic_interpolant` — ``make_interp_spline(x, y, k=5)`` (not-a-knot or periodic)
  followed by ``PPoly.from_spline``: the point-curve fit of ``spline.py``. Its B-spline
  collocation system is banded (band width 5) and solved by Gaussian elimination with
  partial pivoting in a numba kernel (``_kernels.solve_banded``): O(n) time and memory,
  about as fast as scipy's LAPACK ``gbsv`` plus its conversion for 2 million points.

What each costs at import: scipy's pieces import ``scipy.interpolate`` (+0.1 s even after
``scipy.linalg``, which numba imports for its BLAS check on the first kernel load; 0.3–0.45 s
on its own); these few hundred lines import nothing beyond numpy and the curve kernels.
"""
from __future__ import annotations

import numpy as np

from . import _kernels as K


def _span(x, xq):
    """Interval index of each query: ``x[i] <= xq < x[i+1]``, clamped to the first/last interval."""
    return np.clip(np.searchsorted(x, xq, side="right") - 1, 0, len(x) - 2)


def _solve_tridiagonal(sub, diag, sup, rhs):
    """Solve the tridiagonal system (``sub[i]`` at (i, i-1), ``sup[i]`` at (i, i+1)); ``rhs`` (n,)."""
    out = np.empty(len(diag))
    K.solve_tridiagonal(np.ascontiguousarray(sub, dtype=np.float64), np.ascontiguousarray(diag, dtype=np.float64),
                        np.ascontiguousarray(sup, dtype=np.float64), np.ascontiguousarray(rhs, dtype=np.float64),
                        out)
    return out


class CubicSpline:
    """Interpolating cubic spline through ``(x, y)`` (``x`` strictly increasing, ``y`` (n,)).

    ``bc_type``: ``"not-a-knot"`` (default), ``"natural"`` (zero second derivative at
    both ends) or ``"periodic"`` (``y[0] == y[-1]``; evaluation wraps with period
    ``x[-1] - x[0]``). ``spline(xq, nu)`` is the value (``nu=0``) or the ``nu``-th
    derivative (1, 2); outside ``[x[0], x[-1]]`` the end pieces extend (not periodic) or
    the argument wraps (periodic).
    """

    def __init__(self, x, y, bc_type: str = "not-a-knot"):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        n = len(x)
        if y.shape != (n,) or n < 2:
            raise ValueError("CubicSpline needs x and y of the same length, at least 2")
        dx = np.diff(x)
        if not np.all(dx > 0):
            raise ValueError("x must be strictly increasing")
        if bc_type not in ("not-a-knot", "natural", "periodic"):
            raise ValueError(f"unknown bc_type {bc_type!r}")
        self.periodic = bc_type == "periodic"
        slope = np.diff(y) / dx
        if n == 2:   # the straight line (for every bc_type)
            s = np.array([slope[0], slope[0]])
        elif n == 3 and bc_type == "not-a-knot":   # the parabola through the three points
            A = np.array([[1.0, 1.0, 0.0], [dx[1], 2 * (dx[0] + dx[1]), dx[0]], [0.0, 1.0, 1.0]])
            b = np.array([2 * slope[0], 3 * (dx[0] * slope[1] + dx[1] * slope[0]), 2 * slope[1]])
            s = np.linalg.solve(A, b)
        elif n == 3 and self.periodic:
            s = np.full(3, np.sum(slope / dx) / np.sum(1.0 / dx))
        else:
            diag = np.empty(n)
            sup = np.zeros(n)
            sub = np.zeros(n)
            b = np.empty(n)
            diag[1:-1] = 2 * (dx[:-1] + dx[1:])
            sup[1:-1] = dx[:-1]
            sub[1:-1] = dx[1:]
            b[1:-1] = 3 * (dx[1:] * slope[:-1] + dx[:-1] * slope[1:])
            if self.periodic:
                s = self._periodic_slopes(dx, slope, diag, sup, sub, b)
            else:
                if bc_type == "not-a-knot":
                    d = x[2] - x[0]
                    diag[0], sup[0] = dx[1], d
                    b[0] = ((dx[0] + 2 * d) * dx[1] * slope[0] + dx[0] ** 2 * slope[1]) / d
                    d = x[-1] - x[-3]
                    diag[-1], sub[-1] = dx[-2], d
                    b[-1] = (dx[-1] ** 2 * slope[-2] + (2 * d + dx[-1]) * dx[-2] * slope[-1]) / d
                else:   # natural: y'' = 0 at both ends
                    diag[0], sup[0] = 2 * dx[0], dx[0]
                    b[0] = 3 * (y[1] - y[0])
                    diag[-1], sub[-1] = 2 * dx[-1], dx[-1]
                    b[-1] = 3 * (y[-1] - y[-2])
                s = _solve_tridiagonal(sub, diag, sup, b)
        self.x = x
        self.y = y
        self.slopes = s
        # power-basis coefficients of each piece in (xq - x[i]), highest first (scipy's CubicHermiteSpline)
        t = (s[:-1] + s[1:] - 2 * slope) / dx
        self.c = np.stack([t / dx, (slope - s[:-1]) / dx - t, s[:-1], y[:-1]])

    @staticmethod
    def _periodic_slopes(dx, slope, diag, sup, sub, b):
        """The cyclic slope system (the last point repeats the first) by Sherman–Morrison."""
        n = len(dx) + 1
        diag, sup, sub, b = diag[:-1].copy(), sup[:-1].copy(), sub[:-1].copy(), b[:-1].copy()
        diag[0] = 2 * (dx[-1] + dx[0])
        sup[0] = dx[-1]
        b[0] = 3 * (dx[0] * slope[-1] + dx[-1] * slope[0])
        b[-1] = 3 * (dx[-1] * slope[-2] + dx[-2] * slope[-1])
        a_m1_0 = dx[-2]
        a_m1_m2 = dx[-1]
        a_m1_m1 = 2 * (dx[-1] + dx[-2])
        a_m2_m1 = dx[-3]
        a_0_m1 = dx[0]
        m = n - 2   # the system without its last row and column
        b2 = np.zeros(m)
        b2[0] = -a_0_m1
        b2[-1] = -a_m2_m1
        ssub, sdiag, ssup = sub[:m].copy(), diag[:m], sup[:m].copy()
        ssub[0] = 0.0
        ssup[-1] = 0.0
        s1 = _solve_tridiagonal(ssub, sdiag, ssup, b[:m])
        s2 = _solve_tridiagonal(ssub, sdiag, ssup, b2)
        s_m1 = (b[-1] - a_m1_0 * s1[0] - a_m1_m2 * s1[-1]) / (a_m1_m1 + a_m1_0 * s2[0] + a_m1_m2 * s2[-1])
        s = np.empty(n)
        s[:-2] = s1 + s_m1 * s2
        s[-2] = s_m1
        s[-1] = s[0]
        return s

    def __call__(self, xq, nu: int = 0):
        xq = np.asarray(xq, dtype=np.float64)
        if self.periodic:
            x0, period = self.x[0], self.x[-1] - self.x[0]
            xq = x0 + (xq - x0) % period
        i = _span(self.x, xq)
        h = xq - self.x[i]
        c0, c1, c2, c3 = (c[i] for c in self.c)
        if nu == 0:
            return ((c0 * h + c1) * h + c2) * h + c3
        if nu == 1:
            return (3 * c0 * h + 2 * c1) * h + c2
        if nu == 2:
            return 6 * c0 * h + 2 * c1
        raise ValueError("nu must be 0, 1 or 2")

    def derivative(self):
        """The first derivative as a callable (``spline(xq, 1)``)."""
        return lambda xq: self(xq, 1)


def pchip_slopes(x, y):
    """The slopes of ``scipy.interpolate.PchipInterpolator(x, y)`` at its knots (``y`` (n,), n >= 2)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    hk = np.diff(x)
    mk = np.diff(y) / hk
    if len(y) == 2:
        return np.array([mk[0], mk[0]])
    smk = np.sign(mk)
    flat = (smk[1:] != smk[:-1]) | (mk[1:] == 0) | (mk[:-1] == 0)
    w1 = 2 * hk[1:] + hk[:-1]
    w2 = hk[1:] + 2 * hk[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        whmean = (w1 / mk[:-1] + w2 / mk[1:]) / (w1 + w2)
    dk = np.zeros_like(y)
    inner = np.zeros(len(y) - 2)
    inner[~flat] = 1.0 / whmean[~flat]
    dk[1:-1] = inner
    dk[0] = _pchip_end(hk[0], hk[1], mk[0], mk[1])
    dk[-1] = _pchip_end(hk[-1], hk[-2], mk[-1], mk[-2])
    return dk


def _pchip_end(h0, h1, m0, m1):
    """One-sided three-point slope at an end, kept shape-preserving (Moler, *Numerical Computing with MATLAB*, 3.6)."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    if np.sign(d) != np.sign(m0):
        return 0.0
    if np.sign(m0) != np.sign(m1) and abs(d) > 3.0 * abs(m0):
        return 3.0 * m0
    return d


class QuinticHermite:
    """Piecewise quintic through ``(x, y)`` with slopes ``dy`` and second derivatives ``d2y`` at the knots.

    On ``[x[i], x[i+1]]`` it is the quintic with the given value, first and second
    derivative at both ends (C2 across knots). ``q(xq, nu)``: value or ``nu``-th
    derivative (``nu`` 0..2); beyond the ends the end pieces extend.
    """

    def __init__(self, x, y, dy, d2y):
        x = np.asarray(x, dtype=np.float64)
        y, m, c = (np.asarray(a, dtype=np.float64) for a in (y, dy, d2y))
        if len(x) < 2 or not np.all(np.diff(x) > 0):
            raise ValueError("QuinticHermite needs at least 2 strictly increasing knots")
        h = np.diff(x)
        A = y[1:] - (y[:-1] + h * (m[:-1] + 0.5 * h * c[:-1]))
        B = m[1:] - (m[:-1] + h * c[:-1])
        C = c[1:] - c[:-1]
        h2 = h * h
        a3 = (20 * A - 8 * B * h + C * h2) / (2 * h2 * h)
        a4 = (-30 * A + 14 * B * h - 2 * C * h2) / (2 * h2 * h2)
        a5 = (12 * A - 6 * B * h + C * h2) / (2 * h2 * h2 * h)
        self.x = x
        self.a = np.stack([y[:-1], m[:-1], 0.5 * c[:-1], a3, a4, a5])   # p = Σ a_k (xq - x_i)^k

    def __call__(self, xq, nu: int = 0):
        xq = np.asarray(xq, dtype=np.float64)
        i = _span(self.x, xq)
        t = xq - self.x[i]
        a0, a1, a2, a3, a4, a5 = (a[i] for a in self.a)
        if nu == 0:
            return ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t + a0
        if nu == 1:
            return (((5 * a5 * t + 4 * a4) * t + 3 * a3) * t + 2 * a2) * t + a1
        if nu == 2:
            return ((20 * a5 * t + 12 * a4) * t + 6 * a3) * t + 2 * a2
        raise ValueError("nu must be 0, 1 or 2")

    def derivative(self):
        """The first derivative as a callable."""
        return lambda xq: self(xq, 1)


# ----------------------------------------------------------------------------- quintic interpolating spline

def _bspline_basis(t, k, span, x):
    """The ``k + 1`` nonzero degree-``k`` B-splines ``B_{span-k} .. B_span`` at each ``x`` ((len(x), k + 1))."""
    out = np.empty((len(x), k + 1))
    K.bspline_basis(t, k, np.ascontiguousarray(span, dtype=np.int64), np.ascontiguousarray(x, dtype=np.float64), out)
    return out


def _periodic_knots(x, k):
    """scipy's knots of a periodic spline of odd degree ``k`` through ``x`` (the data sites, extended by the period)."""
    n = len(x)
    dx = np.diff(x)
    t = np.zeros(n + 2 * k)
    t[k:-k] = x
    for i in range(k):
        t[k - i - 1] = t[k - i] - dx[-(i + 1) % (n - 1)]
        t[-k + i] = t[-k + i - 1] + dx[i % (n - 1)]
    return t


def _solve_band(rows, cols, vals, n, rhs):
    """Solve the n x n system with entries ``(rows, cols, vals)`` (within a band) for ``rhs`` (n, m)."""
    off = cols - rows
    kl = max(0, int(-off.min()))
    ku = max(0, int(off.max()))
    ab = np.zeros((n, 2 * kl + ku + 1))
    ab[rows, off + kl] = vals      # one entry per (row, column)
    out = np.ascontiguousarray(rhs, dtype=np.float64).copy()
    bad = K.solve_banded(ab, kl, ku, out)
    if bad:
        raise ValueError(f"the spline's collocation matrix is singular at row {bad - 1}")
    return out


def quintic_interpolant(x, y, periodic: bool):
    """The quintic interpolating spline of ``scipy.interpolate.make_interp_spline(x, y, k=5)``
    (not-a-knot ends; or ``bc_type="periodic"`` with ``y[0] == y[-1]``), as piecewise polynomials.

    The same spline (it is unique: degree 5, C4, knots at the data sites, those next to
    an open end's first and last two left out), solved here as its B-spline collocation
    system by banded Gaussian elimination (the periodic one's wrapped corners by the
    Woodbury formula). Returns ``breaks`` (m + 1,) and ``coef`` (m, 6, d):
    ``coef[i, p]`` multiplies ``(u - breaks[i]) ** (5 - p)`` on piece ``i``.
    """
    k = 5
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = len(x)
    if periodic:
        N = n - 1                      # distinct sites; coefficients c[j + N] = c[j]
        t = _periodic_knots(x, k)
        span = np.arange(N) + k
        B = _bspline_basis(t, k, span, x[:N])
        i = np.repeat(np.arange(N), k + 1)
        # unknown e[m] = c[(m + 2) mod N]: the band centred on the diagonal (offsets -2 .. +3)
        raw = i + np.tile(np.arange(k + 1), N) - (k - 1) // 2
        v = B.ravel()
        wrapped = (raw < 0) | (raw >= N)
        col = raw % N
        inner = ~wrapped
        corner_rows = np.unique(i[wrapped])
        E = np.zeros((N, len(corner_rows)))
        E[corner_rows, np.arange(len(corner_rows))] = 1.0
        sol = _solve_band(i[inner], col[inner], v[inner], N, np.hstack([y[:N], E]))
        Y, Z = sol[:, : y.shape[1]], sol[:, y.shape[1]:]
        # A = A0 + E M with M the wrapped entries (rows corner_rows): x = Y - Z (I + M Z)^-1 M Y
        r_idx = np.searchsorted(corner_rows, i[wrapped])
        MZ = np.zeros((len(corner_rows), len(corner_rows)))
        MY = np.zeros((len(corner_rows), y.shape[1]))
        np.add.at(MZ, r_idx, v[wrapped][:, None] * Z[col[wrapped]])
        np.add.at(MY, r_idx, v[wrapped][:, None] * Y[col[wrapped]])
        e = Y - Z @ np.linalg.solve(np.eye(len(corner_rows)) + MZ, MY)
        c = e[(np.arange(N + k) - (k - 1) // 2) % N]
    else:
        t = np.concatenate([np.full(k + 1, x[0]), x[3:-3], np.full(k + 1, x[-1])])
        nc = len(t) - k - 1
        span = np.clip(np.searchsorted(t, x, side="right") - 1, k, nc - 1)
        B = _bspline_basis(t, k, span, x)
        i = np.repeat(np.arange(n), k + 1)
        col = (span - k)[:, None] + np.arange(k + 1)[None, :]
        v = B.ravel()
        keep = v != 0.0
        c = _solve_band(i[keep], col.ravel()[keep], v[keep], nc, y)
    return _bspline_to_pieces(t, c, k)


def _bspline_to_pieces(t, c, k):
    """Breaks and power-basis coefficients of the spline ``Σ c_j B_j`` (knots ``t``, degree ``k``) on
    ``[t[k], t[nc]]``: at each piece's left end the derivatives 0..k (scipy's ``PPoly.from_spline``)."""
    nc = len(c)
    breaks = np.unique(t[k : nc + 1])
    left = np.ascontiguousarray(breaks[:-1])
    span = np.clip(np.searchsorted(t, left, side="right") - 1, k, nc - 1).astype(np.int64)
    coef = np.empty((len(left), k + 1, c.shape[1]))
    K.bspline_pieces(t, np.ascontiguousarray(c, dtype=np.float64), k, span, left, coef)
    return breaks, coef
