"""Running a world and keeping its results: ``simulate`` and ``run_world``.

``simulate(scenario)`` builds the world of a loaded scenario and runs it;
``run_world(world, ...)`` runs a world built by hand. Both stream the recorded
samples through ``RideMetrics`` (filtered G, events, summary figures) and, when
an output directory is given, into ``timeseries.csv`` chunk by chunk (memory
stays flat however long the run) and finally ``summary.json``.

A run whose solver diverges is not an exception here: what was recorded is
kept, ``summary.json`` and ``Result.status`` say ``"diverged"`` and
``Result.message`` names the time and car (the command line exits with 1).
Bad input (an output directory that exists without ``overwrite``, an absurd
step count) raises ``InputError`` before anything is created.

``run_world`` is a short pipeline of steps over a world that implements the ``World``
protocol below: ``_start`` (timing, entities, metrics, divergence test, writer), ``_sink``
(each recorded chunk: checked, measured, written), ``_advance`` (the chunks), ``_finish``
(a divergence worded, the filter's tail, the block logic's events), ``_summary``
(``summary.json``), ``_result`` (the files swapped in, or the timeseries in memory). An
output folder is taken for the run (``trackrider.results_folder``: one run at a time, the
files written in a stage inside it and swapped in together in one step).
"""
from __future__ import annotations

import math
import time as _time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from trackrider.errors import SimulationError
from trackrider.settings import SimulationConfig, check

#: recorded rows (instants × entities) per chunk handed to World.run
CHUNK_ROWS = 50_000
#: at most this many recorded instants per chunk
CHUNK_RECORDS = 2_000
#: at most this many steps × entities per World.run call (a fraction of a second)
CHUNK_WORK = 20_000


@dataclass
class Result:
    """What a run produced.

    Attributes
    ----------
    summary : dict
        The content of ``summary.json``.
    timeseries : dict or None
        Column name → numpy array, rows as in ``timeseries.csv`` (per instant,
        entities in order); only when the run had no ``out_dir`` (None otherwise:
        read the CSV with ``trackrider.record.read_timeseries``).
    status : str
        ``completed | derailed | ran_off_track | stalled | diverged``.
    out_dir : Path or None
        The results directory, if any.
    message : str
        Empty, or what went wrong (``diverged``: time and car).
    """

    summary: dict
    timeseries: dict | None = None
    status: str = "completed"
    out_dir: Path | None = None
    message: str = ""
    wall_s: float = 0.0
    events: list = field(default_factory=list)

    def __repr__(self):
        sim_s = self.summary.get("simulated_s") if isinstance(self.summary, dict) else None
        return (f"Result(status={self.status!r}, simulated_s={sim_s!r}, out_dir={self.out_dir!r}, "
                f"timeseries={'None' if self.timeseries is None else str(len(self.timeseries)) + ' columns'})")

    @property
    def ok(self) -> bool:
        """False only for a diverged run (the others are results, not failures)."""
        return self.status != "diverged"

    def load_timeseries(self) -> dict:
        """The timeseries: in memory, or read back from ``out_dir/timeseries.csv``."""
        if self.timeseries is not None:
            return self.timeseries
        if self.out_dir is None:
            raise ValueError("this result has neither a timeseries in memory nor an out_dir")
        from trackrider.record import read_timeseries

        return read_timeseries(self.out_dir)

    def raise_for_status(self):
        """Raise ``SimulationError`` if the run diverged (outputs are kept)."""
        if self.status == "diverged":
            d = self.summary.get("diverged") or {}
            raise SimulationError(self.message or "simulation diverged", t=d.get("t"),
                                  entity=d.get("entity"))
        return self


