"""Benchmark the track geometry: numba eval_track cost and spline fit time.

Run: ``NUMBA_CACHE_DIR=/tmp/numba_bench python bench/track_eval.py``

Prints
* ns per ``eval_track`` call inside a numba loop (median of 7 runs of 1e6
  calls at random arc lengths on curves/classic_coaster.csv at 0.1 m rows); target ≤ 200 ns;
* seconds to fit a 10 000-point curve (``Track.from_points``, median of 3);
* µs per frame of the vectorised ``Track.frames`` (exact spline, 100 000 frames);
* seconds for ``Track.compact()`` of that 10 000-point curve.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trackrider.curves import Track, load_curve, pack_tracks  # noqa: E402
from trackrider.curves.compact import NCOL, eval_track  # noqa: E402


@njit(cache=True)
def _loop(data, row0, nrows, ds, length, closed, s, out):
    acc = 0.0
    for i in range(s.shape[0]):
        eval_track(data, row0, nrows, ds, length, closed, s[i], out)
        acc += out[0] + out[13]
    return acc


def bench_eval(n_calls=1_000_000, runs=7):
    tr = load_curve(ROOT / "curves" / "classic_coaster.csv")
    p = pack_tracks([tr.compact()])
    rng = np.random.default_rng(0)
    s = rng.uniform(0.0, tr.length, n_calls)
    out = np.empty(NCOL)
    args = (p.data, p.row0[0], p.nrows[0], p.ds[0], p.length[0], bool(p.closed[0]))
    _loop(*args, s[:10], out)  # compile / load cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _loop(*args, s, out)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / n_calls * 1e9, len(p.data)


def helix_points(n):
    t = np.linspace(0.0, 2 * np.pi * 100, n)
    return np.column_stack([20 * np.cos(t), 20 * np.sin(t), 2.0 * t])


def bench_fit(n=10_000, runs=3):
    pts = helix_points(n)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        tr = Track.from_points(pts)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), tr


def main():
    Track.from_points(helix_points(100))  # warm the numba kernels
    ns, rows = bench_eval()
    print(f"eval_track in numba: {ns:.1f} ns per call (median of 7 x 1e6 calls, {rows}-row table; target <= 200 ns)")
    fit, tr = bench_fit()
    print(f"spline fit, 10 000 points: {fit:.3f} s (Track.from_points, median of 3; length {tr.length:.0f} m)")
    s = np.linspace(0.0, tr.length, 100_000)
    t0 = time.perf_counter()
    tr.frames(s)
    dt = time.perf_counter() - t0
    print(f"Track.frames, exact: {dt / len(s) * 1e6:.2f} us per frame (100 000 frames in {dt:.3f} s)")
    t0 = time.perf_counter()
    ct = tr.compact()
    print(f"Track.compact(): {time.perf_counter() - t0:.3f} s for {len(ct.data)} rows (ds = {ct.ds:.4f} m)")


if __name__ == "__main__":
    main()
