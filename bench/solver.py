"""Solver benchmark: trains of 7, 100 and 1000 cars on a curved hilly circuit at dt = 1 ms.

Prints, per train length: µs per step (wall and CPU), multiple of real time (CPU), ns per
row and pass, and the largest coupler-force error of one step against an exact sparse direct
solve of the same step's equality system (numpy/scipy, assembled independently from the
kernel's rows); with friction rows, over a stop brake and on boosters, the error of those
bounded rows (and the couplers) against an independent exact solve of the same step (sparse
Schur complement and bounded-variable least squares: ``reference.exact_bounded_solve``); the step time of a
locomotive-hauled train of 100 wagons with draft gears; then the compile time of a fresh interpreter (subprocesses):
from a cold cache, from the cache, the imports and world alone (loading from the cache costs the
difference), from a cold cache with a lift section (the kernel with the cars' bounded rows) and
with a hinge in the world (the kernel with every joint kind).

    python bench/solver.py [--quick] [--compile-only] [--compile-profile] [--railway] [--bogies] [--threads] [--calls]
    python bench/solver.py --threads [--cars 150 300 500] [--against DIR [--against-cache DIR]] [--rounds 5]

``--bogies`` times trains of 7, 100 and 1000 cars on bogies beside plain ones and prints the
error of their coupler forces held on a grade against the closed form, and the error of one coasting
step's coupler and swivel impulses against a sparse direct solve of that step's equality rows
(``reference.exact_joint_impulses``) (also printed by a full run); then 10 and 30 cars, plain and on
bogies, on a spinning turntable (a moving track, docs/physics.md §9): step time and one step's coupler
and swivel impulses against a direct solve.

``--threads`` times the 1000- and 100-car trains (coasting; ``--cars``: other lengths) with their per-car
stages on all threads (1 and 2 of numba's threads, whatever ``state.PARALLEL_BODIES`` says) and with the
serial stages, in fresh interpreters, interleaved, 5 rounds (``--rounds``): medians of µs/step wall and
CPU, with the load before and after (docs/physics.md, "Both cores"); ``--against DIR`` runs another
checkout's the same way, interleaved with this one's (``--against-cache``: its kernel cache).

``--calls`` times ``World.run`` called again and again for a few steps at a time (a caller that steps a
7-car train in a loop, 1, 10 and 100 steps a call, one sample recorded a call): CPU µs per call and per step,
medians of 5 blocks; the difference from the step's own cost (the full run's 7-car figure) is what a call costs
in Python and in numba's dispatch of ``run_chunk``.

``--railway`` times only a locomotive-hauled train of 100 wagons with draft gears and air brakes
(also printed by a full run).

``--compile-profile`` compiles the kernels from a cold cache in a fresh interpreter and prints
what the compile is made of, function by function: CPU seconds in numba (typing and lowering,
Python) and in LLVM (optimisation and machine code), each function's own share (its callees
are listed separately; LLVM's share of a caller includes optimising again and compiling to machine
code everything it calls, which numba links into it), and how many signatures each was compiled for.

Timings on a shared machine are noisy: the CPU-time columns (process time) are the ones
to compare.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "physics"))
os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_bench_solver")
os.environ.setdefault("TRACKRIDER_CACHE_DIR", os.environ["NUMBA_CACHE_DIR"])

import numpy as np  # noqa: E402


def build(n_cars, track, rolling=0.0):
    from trackrider.physics import CarSpec, CouplingSpec, World

    w = World(dt=1e-3)
    if rolling:
        w.set_resistance(rolling=rolling, drag_area=0.8)
    w.add_track(track)
    w.add_train("bench", 0, n_cars, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=n_cars * 2.5 + 5.0, start_speed=12.0)
    return w


from reference import bounded_row_error, exact_coupler_impulses, exact_joint_impulses, one_step_rows  # noqa: E402


def timing(n_cars, steps, track, rolling=0.0):
    w = build(n_cars, track, rolling)
    w.run(20, 20)  # compile (or load) and settle
    t0, c0 = time.perf_counter(), time.process_time()
    w.run(steps, 100)
    wall = (time.perf_counter() - t0) / steps
    cpu = (time.process_time() - c0) / steps
    rows_per_step = 5 * n_cars + (n_cars - 1)
    # coupler-force error of one step vs the exact solve
    if rolling:  # bounded rows: the friction rows against an independent exact solve of the same step
        return wall, cpu, rows_per_step, bounded_row_error(w)["friction"], float("nan")
    rows = one_step_rows(w)
    lam_exact, _ = exact_coupler_impulses(rows)
    lam = rows["lam_c"]
    scale = max(np.max(np.abs(lam_exact)), 1e-300)
    err = np.max(np.abs(lam - lam_exact)) / scale
    f_max = scale / w.dt
    return wall, cpu, rows_per_step, err, f_max


def railway_timing(steps, n_wagons=100):
    """A locomotive and ``n_wagons`` 60 t wagons with draft gears (25 mm slack, bunched) and air brakes
    on a straight, dt = 1 ms: notch 8 from rest, a 0.5 bar service application at 10 s (docs/physics.md
    §10). Returns (µs/step wall, µs/step CPU, largest draft force N, largest buff force N) over
    ``steps`` steps after the first 20."""
    from trackrider.physics import CouplingSpec, World
    from trackrider.settings import DriverStep, VehicleSpec

    import analytic

    w = World(dt=1e-3)
    w.add_track(analytic.straight(20000.0), gauge=1.435)
    loco = VehicleSpec(mass=120e3, length=21.0, kind="locomotive", power=3.2e6, max_tractive_effort=3.5e5,
                       adhesion=0.33, brake_rigging=3e4)
    wagons = VehicleSpec(mass=60e3, length=15.0, count=n_wagons, brake_rigging=2.5e4)
    w.add_train("bench", 0, coupling=CouplingSpec("draft_gear", 1.0, slack=0.025, slack_start="bunched"),
                wheels="railway", start_s=19000.0, vehicles=[loco, wagons],
                driver=[DriverStep(time=0.0, notch=8), DriverStep(time=10.0, notch=0, brake=0.5)])
    w.run(20, 20)
    t0, c0 = time.perf_counter(), time.process_time()
    w.run(steps, 100)
    peaks = w.railway.summary()["bench"]
    return ((time.perf_counter() - t0) / steps * 1e6, (time.process_time() - c0) / steps * 1e6,
            peaks["max_draft"]["force"], peaks["max_buff"]["force"] if peaks["max_buff"] else 0.0)


def bogie_build(n_cars, track, bogies, start_speed=12.0, start_s=None):
    from trackrider.physics import CarSpec, CouplingSpec, World

    w = World(dt=1e-3)
    w.add_track(track)
    extra = dict(bogies="two", bogie_spacing=3.0, bogie_mass=60.0) if bogies else {}
    w.add_train("bench", 0, n_cars, CarSpec(600.0, 4.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1, **extra),
                coupling=CouplingSpec("distance", 0.5),
                start_s=start_s if start_s is not None else n_cars * 4.5 + 5.0, start_speed=start_speed)
    return w


def bogie_timing(n_cars, steps, track, bogies):
    """µs per step (wall, CPU) of a coasting train of ``n_cars`` 600 kg cars, 4 m long, plain or each on
    two wheel frames 3 m apart (60 kg each), and the world after it."""
    w = bogie_build(n_cars, track, bogies)
    w.run(20, 20)
    t0, c0 = time.perf_counter(), time.process_time()
    w.run(steps, 100)
    return (time.perf_counter() - t0) / steps * 1e6, (time.process_time() - c0) / steps * 1e6, w


def bogie_exact_error(w):
    """Largest error of one step's coupler and swivel impulses of a train on bogies against a sparse
    direct solve of the step's equality rows, relative to the largest impulse of each kind (the
    larger of the two)."""
    from trackrider.physics.joints import CODES
    from trackrider.physics.joints.common import JI_CHAIN, JI_KIND

    swivels = list(np.flatnonzero(w.ji[:, JI_KIND] == CODES["swivel"]))
    couplers = list(np.flatnonzero(w.ji[:, JI_CHAIN] == 1))   # (the bars inside the cars: chain 5)
    kernel, exact = exact_joint_impulses(w, couplers + swivels)
    err = 0.0
    for js in (couplers, swivels):
        if js:
            k = np.concatenate([kernel[j] for j in js])
            e = np.concatenate([exact[j] for j in js])
            err = max(err, float(np.max(np.abs(k - e)) / np.max(np.abs(e))))
    return err


def bogie_grade_error(n_cars, bogies, pitch=1.0, steps=3000):
    """Largest coupler-force error (relative to the largest force) of a train of ``n_cars`` held at
    the front by a stop brake on a ``pitch``° grade after ``steps`` steps, against the closed form
    (n − k) m g sin θ for coupler k."""
    from trackrider.physics import World  # noqa: F401

    import analytic

    length = n_cars * 4.5 + 60.0
    w = bogie_build(n_cars, analytic.straight(length, pitch_deg=pitch, n=max(201, int(length))), bogies,
                    start_speed=0.0, start_s=length - 20.0)
    w.add_section(kind="brake", track=0, s_from=length - 22.0, s_to=length - 14.0, speed=0.0, max_force=1e9)
    w.run(steps, steps)
    from trackrider.physics.joints.common import JI_CHAIN

    lam = w.records.joints.lam[:, 0] / w.dt
    lam = np.abs(lam[w.ji[:, JI_CHAIN] == 1] if bogies else lam[:n_cars - 1])   # on bogies: between the bodies
    exact = np.array([(n_cars - k) * 600.0 * 9.81 * np.sin(np.radians(pitch)) for k in range(1, n_cars)])
    return float(np.max(np.abs(lam - exact)) / exact[0])


def print_bogies(quick):
    """A train on bogies beside the plain one: step time and coupler forces held on a grade."""
    import analytic

    track = analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001)
    print("cars on bogies (each car body on two wheel frames, its swivels solved with the couplers in car blocks) "
          "beside plain cars, dt = 1 ms")
    print(f"{'cars':>5} {'plain us/step cpu':>18} {'bogies us/step cpu':>19} {'ratio':>6} "
          f"{'plain coupler err':>18} {'bogies coupler err':>19} {'bogies vs exact':>16}")
    for n, steps in ((7, 2000 if quick else 10000), (100, 300 if quick else 2000), (1000, 30 if quick else 200)):
        _, plain, _ = bogie_timing(n, steps, track, False)
        _, bog, w = bogie_timing(n, steps, track, True)
        ex = bogie_exact_error(w)
        ep = bogie_grade_error(n, False, steps=300 if quick else 3000)
        eb = bogie_grade_error(n, True, steps=300 if quick else 3000)
        print(f"{n:>5} {plain:>18.1f} {bog:>19.1f} {bog / plain:>6.1f} {ep:>18.2e} {eb:>19.2e} {ex:>16.2e}")
    print("coupler err: largest error of the coupler forces of the train held at its front on a 1° grade "
          "(after 3 s; 0.3 s with --quick) against (n − k) m g sin θ, relative to the largest; vs exact: one "
          "coasting step's coupler and swivel impulses against a sparse direct solve of the step's rows")
    print_carried_bogies()


def print_carried_bogies(blocks=5, steps=200):
    """Trains on a moving track (docs/physics.md §9): 20 t cars sliding out on a 200 t turntable spinning at
    0.5 rad/s (``tests/physics/test_moving_track.py``), plain and on two bogies each: CPU µs per step (medians
    of ``blocks`` blocks of ``steps``) and one step's coupler and swivel impulses against a direct solve."""
    import statistics

    from test_moving_track import _carried_joint_error, _spinning_train

    print("on a spinning turntable (the chains and car blocks solved with the table, §9)")
    print(f"{'cars':>5} {'plain us/step cpu':>18} {'bogies us/step cpu':>19} {'plain vs exact':>15} "
          f"{'bogies vs exact':>16}")
    for n in (10, 30):
        row = []
        for bogies in ("none", "two"):
            w = _spinning_train(bogies, n)
            err = _carried_joint_error(w)
            ts = []
            for _ in range(blocks):
                t0 = time.process_time()
                w.run(steps, steps)
                ts.append((time.process_time() - t0) / steps * 1e6)
            row.append((statistics.median(ts), err))
        print(f"{n:>5} {row[0][0]:>18.1f} {row[1][0]:>19.1f} {row[0][1]:>15.2e} {row[1][1]:>16.2e}")


