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
    positions, m; ``carried`` (per track: the name of the body that carries it,
    or None). A carried track's structure (in ``tracks``, world coordinates
    where it starts) is not part of ``structure()``: it moves with its body
    (``carried_model``)."""

    layouts: list
    tracks: list
    supports: list
    beds: list
    ground: Ground
    inverts: list
    bounds: np.ndarray
    simple: bool = False
    extra: list = field(default_factory=list)
    carried: list = field(default_factory=list)

    @property
    def z_ground(self) -> float:
        return self.ground.z0

    def structure(self) -> geo.Quads:
        """Everything static, merged: tracks, supports, beds."""
        # (the simple scene of earlier versions draws every track fixed)
        fixed = [q for k, q in enumerate(self.tracks) if self.simple or self.carried[k] is None]
        return geo.Quads.merge(fixed + [s.quads for s in self.supports] + list(self.beds) + list(self.extra))


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
    carried = [tr.body if spec.carried(k) else None for k, tr in enumerate(spec.tracks)]
    tracks, z_low = [], []
    for k, tr in enumerate(spec.tracks):
        if simple:
            q, zl = geo.track_structure(tr.geometry, layouts[k])
        else:  # a railway track on a body: rails on sleepers on its deck, no ballast
            q, zl = geo.styled_track(tr.geometry, layouts[k], ballast=carried[k] is None)
        tracks.append(q)
        z_low.append(zl)
    extra_bounds = np.asarray(extra_bounds, dtype=float)
    pts = [q.points for q in tracks if len(q.points)] + [extra_bounds]
    allp = np.concatenate(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    z_ground = min(min(z_low) if z_low else lo[2], float(extra_bounds[0][2]) - 0.5) - 0.3
    supports, beds, extra = [], [], []
    fixed = [k for k in range(len(spec.tracks)) if carried[k] is None]
    if simple:
        ground = Ground(z_ground)
        extra = [geo.supports(spec.tracks[k].geometry, layouts[k], z_ground) for k in fixed]
    else:
        geoms = [t.geometry for t in spec.tracks]
        ground = railway_terrain([geoms[k] for k in fixed], [layouts[k] for k in fixed], z_ground)
        if spec.tracks:
            supports = geo.support_plan(geoms, layouts, ground, carried={k for k, b in enumerate(carried) if b})
            beds = [geo.railway_bed(geoms[k], layouts[k], ground) for k in fixed if layouts[k].style == "railway"]
    hi = np.maximum(hi, [hi[0], hi[1], ground.top])
    bounds = np.array([[lo[0], lo[1], z_ground], hi])
    return StaticScene(layouts, tracks, supports, beds, ground, inverts, bounds, simple, extra, carried)


def carried_model(static: StaticScene, body) -> geo.Quads | None:
    """What a body that carries tracks is drawn as, in its own axes (m): the
    tracks it carries (their structure where they start, taken into the body's
    axes by its pose at the start) on a deck — a box of the body's length and
    width and its depth, its top where the body's box has it or, where the
    tracks' structure would sit inside the box, just under that structure.
    None when it carries no track (it is drawn as its box)."""
    from trackrider.render.recording import quat_to_matrix

    ks = [k for k, name in enumerate(static.carried) if name == body.name and len(static.tracks[k].points)]
    if not ks:
        return None
    r0 = quat_to_matrix(np.asarray(body.orientation, dtype=float))
    p0 = np.asarray(body.position, dtype=float)
    # world -> body axes: x_b = R0ᵀ (x − p0)
    tracks = [geo.transformed(static.tracks[k], r0.T, -r0.T @ p0) for k in ks]
    l, w, h = (float(v) for v in body.size)
    top = min(0.5 * h, min(float(q.points[:, 2].min()) for q in tracks))
    deck = geo.box((0.0, 0.0, top - 0.5 * h), (l, w, h), geo.DECK_COLOUR)
    return geo.Quads.merge(tracks + [deck])
