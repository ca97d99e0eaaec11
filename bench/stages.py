"""Stage profile: what each stage of a step costs, for coasting trains of 7, 100 and 1000 cars.

The train of ``bench/solver.py`` (600 kg cars coupled 0.5 m apart, 12 m/s on its hilly circuit,
dt = 1 ms) runs 20 steps; then each stage of ``kernels.run_chunk`` runs alone ``n`` times on that
state (one compiled driver here, ``run_stage``), the world's state restored after each stage, and
a whole step (``World.run``, recording one sample per run) is timed the same way. Prints µs per
call (CPU time) of each stage and its share of their sum, that sum against a whole step (the rest:
the calls between stages, and the data of a long train no longer in the caches), and the cost of
recording a sample (``record``: once per ``record_every`` steps, not in the sum). ``bookkeeping`` is
``run_chunk``'s own work of a step outside the stages: each car's start speed, the programs, the
sections the cars are on, the start velocities kept, whether any row is bounded, the divergence check.
``velocities + track rows`` is ``kernels.rows_chunk`` (the transport, forces and track blocks, by blocks
of 8 cars, through the vector lanes where a block allows: docs/physics.md "Cars in lanes"); ``integrate +
next step's start and rows`` (not in the sum) is ``kernels.serial_step``, which a step between two
unrecorded ones of a chunk takes in place of integrate, velocities + track rows and the start.

    python bench/stages.py [--cars 7 100 1000] [--rolling 0.002] [--repeat 3]

A world of ``state.PARALLEL_BODIES`` bodies or more (1000 cars) also prints its per-car stages on all
threads (``kernels.threaded_rows``, ``threaded_integrate``, and the one region a step between two others
takes, ``threaded_step``: an integration and the next step's start and rows, and the blocks of a plain chain's
couplers; ``NUMBA_NUM_THREADS`` threads), CPU time of
all threads and wall time: compare them with the serial stages (on a quiet machine); and the same chunks
run one after the other on one thread without the parallel region (``chunks in turn``).

``--rolling`` gives the cars rolling friction and drag (their bounded rows along T: ``solve`` is
then the bounded-row solve). Each figure is the median of ``--repeat`` runs; the stages run on
a state that is no longer the step's (a solve after a solve), so a stage's figure is its cost,
not a replay of a step. Timings on a shared machine are noisy: compare runs made side by side.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "physics"))

from trackrider.jit import njit  # noqa: E402
from trackrider.physics import channels as ch  # noqa: E402
from trackrider.physics import kernels as kn  # noqa: E402
from trackrider.physics.car_lanes import chunk_edge  # noqa: E402

STAGES = ("velocities + track rows", "joint rows", "warm start", "solve", "supports", "integrate", "bookkeeping",
          "record")
#: a step that follows an unrecorded one in its chunk begins at the end of the one before: each block of cars
#: integrated, its next start kept and its next rows made at once (``kernels.serial_step``): in place of
#: integrate, velocities + track rows and the bookkeeping's start of a step (not in the sum)
FUSED = ("integrate + next step's start and rows",)
#: a world of ``state.PARALLEL_BODIES`` bodies or more: its per-car stages on all threads (not in the sum)
THREADED = ("velocities + track rows on threads", "integrate on threads",
            "integrate + next step's rows on threads")
#: ... and the same chunks one after the other, without the parallel region (``kernels.rows_chunk``,
#: ``integrate_chunk`` on each ``kernels.lane``): beside the serial stages, what the chunks cost; beside
#: the threaded stages on one thread, what the region costs
CHUNKED = ("velocities + track rows, chunks in turn", "integrate, chunks in turn")


@njit(error_model="numpy", _nrt=False)
def chunks_in_turn(which, cfg, tracks, bodies, cars, res, trk, par):
    """``kernels.par_rows`` (``which`` 0) or ``par_integrate`` (1) without ``prange``: chunk after chunk."""
    if par is not None:
        nb, nc = bodies.pos.shape[0], par.W.shape[0]
        for c in range(nc):
            if which == 0:
                kn.rows_chunk(chunk_edge(c, nb, nc), chunk_edge(c + 1, nb, nc), cfg, bodies, cars, res, trk,
                              kn.lane(par, c))
            else:
                kn.integrate_chunk(chunk_edge(c, nb, nc), chunk_edge(c + 1, nb, nc), cfg.h, tracks, bodies, cars,
                                   trk.carrier, trk.lam, trk.E, kn.lane(par, c))


@njit(error_model="numpy", _nrt=False)
def run_stage(which, n, cfg, world, tmp, out, free_joints, car_rows, ops, rail, back):
    """Stage ``which`` (index into ``STAGES``) of ``kernels.run_chunk``, ``n`` times. The integration
    goes forward and back in turn (``back``: ``cfg`` with −h), so that the train stays on its track: n
    integrations forward with the same velocities would carry its cars off the curve, and each
    would then take the scalar stages' fall-back ("Cars in lanes")."""
    tracks, bodies, cars, sections, res, joints, programs = world
    carried = tmp.trk.kbody.shape[0] > 0
    any_bounded = kn.has_bounded_rows(cars, joints, res, free_joints, car_rows)
    for i in range(n):
        if which == 0:   # as run_chunk's serial stages (a world without moving tracks: by blocks of cars)
            if carried:
                kn.stage_transport(0, cars.n, bodies, cars, tmp.trk.carrier)
                kn.stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 0)
                kn.stage_forces(0, bodies.pos.shape[0], cfg, bodies, cars, res, tmp.trk.carrier, tmp.trk.kbody)
                kn.stage_track_rows(0, bodies.pos.shape[0], cfg, bodies, cars, tmp.trk, tmp.wk)
                kn.stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 1)
            else:
                kn.rows_chunk(0, bodies.pos.shape[0], cfg, bodies, cars, res, tmp.trk, tmp.wk)
        elif which == 1:
            kn.stage_joint_rows(cfg, bodies, cars, joints, tmp, free_joints, carried, False)
            if carried:
                kn.stage_carriers(cfg, tracks, bodies, cars, joints, tmp, free_joints, 2)
        elif which == 2:
            kn.stage_warm_start(cfg, bodies, cars, sections, res, joints, tmp, free_joints, car_rows, ops)
        elif which == 3:
            kn.stage_solve(cfg, bodies, cars, sections, res, joints, tmp, any_bounded, free_joints, car_rows, ops,
                           carried)
        elif which == 4:
            kn.stage_supports(cfg, bodies, cars, tmp.trk)
        elif which == 5:
            kn.stage_integrate(cfg if i % 2 == 0 else back, tracks, bodies, cars, tmp.trk.carrier, tmp.trk.lam,
                               tmp.trk.E, tmp.wk)
        elif which == 6:   # run_chunk's own per-step work outside the stages
            kn.stage_start_speed(0, cars.n, bodies, cars, tmp.trk)
            kn.stage_programs(1, cfg.h, cars, joints, tracks, programs)
            kn.stage_frames(0, cars.n, cars, sections)
            kn.keep_velocities(0, bodies.pos.shape[0], bodies, tmp.scratch)
            any_bounded = kn.has_bounded_rows(cars, joints, res, free_joints, car_rows)
            if kn.diverged_body(bodies) >= 0:
                break
        elif which == 7:
            kn.record_sample(cfg, tracks, bodies, cars, sections, tmp.trk, tmp.scratch, out, rail)
        elif which == 8:   # (forward only: the rows' projection keeps the train on its curve)
            kn.serial_step(cfg, tracks, bodies, cars, sections, res, joints, tmp)
        elif which == 9:
            kn.threaded_rows(cfg, bodies, cars, res, tmp.trk, tmp.par)
        elif which == 10:
            kn.threaded_integrate(cfg if i % 2 == 0 else back, tracks, bodies, cars, tmp.trk, tmp.par)
        elif which == 11:   # one region from a step's integration to the next step's track rows
            kn.threaded_step(cfg, tracks, bodies, cars, sections, res, joints, tmp, tmp.par)
        else:
            chunks_in_turn(which - 12, cfg if i % 2 == 0 else back, tracks, bodies, cars, res, tmp.trk, tmp.par)


