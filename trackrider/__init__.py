"""trackrider: trains and roller coasters on 3D spline tracks.

The public API is loaded lazily so that ``import trackrider`` stays light
(no VTK, no matplotlib, no typer)::

    import trackrider as tr
    track = tr.load_curve("curves/first_drop.csv")
    result = tr.simulate(tr.load_scenario("scenarios/classic_coaster.toml"))
"""
from __future__ import annotations

import importlib
from time import time_ns as _time_ns

__version__ = "0.1.0"

#: when this process first imported the package: a source file changed later is not trusted to its kernel
#: cache (``trackrider.cache.sources_as_hashed``)
_IMPORTED_NS = _time_ns()

_LAZY = {
    "Track": "trackrider.curves",
    "Frame": "trackrider.curves",
    "Frames": "trackrider.curves",
    "curve_report": "trackrider.curves",
    "format_curve_report": "trackrider.curves",
    "straight": "trackrider.curves",
    "arc": "trackrider.curves",
    "helix": "trackrider.curves",
    "clothoid": "trackrider.curves",
    "loop": "trackrider.curves",
    "load_curve": "trackrider.curves",
    "save_nl2": "trackrider.curves",
    "save_curve": "trackrider.curves",
    "layout_figures": "trackrider.curves",
    "load_scenario": "trackrider.scenario",
    "simulate": "trackrider.sim",
    "Result": "trackrider.sim",
    "World": "trackrider.physics",
    "InputError": "trackrider.errors",
    "SimulationError": "trackrider.errors",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trackrider' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
