"""The ground under a layout: its height (a plain, raised by a height field
where a railway climbs), where the sun casts a point's shadow on it, and the
light map of the ground (the shade of its slopes and the shadows of the static
structure). No VTK here.

- ``Ground``: the plain at ``z0`` and, where a railway or funicular runs on a
  grade, a height field (``terrain``) that carries it: the ground rises to the
  bottom of its ballast bank and falls away from it at a side slope, and never
  rises into any track.
- ``Ground.cast``: points moved along the sun's rays down to the ground (their
  shadows).
- ``light_map``: the ground's brightness relative to the lit level plain
  (128 = 1), one byte per texel: the slope's lighting times the shadow of the
  static structure (its quads projected along the sun's rays and rasterised with
  2 × 2 samples a texel), with its mip levels. The sky and ground pass
  (``backdrop``) multiplies the grass by it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.render import geometry as geo

#: unit vector towards the sun (the first of ``geometry.LIGHTS``, the key light)
SUN = np.asarray(geo.LIGHTS[0][0], dtype=float) / np.linalg.norm(geo.LIGHTS[0][0])


def shade(normals) -> np.ndarray:
    """``AMBIENT + DIFFUSE × Σ intensity × max(0, n·l)`` of unit normals (n, 3): how lit a
    surface of that normal is, by the scene's lights (``geometry.LIGHTS``)."""
    n = np.atleast_2d(np.asarray(normals, dtype=float))
    s = np.full(len(n), geo.AMBIENT)
    for direction, intensity in geo.LIGHTS:
        d = np.asarray(direction, dtype=float)
        s += geo.DIFFUSE * intensity * np.clip(n @ (d / np.linalg.norm(d)), 0.0, None)
    return s


#: the lit level plain, and a level surface in the shadow of the sun (lit by the fill light alone)
LEVEL_SHADE = float(shade([[0.0, 0.0, 1.0]])[0])
SHADOW_SHADE = LEVEL_SHADE - geo.DIFFUSE * geo.LIGHTS[0][1] * SUN[2]
#: brightness of the ground in a shadow, relative to the lit plain
SHADOW = SHADOW_SHADE / LEVEL_SHADE
#: the light map's unit: this byte value is the lit level plain
ONE = 128

#: the terrain's side slope (rise per run) is twice the steepest grade of the railway it carries,
#: within these bounds; a shelf this much wider than the ballast bank each side is level with it
SIDE_SLOPE = (0.08, 0.35)
SHELF = 1.0
#: ground this far below the bottom of the ballast (the bank stands on it), m
BED_SINK = 0.15
#: terrain cells at most; a cell at least this wide, m
TERRAIN_CELLS = 20000
TERRAIN_MIN_CELL = 2.0
#: the light map's texels at most, and its finest texel, m
LIGHT_MAP_TEXELS = 4_000_000
LIGHT_MAP_MIN_CELL = 0.1


@njit(cache=True, nogil=True)
def _bilinear(h, x0, y0, cell, z0, xs, ys, out):
    """``out[k]`` = the height field ``h`` (ny + 1, nx + 1) at (xs[k], ys[k]), bilinear; ``z0`` outside it."""
    ny, nx = h.shape[0] - 1, h.shape[1] - 1
    for k in range(xs.shape[0]):
        u = (xs[k] - x0) / cell
        v = (ys[k] - y0) / cell
        if not (u >= 0.0 and v >= 0.0 and u <= nx and v <= ny):
            out[k] = z0
            continue
        i = min(int(u), nx - 1)
        j = min(int(v), ny - 1)
        fu = u - i
        fv = v - j
        out[k] = ((h[j, i] * (1.0 - fu) + h[j, i + 1] * fu) * (1.0 - fv)
                  + (h[j + 1, i] * (1.0 - fu) + h[j + 1, i + 1] * fu) * fv)


