"""Switches are drawn set as the run set them (docs/rendering.md, "Switches"):
scenarios/passing_loop.toml's west points seen from above by a fixed camera.
The set branch's rails shine from the switch point to the frog, the other
branch's do not; while the points move neither does and the stand's lamp is
red, else green. Checked at three moments of the run's throws (summary.json
``switches``): set to ``main`` at the start, moving, set to ``loop``."""
from __future__ import annotations

import numpy as np
import pytest

from tests.render.views import count, fixed_view, ride
from trackrider.render.layout import LAMP_MOVING, LAMP_SET
from trackrider.render.video import prepare_frames

pytestmark = pytest.mark.render

SIZE = (480, 270)


def _outer_rails(spec, k, s):
    """The world points of the rail of track ``k`` at ``s`` on each side (left, right)."""
    f = spec.tracks[k].geometry.frames(np.array([s]))
    p, n = np.asarray(f.position, float)[0], np.asarray(f.normal, float)[0]
    half = 0.5 * spec.tracks[k].gauge
    return p + half * n, p - half * n


def _look(t):
    """(bright pixels on main's right rail, on loop's left rail, where the two have parted; green
    lamp pixels, red lamp pixels) at ride time ``t``."""
    rec, spec = ride("passing_loop", 20.0)
    names = [tr.name for tr in spec.tracks]
    main, loop = names.index("main"), names.index("loop")
    sw = spec.switches[0]
    assert sw.name == "west points" and [b[0] for b in sw.branches] == [main, loop]
    pr = prepare_frames(rec, spec, np.array([t]), "overview", SIZE, 30.0, 1.0, "draft", hud=False)
    try:
        pr.scene.show_switches(t)
        img, project = fixed_view(pr, rec.labels, {"eastbound", "westbound"}, (412.0, 0.0, 45.0), (412.0, 0.0, 0.0),
                                  up=(1.0, 0.0, 0.0), angle=40.0)
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        bright = (r > 170) & (g > 170) & (b > 160) & (np.abs(r - g) < 15)   # the set route's polished rails
        # 28 m past the points the loop is 0.8 m aside: its left rail is clear of main's
        s = 28.0
        _ml, main_right = _outer_rails(spec, main, s)
        loop_left, _lr = _outer_rails(spec, loop, s)
        d = np.array([2.0, 0.2, 0.0])   # ±2 m along, ±0.2 m across
        on_main = count(bright, project, main_right - d, main_right + d)
        on_loop = count(bright, project, loop_left - d, loop_left + d)
        lamp = pr.scene.switches[0].lamps[0].points.mean(axis=0)
        e = np.array([0.5, 0.5, 0.5])
        green = count(np.all(img[..., :3] == LAMP_SET, axis=-1), project, lamp - e, lamp + e)
        red = count(np.all(img[..., :3] == LAMP_MOVING, axis=-1), project, lamp - e, lamp + e)
    finally:
        pr.scene.close()
    return on_main, on_loop, green, red


def test_the_set_branch_of_a_switch_is_drawn_and_a_moving_switch_shows_red():
    rec, spec = ride("passing_loop", 20.0)
    sw = spec.switches[0]
    assert sw.throws and sw.throws[0][1] == 1   # the eastbound's route throws it to the loop
    t_set, _to, throw = sw.throws[0]
    assert throw == sw.throw_time == 4.0
    main0, loop0, green0, red0 = _look(2.0)                       # set to main
    assert main0 > 5 and loop0 == 0 and green0 > 5 and red0 == 0, (main0, loop0, green0, red0)
    main1, loop1, green1, red1 = _look(t_set - 0.5 * throw)      # moving
    assert main1 == 0 and loop1 == 0 and green1 == 0 and red1 > 5, (main1, loop1, green1, red1)
    main2, loop2, green2, red2 = _look(t_set + 1.0)               # set to the loop
    assert main2 == 0 and loop2 > 5 and green2 > 5 and red2 == 0, (main2, loop2, green2, red2)


def test_the_switch_state_follows_the_runs_throws():
    """A throw moves the points for the switch's throw_time before it finishes; a train trailing
    through (``by: run_through``) forces them over at once."""
    from trackrider.render.spec import SceneSpec, SwitchSpec

    sw = SwitchSpec("s", 0, "end", [(1, "start"), (2, "start")], ["a", "b"], position=0, throw_time=5.0)
    SceneSpec(switches=[sw]).set_throws({"s": {"throws": [{"t": 10.0, "to": "b", "by": "run_through"},
                                                           {"t": 20.0, "to": "a", "by": "throw"}]}})
    assert [sw.state(t) for t in (9.99, 10.0, 14.99, 15.01, 19.99, 20.0)] == \
        [(0, False), (1, False), (1, False), (1, True), (1, True), (0, False)]
