"""The static scene as plain arrays: rails, cross-ties, support columns and a
ground plane, merged into one set of quads with a colour per quad (so the
renderer draws all of it with a single actor). No VTK here.

Track frame (docs/curves.md): ``tangent`` T, ``normal`` N_w (the rider's left),
``binormal`` B_w (up). The two rails run at ``±gauge/2`` along N_w and sit under
the track curve by ``rail_depth`` along −B_w, so that a car's box (centred on its
centre of mass, ``cg_height`` above the curve) rests on them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# colours, RGB 0..255 (rails: a saturated yellow, unlike any train colour)
RAIL_COLOUR = (250, 200, 20)
TIE_COLOUR = (70, 70, 75)
SUPPORT_COLOUR = (225, 225, 220)
GROUND_COLOURS = ((96, 140, 72), (106, 150, 80))
GROUND_CELL = 10.0  # m, side of a ground square
SKY_BOTTOM = (205, 225, 242)
SKY_TOP = (70, 130, 205)
SKY_MID = (135, 175, 225)  # a plain sky, when the gradient is off
#: directional lights fixed in the world: (direction towards the light, intensity)
LIGHTS = (((0.4, -0.6, 1.0), 0.85), ((-0.5, 0.6, 0.3), 0.3))
AMBIENT, DIFFUSE = 0.35, 0.7


@dataclass
class Quads:
    """Points (n, 3) float, quads (m, 4) int, colours (m, 3) uint8 and outward
    unit normals (m, 3) of the quads (for lighting baked into the colours)."""

    points: np.ndarray
    quads: np.ndarray
    colours: np.ndarray
    normals: np.ndarray

    @staticmethod
    def merge(parts: list["Quads"]) -> "Quads":
        parts = [p for p in parts if len(p.quads)]
        if not parts:
            return _empty()
        offsets = np.cumsum([0] + [len(p.points) for p in parts[:-1]])
        return Quads(
            np.concatenate([p.points for p in parts]),
            np.concatenate([p.quads + o for p, o in zip(parts, offsets)]),
            np.concatenate([p.colours for p in parts]),
            np.concatenate([p.normals for p in parts]),
        )

    def lit(self, lights, ambient: float = 0.35, diffuse: float = 0.7) -> "Quads":
        """The same quads with directional lighting baked into their colours:
        ``colour × (ambient + diffuse × Σ intensity × max(0, n·l))``, ``lights`` a
        list of (direction towards the light (3,), intensity). Exact for lights
        fixed in the world, so the renderer can draw them without lighting."""
        shade = np.full(len(self.quads), ambient)
        for direction, intensity in lights:
            d = np.asarray(direction, dtype=float)
            d = d / np.linalg.norm(d)
            shade += diffuse * intensity * np.clip(self.normals @ d, 0.0, None)
        colours = np.clip(np.rint(self.colours * shade[:, None]), 0, 255).astype(np.uint8)
        return Quads(self.points, self.quads, colours, self.normals)


def _empty() -> Quads:
    return Quads(np.zeros((0, 3)), np.zeros((0, 4), dtype=np.int64), np.zeros((0, 3), dtype=np.uint8), np.zeros((0, 3)))


def tube(centres: np.ndarray, side: np.ndarray, up: np.ndarray, radius: float, sides: int, colour) -> Quads:
    """A tube of ``sides`` flat faces around a polyline (n, 3), its cross-section
    spanned by the unit vectors ``side`` and ``up`` (n, 3) of the track frame
    (so it never twists the way a parallel-transport tube would)."""
    n = len(centres)
    ang = 2.0 * math.pi * (np.arange(sides) + 0.5) / sides
    ring = np.cos(ang)[None, :, None] * side[:, None, :] + np.sin(ang)[None, :, None] * up[:, None, :]
    pts = (centres[:, None, :] + radius * ring).reshape(n * sides, 3)
    i = np.arange(n - 1)[:, None] * sides
    k = np.arange(sides)[None, :]
    k1 = (k + 1) % sides
    quads = np.stack([i + k, i + sides + k, i + sides + k1, i + k1], axis=-1).reshape(-1, 4)
    mid = 2.0 * math.pi * (np.arange(sides) + 1.0) / sides  # between ring points k and k + 1
    out = np.cos(mid)[None, :, None] * (side[:-1] + side[1:])[:, None, :] + np.sin(mid)[None, :, None] * (up[:-1] + up[1:])[:, None, :]
    out = out.reshape(-1, 3)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), out)


_BOX_CORNERS = np.array(
    [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float
)
_BOX_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [2, 3, 7, 6], [1, 2, 6, 5], [0, 4, 7, 3]])


def boxes(centres, ax, ay, az, colour, skip_bottom: bool = False) -> Quads:
    """Oriented boxes: centres (n, 3); ``ax, ay, az`` (n, 3) half-extent vectors
    (each axis direction times its half length)."""
    centres = np.asarray(centres, dtype=float)
    n = len(centres)
    if n == 0:
        return _empty()
    c = _BOX_CORNERS
    pts = centres[:, None, :] + c[None, :, 0:1] * ax[:, None, :] + c[None, :, 1:2] * ay[:, None, :] + c[None, :, 2:3] * az[:, None, :]
    faces = _BOX_FACES[1:] if skip_bottom else _BOX_FACES
    quads = (np.arange(n)[:, None, None] * 8 + faces[None, :, :]).reshape(-1, 4)
    unit = [a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-300) for a in (ax, ay, az)]
    # outward normals in _BOX_FACES order: -z, +z, -y, +y, +x, -x
    normals = np.stack([-unit[2], unit[2], -unit[1], unit[1], unit[0], -unit[0]], axis=1)
    normals = normals[:, 1:] if skip_bottom else normals
    return Quads(pts.reshape(-1, 3), quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), normals.reshape(-1, 3))


@dataclass
class TrackLayout:
    """Dimensions of one track's structure, m."""

    gauge: float = 1.0
    rail_depth: float = 0.5  # rail tops this far under the track curve (along −B_w)
    rail_radius: float = 0.07
    rail_sides: int = 6
    sample_spacing: float = 0.5  # rail polyline spacing along s
    tie_spacing: float = 1.2
    tie_width: float = 0.16  # along T
    tie_height: float = 0.12  # along B
    support_spacing: float = 12.0
    support_width: float = 0.35


