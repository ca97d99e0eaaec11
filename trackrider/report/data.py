"""What a report reads: a results folder as arrays per car, the track and its sections.

``load_run(results_dir)`` reads ``summary.json`` and ``timeseries.csv`` and, when
the scenario file named in ``summary.json`` still loads, the tracks (for the
height profile and the layout) and the sections. Without the scenario the
report draws the track from the lead car's recorded path and shows no sections.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trackrider.errors import InputError

#: standard gravity used to turn the recorded accelerations into forces, m/s²
G0 = 9.81


@dataclass
class Section:
    """A section of a track: ``label`` (``section_labels``), ``type``, [s_from, s_to] m."""

    label: str
    type: str
    track: str
    s_from: float
    s_to: float
    block: bool = False


@dataclass
class TrainData:
    """The recorded series of one train, arrays ``(m instants, n cars)``, cars lead first.

    ``track_s``/``track_xyz``: the train's track sampled along its length (m),
    or the lead car's path when the scenario is not available (``track_from_path``).
    """

    name: str
    cars: list[int]
    wheels: str
    series: dict[str, np.ndarray]
    summary: dict
    track_name: str | None = None
    track_s: np.ndarray | None = None
    track_xyz: np.ndarray | None = None
    track_from_path: bool = False
    sections: list[Section] = field(default_factory=list)
    car_mass: float | np.ndarray | None = None   # kg, per car when the cars differ (on bogies: per wheel frame)
    vehicles: int | None = None   # cars on bogies: how many (the rows, ``cars``, are their wheel frames)
    gravity: float = G0
    colour: str = "#1e5adc"
    #: the scenario's track (``trackrider.curves.Track``), its gauge (m) and the train's length (m)
    track: object = None
    gauge: float | None = None
    train_length: float | None = None
    #: a force-designed track's design along the rail: ``{"s", "normal_g", "lateral_g"}`` arrays
    design: dict | None = None

    def car_index(self, car: int) -> int:
        return self.cars.index(car)

    def front_middle_rear(self) -> list[int]:
        """Car numbers of the front, middle and rear car (fewer for short trains)."""
        n = len(self.cars)
        picks = [self.cars[0], self.cars[(n - 1) // 2], self.cars[-1]]
        return list(dict.fromkeys(picks))


@dataclass
class RunData:
    """A results folder read for a report."""

    path: Path
    summary: dict
    t: np.ndarray
    trains: list[TrainData]
    title: str
    description: str
    scenario_note: str = ""
    block_lanes: dict = field(default_factory=dict)
    #: ``summary.json`` names an unnamed section ``section[i]``; the page calls it this
    section_names: dict = field(default_factory=dict)
    #: a track network (connections or switches): ``network_plan``'s tracks, switches and connections
    network: dict | None = None

    def section(self, name) -> str | None:
        """What the page calls the section ``summary.json`` names ``name`` (None stays None)."""
        return None if name is None else self.section_names.get(name, name)

    @property
    def operation(self) -> dict | None:
        """``summary.json``'s ``operation`` (a run with stations or block sections), else None."""
        op = self.summary.get("operation")
        return op if isinstance(op, dict) else None

    @property
    def name(self) -> str:
        return self.path.name

    def train(self, name: str) -> TrainData | None:
        for tr in self.trains:
            if tr.name == name:
                return tr
        return None


#: columns a report draws from
SERIES = ("s", "x", "y", "z", "speed", "accel", "g_vertical_filtered", "g_lateral_filtered",
          "g_longitudinal_filtered", "wheel_load", "wheel_load_inner", "l_over_v", "lateral_load",
          "motor_force", "resistance_force", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "flags", "block",
          "coupler_force", "tractive_force", "notch", "brake_pressure",
          # cars with rider_rows = 2 only
          "g_vertical_front_filtered", "g_lateral_front_filtered", "g_vertical_rear_filtered",
          "g_lateral_rear_filtered")


def load_scenario_of(summary: dict, results_dir):
    """The scenario of a run as it was run (``inputs_copy.load_results_scenario``: the
    original, else the copy kept with the results, with the run's overrides), or None
    and a note when there is none."""
    from trackrider.inputs_copy import load_results_scenario

    scenario, note = load_results_scenario(results_dir, summary)
    if scenario is None:
        return None, f"{note}: the track is drawn from the cars' paths"
    return scenario, note


