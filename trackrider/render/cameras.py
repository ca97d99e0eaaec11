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


def _smooth(a: np.ndarray, sigma_frames: float) -> np.ndarray:
    if sigma_frames < 0.3 or len(a) < 2:
        return a
    return gaussian_filter1d(a, sigma_frames, axis=0, mode="nearest")


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 1e-12, n, 1.0)


def camera_path(
    kind: str,
    positions: np.ndarray,
    rotations: np.ndarray,
    follow: Follow,
    bounds: np.ndarray,
    fps: float,
    speed: float = 1.0,
) -> CameraPath:
    """Camera of kind ``kind`` for each of ``nf`` frames.

    positions : (nf, ne, 3) entity centres of mass, m.
    rotations : (nf, ne, 3, 3) body → world (columns forward, left, up).
    bounds : (2, 3) the scene's box (min, max), m, for ``overview`` and ``far``.
    fps, speed : frames per second of the video and its playback rate (simulated
        seconds per video second); smoothing widths are in simulated seconds.
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
    if kind == "onride":
        # the lead car's rider point, slightly forward, looking along the car
        eye = lead_p + follow.rider_above_cg * up - 0.1 * follow.car_length * fwd
        fwd_s = _unit(_smooth(fwd, sig_d))
        up_s = _unit(_smooth(up, sig_d))
        eye = _smooth(eye, sig_p)
        focal = eye + 20.0 * fwd_s - 2.0 * up_s
        return CameraPath(eye, focal, up_s, VIEW_ANGLE[kind], 0.05, far)
    if kind == "chase":
        # behind and above the last car, looking at the middle of the train
        fwd_l, up_l = _unit(_smooth(last_r[:, :, 0], sig_d)), _unit(_smooth(last_r[:, :, 2], sig_d))
        back = 6.0 + 1.5 * follow.car_length
        eye = last_p - back * fwd_l + (3.0 + follow.car_height) * up_l
        centre = 0.5 * (lead_p + last_p) + 0.5 * follow.car_height * up_l
        eye = _smooth(eye, sig_p)
        focal = _smooth(centre, sig_p)
        return CameraPath(eye, focal, up_l, VIEW_ANGLE[kind], 0.2, far)
    # overview: a fixed point seeing the whole layout, turning to follow the train
    lo, hi = bounds
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * extent, 5.0)
    elevation, azimuth = np.radians(30.0), np.radians(-60.0)
    direction = np.array([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    distance = 1.15 * radius / np.sin(np.radians(0.5 * VIEW_ANGLE[kind]))
    nf = len(positions)
    eye = np.tile(centre + distance * direction, (nf, 1))
    train_c = 0.5 * (lead_p + last_p)
    focal = _smooth(centre + 0.35 * (train_c - centre), sig_p)
    up = np.tile([0.0, 0.0, 1.0], (nf, 1))
    return CameraPath(eye, focal, up, VIEW_ANGLE[kind], max(0.5, 0.02 * distance), far + distance)