def track_structure(geometry, layout: TrackLayout) -> tuple[Quads, float]:
    """Rails, ties and supports of one track; returns the quads and the lowest
    z of the structure (m) — the supports are drawn later, down to the ground."""
    length = float(geometry.length)
    n = max(int(math.ceil(length / layout.sample_spacing)) + 1, 2)
    s = np.linspace(0.0, length, n)
    f = geometry.frames(s)
    P, N, B = (np.asarray(a, dtype=float) for a in (f.position, f.normal, f.binormal))
    T = np.asarray(f.tangent, dtype=float)
    r = layout.rail_radius
    depth = layout.rail_depth + r
    parts = []
    for side in (+1.0, -1.0):
        centre = P + side * 0.5 * layout.gauge * N - depth * B
        parts.append(tube(centre, N, B, r, layout.rail_sides, RAIL_COLOUR))
    # cross-ties under the rails
    nt = max(int(length // layout.tie_spacing), 1)
    st = (np.arange(nt) + 0.5) * (length / nt)
    ft = geometry.frames(st)
    Pt, Tt, Nt, Bt = (np.asarray(a, dtype=float) for a in (ft.position, ft.tangent, ft.normal, ft.binormal))
    tie_depth = layout.rail_depth + 2 * r + 0.5 * layout.tie_height - 0.3 * r
    tie_c = Pt - tie_depth * Bt
    parts.append(
        boxes(tie_c, 0.5 * layout.tie_width * Tt, (0.5 * layout.gauge + 2.5 * r) * Nt, 0.5 * layout.tie_height * Bt, TIE_COLOUR)
    )
    z_low = float(min(np.min((P - depth * B)[:, 2]) - r, np.min(tie_c[:, 2]) - layout.tie_height))
    return Quads.merge(parts), z_low


def supports(geometry, layout: TrackLayout, z_ground: float) -> Quads:
    """Vertical columns from under the ties down to the ground, every
    ``support_spacing`` m where the track is upright and above the ground."""
    length = float(geometry.length)
    ns = max(int(length // layout.support_spacing), 1)
    s = (np.arange(ns) + 0.5) * (length / ns)
    f = geometry.frames(s)
    P, B = np.asarray(f.position, dtype=float), np.asarray(f.binormal, dtype=float)
    top = P - (layout.rail_depth + 2 * layout.rail_radius + layout.tie_height) * B
    keep = (B[:, 2] > 0.5) & (top[:, 2] - z_ground > 0.5)
    top = top[keep]
    if len(top) == 0:
        return _empty()
    h = 0.5 * (top[:, 2] - z_ground)
    centre = top.copy()
    centre[:, 2] = z_ground + h
    w = 0.5 * layout.support_width
    ex = np.tile([w, 0.0, 0.0], (len(top), 1))
    ey = np.tile([0.0, w, 0.0], (len(top), 1))
    ez = np.zeros((len(top), 3))
    ez[:, 2] = h
    return boxes(centre, ex, ey, ez, SUPPORT_COLOUR, skip_bottom=True)


def ground(xmin, xmax, ymin, ymax, z, cell: float = 10.0, max_cells: int = 120) -> Quads:
    """A checkered ground plane over the rectangle, at height ``z`` (m)."""
    nx = int(min(max(math.ceil((xmax - xmin) / cell), 1), max_cells))
    ny = int(min(max(math.ceil((ymax - ymin) / cell), 1), max_cells))
    xs = np.linspace(xmin, xmax, nx + 1)
    ys = np.linspace(ymin, ymax, ny + 1)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    pts = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, z)])
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    i, j = i.ravel(), j.ravel()
    a = i * (ny + 1) + j
    quads = np.stack([a, a + (ny + 1), a + (ny + 1) + 1, a + 1], axis=-1)
    checker = ((i + j) % 2).astype(int)
    colours = np.asarray(GROUND_COLOURS, dtype=np.uint8)[checker]
    return Quads(pts, quads, colours, np.tile([0.0, 0.0, 1.0], (len(quads), 1)))


def sky_dome(centre, radius: float, top_deg: float = 35.0, n_azimuth: int = 32, n_elevation: int = 7):
    """A band of sky around ``centre`` from 8° below the horizon to ``top_deg``
    above it, with per-point colours from ``SKY_BOTTOM`` at the horizon to
    ``SKY_TOP`` at its top edge; above it the plain background (``SKY_TOP``)
    shows. A gradient sky that shades only the pixels near the horizon (a
    gradient background would shade the whole screen first).

    Returns points (n, 3), quads (m, 4), point colours (n, 3) uint8.
    """
    el = np.radians(np.concatenate([[-8.0], np.linspace(0.0, top_deg, n_elevation)]))
    az = np.linspace(0.0, 2.0 * math.pi, n_azimuth, endpoint=False)
    e, a = np.meshgrid(el, az, indexing="ij")
    pts = np.asarray(centre, dtype=float) + radius * np.column_stack(
        [(np.cos(e) * np.cos(a)).ravel(), (np.cos(e) * np.sin(a)).ravel(), np.sin(e).ravel()]
    )
    w = np.clip(e.ravel() / np.radians(top_deg), 0.0, 1.0) ** 0.7  # 0 at the horizon, 1 at the top edge
    colours = np.rint((1 - w)[:, None] * np.asarray(SKY_BOTTOM) + w[:, None] * np.asarray(SKY_TOP)).astype(np.uint8)
    i, j = np.meshgrid(np.arange(len(el) - 1), np.arange(n_azimuth), indexing="ij")
    i, j = i.ravel(), j.ravel()
    j1 = (j + 1) % n_azimuth
    quads = np.stack([i * n_azimuth + j, i * n_azimuth + j1, (i + 1) * n_azimuth + j1, (i + 1) * n_azimuth + j], axis=-1)
    return pts, quads, colours


def ground_texture(lights=LIGHTS, ambient: float = AMBIENT, diffuse: float = DIFFUSE) -> np.ndarray:
    """The 2 × 2 checker (RGB uint8) of the ground, with the lighting of a level
    surface baked in; repeated once per two cells by the renderer."""
    shade = ambient + sum(diffuse * i * max(0.0, float(np.asarray(d)[2] / np.linalg.norm(d))) for d, i in lights)
    c = np.clip(np.rint(np.asarray(GROUND_COLOURS, dtype=float) * shade), 0, 255).astype(np.uint8)
    return np.array([[c[0], c[1]], [c[1], c[0]]], dtype=np.uint8)


# --------------------------------------------------------------------------- primitives with smooth normals
#
# Every primitive below is a ``Quads`` whose quad normals are outward; a flat
# face keeps its own corner points, a curved surface (cylinder, sphere, tube)
# shares them between neighbouring quads, so that ``point_normals`` (the mean of
# the normals of the quads using a point) is smooth across curved surfaces and
# sharp at box edges.


def _unit_rows(v):
    v = np.asarray(v, dtype=float)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)


