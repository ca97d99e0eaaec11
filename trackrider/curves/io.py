"""Curve files: points CSV, NoLimits 2 "export track spline" CSV, JSON; NL2 export; reports.

Formats (units m and degrees, z up unless stated):

* ``points``: CSV with header ``x,y,z`` or ``x,y,z,roll`` (roll in degrees,
  positive = right rail lower). ``#`` starts a comment line; blank lines are skipped.
* ``nl2``: NoLimits 2 "export track spline": tab-separated, header
  ``"No." "PosX" "PosY" "PosZ" "FrontX" "FrontY" "FrontZ" "LeftX" "LeftY" "LeftZ"
  "UpX" "UpY" "UpZ"``, metres, **Y up**, right-handed (Front × Left = Up).
  Converted to z up by the proper rotation ``(x, y, z) = (X, −Z, Y)``; the
  file's up vectors become the track frame (``frame="file"``).
* ``json``: ``{"points": [[x, y, z], ...], "roll": [...], "closed": false}``;
  ``roll`` is either one number per point (degrees) or knots ``[[s, deg], ...]``.

Exact repeats of the previous point are dropped with a warning naming the line;
everything else that is wrong raises :class:`trackrider.errors.InputError`
naming the file and the line.
"""
from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from .. import limits
from .track import Track

FORMATS = ("auto", "points", "nl2", "json")
NL2_HEADER = ["No.", "PosX", "PosY", "PosZ", "FrontX", "FrontY", "FrontZ", "LeftX", "LeftY", "LeftZ",
              "UpX", "UpY", "UpZ"]
# NL2 (X, Y up, Z) -> trackrider (x, y, z up): a proper rotation (det +1), never a mirror
NL2_TO_ZUP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
ORTHO_TOL = 1e-3


def _read_text(path: Path) -> str:
    from ..inputs import MAX_CURVE_BYTES, read_input_bytes

    raw = read_input_bytes(path, MAX_CURVE_BYTES, "curve file")
    if b"\x00" in raw[:4096]:
        raise InputError("not a text file (binary data)", path=path, where="line 1")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError("not a UTF-8 text file (undecodable bytes)", path=path, where=f"line {line}") from None


def _detect(path: Path, text: str) -> str:
    ext = path.suffix.lower()
    head = text.lstrip()[:200]
    if ext == ".json" or head.startswith("{"):
        return "json"
    first = next((ln for ln in io.StringIO(text) if ln.strip() and not ln.lstrip().startswith("#")), "")
    if "PosX" in first or first.strip().startswith('"No."'):
        return "nl2"
    return "points"


def _float(tok: str, path, line: int, col: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"column {col}: not a number: {tok.strip()!r}", path=path, where=f"line {line}") from None
    if not math.isfinite(v):
        raise InputError(f"column {col}: not finite: {tok.strip()!r}", path=path, where=f"line {line}")
    return v


def _lines(text: str):
    """The lines of ``text`` without their ends, one at a time (a long file is never split whole)."""
    for ln in io.StringIO(text, newline=None):
        yield ln.rstrip("\n")


