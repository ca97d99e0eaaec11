"""The cold-cache compile split over two processes (trackrider.physics.parallel_compile).

Each test starts fresh interpreters on an empty numba cache (a cold compile each), so they
are marked slow.
"""
import json
import os
import subprocess
import sys

import pytest

from trackrider.physics import parallel_compile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SCRIPT = """
import hashlib, json, sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {here!r})
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
event.register("numba:compile", Listener())
import numpy as np
import analytic
import trackrider.jit
from trackrider.physics import CarSpec, CouplingSpec, World, parallel_compile
w = World()
early = parallel_compile._helper is not None  # warm_up started the helper when the World was made
w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, n=2001))
w.add_train("a", 0, 3, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3), coupling=CouplingSpec("distance", 0.5),
            start_s=12.0, start_speed=8.0)
w.run(1500, 100)
state = np.concatenate([w.pos.ravel(), w.quat.ravel(), w.vel.ravel(), w.omg.ravel()])
print(json.dumps({{"compiled": compiled, "state": hashlib.sha256(state.tobytes()).hexdigest(),
                  "kernel_s": parallel_compile.kernel_seconds, "early": early,
                  "memo": trackrider.jit.MEMO_INSTALLED}}))
"""


def _cold_run(tmp_path, name, **env):
    cache = tmp_path / name
    cache.mkdir()
    e = {k: v for k, v in os.environ.items() if k != "TRACKRIDER_COMPILE_JOBS"}
    e.update(NUMBA_CACHE_DIR=str(cache), **env)
    p = subprocess.run([sys.executable, "-c", SCRIPT.format(root=ROOT, here=HERE)], env=e,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the split needs two CPUs")
def test_split_compile_loads_helper_stages_from_cache_and_gives_identical_results(tmp_path):
    split = _cold_run(tmp_path, "split")
    # this process compiled its own stages and run_chunk, and none of the helper's stages:
    # every one was found in the cache when run_chunk was typed (the signatures read from
    # run_chunk's source are the ones it uses)
    assert split["compiled"].count("run_chunk") == 1  # compiled by prepare, for the types of the call
    assert split["kernel_s"] > 0.5
    assert split["early"] and split["memo"]
    for name in parallel_compile.MAIN_STAGES:
        assert name in split["compiled"]
    for name in parallel_compile.HELPER_STAGES:
        assert name not in split["compiled"], name
    # one process, and without the typing memo of trackrider.jit
    one = _cold_run(tmp_path, "one", TRACKRIDER_COMPILE_JOBS="1", TRACKRIDER_TYPING_MEMO="0")
    assert not one["early"] and not one["memo"]
    assert one["compiled"].count("run_chunk") == 1
    for name in parallel_compile.HELPER_STAGES + parallel_compile.MAIN_STAGES:
        assert name in one["compiled"], name
    # a train's chained couplers only: the other joints' code is pruned, never compiled
    for name in ("solve_joint_pgs", "joint_block", "_ball_rows", "_one_sided", "_rotvec"):
        assert name not in one["compiled"], name
    # the same machine code either way: bit-identical states after 1.5 s (so the split, the
    # stages' signatures and the typing memo change nothing)
    assert split["state"] == one["state"]


def _run_chunk_args():
    """The arguments World.run passes to run_chunk (captured, not run)."""
    import analytic
    from trackrider.physics import CarSpec, World
    from trackrider.physics import kernels as kn

    w = World()
    w.add_track(analytic.straight(50.0))
    w.add_train("a", 0, 2, CarSpec(600.0, 2.0, 1.2, 1.0), start_s=20.0)
    captured = {}

    def grab(run_chunk, args):
        captured["args"] = args
        raise KeyboardInterrupt

    original = parallel_compile.prepare
    parallel_compile.prepare = grab
    try:
        with pytest.raises(KeyboardInterrupt):
            w.run(1, 1)
    finally:
        parallel_compile.prepare = original
    return kn, captured["args"]


def test_stage_signatures_cover_every_stage_with_its_parameter_count():
    kn, args = _run_chunk_args()
    sigs = parallel_compile.stage_signatures(kn.run_chunk, args)
    assert set(sigs) == set(parallel_compile.HELPER_STAGES + parallel_compile.MAIN_STAGES)
    for name, sig in sigs.items():
        assert len(sig) == kn.__dict__[name].py_func.__code__.co_argcount, name


@pytest.mark.parametrize("value, cpus, jobs", [("", 2, 2), ("1", 8, 1), ("0", 8, 0), ("x", 2, 2), ("", 1, 1)])
def test_compile_jobs_from_the_environment(monkeypatch, value, cpus, jobs):
    monkeypatch.setenv("TRACKRIDER_COMPILE_JOBS", value)
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    assert parallel_compile._jobs() == jobs


class _FakeHelper:
    def __init__(self):
        self.closed = False
        self.stdin = self

    def close(self):
        self.closed = True

    def poll(self):
        return 0 if self.closed else None

    def wait(self, timeout=None):
        return 0


class _FakeRunChunk:
    """Just what warm_up reads of a dispatcher: its overloads and its cache's index."""

    def __init__(self, index):
        self.overloads = {}
        self._cache = type("Cache", (), {"_enabled": True})()
        self._cache._cache_file = type("File", (), {"_load_index": lambda _self: dict(index)})()


@pytest.mark.parametrize("index, started", [({}, True), ({"a compiled signature": 1}, False)])
def test_warm_up_starts_the_helper_only_when_nothing_was_ever_compiled(monkeypatch, index, started):
    monkeypatch.setenv("TRACKRIDER_COMPILE_JOBS", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel_compile, "_helper", None)
    monkeypatch.setattr(parallel_compile, "_done", set())
    fakes = []
    monkeypatch.setattr(parallel_compile, "_start_helper", lambda: fakes.append(_FakeHelper()) or fakes[-1])
    parallel_compile.warm_up(_FakeRunChunk(index))
    assert len(fakes) == int(started)
    parallel_compile.warm_up(_FakeRunChunk(index))  # one helper at most
    assert len(fakes) == int(started)
    if started:
        # a run that finds nothing to do for it (say, another process filled the cache) ends it
        parallel_compile._dismiss_helper()
        assert fakes[0].closed and parallel_compile._helper is None


def test_warm_up_is_off_with_one_compile_job(monkeypatch):
    monkeypatch.setenv("TRACKRIDER_COMPILE_JOBS", "1")
    monkeypatch.setattr(parallel_compile, "_helper", None)
    monkeypatch.setattr(parallel_compile, "_start_helper", lambda: pytest.fail("started a helper"))
    parallel_compile.warm_up(_FakeRunChunk({}))
