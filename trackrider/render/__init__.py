"""Rendering a ride off screen with pyvista: MP4 / GIF video or a PNG still.

``import trackrider.render`` does not import VTK; only ``render_ride`` does,
after ``check_rendering`` has shown (in a subprocess) that it can render here::

    from trackrider.render import render_ride
    render_ride("scenarios/classic_coaster.toml", "ride.mp4", camera="onride")
"""
from __future__ import annotations

from trackrider.render.probe import SYSTEM_PACKAGES, check_rendering
from trackrider.render.recording import Recording
from trackrider.render.spec import BodySpec, SceneSpec, TrackSpec, TrainSpec, scene_from_scenario
from trackrider.render.video import CAMERAS, RenderStats, frame_times, render_ride

__all__ = [
    "CAMERAS",
    "SYSTEM_PACKAGES",
    "BodySpec",
    "Recording",
    "RenderStats",
    "SceneSpec",
    "TrackSpec",
    "TrainSpec",
    "check_rendering",
    "frame_times",
    "render_ride",
    "scene_from_scenario",
]
