"""The report's figures, drawn with matplotlib (Agg) and returned as inline SVG text.

Every function takes the runs to draw (the report's run first, then the one it
is compared with, dashed) and the ``Units`` to show. Long series are drawn as
they are (matplotlib's path simplification keeps the SVG small); the coloured
top view is rasterised inside its SVG (a PNG data URI) because thousands of
coloured segments would make the page heavy.
"""
from __future__ import annotations

import html
import io
import json
import math
import re

import numpy as np

from trackrider.physics.sections import colour as section_colour
from trackrider.report.data import RunData, TrainData, coupler_forces, intervals
from trackrider.report.units import Units

#: line colours of the front, middle and rear car
CAR_COLOURS = ("#1f77b4", "#2ca02c", "#d62728")
#: a section label's colour when its type is not in ``sections.SECTIONS`` (a hand-edited file)
LABEL_GREY = "#555555"
#: line style of the report's run and of the one it is compared with
RUN_STYLES = ("-", "--")

G_ROWS = (("g_vertical_filtered", "vertical G"), ("g_lateral_filtered", "lateral G"),
          ("g_longitudinal_filtered", "longitudinal G"))

def _figure(width, height):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def to_svg(fig, prefix: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), its ids prefixed to be unique in a page."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "trackrider",
                                "svg.image_inline": True}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # ids are hashes of the content: two figures could share one; keep each figure's own
    text = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = re.sub(r'url\(#([^)]+)\)', lambda m: f'url(#{prefix}-{m.group(1)})', text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', text)
    return text


def _breaks(s, *ys):
    """Copies of ``ys`` with NaN where ``s`` jumps (a lap wrapping, a gap): no line across."""
    s = np.asarray(s, dtype=float)
    if len(s) < 3:
        return ys
    ds = np.abs(np.diff(s))
    finite = ds[np.isfinite(ds)]
    if finite.size == 0:
        return ys
    limit = max(5.0, 3.0 * float(np.percentile(finite, 99)))
    jump = np.flatnonzero(ds > limit) + 1
    out = []
    for y in ys:
        y = np.array(y, dtype=float)
        y[jump] = np.nan
        out.append(y)
    return out


def _trains(runs, name):
    return [(k, run.train(name)) for k, run in enumerate(runs) if run.train(name) is not None]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)) or "x"


# --------------------------------------------------------------------------- zoom

def zoomable(fig, prefix: str, axes: list, label: str) -> str:
    """The figure as SVG in a ``<div class="zoom">`` the page's script zooms along x (``script.py``).

    ``axes`` share the x axis (``label`` names it). In each, the script stretches the lines without
    markers, the patches and the filled collections, moves the markers and texts (an annotation with
    the point it labels: its SVG x is in the spec), and replaces the x axis by ticks of its own; every
    such artist is named (its gid, else ``z<k>-<i>``) in the ``data-zoom`` spec with each panel's box
    in SVG units and the data range drawn."""
    from matplotlib.collections import PathCollection
    from matplotlib.text import Annotation

    panels = []
    for k, ax in enumerate(axes):
        ax.xaxis.set_gid(ax.xaxis.get_gid() or f"x{k}")
        stretch, move = [], []
        artists = list(ax.get_lines()) + list(ax.patches) + list(ax.collections) + list(ax.texts)
        for i, art in enumerate(artists):
            if art.get_gid() is None:
                art.set_gid(f"z{k}-{i}")
            marked = getattr(art, "get_marker", lambda: "None")() not in (None, "None", "", " ")
            if marked or isinstance(art, PathCollection) or art in ax.texts:
                # an annotation moves with the point it labels (its data x), a text with its own x
                move.append([f"{prefix}-{art.get_gid()}", float(art.xy[0]) if isinstance(art, Annotation) else None])
            else:
                stretch.append(f"{prefix}-{art.get_gid()}")
        panels.append((ax, stretch, move))
    svg = to_svg(fig, prefix)
    w_pt, h_pt = (float(v) * 72.0 for v in fig.get_size_inches())
    lim = [float(v) for v in axes[0].get_xlim()]
    spec = {"axes": [], "lim": lim, "label": label}
    for ax, stretch, move in panels:
        pos = ax.get_position()
        x0, x1 = pos.x0 * w_pt, pos.x1 * w_pt
        for m in move:        # the labelled point's x in SVG units
            if m[1] is not None:
                m[1] = round(x0 + (m[1] - lim[0]) / (lim[1] - lim[0]) * (x1 - x0), 3)
        spec["axes"].append({"box": [round(x0, 3), round((1.0 - pos.y1) * h_pt, 3), round(x1, 3),
                                     round((1.0 - pos.y0) * h_pt, 3)],
                             "axis": f"{prefix}-{ax.xaxis.get_gid()}", "stretch": stretch, "move": move})
    text = html.escape(json.dumps(spec, separators=(",", ":")), quote=True)
    return f'<div class="zoom" data-zoom="{text}">{svg}</div>'


# --------------------------------------------------------------------------- sections


def _shade_sections(ax, tr: TrainData, units: Units, labels=True):
    for sec in tr.sections:
        lo, hi = units.length(sec.s_from), units.length(sec.s_to)
        ax.axvspan(lo, hi, color=section_colour(sec.type), alpha=0.13, lw=0)
        if labels:
            ax.text(0.5 * (lo + hi), 1.0, sec.label if sec.label == sec.type else f"{sec.label}\n({sec.type})",
                    transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=7, color=section_colour(sec.type, LABEL_GREY),
                    clip_on=False)


def section_times(run: RunData, tr: TrainData) -> list[tuple[float, float, object]]:
    """When the lead car is on each section: ``[(t from, t to, Section), ...]`` in time order."""
    s = tr.series["s"][:, 0]
    out = []
    for sec in tr.sections:
        with np.errstate(invalid="ignore"):
            on = (s >= sec.s_from) & (s <= sec.s_to)
        for i0, i1 in intervals(on):
            out.append((float(run.t[i0]), float(run.t[i1]), sec))
    return sorted(out, key=lambda x: x[0])


def _shade_times(ax, run: RunData, tr: TrainData, labels=True):
    """Shade the stretches of time the lead car spends on each section; name each section once."""
    named = set()
    span = float(run.t[-1] - run.t[0]) if len(run.t) > 1 else 1.0
    for t0, t1, sec in section_times(run, tr):
        colour = section_colour(sec.type, "#999999")
        ax.axvspan(t0, t1, color=colour, alpha=0.13, lw=0)
        if labels and sec.label not in named and (t1 - t0) > 0.004 * span:
            named.add(sec.label)
            ax.text(0.5 * (t0 + t1), 1.0, sec.label, transform=ax.get_xaxis_transform(), ha="center",
                    va="bottom", fontsize=7, color=colour, clip_on=False)