class World(Protocol):
    """What ``run_world`` needs of a world: ``trackrider.physics.World`` implements it, and so does
    the stand-in of ``tests/test_sim.py`` (all of it: nothing here probes for a member)."""

    dt: float                      # s, the time step
    gravity: float                 # m/s²
    step_count: int                # steps done so far
    time: float                    # s simulated so far
    entity_labels: list            # [(train or body name, car number)] in entity order
    entity_train: Any              # (n_entities,) train index, -1 for a body
    n_entities: int
    trains: tuple                  # per train: dict with name, track, n, cg, railway, suspended (rider_rows: 2 with rows)
    gauges: tuple                  # m, per track
    joints: tuple                  # per joint: dict with kind, a, b, anchor_a, anchor_b, p
    contact_trains: list           # (behind, ahead) trains that can meet on a track
    contact_ends: list             # (entity, entity) joined by those contacts
    operation: Any                 # physics.blocks.Operation, or None (no blocks, no contacts)
    network: Any                   # physics.network.Network, or None (no connections, no switches)
    railway: Any                   # physics.rail.Railway, or None (no railway vehicles, no draft gears)
    pos: Any                       # (n_entities, 3) m, the state now (the joint checks)
    quat: Any                      # (n_entities, 4)
    mass: Any                      # (n_entities,) kg
    mechanisms: list               # joints that hold or drive a body carrying tracks: dicts name, kind, body
    mechanism_events: list         # their holds and releases so far: dicts t, joint, kind

    def run(self, n_steps: int, record_every: int, sink, joint_sink=None) -> Any:
        """Advance; ``sink(t, samples)`` per recorded chunk, ``joint_sink(t, samples)`` the mechanisms'
        (``physics.channels.JOINT_CHANNELS``; only called when there are any); returns a
        ``physics.world.RunStatus``."""


@dataclass
class _Run:
    """The state of one ``run_world`` call, passed from step to step."""

    dt: float
    n_steps: int
    record_every: int
    record_hz: float
    labels: list
    names: list
    trains: list                   # per train index: gauge, wheels, role, riders, damped, sections
    gauge: Any
    metrics: Any
    divergence: Any
    oper: Any = None
    net: Any = None                # physics.network.Network, or None
    railway: Any = None
    rows: bool = False             # some car has front and rear rider rows (rider_rows = 2)
    writer: Any = None
    folder: Any = None             # the ResultsFolder the run writes into (its stage), when it writes
    mech: Any = None                # mechanisms.MechanismLog, or None (no joint holds a track's body)
    swivels: Any = None             # physics.bogies.SwivelWatch, or None (no cars on bogies)
    out: Path | None = None
    tables: list | None = None
    last_t: float = -math.inf
    insane: list = field(default_factory=list)     # (t, entity, reason) of the first instant not sane
    start_steps: int = 0
    done: int = 0
    diverged: bool = False
    stalled: bool = False
    div_t: float | None = None
    div_entity: Any = None
    message: str = ""
    wall_s: float = 0.0

    @property
    def record_dt(self) -> float:
        return self.record_every * self.dt

    @property
    def blocks_on(self) -> bool:
        return self.oper is not None and self.oper.has_blocks

    @property
    def extras(self) -> tuple:
        """The CSV's columns after ``COLUMNS``: the rider rows' G (``record.ROW_COLUMNS``) when a car has
        them, a network's ``track``, the blocks' ``block``, the railway columns in a railway world
        (``record.RAIL_COLUMNS``)."""
        from trackrider.record import RAIL_COLUMNS, ROW_COLUMNS

        return ((ROW_COLUMNS if self.rows else ()) + (("track",) if self.net is not None else ())
                + (("block",) if self.blocks_on else ()) + (RAIL_COLUMNS if self.railway is not None else ()))

    def extra_values(self, smp, fg):
        """(m, n_entities, k) the values of ``extras`` for the samples ``smp`` and their filtered G
        ``fg`` (``RideMetrics``), or None."""
        from trackrider.physics import channels as ch

        cols = []
        if self.rows:
            cols += [smp[:, :, list(ch.ROW_G)], fg[:, :, 3:9]]
        if self.net is not None:
            cols.append(smp[:, :, ch.TRACK][:, :, None])
        if self.blocks_on:
            cols.append(self.oper.block_column(smp)[:, :, None])
        if self.railway is not None:
            cols.append(smp[:, :, list(ch.RAIL)])
        return np.concatenate(cols, axis=2) if cols else None


def _train_names(labels, entity_train):
    n_trains = int(max([-1] + [int(k) for k in entity_train])) + 1
    names = [f"train{k}" for k in range(n_trains)]
    for (name, _), k in zip(labels, entity_train):
        if k >= 0:
            names[int(k)] = name
    return names


