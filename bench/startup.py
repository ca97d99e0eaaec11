"""How long the commands take from the shell: wall time of whole processes, median of N.

Run: ``python bench/startup.py [--repeat 5] [--cold 3]``

Measures this checkout (put first on ``PYTHONPATH``), each command as the ``trackrider``
console script runs it (``from trackrider.cli import app; app()`` in a new interpreter);
with ``--against OTHER_CHECKOUT`` that one too, the two taking turns run by run:

* ``trackrider --help``
* ``trackrider validate scenarios/classic_coaster.toml``
* a warm ``trackrider run scenarios/classic_coaster.toml --overwrite --quiet`` (kernels in
  the cache, which the first, unmeasured run fills)
* a cold run: the same with an empty kernel cache (``TRACKRIDER_CACHE_DIR`` a new folder)

Targets (issue "the first run and every run after it", quiet 2-core machine): help ≤ 0.4 s,
validate ≤ 0.6 s, warm run ≤ 1.2 s. Wall time is the target; the last column, the median CPU
time (user + system) of the same processes, moves less when other work shares the machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = "import sys; sys.argv[0] = 'trackrider'; from trackrider.cli import app; app()"


def _env(cache_dir: Path, root: Path = ROOT) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TRACKRIDER_CACHE_DIR"] = str(cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    return env


_CPU = []   # CPU seconds (user + system) of each timed process, in the order timed


def _time(args, env, cwd) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *args], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    _CPU.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall


def _commands(root: Path, out: Path):
    scenario = root / "scenarios" / "classic_coaster.toml"
    run = ["run", str(scenario), "--out", str(out), "--overwrite", "--quiet"]
    return run, (("trackrider --help", ["--help"]),
                 ("trackrider validate classic_coaster", ["validate", str(scenario)]),
                 ("trackrider run classic_coaster (warm)", run))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per warm command (median)")
    parser.add_argument("--cold", type=int, default=3, help="cold runs (each compiles from empty; 0: none)")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout to time too, run for run in turn with this one (on a busy "
                             "machine the load then falls on both alike)")
    opts = parser.parse_args()
    roots = [ROOT] + ([opts.against.resolve()] if opts.against else [])
    with tempfile.TemporaryDirectory(prefix="trackrider-startup-") as tmp:
        tmp = Path(tmp)
        plans = []
        for k, root in enumerate(roots):
            env = _env(tmp / f"warm-cache-{k}", root)
            run, commands = _commands(root, tmp / f"results-{k}")
            _time(run, env, tmp)                  # fills the kernel cache
            plans.append((env, run, commands))
        times = {(k, label): [] for k in range(len(roots)) for label, _ in plans[0][2]}
        cpu = {}
        for c in range(len(plans[0][2])):
            for _ in range(opts.repeat):
                for k, (env, _, commands) in enumerate(plans):
                    label, args = commands[c]
                    times[(k, label)].append(_time(args, env, tmp))
                    cpu.setdefault((k, label), []).append(_CPU[-1])
        label_cold = "trackrider run classic_coaster (cold)"
        for i in range(opts.cold):
            for k, (_, run, _) in enumerate(plans):
                times.setdefault((k, label_cold), []).append(_time(run, _env(tmp / f"cold-cache-{k}-{i}", roots[k]), tmp))
                cpu.setdefault((k, label_cold), []).append(_CPU[-1])
    for k, root in enumerate(roots):
        if len(roots) > 1:
            print(f"{root}:")
        print(f"{'command':40s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  runs  {'cpu s':>6s}")
        for (kk, label), ts in times.items():
            if kk == k:
                print(f"{label:40s} {statistics.median(ts):9.2f} {min(ts):7.2f} {max(ts):7.2f}  {len(ts):4d}  "
                      f"{statistics.median(cpu[(kk, label)]):6.2f}")


if __name__ == "__main__":
    main()
