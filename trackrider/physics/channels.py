"""Columns of a recorded sample (one row per entity per recorded instant): one table.

``World.run`` hands its sink ``samples`` of shape ``(m, n_entities, N_CHANNELS)``. Each column
is one ``Channel`` line of ``CHANNELS`` (its name in the CSV header, unit, whether it is a
track column — NaN for a free body — and meaning); the indices (``S``, ``X``, …), ``NAMES``,
``INDEX`` and ``TRACK_CHANNELS`` derive from it, and docs/outputs.md's column table lists
every name (``tests/test_registries.py``). Units SI; G columns in units of g.

A new column: its line in ``CHANNELS``, its name in the indices' line below, the kernel that
records it (``kernels.py``), its row in docs/outputs.md.
"""
from __future__ import annotations

from typing import NamedTuple


class Channel(NamedTuple):
    name: str
    unit: str
    track: bool      # NaN for a free body (on no track)
    meaning: str


CHANNELS = (
    Channel("s", "m", True, "arc length of the car's track anchor on its track"),
    Channel("x", "m", False, "centre of mass"),
    Channel("y", "m", False, "centre of mass"),
    Channel("z", "m", False, "centre of mass"),
    Channel("speed", "m/s", True, "velocity of the anchor along the track tangent T, signed"),
    Channel("accel", "m/s²", False, "d speed / dt over the last step"),
    Channel("g_vertical", "g", False, "specific force at the rider point along the car's up axis"),
    Channel("g_lateral", "g", False, "... along the car's left axis"),
    Channel("g_longitudinal", "g", False, "... along the car's forward axis"),
    Channel("wheel_load", "N", True, "track-joint row 2 force (support), + when the track pushes up"),
    Channel("lateral_load", "N", True, "track-joint row 1 force (sideways, + towards the car's left)"),
    Channel("motor_force", "N", True, "row 6 force (section motor + lift anti-rollback), + forwards"),
    Channel("kinetic_energy", "J", False, "½ m v² + ½ ωᵀ I ω"),
    Channel("potential_energy", "J", False, "m g z"),
    Channel("qw", "", False, "orientation, unit quaternion body → world"),
    Channel("qx", "", False, "orientation"),
    Channel("qy", "", False, "orientation"),
    Channel("qz", "", False, "orientation"),
    Channel("vx", "m/s", False, "centre-of-mass velocity"),
    Channel("vy", "m/s", False, "centre-of-mass velocity"),
    Channel("vz", "m/s", False, "centre-of-mass velocity"),
    Channel("wx", "rad/s", False, "angular velocity (world axes)"),
    Channel("wy", "rad/s", False, "angular velocity (world axes)"),
    Channel("wz", "rad/s", False, "angular velocity (world axes)"),
    Channel("roll_torque", "N·m", True, "torque of the orientation rows about T (inner/outer rail split)"),
    Channel("resistance_force", "N", True, "rolling + drag + Davis force along T (negative when opposing +T)"),
    Channel("section", "", False, "code of the active section's type (physics/sections.py), -1 none"),
    Channel("flags", "", False, "bit field (below), stored as a float"),
)

# the column indices, one name per line of CHANNELS, in order (test_registries checks them)
(S, X, Y, Z, SPEED, ACCEL, G_VERTICAL, G_LATERAL, G_LONGITUDINAL, WHEEL_LOAD, LATERAL_LOAD, MOTOR_FORCE,
 KINETIC_ENERGY, POTENTIAL_ENERGY, QW, QX, QY, QZ, VX, VY, VZ, WX, WY, WZ, ROLL_TORQUE, RESISTANCE_FORCE,
 SECTION, FLAGS) = range(len(CHANNELS))
N_CHANNELS = len(CHANNELS)

#: column names in column order (the CSV header uses these words)
NAMES = tuple(c.name for c in CHANNELS)
INDEX = {name: i for i, name in enumerate(NAMES)}

#: channels that are NaN for a free body (not on a track)
TRACK_CHANNELS = tuple(i for i, c in enumerate(CHANNELS) if c.track)

# flag bits (FLAGS holds their sum as a float; test with int(flags) & BIT)
ON_TRACK = 1           # the car is held by its track joint
RAN_OFF = 2            # the car left an open track's end (rows off from then on)
SUPPORT_CLAMPED = 4    # one-sided support row 2 at its bound 0: the car lifts off (railway)
MOTOR_ACTIVE = 8       # a section's row 6 acts on the car
RESISTANCE_ACTIVE = 16 # rolling resistance / drag acts on the car
FREE_BODY = 32         # a free body, on no track
