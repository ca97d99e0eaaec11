"""The report's figures, drawn with matplotlib (Agg) and returned as inline SVG text.

Every function takes the runs to draw (the report's run first, then the one it
is compared with, dashed) and the ``Units`` to show. Long series are drawn as
they are (matplotlib's path simplification keeps the SVG small); the coloured
top view is rasterised inside its SVG (a PNG data URI) because thousands of
coloured segments would make the page heavy.
"""
from __future__ import annotations

import io
import re

import numpy as np

from trackrider.physics.sections import colour as section_colour
from trackrider.report.data import RunData, TrainData, coupler_forces
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


def _shade_sections(ax, tr: TrainData, units: Units, labels=True):
    for sec in tr.sections:
        lo, hi = units.length(sec.s_from), units.length(sec.s_to)
        ax.axvspan(lo, hi, color=section_colour(sec.type), alpha=0.13, lw=0)
        if labels:
            ax.text(0.5 * (lo + hi), 1.0, f"{sec.label}\n({sec.type})", transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=7, color=section_colour(sec.type, LABEL_GREY),
                    clip_on=False)


def _trains(runs, name):
    return [(k, run.train(name)) for k, run in enumerate(runs) if run.train(name) is not None]


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
    ax2.set_ylim(min(lo, 0.0), max(hi, 0.0))   # from standstill: small wobbles stay small
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.85)
    return to_svg(fig, f"height-{_slug(name)}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)) or "x"


def _value_at(tr: TrainData, run: RunData, col: str, at: dict | None):
    """The series ``col`` of car ``at['car']`` at time ``at['t']`` (signed), or None."""
    if not at or at.get("t") is None or at.get("car") not in tr.cars or col not in tr.series:
        return None
    i = int(np.argmin(np.abs(run.t - float(at["t"]))))
    return float(tr.series[col][i, tr.car_index(at["car"])])


def g_against_s(runs: list[RunData], name: str, units: Units) -> str:
    """Filtered vertical, lateral and longitudinal G against s for the front, middle and rear car."""
    fig = _figure(11, 8.2)
    axes = fig.subplots(3, 1, sharex=True)
    main = runs[0].train(name)
    marks = {"g_vertical_filtered": (("max_g_vertical", "^"), ("min_g_vertical", "v")),
             "g_lateral_filtered": (("max_abs_g_lateral", "D"),),
             "g_longitudinal_filtered": (("max_abs_g_longitudinal", "D"),)}
    for r, (col, label) in enumerate(G_ROWS):
        ax = axes[r]
        _shade_sections(ax, main, units, labels=(r == 0))
        for k, tr in _trains(runs, name):
            if col not in tr.series:
                continue
            for c, car in enumerate(tr.front_middle_rear()):
                j = tr.car_index(car)
                s = tr.series["s"][:, j]
                g, = _breaks(s, tr.series[col][:, j])
                tag = f", {runs[k].name}" if len(runs) > 1 else ""
                ax.plot(units.length(s), g, lw=1.0, color=CAR_COLOURS[c], ls=RUN_STYLES[k],
                        label=f"car {car}{tag}")
            at = tr.summary.get("at") or {}
            for key, marker in marks[col]:
                a = at.get(key)
                value = _value_at(tr, runs[k], col, a)
                if value is None or a.get("s") is None:
                    continue
                x = units.length(float(a["s"]))
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
        ax.grid(True, alpha=0.3)
        if r == 0:
            ax.legend(loc="lower left", fontsize=8, ncol=3 * len(runs), framealpha=0.85)
    axes[-1].set_xlabel(f"track position s ({units.length_unit})")
    fig.supxlabel("filtered G at the rider, car axes: vertical + into the seat (1 g at rest, < 0 airtime); "
                  "lateral + to the rider's left; longitudinal + forwards (speeding up)", fontsize=8, color="0.35")
    return to_svg(fig, f"g-{_slug(name)}")


def gg_diagram(runs: list[RunData], name: str, units: Units) -> str:
    """Vertical against lateral filtered G of the front, middle and rear car."""
    fig = _figure(5.6, 5.0)
    ax = fig.add_subplot()
    for k, tr in _trains(runs, name):
        if "g_vertical_filtered" not in tr.series:
            continue
        for c, car in enumerate(tr.front_middle_rear()):
            j = tr.car_index(car)
            tag = f", {runs[k].name}" if len(runs) > 1 else ""
            ax.plot(tr.series["g_lateral_filtered"][:, j], tr.series["g_vertical_filtered"][:, j], lw=0.8,
                    color=CAR_COLOURS[c], ls=RUN_STYLES[k], alpha=0.85, label=f"car {car}{tag}")
    ax.axhline(0.0, color="#c44e52", lw=0.8, ls=":")
    ax.axhline(1.0, color="0.6", lw=0.6, ls="--")
    ax.axvline(0.0, color="0.6", lw=0.6, ls="--")
    ax.set_xlabel("lateral G (g), + to the rider's left")
    ax.set_ylabel("vertical G (g), + into the seat")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.85)
    return to_svg(fig, f"gg-{_slug(name)}")


