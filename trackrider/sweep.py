"""Parameter sweeps: many runs of one base scenario, locally or on a Dask cluster.

A sweep file (TOML) names a base scenario and the axes to vary::

    [sweep]
    scenario = "sweep_rollback_base.toml"   # base scenario, relative to this file
    method = "grid"          # grid | zip | random | lhs      (default grid)
    samples = 64             # number of runs, random and lhs only
    seed = 1                 # root of the per-run seeds        (default 0)
    duration = 30.0          # s, optional: overrides simulation.duration
    keep_timeseries = true   # false: keep only summary.json per run

    [axes]                   # dotted keys of the base scenario (see load_scenario)
    "train.red.car.mass" = [400.0, 500.0, 600.0]              # these values
    "resistance.rolling" = {min = 0.001, max = 0.004, num = 4}  # linspace (grid/zip)
    "resistance.drag_area" = {min = 0.1, max = 2.0, scale = "log"}  # range (random/lhs)

Every run is one task, :func:`run_one`, executed through a
``concurrent.futures.Executor``: a process pool on this machine (default), or a
Dask cluster through ``distributed.Client.get_executor()``.

Outputs under the sweep directory ``DIR``:

* ``DIR/runs/<id>/`` — each run's ``summary.json`` (and ``timeseries.csv``), plus
  ``row.json`` (its row of the table); written to a temporary directory and
  renamed into place, so a run that executes twice leaves one complete copy.
* ``DIR/runs.jsonl`` — the append log: one JSON row per run, appended and
  flushed as runs finish (in completion order); ``--resume`` reads it (and the
  ``row.json`` files) and runs only what is missing.
* ``DIR/sweep.csv`` — the table, one row per run **sorted by run id**, written
  atomically at the end (and on interruption, with the runs finished so far).
  It holds no wall-clock times, so the same sweep gives the same file whatever
  the backend or worker count.
* ``DIR/plan.json`` — the planned runs (ids, axis values, seeds); a resume
  checks that the sweep file still describes the same plan.
"""
from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .errors import InputError

#: ``[sweep]`` keys accepted in a sweep file
#: most runs one sweep may have (docs/scenarios.md, "Limits")
MAX_SWEEP_RUNS = 10_000
SWEEP_KEYS = ("scenario", "method", "samples", "seed", "duration", "keep_timeseries",
              "description")
METHODS = ("grid", "zip", "random", "lhs")
#: statuses a row can have: the simulation's own, or ``error`` (the run failed)
FAILED = ("error",)

#: per-train summary figures copied into the table; combined over trains with
#: the function given (worst case)
TRAIN_FIGURES = {
    "min_crest_speed": min,
    "max_speed": max,
    "min_speed": min,
    "max_g_vertical": max,
    "min_g_vertical": min,
    "max_abs_g_lateral": max,
    "max_abs_g_longitudinal": max,
    "airtime_s": max,
    "min_inner_wheel_load": min,
    "max_l_over_v": max,
    "energy_drift": lambda xs: max(xs, key=abs),
}
#: event kinds (trackrider.metrics) counted into ``n_<kind>`` columns; others
#: go to ``n_other_events``
EVENT_KINDS = ("stalled", "rolled_back", "wheel_lift", "support_lost", "ran_off_track", "collision",
               "block_overrun")

#: headline figures of the summary and the plot: (column, "min" | "max", label)
HEADLINES = (
    ("min_crest_speed", "min", "lowest crest speed, m/s"),
    ("min_speed", "min", "lowest speed, m/s"),
    ("max_g_vertical", "max", "highest vertical G"),
    ("min_g_vertical", "min", "lowest vertical G"),
    ("max_abs_g_lateral", "max", "largest lateral G"),
    ("max_abs_g_longitudinal", "max", "largest longitudinal G"),
    ("trains_per_hour", "min", "lowest throughput, trains/h"),
)
#: statuses reported in the summary run by run
BAD_STATUSES = ("stalled", "derailed", "ran_off_track", "diverged", "error")


# --------------------------------------------------------------------------- spec

@dataclass
class Axis:
    """One axis of a sweep.

    key : dotted key of the base scenario.  values : the explicit values
    (a list, or ``num`` points of a range), or None for a continuous range.
    low, high : the range (None for an explicit list).  scale : ``linear``
    (default) or ``log``.
    """

    key: str
    values: list | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"

    def extremes(self) -> list:
        """The values checked up front against the base scenario: a range's ends,
        a list's smallest and largest number and each of its other values."""
        if self.values is None:
            return [self.low, self.high]
        numbers = [v for v in self.values
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]
        others = [v for v in self.values if v not in numbers]
        picked = [min(numbers), max(numbers)] if numbers else []
        for v in others:
            if v not in picked:
                picked.append(v)
        return list(dict.fromkeys(picked))


@dataclass
class SweepSpec:
    """A parsed, validated sweep file (:func:`load_sweep`)."""

    path: Path
    scenario: Path
    method: str
    axes: list[Axis]
    samples: int | None = None
    seed: int = 0
    duration: float | None = None
    keep_timeseries: bool = True
    description: str = ""

    @property
    def stem(self) -> str:
        return self.path.stem


def _where_axis(key: str) -> str:
    return f'axes."{key}"'


def _number(value, path, where, what="a number"):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"must be {what}, got {value!r}", path=path, where=where)
    if not math.isfinite(value):
        raise InputError(f"must be finite, got {value!r}", path=path, where=where)
    return value


