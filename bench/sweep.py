"""Sweep throughput: runs per second and per-task overhead, process pool vs Dask.

    python bench/sweep.py [--jobs 2] [--noop 200] [--repeat 2]

Two measurements per backend (process pool; Dask LocalCluster with worker
processes; Dask LocalCluster in-process, threads):

1. **No-op tasks** (``trackrider.sweep.echo_task``: returns its row, simulates
   nothing), submitted ``--noop`` at a time straight to the executor once its
   workers are up: the executor's own cost per task = wall / tasks
   (per worker: × jobs).
2. **Tiny real runs**: ``run_sweep`` of ``scenarios/sweep_tiny.toml`` (12 runs,
   2 s simulated each, summary only) end to end, ``--repeat`` times on one
   cluster (the best kept: Dask's spawned workers load the compiled kernels
   from the cache on their first run): runs per second, the mean
   simulate time of one run inside its worker (``wall_s`` of ``runs.jsonl``),
   and the overhead per run = wall × jobs / runs − mean run time (executor
   start, task transport, file writes, the driver's table).
3. **The same runs in this process** (``run_one`` one after another, after the
   warm-up): the mean run time of a single warm process, which a pool worker's
   run should match (issue 30: every kernel a sweep needs ready before its
   workers start, so none loads one itself).

Set ``NUMBA_CACHE_DIR`` to a private directory on a shared machine.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trackrider import sweep as sw  # noqa: E402

TINY = ROOT / "scenarios" / "sweep_tiny.toml"


def backends(jobs):
    out = [("process pool", None)]
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("dask not installed: pip install trackrider[dask]; process pool only")
        return out
    out += [("dask local (processes)", "local"), ("dask local (threads)", "threads")]
    return out


class _Backend:
    """An executor for one backend, started before timing (closed by close())."""

    def __init__(self, scheduler, jobs):
        self.cluster = None
        if scheduler == "threads":
            import distributed

            self.cluster = distributed.LocalCluster(n_workers=jobs, threads_per_worker=1,
                                                    processes=False, dashboard_address=None)
            self.scheduler = self.cluster.scheduler_address
        elif scheduler == "local":
            import distributed

            self.cluster = distributed.LocalCluster(n_workers=jobs, threads_per_worker=1,
                                                    processes=True, dashboard_address=None)
            self.scheduler = self.cluster.scheduler_address
        else:
            self.scheduler = None

    def close(self):
        if self.cluster is not None:
            self.cluster.close()


def noop_rate(scheduler, jobs, n):
    """(seconds to start, seconds per task) for n echo tasks through one executor."""
    t0 = time.perf_counter()
    backend = _Backend(scheduler, jobs)
    executor, close, _, _ = sw.make_executor(jobs, backend.scheduler)
    try:
        task = {"run": "warm", "seed": 0, "values": {}}
        # make sure every worker is up before timing
        for f in [executor.submit(sw.echo_task, task) for _ in range(2 * jobs)]:
            f.result()
        start = time.perf_counter() - t0
        tasks = [{"run": f"{i:05d}", "seed": i, "values": {"x": float(i)}} for i in range(n)]
        t1 = time.perf_counter()
        futures = [executor.submit(sw.echo_task, t) for t in tasks]
        for f in futures:
            f.result()
        per_task = (time.perf_counter() - t1) / n
    finally:
        close()
        backend.close()
    return start, per_task


def tiny_sweep(backend, jobs, out):
    """run_sweep of the tiny 12-run sweep: (wall s, runs, mean run s, table bytes)."""
    t0 = time.perf_counter()
    res = sw.run_sweep(TINY, out_dir=out, jobs=jobs, scheduler=backend.scheduler,
                       progress=False)
    wall = time.perf_counter() - t0
    walls = [json.loads(line)["wall_s"] for line in (out / "runs.jsonl").read_text().splitlines()]
    statuses = sorted({r["status"] for r in res.rows})
    return wall, len(res.rows), statistics.mean(walls), res.csv_path.read_bytes(), statuses


def single_process(out):
    """Each run of the tiny sweep by ``run_one`` in this (warmed-up) process, in turn: (runs/s, mean run s)."""
    spec = sw.load_sweep(TINY)
    tasks = [dict(item, scenario=str(spec.scenario), sweep_dir=str(out), duration=spec.duration,
                  keep_timeseries=spec.keep_timeseries) for item in sw.plan_runs(spec)]
    t0 = time.perf_counter()
    walls = [sw.run_one(t)["wall_s"] for t in tasks]
    return len(tasks) / (time.perf_counter() - t0), statistics.mean(walls)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--noop", type=int, default=200, help="no-op tasks per backend")
    ap.add_argument("--repeat", type=int, default=2, help="tiny sweeps per backend (best kept)")
    ap.add_argument("--skip-real", action="store_true", help="no-op tasks only")
    args = ap.parse_args(argv)
    jobs = args.jobs
    print(f"sweep benchmark: {os.cpu_count()} cores, jobs = {jobs}, python {sys.version.split()[0]}")
    if not args.skip_real:
        t0 = time.perf_counter()
        sw.warm_up(sw.load_sweep(TINY).scenario)
        print(f"numba warm-up in the driver: {time.perf_counter() - t0:.2f} s")
        tmp = Path(tempfile.mkdtemp(prefix="sweepbench"))
        try:
            rate, run_s = single_process(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"one process, runs in turn: {rate:.2f} runs/s, {run_s:.3f} s per run")
    tables = {}
    print(f"{'backend':24s} {'start s':>8s} {'no-op ms/task':>14s} {'no-op tasks/s':>14s}"
          + ("" if args.skip_real else
             f" {'tiny runs/s':>12s} {'run s':>7s} {'overhead ms/run':>16s}  statuses"))
    for name, scheduler in backends(jobs):
        start, per_task = noop_rate(scheduler, jobs, args.noop)
        line = f"{name:24s} {start:8.2f} {per_task * 1e3:14.2f} {1.0 / per_task:14.0f}"
        if not args.skip_real:
            # one cluster for every repeat: the first sweep pays the workers'
            # kernel loading (Dask spawns its worker processes), the best is kept
            best = None
            backend = _Backend(scheduler, jobs)
            try:
                for _ in range(max(1, args.repeat)):
                    tmp = Path(tempfile.mkdtemp(prefix="sweepbench"))
                    try:
                        got = tiny_sweep(backend, jobs, tmp / "out")
                    finally:
                        shutil.rmtree(tmp, ignore_errors=True)
                    if best is None or got[0] < best[0]:
                        best = got
            finally:
                backend.close()
            wall, n, run_s, table, statuses = best
            tables[name] = table
            overhead = wall * jobs / n - run_s
            line += (f" {n / wall:12.2f} {run_s:7.3f} {overhead * 1e3:16.1f}"
                     f"  {','.join(statuses)}")
        print(line, flush=True)
    if tables:
        same = len(set(tables.values())) == 1
        print(f"sweep.csv identical across backends: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
