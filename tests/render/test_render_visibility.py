"""The chase camera never loses the train: over the whole ride of every bundled
scenario, the car it follows is seen (not hidden by the structure, other
trains or the ground; at least ``SEEN`` of the pixels it covers when drawn
alone are its own in an id buffer of the full scene) in at least 98 % of a
sample of the video's frames. Small frames, the camera path of the real
video (every frame at 30 frames/s planned, a sample rendered)."""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from trackrider.render.recording import Recording
from trackrider.render.spec import scene_from_scenario
from trackrider.render.video import frame_times, prepare_frames
from trackrider.scenario import load_scenario
from trackrider.sim import simulate

pytestmark = pytest.mark.render

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").glob("*.toml")
                   if "sweep" not in tomllib.loads(p.read_text(encoding="utf-8")))
#: the rides that take longest to simulate
LONG = {"two_train_coaster", "freight", "suspended_coaster"}
#: a frame sees the car when this share of its own pixels is not hidden
SEEN = 0.5
FRAMES = 120
SIZE = (192, 108)


def _ride(path):
    scenario = load_scenario(path)
    result = simulate(scenario)
    return Recording.from_timeseries(result.timeseries), scene_from_scenario(scenario)


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in LONG else [])
                                  for p in SCENARIOS])
def test_the_chase_camera_keeps_the_followed_car_in_view(path):
    rec, spec = _ride(path)
    times = frame_times(rec.t_start, rec.t_end, 30.0, 1.0)
    pr = prepare_frames(rec, spec, times, "chase", SIZE, 30.0, 1.0, None, hud=False)
    try:
        target = pr.follow.ride
        sample = np.unique(np.linspace(0, len(times) - 1, FRAMES).round().astype(int))
        seen = []
        for i in sample:
            j = i + pr.pad
            pr.scene.show(pr.positions[j], pr.rotations[j], pr.cam, j)
            own, alone = pr.scene.coverage(target)
            seen.append(alone > 0 and own >= SEEN * alone)
        seen = np.array(seen)
        missed = [round(float(times[i]), 1) for i, ok in zip(sample, seen) if not ok]
        assert seen.mean() >= 0.98, f"{path.stem}: car not seen at t = {missed} s"
    finally:
        pr.scene.close()