_THREADS_CODE = r"""
import sys, time
sys.path[:0] = [%r, %r]
from trackrider.physics import state as st
mode = %r
st.PARALLEL_BODIES, st.MIN_THREADS = (10 ** 9 if mode == "serial" else 1), 1
if mode == "parallel" and hasattr(st, "ThreadChoice"):
    st.ThreadChoice.next = lambda self: True
import solver, analytic
w = solver.build(%d, analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
w.run(20, 20)
t0, c0 = time.perf_counter(), time.process_time()
w.run(%d, 20, chunk_records=1)   # chunks of 20 steps ("auto": state.ThreadChoice picks the way of each)
n = %d
print((time.perf_counter() - t0) / n * 1e6, (time.process_time() - c0) / n * 1e6, w._temps.par is not None)
"""


def thread_steps(n_cars, quick):
    """Steps timed for a train of ``n_cars`` (about 0.2 s of CPU, 0.03 s with ``quick``)."""
    return max(50 if quick else 300, (30_000 if quick else 200_000) // n_cars)


def print_threads(quick, cars=(1000, 100), against=None, rounds=5, against_cache=None):
    """Trains of ``cars`` cars: µs/step (wall, CPU) with the serial stages, and with the per-car stages on
    all threads (whatever ``state.PARALLEL_BODIES`` says) with 1 and 2 threads, and as a long run chooses
    (``state.ThreadChoice``, 2 threads; not for ``against``); every run in chunks of 20 steps; ``against``: another
    checkout's root, run interleaved with this one (its runs labelled with its folder's name), with its
    kernel cache in ``against_cache`` (``TRACKRIDER_CACHE_DIR``) if given."""
    runs = (("serial", "serial", 1), ("parallel, 1 thread", "parallel", 1), ("parallel, 2 threads", "parallel", 2),
            ("chosen as it runs, 2 threads", "auto", 2))
    roots = [(ROOT, "", {})] + ([(Path(against).resolve(), f" [{Path(against).name}]",
                                  {"TRACKRIDER_CACHE_DIR": against_cache} if against_cache else {})]
                                if against else [])
    for n_cars in cars:
        steps = thread_steps(n_cars, quick)
        got = {label + tag: [] for label, mode, _ in runs for _, tag, _ in roots if not (mode == "auto" and tag)}
        loads = [os.getloadavg()[0]]
        for _ in range(rounds):
            for label, mode, threads in runs:
                for root, tag, env in roots:
                    if mode == "auto" and tag:
                        continue   # another checkout may not choose
                    code = _THREADS_CODE % (str(root), str(root / "bench"), mode, n_cars, steps, steps)
                    p = subprocess.run([sys.executable, "-c", code],
                                       env=dict(os.environ, NUMBA_NUM_THREADS=str(threads), **env),
                                       capture_output=True, text=True, cwd=root)
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr)
                    wall, cpu, par = p.stdout.split()
                    assert (par == "True") == (mode != "serial")
                    got[label + tag].append((float(wall), float(cpu)))
        loads.append(os.getloadavg()[0])
        print(f"{n_cars} cars, coasting, {steps} steps, medians of {rounds} interleaved rounds "
              f"(load {loads[0]:.1f} → {loads[1]:.1f})")
        for label, v in got.items():
            print(f"  {label:<32} {np.median([a for a, _ in v]):9.1f} us/step wall "
                  f"{np.median([c for _, c in v]):9.1f} cpu")


