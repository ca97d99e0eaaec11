"""Peak memory of a long run vs a short one: recording streams to disk, memory stays flat.

Runs one light car coasting round a closed 30 m circle (dt = 5 ms, recorded at
100 Hz, outputs written to a temporary results directory) for 1 simulated
minute and for 1 simulated hour, each in its own subprocess, and prints each
subprocess's peak resident memory (``resource.getrusage(...).ru_maxrss``), the
part of it added by the run (peak minus the resident size after imports and
building the world), the rows and size of ``timeseries.csv`` and the wall time.

Usage::

    NUMBA_CACHE_DIR=/tmp/numba_bench python bench/memory.py [--durations 60 3600] [--record-hz 100]
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, os, resource, sys, time
    import numpy as np
    from trackrider.curves import Track
    from trackrider.physics import World, CarSpec
    from trackrider.sim import run_world

    duration, record_hz, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    a = np.linspace(0.0, 2.0 * np.pi, 300, endpoint=False)
    track = Track.from_points(np.c_[30 * np.cos(a), 30 * np.sin(a), np.zeros(300)], closed=True)
    w = World(dt=0.005)
    k = w.add_track(track)
    w.add_train("car", track=k, cars=1, car=CarSpec(300.0, 1.5, 1.0, 0.8), start_s=5.0, start_speed=10.0)
    w.run(2, 1, None)          # compile / load the kernels before measuring
    def rss_now_kb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    base = rss_now_kb()
    t0 = time.perf_counter()
    r = run_world(w, duration, record_hz, out_dir=out)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss     # KiB on Linux
    csv = os.path.join(out, "timeseries.csv")
    print(json.dumps({"duration": duration, "peak_kb": peak, "base_kb": base, "wall_s": wall,
                      "samples": r.summary["samples"], "csv_bytes": os.path.getsize(csv),
                      "status": r.status,
                      "energy_drift": r.summary["trains"]["car"]["energy_drift"]}))
""")


def measure(duration: float, record_hz: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="trackrider_mem_") as tmp:
        env = dict(os.environ)
        env.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_bench")
        out = subprocess.run([sys.executable, "-c", CHILD, str(duration), str(record_hz),
                              str(Path(tmp) / "out")], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"child failed:\n{out.stderr}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--durations", type=float, nargs="+", default=[60.0, 3600.0],
                   help="simulated seconds of each run (default: 60 3600)")
    p.add_argument("--record-hz", type=float, default=100.0, help="samples per second (default 100)")
    args = p.parse_args(argv)
    rows = [measure(d, args.record_hz) for d in args.durations]
    print(f"{'simulated':>10} {'rows':>9} {'csv MB':>8} {'wall s':>7} {'peak RSS MB':>12} "
          f"{'run added MB':>13}  status")
    for r in rows:
        print(f"{r['duration']:>9.0f}s {r['samples']:>9d} {r['csv_bytes'] / 1e6:>8.1f} {r['wall_s']:>7.1f} "
              f"{r['peak_kb'] / 1024:>12.1f} {(r['peak_kb'] - r['base_kb']) / 1024:>13.1f}  {r['status']}")
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(f"memory: {last['duration'] / first['duration']:.0f}x longer run, peak RSS "
              f"{last['peak_kb'] / first['peak_kb']:.2f}x ({first['peak_kb'] / 1024:.1f} MB -> "
              f"{last['peak_kb'] / 1024:.1f} MB); csv {last['csv_bytes'] / max(first['csv_bytes'], 1):.0f}x larger")


if __name__ == "__main__":
    main()
