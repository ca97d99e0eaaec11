"""The statistics table of a train: the ride's figures as a designer (or a railway engineer) asks
for them first.

A coaster train (``coaster_statistics``): track length, highest point, biggest drop and its
steepest angle, inversions (from the rider's up vector), ride time, lift time, largest bank,
top speed. A railway train (``railway_statistics``): line length, height range, steepest grade,
smallest radius, largest cant, top speed, time moving, train length and mass. Each row is
``(quantity, value, where)``; the layout's figures come from
``trackrider.curves.stats.layout_figures`` on the train's track, the rest from what the train
recorded.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.curves.stats import inversions
from trackrider.report.data import RunData, TrainData, intervals
from trackrider.report.units import Units, top_speed

#: a train moves once its lead car is faster than this, m/s
MOVING = 0.1
#: at rest: every car slower than this, m/s
AT_REST = 0.05
#: inversions of the rider starting within this distance along the track are one place, m
SAME_PLACE = 10.0


def up_z(tr: TrainData, j: int = 0) -> np.ndarray | None:
    """Vertical component of car ``j``'s up axis over the run, from its orientation quaternion."""
    se = tr.series
    if not all(c in se for c in ("qx", "qy")):
        return None
    qx, qy = se["qx"][:, j], se["qy"][:, j]
    return 1.0 - 2.0 * (qx * qx + qy * qy)


def rider_inversions(run: RunData, tr: TrainData) -> dict | None:
    """The lead car's inversions over the run: ``{"count": places, "passes": n, "s": [s of each
    place], "t": [t of each pass]}`` — a place ridden on every lap counts once; None without the
    orientation columns."""
    uz = up_z(tr)
    if uz is None:
        return None
    s = tr.series["s"][:, 0]
    places: list[float] = []
    times = []
    for a, _ in inversions(uz):
        times.append(float(run.t[a]))
        sa = float(s[a])
        if math.isfinite(sa) and not any(abs(sa - p) < SAME_PLACE for p in places):
            places.append(sa)
    return {"count": len(places), "passes": len(times), "s": places, "t": times}


def _on_sections(tr: TrainData, kinds) -> np.ndarray:
    """(m,) True where any car of the train is on a section of one of ``kinds``."""
    s = tr.series["s"]
    on = np.zeros(len(s), dtype=bool)
    for sec in tr.sections:
        if sec.type in kinds:
            with np.errstate(invalid="ignore"):
                on |= np.any((s >= sec.s_from) & (s <= sec.s_to), axis=1)
    return on


def _first_stretch(mask: np.ndarray) -> tuple[int, int] | None:
    runs = intervals(mask)
    return runs[0] if runs else None


def ride_time(run: RunData, tr: TrainData) -> tuple[float | None, str]:
    """(seconds, how it was measured). With a station: from the train's first dispatch to the next
    time it stands in a station. Else from when the lead car first moves to when the train comes
    to rest for good, runs off the end of its track, or the run ends."""
    t = run.t
    v = np.abs(np.nan_to_num(tr.series["speed"], nan=0.0))
    rest = np.all(v < AT_REST, axis=1)
    disp = [float(ev["t"]) for ev in run.summary.get("events") or []
            if ev.get("kind") == "dispatch" and ev.get("train") == tr.name and ev.get("t") is not None]
    if disp:
        in_station = _on_sections(tr, ("station",))
        i0 = int(np.searchsorted(t, disp[0]))
        left = np.flatnonzero(~in_station[i0:])
        if left.size:
            back = np.flatnonzero(in_station[i0 + left[0]:] & rest[i0 + left[0]:])
            if back.size:
                i1 = i0 + left[0] + back[0]
                return float(t[i1] - disp[0]), "from its dispatch to standing in the station again"
        return None, "dispatched, not back in the station before the run ended"
    moving = np.flatnonzero(v[:, 0] > MOVING)
    if moving.size == 0:
        return None, "it never moved"
    i0 = int(moving[0])
    off = [float(ev["t"]) for ev in run.summary.get("events") or []
           if ev.get("kind") == "ran_off_track" and ev.get("train") == tr.name and ev.get("t") is not None]
    if off:
        return off[0] - float(t[i0]), "from moving off to running off the end of the track"
    still = np.flatnonzero(~rest)
    i1 = int(still[-1]) + 1 if still.size else i0
    if i1 >= len(t):
        return float(t[-1] - t[i0]), "from moving off to the end of the run (still moving)"
    return float(t[i1] - t[i0]), "from moving off to coming to rest"


def lift_time(run: RunData, tr: TrainData) -> float | None:
    """Seconds from the first moment any car is on a lift to the moment its last car leaves it
    (the first pass), summed over the train's lifts; None without lifts."""
    total, found = 0.0, False
    for sec in tr.sections:
        if sec.type != "lift":
            continue
        with np.errstate(invalid="ignore"):
            on = np.any((tr.series["s"] >= sec.s_from) & (tr.series["s"] <= sec.s_to), axis=1)
        first = _first_stretch(on)
        if first is not None:
            total += float(run.t[first[1]] - run.t[first[0]])
            found = True
    return total if found else None


