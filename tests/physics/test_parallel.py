"""A long train's per-car stages on all threads (kernels.par_rows, par_integrate): the same bytes with one
thread and with two, and the same as the serial stages (docs/physics.md, "Both cores")."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# runs a coasting train of N cars (state.PARALLEL_BODIES or more: its stages on all threads, even on one
# thread (state.MIN_THREADS), unless SERIAL) for 40 steps and prints a hash of its state and whether it ran
# in parallel
CODE = r"""
import hashlib, sys
sys.path[:0] = [{root!r}, {tests!r}]
import numpy as np
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import state as st
import analytic
st.MIN_THREADS = 1
if {alternate}:   # chunks of 10 steps, on all threads and serially in turn (state.ThreadChoice's two ways)
    turns = iter(range(10 ** 6))
    st.ThreadChoice.next = lambda self: next(turns) % 2 == 0
if {serial}:
    st.PARALLEL_BODIES = 10 ** 9
n = st.PARALLEL_BODIES + 44 if not {serial} else {n}
w = World(dt=1e-3)
w.set_resistance(rolling=0.002, drag_area=0.8)
w.add_track(analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
w.add_train("t", 0, n, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
            coupling=CouplingSpec("distance", 0.5), start_s=n * 2.5 + 5.0, start_speed=12.0)
w.run(40, 10, chunk_records=1 if {alternate} else None)
h = hashlib.sha1()
r, c = w.records, w.records.cars
for a in (r.bodies.pos, r.bodies.quat, r.bodies.vel, r.bodies.omg, c.s, c.frame, c.lam_track, c.lam_friction,
          r.joints.lam):
    h.update(np.ascontiguousarray(a).tobytes())
print(n, w._temps.par is not None, h.hexdigest(), st.threads())
"""


# a world whose trains' couplers span several chunks of bodies (one chunk per thread): a rigid train and a soft
# one whose couplers cross the chunks' boundaries, one with ball couplers (not distance joints), one of cars on
# bogies (car blocks) and joints of the user's (a rope from a body to a car across a boundary, a door on a
# hinge); runs 40 steps and prints a hash of its state (with the joint rows and the chains' factors), whether it
# ran in parallel and its bodies
MIXED = r"""
import hashlib, sys
sys.path[:0] = [{root!r}, {tests!r}]
import numpy as np
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import state as st
import analytic
st.MIN_THREADS = 1
if {alternate}:
    turns = iter(range(10 ** 6))
    st.ThreadChoice.next = lambda self: next(turns) % 2 == 0
if {serial}:
    st.PARALLEL_BODIES = 10 ** 9
w = World(dt=1e-3)
car = CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1)
wagon = CarSpec(mass=40000.0, length=24.0, width=3.0, height=3.0, cg_height=1.5, bogies="two", bogie_spacing=18.0,
                bogie_mass=4000.0)
for i, (n, coupling, spec) in enumerate([(300, CouplingSpec("distance", 0.5), car),
                                         (120, CouplingSpec("distance", 0.5, stiffness=1e6, damping=1e3), car),
                                         (100, CouplingSpec("ball", 0.5), car),
                                         (5, CouplingSpec(gap=1.0), wagon)]):
    k = w.add_track(analytic.hilly_circle(R=500.0 + 20.0 * i, amp=3.0, waves=12, n=40001))
    w.add_train("t%d" % i, k, n, spec, coupling=coupling, start_s=n * 2.5 + 200.0, start_speed=12.0)
bob = w.add_body("bob", 50.0, size=(0.3, 0.3, 0.3), position=(0.0, 0.0, 30.0))
w.add_joint("distance", ("body", bob), ("car", 0, 250))
door = w.add_body("door", 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 5.0, 0.0))
w.add_joint("hinge", "world", ("body", door), anchor_a=(0.0, 5.0, 1.0), anchor_b=(0.0, 0.0, 1.0), axis=(1.0, 0.0, 0.0))
w.run(40, 10, chunk_records=1 if {alternate} else None)
h = hashlib.sha1()
r, c = w.records, w.records.cars
for a in (r.bodies.pos, r.bodies.quat, r.bodies.vel, r.bodies.omg, c.s, c.frame, c.lam_track, c.lam_friction,
          r.joints.lam, w._temps.chains.d, w._temps.chains.f, w._temps.rows.J):
    h.update(np.ascontiguousarray(a).tobytes())
