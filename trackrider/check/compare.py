"""A run compared with a measured ride: ``trackrider compare RESULTS_DIR MEASURED.csv``.

The measured trace is a CSV file with a header line: a time column (s) and
three accelerations in the sensor's axes — forward, left, up, as the car's
(docs/outputs.md), a leading ``-`` on a column's name turning its sign — in g
or m/s² (specific force, as accelerometers read it: +1 g up at rest), and
optionally an altitude (m) or a speed (m/s) column. Then:

1. **filtered the same way**: the run's G is its ``g_*_filtered`` columns (the
   4-pole zero-phase Butterworth at ``filter_hz``); the measured trace, laid on
   a uniform grid at its own median interval, goes through the same filter at
   its own rate, then is sampled at the run's instants; its first and last
   ``EDGE_PERIODS / filter_hz`` seconds (the filter's transients) are left out;
2. **aligned in time** by cross-correlation on the run's grid: the offset where
   the two correlate best (Pearson, over their overlap, the three axes pooled;
   with ``rotate`` first on the magnitude ``|a|``, which no rotation changes),
   refined to a fraction of a sample by a parabola through the peak;
3. optionally **rotated**: the fixed rotation ``R`` (sensor → car) that makes
   ``R a_measured`` closest to the run's G in least squares (Kabsch: the SVD
   of the cross-covariance), then aligned again and fitted again;
4. **compared**: per axis, the RMS and the peak of ``R a_measured − G_run``
   over the overlap, and per section of the track (the car's ``s`` in it).

It refuses what it cannot align — a trace sampled too slowly to be filtered
like the run, an overlap shorter than half the shorter of the two, a best
match whose correlation is below :data:`MIN_CORRELATION`, or one matched as
well (within :data:`AMBIGUITY`) somewhere else — with an ``InputError``
(exit 2) that says so, rather than a meaningless figure.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trackrider.errors import InputError

#: the weakest correlation of an accepted alignment (Pearson, over the overlap, axes pooled)
MIN_CORRELATION = 0.5
#: the least overlap, as a fraction of the shorter of the two traces
MIN_OVERLAP = 0.5
#: a match this close to the best one (in correlation) elsewhere makes the alignment ambiguous ...
AMBIGUITY = 0.02
#: ... when it is more than this many periods of the filter's cut-off away (s × cut-off)
APART_PERIODS = 5.0
#: fewest samples of a measured trace
MIN_ROWS = 20
#: standard gravity of a trace in m/s² (as the report's and the runs' default)
G0 = 9.81
UNITS = {"g": 1.0, "m/s2": 1.0 / G0}
AXES = ("longitudinal", "lateral", "vertical")          # the sensor's forward, left, up
FILTERED = ("g_longitudinal_filtered", "g_lateral_filtered", "g_vertical_filtered")
#: the measured trace's ends left out, in periods of the filter's cut-off (its start and end transients)
EDGE_PERIODS = 2.0
#: points per axis of the aligned series kept for the report's figure
MAX_SERIES = 2000


@dataclass
class Measured:
    """A measured trace: ``t`` (s), ``acc`` (n, 3) forward, left, up in g; ``extra`` altitude or speed."""

    path: str
    t: np.ndarray
    acc: np.ndarray
    columns: dict
    extra_kind: str | None = None
    extra: np.ndarray | None = None


def _column_spec(text: str):
    text = text.strip()
    return (text[1:].strip(), -1.0) if text.startswith("-") else (text, 1.0)


def read_measured(path, time: str, accel, units: str = "g", altitude: str | None = None,
                  speed: str | None = None) -> Measured:
    """Read a measured trace (module docstring). ``accel``: three column names (forward, left, up;
    ``-name`` for a reversed axis). Errors name the file and the column or line."""
    from trackrider.inputs import MAX_CURVE_BYTES, read_input_bytes

    p = Path(path)
    if units not in UNITS:
        raise InputError(f"--units must be one of {', '.join(UNITS)}, got {units!r}")
    if isinstance(accel, str):
        accel = accel.split(",")
    if len(accel) != 3:
        raise InputError(f"--accel wants three columns (forward,left,up), got {len(accel)}: {','.join(accel)}")
    if altitude is not None and speed is not None:
        raise InputError("give --altitude or --speed, not both")
    data = read_input_bytes(p, MAX_CURVE_BYTES, "measured trace")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path=p) from None
    lines = [(i, line) for i, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InputError("no header line", path=p, where="line 1")
    head_no, head = lines[0]
    header = [h.strip() for h in next(csv.reader(io.StringIO(head)))]
    specs = [(time, 1.0)] + [_column_spec(a) for a in accel]
    extra_kind = "altitude" if altitude is not None else ("speed" if speed is not None else None)
    if extra_kind:
        specs.append((altitude if altitude is not None else speed, 1.0))
    where = {}
    for name, _ in specs:
        if name not in header:
            raise InputError(f"no column {name!r} (columns: {', '.join(header)})", path=p, where=f"line {head_no}")
        where[name] = header.index(name)
    rows = []
    for no, line in lines[1:]:
        fields = next(csv.reader(io.StringIO(line)))
        row = []
        for name, sign in specs:
            j = where[name]
            if j >= len(fields):
                raise InputError(f"short row: no value for {name!r}", path=p, where=f"line {no}")
            try:
                v = float(fields[j])
            except ValueError:
                raise InputError(f"column {name!r}: not a number: {fields[j]!r}", path=p, where=f"line {no}") from None
            if not math.isfinite(v):
                raise InputError(f"column {name!r}: not finite: {fields[j]!r}", path=p, where=f"line {no}")
            row.append(sign * v)
        rows.append((no, row))
    if len(rows) < MIN_ROWS:
        raise InputError(f"{len(rows)} rows: a measured trace needs at least {MIN_ROWS}", path=p)
    arr = np.array([r for _, r in rows])
    t = arr[:, 0]
    bad = np.flatnonzero(np.diff(t) <= 0)
    if len(bad):
        raise InputError(f"time {t[bad[0] + 1]:g} s does not increase (after {t[bad[0]]:g} s)", path=p,
                         where=f"line {rows[bad[0] + 1][0]}")
    acc = arr[:, 1:4] * UNITS[units]
    return Measured(str(p), t, acc, {"time": time, "accel": list(accel), "units": units,
                                     extra_kind or "extra": altitude if altitude is not None else speed},
                    extra_kind, arr[:, 4] if extra_kind else None)


# --------------------------------------------------------------------------- the steps


def _filtered(meas: Measured, cutoff_hz: float | None):
    """The measured accelerations on a uniform grid at their median interval, through the run's filter."""
    from trackrider.filters import filtfilt

    dt = float(np.median(np.diff(meas.t)))
    n = int(math.floor((meas.t[-1] - meas.t[0]) / dt + 1e-9)) + 1
    grid = meas.t[0] + dt * np.arange(n)
    acc = np.column_stack([np.interp(grid, meas.t, meas.acc[:, k]) for k in range(3)])
    if cutoff_hz is not None:
        if not cutoff_hz < 0.5 / dt:
            raise InputError(f"sampled at {1 / dt:.4g} Hz: too slowly to be filtered like the run "
                             f"({cutoff_hz:g} Hz needs more than {2 * cutoff_hz:g} Hz)", path=meas.path)
        acc = filtfilt(acc, cutoff_hz, 1.0 / dt)
    return grid, acc


