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
"""
from __future__ import annotations

import math
import time as _time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

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


def _train_names(labels, entity_train):
    n_trains = int(max([-1] + [int(k) for k in entity_train])) + 1
    names = [f"train{k}" for k in range(n_trains)]
    for (name, _), k in zip(labels, entity_train):
        if k >= 0:
            names[int(k)] = name
    return names


def _run_status(status):
    """(diverged?, t, entity, message) from World.run's return value."""
    if status is None:
        return False, None, None, ""
    if isinstance(status, str):
        return status == "diverged", None, None, ""
    if getattr(status, "status", None) == "stalled":    # the block logic's deadlock: not a divergence
        return False, None, None, ""
    diverged = getattr(status, "diverged", None)
    if diverged is None:
        ok = getattr(status, "ok", True)
        diverged = not ok
    if callable(diverged):
        diverged = diverged()
    t = getattr(status, "t", None)
    entity = getattr(status, "entity", None)
    message = str(getattr(status, "message", "") or "")
    return bool(diverged), t, entity, message


def _world_trains(world):
    """Gauge and wheels per train from a World's own settings (when not given)."""
    out = []
    gauges = getattr(world, "gauges", ())       # stand-in worlds (tests) may have none
    for tr in getattr(world, "trains", ()):
        gauge = float(gauges[int(tr["track"])])
        out.append({"gauge": gauge, "wheels": "railway" if tr.get("railway") else "coaster"})
    return out