def _layout(tr: TrainData) -> dict | None:
    if tr.track is None:
        return None
    from trackrider.curves.stats import layout_figures

    return layout_figures(tr.track)


def _at_s(s, units: Units) -> str:
    return f"s = {units.length(s):.1f} {units.length_unit}"


def coaster_statistics(run: RunData, tr: TrainData, units: Units) -> list[tuple[str, str, str]]:
    """The statistics rows of a coaster train (see the module docstring)."""
    L = units.length_unit
    rows = []
    lay = _layout(tr)
    if lay is not None:
        rows.append(("track length", f"{units.length(lay['length']):.1f} {L}",
                     "closed circuit" if lay["closed"] else "open track"))
        rows.append(("highest point", f"{units.length(lay['z_max']):.1f} {L}", _at_s(lay["s_z_max"], units)))
        drop = lay["biggest_drop"]
        if drop is not None:
            rows.append(("biggest drop", f"{units.length(drop['height']):.1f} {L}",
                         f"s = {units.length(drop['s_from']):.1f} … {units.length(drop['s_to']):.1f} {L}"))
            rows.append(("its steepest angle", f"{drop['steepest_deg']:.1f}°", _at_s(drop["s_steepest"], units)))
    elif tr.track_xyz is not None:
        z = tr.track_xyz[:, 2]
        rows.append(("highest point (the lead car's path)", f"{units.length(float(np.max(z))):.1f} {L}", ""))
    inv = rider_inversions(run, tr)
    if inv is not None:
        where = ", ".join(_at_s(s, units) for s in inv["s"][:6])
        if inv["passes"] > inv["count"]:
            where += f"; {inv['passes']} times upside down in the run"
        rows.append(("inversions (the rider's up below the horizontal)", str(inv["count"]), where or "—"))
    rt, how = ride_time(run, tr)
    rows.append(("ride time", "—" if rt is None else f"{rt:.1f} s", how))
    lt = lift_time(run, tr)
    if lt is not None:
        rows.append(("lift time", f"{lt:.1f} s", "first car on a lift to the last car off it"))
    if lay is not None:
        rows.append(("largest bank", f"{lay['max_bank_upright']:.0f}°", "where the rider is upright"))
    vmax, vkey = top_speed(tr.summary)
    if vmax is not None:
        at = (tr.summary.get("at") or {}).get(vkey) or {}
        rows.append(("top speed", f"{units.speed(vmax):.1f} {units.speed_unit}",
                     _at_s(at["s"], units) + f", t = {at['t']:.1f} s" if at.get("s") is not None else ""))
    return rows


def railway_statistics(run: RunData, tr: TrainData, units: Units) -> list[tuple[str, str, str]]:
    """The statistics rows of a railway train (see the module docstring)."""
    L = units.length_unit
    rows = []
    lay = _layout(tr)
    if lay is not None:
        rows.append(("line length", f"{units.length(lay['length']):.1f} {L}",
                     "closed" if lay["closed"] else "open"))
        rows.append(("height range", f"{units.length(lay['z_min']):.1f} … {units.length(lay['z_max']):.1f} {L}", ""))
        rows.append(("steepest grade", f"{lay['max_grade']:.2f} %", f"1 in {100 / lay['max_grade']:.0f}"
                     if lay["max_grade"] > 0 else "level"))
        radius = "straight" if math.isinf(lay["min_radius"]) else f"{units.length(lay['min_radius']):.0f} {L}"
        rows.append(("smallest curve radius", radius,
                     "" if math.isinf(lay["min_radius"]) else _at_s(lay["s_min_radius"], units)))
        if tr.gauge:
            cant = tr.gauge * math.sin(math.radians(lay["max_bank_upright"])) * 1000.0
            rows.append(("largest cant", f"{cant:.0f} mm" if units.system == "metric" else f"{cant / 25.4:.1f} in",
                         f"{lay['max_bank_upright']:.2f}° on a {tr.gauge * 1000:.0f} mm gauge"))
    vmax, _ = top_speed(tr.summary)
    if vmax is not None:
        rows.append(("top speed", f"{units.speed(vmax):.1f} {units.speed_unit}", ""))
    s = tr.series["s"][:, 0]
    ok = np.isfinite(s)
    if ok.any():
        rows.append(("distance run (lead car)", f"{units.length(float(np.ptp(s[ok]))):.0f} {L}",
                     f"in {float(run.t[-1] - run.t[0]):.0f} s"))
    if tr.car_mass is not None:
        mass = float(np.sum(np.broadcast_to(tr.car_mass, (len(tr.cars),))))
        cars = f"{len(tr.cars)} cars" if tr.vehicles is None else f"{tr.vehicles} cars on {len(tr.cars)} bogies"
        rows.append(("train", f"{cars}, {mass / 1000:.0f} t",
                     f"{units.length(tr.train_length):.0f} {L} long" if tr.train_length else ""))
    return rows
