"""A smooth interpolating quintic spline through points, re-parametrised by arc length.

The spline is a degree-5 B-spline (C4: position, tangent, curvature and torsion
are continuous; not-a-knot ends, or periodic; ``interp.quintic_interpolant``) through the points at parameters ``u`` equal to the arc length
of the previous fit (two refits starting from chord length), so ``|P_u|`` is
close to 1. Arc length ``s(u)`` is tabulated by 8-point Gauss–Legendre on
sub-intervals no longer than 0.25 m and turning by at most 0.02 rad; ``u(s)`` is found by Newton on that table
to 1e-11 m.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import _kernels as K
from .. import limits
from .interp import quintic_interpolant

SUB_SPACING = 0.25  # m, longest sub-interval of the arc-length table and frame nodes
MAX_TURN = 0.02  # rad, largest turn of the tangent across one sub-interval
DEGREE = 5
MIN_POINTS = DEGREE + 1
#: a refit whose parameter range grows by more than this factor is not taken (kinked points)
REFIT_MAX_GROWTH = 1.5


class SplineCurve:
    """Quintic interpolating spline through ``points`` (n, 3), open or periodic.

    Attributes: ``length`` (m), ``closed``, ``point_s`` (arc length of each
    input point, m), ``node_s`` (arc lengths of the sub-interval table, m,
    from 0 to ``length``, including every ``point_s``).
    """

    def __init__(self, points: np.ndarray, closed: bool):
        pts = np.ascontiguousarray(points, dtype=np.float64)
        self.closed = bool(closed)
        y = np.vstack([pts, pts[:1]]) if closed else pts
        chord = np.linalg.norm(np.diff(y, axis=0), axis=1)
        u = np.concatenate([[0.0], np.cumsum(chord)])
        for _ in range(3):
            self._fit(u, y)
            seg = np.diff(self.point_s)
            u_new = np.concatenate([[0.0], np.cumsum(seg)])
            if u_new[-1] > REFIT_MAX_GROWTH * u[-1]:
                break   # kinked points: refitting on the overshooting fit's arc length would run away
            change = np.max(np.abs(u_new - u)) / u_new[-1]
            u = u_new
            if change < 1e-9:
                break
        self._fit(u, y)

    def _fit(self, u: np.ndarray, y: np.ndarray):
        self.u_end = float(u[-1])
        self.breaks, self.coef = quintic_interpolant(u, y, periodic=self.closed)
        base = np.union1d(u, self.breaks[(self.breaks > 0.0) & (self.breaks < self.u_end)])
        # sub-divide so no sub-interval is longer than SUB_SPACING (|P_u| ~ 1 after refit)
        lens = np.empty(len(base) - 1)
        K.span_arc_lengths(self.breaks, self.coef, base, K.GL_NODES, K.GL_WEIGHTS, lens)
        m = np.maximum(1.0, np.ceil(lens / SUB_SPACING))   # float until its sum is checked
        # and no sub-interval turns the tangent by more than MAX_TURN (frames are interpolated between them)
        probe = np.concatenate([base, 0.5 * (base[1:] + base[:-1])])
        D = np.empty((len(probe), 4, 3))
        K.ppoly_eval(self.breaks, self.coef, np.ascontiguousarray(probe), D)
        sp = np.linalg.norm(D[:, 1], axis=1)
        kap = np.linalg.norm(np.cross(D[:, 1], D[:, 2]), axis=1) / sp**3
        nb = len(base)
        kmax = np.maximum(np.maximum(kap[: nb - 1], kap[1:nb]), kap[nb:])
        m = np.maximum(m, np.minimum(np.ceil(lens * kmax / MAX_TURN), 1000))
        if len(base) - 1 < 4 * len(u):
            m = np.maximum(m, 2)
        total = float(np.sum(m))
        if not total <= limits.left("nodes"):   # checked before the node arrays are allocated
            raise InputError(f"the fitted curve is {np.sum(lens) / 1000:.6g} km long with {total:.3g} frame nodes "
                             f"({limits.limit_text('nodes')}): the points are too far apart or the spline "
                             "overshoots",
                             where="points")
        m = m.astype(np.int64)
        iv = np.repeat(np.arange(len(m)), m)
        k = np.arange(len(iv)) - np.repeat(np.cumsum(m) - m, m)
        sub_u = np.append(base[iv] + (base[iv + 1] - base[iv]) * (k / m[iv]), base[-1])
        sub_len = np.empty(len(sub_u) - 1)
        K.span_arc_lengths(self.breaks, self.coef, sub_u, K.GL_NODES, K.GL_WEIGHTS, sub_len)
        self.sub_u = sub_u
        self.sub_s = np.concatenate([[0.0], np.cumsum(sub_len)])
        self.length = float(self.sub_s[-1])
        self.point_s = np.interp(u, sub_u, self.sub_s)
        self.node_s = self.sub_s

    def param(self, s: np.ndarray) -> np.ndarray:
        """Spline parameter at arc lengths ``s`` (m, within [0, length])."""
        s = np.ascontiguousarray(s, dtype=np.float64)
        out = np.empty_like(s)
        bad = K.invert_arc_length(self.breaks, self.coef, self.sub_u, self.sub_s, K.GL_NODES, K.GL_WEIGHTS,
                                  s, out, 1e-11 * max(1.0, self.length))
        if bad:
            raise RuntimeError(f"arc-length inversion did not converge at {bad} points")
        return out

    def derivs_u(self, u: np.ndarray) -> np.ndarray:
        """(n, 4, 3): position and its first three derivatives with respect to ``u``."""
        u = np.ascontiguousarray(u, dtype=np.float64)
        out = np.empty((len(u), 4, 3))
        K.ppoly_eval(self.breaks, self.coef, u, out)
        return out

    def eval(self, s: np.ndarray, nodes: bool = False):
        """Position, unit tangent, P'' (dT/ds) and torsion at arc lengths ``s``.

        With ``nodes=True``, ``s`` must be ``node_s`` and no inversion is needed.
        """
        u = self.sub_u if nodes else self.param(s)
        return derivs_to_frenet(self.derivs_u(u))


def derivs_to_frenet(D: np.ndarray):
    """From (n, 4, 3) parametric derivatives: P, T, P'' = dT/ds (1/m), torsion (1/m).

    ``κ = |P_u × P_uu| / |P_u|³``, ``τ = (P_u × P_uu)·P_uuu / |P_u × P_uu|²``
    (both independent of the parametrisation); τ is set to 0 where κ < 1e-7 /m.
    """
    P, d1, d2, d3 = D[:, 0], D[:, 1], D[:, 2], D[:, 3]
    v = np.linalg.norm(d1, axis=1)
    T = d1 / v[:, None]
    Kv = (d2 - np.sum(T * d2, axis=1)[:, None] * T) / (v * v)[:, None]
    c = np.cross(d1, d2)
    c2 = np.sum(c * c, axis=1)
    kappa = np.sqrt(c2) / v**3
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(kappa > 1e-7, np.sum(c * d3, axis=1) / np.where(c2 > 0, c2, 1.0), 0.0)
    return P, T, Kv, tau
