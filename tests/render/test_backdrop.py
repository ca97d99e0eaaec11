"""The sky and ground drawn into the frame (backdrop), anti-aliasing only near
what is not backdrop, the railway's embankment and viaduct."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trackrider.render import geometry as geo
from trackrider.render.antialias import antialias, antialias_where
from trackrider.render.backdrop import KEY, SPAN, Backdrop, sky_table
from trackrider.render.synthetic import StraightTrack


def _frame(w, h, fill=KEY):
    """A frame as read back: RGBA, bottom row first, every pixel ``fill`` (alpha 0: cleared)."""
    return np.tile(np.asarray((*fill, 0), dtype=np.uint8), w * h)


def test_level_camera_sees_sky_above_the_horizon_and_ground_below():
    """A level camera 10 m up: the horizon is the middle row; above it the sky
    gradient (the table's colour at each row's elevation), below it the ground,
    hazed more towards the horizon. Pixels not of the key colour are kept."""
    w, h = 64, 48
    b = Backdrop(0.0, 24.0, geo.grass_texture(32))
    cam = b.camera_vector((0.0, 0.0, 10.0), (1.0, 0.0, 10.0), (0.0, 0.0, 1.0), 40.0, w / h)
    raw = _frame(w, h)
    raw[:4] = (200, 10, 10, 255)  # bottom-left pixel (OpenGL's first) is geometry
    img, busy = b.compose(raw, (w, h), cam)
    assert tuple(img[h - 1, 0]) == (200, 10, 10) and busy[h - 1, 0] and not busy[0].any()
    table = np.rint(sky_table()).astype(int)
    th = math.tan(math.radians(20.0))
    for y in (0, 10, h // 2 - 2):  # sky rows: elevation of the ray through the middle column's pixel
        ny = 1.0 - 2.0 * (y + 0.5) / h
        s = ny * th / math.sqrt(1.0 + (ny * th) ** 2)
        np.testing.assert_allclose(img[y, w // 2], table[int(s * (len(table) - 1))], atol=2)
    sky_blue = img[: h // 2, :, 2].astype(int) - img[: h // 2, :, 1].astype(int)
    assert np.all(sky_blue > 0)  # sky: bluer than green
    ground = img[h // 2 + 1:].astype(int)
    assert np.all(ground[..., 1] >= ground[..., 2])  # grass: greener than blue
    # haze: the row under the horizon is closer to the horizon's sky colour than the bottom row
    bottom = np.asarray(geo.SKY_BOTTOM)
    assert np.abs(ground[0] - bottom).mean() < np.abs(ground[-1] - bottom).mean()


def test_compose_keeps_every_drawn_pixel_and_marks_its_span():
    """Pixels not of the key colour (also those that differ from it in one channel only)
    come out unchanged, turned the right way up; the alpha read back is not looked at; a
    span is marked busy exactly when it holds such a pixel."""
    w, h = 100, 30  # a last span narrower than SPAN
    b = Backdrop(0.0, 24.0, geo.grass_texture(32))
    for eye_z, pitch in ((10.0, 0.0), (10.0, -6.0), (-2.0, 0.0)):  # sky and ground, looking down, below the ground
        cam = b.camera_vector((0.0, 0.0, eye_z), (1.0, 0.0, eye_z + pitch), (0.0, 0.0, 1.0), 50.0, w / h)
        raw = _frame(w, h).reshape(h, w, 4)  # bottom row first
        rng = np.random.default_rng(5)
        drawn = np.zeros((h, w), dtype=bool)
        for y, x in rng.integers(0, (h, w), (60, 2)):
            colour = rng.integers(0, 256, 3)
            colour[rng.integers(0, 3)] = KEY[0] if rng.random() < 0.5 else colour[0]
            if tuple(colour) == KEY:
                continue
            raw[y, x] = (*colour, 255)
            drawn[y, x] = True
        raw[0, 5] = (*KEY, 255)  # the key colour drawn opaque is still background
        img, busy = b.compose(raw.reshape(-1), (w, h), cam)
        top_first = raw[::-1, :, :3]
        np.testing.assert_array_equal(img[drawn[::-1]], top_first[drawn[::-1]])
        spans = np.add.reduceat(drawn[::-1], np.arange(0, w, SPAN), axis=1) > 0
        np.testing.assert_array_equal(busy, spans)
    with pytest.raises(ValueError):
        b.compose(_frame(w, h)[:-4], (w, h), cam)


def test_antialias_where_matches_antialias_near_marked_spans():
    rng = np.random.default_rng(3)
    img = np.full((40, 96, 3), 120, dtype=np.uint8)
    img[10:30, 20:60] = rng.integers(0, 255, (20, 40, 3))  # "geometry": full of edges
    busy = np.zeros((40, 96 // SPAN), dtype=bool)
    busy[10:30, 20 // SPAN: 60 // SPAN + 1] = True
    full, part = antialias(img), antialias_where(img, busy, SPAN)
    np.testing.assert_array_equal(part[1:-1], full[1:-1])
    busy[:] = False
    np.testing.assert_array_equal(antialias_where(img, busy, SPAN), img)  # nothing marked: a copy
    # geometry ending at a span's last column and marked exactly where it is: the plain pixels
    # beside it (the next span's first column, the rows above and below) are smoothed too
    img = np.full((40, 96, 3), 120, dtype=np.uint8)
    img[10:30, 20:2 * SPAN] = rng.integers(0, 255, (20, 2 * SPAN - 20, 3))
    busy[:] = False
    busy[10:30, :2] = True
    full, part = antialias(img), antialias_where(img, busy, SPAN)
    assert np.any(full[10:30, 2 * SPAN] != img[10:30, 2 * SPAN]) and np.any(full[9, 20:2 * SPAN] != img[9, 20:2 * SPAN])
    np.testing.assert_array_equal(part[1:-1], full[1:-1])


def test_railway_runs_on_an_embankment_low_and_a_deck_on_piers_high():
    lay = geo.StyledLayout(style="railway", gauge=1.435, rail_depth=0.2, rail_radius=0.05, support_spacing=20.0,
                           clearance=2.1)
    for z0, bank in ((3.0, True), (20.0, False)):
        track = StraightTrack(length=100.0, z0=z0)
        bed = geo.railway_bed(track, lay, 0.0)
        colours = {tuple(c) for c in bed.colours}
        assert (geo.EMBANKMENT_COLOUR in colours) == bank and (geo.DECK_COLOUR in colours) == (not bank)
        assert bed.points[:, 2].min() == (0.0 if bank else bed.points[:, 2].min())
        piers = geo.supports_styled([track], [lay], 0.0)
        assert (len(piers.quads) > 0) == (not bank)
        if not bank:  # the piers stand on the ground and reach 5 cm into the deck's underside (a level deck)
            top_d, hb, _wt, _wb = geo._ballast(lay)
            assert piers.points[:, 2].min() == 0.0
            assert piers.points[:, 2].max() == pytest.approx(z0 - top_d - hb - geo.DECK_DEPTH + 0.05)
