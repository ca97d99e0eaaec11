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
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import InputError
from .sweep_plan import (MAX_SWEEP_RUNS, METHODS, SWEEP_KEYS, Axis, SweepSpec, _plan_digest,  # noqa: F401
                         check_axes, load_sweep, plan_runs, run_ids)
from .sweep_plot import draw_sweep_panels, plot_sweep  # noqa: F401
from .sweep_table import (BAD_STATUSES, EVENT_KINDS, FAILED, HEADLINES, TRAIN_FIGURES, _read_json,  # noqa: F401
                          read_table, summary_row, table_columns, write_table)

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


def _write_json_atomic(path: Path, doc) -> None:
    from .results_folder import open_new, temp_name

    tmp = temp_name(path)              # a fresh name, created exclusive and no-follow
    with open_new(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


#: s between a pool worker's checks that its driver is alive
PARENT_POLL_S = 0.5


@contextlib.contextmanager
def serial_stages():
    """Within: worlds run their per-car stages serially, whatever their size (``state.PARALLEL_BODIES``;
    docs/physics.md, "Both cores"): a sweep's runs (``run_one``) and its warm-up (``warm_up``), on a
    pool or on Dask. Its runs already fill the cores, one per worker; and a pool forked from a
    driver whose warm-up ran OpenMP's threads cannot use them (GNU OpenMP is not fork-safe: the
    workers died). The same bytes either way."""
    from trackrider.physics import state

    old = state.PARALLEL_BODIES
    state.PARALLEL_BODIES = sys.maxsize
    try:
        yield
    finally:
        state.PARALLEL_BODIES = old


def exit_with_parent(parent_pid: int) -> None:
    """A pool worker's initializer: a daemon thread ends the worker (``os._exit``) once its driver
    ``parent_pid`` is gone (the worker re-parented), so a driver killed with ``kill -9`` leaves no
    worker behind. The check runs between kernel calls (each a fraction of a second)."""
    import threading

    def watch():
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="trackrider-parent-watch", daemon=True).start()


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
        with serial_stages():
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


def warm_up(scenario_path, overrides=None, keep_timeseries: bool = False) -> None:
    """Compile (or load from the cache) in this process every numba kernel a run of the sweep uses.

    Runs the scenario (with ``overrides``: the sweep's first run; the base scenario when they make
    a bad one) for a few recorded samples as a run of the sweep does: writing its outputs, into a
    temporary folder removed after, when the sweep keeps them (the output and filter kernels).
    Workers forked afterwards have the kernels already (else each would load them itself); workers
    started otherwise load them from the cache rather than compiling them in parallel (parallel
    first compilations into one cache can crash). Errors are left for the runs to report.
    """
    try:
        from .scenario import load_scenario
        from .sim import simulate

        try:
            scenario = load_scenario(scenario_path, overrides=dict(overrides or {}))
        except InputError:
            scenario = load_scenario(scenario_path)
        sim = getattr(scenario, "simulation", None)
        dt = getattr(sim, "dt", 1e-3) or 1e-3
        # a few recorded samples (the filtered columns' kernel runs on them), at least 5 steps
        duration = max(5 * dt, 3.0 / (getattr(sim, "record_hz", None) or 1.0 / dt))
        with serial_stages():   # the stages the runs use (and no OpenMP threads before the pool forks)
            if not keep_timeseries:
                simulate(scenario, out_dir=None, duration=duration, progress=None)
                return
            with tempfile.TemporaryDirectory(prefix="trackrider-warm-up-") as tmp:
                simulate(scenario, out_dir=Path(tmp) / "run", duration=duration, overwrite=True, progress=None)
    except Exception:  # noqa: BLE001 - the runs report their own errors
        pass


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
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=exit_with_parent,
                                      initargs=(os.getpid(),))
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


def warm_dask_workers(client, scenario_path, overrides=None, keep_timeseries: bool = False) -> None:
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
        client.run(warm_up, str(scenario_path), overrides, keep_timeseries, workers=leaders)
    rest = [a for a in sorted(workers) if a not in leaders]
    if rest:
        client.run(warm_up, str(scenario_path), overrides, keep_timeseries, workers=rest)


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
        warm = (spec.scenario, todo[0]["values"], spec.keep_timeseries)   # as the first run goes
        if task is run_one and not dask:
            warm_up(*warm)  # compile numba kernels once, before the pool forks
        if not dask and jobs is None:
            jobs = min(os.cpu_count() or 1, len(todo))   # no idle workers to fork
        # a Dask cluster is reached first, so a bad address fails at once
        executor, close, result.backend, client = make_executor(jobs, scheduler)
        if client is not None and task is run_one:
            try:
                warm_up(*warm)  # fills this host's cache for local workers
                warm_dask_workers(client, *warm)
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
