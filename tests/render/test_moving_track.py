"""A track carried by a body is drawn where its body is, frame by frame
(docs/rendering.md, "Track"): scenarios/drop_track.toml seen from the side
by a fixed camera, before the drop and after the piece has fallen onto its
buffer. The steel track's teal rails, spine and ties must be at the height
the body's recorded pose puts them, and nothing of them left where the piece
started — which is where a track drawn with the fixed structure stays."""
from __future__ import annotations

import numpy as np
import pytest

from tests.render.views import count, fixed_view, ride
from trackrider.render.video import prepare_frames

pytestmark = pytest.mark.render

SIZE = (480, 270)


def _teal_pixels(t: float) -> tuple[int, int, float]:
    """(teal pixels of the frame at ride time ``t`` in the band where the track
    started (its curve at 30 m: its rails and spine lie up to 1 m under it), over
    the piece's length; those in the band where the carrying body's recorded
    pose at ``t`` puts it; that body's drop at ``t``, m). The cars are hidden
    (blue like the track's teal); the camera is fixed, 45 m to the side of the
    piece, level."""
    rec, spec = ride("drop_track")
    pr = prepare_frames(rec, spec, np.array([t]), "overview", SIZE, 30.0, 1.0, "draft", hud=False)
    try:
        img, project = fixed_view(pr, rec.labels, {"car"}, (10.0, -45.0, 27.5), (10.0, 0.0, 27.5))
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        teal = (g > r + 30) & (b > r + 40)
        drop = float(pr.positions[pr.pad][rec.labels.index(("drop", 1))][2] - spec.bodies[0].position[2])
        counts = [count(teal, project, (3.0, 0.0, z - 1.0), (17.0, 0.0, z + 0.2)) for z in (30.0, 30.0 + drop)]
    finally:
        pr.scene.close()
    return counts[0], counts[1], drop


def test_the_drop_track_is_drawn_where_its_body_is_before_and_after_the_drop():
    start_before, _same, drop_before = _teal_pixels(1.0)
    assert abs(drop_before) < 1e-3  # held at the top
    assert start_before > 200, start_before
    # after the fall: the piece rests on its buffer (4 m + the buffer's 0.64 m)
    at_start, at_body, drop = _teal_pixels(8.5)
    assert -4.8 < drop < -4.5, drop
    assert at_body > 0.8 * start_before, (at_body, start_before)
    assert at_start == 0, at_start  # nothing of it left where it was