def top_view(runs: list[RunData], name: str, units: Units) -> str:
    """The layout from above, coloured by the front car's vertical G, airtime stretches marked."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import TwoSlopeNorm

    pairs = _trains(runs, name)
    fig = _figure(5.6 * len(pairs) + 1.0, 5.4)
    axes = fig.subplots(1, len(pairs), squeeze=False)[0]
    gv_all = [tr.series["g_vertical_filtered"] for _, tr in pairs if "g_vertical_filtered" in tr.series]
    finite = np.concatenate([g[np.isfinite(g)] for g in gv_all]) if gv_all else np.array([])
    lo = float(min(finite.min(), 0.0)) if finite.size else -1.0
    hi = float(max(finite.max(), 2.0)) if finite.size else 3.0
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.0), vmax=max(hi, 1.5))
    line = None
    for ax, (k, tr) in zip(axes, pairs):
        if tr.track_xyz is not None:
            ax.plot(units.length(tr.track_xyz[:, 0]), units.length(tr.track_xyz[:, 1]), color="0.8", lw=4,
                    solid_capstyle="round", zorder=1)
        if "g_vertical_filtered" in tr.series:
            j = tr.car_index(tr.cars[0])
            x, y = units.length(tr.series["x"][:, j]), units.length(tr.series["y"][:, j])
            g = tr.series["g_vertical_filtered"][:, j]
            pts = np.stack([x, y], axis=1)
            segs = np.stack([pts[:-1], pts[1:]], axis=1)
            gm = 0.5 * (g[:-1] + g[1:])
            ok = np.all(np.isfinite(segs), axis=(1, 2)) & np.isfinite(gm)
            line = LineCollection(segs[ok], cmap="turbo", norm=norm, linewidths=3.0, zorder=2,
                                  rasterized=True)
            line.set_array(gm[ok])
            ax.add_collection(line)
            # airtime: any car below 0 g, drawn where that car was
            air_x, air_y = [], []
            for jj in range(len(tr.cars)):
                a = tr.series["g_vertical_filtered"][:, jj] < 0.0
                air_x.append(units.length(tr.series["x"][a, jj]))
                air_y.append(units.length(tr.series["y"][a, jj]))
            ax_ = np.concatenate(air_x)
            if ax_.size:
                ax.plot(ax_, np.concatenate(air_y), ls="none", marker="o", ms=5, mfc="none", mec="k",
                        mew=0.8, zorder=3, label="airtime (a car below 0 g)")
                ax.legend(loc="best", fontsize=8, framealpha=0.85)
            ax.plot([x[0]], [y[0]], marker="s", color="k", ms=6, zorder=4)
            ax.annotate("start", (x[0], y[0]), textcoords="offset points", xytext=(5, 5), fontsize=8)
        for sec in tr.sections:
            if tr.track_s is None:
                continue
            i = int(np.argmin(np.abs(tr.track_s - 0.5 * (sec.s_from + sec.s_to))))
            px, py = units.length(tr.track_xyz[i, 0]), units.length(tr.track_xyz[i, 1])
            ax.annotate(sec.label, (px, py), textcoords="offset points", xytext=(8, -10), fontsize=8,
                        color=section_colour(sec.type, LABEL_GREY))
        ax.set_aspect("equal", adjustable="datalim")
        ax.autoscale_view()
        ax.set_xlabel(f"x ({units.length_unit})")
        ax.set_ylabel(f"y ({units.length_unit})")
        ax.grid(True, alpha=0.3)
        if len(pairs) > 1:
            ax.set_title(runs[k].name, fontsize=9)
    if line is not None:
        fig.colorbar(line, ax=list(axes), label="vertical G of the front car (g)", shrink=0.85)
    return to_svg(fig, f"top-{_slug(name)}")


def along_the_train(runs: list[RunData], name: str, units: Units) -> str | None:
    """Railway trains: wheel loads and L/V per car, coupler forces per coupler (extremes over the run)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # a car whose L/V is never defined: all NaN
        return _along_the_train(runs, name, units)