def hexa(corners, colour) -> Quads:
    """Hexahedra from 8 corners each (n, 8, 3) in ``_BOX_CORNERS`` order, flat
    faces (4 own points per face)."""
    c = np.asarray(corners, dtype=float).reshape(-1, 8, 3)
    n = len(c)
    faces = _BOX_FACES  # -z, +z, -y, +y, +x, -x
    pts = c[:, faces, :].reshape(n * 6 * 4, 3)
    quads = np.arange(n * 24).reshape(n * 6, 4)
    q = pts.reshape(n * 6, 4, 3)
    nrm = np.cross(q[:, 2] - q[:, 0], q[:, 3] - q[:, 1])
    centre = c.mean(axis=1)
    face_c = q.mean(axis=1)
    outward = face_c - np.repeat(centre, 6, axis=0)
    nrm = np.where((np.sum(nrm * outward, axis=1) < 0)[:, None], -nrm, nrm)
    return Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), _unit_rows(nrm))


def box(centre, size, colour, axes=None) -> Quads:
    """One box: ``centre`` (3,), ``size`` (3,) full lengths along ``axes``
    (3 unit vectors, default x, y, z)."""
    axes = np.eye(3) if axes is None else np.asarray(axes, dtype=float)
    h = 0.5 * np.asarray(size, dtype=float)
    corners = np.asarray(centre, dtype=float) + _BOX_CORNERS @ (h[:, None] * axes)
    return hexa(corners[None], colour)


def beam(p0, p1, width, height, colour, up=(0.0, 0.0, 1.0)) -> Quads:
    """A box from ``p0`` to ``p1`` (m) of cross-section ``width × height``,
    its height along the part of ``up`` across the beam."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    a = p1 - p0
    ln = float(np.linalg.norm(a))
    if ln < 1e-9:
        return _empty()
    a = a / ln
    u = np.asarray(up, dtype=float) - np.dot(up, a) * a
    if np.linalg.norm(u) < 1e-6:
        u = np.array([1.0, 0.0, 0.0]) - a[0] * a
        if np.linalg.norm(u) < 1e-6:
            u = np.array([0.0, 1.0, 0.0]) - a[1] * a
    u = u / np.linalg.norm(u)
    w = np.cross(u, a)
    return box(0.5 * (p0 + p1), (ln, width, height), colour, axes=(a, w, u))


def cylinder(p0, p1, radius, colour, sides: int = 10, caps: bool = True) -> Quads:
    """A cylinder from ``p0`` to ``p1`` (m): a smooth side and flat end caps."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    a = _unit_rows(p1 - p0)
    ref = np.array([0.0, 0.0, 1.0]) if abs(a[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = _unit_rows(np.cross(a, ref))
    v = np.cross(a, u)
    side = tube(np.stack([p0, p1]), np.stack([u, u]), np.stack([v, v]), radius, sides, colour)
    if not caps:
        return side
    ang = 2.0 * math.pi * (np.arange(sides) + 0.5) / sides
    ring = radius * (np.cos(ang)[:, None] * u + np.sin(ang)[:, None] * v)
    parts = [side]
    for centre, sign in ((p0, -1.0), (p1, 1.0)):
        pts = np.vstack([centre[None], centre + ring])
        k = np.arange(sides)
        quads = np.stack([np.zeros(sides, int), 1 + k, 1 + (k + 1) % sides, np.zeros(sides, int)], axis=1)
        if sign < 0:
            quads = quads[:, ::-1]
        parts.append(Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (sides, 1)),
                           np.tile(sign * a, (sides, 1))))
    return Quads.merge(parts)


