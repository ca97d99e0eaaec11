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
#: what the renderer draws cars' shadows on the ground in (drawn here as the ground in shadow)
SHADOW_KEY = (3, 251, 9)
#: what the renderer draws the raised ground in (drawn here as the ground, its points from the depth buffer)
TERRAIN_KEY = (3, 251, 11)
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
def _put_lit(dst, y, x, c, lv, a, h0, h1, h2):
    """``dst[y, x]`` = the packed colour ``c`` times the light ``lv`` / 128 (the light
    map's unit: 128 is the lit level plain), blended with the haze (h0, h1, h2) by ``a`` / 256."""
    ka = 256 - a
    r = min(((c & 0xFF) * lv) >> 7, 255)
    g = min((((c >> 8) & 0xFF) * lv) >> 7, 255)
    b = min(((c >> 16) * lv) >> 7, 255)
    dst[y, x, 0] = np.uint8((ka * r + a * h0 + 128) >> 8)
    dst[y, x, 1] = np.uint8((ka * g + a * h1 + 128) >> 8)
    dst[y, x, 2] = np.uint8((ka * b + a * h2 + 128) >> 8)


@njit(cache=True, nogil=True, inline="always")
def _light(lm, meta, lev, x, y):
    """The light map at world (x, y), m: level ``lev``, bilinear; 128 (the lit plain) outside it."""
    u = (x - meta[lev, 3]) * meta[lev, 6] - 0.5
    v = (y - meta[lev, 4]) * meta[lev, 6] - 0.5
    w = meta[lev, 1]
    if not (u >= 0.0 and v >= 0.0 and u < w - 1.0 and v < meta[lev, 2] - 1.0):
        return np.int64(128)
    iu = np.int64(u)
    iv = np.int64(v)
    fu = np.int64((u - iu) * 256.0)
    fv = np.int64((v - iv) * 256.0)
    wi = np.int64(w)
    p = np.int64(meta[lev, 0]) + iv * wi + iu
    top = np.int64(lm[p]) * (256 - fu) + np.int64(lm[p + 1]) * fu
    bot = np.int64(lm[p + wi]) * (256 - fu) + np.int64(lm[p + wi + 1]) * fu
    return (top * (256 - fv) + bot * fv + 32768) >> 16


@njit(cache=True, nogil=True, inline="always")
def _light_level(meta, foot2):
    """The light map level whose texel is at least the footprint (``foot2``: its square, m²)."""
    lev = 0
    while lev < meta.shape[0] - 1 and meta[lev, 5] * meta[lev, 5] < foot2:
        lev += 1
    return lev


@njit(cache=True, nogil=True, inline="always")
def _grass(mips, offs, sizes, shifts, mip2, texels2, wx, wy, tex_per_m):
    """The packed grass texel at world (x, y), m, of the mip level for a footprint of ``texels2`` (level-0 texels²)."""
    lev = 0
    sc = 1.0
    nl = sizes.shape[0]
    while texels2 > mip2 and lev < nl - 1:
        texels2 *= 0.25
        sc *= 0.5
        lev += 1
    m = sizes[lev] - 1
    return mips[offs[lev] + ((np.int64(math.floor(wy * tex_per_m * sc)) & m) << shifts[lev])
                + (np.int64(math.floor(wx * tex_per_m * sc)) & m)]


@njit(cache=True, nogil=True, inline="always")
def _terrain(dst, y, x, dval, zn, zf, px, py, pz, dx, dy, dz, dd, foot, mips, offs, sizes, shifts, mip2, tex_per_m,
             lm, meta, haze_half, shadowed, shadow_v, h0, h1, h2):
    """Pixel (y, x) of the raised ground, drawn by the renderer in the terrain key:
    its point from the depth buffer's ``dval`` (the view ray (dx, dy, dz), forward
    component 1, |d|² = ``dd``, from the camera at (px, py, pz)), then as the plain:
    grass, the light map (the slope's light and the static shadows; ``shadowed``: a
    car's shadow too), haze."""
    t = zn * zf / (zf - dval * (zf - zn))  # depth along the view direction, m
    wx = px + t * dx
    wy = py + t * dy
    s = dz / math.sqrt(dd)
    # the footprint as on the plain (a slope seen face on gets a coarser mip level than it needs:
    # no seam where it meets the plain)
    f2 = t * t * foot * foot / (max(-s, 1e-4) if s < 0.0 else 0.5)
    tv = _grass(mips, offs, sizes, shifts, mip2, f2, wx, wy, tex_per_m)
    lv = np.int64(128)
    if meta.shape[0] > 0:
        lv = _light(lm, meta, _light_level(meta, f2 / (tex_per_m * tex_per_m)), wx, wy)
    if shadowed:
        lv = min(lv, shadow_v)
    a = np.int64(256.0 * t / (t + haze_half))
    _put_lit(dst, y, x, tv, lv, a, h0, h1, h2)


