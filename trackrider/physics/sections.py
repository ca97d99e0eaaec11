"""The section types: one table entry each, read by every consumer (light: no numpy, no numba).

A section is a motor on a stretch of track (``World.add_section``, ``[[section]]``): the car's
bounded row along the track tangent T (row 6, docs/physics.md §6). Each type is one
``SectionType`` line in ``SECTIONS``:

* ``code``: its number in the kernels (``Sections.kind``) and in the recorded ``section`` column
  (never renumber one: results carry them);
* ``row``: what its row does (the rule is ``kernels.section_row``, one branch per code; a code
  without a branch is an error there, never another type's rule);
* ``ratchet``: it also has the anti-rollback ratchet row (a chain lift);
* ``block``: its role in the block logic (``blocks.py``): ``None`` it cannot end a block;
  ``"own"`` it may (``block = true``) and keeps its own rule while the block ahead is clear;
  ``"drive"`` it may and drives towards +s at ``speed`` while the block ahead is clear;
  ``"station"`` it always ends a block, holds every train ``dwell`` s and dispatches it;
* ``speed``: its ``speed`` when the file gives none (None: required);
* ``colour``: in the plots and the report; ``words``: what it does, for the docs and ``--help``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SectionType:
    name: str
    code: int
    row: str
    colour: str
    words: str
    ratchet: bool = False
    block: str | None = None
    speed: float | None = None


#: every section type (a new one: one line here and one branch in ``kernels.section_row``)
SECTIONS = {t.name: t for t in (
    SectionType("lift", 0, "drives towards +s at speed, pulls only", "#4c72b0",
                "drives to speed, pulls only, anti-rollback", ratchet=True, block="own"),
    SectionType("launch", 1, "thrust towards speed in the direction of travel, pushes only", "#dd8452",
                "thrust up to max_force towards speed"),
    SectionType("brake", 2, "holds at 0 either way", "#c44e52",
                "stops and holds (speed 0) or slows to speed, ±max_force", block="drive", speed=0.0),
    SectionType("trim", 3, "brakes only above speed, in the direction of travel", "#da8bc3",
                "brakes only above speed"),
    SectionType("booster", 4, "drives and brakes towards speed in the direction of travel", "#55a868",
                "drives and brakes towards speed", block="drive"),
    SectionType("station", 5, "as a booster while it dispatches; else held by the block logic", "#8c8c8c",
                "stops every arriving train, holds it dwell s, dispatches it at speed", block="station"),
)}

#: code → name (the ``section`` column's values)
NAMES = {t.code: name for name, t in SECTIONS.items()}
#: the colour of a section type that is not in the table (a hand-edited file)
UNKNOWN_COLOUR = "#999999"


def colour(name: str, unknown: str = UNKNOWN_COLOUR) -> str:
    """The plots' colour of section type ``name`` (``unknown`` for a type not in the table)."""
    t = SECTIONS.get(name)
    return t.colour if t is not None else unknown