def load_run(results_dir) -> RunData:
    """Read a run's results folder (``summary.json``, ``timeseries.csv``, the scenario), checked
    by ``trackrider.results_reader`` as ``plot`` and ``render`` check it."""
    from trackrider.results_reader import read_results

    res = read_results(results_dir, columns=SERIES)
    d, summary = res.path, res.summary
    labels = res.labels
    t = res.t
    scenario, note = load_scenario_of(summary, d)

    trains = []
    for i, (name, tsum) in enumerate((summary.get("trains") or {}).items()):
        idx = [j for j, (a, _) in enumerate(labels) if a == name]
        if not idx:
            continue
        series = {col: res.columns[col][:, idx].copy() for col in SERIES if col in res.columns}
        tr = TrainData(name=name, cars=[labels[j][1] for j in idx], wheels=str(tsum.get("wheels", "coaster")),
                       series=series, summary=tsum)
        _attach_track(tr, scenario)
        tr.colour = train_colour(scenario, name, i)
        trains.append(tr)
    title = summary.get("title") or (scenario.title if scenario is not None else "") or d.name
    description = scenario.description if scenario is not None else ""
    names = {f"section[{i}]": label for i, label in enumerate(section_labels(scenario))
             if scenario is not None and not getattr(scenario.sections[i], "name", "")}
    op = summary.get("operation")
    lanes = {}
    if isinstance(op, dict):
        lanes = network_lanes(op, names) if "network_blocks" in op else block_lanes(scenario)
    return RunData(path=d, summary=summary, t=t, trains=trains, title=str(title),
                   description=str(description or ""), scenario_note=note, block_lanes=lanes,
                   section_names=names, network=network_plan(scenario, summary))


def network_plan(scenario, summary: dict) -> dict | None:
    """A scenario's track network as the report draws it (None without connections or switches):
    ``tracks`` [(name, (n, 3) points every ~1 m)], ``switches`` [{name, at, point, branches
    [(name, (m, 3) points of its first stretch)], position (set at the start), end (set at the
    end), throws [(t, to)]}], ``connections`` [{a, b, point}] (m, world)."""
    if scenario is None or not (getattr(scenario, "switches", None) or getattr(scenario, "connections", None)):
        return None
    tracks = scenario.tracks

    def points(k, s):
        return np.asarray(tracks[k].track.frames(np.asarray(s, dtype=float)).position, dtype=float)

    def at(k, end):
        length = float(tracks[k].track.length)
        return {"start": 0.0, "end": length}.get(end, end) if isinstance(end, str) else float(end)

    plan = {"tracks": [], "switches": [], "connections": []}
    for k, t in enumerate(tracks):
        length = float(t.track.length)
        plan["tracks"].append((t.name, points(k, np.linspace(0.0, length, max(int(length) + 1, 2)))))
    done = summary.get("switches") if isinstance(summary.get("switches"), dict) else {}
    for sw in scenario.switches:
        k0 = sw["track"]
        branches = []
        for (k, end), word in zip(sw["branches"], sw["branch_names"]):
            length = float(tracks[k].track.length)
            reach = min(30.0, length)
            if k == k0 and not isinstance(sw["at"], str):
                s = np.linspace(float(sw["at"]), min(float(sw["at"]) + reach, length), 16)
            else:
                s = np.linspace(length, length - reach, 16) if end == "end" else np.linspace(0.0, reach, 16)
            branches.append((word, points(k, s)))
        rec = done.get(sw["name"]) or {}
        plan["switches"].append(dict(
            name=sw["name"], at=sw.get("text", ""), point=points(k0, [at(k0, sw["at"])])[0], branches=branches,
            position=sw["branch_names"][sw["position"]], end=rec.get("position", sw["branch_names"][sw["position"]]),
            throws=[(float(th["t"]), str(th["to"])) for th in rec.get("throws", []) if isinstance(th, dict)]))
    for c in scenario.connections:
        (ka, ea), (kb, eb) = c["a"], c["b"]
        plan["connections"].append(dict(a=f"{tracks[ka].name}:{ea}", b=f"{tracks[kb].name}:{eb}",
                                         point=points(ka, [at(ka, ea)])[0]))
    return plan