def sphere(centre, radius, colour, n_lon: int = 10, n_lat: int = 6, scale=(1.0, 1.0, 1.0)) -> Quads:
    """A UV sphere (an ellipsoid with ``scale``) with shared points (smooth)."""
    lat = np.linspace(-0.5 * math.pi, 0.5 * math.pi, n_lat + 1)
    lon = 2.0 * math.pi * np.arange(n_lon) / n_lon
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    unit = np.column_stack([(np.cos(la) * np.cos(lo)).ravel(), (np.cos(la) * np.sin(lo)).ravel(), np.sin(la).ravel()])
    pts = np.asarray(centre, dtype=float) + radius * unit * np.asarray(scale, dtype=float)
    i, j = np.meshgrid(np.arange(n_lat), np.arange(n_lon), indexing="ij")
    i, j = i.ravel(), j.ravel()
    j1 = (j + 1) % n_lon
    quads = np.stack([i * n_lon + j, i * n_lon + j1, (i + 1) * n_lon + j1, (i + 1) * n_lon + j], axis=1)
    nrm = _unit_rows(unit[quads].mean(axis=1))
    return Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), nrm)


def polyline_tube(points, radius, colour, sides: int = 8) -> Quads:
    """A tube along a polyline (k, 3) (bars, restraints), frames by parallel transport."""
    p = np.asarray(points, dtype=float)
    t = np.gradient(p, axis=0)
    t = _unit_rows(t)
    ref = np.array([0.0, 0.0, 1.0]) if abs(t[0, 2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = [_unit_rows(np.cross(t[0], ref))]
    for k in range(1, len(p)):
        uk = u[-1] - np.dot(u[-1], t[k]) * t[k]
        u.append(_unit_rows(uk))
    u = np.asarray(u)
    v = np.cross(t, u)
    return tube(p, u, v, radius, sides, colour)


def loft(rings, colour) -> Quads:
    """A closed shell through ``rings`` (each (k, 3), the same k, in order along the
    shell; a ring's points k−1−a and a face each other across it), with shared
    points (smooth) and end caps."""
    r = np.asarray(rings, dtype=float)
    m, k = r.shape[0], r.shape[1]
    pts = r.reshape(m * k, 3)
    i = np.arange(m - 1)[:, None] * k
    j = np.arange(k)[None, :]
    j1 = (j + 1) % k
    quads = [np.stack([i + j, i + j1, i + k + j1, i + k + j], axis=-1).reshape(-1, 4)]
    centre = pts.mean(axis=0)
    for end in (0, m - 1):  # the caps: quads fanning across the ring
        base = end * k
        h = k // 2
        a = np.arange(h - 1)
        quads.append(np.stack([base + a, base + a + 1, base + k - 2 - a, base + k - 1 - a], axis=1))
    quads = np.concatenate(quads)
    p = pts[quads]
    nrm = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
    out = p.mean(axis=1) - centre
    nrm = np.where((np.sum(nrm * out, axis=1) < 0)[:, None], -nrm, nrm)
    return Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), _unit_rows(nrm))


def outward_wound(q: Quads) -> np.ndarray:
    """The quads (m, 4) with their corners reordered where needed so that each
    turns counter-clockwise seen from outside (along its outward normal): what
    back-face culling needs."""
    p = q.points[q.quads]
    geo_n = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
    flip = np.sum(geo_n * q.normals, axis=1) < 0
    out = q.quads.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def point_normals(q: Quads) -> np.ndarray:
    """Unit normals (n, 3) of the points: the mean of the normals of the quads using each point."""
    acc = np.zeros_like(q.points, dtype=float)
    for k in range(4):
        np.add.at(acc, q.quads[:, k], q.normals)
    return _unit_rows(acc)


def point_colours(q: Quads) -> np.ndarray:
    """Colours (n, 3) uint8 of the points (a point's quads share one colour: primitives never share points)."""
    c = np.zeros((len(q.points), 3), dtype=np.uint8)
    c[q.quads.ravel()] = np.repeat(q.colours, 4, axis=0)
    return c


def lit_points(q: Quads, lights=LIGHTS, ambient: float = AMBIENT, diffuse: float = DIFFUSE) -> np.ndarray:
    """Point colours (n, 3) uint8 with directional lighting baked in per point
    (Gouraud shading of a static mesh lit by lights fixed in the world)."""
    nrm = point_normals(q)
    shade = np.full(len(q.points), ambient)
    for direction, intensity in lights:
        d = np.asarray(direction, dtype=float)
        shade += diffuse * intensity * np.clip(nrm @ (d / np.linalg.norm(d)), 0.0, None)
    return np.clip(np.rint(point_colours(q) * shade[:, None]), 0, 255).astype(np.uint8)


def transformed(q: Quads, rotation, offset) -> Quads:
    """``q`` rotated (3, 3) then moved by ``offset`` (3,)."""
    r = np.asarray(rotation, dtype=float)
    return Quads(q.points @ r.T + np.asarray(offset, dtype=float), q.quads, q.colours, q.normals @ r.T)


