"""Shadows and the ground: the light map (the static structure's shadows cast
along the sun's rays, the slopes' light), cars' shadows drawn in the shadow
key, the raised ground where a railway climbs, drawn from the depth buffer."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trackrider.render import geometry as geo
from trackrider.render.backdrop import KEY, SHADOW_KEY, TERRAIN_KEY, Backdrop
from trackrider.render.ground import BED_SINK, ONE, SHADOW, SUN, Ground, light_map, railway_terrain
from trackrider.render.synthetic import StraightTrack


def test_shadow_strength_is_the_sun_taken_away():
    """In a shadow only the ambient and the fill light are left: the ratio of the two shades."""
    lit = geo.AMBIENT + sum(geo.DIFFUSE * i * np.asarray(d)[2] / np.linalg.norm(d) for d, i in geo.LIGHTS)
    (d1, i1) = geo.LIGHTS[1]
    fill = geo.AMBIENT + geo.DIFFUSE * i1 * d1[2] / np.linalg.norm(d1)
    assert SHADOW == pytest.approx(fill / lit, rel=1e-12)
    assert 0.3 < SHADOW < 0.7


def test_a_beams_shadow_falls_where_the_sun_casts_it():
    """A 10 m beam 0.4 m square, 8 m above the plain: its shadow on the light map is
    a strip offset by −8/sin(elevation) along the sun's horizontal direction, as
    wide as the beam's silhouette; the ground elsewhere is the lit plain."""
    beam = geo.beam((0.0, 0.0, 8.0), (10.0, 0.0, 8.0), 0.4, 0.4, (200, 200, 200))
    lm = light_map(Ground(0.0), beam)
    shift = -8.0 / SUN[2] * SUN[:2]  # the beam's axis cast on the ground
    xs = np.linspace(1.0, 9.0, 9)
    at = lm.at(xs + shift[0], np.full_like(xs, shift[1]))
    assert np.all(at == round(ONE * SHADOW))
    # well outside the strip: lit
    assert np.all(lm.at(xs + shift[0], np.full_like(xs, shift[1] + 1.5)) == ONE)
    assert np.all(lm.at(xs, np.zeros_like(xs)) == ONE)  # right under the beam: the sun is not overhead
    # the strip's width across y: the silhouette of the square (its diagonal extent seen along the sun)
    ys = shift[1] + np.linspace(-1.0, 1.0, 2001)
    dark = lm.at(np.full_like(ys, 5.0 + shift[0]), ys) < ONE
    width = dark.sum() * (ys[1] - ys[0])
    sil = 0.4 + 0.4 * abs(SUN[1]) / SUN[2]  # a square beam along x: its top and side, cast
    assert width == pytest.approx(sil, abs=2 * lm.cell)