# --------------------------------------------------------------------------- height profile


def height_profile(runs: list[RunData], name: str, units: Units) -> str:
    """z(s) of the train's track with its sections shaded and labelled; the lead car's speed along it."""
    fig = _figure(11, 3.8)
    ax = fig.add_subplot()
    ax2 = ax.twinx()
    main = runs[0].train(name)
    _shade_sections(ax, main, units)
    handles = []
    for k, tr in _trains(runs, name):
        tag = f" ({runs[k].name})" if len(runs) > 1 else ""
        if tr.track_s is not None:
            h, = ax.plot(units.length(tr.track_s), units.length(tr.track_xyz[:, 2]), color="0.25", lw=1.6,
                         ls=RUN_STYLES[k], label=f"height of the track{tag}" if not tr.track_from_path
                         else f"height of the lead car's path{tag}")
            handles.append(h)
        s = tr.series["s"][:, 0]
        v = tr.series["speed"][:, 0]
        v, = _breaks(s, v)
        h, = ax2.plot(units.length(s), units.speed(v), color="#dd8452", lw=1.2, ls=RUN_STYLES[k],
                      label=f"speed of the lead car{tag}")
        handles.append(h)
    ax.set_xlabel(f"track position s ({units.length_unit})")
    ax.set_ylabel(f"height z ({units.length_unit})")
    ax2.set_ylabel(f"speed ({units.speed_unit})", color="#a0522d")
    lo, hi = ax2.get_ylim()
    ax2.set_ylim(min(lo, 0.0), max(hi, 0.0) * 1.1)   # from standstill: small wobbles stay small
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.85)
    return to_svg(fig, f"height-{_slug(name)}")


# --------------------------------------------------------------------------- the ride's charts


def _value_at(tr: TrainData, run: RunData, col: str, at: dict | None):
    """The series ``col`` of car ``at['car']`` at time ``at['t']`` (signed), or None."""
    if not at or at.get("t") is None or at.get("car") not in tr.cars or col not in tr.series:
        return None
    i = int(np.argmin(np.abs(run.t - float(at["t"]))))
    return float(tr.series[col][i, tr.car_index(at["car"])])


def roll_rate(tr: TrainData) -> np.ndarray | None:
    """Each car's rate of roll about its own forward axis, °/s, ``(m, n)``: the angular velocity
    (``wx, wy, wz``, world axes) along the car's forward axis ``R(q) e_x``."""
    se = tr.series
    if not all(c in se for c in ("wx", "wy", "wz", "qw", "qx", "qy", "qz")):
        return None
    qw, qx, qy, qz = se["qw"], se["qx"], se["qy"], se["qz"]
    fx = 1.0 - 2.0 * (qy * qy + qz * qz)
    fy = 2.0 * (qx * qy + qw * qz)
    fz = 2.0 * (qx * qz - qw * qy)
    return np.degrees(se["wx"] * fx + se["wy"] * fy + se["wz"] * fz)


def jerk(run: RunData, tr: TrainData, col: str, j: int) -> np.ndarray | None:
    """Rate of change of car ``j``'s filtered G ``col``, g/s (central differences in time)."""
    if col not in tr.series or len(run.t) < 3:
        return None
    return np.gradient(tr.series[col][:, j], run.t)


#: the jerk panel: (column, label, colour)
JERK_ROWS = (("g_vertical_filtered", "vertical", "#333333"), ("g_lateral_filtered", "lateral", "#9467bd"),
             ("g_longitudinal_filtered", "longitudinal", "#8c564b"))


def ride_charts(runs: list[RunData], name: str, units: Units, against: str = "t") -> str:
    """Filtered vertical, lateral and longitudinal G of the front, middle and rear car, their roll
    rate and the front car's jerk, against time (``against="t"``) or track position (``"s"``),
    one panel each, sections shaded; the table's extremes marked; a force-designed track's design G
    dashed over the ride's. Zoomable (``zoomable``)."""
    fig = _figure(11, 10.6)
    axes = fig.subplots(5, 1, sharex=True)
    main = runs[0].train(name)
    by_time = against == "t"
    marks = {"g_vertical_filtered": (("max_g_vertical", "^"), ("min_g_vertical", "v")),
             "g_lateral_filtered": (("max_abs_g_lateral", "D"),),
             "g_longitudinal_filtered": (("max_abs_g_longitudinal", "D"),)}

    def xs(run, tr, j):
        return run.t if by_time else units.length(tr.series["s"][:, j])

    def ys(tr, j, y):
        return y if by_time else _breaks(tr.series["s"][:, j], y)[0]

    for r, (col, label) in enumerate(G_ROWS):
        ax = axes[r]
        if by_time:
            _shade_times(ax, runs[0], main, labels=(r == 0))
        else:
            _shade_sections(ax, main, units, labels=(r == 0))
        for k, tr in _trains(runs, name):
            if col not in tr.series:
                continue
            for c, car in enumerate(tr.front_middle_rear()):
                j = tr.car_index(car)
                tag = f", {runs[k].name}" if len(runs) > 1 else ""
                ax.plot(xs(runs[k], tr, j), ys(tr, j, tr.series[col][:, j]), lw=1.0, color=CAR_COLOURS[c],
                        ls=RUN_STYLES[k], label=f"car {car}{tag}")
            if k == 0 and tr.design is not None and col in ("g_vertical_filtered", "g_lateral_filtered"):
                _design_line(ax, runs[0], tr, col, units, by_time)
            at = tr.summary.get("at") or {}
            for key, marker in marks[col]:
                a = at.get(key)
                value = _value_at(tr, runs[k], col, a)
                where = a.get("t" if by_time else "s") if a else None
                if value is None or where is None:
                    continue
                x = float(where) if by_time else units.length(float(where))
                ax.plot([x], [value], marker=marker, ms=8, color="k", mfc="#ffd700" if k == 0 else "white",
                        ls="none", zorder=5)
                ax.annotate(f"{value:+.2f} g (car {a['car']})", (x, value), textcoords="offset points",
                            xytext=(6, 6 if marker != "v" else -12), fontsize=8)
        if col == "g_vertical_filtered":
            ax.axhline(1.0, color="0.6", lw=0.6, ls="--")
            ax.axhline(0.0, color="#c44e52", lw=0.8, ls=":")
        else:
            ax.axhline(0.0, color="0.6", lw=0.6, ls="--")
        ax.set_ylabel(f"{label} (g)")
    ax = axes[3]
    for k, tr in _trains(runs, name):
        rate = roll_rate(tr)
        if rate is None:
            continue
        for c, car in enumerate(tr.front_middle_rear()):
            j = tr.car_index(car)
            ax.plot(xs(runs[k], tr, j), ys(tr, j, rate[:, j]), lw=1.0, color=CAR_COLOURS[c], ls=RUN_STYLES[k])
    ax.axhline(0.0, color="0.6", lw=0.6, ls="--")
    ax.set_ylabel("roll rate (°/s)")
    ax = axes[4]
    for k, tr in _trains(runs, name):
        j = tr.car_index(tr.cars[0])
        for col, label, colour in JERK_ROWS:
            dg = jerk(runs[k], tr, col, j)
            if dg is not None:
                ax.plot(xs(runs[k], tr, j), ys(tr, j, dg), lw=0.9, color=colour, ls=RUN_STYLES[k],
                        label=f"{label}" + (f", {runs[k].name}" if len(runs) > 1 else ""))
    ax.axhline(0.0, color="0.6", lw=0.6, ls="--")
    ax.set_ylabel(f"jerk, car {main.cars[0]} (g/s)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower left", fontsize=8, ncol=3 * len(runs), framealpha=0.85)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(loc="lower left", fontsize=8, ncol=4 * len(runs), framealpha=0.85)
    xlabel = "time (s)" if by_time else f"track position s ({units.length_unit})"
    axes[-1].set_xlabel(xlabel)
    fig.supxlabel("filtered G at the rider, car axes: vertical + into the seat (1 g at rest, < 0 airtime); "
                  "lateral + to the rider's left; longitudinal + forwards (speeding up)\nroll rate: about the "
                  "car's forward axis, + rolling right; jerk: the change of G a second", fontsize=8, color="0.35")
    return zoomable(fig, f"ride-{against}-{_slug(name)}", list(axes), xlabel)


