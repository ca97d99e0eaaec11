"""The pyvista scene of a ride: built once, then only car transforms and the
camera change from frame to frame.

Imports pyvista/vtk: import this module only from inside ``render_ride`` (after
``configure_offscreen``), never from ``trackrider`` itself.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.render.probe import configure_offscreen

configure_offscreen()

import pyvista as pv  # noqa: E402
from vtkmodules.vtkCommonCore import vtkUnsignedCharArray  # noqa: E402

from trackrider.render import geometry as geo  # noqa: E402
from trackrider.render import models as car_models  # noqa: E402
from trackrider.render.backdrop import SHADOW_KEY  # noqa: E402
from trackrider.render.cameras import CameraPath  # noqa: E402
from trackrider.render.ground import SUN  # noqa: E402
from trackrider.render.hud import blend as _blend  # noqa: E402
from trackrider.render.hud import blend_rgba as _blend_rgba  # noqa: E402
from trackrider.render.hud import hud_lines, meter_point  # noqa: E402
from trackrider.render.layout import carried_model, static_scene, switch_parts  # noqa: E402
from trackrider.render.quality import Quality  # noqa: E402
from trackrider.render.shading import CarShader  # noqa: E402

#: metres of ground one copy of the grass texture covers
GRASS_TILE = 24.0


def _entity_model(spec, ent, role, static, simple, headless, car=1):
    """(CarModel or None, PolyData or None) of one entity (car ``car`` of its train);
    a body that carries tracks: those tracks on its deck (``layout.carried_model``)."""
    if simple or ent is None:
        return None, None
    layouts, inverts = static.layouts, static.inverts
    if role == "body":
        deck = carried_model(static, ent)
        model = car_models.car_model(ent, role, 1.0, 0.5, 0.07, False) if deck is None else \
            car_models.CarModel(deck, [])
    else:
        k = ent.track_index
        lay = layouts[k]
        shoulder = bool(inverts[k])
        model = car_models.car_model(ent, role, lay.gauge, lay.rail_depth, lay.rail_radius, shoulder, headless, car)
    return model, _smooth_polydata(model.quads, bake=False)


class _Hud:
    """The overlay: lines of text top left and a G meter (lateral across, vertical
    up) bottom left, blended into the read-back frame (``draw``). The text is
    rasterised by VTK's FreeType text renderer (Courier bold, on a translucent
    box) into an image, not drawn by a text actor: re-laying out and drawing a
    text actor costs the software renderer ~1.5 ms a frame, this ~0.3 ms. The
    meter's panel, axes and label are drawn once; per frame only the text and
    the meter's dot change."""

    def __init__(self, size):
        from vtkmodules.vtkCommonDataModel import vtkImageData
        from vtkmodules.vtkRenderingCore import vtkTextProperty, vtkTextRenderer

        from trackrider.render.hud import LAT_RANGE, VERT_RANGE

        w, h = size
        self.size = (w, h)
        scale = h / 720.0
        self._renderer = vtkTextRenderer()
        self._image = vtkImageData()
        tp = self._text_prop = vtkTextProperty()
        tp.SetFontSize(max(int(round(22 * scale)), 8))
        tp.SetFontFamilyToCourier()
        tp.BoldOn()
        tp.SetColor(1.0, 1.0, 1.0)
        tp.SetBackgroundColor(0.0, 0.0, 0.0)
        tp.SetBackgroundOpacity(0.45)
        tp.SetFrame(False)
        tp.SetVerticalJustificationToTop()
        tp.SetLineSpacing(1.15)
        self.anchor = (12 * scale, h - 12 * scale)  # the text's top left, px from the bottom left
        # the G meter: a translucent panel, vertical G up (ticks every 1 g, lines at 0 and 1 g), lateral
        # G across (ticks every 1 g, a line at 0), labelled; a value off the scale is drawn on its edge,
        # red, with an arrow pointing off the panel
        bw, bh = 96.0 * scale, 168.0 * scale
        self.box = (12 * scale, 30 * scale, bw, bh)
        x0, y0, bw, bh = self.box
        (lo, hi), lat = VERT_RANGE, LAT_RANGE
        label_prop = vtkTextProperty()
        label_prop.SetFontSize(max(int(round(14 * scale)), 7))
        label_prop.SetColor(1, 1, 1)
        label_prop.SetFontFamilyToCourier()
        label_prop.BoldOn()
        label_prop.SetBackgroundOpacity(0.0)
        vert = [(f"{g:+d}" if g else "0", x0 + bw + 4 * scale, y0 + (g - lo) / (hi - lo) * bh)
                for g in range(int(lo), int(hi) + 1) if g in (int(lo), 0, 1, 2, 4, int(hi))]
        across = [("+2", x0, y0 - 4 * scale), ("0", x0 + 0.5 * bw, y0 - 4 * scale), ("-2", x0 + bw, y0 - 4 * scale)]
        title = [("G", x0 + bw + 4 * scale, y0 + bh + 4 * scale)]
        labels = [(self._rasterise(label_prop, t), x, y, "left", "middle") for t, x, y in vert]
        labels += [(self._rasterise(label_prop, t), x, y, "centre", "top") for t, x, y in across]
        labels += [(self._rasterise(label_prop, t), x, y, "left", "bottom") for t, x, y in title]
        # the static layer (panel, axes, ticks, labels), premultiplied: colour (hh, ww, 3) and alpha (hh, ww),
        # top row first
        right = int(math.ceil(x0 + bw + 4 * scale + max(lab[0][0].shape[1] for lab in labels))) + 2
        top = int(math.ceil(y0 + bh + 4 * scale + max(lab[0][0].shape[0] for lab in labels))) + 2
        self._meter_origin = (0, h - top)  # (x, row) of the layer's top left in the frame
        col = np.zeros((top, right, 3), dtype=np.float32)
        alpha = np.zeros((top, right), dtype=np.float32)

        def over(rows, cols, colour, a):
            col[rows, cols] = col[rows, cols] * (1 - a) + np.asarray(colour, np.float32) * a
            alpha[rows, cols] = alpha[rows, cols] * (1 - a) + a

        def rows_of(ya, yb):  # display y (from the bottom) ya..yb -> layer rows
            return slice(max(top - int(round(yb)), 0), max(top - int(round(ya)), 0))

        def cols_of(xa, xb):
            return slice(int(round(xa)), max(int(round(xb)), int(round(xa)) + 1))

        over(rows_of(y0, y0 + bh), cols_of(x0, x0 + bw), (0, 0, 0), 0.45)
        grey = 0.85 * 255
        tick = 5 * scale
        for g in range(int(lo), int(hi) + 1):
            yy = y0 + (g - lo) / (hi - lo) * bh
            if g in (0, 1):  # lines across
                over(rows_of(yy - 0.5, yy + 0.5), cols_of(x0, x0 + bw), (grey, grey, grey), 0.8)
            else:  # ticks on both edges
                for xa in (x0, x0 + bw - tick):
                    over(rows_of(yy - 0.5, yy + 0.5), cols_of(xa, xa + tick), (grey, grey, grey), 0.8)
        for g in range(-int(lat), int(lat) + 1):
            xx = x0 + (0.5 - 0.5 * g / lat) * bw
            if g == 0:
                over(rows_of(y0, y0 + bh), cols_of(xx - 0.5, xx + 0.5), (grey, grey, grey), 0.8)
            else:
                over(rows_of(y0, y0 + tick), cols_of(xx - 0.5, xx + 0.5), (grey, grey, grey), 0.8)
        for (lc, la, ox, oy), x, y, halign, valign in labels:
            hh, ww = la.shape
            x = x - (0.5 * ww if halign == "centre" else 0.0)
            y = y - (0.5 * hh if valign == "middle" else (hh if valign == "top" else 0.0))
            self._paste(col, alpha, lc, la, x, y, top)
        self._meter = (col, alpha)
        # the dot: a disc of radius 6 px (at 720 rows), its edge anti-aliased: yellow, red when off the scale
        r = 6.0 * scale
        n = int(math.ceil(r)) + 1
        yy, xx = np.mgrid[-n:n + 1, -n:n + 1]
        a = np.clip(r + 0.5 - np.hypot(xx, yy), 0.0, 1.0).astype(np.float32)
        self._dot = (a[..., None] * np.array([255, 0.85 * 255, 0.1 * 255], np.float32), a, n)
        self._dot_off = (a[..., None] * np.array([255, 0.2 * 255, 0.15 * 255], np.float32), a, n)
        # the arrow off the edge: a triangle pointing right (turned for the other edges), its base on the edge
        m = int(math.ceil(9 * scale)) + 1
        yy, xx = np.mgrid[-m:m + 1, 0:m + 1].astype(np.float32)
        inside = np.clip(np.minimum(0.9 * (m - xx) - np.abs(yy), xx + 0.5) + 0.5, 0.0, 1.0)
        arrows = {}
        for key, k in (((1, 0), 0), ((0, 1), 1), ((-1, 0), 2), ((0, -1), 3)):
            t = np.rot90(inside, k)
            arrows[key] = (t[..., None] * np.array([255, 0.2 * 255, 0.15 * 255], np.float32), t.astype(np.float32))
        self._arrows = arrows
        self._clipped = (0, 0)
        self.last_text = ""
        self._text = None
        self._dot_at = None

    def _rasterise_rgba(self, prop, text):
        """``text`` as (RGBA (hh, ww, 4) uint8, top row first, colour not premultiplied;
        x and y of its bottom left relative to the anchor, px)."""
        from vtkmodules.util.numpy_support import vtk_to_numpy

        dims = [0, 0]
        if not text or not self._renderer.RenderString(prop, text, self._image, dims, 72):
            return np.zeros((0, 0, 4), np.uint8), 0.0, 0.0
        nx, ny, _ = self._image.GetDimensions()
        ext = self._image.GetExtent()
        rgba = vtk_to_numpy(self._image.GetPointData().GetScalars()).reshape(ny, nx, 4)[: dims[1], : dims[0]]
        return np.ascontiguousarray(rgba[::-1]), float(ext[0]), float(ext[2])  # a copy: the image is reused

    def _rasterise(self, prop, text):
        """``text`` as (colour (hh, ww, 3) float32 premultiplied, alpha (hh, ww) float32 0..1,
        top row first, x and y of its bottom left relative to the anchor, px)."""
        rgba, ox, oy = self._rasterise_rgba(prop, text)
        rgba = rgba.astype(np.float32)
        alpha = np.ascontiguousarray(rgba[..., 3] / np.float32(255.0))
        return rgba[..., :3] * alpha[..., None], alpha, ox, oy

    @staticmethod
    def _paste(col, alpha, c, a, x, y, top):
        """Blend (c premultiplied, a) into the layer (col, alpha) with its bottom left at display (x, y)."""
        hh, ww = a.shape
        r0 = top - int(round(y)) - hh
        x0 = int(round(x))
        H, W = alpha.shape
        rs = slice(min(max(r0, 0), H), max(min(r0 + hh, H), 0))
        cs = slice(min(max(x0, 0), W), max(min(x0 + ww, W), 0))
        if rs.start >= rs.stop or cs.start >= cs.stop:
            return
        sub_a = a[rs.start - r0: rs.stop - r0, cs.start - x0: cs.stop - x0]
        sub_c = c[rs.start - r0: rs.stop - r0, cs.start - x0: cs.stop - x0]
        col[rs, cs] = col[rs, cs] * (1 - sub_a[..., None]) + sub_c  # c premultiplied
        alpha[rs, cs] = alpha[rs, cs] * (1 - sub_a) + sub_a

    def update(self, values, units):
        text = "\n".join(hud_lines(values, units))
        if text != self.last_text:
            self.last_text = text
            self._text = self._rasterise_rgba(self._text_prop, text)
        fx, fy, off = meter_point(values.g_lateral, values.g_vertical)
        x0, y0, bw, bh = self.box
        self._dot_at = (x0 + fx * bw, y0 + fy * bh, off)

    def state(self):
        """What ``draw`` needs of the current frame (kept, so a later ``update`` does not change it)."""
        return self._text, self._dot_at

    def draw(self, img: np.ndarray, state) -> None:
        """Blend the overlay of ``state`` (from ``state()``) into ``img`` (h, w, 3) uint8,
        top row first, in place."""
        text, dot_at = state
        h = img.shape[0]
        col, a = self._meter
        _blend(img, col, a, self._meter_origin[1], self._meter_origin[0])
        if dot_at is not None:
            x, y, off = dot_at
            dc, da, n = self._dot_off if off != (0, 0) else self._dot
            _blend(img, dc, da, h - int(round(y)) - n, int(round(x)) - n)
            for key in ((off[0], 0), (0, off[1])):  # an arrow off each edge the value is past
                if key == (0, 0):
                    continue
                ac, aa = self._arrows[key]
                ah, aw = aa.shape
                x0, y0, bw, bh = self.box
                # its base on the edge, in line with the dot
                ex = x0 + bw + 1 if key[0] > 0 else (x0 - aw - 1 if key[0] < 0 else x - 0.5 * aw)
                ey = y0 + bh + 1 if key[1] > 0 else (y0 - ah - 1 if key[1] < 0 else y - 0.5 * ah)
                _blend(img, ac, aa, h - int(round(ey)) - ah, int(round(ex)))
        if text is not None:
            rgba, ox, oy = text
            if rgba.size:
                x, y = self.anchor[0] + ox, self.anchor[1] + oy
                _blend_rgba(img, rgba, h - int(round(y)) - rgba.shape[0], int(round(x)))