def _parse_axis(key: str, raw, path: Path, method: str) -> Axis:
    where = _where_axis(key)
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise InputError("an axis must be a dotted key such as \"train.red.car.mass\"",
                         path=path, where=where)
    if isinstance(raw, list):
        if not raw:
            raise InputError("needs at least one value", path=path, where=where)
        for i, v in enumerate(raw):
            if isinstance(v, (dict, list)):
                raise InputError(f"value {i + 1} must be a number, string or boolean, "
                                 f"got {v!r}", path=path, where=where)
        if len(raw) > MAX_SWEEP_RUNS:
            raise InputError(f"{len(raw)} values is more than a sweep may run ({MAX_SWEEP_RUNS})",
                             path=path, where=where)
        return Axis(key, values=list(raw))
    if not isinstance(raw, dict):
        raise InputError("must be a list of values or a table {min, max, num}, got "
                         f"{raw!r}", path=path, where=where)
    unknown = sorted(set(raw) - {"min", "max", "num", "scale", "values"})
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (allowed: min, max, num, scale, values)",
                         path=path, where=where)
    if "values" in raw:
        if set(raw) != {"values"}:
            raise InputError("give either values or min/max/num, not both",
                             path=path, where=where)
        return _parse_axis(key, raw["values"], path, method)
    for k in ("min", "max"):
        if k not in raw:
            raise InputError(f"missing {k!r} of the range", path=path, where=where)
    low = float(_number(raw["min"], path, f"{where}.min"))
    high = float(_number(raw["max"], path, f"{where}.max"))
    if high < low:
        raise InputError(f"max ({high}) is below min ({low})", path=path, where=where)
    scale = raw.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise InputError(f"must be 'linear' or 'log', got {scale!r}", path=path,
                         where=f"{where}.scale")
    if scale == "log" and low <= 0.0:
        raise InputError(f"a log scale needs min > 0, got {low}", path=path, where=where)
    num = raw.get("num")
    if num is None:
        if method in ("grid", "zip"):
            raise InputError(f"method {method!r} needs 'num' (the number of values) "
                             "for a range", path=path, where=where)
        return Axis(key, low=low, high=high, scale=scale)
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise InputError(f"must be an integer >= 1, got {num!r}", path=path,
                         where=f"{where}.num")
    if num > MAX_SWEEP_RUNS:
        raise InputError(f"{num} values is more than a sweep may run ({MAX_SWEEP_RUNS})", path=path,
                         where=f"{where}.num")
    if scale == "log":
        values = np.geomspace(low, high, num)
    else:
        values = np.linspace(low, high, num)
    return Axis(key, values=[float(v) for v in values], low=low, high=high, scale=scale)


