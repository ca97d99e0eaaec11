"""Acceleration envelopes the user supplies, and the check of a ride against one.

An **envelope file** (TOML; docs/checking.md, ``docs/examples/envelope_example.toml``)
gives, per axis and direction, points ``[level_g, max_duration_s]``: the longest
time the filtered rider G may stay at or beyond that level. Between points the
allowed duration is linear in log-duration (``log D`` linear in the level);
below the first level there is no limit; beyond the last level nothing is
allowed. Optional: an onset-rate limit per axis (g/s, on ``|dG/dt|``),
combined limits (an ellipse ``(a/A)² + (b/B)² ≤ 1`` of two axes, ``A`` and
``B`` chosen per quadrant) and restraint classes (``[restraint.NAME]``: the
same tables, replacing the base file's key by key).

**The signal**: every rider car's ``g_*_filtered`` columns (the run's 4-pole
zero-phase Butterworth at ``filter_hz``, docs/outputs.md), on track only,
joined linearly between samples. So:

* a stay beyond a level lasts from the interpolated crossing up to the
  interpolated crossing down (a run of ``n`` samples at exactly the level, with
  lower ones either side, lasts ``(n − 1)`` sample intervals); it violates
  when it lasts longer than the envelope allows at that level. Every stay is
  examined at every level (:func:`duration_check`: the runs of samples whose
  least value is each sample's, their lengths as a function of the level,
  and the level where the length exceeds the limit the most);
* the onset rate is the slope between consecutive samples;
* the combined ratio ``√((a/A)² + (b/B)²)`` is taken sample by sample.

Pure functions of arrays, tested against exact answers
(``tests/check/test_envelope.py``); :func:`check_timeseries` runs them on
a run's cars and writes the ``check`` block of ``summary.json``.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trackrider.errors import InputError

#: the axes of duration limits: (file table, key, G channel, sign: +1, −1, or 0 for |G|)
DIRECTIONS = {
    "vertical+": ("vertical", "positive", 0, 1.0),
    "vertical-": ("vertical", "negative", 0, -1.0),
    "lateral": ("lateral", "limits", 1, 0.0),
    "longitudinal+": ("longitudinal", "positive", 2, 1.0),
    "longitudinal-": ("longitudinal", "negative", 2, -1.0),
}
#: the G channels, in the order of the ``g_*_filtered`` columns
CHANNELS = ("vertical", "lateral", "longitudinal")
FILTERED = ("g_vertical_filtered", "g_lateral_filtered", "g_longitudinal_filtered")
_AXIS_KEYS = {"vertical": ("positive", "negative", "onset"), "lateral": ("limits", "onset"),
              "longitudinal": ("positive", "negative", "onset")}
_TOP_KEYS = ("name", "description", "vertical", "lateral", "longitudinal", "combined", "restraint")
#: largest sensible level (g), duration (s) and onset rate (g/s) in an envelope file
MAX_LEVEL, MAX_DURATION, MAX_ONSET = 100.0, 1.0e6, 1.0e4
#: most envelope points per list
MAX_POINTS = 1000
#: violations kept in summary.json (the rest are counted)
MAX_VIOLATIONS = 200
#: points of the ride's level–duration front kept per axis (for the report's figure)
MAX_FRONT = 120


# --------------------------------------------------------------------------- the envelope


@dataclass
class DurationLimit:
    """Points of one axis and direction; ``x`` is the signal in the direction's own sense
    (``g``, ``−g`` or ``|g|``), ``levels`` in that sense (increasing), ``durations`` (s, non-increasing)."""

    axis: str
    levels: np.ndarray
    durations: np.ndarray

    @property
    def sign(self) -> float:
        return DIRECTIONS[self.axis][3]

    def signal(self, g):
        g = np.asarray(g, dtype=float)
        return np.abs(g) if self.sign == 0.0 else self.sign * g

    def shown(self, x):
        """A level in the direction's own sense back as the G the user writes."""
        return -x if self.sign < 0 else x

    def duration_at(self, x):
        """Longest allowed stay at or beyond level ``x`` (s): inf below the first level, 0 beyond the last."""
        x = np.asarray(x, dtype=float)
        L, D = self.levels, self.durations
        out = np.exp(np.interp(x, L, np.log(D)))
        out = np.where(x < L[0], np.inf, out)
        return np.where(x > L[-1], 0.0, out)

    def level_at(self, d):
        """Highest level a stay of ``d`` s may reach (the inverse of :meth:`duration_at`)."""
        d = np.atleast_1d(np.asarray(d, dtype=float))
        L, D = self.levels, self.durations
        out = np.where(d > D[0], L[0], -np.inf)
        out = np.where(d <= D[-1], L[-1], out)
        lnd = np.log(np.maximum(d, 1e-300))
        for j in range(len(L) - 1):
            inside = (d <= D[j]) & (d >= D[j + 1])
            if not inside.any():
                continue
            span = math.log(D[j]) - math.log(D[j + 1])
            f = np.ones_like(d) if span == 0 else np.clip((math.log(D[j]) - lnd) / span, 0.0, 1.0)
            out = np.where(inside, np.maximum(out, L[j] + f * (L[j + 1] - L[j])), out)
        return out

    def as_dict(self) -> dict:
        return {"points": [[float(self.shown(x)), float(d)] for x, d in zip(self.levels, self.durations)]}