def print_railway(quick):
    steps = 3000 if quick else 20000
    wall, cpu, draft, buff = railway_timing(steps)
    print(f"railway: a locomotive and 100 wagons with draft gears and air brakes, {steps * 1e-3:g} s from rest "
          f"(notch 8{', a service application at 10 s' if steps > 10000 else ''}): {wall:.1f} us/step wall, "
          f"{cpu:.1f} us/step cpu "
          f"({1e-3 / (cpu * 1e-6):.1f}x real time), largest draft {draft / 1e3:.0f} kN, buff {buff / 1e3:.0f} kN")


def section_error(track, kind, n_cars=1000):
    """Errors of the bounded rows and couplers of one step against an independent exact solve of
    the same step (``reference.exact_bounded_solve``), 0.1 s after the start:
    ``brake``: a 1000-car train rolling at 0.5 m/s whose first 100 cars are on a stop brake (60 kN
    per car; the train is held by then); ``booster``: a 1000-car train at 12 m/s whose first 200
    cars are on boosters (12 m/s, 20 kN per car)."""
    from trackrider.physics import CarSpec, CouplingSpec, World

    w = World(dt=1e-3)
    w.add_track(track)
    s0 = n_cars * 2.5 + 5.0
    v0, n_on, opts = (0.5, 100, dict(max_force=60000.0)) if kind == "brake" else \
        (12.0, 200, dict(speed=12.0, max_force=20000.0))
    w.add_train("bench", 0, n_cars, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=s0, start_speed=v0)
    w.add_section(kind, 0, s0 - n_on * 2.5, s0 + 50.0, **opts)
    w.run(100, 100)
    return bounded_row_error(w)