def _design_line(ax, run: RunData, tr: TrainData, col: str, units: Units, by_time: bool) -> None:
    """The design's normal (vertical) or lateral G along the rail, dashed black; against time, placed
    where the front car passed each point."""
    d = tr.design
    g = d["normal_g"] if col == "g_vertical_filtered" else d["lateral_g"]
    if not by_time:
        ax.plot(units.length(d["s"]), g, color="k", lw=1.1, ls=(0, (4, 2)), label="design", zorder=4)
        return
    s = tr.series["s"][:, 0]
    ok = np.isfinite(s)
    if ok.sum() < 2 or not np.all(np.diff(s[ok]) >= 0):
        return          # the car did not run forwards throughout: no single time for each point
    inside = (d["s"] >= s[ok][0]) & (d["s"] <= s[ok][-1])
    ax.plot(np.interp(d["s"][inside], s[ok], run.t[ok]), g[inside], color="k", lw=1.1, ls=(0, (4, 2)),
            label="design", zorder=4)


def gg_diagram(runs: list[RunData], name: str, units: Units) -> str:
    """Vertical against lateral filtered G of the front, middle and rear car, on fixed symmetric axes:
    lateral ±2 g, vertical 1 ± 3 g (each widened in whole g when the ride goes beyond)."""
    fig = _figure(7.0, 5.6)
    ax = fig.add_subplot()
    lat_lim, vert_lim = 2.0, 3.0
    for k, tr in _trains(runs, name):
        if "g_vertical_filtered" not in tr.series:
            continue
        for c, car in enumerate(tr.front_middle_rear()):
            j = tr.car_index(car)
            tag = f", {runs[k].name}" if len(runs) > 1 else ""
            gl, gv = tr.series["g_lateral_filtered"][:, j], tr.series["g_vertical_filtered"][:, j]
            ax.plot(gl, gv, lw=0.8, color=CAR_COLOURS[c], ls=RUN_STYLES[k], alpha=0.85, label=f"car {car}{tag}")
            with np.errstate(invalid="ignore"):
                if np.isfinite(gl).any():
                    lat_lim = max(lat_lim, math.ceil(float(np.nanmax(np.abs(gl))) + 0.05))
                if np.isfinite(gv).any():
                    vert_lim = max(vert_lim, math.ceil(float(np.nanmax(np.abs(gv - 1.0))) + 0.05))
    ax.axhline(0.0, color="#c44e52", lw=0.8, ls=":")
    ax.axhline(1.0, color="0.6", lw=0.6, ls="--")
    ax.axvline(0.0, color="0.6", lw=0.6, ls="--")
    ax.set_xlim(-lat_lim, lat_lim)
    ax.set_ylim(1.0 - vert_lim, 1.0 + vert_lim)
    ax.set_xlabel("lateral G (g), + to the rider's left")
    ax.set_ylabel("vertical G (g), + into the seat")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper right", framealpha=0.85)
    return to_svg(fig, f"gg-{_slug(name)}")


#: the front and rear rider rows' filtered G a report draws (``rider_rows = 2``)
ROW_SERIES = {(row, axis): f"g_{axis}_{row}_filtered" for row in ("front", "rear") for axis in ("vertical", "lateral")}