@dataclass
class Ground:
    """The plain at ``z0`` (m) and, when ``heights`` is given, a height field over
    the rectangle from (``x0``, ``y0``) of ``heights.shape = (ny + 1, nx + 1)``
    grid points ``cell`` m apart (``heights[j, i]`` at x0 + i·cell, y0 + j·cell),
    bilinear in between, the plain outside; its edge is at ``z0``."""

    z0: float
    heights: np.ndarray | None = None
    x0: float = 0.0
    y0: float = 0.0
    cell: float = 1.0

    @property
    def flat(self) -> bool:
        return self.heights is None

    @property
    def top(self) -> float:
        """The highest ground, m."""
        return self.z0 if self.flat else float(self.heights.max())

    def height(self, x, y) -> np.ndarray:
        """Ground height (m) at points (x, y) (arrays of one shape)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        shape = np.broadcast(x, y).shape
        if self.flat:
            return np.full(shape, self.z0)
        xb, yb = np.broadcast_arrays(x, y)
        out = np.empty(shape)
        _bilinear(self.heights, self.x0, self.y0, self.cell, self.z0, xb.ravel(), yb.ravel(), out.reshape(-1))
        return out

    def normal(self, x, y, eps: float | None = None) -> np.ndarray:
        """Unit up normals (..., 3) of the ground at points (x, y) (central differences)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if self.flat:
            return np.broadcast_to(np.array([0.0, 0.0, 1.0]), np.broadcast(x, y).shape + (3,)).copy()
        e = 0.5 * self.cell if eps is None else eps
        gx = (self.height(x + e, y) - self.height(x - e, y)) / (2 * e)
        gy = (self.height(x, y + e) - self.height(x, y - e)) / (2 * e)
        n = np.stack([-gx, -gy, np.ones_like(gx)], axis=-1)
        return n / np.linalg.norm(n, axis=-1, keepdims=True)

    def cast(self, points) -> np.ndarray:
        """Where the sun casts the shadows of ``points`` (n, 3) on the ground (m):
        each moved along −``SUN`` down to the ground (a point at or under the
        ground stays where it is)."""
        p = np.atleast_2d(np.asarray(points, dtype=float))
        if self.flat:
            t = np.maximum((p[:, 2] - self.z0) / SUN[2], 0.0)
            return p - t[:, None] * SUN
        # the height along the ray falls faster than any slope of the ground rises
        # (side slopes ≤ 0.35, grades ≤ the sun's 54° elevation): one crossing, found by bisection
        lo = np.zeros(len(p))
        hi = np.maximum((p[:, 2] - self.z0) / SUN[2], 0.0)
        for _ in range(24):
            mid = 0.5 * (lo + hi)
            q = p - mid[:, None] * SUN
            above = q[:, 2] > self.height(q[:, 0], q[:, 1])
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        return p - hi[:, None] * SUN

    def shadow_plane(self, point) -> tuple[np.ndarray, np.ndarray]:
        """(a point, the unit normal) of the plane the shadow of a body at ``point``
        falls on: the ground where the sun casts ``point``, and its slope there."""
        q = self.cast(np.asarray(point, dtype=float)[None])[0]
        return q, self.normal(q[0], q[1]).reshape(3)

    def mesh(self, colour) -> geo.Quads:
        """The raised ground as quads (cells with a corner above the plain), one colour."""
        if self.flat:
            return geo._empty()
        h = self.heights
        ny, nx = h.shape[0] - 1, h.shape[1] - 1
        xs = self.x0 + self.cell * np.arange(nx + 1)
        ys = self.y0 + self.cell * np.arange(ny + 1)
        gx, gy = np.meshgrid(xs, ys)
        pts = np.column_stack([gx.ravel(), gy.ravel(), h.ravel()])
        raised = h > self.z0 + 0.01
        keep = raised[:-1, :-1] | raised[1:, :-1] | raised[:-1, 1:] | raised[1:, 1:]
        j, i = np.nonzero(keep)
        a = j * (nx + 1) + i
        quads = np.stack([a, a + 1, a + nx + 2, a + nx + 1], axis=1)
        p = pts[quads]
        nrm = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        return geo.Quads(pts, quads, np.tile(np.asarray(colour, dtype=np.uint8), (len(quads), 1)), nrm)