def _points_csv_at_once(text: str):
    """``_parse_points_csv`` of a well-formed file, all rows converted at once (a 50 km track of
    points 1 m apart in 0.1 s, not 1 s); None for anything else (no header, a wrong field count, a
    value that is not a finite number, too many points), which the line-by-line reading then names."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")   # the lines _lines yields
    nums = [no for no, ln in enumerate(lines, start=1) if (st := ln.strip()) and not st.startswith("#")]
    if len(nums) < 2:
        return None
    header = [f.strip().lower().strip('"') for f in lines[nums[0] - 1].strip().split(",")]
    if header not in (["x", "y", "z"], ["x", "y", "z", "roll"]) or len(nums) - 1 > limits.left("points"):
        return None
    rows = [lines[no - 1] for no in nums[1:]]
    if any(ln.count(",") != len(header) - 1 for ln in rows):
        return None
    try:
        a = np.array(list(map(float, ",".join(rows).split(","))))   # float() ignores the blanks around
    except ValueError:
        return None
    if not np.isfinite(a).all():
        return None
    a = a.reshape(len(rows), len(header))
    return a[:, :3], (a[:, 3] if len(header) == 4 else None), np.array(nums[1:])


def _parse_points_csv(path: Path, text: str):
    fast = _points_csv_at_once(text)
    if fast is not None:
        return fast
    header = None
    rows, nums = [], []
    for no, ln in enumerate(_lines(text), start=1):
        st = ln.strip()
        if not st or st.startswith("#"):
            continue
        fields = [f.strip() for f in st.split(",")]
        if header is None:
            names = [f.lower().strip('"') for f in fields]
            if names not in (["x", "y", "z"], ["x", "y", "z", "roll"]):
                # quote nothing: a file that is not a curve may hold anything (../../etc/passwd)
                raise InputError("not a points CSV curve: its header must be 'x,y,z' or "
                                 "'x,y,z,roll'", path=path, where=f"line {no}")
            header = names
            continue
        if len(fields) != len(header):
            raise InputError(f"expected {len(header)} values ({','.join(header)}), got {len(fields)}", path=path,
                             where=f"line {no}")
        rows.append([_float(f, path, no, c) for f, c in zip(fields, header)])
        nums.append(no)
        if len(rows) > limits.left("points"):
            raise InputError(f"more points than a curve may have ({limits.limit_text('points')})", path=path,
                             where=f"line {no}")
    if header is None:
        raise InputError("empty file: no header 'x,y,z'", path=path, where="line 1")
    if not rows:
        raise InputError("no points after the header", path=path, where="line 2")
    a = np.array(rows)
    roll = a[:, 3] if a.shape[1] == 4 else None
    return a[:, :3], roll, np.array(nums)


def _parse_nl2(path: Path, text: str):
    header_seen = False
    pts, fronts, lefts, ups, nums = [], [], [], [], []
    for no, ln in enumerate(_lines(text), start=1):
        if not ln.strip():
            continue
        fields = [f.strip().strip('"') for f in (ln.split("\t") if "\t" in ln else ln.split())]
        if not header_seen:
            if fields[: len(NL2_HEADER)] != NL2_HEADER:
                raise InputError("not a NoLimits 2 track spline export: header must be "
                                 + " ".join(f'"{h}"' for h in NL2_HEADER), path=path, where=f"line {no}")
            header_seen = True
            continue
        if len(fields) < len(NL2_HEADER):
            raise InputError(f"expected {len(NL2_HEADER)} tab-separated values, got {len(fields)}", path=path,
                             where=f"line {no}")
        v = [_float(f, path, no, c) for f, c in zip(fields[1:13], NL2_HEADER[1:13])]
        p, F, L, U = (np.array(v[i : i + 3]) for i in (0, 3, 6, 9))
        nf, nl, nu = np.linalg.norm(F), np.linalg.norm(L), np.linalg.norm(U)
        if max(abs(nf - 1), abs(nl - 1), abs(nu - 1)) > ORTHO_TOL:
            raise InputError(f"frame vectors are not unit length (|Front| = {nf:.4f}, |Left| = {nl:.4f}, "
                             f"|Up| = {nu:.4f})", path=path, where=f"line {no}")
        if max(abs(F @ L), abs(F @ U), abs(L @ U)) > ORTHO_TOL:
            raise InputError("frame vectors are not orthogonal", path=path, where=f"line {no}")
        if np.dot(np.cross(F, L), U) < 0:
            raise InputError("frame is left-handed (Front × Left = −Up)", path=path, where=f"line {no}")
        if len(pts) >= limits.left("points"):
            raise InputError(f"more points than a curve may have ({limits.limit_text('points')})", path=path,
                             where=f"line {no}")
        pts.append(p)
        fronts.append(F)
        lefts.append(L)
        ups.append(U)
        nums.append(no)
    if not header_seen:
        raise InputError("empty file", path=path, where="line 1")
    if not pts:
        raise InputError("no points after the header", path=path, where="line 2")
    R = NL2_TO_ZUP
    P = np.array(pts) @ R.T
    U = np.array(ups) @ R.T
    F = np.array(fronts) @ R.T
    # front vectors must run along the curve, else the file's frames belong to another curve
    return P, U, F, np.array(nums)


def _parse_json(path: Path, text: str):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg}", path=path, where=f"line {e.lineno}") from None
    if not isinstance(doc, dict):
        raise InputError("the top level must be an object with a 'points' list", path=path, where="line 1")
    unknown = set(doc) - {"points", "roll", "closed", "name", "description", "frame"}
    if unknown:
        raise InputError("unknown key", path=path, where=sorted(unknown)[0])
    pts = doc.get("points")
    if not isinstance(pts, list):
        raise InputError("missing or not a list of [x, y, z]", path=path, where="points")
    if len(pts) > limits.left("points"):
        raise InputError(f"{len(pts):,} points is more than a curve may have ({limits.limit_text('points')})", path=path,
                         where="points")
    out = np.empty((len(pts), 3))
    for i, p in enumerate(pts):
        if (not isinstance(p, list) or len(p) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)):
            raise InputError(f"must be [x, y, z] numbers, got {p!r}", path=path, where=f"points[{i}]")
        if not all(math.isfinite(x) for x in p):
            raise InputError("not finite (NaN or inf)", path=path, where=f"points[{i}]")
        out[i] = p
    roll = doc.get("roll")
    point_roll, knots = None, None
    if roll is not None:
        if not isinstance(roll, list):
            raise InputError("must be a list", path=path, where="roll")
        if roll and all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in roll):
            if len(roll) != len(pts):
                raise InputError(f"one roll per point: {len(pts)} points but {len(roll)} rolls", path=path,
                                 where="roll")
            point_roll = np.array(roll, dtype=float)
            if not np.all(np.isfinite(point_roll)):
                raise InputError("not finite", path=path, where="roll")
        else:
            knots = roll
    closed = doc.get("closed")
    if closed is not None and not isinstance(closed, bool):
        raise InputError(f"must be true or false, got {closed!r}", path=path, where="closed")
    frame = doc.get("frame")
    return out, point_roll, knots, closed, frame


def _auto_closed(P: np.ndarray) -> bool:
    if len(P) < 3:
        return False
    with np.errstate(over="ignore", invalid="ignore"):   # absurd coordinates are refused later, by name
        gap = np.linalg.norm(P[-1] - P[0])
        mean = np.mean(np.linalg.norm(np.diff(P, axis=0), axis=1))
    return bool(gap < 0.5 * mean)


def load_curve(path, format: str = "auto", frame: str | None = None, closed: bool | None = None,
               roll=None) -> Track:
    """Load a curve file as a :class:`Track`.

    Parameters
    ----------
    path : str or PathLike
        The curve file.
    format : {"auto", "points", "nl2", "json"}
        ``auto`` (default) picks by extension and content.
    frame : {"up", "minimal", "frenet", "file"} or None
        None (default): the file's own frame for NL2 files, else ``up``.
    closed : bool or None
        None (default): from the file (JSON ``closed``), else closed when the
        first and last points are closer than half the mean point spacing.
    roll : list of (s m, degrees) or None
        Bank knots; override the file's roll column when given.
    """
    path = Path(os.fspath(path))
    if format not in FORMATS:
        raise InputError(f"unknown curve format {format!r}; expected one of {', '.join(FORMATS)}", path=path,
                         where="format")
    text = _read_text(path)
    fmt = _detect(path, text) if format == "auto" else format
    up, point_roll, lines = None, None, None
    if fmt == "points":
        P, point_roll, lines = _parse_points_csv(path, text)
    elif fmt == "nl2":
        P, up, _front, lines = _parse_nl2(path, text)
    else:
        P, point_roll, knots, jclosed, jframe = _parse_json(path, text)
        if roll is None and knots is not None:
            roll = knots
        if closed is None:
            closed = jclosed
        if frame is None:
            frame = jframe
    if closed is None:
        closed = _auto_closed(P)
    if frame is None:
        frame = "file" if up is not None else "up"
    if frame == "file" and up is None:
        raise InputError("frame 'file' needs a format that carries frames (nl2)", path=path, where="frame")
    if frame != "file":
        up = None
    return Track.from_points(P, frame=frame, closed=bool(closed), roll=roll, source=str(path), lines=lines,
                             point_roll=point_roll, up_vectors=up)


#: what an exported curve keeps when loaded back (docs/curves.md): positions within this, m …
EXPORT_TOL_POSITION = 1e-3
#: … every radius within this fraction (radii above 1 / ``EXPORT_STRAIGHT_CURVATURE`` count as straight) …
EXPORT_TOL_RADIUS = 0.01
EXPORT_STRAIGHT_CURVATURE = 1e-4   # 1/m: 10 km
#: … and the rider's up within this, degrees
EXPORT_TOL_UP = 0.1
#: rounds of refinement (each halves the spacing where the check failed: 0.5 m → 4 mm) …
EXPORT_ROUNDS = 7
#: … until the check points are within this share of each tolerance (what lies between them: within it)
EXPORT_MARGIN = 0.5
#: check points inside each interval between written points
_CHECK_FRACTIONS = np.arange(1, 8) / 8.0


def _nl2_rows(track: Track, s: np.ndarray):
    """Positions and frames of ``track`` at ``s`` as written to an NL2 file (z up, rounded as written)."""
    f = track.frames(s)
    if track.closed:   # end with a repeat of the first point, so the file loads back as closed
        f = track.frames(np.where(np.arange(len(s)) == len(s) - 1, 0.0, s))
    return (np.round(f.position, 9), np.round(f.tangent, 9), np.round(f.normal, 9), np.round(f.binormal, 9))


def _reload(track: Track, s: np.ndarray) -> Track:
    """The track a curve file with points at ``s`` loads back as (what ``load_curve`` builds from it)."""
    import warnings

    P, _, _, U = _nl2_rows(track, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Track.from_points(P, frame="file", closed=track.closed, up_vectors=U)


def export_deviation(track: Track, s: np.ndarray) -> dict:
    """How far the curve through ``track``'s points at ``s`` (as :func:`save_nl2` writes them) strays
    from ``track``, checked at 7 points inside every interval and at the points themselves.

    Returns ``position`` (largest distance across the track, m), ``radius`` (the largest curvature
    outside the track's own range over the interval and the tolerance, as a fraction of the
    track's: 0 when within), ``radius_track`` and ``radius_back`` there (m), ``up`` (largest angle
    between the riders' up vectors, degrees), ``s_position``, ``s_radius``, ``s_up`` (where, m),
    ``ok`` (within the ``EXPORT_TOL_*``), ``bad`` (per interval: outside ``EXPORT_MARGIN`` of them:
    to refine) and ``points``.
    """
    back = _reload(track, s)
    n_int = len(s) - 1
    ps = np.asarray(back.point_s, dtype=float)[: len(back.points)]
    ps = np.append(ps, back.length) if track.closed else ps
    frac = np.concatenate([[0.0], _CHECK_FRACTIONS])
    so = (s[:-1, None] + frac[None, :] * np.diff(s)[:, None]).ravel()
    sr = (ps[:-1, None] + frac[None, :] * np.diff(ps)[:, None]).ravel()
    fo, fr = track.frames(so), back.frames(sr)
    d = fr.position - fo.position
    d -= np.sum(d * fo.tangent, axis=1)[:, None] * fo.tangent
    pos = np.linalg.norm(d, axis=1).reshape(n_int, -1)
    # the track's own curvature over each check point's neighbourhood (the check points beside it):
    # where it changes fast (a clothoid meeting an arc) the curve through the points may lag by as much
    k = np.append(fo.curvature, track.frames(s[-1:]).curvature)
    lo = np.minimum(np.minimum(k[:-1], k[1:]), np.r_[k[:1], k[:-2]]).reshape(n_int, -1)
    hi = np.maximum(np.maximum(k[:-1], k[1:]), np.r_[k[:1], k[:-2]]).reshape(n_int, -1)
    kr = fr.curvature.reshape(n_int, -1)
    cos = np.clip(np.sum(fo.binormal * fr.binormal, axis=1), -1.0, 1.0)
    up = np.degrees(np.arccos(cos)).reshape(n_int, -1)

    def outside(share):
        """Check points outside ``share`` of the tolerances: (radius outside, any outside)."""
        rad = (kr > hi * (1 + share * EXPORT_TOL_RADIUS) + share * EXPORT_STRAIGHT_CURVATURE) | \
              (kr < lo * (1 - share * EXPORT_TOL_RADIUS) - share * EXPORT_STRAIGHT_CURVATURE)
        return rad, rad | (pos > share * EXPORT_TOL_POSITION) | (up > share * EXPORT_TOL_UP)

    rad_bad, out = outside(1.0)
    bad = outside(EXPORT_MARGIN)[1].any(axis=1)
    # curvature beyond the track's own over the neighbourhood, as a share of it
    beyond = np.maximum(np.maximum(kr - hi, lo - kr), 0.0)
    rad = np.where(rad_bad, beyond / np.maximum(hi, EXPORT_STRAIGHT_CURVATURE), 0.0)
    so = so.reshape(n_int, -1)

    def worst(a):
        i = np.unravel_index(int(np.argmax(a)), a.shape)
        return i, float(a[i]), float(so[i])

    _, p_max, p_s = worst(pos)
    ir, _, r_s = worst(np.where(rad_bad, beyond, 0.0))       # the largest change of curvature
    r_max = float(rad[ir])
    _, u_max, u_s = worst(up)
    k_track = float(hi[ir] if kr[ir] > hi[ir] else lo[ir])
    return {"position": p_max, "s_position": p_s, "radius": r_max, "s_radius": r_s, "up": u_max, "s_up": u_s,
            "radius_track": 1.0 / k_track if k_track > 0 else math.inf,
            "radius_back": 1.0 / float(kr[ir]) if kr[ir] > 0 else math.inf,
            "bad": bad, "ok": not out.any(), "points": int(len(s))}


def export_samples(track: Track, spacing: float = 0.5) -> tuple[np.ndarray, dict]:
    """Where to write a track's points: every ``spacing`` m, halved (up to ``EXPORT_ROUNDS`` times)
    around every interval where the curve through them would stray from the track — where the
    curvature changes (a clothoid meeting an arc, a joint). Returns the arc lengths (a closed
    track's last is its length: the repeat of the first point) and :func:`export_deviation` of them.
    """
    if not spacing > 0:
        raise InputError(f"spacing must be > 0, got {spacing}", where="spacing")
    n = max(6, int(math.ceil(track.length / spacing)) + 1)
    s = np.linspace(0.0, track.length, n)
    dev = export_deviation(track, s)
    for _ in range(EXPORT_ROUNDS):
        if not dev["bad"].any():
            break
        bad = dev["bad"]
        bad = bad | np.r_[bad[1:], False] | np.r_[False, bad[:-1]]   # and their neighbours: gentle grading
        mids = 0.5 * (s[:-1] + s[1:])[bad]
        s = np.sort(np.concatenate([s, mids]))
        dev = export_deviation(track, s)
    return s, dev


def _warn_deviation(dev: dict, path) -> None:
    if dev["ok"]:
        return
    import warnings

    parts = []
    if dev["position"] > EXPORT_TOL_POSITION:
        parts.append(f"positions by up to {dev['position'] * 1e3:.2f} mm (at s = {dev['s_position']:.2f} m)")
    if dev["radius"] > 0:
        was = ("is straight" if math.isinf(dev["radius_track"])
               else f"has {dev['radius_track']:.4g} m")
        parts.append(f"a radius of {dev['radius_back']:.4g} m where the track {was} (at s = {dev['s_radius']:.2f} m)")
    if dev["up"] > EXPORT_TOL_UP:
        parts.append(f"the rider's up by up to {dev['up']:.2f}° (at s = {dev['s_up']:.2f} m)")
    warnings.warn(f"{path}: loaded back, the curve through the written points differs from the track: "
                  + ", ".join(parts) + " — a curvature jump (a straight meeting an arc) that no spline "
                  "through points reproduces; put a clothoid there", UserWarning, stacklevel=3)


def save_nl2(track: Track, path, spacing: float = 0.5) -> Path:
    """Write ``track`` as a NoLimits 2 "export track spline" CSV, a point every ``spacing`` m and
    more where the curvature changes (:func:`export_samples`).

    The frame written is the track's own (with its roll). Closed tracks end
    with a repeat of the first point, so they load back as closed. Loaded back,
    the curve keeps positions within 1 mm, every radius within 1 % and the
    rider's up within 0.1°; where it cannot (a curvature jump), a warning gives
    the largest deviation and where.
    """
    s, dev = export_samples(track, spacing)
    path = Path(os.fspath(path))
    _write_nl2(track, s, path)
    _warn_deviation(dev, path)
    return path


def _write_nl2(track: Track, s: np.ndarray, path: Path) -> None:
    Rinv = NL2_TO_ZUP.T
    cols = [c @ Rinv.T for c in _nl2_rows(track, s)]
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\t".join(f'"{h}"' for h in NL2_HEADER) + "\n")
        for i in range(len(s)):
            vals = [f"{v:.9f}" for c in cols for v in c[i]]
            fh.write(f"{i + 1}\t" + "\t".join(vals) + "\n")


def curve_report(path, format: str = "auto") -> dict:
    """Figures ``trackrider curve FILE`` prints: :func:`trackrider.curves.stats.layout_figures`
    (length, heights, radius, curvature, torsion, bank, drops, inversions, closed) and ``file``,
    ``format``, ``points``."""
    path = Path(os.fspath(path))
    track = load_curve(path, format=format)
    fmt = file_format(path, format)
    rep = track_report(track, str(path), f"{fmt}, {len(track.points)} points")
    rep["format"] = fmt
    return rep


def file_format(path, format: str = "auto") -> str:
    """The format of a curve file: ``format``, or the one ``auto`` picks by extension and content."""
    path = Path(os.fspath(path))
    return format if format != "auto" else _detect(path, _read_text(path))


def track_report(track: Track, name: str, what: str) -> dict:
    """:func:`trackrider.curves.stats.layout_figures` of ``track`` with ``file`` (``name``) and
    ``what`` (how it was made: a file's format, a scenario's segments) for the first line."""
    from .stats import layout_figures

    rep = layout_figures(track)
    rep.update({"file": name, "what": what, "points": None if track.points is None else int(len(track.points))})
    return rep


def format_curve_report(report: dict) -> str:
    """Human-readable lines for :func:`curve_report`'s (or :func:`track_report`'s) dict."""
    r = report
    radius = "inf (straight)" if math.isinf(r["min_radius"]) else f"{r['min_radius']:.2f} m (s = {r['s_min_radius']:.1f} m)"
    drop = r.get("biggest_drop")
    inv = r.get("inversions") or []
    lines = [
        f"curve:            {r['file']} ({r['what']}, frame {r['frame']})",
        f"length:           {r['length']:.3f} m",
        f"height range:     {r['z_min']:.3f} .. {r['z_max']:.3f} m (highest at s = {r['s_z_max']:.1f} m)",
        "biggest drop:     " + ("none" if drop is None else
                                f"{drop['height']:.2f} m, s {drop['s_from']:.1f} .. {drop['s_to']:.1f} m, "
                                f"steepest {drop['steepest_deg']:.1f}° at s = {drop['s_steepest']:.1f} m"),
        f"steepest descent: {r['steepest_deg']:.1f}°" + (f" (grade {r['max_grade']:.2f} % where within 45° of level)"
                                                         if r["max_grade"] < 10 else ""),
        f"minimum radius:   {radius}",
        f"max curvature:    {r['max_curvature']:.5f} 1/m",
        f"max |torsion|:    {r['max_abs_torsion']:.5f} 1/m (where radius < 200 m)",
        f"largest bank:     {r['max_bank_upright']:.1f}° upright, {r['max_abs_roll']:.1f}° in all",
        f"inversions:       {len(inv)}" + ("" if not inv else " (" + ", ".join(
            f"s {i['s_from']:.1f} .. {i['s_to']:.1f} m" for i in inv[:6]) + (" …" if len(inv) > 6 else "") + ")"),
        f"closed:           {'yes' if r['closed'] else 'no'}",
    ]
    return "\n".join(lines)


EXPORT_FORMATS = ("nl2", "points", "json")


def save_curve(track: Track, path, format: str = "nl2", spacing: float = 0.5) -> Path:
    """Write ``track`` as a curve file, a point every ``spacing`` m (default 0.5 m) and more where
    the curvature changes (:func:`export_samples`; coordinates to 1e-9 m).

    ``format``: ``nl2`` (NoLimits 2 CSV with the track's frame, :func:`save_nl2`),
    ``points`` (CSV ``x,y,z,roll``: the bank against the up frame, degrees) or
    ``json`` (``points``, per-point ``roll``, ``closed``). Loading the file back
    gives the same track: positions within 1 mm, radii within 1 % (NL2: and the
    rider's up within 0.1°; points and JSON carry the bank as roll on the ``up``
    frame), else a warning says by how much it differs.
    """
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {format!r}; expected one of {', '.join(EXPORT_FORMATS)}",
                         where="format")
    if format == "nl2":
        return save_nl2(track, path, spacing=spacing)
    s, dev = export_samples(track, spacing)
    f = track.frames(np.where(np.arange(len(s)) == len(s) - 1, 0.0, s) if track.closed else s)
    roll = np.degrees(np.unwrap(np.radians(f.roll)))  # continuous through ±180° (a roll through inverted)
    path = Path(os.fspath(path))
    if format == "points":
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("x,y,z,roll\n")
            for p, r in zip(f.position, roll):
                fh.write(f"{p[0]:.9f},{p[1]:.9f},{p[2]:.9f},{r:.6f}\n")
    else:
        doc = {"points": [[round(float(v), 9) for v in p] for p in f.position],
               "roll": [round(float(r), 6) for r in roll], "closed": bool(track.closed)}
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(doc, fh, separators=(",", ":"))
            fh.write("\n")
    _warn_deviation(dev, path)
    return path


def looks_like_curve_file(path) -> bool:
    """Whether ``path`` starts like a curve file that :func:`save_curve` writes (so --overwrite may replace it)."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(200)
    except (OSError, UnicodeDecodeError):
        return False
    first = head.lstrip().splitlines()[0] if head.strip() else ""
    return (first.startswith('"No."') or first.replace(" ", "") in ("x,y,z", "x,y,z,roll")
            or head.lstrip().startswith('{"points"'))
