"""Camera paths for a video: ``onride``, ``chase`` and ``overview``.

A camera path is computed for all frame times at once from the interpolated
poses, then smoothed in time with a centred Gaussian (zero lag), so solver jitter
in a car's orientation never shakes the picture. No VTK here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

CAMERAS = ("onride", "chase", "overview")

#: Gaussian smoothing, standard deviation in s: (position, direction vectors)
SMOOTHING_S = {"onride": (0.04, 0.12), "chase": (0.35, 0.5), "overview": (1.0, 1.0)}
#: onride: the eyes above the rider point, m
EYE_ABOVE_RIDER = 0.3
#: onride: the eyes behind the car's centre, in car lengths (the car's front stays in view)
EYE_BEHIND_CENTRE = 0.15
#: chase: behind the last car (m, plus 1.5 car lengths), to its left and above it (m, plus a car height)
CHASE_BACK, CHASE_SIDE, CHASE_UP = 6.0, 2.5, 3.0
#: onride: the rider looks this far below the car's forward axis, degrees
ONRIDE_PITCH_DOWN = 15.0
#: chase: natural angular frequency of the critically damped follow (1/s of ride time)
CHASE_OMEGA = 3.0
#: vertical field of view, degrees (onride: see ``ONRIDE_HFOV``)
VIEW_ANGLE = {"chase": 55.0, "overview": 40.0}
#: onride: a rider's horizontal field of view, degrees (the vertical one follows from the picture's shape)
ONRIDE_HFOV = 90.0


def onride_view_angle(aspect: float) -> float:
    """The vertical view angle (degrees) that gives the on-ride camera ``ONRIDE_HFOV`` across a
    picture ``aspect`` (width / height) wide."""
    return float(np.degrees(2.0 * np.arctan(np.tan(np.radians(0.5 * ONRIDE_HFOV)) / aspect)))


@dataclass
class CameraPath:
    """Per frame: ``position``, ``focal_point`` (nf, 3) m and unit ``up`` (nf, 3);
    ``view_angle`` degrees; ``near``, ``far`` clipping distances, m."""

    position: np.ndarray
    focal_point: np.ndarray
    up: np.ndarray
    view_angle: float
    near: float
    far: float


@dataclass
class Follow:
    """What the camera follows: entity indices of the lead and last car of a
    train, the car length, and the rider point above the centre of mass (m)."""

    lead: int
    last: int
    car_length: float = 2.0
    car_height: float = 1.0
    rider_above_cg: float = 1.1
    #: onride: the car the rider sits in (entity index) and the eyes in its body frame, m (None: a cab view);
    #: chase: the car that must be seen (a suspended car's hanging body)
    ride: int | None = None
    eye: np.ndarray | None = None
    #: onride: (the direction the rider looks, the rider's up) in the car's frame, when not along the car
    view: tuple | None = None
    #: chase: height of the camera over the car (m, plus the car height); suspended cars: lower
    chase_up: float = CHASE_UP
    #: chase: the entity the camera is anchored behind (None: ``last``), the one a few cars ahead of it
    #: that it looks towards, the car's width, a scale for small cars, a free body (followed in the
    #: world's axes), and what it plans against (``chase.ChaseScene``; None: no planning, the first shot)
    chase: int | None = None
    ahead: int | None = None
    car_width: float = 1.2
    scale: float = 1.0
    free: bool = False
    scene: object = None


def _smooth(a: np.ndarray, sigma_frames: float) -> np.ndarray:
    if sigma_frames < 0.3 or len(a) < 2:
        return a
    return gaussian_filter1d(a, sigma_frames, axis=0, mode="nearest")


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 1e-12, n, 1.0)


def critically_damped(target: np.ndarray, dt: float, omega: float) -> np.ndarray:
    """A critically damped follower of ``target`` (nf, 3), sampled every ``dt``
    (s): x'' = ω² (target − x) − 2 ω x', started at rest on the first target and
    advanced exactly for a target that is constant over each step."""
    target = np.asarray(target, dtype=float)
    out = np.empty_like(target)
    x = target[0].copy()
    v = np.zeros(3)
    e = np.exp(-omega * dt)
    for i in range(len(target)):
        # exact step of the error d = x - target (const target): d(t) = (d0 + (v0 + ω d0) t) e^{-ωt}
        d0 = x - target[i]
        c = v + omega * d0
        d1 = (d0 + c * dt) * e
        v = (c - omega * (d0 + c * dt)) * e
        x = target[i] + d1
        out[i] = x
    return out


def camera_path(
    kind: str,
    positions: np.ndarray,
    rotations: np.ndarray,
    follow: Follow,
    bounds: np.ndarray,
    fps: float,
    speed: float = 1.0,
    points: np.ndarray | None = None,
    aspect: float = 16 / 9,
) -> CameraPath:
    """Camera of kind ``kind`` for each of ``nf`` frames.

    positions : (nf, ne, 3) entity centres of mass, m.
    rotations : (nf, ne, 3, 3) body → world (columns forward, left, up).
    bounds : (2, 3) the scene's box (min, max), m, for ``overview`` and ``far``.
    fps, speed : frames per second of the video and its playback rate (simulated
        seconds per video second); smoothing widths are in simulated seconds.
    points : (k, 3) points of the layout (track samples, recorded positions), m,
        that ``overview`` keeps in the picture (default: the corners of ``bounds``).
    aspect : width / height of the picture.
    """
    if kind not in CAMERAS:
        raise ValueError(f"unknown camera {kind!r}")
    frames_per_sim_s = fps / max(speed, 1e-9)
    sig_p, sig_d = (s * frames_per_sim_s for s in SMOOTHING_S[kind])
    lead_p = positions[:, follow.lead]
    lead_r = rotations[:, follow.lead]
    last_p = positions[:, follow.last]
    fwd, up = lead_r[:, :, 0], lead_r[:, :, 2]
    extent = float(np.linalg.norm(bounds[1] - bounds[0]))
    far = max(4.0 * extent, 500.0)
    if kind == "onride" and follow.eye is not None:
        # a seated rider's eyes, fixed in the car (no smoothing: the rider moves
        # with the car, and the car stays still in the picture), looking along
        # the car ONRIDE_PITCH_DOWN below its forward axis
        r = rotations[:, follow.ride]
        eye = positions[:, follow.ride] + np.einsum("fij,j->fi", r, np.asarray(follow.eye, dtype=float))
        if follow.view is not None:
            look = np.einsum("fij,j->fi", r, np.asarray(follow.view[0], dtype=float))
            up = np.einsum("fij,j->fi", r, np.asarray(follow.view[1], dtype=float))
            return CameraPath(eye, eye + 10.0 * look, up, onride_view_angle(aspect), 0.05, far)
        a = np.radians(ONRIDE_PITCH_DOWN)
        look = np.cos(a) * r[:, :, 0] - np.sin(a) * r[:, :, 2]
        up = np.sin(a) * r[:, :, 0] + np.cos(a) * r[:, :, 2]
        return CameraPath(eye, eye + 10.0 * look, up, onride_view_angle(aspect), 0.05, far)
    if kind == "onride":
        # the eyes of a rider in the lead car: EYE_ABOVE_RIDER above its rider
        # point (the heart line, where G is measured), looking along the car
        # (never inside the car's box: tall cars such as locomotives and wagons
        # carry no riders inside; the eyes then sit 0.3 m above the roof, 0.5 m
        # behind its front: a cab view)
        above = follow.rider_above_cg + EYE_ABOVE_RIDER
        ahead = -EYE_BEHIND_CENTRE * follow.car_length
        if above < 0.5 * follow.car_height + 0.3:
            above = 0.5 * follow.car_height + 0.3
            ahead = max(0.5 * follow.car_length - 0.5, ahead)
        eye = lead_p + above * up + ahead * fwd
        fwd_s = _unit(_smooth(fwd, sig_d))
        up_s = _unit(_smooth(up, sig_d))
        eye = _smooth(eye, sig_p)
        focal = eye + 20.0 * fwd_s - 1.0 * up_s
        return CameraPath(eye, focal, up_s, onride_view_angle(aspect), 0.05, far)
    if kind == "chase":
        # behind, beside and above the followed car (anchor), looking along the train past it; the
        # offset follows the car's axes through a critically damped spring (no overshoot, no lag
        # growing with speed); with a scene to plan against, the shot that keeps the car in view
        # (trackrider.render.chase), clear of the structure, the tracks' space and the ground
        anchor = follow.chase if follow.chase is not None else follow.last
        target = follow.ride if follow.ride is not None else anchor
        sc = follow.scale
        base = ((CHASE_BACK + 1.5 * follow.car_length) * sc, CHASE_SIDE * sc, (follow.chase_up + follow.car_height) * sc)
        up_l = np.tile([0.0, 0.0, 1.0], (len(positions), 1)) if follow.free else \
            _unit(_smooth(rotations[:, anchor, :, 2], 0.5 * frames_per_sim_s))
        if follow.scene is not None:
            from trackrider.render.chase import plan_chase

            eye, _shot = plan_chase(positions, rotations, follow, follow.scene, fps, speed, base,
                                    (follow.car_length, follow.car_width, follow.car_height))
        else:
            fwd_l = np.tile([1.0, 0.0, 0.0], (len(positions), 1)) if follow.free else \
                _unit(_smooth(rotations[:, anchor, :, 0], 0.5 * frames_per_sim_s))
            left_l = _unit(np.cross(up_l, fwd_l))
            offset = -base[0] * fwd_l + base[1] * left_l + base[2] * up_l
            eye = positions[:, anchor] + critically_damped(offset, max(speed, 1e-9) / fps, CHASE_OMEGA)
        # the focal point: the followed car, moved half way to the car a few ahead of it (at most half
        # the camera's distance behind), half a car height up
        p_anchor = positions[:, anchor]
        ahead = positions[:, follow.ahead if follow.ahead is not None else follow.lead] - p_anchor
        n = np.linalg.norm(ahead, axis=1, keepdims=True)
        ahead = 0.5 * ahead * np.minimum(1.0, base[0] / np.maximum(n, 1e-9))
        centre = positions[:, target] + ahead + 0.5 * follow.car_height * sc * up_l
        focal = _smooth(centre, 0.1 * frames_per_sim_s)
        return CameraPath(eye, focal, up_l, VIEW_ANGLE[kind], 0.2 * min(sc, 1.0), far)
    # overview: a fixed point seeing the whole layout side-on (across its longest
    # horizontal axis, 30° to one side, 25° above), turning to follow the train
    pts = bounds if points is None else np.asarray(points, dtype=float)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centre = 0.5 * (lo + hi)
    xy = pts[:, :2] - centre[:2]
    if len(xy) > 2 and np.ptp(xy, axis=0).max() > 1e-9:
        _, vecs = np.linalg.eigh(xy.T @ xy)
        major = vecs[:, -1]
    else:
        major = np.array([1.0, 0.0])
    across = np.array([major[1], -major[0]])
    if across[1] > 0:  # a stable choice of side: look from the south-ish side
        across = -across
    az = np.radians(30.0)
    horiz = np.cos(az) * across + np.sin(az) * major
    el = np.radians(25.0)
    direction = np.array([np.cos(el) * horiz[0], np.cos(el) * horiz[1], np.sin(el)])  # centre -> eye
    fwd_c = -direction
    right = np.cross(fwd_c, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up_c = np.cross(right, fwd_c)
    rel = pts - centre
    half_v = np.tan(np.radians(0.5 * VIEW_ANGLE[kind]))
    half_h = half_v * aspect
    # each point fits the frame (85 %): |x| / (D + depth) <= 0.85 tan(half angle)
    depth = rel @ fwd_c
    need = np.maximum(np.abs(rel @ right) / (0.85 * half_h), np.abs(rel @ up_c) / (0.85 * half_v)) - depth
    distance = max(float(need.max()), 3.0)
    nf = len(positions)
    eye = np.tile(centre + distance * direction, (nf, 1))
    train_c = 0.5 * (lead_p + last_p)
    focal = _smooth(centre + 0.2 * (train_c - centre), sig_p)
    up = np.tile([0.0, 0.0, 1.0], (nf, 1))
    return CameraPath(eye, focal, up, VIEW_ANGLE[kind], max(0.5, 0.01 * distance), far + distance)