def railway_terrain(tracks, layouts, z0: float) -> Ground:
    """The ground of a layout: the plain at ``z0`` raised where a railway track
    (``layout.style == "railway"``) is above it, so that the ground carries its
    ballast. Each railway sample lifts the ground to just under the bottom of its
    ballast bank over a shelf a metre wider than the bank, falling away at a side
    slope of twice the track's steepest grade (``SIDE_SLOPE``); the ground never
    rises within 2 m under any other track's structure (nor, past the shelf,
    into a cutting steeper than 1 : 1.5), so a line over another is on a bridge.

    ``tracks``: track geometries; ``layouts``: their ``StyledLayout``. A plain
    ``Ground`` when there is no railway track."""
    rails, others = [], []
    for geom, lay in zip(tracks, layouts):
        length = float(geom.length)
        n = max(int(math.ceil(length / 2.0)) + 1, 2)
        s = np.linspace(0.0, length, n)
        f = geom.frames(s)
        P, T, B = (np.asarray(a, dtype=float) for a in (f.position, f.tangent, f.binormal))
        if getattr(lay, "style", None) == "railway":
            top_d, hb, _wt, wb = geo._ballast(lay)
            bottom = (P - (top_d + hb) * B)[:, 2] - BED_SINK
            grade = float(np.max(np.abs(T[:, 2]) / np.maximum(np.hypot(T[:, 0], T[:, 1]), 1e-9)))
            k = float(np.clip(2.0 * grade, *SIDE_SLOPE))
            rails.append((P[:, :2], bottom, wb + SHELF, k))
        else:
            low = P[:, 2] - (getattr(lay, "hang_depth", 3.0) if getattr(lay, "style", "") == "hanging" else 2.0)
            others.append((P[:, :2], low - 2.0, 0.5 * getattr(lay, "clearance", 1.5)))
    rails = [r for r in rails if np.any(r[1] > z0 + 0.05)]
    if not rails:
        return Ground(z0)
    # the rectangle the ground may be raised over: where the side slopes reach the plain
    lo = np.full(2, np.inf)
    hi = np.full(2, -np.inf)
    for xy, bottom, shelf, k in rails:
        reach = shelf + (bottom.max() - z0) / k + 1.0
        lo = np.minimum(lo, xy.min(axis=0) - reach)
        hi = np.maximum(hi, xy.max(axis=0) + reach)
    area = float(np.prod(hi - lo))
    cell = max(TERRAIN_MIN_CELL, math.sqrt(area / TERRAIN_CELLS))
    nx = max(int(math.ceil((hi[0] - lo[0]) / cell)), 1)
    ny = max(int(math.ceil((hi[1] - lo[1]) / cell)), 1)
    gx, gy = np.meshgrid(lo[0] + cell * np.arange(nx + 1), lo[1] + cell * np.arange(ny + 1))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    rise = np.full(len(grid), -np.inf)   # the highest the railways lift the ground
    cap = np.full(len(grid), np.inf)     # the lowest any track lets it rise
    for xy, bottom, shelf, k in rails:
        _envelope(grid, xy, bottom, shelf, -k, rise, True)
        _envelope(grid, xy, bottom, shelf, 1.0 / 1.5, cap, False)
    for xy, low, shelf in others:
        _envelope(grid, xy, low, shelf, 1.0 / 1.5, cap, False)
    h = np.maximum(np.minimum(rise, cap), z0).reshape(ny + 1, nx + 1)
    h[0, :] = h[-1, :] = z0  # the edge meets the plain
    h[:, 0] = h[:, -1] = z0
    return Ground(z0, h, float(lo[0]), float(lo[1]), float(cell))


