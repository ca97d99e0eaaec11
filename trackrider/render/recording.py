"""A recorded ride as the renderer needs it: time, position and orientation of
every car and free body, interpolated to a video's frame times.

No VTK here (importable anywhere).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trackrider.errors import InputError

_NEEDED = ("t", "train", "car", "x", "y", "z", "qw", "qx", "qy", "qz")
#: read when present, for the overlay: name in ``channels`` -> CSV columns, first found wins
#: (the filtered G columns, as ``trackrider plot`` and the summary report them)
_OPTIONAL = {
    "speed": ("speed",),
    "g_vertical": ("g_vertical_filtered", "g_vertical"),
    "g_lateral": ("g_lateral_filtered", "g_lateral"),
}


@dataclass
class Recording:
    """Poses of ``ne`` entities at ``nt`` recorded instants.

    Attributes
    ----------
    times : (nt,) float array, s, strictly increasing
    labels : list of (train_or_body_name, car_no_1_based), entity order
    positions : (nt, ne, 3) float array, centre of mass, m
    quaternions : (nt, ne, 4) float array, unit (w, x, y, z), body → world
    channels : name -> (nt, ne) float array, the recorded ``speed`` (m/s),
        ``g_vertical`` and ``g_lateral`` (g, filtered) when the source has them
    switches : the run's switches and their throws (``summary.json`` ``switches``), when known
    """

    times: np.ndarray
    labels: list
    positions: np.ndarray
    quaternions: np.ndarray
    channels: dict = field(default_factory=dict)
    switches: dict = field(default_factory=dict)

    @property
    def t_start(self) -> float:
        return float(self.times[0])

    @property
    def t_end(self) -> float:
        return float(self.times[-1])

    @classmethod
    def from_timeseries(cls, columns: dict, path=None) -> "Recording":
        """Build from a column dict (``Result.timeseries`` or a parsed CSV): one
        row per entity per instant, entities in the same order at every instant."""
        missing = [c for c in _NEEDED if c not in columns]
        if missing:
            raise InputError(
                f"cannot replay: column(s) {', '.join(missing)} missing", path=path, where="timeseries"
            )
        t = np.asarray(columns["t"], dtype=float)
        if t.size == 0:
            raise InputError("cannot replay: the recording is empty", path=path)
        trains = [str(v) for v in columns["train"]]
        cars = [int(float(v)) for v in columns["car"]]
        # entities: distinct (train, car) in order of first appearance at the first instant
        first = t == t[0]
        labels = [(trains[i], cars[i]) for i in np.flatnonzero(first)]
        ne = len(labels)
        if t.size % ne:
            raise InputError(
                f"cannot replay: {t.size} rows is not a whole number of instants of {ne} entities",
                path=path,
            )
        nt = t.size // ne
        times = t.reshape(nt, ne)[:, 0]
        if nt > 1 and not np.all(np.diff(times) > 0):
            raise InputError("cannot replay: time does not increase from instant to instant", path=path)
        pos = np.column_stack([np.asarray(columns[k], dtype=float) for k in ("x", "y", "z")]).reshape(nt, ne, 3)
        quat = np.column_stack([np.asarray(columns[k], dtype=float) for k in ("qw", "qx", "qy", "qz")])
        quat = quat.reshape(nt, ne, 4)
        norm = np.linalg.norm(quat, axis=-1, keepdims=True)
        bad = ~(np.isfinite(norm) & (norm > 0.5))
        quat = np.where(bad, np.array([1.0, 0.0, 0.0, 0.0]), quat / np.where(bad, 1.0, norm))
        channels = {}
        for name, sources in _OPTIONAL.items():
            for col in sources:
                if col in columns:
                    vals = np.asarray(columns[col], dtype=float)
                    if vals.size == t.size:
                        channels[name] = vals.reshape(nt, ne).copy()
                        break
        return cls(times=times.copy(), labels=labels, positions=np.ascontiguousarray(pos), quaternions=quat,
                   channels=channels)

    @classmethod
    def from_csv(cls, path) -> "Recording":
        """Read a ``timeseries.csv`` (only the columns the renderer needs)."""
        path = Path(path)
        try:
            with open(path, newline="") as fh:
                reader = csv.reader(fh)
                header = next(reader, None)
                if header is None:
                    raise InputError("the file is empty", path=path)
                header = [h.strip() for h in header]
                missing = [c for c in _NEEDED if c not in header]
                if missing:
                    raise InputError(f"column(s) {', '.join(missing)} missing", path=path, where="line 1")
                wanted = list(_NEEDED) + [c for srcs in _OPTIONAL.values() for c in srcs if c in header]
                idx = [header.index(c) for c in wanted]
                cols = {c: [] for c in wanted}
                for lineno, row in enumerate(reader, start=2):
                    if not row:
                        continue
                    try:
                        for c, i in zip(wanted, idx):
                            cols[c].append(row[i])
                    except IndexError:
                        raise InputError("row is shorter than the header", path=path, where=f"line {lineno}") from None
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror or exc})", path=path) from None
        try:
            num = {c: np.asarray([v if v != "" else "nan" for v in cols[c]], dtype=float) for c in cols if c != "train"}
        except ValueError as exc:
            raise InputError(f"a number could not be read ({exc})", path=path) from None
        num["train"] = cols["train"]
        return cls.from_timeseries(num, path=path)

    def window(self, t_from: float, t_to: float) -> "Recording":
        """The instants within ``[t_from, t_to]`` plus one either side (for interpolation)."""
        i0 = max(int(np.searchsorted(self.times, t_from, side="right")) - 1, 0)
        i1 = min(int(np.searchsorted(self.times, t_to, side="left")) + 1, len(self.times))
        return Recording(self.times[i0:i1], self.labels, self.positions[i0:i1], self.quaternions[i0:i1],
                         {k: v[i0:i1] for k, v in self.channels.items()})

    def channel_at(self, name: str, t, entity: int) -> np.ndarray:
        """Channel ``name`` of entity ``entity`` at times ``t`` (s), linearly
        interpolated (clamped to the ends); NaN when not recorded."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if name not in self.channels:
            return np.full(len(t), np.nan)
        return np.interp(t, self.times, self.channels[name][:, entity])

    def poses_at(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Positions (nf, ne, 3) and quaternions (nf, ne, 4) at times ``t`` (nf,), s.

        Positions are interpolated linearly, orientations by normalised
        quaternion interpolation (shortest arc); times outside the recording are
        clamped to its ends.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        times = self.times
        if len(times) == 1:
            return (np.repeat(self.positions, len(t), axis=0), np.repeat(self.quaternions, len(t), axis=0))
        tc = np.clip(t, times[0], times[-1])
        i = np.clip(np.searchsorted(times, tc, side="right") - 1, 0, len(times) - 2)
        w = ((tc - times[i]) / (times[i + 1] - times[i]))[:, None, None]
        p0, p1 = self.positions[i], self.positions[i + 1]
        pos = p0 + w * (p1 - p0)
        q0, q1 = self.quaternions[i], self.quaternions[i + 1]
        sign = np.where(np.sum(q0 * q1, axis=-1, keepdims=True) < 0.0, -1.0, 1.0)
        q = q0 + w * (sign * q1 - q0)
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
        return pos, q


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) (w, x, y, z); the
    columns are the body's forward, left and up axes in world coordinates."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r
