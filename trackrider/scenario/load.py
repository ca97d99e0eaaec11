"""TOML scenario file → validated ``Scenario``.

Every problem is an ``InputError`` whose one-line message names the scenario
file, the key (``train[0].car.mass``) or the TOML line and column, and what is
wrong. Nothing is simulated and nothing is written here; curve files named by
the scenario are loaded (so geometry — start positions, sections — can be
checked against the real track lengths).
"""
from __future__ import annotations

import copy
import difflib
import math
from pathlib import Path
from typing import Any

from trackrider import limits
from trackrider.errors import InputError
from trackrider.physics import joints
from trackrider.settings import (
    ANCHOR,
    BOOLEAN,
    INTEGER,
    MAX_LENGTH,
    MAX_SPEED,
    NUMBER,
    STRING,
    VECTOR,
    Setting,
    build,
    check_value,
    describe,
    file_keys,
    is_real,
    joint_params,
)
from trackrider.scenario.model import (
    BodyConfig,
    BrakeSpec,
    CarSpec,
    CouplingSpec,
    DriverStep,
    JointConfig,
    OperationConfig,
    ResistanceConfig,
    Scenario,
    SectionConfig,
    SimulationConfig,
    TrackConfig,
    TrainConfig,
    VehicleSpec,
)

_REQUIRED = object()
_ABSENT = object()

TOP_KEYS = ("simulation", "track", "train", "section", "body", "joint", "resistance", "operation", "check",
            "connection", "switch", "title", "description")
#: a table's keys beyond its settings (trackrider.settings): names and references, nested tables
TRACK_KEYS = ("name", "curve", "segments", *file_keys(TrackConfig), "roll")
TRAIN_KEYS = ("name", "track", *file_keys(TrainConfig), "car", "coupling", "suspended", "color", "route", "vehicle",
              "brake", "driver")
JOINT_COMMON = ("type", "a", "b", "anchor_a", "anchor_b", "name", "cycle")

#: track segment types → (required keys, optional keys)
SEGMENT_KEYS = {
    "start": ((), ("position", "heading", "pitch", "speed", "heart", "at")),
    "straight": (("length",), ()),
    "arc": (("radius", "angle"), ("axis", "transition")),
    "helix": (("radius", "turns"), ("pitch", "transition")),
    "clothoid": (("length",), ("start_radius", "end_radius", "axis")),
    "loop": (("radius",), ("offset", "side", "transition", "entry_radius")),
    # force-vector design (trackrider/curves/force.py checks the schedules)
    "force": ((), ("length", "duration", "normal_g", "lateral_g", "roll_rate", "interp")),
    "geometric": ((), ("length", "duration", "pitch_rate", "yaw_rate", "roll_rate", "interp")),
}
DESIGN_SEGMENTS = ("force", "geometric")
SEGMENT_SIDES = ("left", "right")
LOOP_TRANSITIONS = ("none", "clothoid")   # as trackrider.curves.transitions (not imported here: scipy)
SEGMENT_AXES = ("pitch", "yaw")


# --------------------------------------------------------------------------- helpers


class _Ctx:
    """The file being read; turns problems into ``InputError``s that name it."""

    def __init__(self, path: Path):
        self.path = path

    def error(self, where: str, message: str) -> InputError:
        return InputError(message, path=self.path, where=where)


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_describe = describe


def _check_keys(ctx: _Ctx, table: dict, where: str, allowed) -> None:
    for key in table:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise ctx.error(f"{prefix}{key}", f"unknown key{_did_you_mean(key, allowed)}; "
                            f"allowed here: {', '.join(allowed)}")


