"""A block section before a moving track's end (physics/blocks.py; docs/scenarios.md, "Moving
tracks"): it holds the train while the end is out of line and lets it go when the track comes into
line, where without it the train would run off (tests/physics/test_moving_connection.py)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics.test_moving_connection import changes, run, table_line
from trackrider.physics import channels as ch
from trackrider.physics.blocks import ALIGN_POLL


def test_a_block_section_holds_a_train_until_the_transfer_table_is_in_line():
    # the transfer table starts 3 m off the line and slides over at 0.5 m/s to its end stop on it
    # (t ≈ 6 s); the car (4 m/s) meets a block brake on "in" (4–9.9 m) at t = 0.5 s: held (the
    # hold names the end it waits for) and stopped with its anchor at 8.9 m (1 mm, the hold's
    # stop point); let go when the table is in line (within the logic's look-again interval), it
    # is driven at 4 m/s over the table onto "out" and never runs off
    w = table_line(4.0, shift=3.0, motor=0.5, max_travel=3.0)
    w.add_section("brake", 0, 4.0, 9.9, speed=4.0, max_force=1e4, block=True, name="home")
    t, s, j, st = run(w, 10000)
    assert st.status == "ok"
    assert not np.any(s[:, 0, ch.FLAGS].astype(np.int64) & ch.RAN_OFF)
    ev = w.operation.events
    hold = [e for e in ev if e["kind"] == "block_hold"]
    assert len(hold) == 1 and hold[0]["section"] == "home" and hold[0]["track_end"] == "in:end"
    assert hold[0]["t"] == pytest.approx(0.5, abs=2e-3)
    held = (t > 4.0) & (t < 5.5)
    np.testing.assert_allclose(s[held, 0, ch.S], 8.9, atol=1e-3)
    t_in_line = t[np.argmax(np.abs(3.0 - j[:, 0, ch.J_TRAVEL]) <= 1e-3)]
    assert 5.5 < t_in_line < 7.0
    rel = [e for e in ev if e["kind"] == "block_release"]
    assert len(rel) == 1 and t_in_line - 0.011 <= rel[0]["t"] <= t_in_line + ALIGN_POLL + 0.011
    assert [(a, b) for a, b, _ in changes(w)] == [("in", "table"), ("table", "out")]
    assert s[-1, 0, ch.SPEED] == pytest.approx(4.0, rel=1e-3)