def _along_the_train(runs, name, units):
    pairs = _trains(runs, name)
    if not pairs:
        return None
    fig = _figure(11, 7.6)
    ax_w, ax_lv, ax_c = fig.subplots(3, 1)
    for k, tr in pairs:
        cars = np.asarray(tr.cars)
        tag = f" ({runs[k].name})" if len(runs) > 1 else ""
        se = tr.series
        mfc = None if k == 0 else "white"
        with np.errstate(all="ignore"):
            if "wheel_load" in se:
                ax_w.plot(cars, np.nanmax(se["wheel_load"], axis=0) / 1e3, marker="^", ls=RUN_STYLES[k],
                          color="#1f77b4", mfc=mfc, ms=4, lw=0.8, label=f"largest wheel load{tag}")
                ax_w.plot(cars, np.nanmin(se["wheel_load"], axis=0) / 1e3, marker="v", ls=RUN_STYLES[k],
                          color="#2ca02c", mfc=mfc, ms=4, lw=0.8, label=f"smallest wheel load{tag}")
            if "wheel_load_inner" in se:
                ax_w.plot(cars, np.nanmin(se["wheel_load_inner"], axis=0) / 1e3, marker="o", ls=RUN_STYLES[k],
                          color="#d62728", mfc=mfc, ms=4, lw=0.8, label=f"smallest inner-rail load{tag}")
            if "l_over_v" in se:
                ax_lv.plot(cars, np.nanmax(se["l_over_v"], axis=0), marker="o", ls=RUN_STYLES[k],
                           color="#9467bd", mfc=mfc, ms=4, lw=0.8, label=f"largest L/V{tag}")
        forces = coupler_forces(tr)
        if forces is not None:
            idx = np.arange(1, len(tr.cars))
            ax_c.plot(idx + 0.5, np.nanmax(forces, axis=0) / 1e3, marker="^", ls=RUN_STYLES[k], color="#1f77b4",
                      mfc=mfc, ms=4, lw=0.8, label=f"largest pull (tension){tag}")
            ax_c.plot(idx + 0.5, np.nanmin(forces, axis=0) / 1e3, marker="v", ls=RUN_STYLES[k], color="#d62728",
                      mfc=mfc, ms=4, lw=0.8, label=f"largest push (compression, < 0){tag}")
    ax_w.axhline(0.0, color="#c44e52", lw=0.8, ls=":")
    ax_w.set_ylabel("kN")
    ax_w.set_title("wheel loads per car (support force; inner rail: the less loaded one)", fontsize=9)
    ax_lv.set_ylabel("L/V")
    ax_lv.set_title("L/V: sideways (flange) force over wheel load, per car", fontsize=9)
    ax_c.axhline(0.0, color="0.6", lw=0.6, ls="--")
    ax_c.set_ylabel("kN")
    ax_c.set_title("coupler force between car n and n + 1, from the cars' motion along the track", fontsize=9)
    ax_c.set_xlabel("car number (couplers between them), 1 = lead car")
    for ax in (ax_w, ax_lv, ax_c):
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="best", framealpha=0.85)
    return to_svg(fig, f"train-{_slug(name)}")


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
        tr = run.train(str(train))
        track = tr.track_name if tr is not None else None
        for key, lane in run.block_lanes.items():
            if lane.label == section and (track is None or key[0] == track):
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
            tr = run.train(str(ev.get("train")))
            y = row.get((tr.track_name if tr is not None else None, b)) if b is not None else None
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
    return to_svg(fig, "blocks"), facts
