"""The integration stage in vector lanes against the scalar stages, ns per car (docs/physics.md, "Cars in lanes").

    python bench/car_lanes.py [--cars 7 1000] [--rounds 5]

``bench/solver.py``'s coasting train (600 kg cars coupled 0.5 m apart, 12 m/s on its hilly circle of
R 500 m) runs 20 steps; then, on that state, in one compiled driver and alternating (``--rounds``
each, medians printed, CPU time), a step's integration forward and back (h, −h: the train stays
where it is) is timed:

* ``scalar``: every body (``kernels.integrate_body``), then every car (``kernels.integrate_car``) —
  the stage as it is without the lanes;
* ``lanes``: ``kernels.integrate_chunk`` over the world, the cars by blocks of 8 through
  ``car_lanes.integrate_block``;

and the parts of the lanes alone: copying the cars in (``copy_in``), the three vector loops
(``vector``), the rows copied lane by lane (``rows``) and the results copied back (``copy_out``).
The load is printed with the figures: compare runs made side by side.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = _Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "physics"))

from trackrider.jit import njit  # noqa: E402
from trackrider.physics import car_lanes as cl  # noqa: E402
from trackrider.physics import kernels as kn  # noqa: E402

PARTS = ("scalar", "lanes", "copy_in", "vector", "rows", "copy_out")


@njit(error_model="numpy", _nrt=False)
def drive(which, reps, h, tracks, bodies, cars, carrier, lam, E, wk):
    """Part ``which`` (index into ``PARTS``) ``reps`` times, h and −h in turn."""
    n, X = cars.n, wk.lx
    for r in range(reps):
        hh = h if r % 2 == 0 else -h
        if which == 0:
            for b in range(bodies.pos.shape[0]):
                kn.integrate_body(b, hh, tracks, bodies, cars, carrier)
            for b in range(n):
                kn.integrate_car(b, tracks, bodies, cars, carrier, lam, E, wk.fr2)
        elif which == 1:
            kn.integrate_chunk(0, bodies.pos.shape[0], hh, tracks, bodies, cars, carrier, lam, E, wk)
        else:
            for j0 in range(0, n, cl.NB):
                m = min(cl.NB, n - j0)
                if which == 2:
                    cl.copy_in(j0, m, tracks, bodies, cars, X)
                elif which == 3:
                    cl.lanes_pose(hh, X)
                    cl.lanes_frame(X)
                    cl.lanes_shift(X)
                elif which == 4:
                    cl.rows_at_prediction(tracks.data, X)
                    cl.rows_at_step(tracks.data, X)
                else:
                    cl.copy_bodies_out(j0, m, bodies, X)
                    cl.copy_cars_out(j0, m, cars, lam, X)


def measure(n_cars, rounds):
    """{part: median ns per car} for a train of ``n_cars``."""
    import analytic
    import solver

    w = solver.build(n_cars, analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
    w.run(20, 20)
    r, tmp = w.records, w._temps
    args = (w.dt, r.tracks, r.bodies, r.cars, tmp.trk.carrier, tmp.trk.lam, tmp.trk.E, tmp.wk)
    reps = max(200, 400_000 // n_cars)
    for i in range(len(PARTS)):
        drive(i, 2, *args)   # compile (or load)
    times = {p: [] for p in PARTS}
    for _ in range(rounds):
        for i, p in enumerate(PARTS):
            c0 = time.process_time()
            drive(i, reps, *args)
            times[p].append((time.process_time() - c0) / reps / n_cars * 1e9)
    return {p: float(np.median(v)) for p, v in times.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cars", type=int, nargs="+", default=[7, 1000])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"the integration, CPU ns per car (medians of {a.rounds}; load {os.getloadavg()[0]:.2f})")
    print(f"{'cars':>5}  " + "  ".join(f"{p:>8}" for p in PARTS) + "  scalar/lanes")
    for n in a.cars:
        t = measure(n, a.rounds)
        print(f"{n:5d}  " + "  ".join(f"{t[p]:8.1f}" for p in PARTS) + f"  {t['scalar'] / t['lanes']:11.2f}")


if __name__ == "__main__":
    main()