def load_sweep(path, check_scenario: bool = True) -> SweepSpec:
    """Read and validate a sweep file.

    Parameters
    ----------
    path : str or os.PathLike
        The sweep TOML file.
    check_scenario : bool, default True
        Also check every axis against the base scenario: each axis value at its
        extremes (a list's every value; a range's min and max) is applied alone
        to the base through ``load_scenario(base, overrides=...)``, so an axis
        naming a key absent from the base, or a value the scenario rejects, is
        reported here.

    Raises
    ------
    InputError
        One line naming the sweep file and the key at fault.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such sweep file", path=path)
    from .inputs import read_toml

    doc = read_toml(path, "sweep file")

    unknown = sorted(set(doc) - {"sweep", "axes"})
    if unknown:
        raise InputError("unknown table (allowed: [sweep], [axes])", path=path,
                         where=unknown[0])
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict):
        raise InputError("missing [sweep] table", path=path, where="sweep")
    unknown = sorted(set(sweep) - set(SWEEP_KEYS))
    if unknown:
        raise InputError(f"unknown key (allowed: {', '.join(SWEEP_KEYS)})", path=path,
                         where=f"sweep.{unknown[0]}")
    if "scenario" not in sweep:
        raise InputError("missing the base scenario file", path=path, where="sweep.scenario")
    if not isinstance(sweep["scenario"], str) or "\x00" in sweep["scenario"]:
        raise InputError("must be a file path (a string without NUL characters)", path=path, where="sweep.scenario")
    scenario = (path.parent / sweep["scenario"]).resolve()
    if not scenario.is_file():
        raise InputError(f"no such scenario file: {sweep['scenario']}", path=path,
                         where="sweep.scenario")
    method = sweep.get("method", "grid")
    if method not in METHODS:
        raise InputError(f"must be one of {', '.join(METHODS)}, got {method!r}", path=path,
                         where="sweep.method")
    samples = sweep.get("samples")
    if method in ("random", "lhs"):
        if samples is None:
            raise InputError(f"method {method!r} needs the number of samples", path=path,
                             where="sweep.samples")
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise InputError(f"must be an integer >= 1, got {samples!r}", path=path,
                             where="sweep.samples")
        if samples > MAX_SWEEP_RUNS:
            raise InputError(f"{samples} runs is more than a sweep may have ({MAX_SWEEP_RUNS}); "
                             "split it into several sweeps", path=path, where="sweep.samples")
    elif samples is not None:
        raise InputError(f"samples is for random and lhs; method {method!r} runs every "
                         "value given", path=path, where="sweep.samples")
    seed = sweep.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", path=path,
                         where="sweep.seed")
    duration = sweep.get("duration")
    if duration is not None:
        duration = float(_number(duration, path, "sweep.duration"))
        if duration <= 0.0:
            raise InputError(f"must be > 0, got {duration}", path=path,
                             where="sweep.duration")
    keep = sweep.get("keep_timeseries", True)
    if not isinstance(keep, bool):
        raise InputError(f"must be true or false, got {keep!r}", path=path,
                         where="sweep.keep_timeseries")
    description = sweep.get("description", "")
    if not isinstance(description, str):
        raise InputError("must be a string", path=path, where="sweep.description")

    raw_axes = doc.get("axes")
    if not isinstance(raw_axes, dict) or not raw_axes:
        raise InputError("needs at least one axis, e.g. \"resistance.rolling\" = "
                         "[0.001, 0.002]", path=path, where="axes")
    axes = []
    for key, raw in raw_axes.items():
        if isinstance(raw, dict) and not ({"min", "max", "num", "scale", "values"} & set(raw)):
            # an unquoted dotted key (train.red.car.mass = ...) parses as nested tables
            raise InputError("quote dotted axis keys: \"" + key + ".…\" = [...]", path=path,
                             where=_where_axis(key))
        axes.append(_parse_axis(key, raw, path, method))
    if method == "grid":
        n_runs = math.prod(len(ax.values) for ax in axes)
        if n_runs > MAX_SWEEP_RUNS:
            raise InputError(f"the grid has {n_runs:,} runs, more than a sweep may have "
                             f"({MAX_SWEEP_RUNS:,}); use fewer values or method = \"lhs\"", path=path,
                             where="axes")
    if method == "zip":
        n = len(axes[0].values)
        for ax in axes[1:]:
            if len(ax.values) != n:
                raise InputError(f"zip needs axes of equal length: {len(ax.values)} values "
                                 f"here, {n} in \"{axes[0].key}\"", path=path,
                                 where=_where_axis(ax.key))
    spec = SweepSpec(path=path, scenario=scenario, method=method, axes=axes,
                     samples=samples, seed=seed, duration=duration,
                     keep_timeseries=keep, description=description)
    if check_scenario:
        check_axes(spec)
    return spec


def check_axes(spec: SweepSpec) -> None:
    """Check every axis against the base scenario (see :func:`load_sweep`).

    The base scenario itself is loaded first (its own errors name its own file);
    then each axis value at its extremes, alone. Raises InputError naming the
    sweep file, the axis and the base scenario's complaint.
    """
    from .limits import check_output, entities
    from .scenario import load_scenario

    base = load_scenario(spec.scenario)
    if spec.keep_timeseries:       # every run keeps its timeseries.csv: the sweep writes them all
        check_output(base.simulation, entities(base.trains, base.bodies), spec.duration, path=spec.path,
                     where="sweep.keep_timeseries", runs=len(plan_runs(spec)))
    for ax in spec.axes:
        for value in ax.extremes():
            try:
                load_scenario(spec.scenario, overrides={ax.key: value})
            except InputError as exc:
                base = spec.scenario.name
                if (exc.where or "").startswith("override"):
                    message = f"not a key of the base scenario {base}: {exc.detail}"
                else:
                    inner = ": ".join(p for p in (exc.where, exc.detail) if p)
                    message = f"value {value!r} rejected by the base scenario {base}: {inner}"
                raise InputError(message, path=spec.path, where=_where_axis(ax.key)) from None


# --------------------------------------------------------------------------- plan

def run_ids(n: int) -> list[str]:
    """Run ids ``0000, 0001, …`` (at least 4 digits, all the same width)."""
    width = max(4, len(str(max(n - 1, 0))))
    return [f"{i:0{width}d}" for i in range(n)]


def _from_unit(ax: Axis, u: float):
    """Map ``u`` in [0, 1) onto the axis: a value of its list, or a point of its range."""
    if ax.values is not None and ax.low is None:
        return ax.values[min(int(u * len(ax.values)), len(ax.values) - 1)]
    if ax.scale == "log":
        return float(math.exp(math.log(ax.low) + u * (math.log(ax.high) - math.log(ax.low))))
    return float(ax.low + u * (ax.high - ax.low))


def plan_runs(spec: SweepSpec) -> list[dict]:
    """The runs of a sweep, in run-id order: ``[{"run", "seed", "values"}, ...]``.

    ``grid``: every combination, the last axis varying fastest. ``zip``: the
    axes side by side. ``random``: each run draws every axis uniformly (a list:
    one of its values; a range: a point of it, on its scale) from its own
    generator. ``lhs``: a Latin hypercube of ``samples`` points
    (``scipy.stats.qmc.LatinHypercube``) scaled onto the axes (a range with
    ``num`` counts as the continuous range here). Per-run seeds are
    ``numpy.random.SeedSequence(seed).spawn(n)``, recorded as a 32-bit integer
    in each row. Deterministic: the same sweep file gives the same plan.
    """
    axes = spec.axes
    if spec.method == "grid":
        import itertools

        combos = [list(c) for c in itertools.product(*(ax.values for ax in axes))]
    elif spec.method == "zip":
        combos = [list(c) for c in zip(*(ax.values for ax in axes))]
    else:
        combos = None
    n = len(combos) if combos is not None else spec.samples
    children = np.random.SeedSequence(spec.seed).spawn(n)
    seeds = [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]
    if spec.method == "random":
        combos = []
        for child in children:
            rng = np.random.default_rng(child)
            combos.append([_from_unit(ax, float(rng.random())) for ax in axes])
    elif spec.method == "lhs":
        from scipy.stats import qmc

        root = np.random.default_rng(np.random.SeedSequence(spec.seed))
        unit = qmc.LatinHypercube(d=len(axes), seed=root).random(n)
        continuous = [Axis(ax.key, low=ax.low, high=ax.high, scale=ax.scale)
                      if ax.low is not None else ax for ax in axes]
        combos = [[_from_unit(ax, float(u)) for ax, u in zip(continuous, row)]
                  for row in unit]
    ids = run_ids(n)
    return [{"run": ids[i], "seed": seeds[i],
             "values": {ax.key: combos[i][j] for j, ax in enumerate(axes)}}
            for i in range(n)]


def _plan_digest(spec: SweepSpec, plan: list[dict]) -> str:
    doc = {"scenario": str(spec.scenario), "duration": spec.duration,
           "keep_timeseries": spec.keep_timeseries, "runs": plan}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------- task

_ANSI = None
#: longest error text kept in a row, characters
MAX_ERROR_CHARS = 400


def _one_line(text: str) -> str:
    """Error text for a table cell: one line, no terminal colour codes, bounded."""
    global _ANSI
    if _ANSI is None:
        import re

        _ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
    text = " ".join(_ANSI.sub("", str(text)).split())
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS - 1] + "…"
    return text


def summary_row(summary: dict) -> dict:
    """Headline figures of one run's ``summary.json`` as flat table columns.

    Per-train figures (:data:`TRAIN_FIGURES`) are combined over the trains to
    the worst case (lowest minimum, highest maximum); events are counted by
    kind into ``n_<kind>`` columns; ``n_events`` is the total. A ride with
    stations or block sections adds its throughput (``trains_per_hour``,
    ``riders_per_hour``) and ``held_s``, the time trains spent held at block
    boundaries, summed over the block sections (``summary["operation"]``;
    empty cells for a run without them).
    """
    row: dict[str, Any] = {"status": summary.get("status", ""),
                           "simulated_s": summary.get("simulated_s")}
    trains = summary.get("trains") or {}
    for name, combine in TRAIN_FIGURES.items():
        xs = [t[name] for t in trains.values()
              if isinstance(t, dict) and isinstance(t.get(name), (int, float))
              and t.get(name) is not None and math.isfinite(t[name])]
        row[name] = float(combine(xs)) if xs else None
    events = summary.get("events") or []
    counts = {kind: 0 for kind in EVENT_KINDS}
    other = 0
    for ev in events:
        kind = ev.get("kind") if isinstance(ev, dict) else None
        if kind in counts:
            counts[kind] += 1
        else:
            other += 1
    row["n_events"] = len(events)
    for kind in EVENT_KINDS:
        row[f"n_{kind}"] = counts[kind]
    row["n_other_events"] = other
    op = summary.get("operation")
    op = op if isinstance(op, dict) else {}

    def number(v):
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    row["trains_per_hour"] = number(op.get("throughput_trains_per_hour"))
    row["riders_per_hour"] = number(op.get("riders_per_hour"))
    held = [number(b.get("held_s")) for b in (op.get("block_sections") or {}).values() if isinstance(b, dict)]
    held = [h for h in held if h is not None]
    row["held_s"] = float(sum(held)) if held else None
    # valleyed: the train failed a hill. A train that rolls back (no motor
    # acting) oscillates in the valley for minutes before it comes to rest and
    # the run reports ``stalled``; either counts.
    row["valleyed"] = (None if row["status"] in FAILED + ("",) else
                       bool(row["status"] == "stalled" or counts["stalled"]
                            or counts["rolled_back"]))
    return row


def _read_json(path: Path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _write_json_atomic(path: Path, doc) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def run_one(task: dict) -> dict:
    """Run one scenario of a sweep; never raises for a bad run.

    Parameters
    ----------
    task : dict
        ``run`` (id string), ``seed`` (int), ``values`` ({dotted key: value}),
        ``scenario`` (base file, absolute path), ``sweep_dir`` (the sweep's
        directory), ``duration`` (s or None: the scenario's own),
        ``keep_timeseries`` (bool).

    Returns
    -------
    dict
        The run's row: ``run``, ``seed``, the axis values (by their dotted
        keys), ``status`` (the summary's status, or ``error`` when the run
        failed: bad combination, exception), ``error`` (one line, empty when
        none), the figures of :func:`summary_row`, and ``wall_s`` (s; not
        written to sweep.csv).

    The run's outputs go to ``<sweep_dir>/runs/<run>/``: written into a
    temporary sibling directory and renamed into place, so a task that runs
    twice (a retried or duplicated task) leaves one complete directory; the
    second copy returns the first's row.
    """
    run = str(task["run"])
    runs_dir = Path(task["sweep_dir"]) / "runs"
    final = runs_dir / run
    done = _read_json(final / "row.json")
    if done is not None:
        return done
    started = time.perf_counter()
    row: dict[str, Any] = {"run": run, "seed": task.get("seed")}
    row.update(task["values"])
    tmp = None
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{run}.", dir=runs_dir))
        figures, error = _simulate_into(task, tmp)
        row.update(figures)
        row["error"] = error
    except Exception as exc:  # noqa: BLE001 - a task never raises for a bad run
        row.update(summary_row({"status": "error"}))
        row["error"] = _one_line(f"{type(exc).__name__}: {exc}")
    row["wall_s"] = round(time.perf_counter() - started, 6)
    if tmp is None:  # could not even create the directory
        return row
    try:
        _write_json_atomic(tmp / "row.json", row)
        try:
            os.rename(tmp, final)
        except OSError:
            # another copy of this task finished first: keep its outputs
            shutil.rmtree(tmp, ignore_errors=True)
            other = _read_json(final / "row.json")
            if other is not None:
                return other
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        row["status"] = "error"
        row["error"] = _one_line(f"cannot write the run's outputs: {exc}")
    return row


def echo_task(task: dict) -> dict:
    """A task that simulates nothing: the run's row with status ``completed`` and
    no figures. Measures the executor's own per-task overhead (bench/sweep.py)."""
    row = {"run": str(task["run"]), "seed": task.get("seed"), **task["values"]}
    row.update(summary_row({"status": "completed"}))
    row["error"] = ""
    row["wall_s"] = 0.0
    return row