# --------------------------------------------------------------------------- track styles, supports

TRACK_COLOUR = (20, 135, 150)       # steel coaster track: rails, spine, ties
SUPPORT_STEEL = (205, 205, 200)
FOOTER_COLOUR = (170, 168, 160)
RAILWAY_RAIL = (120, 112, 105)
SLEEPER_COLOUR = (150, 145, 135)
BALLAST_COLOUR = (128, 120, 108)


@dataclass
class StyledLayout:
    """One track's drawing: ``style`` steel | railway | hanging, dimensions in m."""

    style: str = "steel"
    gauge: float = 1.0
    rail_depth: float = 0.5
    rail_radius: float = 0.07
    rail_sides: int = 8
    sample_spacing: float = 0.5
    tie_spacing: float = 1.6
    support_spacing: float = 12.0
    clearance: float = 1.5  # half-width of the space the cars sweep, m (supports keep out of it)
    hang_depth: float = 3.0  # hanging: how far below the curve the cars reach, m

    @property
    def spine_radius(self) -> float:
        return float(np.clip(0.2 * self.gauge + 0.04, 0.12, 0.4))

    def spine_offset(self) -> float:
        """Spine centre along B from the curve (m): below for steel, above for hanging."""
        if self.style == "hanging":
            return self.rail_up + self.rail_radius + 0.25 + self.spine_radius
        return -(self.rail_depth + 2 * self.rail_radius + 0.2 + self.spine_radius)

    @property
    def rail_up(self) -> float:
        return 0.35  # hanging: rail centres above the curve


def _ballast(layout: StyledLayout):
    """Railway ballast bank: (depth of its top, its height, half-width at the top, at the bottom) along -B, m."""
    sd = layout.rail_depth + 2 * layout.rail_radius + 0.08
    return sd + 0.05, 0.45, 0.5 * layout.gauge + 0.75, 0.5 * layout.gauge + 1.6


#: a railway line up to this high (bottom of its ballast above the ground, m) runs on an
#: earth embankment; higher, on a viaduct: a concrete deck on piers
EMBANKMENT_MAX = 6.0
EMBANKMENT_SLOPE = 1.5  # horizontal per vertical of its sides
DECK_DEPTH = 1.4  # m, under the ballast
EMBANKMENT_COLOUR = (112, 124, 72)
DECK_COLOUR = (178, 174, 166)


def _strip(a, b, colour, outward) -> Quads:
    """Quads between the polylines ``a`` and ``b`` (n, 3), sample by sample, each
    with its own points (flat across the strip's edges), normals towards ``outward``
    (n - 1, 3) (a direction per quad)."""
    n = len(a)
    if n < 2:
        return _empty()
    pts = np.concatenate([a, b])
    i = np.arange(n - 1)
    quads = np.stack([i, i + 1, n + i + 1, n + i], axis=1)
    nrm = np.cross(a[1:] - a[:-1], b[:-1] - a[:-1])
    nrm = np.where((np.sum(nrm * outward, axis=1) < 0)[:, None], -nrm, nrm)
    return Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (n - 1, 1)), _unit_rows(nrm))


def railway_bed(geometry, layout: StyledLayout, ground) -> Quads:
    """What carries a railway line above the ground (``ground``: the plain's
    height, m, or a ``ground.Ground``): an earth embankment (sides sloping
    1 : 1.5 down to the ground) where the bottom of the ballast is up to
    ``EMBANKMENT_MAX`` above the ground, else a concrete deck ``DECK_DEPTH`` deep
    (the piers: ``support_plan``)."""
    height = _heights(ground)
    length = float(geometry.length)
    ss = track_samples(geometry, max(layout.sample_spacing, 1.0))
    n = len(ss)
    P, T, N, B = _frames(geometry, ss)
    top_d, hb, _wt, wb = _ballast(layout)
    d0 = top_d + hb
    h = (P - d0 * B)[:, 2] - height(P[:, 0], P[:, 1])
    Nh = _unit_rows(np.column_stack([N[:, 0], N[:, 1], np.zeros(n)]))
    low = h <= EMBANKMENT_MAX
    parts = []
    # runs of samples on an embankment / on the deck (a run shares its end sample with the next)
    for on_bank in (True, False):
        keep = low if on_bank else ~low
        seg = keep[:-1] | keep[1:]
        idx = np.flatnonzero(np.diff(np.concatenate([[0], seg.astype(int), [0]])))
        for a, b in zip(idx[::2], idx[1::2]):
            j = np.arange(a, b + 1)  # samples of segments a..b-1
            mid = 0.5 * (P[j[:-1]] + P[j[1:]])
            for side in (1.0, -1.0):
                top = P[j] + side * wb * N[j] - d0 * B[j]
                if on_bank:
                    # the foot where the side slope meets the ground (a few steps on a sloping ground)
                    drop = np.maximum(h[j], 0.0)
                    for _ in range(3):
                        foot = top + side * EMBANKMENT_SLOPE * drop[:, None] * Nh[j]
                        foot[:, 2] = height(foot[:, 0], foot[:, 1])
                        drop = np.maximum(top[:, 2] - foot[:, 2], 0.0)
                    outward = (0.5 * (top[:-1] + top[1:]) - mid) + np.array([0.0, 0.0, 0.5])
                    parts.append(_strip(top, foot, EMBANKMENT_COLOUR, outward))
                else:
                    bottom = P[j] + side * (wb - 0.4) * N[j] - (d0 + DECK_DEPTH) * B[j]
                    parts.append(_strip(top, bottom, DECK_COLOUR, 0.5 * (top[:-1] + top[1:]) - mid))
            if not on_bank:
                bl = P[j] + (wb - 0.4) * N[j] - (d0 + DECK_DEPTH) * B[j]
                br = P[j] - (wb - 0.4) * N[j] - (d0 + DECK_DEPTH) * B[j]
                parts.append(_strip(bl, br, DECK_COLOUR, -B[j[:-1]]))
    return Quads.merge(parts)


