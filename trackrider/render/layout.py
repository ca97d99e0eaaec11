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
        on = spec.trains_on(k)
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
        fixed = [q for k, q in enumerate(self.tracks) if self.simple or not self.carried or self.carried[k] is None]
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


#: the set route through a switch is drawn from the switch point to where its branch is this far
#: (m, beyond the gauge) from every other branch (the turnout's frog), within these lengths, m
ROUTE_APART = 0.3
ROUTE_LENGTH = (3.0, 60.0)
BLADE_COLOUR = (236, 236, 226)   # polished: the blades set for the route shine
LAMP_SET = (40, 220, 70)          # the switch stand's lamp: green while set,
LAMP_MOVING = (235, 40, 30)       # red while the points move (closed to traffic)


@dataclass
class SwitchParts:
    """The drawing of one switch: ``blades`` (per branch: its two rails from the
    switch point to the frog, bright, drawn while that branch is set), ``stand``
    (a post beside the switch point, part of the static structure) and
    ``lamps`` (the stand's lamp lit green, red)."""

    blades: list
    stand: geo.Quads
    lamps: tuple


def _branch_samples(sw, branch, geometry, reach: float) -> np.ndarray:
    """Arc lengths along a branch track from the switch point out to ``reach`` m, every 0.25 m."""
    k, end = branch
    length = float(geometry.length)
    reach = min(reach, length)
    if k == sw.track and not isinstance(sw.at, str):   # the through track past a switch along it
        s0 = float(sw.at)
        return np.linspace(s0, min(s0 + reach, length), max(int(reach / 0.25) + 1, 2))
    ss = np.linspace(0.0, reach, max(int(reach / 0.25) + 1, 2))
    return length - ss if end == "end" else ss


def _route_length(spec, sw, j: int) -> float:
    """How far along branch ``j`` of ``sw`` its set route is drawn: until it is ``ROUTE_APART``
    beyond the gauge from every other branch (within ``ROUTE_LENGTH``)."""
    lo, hi = ROUTE_LENGTH
    lines = [np.asarray(spec.tracks[b[0]].geometry.frames(_branch_samples(sw, b, spec.tracks[b[0]].geometry, hi))
                        .position, dtype=float) for b in sw.branches]
    mine = lines[j]
    gap = spec.tracks[sw.branches[j][0]].gauge + ROUTE_APART
    d = np.full(len(mine), np.inf)
    for i, other in enumerate(lines):
        if i != j:
            d = np.minimum(d, np.min(np.linalg.norm(mine[:, None, :] - other[None, ::4, :], axis=2), axis=1))
    apart = np.flatnonzero(d > gap)
    reach = 0.25 * (apart[0] if len(apart) else len(mine) - 1)
    return float(np.clip(reach, lo, hi))


def switch_parts(spec, static: StaticScene) -> list[SwitchParts]:
    """The blades, stand and lamps of every switch of ``spec`` (docs/rendering.md, "Switches")."""
    out = []
    for sw in spec.switches:
        lay0 = static.layouts[sw.track]
        geom = spec.tracks[sw.track].geometry
        length = float(geom.length)
        s_at = {"start": 0.0, "end": length}.get(sw.at, None) if isinstance(sw.at, str) else float(sw.at)
        P, _T, N, B = geo._frames(geom, np.array([s_at]))
        point = P[0]
        blades = []
        away = np.zeros(3)
        for j, branch in enumerate(sw.branches):
            k = branch[0]
            lay = static.layouts[k]
            g = spec.tracks[k].geometry
            ss = np.sort(_branch_samples(sw, branch, g, _route_length(spec, sw, j)))
            Pb, _Tb, Nb, Bb = geo._frames(g, ss)
            r = lay.rail_radius
            off = lay.rail_up if getattr(lay, "style", "") == "hanging" else -(lay.rail_depth + r)
            parts = [geo.tube(Pb + side * 0.5 * lay.gauge * Nb + off * Bb, Nb, Bb, 1.3 * r, 8, BLADE_COLOUR)
                     for side in (1.0, -1.0)]
            blades.append(geo.Quads.merge(parts))
            away += (Pb[0] if branch[1] == "end" and not (k == sw.track and not isinstance(sw.at, str))
                     else Pb[-1]) - point
        # the stand on the side the branches do not turn to
        side = -1.0 if float(np.dot(away, N[0])) > 0 else 1.0
        foot = point + side * (0.5 * lay0.gauge + 1.6) * N[0] - (lay0.rail_depth + 0.3) * B[0]
        top = foot + np.array([0.0, 0.0, 1.4])
        stand = geo.Quads.merge([geo.cylinder(foot, top, 0.06, (60, 60, 64), sides=8),
                                 geo.box(top - np.array([0.0, 0.0, 0.12]), (0.3, 0.3, 0.3), (45, 45, 50))])
        lamp = top + np.array([0.0, 0.0, 0.22])
        lamps = (geo.sphere(lamp, 0.2, LAMP_SET), geo.sphere(lamp, 0.2, LAMP_MOVING))
        out.append(SwitchParts(blades, stand, lamps))
    return out