def compile_times():
    """(wall s, cpu s) of a fresh interpreter that compiles and runs two steps of a 3-car train:
    from a cold cache, then from the cache; the same interpreter that only imports and builds the
    world (no run); cold for the same train on a lift section, which compiles the cars' bounded-row
    solve (``car_rows``); and cold for the same train plus a pendulum on a hinge, which compiles the
    kernel with every joint kind (``free_joints``)."""
    code = ("import sys, time; t0 = time.perf_counter(); sys.path.insert(0, %r); sys.path.insert(0, %r);"
            "import analytic; from trackrider.physics import World, CarSpec, CouplingSpec;"
            "w = World(); w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, n=2001));"
            "w.add_train('a', 0, 3, CarSpec(600, 2, 1.2, 1));"
            "%s %s print(time.perf_counter() - t0)")
    hinge = ("b = w.add_body('p', 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 0.0, 50.0));"
             "w.add_joint('hinge', 'world', ('body', b), anchor_a=(0.0, 0.0, 51.0), anchor_b=(0.0, 0.0, 1.0),"
             " axis=(1.0, 0.0, 0.0));")
    lift = "w.add_section('lift', 0, 0.0, 30.0, speed=3.0, max_force=8e4);"
    paths = (str(ROOT), str(ROOT / "tests" / "physics"))
    out = {}
    base = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as joint_cache, \
            tempfile.TemporaryDirectory() as lift_cache:
        for label, cdir, extra, run in (("cold", cache, "", True),
                                        ("from cache", cache, "", True),
                                        ("imports and world only", cache, "", False),
                                        ("cold, with a lift section (the cars' bounded rows)", lift_cache, lift, True),
                                        ("cold, with a hinge (every joint kind)", joint_cache, hinge, True)):
            env = dict(base, NUMBA_CACHE_DIR=cdir, TRACKRIDER_CACHE_DIR=cdir)
            r0 = os.times()
            p = subprocess.run([sys.executable, "-c", code % (paths + (extra,
                                                                       "w.run(2, 1);" if run else "w._build();"))],
                               env=env,
                               capture_output=True, text=True, cwd=ROOT)
            r1 = os.times()
            if p.returncode != 0:
                raise RuntimeError(p.stderr)
            out[label] = (float(p.stdout.strip().splitlines()[-1]),
                          (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system))
    return out