def test_the_backdrop_darkens_the_ground_under_a_cars_shadow():
    """The same frame with the shadow key where the key was: those pixels are the
    lit ground times the shadow's strength; the others are unchanged."""
    w, h = 96, 54
    b = Backdrop(0.0, 24.0, geo.grass_texture(32))
    cam = b.camera_vector((0.0, 0.0, 10.0), (30.0, 0.0, 0.0), (0.0, 0.0, 1.0), 50.0, w / h)
    raw = np.tile(np.asarray((*KEY, 0), dtype=np.uint8), w * h)
    lit, _ = b.compose(raw.copy(), (w, h), cam)
    shadowed = raw.reshape(h, w, 4).copy()
    shadowed[: h // 3, 40:60, :3] = SHADOW_KEY  # bottom rows (OpenGL order): the ground near the camera
    dark, busy = b.compose(shadowed.reshape(-1), (w, h), cam)
    rows = slice(h - h // 3, h)
    ratio = dark[rows, 40:60].astype(float) / lit[rows, 40:60].astype(float)
    # hazed a little towards the sky: the ground's part is darkened by SHADOW
    assert np.median(ratio) == pytest.approx(SHADOW, abs=0.05)
    np.testing.assert_array_equal(np.delete(dark, np.s_[40:60], axis=1), np.delete(lit, np.s_[40:60], axis=1))
    assert not busy.any()  # a shadow is ground: no anti-aliasing needed there


def test_raised_ground_from_the_depth_buffer_matches_the_plain():
    """Pixels drawn in the terrain key, their depths those of the plain itself,
    come out as the plain the backdrop draws (the same grass, light and haze)."""
    w, h = 128, 72
    zn, zf = 0.2, 2000.0
    b = Backdrop(0.0, 24.0, geo.grass_texture(64))
    cam = b.camera_vector((3.0, -2.0, 12.0), (40.0, 5.0, 0.0), (0.0, 0.0, 1.0), 50.0, w / h)
    plain, _ = b.compose(np.tile(np.asarray((*KEY, 0), dtype=np.uint8), w * h), (w, h), cam)
    # the depth buffer of the plane z = 0: t along the view direction, as OpenGL stores it
    f, r, u = cam[3:6], cam[6:9], cam[9:12]
    ys = 1.0 - 2.0 * (np.arange(h)[::-1] + 0.5) / h  # OpenGL rows: bottom first
    xs = (np.arange(w) + 0.5) * 2.0 / w - 1.0
    d = f[None, None] + xs[None, :, None] * r + ys[:, None, None] * u
    t = (0.0 - cam[2]) / d[..., 2]
    ground = d[..., 2] < 0
    depth = np.where(ground, (1.0 / zn - 1.0 / np.where(ground, t, 1.0)) / (1.0 / zn - 1.0 / zf), 1.0)
    raw = np.tile(np.asarray((*KEY, 0), dtype=np.uint8), w * h).reshape(h, w, 4)
    raw[ground, :3] = TERRAIN_KEY
    img, _ = b.compose(raw.reshape(-1), (w, h), cam, depth=depth.astype(np.float32).reshape(-1), clip=(zn, zf))
    rows = ground[::-1]  # top row first
    diff = np.abs(img.astype(int) - plain.astype(int)).max(axis=-1)[rows]
    # the same texel, but for rounding, and a pixel's own mip level where the plain takes its span's
    assert np.mean(diff <= 3) > 0.95 and diff.mean() < 1.5
    np.testing.assert_array_equal(img[~rows], plain[~rows])  # the sky untouched


class _Ramp(StraightTrack):
    """A straight up a grade of ``angle`` degrees from (0, 0, 0) along +x."""

    def __init__(self, length=150.0, angle=20.0, y=0.0):
        super().__init__(length, 0.0)
        self.a, self.y = math.radians(angle), y

    def frames(self, s):
        f = super().frames(s)
        s = np.atleast_1d(np.asarray(s, dtype=float))
        f.position = np.column_stack([s * np.cos(self.a), np.full(len(s), self.y), s * np.sin(self.a)])
        f.tangent = np.tile([np.cos(self.a), 0.0, np.sin(self.a)], (len(s), 1))
        f.binormal = np.tile([-np.sin(self.a), 0.0, np.cos(self.a)], (len(s), 1))
        return f


def test_the_ground_carries_a_railway_up_its_grade():
    lay = geo.StyledLayout(style="railway", gauge=1.0, rail_depth=0.2, rail_radius=0.07)
    track = _Ramp()
    z0 = -1.5
    ground = railway_terrain([track], [lay], z0)
    assert not ground.flat
    s = np.linspace(0.0, 150.0, 151)
    f = track.frames(s)
    top_d, hb, _wt, wb = geo._ballast(lay)
    bottom = (f.position - (top_d + hb) * f.binormal)[:, 2]
    under = ground.height(f.position[:, 0], f.position[:, 1])
    # under the ballast: the ground just under its bottom (BED_SINK), never above it (at the ends,
    # where the line stops, within a terrain cell's interpolation)
    inner = slice(5, -5)
    np.testing.assert_allclose((bottom - under)[inner], BED_SINK, atol=0.02)
    assert np.all(under <= bottom + 0.15)
    # it falls away from the line no steeper than its side slope (twice the grade, at most 0.35)
    x = 100.0 * np.cos(track.a)
    side = ground.height(np.full(50, x), np.linspace(0.0, 80.0, 50))
    drop = -np.diff(side) / np.diff(np.linspace(0.0, 80.0, 50))
    assert drop.max() <= 0.35 + 0.05 and side[-1] < side[0] - 10.0
    assert np.all(side >= z0 - 1e-9)
    # the edge of the raised ground is the plain
    ny, nx = ground.heights.shape
    assert np.all(ground.heights[0] == z0) and np.all(ground.heights[:, -1] == z0)
    # a coaster track crossing 3 m above the ramp's ground: the ground stays 2 m under its structure
    crossing = StraightTrack(60.0, z0=float(ground.height(x, 0.0)) + 3.0)
    steel = geo.StyledLayout(style="steel")

    class Across:
        closed, length = False, 60.0

        def frames(self, s):
            f = crossing.frames(s)
            f.position = f.position[:, [1, 0, 2]] + np.array([x, -30.0, 0.0])
            f.tangent = np.tile([0.0, 1.0, 0.0], (len(f.position), 1))
            f.normal = np.tile([-1.0, 0.0, 0.0], (len(f.position), 1))
            return f

    both = railway_terrain([track, Across()], [lay, steel], z0)
    assert both.height(x, 0.0) <= crossing.z0 - 2.0 - 1.5 + 1e-6


def test_the_sun_casts_a_point_onto_the_raised_ground():
    lay = geo.StyledLayout(style="railway", gauge=1.0, rail_depth=0.2, rail_radius=0.07)
    ground = railway_terrain([_Ramp()], [lay], 0.0)
    pts = np.array([[60.0, 3.0, 40.0], [120.0, -20.0, 60.0], [5.0, 50.0, 3.0]])
    q = ground.cast(pts)
    np.testing.assert_allclose(q[:, 2], ground.height(q[:, 0], q[:, 1]), atol=1e-6)
    along = (pts - q) / np.linalg.norm(pts - q, axis=1, keepdims=True)
    np.testing.assert_allclose(along, np.tile(SUN, (3, 1)), atol=1e-9)