def _simulate_into(task: dict, out: Path) -> tuple[dict, str]:
    """Load the scenario with the run's overrides, simulate into ``out``."""
    from .scenario import load_scenario
    from .sim import simulate

    try:
        scenario = load_scenario(task["scenario"], overrides=dict(task["values"]))
    except InputError as exc:
        return summary_row({"status": "error"}), _one_line(str(exc))
    error = ""
    try:
        if task.get("keep_timeseries", True):
            result = simulate(scenario, out_dir=out, duration=task.get("duration"),
                              overwrite=True, progress=None)
            summary = result.summary
            error = _one_line(getattr(result, "message", "") or "")
        else:
            result = simulate(scenario, out_dir=None, duration=task.get("duration"),
                              progress=None)
            summary = result.summary
            error = _one_line(getattr(result, "message", "") or "")
            _write_json_atomic(out / "summary.json", summary)
    except Exception as exc:  # SimulationError and anything unexpected
        summary = _read_json(out / "summary.json") or {"status": "error"}
        if summary.get("status") in (None, "completed"):
            summary["status"] = "error"
        error = _one_line(f"{type(exc).__name__}: {exc}")
    return summary_row(summary), error


def warm_up(scenario_path) -> None:
    """Compile the numba kernels in this process (and fill the on-disk cache).

    Runs the base scenario for a few steps without writing anything, so that
    workers started afterwards load compiled kernels from the cache instead of
    compiling them in parallel (parallel first compilations into one cache can
    crash). Errors are left for the runs to report.
    """
    try:
        from .scenario import load_scenario
        from .sim import simulate

        scenario = load_scenario(scenario_path)
        dt = getattr(getattr(scenario, "simulation", None), "dt", 1e-3) or 1e-3
        simulate(scenario, out_dir=None, duration=5 * dt, progress=None)
    except Exception:  # noqa: BLE001 - the runs report their own errors
        pass


