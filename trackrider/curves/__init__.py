"""Track geometry: splines by arc length, rider frames, roll, builders, curve files.

Public API::

    Track, Frame, Frames           the track and its frames
    load_curve, save_curve, save_nl2   curve files (points CSV, NoLimits 2 CSV, JSON)
    straight, arc, helix, clothoid, loop    segment builders for Track.from_segments
    start, geometric                        force-vector design (the `force` builder is segments.force:
                                            the name `force` here is the module force.py; track.design_track)
    curve_report, format_curve_report       what ``trackrider curve FILE`` prints
    layout_figures                          a track's drops, inversions, bank … (stats.py)
    CompactTrack, PackedTracks, pack_tracks, eval_track   the numba table (compact.py)
"""
from __future__ import annotations

from .compact import CompactTrack, PackedTracks, eval_track, pack_tracks
from .track import Frame, Frames, Track

__all__ = ["Track", "Frame", "Frames", "CompactTrack", "PackedTracks", "pack_tracks", "eval_track"]

try:  # modules added as they land
    from .segments import arc, clothoid, geometric, helix, loop, start, straight  # noqa: F401

    __all__ += ["straight", "arc", "helix", "clothoid", "loop", "start", "geometric"]
except ImportError:  # pragma: no cover
    pass
try:
    from .io import curve_report, format_curve_report, load_curve, save_curve, save_nl2  # noqa: F401
    from .stats import layout_figures  # noqa: F401

    __all__ += ["load_curve", "save_curve", "save_nl2", "curve_report", "format_curve_report", "layout_figures"]
except ImportError:  # pragma: no cover
    pass
