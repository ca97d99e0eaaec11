"""Force-vector design: a track built from the forces riders should feel (docs/physics.md §7).

A design marches along the **heartline** (the riders' hearts, ``heart`` above
the rail along the rider's up) with the rider frame ``(T, L, U)`` (forward,
left, up) and the design speed ``v``. Per metre of heartline the frame turns
with

    T' = κ_U U + κ_L L,   U' = −κ_U T − ρ L,   L' = −κ_L T + ρ U

(angular rate ``ω = ρ T − κ_U L + κ_L U``; ``ρ > 0`` tips ``U`` towards
``−L``: the right side down, as trackrider's ``roll``). A ``force`` segment
asks for the specific force ``f = a − g⃗`` at the heartline in the rider's
axes, ``f·U = normal_g g`` and ``f·L = lateral_g g``; with
``a = v̇ T + v² (κ_U U + κ_L L)`` and ``g⃗ = (0, 0, −g)``:

    κ_U = g (normal_g − U_z) / v²,   κ_L = g (lateral_g − L_z) / v².

A ``geometric`` segment gives the turn rates directly (``κ_U`` = pitch rate,
``κ_L`` = yaw rate, ``ρ`` = roll rate). Classic segments (straight, arc, …)
describe the heartline too, and carry the rider frame without roll. The speed
comes from the energy at the heartline, ``d(½v²)/ds = −g T_z − μ g − k v²``
(``μ``, ``k``: ``[resistance]`` ``rolling`` and ``nl2_drag`` in ``nl2`` mode,
else 0). The state — position, frame, ½v², arc length and time — is
integrated by classical RK4 in the segment's own variable (m of heartline for
a ``length`` segment, s for a ``duration`` one) in steps of at most 0.25 m
and 0.01 rad of turn, the frame re-orthonormalised after every step.

The track curve is the rail ``P_rail = P − heart U``; its tangent
``P_rail' = (1 + heart κ_U) T + heart ρ L`` leans off ``T`` while the frame
rolls, and its frame is ``(T_rail, U × T_rail, U)``. The rail is a quintic
spline through the rail points with the rider's up as its frame (a
``file`` frame, docs/curves.md), so the rail's arc length is its own.
"""
from __future__ import annotations

import bisect
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .segments import DESIGN_TYPES, build_segment_curve

DEFAULT_HEART = 1.1  # m, heartline above the rail
MIN_SPEED = 0.5  # m/s: a design slower than this is refused
STEP = 0.25  # m of heartline, longest integration step (also the rail point spacing)
MAX_TURN = 0.01  # rad, largest turn of the frame in one step
MIN_RAIL_SPACING = 0.01  # m: closer rail points are dropped (a very short segment)
KINK_WARN_DEG = 1.0  # a rail kink at a joint above this is warned about
MAX_DESIGN_LENGTH = 50_000.0  # m of heartline
INTERPS = ("linear", "cubic")

FORCE_KEYS = ("length", "duration", "normal_g", "lateral_g", "roll_rate", "interp")
GEOMETRIC_KEYS = ("length", "duration", "pitch_rate", "yaw_rate", "roll_rate", "interp")
#: default of each scheduled value (g for forces, degrees per s or per m for rates)
SCHEDULE_DEFAULTS = {"normal_g": 1.0, "lateral_g": 0.0, "roll_rate": 0.0, "pitch_rate": 0.0, "yaw_rate": 0.0}


