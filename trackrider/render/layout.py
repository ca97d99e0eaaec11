"""The static scene of a ride as plain arrays: each track's drawing style and
dimensions, its structure (rails, spine, ties or sleepers and ballast), the
ground that carries it, the supports and railway beds down to that ground.
Shared by the renderer (``scene.RideScene``), the chase camera (what it must
keep clear of and see past) and the tests. No VTK here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trackrider.render import geometry as geo
from trackrider.render.ground import Ground, railway_terrain


def build_layouts(spec, quality) -> list:
    """The ``StyledLayout`` of every track (a ``TrackLayout`` for the simple scene)."""
    out = []
    for k, tr in enumerate(spec.tracks):
        on = [t for t in spec.trains if t.track_index == k]
        style = spec.track_style(k)
        width = max([t.width for t in on], default=1.2)
        hang = max([t.hang + 0.5 * t.height for t in on if t.suspended], default=0.0)
        rr = float(np.clip(0.07 * tr.gauge, 0.03, 0.1))
        if getattr(quality, "simple", False):
            lay = geo.TrackLayout(gauge=tr.gauge, rail_depth=spec.rail_depth(k), rail_radius=rr,
                                  rail_sides=quality.rail_sides, sample_spacing=quality.sample_spacing,
                                  tie_spacing=quality.tie_spacing)
        else:
            lay = geo.StyledLayout(style=style, gauge=tr.gauge, rail_depth=spec.rail_depth(k), rail_radius=rr,
                                   rail_sides=max(quality.rail_sides, 6), sample_spacing=quality.sample_spacing,
                                   tie_spacing=max(1.6, quality.tie_spacing),
                                   support_spacing=20.0 if style == "railway" else 12.0,
                                   clearance=0.5 * width + 0.6 + (hang if style == "hanging" else 0.0),
                                   hang_depth=hang + 0.5)
        out.append(lay)
    return out


@dataclass
class StaticScene:
    """What never moves: ``layouts`` (one per track), ``tracks`` (each track's
    structure, ``Quads``), ``supports`` (``geometry.Support``), ``beds`` (railway
    embankments and decks), ``ground`` (``ground.Ground``: the plain at
    ``z_ground`` and any terrain), ``inverts`` (per track: does it turn riders
    upside down), ``bounds`` (2, 3) the box of the layout and the recorded
    positions, m."""

    layouts: list
    tracks: list
    supports: list
    beds: list
    ground: Ground
    inverts: list
    bounds: np.ndarray
    simple: bool = False
    extra: list = field(default_factory=list)

    @property
    def z_ground(self) -> float:
        return self.ground.z0

    def structure(self) -> geo.Quads:
        """Everything static, merged: tracks, supports, beds."""
        return geo.Quads.merge(list(self.tracks) + [s.quads for s in self.supports] + list(self.beds)
                               + list(self.extra))


def static_scene(spec, quality, extra_bounds) -> StaticScene:
    """The static scene of ``spec`` (a ``SceneSpec``) drawn at ``quality``;
    ``extra_bounds`` (2, 3): a box the ground must also be under (the recorded
    positions), m. The plain is 0.3 m under the lowest structure and 0.8 m under
    the lowest recorded position."""
    simple = bool(getattr(quality, "simple", False))
    layouts = build_layouts(spec, quality)
    # riders of tracks that turn them upside down get shoulder restraints, others lap bars
    inverts = [bool(np.any(np.asarray(t.geometry.frames(np.linspace(0, float(t.geometry.length), 400)).binormal)[:, 2]
                           < -0.2)) for t in spec.tracks]
    tracks, z_low = [], []
    for k, tr in enumerate(spec.tracks):
        q, zl = (geo.track_structure if simple else geo.styled_track)(tr.geometry, layouts[k])
        tracks.append(q)
        z_low.append(zl)
    extra_bounds = np.asarray(extra_bounds, dtype=float)
    pts = [q.points for q in tracks if len(q.points)] + [extra_bounds]
    allp = np.concatenate(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    z_ground = min(min(z_low) if z_low else lo[2], float(extra_bounds[0][2]) - 0.5) - 0.3
    supports, beds, extra = [], [], []
    if simple:
        ground = Ground(z_ground)
        extra = [geo.supports(tr.geometry, lay, z_ground) for tr, lay in zip(spec.tracks, layouts)]
    else:
        geoms = [t.geometry for t in spec.tracks]
        ground = railway_terrain(geoms, layouts, z_ground)
        if spec.tracks:
            supports = geo.support_plan(geoms, layouts, ground)
            beds = [geo.railway_bed(g, lay, ground) for g, lay in zip(geoms, layouts) if lay.style == "railway"]
    hi = np.maximum(hi, [hi[0], hi[1], ground.top])
    bounds = np.array([[lo[0], lo[1], z_ground], hi])
    return StaticScene(layouts, tracks, supports, beds, ground, inverts, bounds, simple, extra)