def kernel_args(w):
    """``run_chunk``'s arguments for world ``w`` as ``World.run`` makes them (recording every step)."""
    from trackrider.physics import state as st
    from trackrider.physics.operation import idle_ops
    from trackrider.physics.rail import idle_rail

    g = w.gravity
    cfg = st.allocate(st.Step, {}, h=w.dt, gx=0.0, gy=0.0, gz=-g, gmag=math.sqrt(g * g), erp_h=w.erp / w.dt,
                      iterations=w.iterations, warm=w.warm_start, record_every=1, threaded=1)
    rail = w.railway.record if w.railway is not None else idle_rail()
    ops = w.ops if w.ops is not None else idle_ops(len(w._sections), w.ncars)
    out = np.empty((w.pos.shape[0] + len(w._reported), ch.N_CHANNELS))
    return (cfg, w.records, w._temps, out, kn.free_joints_flag(w.joint_state), kn.car_rows_flag(w.records, rail), ops,
            rail, cfg._replace(h=-w.dt))


def arrays(records):
    """Every array of the records (nested named tuples), to snapshot and restore a world's state."""
    out = []
    for r in records:
        if isinstance(r, np.ndarray):
            out.append(r)
        elif isinstance(r, tuple):
            out.extend(arrays(r))
    return out


