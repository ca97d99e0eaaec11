"""Lighting of the moving cars on the CPU, per point, so that the renderer
draws them unlit (its cheapest shader). No VTK here.

The lights are fixed in the world (``geometry.LIGHTS``); a car turns, so per
frame its lights are turned into the car's own frame (two vectors, rather than
every normal into the world) and each point's colour is
``colour × (ambient + diffuse × Σ intensity × max(0, n·l)) + 255 × specular ×
Σ intensity × max(0, n·h)^power`` (``h`` the half vector between the light and
the direction to the camera from the car's centre): VTK's Phong model,
evaluated at the points and interpolated across the faces (Gouraud). With
software rendering (Mesa llvmpipe) this costs ~0.1 ms a car where VTK's
per-pixel lighting of seven cars cost ~3 ms a frame at 1280×720.
"""
from __future__ import annotations

import numpy as np

from trackrider.jit import njit
from trackrider.render import geometry as geo

SPECULAR, SPECULAR_POWER = 0.2, 20.0


@njit(cache=True, nogil=True, fastmath=True)
def _shade(normals, base, out, light, half, intensity, ambient, diffuse, specular, power):
    nl = light.shape[0]
    for i in range(normals.shape[0]):
        nx, ny, nz = normals[i, 0], normals[i, 1], normals[i, 2]
        d = ambient
        s = 0.0
        for k in range(nl):
            c = nx * light[k, 0] + ny * light[k, 1] + nz * light[k, 2]
            if c > 0.0:
                d += diffuse * intensity[k] * c
                e = nx * half[k, 0] + ny * half[k, 1] + nz * half[k, 2]
                if e > 0.0:
                    s += intensity[k] * e ** power
        s *= 255.0 * specular
        for j in range(3):
            v = base[i, j] * d + s + 0.5
            out[i, j] = np.uint8(min(v, 255.0))


#: a car's colours are recomputed when a light or the view has turned by more
#: than this in the car's frame since they were last computed (cos of 1°: the
#: diffuse shade changes by < 1.3 %, 3 levels of 255)
REUSE_COS = float(np.cos(np.radians(1.0)))


class CarShader:
    """Per-point colours of one car model: ``shade(rotation, position, eye, out, memo)``."""

    def __init__(self, normals: np.ndarray, colours: np.ndarray, lights=geo.LIGHTS, ambient: float = geo.AMBIENT,
                 diffuse: float = geo.DIFFUSE, specular: float = SPECULAR, power: float = SPECULAR_POWER):
        self.normals = np.ascontiguousarray(normals, dtype=np.float32)
        self.base = np.ascontiguousarray(colours, dtype=np.float32)
        d = np.array([np.asarray(v, float) / np.linalg.norm(v) for v, _i in lights])
        self.lights = d
        self.intensity = np.array([i for _v, i in lights], dtype=float)
        self.ambient, self.diffuse, self.specular, self.power = ambient, diffuse, specular, power

    def shade(self, rotation: np.ndarray, position: np.ndarray, eye: np.ndarray, out: np.ndarray,
              memo: list | None = None) -> bool:
        """Colours (n, 3) uint8 into ``out`` for the car turned by ``rotation`` (3, 3),
        its centre at ``position``, seen from ``eye`` (m, world). ``memo``: a list
        this car keeps between frames; when the lights and the view have turned
        less than 1° in its frame since ``out`` was computed, ``out`` is kept.
        Returns whether ``out`` changed."""
        light = self.lights @ rotation  # each row l: R^T l, the light in the car's frame
        view = (np.asarray(eye, float) - position) @ rotation
        view /= max(float(np.linalg.norm(view)), 1e-9)
        if memo is not None:
            if memo and np.all(np.sum(light * memo[0], axis=1) > REUSE_COS) and float(view @ memo[1]) > REUSE_COS:
                return False
            memo[:] = [light, view]
        half = light + view
        half /= np.maximum(np.linalg.norm(half, axis=1, keepdims=True), 1e-9)
        _shade(self.normals, self.base, out, light, half, self.intensity, self.ambient, self.diffuse, self.specular,
               self.power)
        return True
