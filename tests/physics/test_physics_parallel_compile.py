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
from trackrider.physics import CarSpec, CouplingSpec, World
w = World()
w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, n=2001))
w.add_train("a", 0, 3, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3), coupling=CouplingSpec("distance", 0.5),
            start_s=12.0, start_speed=8.0)
w.run(1500, 100)
state = np.concatenate([w.pos.ravel(), w.quat.ravel(), w.vel.ravel(), w.omg.ravel()])
print(json.dumps({{"compiled": compiled, "state": hashlib.sha256(state.tobytes()).hexdigest()}}))
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
    assert "run_chunk" in split["compiled"]
    for name in parallel_compile.MAIN_STAGES:
        assert name in split["compiled"]
    for name in parallel_compile.HELPER_STAGES:
        assert name not in split["compiled"], name
    one = _cold_run(tmp_path, "one", TRACKRIDER_COMPILE_JOBS="1")
    for name in parallel_compile.HELPER_STAGES + parallel_compile.MAIN_STAGES:
        assert name in one["compiled"], name
    # the same machine code either way: bit-identical states after 1.5 s
    assert split["state"] == one["state"]
