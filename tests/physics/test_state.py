"""state.py: the records' arrays, on large pages for a long world (docs/physics.md "Large pages")."""
from __future__ import annotations

import mmap

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import state as st


def test_in_large_pages_copies_every_array_aligned_and_writable():
    rec = st.allocate(st.Scratch, dict(nb=37))
    rec.vel0[:] = np.arange(37 * 3).reshape(37, 3)
    out = st.in_large_pages(rec)
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        assert out is rec
        return
    assert type(out) is type(rec) and out is not rec
    for a, b in zip(rec, out):
        assert b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)
        assert b.flags.c_contiguous and b.flags.writeable and b.ctypes.data % 64 == 0
        assert not np.shares_memory(a, b)
    first = out[0].ctypes.data
    assert first % st.LARGE_PAGE == 0   # the block begins on a large page


def _train(n):
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=8001))
    w.add_train("t", k, n, CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1),
                coupling=CouplingSpec("distance", 0.5), start_s=n * 2.5 + 5.0, start_speed=12.0)
    return w


@pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"), reason="no large-page advice here")
def test_a_long_world_on_large_pages_steps_to_the_same_bytes(monkeypatch):
    """A world of ``state.LARGE_PAGE_BODIES`` bodies or more keeps its records on large pages; the
    world's own arrays are the records' (what Python reads after a run is what the kernels wrote), and
    the numbers are those of the same world on small pages (a shorter world here, the threshold lowered:
    the serial kernel's variant)."""
    n = 40
    monkeypatch.setattr(st, "LARGE_PAGE_BODIES", n)
    large = _train(n)
    large.run(40, 20)
    assert large.bodies.pos.base is not None and large.pos is large.bodies.pos and large.vel is large.bodies.vel
    assert large.cars is large.records.cars and large.jf is large.joint_state.param
    monkeypatch.setattr(st, "LARGE_PAGE_BODIES", 10**9)
    small = _train(n)
    small.run(40, 20)
    assert not isinstance(small.bodies.pos.base, mmap.mmap)
    for a, b in ((large.pos, small.pos), (large.vel, small.vel), (large.quat, small.quat), (large.omg, small.omg),
                 (large.cars.s, small.cars.s), (large.jlam, small.jlam)):
        assert a.tobytes() == b.tobytes()
