"""Camera paths: where each camera is, and that smoothing removes solver jitter."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.render.cameras import Follow, camera_path
from trackrider.render.recording import quat_to_matrix
from trackrider.render.synthetic import OvalTrack, synthetic_ride


@pytest.fixture(scope="module")
def poses():
    rec, spec = synthetic_ride(cars=3, duration=3.0)
    t = np.arange(0.0, 3.0, 1 / 30)
    pos, quat = rec.poses_at(t)
    bounds = np.array([rec.positions.reshape(-1, 3).min(0), rec.positions.reshape(-1, 3).max(0)])
    return pos, quat_to_matrix(quat), bounds


def test_onride_eye_is_above_the_lead_cars_rider_point(poses):
    pos, rot, bounds = poses
    cam = camera_path("onride", pos, rot, Follow(0, 2, 2.0, 1.0, 1.1), bounds, fps=30)
    # the eyes: 0.3 m above the rider point, 0.15 car lengths behind the centre
    rider = pos[:, 0] + (1.1 + 0.3) * rot[:, 0, :, 2] - 0.3 * rot[:, 0, :, 0]
    assert np.max(np.linalg.norm(cam.position - rider, axis=1)[5:-5]) < 0.05
    look = cam.focal_point - cam.position
    look /= np.linalg.norm(look, axis=1, keepdims=True)
    assert np.min(np.sum(look * rot[:, 0, :, 0], axis=1)) > 0.98  # along the track


def test_onride_eye_is_never_inside_a_tall_car(poses):
    pos, rot, bounds = poses
    # a 4 m tall wagon whose rider point (1.1 m) is inside the box
    cam = camera_path("onride", pos, rot, Follow(0, 2, 12.0, 4.0, 1.1), bounds, fps=30)
    height = np.sum((cam.position - pos[:, 0]) * rot[:, 0, :, 2], axis=1)
    np.testing.assert_allclose(height[5:-5], 2.0 + 0.3, atol=0.05)
    ahead = np.sum((cam.position - pos[:, 0]) * rot[:, 0, :, 0], axis=1)
    np.testing.assert_allclose(ahead[5:-5], 6.0 - 0.5, atol=0.1)  # a cab view, near the front


def test_chase_is_behind_and_above_the_train(poses):
    pos, rot, bounds = poses
    cam = camera_path("chase", pos, rot, Follow(0, 2, 2.0, 1.0, 1.1), bounds, fps=30)
    rel = cam.position - pos[:, 2]
    assert np.all(np.sum(rel * rot[:, 2, :, 0], axis=1) < -5.0)  # behind the last car
    assert np.all(np.sum(rel * rot[:, 2, :, 2], axis=1) > 2.0)  # above it


@pytest.mark.parametrize("aspect", [16 / 9, 1.0])
def test_overview_stands_still_and_sees_the_whole_layout(poses, aspect):
    pos, rot, bounds = poses
    track = OvalTrack()
    pts = track.frames(np.linspace(0.0, track.length, 300)).position
    cam = camera_path("overview", pos, rot, Follow(0, 2), bounds, fps=30, points=pts, aspect=aspect)
    assert np.ptp(cam.position, axis=0).max() == 0.0
    tan_v = np.tan(np.radians(cam.view_angle / 2))
    for i in (0, len(pos) // 2, len(pos) - 1):  # the focal point drifts after the train
        f = cam.focal_point[i] - cam.position[i]
        f /= np.linalg.norm(f)
        r = np.cross(f, cam.up[i])
        r /= np.linalg.norm(r)
        u = np.cross(r, f)
        rel = pts - cam.position[i]
        depth = rel @ f
        assert np.all(depth > cam.near)
        assert np.max(np.abs(rel @ r) / depth) < tan_v * aspect
        assert np.max(np.abs(rel @ u) / depth) < tan_v
    # and it is not needlessly far: the layout spans at least half the width or height
    rel = pts - cam.position[0]
    f = cam.focal_point[0] - cam.position[0]
    f /= np.linalg.norm(f)
    r = np.cross(f, [0, 0, 1.0])
    r /= np.linalg.norm(r)
    x = (rel @ r) / (rel @ f)
    assert np.ptp(x) > 0.5 * 2 * tan_v * aspect or np.ptp((rel @ np.cross(r, f)) / (rel @ f)) > 0.5 * 2 * tan_v


def test_smoothing_removes_orientation_jitter(poses):
    pos, rot, bounds = poses
    rng = np.random.default_rng(0)
    # shake the cars' up axis by ±3° at every frame, as a noisy solver might
    noisy = rot.copy()
    tilt = rng.normal(scale=np.radians(3.0), size=noisy.shape[:2])
    noisy[..., 2] = noisy[..., 2] + tilt[..., None] * noisy[..., 1]
    noisy[..., 2] /= np.linalg.norm(noisy[..., 2], axis=-1, keepdims=True)
    clean = camera_path("chase", pos, rot, Follow(0, 2), bounds, fps=30)
    shaky = camera_path("chase", pos, noisy, Follow(0, 2), bounds, fps=30)
    err = np.degrees(np.arccos(np.clip(np.sum(clean.up * shaky.up, axis=1), -1, 1)))
    # 3° per-frame noise -> under 1° on screen (away from the ends, which
    # render_frames pads with 2.5 s of extra camera path)
    assert err[30:-30].max() < 1.0
    raw = np.degrees(np.arccos(np.clip(np.sum(rot[:, 2, :, 2] * noisy[:, 2, :, 2], axis=1), -1, 1)))
    assert raw.max() > 4.0  # the noise was really there


@pytest.mark.parametrize("aspect", [16 / 9, 4 / 3, 1.0])
def test_onride_sees_a_riders_90_degrees_across_whatever_the_pictures_shape(poses, aspect):
    pos, rot, bounds = poses
    cam = camera_path("onride", pos, rot, Follow(0, 2, 2.0, 1.0, 1.1), bounds, fps=30, aspect=aspect)
    across = 2.0 * np.degrees(np.arctan(np.tan(np.radians(cam.view_angle / 2)) * aspect))
    assert across == pytest.approx(90.0, abs=1e-9)
