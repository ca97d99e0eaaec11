"""How long the commands take from the shell: wall time of whole processes, median of N.

Run: ``python bench/startup.py [--repeat 5] [--cold 3]``

Measures this checkout (put first on ``PYTHONPATH``), each command as the ``trackrider``
console script runs it (``from trackrider.cli import app; app()`` in a new interpreter):

* ``trackrider --help``
* ``trackrider validate scenarios/classic_coaster.toml``
* a warm ``trackrider run scenarios/classic_coaster.toml --overwrite --quiet`` (kernels in
  the cache, which the first, unmeasured run fills)
* a cold run: the same with an empty kernel cache (``TRACKRIDER_CACHE_DIR`` a new folder)

Targets (issue "the first run and every run after it", quiet 2-core machine): help ≤ 0.4 s,
validate ≤ 0.6 s, warm run ≤ 1.2 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "classic_coaster.toml"
LAUNCH = "import sys; sys.argv[0] = 'trackrider'; from trackrider.cli import app; app()"


def _env(cache_dir: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TRACKRIDER_CACHE_DIR"] = str(cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def _time(args, env, cwd) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *args], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per warm command (median)")
    parser.add_argument("--cold", type=int, default=3, help="cold runs (each compiles from empty; 0: none)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trackrider-startup-") as tmp:
        tmp = Path(tmp)
        warm_cache = tmp / "warm-cache"
        env = _env(warm_cache)
        out = tmp / "results"
        run = ["run", str(SCENARIO), "--out", str(out), "--overwrite", "--quiet"]
        _time(run, env, tmp)                      # fills the kernel cache
        rows = []
        for label, args in (("trackrider --help", ["--help"]),
                            ("trackrider validate classic_coaster", ["validate", str(SCENARIO)]),
                            ("trackrider run classic_coaster (warm)", run)):
            times = [_time(args, env, tmp) for _ in range(opts.repeat)]
            rows.append((label, times))
        cold = []
        for i in range(opts.cold):
            cold.append(_time(run, _env(tmp / f"cold-cache-{i}"), tmp))
        if cold:
            rows.append(("trackrider run classic_coaster (cold)", cold))
    print(f"{'command':40s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  runs")
    for label, times in rows:
        print(f"{label:40s} {statistics.median(times):9.2f} {min(times):7.2f} {max(times):7.2f}  {len(times)}")


if __name__ == "__main__":
    main()