_PROFILE_CODE = r"""
import sys, time, collections
sys.path.insert(0, %r); sys.path.insert(0, %r)
from numba.core import event as ev
stack, own, llvm, sigs = [], collections.Counter(), collections.Counter(), collections.Counter()
class Compile(ev.Listener):
    def on_start(self, e):
        d = e.data.get("dispatcher")
        name = getattr(getattr(d, "py_func", None), "__module__", "?").split(".")[-1] + "." + \
            getattr(getattr(d, "py_func", None), "__qualname__", "?")
        sigs[name] += 1
        stack.append([name, time.process_time(), 0.0])
    def on_end(self, e):
        name, t, child = stack.pop()
        dt = time.process_time() - t
        own[name] += dt - child
        if stack:
            stack[-1][2] += dt
class Llvm(ev.Listener):
    def on_start(self, e):
        self.t = time.process_time()
    def on_end(self, e):
        if stack:
            llvm[stack[-1][0]] += time.process_time() - self.t
ev.register("numba:compile", Compile())
ev.register("numba:llvm_lock", Llvm())
import analytic
from trackrider.physics import World, CarSpec
w = World(); w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, n=2001))
w.add_train("a", 0, 3, CarSpec(600, 2, 1.2, 1))
t0 = time.process_time()
w.run(2, 1)
total = time.process_time() - t0
print(f"run_chunk and everything it calls, cold: {total:.2f} s CPU = numba {total - sum(llvm.values()):.2f} s"
      f" + LLVM {sum(llvm.values()):.2f} s; {sum(sigs.values())} compiles of {len(sigs)} functions")
print(f"{'function':40s} {'own s':>7s} {'numba':>7s} {'LLVM':>7s} {'sigs':>5s}")
for name, t in own.most_common():
    if t >= 0.05 or sigs[name] > 1:
        print(f"{name:40s} {t:7.2f} {t - llvm[name]:7.2f} {llvm[name]:7.2f} {sigs[name]:5d}")
"""


