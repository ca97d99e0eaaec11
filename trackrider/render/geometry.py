"""The static scene as plain arrays: rails, cross-ties, support columns and a
ground plane, merged into one set of quads with a colour per quad (so the
renderer draws all of it with a single actor). No VTK here.

Track frame (INTERFACE.md): ``tangent`` T, ``normal`` N_w (the rider's left),
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