def _world_trains(world):
    """Gauge, wheels and a damper (no dt warning: docs/outputs.md) per train from a World's own settings."""
    return [{"gauge": float(world.gauges[int(tr["track"])]), "wheels": "railway" if tr.get("railway") else "coaster",
             "damped": bool(tr.get("swing_damping") or tr.get("damping") or tr.get("ctype") == "draft_gear")}
            for tr in world.trains]


def _start(world, duration, record_hz, out_dir, overwrite, filter_hz, trains, joints, tracks) -> _Run:
    """Step 1: the timing, the entities and their trains, the metrics, the divergence test, the writer."""
    from trackrider.divergence import DivergenceCheck
    from trackrider.metrics import RideMetrics, energy_groups_from_joints
    from trackrider.record import TimeseriesWriter, check_out_dir

    if out_dir is not None:
        check_out_dir(out_dir, overwrite)
    dt = float(world.dt)
    timing = check(SimulationConfig(duration=duration, dt=dt, record_hz=record_hz, filter_hz=filter_hz))
    labels = [(str(a), int(b)) for a, b in world.entity_labels]
    entity_train = np.asarray(world.entity_train, dtype=int)
    names = _train_names(labels, entity_train)
    trains = list(_world_trains(world) if trains is None else trains or [])
    trains += [{}] * (len(names) - len(trains))
    if joints is None:
        joints = [(j["a"], j["b"]) for j in world.joints]
    # trains that can meet share their energy (a collision passes it from one to the other)
    joints = list(joints) + [(("car", tb, 0), ("car", ta, int(world.trains[ta]["n"]) - 1))
                             for tb, ta in world.contact_trains]
    gauge = np.ones(len(labels))
    railway = np.zeros(len(labels), dtype=bool)
    for k, info in enumerate(trains[:len(names)]):
        gauge[entity_train == k] = float(info.get("gauge", 1.0))
        railway[entity_train == k] = info.get("wheels", "coaster") == "railway"
    record_dt = timing.record_every * dt
    rows = any(int(tr.get("rider_rows", 1)) == 2 for tr in world.trains)
    metrics = RideMetrics(labels, entity_train, names, record_dt, cutoff_hz=timing.filter_hz,
                          gauge_per_entity=gauge, railway_per_entity=railway,
                          energy_groups=energy_groups_from_joints(entity_train, len(names), joints),
                          sections_per_train=[info.get("sections", []) for info in trains[:len(names)]],
                          rows=rows)
    metrics.roles = [str(info.get("role", "riders")) for info in trains[:len(names)]]
    run = _Run(dt, timing.n_steps, timing.record_every, timing.record_hz, labels, names, trains, gauge, metrics,
               DivergenceCheck.from_world(world, record_dt, tracks), oper=world.operation, net=world.network,
               start_steps=int(world.step_count), rows=rows)
    run.railway = world.railway
    run.swivels = getattr(world, "swivels", None)
    if out_dir is None:
        run.tables = []
    else:
        # taken for this run (one at a time), checked again, the results written in a stage inside it
        from trackrider.results_folder import ResultsFolder

        run.folder = ResultsFolder(out_dir, overwrite)
        run.out = run.folder.path
        try:
            run.writer = TimeseriesWriter(run.folder.stage, labels, gauge, extra_columns=run.extras)
            if world.mechanisms:
                from trackrider.mechanisms import MechanismLog

                run.mech = MechanismLog(world.mechanisms, run.folder.stage)
        except BaseException as exc:
            run.folder.close(exc)
            raise
    if world.mechanisms and run.mech is None:
        from trackrider.mechanisms import MechanismLog

        run.mech = MechanismLog(world.mechanisms, None)
    return run


def _consume(run, blocks):
    """The measured blocks (samples with their filtered G) into the writer or the in-memory table."""
    from trackrider.record import block_table

    for t, smp, fg in blocks:
        extra = run.extra_values(smp, fg)
        if run.writer is not None:
            run.writer.write(t, smp, fg, extra)
        else:
            run.tables.append(block_table(t, smp, fg, run.gauge, extra))


