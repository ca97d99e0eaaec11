"""numba kernels behind the geometry: piecewise-quintic evaluation, arc length, RMF.

All kernels are module-level ``@njit(cache=True, fastmath=False)`` functions over flat
contiguous float64 arrays: no fused multiply-add (``trackrider.jit``), so the compiled
kernels and their Python originals (``trackrider validate`` runs those) build a track to
the same bits. Units: metres for positions and arc lengths; the
spline parameter ``u`` is in metres too (it is made close to arc length).
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit

# 8-point Gauss–Legendre rule on [0, 1]: exact for polynomials of degree 15. numpy's
# ``0.5 * (x + 1)`` and ``0.5 * w`` of ``np.polynomial.legendre.leggauss(8)``, to the bit
# (tests/curves/test_kernels.py; written out: importing numpy.polynomial costs every process ~10 ms)
GL_NODES = np.array([0.019855071751231912, 0.10166676129318664, 0.2372337950418355, 0.4082826787521751,
                     0.5917173212478248, 0.7627662049581645, 0.8983332387068134, 0.9801449282487681])
GL_WEIGHTS = np.array([0.05061426814518853, 0.11119051722668721, 0.15685332293894344, 0.18134189168918083,
                       0.18134189168918083, 0.15685332293894344, 0.11119051722668721, 0.05061426814518853])


@njit(cache=True, fastmath=False)
def find_span(breaks, u):
    """Index ``i`` with ``breaks[i] <= u < breaks[i+1]``, clamped to the valid spans."""
    n = breaks.shape[0] - 1
    lo = 0
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if breaks[mid] <= u:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, fastmath=False)
def ppoly_eval(breaks, coef, u, out):
    """Evaluate a piecewise polynomial curve and its first three derivatives.

    ``coef[i, k, d]`` is the coefficient of ``(u - breaks[i])**(deg - k)`` of
    coordinate ``d`` on span ``i`` (scipy PPoly order). ``out`` is (n, 4, 3):
    position, d/du, d2/du2, d3/du3.
    """
    deg = coef.shape[1] - 1
    for j in range(u.shape[0]):
        i = find_span(breaks, u[j])
        x = u[j] - breaks[i]
        for d in range(3):
            p0 = coef[i, 0, d]
            p1 = 0.0
            p2 = 0.0
            p3 = 0.0
            for k in range(1, deg + 1):
                # Horner for the value and its derivatives (p2 = p''/2, p3 = p'''/6)
                p3 = p3 * x + p2
                p2 = p2 * x + p1
                p1 = p1 * x + p0
                p0 = p0 * x + coef[i, k, d]
            out[j, 0, d] = p0
            out[j, 1, d] = p1
            out[j, 2, d] = 2.0 * p2
            out[j, 3, d] = 6.0 * p3


@njit(cache=True, fastmath=False)
def _speed(breaks, coef, i, x):
    deg = coef.shape[1] - 1
    sq = 0.0
    for d in range(3):
        p0 = coef[i, 0, d]
        p1 = 0.0
        for k in range(1, deg + 1):
            p1 = p1 * x + p0
            p0 = p0 * x + coef[i, k, d]
        sq += p1 * p1
    return np.sqrt(sq)


@njit(cache=True, fastmath=False)
def span_arc_lengths(breaks, coef, sub_u, gl_x, gl_w, out):
    """Arc length between consecutive parameters ``sub_u`` (which must not straddle a break).

    ``out[j] = ∫_{sub_u[j]}^{sub_u[j+1]} |P_u| du`` by 8-point Gauss–Legendre.
    """
    for j in range(sub_u.shape[0] - 1):
        a = sub_u[j]
        h = sub_u[j + 1] - a
        i = find_span(breaks, a + 0.5 * h)
        acc = 0.0
        for q in range(gl_x.shape[0]):
            acc += gl_w[q] * _speed(breaks, coef, i, a + h * gl_x[q] - breaks[i])
        out[j] = acc * h


@njit(cache=True, fastmath=False)
def invert_arc_length(breaks, coef, sub_u, sub_s, gl_x, gl_w, s, u_out, tol):
    """Spline parameter ``u`` with arc length ``s`` (Newton on ``s(u) - s``).

    ``sub_u``/``sub_s`` is a table of parameters and their arc lengths; between
    table rows ``s(u)`` is integrated by Gauss–Legendre. Returns the number of
    queries that did not converge to ``tol`` (m).
    """
    bad = 0
    n = sub_s.shape[0]
    for j in range(s.shape[0]):
        sj = s[j]
        lo = find_span(sub_s, sj)
        if lo > n - 2:
            lo = n - 2
        ua = sub_u[lo]
        ub = sub_u[lo + 1]
        sa = sub_s[lo]
        sb = sub_s[lo + 1]
        u = ua + (ub - ua) * (sj - sa) / (sb - sa)
        i = find_span(breaks, 0.5 * (ua + ub))
        ok = False
        for it in range(30):
            h = u - ua
            acc = 0.0
            for q in range(gl_x.shape[0]):
                acc += gl_w[q] * _speed(breaks, coef, i, ua + h * gl_x[q] - breaks[i])
            f = sa + acc * h - sj
            v = _speed(breaks, coef, i, u - breaks[i])
            du = f / v
            u -= du
            if u < ua:
                u = ua
            elif u > ub:
                u = ub
            if abs(f) < tol:
                ok = True
                break
        if not ok:
            bad += 1
        u_out[j] = u
    return bad


@njit(cache=True, fastmath=False)
def rmf_double_reflection(P, T, n0, out):
    """Rotation-minimising frame by the double-reflection method (Wang et al., ACM TOG 2008).

    ``P``, ``T`` (n, 3): positions and unit tangents at increasing arc lengths;
    ``n0`` (3,): the first frame's left axis (unit, ⊥ T[0]). Writes the left
    axis at every sample into ``out`` (n, 3), re-orthonormalised against ``T``.
    """
    for d in range(3):
        out[0, d] = n0[d]
    for i in range(P.shape[0] - 1):
        v1x = P[i + 1, 0] - P[i, 0]
        v1y = P[i + 1, 1] - P[i, 1]
        v1z = P[i + 1, 2] - P[i, 2]
        c1 = v1x * v1x + v1y * v1y + v1z * v1z
        rx, ry, rz = out[i, 0], out[i, 1], out[i, 2]
        tx, ty, tz = T[i, 0], T[i, 1], T[i, 2]
        if c1 > 0.0:
            a = 2.0 / c1 * (v1x * rx + v1y * ry + v1z * rz)
            rx -= a * v1x
            ry -= a * v1y
            rz -= a * v1z
            b = 2.0 / c1 * (v1x * tx + v1y * ty + v1z * tz)
            tx -= b * v1x
            ty -= b * v1y
            tz -= b * v1z
        v2x = T[i + 1, 0] - tx
        v2y = T[i + 1, 1] - ty
        v2z = T[i + 1, 2] - tz
        c2 = v2x * v2x + v2y * v2y + v2z * v2z
        if c2 > 1e-300:
            a = 2.0 / c2 * (v2x * rx + v2y * ry + v2z * rz)
            rx -= a * v2x
            ry -= a * v2y
            rz -= a * v2z
        # re-orthonormalise against the exact tangent
        d = rx * T[i + 1, 0] + ry * T[i + 1, 1] + rz * T[i + 1, 2]
        rx -= d * T[i + 1, 0]
        ry -= d * T[i + 1, 1]
        rz -= d * T[i + 1, 2]
        nn = 1.0 / np.sqrt(rx * rx + ry * ry + rz * rz)
        out[i + 1, 0] = rx * nn
        out[i + 1, 1] = ry * nn
        out[i + 1, 2] = rz * nn


@njit(cache=True, fastmath=False)
def solve_tridiagonal(sub, diag, sup, rhs, out):
    """Solve a tridiagonal system by the Thomas algorithm (no pivoting: for the diagonally
    dominant spline systems of ``interp.py``). Row ``i`` is ``sub[i] x[i-1] + diag[i] x[i]
    + sup[i] x[i+1] = rhs[i]`` (``sub[0]`` and ``sup[n-1]`` unused); writes ``x`` into ``out``."""
    n = diag.shape[0]
    cp = np.empty(n)
    out[0] = rhs[0] / diag[0]
    cp[0] = sup[0] / diag[0] if n > 1 else 0.0
    for i in range(1, n):
        den = diag[i] - sub[i] * cp[i - 1]
        cp[i] = sup[i] / den if i < n - 1 else 0.0
        out[i] = (rhs[i] - sub[i] * out[i - 1]) / den
    for i in range(n - 2, -1, -1):
        out[i] -= cp[i] * out[i + 1]


@njit(cache=True, fastmath=False)
def solve_banded(ab, kl, ku, b):
    """Solve ``A x = b`` in place for a band matrix by Gaussian elimination with partial pivoting.

    ``ab`` (n, 2 kl + ku + 1) holds row ``i`` of ``A`` from column ``i - kl``:
    ``ab[i, j - i + kl] = A[i, j]`` for ``-kl <= j - i <= ku``; the last ``kl`` columns
    are room for the fill-in row swaps make (zero on entry). ``ab`` is overwritten
    with U; ``b`` (n, m) with the solution. Returns 0, or ``i + 1`` if pivot ``i`` is zero.
    """
    n = ab.shape[0]
    w = ab.shape[1]
    m = b.shape[1]
    for p in range(n):
        # pivot: the largest |A[r, p]| among rows p .. p + kl
        best = p
        big = abs(ab[p, kl])
        for r in range(p + 1, min(p + kl + 1, n)):
            v = abs(ab[r, p - r + kl])
            if v > big:
                big = v
                best = r
        if big == 0.0:
            return p + 1
        if best != p:
            for c in range(p, min(p + w - kl, n)):
                t = ab[p, c - p + kl]
                ab[p, c - p + kl] = ab[best, c - best + kl]
                ab[best, c - best + kl] = t
            for q in range(m):
                t = b[p, q]
                b[p, q] = b[best, q]
                b[best, q] = t
        piv = ab[p, kl]
        for r in range(p + 1, min(p + kl + 1, n)):
            f = ab[r, p - r + kl] / piv
            if f == 0.0:
                continue
            ab[r, p - r + kl] = 0.0
            for c in range(p + 1, min(p + w - kl, n)):
                ab[r, c - r + kl] -= f * ab[p, c - p + kl]
            for q in range(m):
                b[r, q] -= f * b[p, q]
    for p in range(n - 1, -1, -1):
        for q in range(m):
            acc = b[p, q]
            for c in range(p + 1, min(p + w - kl, n)):
                acc -= ab[p, c - p + kl] * b[c, q]
            b[p, q] = acc / ab[p, kl]
    return 0


@njit(cache=True, fastmath=False)
def _bsplvb(t, deg, l, x, B):
    """B[0 .. deg] = the degree-``deg`` B-splines ``B_{l-deg} .. B_l`` at ``x`` (``t[l] <= x <= t[l+1]``):
    de Boor's recursion (*A Practical Guide to Splines*, ``bsplvb``)."""
    B[0] = 1.0
    for j in range(1, deg + 1):
        saved = 0.0
        for r in range(j):
            right = t[l + r + 1] - x
            left = x - t[l + 1 - j + r]
            den = right + left
            temp = B[r] / den if den != 0.0 else 0.0
            B[r] = saved + right * temp
            saved = left * temp
        B[j] = saved