# --------------------------------------------------------------------------- table

def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value).lower()
    return str(value)


def table_columns(spec: SweepSpec) -> list[str]:
    """Columns of ``sweep.csv``, in order."""
    figures = list(summary_row({}).keys())
    figures.remove("status")
    return (["run", "seed"] + [ax.key for ax in spec.axes] + ["status", "error"]
            + figures)


def write_table(path: Path, columns: list[str], rows: list[dict]) -> None:
    """Write rows (sorted by run id) as CSV, atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in sorted(rows, key=lambda r: r["run"]):
        writer.writerow([_cell(row.get(c)) for c in columns])
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)


def read_table(path) -> tuple[list[str], list[dict]]:
    """Read a ``sweep.csv``: (columns, rows), numbers as floats, empty cells None."""
    path = Path(path)
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        columns = next(reader)
        rows = []
        for values in reader:
            row = {}
            for c, v in zip(columns, values):
                if v == "":
                    row[c] = None
                elif c in ("run", "status", "error"):
                    row[c] = v
                elif v in ("true", "false"):
                    row[c] = v == "true"
                else:
                    try:
                        row[c] = float(v)
                    except ValueError:
                        row[c] = v
            rows.append(row)
    return columns, rows


def _read_log(path: Path) -> dict[str, dict]:
    """Rows of the append log by run id; a torn last line is ignored."""
    rows: dict[str, dict] = {}
    if not path.is_file():
        return rows
    with open(path) as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "run" in row:
                rows[str(row["run"])] = row
    return rows


# --------------------------------------------------------------------------- run

@dataclass
class SweepResult:
    """What :func:`run_sweep` returns.

    out_dir : the sweep directory.  spec : the sweep.  columns : sweep.csv's
    columns.  rows : one dict per run, sorted by run id.  n_run : runs executed
    by this call.  n_resumed : runs found finished (``resume``).  wall_s : s.
    backend : a description of the executor.  interrupted : True when the
    sweep stopped early (rows holds the runs finished so far).
    """

    out_dir: Path
    spec: SweepSpec
    columns: list[str]
    rows: list[dict]
    n_run: int = 0
    n_resumed: int = 0
    wall_s: float = 0.0
    backend: str = ""
    interrupted: bool = False
    run_ids: list[str] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        """Runs with status ``error`` (failed, as opposed to a stall or a derailment)."""
        return sum(1 for r in self.rows if r.get("status") in FAILED)

    @property
    def csv_path(self) -> Path:
        return self.out_dir / "sweep.csv"


def _dask_missing(where: str) -> InputError:
    return InputError("Dask is not installed: pip install trackrider[dask]", where=where)


def make_executor(jobs: int | None = None, scheduler=None):
    """The executor of a sweep: ``(executor, close, description, client)``.

    scheduler None (and no ``DASK_SCHEDULER_ADDRESS``): a process pool of
    ``jobs`` workers (default: all cores). ``"local"``: a Dask ``LocalCluster``
    of ``jobs`` single-threaded worker processes (dashboard on :8787 when free).
    Any other string: the address of a running Dask scheduler
    (``tcp://host:8786``, or ``inproc://…`` for an in-process cluster). A
    ``distributed.Client`` is used as it is. ``close()`` releases what was
    started here; ``client`` is the ``distributed.Client`` (None for the pool).
    """
    if scheduler is None:
        scheduler = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    cores = os.cpu_count() or 1
    if jobs is not None and (isinstance(jobs, bool) or int(jobs) < 1):
        raise InputError(f"must be >= 1, got {jobs}", where="-j")
    if scheduler is None:
        import multiprocessing
        import sys

        n = int(jobs or cores)
        # Linux: fork, so the workers inherit the kernels the driver compiled (or
        # loaded from the cache) in warm_up; loading them again costs each
        # worker seconds. Elsewhere fork is unsafe: spawn (workers load the
        # kernels from the cache the driver filled).
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        ctx = multiprocessing.get_context(method)
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx)
        return pool, (lambda: pool.shutdown(wait=True, cancel_futures=True)), \
            f"process pool, {n} workers", None
    try:
        import distributed
    except ImportError:
        raise _dask_missing("--scheduler") from None
    closers: list[Callable] = []
    if isinstance(scheduler, distributed.Client):
        client = scheduler
        desc = f"Dask client {client.scheduler.address}"
    elif scheduler == "local":
        n = int(jobs or cores)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                           processes=True, dashboard_address=":8787")
        client = distributed.Client(cluster)
        closers += [client.close, cluster.close]
        desc = f"Dask LocalCluster, {n} workers, dashboard {client.dashboard_link}"
    else:
        try:
            client = distributed.Client(str(scheduler), timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler {scheduler!r}: "
                             f"{_one_line(exc)}", where="--scheduler") from None
        closers.append(client.close)
        desc = f"Dask scheduler {scheduler}"
    executor = client.get_executor(pure=False)

    def close():
        executor.shutdown(wait=False)
        for fn in closers:
            try:
                fn()
            except Exception:  # noqa: BLE001
                pass

    return executor, close, desc, client


def warm_dask_workers(client, scenario_path) -> None:
    """Compile (or load) the kernels on every Dask worker before the runs start.

    One worker per host first (it compiles into that host's cache, alone), then
    the others (they load from the cache): parallel first compilations into one
    cache can crash.
    """
    workers = client.scheduler_info().get("workers", {})
    first: dict[str, str] = {}
    for address, info in sorted(workers.items()):
        first.setdefault(str(info.get("host", address)), address)
    leaders = list(first.values())
    if leaders:
        client.run(warm_up, str(scenario_path), workers=leaders)
    rest = [a for a in sorted(workers) if a not in leaders]
    if rest:
        client.run(warm_up, str(scenario_path), workers=rest)


class _Progress:
    """Rich progress bar: runs done, failures, estimated time left."""

    def __init__(self, total: int, done: int, enabled: bool):
        self.callback = enabled if callable(enabled) else None
        self.bar = None
        self.failures = 0
        self.done = done
        self.total = total
        if enabled is True:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress,
                                       TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            console = Console(stderr=True)
            self.bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("runs, {task.fields[failures]} failed"),
                                TimeElapsedColumn(), TextColumn("left"),
                                TimeRemainingColumn(), console=console, transient=False)
            self.task = self.bar.add_task("sweep", total=total, completed=done, failures=0)
            self.bar.start()

    def advance(self, row: dict) -> None:
        self.done += 1
        if row.get("status") in FAILED:
            self.failures += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, failures=self.failures)
        if self.callback is not None:
            self.callback(self.done, self.total, row)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_sweep(sweep_file, out_dir=None, jobs: int | None = None, scheduler=None,
              resume: bool = False, progress=True, overwrite: bool = False,
              task: Callable[[dict], dict] = run_one) -> SweepResult:
    """Run every run of a sweep file and write the sweep directory.

    Parameters
    ----------
    sweep_file : str or os.PathLike
        The sweep TOML (see the module docstring).
    out_dir : path, optional
        The sweep directory; default ``results/<sweep file stem>/``.
    jobs : int, optional
        Worker processes (process pool or ``"local"`` cluster); default all cores.
    scheduler : str or distributed.Client, optional
        None: process pool (unless ``DASK_SCHEDULER_ADDRESS`` is set);
        ``"local"``: a Dask LocalCluster; ``"tcp://host:8786"``: that Dask cluster.
    resume : bool, default False
        Continue the sweep in ``out_dir``: runs already finished (in the append
        log or with a complete ``runs/<id>/``) are not run again.
    progress : bool or callable, default True
        A rich progress bar on stderr; or ``callback(done, total, row)`` after
        each run; False for nothing.
    overwrite : bool, default False
        Start afresh in an existing sweep directory (removes its outputs).
    task : callable, default :func:`run_one`
        The module-level task function (for tests and custom runs).

    Returns
    -------
    SweepResult

    Raises
    ------
    InputError
        Bad sweep file or axis (nothing is written), an existing directory
        without ``resume``/``overwrite``, a resume whose sweep file changed,
        Dask missing or unreachable.
    KeyboardInterrupt
        Re-raised after cancelling pending runs and writing ``sweep.csv`` with
        the runs finished so far; resume later with ``resume=True``.
    """
    started = time.perf_counter()
    spec = load_sweep(sweep_file)
    plan = plan_runs(spec)
    digest = _plan_digest(spec, plan)
    out = Path(out_dir) if out_dir is not None else Path("results") / spec.stem
    from .outputs import check_sweep_dir
    from .results_folder import FolderLock

    check_sweep_dir(out, overwrite=overwrite, resume=resume)    # at once, before taking the folder
    with FolderLock(out):          # one sweep (or run) writes a folder at a time (docs/outputs.md)
        return _sweep_into(out, spec, plan, digest, started, jobs, scheduler, resume, progress, overwrite, task)


def _sweep_into(out, spec, plan, digest, started, jobs, scheduler, resume, progress, overwrite, task):
    """``run_sweep`` in the sweep folder ``out``, which this process holds."""
    plan_path = out / "plan.json"
    log_path = out / "runs.jsonl"
    from .outputs import SWEEP_FILES, check_sweep_dir, make_dir
    from .results_folder import open_append

    # the shared rule (trackrider.outputs): only a folder this sweep code wrote is replaced (checked
    # again now that no one else writes here)
    check_sweep_dir(out, overwrite=overwrite, resume=resume)
    if out.exists() and any(out.iterdir()):
        if resume:
            old = _read_json(plan_path)
            if old.get("digest") != digest:
                raise InputError("the sweep file no longer describes the runs in this "
                                 "directory; use another --out", path=out)
        elif overwrite:
            for name in SWEEP_FILES:
                p = out / name
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)
                elif p.exists() or p.is_symlink():
                    p.unlink()
            from trackrider.outputs import drop_stale_report

            drop_stale_report(out)
    columns = table_columns(spec)

    finished: dict[str, dict] = {}
    if resume:
        finished.update(_read_log(log_path))
        runs_dir = out / "runs"
        # temporary directories of runs killed with the previous driver
        for stale in runs_dir.glob(".*") if runs_dir.is_dir() else []:
            shutil.rmtree(stale, ignore_errors=True)
        for item in plan:
            if item["run"] not in finished:
                row = _read_json(runs_dir / item["run"] / "row.json")
                if row is not None:
                    finished[item["run"]] = row
    n_resumed = len(finished)
    todo = [dict(item, scenario=str(spec.scenario), sweep_dir=str(out.resolve()),
                 duration=spec.duration, keep_timeseries=spec.keep_timeseries)
            for item in plan if item["run"] not in finished]
    result = SweepResult(out_dir=out, spec=spec, columns=columns, rows=[],
                         n_resumed=n_resumed, run_ids=[p["run"] for p in plan])
    executor = close = None
    if todo:
        dask = bool(scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS"))
        if task is run_one and not dask:
            warm_up(spec.scenario)  # compile numba kernels once, before the pool forks
        if not dask and jobs is None:
            jobs = min(os.cpu_count() or 1, len(todo))   # no idle workers to fork
        # a Dask cluster is reached first, so a bad address fails at once
        executor, close, result.backend, client = make_executor(jobs, scheduler)
        if client is not None and task is run_one:
            try:
                warm_up(spec.scenario)  # fills this host's cache for local workers
                warm_dask_workers(client, spec.scenario)
            except BaseException:
                close()
                raise

    make_dir(out)
    (out / "runs").mkdir(exist_ok=True)
    if not plan_path.exists():
        _write_json_atomic(plan_path, {"digest": digest, "sweep": str(spec.path.resolve()),
                                       "scenario": str(spec.scenario),
                                       "axes": [ax.key for ax in spec.axes],
                                       "scales": {ax.key: ax.scale for ax in spec.axes},
                                       "method": spec.method, "seed": spec.seed,
                                       "runs": plan})
    # rows found only as row.json (finished after the driver stopped) join the log
    with open_append(log_path) as log:       # a link named runs.jsonl is refused, not written through
        logged = _read_log(log_path)
        for run, row in sorted(finished.items()):
            if run not in logged:
                log.write(json.dumps(row, sort_keys=True) + "\n")

    if not todo:
        result.rows = sorted(finished.values(), key=lambda r: r["run"])
        write_table(out / "sweep.csv", columns, result.rows)
        result.wall_s = time.perf_counter() - started
        return result

    futures = {}
    bar = None
    try:
        with open_append(log_path) as log:
            # submit before the progress bar starts its thread: a process pool
            # forks its workers at the first submit
            futures = {executor.submit(task, t): t for t in todo}
            bar = _Progress(len(plan), n_resumed, progress)
            for fut in cf.as_completed(futures):
                t = futures[fut]
                try:
                    row = fut.result()
                    lost = False
                except BaseException as exc:  # noqa: BLE001 - a worker died or the task raised
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    # not the run's result but the executor's failure (a worker
                    # died, a task could not be sent): in the table, not in the
                    # log, so that --resume runs it again
                    row = {"run": t["run"], "seed": t["seed"], **t["values"],
                           **summary_row({"status": "error"}),
                           "error": _one_line(f"{type(exc).__name__}: {exc}")}
                    lost = True
                finished[row["run"]] = row
                if not lost:
                    log.write(json.dumps(row, sort_keys=True) + "\n")
                    log.flush()
                result.n_run += 1
                bar.advance(row)
    except BaseException:
        result.interrupted = True
        for fut in futures:
            fut.cancel()
        raise
    finally:
        if bar is not None:
            bar.stop()
        close()
        result.rows = sorted(finished.values(), key=lambda r: r["run"])
        write_table(out / "sweep.csv", columns, result.rows)
        result.wall_s = time.perf_counter() - started
    return result


# --------------------------------------------------------------------------- report

def _describe(row: dict, axes: list[str]) -> str:
    return ", ".join(f"{k}={_short(row.get(k))}" for k in axes)


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_sweep_summary(result, worst: int = 3) -> str:
    """A plain-text summary: the worst runs for each headline figure.

    Parameters
    ----------
    result : SweepResult or path
        A finished sweep, or its directory (reads ``sweep.csv``).
    worst : int, default 3
        Runs listed per headline.

    Lists, for each headline (:data:`HEADLINES`: lowest crest speed, lowest
    speed, highest and lowest vertical G, largest lateral and longitudinal G),
    the ``worst`` runs with their axis values; then every run that stalled,
    derailed, ran off the track, diverged or failed, and those with a wheel lift.
    """
    if isinstance(result, SweepResult):
        rows = result.rows
        axes = [ax.key for ax in result.spec.axes]
        title = f"sweep {result.spec.stem}: {len(rows)} runs in {result.out_dir}"
    else:
        d = Path(result)
        columns, rows = read_table(d / "sweep.csv")
        plan = _read_json(d / "plan.json") or {}
        axes = plan.get("axes") or columns[2:columns.index("status")]
        title = f"sweep {d.name}: {len(rows)} runs in {d}"
    lines = [title]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.get("status") or "?"] = counts.get(r.get("status") or "?", 0) + 1
    lines.append("status: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for col, sense, label in HEADLINES:
        have = [r for r in rows if isinstance(r.get(col), (int, float))
                and r.get(col) is not None and math.isfinite(r[col])]
        if not have:
            continue
        have.sort(key=lambda r: (r[col] if sense == "min" else -r[col], r["run"]))
        lines.append(f"{label}:")
        for r in have[:worst]:
            lines.append(f"  {r[col]:10.4g}  run {r['run']}  {_describe(r, axes)}"
                         f"  [{r.get('status')}]")
    for status in BAD_STATUSES:
        bad = [r for r in rows if r.get("status") == status]
        if bad:
            lines.append(f"{status}: {len(bad)} run(s)")
            for r in bad[:max(worst, 10)]:
                err = r.get("error") or ""
                extra = f"  {err[:157]}…" if len(err) > 160 else (f"  {err}" if err else "")
                lines.append(f"  run {r['run']}  {_describe(r, axes)}{extra}")
            if len(bad) > max(worst, 10):
                lines.append(f"  … and {len(bad) - max(worst, 10)} more")
    valley = [r for r in rows if r.get("valleyed") is True]
    lines.append(f"valleyed (rolled back or stalled): {len(valley)} of {len(rows)} run(s)")
    for r in valley[:max(worst, 10)]:
        lines.append(f"  run {r['run']}  {_describe(r, axes)}  [{r.get('status')}]")
    if len(valley) > max(worst, 10):
        lines.append(f"  … and {len(valley) - max(worst, 10)} more")
    for kind in ("wheel_lift", "support_lost", "ran_off_track"):
        hit = [r for r in rows if (r.get(f"n_{kind}") or 0) > 0]
        if hit:
            lines.append(f"{kind.replace('_', ' ')} events in {len(hit)} run(s): "
                         + ", ".join(r["run"] for r in hit[:20])
                         + (" …" if len(hit) > 20 else ""))
    return "\n".join(lines)


def plot_sweep(sweep_dir, out_png, headlines=None) -> Path:
    """Draw each headline figure against each axis of a sweep (matplotlib, Agg).

    Parameters
    ----------
    sweep_dir : path
        A sweep directory (reads ``sweep.csv`` and ``plan.json``).
    out_png : path
        The figure file (PNG; any format matplotlib knows by its suffix).
    headlines : list of str, optional
        Columns to draw; default the :data:`HEADLINES` that have values.

    One panel per (headline, axis): every run a dot; runs that stalled,
    derailed, ran off or failed are drawn in red with a cross.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = Path(sweep_dir)
    if not (d / "sweep.csv").is_file():
        raise InputError("no sweep.csv: not a sweep directory", path=d)
    columns, rows = read_table(d / "sweep.csv")
    plan = _read_json(d / "plan.json") or {}
    axes = plan.get("axes") or columns[2:columns.index("status")]
    if headlines is None:
        headlines = [c for c, _, _ in HEADLINES
                     if any(isinstance(r.get(c), float) for r in rows)]
    labels = {c: label for c, _, label in HEADLINES}
    headlines = headlines or ["status"]
    fig = plt.figure(figsize=(3.2 * len(axes) + 0.8, 2.4 * len(headlines) + 0.6), layout="constrained")
    draw_sweep_panels(fig, rows, axes, headlines, labels, plan.get("scales") or {})
    fig.suptitle(f"sweep {d.name}: {len(rows)} runs", fontsize=10)
    out_png = Path(out_png)
    from trackrider.outputs import atomic_file

    with atomic_file(out_png) as tmp:
        fig.savefig(tmp, dpi=110, format=out_png.suffix.lstrip(".").lower() or "png")
    plt.close(fig)
    return out_png


def draw_sweep_panels(fig, rows, axes, headlines, labels, scales) -> None:
    """One panel per (headline, axis) on ``fig``: every run a dot; runs that valleyed,
    stalled, derailed, ran off or failed a red cross; one legend for the figure.

    ``rows``: the runs (``sweep.csv`` rows as dicts); ``axes``: the swept keys;
    ``headlines``: the columns drawn (``"status"`` draws 1 for a bad run);
    ``labels``: column → axis label; ``scales``: axis → ``"log"`` or not.
    """
    nr, nc = len(headlines), len(axes)
    grid = fig.subplots(nr, nc, squeeze=False)
    bad = [r.get("status") in BAD_STATUSES or r.get("valleyed") is True for r in rows]
    for i, col in enumerate(headlines):
        for j, ax_key in enumerate(axes):
            ax = grid[i][j]
            xs = [r.get(ax_key) for r in rows]
            if any(x is not None and not isinstance(x, float) for x in xs):
                # a categorical axis (strings, booleans): one position per value
                cats = list(dict.fromkeys(str(x) for x in xs if x is not None))
                xs = [float(cats.index(str(x))) if x is not None else None for x in xs]
                ax.set_xticks(range(len(cats)), cats)
            elif scales.get(ax_key) == "log":
                ax.set_xscale("log")
            ys = [r.get(col) if col != "status" else float(b) for r, b in zip(rows, bad)]
            good = [(x, y) for x, y, b in zip(xs, ys, bad)
                    if not b and isinstance(x, float) and isinstance(y, float)]
            worse = [(x, y) for x, y, b in zip(xs, ys, bad)
                     if b and isinstance(x, float) and isinstance(y, float)]
            if good:
                ax.scatter(*zip(*good), s=12, color="tab:blue", label="ok")
            if worse:
                ax.scatter(*zip(*worse), s=24, color="tab:red", marker="x",
                           label="valleyed / stalled / failed")
            if i == nr - 1:
                ax.set_xlabel(ax_key, fontsize=8)
            if j == 0:
                ax.set_ylabel(labels.get(col, col), fontsize=8)
            finite = [y for y in ys if isinstance(y, float) and math.isfinite(y)]
            if finite and max(finite) - min(finite) <= 1e-6 * max(1.0, abs(max(finite))):
                # (nearly) constant: a readable range around it, not 1e-12 ticks
                mid, pad = (max(finite) + min(finite)) / 2, max(1e-3, 0.02 * abs(max(finite)))
                ax.set_ylim(mid - pad, mid + pad)
            ax.tick_params(which="both", labelsize=7)
            try:
                ax.ticklabel_format(axis="y", useOffset=False)
            except AttributeError:  # not a scalar formatter
                pass
            ax.grid(alpha=0.3)
    handles, names = [], []
    for row in grid:
        for ax in row:
            for h, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(h)
                    names.append(name)
    if handles:
        fig.legend(handles, names, loc="outside upper right", fontsize=8)


# --------------------------------------------------------------------------- CLI glue

def is_sweep_dir(path) -> bool:
    """True when ``path`` is a sweep directory (``trackrider plot`` dispatches on it)."""
    p = Path(path)
    return (p / "sweep.csv").is_file() and (p / "plan.json").is_file()


def sweep_command(sweep_file, jobs: int | None = None, scheduler: str | None = None,
                  out: str | None = None, resume: bool = False, overwrite: bool = False,
                  quiet: bool = False, echo: Callable[[str], Any] = print) -> int:
    """``trackrider sweep``: run, print the summary, return the exit code.

    InputError propagates (the command line turns it into ``error: …``, exit 2).
    Ctrl-C: the finished runs are kept, a one-line note says how to resume,
    exit code 130. The progress bar shows on a terminal unless ``quiet``.
    """
    import sys

    show = (not quiet) and sys.stderr.isatty()
    try:
        result = run_sweep(sweep_file, out_dir=out, jobs=jobs, scheduler=scheduler,
                           resume=resume, overwrite=overwrite, progress=show)
    except KeyboardInterrupt:
        where = Path(out) if out else Path("results") / Path(sweep_file).stem
        if (where / "plan.json").is_file():
            echo(f"interrupted: finished runs kept in {where}; continue with --resume")
        else:
            echo("interrupted before the sweep started: nothing written")
        return 130
    if not quiet:
        echo(format_sweep_summary(result))
    echo(f"wrote {result.csv_path} ({len(result.rows)} runs, {result.n_run} run now, "
         f"{result.n_failed} failed, {result.wall_s:.1f} s, {result.backend or 'nothing to run'})")
    return 0
