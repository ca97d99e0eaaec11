"""Rendering quality presets (no VTK here)."""
from __future__ import annotations

from dataclasses import dataclass

from trackrider.errors import InputError


@dataclass
class Quality:
    """Rendering and encoding settings (see ``quality_preset``)."""

    name: str = "normal"
    supersample: int = 1  # rendered this many times as large each way, averaged down (high: 2)
    rail_sides: int = 6
    sample_spacing: float = 0.5  # m, along the rails
    tie_spacing: float = 1.2  # m
    encoder_quality: float = 7.0  # imageio-ffmpeg quality, 0..10
    encoder_preset: str = "veryfast"  # x264 speed preset (it shares the CPU with the renderer)
    gradient_sky: bool = True  # the simple scene: the renderer's sky band (else a plain sky); otherwise the backdrop draws the sky
    simple: bool = False  # the plain scene (box cars, rails and ties, checker ground, no overlay, no FXAA): bench only


def quality_preset(quality) -> Quality:
    """``None``/"normal", "draft", "high", or a number 0..10 (the encoder quality
    of "normal"). Raises InputError (where ``--quality``) on anything else."""
    if quality is None:
        return Quality()
    if isinstance(quality, Quality):
        return quality
    if isinstance(quality, str):
        q = quality.strip().lower()
        if q == "normal":
            return Quality()
        if q == "draft":
            return Quality("draft", 1, 4, 1.0, 2.4, 5.0, "ultrafast")
        if q == "high":
            return Quality("high", 2, 10, 0.25, 0.8, 9.0, "medium")
        try:
            quality = float(q)
        except ValueError:
            raise InputError(where="--quality", message=f"quality must be draft, normal, high or a number 0..10, got {quality!r}") from None
    if isinstance(quality, bool) or not isinstance(quality, (int, float)) or not 0 <= quality <= 10:
        raise InputError(where="--quality", message=f"quality must be draft, normal, high or a number 0..10, got {quality!r}")
    return Quality(encoder_quality=float(quality))


