"""The report's HTML: one self-contained page of a run (optionally compared with another) or a sweep.

Self-contained means: styles inline in the page, figures inline SVG (a
rasterised layer is a ``data:`` URI inside its SVG), one inline script (``script.py``:
zoom on the long charts, the time / track-position toggle; the page reads whole
without it), and no ``src``, ``href``, ``url()`` or ``@import`` that leaves the
file (links only to ``#ids`` in the page, or to the runs' own reports by relative
path in a sweep page).
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

from trackrider.errors import InputError
from trackrider.events import EVENTS, STATUSES
from trackrider.outputs import REPORT_GENERATOR, atomic_file, check_out_file, head_contains
from trackrider.report.units import SYSTEMS, Units

#: the generator tag every report carries; ``--overwrite`` replaces only files that have it
GENERATOR = REPORT_GENERATOR

#: what the page says of each status and event type (``trackrider.events``)
STATUS_WORDS = STATUSES
EVENT_WORDS = {name: e.words for name, e in EVENTS.items()}
#: events listed one by one (folded away below their counts) at most; the rest are counted
MAX_LISTED_EVENTS = 500

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0;color:#222;
background:#fafafa}
main{max-width:1150px;margin:0 auto;padding:18px 28px 40px;background:#fff}
h1{font-size:1.6em;margin:.2em 0 .1em}h2{font-size:1.3em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin-top:1.2em}.meta{color:#555;font-size:.92em}
.status{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;color:#fff}
.completed{background:#2e7d32}.stalled,.derailed,.ran_off_track{background:#e65100}
.diverged,.error{background:#b71c1c}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f0f0f0}
td.l,th.l{text-align:left}figure{margin:.8em 0}figcaption{color:#555;font-size:.88em}
svg{max-width:100%;height:auto}.note{color:#7a4b00;background:#fff4e0;padding:4px 8px}
.scroll{overflow-x:auto}.pair{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.pair figure{flex:1 1 420px;min-width:0}
.swatch{display:inline-block;width:.9em;height:.9em;border:1px solid #333;border-radius:2px;margin-right:.4em;
vertical-align:-.1em}
.valleyed{background:#e65100}
details{margin:.4em 0}summary{cursor:pointer;color:#1f4e99}
table.stats td:nth-child(2){font-weight:600}
.zbar,.altbar{font-size:.85em;color:#555;margin:.2em 0}
.zbar button,.altbar button{font:inherit;padding:1px 8px;margin:0 1px;border:1px solid #bbb;border-radius:3px;
background:#f4f4f4;cursor:pointer}.altbar button.on{background:#1f4e99;color:#fff;border-color:#1f4e99}
.zoom svg{cursor:crosshair}.zin path{vector-effect:non-scaling-stroke}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _num(value, fmt="{:.2f}") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return fmt.format(value)


# --------------------------------------------------------------------------- extremes


def _speed(v: float, units: Units) -> str:
    text = f"{v * units.speed_factor:.1f}"
    return ("0.0" if text == "-0.0" else text) + f" {units.speed_unit}"


def _rows(units: Units, railway: bool):
    """(summary key, at key, label, value → text) of the extremes table: a coaster's G, speeds,
    airtime, crest speed and wheel loads; a railway train's speeds, wheel and rail loads, L/V and
    flange force (no G, airtime or crests)."""
    speed = [
        ("max_speed", "max_speed", "highest speed", lambda v: _speed(v, units)),
        ("min_speed", "min_speed", "lowest speed (< 0: backwards)", lambda v: _speed(v, units)),
    ]
    loads = [
        ("max_wheel_load", "max_wheel_load", "largest wheel load", lambda v: f"{v / 1e3:.1f} kN"),
        ("max_l_over_v", "max_l_over_v", "largest L/V", lambda v: f"{v:.3f}"),
    ]
    if railway:
        return speed + loads + [
            ("min_inner_wheel_load", "min_inner_wheel_load", "smallest inner-rail load (< 0: wheel lift)",
             lambda v: f"{v / 1e3:.1f} kN"),
            ("max_abs_lateral_load", "max_abs_lateral_load", "largest |lateral (flange) force|",
             lambda v: f"{v / 1e3:.1f} kN"),
        ]
    return [
        ("max_g_vertical", "max_g_vertical", "highest vertical G", lambda v: f"{v:+.2f} g"),
        ("min_g_vertical", "min_g_vertical", "lowest vertical G", lambda v: f"{v:+.2f} g"),
        ("max_abs_g_lateral", "max_abs_g_lateral", "largest |lateral G|", lambda v: f"{v:.2f} g"),
        ("max_abs_g_longitudinal", "max_abs_g_longitudinal", "largest |longitudinal G|", lambda v: f"{v:.2f} g"),
    ] + speed + [
        ("airtime_s", "airtime_s", "airtime (any car below 0 g); where: its longest stretch",
         lambda v: f"{v:.2f} s"),
        ("min_crest_speed", "min_crest_speed", "lowest speed over a crest (off the sections)", lambda v: _speed(v, units)),
    ] + loads


def extremes_table(train: dict, units: Units, railway: bool, other: dict | None = None,
                   other_name: str = "", rename=None, extra=()) -> str:
    """The table of a train's extremes, each with its time, car, track position and section.

    ``rename`` turns a section name of ``summary.json`` into the page's (``RunData.section``);
    ``extra`` rows ``(label, value text, t, who, s, section)`` follow (a railway train's couplers).
    """
    rename = rename or (lambda name: name)
    at = train.get("at") or {}
    head = ["quantity", "value"]
    if other is not None:
        head += [f"value in {other_name}", "change"]
    head += ["time (s)", "car", f"s ({units.length_unit})", "section"]
    if other is not None:
        head += [f"s in {other_name} ({units.length_unit})"]
    out = ['<div class="scroll"><table><tr>' + "".join(
        f'<th class="{"l" if i == 0 else ""}">{_e(h)}</th>' for i, h in enumerate(head)) + "</tr>"]
    for key, at_key, label, fmt in _rows(units, railway):
        value = train.get(key)
        if key not in train:
            continue
        where = at.get(at_key) or {}
        cells = [f'<td class="l">{_e(label)}</td>', f"<td>{_e(fmt(value)) if _finite(value) else '—'}</td>"]
        if other is not None:
            ov = other.get(key)
            cells.append(f"<td>{_e(fmt(ov)) if _finite(ov) else '—'}</td>")
            change = "—"
            if _finite(value) and _finite(ov):
                change = fmt(ov - value)
                change = change if change.startswith(("+", "-", "−")) else "+" + change
            cells.append(f"<td>{_e(change)}</td>")
        if key == "airtime_s" and where.get("duration_s") is not None:
            cells[0] = f'<td class="l">{_e(label)} ({where["duration_s"]:.2f} s)</td>'
        cells += [f"<td>{_num(where.get('t'))}</td>", f"<td>{_e(where.get('car', '—'))}</td>",
                  f"<td>{_num(units.length(where.get('s')), '{:.1f}')}</td>",
                  f'<td class="l">{_e(rename(where.get("section")) or "—")}</td>']
        if other is not None:
            ow = (other.get("at") or {}).get(at_key) or {}
            cells.append(f"<td>{_num(units.length(ow.get('s')), '{:.1f}')}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    for label, text, t_at, who, s_at, section in extra:
        cells = [f'<td class="l">{_e(label)}</td>', f"<td>{_e(text)}</td>"]
        if other is not None:
            cells += ["<td>—</td>", "<td>—</td>"]
        cells += [f"<td>{_num(t_at)}</td>", f"<td>{_e(who)}</td>", f"<td>{_num(units.length(s_at), '{:.1f}')}</td>",
                  f'<td class="l">{_e(section or "—")}</td>']
        if other is not None:
            cells.append("<td>—</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# --------------------------------------------------------------------------- events


def events_in_words(run, units: Units) -> str:
    """The run's events counted by kind, then (folded away) each as a sentence with the car's track
    position where it is known."""
    import numpy as np

    events = run.summary.get("events") or []
    dropped = int(run.summary.get("events_dropped") or 0)
    if not events:
        return "<p>No events: no wheel lifted, nothing stalled, rolled back or ran off.</p>"
    counts: dict = {}
    for ev in events:
        counts[str(ev.get("kind", "?"))] = counts.get(str(ev.get("kind", "?")), 0) + 1
    head = (f"<p>{len(events)} event{'s' if len(events) != 1 else ''}: "
            + ", ".join(f"{_e(k)} × {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            + (f"; {dropped} more not recorded" if dropped else "") + ".</p>")
    items = []
    for ev in events[:MAX_LISTED_EVENTS]:
        kind = str(ev.get("kind", "?"))
        who = f"car {ev.get('car')} of {ev.get('train')}" if ev.get("train") else "the simulation"
        where = ""
        tr = run.train(str(ev.get("train")))
        if tr is not None and ev.get("car") in tr.cars and ev.get("t") is not None:
            i = int(np.argmin(np.abs(run.t - float(ev["t"]))))
            s = float(tr.series["s"][i, tr.car_index(ev["car"])])
            if math.isfinite(s):
                from trackrider.report.data import sections_of

                sec = sections_of(tr, s)
                where = f" at s = {units.length(s):.1f} {units.length_unit}" + (f", in {sec}" if sec else "")
        words = EVENT_WORDS.get(kind, f"had the event '{kind}'")
        after = ""
        said = _operation_event(ev, units, run)
        if said is not None:
            who, words, after = said
            if kind != "collision":
                where = ""          # the event names its section
        items.append(f"<li>At {_num(ev.get('t'))} s, {_e(who)} {_e(words)}{_e(where)}{_e(after)}.</li>")
    more = len(events) - MAX_LISTED_EVENTS
    tail = f"<p>… and {more} more (counted above).</p>" if more > 0 else ""
    return (head + f"<details><summary>each event in words ({min(len(events), MAX_LISTED_EVENTS)})</summary>"
            + "<ul>" + "\n".join(items) + "</ul>" + tail + "</details>")


def _operation_event(ev: dict, units: Units, run=None):
    """(who, words, words after the place) of an event of the block logic, with its own keys (its section
    as ``run`` names it, when given); None for the other kinds."""
    kind = ev.get("kind")
    train = ev.get("train")
    section = run.section(ev.get("section")) if run is not None else ev.get("section")
    if kind == "dispatch":
        return f"train {train}", f"was dispatched from {section}", ""
    if kind == "block_hold":
        return f"train {train}", f"was held by {section}: the block ahead was occupied", ""
    if kind == "block_release":
        held = ev.get("held_s")
        return f"train {train}", f"was released by {section}" + (
            f" after {held:.1f} s held" if _finite(held) else ""), ""
    if kind == "block_overrun":
        v, ahead = ev.get("speed"), ev.get("block_ahead_held_by")
        return (f"train {train}", f"ran through the end of {section}, which was holding it"
                + (f" for {ahead} ahead" if ahead else ""),
                f", at {_speed(v, units)}: the section cannot stop it" if _finite(v) else "")
    if kind == "lap":
        lap = ev.get("lap_time")
        return f"train {train}", "completed a lap" + (f" in {lap:.1f} s" if _finite(lap) else ""), ""
    if kind == "collision":
        v = ev.get("closing_speed")
        return (f"car {ev.get('car')} of {train}", f"collided with car {ev.get('other_car')} of "
                f"{ev.get('other_train')}", f", closing at {_speed(v, units)}" if _finite(v) else "")
    if kind == "stalled" and section:
        return (f"train {train}", f"had been held by {section} longer than max_hold: the blocks are "
                "deadlocked and the run ends", "")
    return None


# --------------------------------------------------------------------------- operation


def operation_table(run) -> str:
    """Capacity (trains and riders an hour), laps per train, dispatches per station, holds per block section."""
    op = run.operation or {}
    if _finite(op.get("throughput_trains_per_hour")):
        out = [f"<p><b>Throughput</b>: {op['throughput_trains_per_hour']:.1f} trains an hour, "
               f"{_num(op.get('riders_per_hour'), '{:.0f}')} riders an hour (the dispatches after every train's "
               "first dispatch, over the time from then to the end of the run).</p>"]
    else:
        out = ["<p><b>Throughput</b>: not measured — it counts the dispatches after every train's first "
               "dispatch, and no train was dispatched again before the run ended (or not every train was "
               "dispatched at all).</p>"]
    trains = op.get("trains") or {}
    if trains:
        out.append('<table><tr><th class="l">train</th><th>riders</th><th>laps</th><th>mean lap time (s)</th>'
                   "</tr>")
        for name, tr in trains.items():
            data = run.train(name)
            swatch = _swatch(data.colour) if data is not None else ""
            out.append(f'<tr><td class="l">{swatch}{_e(name)}</td><td>{_e(tr.get("riders", "—"))}</td>'
                       f'<td>{_e(tr.get("laps", "—"))}</td><td>{_num(tr.get("mean_lap_time"), "{:.1f}")}</td></tr>')
        out.append("</table>")
    stations = op.get("stations") or {}
    if stations:
        out.append('<table><tr><th class="l">station</th><th>dispatches</th><th>mean dispatch interval (s)</th>'
                   "</tr>")
        for name, st in stations.items():
            out.append(f'<tr><td class="l">{_e(run.section(name))}</td><td>{_e(st.get("dispatches", "—"))}</td>'
                       f'<td>{_num(st.get("mean_dispatch_interval"), "{:.1f}")}</td></tr>')
        out.append("</table>")
    blocks = op.get("block_sections") or {}
    if blocks:
        from trackrider.report.data import block_holds

        holds: dict = {}
        for hd in block_holds(run):
            holds.setdefault(hd["section"], []).append(hd["held_s"])
        starts = {lane.label: key for key, lane in run.block_lanes.items()}
        out.append('<table><tr><th class="l">block section</th><th class="l">type</th><th>starts block</th>'
                   "<th>time held (s)</th><th>holds</th><th>longest hold (s)</th></tr>")
        for name, bs in blocks.items():
            hs = holds.get(name, [])
            key = starts.get(run.section(name))
            out.append(f'<tr><td class="l">{_e(run.section(name))}</td><td class="l">{_e(bs.get("type", "—"))}</td>'
                       f'<td>{_e(key[1]) if key is not None else "—"}</td><td>{_num(bs.get("held_s"), "{:.1f}")}</td>'
                       f'<td>{len(hs)}</td><td>{_num(max(hs) if hs else None, "{:.1f}")}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _swatch(colour: str) -> str:
    return (f'<span class="swatch" style="background:{_e(colour)}"></span>')


def mechanisms_html(mechanisms) -> str:
    """The page's Mechanisms section: each joint that holds or drives a body carrying a track, with
    the extremes a drive, brake or bearing is sized from (``summary.json`` ``mechanisms``; the series
    are in ``joints.csv``)."""
    out = ['<h2 id="mechanisms">Mechanisms</h2>',
           "<p>Each joint that holds or drives a body carrying a track (docs/outputs.md, <code>joints.csv</code>): "
           "a prismatic joint's drive in N and travel in m, a hinge's in N·m and rad.</p>",
           '<table><tr><th class="l">joint</th><th class="l">kind</th><th class="l">body</th><th>max |drive|</th>'
           "<th>max power (W)</th><th>min power (W)</th><th>max |force| (N)</th><th>max |torque| (N·m)</th>"
           "<th>travel</th><th>held (s)</th></tr>"]
    for m in mechanisms:
        travel = f'{_num(m.get("travel_min"), "{:.3g}")} … {_num(m.get("travel_max"), "{:.3g}")}'
        out.append(f'<tr><td class="l">{_e(m.get("joint"))}</td><td class="l">{_e(m.get("kind"))}</td>'
                   f'<td class="l">{_e(m.get("body"))}</td><td>{_num(m.get("max_drive"), "{:.4g}")}</td>'
                   f'<td>{_num(m.get("max_power"), "{:.4g}")}</td><td>{_num(m.get("min_power"), "{:.4g}")}</td>'
                   f'<td>{_num(m.get("max_force"), "{:.4g}")}</td><td>{_num(m.get("max_torque"), "{:.4g}")}</td>'
                   f'<td>{travel}</td><td>{_num(m.get("held_s"), "{:.1f}")}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def network_html(run, units: Units) -> str:
    """The page's Network section: the plan of the tracks, switches and connections, and each
    switch's branches, its setting at the start and at the end, and its throws."""
    from trackrider.report import figures

    plan = run.network
    body = ['<h2 id="network">Network: tracks, switches and connections</h2>',
            _figure_html(figures.network_plan(run, units),
                         "The tracks from above, each named at its middle, an arrow at its start pointing along "
                         "its s; switches as diamonds, their branches' first 30 m in black (thick: the branch set "
                         "at the start, dashed: the others); connections as circles. A long, narrow layout is "
                         "stretched across, as its axis says.")]
    if plan["switches"]:
        body.append('<table><tr><th class="l">switch</th><th class="l">at</th><th class="l">branches</th>'
                    '<th class="l">set at the start</th><th class="l">throws (t s → branch)</th>'
                    '<th class="l">set at the end</th></tr>')
        for sw in plan["switches"]:
            throws = ", ".join(f"{t:.1f} → {to}" for t, to in sw["throws"]) or "none"
            body.append(f'<tr><td class="l">{_e(sw["name"])}</td><td class="l">{_e(sw["at"])}</td>'
                        f'<td class="l">{_e(", ".join(w for w, _p in sw["branches"]))}</td>'
                        f'<td class="l">{_e(sw["position"])}</td><td class="l">{_e(throws)}</td>'
                        f'<td class="l">{_e(sw["end"])}</td></tr>')
        body.append("</table>")
    return "\n".join(body)


def operation_html(run) -> str:
    """The page's Operation section: the table and the block-occupancy timeline."""
    from trackrider.report import figures

    body = ['<h2 id="operation">Operation: stations and blocks</h2>', operation_table(run)]
    svg, facts = figures.block_timeline(run)
    if svg:
        shared = facts.get("shared") or []
        check = ("No two trains were ever recorded in one block at once."
                 if not shared else f"{len(shared)} times two trains were recorded in one block at once "
                 "(outlined in red).")
        dropped = int(run.summary.get("events_dropped") or 0)
        body.append("<h3>Block occupancy</h3>")
        body.append(_figure_html(
            svg, "Each lane is a block, named by the block section that starts it; a bar in a train's colour "
            "spans the time any car of that train is in the block. Hatched: a block section holding a train "
            "because the block ahead is occupied; triangles: dispatches; crosses: collisions. " + check
            + (f" {dropped} events were not recorded: holds and dispatches after them are missing."
               if dropped else "")))
    return "\n".join(body)


# --------------------------------------------------------------------------- pages


def _page(title: str, body: list[str], script: bool = False) -> str:
    from trackrider.report.script import SCRIPT

    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"{GENERATOR}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
            + "\n".join(body) + "\n</main>" + (f"<script>{SCRIPT}</script>" if script else "")
            + "</body></html>\n")


