"""A run's results checked against an envelope: the ``check`` block of ``summary.json``, its
``envelope_exceeded`` events and the lines ``run`` and ``trackrider check`` print.

The signal is every rider car's filtered G (``g_*_filtered``: the run's
4-pole zero-phase Butterworth at ``filter_hz``), only while the car is on its
track; counterweights and free bodies carry no riders and are left out.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.check.envelope import (CHANNELS, FILTERED, MAX_FRONT, MAX_VIOLATIONS, combined_check,
                                       duration_check, onset_check)

#: flags of the timeseries (docs/outputs.md): on track, ran off
_ON_TRACK, _RAN_OFF = 1, 2
#: the event kind of a violation
EVENT = "envelope_exceeded"


def _front(points, limit):
    """The ride's level–duration points that no other beats on both (longer and higher), thinned to
    ``MAX_FRONT`` (the highest level in each of as many log-duration bins), as (duration s, level g)."""
    if len(points) == 0:
        return []
    p = points[np.isfinite(points).all(axis=1) & (points[:, 0] > 0)]
    if len(p) == 0:
        return []
    order = np.lexsort((-p[:, 1], -p[:, 0]))        # longest first; ties: highest first
    p = p[order]
    best = np.maximum.accumulate(p[:, 1])
    keep = np.concatenate([[True], p[1:, 1] > best[:-1]])
    p = p[keep][::-1]
    if len(p) > MAX_FRONT:
        bins = np.floor(np.interp(np.log(p[:, 0]), [np.log(p[0, 0]), np.log(p[-1, 0])], [0, MAX_FRONT - 1e-9]))
        p = p[np.concatenate([[True], bins[1:] != bins[:-1]])]       # shortest, so highest, first
    return [[float(d), float(limit.shown(x))] for d, x in p]


def _cars(ts, summary):
    """``(train, car, rows)`` of every rider car in the timeseries (rows: its samples, in time order)."""
    trains = summary.get("trains") or {}
    names = np.asarray(ts["train"]).astype(str)
    cars = np.asarray(ts["car"]).astype(int)
    for name, info in trains.items():
        if isinstance(info, dict) and info.get("role") == "counterweight":
            continue
        mine = names == name
        for car in sorted(set(cars[mine].tolist())):
            yield name, car, np.flatnonzero(mine & (cars == car))


def check_timeseries(ts: dict, summary: dict, envelope, sections=None) -> dict:
    """The ``check`` block of a run (module docstring) from its timeseries columns.

    ``sections``: train name → ``(label, s_from, s_to, period)`` list (as ``summary.json``'s ``at``).
    """
    from trackrider.metrics import section_at

    sections = sections or {}
    violations = []
    margins = {"durations": {}, "onset": {}, "combined": {}}
    points = {axis: [] for axis in envelope.durations}
    flags = np.asarray(ts["flags"], dtype=float)
    on = np.isfinite(flags) & ((flags.astype(np.int64) & _ON_TRACK) != 0) & ((flags.astype(np.int64) & _RAN_OFF) == 0)

    def where(name, car, s_car, t, index):
        s = float(s_car[index]) if 0 <= index < len(s_car) and math.isfinite(s_car[index]) else None
        return {"t": t, "s": s, "train": name, "car": car, "section": section_at(s, sections.get(name))}

    def keep_margin(table, key, value, entry):
        if value is not None and (key not in table or value < table[key]["margin"]):
            table[key] = {"margin": value, **entry}

    for name, car, rows in _cars(ts, summary):
        t = np.asarray(ts["t"], dtype=float)[rows]
        s_car = np.asarray(ts["s"], dtype=float)[rows]
        G = np.column_stack([np.where(on[rows], np.asarray(ts[c], dtype=float)[rows], np.nan) for c in FILTERED])
        for axis, lim in envelope.durations.items():
            ch = CHANNELS.index(axis.rstrip("+-"))
            found, pts, margin = duration_check(t, lim.signal(G[:, ch]), lim)
            points[axis].append(pts)
            for v in found:
                violations.append({"test": "duration", "axis": axis, "level_g": float(lim.shown(v.level)),
                                   "duration_s": v.duration, "limit_s": v.limit, "peak_g": float(lim.shown(v.peak)),
                                   **where(name, car, s_car, v.t0, v.index)})
            if margin is not None:
                room, stay = margin
                keep_margin(margins["durations"], axis, room,
                            {"level_g": float(lim.shown(stay.level)), "duration_s": stay.duration,
                             "limit_s": stay.limit, **where(name, car, s_car, stay.t0, stay.index)})
        for channel, limit in envelope.onset.items():
            found, peak = onset_check(t, G[:, CHANNELS.index(channel)], limit)
            for r in found:
                violations.append({"test": "onset", "axis": channel, "rate_g_per_s": r.rate,
                                   "limit_g_per_s": limit, "duration_s": r.duration,
                                   **where(name, car, s_car, r.t0, r.index)})
            if peak is not None:
                keep_margin(margins["onset"], channel, limit - abs(peak.rate),
                            {"rate_g_per_s": peak.rate, "limit_g_per_s": limit,
                             **where(name, car, s_car, peak.t_peak, peak.index)})
        for ell in envelope.combined:
            a, b = (CHANNELS.index(c) for c in ell.channels)
            found, peak = combined_check(t, G[:, a], G[:, b], ell)
            for o in found:
                violations.append({"test": "combined", "axis": ell.name, "ratio": o.ratio, "limit": 1.0,
                                   "g": list(o.g), "duration_s": o.duration,
                                   **where(name, car, s_car, o.t0, o.index)})
            if peak is not None:
                keep_margin(margins["combined"], ell.name, 1.0 - peak.ratio,
                            {"ratio": peak.ratio, "g": list(peak.g),
                             **where(name, car, s_car, peak.t_peak, peak.index)})
    violations.sort(key=lambda v: (v["t"], v["train"], v["car"], v["axis"]))
    fronts = {}
    for axis, lim in envelope.durations.items():
        pts = np.concatenate(points[axis]) if points[axis] else np.zeros((0, 2))
        fronts[axis] = _front(pts, lim)
    filt = summary.get("filter") or {}
    return {
        "envelope": envelope.as_dict(),
        "signal": "g_*_filtered of every rider car, on its track",
        "filter": filt,
        "passed": not violations,
        "violations": violations[:MAX_VIOLATIONS],
        "violations_total": len(violations),
        "margins": margins,
        "ride_points": fronts,
    }


def events_of(check: dict) -> list:
    """The ``envelope_exceeded`` events of a check (one per violation kept)."""
    out = []
    for v in check.get("violations") or []:
        ev = {"t": v["t"], "train": v["train"], "car": v["car"], "kind": EVENT}
        ev.update({k: val for k, val in v.items() if k not in ev})
        out.append(ev)
    return out


def add_to_summary(summary: dict, check: dict, max_events: int | None = None) -> dict:
    """``summary`` with ``check`` and its events, in time order (an earlier check's replaced). The run's
    own events all stay; the check's fill the room up to ``MAX_EVENTS``, the rest counted as dropped."""
    from trackrider.metrics import MAX_EVENTS

    cap = MAX_EVENTS if max_events is None else max_events
    own = [e for e in summary.get("events") or [] if e.get("kind") != EVENT]
    dropped = int(summary.get("events_dropped") or 0)
    if isinstance(summary.get("check"), dict):
        dropped -= int(summary["check"].get("events_dropped") or 0)
    new = events_of(check)
    kept = new[: max(0, cap - len(own))]
    out = dict(summary)
    out["events"] = sorted(own + kept, key=lambda e: float(e.get("t", 0.0)))
    out["events_dropped"] = max(0, dropped) + len(new) - len(kept)
    out["check"] = {**check, "events_dropped": len(new) - len(kept)}
    return out


def status_lines(check: dict) -> list:
    """What ``run`` and ``trackrider check`` print: one status line, then one line per violation (at most 20)."""
    env = check.get("envelope") or {}
    label = env.get("name") or str(env.get("file", "?")).rsplit("/", 1)[-1]
    if env.get("restraint"):
        label += f", restraint {env['restraint']}"
    worst = []
    for axis, m in (check.get("margins") or {}).get("durations", {}).items():
        worst.append(f"{axis} {m['margin']:+.2f} g")
    for axis, m in (check.get("margins") or {}).get("onset", {}).items():
        worst.append(f"onset {axis} {m['margin']:+.1f} g/s")
    for axis, m in (check.get("margins") or {}).get("combined", {}).items():
        worst.append(f"{axis} {m['margin']:+.2f}")
    margins = f"; worst margins: {', '.join(worst)}" if worst else ""
    n = int(check.get("violations_total") or 0)
    if n == 0:
        return [f"check: passed ({label}){margins}"]
    lines = [f"check: {n} envelope violation{'s' if n != 1 else ''} ({label}){margins}"]
    for v in (check.get("violations") or [])[:20]:
        lines.append("  " + violation_words(v))
    if n > 20:
        lines.append(f"  … and {n - 20} more (summary.json check.violations)")
    return lines


def violation_words(v: dict) -> str:
    """One violation as a line: what, how much, the limit, when, where."""
    at = f"at t = {v['t']:.2f} s, {v['train']} car {v['car']}"
    if v.get("s") is not None:
        at += f", s = {v['s']:.1f} m"
    if v.get("section"):
        at += f" ({v['section']})"
    if v["test"] == "duration":
        limit = "never allowed" if v["limit_s"] == 0 else f"allowed {v['limit_s']:.3g} s"
        return (f"{v['axis']}: {v['level_g']:.2f} g or beyond for {v['duration_s']:.3g} s ({limit}; peak "
                f"{v['peak_g']:.2f} g) {at}")
    if v["test"] == "onset":
        return (f"onset {v['axis']}: {v['rate_g_per_s']:+.1f} g/s (limit {v['limit_g_per_s']:g} g/s) for "
                f"{v['duration_s']:.3g} s {at}")
    return (f"combined {v['axis']}: {v['ratio']:.2f} of the ellipse (G {v['g'][0]:+.2f}, {v['g'][1]:+.2f}) "
            f"for {v['duration_s']:.3g} s {at}")


def check_results_dir(results, envelope, *, scenario=None, notice=None) -> tuple:
    """The check of a results folder: ``(check, summary)`` (the summary as read, not changed).

    ``scenario``: the run's scenario (for section names); None: loaded as ``report`` loads it.
    """
    from trackrider.record import read_summary, read_timeseries

    summary = read_summary(results)
    ts = read_timeseries(results)
    if scenario is None:
        from trackrider.inputs_copy import load_results_scenario

        scenario, _ = load_results_scenario(results, summary, notice=notice)
    return check_timeseries(ts, summary, envelope, scenario_sections(scenario)), summary


def scenario_sections(scenario) -> dict:
    """Train name → its track's sections as ``summary.json``'s ``at`` names them."""
    if scenario is None:
        return {}
    from trackrider.sim import _train_sections

    return {tr.name: _train_sections(scenario, tr.track_index) for tr in scenario.trains}


def check_result(result, scenario) -> dict:
    """Check a finished run against its scenario's ``[check]`` envelope: its summary (and the
    results folder's ``summary.json``, replaced whole) gets ``check`` and the events. Returns the check."""
    from trackrider.record import read_timeseries, write_summary

    ts = result.timeseries if result.timeseries is not None else read_timeseries(result.out_dir)
    check = check_timeseries(ts, result.summary, scenario.check.loaded, scenario_sections(scenario))
    summary = add_to_summary(result.summary, check)
    if result.out_dir is not None:
        write_summary(result.out_dir, summary)
    result.summary = summary
    result.events = summary["events"]
    return check
