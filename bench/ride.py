"""Ride benchmark: the step cost of whole bundled scenarios (their own world, dt and recording).

Prints, per scenario, the CPU µs per step (process time of one run of the scenario's whole duration,
its kernel loaded and a few steps run first) and the multiple of real time (dt / CPU time per
step): the median of ``--repeat`` runs, each in a fresh interpreter, with the load (``uptime``)
before and after. ``--against DIR`` runs the same scenarios with the checkout in DIR too,
interleaved (this checkout, then DIR, per repeat), so that a before/after comparison shares the
machine's load; each checkout keeps its kernels in its own cache directory.

    python bench/ride.py [scenarios/suspended_coaster.toml ...] [--repeat 5] [--against /path/to/checkout]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["scenarios/suspended_coaster.toml"]


def measure(scenario: str) -> dict:
    """One run of ``scenario``'s whole duration in this interpreter: CPU and wall time per step."""
    from trackrider.scenario import build_world, load_scenario

    sc = load_scenario(scenario)
    w = build_world(sc)
    sim = sc.simulation
    every = max(1, int(round(1.0 / (sim.record_hz * sim.dt))))
    steps = int(round(sim.duration / sim.dt))
    w.run(every, every)            # load (or compile) the kernel
    t0, c0 = time.perf_counter(), time.process_time()
    status = w.run(steps, every)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(steps=steps, dt=sim.dt, cpu_us=1e6 * cpu / steps, wall_us=1e6 * wall / steps,
                ok=bool(getattr(status, "ok", True)))


def run_in(checkout: Path, scenario: str, cache: str) -> dict:
    """``measure`` in a fresh interpreter importing trackrider from ``checkout``."""
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=cache, PYTHONPATH=str(checkout))
    code = ("import json, sys; sys.path.insert(0, %r); sys.path.insert(1, %r); import ride; "
            "print(json.dumps(ride.measure(%r)))" % (str(checkout), str(ROOT / "bench"), scenario))
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"error: {checkout}: {scenario}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--against", type=Path, default=None, help="another checkout, run interleaved with this one")
    args = ap.parse_args(argv)
    base_cache = os.environ.get("TRACKRIDER_CACHE_DIR", "/tmp/bench_ride_cache")
    checkouts = [("this", ROOT, base_cache)]
    if args.against is not None:
        checkouts.append(("against", args.against.resolve(), base_cache.rstrip("/") + "_against"))
    print("load before:", load())
    for scenario in args.scenarios:
        path = str((ROOT / scenario).resolve()) if not Path(scenario).is_absolute() else scenario
        for _, co, cache in checkouts:      # warm each checkout's kernel cache (a compile is not timed)
            run_in(co, path, cache)
        res = {name: [] for name, _, _ in checkouts}
        for _ in range(args.repeat):
            for name, co, cache in checkouts:
                res[name].append(run_in(co, path, cache))
        for name, co, _ in checkouts:
            r = res[name]
            cpu = statistics.median(x["cpu_us"] for x in r)
            wall = statistics.median(x["wall_us"] for x in r)
            dt = r[0]["dt"]
            runs = ", ".join(f"{x['cpu_us']:.2f}" for x in r)
            print(f"{Path(scenario).name}  [{name}: {co}]  {r[0]['steps']} steps: CPU {cpu:8.2f} µs/step "
                  f"(runs: {runs}), wall {wall:8.2f} µs/step, {dt * 1e6 / cpu:7.1f}× real time (CPU)")
    print("load after: ", load())


if __name__ == "__main__":
    main()
