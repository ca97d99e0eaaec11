"""Anti-aliasing of a rendered frame on the CPU: the sub-pixel part of FXAA
(Lottes, "FXAA", NVIDIA white paper, 2009) without its end-of-edge search.

Where the local luma contrast is high, each pixel is blended towards the
neighbour across the edge, by how much it differs from the mean of its four
neighbours. It softens stair-stepped edges and thin lines at ~3 ms a frame at
1280×720 (one pass in numba), where VTK's FXAA pass costs ~40 ms with software
rendering (Mesa llvmpipe). No VTK here.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit

#: contrast thresholds (luma 0..255): absolute, and relative to the local maximum
EDGE_MIN, EDGE_REL = 12.0, 0.125
#: how far a pixel may move towards its neighbour (FXAA's sub-pixel quality 0.75)
SUBPIX = 0.75


@njit(cache=True, nogil=True, fastmath=True, inline="always")
def _blend(src, dst, luma, y, x, edge_min, edge_rel, subpix):
    """FXAA's sub-pixel blend of pixel (y, x) into ``dst``: towards the neighbour across its
    edge, by how much its luma differs from the mean of its four neighbours. False (``dst``
    untouched) where the local contrast is below the edge threshold."""
    c = luma[y, x]
    n = luma[y - 1, x]
    s = luma[y + 1, x]
    e = luma[y, x + 1]
    wv = luma[y, x - 1]
    hi = max(max(max(n, s), max(e, wv)), c)
    lo = min(min(min(n, s), min(e, wv)), c)
    rng = hi - lo
    if rng < max(edge_min, edge_rel * hi):
        return False
    # sub-pixel blend amount
    f = abs(0.25 * (n + s + e + wv) - c) / rng
    f = min(max(f, 0.0), 1.0)
    f = f * f * (3.0 - 2.0 * f)
    f = f * f * subpix
    # the edge's direction: a horizontal edge (luma changes along y) blends vertically
    if abs(n + s - 2.0 * c) >= abs(e + wv - 2.0 * c):
        if abs(n - c) >= abs(s - c):
            yy, xx = y - 1, x
        else:
            yy, xx = y + 1, x
    else:
        if abs(e - c) >= abs(wv - c):
            yy, xx = y, x + 1
        else:
            yy, xx = y, x - 1
    for k in range(3):
        v = (1.0 - f) * src[y, x, k] + f * src[yy, xx, k]
        dst[y, x, k] = np.uint8(min(max(v + 0.5, 0.0), 255.0))
    return True


@njit(cache=True, nogil=True)
def _fxaa(src, dst, luma, edge_min, edge_rel, subpix):
    h, w = src.shape[0], src.shape[1]
    for y in range(h):
        for x in range(w):
            luma[y, x] = 0.299 * src[y, x, 0] + 0.587 * src[y, x, 1] + 0.114 * src[y, x, 2]
    dst[0, :, :] = src[0, :, :]
    dst[h - 1, :, :] = src[h - 1, :, :]
    for y in range(1, h - 1):
        dst[y, 0, :] = src[y, 0, :]
        dst[y, w - 1, :] = src[y, w - 1, :]
        for x in range(1, w - 1):
            if not _blend(src, dst, luma, y, x, edge_min, edge_rel, subpix):
                dst[y, x, 0] = src[y, x, 0]
                dst[y, x, 1] = src[y, x, 1]
                dst[y, x, 2] = src[y, x, 2]


@njit(cache=True, nogil=True, fastmath=True)
def _fxaa_spans(src, dst, luma, near, span, edge_min, edge_rel, subpix):
    """``_fxaa`` in the spans of ``span`` pixels marked in ``near`` (h, spans), each
    one pixel wider on both sides; ``dst`` holds a copy of ``src`` already.
    ``luma`` (h, w) is filled where needed."""
    h, w = src.shape[0], src.shape[1]
    nk = near.shape[1]
    # luma of the marked spans and of the rows above and below them, two pixels wider
    for y in range(h):
        for k in range(nk):
            if near[y, k] or (y > 0 and near[y - 1, k]) or (y < h - 1 and near[y + 1, k]):
                for x in range(max(k * span - 2, 0), min(k * span + span + 2, w)):
                    luma[y, x] = 0.299 * src[y, x, 0] + 0.587 * src[y, x, 1] + 0.114 * src[y, x, 2]
    for y in range(1, h - 1):
        for k in range(nk):
            if not near[y, k]:
                continue
            x0 = k * span
            for x in range(max(x0 - 1, 1), min(x0 + span + 1, w - 1)):
                _blend(src, dst, luma, y, x, edge_min, edge_rel, subpix)


def antialias_where(img: np.ndarray, busy: np.ndarray, span: int, out: np.ndarray | None = None) -> np.ndarray:
    """``antialias`` only near spans of ``span`` pixels marked in ``busy`` (h, ceil(w / span))
    bool (what is not sky or ground: the backdrop, ``trackrider.render.backdrop``, has no
    edges to smooth): in each marked span, the pixel on either side of it and the spans
    above and below it, which hold every pixel beside a marked one."""
    src = np.ascontiguousarray(img)
    if out is None:
        out = np.empty_like(src)
    near = busy.copy()
    near[1:] |= busy[:-1]
    near[:-1] |= busy[1:]
    luma = np.empty(src.shape[:2], dtype=np.float32)
    out[...] = src
    _fxaa_spans(src, out, luma, near, span, np.float32(EDGE_MIN), np.float32(EDGE_REL), np.float32(SUBPIX))
    return out


def antialias(img: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The frame ``img`` (h, w, 3) uint8 anti-aliased, into ``out`` (a new array by default)."""
    src = np.ascontiguousarray(img)
    if out is None:
        out = np.empty_like(src)
    luma = np.empty(src.shape[:2], dtype=np.float32)
    _fxaa(src, out, luma, np.float32(EDGE_MIN), np.float32(EDGE_REL), np.float32(SUBPIX))
    return out


@njit(cache=True, nogil=True)
def _downsample(src, dst, f):
    h, w = dst.shape[0], dst.shape[1]
    half = (f * f) // 2
    for y in range(h):
        for x in range(w):
            for k in range(3):
                acc = 0
                for dy in range(f):
                    for dx in range(f):
                        acc += np.int64(src[f * y + dy, f * x + dx, k])
                dst[y, x, k] = np.uint8((acc + half) // (f * f))


def downsample(img: np.ndarray, factor: int) -> np.ndarray:
    """``img`` (h·factor, w·factor, 3) uint8 averaged down to (h, w, 3): each pixel the mean of a
    ``factor`` × ``factor`` block (supersampling's anti-aliasing)."""
    h, w = img.shape[0] // factor, img.shape[1] // factor
    out = np.empty((h, w, 3), dtype=np.uint8)
    _downsample(img, out, int(factor))
    return out