def _polydata(q: geo.Quads) -> pv.PolyData:
    faces = np.hstack([np.full((len(q.quads), 1), 4, dtype=np.int64), q.quads.astype(np.int64)]).ravel()
    mesh = pv.PolyData(np.ascontiguousarray(q.points, dtype=np.float32), faces)
    mesh.cell_data["rgb"] = q.colours
    return mesh


def _rgb(c) -> tuple:
    return tuple(v / 255.0 for v in c)


def _smooth_polydata(q: geo.Quads, bake: bool) -> pv.PolyData:
    """Quads as PolyData with point colours: lighting baked in per point (``bake``,
    drawn unlit: Gouraud shading at no lighting cost) or point normals for VTK's
    lights (moving cars)."""
    quads = geo.outward_wound(q)
    faces = np.hstack([np.full((len(quads), 1), 4, dtype=np.int64), quads.astype(np.int64)]).ravel()
    mesh = pv.PolyData(np.ascontiguousarray(q.points, dtype=np.float32), faces)
    if bake:
        mesh.point_data["rgb"] = geo.lit_points(q)
    else:
        mesh.point_data["rgb"] = geo.point_colours(q)
        mesh.point_data["Normals"] = geo.point_normals(q).astype(np.float32)
        mesh.point_data.active_normals_name = "Normals"
    return mesh


