"""A layout's figures as a designer reads them: drops, steepest angles, inversions, bank.

``layout_figures(track)`` samples a track every ``STEP`` m and returns its
length, height range, smallest radius, largest curvature and torsion, largest
bank, the biggest drop (its height, where it starts and ends, its steepest
angle) and the inversions (stretches where the rider's up points below the
horizontal). ``trackrider curve`` prints them (``curves.io.format_curve_report``)
and the report's statistics table uses the same functions on a ride.

The helpers work on plain arrays, so the report can feed them what a train
recorded: ``drops(s, z, pitch)`` and ``inversions(up_z)``.
"""
from __future__ import annotations

import math

import numpy as np

#: sampling step of ``layout_figures``, m (and at most ``MAX_SAMPLES`` samples)
STEP = 0.05
MAX_SAMPLES = 400_001
#: torsion is undefined on straights and spikes near them: reported where the radius is below 200 m
TORSION_MIN_CURVATURE = 5e-3  # 1/m
#: a height change smaller than this does not end a drop (a level stretch, rounding), m
DROP_HYSTERESIS = 0.05
#: the rider is inverted once its up vector points below the horizontal (up_z < 0), and upright
#: again once it is back above this (up_z > sin 10°): a roll that dips below horizontal
#: twice without coming back up between is one inversion
UPRIGHT_AGAIN = math.sin(math.radians(10.0))


def zigzag(z: np.ndarray, hysteresis: float = DROP_HYSTERESIS) -> list[int]:
    """Indices of the alternating highs and lows of ``z``, turns smaller than ``hysteresis`` ignored;
    the first and the last sample included. A level top or bottom turns at its last sample."""
    z = np.asarray(z, dtype=float)
    n = len(z)
    if n == 0:
        return []
    turns = [0]
    direction, hi, lo = 0, 0, 0      # +1 rising (hi: the highest since the last turn), −1 falling (lo)
    for i in range(1, n):
        if direction == 0:
            hi = i if z[i] >= z[hi] else hi
            lo = i if z[i] <= z[lo] else lo
            if z[hi] - z[lo] > hysteresis:
                direction = 1 if hi > lo else -1
                first = lo if direction == 1 else hi
                if first != 0:
                    turns.append(first)
        elif direction == 1:
            if z[i] >= z[hi]:
                hi = i
            elif z[hi] - z[i] > hysteresis:
                turns.append(hi)
                direction, lo = -1, i
        else:
            if z[i] <= z[lo]:
                lo = i
            elif z[i] - z[lo] > hysteresis:
                turns.append(lo)
                direction, hi = 1, i
    last = hi if direction == 1 else lo if direction == -1 else n - 1
    if last != turns[-1]:
        turns.append(last)
    if turns[-1] != n - 1:
        turns.append(n - 1)
    return turns


def drops(s: np.ndarray, z: np.ndarray, pitch: np.ndarray) -> list[dict]:
    """Every descent of a profile, largest first: ``{"height", "s_from", "s_to", "z_from", "z_to",
    "steepest_deg", "s_steepest"}`` (heights m, the steepest angle below the horizontal in degrees,
    at ``s_steepest``). ``s``, ``z``, ``pitch`` (degrees, + nose up) sampled along the direction of
    travel; descents that turn back up by less than ``DROP_HYSTERESIS`` continue."""
    s, z, pitch = (np.asarray(a, dtype=float) for a in (s, z, pitch))
    turns = zigzag(z)
    out = []
    for a, b in zip(turns[:-1], turns[1:]):
        if z[b] < z[a] - DROP_HYSTERESIS:
            j = a + int(np.argmin(pitch[a:b + 1]))
            out.append({"height": float(z[a] - z[b]), "s_from": float(s[a]), "s_to": float(s[b]),
                        "z_from": float(z[a]), "z_to": float(z[b]), "steepest_deg": float(-pitch[j]),
                        "s_steepest": float(s[j])})
    out.sort(key=lambda d: -d["height"])
    return out