print(r.bodies.pos.shape[0], w._temps.par is not None, h.hexdigest(), st.threads())
"""


def run(threads, serial, n=0, alternate=False, code=CODE):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    code = code.format(root=str(ROOT), tests=str(ROOT / "tests" / "physics"), serial=serial, n=n, alternate=alternate)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@pytest.mark.slow
def test_long_train_same_bytes_on_one_and_two_threads_and_serially():
    n, par1, one, n1 = run(1, False)
    _, par2, two, n2 = run(2, False)
    _, par_s, serial, _ = run(2, True, int(n))
    _, par_a, alternate, _ = run(2, False, alternate=True)
    assert (par1, par2, par_s, par_a) == ("True", "True", "False", "True")
    assert (n1, n2) == ("1", "2")
    assert one == two
    assert one == serial
    assert one == alternate   # chunks on all threads and serially in turn (state.ThreadChoice)


@pytest.mark.slow
def test_couplers_across_chunks_same_bytes_on_one_to_four_threads_and_serially():
    """Trains whose couplers lie in several chunks (1 to 4 threads: the chunks' boundaries fall inside the
    rigid and the soft train), with couplers that are not distance joints, cars on bogies and joints of the
    user's: the per-car stages on the threads give the serial stages' bytes, and so do chunks taken in turn
    each way. (A step that prepared and factored the couplers inside a chunk on its thread failed this: the
    same distance.prepare inlined into another kernel rounded |d| differently, docs/physics.md "Both cores".)"""
    got = [run(t, False, code=MIXED) for t in (1, 2, 3, 4)]
    nb, par_s, serial, _ = run(2, True, code=MIXED)
    _, par_a, alternate, _ = run(3, False, alternate=True, code=MIXED)
    assert int(nb) >= 500 and [g[0] for g in got] == [nb] * 4
    assert [g[1] for g in got] + [par_s, par_a] == ["True"] * 4 + ["False", "True"]
    assert [g[3] for g in got] == ["1", "2", "3", "4"]
    assert [g[2] for g in got] == [serial] * 4
    assert alternate == serial


def test_thread_choice_runs_the_faster_way_and_tries_the_other_again():
    """A world with its per-car stages on all threads times each chunk (``state.ThreadChoice``): each way
    twice in turn, then the faster, and the slower again after ``PROBE_EVERY`` chunks, then after twice as
    many while it stays slower; the world's first chunk is not timed."""
    from trackrider.physics.state import ThreadChoice

    c = ThreadChoice()
    c.took(c.next(), 9.0, 100)                        # the world's first chunk: not timed
    ways = []
    for _ in range(60):
        way = c.next()
        ways.append(way)
        c.took(way, (3.0 if way else 2.0) * 100e-6, 100)   # serial 2 µs/step, threads 3 µs/step
    assert ways[:4] == [True, False, True, False]
    assert [i for i, w in enumerate(ways) if w] == [0, 2, 20, 53]   # tried again after 16, then 32 chunks
    c.took(True, 1.0 * 100e-6, 100)                   # the cores came free: threads win from now on
    assert [c.next() for _ in range(3)] == [True, True, True]


def test_thread_choice_takes_a_clear_gain_on_the_threads_after_one_chunk_each_way():
    """When the serial way's first timed chunk costs more than ``CLEAR`` times the threads' first, the
    threads run from then on without a second serial chunk (tried again after ``PROBE_EVERY``); a
    smaller gain, or a serial way that looks faster, is timed twice each way."""
    from trackrider.physics.state import ThreadChoice

    for serial, first in ((3.0, [True, False, True, True]), (2.4, [True, False, True, False]),
                          (1.0, [True, False, True, False])):
        c = ThreadChoice()
        c.took(c.next(), 9.0, 100)
        ways = []
        for _ in range(40):
            way = c.next()
            ways.append(way)
            c.took(way, (2.0 if way else serial) * 100e-6, 100)   # threads 2 µs/step
        assert ways[:4] == first, serial
        if serial > ThreadChoice.CLEAR * 2.0:
            assert [i for i, w in enumerate(ways) if not w] == [1, 18]   # the next try after 16 chunks


def test_thread_choice_is_not_turned_by_one_slow_chunk():
    """One chunk on the threads slowed by other work (a thread not scheduled) keeps the threads; three in a
    row turn the choice to the serial stages."""
    from trackrider.physics.state import ThreadChoice

    c = ThreadChoice()
    c.took(c.next(), 9.0, 100)
    for way in (True, False, True, False):
        assert c.next() is way
        c.took(way, (2.0 if way else 2.4) * 100e-6, 100)   # threads 2 µs/step, serial 2.4 µs/step
    c.took(True, 6.0 * 100e-6, 100)                    # one slow chunk
    assert c.next() is True
    d = ThreadChoice()                                   # a slow first chunk on the threads
    d.took(d.next(), 9.0, 100)
    for t in (6.0, 3.0, 2.0, 3.0):
        way = d.next()
        d.took(way, (t if way else 3.0) * 100e-6, 100)
    assert d.next() is True
    c.took(True, 6.0 * 100e-6, 100)
    c.took(True, 6.0 * 100e-6, 100)                    # three in a row: the machine is busy
    assert c.next() is False


def test_parallel_only_with_two_threads_or_more():
    from trackrider.physics import state as st

    par = st.make_temps(st.PARALLEL_BODIES, 1, [0], [0]).par
    assert par is not None or st.threads() < st.MIN_THREADS
    assert par is None or par.W.shape[0] == st.threads()   # one chunk of bodies per thread
    assert st.make_temps(st.PARALLEL_BODIES - 1, 1, [0], [0]).par is None
    p = subprocess.run([sys.executable, "-c", "from trackrider.physics import state as st; "
                        "print(st.make_temps(st.PARALLEL_BODIES, 1, [0], [0]).par is None, st.threads()); "
                        "st.MIN_THREADS = 1; print(st.make_temps(st.PARALLEL_BODIES, 1, [0], [0]).par.W.shape[0])"],
                       env=dict(os.environ, NUMBA_NUM_THREADS="1"), capture_output=True, text=True, cwd=ROOT)
    assert p.stdout.split() == ["True", "1", "1"], p.stderr


def test_a_world_run_chunk_by_chunk_times_both_ways(monkeypatch):
    """``trackrider run`` calls ``World.run`` once per chunk: the choice carries over between calls (only
    the world's first chunk goes untimed), so after three calls each way has been timed once."""
    from trackrider.physics import CarSpec, CouplingSpec, World
    from trackrider.physics import state as st
    from tests.physics import analytic

    monkeypatch.setattr(st, "PARALLEL_BODIES", 8)
    monkeypatch.setattr(st, "MIN_THREADS", 1)
    w = World(dt=1e-3)
    w.add_track(analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
    w.add_train("t", 0, 10, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=30.0, start_speed=12.0)
    ways = []
    for _ in range(3):
        ways.append(w._threads.next() if w._built else True)
        w.run(10, 10)
    assert w._temps.par is not None
    assert ways == [True, True, False]
    assert w._threads.cost[True] is not None and w._threads.cost[False] is not None
