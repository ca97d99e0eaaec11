"""The compact array form of a track that numba kernels evaluate.

A track is tabulated at ``n`` equally spaced arc lengths ``s_i = i * ds``
(``i = 0 .. n-1``, ``ds = length / (n - 1)``; on a closed track the last row
repeats the first). Each row holds ``NCOL`` float64 columns:

=========  =====  ==========================================================
columns    name   meaning
=========  =====  ==========================================================
0:3        P      position P(s), m
3:6        T      unit tangent P'(s)
6:9        N      the track frame's left axis N_w (unit)
9:12       B      the track frame's up axis B_w = T x N_w (unit)
12:15      OMEGA  Darboux vector of the track frame, 1/m (docs/physics.md §1)
15         KAPPA  Frenet curvature |P''|, 1/m
16:19      DT     P''(s) = dT/ds, 1/m
19         ROLL   bank against the vertical, degrees (reporting only)
=========  =====  ==========================================================

``eval_track`` interpolates a row at any ``s``: P by cubic Hermite on (P, T),
T by cubic Hermite on (T, P'') then normalised, N_w by cubic Hermite on
(N_w, OMEGA x N_w) then made orthonormal to T; OMEGA, KAPPA, DT and ROLL
linearly. Closed tracks wrap ``s`` modulo the length; open tracks clamp it to
``[0, length]`` (a caller that needs to know it ran off compares ``s`` itself).

Several tracks live in one ``data`` array, stacked by rows; ``pack_tracks``
returns the per-track ``row0, nrows, ds, length, closed`` arrays that kernels take.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit

NCOL = 20
C_P, C_T, C_N, C_B, C_OMEGA, C_KAPPA, C_DT, C_ROLL = 0, 3, 6, 9, 12, 15, 16, 19


@dataclass(frozen=True)
class CompactTrack:
    """One track's table. ``data`` is (n, NCOL) float64, C-contiguous."""

    data: np.ndarray
    ds: float
    length: float
    closed: bool


@dataclass(frozen=True)
class PackedTracks:
    """Several tracks stacked for a kernel: ``data`` rows ``row0[k] : row0[k] + nrows[k]`` are track ``k``."""

    data: np.ndarray  # (rows, NCOL) float64
    row0: np.ndarray  # (ntracks,) int64
    nrows: np.ndarray  # (ntracks,) int64
    ds: np.ndarray  # (ntracks,) float64, m
    length: np.ndarray  # (ntracks,) float64, m
    closed: np.ndarray  # (ntracks,) bool


def build_table(P, T, N, B, omega, kappa, dT, roll_deg, length: float, closed: bool) -> CompactTrack:
    """Stack sampled frame quantities (each (n, 3) or (n,)) into a ``CompactTrack``.

    The samples must be at ``s_i = i * length / (n - 1)``.
    """
    n = len(P)
    if n < 2:
        raise ValueError("a compact track needs at least 2 rows")
    data = np.empty((n, NCOL), dtype=np.float64)
    data[:, C_P : C_P + 3] = P
    data[:, C_T : C_T + 3] = T
    data[:, C_N : C_N + 3] = N
    data[:, C_B : C_B + 3] = B
    data[:, C_OMEGA : C_OMEGA + 3] = omega
    data[:, C_KAPPA] = kappa
    data[:, C_DT : C_DT + 3] = dT
    data[:, C_ROLL] = roll_deg
    if not np.all(np.isfinite(data)):
        raise ValueError("compact track has non-finite values")
    return CompactTrack(np.ascontiguousarray(data), float(length) / (n - 1), float(length), bool(closed))


