"""A synthetic ride for tests, the benchmark and demos, independent of the
simulator: an analytic closed track (an oval with two hills) and a train whose
cars follow it at the speed energy conservation gives; a level straight for
tests of the track's geometry. No VTK here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.render.recording import Recording
from trackrider.render.spec import SceneSpec, TrackSpec, TrainSpec


@dataclass
class Frames:
    position: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    binormal: np.ndarray


class StraightTrack:
    """A level straight along +x at height ``z0`` (m), ``length`` long: T = +x, N = +y (left), B = +z."""

    closed = False

    def __init__(self, length: float = 20.0, z0: float = 5.0):
        self.length, self.z0 = float(length), float(z0)

    def frames(self, s) -> Frames:
        s = np.atleast_1d(np.asarray(s, dtype=float))
        n = len(s)
        p = np.column_stack([s, np.zeros(n), np.full(n, self.z0)])
        return Frames(p, np.tile([1.0, 0, 0], (n, 1)), np.tile([0, 1.0, 0], (n, 1)), np.tile([0, 0, 1.0], (n, 1)))


class OvalTrack:
    """x = a cos u, y = b sin u, z = z0 + h sin²(u) (m), arc-length parametrised
    by a dense table; ``up`` frame (zero bank): N = ẑ × T normalised, B = T × N."""

    closed = True

    def __init__(self, a: float = 40.0, b: float = 20.0, h: float = 12.0, z0: float = 2.0, samples: int = 20001):
        u = np.linspace(0.0, 2.0 * np.pi, samples)
        self._p = np.column_stack([a * np.cos(u), b * np.sin(u), z0 + h * np.sin(u) ** 2])
        seg = np.linalg.norm(np.diff(self._p, axis=0), axis=1)
        self._s = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(self._s[-1])

    def frames(self, s) -> Frames:
        s = np.mod(np.atleast_1d(np.asarray(s, dtype=float)), self.length)
        p = np.column_stack([np.interp(s, self._s, self._p[:, k]) for k in range(3)])
        ds = 1e-3 * self.length / 1000.0 + 1e-3
        p1 = np.column_stack([np.interp(np.mod(s + ds, self.length), self._s, self._p[:, k]) for k in range(3)])
        p0 = np.column_stack([np.interp(np.mod(s - ds, self.length), self._s, self._p[:, k]) for k in range(3)])
        t = p1 - p0
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        n = np.cross([0.0, 0.0, 1.0], t)
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        b = np.cross(t, n)
        return Frames(p, t, n, b)


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) (w, x, y, z) of rotation matrices (..., 3, 3)."""
    r = np.asarray(r, dtype=float)
    flat = r.reshape(-1, 3, 3)
    q = np.empty((len(flat), 4))
    for i, m in enumerate(flat):
        tr = m[0, 0] + m[1, 1] + m[2, 2]
        if tr > 0:
            k = 2.0 * np.sqrt(tr + 1.0)
            q[i] = [0.25 * k, (m[2, 1] - m[1, 2]) / k, (m[0, 2] - m[2, 0]) / k, (m[1, 0] - m[0, 1]) / k]
        elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
            k = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
            q[i] = [(m[2, 1] - m[1, 2]) / k, 0.25 * k, (m[0, 1] + m[1, 0]) / k, (m[0, 2] + m[2, 0]) / k]
        elif m[1, 1] > m[2, 2]:
            k = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
            q[i] = [(m[0, 2] - m[2, 0]) / k, (m[0, 1] + m[1, 0]) / k, 0.25 * k, (m[1, 2] + m[2, 1]) / k]
        else:
            k = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
            q[i] = [(m[1, 0] - m[0, 1]) / k, (m[0, 2] + m[2, 0]) / k, (m[1, 2] + m[2, 1]) / k, 0.25 * k]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.reshape(r.shape[:-2] + (4,))


def synthetic_ride(
    cars: int = 7,
    duration: float = 4.0,
    record_hz: float = 100.0,
    start_s: float = 30.0,
    start_speed: float = 12.0,
    car_length: float = 2.0,
    gap: float = 0.5,
    gravity: float = 9.81,
    track=None,
) -> tuple[Recording, SceneSpec]:
    """A train of ``cars`` cars (2.0 × 1.2 × 1.0 m) riding ``track`` (default an
    ``OvalTrack``) without friction for ``duration`` s, recorded at ``record_hz``.

    The lead car's arc length obeys ½v² + g z = const (explicit midpoint steps
    of 1 ms); every car sits on the curve (``cg_height`` 0) in the track frame.
    """
    track = OvalTrack() if track is None else track
    dt = 1e-3
    nsteps = int(round(duration / dt))
    every = max(int(round(1.0 / (record_hz * dt))), 1)
    z_of = lambda s: float(track.frames([s]).position[0, 2])  # noqa: E731
    energy = 0.5 * start_speed**2 + gravity * z_of(start_s)
    s, v = start_s, start_speed
    lead = []
    times = []
    for k in range(nsteps + 1):
        if k % every == 0:
            times.append(k * dt)
            lead.append(s)
        v = np.sqrt(max(2.0 * (energy - gravity * z_of(s + 0.5 * v * dt)), 1e-6))
        s += v * dt
    times = np.asarray(times)
    pitch = car_length + gap
    car_s = np.asarray(lead)[:, None] - pitch * np.arange(cars)[None, :]
    f = track.frames(car_s.ravel())
    rot = np.stack([f.tangent, f.normal, f.binormal], axis=-1)  # columns: forward, left, up
    quat = matrix_to_quat(rot).reshape(len(times), cars, 4)
    pos = f.position.reshape(len(times), cars, 3)
    labels = [("demo", i + 1) for i in range(cars)]
    # the overlay's channels, from the motion itself: speed and the G felt (a + g ẑ) / g
    # along each car's up and left axes (finite differences of the recorded positions)
    vel = np.gradient(pos, times, axis=0)
    acc = np.gradient(vel, times, axis=0)
    felt = (acc + np.array([0.0, 0.0, gravity])) / gravity
    rot = rot.reshape(len(times), cars, 3, 3)
    channels = {
        "speed": np.linalg.norm(vel, axis=-1),
        "g_vertical": np.einsum("tek,tek->te", felt, rot[..., 2]),
        "g_lateral": np.einsum("tek,tek->te", felt, rot[..., 1]),
    }
    rec = Recording(times=times, labels=labels, positions=pos, quaternions=quat, channels=channels)
    spec = SceneSpec(
        tracks=[TrackSpec("main", track, 1.0)],
        trains=[TrainSpec("demo", 0, cars, length=car_length, width=1.2, height=1.0, cg_height=0.0, rider_height=1.1)],
    )
    return rec, spec


def recording_columns(rec: Recording) -> dict:
    """The recording as ``timeseries`` columns (t, train, car, x, y, z, qw, qx, qy, qz)."""
    nt, ne = rec.positions.shape[:2]
    cols = {
        "t": np.repeat(rec.times, ne),
        "train": [name for _ in range(nt) for name, _c in rec.labels],
        "car": np.tile([c for _n, c in rec.labels], nt),
    }
    for k, name in enumerate("xyz"):
        cols[name] = rec.positions[:, :, k].ravel()
    for k, name in enumerate(("qw", "qx", "qy", "qz")):
        cols[name] = rec.quaternions[:, :, k].ravel()
    return cols
