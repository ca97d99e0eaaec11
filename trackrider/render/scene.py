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
from trackrider.render.cameras import CameraPath  # noqa: E402
from trackrider.render.quality import Quality  # noqa: E402


def _polydata(q: geo.Quads) -> pv.PolyData:
    faces = np.hstack([np.full((len(q.quads), 1), 4, dtype=np.int64), q.quads.astype(np.int64)]).ravel()
    mesh = pv.PolyData(np.ascontiguousarray(q.points, dtype=np.float32), faces)
    mesh.cell_data["rgb"] = q.colours
    return mesh


def _rgb(c) -> tuple:
    return tuple(v / 255.0 for v in c)


class RideScene:
    """An off-screen plotter holding the static structure (one merged actor) and
    one box actor per recorded entity.

    spec : ``SceneSpec``; labels : recorded entity labels; extra_bounds : (2, 3)
    box the ground must also cover (the recorded positions), m; size : (w, h) px.
    """

    def __init__(self, spec, labels, extra_bounds, size, quality: Quality, gradient_sky: bool | None = None):
        self.size = (int(size[0]), int(size[1]))
        gradient_sky = quality.gradient_sky if gradient_sky is None else gradient_sky
        theme = pv.themes.Theme()
        theme.multi_samples = int(quality.multi_samples)
        theme.anti_aliasing = "msaa" if quality.multi_samples else None
        self.plotter = pl = pv.Plotter(off_screen=True, window_size=list(self.size), lighting="none", theme=theme)
        pl.ren_win.SetMultiSamples(int(quality.multi_samples))

        parts, z_low = [], []
        layouts = []
        for k, tr in enumerate(spec.tracks):
            on = [t for t in spec.trains if t.track_index == k]
            depth = max([t.height / 2.0 - t.cg_height for t in on], default=0.5)
            layout = geo.TrackLayout(
                gauge=tr.gauge,
                rail_depth=max(depth, 0.0),
                rail_radius=float(np.clip(0.07 * tr.gauge, 0.03, 0.1)),
                rail_sides=quality.rail_sides,
                sample_spacing=quality.sample_spacing,
                tie_spacing=quality.tie_spacing,
            )
            q, zl = geo.track_structure(tr.geometry, layout)
            parts.append(q)
            z_low.append(zl)
            layouts.append(layout)
        structure = geo.Quads.merge(parts)
        pts = [structure.points] if len(structure.points) else []
        pts.append(np.asarray(extra_bounds, dtype=float))
        allp = np.concatenate(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        z_ground = (min(z_low) if z_low else lo[2]) - 0.3
        for tr, layout in zip(spec.tracks, layouts):
            parts.append(geo.supports(tr.geometry, layout, z_ground))
        # ground and sky reach 2.5 x the layout's extent from its centre (inside the
        # far clipping distance of every camera, and around the overview camera)
        extent = max(float(np.linalg.norm(hi - lo)), 60.0)
        horizon = 2.5 * extent
        centre = np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), z_ground])
        self.bounds = np.array([[lo[0], lo[1], z_ground], hi])
        # the static structure never moves and the lights are fixed in the world:
        # bake the lighting into its colours and draw it unlit (the cheapest shader)
        static = _polydata(geo.Quads.merge(parts).lit(geo.LIGHTS, geo.AMBIENT, geo.DIFFUSE))
        pl.add_mesh(static, scalars="rgb", rgb=True, lighting=False, smooth_shading=False)
        # the ground: one quad with a repeated 2 x 2 checker texture (10 m squares);
        # far fewer triangles than a checkered mesh, same picture
        cell = geo.GROUND_CELL
        x0, x1, y0, y1 = centre[0] - horizon, centre[0] + horizon, centre[1] - horizon, centre[1] + horizon
        plane = pv.PolyData(
            np.array([[x0, y0, z_ground], [x1, y0, z_ground], [x1, y1, z_ground], [x0, y1, z_ground]], dtype=np.float32),
            np.array([4, 0, 1, 2, 3]),
        )
        plane.active_texture_coordinates = np.array(
            [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32
        ) / (2.0 * cell)
        texture = pv.Texture(geo.ground_texture())
        texture.repeat = True
        texture.interpolate = False
        texture.mipmap = False
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

        self.actors = []
        for label in labels:
            box = spec.box_of(label)
            if box is None:  # recorded but unknown to the scene: a small grey box
                size3, colour = (0.5, 0.5, 0.5), (150, 150, 150)
            else:
                size3, colour = box[0], box[1]
            mesh = pv.Cube(center=(0.0, 0.0, 0.0), x_length=size3[0], y_length=size3[1], z_length=size3[2])
            actor = pl.add_mesh(mesh, color=_rgb(colour), ambient=geo.AMBIENT, diffuse=geo.DIFFUSE, specular=0.15, smooth_shading=False)
            self.actors.append(actor)
        self._matrix = np.eye(4)
        self._pixels = vtkUnsignedCharArray()
        self.camera = pl.renderer.GetActiveCamera()

    def show(self, positions: np.ndarray, rotations: np.ndarray, camera: CameraPath, i: int) -> None:
        """Place every car (positions (ne, 3), rotations (ne, 3, 3)) and the camera (frame ``i`` of its path)."""
        m = self._matrix
        for actor, p, r in zip(self.actors, positions, rotations):
            m[:3, :3] = r
            m[:3, 3] = p
            actor.user_matrix = m
        cam = self.camera
        cam.SetPosition(*camera.position[i])
        cam.SetFocalPoint(*camera.focal_point[i])
        cam.SetViewUp(*camera.up[i])
        cam.OrthogonalizeViewUp()
        cam.SetViewAngle(camera.view_angle)
        cam.SetClippingRange(camera.near, camera.far)

    def grab(self) -> np.ndarray:
        """Render and read back the frame: (h, w, 3) uint8, top row first."""
        rw = self.plotter.ren_win
        rw.Render()  # a screenshot alone would not re-render
        w, h = self.size
        rw.GetPixelData(0, 0, w - 1, h - 1, 0, self._pixels, 0)
        img = np.frombuffer(memoryview(self._pixels), dtype=np.uint8)  # noqa: F841 (view)
        return img.reshape(h, w, 3)[::-1]

    def close(self) -> None:
        self.plotter.close()