def pack_tracks(tracks: list[CompactTrack]) -> PackedTracks:
    """Stack several tracks into one ``PackedTracks`` for the kernels."""
    if not tracks:
        return PackedTracks(np.zeros((2, NCOL)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                            np.zeros(0), np.zeros(0), np.zeros(0, np.bool_))
    nrows = np.array([len(t.data) for t in tracks], dtype=np.int64)
    row0 = np.concatenate([[0], np.cumsum(nrows)[:-1]]).astype(np.int64)
    return PackedTracks(
        np.ascontiguousarray(np.vstack([t.data for t in tracks])),
        row0,
        nrows,
        np.array([t.ds for t in tracks], dtype=np.float64),
        np.array([t.length for t in tracks], dtype=np.float64),
        np.array([t.closed for t in tracks], dtype=np.bool_),
    )


@njit(cache=True, inline="always")
def wrap_arc_length(s, length, closed):
    """``s`` modulo ``length`` on a closed track, clamped to ``[0, length]`` on an open one. An ``s``
    already inside (0, length) is its own remainder: it skips the division's library call (the
    kernels' hot path, ~20 ns each)."""
    if closed:
        if 0.0 < s < length:
            return s
        s = s % length
        return s
    if s < 0.0:
        return 0.0
    if s > length:
        return length
    return s


@njit(cache=True, inline="always")
def segment(s, ds, nrows, row0):
    """The table row ``a`` that starts the interval of ``s`` (in [0, length]) and ``u``, where ``s`` lies in
    it (0 … 1; the last interval takes ``s`` = length)."""
    x = s / ds
    i = int(x)
    if i > nrows - 2:
        i = nrows - 2
    return row0 + i, x - i


@njit(cache=True, inline="always")
def hermite_weights(u, ds):
    """The cubic Hermite weights at ``u`` (0 … 1) of a row interval ``ds`` long: of the values at its
    two ends (h00, h01) and of their derivatives along s (h10, h11, times ``ds``)."""
    u2 = u * u
    u3 = u2 * u
    return 2.0 * u3 - 3.0 * u2 + 1.0, (u3 - 2.0 * u2 + u) * ds, -2.0 * u3 + 3.0 * u2, (u3 - u2) * ds


@njit(cache=True, inline="always")
def left_axis(h00, h10, h01, h11, na0, na1, na2, oa0, oa1, oa2, nb0, nb1, nb2, ob0, ob1, ob2, t0, t1, t2):
    """The left axis N_w between two rows (N_w ``na``, ``nb``; OMEGA ``oa``, ``ob``) by the Hermite
    weights ``h··`` on N_w and dN_w/ds = OMEGA × N_w, made orthonormal to the unit tangent ``t``."""
    n0 = h00 * na0 + h10 * (oa1 * na2 - oa2 * na1) + h01 * nb0 + h11 * (ob1 * nb2 - ob2 * nb1)
    n1 = h00 * na1 + h10 * (oa2 * na0 - oa0 * na2) + h01 * nb1 + h11 * (ob2 * nb0 - ob0 * nb2)
    n2 = h00 * na2 + h10 * (oa0 * na1 - oa1 * na0) + h01 * nb2 + h11 * (ob0 * nb1 - ob1 * nb0)
    d = n0 * t0 + n1 * t1 + n2 * t2
    n0 -= d * t0
    n1 -= d * t1
    n2 -= d * t2
    nn = 1.0 / np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    return n0 * nn, n1 * nn, n2 * nn


@njit(cache=True)
def eval_track(data, row0, nrows, ds, length, closed, s, out):
    """Write the frame at arc length ``s`` into ``out[0:NCOL]`` (layout as the table)."""
    s = wrap_arc_length(s, length, closed)
    a, u = segment(s, ds, nrows, row0)
    b = a + 1
    h00, h10, h01, h11 = hermite_weights(u, ds)
    # position (Hermite on P, T) and tangent (Hermite on T, P'')
    tn = 0.0
    for k in range(3):
        out[C_P + k] = h00 * data[a, C_P + k] + h10 * data[a, C_T + k] + h01 * data[b, C_P + k] + h11 * data[b, C_T + k]
        t = h00 * data[a, C_T + k] + h10 * data[a, C_DT + k] + h01 * data[b, C_T + k] + h11 * data[b, C_DT + k]
        out[C_T + k] = t
        tn += t * t
    tn = 1.0 / np.sqrt(tn)
    for k in range(3):
        out[C_T + k] *= tn
    # left axis: Hermite on N_w with dN_w/ds = OMEGA x N_w, then orthonormalised against T
    oa0, oa1, oa2 = data[a, C_OMEGA], data[a, C_OMEGA + 1], data[a, C_OMEGA + 2]
    ob0, ob1, ob2 = data[b, C_OMEGA], data[b, C_OMEGA + 1], data[b, C_OMEGA + 2]
    na0, na1, na2 = data[a, C_N], data[a, C_N + 1], data[a, C_N + 2]
    nb0, nb1, nb2 = data[b, C_N], data[b, C_N + 1], data[b, C_N + 2]
    t0, t1, t2 = out[C_T], out[C_T + 1], out[C_T + 2]
    n0, n1, n2 = left_axis(h00, h10, h01, h11, na0, na1, na2, oa0, oa1, oa2, nb0, nb1, nb2, ob0, ob1, ob2, t0, t1, t2)
    out[C_N] = n0
    out[C_N + 1] = n1
    out[C_N + 2] = n2
    out[C_B] = t1 * n2 - t2 * n1
    out[C_B + 1] = t2 * n0 - t0 * n2
    out[C_B + 2] = t0 * n1 - t1 * n0
    # linear: Darboux vector, curvature, P'', roll
    w = 1.0 - u
    for k in range(C_OMEGA, NCOL):
        out[k] = w * data[a, k] + u * data[b, k]


#: the largest step ``shift_frame`` takes to first order, m (the frame is then the table's within 2e-12)
SHIFT_MAX = 1e-7


@njit(cache=True, inline="always")
def shift_frame(fr, d, data, row0, nrows, ds, length, closed, s, out):
    """``out[0:NCOL]``: the frame ``fr`` (``eval_track`` at ``s − d``) moved along the track by a step
    ``d`` to ``s`` (in [0, length]), to first order in ``d``: P + d T, T + d P'', and N, B turned by
    d OMEGA (their derivatives ``OMEGA ×``); OMEGA, KAPPA, P'' and roll are interpolated at ``s``
    exactly as ``eval_track`` does. Its error is d times the interpolants' mismatch (T's derivative
    taken as the interpolated P'', not the normalised Hermite's own: ~1e-5 on 0.1 m rows at κ
    0.16 /m) plus d²/2 |F''|: below 2e-12 for |d| ≤ ``SHIFT_MAX``, against ~1e-6 between the table
    and the exact spline (``tests/curves/test_compact.py``). A step that small costs a few
    multiply-adds, not a second evaluation (two square roots and divisions); a larger one is
    ``eval_track`` at ``s``."""
    if abs(d) > SHIFT_MAX:
        eval_track(data, row0, nrows, ds, length, closed, s, out)
        return
    a, u = segment(s, ds, nrows, row0)
    w = 1.0 - u
    for k in range(C_OMEGA, NCOL):
        out[k] = w * data[a, k] + u * data[a + 1, k]
    for k in range(3):
        out[C_P + k] = fr[C_P + k] + d * fr[C_T + k]
        out[C_T + k] = fr[C_T + k] + d * fr[C_DT + k]
    o0, o1, o2 = fr[C_OMEGA], fr[C_OMEGA + 1], fr[C_OMEGA + 2]
    for c in (C_N, C_B):
        n0, n1, n2 = fr[c], fr[c + 1], fr[c + 2]
        out[c] = n0 + d * (o1 * n2 - o2 * n1)
        out[c + 1] = n1 + d * (o2 * n0 - o0 * n2)
        out[c + 2] = n2 + d * (o0 * n1 - o1 * n0)