#: a track's drawing keeps a sample where its frame has turned this much since the last one kept,
#: or this far on, m
SAMPLE_TURN_DEG, SAMPLE_MAX = 2.0, 4.0


def track_samples(geometry, spacing: float, max_spacing: float = SAMPLE_MAX,
                  turn_deg: float = SAMPLE_TURN_DEG) -> np.ndarray:
    """Arc lengths (m) to draw a track at: every ``spacing`` m where its frame turns
    (a loop, a banked turn), further apart where it runs straight (up to
    ``max_spacing``): a sample is kept once the frame has turned ``turn_deg`` since
    the last kept one, or ``max_spacing`` m on. The ends are always kept."""
    length = float(geometry.length)
    n = max(int(math.ceil(length / spacing)) + 1, 2)
    s = np.linspace(0.0, length, n)
    if max_spacing <= spacing or n <= 2:
        return s
    _P, T, N, _B = _frames(geometry, s)
    c = math.cos(math.radians(turn_deg))
    keep = [0]
    for i in range(1, n - 1):
        k = keep[-1]
        if s[i] - s[k] >= max_spacing - 1e-9 or T[i] @ T[k] < c or N[i] @ N[k] < c:
            keep.append(i)
    keep.append(n - 1)
    return s[np.asarray(keep)]


def _frames(geometry, s):
    f = geometry.frames(s)
    return tuple(np.asarray(a, dtype=float) for a in (f.position, f.tangent, f.normal, f.binormal))


