"""A scenario's network tables: ``[[connection]]``, ``[[switch]]`` and a segment list's
``{type = "start", at = "TRACK:end"}`` (docs/scenarios.md, "Track networks").

Places on a track are written ``"TRACK:start"``, ``"TRACK:end"`` or ``"TRACK:S"`` (S metres
along it). ``build_world`` hands the parsed tables to ``World.add_connection`` / ``add_switch``,
which check the geometry (the ends must meet within 1 mm, 0.5°).
"""
from __future__ import annotations

import math

from trackrider.settings import MAX_LENGTH

CONNECTION_KEYS = ("a", "b")
#: the longest throw of a switch, s; the latest time in a switch's program, s
MAX_THROW_TIME, MAX_PROGRAM_TIME = 3600.0, 1.0e9
SWITCH_KEYS = ("name", "at", "branches", "position", "throw_time", "program", "clearance", "approach")


def place(ctx, text, where: str, tracks, *, ends_only=False, point_ok=True):
    """(track index, "start" | "end" | S) of ``"TRACK:end"`` etc.; errors name ``where``."""
    names = [t.name for t in tracks]
    if not isinstance(text, str) or ":" not in text:
        forms = '"TRACK:start" or "TRACK:end"' if ends_only else '"TRACK:start", "TRACK:end" or "TRACK:S"'
        raise ctx.error(where, f"must be {forms}, got {text!r}")
    name, _, what = text.rpartition(":")
    if name not in names:
        raise ctx.error(where, f"no track named {name!r} (tracks: {', '.join(names) or 'none'})")
    k = names.index(name)
    if what in ("start", "end"):
        return k, what
    if ends_only or not point_ok:
        raise ctx.error(where, f"must name a track's start or end, got {text!r}")
    try:
        s = float(what)
    except ValueError:
        raise ctx.error(where, f"{what!r} is neither start, end nor a distance in m") from None
    if not math.isfinite(s) or s < 0:
        raise ctx.error(where, f"{what!r} is not a distance along the track (m, >= 0)")
    return k, s


def connections(ctx, document, tracks, array_of_tables, check_keys) -> list[dict]:
    out = []
    for i, t in enumerate(array_of_tables(ctx, document, "connection")):
        where = f"connection[{i}]"
        check_keys(ctx, t, where, CONNECTION_KEYS)
        for key in CONNECTION_KEYS:
            if key not in t:
                raise ctx.error(f"{where}.{key}", "missing: a track's end, \"TRACK:start\" or \"TRACK:end\"")
        out.append({key: place(ctx, t[key], f"{where}.{key}", tracks, ends_only=True) for key in CONNECTION_KEYS})
    return out


def switches(ctx, document, tracks, array_of_tables, check_keys, number) -> list[dict]:
    out, seen = [], set()
    for i, t in enumerate(array_of_tables(ctx, document, "switch")):
        where = f"switch[{i}]"
        check_keys(ctx, t, where, SWITCH_KEYS)
        name = t.get("name", f"switch{i + 1}")
        if not isinstance(name, str) or not name or name in seen:
            raise ctx.error(f"{where}.name", f"must be a new non-empty name, got {name!r}")
        seen.add(name)
        if "at" not in t:
            raise ctx.error(f"{where}.at", "missing: where the switch is, \"TRACK:S\" or \"TRACK:end\"")
        track, at = place(ctx, t["at"], f"{where}.at", tracks)
        raw = t.get("branches")
        if not isinstance(raw, list) or not 2 <= len(raw) <= 4:
            raise ctx.error(f"{where}.branches", f"must be 2 to 4 tracks (\"TRACK\" or \"TRACK:end\"), got {raw!r}")
        branches = []
        for j, b in enumerate(raw):
            text = b if isinstance(b, str) and ":" in b else f"{b}:start"
            branches.append(place(ctx, text, f"{where}.branches[{j}]", tracks, ends_only=True))
        words = [str(b) for b in raw]
        position = t.get("position", words[0])
        if position not in words:
            raise ctx.error(f"{where}.position", f"{position!r} is not one of the branches ({', '.join(words)})")
        throw = number(ctx, t, "throw_time", where, 5.0, ge=0.0, maximum=MAX_THROW_TIME, unit="s")
        clearance = number(ctx, t, "clearance", where, None, gt=0.0, maximum=MAX_LENGTH, unit="m")
        approach = number(ctx, t, "approach", where, 100.0, gt=0.0, maximum=MAX_LENGTH, unit="m")
        program = []
        prog = t.get("program", [])
        if not isinstance(prog, list):
            raise ctx.error(f"{where}.program", f"must be [[t, \"BRANCH\"], …], got {prog!r}")
        last = -1.0
        for j, item in enumerate(prog):
            ok = (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (int, float))
                  and not isinstance(item[0], bool) and math.isfinite(item[0]) and last <= item[0] <= MAX_PROGRAM_TIME)
            if not ok:
                raise ctx.error(f"{where}.program[{j}]", f"must be [t, \"BRANCH\"] with t (s) in order, got {item!r}")
            if item[1] not in words:
                raise ctx.error(f"{where}.program[{j}]", f"{item[1]!r} is not one of the branches ({', '.join(words)})")
            last = float(item[0])
            program.append((float(item[0]), words.index(item[1])))
        out.append(dict(name=name, track=track, at=at, branches=branches, branch_names=words,
                        position=words.index(position), throw_time=throw, clearance=clearance, program=program,
                        approach=approach,
                        text=t["at"]))
    return out


