"""The overlay (HUD) text of a frame: time, speed, height, filtered vertical and
lateral G and what is followed. No VTK here: the scene draws the text this
module formats, so tests can check the numbers without reading pixels.

Every number is the recorded channel linearly interpolated to the frame's
time (``Recording.channel_at``) and rounded as displayed: time 0.1 s, speed
0.1 km/h (0.1 mph) and 0.1 m/s, height 0.1 m, G 0.01 g.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

UNITS = ("metric", "imperial")
KMH_PER_MS = 3.6
MPH_PER_MS = 3600.0 / 1609.344
FT_PER_M = 1.0 / 0.3048
#: the G meter's range: lateral ±LAT_RANGE g, vertical VERT_RANGE g
LAT_RANGE = 2.0
VERT_RANGE = (-1.0, 6.0)


@dataclass
class HudValues:
    """What one frame's overlay shows (SI units; NaN: not recorded)."""

    t: float
    speed: float
    height: float
    g_vertical: float
    g_lateral: float
    label: str


def _fmt(v: float, spec: str, unit: str = "") -> str:
    return "–" if not math.isfinite(v) else format(v, spec) + unit


def hud_lines(v: HudValues, units: str = "metric") -> list[str]:
    """The overlay's lines of text."""
    if units == "imperial":
        speed = f"{_fmt(v.speed * MPH_PER_MS, '.1f')} mph"
        height = f"height {_fmt(v.height * FT_PER_M, '.1f')} ft"
    else:
        speed = f"{_fmt(v.speed * KMH_PER_MS, '.1f')} km/h   {_fmt(v.speed, '.1f')} m/s"
        height = f"height {_fmt(v.height, '.1f')} m"
    return [
        f"t {v.t:.1f} s   {v.label}",
        speed,
        height,
        f"vertical {_fmt(v.g_vertical, '+.2f')} g   lateral {_fmt(v.g_lateral, '+.2f')} g",
    ]


def hud_values(recording, entity: int, times, ground, label: str) -> list[HudValues]:
    """The overlay values of entity ``entity`` at each frame time (s); its height is
    above the ground under it (``ground.Ground``: the plain or the raised ground)."""
    times = np.atleast_1d(np.asarray(times, dtype=float))
    speed = recording.channel_at("speed", times, entity)
    gv = recording.channel_at("g_vertical", times, entity)
    gl = recording.channel_at("g_lateral", times, entity)
    x, y, z = (np.interp(times, recording.times, recording.positions[:, entity, k]) for k in range(3))
    above = z - ground.height(x, y)
    return [HudValues(float(t), float(s), float(h), float(a), float(b), label)
            for t, s, h, a, b in zip(times, speed, above, gv, gl)]


def meter_point(g_lateral: float, g_vertical: float) -> tuple[float, float, tuple[int, int]]:
    """Position of the G meter's dot in the meter's unit square (0..1 each way,
    lateral across, vertical up), clamped to its edges, and which edges the value
    is past: (−1 left / +1 right / 0, −1 bottom / +1 top / 0)."""
    if not (math.isfinite(g_lateral) and math.isfinite(g_vertical)):
        return 0.5, (0.0 - VERT_RANGE[0]) / (VERT_RANGE[1] - VERT_RANGE[0]), (0, 0)
    x = 0.5 - 0.5 * g_lateral / LAT_RANGE  # felt to the left (+): the dot goes left
    y = (g_vertical - VERT_RANGE[0]) / (VERT_RANGE[1] - VERT_RANGE[0])
    off = (int(x > 1.0) - int(x < 0.0), int(y > 1.0) - int(y < 0.0))
    return float(np.clip(x, 0.0, 1.0)), float(np.clip(y, 0.0, 1.0)), off


def _blend_py(img, colour, alpha, row, col):
    h, w = img.shape[0], img.shape[1]
    hh, ww = alpha.shape[0], alpha.shape[1]
    for y in range(max(row, 0), min(row + hh, h)):
        for x in range(max(col, 0), min(col + ww, w)):
            a = alpha[y - row, x - col]
            if a <= 0.0:
                continue
            for k in range(3):
                v = img[y, x, k] * (1.0 - a) + colour[y - row, x - col, k] + 0.5
                img[y, x, k] = np.uint8(min(max(v, 0.0), 255.0))


_blend = None


def blend(img: np.ndarray, colour: np.ndarray, alpha: np.ndarray, row: int, col: int) -> None:
    """Blend premultiplied ``colour`` (hh, ww, 3) float32 with ``alpha`` (hh, ww) float32
    0..1 into ``img`` (h, w, 3) uint8, in place, its top left at pixel (row, col),
    clipped to the image."""
    global _blend
    if _blend is None:  # numba only when an overlay is drawn
        from trackrider.jit import njit

        _blend = njit(cache=True, nogil=True)(_blend_py)
    _blend(img, colour, alpha, int(row), int(col))


def _blend_rgba_py(img, rgba, row, col):
    h, w = img.shape[0], img.shape[1]
    hh, ww = rgba.shape[0], rgba.shape[1]
    for y in range(max(row, 0), min(row + hh, h)):
        for x in range(max(col, 0), min(col + ww, w)):
            a = np.int32(rgba[y - row, x - col, 3])
            if a == 0:
                continue
            for k in range(3):
                v = (np.int32(img[y, x, k]) * (255 - a) + np.int32(rgba[y - row, x - col, k]) * a + 127) // 255
                img[y, x, k] = np.uint8(v)


_blend_rgba = None


def blend_rgba(img: np.ndarray, rgba: np.ndarray, row: int, col: int) -> None:
    """Blend ``rgba`` (hh, ww, 4) uint8 (colour not premultiplied) into ``img`` (h, w, 3)
    uint8, in place, its top left at pixel (row, col), clipped to the image."""
    global _blend_rgba
    if _blend_rgba is None:
        from trackrider.jit import njit

        _blend_rgba = njit(cache=True, nogil=True)(_blend_rgba_py)
    _blend_rgba(img, rgba, int(row), int(col))
