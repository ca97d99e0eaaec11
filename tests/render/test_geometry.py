"""Static structure: rails at ±gauge/2 along N_w under the curve, ties, supports, ground."""
from __future__ import annotations

import numpy as np

from trackrider.render import geometry as geo
from trackrider.render.synthetic import StraightTrack


def test_rails_sit_at_half_gauge_under_the_curve():
    layout = geo.TrackLayout(gauge=1.435, rail_depth=0.4, rail_radius=0.05, rail_sides=8, tie_spacing=1.0)
    rails = geo.tube(centres=np.zeros((2, 3)), side=np.tile([0, 1.0, 0], (2, 1)),
                     up=np.tile([0, 0, 1.0], (2, 1)), radius=0.05, sides=8, colour=geo.RAIL_COLOUR)
    assert rails.quads.shape == (8, 4)
    q, z_low = geo.track_structure(StraightTrack(), layout)
    is_rail = np.all(q.colours == geo.RAIL_COLOUR, axis=1)
    rail_pts = q.points[np.unique(q.quads[is_rail])]
    # every rail vertex is one radius from its rail's axis, at y = ±gauge/2, z = z0 − depth − r
    for side in (+1, -1):
        pts = rail_pts[np.sign(rail_pts[:, 1]) == side]
        d = np.hypot(pts[:, 1] - side * 1.435 / 2, pts[:, 2] - (5.0 - 0.4 - 0.05))
        np.testing.assert_allclose(d, 0.05, atol=1e-9)
    ties = np.all(q.colours == geo.TIE_COLOUR, axis=1).sum() // 6
    assert ties == 20  # 20 m of track, one tie per metre
    assert z_low < 5.0 - 0.4 - 0.1


def test_supports_reach_the_ground_and_only_where_upright():
    layout = geo.TrackLayout(support_spacing=5.0)
    q = geo.supports(StraightTrack(20.0, z0=8.0), layout, z_ground=0.0)
    assert len(q.quads) == 4 * 5  # four columns, no bottom faces
    assert q.points[:, 2].min() == 0.0
    assert q.points[:, 2].max() < 8.0 - layout.rail_depth
    # too low: no columns
    assert len(geo.supports(StraightTrack(20.0, z0=0.2), layout, z_ground=0.0).quads) == 0


def test_ground_is_a_checkerboard_covering_the_box():
    q = geo.ground(-50, 50, -20, 20, z=-1.0, cell=10.0)
    assert len(q.quads) == 10 * 4
    assert np.all(q.points[:, 2] == -1.0)
    assert q.points[:, 0].min() == -50 and q.points[:, 1].max() == 20
    assert len(np.unique(q.colours, axis=0)) == 2