def styled_track(geometry, layout: StyledLayout, ballast: bool = True) -> tuple[Quads, float]:
    """Rails, spine, ties (steel, hanging) or rails, sleepers, ballast (railway;
    without ``ballast``: rails on sleepers, as on a turntable's deck) of one
    track; returns the quads and the lowest z of the structure (m)."""
    length = float(geometry.length)
    s = track_samples(geometry, layout.sample_spacing)
    n = len(s)
    P, T, N, B = _frames(geometry, s)
    r, g = layout.rail_radius, layout.gauge
    parts = []
    if layout.style == "railway":
        rail_c = -(layout.rail_depth + r)
        for side in (1.0, -1.0):
            parts.append(tube(P + side * 0.5 * g * N + rail_c * B, N, B, r, 4, RAILWAY_RAIL))
        nt = max(int(length // 0.65), 1)
        st = (np.arange(nt) + 0.5) * (length / nt)
        Pt, Tt, Nt, Bt = _frames(geometry, st)
        sd = layout.rail_depth + 2 * r + 0.08
        parts.append(boxes(Pt - sd * Bt, 0.13 * Tt, (0.5 * g + 0.45) * Nt, 0.08 * Bt, SLEEPER_COLOUR))
        if not ballast:
            return Quads.merge(parts), float((P - (sd + 0.08) * B)[:, 2].min())
        # ballast: a trapezoid bank under the sleepers
        top_d, h, wt, wb = _ballast(layout)
        ring = [(+wb, -(top_d + h)), (+wt, -top_d), (-wt, -top_d), (-wb, -(top_d + h))]
        pts = np.concatenate([P + a * N + b * B for a, b in ring])  # (4n, 3), block k = ring point k
        i = np.arange(n - 1)
        quads = np.concatenate([np.stack([k * n + i, k * n + i + 1, (k + 1) * n + i + 1, (k + 1) * n + i], axis=1)
                                for k in range(3)])
        mids = [0.5 * (np.array(ring[k]) + np.array(ring[k + 1])) for k in range(3)]
        nrm = []
        for k in range(3):
            a0, a1 = np.array(ring[k]), np.array(ring[k + 1])
            d = a1 - a0
            out = np.array([d[1], -d[0]])
            if np.dot(out, mids[k] - np.array([0.0, -(top_d + h)])) < 0:
                out = -out
            out /= np.linalg.norm(out)
            nrm.append(out[0] * 0.5 * (N[:-1] + N[1:]) + out[1] * 0.5 * (B[:-1] + B[1:]))
        parts.append(Quads(pts, quads, np.tile(np.asarray(BALLAST_COLOUR, dtype=np.uint8), (len(quads), 1)),
                           _unit_rows(np.concatenate(nrm))))
        low = P + (-(top_d + h)) * B
        return Quads.merge(parts), float(low[:, 2].min())
    hanging = layout.style == "hanging"
    rail_off = layout.rail_up if hanging else -(layout.rail_depth + r)
    for side in (1.0, -1.0):
        parts.append(tube(P + side * 0.5 * g * N + rail_off * B, N, B, r, layout.rail_sides, TRACK_COLOUR))
    rs, so = layout.spine_radius, layout.spine_offset()
    parts.append(tube(P + so * B, N, B, rs, max(layout.rail_sides, 10), TRACK_COLOUR))
    # ties: from each rail to the spine, every tie_spacing
    nt = max(int(length // layout.tie_spacing), 1)
    st = (np.arange(nt) + 0.5) * (length / nt)
    Pt, Tt, Nt, Bt = _frames(geometry, st)
    w = 0.06
    for side in (1.0, -1.0):
        a = Pt + side * 0.5 * g * Nt + rail_off * Bt
        b = Pt + side * 0.6 * rs * Nt + so * Bt
        d = b - a
        ln = np.linalg.norm(d, axis=1, keepdims=True)
        ax = 0.5 * d
        az = w * _unit_rows(np.cross(d, Tt))
        parts.append(boxes(0.5 * (a + b), ax, w * Tt, az, TRACK_COLOUR))
        del ln
    parts.append(boxes(Pt + rail_off * Bt, 0.05 * Tt, 0.5 * g * Nt, 0.05 * Bt, TRACK_COLOUR))
    low = np.minimum((P + so * B)[:, 2] - rs, (P + rail_off * B)[:, 2] - r)
    return Quads.merge(parts), float(low.min())


@dataclass
class Support:
    """One support: ``kind`` ``column`` (a steel column under the spine), ``arm`` (a
    hanging track's column beside it with an arm over the spine) or ``pier``
    (a railway viaduct's pier under the deck); ``foot`` on the ground and
    ``top`` where it meets what it carries (m, world); ``track``, ``s``: the
    track and arc length it carries; ``quads``: its drawing; ``radius``: its
    column's, m."""

    kind: str
    foot: np.ndarray
    top: np.ndarray
    track: int
    s: float
    quads: Quads
    radius: float = 0.3  # the column's (a pier's: half its width), m


def _heights(ground):
    """``height(x, y)`` of ``ground``: a height in m (the plain) or an object with ``height``."""
    if hasattr(ground, "height"):
        return ground.height
    z = float(ground)
    return lambda x, y: np.full(np.broadcast(np.asarray(x), np.asarray(y)).shape, z)


def support_plan(tracks, layouts, ground, carried=()) -> list[Support]:
    """The supports of every track, down to the ground (``ground``: the plain's
    height, m, or a ``ground.Ground``): a column on a concrete footer every
    ``support_spacing`` m where the track is upright and high enough, left out
    where the column (or, for a hanging track, its arm) would pass through the
    space of a track below. A steel column ends in a head that grips the spine
    (its top on the spine's axis); a hanging track's column stands beside it and
    its arm reaches over the spine, dropping into it; a railway pier carries the
    deck (its top inside the deck's underside). ``tracks``: geometries;
    ``layouts``: their ``StyledLayout``; ``carried``: indices of tracks that a
    body carries (no supports: the body carries them)."""
    height = _heights(ground)
    # every track sampled every metre: the obstacles a column must keep clear of
    samples = []
    for k, geom in enumerate(tracks):
        length = float(geom.length)
        ss = np.linspace(0.0, length, max(int(length) + 1, 2))
        P, _T, _N, B = _frames(geom, ss)
        lay = layouts[k]
        down = (lay.hang_depth if lay.style == "hanging" else lay.rail_depth + 1.2)
        samples.append((k, ss, P, B, lay.clearance, down))
    out = []
    for k, geom in enumerate(tracks):
        if k in carried:
            continue
        lay = layouts[k]
        length = float(geom.length)
        ns = max(int(length // lay.support_spacing), 1)
        s = (np.arange(ns) + 0.5) * (length / ns)
        P, T, N, B = _frames(geom, s)
        for i in range(ns):
            if B[i, 2] < 0.6:
                continue
            along = _unit_rows(np.array([T[i, 0], T[i, 1], 0.0]))
            across = np.array([-along[1], along[0], 0.0])
            vertical = (along, across, (0.0, 0.0, 1.0))
            if lay.style == "railway":  # a pier under the deck (low down: the embankment carries it)
                top_d, hb, _wt, wb = _ballast(lay)
                under = P[i] - (top_d + hb + DECK_DEPTH) * B[i]  # the deck's underside on the centre line
                zg = float(height(under[0], under[1]))
                if under[2] + DECK_DEPTH - zg <= EMBANKMENT_MAX:
                    continue
                if not _column_clear(under[:2], under[2], k, s[i], samples, 0.4):
                    continue
                wide = 2.0 * (wb - 0.6)
                # the top reaches into the deck by its tilt over the pier's length and width, so it meets it
                grade = abs(T[i, 2]) / max(np.hypot(T[i, 0], T[i, 1]), 1e-9)
                top_z = under[2] + 0.7 * grade + 0.5 * wide * abs(N[i, 2]) + 0.05
                hgt = top_z - (zg + 0.5)
                parts = [box((under[0], under[1], zg + 0.5 + 0.5 * hgt), (1.4, wide, hgt), FOOTER_COLOUR, axes=vertical),
                         box((under[0], under[1], zg + 0.25), (2.6, wide + 1.2, 0.5), FOOTER_COLOUR, axes=vertical)]
                out.append(Support("pier", np.array([under[0], under[1], zg]), np.array([under[0], under[1], top_z]),
                                   k, float(s[i]), Quads.merge(parts), 0.5 * wide))
                continue
            rs = lay.spine_radius
            spine = P[i] + lay.spine_offset() * B[i]  # the spine's axis
            if lay.style == "hanging":
                # a column beside the track (inside of the turn: the cars swing outwards) and an arm over the
                # spine, dropping into it
                kappa = np.cross(T[min(i + 1, ns - 1)], T[max(i - 1, 0)])[2] if ns > 2 else 0.0
                side = 1.0 if kappa <= 0 else -1.0
                off = lay.clearance + 1.2
                foot_xy = P[i, :2] + side * off * N[i, :2] / max(np.hypot(N[i, 0], N[i, 1]), 1e-9)
                col_top = spine[2] + rs + 0.45
                clear_at, clear_z = foot_xy, col_top
            else:
                foot_xy = spine[:2]
                # the spine's underside straight below its axis (a tube tilted by the grade and the bank)
                t_perp = np.array([0.0, 0.0, 1.0]) - T[i, 2] * T[i]
                col_top = spine[2] - rs / max(float(np.linalg.norm(t_perp)), 0.2) - 0.25  # the head's foot
                clear_at, clear_z = foot_xy, col_top
            zg = float(height(foot_xy[0], foot_xy[1]))
            if col_top - zg < 1.0:
                continue
            if not _column_clear(clear_at, clear_z, k, s[i], samples, 0.4):
                continue
            rc = float(np.clip(0.12 + 0.008 * (col_top - zg), 0.15, 0.45))
            base = np.array([foot_xy[0], foot_xy[1], zg + 0.35])
            parts = [cylinder(base, np.array([foot_xy[0], foot_xy[1], col_top]), rc, SUPPORT_STEEL, sides=10, caps=True),
                     box((foot_xy[0], foot_xy[1], zg + 0.15), (4 * rc + 0.5, 4 * rc + 0.5, 0.5), FOOTER_COLOUR)]
            if lay.style == "hanging":
                arm_z = col_top - 0.175
                over = np.array([spine[0], spine[1], arm_z])
                parts.append(beam((foot_xy[0], foot_xy[1], arm_z), over + 0.15 * _unit_rows(over - np.array(
                    [foot_xy[0], foot_xy[1], arm_z])), 0.3, 0.35, SUPPORT_STEEL))
                # the drop from the arm into the spine: its end on the spine's axis
                parts.append(beam(over, spine, 0.25, 0.25, SUPPORT_STEEL, up=tuple(along)))
                kind, top = "arm", spine.copy()
            else:
                # the head: a saddle from the column up around the spine, its top on the spine's axis
                hw = max(2.0 * rc, 1.6 * rs)
                parts.append(box((spine[0], spine[1], 0.5 * (col_top + spine[2])), (hw, hw, spine[2] - col_top),
                                 SUPPORT_STEEL, axes=vertical))
                kind, top = "column", spine.copy()
            out.append(Support(kind, np.array([foot_xy[0], foot_xy[1], zg]), top, k, float(s[i]), Quads.merge(parts), rc))
    return out


def supports_styled(tracks, layouts, ground) -> Quads:
    """The drawing of ``support_plan(tracks, layouts, ground)``: every support merged."""
    return Quads.merge([sp.quads for sp in support_plan(tracks, layouts, ground)])


def _column_clear(xy, z_top, k, s_here, samples, radius) -> bool:
    """True when a vertical column at ``xy`` from the ground to ``z_top`` keeps
    out of the space of every track sample below it (other than its own
    neighbourhood, |Δs| < 4 m on its own track)."""
    for kk, ss, P, B, clear, down in samples:
        near = np.hypot(P[:, 0] - xy[0], P[:, 1] - xy[1]) < clear + radius + 0.5
        below = P[:, 2] < z_top + 0.5
        if kk == k:
            near &= np.abs(ss - s_here) > 4.0
        hit = near & below
        if np.any(hit):
            return False
    return True


def grass_texture(size: int = 256, seed: int = 7) -> np.ndarray:
    """A tileable grass texture (size, size, 3) uint8 made in code: value noise
    of several octaves (periodic, so the tiles join), greens with patches of
    drier grass and earth, lighting of a level surface baked in."""
    rng = np.random.default_rng(seed)
    acc = np.zeros((size, size))
    amp, total = 1.0, 0.0
    for cells in (4, 8, 16, 32, 64, 128):
        grid = rng.random((cells, cells))
        # bilinear upsampling with wrap-around (tileable)
        x = np.arange(size) * cells / size
        i0 = np.floor(x).astype(int)
        f = x - i0
        f = f * f * (3 - 2 * f)
        i1 = (i0 + 1) % cells
        rows = grid[i0][:, i0] * (1 - f)[None, :] + grid[i0][:, i1] * f[None, :]
        rows1 = grid[i1][:, i0] * (1 - f)[None, :] + grid[i1][:, i1] * f[None, :]
        layer = rows * (1 - f)[:, None] + rows1 * f[:, None]
        acc += amp * layer
        total += amp
        amp *= 0.6
    acc /= total
    fine = rng.random((size, size))
    lush = np.array([70.0, 118.0, 52.0])
    dry = np.array([128.0, 138.0, 74.0])
    earth = np.array([112.0, 98.0, 72.0])
    t = np.clip((acc - 0.35) / 0.35, 0.0, 1.0)[..., None]
    col = lush * (1 - t) + dry * t
    e = np.clip((acc - 0.72) / 0.08, 0.0, 1.0)[..., None] * 0.6
    col = col * (1 - e) + earth * e
    del fine  # no per-texel noise: it costs the video encoder more than it shows
    shade = AMBIENT + sum(DIFFUSE * i * max(0.0, float(np.asarray(d)[2] / np.linalg.norm(d))) for d, i in LIGHTS)
    return np.clip(np.rint(col * min(shade, 1.15)), 0, 255).astype(np.uint8)
