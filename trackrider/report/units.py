"""Units shown to people: metric (m, km/h) or imperial (ft, mph). Files stay SI.

``Units("imperial").speed(v)`` converts a speed in m/s to mph; ``.length(x)``
a length in m to ft; ``.speed_unit`` / ``.length_unit`` name the shown unit.
Metric shows speeds in km/h (what a designer reads), lengths in m.
"""
from __future__ import annotations

#: m/s → km/h
KMH = 3.6
#: m/s → mph (1 mile = 1609.344 m)
MPH = 3600.0 / 1609.344
#: m → ft (1 ft = 0.3048 m)
FT = 1.0 / 0.3048
SYSTEMS = ("metric", "imperial")


class Units:
    """The unit system of what is shown: ``metric`` (default) or ``imperial``."""

    def __init__(self, system: str = "metric"):
        if system not in SYSTEMS:
            raise ValueError(f"units must be one of {', '.join(SYSTEMS)}, got {system!r}")
        self.system = system
        imperial = system == "imperial"
        self.speed_factor = MPH if imperial else KMH
        self.speed_unit = "mph" if imperial else "km/h"
        self.length_factor = FT if imperial else 1.0
        self.length_unit = "ft" if imperial else "m"

    def speed(self, v_mps):
        """A speed (m/s, float or array) in the shown unit; None stays None."""
        return None if v_mps is None else v_mps * self.speed_factor

    def length(self, x_m):
        """A length (m, float or array) in the shown unit; None stays None."""
        return None if x_m is None else x_m * self.length_factor

    def __repr__(self):
        return f"Units({self.system!r})"


def top_speed(train: dict) -> tuple[float | None, str | None]:
    """A train's top speed from its ``summary.json`` entry: the largest ``|speed|`` (a train running
    towards −s has ``max_speed`` ≤ 0 and its top speed in ``min_speed``), and the key it came from
    (to find ``at[key]``); ``(None, None)`` when neither is known."""
    best, key = None, None
    for k in ("max_speed", "min_speed"):
        v = train.get(k)
        if isinstance(v, (int, float)) and v == v and (best is None or abs(v) > best):
            best, key = abs(float(v)), k
    return best, key