def _table(ctx: _Ctx, value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ctx.error(where, f"must be a table, got {_describe(value)}")
    return value


def _array_of_tables(ctx: _Ctx, doc: dict, key: str, where: str = "") -> list[dict]:
    """``doc[key]``, an array of tables (``[[key]]``; in a table at ``where``: ``[[where.key]]``)."""
    loc = f"{where}.{key}" if where else key
    name = f"{where.split('[')[0]}.{key}" if where else key
    value = doc.get(key, [])
    if isinstance(value, dict):
        raise ctx.error(loc, f"must be an array of tables: write [[{name}]], not [{name}]")
    if not isinstance(value, list):
        raise ctx.error(loc, f"must be an array of tables ([[{name}]]), got {_describe(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ctx.error(f"{loc}[{i}]", f"must be a table, got {_describe(item)}")
    return value


_is_real = is_real


def _get(ctx: _Ctx, table: dict, key: str, where: str, default) -> tuple[str, Any]:
    """``(location, table[key])``; the value is ``_ABSENT`` when the key is missing and has a default."""
    loc = f"{where}.{key}" if where else key
    if key in table:
        return loc, table[key]
    if default is _REQUIRED:
        raise ctx.error(loc, "missing (required)")
    return loc, _ABSENT


def _number(ctx: _Ctx, table: dict, key: str, where: str, default=_REQUIRED, *, gt=None, ge=None,
            lt=None, le=None, integer=False, maximum=None, unit="") -> Any:
    """A number from ``table[key]`` with range checks; ``default`` when absent."""
    loc, value = _get(ctx, table, key, where, default)
    if value is _ABSENT:
        return default
    return check_value(Setting(INTEGER if integer else NUMBER, unit, gt, ge, lt, le, maximum), value, loc, ctx.path)


def _string(ctx: _Ctx, table: dict, key: str, where: str, default=_REQUIRED, choices=None) -> Any:
    loc, value = _get(ctx, table, key, where, default)
    if value is _ABSENT:
        return default
    return check_value(Setting(STRING, choices=None if choices is None else tuple(choices)), value, loc, ctx.path)


def _boolean(ctx: _Ctx, table: dict, key: str, where: str, default=_REQUIRED) -> Any:
    loc, value = _get(ctx, table, key, where, default)
    if value is _ABSENT:
        return default
    return check_value(Setting(BOOLEAN), value, loc, ctx.path)


def _vector(ctx: _Ctx, table: dict, key: str, where: str, n: int, default=_REQUIRED, *, positive=False,
            nonnegative=False, maximum=MAX_LENGTH, unit="") -> Any:
    loc, value = _get(ctx, table, key, where, default)
    if value is _ABSENT:
        return default
    if not isinstance(value, list):   # a file's array (a string is not one)
        raise ctx.error(loc, f"must be an array of {n} numbers{(' (' + unit + ')') if unit else ''}, "
                        f"got {_describe(value)}")
    return check_value(Setting(VECTOR, unit, maximum=maximum, n=n, positive=positive, nonnegative=nonnegative),
                       value, loc, ctx.path)


def _settings(ctx: _Ctx, cls, table: dict, where: str, **given):
    """The settings object ``cls`` (``trackrider.settings``) from a file's ``table`` at ``where``:
    its keys, units and bounds are the class's; ``given``: fields the table does not hold."""
    return build(cls, table, where, ctx.path, from_file=True, **given)


def _name(ctx: _Ctx, table: dict, where: str, default: str, seen: dict, what: str) -> str:
    name = _string(ctx, table, "name", where, default)
    if ":" in name:
        raise ctx.error(f"{where}.name", f"must not contain ':', got {name!r}")
    if name.strip().lower() == "world":
        raise ctx.error(f"{where}.name", "'world' is reserved for the fixed world in joints")
    if name in seen:
        raise ctx.error(f"{where}.name", f"{name!r} is already the name of {seen[name]}")
    seen[name] = f"{what}"
    return name


# --------------------------------------------------------------------------- reading the file


def read_toml(path: Path) -> dict:
    """Parse a TOML file; every failure is an ``InputError`` naming ``path`` (and TOML's line, column)."""
    from trackrider.inputs import read_toml as read

    return read(path, "scenario file")


# --------------------------------------------------------------------------- overrides


def apply_overrides(document: dict, overrides: dict | None, path: Path) -> dict:
    """Return a copy of ``document`` with dotted-key ``overrides`` applied.

    Keys address tables by name or index in arrays of tables:
    ``"train.red.car.mass"``, ``"train.0.start_s"``, ``"resistance.rolling"``,
    ``"simulation.duration"``. The key must exist in ``document``.
    """
    doc = copy.deepcopy(document)
    if not overrides:
        return doc
    if not isinstance(overrides, dict):
        raise InputError("overrides must be a dict of dotted keys to values", path=path)
    for dotted, value in overrides.items():
        where = f"override {dotted}"
        if not isinstance(dotted, str) or not dotted:
            raise InputError(f"override key must be a dotted string, got {dotted!r}", path=path)
        parts = dotted.split(".")
        node: Any = doc
        trail: list[str] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(node, list):
                found = None
                for j, item in enumerate(node):
                    if isinstance(item, dict) and item.get("name") == part:
                        found = j
                        break
                if found is None and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                    found = int(part)
                if found is None:
                    names = [str(t.get("name")) for t in node if isinstance(t, dict) and "name" in t]
                    raise InputError(f"no {'.'.join(trail)} named {part!r}{_did_you_mean(part, names)}"
                                     f" (names: {', '.join(names) or 'none'})", path=path, where=where)
                if last:
                    node[found] = value
                else:
                    node = node[found]
            elif isinstance(node, dict):
                if part not in node:
                    raise InputError(f"the scenario has no key {'.'.join(trail + [part])!r}"
                                     f"{_did_you_mean(part, node.keys())}", path=path, where=where)
                if last:
                    node[part] = value
                else:
                    node = node[part]
            else:
                raise InputError(f"{'.'.join(trail)!r} is a value, not a table", path=path, where=where)
            trail.append(part)
    return doc


# --------------------------------------------------------------------------- the schema


def _simulation(ctx: _Ctx, doc: dict) -> SimulationConfig:
    if "simulation" not in doc:
        raise ctx.error("simulation", "missing: a [simulation] table with at least duration is required")
    return _settings(ctx, SimulationConfig, _table(ctx, doc["simulation"], "simulation"), "simulation")


def _segment(ctx: _Ctx, seg: Any, where: str, index: int) -> dict:
    seg = _table(ctx, seg, where)
    kind = _string(ctx, seg, "type", where, choices=tuple(SEGMENT_KEYS))
    if kind == "clothoid" and "start_radius" not in seg and "end_radius" not in seg:
        raise ctx.error(f"{where}.end_radius", "a clothoid needs start_radius or end_radius (m)")
    if kind == "start" and index != 0:
        raise ctx.error(f"{where}.type", "a 'start' segment may only be the first one")
    required, optional = SEGMENT_KEYS[kind]
    _check_keys(ctx, seg, where, ("type",) + required + optional)
    if kind in DESIGN_SEGMENTS:  # checked by the designer; kept as written (knots and all)
        from trackrider.curves.force import parse_design_segment

        try:
            parse_design_segment(seg, index, source=ctx.path)
        except InputError as exc:
            raise ctx.error(where + (exc.where or "").partition("]")[2], exc.detail) from None
        return copy.deepcopy(seg)
    out: dict = {"type": kind}
    for key in required + optional:
        if key not in seg and key not in required:
            continue
        if key == "position":
            out[key] = list(_vector(ctx, seg, key, where, 3, unit="m"))
        elif key == "axis":
            out[key] = _string(ctx, seg, key, where, choices=SEGMENT_AXES)
        elif key == "side":
            out[key] = _string(ctx, seg, key, where, choices=SEGMENT_SIDES)
        elif key == "transition" and kind == "loop":
            out[key] = _string(ctx, seg, key, where, choices=LOOP_TRANSITIONS)
        elif key == "transition":   # an arc's or helix's clothoids in and out, m each
            out[key] = _number(ctx, seg, key, where, ge=0, maximum=MAX_LENGTH, unit="m")
        elif key == "entry_radius":
            out[key] = _number(ctx, seg, key, where, gt=0, maximum=MAX_LENGTH, unit="m")
        elif key in ("length", "radius"):
            out[key] = _number(ctx, seg, key, where, gt=0, maximum=MAX_LENGTH, unit="m")
        elif key == "offset":
            out[key] = _number(ctx, seg, key, where, ge=0, maximum=MAX_LENGTH, unit="m")
        elif key in ("start_radius", "end_radius"):  # signed: + turns left / up
            r = _number(ctx, seg, key, where, maximum=MAX_LENGTH, unit="m")
            if r == 0:
                raise ctx.error(f"{where}.{key}", "must not be 0 (leave it out for a straight end)")
            out[key] = r
        elif key == "turns":  # signed: + turns left
            n = _number(ctx, seg, key, where, maximum=1000)
            if n == 0:
                raise ctx.error(f"{where}.turns", "must not be 0")
            out[key] = n
        elif key == "angle":
            a = _number(ctx, seg, key, where, maximum=36000, unit="degrees")
            if a == 0:
                raise ctx.error(f"{where}.angle", "must not be 0")
            out[key] = a
        elif key in ("heading",):
            out[key] = _number(ctx, seg, key, where, maximum=36000, unit="degrees")
        elif key == "at":   # a point of another track (scenario/network.py start_at)
            out[key] = _string(ctx, seg, key, where)
        elif key == "pitch" and kind == "start":
            out[key] = _number(ctx, seg, key, where, ge=-90, le=90, unit="degrees")
        elif key == "speed":  # design speed at the heartline
            out[key] = _number(ctx, seg, key, where, ge=0.5, maximum=MAX_SPEED, unit="m/s")
        elif key == "heart":  # heartline above the rail
            out[key] = _number(ctx, seg, key, where, ge=0, le=100, unit="m")
        elif key == "pitch":  # helix: rise per turn, m (signed)
            out[key] = _number(ctx, seg, key, where, maximum=MAX_LENGTH, unit="m")
    return out


def _segment_length(seg: dict) -> float:
    """Arc length of a validated segment, m."""
    kind = seg["type"]
    if kind in ("straight", "clothoid"):
        return seg["length"]
    if kind == "arc":
        return seg["radius"] * math.radians(abs(seg["angle"]))
    if kind == "helix":
        c = seg.get("pitch", 0.0) / (2 * math.pi)
        return 2 * math.pi * math.hypot(seg["radius"], c) * abs(seg["turns"])
    if kind == "loop" and seg.get("transition") == "clothoid":
        from trackrider.curves.transitions import loop_length

        return loop_length(seg["radius"], seg.get("offset", 0.3 * seg["radius"]),
                           seg.get("entry_radius", math.inf))
    if kind == "loop":
        return 2 * math.pi * seg["radius"] + seg.get("offset", 0.0)
    if kind in DESIGN_SEGMENTS:  # a duration segment's length is known once designed (force.py limits it)
        return float(seg.get("length", 0.0))
    return 0.0


def _roll(ctx: _Ctx, t: dict, where: str):
    if "roll" not in t:
        return None
    value = t["roll"]
    loc = f"{where}.roll"
    if not isinstance(value, list):
        raise ctx.error(loc, f"must be an array of [s, degrees] pairs, got {_describe(value)}")
    knots = []
    for i, knot in enumerate(value):
        if (not isinstance(knot, list) or len(knot) != 2 or not all(_is_real(v) for v in knot)
                or not all(math.isfinite(float(v)) for v in knot)):
            raise ctx.error(f"{loc}[{i}]", f"must be a pair [s, degrees] of finite numbers, got {_describe(knot)}")
        s, deg = float(knot[0]), float(knot[1])
        if knots and not s > knots[-1][0]:
            raise ctx.error(f"{loc}[{i}]", f"knots must have increasing s, got {s:g} after {knots[-1][0]:g}")
        if abs(deg) > 36000:
            raise ctx.error(f"{loc}[{i}]", f"roll {deg:g} degrees is absurd")
        knots.append((s, deg))
    return knots


def _colour(ctx: _Ctx, table: dict, key: str, where: str) -> Any:
    """A colour name or ``#rrggbb`` (``trackrider.colours``) as RGB 0..255, or None when absent."""
    from trackrider.colours import NAMED, parse_colour

    value = _string(ctx, table, key, where, None)
    if value is None:
        return None
    rgb = parse_colour(value)
    if rgb is None:
        raise ctx.error(f"{where}.{key}", f"must be a colour name ({', '.join(sorted(NAMED))}) or hex like "
                        f"'#1e5adc', got {value!r}")
    return rgb


def _track(ctx: _Ctx, t: dict, i: int, seen: dict) -> TrackConfig:
    where = f"track[{i}]"
    _check_keys(ctx, t, where, TRACK_KEYS)
    name = _name(ctx, t, where, "main" if i == 0 else f"track{i + 1}", seen, f"track[{i}]")
    has_curve, has_segments = "curve" in t, "segments" in t
    if has_curve == has_segments:
        raise ctx.error(where, "needs exactly one of 'curve' (a file) or 'segments'"
                        + (", not both" if has_curve else ""))
    curve = segments = None
    if has_curve:
        rel = _string(ctx, t, "curve", where)
        if "\x00" in rel:
            raise ctx.error(f"{where}.curve", f"a file name cannot hold a NUL character, got {rel!r}")
        curve = (ctx.path.parent / rel).resolve()
        if not curve.exists():
            raise ctx.error(f"{where}.curve", f"curve file not found: {curve}")
        if not curve.is_file():
            kind = "a directory" if curve.is_dir() else "not a regular file (a device, pipe or socket)"
            raise ctx.error(f"{where}.curve", f"is {kind}, not a curve file: {curve}")
    else:
        value = t["segments"]
        if not isinstance(value, list) or not value:
            raise ctx.error(f"{where}.segments", f"must be a non-empty array of tables, got {_describe(value)}")
        if len(value) > limits.left("segments"):        # each segment costs its own arrays
            raise ctx.error(f"{where}.segments", f"{len(value):,} segments are more than a scenario may have "
                            f"({limits.limit_text('segments')})")
        limits.spend("segments", len(value))
        segments = [_segment(ctx, seg, f"{where}.segments[{j}]", j) for j, seg in enumerate(value)]
        if all(seg["type"] == "start" for seg in segments):
            raise ctx.error(f"{where}.segments", "has no segment after 'start'")
        design = any(seg["type"] in DESIGN_SEGMENTS for seg in segments)
        if design:
            _check_design_track(ctx, t, where, segments)
        total = sum(_segment_length(seg) for seg in segments)
        if total > limits.left("length"):
            raise ctx.error(f"{where}.segments", f"the track would be {total / 1000:.4g} km long "
                            f"({limits.limit_text('length')})")
        if not design:                 # a design's length is known once designed (spent when loaded)
            limits.spend("length", total)
    if has_segments and "format" in t:
        raise ctx.error(f"{where}.format", "applies to a curve file, not to segments")
    own = {k: v for k, v in t.items() if k in file_keys(TrackConfig)}
    if not has_curve:
        own.setdefault("closed", False)
    return _settings(ctx, TrackConfig, own, where, name=name, curve=curve, segments=segments,
                     roll=_roll(ctx, t, where))


def _check_design_track(ctx: _Ctx, t: dict, where: str, segments: list) -> None:
    """A force-vector design: a start with the design speed; no frame, roll or closing."""
    for key in ("frame", "roll"):
        if key in t:
            raise ctx.error(f"{where}.{key}", "does not apply to a track with force or geometric segments "
                            "(its frame is the design's)")
    if t.get("closed") is True:
        raise ctx.error(f"{where}.closed", "a track with force or geometric segments is open")
    if segments[0]["type"] != "start" or "speed" not in segments[0]:
        raise ctx.error(f"{where}.segments[0]", "a track with force or geometric segments needs a first "
                        "{type = \"start\", speed = ...} (the design speed at the heartline, m/s)")


def _design_track(ctx: _Ctx, cfg: TrackConfig, where: str, design: dict):
    """Build a force-vector design with the scenario's gravity and (nl2-mode) resistance."""
    import warnings

    from trackrider.curves.track import design_track

    res = design["resistance"]
    nl2 = res.mode == "nl2"
    if not nl2 and (res.rolling or res.drag_area or res.davis):
        warnings.warn(f"{ctx.path}: {where}.segments: the force-vector design is frictionless: the "
                      f"[resistance] of mode 'physical' is left out of its speeds (mode = 'nl2' designs with "
                      f"'rolling' and 'nl2_drag')", UserWarning, stacklevel=2)
    return design_track(cfg.segments, gravity=design["gravity"], rolling=res.rolling if nl2 else 0.0,
                        nl2_drag=res.nl2_drag if nl2 else 0.0, source=ctx.path, label=f"{where}.segments")


def _load_track(ctx: _Ctx, cfg: TrackConfig, i: int, design: dict | None = None) -> None:
    """Load the curve / build the segments; errors name the file and key.

    ``design``: ``gravity`` and ``resistance`` for force-vector designs.
    """
    from trackrider import curves  # geometry is heavy-ish (scipy): import on use
    from trackrider.curves.segments import is_design

    where = f"track[{i}]"
    try:
        if cfg.segments is not None and is_design(cfg.segments):
            design = design or {"gravity": SimulationConfig.gravity, "resistance": ResistanceConfig()}
            track = _design_track(ctx, cfg, where, design)
        elif cfg.curve is not None:
            track = curves.load_curve(cfg.curve, format=cfg.format, frame=cfg.frame, closed=cfg.closed, roll=cfg.roll)
        else:
            track = curves.Track.from_segments(cfg.segments, frame=cfg.frame or "up", roll=cfg.roll,
                                               closed=bool(cfg.closed), source=ctx.path)
    except InputError as exc:
        if exc.path is None or (cfg.curve is None and exc.path == str(ctx.path)):
            sub = f"{where}.{exc.where}" if exc.where else where
            raise InputError(exc.detail, path=ctx.path, where=sub) from None
        raise
    except (ValueError, TypeError, ArithmeticError, IndexError, KeyError, OSError) as exc:
        source = str(cfg.curve) if cfg.curve is not None else f"{where}.segments"
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ctx.error(where, f"unusable track ({source}): {text}") from None
    length = float(track.length)
    if not (math.isfinite(length) and length > 0):
        raise ctx.error(where, f"track has no length ({length})")
    if cfg.segments is None or is_design(cfg.segments):     # a segment track's length is spent as it was read
        if length > limits.left("length"):
            raise ctx.error(where, f"the track is {length / 1000:.4g} km long ({limits.limit_text('length')})")
        limits.spend("length", length)
    points = getattr(track, "points", None)
    limits.spend("points", 0 if points is None else len(points))
    limits.spend("nodes", len(getattr(track, "_node_s", ())))
    cfg.track = track
    cfg.length = length
    if cfg.closed is None:
        cfg.closed = bool(getattr(track, "closed", False))
    if cfg.roll:
        for j, (s, _) in enumerate(cfg.roll):
            if s < 0 or s > length + 1e-9:
                raise ctx.error(f"{where}.roll[{j}]", f"s = {s:g} m is off the track (0 .. {length:.6g} m)")


def _train(ctx: _Ctx, t: dict, i: int, seen: dict, tracks: list[TrackConfig]) -> TrainConfig:
    where = f"train[{i}]"
    _check_keys(ctx, t, where, TRAIN_KEYS)
    name = _name(ctx, t, where, f"train{i + 1}", seen, f"train[{i}]")
    track_names = [tr.name for tr in tracks]
    default_track = track_names[0] if len(track_names) == 1 else _REQUIRED
    track = _string(ctx, t, "track", where, default_track)
    if track not in track_names:
        raise ctx.error(f"{where}.track", f"no track named {track!r}{_did_you_mean(track, track_names)} "
                        f"(tracks: {', '.join(track_names) or 'none'})")
    suspended = _boolean(ctx, t, "suspended", where, False)
    vehicles = None
    if "vehicle" in t:
        for key in ("car", "cars"):
            if key in t:
                raise ctx.error(f"{where}.{key}", "give either [[train.vehicle]] blocks or [train.car] and cars, "
                                "not both")
        vehicles = [_vehicle(ctx, v, f"{where}.vehicle[{i}]", suspended)
                    for i, v in enumerate(_array_of_tables(ctx, t, "vehicle", where))]
        if not vehicles:
            raise ctx.error(f"{where}.vehicle", "needs at least one [[train.vehicle]] table")
        car = vehicles[0]
    else:
        if "car" not in t:
            raise ctx.error(f"{where}.car", "missing: a [train.car] table with at least mass is required "
                            "(or [[train.vehicle]] blocks)")
        car = _vehicle(ctx, t["car"], f"{where}.car", suspended, CarSpec)
    coupling = _settings(ctx, CouplingSpec, _table(ctx, t.get("coupling", {}), f"{where}.coupling"),
                         f"{where}.coupling")
    brake = None
    if "brake" in t:
        brake = _settings(ctx, BrakeSpec, _table(ctx, t["brake"], f"{where}.brake"), f"{where}.brake")
    driver = [_settings(ctx, DriverStep, d, f"{where}.driver[{i}]")
              for i, d in enumerate(_array_of_tables(ctx, t, "driver", where))]
    own = {k: v for k, v in t.items() if k in file_keys(TrainConfig)}
    return _settings(ctx, TrainConfig, own, where, name=name, track=track, track_index=track_names.index(track),
                     car=car, coupling=coupling, color=_colour(ctx, t, "color", where), vehicles=vehicles,
                     brake=brake, driver=driver)


def _vehicle(ctx: _Ctx, c: Any, where: str, suspended: bool, cls=VehicleSpec):
    """A ``[train.car]`` (``CarSpec``) or a ``[[train.vehicle]]`` (``VehicleSpec``) table at ``where``."""
    c = _table(ctx, c, where)
    car = _settings(ctx, cls, c, where, suspended=suspended)
    if not suspended:
        for key in CarSpec.SUSPENDED_ONLY:
            if key in c:
                raise ctx.error(f"{where}.{key}", "applies to suspended trains only: add suspended = true to the "
                                "[[train]]")
    if car.bogies == "none":
        for key in CarSpec.BOGIE_ONLY:
            if key in c:
                raise ctx.error(f"{where}.{key}", "applies to cars on bogies only: add bogies = \"two\"")
    return car


def _check_train_geometry(ctx: _Ctx, train: TrainConfig, i: int, track: TrackConfig) -> None:
    where = f"train[{i}]"
    L = track.length
    span = train.start_s - train.car_s()[-1]
    if track.closed:
        need = train.length + train.coupling.gap
        if need > L:
            raise ctx.error(f"{where}.cars", f"{train.cars} cars ({train.length:.6g} m) with "
                            f"{train.coupling.gap:g} m gaps need {need:.6g} m, longer than "
                            f"the closed track {track.name!r} ({L:.6g} m)")
        if not 0 <= train.start_s <= L:
            raise ctx.error(f"{where}.start_s", f"{train.start_s:g} m is off the track {track.name!r} (0 .. {L:.6g} m)")
        return
    if not 0 <= train.start_s <= L:
        raise ctx.error(f"{where}.start_s", f"{train.start_s:g} m is off the track {track.name!r} (0 .. {L:.6g} m)")
    if train.start_s - span < -1e-9:
        cars = (f"cars {train.car.length:g} m" if train.vehicles is None else "vehicles")
        raise ctx.error(f"{where}.start_s", f"the train does not fit on the open track {track.name!r}: "
                        f"{train.cars} cars behind the lead car need start_s ≥ {span:.6g} m "
                        f"({cars} + gaps {train.coupling.gap:g} m), got {train.start_s:g}")


def _section(ctx: _Ctx, t: dict, i: int, tracks: list[TrackConfig]) -> SectionConfig:
    where = f"section[{i}]"
    _check_keys(ctx, t, where, tuple(file_keys(SectionConfig)))
    track_names = [tr.name for tr in tracks]
    track = _string(ctx, t, "track", where, track_names[0] if len(track_names) == 1 else _REQUIRED)
    if track not in track_names:
        raise ctx.error(f"{where}.track", f"no track named {track!r}{_did_you_mean(track, track_names)} "
                        f"(tracks: {', '.join(track_names) or 'none'})")
    return _settings(ctx, SectionConfig, {k: v for k, v in t.items() if k != "track"}, where, track=track,
                     track_index=track_names.index(track))


def _operation(ctx: _Ctx, doc: dict) -> OperationConfig:
    return _settings(ctx, OperationConfig, _table(ctx, doc.get("operation", {}), "operation"), "operation")


def _check_blocks(ctx: _Ctx, trains: list, sections: list, tracks: list) -> None:
    """Block sections hold whole trains, there are more blocks than trains, and trains start
    in different blocks (``trackrider.physics.blocks``)."""
    from trackrider.physics.blocks import block_order, blocks_along

    for tk, track in enumerate(tracks):
        blocks = sorted((sec.s_from, i) for i, sec in enumerate(sections) if sec.block and sec.track_index == tk)
        if not blocks:
            continue
        on = [(i, tr) for i, tr in enumerate(trains) if tr.track_index == tk]
        for i, sec in ((i, sections[i]) for _, i in blocks):
            for j, tr in on:
                length = tr.length
                if sec.s_to - sec.s_from < length - 1e-9:
                    raise ctx.error(f"section[{i}]", f"{sec.type} {sec.s_from:g}–{sec.s_to:g} m is a block section "
                                    f"shorter than train {tr.name!r} ({length:.4g} m): it could not hold it")
        if len(on) >= len(blocks) and len(on) > 1:
            j, tr = on[-1]
            raise ctx.error(f"train[{j}]", f"{len(on)} trains on track {track.name!r} need more than "
                            f"{len(blocks)} blocks (one block must stay free): add block sections or remove "
                            f"train {tr.name!r}")
        closed = bool(track.track.closed) if track.track is not None else bool(track.closed)
        L = track.length
        order = block_order([s for s, _ in blocks], [sections[i].type for _, i in blocks], closed)
        blocks = [blocks[j] for j in order]
        starts = [s for s, _ in blocks]
        seen: dict = {}
        for j, tr in on:
            for k in blocks_along(starts, L if closed else 0.0, tr.car_s()).tolist():
                if k < 0:
                    continue
                if seen.setdefault(k, j) != j:
                    sec = sections[blocks[k][1]]
                    raise ctx.error(f"train[{j}].start_s", f"train {tr.name!r} starts in the block of "
                                    f"{sec.name or f'section[{blocks[k][1]}]'} ({sec.type} from {sec.s_from:g} m), "
                                    f"where train {trains[seen[k]].name!r} is: trains start in different blocks")


def _check_network_blocks(ctx: _Ctx, trains: list, sections: list, tracks: list, connections, switches) -> None:
    """On a track network, trains start in different blocks — the parts of the network its block
    sections cut it into (``blocks.Paths.parts``, the ``block`` column), which reach across tracks.
    A network the physics would refuse (ends that do not meet) is left for ``build_world`` to name."""
    from types import SimpleNamespace

    from trackrider.physics import World
    from trackrider.physics.blocks import Paths
    from trackrider.physics.network import Network

    blocks = [i for i, sec in enumerate(sections) if sec.block]
    if not blocks or len(trains) < 2:
        return
    w = World()
    carried: dict = {}          # the bodies tracks ride on (a moving track's ends join only while aligned)
    try:
        for tr in tracks:
            if tr.body != "world" and tr.body not in carried:
                carried[tr.body] = w.add_body(tr.body, 1.0, size=(1.0, 1.0, 1.0), position=(0.0, 0.0, 0.0))
            w.add_track(tr.track, gauge=tr.gauge, name=tr.name, body=carried.get(tr.body))
        for c in connections:
            w.add_connection(c["a"], c["b"])
        for sw in switches:
            w.add_switch(sw["name"], sw["track"], sw["at"], sw["branches"], position=sw["position"])
    except InputError:
        return
    tables = Network(w._connections, w._switches, w._tracks, 1.0).tables(len(tracks), 1.0, [])
    table = [dict(track=sec.track_index, **{"from": sec.s_from, "to": sec.s_to}) for sec in sections]
    paths = Paths(SimpleNamespace(**tables), [t.length for t in tracks], [t.track.closed for t in tracks],
                  table, blocks)
    parts, cuts = paths.parts(blocks)
    seen: dict = {}
    for j, tr in enumerate(trains):
        L = tracks[tr.track_index].length
        for s in tr.car_s():
            p = Paths.part_at(cuts, tr.track_index, s % L if tracks[tr.track_index].track.closed else s)
            if p >= 0 and seen.setdefault(p, j) != j:
                names = " and ".join(sections[i].name or f"section[{i}]" for i in parts[p])
                raise ctx.error(f"train[{j}].start_s", f"train {tr.name!r} starts in the block of {names} "
                                f"(on the network), where train {trains[seen[p]].name!r} is: trains start "
                                "in different blocks")


def _check_section_overlaps(ctx: _Ctx, sections: list[SectionConfig]) -> None:
    """Two sections may not act on the same metres of one track (touching ends are fine)."""
    by_track: dict = {}
    for i, sec in enumerate(sections):
        by_track.setdefault(sec.track_index, []).append((sec.s_from, sec.s_to, i))
    for items in by_track.values():
        items.sort()
        for (f0, t0, i0), (f1, t1, i1) in zip(items, items[1:]):
            if f1 < t0 - 1e-9:
                a, b = sorted((i0, i1))
                sa, sb = sections[a], sections[b]
                raise ctx.error(f"section[{b}]", f"{sb.type} {sb.s_from:g}–{sb.s_to:g} m overlaps section[{a}] "
                                f"({sa.type} {sa.s_from:g}–{sa.s_to:g} m) on track {sb.track!r}: sections may "
                                "touch (one's to at the other's from) but not overlap")


def _body(ctx: _Ctx, t: dict, i: int, seen: dict) -> BodyConfig:
    where = f"body[{i}]"
    _check_keys(ctx, t, where, ("name",) + tuple(file_keys(BodyConfig)))
    name = _name(ctx, t, where, _REQUIRED, seen, f"body[{i}]")
    return _settings(ctx, BodyConfig, {k: v for k, v in t.items() if k != "name"}, where, name=name)


def _joint_end(ctx: _Ctx, word: str, loc: str, trains: list[TrainConfig], bodies: list[BodyConfig]):
    if word.strip().lower() == "world":
        return "world"
    train_names = [t.name for t in trains]
    body_names = [b.name for b in bodies]
    if ":" in word:
        tname, _, car = word.partition(":")
        if tname not in train_names:
            raise ctx.error(loc, f"no train named {tname!r}{_did_you_mean(tname, train_names)} "
                            f"(trains: {', '.join(train_names) or 'none'})")
        train = trains[train_names.index(tname)]
        if not car.strip().isdigit() or not 1 <= int(car) <= train.cars:
            raise ctx.error(loc, f"car must be a number 1 .. {train.cars} (train {tname!r} has {train.cars} "
                            f"car{'s' if train.cars > 1 else ''}), got {car!r}")
        return ("car", train_names.index(tname), int(car) - 1)
    if word in body_names:
        return ("body", body_names.index(word))
    if word in train_names:
        raise ctx.error(loc, f"{word!r} is a train: name a car as \"{word}:1\" (1 = lead car)")
    raise ctx.error(loc, f"{word!r} is not \"train:car\", a body's name or \"world\""
                    f"{_did_you_mean(word, body_names + [n + ':1' for n in train_names] + ['world'])}")


def _joint(ctx: _Ctx, t: dict, i: int, trains: list[TrainConfig], bodies: list[BodyConfig]) -> JointConfig:
    where = f"joint[{i}]"
    kind = _string(ctx, t, "type", where, choices=joints.USER_KINDS)
    module = joints.kind(kind)
    _check_keys(ctx, t, where, JOINT_COMMON + tuple(file_keys(module.Settings)))
    a = _string(ctx, t, "a", where)
    b = _string(ctx, t, "b", where)
    end_a = _joint_end(ctx, a, f"{where}.a", trains, bodies)
    end_b = _joint_end(ctx, b, f"{where}.b", trains, bodies)
    if end_a == end_b:
        raise ctx.error(f"{where}.b", f"joins {a!r} to itself")
    if end_a == "world" and end_b == "world":
        raise ctx.error(f"{where}.b", "joins the world to the world")
    spec = _settings(ctx, module.Settings, {k: v for k, v in t.items() if k not in JOINT_COMMON}, where)
    if module.NO_WORLD_END and "world" in (end_a, end_b):
        raise ctx.error(where, module.NO_WORLD_END)
    params = joint_params(spec)
    if "cycle" in t and kind not in ("hinge", "prismatic"):
        raise ctx.error(f"{where}.cycle", f"holds and releases a hinge or a prismatic joint, not a {kind}")
    return JointConfig(
        type=kind, a=a, b=b, end_a=end_a, end_b=end_b,
        name=_string(ctx, t, "name", where, f"joint[{i}]"), cycle=t.get("cycle"),
        anchor_a=None if "anchor_a" not in t else check_value(ANCHOR, t["anchor_a"], f"{where}.anchor_a", ctx.path),
        anchor_b=None if "anchor_b" not in t else check_value(ANCHOR, t["anchor_b"], f"{where}.anchor_b", ctx.path),
        params=params,
    )


def _check_work(ctx: _Ctx, simulation, trains: list, bodies: list) -> None:
    """The cars and bodies, and the output they would record, within the limits (``trackrider.limits``)."""
    n = limits.entities(trains, bodies)
    if n > limits.MAX_ENTITIES:
        running, where = 0, "body"
        for i, tr in enumerate(trains):
            running += limits.entities([tr], [])
            if running > limits.MAX_ENTITIES:
                where = f"train[{i}].cars"
                break
        raise ctx.error(where, f"{n:,} cars and bodies (a suspended car counts twice, a car on bogies three times) are more than a scenario may "
                        f"have ({limits.MAX_ENTITIES:,})")
    limits.check_output(simulation, n, path=ctx.path)


def _check_carriers(ctx: _Ctx, tracks, trains, bodies, joints) -> None:
    """Each track's ``body``: "world" or a ``[[body]]``; a body that carries a track and has no joint
    to anything falls with it (a warning); joint names are unique."""
    import warnings

    names = [b.name for b in bodies]
    for i, t in enumerate(tracks):
        if t.body == "world":
            continue
        if t.body not in names:
            what = " is a train: a track is carried by a [[body]]" if t.body in [tr.name for tr in trains] else \
                f" is not a [[body]]{_did_you_mean(t.body, names + ['world'])} (bodies: {', '.join(names) or 'none'})"
            raise ctx.error(f"track[{i}].body", f"{t.body!r}{what}")
        k = names.index(t.body)
        if not any(("body", k) in (j.end_a, j.end_b) for j in joints):
            warnings.warn(f"{ctx.path}: track[{i}].body: {t.body!r} carries the track but no [[joint]] holds it: "
                          "it falls freely with the cars on it")
    seen: dict = {}
    for i, j in enumerate(joints):
        if seen.setdefault(j.name, i) != i:
            raise ctx.error(f"joint[{i}].name", f"{j.name!r} is already the name of joint[{seen[j.name]}]")


def _resistance(ctx: _Ctx, doc: dict) -> ResistanceConfig:
    return _settings(ctx, ResistanceConfig, _table(ctx, doc.get("resistance", {}), "resistance"), "resistance")


# --------------------------------------------------------------------------- entry point


def load_scenario(path, overrides: dict | None = None, *, load_tracks: bool = True) -> Scenario:
    """Read, validate and return the scenario in TOML file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The scenario file. Curve paths inside are relative to its folder.
    overrides : dict, optional
        Dotted keys → values applied to the TOML document before validation,
        e.g. ``{"train.red.car.mass": 500.0, "simulation.duration": 10}``
        (tables in arrays addressed by ``name`` or index). Each key must
        exist in the file.
    load_tracks : bool, default True
        Load curve files / build segment tracks and check the geometry
        (start positions, sections) against them.

    Raises
    ------
    InputError
        Anything wrong, with the file and key (or TOML line and column).
    """
    with limits.together():       # the geometry limits hold for the scenario's tracks together
        return _load_scenario(path, overrides, load_tracks)


def _load_scenario(path, overrides, load_tracks) -> Scenario:
    path = Path(path).expanduser().absolute()
    ctx = _Ctx(path)
    document = apply_overrides(read_toml(path), overrides, path)
    if "sweep" in document and "simulation" not in document:
        raise ctx.error("sweep", "this is a sweep file, not a scenario: run it with 'trackrider sweep'")
    _check_keys(ctx, document, "", TOP_KEYS)
    title = _string(ctx, document, "title", "", "")
    description = _string(ctx, document, "description", "", "")
    simulation = _simulation(ctx, document)

    track_tables = _array_of_tables(ctx, document, "track")
    if not track_tables and _array_of_tables(ctx, document, "train"):
        raise ctx.error("track", "missing: trains need at least one [[track]]")
    track_names: dict = {}
    tracks = [_track(ctx, t, i, track_names) for i, t in enumerate(track_tables)]
    entity_names: dict = {}
    trains = [_train(ctx, t, i, entity_names, tracks) for i, t in enumerate(_array_of_tables(ctx, document, "train"))]
    sections = [_section(ctx, t, i, tracks) for i, t in enumerate(_array_of_tables(ctx, document, "section"))]
    section_names: dict = {}
    for i, sec in enumerate(sections):
        if sec.name and section_names.setdefault(sec.name, i) != i:
            raise ctx.error(f"section[{i}].name", f"{sec.name!r} is already the name of "
                                                  f"section[{section_names[sec.name]}]")
    bodies = [_body(ctx, t, i, entity_names) for i, t in enumerate(_array_of_tables(ctx, document, "body"))]
    if not trains and not bodies:
        raise ctx.error("train", "the scenario has nothing to simulate: add a [[train]] or a [[body]]")
    _check_work(ctx, simulation, trains, bodies)
    joints = [_joint(ctx, t, i, trains, bodies) for i, t in enumerate(_array_of_tables(ctx, document, "joint"))]
    _check_carriers(ctx, tracks, trains, bodies, joints)
    resistance = _resistance(ctx, document)
    operation = _operation(ctx, document)
    from trackrider.check.config import load_check

    check = load_check(_table(ctx, document.get("check", {}), "check"), path, ctx.error)

    _check_section_overlaps(ctx, sections)
    from trackrider.scenario import network as net

    connections = net.connections(ctx, document, tracks, _array_of_tables, _check_keys)
    switches = net.switches(ctx, document, tracks, _array_of_tables, _check_keys, _number)
    routes = net.routes(ctx, document, trains, tracks, _array_of_tables, connections, switches)
    notes: list = []
    if load_tracks:
        import warnings

        for i, track in enumerate(tracks):
            if track.segments and "at" in track.segments[0]:
                net.start_at(ctx, track, i, tracks)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                _load_track(ctx, track, i, {"gravity": simulation.gravity, "resistance": resistance})
            for w in caught:   # kept for summary.json, and shown as before
                notes.append(" ".join(str(w.message).split()))
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for i, train in enumerate(trains):
            _check_train_geometry(ctx, train, i, tracks[train.track_index])
            too_long = train.step_error(simulation.dt)
            if too_long:
                raise ctx.error(f"train[{i}].coupling.stiffness", too_long)
        for i, sec in enumerate(sections):
            L = tracks[sec.track_index].length
            if sec.s_from < 0 or sec.s_from >= L:
                raise ctx.error(f"section[{i}].from", f"{sec.s_from:g} m is off the track {sec.track!r} "
                                f"(0 .. {L:.6g} m)")
            if sec.s_to > L + 1e-6:
                raise ctx.error(f"section[{i}].to", f"{sec.s_to:g} m is beyond the end of the track "
                                f"{sec.track!r} ({L:.6g} m)")
        _check_blocks(ctx, trains, sections, tracks)
        net.check_route_blocks(ctx, trains, sections, tracks, routes)
        if connections or switches:
            _check_network_blocks(ctx, trains, sections, tracks, connections, switches)

    return Scenario(path=path, simulation=simulation, tracks=tracks, trains=trains, sections=sections,
                    bodies=bodies, joints=joints, resistance=resistance, operation=operation, title=title,
                    description=description, check=check, connections=connections, switches=switches, routes=routes,
                    document=document, warnings=notes, overrides=dict(overrides or {}))
