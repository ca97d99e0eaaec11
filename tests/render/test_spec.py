"""The scene a scenario gives the renderer (trackrider/render/spec.py): a joint's rod
starts where the physics anchors it (docs/scenarios.md, joints: a world end's anchor
defaults to where the other end's anchor starts)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from trackrider.render.spec import _start_point, scene_from_scenario
from trackrider.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_a_world_end_without_anchor_starts_at_the_bodys_centre():
    sc = load_scenario(SCENARIOS / "drop_track.toml")
    (link,) = scene_from_scenario(sc).links
    body = next(b for b in sc.bodies if (b.name, 1) == link.b)
    assert link.a is None
    np.testing.assert_allclose(link.anchor_a, [float(v) for v in body.position], atol=1e-12)


def test_the_start_point_turns_the_anchor_with_the_body():
    # a body at (1, 2, 3) turned 90° about z: its x axis points along world y
    h = np.sqrt(0.5)
    sc = SimpleNamespace(bodies=[SimpleNamespace(position=(1.0, 2.0, 3.0), orientation=(h, 0.0, 0.0, h))])
    np.testing.assert_allclose(_start_point(sc, ("body", 0), (2.0, 0.0, 0.5)), (1.0, 4.0, 3.5), atol=1e-12)
    assert _start_point(sc, ("car", 0, 0), None) is None
