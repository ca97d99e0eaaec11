"""Tracks: a curve parametrised by arc length with a rider's frame (docs/physics.md §1).

The frame at ``s`` is the rotation-minimising frame (RMF) turned about the
tangent ``T`` by an angle ``θ(s) = θ_base(s) + φ_user(s)``:

* ``N_w = cos θ N_rmf + sin θ B_rmf`` (rider's left), ``B_w = T × N_w`` (rider's up);
* ``θ_base`` chooses the frame kind: ``up`` (zero bank against the vertical;
  across stretches within 30° of the vertical, or steeper than 20° where the
  track curves like a loop, carried along a reference that turns with the
  osculating plane where the track is curved and with the RMF where it is
  straight, so a loop's riders stay in its plane; see ``_build_up_angle``),
  ``minimal`` (0, plus the closing angle spread evenly on closed tracks),
  ``frenet`` (the principal normal as left axis), or an imported frame (the up
  vectors of an NL2 file at its points);
* ``φ_user`` are the roll knots (degrees in; C2 quintic Hermite with
  shape-preserving slopes, so equal knots hold the roll without overshoot),
  positive = a right-hand turn about ``T`` (right rail lower).

The Darboux vector is then exactly ``Ω = T × P'' + θ'(s) T``: the RMF turns
with ``T × P''`` (no twist) and the frame turns by ``θ'`` about ``T`` on top.
The RMF is computed by double reflection on nodes at most 0.25 m apart and
evaluated between nodes by cubic Hermite interpolation of ``N_rmf`` with its
exact derivative ``N_rmf' = −(P''·N_rmf) T``, then re-orthonormalised.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import _kernels as K
from .. import limits
from .compact import CompactTrack, build_table
from ..limits import MAX_TABLE_ROWS
from .interp import CubicSpline, QuinticHermite, pchip_slopes
from .spline import MIN_POINTS, SplineCurve

FRAME_KINDS = ("up", "minimal", "frenet")
UP_EXACT_PITCH = 20.0  # deg: `up` is exact where |pitch| ≤ this or < 60° away from loop-like curvature
UP_MIN_RUN = 15.0  # m: shorter level runs between steep stretches are carried through (one exact knot)
STEEP_SIN = math.sin(math.radians(UP_EXACT_PITCH))  # |T·up| above this: carried where the track curves like a loop
STEEP_COS = math.cos(math.radians(30.0))  # |T·up| above this (within 30° of vertical): always carried
LOOPLIKE_SIN = math.sin(math.radians(20.0))  # loop-like: the curvature vector is within 20° of the vertical plane through T
UP_CARRY_FADE = 6.0  # m: a carry takes on the exact up frame's twist rate within this distance of its ends
REF_SMOOTH = 4.0  # m: the reference's twist rate is averaged over this window (twice)
REF_MAX_MISMATCH = math.radians(30.0)  # a carry whose reference turns this much more or less than up needs uses the RMF
REF_KAPPA0 = 1.0 / 30.0  # 1/m: the carry's reference twists at τ κ²/(κ² + κ0²) (Frenet where curved, RMF where straight)
#: largest coordinate of a curve point, m
MAX_COORDINATE = 1.0e6
#: a fitted curve longer than its polyline by more than this fraction is reported (a kink or overshoot)
FIT_MAX_EXCESS = 0.02
#: a fitted curve whose radius falls below this is reported, m (segments.MIN_RADIUS: the smallest the sampling resolves)
FIT_MIN_RADIUS = 0.5
#: frames evaluated per block when tabulating (bounds the temporaries)
TABLE_BLOCK = 100_000
FRENET_MIN_CURVATURE = 1e-5  # 1/m: below it the principal normal is undefined
Z = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Frame:
    """The track frame at one arc length.

    Attributes
    ----------
    s : float
        Arc length, m (wrapped on closed tracks, clamped on open ones).
    position : (3,) ndarray
        P(s), m.
    tangent, normal, binormal : (3,) ndarray
        Unit axes ``T``, ``N_w`` (rider's left) and ``B_w`` (rider's up).
    curvature, torsion : float
        The curve's Frenet curvature and torsion, 1/m.
    roll : float
        Bank against the vertical, degrees, positive = right rail lower.
    darboux : (3,) ndarray
        Angular rate of the frame per metre of track, 1/m.
    """

    s: float
    position: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    binormal: np.ndarray
    curvature: float
    torsion: float
    roll: float
    darboux: np.ndarray


@dataclass(frozen=True)
class Frames:
    """Frames at many arc lengths: the fields of :class:`Frame` as arrays ((n,) or (n, 3))."""

    s: np.ndarray
    position: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    binormal: np.ndarray
    curvature: np.ndarray
    torsion: np.ndarray
    roll: np.ndarray
    darboux: np.ndarray

    def __len__(self):
        return len(self.s)

    def __getitem__(self, i) -> Frame:
        return Frame(float(self.s[i]), self.position[i], self.tangent[i], self.normal[i], self.binormal[i],
                     float(self.curvature[i]), float(self.torsion[i]), float(self.roll[i]), self.darboux[i])


def _wrap_pi(a):
    return (np.asarray(a) + np.pi) % (2.0 * np.pi) - np.pi


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _hermite(x, xs, y, dy):
    """Cubic Hermite interpolation on nodes ``xs`` of values ``y`` and slopes ``dy``.

    Returns the value and its derivative at ``x``; ``y``/``dy`` may be (n,) or (n, k).
    """
    return _hermite_at(_hermite_basis(x, xs), y, dy)


def _hermite_basis(x, xs):
    """The node interval ``j`` of each ``x`` and the cubic Hermite weights there (``_hermite_at``):
    worked out once for several quantities on the same nodes."""
    j = np.clip(np.searchsorted(xs, x, side="right") - 1, 0, len(xs) - 2)
    h = xs[j + 1] - xs[j]
    u = (x - xs[j]) / h
    u2 = u * u
    u3 = u2 * u
    h00 = 2 * u3 - 3 * u2 + 1
    h10 = u3 - 2 * u2 + u
    h01 = -2 * u3 + 3 * u2
    h11 = u3 - u2
    d00 = (6 * u2 - 6 * u) / h
    d10 = 3 * u2 - 4 * u + 1
    d01 = (-6 * u2 + 6 * u) / h
    d11 = 3 * u2 - 2 * u
    return j, (h00, h10 * h, h01, h11 * h, d00, d10, d01, d11)


def _hermite_at(basis, y, dy):
    """Value and derivative of the cubic Hermite interpolant of ``y``, ``dy`` ((n,) or (n, k)) with the
    weights ``basis`` (``_hermite_basis``)."""
    j, w = basis
    if y.ndim == 2:
        w = [a[:, None] for a in w]
    h00, h10h, h01, h11h, d00, d10, d01, d11 = w
    y0, y1, dy0, dy1 = y[j], y[j + 1], dy[j], dy[j + 1]
    val = h00 * y0 + h10h * dy0 + h01 * y1 + h11h * dy1
    der = d00 * y0 + d10 * dy0 + d01 * y1 + d11 * dy1
    return val, der


def _roll_curve(x, y, closed, length):
    """C2 quintic Hermite through roll knots without overshoot between equal knots.

    Slopes are PCHIP's (Fritsch–Carlson: zero at flats and extremes), second
    derivatives the central difference of the slopes (zero where the slope is);
    an open track's end knots get zero slope and curvature (the roll holds
    beyond them). Returns a :class:`~trackrider.curves.interp.QuinticHermite`.
    """
    n = len(x)
    if closed:
        xe = np.concatenate([x - length, x, x + length])
        ye = np.concatenate([y, y, y])
        m = pchip_slopes(xe, ye)
        c = np.gradient(m, xe)
        c = np.where(m == 0, 0.0, c)
        xs = np.append(x, x[0] + length)
        m = np.append(m[n : 2 * n], m[n])
        c = np.append(c[n : 2 * n], c[n])
        ys = np.append(y, y[0])
    else:
        xs, ys = x, y
        m = pchip_slopes(x, y) if n > 2 else np.zeros(n)
        m[0] = m[-1] = 0.0
        c = np.gradient(m, x) if n > 2 else np.zeros(n)
        c = np.where(m == 0, 0.0, c)
        c[0] = c[-1] = 0.0
    return QuinticHermite(xs, ys, m, c)


def _angle_about(T, a, b):
    """Signed angle (rad) from unit vectors ``a`` to ``b`` about ``T`` (all (n, 3), ⊥ T)."""
    return np.arctan2(np.sum(np.cross(a, b) * T, axis=1), np.sum(a * b, axis=1))


class Track:
    """A track: curve by arc length plus the rider's frame. Build with a classmethod.

    Use :meth:`from_points`, :meth:`from_segments` or :func:`trackrider.curves.load_curve`.

    Attributes
    ----------
    length : float
        Arc length, m.
    closed : bool
        Whether ``s`` wraps modulo ``length``.
    points : (n, 3) ndarray or None
        The input points (after dropping exact repeats), m.
    point_s : (n,) ndarray or None
        Arc length of each input point, m.
    frame_kind : str
        ``up``, ``minimal``, ``frenet`` or ``file``.
    roll_knots : (k, 2) ndarray
        Roll knots ``(s m, degrees)`` added on top of the frame.
    """

    def __init__(self, curve, frame: str = "up", roll=None, up_vectors=None, points=None, source=None):
        self._curve = curve
        self.length = float(curve.length)
        self.closed = bool(curve.closed)
        self.points = points
        self.point_s = getattr(curve, "point_s", None)
        self.source = source
        if frame not in FRAME_KINDS + ("file",):
            raise InputError(f"unknown frame {frame!r}; expected one of up, minimal, frenet", path=source, where="frame")
        self.frame_kind = frame
        self._build_nodes()
        self._build_up_angle()
        if frame == "up":
            self._theta, self._dtheta = self._psi, self._dpsi
        elif frame == "minimal":
            self._theta, self._dtheta = self._minimal_angle()
        elif frame == "frenet":
            self._theta, self._dtheta = self._frenet_angle()
        else:
            if up_vectors is None:
                raise InputError("frame 'file' needs up vectors from the file", path=source, where="frame")
            self._theta, self._dtheta = self._file_angle(np.asarray(up_vectors, dtype=np.float64))
        self.roll_knots = np.zeros((0, 2))
        self._roll_spline = None
        if roll is not None:
            self._set_roll(roll)
        self._kdtree = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_points(cls, points, frame: str = "up", closed: bool = False, roll=None, *,
                    source=None, lines=None, point_roll=None, up_vectors=None) -> "Track":
        """A track through ``points`` ((n, 3), m): quintic spline, re-parametrised by arc length.

        Parameters
        ----------
        points : array_like (n, 3)
            At least 6 points, m, z up. Exact repeats of the previous point are
            dropped with a warning; reversals (a turn of more than 120° at one
            point) are refused.
        frame : {"up", "minimal", "frenet"}
            How the rider's up is chosen (default ``up``: zero bank).
        closed : bool
            Periodic spline, ``s`` wraps (default False). A last point within half
            the mean spacing of the first is taken as the closing repeat and dropped.
        roll : sequence of (s, degrees), optional
            Bank knots added on top of the frame.
        source, lines, point_roll, up_vectors
            Used by the file loaders: file path and line numbers for error
            messages, per-point roll (degrees) and per-point up vectors (``frame='file'``).
        """
        pts = np.asarray(points, dtype=np.float64) if not isinstance(points, np.ndarray) else points.astype(np.float64)
        lines = None if lines is None else np.asarray(lines)

        def where(i):
            return f"line {lines[i]}" if lines is not None else f"points[{i}]"

        if pts.ndim != 2 or pts.shape[1] != 3:
            raise InputError(f"points must be an (n, 3) array, got shape {pts.shape}", path=source, where="points")
        bad = ~np.all(np.isfinite(pts), axis=1)
        if bad.any():
            raise InputError("non-finite coordinate (NaN or inf)", path=source, where=where(int(np.argmax(bad))))
        if len(pts) > limits.left("points"):
            raise InputError(f"{len(pts):,} points is more than a curve may have ({limits.limit_text('points')})",
                             path=source, where="points")
        big = np.any(np.abs(pts) > MAX_COORDINATE, axis=1)
        if big.any():
            i = int(np.argmax(big))
            raise InputError(f"coordinate {float(np.max(np.abs(pts[i]))):.6g} m is beyond ±{MAX_COORDINATE:g} m "
                             f"(limit)", path=source, where=where(i))
        keep = np.ones(len(pts), bool)
        if len(pts) > 1:
            rep = np.all(pts[1:] == pts[:-1], axis=1)
            keep[1:] = ~rep
            if rep.any():
                i = int(np.argmax(rep)) + 1
                warnings.warn(f"{source or 'points'}: {where(i)}: dropped {int(rep.sum())} exact repeat(s) of the "
                              f"previous point", UserWarning, stacklevel=2)
        idx = np.nonzero(keep)[0]
        pts = pts[idx]
        extra = {}
        if point_roll is not None:
            extra["roll"] = np.asarray(point_roll, dtype=np.float64)[idx]
        if up_vectors is not None:
            extra["up"] = np.asarray(up_vectors, dtype=np.float64)[idx]
        if lines is not None:
            lines = lines[idx]
        if closed and len(pts) > 2:
            gap = np.linalg.norm(pts[-1] - pts[0])
            mean = np.mean(np.linalg.norm(np.diff(pts, axis=0), axis=1))
            if gap < 0.5 * mean:
                pts = pts[:-1]
                extra = {k: v[:-1] for k, v in extra.items()}
                if lines is not None:
                    lines = lines[:-1]
            elif gap > 10 * np.median(np.linalg.norm(np.diff(pts, axis=0), axis=1)):
                raise InputError(f"closed, but the last point is {gap:.3f} m from the first (more than 10 point "
                                 f"spacings): the closing stretch would be a straight jump", path=source,
                                 where="closed")
        if len(pts) < MIN_POINTS:
            raise InputError(f"a track needs at least {MIN_POINTS} distinct points (quintic spline), got {len(pts)}",
                             path=source, where="points")
        seq = np.vstack([pts, pts[:1]]) if closed else pts
        d = np.diff(seq, axis=0)
        du = _unit(d)
        cosang = np.sum(du[1:] * du[:-1], axis=1)
        if closed:
            cosang = np.append(cosang, np.dot(du[-1], du[0]))
        if (cosang < -0.5).any():
            i = (int(np.argmax(cosang < -0.5)) + 1) % len(pts)
            raise InputError("the curve reverses direction here (a cusp: turn of more than 120° at one point)",
                             path=source, where=where(i))
        chord = float(np.sum(np.linalg.norm(np.diff(seq, axis=0), axis=1)))
        if chord > limits.left("length"):
            raise InputError(f"the points span {chord / 1000:.6g} km, more than a track may be "
                             f"({limits.limit_text('length')})", path=source, where="points")
        try:
            curve = SplineCurve(pts, closed)
        except InputError as exc:
            raise InputError(exc.detail, path=source, where=exc.where or "points") from None
        if frame is None:
            frame = "file" if "up" in extra else "up"
        track = cls(curve, frame=frame, roll=None, up_vectors=extra.get("up"), points=pts, source=source)
        track._warn_if_kinked(seq, lines, source)
        if roll is None and "roll" in extra and np.any(extra["roll"] != 0):
            knots = np.column_stack([curve.point_s[: len(pts)], extra["roll"]])
            track._set_roll(knots)
        elif roll is not None:
            track._set_roll(roll)
        return track

    def _warn_if_kinked(self, seq, lines, source):
        """Warn when the fit strays from the points: its length exceeds the polyline's by more than
        ``FIT_MAX_EXCESS``, or its radius falls below ``FIT_MIN_RADIUS``; the warning names s and the point."""
        def point(i):
            i = int(i) % len(self.points)
            return f"line {lines[i]}" if lines is not None else f"point {i}"

        name = source or "points"
        chord = np.linalg.norm(np.diff(seq, axis=0), axis=1)
        poly = float(np.sum(chord))
        if poly > 0 and self.length > (1.0 + FIT_MAX_EXCESS) * poly:
            ps = self.point_s
            span = np.diff(ps[: len(chord) + 1]) / np.maximum(chord, 1e-12)
            i = int(np.argmax(span))
            warnings.warn(f"{name}: the fitted curve is {self.length:.6g} m long, {100 * (self.length / poly - 1):.3g} % "
                          f"longer than the polyline through its points ({poly:.6g} m): it overshoots most between "
                          f"{point(i)} and {point(i + 1)} (s = {ps[i]:.6g} m); add points or smooth the corners",
                          UserWarning, stacklevel=3)
        kmax = float(np.max(self._nkappa)) if len(self._nkappa) else 0.0
        if kmax > 1.0 / FIT_MIN_RADIUS:
            j = int(np.argmax(self._nkappa))
            s_at = float(self._node_s[j])
            near = int(np.argmin(np.abs(self.point_s[: len(self.points)] - s_at)))
            warnings.warn(f"{name}: the fitted curve's radius falls to {1.0 / kmax:.3g} m at s = {s_at:.6g} m (near "
                          f"{point(near)}), below {FIT_MIN_RADIUS:g} m: a kink in the points; add points or smooth "
                          "the corner", UserWarning, stacklevel=3)

    @classmethod
    def from_segments(cls, segments, frame: str = "up", roll=None, closed: bool = False, *, source=None) -> "Track":
        """A track from a scenario's ``segments`` (docs/curves.md) (see :mod:`trackrider.curves.segments`).

        A list with ``force`` or ``geometric`` segments is a force-vector design
        (:func:`design_track`, frictionless, g = 9.81 m/s²):
        its frame is the design's, so ``frame`` and ``roll`` must be left at their defaults.
        """
        from .segments import build_segment_curve, is_design

        if is_design(segments):
            if frame != "up" or roll is not None:
                raise InputError("frame and roll do not apply to a force-designed track (its frame is the "
                                 "design's)", path=source, where="frame" if frame != "up" else "roll")
            return design_track(segments, closed=closed, source=source)

        curve = build_segment_curve(segments, closed=closed, source=source)
        return cls(curve, frame=frame, roll=roll, source=source)

    def _build_nodes(self):
        c = self._curve
        self._node_s = np.ascontiguousarray(c.node_s, dtype=np.float64)
        P, T, Kv, tau = c.eval(self._node_s, nodes=True)
        self._nP, self._nT, self._nK = P, T, Kv
        self._nkappa = np.linalg.norm(Kv, axis=1)
        self._ntau = tau
        t0 = T[0]
        w = Z - t0[2] * t0
        if np.linalg.norm(w) < 1e-6:
            w = np.array([-1.0, 0.0, 0.0]) - t0[0] * t0
        n0 = np.cross(w / np.linalg.norm(w), t0)
        N = np.empty_like(P)
        K.rmf_double_reflection(np.ascontiguousarray(P), np.ascontiguousarray(T), np.ascontiguousarray(n0), N)
        self._nN = N
        self._nB = np.cross(T, N)
        self._ndN = -np.sum(Kv * N, axis=1)[:, None] * T

    def _up_candidate(self, T, Kv, N, B):
        """Angle of the upright `up` frame relative to the RMF, its rate, and the steepness mask."""
        tz = T[:, 2]
        wn = np.sqrt(np.maximum(1.0 - tz * tz, 0.0))
        safe = np.where(wn > 1e-12, wn, 1.0)
        what = (Z[None, :] - tz[:, None] * T) / safe[:, None]
        n_up = np.cross(what, T)
        ang = np.arctan2(np.sum(n_up * B, axis=1), np.sum(n_up * N, axis=1))
        # ρ_up = (up·T)(P''·(ŵ × T)) / |up − (up·T)T|   (twist rate of the up frame)
        rho = tz * np.sum(Kv * n_up, axis=1) / safe
        # carried: within 30° of the vertical, or steeper than 20° where the track curves in the vertical
        # plane through T (a loop, a drop's pull-out: the rider's up should stay in the osculating plane)
        kap = np.linalg.norm(Kv, axis=1)
        looplike = np.abs(np.sum(Kv * n_up, axis=1)) < LOOPLIKE_SIN * kap
        steep = (np.abs(tz) > STEEP_COS) | ((np.abs(tz) > STEEP_SIN) & looplike)
        return ang, rho, steep

    def _build_reference(self):
        """The carry's reference angle φ_ref (rad, relative to the RMF) at the nodes.

        Its twist rate is the regularised Frenet torsion
        ``ρ_ref = τ κ² / (κ² + κ0²) = (T × P'')·P''' / (κ² + κ0²)`` (κ0 = REF_KAPPA0):
        on a curved stretch (κ ≫ κ0) the reference turns with the osculating
        plane (the Frenet frame), on a straight one (κ → 0) it is the RMF, and it
        stays finite at inflections. Integrated node to node by the
        Hermite-corrected trapezoid rule; evaluated between nodes by cubic
        Hermite (so its value and rate agree exactly).
        """
        s = self._node_s
        k2 = self._nkappa ** 2
        rho = self._ntau * k2 / (k2 + REF_KAPPA0 ** 2)
        for _ in range(2):  # two box filters (triangle of half-width REF_SMOOTH): τ steps at joints become ramps
            rho = self._box(s, rho, REF_SMOOTH)
        drho = np.gradient(rho, s) if len(s) > 2 else np.zeros_like(s)
        h = np.diff(s)
        inc = 0.5 * h * (rho[:-1] + rho[1:]) + h * h * (drho[:-1] - drho[1:]) / 12.0
        self._ref = np.concatenate([[0.0], np.cumsum(inc)])
        self._dref = rho

    def _box(self, s, y, w):
        """Moving average of ``y`` (on nodes ``s``) over a window ``w`` m (periodic if closed, shrunk at open ends)."""
        c = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(s) * (y[:-1] + y[1:]))])
        L = self.length
        lo, hi = s - 0.5 * w, s + 0.5 * w
        if self.closed:
            def C(x):
                k = np.floor(x / L)
                return np.interp(x - k * L, s, c) + k * c[-1]
            return (C(hi) - C(lo)) / w
        lo, hi = np.clip(lo, 0.0, L), np.clip(hi, 0.0, L)
        return (np.interp(hi, s, c) - np.interp(lo, s, c)) / np.maximum(hi - lo, 1e-12)

    def _ref_at(self, x):
        """φ_ref (rad) and φ_ref' (rad/m) at ``x`` in [0, length]."""
        return _hermite(np.asarray(x, dtype=np.float64), self._node_s, self._ref, self._dref)

    def _build_up_angle(self):
        """The `up` frame's angle ψ (rad, relative to the RMF) and its rate at the nodes, plus the carries.

        * Exact (``B_w`` in the vertical plane through ``T``) on runs of nodes that
          are not *steep*: steep = within 30° of the vertical, or more than 20°
          from level where the curvature vector lies within 20° of the vertical
          plane through ``T`` (a loop, a drop's pull-out). The sign (upright or
          inverted) is the one nearer to the frame carried by the RMF.
        * Short runs (< UP_MIN_RUN) between two steep stretches — the top and
          bottom of a loop, a crest — are not held: the carry goes through
          them and meets the exact frame at one knot (where ``T`` is level, so
          the top of a loop is exactly inverted).
        * Across a steep stretch ψ = φ_ref + δ: φ_ref turns with the smoothed,
          regularised torsion (the osculating plane where the track curves, the
          RMF where it is straight; the RMF alone if that is 30° off what the
          up frame must turn), δ interpolates the exact frame's offsets at the
          ends and knots (:meth:`_offset_carry`). A loop that exits beside its
          entry (its plane leans and turns by ∫τ ds) is thus ridden in its
          plane: no κ v² sin ψ sideways.
        """
        s = self._node_s
        self._build_reference()
        ref, dref = self._ref, self._dref
        ang, rho, steep = self._up_candidate(self._nT, self._nK, self._nN, self._nB)
        self._build_weight(rho)
        n = len(s)
        psi = np.zeros(n)
        dpsi = np.zeros(n)
        self._carry = []  # (s_lo, s_hi, ψ(s), ψ'(s)) across steep stretches
        self._psi_flip = 0.0  # added to the carries when the whole track's sign is flipped
        ok = ~steep
        if not ok.any():
            self._up_exact = ok[:-1] & ok[1:]
            self._psi, self._dpsi = psi, dpsi
            return
        edges = np.diff(np.concatenate([[0], ok.astype(np.int8), [0]]))
        starts = list(np.nonzero(edges == 1)[0])
        ends = list(np.nonzero(edges == -1)[0] - 1)
        # short level runs between two steep stretches (the top and bottom of a loop, a crest between
        # steep sides) are not held exactly: the carry runs through them and meets the exact up frame
        # at one knot (where T is level, else where it is least steep)
        knots = []
        if len(starts) > 2:
            keep = [0]
            for r in range(1, len(starts) - 1):
                a, b = starts[r], ends[r]
                if s[b] - s[a] >= UP_MIN_RUN:
                    keep.append(r)
                    continue
                ok[a : b + 1] = False
                knots.append(self._level_point(a, b))
            keep.append(len(starts) - 1)
            starts = [starts[r] for r in keep]
            ends = [ends[r] for r in keep]
        self._up_exact = ok[:-1] & ok[1:]  # per node interval: the up frame is exact inside
        prev = None  # (index, psi) at the end of the previous upright-defined run
        for a, b in zip(starts, ends):
            raw = ang[a : b + 1].copy()
            xs, ys = [], []
            if prev is None:
                target = 0.0
            else:
                # the signs (upright or inverted) at the knots and on the far side are the ones nearer to
                # the frame carried by the RMF (no twist), as docs/physics.md §1 asks
                i0 = prev[0]
                xs, ys = [s[i0]], [psi[i0]]
                last = psi[i0]
                for sk, ak in knots:
                    if s[i0] < sk < s[a]:
                        last = last + ((ak - last + 0.5 * np.pi) % np.pi - 0.5 * np.pi)
                        xs.append(sk)
                        ys.append(last)
                target = last
            # choose the sign (upright or inverted) nearer to the carried frame
            c_up = target + _wrap_pi(raw[0] - target)
            c_inv = target + _wrap_pi(raw[0] + np.pi - target)
            if prev is None or abs(c_up - target) <= abs(c_inv - target):
                start_val, offset = c_up, 0.0
            else:
                start_val, offset = c_inv, np.pi
            run = np.unwrap(raw + offset)
            run += start_val - run[0]
            psi[a : b + 1] = run
            dpsi[a : b + 1] = rho[a : b + 1]
            if prev is None and a > 0:
                self._extend(psi, dpsi, s, a, a, 0, backwards=True)
            elif prev is not None:
                # carry across the steep stretch: ψ = φ_ref + δ, δ a spline through the exact up frame's
                # offsets from the reference at both ends and at the knots, taking on its rates at the ends
                i0 = prev[0]
                xs.append(s[a])
                ys.append(psi[a])
                xs = np.array(xs)
                # the reference is used only if it turns about as the up frame must (else the RMF: u = 0)
                u = float(abs((ys[-1] - ys[0]) - (ref[a] - ref[i0])) < REF_MAX_MISMATCH)
                bp, dbp = self._offset_carry(xs, np.array(ys) - u * self._ref_at(xs)[0],
                                             dpsi[i0] - u * dref[i0], dpsi[a] - u * dref[a])
                mid = np.arange(i0 + 1, a)
                psi[mid] = u * ref[mid] + bp(s[mid])
                dpsi[mid] = u * dref[mid] + dbp(s[mid])
                self._carry.append((s[i0], s[a],
                                    lambda x, bp=bp, u=u: u * self._ref_at(x)[0] + bp(x),
                                    lambda x, dbp=dbp, u=u: u * self._ref_at(x)[1] + dbp(x)))
            prev = (b, psi[b])
        if prev[0] < n - 1:
            self._extend(psi, dpsi, s, prev[0], prev[0] + 1, n - 1, backwards=False)
        if self.closed:
            self._close_up_angle(psi, dpsi, int(starts[0]), int(prev[0]))
        if self.closed or steep[0]:
            # no upright start to anchor on: choose the sign that keeps riders upright over most of the track
            sigma = np.cos(psi[ok] - ang[ok])
            w = np.gradient(s)[ok]
            if np.sum(sigma * w) < 0:
                psi += np.pi
                self._psi_flip = np.pi
        self._psi, self._dpsi = psi, dpsi

    def _level_point(self, a, b):
        """Knot of a short level run (nodes a..b): arc length where T_z = 0 (else least |T_z|), up angle there."""
        s = self._node_s
        tz = self._nT[a : b + 1, 2]
        j = np.nonzero(np.sign(tz[1:]) != np.sign(tz[:-1]))[0]
        if len(j):
            lo, hi = s[a + j[0]], s[a + j[0] + 1]
            flo = tz[j[0]]
            tangent = getattr(self._curve, "tangent", None) or (lambda x: self._curve.eval(x)[1])
            for _ in range(60):  # bisection on T_z = 0
                m = 0.5 * (lo + hi)
                fm = tangent(np.array([m]))[0, 2]
                if np.sign(fm) == np.sign(flo):
                    lo, flo = m, fm
                else:
                    hi = m
            sk = 0.5 * (lo + hi)
        else:
            sk = s[a + int(np.argmin(np.abs(tz)))]
        x = np.array([sk])
        _, T, Kv, _ = self._curve.eval(x)
        Nr, _ = _hermite(x, self._node_s, self._nN, self._ndN)
        Nr = _unit(Nr - np.sum(Nr * T, axis=1)[:, None] * T)
        ak = self._up_candidate(T, Kv, Nr, np.cross(T, Nr))[0][0]
        return float(sk), float(ak)

    def _build_weight(self, rho_up):
        """Where a carry makes up its offset: the weight ω = ε + min(|ρ_up − ρ_ref|, cap) (1/m), smoothed.

        The offset δ a carry must add to its reference is spread in proportion to
        ω, i.e. where the up frame actually turns away from the reference (a
        steep turn the reference misses, the twist near a vertical point), not
        on the loop-like stretches before and after where the reference already
        agrees with it. ``F`` is its running integral (cubic Hermite between nodes).
        """
        s = self._node_s
        w = 5e-3 + np.minimum(np.abs(rho_up - self._dref), 0.01)
        for _ in range(2):
            w = self._box(s, w, REF_SMOOTH)
        dw = np.gradient(w, s) if len(s) > 2 else np.zeros_like(s)
        h = np.diff(s)
        self._wF = np.concatenate([[0.0], np.cumsum(0.5 * h * (w[:-1] + w[1:]) + h * h * (dw[:-1] - dw[1:]) / 12.0)])
        self._w = w

    def _warp(self, x):
        """F(x) = ∫ω ds from 0 and ω(x); ``x`` may run one lap past ``length`` on a closed track."""
        x = np.asarray(x, dtype=np.float64)
        k = np.floor(x / self.length) if self.closed else np.zeros_like(x)
        k = np.where(x >= self.length - 1e-12, np.maximum(k, 1.0), k) if self.closed else k
        base = np.clip(x - k * self.length, 0.0, self.length)
        val, der = _hermite(base, self._node_s, self._wF, self._w)
        return val + k * self._wF[-1], der

    def _offset_carry(self, xs, ys, r0, r1):
        """The carried offset δ(s) = ψ − φ_ref (rad) and δ' (rad/m) across a steep stretch.

        A natural cubic spline through ``(xs, ys)`` (the stretch's ends and its
        knots; a straight line if there are none) in the warped coordinate
        ``F(s) = ∫ω ds`` (see :meth:`_build_weight`); plus a correction at each
        end that gives δ the slope ``r0``/``r1`` of the exact up frame there (a
        C1 bank) and fades out within ``D = min(UP_CARRY_FADE, half the end interval)``:
        ``b(x) = c x (1 − x/D)³`` (``b(0) = 0``, ``b'(0) = c``, ``b = b' = b'' = 0`` at ``D``).
        """
        xs = np.asarray(xs, dtype=np.float64)
        ys = np.asarray(ys, dtype=np.float64)
        Fx = self._warp(xs)[0]
        if len(xs) > 2:
            spl = CubicSpline(Fx, ys, bc_type="natural")
            dspl = spl.derivative()
        else:
            m = (ys[1] - ys[0]) / (Fx[1] - Fx[0])
            spl = lambda F: ys[0] + m * (np.asarray(F) - Fx[0])  # noqa: E731
            dspl = lambda F: np.full(np.shape(F), m)  # noqa: E731
        x0, x1 = xs[0], xs[-1]
        D0 = min(UP_CARRY_FADE, 0.5 * (xs[1] - xs[0]))
        D1 = min(UP_CARRY_FADE, 0.5 * (xs[-1] - xs[-2]))
        w0, w1 = self._warp(np.array([x0, x1]))[1]
        c0 = r0 - float(dspl(Fx[:1])[0]) * w0
        c1 = r1 - float(dspl(Fx[-1:])[0]) * w1

        def bump(x, c, D):
            u = np.clip(x / D, 0.0, 1.0)
            return c * D * u * (1.0 - u) ** 3, c * (1.0 - u) ** 2 * (1.0 - 4.0 * u)

        def f(x):
            x = np.asarray(x, dtype=np.float64)
            return spl(self._warp(x)[0]) + bump(x - x0, c0, D0)[0] - bump(x1 - x, c1, D1)[0]

        def df(x):
            x = np.asarray(x, dtype=np.float64)
            F, w = self._warp(x)
            return dspl(F) * w + bump(x - x0, c0, D0)[1] + bump(x1 - x, c1, D1)[1]

        return f, df

    def _close_up_angle(self, psi, dpsi, a0, b_last):
        """On a closed track, carry the up frame across ``s = L ≡ 0`` and check it meets itself."""
        s, L, n = self._node_s, self.length, len(self._node_s)
        ref, dref = self._ref, self._dref
        gap = _angle_about(self._nT[:1], self._nN[-1:], self._nN[:1])[0]  # N_rmf(0) = N_rmf(L) turned by gap
        if a0 == 0 and b_last == n - 1:
            mismatch = _wrap_pi(psi[0] + gap - psi[-1])
        else:
            # ψ at the first exact node, relative to the RMF continued past L (sign nearer to the RMF
            # carry); the reference continued past L is φ_ref(x − L) + Φ with Φ = φ_ref(L) (φ_ref(0) = 0)
            d = _wrap_pi(psi[a0] + gap - psi[b_last])
            end_val = psi[b_last] + d
            Phi = ref[-1]
            u = float(abs(d - (ref[a0] + Phi - ref[b_last])) < REF_MAX_MISMATCH)
            bp, dbp = self._offset_carry([s[b_last], s[a0] + L], [psi[b_last] - u * ref[b_last],
                                                                  end_val - u * (ref[a0] + Phi)],
                                         dpsi[b_last] - u * dref[b_last], dpsi[a0] - u * dref[a0])
            shift = end_val - psi[a0]
            tail = np.arange(b_last + 1, n)
            head = np.arange(0, a0)
            psi[tail], dpsi[tail] = u * ref[tail] + bp(s[tail]), u * dref[tail] + dbp(s[tail])
            psi[head] = u * (ref[head] + Phi) + bp(s[head] + L) - shift
            dpsi[head] = u * dref[head] + dbp(s[head] + L)
            self._carry.append((s[b_last], L, lambda x, bp=bp, u=u: u * self._ref_at(x)[0] + bp(x),
                                lambda x, dbp=dbp, u=u: u * self._ref_at(x)[1] + dbp(x)))
            self._carry.append((0.0, s[a0],
                                lambda x, bp=bp, u=u, sh=shift - u * Phi: u * self._ref_at(x)[0] + bp(x + L) - sh,
                                lambda x, dbp=dbp, u=u: u * self._ref_at(x)[1] + dbp(x + L)))
            mismatch = d
        if abs(mismatch) > np.pi / 2 and self.frame_kind == "up":
            raise InputError("closed track: after one lap the 'up' frame comes back upside down (an odd number "
                             "of passes through the vertical); use frame 'minimal' or open the track",
                             path=self.source, where="frame")

    def _extend(self, psi, dpsi, s, i_ref, i_from, i_to, backwards):
        """Carry the angle from node ``i_ref`` over a steep end stretch along the reference φ_ref.

        ψ = ψ(i_ref) + φ_ref − φ_ref(i_ref) + an offset whose rate starts at the
        exact up frame's (ρ_up − ρ_ref, a C1 bank) and fades linearly to 0 at the track's end.
        """
        lo, hi = (i_to, i_from) if backwards else (i_from, i_to)
        idx = np.arange(lo, hi + 1) if hi >= lo else np.arange(lo, lo)
        D = abs(s[i_to] - s[i_ref])
        if D <= 0 or len(idx) == 0:
            return
        ref, dref = self._ref, self._dref
        x = np.abs(s[idx] - s[i_ref])
        r0 = dpsi[i_ref] - dref[i_ref]
        sign = -1.0 if backwards else 1.0
        psi[idx] = psi[i_ref] + ref[idx] - ref[i_ref] + sign * r0 * (x - x * x / (2 * D))
        dpsi[idx] = dref[idx] + r0 * (1 - x / D)

    def _minimal_angle(self):
        s = self._node_s
        theta = np.zeros(len(s))
        dtheta = np.zeros(len(s))
        if self.closed:
            # transported frame at s = L against the frame at s = 0 (same point): spread the gap
            gap = _angle_about(self._nT[:1], self._nN[-1:], self._nN[:1])[0]
            theta = gap * s / self.length
            dtheta[:] = gap / self.length
        return theta, dtheta

    def _frenet_angle(self):
        kappa = self._nkappa
        low = kappa < FRENET_MIN_CURVATURE
        if low.any():
            i = int(np.argmax(low))
            raise InputError(f"the frenet frame is undefined at s = {self._node_s[i]:.2f} m where the curvature is "
                             f"~0 (a straight or an inflection); use frame 'up' or 'minimal'",
                             path=self.source, where="frame")
        nf = self._nK / kappa[:, None]
        ang = np.arctan2(np.sum(nf * self._nB, axis=1), np.sum(nf * self._nN, axis=1))
        step = np.abs(_wrap_pi(np.diff(ang)))
        if (step > np.pi / 2).any():
            i = int(np.argmax(step > np.pi / 2))
            raise InputError(f"the frenet frame flips at s = {self._node_s[i]:.2f} m (an inflection: the principal "
                             f"normal reverses); use frame 'up' or 'minimal'", path=self.source, where="frame")
        return np.unwrap(ang), self._ntau.copy()

    def _file_angle(self, up):
        ps = self._curve.point_s[: len(up)]
        j = np.searchsorted(self._node_s, ps)
        T, N, B = self._nT[j], self._nN[j], self._nB[j]
        u = up - np.sum(up * T, axis=1)[:, None] * T
        norm = np.linalg.norm(u, axis=1)
        if (norm < 1e-6).any():
            i = int(np.argmax(norm < 1e-6))
            raise InputError("the file's up vector is parallel to the track tangent", path=self.source,
                             where=f"point {i}")
        nfile = np.cross(u / norm[:, None], T)
        ang = np.unwrap(np.arctan2(np.sum(nfile * B, axis=1), np.sum(nfile * N, axis=1)))
        if self.closed:
            a_end = _angle_about(self._nT[-1:], self._nN[-1:], nfile[:1])[0]
            a_end = ang[-1] + _wrap_pi(a_end - ang[-1])
            xs = np.append(ps, self.length)
            ys = np.append(ang, a_end)
            slope = (ys[-1] - ys[0]) / self.length
            spl = CubicSpline(xs, ys - slope * xs, bc_type="periodic")
            return spl(self._node_s) + slope * self._node_s, spl(self._node_s, 1) + slope
        spl = CubicSpline(ps, ang, bc_type="not-a-knot") if len(ps) > 3 else CubicSpline(ps, ang)
        return spl(self._node_s), spl(self._node_s, 1)

    def _set_roll(self, roll):
        where = "roll"
        try:
            k = np.asarray(roll, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("roll must be a list of [s, degrees] pairs", path=self.source, where=where) from None
        if k.ndim != 2 or k.shape[1] != 2 or len(k) == 0:
            raise InputError(f"roll must be a list of [s, degrees] pairs, got shape {k.shape}", path=self.source,
                             where=where)
        if not np.all(np.isfinite(k)):
            raise InputError("roll knots must be finite", path=self.source, where=where)
        tol = 1e-6 * max(1.0, self.length)
        if (k[:, 0] < -tol).any() or (k[:, 0] > self.length + tol).any():
            i = int(np.argmax((k[:, 0] < -tol) | (k[:, 0] > self.length + tol)))
            raise InputError(f"roll knot s = {k[i, 0]} m is outside the track [0, {self.length:.3f}]",
                             path=self.source, where=f"{where}[{i}]")
        if (np.diff(k[:, 0]) <= 0).any():
            i = int(np.argmax(np.diff(k[:, 0]) <= 0)) + 1
            raise InputError("roll knots must have strictly increasing s", path=self.source, where=f"{where}[{i}]")
        self.roll_knots = k
        x, y = k[:, 0], np.radians(k[:, 1])
        if self.closed and len(x) > 1 and x[-1] >= x[0] + self.length - tol:
            x, y = x[:-1], y[:-1]  # the last knot repeats the first one around the circuit
        if len(x) == 1:
            self._roll_spline = ("const", y[0])
        else:
            self._roll_spline = ("knots", _roll_curve(x, y, self.closed, self.length), x[0], x[-1])

    def _roll(self, s):
        """User roll (rad) and its rate (rad/m) at ``s``."""
        r = self._roll_spline
        if r is None:
            return np.zeros_like(s), np.zeros_like(s)
        if r[0] == "const":
            return np.full_like(s, r[1]), np.zeros_like(s)
        bp, x0, x1 = r[1], r[2], r[3]
        if self.closed:
            x = (s - x0) % self.length + x0
            return bp(x), bp(x, 1)
        x = np.clip(s, x0, x1)
        return bp(x), bp(x, 1)

    # ------------------------------------------------------------------ evaluation
    def wrap(self, s):
        """``s`` modulo the length on a closed track, clamped to [0, length] on an open one (m)."""
        s = np.asarray(s, dtype=np.float64)
        if self.closed:
            return s % self.length
        return np.clip(s, 0.0, self.length)

    def frames(self, s_array) -> Frames:
        """Frames at arc lengths ``s_array`` (m), vectorised. See :class:`Frames`."""
        return self._frames(s_array)[0]

    def _frames(self, s_array):
        """``frames(s_array)`` and the curvature vector ``P''`` there ((n, 3), 1/m)."""
        s = np.atleast_1d(self.wrap(s_array)).astype(np.float64)
        P, T, Kv, tau = self._curve.eval(s)
        basis = _hermite_basis(s, self._node_s)
        Nr, _ = _hermite_at(basis, self._nN, self._ndN)
        Nr = _unit(Nr - np.sum(Nr * T, axis=1)[:, None] * T)
        Br = np.cross(T, Nr)
        psi, dpsi = _hermite_at(basis, self._psi, self._dpsi)
        # where the up frame is defined (both nodes far from vertical) take it exactly, not interpolated
        exact = self._up_exact[basis[0]]
        if exact.any():
            a, rho, _ = self._up_candidate(T[exact], Kv[exact], Nr[exact], Br[exact])
            psi[exact] = a + np.pi * np.round((psi[exact] - a) / np.pi)
            dpsi[exact] = rho
        for lo, hi, f_c, df_c in self._carry:  # steep stretches: the C2 carry itself, not its node samples
            m = (s > lo) & (s < hi)
            if m.any():
                psi[m] = f_c(s[m]) + self._psi_flip
                dpsi[m] = df_c(s[m])
        if self.frame_kind == "up":
            th, dth = psi.copy(), dpsi.copy()
        else:
            th, dth = _hermite_at(basis, self._theta, self._dtheta)
        ur, dur = self._roll(s)
        theta = th + ur
        c, sn = np.cos(theta)[:, None], np.sin(theta)[:, None]
        N = c * Nr + sn * Br
        B = np.cross(T, N)
        omega = np.cross(T, Kv) + (dth + dur)[:, None] * T
        roll = np.degrees(_wrap_pi(theta - psi))
        return Frames(s, P, T, N, B, np.linalg.norm(Kv, axis=1), tau, roll, omega), Kv

    def frame(self, s: float) -> Frame:
        """The frame at arc length ``s`` (m). See :class:`Frame`."""
        return self.frames(np.array([float(s)]))[0]

    def second_derivative(self, s_array):
        """``P''(s) = dT/ds`` (n, 3), 1/m: the curvature vector."""
        s = np.atleast_1d(self.wrap(s_array)).astype(np.float64)
        return self._curve.eval(s)[2]

    def compact(self, ds: float | None = None) -> CompactTrack:
        """Tabulate the exact spline and frame at equal spacing for numba kernels.

        Parameters
        ----------
        ds : float, optional
            Largest row spacing, m (default 0.1 m). The actual spacing is
            ``length / (n - 1)`` with ``n`` the smallest row count that meets it.
        """
        ds = 0.1 if ds is None else float(ds)
        if not ds > 0:
            raise InputError(f"compact spacing must be > 0, got {ds}", where="ds")
        n = max(2, int(math.ceil(self.length / ds - 1e-9)) + 1)
        if n > MAX_TABLE_ROWS:
            raise InputError(f"the track is {self.length:.6g} m long: tabulated every {ds:g} m it needs {n:,} rows, "
                             f"more than {MAX_TABLE_ROWS:,} (limit: {MAX_TABLE_ROWS * ds / 1000:g} km)",
                             path=self.source, where="length")
        s = np.linspace(0.0, self.length, n)
        if self.closed:
            s[-1] = 0.0           # the last row repeats the first exactly
        # in blocks, so memory stays a few times the table's own size however long the track
        cols = []
        for a in range(0, n, TABLE_BLOCK):
            f, dT = self._frames(s[a:a + TABLE_BLOCK])       # dT: second_derivative(f.s)
            cols.append((f.position, f.tangent, f.normal, f.binormal, f.darboux, f.curvature, dT, f.roll))
        if len(cols) == 1:
            parts = cols[0]
        else:
            parts = [np.concatenate([c[k] for c in cols]) for k in range(8)]
        return build_table(*parts, self.length, self.closed)

    def closest_s(self, xyz):
        """Arc length (m) of the track point nearest to ``xyz`` ((3,) or (n, 3), m)."""
        from scipy.spatial import cKDTree

        X = np.asarray(xyz, dtype=np.float64)
        single = X.ndim == 1
        X = np.atleast_2d(X)
        if self._kdtree is None:
            self._kdtree = cKDTree(self._nP)
        _, j = self._kdtree.query(X)
        s = self._node_s[j].astype(np.float64)
        for _ in range(8):
            P, T, Kv, _t = self._curve.eval(self.wrap(s))
            d = X - P
            f = np.sum(d * T, axis=1)
            fp = 1.0 - np.sum(d * Kv, axis=1)
            step = np.where(fp > 0.1, f / np.maximum(fp, 0.1), f)
            s = self.wrap(s + np.clip(step, -1.0, 1.0))
            if np.max(np.abs(step)) < 1e-10:
                break
        return float(s[0]) if single else s

    def __repr__(self):
        return (f"Track(length={self.length:.3f} m, closed={self.closed}, frame={self.frame_kind!r}, "
                f"roll_knots={len(self.roll_knots)})")


def design_track(segments, gravity: float = 9.81, rolling: float = 0.0, nl2_drag: float = 0.0,
                 closed: bool = False, source=None, label: str = "segments"):
    """The rail :class:`~trackrider.curves.Track` of a force-vector design (see :func:`design_heartline`).

    The rail runs through ``position − heart · up`` at every sample with the
    rider's up as its frame; the design is kept as ``track.design``.
    """
    from .force import MIN_RAIL_SPACING, design_heartline

    if closed:
        raise InputError("a force-designed track is open (closed = true is not supported)", path=source,
                         where="closed")
    design = design_heartline(segments, gravity=gravity, rolling=rolling, nl2_drag=nl2_drag, source=source,
                              label=label)
    rail = design.rail
    idx = [0]  # the joint samples repeat a point, and very short segments crowd them
    for j in range(1, len(rail)):
        if np.linalg.norm(rail[j] - rail[idx[-1]]) >= MIN_RAIL_SPACING:
            idx.append(j)
    if idx[-1] != len(rail) - 1:
        if len(idx) > 1:
            idx[-1] = len(rail) - 1
        else:
            idx.append(len(rail) - 1)
    idx = np.array(idx)
    if len(idx) < 6:
        raise InputError("the design is too short: fewer than 6 rail points (about 1.5 m)", path=source,
                         where="segments")
    track = Track.from_points(rail[idx], frame="file", up_vectors=design.up[idx], source=source)
    track.design = design
    track.design_index = idx
    return track
