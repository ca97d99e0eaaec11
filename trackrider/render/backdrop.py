"""The sky and the ground, drawn into the read-back frame on the CPU instead of
by the renderer. No VTK here.

The renderer clears to a key colour (``KEY``) and draws only the track, the
supports and the cars; every pixel still of exactly that colour is background.
For each of them one pass (numba) casts the pixel's view ray: rays that go up
(or a camera below the ground) get the sky, a gradient by elevation from
``SKY_BOTTOM`` at the horizon to ``SKY_TOP`` 35° up and above; rays that go
down meet the ground plane, an endless grass field (the tiled texture of
``geometry.grass_texture``, bilinear, from a mip level chosen by the pixel's
footprint, so that far grass does not shimmer) fading with distance into the
haze of the horizon (``SKY_BOTTOM``). The frame is turned the right way up
(OpenGL reads rows bottom first) on the way, and the frame read back as RGBA
(the renderer's own layout: reading it costs ~0.1 ms at 1280×720, reading
RGB ~0.5 ms) becomes RGB.

Why: with software rendering (Mesa llvmpipe) a textured ground quad and a sky
band cost the renderer ~7 ms a frame at 1280×720; this pass costs ~2 ms and
touches only background pixels. It needs exact background pixels, so it is
used without multisampling (whose edge pixels mix the key colour in; the
renderer then draws its own ground and sky, ``RideScene``).
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.jit import njit
from trackrider.render import geometry as geo

#: the clear colour that marks background pixels (a green no lit surface of the scene shows exactly)
KEY = (3, 251, 7)
#: elevation, degrees, where the sky gradient reaches ``SKY_TOP``
SKY_TOP_DEG = 35.0
#: entries of the sky colour table, by sin(elevation) 0..1
SKY_LUT_SIZE = 1024
#: distance, m, at which the ground is half faded into the horizon haze (at least: a large layout's
#: scene gets 2.5 times its size, so that the overview still sees grass)
HAZE_HALF = 900.0
#: a pixel takes the mip level where its footprint is at most this many texels (more: sharper, dearer to encode)
MIP_TEXELS = 1.0


def sky_table(n: int = SKY_LUT_SIZE) -> np.ndarray:
    """Sky colour (n, 3) float by sin(elevation) from 0 (horizon) to 1 (zenith):
    ``SKY_BOTTOM`` → ``SKY_TOP`` with weight (elevation / 35°)^0.7."""
    el = np.degrees(np.arcsin(np.linspace(0.0, 1.0, n)))
    w = np.clip(el / SKY_TOP_DEG, 0.0, 1.0) ** 0.7
    return ((1 - w)[:, None] * np.asarray(geo.SKY_BOTTOM, float) + w[:, None] * np.asarray(geo.SKY_TOP, float)).astype(np.float32)


def mip_chain(texture: np.ndarray):
    """The mip levels of a square power-of-two texture (s, s, 3) uint8 down to 1×1,
    packed: (flat float32 array of every level, offsets (levels,), sizes (levels,))."""
    lev = [np.asarray(texture, dtype=np.float32)]
    while lev[-1].shape[0] > 1:
        a = lev[-1]
        lev.append(0.25 * (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]))
    sizes = np.array([a.shape[0] for a in lev], dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum([a.size for a in lev])[:-1]]).astype(np.int64)
    return np.concatenate([a.ravel() for a in lev]).astype(np.float32), offs, sizes


#: pixels per span of a row: the view rays are cast at the span's ends; in
#: between, the sky's elevation and the ground's texture coordinates are linear
#: (perspective-correct where the depth changes by more than 5 % across the
#: span) and its haze exact (1/depth is linear along a row); a span's ground
#: has the mip level of its finer end
SPAN = 32


@njit(cache=True, nogil=True, inline="always")
def _put(dst, y, x, c):
    """``dst[y, x]`` = the packed colour ``c`` (r | g << 8 | b << 16)."""
    dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = c & 0xFF, (c >> 8) & 0xFF, c >> 16


@njit(cache=True, nogil=True, inline="always")
def _put_hazed(dst, y, x, c, a, h0, h1, h2):
    """``dst[y, x]`` = the packed colour ``c`` blended with the haze (h0, h1, h2) by ``a`` / 256."""
    ka = 256 - a
    dst[y, x, 0] = np.uint8((ka * (c & 0xFF) + a * h0 + 128) >> 8)
    dst[y, x, 1] = np.uint8((ka * ((c >> 8) & 0xFF) + a * h1 + 128) >> 8)
    dst[y, x, 2] = np.uint8((ka * ((c >> 16) & 0xFF) + a * h2 + 128) >> 8)


@njit(cache=True, nogil=True, fastmath=True)
def _compose(src, words, dst, key, mask, cam, ground_z, tile, mips, offs, sizes, sky, haze, haze_half, nodes, busy,
             mip_texels, shifts):
    h, w = dst.shape[0], dst.shape[1]
    px, py, pz = cam[0], cam[1], cam[2]
    # cam[3:6] forward (unit), cam[6:9] right × tan(half width), cam[9:12] up × tan(half height)
    f0, f1, f2, r0, r1, r2, u0, u1, u2 = cam[3], cam[4], cam[5], cam[6], cam[7], cam[8], cam[9], cam[10], cam[11]
    rr = r0 * r0 + r1 * r1 + r2 * r2
    uu = u0 * u0 + u1 * u1 + u2 * u2
    foot = 2.0 * math.sqrt(uu) / h * sizes[0] / tile  # level-0 texels a pixel covers per metre of depth, face on
    nl = sizes.shape[0]
    top = sky.shape[0] - 1
    above = 1.0 if pz > ground_z else 0.0
    inv_height = 1.0 / min(ground_z - pz, -1e-9)
    dxn = 2.0 / w
    h0, h1, h2 = np.int64(haze[0]), np.int64(haze[1]), np.int64(haze[2])
    mean = mips[offs[nl - 1]]  # the last level's one texel: the texture's mean colour
    # each loop below first keeps what the renderer drew (a pixel not of the key colour): written
    # out in every loop, as a helper numba inlines it costs the pass ~15 %
    mip2 = mip_texels * mip_texels
    nn = nodes.shape[1]
    for y in range(h):
        row = (h - 1 - y) * w  # first pixel of the row (OpenGL's rows come bottom first)
        ny = 1.0 - 2.0 * (y + 0.5) / h
        bx = f0 + ny * u0
        by = f1 + ny * u1
        bz = f2 + ny * u2
        q0 = 1.0 + ny * ny * uu  # |d|^2 = q0 + nx^2 rr: forward, right and up are orthogonal
        # the rays at the span ends (independent, so they pipeline): 0 ground? (1/0),
        # sin(elevation) × table size, texture x, y (level-0 texels), haze, footprint (level-0 texels)
        for k in range(nn):
            nx = (min(k * SPAN, w - 1) + 0.5) * dxn - 1.0
            dz = bz + nx * r2
            s = dz / math.sqrt(q0 + nx * nx * rr)
            g = 1.0 if dz < 0.0 else 0.0
            g *= above
            w_ = max(dz * inv_height, 1e-7)  # 1 / depth along the view direction (d's forward component is 1)
            t = 1.0 / w_
            nodes[0, k] = g
            nodes[1, k] = abs(s) * top
            nodes[2, k] = (px + t * (bx + nx * r0)) * (sizes[0] / tile)
            nodes[3, k] = (py + t * (by + nx * r1)) * (sizes[0] / tile)
            nodes[4, k] = w_  # 1/t is linear along the row: the haze is exact per pixel
            nodes[5, k] = t * t * foot * foot / max(-s, 1e-4)  # squared footprint
        for k in range(nn - 1):
            xa = k * SPAN
            xb = min(xa + SPAN, w)
            inv = 1.0 / (xb - xa)
            ga, gb = nodes[0, k], nodes[0, k + 1]
            fg = False
            if ga == 0.0 and gb == 0.0:  # sky: the colour table by sin(elevation)
                sa = np.int64(nodes[1, k] * 65536.0)  # fixed point, 16 bits of fraction
                ds = np.int64((nodes[1, k + 1] - nodes[1, k]) * inv * 65536.0)
                for x in range(xa, xb):
                    p = row + x
                    if words[p] & mask != key:  # drawn by the renderer: kept
                        i = 4 * p
                        dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                        fg = True
                        continue
                    _put(dst, y, x, sky[min((sa + ds * (x - xa)) >> 16, top)])
            elif ga == 1.0 and gb == 1.0:  # ground: the texel of the span's mip level, hazed
                texels2 = min(nodes[5, k], nodes[5, k + 1])
                lev = 0
                sc = 1.0
                while texels2 > mip2 and lev < nl - 1:
                    texels2 *= 0.25
                    sc *= 0.5
                    lev += 1
                n = sizes[lev]
                m = n - 1
                base = offs[lev]
                lg = shifts[lev]
                wa = nodes[4, k] * haze_half
                dw = (nodes[4, k + 1] - nodes[4, k]) * haze_half * inv
                if abs(nodes[4, k + 1] - nodes[4, k]) > 0.05 * min(nodes[4, k], nodes[4, k + 1]):
                    # depth changes by > 5 % across the span (near the horizon of a banked view):
                    # texel coordinates perspective-correct, (x, y) / t and 1/t being linear along the row
                    pa, qa, ra = nodes[2, k] * nodes[4, k], nodes[3, k] * nodes[4, k], nodes[4, k]
                    dp = (nodes[2, k + 1] * nodes[4, k + 1] - pa) * inv
                    dq = (nodes[3, k + 1] * nodes[4, k + 1] - qa) * inv
                    dr = (nodes[4, k + 1] - ra) * inv
                    for x in range(xa, xb):
                        p = row + x
                        if words[p] & mask != key:  # drawn by the renderer: kept
                            i = 4 * p
                            dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                            fg = True
                            continue
                        j = x - xa
                        t = sc / (ra + dr * j)
                        a = np.int64(256.0 / (1.0 + wa + dw * j))
                        tv = mips[base + ((np.int64(math.floor((qa + dq * j) * t)) & m) << lg)
                                    + (np.int64(math.floor((pa + dp * j) * t)) & m)]
                        _put_hazed(dst, y, x, tv, a, h0, h1, h2)
                    busy[y, k] = fg
                    continue
                # texel coordinates in fixed point (16 bits of fraction), linear across the span
                ua = np.int64(nodes[2, k] * sc * 65536.0)
                va = np.int64(nodes[3, k] * sc * 65536.0)
                du = np.int64((nodes[2, k + 1] - nodes[2, k]) * sc * inv * 65536.0)
                dv = np.int64((nodes[3, k + 1] - nodes[3, k]) * sc * inv * 65536.0)
                # the haze's weight in fixed point too: 1 + wa + dw j changes by less than 5 % across
                # the span, where a straight line stays within 0.2 (of 256) of 256 / (1 + wa + dw j)
                ha = np.int64(65536.0 * 256.0 / (1.0 + wa))
                dh = np.int64(65536.0 * 256.0 * inv * (1.0 / (1.0 + wa + dw * (xb - xa)) - 1.0 / (1.0 + wa)))
                for x in range(xa, xb):
                    p = row + x
                    if words[p] & mask != key:  # drawn by the renderer: kept
                        i = 4 * p
                        dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                        fg = True
                        continue
                    j = x - xa
                    a = (ha + dh * j) >> 16  # haze t / (t + haze_half), 0..256
                    tv = mips[base + ((((va + dv * j) >> 16) & m) << lg) + (((ua + du * j) >> 16) & m)]
                    _put_hazed(dst, y, x, tv, a, h0, h1, h2)
            else:  # the horizon crosses the span: each pixel on its own (the ground here is far: its mean colour)
                for x in range(xa, xb):
                    p = row + x
                    if words[p] & mask != key:  # drawn by the renderer: kept
                        i = 4 * p
                        dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                        fg = True
                        continue
                    nx = (x + 0.5) * dxn - 1.0
                    dz = bz + nx * r2
                    s = dz / math.sqrt(q0 + nx * nx * rr)
                    if dz >= 0.0 or above == 0.0:
                        _put(dst, y, x, sky[min(int(abs(s) * top), top)])
                    else:
                        t = (ground_z - pz) / dz
                        a = np.int64(256.0 * t / (t + haze_half))
                        _put_hazed(dst, y, x, mean, a, h0, h1, h2)
            busy[y, k] = fg


def upsampled(texture: np.ndarray, factor: int = 4) -> np.ndarray:
    """A tileable texture (s, s, 3) uint8 enlarged ``factor`` times by bilinear
    interpolation with wrap-around: sampled at the nearest texel it looks as the
    original sampled bilinearly."""
    t = np.asarray(texture, dtype=np.float32)
    s = t.shape[0]
    x = (np.arange(s * factor) + 0.5) / factor - 0.5
    i0 = np.floor(x).astype(int)
    f = (x - i0).astype(np.float32)
    i0 %= s
    i1 = (i0 + 1) % s
    rows = t[i0] * (1 - f)[:, None, None] + t[i1] * f[:, None, None]
    out = rows[:, i0] * (1 - f)[None, :, None] + rows[:, i1] * f[None, :, None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def packed(rgb: np.ndarray) -> np.ndarray:
    """Colours (n, 3), 0..255, as (n,) int32 words ``r | g << 8 | b << 16``."""
    c = np.asarray(rgb).astype(np.int32)
    return c[:, 0] | (c[:, 1] << 8) | (c[:, 2] << 16)


class Backdrop:
    """Sky and ground for frames of one size: ``compose(raw, camera)``.

    ground_z : height of the ground plane, m; tile : metres one copy of the
    texture covers; texture : (s, s, 3) uint8, s a power of two; haze_half :
    distance where the ground is half haze, m.
    """

    def __init__(self, ground_z: float, tile: float, texture: np.ndarray, haze_half: float = HAZE_HALF):
        self.ground_z = float(ground_z)
        self.haze_half = float(haze_half)
        self.tile = float(tile)
        mips, offs, self.sizes = mip_chain(upsampled(texture))
        # texels and sky colours packed one to a word (r | g << 8 | b << 16): one load a pixel
        self.mips = packed(np.rint(mips).reshape(-1, 3))
        self.offs = offs // 3  # in texels
        self.shifts = np.round(np.log2(self.sizes)).astype(np.int64)  # a level's row of texels: index << shift
        self.sky = packed(np.rint(sky_table()))
        self.haze = np.asarray(geo.SKY_BOTTOM, dtype=np.int64)
        self.key = np.asarray(KEY, dtype=np.uint8)
        self.span = SPAN

    @staticmethod
    def camera_vector(position, focal_point, view_up, view_angle_deg: float, aspect: float) -> np.ndarray:
        """(12,) float64: position, forward, right × tan(half width), up × tan(half height)
        of a perspective camera whose vertical view angle is ``view_angle_deg``."""
        p = np.asarray(position, dtype=float)
        f = np.asarray(focal_point, dtype=float) - p
        f /= np.linalg.norm(f)
        r = np.cross(f, np.asarray(view_up, dtype=float))
        r /= np.linalg.norm(r)
        u = np.cross(r, f)
        th = math.tan(math.radians(0.5 * view_angle_deg))
        return np.concatenate([p, f, r * th * aspect, u * th])

    def compose(self, raw: np.ndarray, size, cam: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``raw``: the frame as read back, RGBA, (h·w·4,) uint8, bottom row first
        (the alpha is not used). Returns the frame (h, w, 3) uint8, top row first:
        what the renderer drew, and the sky and ground where it left the key
        colour; and (h, spans) bool: the spans of ``SPAN`` pixels that hold
        anything else (``antialias.antialias_where``)."""
        w, h = size
        if raw.size != 4 * w * h:
            raise ValueError(f"a {w}x{h} RGBA frame has {4 * w * h} bytes, got {raw.size}")
        if out is None:
            out = np.empty((h, w, 3), dtype=np.uint8)
        ns = (w + SPAN - 1) // SPAN
        nodes = np.empty((6, ns + 1))
        busy = np.empty((h, ns), dtype=np.bool_)
        raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
        # a pixel is one 32-bit word; its colour compared in one go (the key and the mask
        # laid out as the pixel's bytes are, whatever the machine's byte order)
        key = np.array([*self.key, 0], dtype=np.uint8).view(np.uint32)[0]
        mask = np.array([255, 255, 255, 0], dtype=np.uint8).view(np.uint32)[0]
        _compose(raw, raw.view(np.uint32), out, key, mask, cam, self.ground_z, self.tile, self.mips, self.offs,
                 self.sizes, self.sky, self.haze, self.haze_half, nodes, busy, MIP_TEXELS, self.shifts)
        return out, busy