def rider_rows(runs: list[RunData], name: str, units: Units) -> str | None:
    """Cars with ``rider_rows = 2``: the filtered vertical and lateral G of the lead car's front row
    (solid) and rear row (dashed) against time, its rider point thin grey; None without rows (the
    report's run only: a compared run's rows are in its own report)."""
    run, tr = runs[0], runs[0].train(name)
    front = None if tr is None else tr.series.get(ROW_SERIES["front", "vertical"])
    if front is None or not np.isfinite(front[:, 0]).any():
        return None
    fig = _figure(11, 5.2)
    axes = fig.subplots(2, 1, sharex=True)
    car = tr.cars[0]
    for ax, axis in zip(axes, ("vertical", "lateral")):
        _shade_times(ax, run, tr, labels=axis == "vertical")
        ax.plot(run.t, tr.series[f"g_{axis}_filtered"][:, 0], lw=0.7, color="0.55", label="rider point")
        for row, style, colour in (("front", "-", "#1f77b4"), ("rear", "--", "#d62728")):
            ax.plot(run.t, tr.series[ROW_SERIES[row, axis]][:, 0], lw=1.0, ls=style, color=colour,
                    label={"front": "front row", "rear": "back row"}[row])
        ax.axhline(1.0 if axis == "vertical" else 0.0, color="0.6", lw=0.6, ls="--")
        ax.set_ylabel(f"{axis} G (g)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="lower left", fontsize=8, ncol=3, framealpha=0.85)
    axes[0].set_title(f"car {car}: front row and back row", fontsize=9)
    axes[-1].set_xlabel("time (s)")
    return zoomable(fig, f"rows-{_slug(name)}", list(axes), "time (s)")


# --------------------------------------------------------------------------- layout


def _principal_direction(xy: np.ndarray) -> np.ndarray:
    """The horizontal direction along which the layout spreads most (unit, (2,)), pointing from its
    start onwards."""
    ok = np.all(np.isfinite(xy), axis=1)
    p = xy[ok] - xy[ok].mean(axis=0)
    if len(p) < 2 or not np.any(p):
        return np.array([1.0, 0.0])
    _, _, vt = np.linalg.svd(p, full_matrices=False)
    e = vt[0] / np.linalg.norm(vt[0])
    if np.dot(xy[ok][-1] - xy[ok][0], e) < 0 and np.dot(xy[ok][len(p) // 2] - xy[ok][0], e) < 0:
        e = -e
    return e


def _layout_rows(xyz: np.ndarray, views: tuple[str, ...]) -> list[float]:
    """Heights (in) of the side elevation and top view rows, in proportion to what they show (equal
    axes on an 11 in wide figure), 1.6 to 5 in each."""
    e = _principal_direction(xyz[:, :2])
    h = xyz[:, :2] @ e
    out = []
    for view in views:
        if view == "side":
            w, v = np.ptp(h), np.ptp(xyz[:, 2])
        else:
            w, v = np.ptp(xyz[:, 0]), np.ptp(xyz[:, 1])
        out.append(float(np.clip(9.6 * (v + 0.08 * max(w, v)) / max(w * 1.08, 1e-9), 1.6, 5.0)))
    return out


def draw_layout(fig, xyz: np.ndarray, units: Units, sections=(), track_s=None, views=("side", "top"),
                colour=None):
    """Side elevation (height against distance along the layout's longest horizontal direction) and
    top view of the points ``xyz`` (m), equal axes, sections named; ``colour`` (optional): a
    callable ``colour(ax_top)`` drawing over the top view. Returns the axes by view."""
    e = _principal_direction(xyz[:, :2])
    heading = math.degrees(math.atan2(e[1], e[0])) % 360.0
    axes = fig.subplots(len(views), 1, squeeze=False, gridspec_kw={"height_ratios": _layout_rows(xyz, views)})[:, 0]
    out = {}
    h0 = float(np.nanmin(xyz[:, :2] @ e))
    for ax, view in zip(axes, views):
        if view == "side":
            x, y = units.length(xyz[:, :2] @ e - h0), units.length(xyz[:, 2])
            ax.set_xlabel(f"distance along {heading:.0f}° from +x ({units.length_unit})")
            ax.set_ylabel(f"height z ({units.length_unit})")
            ax.set_title("side elevation", fontsize=9, loc="left")
        else:
            x, y = units.length(xyz[:, 0]), units.length(xyz[:, 1])
            ax.set_xlabel(f"x ({units.length_unit})")
            ax.set_ylabel(f"y ({units.length_unit})")
            ax.set_title("top view", fontsize=9, loc="left")
        ax.plot(x, y, color="0.35" if colour is None or view != "top" else "0.82",
                lw=1.4 if colour is None or view != "top" else 4, solid_capstyle="round", zorder=1)
        ax.plot([x[0]], [y[0]], marker="s", color="k", ms=5, zorder=4)
        ax.annotate("start", (x[0], y[0]), textcoords="offset points", xytext=(5, 5), fontsize=8)
        if track_s is not None:
            for sec in sections:
                m = (track_s >= sec.s_from) & (track_s <= sec.s_to)
                if not m.any():
                    continue
                c = section_colour(sec.type, LABEL_GREY)
                ax.plot(x[m], y[m], color=c, lw=3.0, alpha=0.55, zorder=2, solid_capstyle="butt")
                i = int(np.flatnonzero(m)[m.sum() // 2])
                ax.annotate(sec.label, (x[i], y[i]), textcoords="offset points", xytext=(6, -11), fontsize=8,
                            color=c)
        if view == "top" and colour is not None:
            colour(ax)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(True, alpha=0.3)
        out[view] = ax
    return out


def layout_views(runs: list[RunData], name: str, units: Units, views=("side", "top")) -> str | None:
    """The train's track seen from the side and from above, equal axes; the top view coloured by the
    front car's vertical G (centred on 1 g), circles where a car had airtime."""
    from matplotlib.colors import TwoSlopeNorm

    tr = runs[0].train(name)
    if tr is None or tr.track_xyz is None:
        return None
    xyz = tr.track_xyz
    rows = _layout_rows(xyz, views)
    fig = _figure(11, sum(rows) + 0.9 * len(views))
    drawn = {}

    def colour(ax):
        if "g_vertical_filtered" not in tr.series:
            return
        g = tr.series["g_vertical_filtered"][:, 0]
        finite = g[np.isfinite(g)]
        lo = float(min(finite.min(), 0.0)) if finite.size else -1.0
        hi = float(max(finite.max(), 2.0)) if finite.size else 3.0
        norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.0), vmax=max(hi, 1.5))
        drawn["line"] = _coloured_path(ax, units.length(tr.series["x"][:, 0]), units.length(tr.series["y"][:, 0]),
                                       g, norm)
        air_x, air_y = [], []
        for jj in range(len(tr.cars)):
            a = tr.series["g_vertical_filtered"][:, jj] < 0.0
            air_x.append(units.length(tr.series["x"][a, jj]))
            air_y.append(units.length(tr.series["y"][a, jj]))
        ax_ = np.concatenate(air_x)
        if ax_.size:
            ax.plot(ax_, np.concatenate(air_y), ls="none", marker="o", ms=5, mfc="none", mec="k", mew=0.8,
                    zorder=3, label="airtime (a car below 0 g)")
            ax.legend(loc="best", fontsize=8, framealpha=0.85)

    axes = draw_layout(fig, xyz, units, tr.sections, tr.track_s, views,
                       colour=None if tr.wheels == "railway" else colour)
    if drawn.get("line") is not None:
        fig.colorbar(drawn["line"], ax=axes["top"], label="vertical G, front car (g)", shrink=0.9, aspect=12)
    return to_svg(fig, f"layout-{_slug(name)}")


def network_plan(run: RunData, units: Units) -> str | None:
    """The track network from above (a plan): every track named at its middle, an arrow at its start
    pointing along +s; each switch a diamond, named, its branches' first 30 m drawn thick — solid the
    branch set at the start, dashed the others; each connection a circle. Equal axes, unless the
    layout is more than four times longer in x for its width in y than the figure (a line with a
    passing loop): then y is stretched, as its axis says."""
    plan = run.network
    if not plan:
        return None
    allp = np.concatenate([p for _n, p in plan["tracks"]])
    x, y = units.length(allp[:, 0]), units.length(allp[:, 1])
    w_in, h_in = 11.0, 4.6
    span_x, span_y = max(float(np.ptp(x)), 1e-6), max(float(np.ptp(y)), 1e-6)
    stretch = (span_x / w_in) / (span_y / h_in) if span_y > 0 else 1.0
    equal = stretch < 4.0
    fig = _figure(w_in, h_in + 0.9)
    ax = fig.subplots()
    colours = matplotlib_colours()
    for k, (name, p) in enumerate(plan["tracks"]):
        px, py = units.length(p[:, 0]), units.length(p[:, 1])
        c = colours[k % len(colours)]
        ax.plot(px, py, color=c, lw=2.0, zorder=2)
        mid = len(px) // 2
        ax.annotate(name, (px[mid], py[mid]), xytext=(0, 7), textcoords="offset points", ha="center",
                    fontsize=9, color=c, fontweight="bold", zorder=5)
        if len(px) > 2:
            j = min(max(len(px) // 20, 1), len(px) - 1)
            ax.annotate("", (px[j], py[j]), xytext=(px[0], py[0]),
                        arrowprops=dict(arrowstyle="-|>", color=c, lw=1.2), zorder=3)
    for sw in plan["switches"]:
        for word, p in sw["branches"]:
            set_now = word == sw["position"]
            ax.plot(units.length(p[:, 0]), units.length(p[:, 1]), color="k", lw=4.0 if set_now else 1.6,
                    ls="-" if set_now else "--", zorder=4, solid_capstyle="butt")
        px, py = units.length(sw["point"][0]), units.length(sw["point"][1])
        ax.plot([px], [py], marker="D", ms=8, mfc="gold", mec="k", zorder=6, ls="none")
        throws = len(sw["throws"])
        ax.annotate(f"{sw['name']}\nset: {sw['position']}" + (f" → {sw['end']} ({throws} throw{'s' if throws != 1 else ''})"
                                                             if throws else ""),
                    (px, py), xytext=(0, -12), textcoords="offset points", ha="center", va="top", fontsize=8,
                    zorder=6, bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="0.6", alpha=0.85))
    for c in plan["connections"]:
        px, py = units.length(c["point"][0]), units.length(c["point"][1])
        ax.plot([px], [py], marker="o", ms=7, mfc="white", mec="k", zorder=6, ls="none")
        ax.annotate(f"{c['a']} – {c['b']}", (px, py), xytext=(0, 9), textcoords="offset points", ha="center",
                    fontsize=7, zorder=6)
    ax.set_xlabel(f"x ({units.length_unit})")
    if equal:
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_ylabel(f"y ({units.length_unit})")
    else:
        pad = 0.25 * span_y + 1e-6
        ax.set_ylim(float(y.min()) - pad, float(y.max()) + pad)
        ax.set_ylabel(f"y ({units.length_unit}), stretched: not to scale")
    ax.grid(True, alpha=0.3)
    ax.plot([], [], color="k", lw=4.0, label="branch set at the start")
    ax.plot([], [], color="k", lw=1.6, ls="--", label="other branches")
    ax.plot([], [], marker="D", ms=8, mfc="gold", mec="k", ls="none", label="switch")
    if plan["connections"]:
        ax.plot([], [], marker="o", ms=7, mfc="white", mec="k", ls="none", label="connection")
    ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return to_svg(fig, "network")


def matplotlib_colours() -> list:
    """The tracks' colours in the plan: matplotlib's default cycle."""
    import matplotlib

    return list(matplotlib.rcParams["axes.prop_cycle"].by_key()["color"])


def _coloured_path(ax, x, y, values, norm):
    """The path (x, y) coloured by ``values``, rasterised (thousands of segments would make the SVG heavy)."""
    from matplotlib.collections import LineCollection

    pts = np.stack([x, y], axis=1)
    segs = np.stack([pts[:-1], pts[1:]], axis=1)
    vm = 0.5 * (values[:-1] + values[1:])
    ok = np.all(np.isfinite(segs), axis=(1, 2)) & np.isfinite(vm)
    line = LineCollection(segs[ok], cmap="turbo", norm=norm, linewidths=3.0, zorder=2, rasterized=True)
    line.set_array(vm[ok])
    ax.add_collection(line)
    return line


def plot_layout(track, out_png, title: str = "", units: str = "metric"):
    """``trackrider curve … --plot FILE.png``: a track's side elevation and top view (equal axes),
    with its height range, length and biggest drop in the title."""
    from trackrider.curves.stats import layout_figures

    u = Units(units)
    figs = layout_figures(track)
    s = np.linspace(0.0, track.length, int(min(20000, max(200, math.ceil(track.length / 0.5)))) + 1)
    xyz = np.asarray(track.frames(s).position, dtype=float)
    rows = _layout_rows(xyz, ("side", "top"))
    fig = _figure(11, sum(rows) + 2.0)
    draw_layout(fig, xyz, u)
    drop = figs["biggest_drop"]
    fig.suptitle(f"{title}\nlength {figs['length']:.1f} m, height {figs['z_min']:.1f} … {figs['z_max']:.1f} m"
                 + (f", biggest drop {drop['height']:.1f} m at up to {drop['steepest_deg']:.0f}°" if drop else "")
                 + f", {len(figs['inversions'])} inversion{'s' if len(figs['inversions']) != 1 else ''}",
                 fontsize=10)
    fig.savefig(out_png, format="png", dpi=100)
    return out_png


# --------------------------------------------------------------------------- railway


def coupler_charts(runs: list[RunData], name: str, units: Units) -> str | None:
    """Railway trains: the force in the front, middle and rear coupler and the train's largest pull
    and push at each instant, against time (zoomable); None for a single car."""
    pairs = [(k, tr, coupler_forces(tr)) for k, tr in _trains(runs, name)]
    pairs = [(k, tr, f) for k, tr, f in pairs if f is not None]
    if not pairs:
        return None
    fig = _figure(11, 4.2)
    ax = fig.add_subplot()
    for k, tr, forces in pairs:
        n = forces.shape[1]
        tag = f", {runs[k].name}" if len(runs) > 1 else ""
        with np.errstate(all="ignore"):
            ax.fill_between(runs[k].t, np.nanmin(forces, axis=1) / 1e3, np.nanmax(forces, axis=1) / 1e3,
                            color="0.5", alpha=0.18 if k == 0 else 0.08, lw=0,
                            label=f"range along the train{tag}")
        for c, i in enumerate(dict.fromkeys([0, (n - 1) // 2, n - 1])):
            ax.plot(runs[k].t, forces[:, i] / 1e3, lw=1.0, color=CAR_COLOURS[c], ls=RUN_STYLES[k],
                    label=f"coupler {i + 1}–{i + 2}{tag}")
    ax.axhline(0.0, color="0.6", lw=0.6, ls="--")
    ax.set_ylabel("coupler force (kN), + pull")
    ax.set_xlabel("time (s)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8, ncol=4, framealpha=0.85)
    return zoomable(fig, f"couplers-{_slug(name)}", [ax], "time (s)")


def driving(run: RunData, name: str, units: Units) -> str | None:
    """A railway train driven by its driver (docs/physics.md §10): the lead car's speed, the
    locomotives' notch and the brake-cylinder pressure along the train (its mean) against the lead
    car's position, each driver's command marked where it was taken; None without locomotives or
    air brakes."""
    tr = run.train(name)
    if tr is None:
        return None
    se = tr.series
    notch = se.get("notch")
    cyl = se.get("brake_pressure")
    has = [a is not None and np.isfinite(a).any() for a in (notch, cyl)]
    if not any(has):
        return None
    s = units.length(se["s"][:, 0])
    fig = _figure(11, 3.8)
    ax = fig.add_subplot()
    ax2 = ax.twinx()
    handles = [ax.plot(s, units.speed(se["speed"][:, 0]), color="#dd8452", lw=1.2, label="speed of the lead car")[0]]
    with np.errstate(all="ignore"):
        if has[0]:
            handles.append(ax2.step(s, np.nanmax(notch, axis=1), where="post", color="#4c72b0", lw=1.2,
                                    label="notch (the locomotives' highest)")[0])
        if has[1]:
            handles.append(ax2.plot(s, np.nanmean(cyl, axis=1), color="#c44e52", lw=1.2,
                                    label="brake-cylinder pressure, bar (mean along the train)")[0])
    for ev in run.summary.get("events") or []:
        if ev.get("kind") == "driver" and ev.get("train") == name and ev.get("s") is not None:
            x = units.length(float(ev["s"]))
            ax.axvline(x, color="0.4", lw=0.8, ls=":")
            ax.annotate(str(ev.get("command", "")), (x, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                        va="top", ha="right", fontsize=7, color="0.3")
    ax.set_xlabel(f"position of the lead car s ({units.length_unit})")
    ax.set_ylabel(f"speed ({units.speed_unit})", color="#a0522d")
    ax2.set_ylabel("notch; bar")
    ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]))
    ax2.set_ylim(bottom=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.85)
    return to_svg(fig, f"driving-{_slug(name)}")


def coupler_map(run: RunData, name: str, units: Units) -> str | None:
    """Railway trains: coupler force along the train (one row per coupler) against time, a heat map
    (red pull, blue push, centred on 0); None for a single car."""
    from matplotlib.colors import TwoSlopeNorm

    tr = run.train(name)
    forces = coupler_forces(tr) if tr is not None else None
    if forces is None or len(run.t) < 2:
        return None
    kn = forces / 1e3
    finite = kn[np.isfinite(kn)]
    lim = float(max(np.max(np.abs(finite)) if finite.size else 1.0, 1e-3))
    fig = _figure(11, 3.6)
    ax = fig.add_subplot()
    img = ax.imshow(kn.T, aspect="auto", origin="lower", cmap="RdBu_r", interpolation="nearest",
                    norm=TwoSlopeNorm(vcenter=0.0, vmin=-lim, vmax=lim),
                    extent=(float(run.t[0]), float(run.t[-1]), 0.5, kn.shape[1] + 0.5))
    img.set_rasterized(True)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("coupler (1: behind the lead car)")
    fig.colorbar(img, ax=ax, label="coupler force (kN), + pull", shrink=0.9)
    return to_svg(fig, f"coupler-map-{_slug(name)}")


def along_the_train(runs: list[RunData], name: str, units: Units) -> str | None:
    """Railway trains: per car the largest and smallest wheel load, the smallest inner-rail load, the
    largest L/V and |lateral load|; per coupler the largest pull and push (extremes over the run).
    Panels without data (a single car has no coupler, L/V undefined throughout) are left out."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # a car whose L/V is never defined: all NaN
        return _along_the_train(runs, name, units)


def _along_the_train(runs, name, units):
    pairs = _trains(runs, name)
    if not pairs:
        return None
    has = {"lv": any("l_over_v" in tr.series and np.isfinite(tr.series["l_over_v"]).any() for _, tr in pairs),
           "lat": any("lateral_load" in tr.series for _, tr in pairs),
           "coupler": any(coupler_forces(tr) is not None for _, tr in pairs)}
    panels = ["wheel"] + [p for p in ("lv", "lat", "coupler") if has[p]]
    fig = _figure(11, 2.4 * len(panels) + 0.6)
    axes = dict(zip(panels, fig.subplots(len(panels), 1, squeeze=False)[:, 0]))
    for k, tr in pairs:
        cars = np.asarray(tr.cars)
        tag = f" ({runs[k].name})" if len(runs) > 1 else ""
        se = tr.series
        mfc = None if k == 0 else "white"
        style = {"ls": RUN_STYLES[k], "mfc": mfc, "ms": 4, "lw": 0.8}
        with np.errstate(all="ignore"):
            ax = axes["wheel"]
            if "wheel_load" in se:
                ax.plot(cars, np.nanmax(se["wheel_load"], axis=0) / 1e3, marker="^", color="#1f77b4",
                        label=f"largest wheel load{tag}", **style)
                ax.plot(cars, np.nanmin(se["wheel_load"], axis=0) / 1e3, marker="v", color="#2ca02c",
                        label=f"smallest wheel load{tag}", **style)
            if "wheel_load_inner" in se:
                ax.plot(cars, np.nanmin(se["wheel_load_inner"], axis=0) / 1e3, marker="o", color="#d62728",
                        label=f"smallest inner-rail load{tag}", **style)
            if "lv" in axes and "l_over_v" in se:
                axes["lv"].plot(cars, np.nanmax(se["l_over_v"], axis=0), marker="o", color="#9467bd",
                                label=f"largest L/V{tag}", **style)
            if "lat" in axes and "lateral_load" in se:
                axes["lat"].plot(cars, np.nanmax(np.abs(se["lateral_load"]), axis=0) / 1e3, marker="o",
                                 color="#8c564b", label=f"largest |lateral load|{tag}", **style)
        forces = coupler_forces(tr)
        if forces is not None and "coupler" in axes:
            idx = np.arange(1, len(tr.cars)) + 0.5
            axes["coupler"].plot(idx, np.nanmax(forces, axis=0) / 1e3, marker="^", color="#1f77b4",
                                 label=f"largest pull (tension){tag}", **style)
            axes["coupler"].plot(idx, np.nanmin(forces, axis=0) / 1e3, marker="v", color="#d62728",
                                 label=f"largest push (compression, < 0){tag}", **style)
    titles = {"wheel": ("kN", "wheel loads per car (support force; inner rail: the less loaded one)"),
              "lv": ("L/V", "L/V: sideways (flange) force over wheel load, per car"),
              "lat": ("kN", "largest sideways (flange) force per car"),
              "coupler": ("kN", "coupler force between car n and n + 1 (from the cars' motion along the track)")}
    for key, ax in axes.items():
        ylabel, title = titles[key]
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.axhline(0.0, color="#c44e52" if key == "wheel" else "0.6", lw=0.7, ls=":" if key == "wheel" else "--")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="best", framealpha=0.85)
    list(axes.values())[-1].set_xlabel("car number (couplers between them), 1 = lead car")
    return to_svg(fig, f"train-{_slug(name)}")


# --------------------------------------------------------------------------- sweep


def outcome_map(rows: list[dict], axes: list[str], scales: dict) -> tuple[str | None, str]:
    """A sweep's outcome over each pair of its numeric axes: at each pair of values, the share of the
    runs (over the other axes) that valleyed, stalled or failed — a green dot none, a red cross all,
    an orange disc some, with the count — and the boundary where it is one half (a contour of the
    share, linear between the points; log axes in log10). Returns the SVG (None with fewer than two
    numeric axes) and a sentence of what it found."""
    from trackrider.report.page import sweep_outcome

    numeric = [a for a in axes if all(isinstance(r.get(a), (int, float)) and not isinstance(r.get(a), bool)
                                      for r in rows)]
    pairs = [(a, b) for i, a in enumerate(numeric) for b in numeric[i + 1:]]
    if not pairs or not rows:
        return None, ""
    bad = np.array([sweep_outcome(r) != "completed" for r in rows], dtype=float)
    fig = _figure(min(4.6 * len(pairs), 13.8), 4.4 * math.ceil(len(pairs) / 3))
    grid = fig.subplots(math.ceil(len(pairs) / 3), min(len(pairs), 3), squeeze=False)
    drawn = 0
    for n, (a, b) in enumerate(pairs):
        ax = grid[n // 3][n % 3]

        def coord(key):
            v = np.array([float(r[key]) for r in rows])
            return (np.log10(v), f"log10 {key}") if scales.get(key) == "log" and np.all(v > 0) else (v, key)

        (x, xl), (y, yl) = coord(a), coord(b)
        cells: dict = {}
        for xi, yi, fail in zip(x, y, bad):
            cells.setdefault((xi, yi), []).append(fail)
        cx = np.array([k[0] for k in cells])
        cy = np.array([k[1] for k in cells])
        share = np.array([np.mean(v) for v in cells.values()])
        count = [len(v) for v in cells.values()]
        ok, all_bad = share == 0.0, share == 1.0
        some = ~ok & ~all_bad
        ax.scatter(cx[ok], cy[ok], s=36, color="#2e7d32", label="every run passed", zorder=3)
        ax.scatter(cx[all_bad], cy[all_bad], s=60, color="#c62828", marker="x", label="every run valleyed or failed",
                   zorder=3)
        if some.any():
            ax.scatter(cx[some], cy[some], s=60, color="#ef6c00", label="some did", zorder=3)
        for xi, yi, f, c in zip(cx, cy, share, count):
            if c > 1:
                ax.annotate(f"{int(round(f * c))}/{c}", (xi, yi), textcoords="offset points", xytext=(5, 4),
                            fontsize=7, color="0.3")
        if 0.0 < share.min() < 1.0 or (share.min() == 0.0 and share.max() > 0.0):
            try:
                from matplotlib.tri import Triangulation

                span_x, span_y = np.ptp(cx) or 1.0, np.ptp(cy) or 1.0
                tri = Triangulation(cx / span_x, cy / span_y)      # triangles in comparable units
                cs = ax.tricontour(Triangulation(cx, cy, tri.triangles), share, levels=[0.5], colors="k",
                                   linewidths=1.4, linestyles="--")
                drawn += bool(cs.allsegs and any(len(s) for s in cs.allsegs[0]))
            except (ValueError, RuntimeError):       # collinear values: no area to contour
                pass
        ax.set_xlabel(xl, fontsize=8)
        ax.set_ylabel(yl, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if n == 0:
            ax.legend(fontsize=7, loc="best", framealpha=0.85)
    for m in range(len(pairs), grid.size):
        grid[m // 3][m % 3].set_visible(False)
    n_bad = int(bad.sum())
    facts = (f"{n_bad} of {len(rows)} runs valleyed or failed"
             + ("; the dashed line is the boundary" if drawn else
                ("; every run passed: no boundary" if n_bad == 0 else
                 "; every run failed: no boundary" if n_bad == len(rows) else "")) + ".")
    return to_svg(fig, "outcome"), facts


# --------------------------------------------------------------------------- operation

#: fill of a hold (a block section stopping a train while the block ahead is occupied)
HOLD_HATCH = "////"


def _lane_keys(run: RunData, visits: list[dict]) -> list[tuple]:
    """The lanes of the block timeline, (track, k), tracks in scenario order then block number."""
    keys = list(run.block_lanes)
    for v in visits:
        if (v["track"], v["k"]) not in run.block_lanes and (v["track"], v["k"]) not in keys:
            keys.append((v["track"], v["k"]))
    tracks = list(dict.fromkeys([k[0] for k in run.block_lanes] + [k[0] for k in keys]))
    return sorted(keys, key=lambda key: (tracks.index(key[0]), key[1]))


def _lane_label(run: RunData, key: tuple, several_tracks: bool) -> str:
    lane = run.block_lanes.get(key)
    head = f"{key[0]} · " if several_tracks and key[0] else ""
    if lane is None:
        return f"{head}block {key[1]}"
    kind = f" ({lane.type})" if lane.type != lane.label else ""
    return f"{head}block {key[1]}: {lane.label}{kind}"


def _lane_track(run: RunData, train) -> str | None:
    """The track part of a lane's key for ``train``'s blocks: "" on a network (its blocks are the
    network's, ``data.network_lanes``), else the train's track."""
    if any(key[0] == "" for key in run.block_lanes):
        return ""
    tr = run.train(str(train))
    return tr.track_name if tr is not None else None


def _block_at(run: RunData, train: str, car, t) -> int | None:
    """The block car ``car`` of ``train`` was in at time ``t`` (the ``block`` column), or None."""
    tr = run.train(str(train))
    if tr is None or "block" not in tr.series or t is None or car not in tr.cars:
        return None
    i = int(np.argmin(np.abs(run.t - float(t))))
    b = tr.series["block"][i, tr.car_index(car)]
    return int(b) if np.isfinite(b) and b >= 0 else None


def block_timeline(run: RunData) -> tuple[str | None, dict]:
    """Block occupancy against time: a lane per block (labelled by the block section that starts it),
    a bar in the train's colour for each stay of a train in it (any of its cars, from the ``block``
    column; consecutive samples merged), holds hatched on the block section's lane, dispatches,
    collisions and overruns (a train through a hold) marked. Returns the SVG (None without a ``block``
    column) and what it drew: ``{"bars": n, "holds": n, "dispatches": n, "collisions": n,
    "overruns": n, "shared": [...], "lanes": n}``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from trackrider.report.data import block_holds, block_visits, shared_blocks

    visits = block_visits(run)
    if not any("block" in tr.series for tr in run.trains) or len(run.t) == 0:
        return None, {}
    keys = _lane_keys(run, visits)
    several = len({k[0] for k in keys}) > 1
    row = {key: n for n, key in enumerate(keys)}
    t = run.t
    h = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    t_lo, t_hi = float(t[0]), float(t[-1])
    fig = _figure(11, 1.3 + 0.42 * max(len(keys), 1))
    ax = fig.add_subplot()
    colour = {tr.name: tr.colour for tr in run.trains}
    handles = []
    bars = 0
    for tr in run.trains:
        mine = [v for v in visits if v["train"] == tr.name]
        if not mine:
            continue
        lanes: dict = {}
        for v in mine:
            x0 = max(t_lo, float(t[v["i0"]]) - 0.5 * h)
            x1 = min(t_hi, float(t[v["i1"]]) + 0.5 * h)
            lanes.setdefault(row[(v["track"], v["k"])], []).append((x0, max(x1 - x0, 1e-9)))
        for y, xr in lanes.items():
            coll = ax.broken_barh(xr, (y - 0.3, 0.6), facecolors=colour[tr.name], edgecolors="0.2", linewidths=0.4)
            coll.set_gid(f"visits-{_slug(tr.name)}-{y}")
            bars += len(xr)
        handles.append(Patch(facecolor=colour[tr.name], edgecolor="0.2", lw=0.4, label=f"train {tr.name}"))

    def lane_of_section(train, section, t_ev, car=1):
        track = _lane_track(run, train)
        for key, lane in run.block_lanes.items():
            if lane.label == run.section(section) and (track is None or key[0] == track):
                return row.get(key)
        b = _block_at(run, train, car, t_ev)
        return row.get((track, b)) if b is not None else None

    holds = [hd for hd in block_holds(run) if hd["t1"] >= hd["t0"]]
    drawn_holds = 0
    if holds:
        xr_by_lane: dict = {}
        for hd in holds:
            y = lane_of_section(hd["train"], hd["section"], hd["t0"])
            if y is None:
                continue
            xr_by_lane.setdefault(y, []).append((hd["t0"], max(hd["t1"] - hd["t0"], 1e-9)))
        for y, xr in xr_by_lane.items():
            coll = ax.broken_barh(xr, (y - 0.3, 0.6), facecolors="none", edgecolors="0.1", linewidths=0.8,
                                  hatch=HOLD_HATCH)
            coll.set_gid(f"holds-{y}")
            drawn_holds += len(xr)
        if drawn_holds:
            handles.append(Patch(facecolor="white", edgecolor="0.1", hatch=HOLD_HATCH, lw=0.8,
                                 label="held: the block ahead is occupied"))
    events = run.summary.get("events") or []
    disp_x, disp_y, disp_c = [], [], []
    col_x, col_y = [], []
    over_x, over_y = [], []
    for ev in events:
        kind = ev.get("kind")
        if kind == "dispatch":
            y = lane_of_section(ev.get("train"), ev.get("section"), ev.get("t"))
            if y is not None:
                disp_x.append(float(ev["t"]))
                disp_y.append(y - 0.38)      # on the top edge of the station's lane, pointing in
                disp_c.append(colour.get(ev.get("train"), "0.3"))
        elif kind == "collision":
            b = _block_at(run, ev.get("train"), ev.get("car"), ev.get("t"))
            y = row.get((_lane_track(run, ev.get("train")), b)) if b is not None else None
            if y is not None:
                col_x.append(float(ev["t"]))
                col_y.append(y)
        elif kind == "block_overrun":
            y = lane_of_section(ev.get("train"), ev.get("section"), ev.get("t"))
            if y is not None:
                over_x.append(float(ev["t"]))
                over_y.append(y)
        elif kind == "stalled" and ev.get("section") and ev.get("t") is not None:
            ax.axvline(float(ev["t"]), color="#b71c1c", lw=1.5, ls="--", zorder=4)
            handles.append(Line2D([], [], color="#b71c1c", lw=1.5, ls="--",
                                  label=f"stalled at {float(ev['t']):.1f} s: {ev.get('train')} held at "
                                        f"{ev.get('section')} longer than max_hold"))
    if disp_x:
        pts = ax.scatter(disp_x, disp_y, marker="v", s=30, c=disp_c, edgecolors="0.1", linewidths=0.5, zorder=5)
        pts.set_gid("dispatches")
        handles.append(Line2D([], [], ls="none", marker="v", ms=6, mfc="0.6", mec="0.1", label="dispatch"))
    if col_x:
        pts = ax.scatter(col_x, col_y, marker="X", s=70, c="#d50000", edgecolors="k", linewidths=0.6, zorder=6)
        pts.set_gid("collisions")
        handles.append(Line2D([], [], ls="none", marker="X", ms=8, mfc="#d50000", mec="k", label="collision"))
    if over_x:
        pts = ax.scatter(over_x, over_y, marker=">", s=70, c="#ff6d00", edgecolors="k", linewidths=0.6, zorder=6)
        pts.set_gid("overruns")
        handles.append(Line2D([], [], ls="none", marker=">", ms=8, mfc="#ff6d00", mec="k",
                              label="ran through a hold (block overrun)"))
    shared = shared_blocks(visits)
    for sh in shared:
        y = row[(sh["track"], sh["k"])]
        x0, x1 = float(t[sh["i0"]]) - 0.5 * h, float(t[sh["i1"]]) + 0.5 * h
        ax.broken_barh([(x0, x1 - x0)], (y - 0.45, 0.9), facecolors="none", edgecolors="#d50000", linewidths=1.5,
                       zorder=6)
    if shared:
        handles.append(Patch(facecolor="none", edgecolor="#d50000", lw=1.5, label="two trains in one block"))
    ax.set_yticks(range(len(keys)), [_lane_label(run, k, several) for k in keys], fontsize=8)
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.set_xlim(t_lo, t_hi)
    ax.set_xlabel("time (s)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.tick_params(axis="y", length=0)
    if handles:
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(handles), 6),
                  fontsize=8, frameon=False, borderaxespad=0.2)
    facts = {"bars": bars, "holds": drawn_holds, "dispatches": len(disp_x), "collisions": len(col_x),
             "overruns": len(over_x), "shared": shared, "lanes": len(keys)}
    return zoomable(fig, "blocks", [ax], "time (s)"), facts
