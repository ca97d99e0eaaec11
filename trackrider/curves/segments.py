"""Tracks built from segments: straights, arcs, helices, clothoids and loops.

Every piece turns the tangent about a fixed axis ``k`` by an angle ``θ(σ)``
(σ: arc length within the piece): constant rate for straights, arcs, helices
and loops, linear rate for clothoids. With ``t = t∥ + t⊥`` split along ``k``:

    T(σ) = t∥ + cos θ t⊥ + sin θ (k × t⊥),   P'' = θ' k × T,   P''' = θ'' k × T + θ' k × P''

and the position is the exact integral (closed form for constant rate,
Gauss–Legendre on 0.5 m panels for clothoids). Pieces join with continuous
position and tangent; curvature may jump where a straight meets an arc (use a
clothoid between them for a smooth ride).

Conventions: ``heading`` is measured from +x towards +y (degrees), ``pitch``
up from the horizontal; a positive ``yaw`` angle or radius turns left, a
positive ``pitch`` angle or radius turns up; a helix with positive ``turns``
turns left and climbs ``pitch`` metres per turn.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from . import _kernels as K
from .. import limits
from . import transitions

NODE_SPACING = 0.25  # m, longest interval between frame nodes
MAX_TURN = 0.02  # rad, largest turn of the tangent between frame nodes
#: smallest radius of an arc, helix, loop or clothoid end, m: the track table's 0.1 m rows turn by
#: at most 0.2 rad there (docs/scenarios.md, "Limits")
MIN_RADIUS = 0.5
Z = np.array([0.0, 0.0, 1.0])


# --------------------------------------------------------------------------- builders
def straight(length: float) -> dict:
    """A straight of ``length`` m."""
    return {"type": "straight", "length": float(length)}


def arc(radius: float, angle: float, axis: str = "yaw", transition: float | None = None) -> dict:
    """A circular arc of ``radius`` m through ``angle`` degrees.

    ``axis="yaw"``: turns about the vertical keeping the grade (radius measured
    horizontally; positive angle = left). ``axis="pitch"``: turns in the
    vertical plane (positive angle = nose up). ``transition`` (m): clothoids
    of that length ease the arc in from straight and out again (``angle``
    includes them; :mod:`trackrider.curves.transitions`).
    """
    d = {"type": "arc", "radius": float(radius), "angle": float(angle), "axis": axis}
    if transition is not None:
        d["transition"] = float(transition)
    return d


def helix(radius: float, pitch: float, turns: float, transition: float | None = None) -> dict:
    """A helix of ``radius`` m climbing ``pitch`` m per turn, ``turns`` turns (positive = left).

    Its axis is vertical when it is entered at its own grade ``atan(pitch / (2π radius))``;
    otherwise the axis tilts so that the tangent stays continuous. ``transition`` (m):
    clothoids of that length ease it in and out (``turns`` includes them).
    """
    d = {"type": "helix", "radius": float(radius), "pitch": float(pitch), "turns": float(turns)}
    if transition is not None:
        d["transition"] = float(transition)
    return d


def clothoid(length: float, end_radius: float | None = None, axis: str = "yaw",
             start_radius: float | None = None) -> dict:
    """A transition of ``length`` m whose curvature changes linearly from 1/start_radius to 1/end_radius.

    A radius left out (None) means straight (curvature 0). Signs as for :func:`arc`.
    """
    d = {"type": "clothoid", "length": float(length), "axis": axis}
    if end_radius is not None:
        d["end_radius"] = float(end_radius)
    if start_radius is not None:
        d["start_radius"] = float(start_radius)
    return d


def loop(radius: float, offset: float | None = None, side: str = "left", transition: str | None = None,
         entry_radius: float | None = None) -> dict:
    """A vertical loop of ``radius`` m that exits beside its entry.

    The loop is one turn of a helix about a horizontal axis: it exits with the
    entry's tangent, displaced ``offset`` m (default 0.3 × radius) to ``side``
    (and slightly forward). ``transition="clothoid"``: a clothoid loop, ``radius``
    round at its top, its curvature ramping linearly from ``1/entry_radius``
    (default: straight) at the entry and exit (:mod:`trackrider.curves.transitions`).
    """
    d = {"type": "loop", "radius": float(radius), "side": side}
    if offset is not None:
        d["offset"] = float(offset)
    if transition is not None:
        d["transition"] = transition
    if entry_radius is not None:
        d["entry_radius"] = float(entry_radius)
    return d


def start(position=(0.0, 0.0, 0.0), heading: float = 0.0, pitch: float = 0.0, speed: float | None = None,
          heart: float | None = None) -> dict:
    """Where the track begins (m) and which way it points (degrees).

    For a force-vector design (:func:`force`, :func:`geometric`): ``speed`` is
    the design speed at the heartline (m/s, required there) and ``heart`` the
    heartline's height above the rail (m, default 1.1).
    """
    d = {"type": "start", "position": [float(x) for x in position], "heading": float(heading),
         "pitch": float(pitch)}
    d.update({k: float(v) for k, v in (("speed", speed), ("heart", heart)) if v is not None})
    return d


def _design_segment(kind, length, duration, values, interp):
    if (length is None) == (duration is None):
        raise InputError(f"a {kind} segment needs exactly one of length (m) or duration (s)")
    d = {"type": kind}
    d.update({"length": float(length)} if length is not None else {"duration": float(duration)})
    for k, v in values.items():
        if v is not None:
            d[k] = float(v) if isinstance(v, (int, float)) else [[float(x), float(y)] for x, y in v]
    if interp != "linear":
        d["interp"] = interp
    return d


def force(length: float | None = None, duration: float | None = None, normal_g=1.0, lateral_g=0.0,
          roll_rate=0.0, interp: str = "linear") -> dict:
    """A force-vector segment: the heartline bends so riders feel ``normal_g`` and ``lateral_g``.

    Over ``length`` m of heartline or ``duration`` s, the specific force at the
    heartline is ``normal_g`` (g, along the rider's up) and ``lateral_g`` (g,
    along the rider's left, as ``g_lateral``) while the frame rolls at
    ``roll_rate`` (degrees per m, or per s in a duration segment; positive
    rolls right). Each is a number or knots ``[(x, value), …]`` (x in m or s
    from the segment's start), joined linearly or, with ``interp="cubic"``,
    by PCHIP. See :mod:`trackrider.curves.force`.
    """
    return _design_segment("force", length, duration,
                           {"normal_g": normal_g, "lateral_g": lateral_g, "roll_rate": roll_rate}, interp)


def geometric(length: float | None = None, duration: float | None = None, pitch_rate=0.0, yaw_rate=0.0,
              roll_rate=0.0, interp: str = "linear") -> dict:
    """A geometric design segment: the heartline turns at the given rates in the rider's axes.

    ``pitch_rate`` (positive nose up), ``yaw_rate`` (positive to the left,
    about the rider's up) and ``roll_rate`` (positive rolls right), degrees per
    m (``length``) or per s (``duration``); numbers or knots as for :func:`force`.
    """
    return _design_segment("geometric", length, duration,
                           {"pitch_rate": pitch_rate, "yaw_rate": yaw_rate, "roll_rate": roll_rate}, interp)


# --------------------------------------------------------------------------- pieces
class _Piece:
    """One piece: start state, axis ``k`` and angle law ``θ(σ) = w0 σ + ½ (w1 − w0) σ² / L``."""

    def __init__(self, P0, t0, k, w0, w1, length):
        self.P0 = np.asarray(P0, float)
        self.t0 = np.asarray(t0, float)
        self.k = np.asarray(k, float)
        self.w0, self.w1, self.length = float(w0), float(w1), float(length)
        self.tpar = np.dot(self.t0, self.k) * self.k
        self.tperp = self.t0 - self.tpar
        self.kxt = np.cross(self.k, self.tperp)
        self.const = abs(self.w1 - self.w0) < 1e-15
        if not self.const:  # clothoid: tabulate C = ∫cos θ, S = ∫sin θ on panels
            n = max(1, int(math.ceil(self.length / 0.5)))
            self._px = np.linspace(0.0, self.length, n + 1)
            a, h = self._px[:-1], np.diff(self._px)
            x = a[:, None] + h[:, None] * K.GL_NODES[None, :]
            th = self.theta(x)
            c = np.sum(np.cos(th) * K.GL_WEIGHTS, axis=1) * h
            s = np.sum(np.sin(th) * K.GL_WEIGHTS, axis=1) * h
            self._pc = np.concatenate([[0.0], np.cumsum(c)])
            self._ps = np.concatenate([[0.0], np.cumsum(s)])

    def theta(self, x):
        return self.w0 * x + 0.5 * (self.w1 - self.w0) * x * x / self.length

    def dtheta(self, x):
        return self.w0 + (self.w1 - self.w0) * x / self.length

    def integrals(self, x):
        """∫_0^x cos θ and ∫_0^x sin θ."""
        if self.const:
            w = self.w0
            if abs(w) < 1e-12:
                return x.copy(), 0.5 * w * x * x
            return np.sin(w * x) / w, (1.0 - np.cos(w * x)) / w
        j = np.clip(np.searchsorted(self._px, x, side="right") - 1, 0, len(self._px) - 2)
        a = self._px[j]
        h = x - a
        q = a[:, None] + h[:, None] * K.GL_NODES[None, :]
        th = self.theta(q)
        c = self._pc[j] + np.sum(np.cos(th) * K.GL_WEIGHTS, axis=1) * h
        s = self._ps[j] + np.sum(np.sin(th) * K.GL_WEIGHTS, axis=1) * h
        return c, s

    def tangent(self, x):
        th = self.theta(x)
        c, s = np.cos(th)[:, None], np.sin(th)[:, None]
        return self.tpar + c * self.tperp + s * self.kxt

    def eval(self, x):
        T = self.tangent(x)
        ci, si = self.integrals(x)
        P = self.P0 + x[:, None] * self.tpar + ci[:, None] * self.tperp + si[:, None] * self.kxt
        d1 = self.dtheta(x)[:, None]
        kxT = _cross(self.k, T)
        P2 = d1 * kxT
        d2 = (self.w1 - self.w0) / self.length
        P3 = d2 * kxT + d1 * _cross(self.k, P2)
        return P, T, P2, P3

    def end_state(self):
        P, T, _, _ = self.eval(np.array([self.length]))
        return P[0], T[0] / np.linalg.norm(T[0]), self.theta(self.length)


def _cross(a, b):
    """``np.cross`` of 3-vectors along the last axis (``a`` (3,) or (n, 3), ``b`` (n, 3)): the same
    products and differences, to the bit, without its axis handling (a third of its cost on the short
    arrays a segment track evaluates)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    np.subtract(a[..., 1] * b[..., 2], a[..., 2] * b[..., 1], out=out[..., 0])
    np.subtract(a[..., 2] * b[..., 0], a[..., 0] * b[..., 2], out=out[..., 1])
    np.subtract(a[..., 0] * b[..., 1], a[..., 1] * b[..., 0], out=out[..., 2])
    return out


def _rotate(v, k, angle):
    """Rodrigues rotation of ``v`` about unit ``k`` by ``angle`` (rad)."""
    return v * math.cos(angle) + np.cross(k, v) * math.sin(angle) + k * np.dot(k, v) * (1 - math.cos(angle))


class SegmentCurve:
    """A curve made of pieces, parametrised by arc length exactly (see module docstring)."""

    def __init__(self, pieces, closed: bool):
        self.pieces = pieces
        self.closed = bool(closed)
        self.s0 = np.concatenate([[0.0], np.cumsum([p.length for p in pieces])])
        self.length = float(self.s0[-1])
        nodes = []
        for p, a, b in zip(pieces, self.s0[:-1], self.s0[1:]):
            kmax = max(abs(p.w0), abs(p.w1)) * np.linalg.norm(np.cross(p.k, p.t0))
            h = min(NODE_SPACING, MAX_TURN / kmax) if kmax > 0 else NODE_SPACING
            nodes.append(np.linspace(a, b, max(2, int(math.ceil((b - a) / h))) + 1)[:-1])
        self.node_s = np.concatenate(nodes + [[self.length]])
        self.point_s = None

    def tangent(self, s):
        """The unit tangent alone at arc lengths ``s`` (``eval``'s, to the bit)."""
        s = np.asarray(s, dtype=np.float64)
        j = np.clip(np.searchsorted(self.s0, s, side="right") - 1, 0, len(self.pieces) - 1)
        T = np.empty((len(s), 3))
        for i in set(j.tolist()):              # (np.unique would import numpy.ma)
            m = j == i
            T[m] = self.pieces[i].tangent(s[m] - self.s0[i])
        return T

    def eval(self, s, nodes: bool = False):
        """Position, unit tangent, P'' (1/m) and torsion (1/m) at arc lengths ``s``."""
        s = np.asarray(s, dtype=np.float64)
        j = np.clip(np.searchsorted(self.s0, s, side="right") - 1, 0, len(self.pieces) - 1)
        P = np.empty((len(s), 3))
        T = np.empty_like(P)
        P2 = np.empty_like(P)
        P3 = np.empty_like(P)
        # the points of each piece in one slice (a mask per piece would cost pieces × points)
        order = np.argsort(j, kind="stable")
        js = j[order]
        cuts = np.flatnonzero(js[1:] != js[:-1]) + 1
        for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(js)]])):
            i, m = js[a], order[a:b]
            P[m], T[m], P2[m], P3[m] = self.pieces[i].eval(s[m] - self.s0[i])
        c = _cross(T, P2)
        k2 = np.sum(P2 * P2, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.where(k2 > 1e-14, np.sum(c * P3, axis=1) / np.where(k2 > 0, k2, 1.0), 0.0)
        return P, T, P2, tau


# --------------------------------------------------------------------------- parsing
_KEYS = {
    "start": {"position", "heading", "pitch"},
    "straight": {"length"},
    "arc": {"radius", "angle", "axis", "transition"},
    "helix": {"radius", "pitch", "turns", "transition"},
    "clothoid": {"length", "end_radius", "start_radius", "axis"},
    "loop": {"radius", "offset", "side", "transition", "entry_radius"},
}


def _num(seg, key, i, source, default=None, positive=False, nonzero=False):
    if key not in seg:
        if default is None:
            raise InputError(f"missing required key {key!r}", path=source, where=f"segments[{i}].{key}")
        return default
    v = seg[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"must be a number, got {v!r}", path=source, where=f"segments[{i}].{key}")
    v = float(v)
    if not math.isfinite(v) and not (key.endswith("radius") and math.isinf(v)):
        raise InputError(f"must be finite, got {v}", path=source, where=f"segments[{i}].{key}")
    if positive and not v > 0:
        raise InputError(f"must be > 0, got {v}", path=source, where=f"segments[{i}].{key}")
    if nonzero and v == 0:
        raise InputError("must not be 0", path=source, where=f"segments[{i}].{key}")
    return v


def _choice(seg, key, i, source, options, default):
    v = seg.get(key, default)
    if v not in options:
        raise InputError(f"must be one of {', '.join(options)}, got {v!r}", path=source, where=f"segments[{i}].{key}")
    return v


def _transition(seg, i, source) -> float:
    """An arc's or helix's ``transition`` length, m (0: none)."""
    ease = _num(seg, "transition", i, source, default=0.0)
    if ease < 0:
        raise InputError(f"must be >= 0 (m), got {ease:g}", path=source, where=f"segments[{i}].transition")
    return ease


def _check_radius(R, i, key, source):
    """A radius the frame nodes and the 0.1 m track table can resolve (docs/scenarios.md, "Limits")."""
    if abs(R) < MIN_RADIUS:
        raise InputError(f"{abs(R):g} m is below the smallest radius trackrider resolves ({MIN_RADIUS:g} m)",
                         path=source, where=f"segments[{i}].{key}")
    return R


def _check_nodes(pieces, source):
    """The frame-node count of the pieces, checked before any node array is allocated."""
    total = 0.0
    for p in pieces:
        kmax = max(abs(p.w0), abs(p.w1)) * float(np.linalg.norm(np.cross(p.k, p.t0)))
        h = min(NODE_SPACING, MAX_TURN / kmax) if kmax > 0 else NODE_SPACING
        total += math.ceil(p.length / h) + 1
    if total > limits.left("nodes"):
        raise InputError(f"the segments need {total:.3g} frame nodes ({limits.limit_text('nodes')}): the track is "
                         "too long or turns too tightly for too long", path=source, where="segments")


#: segment types that describe a heartline (force-vector design, ``force.py``), not the rail
DESIGN_TYPES = ("force", "geometric")


def is_design(segments) -> bool:
    """Whether a segment list has ``force`` or ``geometric`` segments (then it describes a heartline)."""
    return isinstance(segments, (list, tuple)) and any(
        isinstance(s, dict) and s.get("type") in DESIGN_TYPES for s in segments)


def build_segment_curve(segments, closed: bool = False, source=None) -> SegmentCurve:
    """Turn a scenario's ``segments`` (docs/curves.md) (list of dicts) into a :class:`SegmentCurve`."""
    if not isinstance(segments, (list, tuple)) or len(segments) == 0:
        raise InputError("segments must be a non-empty list of tables", path=source, where="segments")
    if is_design(segments):
        i = next(j for j, s in enumerate(segments) if isinstance(s, dict) and s.get("type") in DESIGN_TYPES)
        raise InputError("force and geometric segments describe a heartline: build the track with "
                         "Track.from_segments or trackrider.curves.track.design_track", path=source,
                         where=f"segments[{i}].type")
    if isinstance(segments[0], dict) and segments[0].get("type") == "start":
        extra = sorted({"speed", "heart"} & set(segments[0]))
        if extra:
            raise InputError("applies only to a segment list with force or geometric segments", path=source,
                             where=f"segments[0].{extra[0]}")
    P = np.zeros(3)
    t = np.array([1.0, 0.0, 0.0])
    left = np.array([0.0, 1.0, 0.0])
    pieces = []
    piece_segment = []   # the segment each piece belongs to
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict):
            raise InputError(f"must be a table, got {type(seg).__name__}", path=source, where=f"segments[{i}]")
        kind = seg.get("type")
        if kind not in _KEYS:
            raise InputError(f"unknown segment type {kind!r}; expected one of {', '.join(_KEYS)}", path=source,
                             where=f"segments[{i}].type")
        unknown = set(seg) - _KEYS[kind] - {"type"}
        if unknown:
            k = sorted(unknown)[0]
            raise InputError(f"unknown key for a {kind} segment", path=source, where=f"segments[{i}].{k}")
        up = np.cross(t, left)
        if kind == "start":
            if i != 0:
                raise InputError("a start segment must come first", path=source, where=f"segments[{i}].type")
            pos = seg.get("position", [0.0, 0.0, 0.0])
            if (not isinstance(pos, (list, tuple)) or len(pos) != 3
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                               for x in pos)):
                raise InputError(f"must be [x, y, z] in m, got {pos!r}", path=source,
                                 where=f"segments[{i}].position")
            h = math.radians(_num(seg, "heading", i, source, default=0.0))
            p = math.radians(_num(seg, "pitch", i, source, default=0.0))
            if abs(p) > math.pi / 2:
                raise InputError("must be within [-90, 90] degrees", path=source, where=f"segments[{i}].pitch")
            P = np.array(pos, dtype=float)
            t = np.array([math.cos(p) * math.cos(h), math.cos(p) * math.sin(h), math.sin(p)])
            left = np.array([-math.sin(h), math.cos(h), 0.0])
            continue
        if kind == "straight":
            piece = _Piece(P, t, left, 0.0, 0.0, _num(seg, "length", i, source, positive=True))
        elif kind in ("arc", "clothoid"):
            axis = _choice(seg, "axis", i, source, ("yaw", "pitch"), "yaw")
            if kind == "arc":
                R = _check_radius(_num(seg, "radius", i, source, positive=True), i, "radius", source)
                ang = math.radians(_num(seg, "angle", i, source, nonzero=True))
            else:
                L = _num(seg, "length", i, source, positive=True)
                r0 = _check_radius(_num(seg, "start_radius", i, source, default=math.inf, nonzero=True), i,
                                   "start_radius", source)
                r1 = _check_radius(_num(seg, "end_radius", i, source, default=math.inf, nonzero=True), i,
                                   "end_radius", source)
                if math.isinf(r0) and math.isinf(r1):
                    raise InputError("a clothoid needs start_radius or end_radius", path=source,
                                     where=f"segments[{i}].end_radius")
            if axis == "pitch":
                k, scale = -left, 1.0
            else:
                cos_grade = math.sqrt(max(0.0, 1.0 - t[2] ** 2))
                if cos_grade < 1e-6:
                    raise InputError("a yaw turn is undefined on a vertical tangent", path=source,
                                     where=f"segments[{i}].axis")
                k, scale = Z, cos_grade
            if kind == "arc":
                w = math.copysign(scale / R, ang)
                ease = _transition(seg, i, source)
                piece = (transitions.eased(_Piece, P, t, k, w, ang, ease, i, source, "an arc")
                         if ease else _Piece(P, t, k, w, w, abs(ang) / abs(w)))
            else:
                piece = _Piece(P, t, k, scale / r0, scale / r1, L)
        elif kind == "helix":
            r = _check_radius(_num(seg, "radius", i, source, positive=True), i, "radius", source)
            pitch = _num(seg, "pitch", i, source, default=0.0)
            turns = _num(seg, "turns", i, source, nonzero=True)
            c = pitch / (2 * math.pi)
            alpha = math.atan2(c, r)
            a = math.sin(alpha) * t + math.cos(alpha) * up
            w = math.copysign(math.cos(alpha) / r, turns)
            ease = _transition(seg, i, source)
            piece = (transitions.eased(_Piece, P, t, a, w, 2 * math.pi * turns, ease, i, source, "a helix")
                     if ease else _Piece(P, t, a, w, w, 2 * math.pi * abs(turns) / abs(w)))
        else:  # loop
            R = _check_radius(_num(seg, "radius", i, source, positive=True), i, "radius", source)
            off = _num(seg, "offset", i, source, default=0.3 * R)
            if off < 0:
                raise InputError(f"must be >= 0, got {off}", path=source, where=f"segments[{i}].offset")
            side = _choice(seg, "side", i, source, ("left", "right"), "left")
            sgn = 1.0 if side == "left" else -1.0
            if _choice(seg, "transition", i, source, transitions.LOOP_TRANSITIONS, "none") == "clothoid":
                entry = _check_radius(_num(seg, "entry_radius", i, source, default=math.inf, positive=True), i,
                                      "entry_radius", source)
                piece = transitions.clothoid_loop(_Piece, P, t, left, R, entry, off, sgn, i, source)
            else:
                if "entry_radius" in seg:
                    raise InputError('applies to a clothoid loop (transition = "clothoid")', path=source,
                                     where=f"segments[{i}].entry_radius")
                alpha = math.atan2(off / (2 * math.pi), R)
                a = math.sin(alpha) * t + sgn * math.cos(alpha) * left
                w = -sgn * math.cos(alpha) / R
                piece = _Piece(P, t, a, w, w, 2 * math.pi / abs(w))
        for piece in piece if isinstance(piece, list) else [piece]:   # a segment with transitions: several
            pieces.append(piece)
            piece_segment.append(i)
            P, t_new, th = piece.end_state()
            left = _rotate(left, piece.k, th)
            if abs(t_new[2]) < 0.999:
                left = np.cross(Z, t_new)
            left = left - np.dot(left, t_new) * t_new
            left /= np.linalg.norm(left)
            t = t_new
    if not pieces:
        raise InputError("segments has no track pieces after start", path=source, where="segments")
    _check_nodes(pieces, source)
    curve = SegmentCurve(pieces, closed)
    curve.piece_segment = piece_segment   # for naming joints (trackrider.check.design)
    curve.segments = list(segments)
    if closed:
        P0, T0, _, _ = curve.eval(np.array([0.0]))
        gap = np.linalg.norm(P - P0[0])
        turn = math.degrees(math.acos(max(-1.0, min(1.0, float(np.dot(t, T0[0]))))))
        if gap > 1e-3 or turn > 0.1:
            raise InputError(f"closed = true but the segments end {gap:.3f} m and {turn:.2f}° away from where "
                             f"they start (must be within 1 mm and 0.1°)", path=source, where="closed")
    return curve