def _envelope(grid, xy, level, shelf, slope, out, upper: bool) -> None:
    """``out`` (per grid point) ← max (``upper``) or min of it and ``level(q) +
    slope × max(d − shelf, 0)``: ``q`` the nearest point of the polyline ``xy``
    (n, 2) (horizontally), ``d`` the distance to it, ``level(q)`` interpolated
    along the line from ``level`` (n,) at its points (so the ground follows the
    line's grade along it and falls or rises away from it across), in chunks."""
    from scipy.spatial import cKDTree

    n = len(xy)
    tree = cKDTree(xy)
    kk = min(n, 4)
    for a in range(0, len(grid), 4096):
        g = grid[a:a + 4096]
        _d, idx = tree.query(g, k=kk)
        idx = np.atleast_2d(idx).reshape(len(g), kk)
        i = np.clip(np.concatenate([idx - 1, idx], axis=1), 0, max(n - 2, 0))  # segments i .. i + 1
        j = np.minimum(i + 1, n - 1)
        pa, pb = xy[i], xy[j]
        ab = pb - pa
        t = np.clip(np.einsum("gkc,gkc->gk", g[:, None] - pa, ab) / np.maximum(np.einsum("gkc,gkc->gk", ab, ab),
                                                                                1e-12), 0.0, 1.0)
        d = np.linalg.norm(g[:, None] - (pa + t[..., None] * ab), axis=-1)
        near = np.argmin(d, axis=1)[:, None]
        ti, ii, jj = (np.take_along_axis(v, near, axis=1)[:, 0] for v in (t, i, j))
        val = level[ii] + ti * (level[jj] - level[ii]) + slope * np.maximum(np.take_along_axis(d, near, 1)[:, 0] - shelf, 0.0)
        if upper:
            out[a:a + 4096] = np.maximum(out[a:a + 4096], val)
        else:
            out[a:a + 4096] = np.minimum(out[a:a + 4096], val)


# --------------------------------------------------------------------------- the light map


@njit(cache=True, nogil=True)
def _rasterise(tri, mask):
    """Set ``mask[j, i]`` = 1 at every sample (i + ½, j + ½) inside a triangle of
    ``tri`` (n, 3, 2) (sample units, either winding)."""
    h, w = mask.shape
    for k in range(tri.shape[0]):
        ax, ay = tri[k, 0, 0], tri[k, 0, 1]
        bx, by = tri[k, 1, 0], tri[k, 1, 1]
        cx, cy = tri[k, 2, 0], tri[k, 2, 1]
        area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        if abs(area) < 1e-12:
            continue
        s = 1.0 if area > 0 else -1.0
        i0 = max(int(math.floor(min(ax, min(bx, cx)) - 0.5)), 0)
        i1 = min(int(math.ceil(max(ax, max(bx, cx)) - 0.5)), w - 1)
        j0 = max(int(math.floor(min(ay, min(by, cy)) - 0.5)), 0)
        j1 = min(int(math.ceil(max(ay, max(by, cy)) - 0.5)), h - 1)
        for j in range(j0, j1 + 1):
            py = j + 0.5
            for i in range(i0, i1 + 1):
                px = i + 0.5
                e0 = s * ((bx - ax) * (py - ay) - (by - ay) * (px - ax))
                e1 = s * ((cx - bx) * (py - by) - (cy - by) * (px - bx))
                e2 = s * ((ax - cx) * (py - cy) - (ay - cy) * (px - cx))
                if e0 >= 0.0 and e1 >= 0.0 and e2 >= 0.0:
                    mask[j, i] = 1


@dataclass
class LightMap:
    """The ground's brightness relative to the lit level plain (``ONE`` = 1), one
    byte a texel, over the rectangle from (``x0``, ``y0``), ``cell`` m texels, and
    its mip levels (each half the last, a texel the mean of four), each padded
    with a border of ``ONE``, packed: ``data`` (flat uint8), ``meta`` (levels, 6):
    offset, width, height (padded), x and y of the padded level's corner, texel
    size, m. Outside it the ground is the lit plain."""

    data: np.ndarray
    meta: np.ndarray

    @property
    def cell(self) -> float:
        return float(self.meta[0, 5])

    def level(self, k: int = 0) -> np.ndarray:
        off, w, h = (int(v) for v in self.meta[k, :3])
        return self.data[off:off + w * h].reshape(h, w)

    def at(self, x, y) -> np.ndarray:
        """Level-0 value (nearest texel) at points (x, y); ``ONE`` outside."""
        lev = self.level(0)
        _off, w, h, x0, y0, cell = self.meta[0]
        i = np.floor((np.asarray(x, float) - x0) / cell).astype(np.int64)
        j = np.floor((np.asarray(y, float) - y0) / cell).astype(np.int64)
        inside = (i >= 0) & (i < int(w)) & (j >= 0) & (j < int(h))
        return np.where(inside, lev[np.clip(j, 0, int(h) - 1), np.clip(i, 0, int(w) - 1)], ONE)


