"""Mechanism loads: what the joints that hold or drive a body carrying tracks do over a run
(docs/outputs.md, ``joints.csv`` and ``summary.json`` ``mechanisms``).

``MechanismLog`` takes the world's reported-joint samples (``World.run``'s ``joint_sink``: per
instant, per joint, ``physics.channels.JOINT_CHANNELS``), streams them into ``joints.csv`` (written
as ``joints.csv.part`` and renamed when the run's outputs are complete) and keeps each joint's
extremes for the summary: what a ride engineer sizes a drive, a brake or a hold from.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from trackrider.physics.channels import J_DRIVE, J_FORCE, J_HELD, J_POWER, J_SPEED, J_TORQUE, J_TRAVEL, JOINT_NAMES

CSV_NAME = "joints.csv"
COLUMNS = ("t", "joint", "kind", "body") + JOINT_NAMES
TIME_FORMAT, FLOAT_FORMAT = "%.10g", "%.7g"


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def is_joints_csv(path) -> bool:
    """Whether ``path`` is a ``joints.csv`` trackrider wrote (a plain file with its header)."""
    from trackrider.results_folder import is_plain_file

    path = Path(path)
    if not is_plain_file(path):
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    return first.rstrip("\n") == ",".join(COLUMNS)


class MechanismLog:
    """The reported joints (``World.mechanisms``: dicts name, kind, body) of one run; ``out`` the
    results directory (None: extremes only)."""

    def __init__(self, mechanisms, out: Path | None):
        self.mechanisms = [dict(m) for m in mechanisms]
        self.last_t = -math.inf
        n = len(self.mechanisms)
        self.peak = {k: np.zeros(n) for k in ("drive", "force", "torque", "speed")}
        self.power_max = np.full(n, -np.inf)
        self.power_min = np.full(n, np.inf)
        self.travel_min = np.full(n, np.inf)
        self.travel_max = np.full(n, -np.inf)
        self.held_s = np.zeros(n)
        self.samples = 0
        self.path = self.part = None
        self._file = None
        if out is not None:
            self.path = Path(out) / CSV_NAME
            self.part = Path(out) / (CSV_NAME + ".part")
            self._file = open(self.part, "w", encoding="utf-8", newline="")
            self._file.write(",".join(COLUMNS) + "\n")
            self._prefix = [",".join(_quote(str(m[k])) for k in ("name", "kind", "body")) for m in self.mechanisms]

    def push(self, t, samples, dt_record: float) -> None:
        """One chunk: ``t`` (m,) s, ``samples`` (m, n_joints, ≥ len(JOINT_NAMES)); instants already
        seen are skipped."""
        t = np.asarray(t, dtype=float).reshape(-1)
        keep = t > self.last_t + 0.25 * dt_record
        t, samples = t[keep], np.asarray(samples, dtype=float)[keep]
        if not len(t):
            return
        self.last_t = float(t[-1])
        self.samples += len(t)
        s = samples[:, :, :len(JOINT_NAMES)]
        for key, col in (("drive", J_DRIVE), ("force", J_FORCE), ("torque", J_TORQUE), ("speed", J_SPEED)):
            self.peak[key] = np.fmax(self.peak[key], np.nanmax(np.abs(s[:, :, col]), axis=0))
        self.power_max = np.fmax(self.power_max, np.nanmax(s[:, :, J_POWER], axis=0))
        self.power_min = np.fmin(self.power_min, np.nanmin(s[:, :, J_POWER], axis=0))
        self.travel_max = np.fmax(self.travel_max, np.nanmax(s[:, :, J_TRAVEL], axis=0))
        self.travel_min = np.fmin(self.travel_min, np.nanmin(s[:, :, J_TRAVEL], axis=0))
        self.held_s += np.sum(s[:, :, J_HELD] > 0.5, axis=0) * dt_record
        if self._file is not None:
            lines = []
            for i, ti in enumerate(t):
                ts = TIME_FORMAT % ti
                for r, prefix in enumerate(self._prefix):
                    lines.append(ts + "," + prefix + "," + ",".join(FLOAT_FORMAT % v for v in s[i, r]) + "\n")
            self._file.write("".join(lines))

    def summary(self) -> list[dict]:
        """Per joint: its name, kind, body and extremes (null where nothing was recorded)."""

        def num(x):
            return float(x) if np.isfinite(x) else None

        out = []
        for r, m in enumerate(self.mechanisms):
            out.append(dict(joint=m["name"], kind=m["kind"], body=m["body"],
                            max_drive=num(self.peak["drive"][r]), max_power=num(self.power_max[r]),
                            min_power=num(self.power_min[r]), max_force=num(self.peak["force"][r]),
                            max_torque=num(self.peak["torque"][r]), max_speed=num(self.peak["speed"][r]),
                            travel_min=num(self.travel_min[r]), travel_max=num(self.travel_max[r]),
                            held_s=float(self.held_s[r])))
        return out

    def close(self) -> None:
        """The file complete: synced and renamed to ``joints.csv``."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self.part, self.path)

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