@njit(cache=True, fastmath=False)
def bspline_basis(t, k, span, x, out):
    """``out[i, q]`` = B_{span[i]-k+q}(x[i]), q = 0..k: the nonzero degree-``k`` B-splines at each ``x``."""
    B = np.empty(k + 1)
    for i in range(x.shape[0]):
        _bsplvb(t, k, span[i], x[i], B)
        for q in range(k + 1):
            out[i, q] = B[q]


@njit(cache=True, fastmath=False)
def bspline_pieces(t, c, k, span, left, coef):
    """Power-basis pieces of the spline ``Σ c_j B_j`` (knots ``t``, degree ``k``, ``c`` (nc, d)).

    For piece ``p`` (knot span ``span[p]``, left end ``left[p]``):
    ``coef[p, k - m, :] = s^(m)(left[p]) / m!``, m = 0..k, from the span's k + 1 coefficients
    differenced m times (``deg (c_j - c_{j-1}) / (t_{j+deg} - t_j)``, de Boor ch. X).
    """
    dim = c.shape[1]
    B = np.empty(k + 1)
    d = np.empty((k + 1, dim))
    for p in range(span.shape[0]):
        l = span[p]
        x = left[p]
        for q in range(k + 1):
            for e in range(dim):
                d[q, e] = c[l - k + q, e]
        fact = 1.0
        for m in range(k + 1):
            deg = k - m
            # valid coefficients: d[m .. k] for B_{l-deg} .. B_l of degree deg
            _bsplvb(t, deg, l, x, B)
            for e in range(dim):
                acc = 0.0
                for q in range(deg + 1):
                    acc += B[q] * d[m + q, e]
                coef[p, k - m, e] = acc / fact
            if m < k:
                for q in range(k, m, -1):
                    j = l - k + q
                    den = t[j + deg] - t[j]
                    for e in range(dim):
                        d[q, e] = deg * (d[q, e] - d[q - 1, e]) / den if den > 0.0 else 0.0
                fact *= m + 1
