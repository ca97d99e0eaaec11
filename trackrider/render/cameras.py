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
ONRIDE_PITCH_DOWN = 12.0
#: chase: natural angular frequency of the critically damped follow (1/s of ride time)
CHASE_OMEGA = 3.0
#: chase: least distance from any track curve and height above the ground, m
CHASE_CLEARANCE, CHASE_ABOVE_GROUND = 1.8, 1.5
#: vertical field of view, degrees
VIEW_ANGLE = {"onride": 75.0, "chase": 55.0, "overview": 40.0}


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
    #: onride: the car the rider sits in (entity index) and the eyes in its body frame, m (None: a cab view)
    ride: int | None = None
    eye: np.ndarray | None = None
    #: chase: points of the track curves (k, 3) the camera keeps CHASE_CLEARANCE from, and the ground z
    keep_clear: np.ndarray | None = None
    z_ground: float | None = None
    #: chase: height of the camera over the car (m, plus the car height); suspended cars: lower
    chase_up: float = 3.0


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


def keep_clear(eye: np.ndarray, curve_points: np.ndarray | None, z_ground: float | None,
               clearance: float = CHASE_CLEARANCE) -> np.ndarray:
    """Camera positions (nf, 3) moved out to ``clearance`` m from the nearest of
    ``curve_points`` (k, 3) (a few passes: moving away from one part of a track
    may bring it near another) and to ``CHASE_ABOVE_GROUND`` above ``z_ground``."""
    eye = np.array(eye, dtype=float)
    if curve_points is not None and len(curve_points):
        from scipy.spatial import cKDTree

        tree = cKDTree(np.asarray(curve_points, dtype=float))
        for _ in range(6):
            dist, idx = tree.query(eye)
            near = dist < clearance
            if not np.any(near):
                break
            away = eye[near] - curve_points[idx[near]]
            n = np.linalg.norm(away, axis=1, keepdims=True)
            away = np.where(n > 1e-9, away / np.where(n > 1e-9, n, 1.0), np.array([0.0, 0.0, 1.0]))
            eye[near] = curve_points[idx[near]] + (clearance + 0.05) * away
    if z_ground is not None:
        eye[:, 2] = np.maximum(eye[:, 2], z_ground + CHASE_ABOVE_GROUND)
    return eye


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
    last_r = rotations[:, follow.last]
    fwd, up = lead_r[:, :, 0], lead_r[:, :, 2]
    extent = float(np.linalg.norm(bounds[1] - bounds[0]))
    far = max(4.0 * extent, 500.0)
    if kind == "onride" and follow.eye is not None:
        # a seated rider's eyes, fixed in the car (no smoothing: the rider moves
        # with the car, and the car stays still in the picture), looking along
        # the car ONRIDE_PITCH_DOWN below its forward axis
        r = rotations[:, follow.ride]
        eye = positions[:, follow.ride] + np.einsum("fij,j->fi", r, np.asarray(follow.eye, dtype=float))
        a = np.radians(ONRIDE_PITCH_DOWN)
        look = np.cos(a) * r[:, :, 0] - np.sin(a) * r[:, :, 2]
        up = np.sin(a) * r[:, :, 0] + np.cos(a) * r[:, :, 2]
        return CameraPath(eye, eye + 10.0 * look, up, VIEW_ANGLE[kind], 0.05, far)
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
        return CameraPath(eye, focal, up_s, VIEW_ANGLE[kind], 0.05, far)
    if kind == "chase":
        # behind, beside and above the last car, looking at the middle of the
        # train; the offset from the car follows the car's axes through a
        # critically damped spring (no overshoot, no lag growing with speed),
        # then is pushed out of the track's space and above the ground
        # (the car's axes lightly smoothed first: solver jitter never reaches the spring)
        fwd_l = _unit(_smooth(last_r[:, :, 0], 0.5 * frames_per_sim_s))
        up_l = _unit(_smooth(last_r[:, :, 2], 0.5 * frames_per_sim_s))
        left_l = _unit(np.cross(up_l, fwd_l))
        back = CHASE_BACK + 1.5 * follow.car_length
        offset = -back * fwd_l + CHASE_SIDE * left_l + (follow.chase_up + follow.car_height) * up_l
        dt = max(speed, 1e-9) / fps
        offset = critically_damped(offset, dt, CHASE_OMEGA)
        up_c = up_l  # the horizon follows the smoothed car axes
        eye = last_p + offset
        eye = keep_clear(eye, follow.keep_clear, follow.z_ground)
        centre = 0.5 * (lead_p + last_p) + 0.5 * follow.car_height * up_l
        focal = _smooth(centre, 0.1 * frames_per_sim_s)
        return CameraPath(eye, focal, up_c, VIEW_ANGLE[kind], 0.2, far)
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