def run_world(world, duration, record_hz, out_dir=None, overwrite=False, filter_hz=SimulationConfig.filter_hz,
              progress=None, meta=None, *, trains=None, joints=None, tracks=None, inputs_of=None) -> Result:
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
    inputs_of : Scenario, optional
        Keep a copy of its file and curve files in ``out_dir/inputs/``, swapped in with the
        results (``trackrider.inputs_copy``).
    """
    from trackrider.metrics import RideMetrics, energy_groups_from_joints
    from trackrider.record import (COLUMNS, FLOAT_FORMAT, NUMERIC_COLUMNS, TIME_FORMAT,
                                   TimeseriesWriter, block_table, write_summary, check_out_dir)

    if out_dir is not None:
        check_out_dir(out_dir, overwrite)
    dt = float(world.dt)
    timing = check(SimulationConfig(duration=duration, dt=dt, record_hz=record_hz, filter_hz=filter_hz))
    duration, record_hz, filter_hz = timing.duration, timing.record_hz, timing.filter_hz
    n_steps, record_every = timing.n_steps, timing.record_every
    record_dt = record_every * dt

    if not hasattr(world, "entity_labels") and hasattr(world, "_build"):
        world._build()   # the World fills its entity tables when it is first built
    labels = [(str(a), int(b)) for a, b in world.entity_labels]
    entity_train = np.asarray(world.entity_train, dtype=int)
    n_ent = len(labels)
    names = _train_names(labels, entity_train)
    n_trains = len(names)
    if trains is None:
        trains = _world_trains(world)
    if joints is None:
        joints = [(j["a"], j["b"]) for j in getattr(world, "joints", ())]
    oper = getattr(world, "operation", None)          # block logic and contacts (physics/blocks.py)
    blocks_on = oper is not None and oper.has_blocks
    # trains that can meet share their energy (a collision passes it from one to the other)
    joints = list(joints) + [(("car", tb, 0), ("car", ta, int(world.trains[ta]["n"]) - 1))
                             for tb, ta in getattr(world, "contact_trains", ())]
    trains = list(trains or [])
    gauge = np.ones(n_ent)
    railway = np.zeros(n_ent, dtype=bool)
    for k in range(n_trains):
        info = trains[k] if k < len(trains) else {}
        sel = entity_train == k
        gauge[sel] = float(info.get("gauge", 1.0))
        railway[sel] = info.get("wheels", "coaster") == "railway"
    groups = energy_groups_from_joints(entity_train, n_trains, joints or [])
    sections = [(trains[k] if k < len(trains) else {}).get("sections", []) for k in range(n_trains)]

    metrics = RideMetrics(labels, entity_train, names, record_dt, cutoff_hz=filter_hz,
                          gauge_per_entity=gauge, railway_per_entity=railway,
                          energy_groups=groups, sections_per_train=sections)
    metrics.roles = [str((trains[k] if k < len(trains) else {}).get("role", "riders")) for k in range(n_trains)]
    writer = None
    out = None
    tables = [] if out_dir is None else None
    if out_dir is not None:
        # taken for this run (one at a time), checked again, the results written in a stage inside it
        from trackrider.results_folder import ResultsFolder

        folder = ResultsFolder(out_dir, overwrite)
        out = folder.path
        try:
            writer = TimeseriesWriter(folder.stage, labels, gauge, extra_columns=("block",) if blocks_on else ())
        except BaseException as exc:
            folder.close(exc)
            raise

    def consume(blocks):
        for t, smp, fg in blocks:
            extra = oper.block_column(smp)[:, :, None] if blocks_on else None
            if writer is not None:
                writer.write(t, smp, fg, extra)
            else:
                tables.append(block_table(t, smp, fg, gauge, extra))

    last_t = [-math.inf]
    from trackrider.metrics import DivergenceCheck, blank_ran_off

    divergence = DivergenceCheck.from_world(world, record_dt, tracks) if hasattr(world, "joints") else None
    insane = []   # (t, entity, reason) of the first instant that is not sane

    def sink(t, samples):
        if insane:                  # the rest of a chunk after the run diverged
            return
        t = np.asarray(t, dtype=float).reshape(-1)
        samples = np.asarray(samples, dtype=float)
        keep = t > last_t[0] + 0.25 * record_dt   # never record an instant twice
        if not np.all(keep):
            t, samples = t[keep], samples[keep]
        if len(t) == 0:
            return
        samples = blank_ran_off(samples.copy())
        bad = divergence.check(t, samples) if divergence is not None else None
        if bad is not None:        # outputs end at the last sane sample
            i, entity, reason = bad
            insane.append((float(t[i]), entity, reason))
            t, samples = t[:i], samples[:i]
            if len(t) == 0:
                return
        last_t[0] = float(t[-1])
        consume(metrics.push(t, samples))

    chunk_records = max(1, min(CHUNK_RECORDS, CHUNK_ROWS // max(1, n_ent)))
    # also bound the work per call (~ steps × entities) so progress reports come often
    # (a whole number of recording intervals, so every chunk ends on a recorded step)
    chunk_steps = min(chunk_records * record_every, CHUNK_WORK // max(1, n_ent))
    chunk_steps = max(record_every, chunk_steps // record_every * record_every)
    start_steps = int(getattr(world, "step_count", 0) or 0)
    done = 0
    diverged = stalled = False
    div_t = div_entity = None
    message = ""
    wall0 = _time.perf_counter()
    try:
        while done < n_steps:
            n = min(chunk_steps, n_steps - done)
            try:
                status = world.run(n, record_every, sink)
            except SimulationError as exc:
                diverged, div_t, div_entity, message = True, exc.t, exc.entity, str(exc)
            else:
                diverged, div_t, div_entity, message = _run_status(status)
            if insane:       # the sink's test found the first instant that is not sane: it ends the outputs
                diverged = True
                div_t, div_entity, message = insane[0]
            done += n
            if progress is not None:
                progress(min(done, n_steps) * dt, n_steps * dt)
            if getattr(status, "status", None) == "stalled":   # the blocks deadlocked: the run ends here
                stalled, message = True, str(status.message)
                break
            if diverged:
                break
        if diverged:
            entity_index = None
            if isinstance(div_entity, (int, np.integer)) and 0 <= int(div_entity) < n_ent:
                entity_index = int(div_entity)
            if div_t is None:
                div_t = float(getattr(world, "time", last_t[0]))
            metrics.mark_diverged(div_t, entity_index)
            who = ""
            if entity_index is not None:
                who = f" ({labels[entity_index][0]} car {labels[entity_index][1]})"
            elif div_entity is not None:
                who = f" ({div_entity})"
            message = f"simulation diverged at t = {float(div_t):.6g} s{who}" + (
                f": {message}" if message else "")
        consume(metrics.finish())
        if oper is not None:
            oper.finish(float(getattr(world, "time", last_t[0])))
            metrics.add_events(oper.events)
    except BaseException as exc:
        if writer is not None:
            writer.abort()
            folder.close(exc)     # an interrupted run keeps its rows so far in the stage; a full disk, none
        raise
    wall_s = _time.perf_counter() - wall0
    steps = int(getattr(world, "step_count", start_steps + done) or 0) - start_steps
    if steps <= 0:
        steps = done

    measured = metrics.summary()
    summary = {"status": measured["status"]}
    if stalled and summary["status"] == "stalled":
        summary["message"] = message
    if diverged:
        summary["message"] = message
        summary["diverged"] = {"t": float(div_t), "entity": div_entity if isinstance(
            div_entity, (str, type(None))) else int(div_entity)}
    summary.update({
        "simulated_s": steps * dt,
        "steps": steps,
        "wall_s": wall_s,
        "dt": dt,
        "record_hz": record_hz,
        "record_dt": record_dt,
        "samples": metrics.samples,
    })
    meta = dict(meta or {})
    notes = [str(w) for w in meta.pop("warnings", None) or []]
    for key, value in meta.items():
        summary[key] = value
    summary.update({
        "events": measured["events"],
        "events_dropped": measured["events_dropped"],
        "trains": measured["trains"],
        "bodies": measured["bodies"],
        "filter": measured["filter"],
        "columns": list(COLUMNS) + (["block"] if blocks_on else []),
        "float_format": {"t": TIME_FORMAT, "other": FLOAT_FORMAT},
    })
    if blocks_on:
        summary["operation"] = oper.summary(steps * dt + start_steps * dt, [
            int((trains[k] if k < len(trains) else {}).get("riders", 4)) for k in range(n_trains)])
    # warnings: the scenario's (curve fits) and the run's own, so --quiet runs and sweeps keep them
    from trackrider.metrics import run_warnings

    damped = {names[k] for k, info in enumerate(trains[:n_trains]) if info.get("damped")}
    own = run_warnings(summary, dt, damped)
    summary["warnings"] = notes + own
    for text in own:
        warnings.warn(text, RuntimeWarning, stacklevel=2)
    try:
        from trackrider import __version__
        summary["trackrider_version"] = __version__
    except ImportError:   # pragma: no cover
        pass

    timeseries = None
    if writer is not None:
        # the results and the inputs complete in the stage, then swapped in over any old ones in one step
        try:
            write_summary(folder.stage, summary)
            writer.close()
            if inputs_of is not None:
                from trackrider.inputs_copy import keep_inputs

                keep_inputs(inputs_of, folder.stage)
            folder.commit()
        except BaseException as exc:
            folder.close(exc)
            raise
        folder.close()
    else:
        table = (np.concatenate(tables) if tables
                 else np.empty((0, len(NUMERIC_COLUMNS) + (1 if blocks_on else 0))))
        m = len(table) // max(1, n_ent)
        timeseries = {}
        for name in COLUMNS + (("block",) if blocks_on else ()):
            if name == "train":
                timeseries[name] = np.tile(np.array([a for a, _ in labels], dtype=str), m)
            elif name == "car":
                timeseries[name] = np.tile(np.array([b for _, b in labels], dtype=int), m)
            elif name == "block":
                timeseries[name] = table[:, len(NUMERIC_COLUMNS)].copy()
            else:
                timeseries[name] = table[:, NUMERIC_COLUMNS.index(name)].copy()
    return Result(summary=summary, timeseries=timeseries, status=summary["status"],
                  out_dir=out, message=message, wall_s=wall_s, events=summary["events"])


def _train_sections(scenario, track_index):
    """The sections on a track as ``(label, s_from, s_to, period)`` for ``section_at``:
    label the section's ``name``, else ``section[i]`` (i its index in the file)."""
    out = []
    try:
        tc = scenario.tracks[track_index]
        track = getattr(tc, "track", None)
        period = float(tc.length) if track is not None and getattr(track, "closed", False) else None
    except (AttributeError, IndexError, TypeError):
        return out
    for i, sec in enumerate(getattr(scenario, "sections", []) or []):
        if getattr(sec, "track_index", None) == track_index:
            label = getattr(sec, "name", "") or f"section[{i}]"
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
        Also keep a copy of the scenario file and its curve files in ``out_dir/inputs/``
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
        gauge = 1.0
        try:
            gauge = float(scenario.tracks[tr.track_index].gauge)
        except (AttributeError, IndexError, TypeError):
            pass
        damped = bool(getattr(tr.car, "swing_damping", 0.0) or getattr(tr.coupling, "damping", None))
        trains.append({"gauge": gauge, "wheels": tr.wheels, "role": getattr(tr, "role", "riders"),
                       "riders": tr.cars * tr.car.rider_count if hasattr(tr.car, "rider_count") else 4 * tr.cars,
                       "damped": damped, "sections": _train_sections(scenario, tr.track_index)})
    for j in getattr(scenario, "joints", []):     # a damper in a joint dissipates its trains' energy
        if j.params.get("damping"):
            for end in (j.end_a, j.end_b):
                if isinstance(end, tuple) and end[0] == "car":
                    trains[end[1]]["damped"] = True
    # the world's joints: the user's, then the suspended cars' swing hinges (their bodies share the energy)
    joints = [(j["a"], j["b"]) for j in getattr(world, "joints", ())]
    meta = {"scenario": str(Path(scenario.path).resolve()) if getattr(scenario, "path", None)
            else None}
    if getattr(scenario, "title", ""):
        meta["title"] = scenario.title
    meta["warnings"] = list(getattr(scenario, "warnings", None) or [])
    if getattr(scenario, "overrides", None):   # so that readers of the results rebuild the same ride
        meta["overrides"] = dict(scenario.overrides)
    return run_world(world, duration, sim.record_hz, out_dir=out_dir, overwrite=overwrite,
                     filter_hz=sim.filter_hz, progress=progress, meta=meta,
                     trains=trains, joints=joints, tracks=[t.track for t in scenario.tracks],
                     inputs_of=scenario if keep_inputs and out_dir is not None else None)
