"""Shared helpers for the geometry tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np

CURVES = Path(__file__).resolve().parents[2] / "curves"


def helix_points(r=5.0, c=1.0, turns=3.0, n=400):
    """(n, 3) points on the right-handed helix (r cos t, r sin t, c t)."""
    t = np.linspace(0.0, 2 * np.pi * turns, n)
    return np.column_stack([r * np.cos(t), r * np.sin(t), c * t])


def darboux_fd_error(track, s, h=1e-4):
    """Largest |d(axis)/ds − Ω × axis| over T, N_w, B_w at ``s`` (central differences, 1/m)."""
    f = track.frames(s)
    fa = track.frames(s + h)
    fb = track.frames(s - h)
    err = 0.0
    for name in ("tangent", "normal", "binormal"):
        fd = (getattr(fa, name) - getattr(fb, name)) / (2 * h)
        err = max(err, float(np.abs(fd - np.cross(f.darboux, getattr(f, name))).max()))
    return err



def osculating_bank_deg(track, s):
    """|angle| (degrees, 0–90) between the rider's left axis N_w and the Frenet binormal at ``s``.

    0 when the rider's up lies in the curve's osculating plane (no sideways
    component of the centripetal acceleration κ v² N); only meaningful where κ > 0.
    """
    f = track.frames(s)
    k = track.second_derivative(s)
    B = np.cross(f.tangent, k / np.linalg.norm(k, axis=1, keepdims=True))
    c = np.abs(np.sum(B * f.normal, axis=1))
    return np.degrees(np.arccos(np.clip(c, 0.0, 1.0)))