def track_profile(scenario, train_name: str):
    """The track of train ``train_name`` in ``scenario``, sampled every ~0.5 m.

    Returns ``(config, track name, s (n,) m, xyz (n, 3) m, [Section, ...])``, or
    None when the scenario has no such train.
    """
    config = next((c for c in scenario.trains if c.name == train_name), None) if scenario is not None else None
    if config is None:
        return None
    tc = scenario.tracks[config.track_index]
    length = float(tc.length or tc.track.length)
    n = int(min(20000, max(200, math.ceil(length / 0.5)))) + 1
    s = np.linspace(0.0, length, n)
    xyz = np.asarray(tc.track.frames(s).position, dtype=float)
    labels = section_labels(scenario)
    sections = [Section(label=labels[i], type=sec.type, track=sec.track,
                        s_from=float(sec.s_from), s_to=float(sec.s_to), block=bool(getattr(sec, "block", False)))
                for i, sec in enumerate(scenario.sections) if sec.track_index == config.track_index]
    return config, tc.name, s, xyz, sections


def section_labels(scenario) -> list[str]:
    """What the page calls each section of ``scenario``: its ``name``; an unnamed one its type,
    numbered in file order when the type occurs more than once ("lift", "brake 2")."""
    secs = list(getattr(scenario, "sections", None) or [])
    counts: dict = {}
    for sec in secs:
        counts[sec.type] = counts.get(sec.type, 0) + 1
    seen: dict = {}
    out = []
    for sec in secs:
        seen[sec.type] = seen.get(sec.type, 0) + 1
        name = getattr(sec, "name", "") or ""
        out.append(name or (sec.type if counts[sec.type] == 1 else f"{sec.type} {seen[sec.type]}"))
    return out


def _attach_track(tr: TrainData, scenario) -> None:
    """The train's track (sampled every ~0.5 m), its sections and car mass, from the scenario."""
    found = track_profile(scenario, tr.name)
    if found is None:
        # the lead car's recorded path stands in for the track
        s = tr.series["s"][:, 0]
        ok = np.isfinite(s)
        if ok.any():
            order = np.argsort(s[ok], kind="stable")
            tr.track_s = s[ok][order]
            tr.track_xyz = np.stack([tr.series[c][:, 0][ok][order] for c in ("x", "y", "z")], axis=1)
            tr.track_from_path = True
        return
    config, tr.track_name, tr.track_s, tr.track_xyz, tr.sections = found
    specs = config.car_specs()
    masses = [float(c.mass) for c in specs]
    if specs[0].bogies != "none":   # the rows are the wheel frames: each carries its share of its cars
        from trackrider.physics.bogies import lever_weights

        masses = lever_weights(specs, specs[0].bogies)
        tr.vehicles = len(specs)
    tr.car_mass = masses[0] if len(set(masses)) == 1 else np.array(masses)
    tr.gravity = float(getattr(scenario.simulation, "gravity", G0))
    tc = scenario.tracks[config.track_index]
    tr.track, tr.gauge = tc.track, float(tc.gauge)
    tr.train_length = config.length
    tr.design = design_along_rail(tc.track)


def design_along_rail(track) -> dict | None:
    """A force-designed track's design G at the rail's points: ``{"s": rail s (m), "normal_g",
    "lateral_g"}`` (what the design asked for at the heartline, docs/curves.md), else None."""
    design = getattr(track, "design", None)
    idx = getattr(track, "design_index", None)
    if design is None or idx is None or track.point_s is None:
        return None
    n = min(len(idx), len(track.point_s))
    return {"s": np.asarray(track.point_s[:n], dtype=float),
            "normal_g": np.asarray(design.normal_g, dtype=float)[idx[:n]],
            "lateral_g": np.asarray(design.lateral_g, dtype=float)[idx[:n]]}


