"""The pyvista scene of a ride: built once, then only car transforms and the
camera change from frame to frame.

Imports pyvista/vtk: import this module only from inside ``render_ride`` (after
``configure_offscreen``), never from ``trackrider`` itself.
"""
from __future__ import annotations

import numpy as np

from trackrider.render.probe import configure_offscreen

configure_offscreen()

import pyvista as pv  # noqa: E402
from vtkmodules.vtkCommonCore import vtkUnsignedCharArray  # noqa: E402

from trackrider.render import geometry as geo  # noqa: E402
from trackrider.render import models as car_models  # noqa: E402
from trackrider.render.cameras import CameraPath  # noqa: E402
from trackrider.render.hud import hud_lines, meter_point  # noqa: E402
from trackrider.render.quality import Quality  # noqa: E402

#: metres of ground one copy of the grass texture covers
GRASS_TILE = 24.0


def build_layouts(spec, quality) -> list:
    """The ``StyledLayout`` of every track (also a ``TrackLayout`` for the simple scene)."""
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


def _entity_model(spec, ent, role, layouts, simple, headless, inverts):
    """(CarModel or None, PolyData or None) of one entity."""
    if simple or ent is None:
        return None, None
    if role == "body":
        model = car_models.car_model(ent, role, 1.0, 0.5, 0.07, False)
    else:
        k = ent.track_index
        lay = layouts[k]
        shoulder = bool(inverts[k])
        model = car_models.car_model(ent, role, lay.gauge, lay.rail_depth, lay.rail_radius, shoulder, headless)
    return model, _smooth_polydata(model.quads, bake=False)


