"""A frame of a prepared ride seen from a fixed camera of the test's choosing, read
back as the renderer drew it (no sky or ground: those are drawn later, into
the key colour), with a projector from world points to its pixels."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=2)
def ride(name: str, duration: float | None = None):
    """(Recording, SceneSpec with the run's switch throws) of scenarios/NAME.toml simulated
    (``duration`` s, default its own)."""
    from trackrider.render.recording import Recording
    from trackrider.render.spec import scene_from_scenario
    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    scenario = load_scenario(ROOT / "scenarios" / f"{name}.toml")
    res = simulate(scenario, duration=duration)
    spec = scene_from_scenario(scenario)
    spec.set_throws(res.summary.get("switches"))
    return Recording.from_timeseries(res.timeseries), spec


def fixed_view(pr, labels, hide, eye, focal, up=(0.0, 0.0, 1.0), angle=30.0):
    """(RGBA (h, w, 4) int, rows from the bottom; ``project(p)`` → (x, y) pixel of world point
    ``p``) of the first frame of ``pr`` (``video.prepare_frames``), the entities named in
    ``hide`` hidden, the camera at ``eye`` looking at ``focal``."""
    from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

    scene = pr.scene
    j = pr.pad
    scene.show(pr.positions[j], pr.rotations[j], pr.cam, j)
    scene.set_visible([i for i, (name, _car) in enumerate(labels) if name in hide], False)
    cam = scene.camera
    cam.SetPosition(*eye)
    cam.SetFocalPoint(*focal)
    cam.SetViewUp(*up)
    cam.SetViewAngle(angle)
    cam.SetClippingRange(1.0, 2000.0)
    rw = scene.plotter.ren_win
    rw.Render()
    w, h = scene.render_size
    pixels = vtkUnsignedCharArray()
    rw.GetRGBACharPixelData(0, 0, w - 1, h - 1, 0, pixels)
    img = np.frombuffer(memoryview(pixels), dtype=np.uint8).reshape(h, w, 4).astype(int)
    ren = scene.plotter.renderer

    def project(p):
        ren.SetWorldPoint(float(p[0]), float(p[1]), float(p[2]), 1.0)
        ren.WorldToDisplay()
        x, y, _z = ren.GetDisplayPoint()
        return x, y

    return img, project


def count(mask, project, a, b) -> int:
    """Pixels of ``mask`` in the screen rectangle spanned by world points ``a`` and ``b``."""
    x0, y0 = project(a)
    x1, y1 = project(b)
    rows = slice(max(int(np.floor(min(y0, y1))), 0), int(np.ceil(max(y0, y1))) + 1)
    cols = slice(max(int(np.floor(min(x0, x1))), 0), int(np.ceil(max(x0, x1))) + 1)
    return int(np.count_nonzero(mask[rows, cols]))