def inversions(up_z: np.ndarray) -> list[tuple[int, int]]:
    """The inverted stretches of a rider's up vector: ``[(first, last index), ...]`` where ``up_z``
    (the up vector's vertical component) went below 0, each lasting until it is back above
    ``UPRIGHT_AGAIN``. NaN samples (no data) leave the state as it was."""
    up_z = np.asarray(up_z, dtype=float)
    out = []
    start = None
    last_inv = None
    for i, u in enumerate(up_z):
        if not math.isfinite(u):
            continue
        if start is None:
            if u < 0.0:
                start = last_inv = i
        else:
            if u < 0.0:
                last_inv = i
            elif u > UPRIGHT_AGAIN:
                out.append((start, last_inv))
                start = None
    if start is not None:
        out.append((start, last_inv))
    return out


def _samples(track):
    n = min(MAX_SAMPLES, max(2, int(math.ceil(track.length / STEP)) + 1))
    return np.linspace(0.0, track.length, n)


def layout_figures(track) -> dict:
    """A track's figures, sampled every ``STEP`` m (in blocks: bounded memory on a long line).

    Returns a dict: ``length`` (m), ``closed``, ``frame``, ``z_min``, ``z_max`` (m),
    ``min_radius`` (m, ``inf`` if straight) and where (``s_min_radius``), ``max_curvature`` (1/m),
    ``max_abs_torsion`` (1/m, where the radius is below 200 m), ``max_abs_roll`` (deg, the bank
    against zero bank: 180 on a zero-g roll's top), ``max_bank_upright`` (deg: the largest bank
    where the rider is upright, up within 90° of vertical), ``max_grade`` (%, steepest climb or
    descent where the track is within 45° of level: a railway's figure), ``steepest_deg`` (the
    steepest angle below the horizontal anywhere), ``biggest_drop`` (a ``drops`` entry, or None)
    and ``inversions`` (``[{"s_from", "s_to"}, ...]`` counted from the frame's up vector).
    """
    s_all = _samples(track)
    chunks = []
    for a in range(0, len(s_all), 100_000):
        f = track.frames(s_all[a:a + 100_000])
        chunks.append((f.position[:, 2].copy(), np.degrees(np.arcsin(np.clip(f.tangent[:, 2], -1.0, 1.0))),
                       f.curvature.copy(), f.torsion.copy(), f.roll.copy(), f.binormal[:, 2].copy()))
    z, pitch, kappa, tau, roll, up_z = (np.concatenate([c[i] for c in chunks]) for i in range(6))
    s = s_all
    if track.closed:       # a drop may run through s = 0: start the profile at its lowest point
        k = int(np.argmin(z))
        order = np.r_[k:len(s) - 1, 0:k + 1]
        s_prof = np.where(order >= k, s[order] - s[k], s[order] + track.length - s[k])
        prof = drops(s_prof, z[order], pitch[order])
        for d in prof:
            for key in ("s_from", "s_to", "s_steepest"):
                d[key] = float((d[key] + s[k]) % track.length)
    else:
        prof = drops(s, z, pitch)
    jk = int(np.argmax(kappa))
    kmax = float(kappa[jk])
    curved = kappa >= TORSION_MIN_CURVATURE
    upright = up_z >= 0.0
    gentle = np.abs(pitch) <= 45.0
    inv = [{"s_from": float(s[a]), "s_to": float(s[b])} for a, b in inversions(up_z)]
    return {
        "length": float(track.length),
        "closed": bool(track.closed),
        "frame": track.frame_kind,
        "z_min": float(np.min(z)),
        "z_max": float(np.max(z)),
        "s_z_max": float(s[int(np.argmax(z))]),
        "min_radius": (1.0 / kmax) if kmax > 1e-9 else math.inf,
        "s_min_radius": float(s[jk]),
        "max_curvature": kmax,
        "max_abs_torsion": float(np.max(np.abs(tau[curved]), initial=0.0)),
        "max_abs_roll": float(np.max(np.abs(roll))),
        "max_bank_upright": float(np.max(np.abs(roll[upright]), initial=0.0)),
        "max_grade": float(np.max(np.abs(np.tan(np.radians(pitch[gentle]))), initial=0.0) * 100.0),
        "steepest_deg": float(max(0.0, -float(np.min(pitch)))),
        "biggest_drop": prof[0] if prof else None,
        "drops": prof[:5],
        "inversions": inv,
    }