def start_at(ctx, cfg, i: int, tracks) -> None:
    """A segment list's ``{type = "start", at = "TRACK:end" | "TRACK:S"}``: the position, heading and
    pitch of that point of an earlier track (loaded), written into the start segment, and its roll
    (its bank against the vertical), held along the new track unless it has a ``roll`` of its own."""
    import numpy as np

    seg = cfg.segments[0]
    where = f"track[{i}].segments[0].at"
    k, at = place(ctx, seg["at"], where, tracks)
    if k >= i:
        raise ctx.error(where, f"track {tracks[k].name!r} must come before this one in the file")
    for key in ("position", "heading", "pitch"):
        if key in seg:
            raise ctx.error(f"track[{i}].segments[0].{key}", "not with 'at' (the point gives it)")
    tr = tracks[k].track
    s = {"start": 0.0, "end": tr.length}.get(at, at)
    if not 0.0 <= s <= tr.length:
        raise ctx.error(where, f"{s:g} m is off the track {tracks[k].name!r} (0 .. {tr.length:.6g} m)")
    f = tr.frames(np.array([float(s)]))
    T = f.tangent[0]
    seg.pop("at")
    seg["position"] = [float(x) for x in f.position[0]]
    seg["heading"] = float(np.degrees(np.arctan2(T[1], T[0])))
    seg["pitch"] = float(np.degrees(np.arcsin(np.clip(T[2], -1.0, 1.0))))
    if cfg.roll is None and f.roll[0] != 0.0:
        cfg.roll = [(0.0, float(f.roll[0]))]


def joined(connections, switches) -> set:
    """Pairs of track indices a train can run between directly: both ends of a connection, and a
    switch's through track and each of its other branches (either way round)."""
    pairs = set()
    for c in connections:
        pairs.add((c["a"][0], c["b"][0]))
    for sw in switches:
        for x, _ in sw["branches"]:
            if x != sw["track"]:
                pairs.add((sw["track"], x))
    return pairs | {(b, a) for a, b in pairs}


def routes(ctx, document, trains, tracks, array_of_tables, connections=(), switches=()) -> dict:
    """``[[train]] route = ["TRACK", …]``: train index → track indices (the first its own track),
    each track joined to the one before it (a connection or a switch)."""
    names = [t.name for t in tracks]
    pairs = joined(connections, switches)
    out = {}
    for i, t in enumerate(array_of_tables(ctx, document, "train")):
        if "route" not in t:
            continue
        where = f"train[{i}].route"
        r = t["route"]
        if not isinstance(r, list) or not r or not all(isinstance(x, str) for x in r):
            raise ctx.error(where, f"must be a list of track names, got {r!r}")
        for j, x in enumerate(r):
            if x not in names:
                raise ctx.error(f"{where}[{j}]", f"no track named {x!r} (tracks: {', '.join(names)})")
        if r[0] != trains[i].track:
            raise ctx.error(f"{where}[0]", f"a route starts on the train's track {trains[i].track!r}, got {r[0]!r}")
        out[i] = [names.index(x) for x in r]
        for j in range(1, len(r)):
            if (out[i][j - 1], out[i][j]) not in pairs:
                raise ctx.error(f"{where}[{j}]", f"track {r[j]!r} is not joined to {r[j - 1]!r} (the track before "
                                                 "it on the route) by a connection or a switch")
    return out


def check_route_blocks(ctx, trains, sections, tracks, routes) -> None:
    """Every block section on a track of a train's route holds that whole train (as every block
    section holds the trains that start on its track: ``load._check_blocks``): a train longer than
    the section would stand out of it into the block behind, which could then never be cleared."""
    for j, route in routes.items():
        tr = trains[j]
        for tk in dict.fromkeys(route):
            if tk == tr.track_index:
                continue                      # checked with the trains that start there
            for i, sec in enumerate(sections):
                if sec.block and sec.track_index == tk and sec.s_to - sec.s_from < tr.length - 1e-9:
                    raise ctx.error(f"section[{i}]", f"{sec.type} {sec.s_from:g}–{sec.s_to:g} m is a block section "
                                    f"shorter than train {tr.name!r} ({tr.length:.4g} m), whose route runs on track "
                                    f"{tracks[tk].name!r}: it could not hold it, and the block behind could never "
                                    "be cleared")