# --------------------------------------------------------------------------- schedules
def pchip_slopes(x, y):
    """Slopes of the monotone piecewise cubic (Fritsch–Carlson, as SciPy's PCHIP) at knots ``x``.

    Interior: 0 where the secant slopes change sign or one is 0, else their
    weighted harmonic mean; ends: the one-sided three-point formula, limited
    so the curve does not overshoot. Two knots: the secant slope.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    h = np.diff(x)
    d = np.diff(y) / h
    n = len(x)
    if n == 2:
        return np.array([d[0], d[0]])
    m = np.zeros(n)
    w1 = 2 * h[1:] + h[:-1]
    w2 = h[1:] + 2 * h[:-1]
    same = (np.sign(d[:-1]) * np.sign(d[1:])) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        hm = (w1 + w2) / (w1 / d[:-1] + w2 / d[1:])
    m[1:-1] = np.where(same, hm, 0.0)

    def edge(h0, h1, d0, d1):
        e = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
        if np.sign(e) != np.sign(d0):
            return 0.0
        if np.sign(d0) != np.sign(d1) and abs(e) > abs(3 * d0):
            return 3 * d0
        return e

    m[0] = edge(h[0], h[1], d[0], d[1])
    m[-1] = edge(h[-1], h[-2], d[-1], d[-2])
    return m


class Schedule:
    """A value along a segment: a constant, or knots ``[(x, v), …]`` joined linearly or by PCHIP.

    Beyond the first and last knot the value holds. ``scale`` multiplies every
    value (degrees → radians for rates).
    """

    def __init__(self, value, interp: str = "linear", scale: float = 1.0):
        if isinstance(value, (int, float)):
            self.const = float(value) * scale
            return
        self.const = None
        self.x = [float(k[0]) for k in value]
        self.y = [float(k[1]) * scale for k in value]
        self.cubic = interp == "cubic" and len(self.x) > 2
        if self.cubic:
            self.m = list(pchip_slopes(self.x, self.y))

    def __call__(self, x: float) -> float:
        if self.const is not None:
            return self.const
        xs, ys = self.x, self.y
        if x <= xs[0]:
            return ys[0]
        if x >= xs[-1]:
            return ys[-1]
        j = bisect.bisect_right(xs, x) - 1
        h = xs[j + 1] - xs[j]
        u = (x - xs[j]) / h
        if not self.cubic:
            return ys[j] + u * (ys[j + 1] - ys[j])
        u2, u3 = u * u, u * u * u
        return ((2 * u3 - 3 * u2 + 1) * ys[j] + (u3 - 2 * u2 + u) * h * self.m[j]
                + (-2 * u3 + 3 * u2) * ys[j + 1] + (u3 - u2) * h * self.m[j + 1])


# --------------------------------------------------------------------------- validation
def _where(i, key=None):
    return f"segments[{i}]" + (f".{key}" if key else "")


def _finite_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _parse_schedule(seg, key, i, source, extent, unit):
    """A number, or knots ``[[x, value], …]`` with x increasing in ``[0, extent]``."""
    v = seg.get(key, SCHEDULE_DEFAULTS[key])
    if _finite_number(v):
        if abs(v) > 1e4:
            raise InputError(f"{v:g} is absurd", path=source, where=_where(i, key))
        return float(v)
    if not isinstance(v, (list, tuple)) or not v:
        raise InputError(f"must be a number or knots [[x, value], ...], got {v!r}", path=source,
                         where=_where(i, key))
    knots = []
    for j, k in enumerate(v):
        if not isinstance(k, (list, tuple)) or len(k) != 2 or not all(_finite_number(a) for a in k):
            raise InputError(f"must be a pair [x {unit}, value] of finite numbers, got {k!r}", path=source,
                             where=f"{_where(i, key)}[{j}]")
        x, y = float(k[0]), float(k[1])
        if x < 0 or x > extent * (1 + 1e-9) + 1e-12:
            raise InputError(f"x = {x:g} {unit} is outside the segment (0 .. {extent:g} {unit})", path=source,
                             where=f"{_where(i, key)}[{j}]")
        if knots and not x > knots[-1][0]:
            raise InputError(f"knots must have increasing x, got {x:g} after {knots[-1][0]:g}", path=source,
                             where=f"{_where(i, key)}[{j}]")
        if abs(y) > 1e4:
            raise InputError(f"value {y:g} is absurd", path=source, where=f"{_where(i, key)}[{j}]")
        knots.append((x, y))
    return knots


def parse_design_segment(seg: dict, i: int, source=None) -> dict:
    """Check one ``force`` or ``geometric`` segment; return it normalised.

    The result has ``type``, ``by`` (``"length"`` m or ``"duration"`` s),
    ``extent`` and each scheduled key as a number or a list of ``(x, value)``
    knots, and ``interp``. Raises :class:`InputError` naming ``segments[i].key``.
    """
    kind = seg.get("type")
    allowed = FORCE_KEYS if kind == "force" else GEOMETRIC_KEYS
    unknown = sorted(set(seg) - set(allowed) - {"type"})
    if unknown:
        raise InputError(f"unknown key for a {kind} segment (expected {', '.join(allowed)})", path=source,
                         where=_where(i, unknown[0]))
    has_len, has_dur = "length" in seg, "duration" in seg
    if has_len == has_dur:
        raise InputError("needs exactly one of 'length' (m of heartline) or 'duration' (s)"
                         + (", not both" if has_len else ""), path=source, where=_where(i, "length"))
    by = "length" if has_len else "duration"
    extent = seg[by]
    if not _finite_number(extent) or not extent > 0:
        raise InputError(f"must be a number > 0, got {extent!r}", path=source, where=_where(i, by))
    limit = MAX_DESIGN_LENGTH if by == "length" else 3600.0
    if extent > limit:
        raise InputError(f"{extent:g} is too long (limit {limit:g})", path=source, where=_where(i, by))
    interp = seg.get("interp", "linear")
    if interp not in INTERPS:
        raise InputError(f"must be one of {', '.join(INTERPS)}, got {interp!r}", path=source,
                         where=_where(i, "interp"))
    unit = "m" if by == "length" else "s"
    out = {"type": kind, "by": by, "extent": float(extent), "interp": interp}
    keys = ("normal_g", "lateral_g", "roll_rate") if kind == "force" else ("pitch_rate", "yaw_rate", "roll_rate")
    for key in keys:
        out[key] = _parse_schedule(seg, key, i, source, float(extent), unit)
    return out


def _parse_start(seg, source):
    """Rail start point, heading/pitch (rad), design speed (m/s) and heart (m) of a start segment."""
    pos = seg.get("position", [0.0, 0.0, 0.0])
    if not isinstance(pos, (list, tuple)) or len(pos) != 3 or not all(_finite_number(x) for x in pos):
        raise InputError(f"must be [x, y, z] in m, got {pos!r}", path=source, where=_where(0, "position"))
    vals = {}
    for key, default in (("heading", 0.0), ("pitch", 0.0), ("speed", None), ("heart", DEFAULT_HEART)):
        v = seg.get(key, default)
        if v is None:
            raise InputError("a force-designed track needs the design speed at its start (m/s)", path=source,
                             where=_where(0, key))
        if not _finite_number(v):
            raise InputError(f"must be a finite number, got {v!r}", path=source, where=_where(0, key))
        vals[key] = float(v)
    if abs(vals["pitch"]) > 90:
        raise InputError("must be within [-90, 90] degrees", path=source, where=_where(0, "pitch"))
    if vals["speed"] < MIN_SPEED or vals["speed"] > 1e4:
        raise InputError(f"must be within [{MIN_SPEED}, 10000] m/s, got {vals['speed']:g}", path=source,
                         where=_where(0, "speed"))
    if vals["heart"] < 0 or vals["heart"] > 100:
        raise InputError(f"must be within [0, 100] m, got {vals['heart']:g}", path=source, where=_where(0, "heart"))
    return (np.array(pos, dtype=np.float64), math.radians(vals["heading"]), math.radians(vals["pitch"]),
            vals["speed"], vals["heart"])


# --------------------------------------------------------------------------- the design
@dataclass
class Design:
    """A designed heartline, sampled at every integration step.

    Attributes (arrays over the samples; per-metre quantities in 1/m)
    ----------
    s, t : (n,) heartline arc length (m) and design time (s) from the start.
    position, tangent, left, up : (n, 3) heartline point (m) and rider frame.
    speed : (n,) design speed at the heartline, m/s.
    kappa_up, kappa_left, roll_rate : (n,) the frame's turn rates per metre (rad/m).
    normal_g, lateral_g, longitudinal_g : (n,) the specific force at the heartline in
        the rider's axes, g (what a force segment asked for; computed for every segment).
    segment : (n,) index into the segment list of the segment each sample belongs to.
    rail : (n, 3) rail points ``position − heart · up``, m.
    heart : float, m.  joints : list of heartline ``s`` where each segment after the first starts.
    """

    s: np.ndarray
    t: np.ndarray
    position: np.ndarray
    tangent: np.ndarray
    left: np.ndarray
    up: np.ndarray
    speed: np.ndarray
    kappa_up: np.ndarray
    kappa_left: np.ndarray
    roll_rate: np.ndarray
    normal_g: np.ndarray
    lateral_g: np.ndarray
    longitudinal_g: np.ndarray
    segment: np.ndarray
    rail: np.ndarray
    heart: float
    joints: list = field(default_factory=list)


class _Stop(Exception):
    """Raised inside a step: the speed fell below MIN_SPEED."""


def _classic_piece(seg, i, P, T, L, source):
    """The segments.py curve of a classic segment entered at heartline point P with tangent T."""
    from .segments import build_segment_curve

    if math.hypot(T[0], T[1]) > 1e-9:  # (heading and pitch reproduce T exactly)
        heading = math.degrees(math.atan2(T[1], T[0]))
    else:  # vertical: the heading whose horizontal left is the rider's left
        heading = math.degrees(math.atan2(-L[0], L[1]))
    pitch = math.degrees(math.asin(max(-1.0, min(1.0, T[2]))))
    start = {"type": "start", "position": [float(x) for x in P], "heading": heading, "pitch": pitch}
    try:
        curve = build_segment_curve([start, seg], source=source)
    except InputError as exc:
        where = (exc.where or "").replace("segments[1]", _where(i), 1)
        raise InputError(exc.detail, path=source, where=where) from None
    return curve   # its length and eval (P'' at [2]) as a piece's; several pieces with transitions


def design_heartline(segments, gravity: float = 9.81, rolling: float = 0.0, nl2_drag: float = 0.0,
                     source=None, label: str = "segments") -> Design:
    """Integrate a segment list with ``force``/``geometric`` segments into a :class:`Design`.

    Parameters
    ----------
    segments : list of dict
        The first may be ``start`` (``position`` of the rail, ``heading``,
        ``pitch`` in degrees, ``speed`` m/s — required —, ``heart`` m,
        default 1.1); then ``force``, ``geometric`` and classic segments.
    gravity : float
        m/s², acting along −z (default 9.81).
    rolling, nl2_drag : float
        NoLimits-style losses charged per metre of heartline: deceleration
        ``rolling·g`` and ``nl2_drag·v²`` (1/m). Default 0 (frictionless).
    source : str or PathLike, optional
        The file named in error messages.
    label : str
        How warnings name the segment list (e.g. ``track[0].segments``).

    Raises
    ------
    InputError
        A bad key or value; a design speed below 0.5 m/s; a rail that folds
        back on itself (``1 + heart κ_U ≤ 0``); each naming the segment and
        where in it.
    """
    if not isinstance(segments, (list, tuple)) or not segments:
        raise InputError("segments must be a non-empty list of tables", path=source, where="segments")
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict):
            raise InputError(f"must be a table, got {type(seg).__name__}", path=source, where=_where(i))
    first = segments[0]
    if first.get("type") != "start" or "speed" not in first:
        raise InputError("a force-designed track needs a first 'start' segment with the design speed "
                         "(m/s) at its start", path=source, where=_where(0, "speed"))
    bad = set(first) - {"type", "position", "heading", "pitch", "speed", "heart"}
    if bad:
        raise InputError("unknown key for a start segment", path=source, where=_where(0, sorted(bad)[0]))
    P_rail0, h, p, v0, heart = _parse_start(first, source)
    g = float(gravity)
    mu_g = float(rolling) * g
    k_drag = float(nl2_drag)
    T = np.array([math.cos(p) * math.cos(h), math.cos(p) * math.sin(h), math.sin(p)])
    L = np.array([-math.sin(h), math.cos(h), 0.0])
    U = np.cross(T, L)
    y = np.concatenate([P_rail0 + heart * U, T, L, U, [0.5 * v0 * v0, 0.0, 0.0]])
    W_min = 0.5 * MIN_SPEED * MIN_SPEED

    rec = {k: [] for k in ("y", "kU", "kL", "rho", "seg")}
    joints = []

    def record(yy, rates, i):
        rec["y"].append(yy.copy())
        rec["kU"].append(rates[0])
        rec["kL"].append(rates[1])
        rec["rho"].append(rates[2])
        rec["seg"].append(i)

    def position(i, by, x, s_total):
        unit = "m" if by == "length" else "s"
        return f"{x:.3f} {unit} into the segment (heartline s = {s_total:.2f} m)"

    for i, seg in enumerate(segments[1:], start=1):
        kind = seg.get("type")
        if kind == "start":
            raise InputError("a start segment must come first", path=source, where=_where(i, "type"))
        if kind in DESIGN_TYPES:
            d = parse_design_segment(seg, i, source)
            by, extent = d["by"], d["extent"]
            interp = d["interp"]
            deg = math.pi / 180.0
            roll = Schedule(d["roll_rate"], interp, deg)
            if kind == "force":
                ng, lg = Schedule(d["normal_g"], interp), Schedule(d["lateral_g"], interp)
            else:
                pr, yr = Schedule(d["pitch_rate"], interp, deg), Schedule(d["yaw_rate"], interp, deg)
            piece = None
        else:
            piece = _classic_piece(seg, i, y[0:3], y[3:6], y[6:9], source)
            by, extent, kind = "length", piece.length, "classic"
        per_time = by == "duration"

        def rates(x, yy):
            """(κ_U, κ_L, ρ) per metre and σ = ds/dx."""
            W = yy[12]
            if W < W_min:
                raise _Stop()
            v = math.sqrt(2.0 * W)
            sigma = v if per_time else 1.0
            Tq, Lq, Uq = yy[3:6], yy[6:9], yy[9:12]
            if kind == "force":
                kU = g * (ng(x) - Uq[2]) / (v * v)
                kL = g * (lg(x) - Lq[2]) / (v * v)
                rho = roll(x) / sigma
            elif kind == "geometric":
                kU, kL, rho = pr(x) / sigma, yr(x) / sigma, roll(x) / sigma
            else:
                K2 = piece.eval(np.array([x]))[2][0]
                kU, kL, rho = float(K2 @ Uq), float(K2 @ Lq), 0.0
            return kU, kL, rho, sigma, v

        def deriv(x, yy):
            kU, kL, rho, sigma, v = rates(x, yy)
            Tq, Lq, Uq = yy[3:6], yy[6:9], yy[9:12]
            out = np.empty(15)
            out[0:3] = sigma * Tq
            out[3:6] = sigma * (kU * Uq + kL * Lq)
            out[6:9] = sigma * (-kL * Tq + rho * Uq)
            out[9:12] = sigma * (-kU * Tq - rho * Lq)
            out[12] = sigma * (-g * Tq[2] - mu_g - 2.0 * k_drag * yy[12])
            out[13] = sigma
            out[14] = sigma / v
            return out

        x = 0.0
        try:
            r0 = rates(0.0, y)
        except _Stop:
            raise InputError(f"the design speed is below {MIN_SPEED} m/s at "
                             f"{position(i, by, 0.0, y[13])}", path=source, where=_where(i)) from None
        if i > 1:
            joints.append(float(y[13]))
            prev = (rec["kU"][-1], rec["rho"][-1])
            d_prev = (1 + heart * prev[0]) * y[3:6] + heart * prev[1] * y[6:9]
            d_next = (1 + heart * r0[0]) * y[3:6] + heart * r0[2] * y[6:9]
            c = float(d_prev @ d_next) / (np.linalg.norm(d_prev) * np.linalg.norm(d_next))
            kink = math.degrees(math.acos(max(-1.0, min(1.0, c))))
            if kink > KINK_WARN_DEG:
                where = f"{source}: " if source else ""
                warnings.warn(f"{where}{label}[{i}]: the roll rate jumps where it meets {label}[{i - 1}] "
                              f"(heartline s = {y[13]:.2f} m): the rail kinks by {kink:.1f}° "
                              f"(about heart × the jump); ramp the roll rate with knots", UserWarning,
                              stacklevel=2)
        record(y, r0, i)
        while extent - x > 1e-12 * max(1.0, extent):
            kU, kL, rho, sigma, _v = rates(x, y)
            turn = max(abs(kU), abs(kL), abs(rho)) * sigma
            hx = STEP / sigma
            if turn > 0:
                hx = min(hx, MAX_TURN / turn)
            rest = extent - x
            if rest <= hx:
                hx = rest
            elif rest < 2 * hx:
                hx = 0.5 * rest
            try:
                k1 = deriv(x, y)
                k2 = deriv(x + 0.5 * hx, y + 0.5 * hx * k1)
                k3 = deriv(x + 0.5 * hx, y + 0.5 * hx * k2)
                k4 = deriv(x + hx, y + hx * k3)
            except _Stop:
                raise InputError(f"the design speed falls below {MIN_SPEED} m/s about "
                                 f"{position(i, by, x, y[13])}: start faster or ask for less climb",
                                 path=source, where=_where(i)) from None
            y = y + (hx / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
            x = min(x + hx, extent) if rest > hx else extent
            # keep the frame orthonormal
            Tn = y[3:6] / np.linalg.norm(y[3:6])
            Ln = y[6:9] - (y[6:9] @ Tn) * Tn
            Ln /= np.linalg.norm(Ln)
            y[3:6], y[6:9], y[9:12] = Tn, Ln, np.cross(Tn, Ln)
            try:
                r = rates(x, y)
            except _Stop:
                raise InputError(f"the design speed falls below {MIN_SPEED} m/s about "
                                 f"{position(i, by, x, y[13])}: start faster or ask for less climb",
                                 path=source, where=_where(i)) from None
            if 1.0 + heart * r[0] <= 0.0:
                raise InputError(f"the rail folds back on itself at {position(i, by, x, y[13])}: the crest's "
                                 f"radius {1.0 / abs(r[0]):.2f} m is tighter than the heart height "
                                 f"{heart:g} m (1 + heart·κ_U = {1.0 + heart * r[0]:.3f} ≤ 0); ask for more "
                                 f"normal_g or more speed", path=source, where=_where(i))
            if y[13] > MAX_DESIGN_LENGTH:
                raise InputError(f"the heartline would be longer than {MAX_DESIGN_LENGTH / 1000:g} km",
                                 path=source, where=_where(i))
            record(y, r, i)
    if not rec["y"]:
        raise InputError("segments has no track pieces after start", path=source, where="segments")
    Y = np.array(rec["y"])
    kU, kL, rho = (np.array(rec[k]) for k in ("kU", "kL", "rho"))
    T, L, U = Y[:, 3:6], Y[:, 6:9], Y[:, 9:12]
    v2 = 2.0 * Y[:, 12]
    return Design(
        s=Y[:, 13], t=Y[:, 14], position=Y[:, 0:3], tangent=T, left=L, up=U, speed=np.sqrt(v2),
        kappa_up=kU, kappa_left=kL, roll_rate=rho,
        normal_g=(v2 * kU) / g + U[:, 2], lateral_g=(v2 * kL) / g + L[:, 2],
        longitudinal_g=-(mu_g + k_drag * v2) / g,
        segment=np.array(rec["seg"]), rail=Y[:, 0:3] - heart * U, heart=heart, joints=joints)