def light_map(ground: Ground, structure: geo.Quads | None, max_texels: int = LIGHT_MAP_TEXELS,
              min_cell: float = LIGHT_MAP_MIN_CELL) -> LightMap | None:
    """The light map of ``ground`` with the shadows of ``structure`` (static quads,
    world coordinates) cast on it by the sun; None when there is neither a raised
    ground nor a shadow."""
    tris = np.zeros((0, 3, 3))
    if structure is not None and len(structure.quads):
        q = structure.points[structure.quads]  # (m, 4, 3)
        flat = ground.cast(q.reshape(-1, 3)).reshape(q.shape)
        tris = np.concatenate([flat[:, [0, 1, 2]], flat[:, [0, 2, 3]]])
    boxes = []
    if len(tris):
        boxes.append((tris[..., :2].reshape(-1, 2).min(axis=0), tris[..., :2].reshape(-1, 2).max(axis=0)))
    if not ground.flat:
        ny, nx = ground.heights.shape[0] - 1, ground.heights.shape[1] - 1
        boxes.append((np.array([ground.x0, ground.y0]),
                      np.array([ground.x0 + nx * ground.cell, ground.y0 + ny * ground.cell])))
    if not boxes:
        return None
    lo = np.min([b[0] for b in boxes], axis=0) - 1.0
    hi = np.max([b[1] for b in boxes], axis=0) + 1.0
    cell = max(min_cell, math.sqrt(float(np.prod(hi - lo)) / max_texels))
    w = max(int(math.ceil((hi[0] - lo[0]) / cell)), 1)
    h = max(int(math.ceil((hi[1] - lo[1]) / cell)), 1)
    # shadows: 2 x 2 samples a texel
    mask = np.zeros((2 * h, 2 * w), dtype=np.uint8)
    if len(tris):
        uv = (tris[..., :2] - lo) * (2.0 / cell)
        _rasterise(np.ascontiguousarray(uv), mask)
    cover = mask.reshape(h, 2, w, 2).sum(axis=(1, 3)) * 0.25
    light = 1.0 - cover * (1.0 - SHADOW)
    if not ground.flat:  # the slopes' own lighting: per grid point of the ground, bilinear between them
        hf = ground.heights
        gy_, gx_ = np.gradient(hf, ground.cell)
        n = np.stack([-gx_, -gy_, np.ones_like(hf)], axis=-1)
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        lit = (shade(n.reshape(-1, 3)) / LEVEL_SHADE).reshape(hf.shape)
        sun = (geo.DIFFUSE * geo.LIGHTS[0][1] * np.clip(n.reshape(-1, 3) @ SUN, 0.0, None) / LEVEL_SHADE).reshape(hf.shape)
        xs = lo[0] + cell * (np.arange(w) + 0.5)
        ys = lo[1] + cell * (np.arange(h) + 0.5)
        gx, gy = np.meshgrid(xs, ys)
        level_sun = geo.DIFFUSE * geo.LIGHTS[0][1] * SUN[2] / LEVEL_SHADE  # outside the grid: the plain
        at = [Ground(z, f, ground.x0, ground.y0, ground.cell).height(gx, gy) for z, f in ((1.0, lit), (level_sun, sun))]
        light = at[0] - cover * at[1]
    levels = [np.clip(np.rint(light * ONE), 0, 255)]
    while min(levels[-1].shape) > 1 and len(levels) < 12:
        a = levels[-1]
        a = np.pad(a, ((0, a.shape[0] % 2), (0, a.shape[1] % 2)), constant_values=ONE)
        levels.append(0.25 * (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]))
    data, meta, off = [], [], 0
    for k, a in enumerate(levels):
        c = cell * 2 ** k
        p = np.pad(np.rint(a), 1, constant_values=ONE).astype(np.uint8)
        data.append(p.ravel())
        meta.append((off, p.shape[1], p.shape[0], lo[0] - c, lo[1] - c, c))
        off += p.size
    return LightMap(np.concatenate(data), np.array(meta, dtype=float))
