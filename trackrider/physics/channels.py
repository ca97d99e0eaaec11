"""Columns of a recorded sample (one row per entity per recorded instant).

``World.run`` hands its sink ``samples`` of shape ``(m, n_entities, N_CHANNELS)``;
the constants below are the column indices. Units SI; G columns in units of g.

=================  =====================================================================
column             meaning
=================  =====================================================================
S                  arc length of the car's track anchor on its track, m (NaN: free body)
X, Y, Z            centre of mass, m
SPEED              velocity of the anchor along the track tangent T, signed, m/s
ACCEL              d speed / dt over the last step, m/s²
G_VERTICAL         specific force at the rider point along the car's up axis, g
G_LATERAL          ... along the car's left axis, g
G_LONGITUDINAL     ... along the car's forward axis, g
WHEEL_LOAD         track-joint row 2 force (support), N, + when the track pushes up
LATERAL_LOAD       track-joint row 1 force (sideways, + towards the car's left), N
MOTOR_FORCE        row 6 force (section motor + lift anti-rollback), N, + forwards
KINETIC_ENERGY     ½ m v² + ½ ωᵀ I ω, J
POTENTIAL_ENERGY   m g z, J
QW, QX, QY, QZ     orientation, unit quaternion body → world
VX, VY, VZ         CoM velocity, m/s
WX, WY, WZ         angular velocity (world axes), rad/s
ROLL_TORQUE        torque of the orientation rows about T, N·m (inner/outer rail split)
RESISTANCE_FORCE   rolling + drag + Davis force along T, N (negative when opposing +T motion)
SECTION            kind code of the active section (below), -1 none
FLAGS              bit field (below), stored as a float
=================  =====================================================================
"""
from __future__ import annotations

S = 0
X = 1
Y = 2
Z = 3
SPEED = 4
ACCEL = 5
G_VERTICAL = 6
G_LATERAL = 7
G_LONGITUDINAL = 8
WHEEL_LOAD = 9
LATERAL_LOAD = 10
MOTOR_FORCE = 11
KINETIC_ENERGY = 12
POTENTIAL_ENERGY = 13
QW = 14
QX = 15
QY = 16
QZ = 17
VX = 18
VY = 19
VZ = 20
WX = 21
WY = 22
WZ = 23
ROLL_TORQUE = 24
RESISTANCE_FORCE = 25
SECTION = 26
FLAGS = 27
N_CHANNELS = 28

#: column names in column order (the CSV header uses these words)
NAMES = (
    "s", "x", "y", "z", "speed", "accel", "g_vertical", "g_lateral", "g_longitudinal",
    "wheel_load", "lateral_load", "motor_force", "kinetic_energy", "potential_energy",
    "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
    "roll_torque", "resistance_force", "section", "flags",
)
assert len(NAMES) == N_CHANNELS
INDEX = {name: i for i, name in enumerate(NAMES)}

#: channels that are NaN for a free body (not on a track)
TRACK_CHANNELS = (S, SPEED, WHEEL_LOAD, LATERAL_LOAD, MOTOR_FORCE, ROLL_TORQUE, RESISTANCE_FORCE)

# flag bits (FLAGS holds their sum as a float; test with int(flags) & BIT)
ON_TRACK = 1           # the car is held by its track joint
RAN_OFF = 2            # the car left an open track's end (rows off from then on)
SUPPORT_CLAMPED = 4    # one-sided support row 2 at its bound 0: the car lifts off (railway)
MOTOR_ACTIVE = 8       # a section's row 6 acts on the car
RESISTANCE_ACTIVE = 16 # rolling resistance / drag acts on the car
FREE_BODY = 32         # a free body, on no track

# section kind codes
SECTION_NONE = -1
LIFT = 0
LAUNCH = 1
BRAKE = 2
TRIM = 3
BOOSTER = 4
STATION = 5
SECTION_KINDS = {"lift": LIFT, "launch": LAUNCH, "brake": BRAKE, "trim": TRIM, "booster": BOOSTER,
                 "station": STATION}