def print_compile_profile():
    with tempfile.TemporaryDirectory() as cache:
        p = subprocess.run([sys.executable, "-c", _PROFILE_CODE % (str(ROOT), str(ROOT / "tests" / "physics"))],
                           env=dict(os.environ, NUMBA_CACHE_DIR=cache, TRACKRIDER_CACHE_DIR=cache), capture_output=True,
                           text=True, cwd=ROOT)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    print(p.stdout, end="")


def print_compile_times():
    ct = compile_times()
    print("compile + first steps, " + "; ".join(f"{k}: {w:.1f} s wall ({c:.1f} s cpu)" for k, (w, c) in ct.items()))


def print_calls(quick):
    """``--calls``: CPU µs per ``World.run(k, k)`` call of a 7-car train, k = 1, 10, 100."""
    import statistics

    import analytic

    w = build(7, analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
    w.run(20, 20)  # compile (or load) and settle
    print("World.run called again and again, 7 cars (CPU µs, medians of 5 blocks)")
    for k in (1, 10, 100):
        calls = (400 if quick else 4000) // k
        per = []
        for _ in range(5):
            c0 = time.process_time()
            for _ in range(calls):
                w.run(k, k)
            per.append((time.process_time() - c0) / calls * 1e6)
        us = statistics.median(per)
        print(f"  {k:>4} steps a call: {us:8.1f} µs a call, {us / k:7.2f} µs a step")


def main(argv=None):
    import analytic

    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    if "--compile-profile" in argv:
        print_compile_profile()
        return
    if "--compile-only" in argv:
        print_compile_times()
        return
    if "--railway" in argv:
        print_railway(quick)
        return
    if "--calls" in argv:
        print_calls(quick)
        return
    if "--threads" in argv:
        cars = []
        for a in argv[argv.index("--cars") + 1:] if "--cars" in argv else ():
            if not a.isdigit():
                break
            cars.append(int(a))
        opt = {k: argv[argv.index(k) + 1] for k in ("--against", "--against-cache", "--rounds") if k in argv}
        print_threads(quick, cars or (1000, 100), opt.get("--against"), int(opt.get("--rounds", 5)), opt.get("--against-cache"))
        return
    if "--bogies" in argv:
        print_bogies(quick)
        return
    track = analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001)  # ~3.1 km, hills of ±3 m
    print("trackrider solver benchmark — curved hilly circuit (R 500 m, ±3 m hills), dt = 1 ms, "
          "distance couplers, coasting")
    print(f"{'cars':>5} {'rows':>6} {'us/step wall':>13} {'us/step cpu':>12} {'x real (cpu)':>13} "
          f"{'ns/row-pass':>12} {'coupler err':>12} {'max coupler F':>14}")
    for n, steps in ((7, 5000 if quick else 20000), (100, 500 if quick else 3000), (1000, 50 if quick else 500)):
        wall, cpu, rows, err, fmax = timing(n, steps, track)
        print(f"{n:>5} {rows:>6} {wall * 1e6:>13.1f} {cpu * 1e6:>12.1f} {1e-3 / cpu:>13.1f} "
              f"{cpu / rows * 1e9:>12.1f} {err:>12.2e} {fmax:>12.1f} N")
    for n, steps in ((7, 2000 if quick else 10000), (1000, 30 if quick else 300)):
        wall, cpu, rows, err, _ = timing(n, steps, track, rolling=0.002)
        print(f"{n:>5} {rows:>6} {wall * 1e6:>13.1f} {cpu * 1e6:>12.1f} {1e-3 / cpu:>13.1f} "
              f"{cpu / rows * 1e9:>12.1f} {err:>12.2e}   (with rolling resistance + drag: friction rows "
              f"solved exactly with the chain; err: friction rows vs an exact solve)")
    for kind, what in (("brake", "1000 cars at 0.5 m/s onto a stop brake (first 100 cars), held 0.1 s in"),
                       ("booster", "1000 cars at 12 m/s on boosters (first 200 cars, 12 m/s, 20 kN)")):
        err = section_error(track, kind)
        print(f"{what}: {kind}-row err {err['section']:.2e}, coupler err {err['coupler']:.2e} "
              "vs an independent exact solve of the same step")
    print_railway(quick)
    print_bogies(quick)
    print_compile_times()
    print("ns/row-pass: CPU time per step / equality rows (5 per car + 1 per coupler); with no bounded "
          "rows a step is one exact track-block projection plus one exact chain solve.")


if __name__ == "__main__":
    main()
