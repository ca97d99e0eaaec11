"""What the rider sees: the on-ride eyes in the chosen car, the chase camera
clear of the track and the ground, the overlay's numbers, suspended cars below
the rail (issue: rendering that looks like a ride)."""
from __future__ import annotations

import numpy as np
import pytest

from trackrider.render import render_ride
from trackrider.render.cameras import Follow, camera_path
from trackrider.render.hud import KMH_PER_MS, hud_lines
from trackrider.render.recording import Recording, quat_to_matrix
from trackrider.render.spec import SceneSpec, TrackSpec, TrainSpec
from trackrider.render.synthetic import OvalTrack, matrix_to_quat, synthetic_ride

pytestmark = [pytest.mark.render, pytest.mark.requires_gl]
SMALL = (320, 180)


def _capture(ride, tmp_path, name, **kw):
    """Render one still; return (image, scene, follow, camera path, hud values, pad)."""
    import imageio.v3 as iio3

    from trackrider.render import video

    rec, spec = ride
    got = {}
    real = video.render_frames

    def spy(*a, **k):
        k["scene_hook"] = lambda scene, follow, cam, values, pad: got.update(
            scene=scene, follow=follow, cam=cam, values=values, pad=pad)
        return real(*a, **k)

    import unittest.mock as mock

    with mock.patch.object(video, "render_frames", spy):
        out = render_ride(None, tmp_path / name, size=SMALL, recording=rec, scene=spec, **kw)
    return iio3.imread(out), got


def test_onride_eyes_sit_in_the_chosen_car_and_see_out(ride, tmp_path):
    rec, spec = ride
    img, got = _capture(ride, tmp_path, "onride.png", camera="onride", time=1.0, car=2)
    follow, cam, pad, scene = got["follow"], got["cam"], got["pad"], got["scene"]
    assert rec.labels[follow.ride] == ("demo", 2)
    # the eyes: the model's seated rider, 0.5 m above rider_height, inside the car's footprint
    tr = spec.trains[0]
    eye = np.asarray(follow.eye)
    assert abs(eye[0]) < tr.length / 2 and abs(eye[1]) < tr.width / 2
    assert eye[2] + tr.cg_height == pytest.approx(tr.rider_height + 0.5, abs=1e-9)
    pos, quat = rec.poses_at([1.0])
    r = quat_to_matrix(quat)[0, follow.ride]
    np.testing.assert_allclose(cam.position[pad], pos[0, follow.ride] + r @ eye, atol=1e-9)


def test_onride_view_is_not_blocked_by_the_car(ride, tmp_path):
    """Hiding the rider's own car changes little of the upper picture (the view
    out) but does change the bottom (the car's front and restraint are in view)."""
    import imageio.v3 as iio3

    from trackrider.render import video

    rec, spec = ride
    shots = {}
    from trackrider.render import scene as scene_mod

    orig_grab = scene_mod.RideScene.grab

    def grab(self, deferred=False):
        img = orig_grab(self).copy()
        ride_i = shots["ride"]
        self.set_visible([ride_i], False)
        shots["without"] = orig_grab(self).copy()
        self.set_visible([ride_i], True)
        return img

    def hook(scene, follow, cam, values, pad):
        shots["ride"] = follow.ride

    import unittest.mock as mock

    real_rf = video.render_frames

    def spy(*a, **k):
        k["scene_hook"] = hook
        return real_rf(*a, **k)

    with mock.patch.object(scene_mod.RideScene, "grab", grab), mock.patch.object(video, "render_frames", spy):
        out = render_ride(None, tmp_path / "o.png", camera="onride", size=SMALL, time=1.0, recording=rec, scene=spec,
                          hud=False)
    with_car = iio3.imread(out).astype(int)
    without = shots["without"].astype(int)
    differs = np.abs(with_car - without).sum(axis=-1) > 30
    h = with_car.shape[0]
    assert differs[: int(0.6 * h)].mean() < 0.05  # the view out is free
    assert differs[int(0.75 * h):].mean() > 0.05  # own car front and restraint in view