@dataclass
class Ellipse:
    """A combined limit of two channels: semi-axes per sign ``(A for g < 0, A for g ≥ 0)``."""

    name: str
    channels: tuple
    semi: tuple       # ((A_neg, A_pos) of the first channel, (B_neg, B_pos) of the second), all > 0

    def ratio(self, a, b):
        """``√((a/A)² + (b/B)²)`` with A, B of the quadrant of each sample (1: on the ellipse)."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        A = np.where(a < 0, self.semi[0][0], self.semi[0][1])
        B = np.where(b < 0, self.semi[1][0], self.semi[1][1])
        return np.hypot(a / A, b / B)

    def as_dict(self) -> dict:
        return {"axes": list(self.channels),
                self.channels[0]: [-self.semi[0][0], self.semi[0][1]],
                self.channels[1]: [-self.semi[1][0], self.semi[1][1]]}


@dataclass
class Envelope:
    """A loaded envelope: ``durations`` per axis, ``onset`` per channel (g/s), ``combined`` ellipses."""

    path: str
    name: str = ""
    restraint: str | None = None
    durations: dict = field(default_factory=dict)
    onset: dict = field(default_factory=dict)
    combined: list = field(default_factory=list)
    restraints: tuple = ()

    def as_dict(self) -> dict:
        """The limits as ``summary.json`` keeps them (what the report draws)."""
        return {"file": self.path, "name": self.name, "restraint": self.restraint,
                "durations": {a: lim.as_dict() for a, lim in self.durations.items()},
                "onset_g_per_s": dict(self.onset), "combined": [e.as_dict() for e in self.combined]}


def _where(prefix, *parts) -> str:
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _number(value, path, where, lo=None, hi=None, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"must be a number, got {value!r}", path=path, where=where)
    v = float(value)
    if not math.isfinite(v):
        raise InputError(f"must be finite, got {v}", path=path, where=where)
    if positive and not v > 0:
        raise InputError(f"must be > 0, got {v:g}", path=path, where=where)
    if hi is not None and abs(v) > hi:
        raise InputError(f"{v:g} is beyond ±{hi:g}", path=path, where=where)
    return v


def _points(value, axis, path, where) -> DurationLimit:
    sign = DIRECTIONS[axis][3]
    if not isinstance(value, list) or not value:
        raise InputError("must be a non-empty array of [level_g, max_duration_s] pairs", path=path, where=where)
    if len(value) > MAX_POINTS:
        raise InputError(f"{len(value)} points is more than {MAX_POINTS}", path=path, where=where)
    levels, durations = [], []
    for i, p in enumerate(value):
        w = f"{where}[{i}]"
        if not isinstance(p, list) or len(p) != 2:
            raise InputError(f"must be a pair [level_g, max_duration_s], got {p!r}", path=path, where=w)
        level = _number(p[0], path, w, hi=MAX_LEVEL)
        d = _number(p[1], path, w, positive=True, hi=MAX_DURATION)
        x = abs(level) if sign == 0.0 else sign * level
        if sign == 0.0 and level <= 0:
            raise InputError(f"a lateral level is |G|: must be > 0, got {level:g}", path=path, where=w)
        if levels and not x > levels[-1]:
            order = {1.0: "increase", -1.0: "decrease", 0.0: "increase"}[sign]
            raise InputError(f"levels must {order} from point to point (more severe, shorter), got {level:g} "
                             f"after {DIRECTIONS[axis][3] * levels[-1] if sign else levels[-1]:g}", path=path,
                             where=w)
        if durations and d > durations[-1]:
            raise InputError(f"durations must not grow with the level, got {d:g} s after {durations[-1]:g} s",
                             path=path, where=w)
        levels.append(x)
        durations.append(d)
    return DurationLimit(axis, np.array(levels), np.array(durations))


def _semi(value, channel, path, where):
    """``A`` (both signs) or ``[A_neg, A_pos]`` (a negative and a positive number) → (A_neg, A_pos) > 0."""
    if isinstance(value, list):
        if len(value) != 2:
            raise InputError(f"must be a number or [negative, positive] semi-axes (g), got {value!r}", path=path,
                             where=where)
        neg = _number(value[0], path, f"{where}[0]", hi=MAX_LEVEL)
        pos = _number(value[1], path, f"{where}[1]", hi=MAX_LEVEL)
        if not (neg < 0 < pos):
            raise InputError(f"must be [negative, positive] semi-axes (g), got {value!r}", path=path, where=where)
        return (-neg, pos)
    a = _number(value, path, where, positive=True, hi=MAX_LEVEL)
    return (a, a)


def _merge(base: dict, over: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


def parse_envelope(doc: dict, path, restraint: str | None = None) -> Envelope:
    """An :class:`Envelope` from a parsed TOML document (errors name ``path`` and the key)."""
    path = str(path)
    for k in doc:
        if k not in _TOP_KEYS:
            raise InputError(f"unknown key; allowed here: {', '.join(_TOP_KEYS)}", path=path, where=k)
    restraints = doc.get("restraint", {})
    if not isinstance(restraints, dict) or not all(isinstance(v, dict) for v in restraints.values()):
        raise InputError("must be tables [restraint.NAME] of the axes' limits for that restraint class",
                         path=path, where="restraint")
    body = {k: v for k, v in doc.items() if k != "restraint"}
    where_of = {}
    if restraint is not None:
        if restraint not in restraints:
            names = ", ".join(restraints) or "none"
            raise InputError(f"no restraint class {restraint!r} in the envelope (classes: {names})", path=path,
                             where="restraint")
        over = restraints[restraint]
        for k in over:
            if k not in ("vertical", "lateral", "longitudinal", "combined"):
                raise InputError("unknown key; allowed here: vertical, lateral, longitudinal, combined",
                                 path=path, where=f"restraint.{restraint}.{k}")
            if isinstance(over[k], dict):
                where_of.update({(k, kk): f"restraint.{restraint}.{k}" for kk in over[k]})
            else:
                where_of[(k, None)] = f"restraint.{restraint}.{k}"
        body = _merge(body, over)
    name = body.get("name", "")
    if not isinstance(name, str):
        raise InputError(f"must be a string, got {name!r}", path=path, where="name")
    env = Envelope(path=path, name=name, restraint=restraint, restraints=tuple(restraints))
    for channel, keys in _AXIS_KEYS.items():
        table = body.get(channel)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise InputError(f"must be a table [{channel}]", path=path, where=channel)
        for k, v in table.items():
            prefix = where_of.get((channel, k), channel)
            w = f"{prefix}.{k}"
            if k not in keys:
                raise InputError(f"unknown key; allowed here: {', '.join(keys)}", path=path, where=w)
            if k == "onset":
                env.onset[channel] = _number(v, path, w, positive=True, hi=MAX_ONSET)
                continue
            axis = next(a for a, (c, kk, _, _) in DIRECTIONS.items() if c == channel and kk == k)
            env.durations[axis] = _points(v, axis, path, w)
    combined = body.get("combined", [])
    prefix = where_of.get(("combined", None), "combined")
    if not isinstance(combined, list) or not all(isinstance(c, dict) for c in combined):
        raise InputError("must be an array of tables [[combined]]", path=path, where=prefix)
    for i, c in enumerate(combined):
        w = f"{prefix}[{i}]"
        axes = c.get("axes")
        if (not isinstance(axes, list) or len(axes) != 2 or not all(a in CHANNELS for a in axes)
                or axes[0] == axes[1]):
            raise InputError(f"must name two different axes of {', '.join(CHANNELS)}, got {axes!r}", path=path,
                             where=f"{w}.axes")
        for k in c:
            if k not in ("axes", *axes):
                raise InputError(f"unknown key; allowed here: axes, {axes[0]}, {axes[1]}", path=path,
                                 where=f"{w}.{k}")
        semis = []
        for a in axes:
            if a not in c:
                raise InputError(f"missing: the semi-axis of {a} (g)", path=path, where=f"{w}.{a}")
            semis.append(_semi(c[a], a, path, f"{w}.{a}"))
        env.combined.append(Ellipse(f"{axes[0]}+{axes[1]}", tuple(axes), tuple(semis)))
    if not env.durations and not env.onset and not env.combined:
        raise InputError("the envelope sets no limit: give [vertical], [lateral], [longitudinal] or [[combined]]",
                         path=path, where="vertical")
    return env


def load_envelope(path, restraint: str | None = None) -> Envelope:
    """Read and check an envelope file; ``restraint``: the class whose limits replace the base ones."""
    from trackrider.inputs import MAX_SCENARIO_BYTES, read_input_bytes

    p = Path(path)
    data = read_input_bytes(p, MAX_SCENARIO_BYTES, "envelope file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path=p) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=p) from None
    return parse_envelope(doc, p.resolve(), restraint)


# --------------------------------------------------------------------------- the checks on arrays


def _prev_smaller(x):
    """For each i: the index after the last j < i with x[j] < x[i] (0 if none)."""
    n = len(x)
    out = np.zeros(n, dtype=np.int64)
    stack: list = []
    xs = x.tolist()
    for i in range(n):
        v = xs[i]
        while stack and xs[stack[-1]] >= v:
            stack.pop()
        out[i] = stack[-1] + 1 if stack else 0
        stack.append(i)
    return out


def _excursions(mask):
    """(start, stop) of each run of True in ``mask`` (stop exclusive)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


