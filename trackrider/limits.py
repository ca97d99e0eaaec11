"""How much work a scenario may ask for (docs/scenarios.md, "Limits"): its geometry, its
cars and bodies, and the size of its output.

The geometry limits hold for one track and for all the tracks of a scenario together: while
``trackrider.scenario.load_scenario`` builds a scenario's tracks it opens a shared budget
(``together()``), each track's checks compare against what is ``left`` of it *before*
anything is allocated, and each finished track ``spend``\\ s its share. So however many
tracks a file names, loading them stays within a few hundred MB (``tests/test_limits.py``
measures it at each bound). No heavy imports.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

#: points of the curve files (a points or NL2 CSV's rows, a JSON's ``points``); a spline through
#: them has at least two frame nodes per point interval
MAX_POINTS = 100_000
#: track length, m (the tabulated track has a row every 0.1 m: 500 000 rows)
MAX_TRACK_LENGTH = 50_000.0
#: rows of a tabulated track (every ≤ 0.1 m: MAX_TRACK_LENGTH)
MAX_TABLE_ROWS = 500_001
#: frame nodes (every ≤ 0.25 m, closer on tight curves)
MAX_NODES = 250_000
#: segments of segment-built tracks (each costs its own arrays)
MAX_SEGMENTS = 5_000

#: cars of all trains (a suspended car counts twice: trolley and body) and free bodies
MAX_ENTITIES = 1_000
#: bytes of a row of ``timeseries.csv`` as the output check counts them (47 fields at seven
#: significant digits; the bundled rides' rows are 170–340 bytes)
ROW_BYTES = 320
#: GB of ``timeseries.csv`` a run may write unless ``[simulation] max_output_gb`` says more
MAX_OUTPUT_GB = 1.0

LIMITS = {"points": MAX_POINTS, "length": MAX_TRACK_LENGTH, "nodes": MAX_NODES, "segments": MAX_SEGMENTS}
_used: ContextVar = ContextVar("trackrider_geometry_used", default=None)


@contextmanager
def together():
    """A budget shared by the tracks built inside the block (one scenario's)."""
    token = _used.set(dict.fromkeys(LIMITS, 0))
    try:
        yield
    finally:
        _used.reset(token)


def left(kind: str):
    """What is left of limit ``kind`` (``points``, ``length`` m, ``nodes``, ``segments``)."""
    used = _used.get()
    return LIMITS[kind] - (used[kind] if used else 0)


def spend(kind: str, amount) -> None:
    used = _used.get()
    if used is not None:
        used[kind] += amount


def limit_text(kind: str) -> str:
    """The limit as a message states it: ``at most 100,000, all of a scenario's tracks together``."""
    value = LIMITS[kind]
    text = f"{value / 1000:g} km" if kind == "length" else f"{value:,}"
    return f"at most {text}, all of a scenario's tracks together"


def entities(trains, bodies) -> int:
    """The cars and bodies a run records (a suspended car: its trolley and its hanging body; a car on
    bogies: its two wheel frames and its body; a Jacobs set or a trailered train of N cars: N + 1 frames
    and N bodies)."""
    def count(t):
        bogies = getattr(t.car, "bogies", "none")
        if bogies != "none":
            return 2 * int(t.cars) + (int(t.cars) if bogies == "two" else 1)
        return int(t.cars) * (2 if getattr(t.car, "suspended", False) else 1)

    return sum(count(t) for t in trains) + len(bodies)


def expected_output(simulation, n_entities: int, duration: float | None = None) -> tuple[int, float]:
    """``(rows, bytes)`` of the ``timeseries.csv`` a run of ``duration`` s (default the scenario's)
    writes: a row per entity per recorded instant."""
    duration = simulation.duration if duration is None else float(duration)
    steps = max(1, int(round(duration / simulation.dt)))
    rows = (steps // simulation.record_every) * n_entities
    return rows, float(rows) * ROW_BYTES


def check_output(simulation, n_entities: int, duration=None, path=None, where="simulation.duration",
                 runs: int = 1) -> None:
    """Refuse a run (or ``runs`` runs of a sweep) whose ``timeseries.csv`` would exceed
    ``simulation.max_output_gb`` together: an ``InputError`` stating the expected size and what
    to change."""
    from trackrider.errors import InputError

    rows, size = expected_output(simulation, n_entities, duration)
    allowed = float(getattr(simulation, "max_output_gb", MAX_OUTPUT_GB))
    if size * runs > allowed * 1e9:
        each = f"{runs:,} runs × " if runs > 1 else ""
        raise InputError(f"the {'sweep' if runs > 1 else 'run'} would write about {size * runs / 1e9:.3g} GB of "
                         f"timeseries.csv ({each}{n_entities:,} cars and bodies × {rows // max(1, n_entities):,} "
                         f"samples × ~{ROW_BYTES} bytes), more than simulation.max_output_gb = {allowed:g}: "
                         "shorten the run, lower record_hz, or raise max_output_gb", path=path, where=where)