def _sink(run):
    """Step 2: what ``World.run`` hands each recorded chunk to: never an instant twice, a ran-off car's
    track columns blanked, the divergence test (the outputs end at the last sane sample), measured."""
    from trackrider.divergence import blank_ran_off

    def sink(t, samples):
        if run.insane:                  # the rest of a chunk after the run diverged
            return
        t = np.asarray(t, dtype=float).reshape(-1)
        samples = np.asarray(samples, dtype=float)
        keep = t > run.last_t + 0.25 * run.record_dt
        if not np.all(keep):
            t, samples = t[keep], samples[keep]
        if len(t) == 0:
            return
        samples = blank_ran_off(samples.copy())
        bad = run.divergence.check(t, samples)
        if bad is not None:
            i, entity, reason = bad
            run.insane.append((float(t[i]), entity, reason))
            t, samples = t[:i], samples[:i]
            if len(t) == 0:
                return
        run.last_t = float(t[-1])
        if run.swivels is not None:     # cars on bogies: split events (physics/bogies.py)
            run.swivels.push(t)
        _consume(run, run.metrics.push(t, samples))

    return sink


def _chunk_steps(run) -> int:
    """Steps per ``World.run`` call: bounded in recorded rows and in work (steps × entities), so that
    progress reports come often; a whole number of recording intervals."""
    n_ent = len(run.labels)
    chunk_records = max(1, min(CHUNK_RECORDS, CHUNK_ROWS // max(1, n_ent)))
    steps = min(chunk_records * run.record_every, CHUNK_WORK // max(1, n_ent))
    return max(run.record_every, steps // run.record_every * run.record_every)


def _advance(world, run, progress):
    """Step 3: run the world chunk by chunk until the end, a divergence, or the blocks' deadlock."""
    sink = _sink(run)
    chunk = _chunk_steps(run)
    wall0 = _time.perf_counter()
    while run.done < run.n_steps:
        n = min(chunk, run.n_steps - run.done)
        try:
            if run.mech is None:
                status = world.run(n, run.record_every, sink)
            else:
                status = world.run(n, run.record_every, sink,
                                   joint_sink=lambda t, s: run.mech.push(t, s, run.record_dt))
        except SimulationError as exc:
            run.diverged, run.div_t, run.div_entity, run.message = True, exc.t, exc.entity, str(exc)
        else:
            if status.status == "diverged":
                run.diverged, run.div_t, run.div_entity, run.message = True, status.t, status.entity, status.message
        if run.insane:       # the sink's test found the first instant that is not sane: it ends the outputs
            run.diverged = True
            run.div_t, run.div_entity, run.message = run.insane[0]
        run.done += n
        if progress is not None:
            progress(min(run.done, run.n_steps) * run.dt, run.n_steps * run.dt)
        if not run.diverged and status.status == "stalled":   # the blocks deadlocked: the run ends here
            run.stalled, run.message = True, str(status.message)
            break
        if run.diverged:
            break
    run.wall_s = _time.perf_counter() - wall0


def _finish(world, run):
    """Step 4: a divergence marked and worded, the filter's tail measured, the block logic's events."""
    if run.diverged:
        n_ent = len(run.labels)
        entity = run.div_entity if isinstance(run.div_entity, (int, np.integer)) and 0 <= run.div_entity < n_ent \
            else None
        if run.div_t is None:
            run.div_t = float(world.time)
        check = run.divergence
        onset = check.onset if check.onset is not None else check.calm_t
        run.metrics.mark_diverged(run.div_t, None if entity is None else int(entity), onset)
        who = f" ({run.labels[entity][0]} car {run.labels[entity][1]})" if entity is not None else (
            f" ({run.div_entity})" if run.div_entity is not None else "")
        run.message = f"simulation diverged at t = {float(run.div_t):.6g} s{who}" + (
            f": {run.message}" if run.message else "")
    _consume(run, run.metrics.finish())
    if run.oper is not None:
        run.oper.finish(float(world.time))
        run.metrics.add_events(run.oper.events)
    if run.net is not None:
        run.metrics.add_events(run.net.events)
    if run.railway is not None:
        run.metrics.add_events(run.railway.events())
    if run.swivels is not None:
        run.metrics.add_events(run.swivels.events)
    if run.mech is not None:
        bodies = {m["name"]: m["body"] for m in run.mech.mechanisms}
        run.metrics.add_events(dict(t=e["t"], train=bodies.get(e["joint"], ""), car=1, kind=e["kind"],
                                    joint=e["joint"]) for e in world.mechanism_events)


def _summary(world, run, meta) -> dict:
    """Step 5: ``summary.json``: status, timing, the scenario's entries, events, figures, warnings."""
    from trackrider.metrics import run_warnings
    from trackrider.record import COLUMNS, FLOAT_FORMAT, TIME_FORMAT

    steps = int(world.step_count) - run.start_steps
    if steps <= 0:
        steps = run.done
    if run.diverged:   # the run covers its sane samples: up to the last one written
        steps = max(0, int(round(run.last_t / run.dt)) - run.start_steps) if run.last_t > -np.inf else 0
    measured = run.metrics.summary()
    summary = {"status": measured["status"]}
    if (run.stalled and summary["status"] == "stalled") or run.diverged:
        summary["message"] = run.message
    if run.diverged:
        entity = run.div_entity if isinstance(run.div_entity, (str, type(None))) else int(run.div_entity)
        summary["diverged"] = {"t": float(run.div_t), "entity": entity}
    summary.update({"simulated_s": steps * run.dt, "steps": steps, "wall_s": run.wall_s, "dt": run.dt,
                    "record_hz": run.record_hz, "record_dt": run.record_dt, "samples": run.metrics.samples})
    meta = dict(meta or {})
    notes = [str(w) for w in meta.pop("warnings", None) or []]
    summary.update(meta)
    summary.update({key: measured[key] for key in ("events", "events_dropped", "trains", "bodies", "filter")})
    summary["columns"] = list(COLUMNS) + list(run.extras)
    summary["float_format"] = {"t": TIME_FORMAT, "other": FLOAT_FORMAT}
    if run.railway is not None:
        summary["railway"] = run.railway.summary()
    if run.mech is not None:
        summary["mechanisms"] = run.mech.summary()
    if run.blocks_on:
        summary["operation"] = run.oper.summary(steps * run.dt + run.start_steps * run.dt,
                                                [int(info.get("riders", 4)) for info in run.trains[:len(run.names)]])
    if run.net is not None:
        summary["switches"] = run.net.summary(world.records.tracks)
    # warnings: the scenario's (curve fits) and the run's own, so --quiet runs and sweeps keep them
    damped = {run.names[k] for k, info in enumerate(run.trains[:len(run.names)]) if info.get("damped")}
    own = run_warnings(summary, run.dt, damped)
    if run.diverged and run.metrics.withheld:
        onset = run.metrics.onset
        who = ", ".join(sorted(set(run.metrics.withheld)))
        own.append(f"figures of {who} from samples after " + (f"t = {onset:.6g} s" if onset is not None else
                                                                "the start")
                   + " are withheld (null): the state was already drifting towards the divergence at "
                   f"t = {float(run.div_t):.6g} s")
    summary["warnings"] = notes + own
    for text in own:
        warnings.warn(text, RuntimeWarning, stacklevel=3)
    from trackrider import __version__

    summary["trackrider_version"] = __version__
    return summary


def _result(run, summary, before_commit=None) -> Result:
    """Step 6: the results (and what ``before_commit(summary, stage)`` adds, returning the summary)
    complete in the stage, then swapped in over any old ones in one step; or the timeseries in memory."""
    from trackrider.record import COLUMNS, NUMERIC_COLUMNS, write_summary

    timeseries = None
    if run.writer is not None:
        try:
            run.writer.close()
            if run.mech is not None:
                run.mech.close()
            if before_commit is not None:
                summary = before_commit(summary, run.folder.stage)
            write_summary(run.folder.stage, summary)
            run.folder.commit()
        except BaseException as exc:
            run.folder.close(exc)
            raise
        run.folder.close()
    else:
        extra = run.extras
        table = np.concatenate(run.tables) if run.tables else np.empty((0, len(NUMERIC_COLUMNS) + len(extra)))
        m = len(table) // max(1, len(run.labels))
        timeseries = {}
        for name in COLUMNS + extra:
            if name == "train":
                timeseries[name] = np.tile(np.array([a for a, _ in run.labels], dtype=str), m)
            elif name == "car":
                timeseries[name] = np.tile(np.array([b for _, b in run.labels], dtype=int), m)
            elif name in extra:
                timeseries[name] = table[:, len(NUMERIC_COLUMNS) + extra.index(name)].copy()
            else:
                timeseries[name] = table[:, NUMERIC_COLUMNS.index(name)].copy()
    return Result(summary=summary, timeseries=timeseries, status=summary["status"], out_dir=run.out,
                  message=run.message, wall_s=run.wall_s, events=summary["events"])


def run_world(world: World, duration, record_hz, out_dir=None, overwrite=False, filter_hz=SimulationConfig.filter_hz,
              progress=None, meta=None, *, trains=None, joints=None, tracks=None, before_commit=None) -> Result:
    """Run a built ``World`` for ``duration`` s and measure (and write) the ride.

    Parameters
    ----------
    world : trackrider.physics.World
        A built world (its ``dt`` is the time step).
    duration : float
        Simulated time, s (rounded to whole steps).
    record_hz : float
        Samples per second in the outputs (at most ``1 / dt``); the world records every
        ``round(1 / (record_hz · dt))`` steps.
    out_dir : path, optional
        Results directory for ``timeseries.csv`` and ``summary.json``. Without
        it, the timeseries is returned in memory (``Result.timeseries``).
    overwrite : bool
        Replace the results in an existing non-empty ``out_dir`` (default False:
        ``InputError``, nothing touched).
    filter_hz : float
        Cut-off of the zero-phase low-pass of the filtered G, Hz (``SimulationConfig``'s default).
    progress : callable, optional
        ``progress(simulated_s, total_s)`` after every chunk (seconds).
    meta : dict, optional
        Extra top-level entries of ``summary.json`` (``scenario``: the scenario's path).
    trains : list of dict, optional
        Per train index: ``{"gauge": m, "wheels": "coaster"|"railway"}`` (default:
        read from the world's settings; else gauge 1.0, coaster wheels).
    joints : list of (end_a, end_b), optional
        The world's extra joints (ends as ``World.add_joint`` takes them), to
        group joined trains and bodies for the energy drift (default: the world's).
    tracks : list of Track, optional
        The world's tracks by index: the divergence test then also checks that
        every car stays within 0.1 m of its track (``simulate`` passes them).
    before_commit : callable, optional
        ``before_commit(summary, stage) -> summary`` once ``timeseries.csv`` is complete in the
        stage folder ``stage``, before the results are swapped into ``out_dir``: what it writes
        into the stage (the ``inputs/`` copy) and the summary it returns go in with them.
    """
    run = _start(world, duration, record_hz, out_dir, overwrite, filter_hz, trains, joints, tracks)
    wall0 = _time.perf_counter()
    try:
        _advance(world, run, progress)
        _finish(world, run)
    except BaseException as exc:
        if run.writer is not None:
            run.writer.abort()
        if run.mech is not None:
            run.mech.abort()
        if run.writer is not None:
            run.folder.close(exc)     # an interrupted run keeps its rows so far in the stage; a full disk, none
        raise
    run.wall_s = _time.perf_counter() - wall0
    return _result(run, _summary(world, run, meta), before_commit)


def _train_sections(scenario, track_index):
    """The sections on a track as ``(label, s_from, s_to, period)`` for ``section_at``:
    label the section's ``name``, else ``section[i]`` (i its index in the file)."""
    out = []
    tc = scenario.tracks[track_index]
    period = float(tc.length) if tc.track is not None and tc.track.closed else None
    for i, sec in enumerate(scenario.sections):
        if sec.track_index == track_index:
            label = sec.name or f"section[{i}]"
            out.append((label, float(sec.s_from), float(sec.s_to), period))
    return out


def simulate(scenario, out_dir=None, duration=None, overwrite=False, progress=None, keep_inputs=False) -> Result:
    """Build the world of a loaded scenario and run it (see ``run_world``).

    Parameters
    ----------
    scenario : trackrider.scenario.Scenario or path
        A scenario from ``load_scenario`` (a path is loaded first).
    out_dir : path, optional
        Results directory (checked before anything is built or created).
    duration : float, optional
        Simulated time, s (default: the scenario's ``simulation.duration``).
    overwrite : bool
        Replace results in an existing ``out_dir`` (default False).
    progress : callable, optional
        ``progress(simulated_s, total_s)`` after every chunk (seconds).
    keep_inputs : bool
        Also keep a copy of the scenario file and the files it names in ``out_dir/inputs/``
        (``trackrider run`` does), swapped in with the results.

    Examples
    --------
    >>> import trackrider as tr                                  # doctest: +SKIP
    >>> result = tr.simulate(tr.load_scenario("scenarios/classic_coaster.toml"))  # doctest: +SKIP
    >>> result.summary["trains"]["red"]["max_speed"]             # doctest: +SKIP
    """
    from trackrider.record import check_out_dir
    from trackrider.scenario import build_world, load_scenario

    if out_dir is not None:
        check_out_dir(out_dir, overwrite)
    if isinstance(scenario, (str, Path)):
        scenario = load_scenario(scenario)
    sim = scenario.simulation
    if duration is None:
        duration = sim.duration
    elif hasattr(scenario, "trains"):          # the output of a run of another length (load_scenario checked its own)
        from trackrider.limits import check_output, entities

        check_output(sim, entities(scenario.trains, getattr(scenario, "bodies", [])), duration,
                     path=getattr(scenario, "path", None), where="--duration")
    world = build_world(scenario)
    trains = []
    for tr in scenario.trains:
        damped = bool(tr.car.swing_damping or tr.coupling.damping or tr.coupling.type == "draft_gear")
        trains.append({"gauge": float(scenario.tracks[tr.track_index].gauge), "wheels": tr.wheels, "role": tr.role,
                       "riders": sum(c.rider_count for c in tr.car_specs()), "damped": damped,
                       "sections": _train_sections(scenario, tr.track_index)})
    for j in scenario.joints:     # a damper in a joint dissipates its trains' energy
        if j.params.get("damping"):
            for end in (j.end_a, j.end_b):
                if isinstance(end, tuple) and end[0] == "car":
                    trains[end[1]]["damped"] = True
    # the world's joints: the user's, then the suspended cars' swing hinges (their bodies share the energy)
    joints = [(j["a"], j["b"]) for j in world.joints]
    meta = {"scenario": str(Path(scenario.path).resolve()) if scenario.path else None}
    if scenario.title:
        meta["title"] = scenario.title
    from trackrider.check.design import design_warnings

    design = design_warnings(scenario)       # the track's G steps, jerk, loops without transitions
    for text in design:
        warnings.warn(text, UserWarning, stacklevel=2)
    meta["warnings"] = list(scenario.warnings or []) + design
    if scenario.overrides:   # so that readers of the results rebuild the same ride
        meta["overrides"] = dict(scenario.overrides)
    envelope = getattr(getattr(scenario, "check", None), "loaded", None) is not None   # [check]

    def before_commit(summary, stage):
        """In the stage: the run checked against its envelope, the inputs copied."""
        if envelope:
            from trackrider.check.results import checked_summary
            from trackrider.record import read_timeseries

            summary = checked_summary(summary, read_timeseries(stage), scenario)
        if keep_inputs:
            from trackrider.inputs_copy import keep_inputs as copy_inputs

            copy_inputs(scenario, stage)
        return summary

    result = run_world(world, duration, sim.record_hz, out_dir=out_dir, overwrite=overwrite,
                       filter_hz=sim.filter_hz, progress=progress, meta=meta,
                       trains=trains, joints=joints, tracks=[t.track for t in scenario.tracks],
                       before_commit=before_commit if out_dir is not None else None)
    if envelope and out_dir is None:
        from trackrider.check.results import check_result

        check_result(result, scenario)
    return result