def _key_polydata(q: geo.Quads) -> pv.PolyData:
    """Quads as PolyData with their colours per point, exactly (a key colour the backdrop looks for)."""
    faces = np.hstack([np.full((len(q.quads), 1), 4, dtype=np.int64), q.quads.astype(np.int64)]).ravel()
    mesh = pv.PolyData(np.ascontiguousarray(q.points, dtype=np.float32), faces)
    mesh.point_data["rgb"] = geo.point_colours(q) if len(q.quads) else np.zeros((len(q.points), 3), np.uint8)
    return mesh


#: a shadow is drawn this far above the ground it falls on (along the ground's normal), m
SHADOW_LIFT = 0.04


def _shadow_matrix(point, normal) -> np.ndarray:
    """The 4 × 4 matrix that moves every point along the sun's rays onto the plane
    through ``point`` (lifted ``SHADOW_LIFT``) with unit ``normal``: x − (n·(x − q) / n·L) L."""
    n = np.asarray(normal, dtype=float)
    q = np.asarray(point, dtype=float) + SHADOW_LIFT * n
    m = np.eye(4)
    m[:3, :3] -= np.outer(SUN, n) / float(n @ SUN)
    m[:3, 3] = SUN * float(n @ q) / float(n @ SUN)
    return m


class _Finish:
    """Makes one frame from what was read back: the backdrop (sky, ground), the
    anti-aliasing where there is more than the backdrop (or, supersampled, the
    average of each ``ss`` × ``ss`` block), the overlay."""

    __slots__ = ("backdrop", "hud", "raw", "size", "cam", "hud_state", "antialias", "free", "depth", "clip", "ss")

    def __init__(self, backdrop, hud, raw, size, cam, hud_state, antialias, free, depth=None, clip=None, ss=1):
        self.backdrop, self.hud, self.raw, self.size = backdrop, hud, raw, size
        self.cam, self.hud_state, self.antialias, self.free = cam, hud_state, antialias, free
        self.depth, self.clip, self.ss = depth, clip, ss

    def __call__(self) -> np.ndarray:
        from trackrider.render.antialias import antialias_where, downsample

        w, h = self.size
        img, busy = self.backdrop.compose(self.raw[0], (self.ss * w, self.ss * h), self.cam,
                                          depth=None if self.depth is None else self.depth[0],
                                          clip=self.clip or (0.1, 1000.0))
        self.free.append((self.raw, self.depth))  # the read-back buffers may take the next frame
        self.raw = self.depth = None
        if self.ss > 1:
            img = downsample(img, self.ss)
        elif self.antialias:
            img = antialias_where(img, busy, self.backdrop.span)
        if self.hud is not None:
            self.hud.draw(img, self.hud_state)
        return img