def _figure_html(svg: str | None, caption: str, view: str | None = None) -> str:
    if not svg:
        return ""
    attr = f' data-view="{_e(view)}"' if view else ""
    return f"<figure{attr}>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _alternatives(figures: list[str]) -> str:
    """Figures of one thing drawn two ways, one shown at a time by the page's script (both without it)."""
    figures = [f for f in figures if f]
    return f'<div class="alt">{"".join(figures)}</div>' if len(figures) > 1 else "".join(figures)


def _status_words(summary: dict, status: str) -> str:
    if status == "stalled" and any(ev.get("kind") == "stalled" and ev.get("section")
                                   for ev in summary.get("events") or []):
        return ("Stalled: a block section held a train longer than max_hold; the blocks are deadlocked "
                "(see the events).")
    return STATUS_WORDS.get(status, "")


def statistics_table(rows) -> str:
    """The statistics rows ``(quantity, value, where or how)`` as a table."""
    out = ['<table class="stats"><tr><th class="l">statistic</th><th>value</th><th class="l">where / how</th></tr>']
    for label, value, where in rows:
        out.append(f'<tr><td class="l">{_e(label)}</td><td>{_e(value)}</td><td class="l">{_e(where or "—")}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _coupler_rows(run, tr) -> list:
    """Extremes table rows of a railway train's couplers: the largest pull and push, when, which
    coupler, where its front car was."""
    import numpy as np

    from trackrider.report.data import coupler_forces, sections_of

    forces = coupler_forces(tr)
    if forces is None or not np.isfinite(forces).any():
        return []
    rows = []
    for label, pick in (("largest coupler pull", np.nanargmax), ("largest coupler push", np.nanargmin)):
        i, c = np.unravel_index(int(pick(forces)), forces.shape)
        f = float(forces[i, c])
        if (f > 0) != (label.endswith("pull")):
            continue
        s = float(tr.series["s"][i, c])
        rows.append((label, f"{abs(f) / 1e3:.1f} kN", float(run.t[i]), f"coupler {c + 1}–{c + 2}", s,
                     sections_of(tr, s)))
    return rows


def _tables(runs, tr, units: Units, railway: bool) -> list[str]:
    """A train's statistics and extremes tables (the extremes with the compared run's beside them)."""
    from trackrider.report.stats import coaster_statistics, railway_statistics

    run, other = runs[0], (runs[1] if len(runs) > 1 else None)
    otr = other.train(tr.name) if other is not None else None
    stats = (railway_statistics if railway else coaster_statistics)(run, tr, units)
    return ["<h3>Statistics</h3>", statistics_table(stats), "<h3>Extremes</h3>",
            extremes_table(tr.summary, units, railway, otr.summary if otr is not None else None,
                           other.path.name if other is not None else "", rename=run.section,
                           extra=_coupler_rows(run, tr) if railway else ())]


def _coaster_train(runs, tr, units: Units) -> list[str]:
    from trackrider.report import figures

    both = [r for r in runs if r.train(tr.name) is not None]
    body = _tables(runs, tr, units, False) + [
            "<h3>Height profile and speed</h3>",
            _figure_html(figures.height_profile(both, tr.name, units),
                         "Height of the track along it, sections shaded and named; the lead car's speed."),
            "<h3>The layout</h3>",
            _figure_html(figures.layout_views(both, tr.name, units),
                         "Side elevation (looking across the layout's longest direction) and top view, equal "
                         "axes; the top view coloured by the front car's vertical G, circles where a car had "
                         "airtime; sections in their colours."),
            "<h3>The ride: G, roll rate and jerk</h3>"]
    design = " The force design's G is dashed black." if tr.design is not None else ""
    body.append(_alternatives([
        _figure_html(figures.ride_charts(both, tr.name, units, "t"),
                     "Filtered G of the front, middle and rear car, their roll rate and the front car's jerk "
                     "against time; the extremes of the table marked; the time on each section shaded." + design,
                     view="against time"),
        _figure_html(figures.ride_charts(both, tr.name, units, "s"),
                     "The same against track position, sections shaded." + design,
                     view="against track position")]))
    body.append("<h3>G–G diagram</h3>")
    body.append(_figure_html(figures.gg_diagram(both, tr.name, units),
                             "Vertical against lateral G of the front, middle and rear car, on fixed symmetric "
                             "axes: lateral ±2 g, vertical 1 ± 3 g, wider only when the ride goes beyond."))
    rows = tr.summary.get("rider_rows")
    if isinstance(rows, dict):
        body += ["<h3>Front row and back row</h3>", rider_rows_table(rows),
                 _figure_html(figures.rider_rows(both, tr.name, units),
                              "Filtered vertical and lateral G of the lead car's front row and back row (0.45 m "
                              "inside each end of the car), its rider point thin grey: in a transition the rows "
                              "feel the car's yaw (pitch) acceleration times their distance, of opposite signs.")]
    return body


def rider_rows_table(rows: dict) -> str:
    """Per car (a row of the timeseries) of a train with ``rider_rows = 2``: the largest and smallest
    filtered vertical and lateral G of its front row, its rider point and its back row."""
    keys = (("max_g_vertical", "max vertical"), ("min_g_vertical", "min vertical"),
            ("max_g_lateral", "max lateral"), ("min_g_lateral", "min lateral"))
    parts = (("front", "front row"), ("rider", "rider point"), ("rear", "back row"))
    out = ['<table class="rows"><tr><th class="l" rowspan="2">car</th>'
           + "".join(f'<th colspan="{len(parts)}">{_e(label)} (g)</th>' for _, label in keys) + "</tr><tr>"
           + "".join(f"<th>{_e(label)}</th>" for _ in keys for _, label in parts) + "</tr>"]
    for entry in rows.get("cars") or []:
        cells = "".join(f"<td>{_num((entry.get(part) or {}).get(key), '{:+.2f}')}</td>"
                        for key, _ in keys for part, _ in parts)
        out.append(f'<tr><td class="l">{_e(entry.get("car", "?"))}</td>{cells}</tr>')
    out.append("</table>")
    return "\n".join(out)


#: the railway page's figures after the tables, in order: (heading, figure function, caption)
RAILWAY_FIGURES = (
    ("Height profile and speed", "height_profile",
     "Speed of the lead car against distance along the line, and the line's height, sections shaded."),
    ("Driving: speed, notch and brakes", "driving",
     "Speed of the lead car, the locomotives' notch and the mean brake-cylinder pressure against the lead "
     "car's position; the driver's commands marked where they were taken."),
    ("Coupler forces against time", "coupler_charts",
     "The force in the front, middle and rear coupler, and its range along the train at each instant "
     "(shaded); + pulls. Slack running in and out shows as swings between pull and push."),
    ("Coupler forces along the train", "coupler_map",
     "Every coupler's force over time: red pulls, blue pushes."),
    ("Along the train", "along_the_train",
     "Extremes over the run, car by car: wheel loads, L/V, flange force and coupler forces."),
    ("The line from above", "top_view",
     "The line seen from above, equal axes, sections in their colours."),
)


def _railway_train(runs, tr, units: Units) -> list[str]:
    from trackrider.report import figures

    run = runs[0]
    both = [r for r in runs if r.train(tr.name) is not None]
    body = _tables(runs, tr, units, True)
    draw = {"height_profile": lambda: figures.height_profile(both, tr.name, units),
            "driving": lambda: figures.driving(run, tr.name, units),
            "coupler_charts": lambda: figures.coupler_charts(both, tr.name, units),
            "coupler_map": lambda: figures.coupler_map(run, tr.name, units),
            "along_the_train": lambda: figures.along_the_train(both, tr.name, units),
            "top_view": lambda: figures.layout_views(both, tr.name, units, views=("top",))}
    for heading, name, caption in RAILWAY_FIGURES:
        svg = draw[name]()
        if svg:
            body += [f"<h3>{_e(heading)}</h3>", _figure_html(svg, caption)]
    return body


def run_page(runs, units: Units) -> str:
    """The HTML of a run (``runs[0]``), compared with ``runs[1]`` when given."""
    from trackrider.report import figures

    run = runs[0]
    other = runs[1] if len(runs) > 1 else None
    s = run.summary
    status = str(s.get("status", "?"))
    body = [f"<h1>{_e(run.title)}</h1>",
            f'<p class="meta">results: {_e(run.path.name)} · scenario: {_e(Path(str(s.get("scenario") or "?")).name)}'
            f" · simulated {_num(s.get('simulated_s'))} s (time step {_num(s.get('dt'), '{:g}')} s, "
            f"recorded at {_num(s.get('record_hz'), '{:g}')} Hz) · units: {_e(units.system)}</p>",
            f'<p><span class="status {_e(status)}">{_e(status)}</span> {_e(_status_words(s, status))}</p>']
    if s.get("message"):
        body.append(f'<p class="note">{_e(s["message"])}</p>')
    if other is not None:
        body.append(f"<p>Compared with <b>{_e(other.title)}</b> ({_e(other.path.name)}, status "
                    f"{_e(other.summary.get('status', '?'))}): solid lines are this run, dashed lines "
                    f"{_e(other.path.name)}.</p>")
    if run.description:
        body.append("".join(f"<p>{_e(p)}</p>" for p in run.description.split("\n\n")))
    if run.scenario_note:
        body.append(f'<p class="note">{_e(run.scenario_note)}</p>')
    filt = s.get("filter") or {}
    if any(tr.wheels != "railway" for tr in run.trains):
        body.append("<p class=\"meta\">G values are the specific force at the rider point in car axes, "
                    f"{'low-pass filtered at ' + _num(filt.get('cutoff_hz'), '{:g}') + ' Hz (4-pole Butterworth, zero phase)' if filt.get('applied') else 'unfiltered (the filter could not act at this recording rate)'}"
                    "; vertical + presses into the seat (1 g at rest, below 0 g is airtime), lateral + towards "
                    "the rider's left, longitudinal + forwards (speeding up). Drag across a long chart to zoom "
                    "in; double-click to zoom out.</p>")
    if run.network:
        body.append(network_html(run, units))
    if run.operation is not None:
        body.append(operation_html(run))
    if run.summary.get("mechanisms"):
        body.append(mechanisms_html(run.summary["mechanisms"]))
    body.append('<h2 id="events">Events</h2>')
    body.append(events_in_words(run, units))
    if not run.trains:
        body.append("<p>No trains in this run: only free bodies (below).</p>")
    for tr in run.trains:
        railway = tr.wheels == "railway"
        swatch = _swatch(tr.colour) if run.operation is not None else ""
        body.append(f'<h2 id="train-{_e(figures._slug(tr.name))}">{swatch}Train {_e(tr.name)}: {len(tr.cars)} car'
                    f'{"s" if len(tr.cars) != 1 else ""}, {_e(tr.wheels)} wheels</h2>')
        body += (_railway_train if railway else _coaster_train)(runs, tr, units)
    from trackrider.report.checks import checks_html

    body.append(checks_html(run))       # design warnings, the envelope check, a measured ride (docs/checking.md)
    bodies = s.get("bodies") or {}
    if bodies:
        body.append("<h2>Free bodies</h2><table><tr><th class=\"l\">body</th>"
                    f"<th>highest speed ({_e(units.speed_unit)})</th><th>lowest z ({_e(units.length_unit)})</th>"
                    f"<th>highest z ({_e(units.length_unit)})</th></tr>")
        for name, b in bodies.items():
            body.append(f'<tr><td class="l">{_e(name)}</td><td>{_num(units.speed(b.get("max_speed")), "{:.1f}")}</td>'
                        f'<td>{_num(units.length(b.get("min_z")), "{:.2f}")}</td>'
                        f'<td>{_num(units.length(b.get("max_z")), "{:.2f}")}</td></tr>')
        body.append("</table>")
    body.append(f'<p class="meta">Written by trackrider {_e(s.get("trackrider_version", ""))} from '
                f"{_e(run.path.name)}/summary.json and timeseries.csv.</p>")
    return _page(run.title, body, script=True)


# --------------------------------------------------------------------------- sweep page


def sweep_page(sweep_dir: Path, units: Units) -> str:
    """The page of a sweep folder: the table, the headline figures against each axis, a section per run."""
    from trackrider.sweep import HEADLINES, read_table

    columns, rows = read_table(sweep_dir / "sweep.csv")
    try:
        plan = json.loads((sweep_dir / "plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read plan.json ({exc})", path=sweep_dir / "plan.json") from None
    axes = list(plan.get("axes") or [])
    title = f"Sweep {sweep_dir.name}: {len(rows)} runs"
    outcomes: dict = {}
    for r in rows:
        outcomes[sweep_outcome(r)] = outcomes.get(sweep_outcome(r), 0) + 1
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="meta">method {_e(plan.get("method", "?"))} · axes: {_e(", ".join(axes) or "none")} · '
            f"units: {_e(units.system)}</p>",
            "<p>" + ", ".join(f'<span class="status {_e(k)}">{_e(k)}</span> × {n}'
                              for k, n in sorted(outcomes.items(), key=lambda kv: str(kv[0]))) + "</p>",
            "<p class=\"meta\">valleyed: the run completed, but a train rolled back or stalled "
            "(it failed a hill).</p>"]
    from trackrider.report.figures import outcome_map

    svg, facts = outcome_map(rows, axes, plan.get("scales") or {})
    if svg:
        body.append("<h2>Where the runs fail</h2>")
        body.append(_figure_html(svg, "The outcome over each pair of swept axes: a green dot where every run "
                                 "with those two values passed, a red cross where every one valleyed, stalled "
                                 "or failed, in between the share that did (the count beside it) over the other "
                                 "axes; the line is the boundary where half of them do. " + facts))
    body.append("<h2>Headline figures against each axis</h2>")
    body.append(_figure_html(_sweep_figure(sweep_dir.name, rows, axes, HEADLINES, plan.get("scales") or {}),
                             "Each run a dot; runs that stalled, valleyed, derailed, ran off or failed: red crosses. "
                             "The lowest crest speed leaves out crests on a section (the top of a lift: the chain sets the speed there)."))
    body.append("<h2>The table</h2><div class=\"scroll\"><table><tr>"
                + "".join(f'<th class="l">{_e(c)}</th>' for c in columns) + "</tr>")
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            if c == "run":
                cells.append(f'<td class="l"><a href="#run-{_e(v)}">{_e(v)}</a></td>')
            elif isinstance(v, float):
                cells.append(f"<td>{_e(_cell(v))}</td>")
            else:
                cells.append(f'<td class="l">{_e("" if v is None else v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    body.append("</table></div>")
    body.append("<h2>Runs</h2>")
    for r in rows:
        rid = str(r.get("run"))
        run_dir = sweep_dir / "runs" / rid
        values = ", ".join(f"{a} = {r.get(a)}" for a in axes)
        status = sweep_outcome(r)
        body.append(f'<h3 id="run-{_e(rid)}">Run {_e(rid)}: {_e(values)} '
                    f'<span class="status {_e(status)}">{_e(status)}</span></h3>')
        if r.get("error"):
            body.append(f'<p class="note">{_e(r.get("error"))}</p>')
        summary_path = run_dir / "summary.json"
        if summary_path.is_file():
            from trackrider.results_reader import read_summary_checked

            summary = read_summary_checked(summary_path)
            events = summary.get("events") or []
            kinds: dict = {}
            for ev in events:
                kinds[ev.get("kind")] = kinds.get(ev.get("kind"), 0) + 1
            body.append(f"<p>Events: {_e(', '.join(f'{n} × {k}' for k, n in sorted(kinds.items())) or 'none')}."
                        + (f' <a href="runs/{_e(rid)}/report.html">Its own report.</a>'
                           if (run_dir / "report.html").is_file() else "") + "</p>")
            for name, tsum in (summary.get("trains") or {}).items():
                body.append(f"<p><b>Train {_e(name)}</b></p>")
                body.append(extremes_table(tsum, units, tsum.get("wheels") == "railway"))
    return _page(title, body)


def sweep_outcome(row: dict) -> str:
    """What became of a sweep run: its status, or ``valleyed`` for one that completed with a train
    that failed a hill (``sweep.csv``'s ``valleyed``)."""
    status = str(row.get("status"))
    return "valleyed" if status == "completed" and row.get("valleyed") is True else status


def _cell(v: float) -> str:
    """A number of ``sweep.csv`` as the table shows it: whole numbers (seeds, counts) in full."""
    if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


def _sweep_figure(name, rows, axes, headlines, scales) -> str | None:
    from trackrider.report.figures import _figure, to_svg
    from trackrider.sweep import draw_sweep_panels

    heads = [c for c, _, _ in headlines if any(isinstance(r.get(c), float) for r in rows)]
    if not heads or not axes:
        return None
    fig = _figure(2.9 * len(axes) + 1.0, 2.2 * len(heads) + 0.8)
    draw_sweep_panels(fig, rows, axes, heads, {c: label for c, _, label in headlines}, scales)
    return to_svg(fig, "sweep")


# --------------------------------------------------------------------------- writing


def _check_out(out: Path, overwrite: bool) -> None:
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError("the report is an HTML page: give a file name ending in .html", path=out)
    check_out_file(out, overwrite, ours=lambda p: head_contains(p, GENERATOR.encode()))


def write_report(results_dir, out_html=None, units="metric", compare=None, overwrite=False) -> Path:
    """Write the HTML report of a run's (or a sweep's) results folder; returns its path.

    Parameters
    ----------
    results_dir : path
        A folder written by ``trackrider run`` (or ``trackrider sweep``).
    out_html : path, optional
        The page to write (default ``results_dir/report.html``). An existing file
        is replaced only with ``overwrite`` and only if trackrider wrote it.
    units : str
        ``metric`` (km/h, m) or ``imperial`` (mph, ft): what the page shows.
    compare : path, optional
        Another run's results folder, drawn dashed on the same axes.
    overwrite : bool
        Replace an existing report (default False).

    Nothing is written when an input is bad (``InputError``); the page is
    written to a temporary name and renamed.
    """
    from trackrider.sweep import is_sweep_dir

    if units not in SYSTEMS:
        raise InputError(f"--units must be one of {', '.join(SYSTEMS)}, got {units!r}")
    u = Units(units)
    src = Path(results_dir)
    if not src.is_dir():
        raise InputError("not a results folder (not found or not a directory)", path=src)
    out = Path(out_html) if out_html is not None else src / "report.html"
    _check_out(out, overwrite)
    if is_sweep_dir(src):
        if compare is not None:
            raise InputError("--compare compares two runs; this is a sweep folder", path=src)
        text = sweep_page(src, u)
    else:
        from trackrider.report.data import load_run

        runs = [load_run(src)]
        if compare is not None:
            if is_sweep_dir(compare):
                raise InputError("--compare wants a run's results folder, not a sweep", path=compare)
            runs.append(load_run(compare))
        text = run_page(runs, u)
    with atomic_file(out) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return out