def coupler_forces(tr: TrainData) -> np.ndarray | None:
    """Force in each coupler along the train, N, ``(m instants, n cars − 1)``; + pulls (tension).

    From each car's motion along its track: car ``j`` (mass ``m``) obeys
    ``m (a_j + g T_z,j) = F_motor,j + F_resistance,j + C_(j−1,j) − C_(j,j+1)``
    (``a`` = ``accel``, ``T_z`` the car's forward axis' upward component from its
    orientation; ``C`` the tension of the coupler ahead of and behind it), and
    the last car has nothing behind it, so summing from the rear
    ``C_(i,i+1) = Σ_{j>i} [m (a_j + g T_z,j) − F_motor,j − F_resistance,j]``.
    None for a single car or without the car mass (no scenario). A railway world records each
    coupler's force (``coupler_force``, docs/outputs.md): that is read as it is.
    """
    n = len(tr.cars)
    if n >= 2 and "coupler_force" in tr.series:
        return tr.series["coupler_force"][:, :-1]
    if n < 2 or tr.car_mass is None:
        return None
    se = tr.series
    if not all(c in se for c in ("accel", "qw", "qx", "qy", "qz")):
        return None
    qw, qx, qy, qz = se["qw"], se["qx"], se["qy"], se["qz"]
    t_z = 2.0 * (qx * qz - qw * qy)     # z of the body's x axis (forward), R(q) e_x
    motor = np.nan_to_num(se.get("motor_force", np.zeros_like(qw)), nan=0.0)
    resist = np.nan_to_num(se.get("resistance_force", np.zeros_like(qw)), nan=0.0)
    net = tr.car_mass * (se["accel"] + tr.gravity * t_z) - motor - resist      # (m, n)
    behind = np.cumsum(net[:, ::-1], axis=1)[:, ::-1]                   # Σ_{j ≥ i}
    return behind[:, 1:]


def sections_of(tr: TrainData, s: float | None) -> str | None:
    """Label of the section holding ``s`` (m) on the train's track, or None."""
    if s is None or not math.isfinite(s):
        return None
    for sec in tr.sections:
        if sec.s_from <= s <= sec.s_to:
            return sec.label
    return None


# --------------------------------------------------------------------------- operation


def train_colour(scenario, name: str, index: int) -> str:
    """``#rrggbb`` of a train as the rendered video draws it (``render.spec``): ``train.color``, else its
    name when that names a colour ("red"), else the index-th of the video's train colours."""
    from trackrider.colours import parse_colour
    from trackrider.render.spec import TRAIN_COLOURS

    config = next((c for c in scenario.trains if c.name == name), None) if scenario is not None else None
    rgb = tuple(config.color) if config is not None and getattr(config, "color", None) else None
    if rgb is None and not name.startswith("#"):
        rgb = parse_colour(name)
    if rgb is None:
        rgb = TRAIN_COLOURS[index % len(TRAIN_COLOURS)]
    return "#{:02x}{:02x}{:02x}".format(*(int(c) for c in rgb))


@dataclass
class BlockLane:
    """Block ``k`` of track ``track``: it starts at the block section ``label`` (``type``, from ``s_from`` m)."""

    track: str
    k: int
    label: str
    type: str
    s_from: float


def block_lanes(scenario) -> dict:
    """``{(track name, k): BlockLane}``: the blocks of each track as ``physics.blocks`` numbers them.

    The block sections (stations, and lifts, brakes and boosters with ``block = true``) of a
    track in order of ``from`` each start a block; on a closed track they are counted from the
    first station. Empty without the scenario.
    """
    if scenario is None:
        return {}
    from trackrider.physics.blocks import block_order

    labels = section_labels(scenario)
    lanes = {}
    for tk, tc in enumerate(scenario.tracks):
        secs = [(float(sec.s_from), i, sec) for i, sec in enumerate(scenario.sections)
                if sec.track_index == tk and getattr(sec, "block", False)]
        if not secs:
            continue
        closed = bool(getattr(tc.track, "closed", False) if tc.track is not None else tc.closed)
        secs = [secs[j] for j in block_order([x[0] for x in secs], [x[2].type for x in secs], closed)]
        for k, (s_from, i, sec) in enumerate(secs):
            lanes[(tc.name, k)] = BlockLane(track=tc.name, k=k, label=labels[i], type=sec.type, s_from=s_from)
    return lanes