def profile(n_cars, rolling, calls, repeat):
    """{stage: µs per call}, µs per full step (CPU medians of ``repeat`` runs of ``calls`` calls)."""
    import analytic
    import solver

    track = analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001)
    w = solver.build(n_cars, track, rolling)
    w.run(20, 20)
    args = kernel_args(w)
    state = arrays((args[1], args[2]))
    saved = [a.copy() for a in state]
    run_stage(0, 1, *args)  # compile (or load) the driver
    for a, s in zip(state, saved):
        a[...] = s
    names = STAGES + FUSED + (THREADED + CHUNKED if w._temps.par is not None else ())
    per = {name: [] for name in names}
    wall = {name: [] for name in THREADED}
    step = []
    for _ in range(repeat):
        for i, name in enumerate(names):
            c0, t0 = time.process_time(), time.perf_counter()
            run_stage(i, calls, *args)
            per[name].append((time.process_time() - c0) / calls * 1e6)
            if name in THREADED:
                wall[name].append((time.perf_counter() - t0) / calls * 1e6)
            for a, s in zip(state, saved):
                a[...] = s
        c0 = time.process_time()
        w.run(calls, calls)
        step.append((time.process_time() - c0) / calls * 1e6)
        for a, s in zip(state, saved):
            a[...] = s
    per.update({name + " (wall)": wall[name] for name in names if name in THREADED})
    return {k: float(np.median(v)) for k, v in per.items()}, float(np.median(step))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cars", type=int, nargs="+", default=[7, 100, 1000])
    ap.add_argument("--rolling", type=float, default=0.0, help="rolling-friction coefficient (0: coasting)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    print(f"stage profile, CPU µs per call (median of {a.repeat}); "
          f"{'rolling ' + str(a.rolling) if a.rolling else 'coasting'}")
    for n in a.cars:
        calls = max(200, 200_000 // n)
        per, step = profile(n, a.rolling, calls, a.repeat)
        total = sum(us for name, us in per.items() if name in STAGES and name != "record")
        print(f"{n} cars ({calls} calls): a step {step:.2f} µs, its stages {total:.2f} µs")
        for name, us in per.items():
            share = f"{100 * us / total:5.1f} %" if name in STAGES and name != "record" else \
                "per recorded sample" if name == "record" else "1 thread, not in the sum" if name in FUSED else \
                f"{numba.get_num_threads()} threads" if name.split(" (")[0] in THREADED else "1 thread"
            print(f"  {name:<12} {us:9.3f} µs  {share}")


if __name__ == "__main__":
    main()