class _Hud:
    """The overlay: lines of text top left and a G meter (lateral across, vertical
    up) bottom left, drawn in pixels over the picture. Per frame only the text
    and the meter's dot change."""

    def __init__(self, pl, size):
        from vtkmodules.vtkRenderingCore import vtkActor2D, vtkPolyDataMapper2D, vtkTextActor

        w, h = size
        scale = h / 720.0
        self.text = vtkTextActor()
        tp = self.text.GetTextProperty()
        tp.SetFontSize(max(int(round(22 * scale)), 8))
        tp.SetFontFamilyToCourier()
        tp.BoldOn()
        tp.SetColor(1.0, 1.0, 1.0)
        tp.SetBackgroundColor(0.0, 0.0, 0.0)
        tp.SetBackgroundOpacity(0.45)
        tp.SetFrame(False)
        tp.SetVerticalJustificationToTop()
        tp.SetLineSpacing(1.15)
        self.text.SetPosition(12 * scale, h - 12 * scale)
        pl.renderer.AddViewProp(self.text)
        # the G meter: a translucent panel with axes at 0 g lateral and 0 and 1 g vertical
        side = 150.0 * scale
        self.box = (12 * scale, 12 * scale, 0.6 * side, side)
        x0, y0, bw, bh = self.box
        from trackrider.render.hud import VERT_RANGE

        def frac(g):
            return (g - VERT_RANGE[0]) / (VERT_RANGE[1] - VERT_RANGE[0])

        panel = pv.PolyData(np.array([[x0, y0, 0], [x0 + bw, y0, 0], [x0 + bw, y0 + bh, 0], [x0, y0 + bh, 0]], dtype=np.float32),
                            np.array([4, 0, 1, 2, 3]))
        lines = []
        for g in (0.0, 1.0):
            yy = y0 + frac(g) * bh
            lines.append([[x0, yy, 0], [x0 + bw, yy, 0]])
        lines.append([[x0 + 0.5 * bw, y0, 0], [x0 + 0.5 * bw, y0 + bh, 0]])
        lp = np.array(lines, dtype=np.float32).reshape(-1, 3)
        grid = pv.PolyData(lp, lines=np.array([[2, 2 * i, 2 * i + 1] for i in range(len(lines))]).ravel())
        for poly, colour, opacity, width in ((panel, (0, 0, 0), 0.45, 1), (grid, (0.85, 0.85, 0.85), 0.8, 1)):
            mapper = vtkPolyDataMapper2D()
            mapper.SetInputData(poly)
            actor = vtkActor2D()
            actor.SetMapper(mapper)
            actor.GetProperty().SetColor(*colour)
            actor.GetProperty().SetOpacity(opacity)
            actor.GetProperty().SetLineWidth(width)
            pl.renderer.AddViewProp(actor)
        r = 6.0 * scale
        ang = np.linspace(0, 2 * np.pi, 13)[:-1]
        dot = pv.PolyData(np.column_stack([r * np.cos(ang), r * np.sin(ang), np.zeros(12)]).astype(np.float32),
                          np.concatenate([[12], np.arange(12)]))
        mapper = vtkPolyDataMapper2D()
        mapper.SetInputData(dot)
        self.dot = vtkActor2D()
        self.dot.SetMapper(mapper)
        self.dot.GetProperty().SetColor(1.0, 0.85, 0.1)
        pl.renderer.AddViewProp(self.dot)
        self.label = vtkTextActor()
        lt = self.label.GetTextProperty()
        lt.SetFontSize(max(int(round(14 * scale)), 7))
        lt.SetColor(1, 1, 1)
        lt.SetFontFamilyToCourier()
        self.label.SetInput("G")
        self.label.SetPosition(x0 + bw + 4 * scale, y0 + frac(1.0) * bh - 6 * scale)
        pl.renderer.AddViewProp(self.label)
        self.last_text = ""

    def update(self, values, units):
        self.last_text = "\n".join(hud_lines(values, units))
        self.text.SetInput(self.last_text)
        fx, fy = meter_point(values.g_lateral, values.g_vertical)
        x0, y0, bw, bh = self.box
        self.dot.SetPosition(x0 + fx * bw, y0 + fy * bh)


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
        theme = pv.themes.Theme()
        theme.multi_samples = int(quality.multi_samples)
        theme.anti_aliasing = "msaa" if quality.multi_samples else None
        self.plotter = pl = pv.Plotter(off_screen=True, window_size=list(self.size), lighting="none", theme=theme)
        pl.ren_win.SetMultiSamples(int(quality.multi_samples))
        # cheap anti-aliasing: FXAA's sub-pixel blend on the read-back frame
        # (trackrider.render.antialias; ~5 ms, where VTK's own FXAA pass costs ~40 ms in software)
        self.antialias = not self.simple and not quality.multi_samples
        self._aa_out = None

        self.layouts = layouts = build_layouts(spec, quality)
        # riders of tracks that turn them upside down get shoulder restraints, others lap bars
        self.inverts = [bool(np.any(np.asarray(t.geometry.frames(np.linspace(0, float(t.geometry.length), 400)).binormal)[:, 2] < -0.2))
                        for t in spec.tracks]
        parts, z_low = [], []
        for k, tr in enumerate(spec.tracks):
            if self.simple:
                q, zl = geo.track_structure(tr.geometry, layouts[k])
            else:
                q, zl = geo.styled_track(tr.geometry, layouts[k])
            parts.append(q)
            z_low.append(zl)
        structure = geo.Quads.merge(parts)
        pts = [structure.points] if len(structure.points) else []
        pts.append(np.asarray(extra_bounds, dtype=float))
        allp = np.concatenate(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        z_ground = min(min(z_low) if z_low else lo[2], float(np.asarray(extra_bounds)[0][2]) - 0.5) - 0.3
        self.z_ground = z_ground
        if self.simple:
            for tr, layout in zip(spec.tracks, layouts):
                parts.append(geo.supports(tr.geometry, layout, z_ground))
        elif spec.tracks:
            parts.append(geo.supports_styled([t.geometry for t in spec.tracks], layouts, z_ground))
        # ground and sky reach 2.5 x the layout's extent from its centre (inside the
        # far clipping distance of every camera, and around the overview camera)
        extent = max(float(np.linalg.norm(hi - lo)), 60.0)
        horizon = 2.5 * extent
        centre = np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), z_ground])
        self.bounds = np.array([[lo[0], lo[1], z_ground], hi])
        # the static structure never moves and the lights are fixed in the world:
        # bake the lighting into its colours and draw it unlit (the cheapest shader)
        merged = geo.Quads.merge(parts)
        if self.simple:
            pl.add_mesh(_polydata(merged.lit(geo.LIGHTS, geo.AMBIENT, geo.DIFFUSE)), scalars="rgb", rgb=True,
                        lighting=False, smooth_shading=False)
        elif len(merged.quads):
            static = _smooth_polydata(merged, bake=True)
            actor = pl.add_mesh(static, scalars="rgb", rgb=True, lighting=False, smooth_shading=False,
                                interpolate_before_map=False)
            actor.prop.backface_culling = True  # closed solids wound outwards: half the triangles go early
        # the ground: one quad with a repeated texture made in code (grass; the
        # simple scene: a 2 x 2 checker of 10 m squares)
        x0, x1, y0, y1 = centre[0] - horizon, centre[0] + horizon, centre[1] - horizon, centre[1] + horizon
        plane = pv.PolyData(
            np.array([[x0, y0, z_ground], [x1, y0, z_ground], [x1, y1, z_ground], [x0, y1, z_ground]], dtype=np.float32),
            np.array([4, 0, 1, 2, 3]),
        )
        tile = 2.0 * geo.GROUND_CELL if self.simple else GRASS_TILE
        plane.active_texture_coordinates = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32) / tile
        texture = pv.Texture(geo.ground_texture() if self.simple else geo.grass_texture())
        texture.repeat = True
        texture.interpolate = not self.simple
        texture.mipmap = False  # mipmapping costs ~50 ms a frame in software at 1280x720
        pl.add_mesh(plane, texture=texture, lighting=False)

        # the same sun and fill light for the (moving, lit) cars; no light kit (cost)
        for direction, intensity in geo.LIGHTS:
            pl.add_light(pv.Light(position=direction, focal_point=(0, 0, 0), intensity=intensity, light_type="scene light"))
        # the sky: a dome with a gradient, inside the far clipping distance the
        # cameras use (4 x the scene's extent), or a plain background colour
        pl.set_background(_rgb(geo.SKY_TOP if gradient_sky else geo.SKY_MID))
        if gradient_sky:
            dp, dq, dc = geo.sky_dome(centre, 0.98 * horizon)
            dome = pv.PolyData(dp.astype(np.float32), np.hstack([np.full((len(dq), 1), 4), dq]).ravel())
            dome.point_data["rgb"] = dc
            pl.add_mesh(dome, scalars="rgb", rgb=True, lighting=False, smooth_shading=False)

        # the cars: one model per kind, built once (shared by the cars alike)
        self.actors = []
        self.models = []
        cache = {}
        for i, label in enumerate(labels):
            ent, role = spec.entity(label)
            key = (id(ent), role, i == headless)
            if key not in cache:
                cache[key] = _entity_model(spec, ent, role, layouts, self.simple, eye_seat if i == headless else None,
                                           self.inverts)
            model, mesh = cache[key]
            if self.simple or mesh is None:
                box = spec.box_of(label) if ent is not None else None
                size3, colour = (box[0], box[1]) if box is not None else ((0.5, 0.5, 0.5), (150, 150, 150))
                mesh = pv.Cube(center=(0.0, 0.0, 0.0), x_length=size3[0], y_length=size3[1], z_length=size3[2])
                actor = pl.add_mesh(mesh, color=_rgb(colour), ambient=geo.AMBIENT, diffuse=geo.DIFFUSE, specular=0.15,
                                    smooth_shading=False)
            else:
                actor = pl.add_mesh(mesh, scalars="rgb", rgb=True, ambient=geo.AMBIENT, diffuse=geo.DIFFUSE,
                                    specular=0.2, specular_power=20.0, smooth_shading=False)
                actor.prop.interpolation = "gouraud"
                actor.prop.backface_culling = True
            self.actors.append(actor)
            self.models.append(model)
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
        self._rods = None
        if self.links and not self.simple:
            n = len(self.links)
            # per joint: body a's centre -> its anchor -> b's anchor -> b's centre
            self._rods = pv.PolyData(np.zeros((4 * n, 3), dtype=np.float32),
                                     lines=np.array([[4, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3] for k in range(n)]).ravel())
            rod_actor = pl.add_mesh(self._rods, color=_rgb((60, 60, 66)), line_width=max(2.0, self.size[1] / 240.0),
                                    lighting=False)
            del rod_actor
        self._matrix = np.eye(4)
        self._pixels = vtkUnsignedCharArray()
        self.camera = pl.renderer.GetActiveCamera()
        self.hud = _Hud(pl, self.size) if hud else None

    def show(self, positions: np.ndarray, rotations: np.ndarray, camera: CameraPath, i: int, hud=None,
             units: str = "metric") -> None:
        """Place every car (positions (ne, 3), rotations (ne, 3, 3)) and the camera
        (frame ``i`` of its path); ``hud``: the frame's ``HudValues``."""
        if self.hud is not None and hud is not None:
            self.hud.update(hud, units)
        m = self._matrix
        for actor, p, r in zip(self.actors, positions, rotations):
            m[:3, :3] = r
            m[:3, 3] = p
            actor.user_matrix = m
        if self._rods is not None:
            pts = np.empty((4 * len(self.links), 3), dtype=np.float32)
            for k, (ia, aa, ib, ab) in enumerate(self.links):
                pa = aa if ia is None else positions[ia] + rotations[ia] @ aa
                pb = ab if ib is None else positions[ib] + rotations[ib] @ ab
                pts[4 * k] = pa if ia is None else positions[ia]
                pts[4 * k + 1], pts[4 * k + 2] = pa, pb
                pts[4 * k + 3] = pb if ib is None else positions[ib]
            self._rods.points = pts
        cam = self.camera
        cam.SetPosition(*camera.position[i])
        cam.SetFocalPoint(*camera.focal_point[i])
        cam.SetViewUp(*camera.up[i])
        cam.OrthogonalizeViewUp()
        cam.SetViewAngle(camera.view_angle)
        cam.SetClippingRange(camera.near, camera.far)

    def grab(self, antialias: bool = True) -> np.ndarray:
        """Render and read back the frame: (h, w, 3) uint8, top row first
        (anti-aliased unless ``antialias`` is False: the caller does it)."""
        rw = self.plotter.ren_win
        rw.Render()  # a screenshot alone would not re-render
        w, h = self.size
        rw.GetPixelData(0, 0, w - 1, h - 1, 0, self._pixels, 0)
        img = np.frombuffer(memoryview(self._pixels), dtype=np.uint8)  # noqa: F841 (view)
        img = img.reshape(h, w, 3)[::-1]
        if self.antialias and antialias:
            from trackrider.render.antialias import antialias

            if self._aa_out is None:
                self._aa_out = np.empty((h, w, 3), dtype=np.uint8)
            img = antialias(img, self._aa_out)
        return img

    def set_visible(self, entities, visible: bool) -> None:
        """Show or hide the actors of these entity indices (tests: what hides the view)."""
        for i in entities:
            self.actors[i].SetVisibility(bool(visible))

    def close(self) -> None:
        self.plotter.close()