class RideScene:
    """An off-screen plotter holding the static structure (one merged actor),
    one actor per recorded entity (its car model, built once) and the overlay.

    spec : ``SceneSpec``; labels : recorded entity labels; extra_bounds : (2, 3)
    box the ground must also cover (the recorded positions), m; size : (w, h) px;
    headless : entity index whose model leaves out the head of the on-ride rider
    ``eye_seat`` (row, seat); hud : draw the overlay.
    """

    def __init__(self, spec, labels, extra_bounds, size, quality: Quality, gradient_sky: bool | None = None,
                 headless: int | None = None, eye_seat=None, hud: bool = False):
        self.size = (int(size[0]), int(size[1]))
        self.simple = bool(getattr(quality, "simple", False))
        gradient_sky = quality.gradient_sky if gradient_sky is None else gradient_sky
        # supersampling (quality high): the renderer and the sky and ground pass work on a picture
        # ``ss`` times as large each way, averaged down to the size asked for
        self.ss = 1 if self.simple else max(int(getattr(quality, "supersample", 1)), 1)
        self.render_size = (self.ss * self.size[0], self.ss * self.size[1])
        theme = pv.themes.Theme()
        theme.multi_samples = 0  # no multisampling: the key colours must come back exact
        theme.anti_aliasing = None
        self.plotter = pl = pv.Plotter(off_screen=True, window_size=list(self.render_size), lighting="none", theme=theme)
        pl.ren_win.SetMultiSamples(0)
        # cheap anti-aliasing: FXAA's sub-pixel blend on the read-back frame
        # (trackrider.render.antialias; ~1 ms, where VTK's own FXAA pass costs ~40 ms in software)
        self.antialias = not self.simple and self.ss == 1

        self.static = st = static_scene(spec, quality, extra_bounds)
        self.layouts = layouts = st.layouts
        self.inverts = st.inverts
        self.z_ground = z_ground = st.z_ground
        self.ground = st.ground
        self.bounds = st.bounds
        lo, hi = st.bounds
        # ground and sky reach 2.5 x the layout's extent from its centre (inside the
        # far clipping distance of every camera, and around the overview camera)
        extent = max(float(np.linalg.norm(hi - lo)), 60.0)
        horizon = 2.5 * extent
        centre = np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), z_ground])
        # the static structure never moves and the lights are fixed in the world:
        # bake the lighting into its colours and draw it unlit (the cheapest shader)
        # switches: the stands are static structure; the blades of each branch and the lamps are shown
        # by the switch's state frame by frame (``show_switches``)
        self.switches = [] if self.simple else switch_parts(spec, st)
        self._switch_specs = list(spec.switches) if self.switches else []
        st.extra = list(st.extra) + [p.stand for p in self.switches]
        merged = st.structure()
        if self.simple:
            pl.add_mesh(_polydata(merged.lit(geo.LIGHTS, geo.AMBIENT, geo.DIFFUSE)), scalars="rgb", rgb=True,
                        lighting=False, smooth_shading=False)
        elif len(merged.quads):
            static = _smooth_polydata(merged, bake=True)
            actor = pl.add_mesh(static, scalars="rgb", rgb=True, lighting=False, smooth_shading=False,
                                interpolate_before_map=False)
            actor.prop.backface_culling = True  # closed solids wound outwards: half the triangles go early
        # the ground and the sky: drawn into the read-back frame where the
        # background shows (trackrider.render.backdrop: ~2.5 ms a frame, where the
        # renderer's textured quad and sky band cost ~7 ms in software), the
        # ground's slopes and the static structure's shadows from a light map,
        # the cars' shadows where the renderer drew them in the shadow key; in
        # the simple scene, by the renderer: a quad with a 2 x 2 checker of 10 m
        # squares and a band of sky
        self.backdrop = None
        self.terrain = None
        if not self.simple:
            from trackrider.render.backdrop import HAZE_HALF, KEY, TERRAIN_KEY, Backdrop
            from trackrider.render.ground import light_map

            self.light_map = light_map(st.ground, merged if len(merged.quads) else None)
            self.backdrop = Backdrop(z_ground, GRASS_TILE, geo.grass_texture(), max(HAZE_HALF, horizon),
                                     self.light_map)
            pl.set_background(_rgb(KEY))
            if not st.ground.flat:  # the raised ground: drawn in the terrain key, its points read from the depth buffer
                terrain = st.ground.mesh(TERRAIN_KEY)
                self.terrain = pl.add_mesh(_key_polydata(terrain), scalars="rgb", rgb=True, lighting=False,
                                           smooth_shading=False, interpolate_before_map=False)
        else:
            x0, x1, y0, y1 = centre[0] - horizon, centre[0] + horizon, centre[1] - horizon, centre[1] + horizon
            plane = pv.PolyData(
                np.array([[x0, y0, z_ground], [x1, y0, z_ground], [x1, y1, z_ground], [x0, y1, z_ground]],
                         dtype=np.float32),
                np.array([4, 0, 1, 2, 3]),
            )
            plane.active_texture_coordinates = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
                                                        dtype=np.float32) / (2.0 * geo.GROUND_CELL)
            texture = pv.Texture(geo.ground_texture())
            texture.repeat = True
            texture.interpolate = False
            texture.mipmap = False  # mipmapping costs ~50 ms a frame in software at 1280x720
            pl.add_mesh(plane, texture=texture, lighting=False)
            # the sky: a dome with a gradient, inside the far clipping distance the
            # cameras use (4 x the scene's extent), or a plain background colour
            pl.set_background(_rgb(geo.SKY_TOP if gradient_sky else geo.SKY_MID))
            if gradient_sky:
                dp, dq, dc = geo.sky_dome(centre, 0.98 * horizon)
                dome = pv.PolyData(dp.astype(np.float32), np.hstack([np.full((len(dq), 1), 4), dq]).ravel())
                dome.point_data["rgb"] = dc
                pl.add_mesh(dome, scalars="rgb", rgb=True, lighting=False, smooth_shading=False)
        self._switch_actors = []
        for parts in self.switches:
            blades = []
            for q in parts.blades:
                actor = pl.add_mesh(_smooth_polydata(q, bake=True), scalars="rgb", rgb=True, lighting=False,
                                    smooth_shading=False, interpolate_before_map=False)
                actor.prop.backface_culling = True
                blades.append(actor)
            lamps = [pl.add_mesh(_key_polydata(q), scalars="rgb", rgb=True, lighting=False, smooth_shading=False,
                                 interpolate_before_map=False) for q in parts.lamps]
            self._switch_actors.append((blades, lamps))
        self.show_switches(0.0)
        # the same sun and fill light for the (moving, lit) cars; no light kit (cost)
        for direction, intensity in geo.LIGHTS:
            pl.add_light(pv.Light(position=direction, focal_point=(0, 0, 0), intensity=intensity, light_type="scene light"))

        # the cars: one model per kind, built once (shared by the cars alike)
        self.actors = []
        self.models = []
        self.shaders = []
        self.shadow_actors = []
        cache, shaders, shadow_meshes = {}, {}, {}
        for i, label in enumerate(labels):
            ent, role = spec.entity(label)
            key = (id(ent), role, i == headless, car_models.model_key(ent, role, label[1]))
            if key not in cache:
                cache[key] = _entity_model(spec, ent, role, st, self.simple, eye_seat if i == headless else None,
                                           label[1])
            model, mesh = cache[key]
            if self.simple or mesh is None:
                box = spec.box_of(label) if ent is not None else None
                size3, colour = (box[0], box[1]) if box is not None else ((0.5, 0.5, 0.5), (150, 150, 150))
                mesh = pv.Cube(center=(0.0, 0.0, 0.0), x_length=size3[0], y_length=size3[1], z_length=size3[2])
                actor = pl.add_mesh(mesh, color=_rgb(colour), ambient=geo.AMBIENT, diffuse=geo.DIFFUSE, specular=0.15,
                                    smooth_shading=False)
                shader = None
            else:
                # lit on the CPU per point every frame (trackrider.render.shading), drawn unlit:
                # each car has its own colours, the shape is shared
                shader = shaders.get(key)
                if shader is None:
                    shader = shaders[key] = CarShader(mesh.point_data["Normals"], mesh.point_data["rgb"])
                own = pv.PolyData()
                own.ShallowCopy(mesh)
                own.point_data.remove("Normals")
                own.point_data["rgb"] = np.array(mesh.point_data["rgb"], dtype=np.uint8)
                actor = pl.add_mesh(own, scalars="rgb", rgb=True, lighting=False, smooth_shading=False,
                                    interpolate_before_map=False)
                actor.prop.backface_culling = True
                shader = (shader, own.point_data["rgb"], own.GetPointData().GetArray("rgb"), [])
            self.shaders.append(shader)
            self.actors.append(actor)
            self.models.append(model)
            # its shadow: the same shape in the shadow key, flattened onto the ground along the sun's rays
            if self.backdrop is not None:
                if key not in shadow_meshes:
                    flat = pv.PolyData()
                    flat.ShallowCopy(mesh)
                    for name in list(flat.point_data.keys()):
                        flat.point_data.remove(name)
                    flat.point_data["rgb"] = np.tile(np.asarray(SHADOW_KEY, dtype=np.uint8), (flat.n_points, 1))
                    shadow_meshes[key] = flat
                actor = pl.add_mesh(shadow_meshes[key], scalars="rgb", rgb=True, lighting=False, smooth_shading=False,
                                    interpolate_before_map=False)
                # flattened, a face that faced the sun keeps its winding seen from above, one that faced
                # away turns over: culling back faces draws only the sunlit ones (whose shadows cover the rest)
                actor.prop.backface_culling = True
                self.shadow_actors.append(actor)
        # joints as rods between their anchors, moved every frame
        self.links = []
        index = {lab: i for i, lab in reversed(list(enumerate(labels)))}
        index.update({(n, 1): i for i, (n, _c) in reversed(list(enumerate(labels))) if (n, 1) not in index})
        for link in getattr(spec, "links", []):
            ia = index.get(link.a) if link.a is not None else None
            ib = index.get(link.b) if link.b is not None else None
            if (link.a is not None and ia is None) or (link.b is not None and ib is None):
                continue
            self.links.append((ia, np.asarray(link.anchor_a, float), ib, np.asarray(link.anchor_b, float)))
        self._rods = self._rod_shadow = None
        if self.links and not self.simple:
            n = len(self.links)
            # per joint: body a's centre -> its anchor -> b's anchor -> b's centre
            self._rods = pv.PolyData(np.zeros((4 * n, 3), dtype=np.float32),
                                     lines=np.array([[4, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3] for k in range(n)]).ravel())
            pl.add_mesh(self._rods, color=_rgb((60, 60, 66)), line_width=max(2.0, self.render_size[1] / 240.0),
                        lighting=False)
            if self.backdrop is not None:  # and their shadows on the plain
                rod_shadow = pv.PolyData()
                rod_shadow.ShallowCopy(self._rods)
                rod_shadow.point_data["rgb"] = np.tile(np.asarray(SHADOW_KEY, dtype=np.uint8), (4 * n, 1))
                actor = pl.add_mesh(rod_shadow, scalars="rgb", rgb=True, lighting=False,
                                    line_width=max(2.0, self.render_size[1] / 240.0))
                actor.user_matrix = _shadow_matrix(np.array([0.0, 0.0, z_ground]), np.array([0.0, 0.0, 1.0]))
                self._rod_shadow = rod_shadow
        self._matrix = np.eye(4)
        self._flat = _shadow_matrix(np.array([0.0, 0.0, z_ground]), np.array([0.0, 0.0, 1.0]))
        self._pixels = vtkUnsignedCharArray()
        #: read-back buffers (RGBA, numpy array and the VTK array over its memory) free to take a frame:
        #: a frame finished in a writer's thread gives its buffer back there
        self._free = []
        self.camera = pl.renderer.GetActiveCamera()
        self.hud = _Hud(self.size) if hud else None

    def show(self, positions: np.ndarray, rotations: np.ndarray, camera: CameraPath, i: int, hud=None,
             units: str = "metric") -> None:
        """Place every car (positions (ne, 3), rotations (ne, 3, 3)) and the camera
        (frame ``i`` of its path); ``hud``: the frame's ``HudValues``."""
        if self.hud is not None and hud is not None:
            self.hud.update(hud, units)
        m = self._matrix
        eye = camera.position[i]
        for actor, shader, p, r in zip(self.actors, self.shaders, positions, rotations):
            m[:3, :3] = r
            m[:3, 3] = p
            actor.user_matrix = m
            if shader is not None and shader[0].shade(r, p, eye, shader[1], shader[3]):
                shader[2].Modified()  # the colours go to the renderer again
        if self.shadow_actors:
            planes = None if self.ground.flat else self._shadow_planes(positions)
            for k, (actor, p, r) in enumerate(zip(self.shadow_actors, positions, rotations)):
                m[:3, :3] = r
                m[:3, 3] = p
                flat = self._flat if planes is None else _shadow_matrix(planes[0][k], planes[1][k])
                actor.user_matrix = flat @ m
        if self._rods is not None:
            pts = np.empty((4 * len(self.links), 3), dtype=np.float32)
            for k, (ia, aa, ib, ab) in enumerate(self.links):
                pa = aa if ia is None else positions[ia] + rotations[ia] @ aa
                pb = ab if ib is None else positions[ib] + rotations[ib] @ ab
                pts[4 * k] = pa if ia is None else positions[ia]
                pts[4 * k + 1], pts[4 * k + 2] = pa, pb
                pts[4 * k + 3] = pb if ib is None else positions[ib]
            self._rods.points = pts
            if self._rod_shadow is not None:
                self._rod_shadow.points = pts
        cam = self.camera
        cam.SetPosition(*camera.position[i])
        cam.SetFocalPoint(*camera.focal_point[i])
        cam.SetViewUp(*camera.up[i])
        cam.OrthogonalizeViewUp()
        cam.SetViewAngle(camera.view_angle)
        cam.SetClippingRange(camera.near, camera.far)

    def show_switches(self, t: float) -> None:
        """Set every switch as it is at ride time ``t`` s: the blades of the branch it is set to shown,
        the others hidden (all hidden while the points move), its lamp green, red while they move."""
        for sw, (blades, lamps) in zip(self._switch_specs, self._switch_actors):
            pos, moving = sw.state(t)
            for b, actor in enumerate(blades):
                actor.SetVisibility(bool(b == pos and not moving))
            lamps[0].SetVisibility(not moving)
            lamps[1].SetVisibility(moving)

    def grab(self, deferred: bool = False):
        """Render and read back the frame: (h, w, 3) uint8, top row first, with
        the sky, the ground and the overlay. With a backdrop every call returns
        a new array; otherwise (the simple scene) the array may be reused by the
        next call.

        ``deferred`` (with a backdrop): return instead a callable that makes
        the frame (the backdrop, anti-aliasing and overlay, which release the
        GIL), so that a writer's thread does it while the next frame renders."""
        rw = self.plotter.ren_win
        rw.Render()  # a screenshot alone would not re-render
        w, h = self.size
        if self.backdrop is None:
            rw.GetPixelData(0, 0, w - 1, h - 1, 0, self._pixels, 0)
            return np.frombuffer(memoryview(self._pixels), dtype=np.uint8).reshape(h, w, 3)[::-1]
        # RGBA, the renderer's own layout (cheaper to read than RGB), straight into a buffer of ours
        # (and the depth buffer where the raised ground was drawn)
        big_w, big_h = self.render_size
        buf, depth = self._free.pop() if self._free else self._new_buffers()
        rw.GetRGBACharPixelData(0, 0, big_w - 1, big_h - 1, 0, buf[1], 0)
        cam = self.camera
        clip = None
        if depth is not None:
            rw.GetZbufferData(0, 0, big_w - 1, big_h - 1, depth[1])
            clip = cam.GetClippingRange()
        vec = self.backdrop.camera_vector(cam.GetPosition(), cam.GetFocalPoint(), cam.GetViewUp(),
                                          cam.GetViewAngle(), w / h)
        hud_state = self.hud.state() if self.hud is not None else None
        make = _Finish(self.backdrop, self.hud, buf, self.size, vec, hud_state, self.antialias, self._free, depth,
                       clip, self.ss)
        return make if deferred else make()

    def _new_buffers(self):
        """((array (h·w·4,) uint8, the vtkUnsignedCharArray over its memory), and, when the
        raised ground is drawn, (array (h·w,) float32, the vtkFloatArray over it), else None):
        VTK reads the pixels (and depths) into them."""
        from vtkmodules.util.numpy_support import numpy_to_vtk

        w, h = self.render_size
        arr = np.zeros((w * h, 4), dtype=np.uint8)
        vtk_arr = numpy_to_vtk(arr, deep=False)  # same size as a frame: VTK writes into it, never reallocates
        depth = None
        if self.terrain is not None:
            z = np.zeros(w * h, dtype=np.float32)
            depth = (z, numpy_to_vtk(z, deep=False))
        return (arr.reshape(-1), vtk_arr), depth

    def _shadow_planes(self, positions):
        """(points (ne, 3), unit normals (ne, 3)) of the ground planes the entities' shadows fall on."""
        q = self.ground.cast(positions)
        return q, self.ground.normal(q[:, 0], q[:, 1]).reshape(-1, 3)

    def coverage(self, target: int) -> tuple[int, int]:
        """An id buffer of the frame placed by ``show``: (pixels where entity ``target``
        is seen, pixels it covers drawn alone). Everything is drawn flat, black, the
        target white; the scene is restored after."""
        rw = self.plotter.ren_win
        ren = self.plotter.renderer
        actors = [ren.GetActors().GetItemAsObject(k) for k in range(ren.GetActors().GetNumberOfItems())]
        saved = [(a, a.GetVisibility(), a.GetMapper().GetScalarVisibility(), a.GetProperty().GetColor(),
                  a.GetProperty().GetLighting()) for a in actors]
        background = ren.GetBackground()
        shadows = {id(a) for a in self.shadow_actors}
        try:
            ren.SetBackground(0.0, 0.0, 0.0)
            for a in actors:
                a.GetMapper().ScalarVisibilityOff()
                a.GetProperty().LightingOff()
                a.GetProperty().SetColor(0.0, 0.0, 0.0)
                if id(a) in shadows:
                    a.SetVisibility(False)
            self.actors[target].GetProperty().SetColor(1.0, 1.0, 1.0)
            self.actors[target].SetVisibility(True)
            counts = []
            for alone in (False, True):
                if alone:
                    for a in actors:
                        a.SetVisibility(a is self.actors[target])
                rw.Render()
                w, h = self.render_size
                rw.GetPixelData(0, 0, w - 1, h - 1, 0, self._pixels, 0)
                img = np.frombuffer(memoryview(self._pixels), dtype=np.uint8)
                counts.append(int(np.count_nonzero(img[0::3] > 127)))
        finally:
            ren.SetBackground(*background)
            for a, vis, scal, col, lit in saved:
                a.SetVisibility(vis)
                a.GetMapper().SetScalarVisibility(scal)
                a.GetProperty().SetColor(*col)
                a.GetProperty().SetLighting(lit)
        return counts[0], counts[1]

    def set_visible(self, entities, visible: bool) -> None:
        """Show or hide the actors of these entity indices (tests: what hides the view)."""
        for i in entities:
            self.actors[i].SetVisibility(bool(visible))

    def close(self) -> None:
        self.plotter.close()
