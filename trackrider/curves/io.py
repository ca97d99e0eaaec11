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
# torsion is undefined on straights and spikes near them; report it where the radius is below 200 m
TORSION_MIN_CURVATURE = 5e-3  # 1/m
#: most samples ``curve_report`` evaluates (every 0.05 m up to 20 km, evenly beyond)
REPORT_SAMPLES = 400_001


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


def _parse_points_csv(path: Path, text: str):
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


def save_nl2(track: Track, path, spacing: float = 0.5) -> Path:
    """Write ``track`` as a NoLimits 2 "export track spline" CSV, one point per ``spacing`` m.

    The frame written is the track's own (with its roll). Closed tracks end
    with a repeat of the first point, so they load back as closed.
    """
    if not spacing > 0:
        raise InputError(f"spacing must be > 0, got {spacing}", where="spacing")
    n = max(6, int(math.ceil(track.length / spacing)) + 1)
    s = np.linspace(0.0, track.length, n)
    f = track.frames(s)
    if track.closed:
        f = track.frames(np.where(np.arange(n) == n - 1, 0.0, s))
    Rinv = NL2_TO_ZUP.T
    cols = [f.position @ Rinv.T, f.tangent @ Rinv.T, f.normal @ Rinv.T, f.binormal @ Rinv.T]
    path = Path(os.fspath(path))
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\t".join(f'"{h}"' for h in NL2_HEADER) + "\n")
        for i in range(n):
            vals = [f"{v:.6f}" for v in cols[0][i]] + [f"{v:.9f}" for c in cols[1:] for v in c[i]]
            fh.write(f"{i + 1}\t" + "\t".join(vals) + "\n")
    return path


def curve_report(path, format: str = "auto") -> dict:
    """Figures ``trackrider curve FILE`` prints: length, heights, radius, curvature, torsion, closed.

    Returns a dict with ``file, format, points, length`` (m), ``z_min, z_max`` (m),
    ``min_radius`` (m, ``inf`` if straight), ``max_curvature`` (1/m),
    ``max_abs_torsion`` (1/m, where the radius is below 200 m), ``max_abs_roll`` (deg), ``closed``, ``frame``.
    """
    path = Path(os.fspath(path))
    track = load_curve(path, format=format)
    fmt = format if format != "auto" else _detect(path, _read_text(path))
    # every 0.05 m, at most REPORT_SAMPLES samples (a 76 km line: every 0.38 m), in blocks
    n = min(REPORT_SAMPLES, max(2, int(math.ceil(track.length / 0.05)) + 1))
    s_all = np.linspace(0.0, track.length, n)
    kmax = zmin = zmax = tmax = rmax = 0.0
    zmin, zmax = math.inf, -math.inf
    for a in range(0, n, 100_000):
        f = track.frames(s_all[a:a + 100_000])
        kmax = max(kmax, float(np.max(f.curvature)))
        zmin = min(zmin, float(np.min(f.position[:, 2])))
        zmax = max(zmax, float(np.max(f.position[:, 2])))
        tmax = max(tmax, float(np.max(np.abs(f.torsion[f.curvature >= TORSION_MIN_CURVATURE]), initial=0.0)))
        rmax = max(rmax, float(np.max(np.abs(f.roll))))
    return {
        "file": str(path),
        "format": fmt,
        "points": int(len(track.points)),
        "length": track.length,
        "z_min": zmin,
        "z_max": zmax,
        "min_radius": (1.0 / kmax) if kmax > 1e-9 else math.inf,
        "max_curvature": kmax,
        "max_abs_torsion": tmax,
        "max_abs_roll": rmax,
        "closed": track.closed,
        "frame": track.frame_kind,
    }


def format_curve_report(report: dict) -> str:
    """Human-readable lines for :func:`curve_report`'s dict."""
    r = report
    radius = "inf (straight)" if math.isinf(r["min_radius"]) else f"{r['min_radius']:.2f} m"
    return "\n".join([
        f"curve:            {r['file']} ({r['format']}, {r['points']} points, frame {r['frame']})",
        f"length:           {r['length']:.3f} m",
        f"height range:     {r['z_min']:.3f} .. {r['z_max']:.3f} m",
        f"minimum radius:   {radius}",
        f"max curvature:    {r['max_curvature']:.5f} 1/m",
        f"max |torsion|:    {r['max_abs_torsion']:.5f} 1/m (where radius < 200 m)",
        f"max |roll|:       {r['max_abs_roll']:.1f} deg",
        f"closed:           {'yes' if r['closed'] else 'no'}",
    ])


EXPORT_FORMATS = ("nl2", "points", "json")


def _samples(track: Track, spacing: float):
    if not spacing > 0:
        raise InputError(f"spacing must be > 0, got {spacing}", where="spacing")
    n = max(6, int(math.ceil(track.length / spacing)) + 1)
    s = np.linspace(0.0, track.length, n)
    if track.closed:  # end with a repeat of the first point, so the file loads back as closed
        s = np.where(np.arange(n) == n - 1, 0.0, s)
    return track.frames(s)


def save_curve(track: Track, path, format: str = "nl2", spacing: float = 0.5) -> Path:
    """Write ``track`` as a curve file, one point every ``spacing`` m (default 0.5 m).

    ``format``: ``nl2`` (NoLimits 2 CSV with the track's frame, :func:`save_nl2`),
    ``points`` (CSV ``x,y,z,roll``: the bank against the up frame, degrees) or
    ``json`` (``points``, per-point ``roll``, ``closed``). Loading the file back
    gives the same track (NL2: within 1 mm and 0.1°; points and JSON carry the
    bank as roll on the ``up`` frame).
    """
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {format!r}; expected one of {', '.join(EXPORT_FORMATS)}",
                         where="format")
    if format == "nl2":
        return save_nl2(track, path, spacing=spacing)
    f = _samples(track, spacing)
    roll = np.degrees(np.unwrap(np.radians(f.roll)))  # continuous through ±180° (a roll through inverted)
    path = Path(os.fspath(path))
    if format == "points":
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("x,y,z,roll\n")
            for p, r in zip(f.position, roll):
                fh.write(f"{p[0]:.6f},{p[1]:.6f},{p[2]:.6f},{r:.6f}\n")
    else:
        doc = {"points": [[round(float(v), 6) for v in p] for p in f.position],
               "roll": [round(float(r), 6) for r in roll], "closed": bool(track.closed)}
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(doc, fh, separators=(",", ":"))
            fh.write("\n")
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