@njit(cache=True, nogil=True, fastmath=True)
def _compose(src, words, dst, key, mask, cam, ground_z, tile, mips, offs, sizes, sky, haze, haze_half, nodes, busy,
             mip_texels, shifts, shadow_key, terrain_key, shadow_v, lm, meta, depth, zn, zf):
    h, w = dst.shape[0], dst.shape[1]
    px, py, pz = cam[0], cam[1], cam[2]
    # cam[3:6] forward (unit), cam[6:9] right × tan(half width), cam[9:12] up × tan(half height)
    f0, f1, f2, r0, r1, r2, u0, u1, u2 = cam[3], cam[4], cam[5], cam[6], cam[7], cam[8], cam[9], cam[10], cam[11]
    rr = r0 * r0 + r1 * r1 + r2 * r2
    uu = u0 * u0 + u1 * u1 + u2 * u2
    foot = 2.0 * math.sqrt(uu) / h * sizes[0] / tile  # level-0 texels a pixel covers per metre of depth, face on
    tex_per_m = sizes[0] / tile
    m_per_tex = tile / sizes[0]
    nl = sizes.shape[0]
    top = sky.shape[0] - 1
    above = 1.0 if pz > ground_z else 0.0
    inv_height = 1.0 / min(ground_z - pz, -1e-9)
    dxn = 2.0 / w
    h0, h1, h2 = np.int64(haze[0]), np.int64(haze[1]), np.int64(haze[2])
    mean = mips[offs[nl - 1]]  # the last level's one texel: the texture's mean colour
    terrain = depth.shape[0] == h * w  # a raised ground, drawn by the renderer in the terrain key
    lit = meta.shape[0] > 0
    if lit:  # the light map's rectangle, m
        lx0, ly0 = meta[0, 3], meta[0, 4]
        lx1, ly1 = lx0 + meta[0, 1] * meta[0, 5], ly0 + meta[0, 2] * meta[0, 5]
    else:
        lx0 = ly0 = lx1 = ly1 = 0.0
    # each loop below first keeps what the renderer drew (a pixel not of the key colour): written
    # out in every loop, as a helper numba inlines it costs the pass ~15 %; the shadow and terrain
    # keys, rarer, are told apart only then
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
            nodes[2, k] = (px + t * (bx + nx * r0)) * tex_per_m
            nodes[3, k] = (py + t * (by + nx * r1)) * tex_per_m
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
                    if words[p] & mask != key:
                        c = words[p] & mask
                        if terrain and (c == terrain_key or c == shadow_key):
                            nx = (x + 0.5) * dxn - 1.0
                            _terrain(dst, y, x, depth[p], zn, zf, px, py, pz, bx + nx * r0, by + nx * r1,
                                     bz + nx * r2, q0 + nx * nx * rr, foot, mips, offs, sizes, shifts, mip2,
                                     tex_per_m, lm, meta, haze_half, c == shadow_key, shadow_v, h0, h1, h2)
                            continue
                        if c != shadow_key:  # drawn by the renderer: kept (a shadow cannot be in the sky)
                            i = 4 * p
                            dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                            fg = True
                            continue
                    _put(dst, y, x, sky[min((sa + ds * (x - xa)) >> 16, top)])
            elif ga == 1.0 and gb == 1.0:  # ground: the texel of the span's mip level, lit, hazed
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
                # world x, y (m) at the span's ends; the light map where the span meets its rectangle
                xa_m, ya_m = nodes[2, k] * m_per_tex, nodes[3, k] * m_per_tex
                xb_m, yb_m = nodes[2, k + 1] * m_per_tex, nodes[3, k + 1] * m_per_tex
                span_lit = lit and max(xa_m, xb_m) >= lx0 and min(xa_m, xb_m) <= lx1 and \
                    max(ya_m, yb_m) >= ly0 and min(ya_m, yb_m) <= ly1
                llev = _light_level(meta, min(nodes[5, k], nodes[5, k + 1]) * m_per_tex * m_per_tex) if span_lit else 0
                if abs(nodes[4, k + 1] - nodes[4, k]) > 0.05 * min(nodes[4, k], nodes[4, k + 1]):
                    # depth changes by > 5 % across the span (near the horizon of a banked view):
                    # texel coordinates perspective-correct, (x, y) / t and 1/t being linear along the row
                    pa, qa, ra = nodes[2, k] * nodes[4, k], nodes[3, k] * nodes[4, k], nodes[4, k]
                    dp = (nodes[2, k + 1] * nodes[4, k + 1] - pa) * inv
                    dq = (nodes[3, k + 1] * nodes[4, k + 1] - qa) * inv
                    dr = (nodes[4, k + 1] - ra) * inv
                    for x in range(xa, xb):
                        p = row + x
                        shadowed = False
                        if words[p] & mask != key:
                            c = words[p] & mask
                            if c == shadow_key and not terrain:
                                shadowed = True
                            elif terrain and (c == terrain_key or c == shadow_key):
                                nx = (x + 0.5) * dxn - 1.0
                                _terrain(dst, y, x, depth[p], zn, zf, px, py, pz, bx + nx * r0, by + nx * r1,
                                         bz + nx * r2, q0 + nx * nx * rr, foot, mips, offs, sizes, shifts, mip2,
                                         tex_per_m, lm, meta, haze_half, c == shadow_key, shadow_v, h0, h1, h2)
                                continue
                            else:  # drawn by the renderer: kept
                                i = 4 * p
                                dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                                fg = True
                                continue
                        j = x - xa
                        t = 1.0 / (ra + dr * j)
                        a = np.int64(256.0 / (1.0 + wa + dw * j))
                        tx, ty = (pa + dp * j) * t, (qa + dq * j) * t  # level-0 texels
                        tv = mips[base + ((np.int64(math.floor(ty * sc)) & m) << lg) + (np.int64(math.floor(tx * sc)) & m)]
                        lv = _light(lm, meta, llev, tx * m_per_tex, ty * m_per_tex) if span_lit else np.int64(128)
                        if shadowed:
                            lv = min(lv, shadow_v)
                        _put_lit(dst, y, x, tv, lv, a, h0, h1, h2)
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
                dxm, dym = (xb_m - xa_m) * inv, (yb_m - ya_m) * inv
                for x in range(xa, xb):
                    p = row + x
                    shadowed = False
                    if words[p] & mask != key:
                        c = words[p] & mask
                        if c == shadow_key and not terrain:
                            shadowed = True
                        elif terrain and (c == terrain_key or c == shadow_key):
                            nx = (x + 0.5) * dxn - 1.0
                            _terrain(dst, y, x, depth[p], zn, zf, px, py, pz, bx + nx * r0, by + nx * r1,
                                     bz + nx * r2, q0 + nx * nx * rr, foot, mips, offs, sizes, shifts, mip2,
                                     tex_per_m, lm, meta, haze_half, c == shadow_key, shadow_v, h0, h1, h2)
                            continue
                        else:  # drawn by the renderer: kept
                            i = 4 * p
                            dst[y, x, 0], dst[y, x, 1], dst[y, x, 2] = src[i], src[i + 1], src[i + 2]
                            fg = True
                            continue
                    j = x - xa
                    a = (ha + dh * j) >> 16  # haze t / (t + haze_half), 0..256
                    tv = mips[base + ((((va + dv * j) >> 16) & m) << lg) + (((ua + du * j) >> 16) & m)]
                    lv = _light(lm, meta, llev, xa_m + dxm * j, ya_m + dym * j) if span_lit else np.int64(128)
                    if shadowed:
                        lv = min(lv, shadow_v)
                    _put_lit(dst, y, x, tv, lv, a, h0, h1, h2)
            else:  # the horizon crosses the span: each pixel on its own (the ground here is far: its mean colour)
                for x in range(xa, xb):
                    p = row + x
                    shadowed = False
                    if words[p] & mask != key:
                        c = words[p] & mask
                        if c == shadow_key and not terrain:
                            shadowed = True
                        elif terrain and (c == terrain_key or c == shadow_key):
                            nx = (x + 0.5) * dxn - 1.0
                            _terrain(dst, y, x, depth[p], zn, zf, px, py, pz, bx + nx * r0, by + nx * r1,
                                     bz + nx * r2, q0 + nx * nx * rr, foot, mips, offs, sizes, shifts, mip2,
                                     tex_per_m, lm, meta, haze_half, c == shadow_key, shadow_v, h0, h1, h2)
                            continue
                        else:  # drawn by the renderer: kept
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
                        _put_lit(dst, y, x, mean, shadow_v if shadowed else np.int64(128), a, h0, h1, h2)
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
    distance where the ground is half haze, m; light_map : a ``ground.LightMap``
    (the slopes' light and the static shadows) or None.

    Besides the key colour the renderer may leave two more: ``SHADOW_KEY`` (a
    car's shadow: the ground there in shadow) and ``TERRAIN_KEY`` (the raised
    ground: each such pixel's point comes from the depth buffer).
    """

    def __init__(self, ground_z: float, tile: float, texture: np.ndarray, haze_half: float = HAZE_HALF,
                 light_map=None):
        from trackrider.render.ground import SHADOW

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
        self.shadow = int(round(128 * SHADOW))
        if light_map is None:
            self.light, self.light_meta = np.zeros(1, dtype=np.uint8), np.zeros((0, 7))
        else:
            self.light = light_map.data
            self.light_meta = np.column_stack([light_map.meta, 1.0 / light_map.meta[:, 5]])

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

    def compose(self, raw: np.ndarray, size, cam: np.ndarray, out: np.ndarray | None = None, depth=None,
                clip=(0.1, 1000.0)) -> tuple[np.ndarray, np.ndarray]:
        """``raw``: the frame as read back, RGBA, (h·w·4,) uint8, bottom row first
        (the alpha is not used); ``depth``: its depth buffer (h·w,) float32 0..1,
        bottom row first, needed where the renderer drew the raised ground, with
        the camera's ``clip`` (near, far) distances, m. Returns the frame (h, w, 3)
        uint8, top row first: what the renderer drew, and the sky and ground where
        it left a key colour; and (h, spans) bool: the spans of ``SPAN`` pixels
        that hold anything else (``antialias.antialias_where``)."""
        w, h = size
        if raw.size != 4 * w * h:
            raise ValueError(f"a {w}x{h} RGBA frame has {4 * w * h} bytes, got {raw.size}")
        if out is None:
            out = np.empty((h, w, 3), dtype=np.uint8)
        ns = (w + SPAN - 1) // SPAN
        nodes = np.empty((6, ns + 1))
        busy = np.empty((h, ns), dtype=np.bool_)
        raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
        depth = _NO_DEPTH if depth is None else np.ascontiguousarray(depth, dtype=np.float32).reshape(-1)
        _compose(raw, raw.view(np.uint32), out, _word(self.key), _MASK, cam, self.ground_z, self.tile, self.mips,
                 self.offs, self.sizes, self.sky, self.haze, self.haze_half, nodes, busy, MIP_TEXELS, self.shifts,
                 _word(SHADOW_KEY), _word(TERRAIN_KEY), self.shadow, self.light, self.light_meta, depth,
                 float(clip[0]), float(clip[1]))
        return out, busy


def _word(rgb) -> np.uint32:
    """A colour as the 32-bit word of a read-back pixel (its bytes laid out as the pixel's are,
    whatever the machine's byte order; compared under ``_MASK``)."""
    return np.array([*rgb, 0], dtype=np.uint8).view(np.uint32)[0]


_MASK = np.array([255, 255, 255, 0], dtype=np.uint8).view(np.uint32)[0]
_NO_DEPTH = np.zeros(1, dtype=np.float32)
