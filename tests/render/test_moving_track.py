"""A track carried by a body is drawn where its body is, frame by frame
(docs/rendering.md, "Track"): scenarios/drop_track.toml seen from the side
by a fixed camera, before the drop and after the piece has fallen onto its
buffer. The steel track's teal rails, spine and ties must be at the height
the body's recorded pose puts them, and nothing of them left where the piece
started — which is where a track drawn with the fixed structure stays."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from trackrider.render.recording import Recording
from trackrider.render.spec import scene_from_scenario
from trackrider.render.video import prepare_frames
from trackrider.scenario import load_scenario
from trackrider.sim import simulate

pytestmark = pytest.mark.render

ROOT = Path(__file__).resolve().parents[2]
SIZE = (480, 270)


@functools.lru_cache(maxsize=1)
def _drop_ride():
    scenario = load_scenario(ROOT / "scenarios" / "drop_track.toml")
    return Recording.from_timeseries(simulate(scenario).timeseries), scene_from_scenario(scenario)


def _display(renderer, p):
    renderer.SetWorldPoint(float(p[0]), float(p[1]), float(p[2]), 1.0)
    renderer.WorldToDisplay()
    x, y, _z = renderer.GetDisplayPoint()
    return x, y


def _teal_pixels(t: float) -> tuple[int, int, float]:
    """(teal pixels of the frame at ride time ``t`` in the band where the track
    started (its curve at 30 m: its rails and spine lie up to 1 m under it), over
    the piece's length; those in the band where the carrying body's recorded
    pose at ``t`` puts it; that body's drop at ``t``, m).
    The cars are hidden (blue like the track's teal); the camera is fixed, 45 m
    to the side of the piece, level."""
    from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

    rec, spec = _drop_ride()
    pr = prepare_frames(rec, spec, np.array([t]), "overview", SIZE, 30.0, 1.0, "draft", hud=False)
    try:
        scene = pr.scene
        labels = rec.labels
        body = labels.index(("drop", 1))
        j = pr.pad
        scene.show(pr.positions[j], pr.rotations[j], pr.cam, j)
        scene.set_visible([i for i, (name, _car) in enumerate(labels) if name == "car"], False)
        cam = scene.camera
        cam.SetPosition(10.0, -45.0, 27.5)
        cam.SetFocalPoint(10.0, 0.0, 27.5)
        cam.SetViewUp(0.0, 0.0, 1.0)
        cam.SetViewAngle(30.0)
        cam.SetClippingRange(1.0, 500.0)
        rw = scene.plotter.ren_win
        rw.Render()
        w, h = scene.render_size
        pixels = vtkUnsignedCharArray()
        rw.GetRGBACharPixelData(0, 0, w - 1, h - 1, 0, pixels)
        img = np.frombuffer(memoryview(pixels), dtype=np.uint8).reshape(h, w, 4).astype(int)
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        teal = (g > r + 30) & (b > r + 40)
        drop = float(pr.positions[j][body][2] - spec.bodies[0].position[2])
        counts = []
        for z in (30.0, 30.0 + drop):
            x0, y0 = _display(scene.plotter.renderer, (3.0, 0.0, z - 1.0))
            x1, y1 = _display(scene.plotter.renderer, (17.0, 0.0, z + 0.2))
            rows = slice(int(np.floor(min(y0, y1))), int(np.ceil(max(y0, y1))) + 1)  # from the bottom
            cols = slice(int(np.floor(min(x0, x1))), int(np.ceil(max(x0, x1))) + 1)
            counts.append(int(np.count_nonzero(teal[rows, cols])))
    finally:
        pr.scene.close()
    return counts[0], counts[1], drop


def test_the_drop_track_is_drawn_where_its_body_is_before_and_after_the_drop():
    start_before, _same, drop_before = _teal_pixels(1.0)
    assert abs(drop_before) < 1e-3  # held at the top
    assert start_before > 200, start_before
    # after the fall: the piece rests on its buffer (4 m + the buffer's 0.64 m)
    at_start, at_body, drop = _teal_pixels(6.0)
    assert -4.8 < drop < -4.5, drop
    assert at_body > 0.8 * start_before, (at_body, start_before)
    assert at_start == 0, at_start  # nothing of it left where it was