def test_chase_camera_keeps_clear_of_the_track_and_above_the_ground(ride):
    """A second track laid through the path the camera would take: the camera
    goes around it, > 1 m from every track curve and above the ground."""
    from trackrider.render.chase import Capsules, ChaseScene
    from trackrider.render.ground import Ground

    rec, spec = synthetic_ride(cars=3, duration=6.0)
    times = np.arange(0.0, 6.0, 1 / 30)
    pos, quat = rec.poses_at(times)
    rot = quat_to_matrix(quat)
    bounds = np.array([pos.reshape(-1, 3).min(0), pos.reshape(-1, 3).max(0)])
    oval = spec.tracks[0].geometry
    curve = np.asarray(oval.frames(np.linspace(0, oval.length, 4000)).position)
    free = camera_path("chase", pos, rot, Follow(0, 2), bounds, 30.0)
    # an obstacle: a track through the free camera path (0.3 m off it)
    obstacle = free.position[::3] + np.array([0.0, 0.0, 0.3])
    z_ground = float(curve[:, 2].min()) - 1.0
    pts = np.concatenate([curve, obstacle])
    space = Capsules.build(np.concatenate([curve[:-1], obstacle[:-1]]), np.concatenate([curve[1:], obstacle[1:]]), 1.8)
    none = Capsules.build(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    scene = ChaseScene(none, space, Ground(z_ground), [None] * len(rec.labels))
    cam = camera_path("chase", pos, rot, Follow(0, 2, ride=2, chase=2, scene=scene), bounds, 30.0)

    from scipy.spatial import cKDTree

    d_free, _ = cKDTree(obstacle).query(free.position)
    assert d_free.min() < 0.5  # without the rule it would pass through the obstacle
    d, _ = cKDTree(pts).query(cam.position)
    assert d.min() > 1.0
    assert np.all(cam.position[:, 2] > z_ground + 1.0)
    # and it still moves smoothly: no jump larger than the train's own step, but where it cuts to another shot
    step = np.linalg.norm(np.diff(cam.position, axis=0), axis=1)
    assert np.mean(step < 3.0) > 0.97


def test_overlay_shows_the_recorded_speed_and_g_at_the_frame_time(ride, tmp_path):
    rec, spec = ride
    t = 0.733  # between two recorded samples (100 Hz)
    img, got = _capture(ride, tmp_path, "hud.png", camera="chase", time=t)
    scene, values = got["scene"], got["values"]
    i = got["follow"].ride
    speed = np.interp(t, rec.times, rec.channels["speed"][:, i])
    gv = np.interp(t, rec.times, rec.channels["g_vertical"][:, i])
    gl = np.interp(t, rec.times, rec.channels["g_lateral"][:, i])
    text = scene.hud.last_text if scene.hud is not None else "\n".join(hud_lines(values[0]))
    assert f"{speed * KMH_PER_MS:.1f} km/h" in text
    assert f"{speed:.1f} m/s" in text
    assert f"vertical {gv:+.2f} g" in text and f"lateral {gl:+.2f} g" in text
    assert f"t {t:.1f} s" in text
    imperial = "\n".join(hud_lines(values[0], "imperial"))
    assert f"{speed * 3600 / 1609.344:.1f} mph" in imperial


def _suspended_ride():
    """Three trolleys on the oval with their bodies hanging 1.5 m straight below."""
    track = OvalTrack()
    times = np.linspace(0.0, 1.0, 51)
    s = 30.0 + 10.0 * times[:, None] - 2.6 * np.arange(3)[None, :]
    f = track.frames(s.ravel())
    rot = np.stack([f.tangent, f.normal, f.binormal], axis=-1)
    q = matrix_to_quat(rot).reshape(len(times), 3, 4)
    p = f.position.reshape(len(times), 3, 3)
    body = p - 1.5 * f.binormal.reshape(len(times), 3, 3)
    labels = [("cars", k + 1) for k in range(3)] + [("cars.body", k + 1) for k in range(3)]
    rec = Recording(times, labels, np.concatenate([p, body], axis=1), np.concatenate([q, q], axis=1))
    spec = SceneSpec(tracks=[TrackSpec("main", track, 1.0)],
                     trains=[TrainSpec("cars", 0, 3, length=2.0, width=1.4, height=1.6, rider_height=-1.3,
                                       suspended=True, hang=1.5)])
    return rec, spec


def test_suspended_cars_hang_below_the_rail(tmp_path):
    from trackrider.render import models

    rec, spec = _suspended_ride()
    img, got = _capture((rec, spec), tmp_path, "susp.png", camera="onride", time=0.5)
    scene, follow, cam, pad = got["scene"], got["follow"], got["cam"], got["pad"]
    assert rec.labels[follow.ride] == ("cars.body", 1)  # the riders sit in the hanging body
    lay = scene.layouts[0]
    assert lay.style == "hanging"
    rail_bottom = lay.rail_up - lay.rail_radius  # above the curve (the pivot)
    car = scene.models[follow.ride]
    # every point of the gondola is below the pivot, so below the rails (body frame: pivot at z = hang)
    assert car.quads.points[:, 2].max() <= 1.5 + 1e-9 < 1.5 + rail_bottom
    # and the tub, seats and riders (all but the hanger arm) at least a car height below the rail
    assert np.percentile(car.quads.points[:, 2], 95) < 1.5 - 0.5
    # the rider's eyes: below the track curve
    pos, _q = rec.poses_at([0.5])
    curve_z = pos[0, 0, 2]
    assert cam.position[pad][2] < curve_z - 0.3
    # the trolley sits on the rail: wheels around the rail, above the pivot
    trolley = scene.models[0]
    assert trolley.quads.points[:, 2].max() > lay.rail_up
    assert isinstance(models.CarModel, type)


def test_the_g_meter_clips_a_value_off_its_scale_to_the_edge_and_says_so():
    from trackrider.render.hud import LAT_RANGE, VERT_RANGE, meter_point

    assert VERT_RANGE == (-1.0, 6.0) and LAT_RANGE == 2.0
    assert meter_point(0.0, 1.0)[:2] == (0.5, pytest.approx(2.0 / 7.0)) and meter_point(0.0, 1.0)[2] == (0, 0)
    assert meter_point(1.0, 6.0) == (0.25, 1.0, (0, 0))  # on the scale's edge: not past it
    assert meter_point(0.3, 7.5)[1:] == (1.0, (0, 1))
    assert meter_point(-3.0, -1.5) == (1.0, 0.0, (1, -1))  # felt to the right (−): the dot goes right


def test_the_overlay_names_the_car_the_chase_camera_shows(ride, tmp_path):
    rec, spec = ride
    img, got = _capture(ride, tmp_path, "chase.png", camera="chase", time=0.7)
    follow = got["follow"]
    last = max(c for n, c in rec.labels if n == "demo")
    assert rec.labels[follow.ride] == ("demo", last) and follow.chase == follow.ride
    assert got["values"][0].label == f"demo · car {last}"
    img, got = _capture(ride, tmp_path, "chase2.png", camera="chase", time=0.7, car=2)
    assert rec.labels[got["follow"].ride] == ("demo", 2) and got["values"][0].label == "demo · car 2"


def test_a_value_off_the_scale_turns_the_dot_red_with_an_arrow():
    from trackrider.render import scene as scene_mod
    from trackrider.render.hud import HudValues

    hud = scene_mod._Hud((640, 360))

    def meter(gv):
        img = np.full((360, 640, 3), 128, dtype=np.uint8)
        hud.update(HudValues(1.0, 10.0, 5.0, gv, 0.0, "x · car 1"), "metric")
        hud.draw(img, hud.state())
        x0, y0, bw, bh = hud.box
        top = 360 - int(y0 + bh) - 20  # the rows just over the panel's top edge
        return img[top:360 - int(y0 + bh), int(x0):int(x0 + bw)].astype(int)

    def red(a):
        return int(((a[..., 0] > 200) & (a[..., 1] < 90)).sum())

    assert red(meter(5.0)) == 0
    assert red(meter(8.0)) > 10  # the arrow above the panel


def test_the_overlays_height_is_above_the_ground_under_the_car(ride):
    """On the plain the height is above the plain; over raised ground, above it."""
    from trackrider.render.ground import Ground
    from trackrider.render.hud import hud_values

    rec, _spec = ride
    times = rec.times[::10]
    x, y, z = (rec.positions[::10, 0, k] for k in range(3))
    plain = Ground(-2.0)
    np.testing.assert_allclose([v.height for v in hud_values(rec, 0, times, plain, "")], z + 2.0, atol=1e-9)
    # a 3 m high field over the whole ride (bilinear between equal heights: 3 m everywhere in it)
    x0, y0 = rec.positions[:, :, 0].min() - 5.0, rec.positions[:, :, 1].min() - 5.0
    n = int(max(rec.positions[:, :, 0].max() - x0, rec.positions[:, :, 1].max() - y0) / 4.0) + 4
    raised = Ground(-2.0, np.full((n + 1, n + 1), 3.0), x0, y0, 4.0)
    np.testing.assert_allclose(raised.height(x, y), 3.0)
    np.testing.assert_allclose([v.height for v in hud_values(rec, 0, times, raised, "")], z - 3.0, atol=1e-9)