@dataclass
class Stay:
    """One stay at or beyond ``level`` (the direction's sense) for ``duration`` s from ``t0``;
    ``index``: the sample it starts at (for s and section); ``limit``: the allowed duration;
    ``peak``: the most its excursion reached."""

    level: float
    duration: float
    limit: float
    t0: float
    index: int
    peak: float = math.nan       # the most the excursion reached (direction's sense)


def duration_check(t, x, limit: DurationLimit):
    """Every stay of the signal ``x`` (direction's sense; NaN: no data) at or beyond the envelope's levels.

    Returns ``(violations, points, margin)``: one :class:`Stay` per excursion above the first level
    that exceeds the envelope somewhere (at the level where its length exceeds the limit by the largest
    factor; beyond the last level, where nothing is allowed, the whole stay beyond it);
    ``points`` (k, 2) of (duration, level) — each run's length at its least level, for the figure; the
    margin ``min(level_at(duration) − level)`` over every examined stay (g; < 0 when violated) as a
    :class:`Stay`, or None when the signal never reaches the first level.
    """
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    L, D = limit.levels, limit.durations
    finite = np.isfinite(x)
    xx = np.where(finite, x, -np.inf)
    violations, points = [], []
    margin = None
    lnD = np.log(D)
    slopes = np.diff(lnD) / np.diff(L) if len(L) > 1 else np.zeros(0)
    top_plus = np.nextafter(L[-1], np.inf)
    for e0, e1 in _excursions(xx >= L[0]):
        seg = xx[e0:e1]
        left = _prev_smaller(seg) + e0
        right = e1 - 1 - _prev_smaller(seg[::-1])[::-1]
        # the run of samples at or above each sample's value; its least value is that sample's
        runs, first = np.unique(np.column_stack([left, right]), axis=0, return_index=True)
        lo_i, hi_i = runs[:, 0], runs[:, 1]
        m = seg[first]
        core = t[hi_i] - t[lo_i]
        # neighbours outside the run (lower by construction), for the interpolated ends
        nl = lo_i - 1
        nr = hi_i + 1
        has_l = (nl >= 0) & np.isfinite(xx[np.maximum(nl, 0)])
        has_r = (nr < len(xx)) & np.isfinite(xx[np.minimum(nr, len(xx) - 1)])
        xl = np.where(has_l, xx[np.maximum(nl, 0)], np.nan)
        xr = np.where(has_r, xx[np.minimum(nr, len(xx) - 1)], np.nan)
        dtl = np.where(has_l, t[lo_i] - t[np.maximum(nl, 0)], 0.0)
        dtr = np.where(has_r, t[np.minimum(nr, len(xx) - 1)] - t[hi_i], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            bl = np.where(has_l, dtl / (xx[lo_i] - xl), 0.0)      # ext_l(L) = bl (x[lo] − L)
            br = np.where(has_r, dtr / (xx[hi_i] - xr), 0.0)
        lo = np.fmax(np.where(has_l, xl, -np.inf), np.where(has_r, xr, -np.inf))
        floor = np.maximum(lo, L[0])

        def length(level):      # the run's length at ``level`` ((runs,) or (runs, k))
            col = (slice(None), None) if np.ndim(level) == 2 else slice(None)
            return core[col] + bl[col] * (xx[lo_i][col] - level) + br[col] * (xx[hi_i][col] - level)

        cands = [m, floor]
        cands += [np.full(len(m), lv) for lv in L[1:-1]]
        cands.append(np.full(len(m), top_plus))
        # the length is A + B·level, the limit exp(c + e·level) between two points: their ratio is
        # largest where d/dlevel log(A + B·level) = e, at level = 1/e − A/B (when B, e < 0)
        B = -(bl + br)
        A = length(np.zeros(len(m)))
        for j, e in enumerate(slopes):
            if e < 0:
                with np.errstate(invalid="ignore", divide="ignore"):
                    star = np.where(B < 0, 1.0 / e - A / np.where(B < 0, B, -1.0), np.nan)
                cands.append(np.clip(np.nan_to_num(star, nan=L[j]), L[j], L[j + 1]))
        C = np.column_stack(cands)
        ok = (C >= floor[:, None]) & (C <= m[:, None])
        C = np.where(ok, C, m[:, None])
        lens = length(C)
        lims = limit.duration_at(C)
        # longer than allowed (beyond rounding: sample times and exp(log D) are exact to ~1e-15)
        excess = np.where(np.isinf(lims), -np.inf, lens - lims - 1e-9 * (1.0 + np.where(np.isinf(lims), 0, lims)))
        allowed = limit.level_at(lens.ravel()).reshape(lens.shape)
        room = np.where(np.isinf(lims), np.inf, allowed - C)
        k = np.unravel_index(int(np.argmin(room)), room.shape)
        if np.isfinite(room[k]) and (margin is None or room[k] < margin[0]):
            margin = (float(room[k]), Stay(float(C[k]), float(lens[k]), float(lims[k]),
                                           float(t[lo_i[k[0]]] - bl[k[0]] * (xx[lo_i[k[0]]] - C[k])),
                                           int(lo_i[k[0]])))
        points.append(np.column_stack([length(m), m]))
        bad = excess > 0
        if bad.any():
            sev = np.where(lims > 0, lens / np.where(lims > 0, lims, 1.0), np.inf)
            sev = np.where(bad, sev, -np.inf)
            inf_rows = np.isinf(sev) & (sev > 0)
            if inf_rows.any():          # beyond the last level (never allowed): the longest stay beyond it
                score = np.where(inf_rows, lens, -np.inf)
            else:
                score = sev
            r, c = np.unravel_index(int(np.argmax(score)), score.shape)
            level = float(C[r, c]) if lims[r, c] > 0 else float(L[-1])   # never allowed: beyond the last level
            t0 = float(t[lo_i[r]] - bl[r] * (xx[lo_i[r]] - level))
            violations.append(Stay(level, float(lens[r, c]), float(lims[r, c]), t0, int(lo_i[r]), float(seg.max())))
    pts = np.concatenate(points) if points else np.zeros((0, 2))
    return violations, pts, margin


@dataclass
class Rate:
    """An onset stretch: the rate (g/s) beyond the limit from ``t0`` for ``duration`` s, its peak ``rate``
    at ``t_peak``; ``index`` the sample of the peak."""

    rate: float
    duration: float
    t0: float
    t_peak: float
    index: int


def _stretches(x, y, level):
    """Each run of ``y > level`` as ``(start, end, k)``: its ends where the straight line between the
    samples either side crosses ``level`` (at a sample when there is no finite one beside it), ``k`` its peak."""
    out = []
    for a, b in _excursions(y > level):
        start, end = x[a], x[b - 1]
        if a > 0 and np.isfinite(y[a - 1]):
            start = x[a - 1] + (x[a] - x[a - 1]) * (level - y[a - 1]) / (y[a] - y[a - 1])
        if b < len(y) and np.isfinite(y[b]):
            end = x[b - 1] + (x[b] - x[b - 1]) * (y[b - 1] - level) / (y[b - 1] - y[b])
        out.append((float(start), float(end), a + int(np.argmax(y[a:b]))))
    return out


def onset_check(t, g, limit: float):
    """Stretches where the onset rate exceeds ``limit`` (g/s) in magnitude.

    The rate is the slope between consecutive samples, taken at the middle of their interval and
    joined linearly; a stretch lasts between the interpolated crossings of the limit. Returns
    ``(violations, peak)``: a :class:`Rate` per stretch beyond the limit, and the steepest slope of
    the whole signal as a :class:`Rate` (None without two consecutive samples).
    """
    t = np.asarray(t, dtype=float)
    g = np.asarray(g, dtype=float)
    if len(t) < 2:
        return [], None
    with np.errstate(invalid="ignore"):
        rate = np.diff(g) / np.diff(t)
    mag = np.where(np.isfinite(rate), np.abs(rate), -np.inf)
    if not np.isfinite(mag).any():
        return [], None
    mid = 0.5 * (t[1:] + t[:-1])
    k = int(np.argmax(mag))
    peak = Rate(float(rate[k]), 0.0, float(mid[k]), float(mid[k]), k)
    out = [Rate(float(rate[k]), end - start, start, float(mid[k]), k) for start, end, k in _stretches(mid, mag, limit)]
    return out, peak


@dataclass
class Outside:
    """A stretch outside a combined ellipse: its peak ``ratio`` (1 on the ellipse) and the two G there."""

    ratio: float
    duration: float
    t0: float
    t_peak: float
    index: int
    g: tuple


def combined_check(t, a, b, ellipse: Ellipse):
    """Stretches with the combined ratio above 1 (ends interpolated as for the onset rate).

    Returns ``(violations, peak)`` as :func:`onset_check`.
    """
    t = np.asarray(t, dtype=float)
    a, b = np.asarray(a, float), np.asarray(b, float)
    r = ellipse.ratio(a, b)
    r = np.where(np.isfinite(r), r, -np.inf)
    if not np.isfinite(r).any():
        return [], None

    def at(k, start, end):
        return Outside(float(r[k]), end - start, start, float(t[k]), int(k), (float(a[k]), float(b[k])))
    k = int(np.argmax(r))
    return [at(k, start, end) for start, end, k in _stretches(t, r, 1.0)], at(k, float(t[k]), float(t[k]))