def _xcorr(a, b):
    """``Σ_i a[i + lag, k] b[i, k]`` for every lag (−len(b)+1 … len(a)−1) and axis k, by FFT."""
    n = len(a) + len(b) - 1
    size = 1 << (n - 1).bit_length()
    c = np.fft.irfft(np.fft.rfft(a, size, axis=0) * np.fft.rfft(b[::-1], size, axis=0), size, axis=0)[:n]
    return np.arange(n) - (len(b) - 1), c


def _correlations(a, b):
    """The Pearson correlation (axes pooled) of ``a[i + lag]`` with ``b[i]`` over their overlap, for every
    lag; and the overlaps' lengths. Sums over the overlap come from cumulative sums."""
    lags, ab = _xcorr(a, b)
    ia, ib = np.maximum(0, lags), np.maximum(0, -lags)
    m = np.minimum(len(a), lags + len(b)) - ia
    ca = np.vstack([np.zeros((1, a.shape[1])), np.cumsum(a, axis=0)])
    cb = np.vstack([np.zeros((1, b.shape[1])), np.cumsum(b, axis=0)])
    ca2 = np.vstack([np.zeros((1, a.shape[1])), np.cumsum(a * a, axis=0)])
    cb2 = np.vstack([np.zeros((1, b.shape[1])), np.cumsum(b * b, axis=0)])
    sa, sb = ca[ia + m] - ca[ia], cb[ib + m] - cb[ib]
    saa, sbb = ca2[ia + m] - ca2[ia], cb2[ib + m] - cb2[ib]
    mm = m[:, None].astype(float)
    num = np.sum(ab - sa * sb / mm, axis=1)
    den = np.sqrt(np.maximum(np.sum(saa - sa * sa / mm, axis=1), 0) * np.maximum(np.sum(sbb - sb * sb / mm, axis=1), 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(den > 0, num / den, 0.0)
    return lags, r, m


def _align(t_run, G, t_meas, A, min_overlap: int, apart: int, hint: str = ""):
    """The offset (s, ``t_run = t_meas + offset``) where the run and the measured trace (sampled at the
    run's interval) correlate best, refined between samples by a parabola through the peak; returns
    (offset, correlation). Refused: no lag overlapping enough; a best match below MIN_CORRELATION; one
    matched as well (within AMBIGUITY) more than ``apart`` samples away."""
    dt = t_run[1] - t_run[0]
    lags, r, m = _correlations(G, A)
    r = np.where(m >= min_overlap, r, -np.inf)
    if not np.isfinite(r).any():
        raise InputError("cannot align the measured trace with the run: they overlap by less than half the "
                         "shorter of the two")
    k = int(np.argmax(r))
    if not r[k] >= MIN_CORRELATION:
        raise InputError(f"cannot align the measured trace with the run: its best match correlates only "
                         f"{r[k]:.2f} (at least {MIN_CORRELATION:g} needed) — not the same ride, a wrong column "
                         f"or sign{hint}")
    far = np.abs(lags - lags[k]) > apart
    if far.any() and np.max(r[far]) >= r[k] - AMBIGUITY:
        j = int(np.argmax(np.where(far, r, -np.inf)))
        raise InputError(f"cannot align the measured trace with the run: it matches {(lags[j] - lags[k]) * dt:+.2f} s "
                         f"away as well as at its best (correlation {r[j]:.3f} against {r[k]:.3f}); a longer "
                         "trace tells them apart")
    frac = 0.0
    if 0 < k < len(r) - 1 and np.isfinite(r[k - 1]) and np.isfinite(r[k + 1]):
        den = r[k - 1] - 2 * r[k] + r[k + 1]
        frac = 0.5 * (r[k - 1] - r[k + 1]) / den if den < 0 else 0.0
    return t_run[0] + (lags[k] + frac) * dt - t_meas[0], float(r[k])


def kabsch(P, Q):
    """The rotation ``R`` minimising Σ |R p_i − q_i|² (rows of P, Q): ``R = V diag(1, 1, d) Uᵀ`` from
    the SVD ``PᵀQ = U S Vᵀ``, ``d`` making it proper."""
    U, _, Vt = np.linalg.svd(P.T @ Q)
    d = np.sign(np.linalg.det(Vt.T @ U.T)) or 1.0
    return Vt.T @ np.diag([1.0, 1.0, d]) @ U.T


def rotation_words(R) -> dict:
    """Angle (degrees) and unit axis of a rotation matrix."""
    c = max(-1.0, min(1.0, 0.5 * (np.trace(R) - 1.0)))
    angle = math.degrees(math.acos(c))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    n = np.linalg.norm(w)
    axis = (w / n).tolist() if n > 1e-12 else [1.0, 0.0, 0.0]
    return {"angle_deg": angle, "axis": axis, "matrix": R.tolist()}


def _errors(err, t, s, sections_of):
    """RMS and peak (with its time and s) per axis of ``err`` (n, 3)."""
    out = {}
    for k, axis in enumerate(AXES):
        e = err[:, k]
        i = int(np.argmax(np.abs(e)))
        out[axis] = {"rms_g": float(np.sqrt(np.mean(e * e))), "peak_g": float(e[i]), "t": float(t[i]),
                     "s": float(s[i]) if np.isfinite(s[i]) else None, "section": sections_of(s[i])}
    return out


@dataclass
class Comparison:
    """What ``compare`` found (``as_dict`` is ``compare.json``)."""

    summary: dict
    series: dict = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        return {**self.summary, "series": self.series}


def compare_run(results, meas: Measured, train: str | None = None, car: int = 1, rotate: bool = False,
                scenario=None, notice=None) -> Comparison:
    """Compare run ``results`` (a results folder) with ``meas`` (module docstring)."""
    from trackrider.check.results import scenario_sections
    from trackrider.metrics import section_at
    from trackrider.record import read_summary, read_timeseries

    summary = read_summary(results)
    ts = read_timeseries(results)
    trains = [n for n, v in (summary.get("trains") or {}).items() if isinstance(v, dict)]
    if not trains:
        raise InputError("the run has no train to compare", path=results)
    name = train if train is not None else trains[0]
    if name not in trains:
        raise InputError(f"no train named {name!r} (trains: {', '.join(trains)})", where="--train")
    rows = np.flatnonzero((np.asarray(ts["train"]).astype(str) == name) & (np.asarray(ts["car"]) == car))
    if len(rows) == 0:
        raise InputError(f"train {name!r} has no car {car}", where="--car")
    t_run = np.asarray(ts["t"], float)[rows]
    G = np.column_stack([np.asarray(ts[c], float)[rows] for c in FILTERED])
    s_run = np.asarray(ts["s"], float)[rows]
    keep = np.all(np.isfinite(G), axis=1)
    if keep.sum() < MIN_ROWS:
        raise InputError(f"the run's car {car} of {name!r} has fewer than {MIN_ROWS} samples on its track",
                         path=results)
    first, last = np.flatnonzero(keep)[[0, -1]]
    t_run, G, s_run = t_run[first:last + 1], G[first:last + 1], s_run[first:last + 1]
    G = np.column_stack([np.interp(t_run, t_run[np.isfinite(G[:, k])], G[np.isfinite(G[:, k]), k])
                         for k in range(3)])
    filt = summary.get("filter") or {}
    cutoff = float(filt["cutoff_hz"]) if filt.get("applied") and filt.get("cutoff_hz") else None
    grid, A = _filtered(meas, cutoff)
    if cutoff is not None:      # the filter's start and end transients (the run's filter saw beyond them)
        edge = int(round(EDGE_PERIODS / cutoff / float(np.median(np.diff(grid)))))
        if len(grid) > 4 * edge + MIN_ROWS:
            grid, A = grid[edge:-edge], A[edge:-edge]
    dt = float(summary.get("record_dt") or (t_run[1] - t_run[0]))
    t_meas = np.arange(grid[0], grid[-1] + 1e-9 * dt, dt)
    Am = np.column_stack([np.interp(t_meas, grid, A[:, k]) for k in range(3)])
    min_overlap = int(MIN_OVERLAP * min(len(t_run), len(t_meas)))
    apart = int(round(APART_PERIODS / (cutoff or 0.5 / dt) / dt))
    R = np.eye(3)

    def magnitude(X):
        return np.linalg.norm(X, axis=1)[:, None]

    try:
        if rotate:
            offset, r = _align(t_run, magnitude(G), t_meas, magnitude(Am), min_overlap, apart)
            for _ in range(2):
                sel = (t_run >= grid[0] + offset) & (t_run <= grid[-1] + offset)
                M = np.column_stack([np.interp(t_run[sel] - offset, grid, A[:, k]) for k in range(3)])
                R = kabsch(M, G[sel])
                offset, r = _align(t_run, G, t_meas, Am @ R.T, min_overlap, apart)
        else:
            offset, r = _align(t_run, G, t_meas, Am, min_overlap, apart, ", or a sensor turned (try --rotate)")
    except InputError as exc:       # name the measured file
        raise InputError(exc.detail, path=meas.path) from None
    sel = (t_run >= grid[0] + offset) & (t_run <= grid[-1] + offset)
    M = np.column_stack([np.interp(t_run[sel] - offset, grid, A[:, k]) for k in range(3)]) @ R.T
    err = M - G[sel]
    sections = scenario_sections(scenario).get(name, [])

    def sections_of(s):
        return section_at(float(s), sections) if np.isfinite(s) else None

    t_ov, s_ov = t_run[sel], s_run[sel]
    out = {"run": str(Path(results).resolve()), "measured": meas.path, "columns": meas.columns,
           "train": name, "car": car, "offset_s": offset, "correlation": r,
           "rotation": rotation_words(R) if rotate else None,
           "filter": filt, "overlap_s": float(t_ov[-1] - t_ov[0]) if len(t_ov) else 0.0,
           "whole": _errors(err, t_ov, s_ov, sections_of), "sections": {}}
    labels = [sections_of(x) for x in s_ov]
    for label in dict.fromkeys(lb for lb in labels if lb is not None):
        m = np.array([lb == label for lb in labels])
        out["sections"][label] = {"samples": int(m.sum()), **_errors(err[m], t_ov[m], s_ov[m], sections_of)}
    if meas.extra_kind is not None:
        col = "z" if meas.extra_kind == "altitude" else "speed"
        run_x = np.asarray(ts[col], float)[rows][first:last + 1][sel]
        mx = np.interp(t_ov - offset, meas.t, meas.extra)
        e = mx - (run_x if col == "z" else np.abs(run_x))
        if col == "z":        # an altitude's datum is its own: compared up to a constant
            e = e - np.nanmean(e)
        out[meas.extra_kind] = {"rms": float(np.sqrt(np.nanmean(e * e))), "peak": float(e[np.nanargmax(np.abs(e))]),
                                "unit": "m" if col == "z" else "m/s"}
    step = max(1, int(math.ceil(len(t_ov) / MAX_SERIES)))
    series = {"t": t_ov[::step].tolist(), "run": G[sel][::step].tolist(), "measured": M[::step].tolist()}
    return Comparison(out, series)


def compare_lines(c: dict) -> list:
    """What ``trackrider compare`` prints."""
    lines = [f"compare: {Path(c['measured']).name} with {c['train']} car {c['car']}: offset {c['offset_s']:+.3f} s "
             f"(run time = measured time + offset), correlation {c['correlation']:.3f}, overlap {c['overlap_s']:.1f} s"]
    if c.get("rotation"):
        ax = ", ".join(f"{x:+.3f}" for x in c["rotation"]["axis"])
        lines.append(f"sensor rotation: {c['rotation']['angle_deg']:.2f}° about ({ax}) (forward, left, up)")
    lines.append(f"{'':22s}{'RMS error':>11s}{'peak error':>12s}   at")
    rows = [("whole ride", c["whole"])] + [(k, v) for k, v in c["sections"].items()]
    for label, table in rows:
        for axis in AXES:
            e = table[axis]
            where = f"t = {e['t']:.2f} s" + (f", s = {e['s']:.1f} m" if e.get("s") is not None else "")
            lines.append(f"{(label + ' ' + axis)[:22]:22s}{e['rms_g']:9.3f} g{e['peak_g']:+10.3f} g   {where}")
    for kind in ("altitude", "speed"):
        if c.get(kind):
            x = c[kind]
            lines.append(f"{kind}: RMS {x['rms']:.3f} {x['unit']}, peak {x['peak']:+.3f} {x['unit']}"
                         + (" (up to a constant datum)" if kind == "altitude" else ""))
    return lines


def plot_comparison(c: dict, out) -> Path:
    """Three panels (vertical, lateral, longitudinal): the run, the measured trace aligned, the error."""
    from matplotlib.figure import Figure

    from trackrider.outputs import atomic_file

    ser = c["series"]
    t = np.asarray(ser["t"])
    run, meas = np.asarray(ser["run"]), np.asarray(ser["measured"])
    fig = Figure(figsize=(10, 8), dpi=100, layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    for ax, k in zip(axes, (2, 1, 0)):
        ax.plot(t, run[:, k], color="#1f77b4", lw=1.2, label="run (filtered)")
        ax.plot(t, meas[:, k], color="#d62728", lw=1.0, ls="--", label="measured (filtered, aligned)")
        ax.plot(t, meas[:, k] - run[:, k], color="#555555", lw=0.8, label="measured − run")
        e = c["whole"][AXES[k]]
        ax.set_ylabel(f"{AXES[k]} G")
        ax.set_title(f"{AXES[k]}: RMS error {e['rms_g']:.3f} g, peak {e['peak_g']:+.3f} g", fontsize=10, loc="left")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("run time, s")
    fig.suptitle(f"{Path(c['measured']).name} against {c['train']} car {c['car']} (offset {c['offset_s']:+.3f} s)")
    out = Path(out)
    with atomic_file(out) as tmp:
        fig.savefig(tmp, format="png")
    return out
