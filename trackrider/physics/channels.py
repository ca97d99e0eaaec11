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
    Channel("track", "", True, "index of the car's track (a network's cars change track)"),
    # a railway world's (docs/physics.md §10; NaN elsewhere and where a car has no such part)
    Channel("coupler_force", "N", True, "force in the coupler behind the car, + draft (tension), − buff"),
    Channel("tractive_force", "N", True, "a locomotive's traction (+) or dynamic brake (−) along T"),
    Channel("notch", "", True, "a locomotive's power notch"),
    Channel("dynamic_brake", "", True, "a locomotive's dynamic-brake setting, 0 … 1"),
    Channel("brake_force", "N", True, "the air brake's force along T (negative when opposing +T)"),
    Channel("brake_pressure", "bar", True, "brake-cylinder pressure"),
    Channel("pipe_pressure", "bar", True, "brake-pipe pressure at the car"),
    # a car with rider_rows = 2 (docs/physics.md §5; NaN elsewhere): its front and rear rows of riders
    Channel("g_vertical_front", "g", False, "specific force at the front row along the car's up axis"),
    Channel("g_lateral_front", "g", False, "... along the car's left axis"),
    Channel("g_longitudinal_front", "g", False, "... along the car's forward axis"),
    Channel("g_vertical_rear", "g", False, "specific force at the rear row along the car's up axis"),
    Channel("g_lateral_rear", "g", False, "... along the car's left axis"),
    Channel("g_longitudinal_rear", "g", False, "... along the car's forward axis"),
)

# the column indices, one name per line of CHANNELS, in order (test_registries checks them)
(S, X, Y, Z, SPEED, ACCEL, G_VERTICAL, G_LATERAL, G_LONGITUDINAL, WHEEL_LOAD, LATERAL_LOAD, MOTOR_FORCE,
 KINETIC_ENERGY, POTENTIAL_ENERGY, QW, QX, QY, QZ, VX, VY, VZ, WX, WY, WZ, ROLL_TORQUE, RESISTANCE_FORCE,
 SECTION, FLAGS, TRACK, COUPLER_FORCE, TRACTIVE_FORCE, NOTCH, DYNAMIC_BRAKE, BRAKE_FORCE, BRAKE_PRESSURE,
 PIPE_PRESSURE, G_VERTICAL_FRONT, G_LATERAL_FRONT, G_LONGITUDINAL_FRONT, G_VERTICAL_REAR, G_LATERAL_REAR,
 G_LONGITUDINAL_REAR) = range(len(CHANNELS))
N_CHANNELS = len(CHANNELS)

#: column names in column order (the CSV header uses these words)
NAMES = tuple(c.name for c in CHANNELS)
INDEX = {name: i for i, name in enumerate(NAMES)}

#: channels that are NaN for a free body (not on a track)
TRACK_CHANNELS = tuple(i for i, c in enumerate(CHANNELS) if c.track)

#: columns of a reported joint's sample (``joints.csv``: each joint that holds or drives a body carrying
#: tracks, docs/outputs.md); a hinge's in rad, rad/s and N·m, a prismatic joint's in m, m/s and N
JOINT_CHANNELS = (
    Channel("travel", "m | rad", False, "the joint's coordinate from the start: travel along its axis, angle about it"),
    Channel("speed", "m/s | rad/s", False, "its rate"),
    Channel("drive", "N | N·m", False, "force (torque) of its motor, hold, end stop and spring along (about) the axis, "
            "+ when it drives the coordinate up"),
    Channel("power", "W", False, "drive × speed: + when the drive does work on the mechanism"),
    Channel("force", "N", False, "magnitude of the joint's whole force on its body that carries tracks"),
    Channel("torque", "N·m", False, "magnitude of its whole torque on that body about the joint's anchor"),
    Channel("held", "", False, "1 while a hold locks it"),
)
(J_TRAVEL, J_SPEED, J_DRIVE, J_POWER, J_FORCE, J_TORQUE, J_HELD) = range(len(JOINT_CHANNELS))
JOINT_NAMES = tuple(c.name for c in JOINT_CHANNELS)

# flag bits (FLAGS holds their sum as a float; test with int(flags) & BIT)
ON_TRACK = 1           # the car is held by its track joint
RAN_OFF = 2            # the car left an open track's end (rows off from then on)
SUPPORT_CLAMPED = 4    # one-sided support row 2 at its bound 0: the car lifts off (railway)
MOTOR_ACTIVE = 8       # a section's row 6 acts on the car
RESISTANCE_ACTIVE = 16 # rolling resistance / drag acts on the car
FREE_BODY = 32         # a free body, on no track
WHEEL_SLIP = 64        # a locomotive's wheels slip (railway)
#: the railway channels: columns of timeseries.csv in a railway world only (``record.RAIL_COLUMNS``)
RAIL = tuple(range(COUPLER_FORCE, PIPE_PRESSURE + 1))
#: the rider rows' G (front: vertical, lateral, longitudinal; then rear): columns of timeseries.csv only
#: when a car has rider_rows = 2 (``record.ROW_COLUMNS``)
ROW_G = tuple(range(G_VERTICAL_FRONT, G_LONGITUDINAL_REAR + 1))