def network_lanes(operation: dict, names: dict) -> dict:
    """``{("", k): BlockLane}`` on a track network: the ``block`` column's numbers as ``summary.json``'s
    ``operation.network_blocks`` lists them — a block section's block (less what it shares), or a
    stretch two blocks share after a merge (type ``shared``). ``names``: the page's names of the
    sections ``summary.json`` calls ``section[i]``."""
    kinds = operation.get("block_sections") or {}
    lanes = {}
    for k, secs in enumerate(operation.get("network_blocks") or []):
        if not isinstance(secs, list) or not secs:
            continue
        labels = [names.get(str(x), str(x)) for x in secs]
        one = len(labels) == 1
        kind = (kinds.get(str(secs[0])) or {}).get("type", "block") if one else "shared"
        lanes[("", k)] = BlockLane(track="", k=k, label=labels[0] if one else " + ".join(labels), type=str(kind),
                                   s_from=float("nan"))
    return lanes


def intervals(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in a boolean series: ``[(first index, last index), ...]``."""
    m = np.asarray(mask, dtype=bool)
    if not m.any():
        return []
    d = np.diff(np.concatenate(([0], m.astype(np.int8), [0])))
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1) - 1
    return list(zip(starts.tolist(), ends.tolist()))


def block_visits(run: RunData) -> list[dict]:
    """Every stay of a train in a block, from the ``block`` column: a dict with ``train``, ``track``,
    ``k`` and the first and last recorded instants ``i0``, ``i1`` at which any car of the train is
    in block ``k`` (consecutive samples merged into one stay), in train, block, time order."""
    out = []
    network = any(key[0] == "" for key in run.block_lanes)
    for tr in run.trains:
        blk = tr.series.get("block")
        if blk is None:
            continue
        with np.errstate(invalid="ignore"):
            ks = np.unique(blk[np.isfinite(blk) & (blk >= 0)]).astype(int)
        for k in ks.tolist():
            for i0, i1 in intervals(np.any(blk == k, axis=1)):
                out.append({"train": tr.name, "track": "" if network else tr.track_name, "k": k, "i0": i0, "i1": i1})
    return out


def block_holds(run: RunData) -> list[dict]:
    """Every hold of ``summary.json``'s events: ``block_hold`` paired with the next ``block_release`` of
    the same train and section. A dict with ``train``, ``section``, ``t0``, ``t1`` (the release, or the
    end of the run when none came: ``open`` True) and ``held_s``."""
    events = run.summary.get("events") or []
    end = float(run.t[-1]) if len(run.t) else 0.0
    out, open_ = [], {}
    for ev in events:
        kind = ev.get("kind")
        key = (ev.get("train"), ev.get("section"))
        if kind == "block_hold" and ev.get("t") is not None:
            open_[key] = {"train": key[0], "section": key[1], "t0": float(ev["t"]), "t1": end, "open": True}
            out.append(open_[key])
        elif kind == "block_release" and key in open_:
            h = open_.pop(key)
            h["t1"], h["open"] = float(ev["t"]), False
    for h in out:
        h["held_s"] = h["t1"] - h["t0"]
    return out


def shared_blocks(visits: list[dict]) -> list[dict]:
    """Pairs of stays of two different trains in one block at a common recorded instant (the block
    logic forbids them): dicts with ``track``, ``k``, ``trains`` (two names), ``i0``, ``i1``."""
    out = []
    by_lane: dict = {}
    for v in visits:
        by_lane.setdefault((v["track"], v["k"]), []).append(v)
    for (track, k), vs in by_lane.items():
        vs = sorted(vs, key=lambda v: v["i0"])
        for a in range(len(vs)):
            for b in range(a + 1, len(vs)):
                if vs[b]["i0"] > vs[a]["i1"]:
                    break
                if vs[a]["train"] != vs[b]["train"]:
                    out.append({"track": track, "k": k, "trains": (vs[a]["train"], vs[b]["train"]),
                                "i0": vs[b]["i0"], "i1": min(vs[a]["i1"], vs[b]["i1"])})
    return out
