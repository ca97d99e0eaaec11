"""The named records the kernels take (numba compiles named tuples of arrays as such).

A record is a ``namedtuple`` of arrays (and a few scalars): a kernel reads ``cars.s[b]`` or
``bodies.vel[b, 0]``, never a column number. ``World`` builds the records once (``_build``);
``make_temps`` allocates the work arrays of a step. Units SI.

State (changes as the world runs, owned by ``World``)
    Bodies      every body: the cars first, then free bodies, then suspended cars' hanging bodies
    Cars        per car: where it is on its track, the impulses of its rows last step
    Joints      per joint row-block: kind, bodies, parameters (``joints/common.py`` columns), impulses
Inputs (fixed while running)
    Tracks      the packed track tables (``curves/compact.py``)
    Sections    motor sections (lift, launch, brake, trim, booster)
    Resistance  rolling resistance, drag (scalars)
    Step        step settings and recording (scalars)
Work (``Temps``: overwritten each step; ``WorldState`` groups the records above for ``run_chunk``)
    TrackRows   the five track rows of every car, every body's mobility W̃ and the map P
    Rows        the rows of every joint (J, target, bounds, softness, row count)
    Chains      each train's chain of couplers and its factorisation
    CarRows     each car's bounded rows along T (section, ratchet, friction) for their exact solve
    Scratch     per-body copies of the step's start velocities, the cars' row along T
    Work        small fixed-size temporaries (3×3, 6×6, 5×5 …)
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from trackrider.curves.compact import NCOL

NJR = 5   # rows per joint at most

Bodies = namedtuple("Bodies", [
    "pos",        # (nb, 3) m, centre of mass
    "quat",       # (nb, 4) w, x, y, z body → world
    "vel",        # (nb, 3) m/s
    "omg",        # (nb, 3) rad/s, world axes
    "inv_mass",   # (nb,) 1/kg
    "inv_ib",     # (nb, 3) inverse inertia, body axes (forward, left, up)
    "ib",         # (nb, 3) kg·m², body axes
    "mass",       # (nb,) kg
    "rot",        # (nb, 3, 3) rotation matrix of quat (kept with it: update_rotations, stage_integrate)
])

Cars = namedtuple("Cars", [
    "n",           # number of cars (bodies 0 … n−1)
    "track",       # (n,) int: track index
    "one_sided",   # (n,) int: 1 railway (support row one-sided)
    "on_track",    # (n,) int: 1 held by its track joint
    "support",     # (n,) int: 1 support row active this step
    "section",     # (n,) int: active section, -1 none
    "has_prev",    # (n,) int: 1 prev_frame holds a frame
    "ran_off",     # (n,) int: 1 ran off an open track's end
    "hang",        # (n,) int: suspended car's hanging body, -1 none
    "held",        # (n,) int: on_track at the start of this step (work)
    "s",           # (n,) m, arc length of the anchor
    "cg",          # (n,) m, centre of mass above the curve
    "rider",       # (n,) m, rider point above the curve
    "gauge",       # (n,) m
    "speed0",      # (n,) m/s, anchor speed along T at the start of the step (accel channel)
    "lam_track",   # (n, 5) N·s, track rows 1–5 impulses of the last step
    "lam_motor",   # (n,) N·s, section row (row 6)
    "lam_ratchet", # (n,) N·s, anti-rollback ratchet
    "lam_friction",# (n,) N·s, rolling-friction row
    "transport",   # (n, 3) N·s / N·m·s: transport impulse along N, B and torque about T
    "f_explicit",  # (n,) N, explicit resistance along T last step
    "prev_frame",  # (n, 9) T, N, B of the last step's frame
    "davis",       # (n, 3) Davis A, B, C
    "hang_rider",  # (n,) m, suspended car: rider point above the hanging body's cg
    "frame",       # (n, NCOL) the track frame at s
])

Joints = namedtuple("Joints", [
    "kind",    # (nj,) int: joints.KINDS code
    "a",       # (nj,) int: body index, -1 the world
    "b",       # (nj,) int
    "slack",   # (nj,) int: 1 one-sided (rope, slack range, limit)
    "chain",   # (nj,) int: 1 solved exactly by its train's chain solve
    "param",   # (nj, NJF) float: parameters, columns in joints/common.py
    "lam",     # (nj, NJR) N·s (N·m·s): accumulated impulses
])

Tracks = namedtuple("Tracks", ["data", "row0", "nrows", "ds", "length", "closed"])

Sections = namedtuple("Sections", ["kind", "track", "s_from", "s_to", "speed", "fmax"])

Resistance = namedtuple("Resistance", [
    "rolling",      # μ (physical) or friction deceleration / g (nl2)
    "drag_area",    # m²
    "air_density",  # kg/m³
    "nl2",          # True: NoLimits-style resistance
    "nl2_drag",     # 1/m
])

Step = namedtuple("Step", [
    "h", "gx", "gy", "gz", "gmag",  # s, m/s²
    "erp_h",          # erp / h, 1/s
    "iterations",     # solver iterations with bounded rows
    "warm",           # warm-start factor
    "record_every",   # record every n-th step
])

TrackRows = namedtuple("TrackRows", [
    "J",          # (nb, 5, 6) rows 1–5 of each car's track joint
    "target",     # (nb, 5) m/s, rad/s
    "lam",        # (nb, 5) N·s, this step's impulses
    "mobility",   # (nb, 6, 6) W̃: a car's mobility with its track rows enforced; a free body's W
    "to_track",   # (nb, 5, 6) P = A⁻¹ G W: generalised impulse → track-row impulses (−P f)
])

Rows = namedtuple("Rows", [
    "J",        # (nj, NJR, 12) [lin a, ang a, lin b, ang b]
    "target",   # (nj, NJR)
    "lo",       # (nj, NJR) impulse bounds
    "hi",
    "gamma",    # (nj,) softness
    "m",        # (nj,) int: rows in use
])

Chains = namedtuple("Chains", [
    "first",   # (ntrains,) int: first joint of each train's chain
    "count",   # (ntrains,) int: chained couplers
    "w",       # (nj, 12) W̃ Hᵀ of both ends
    "p",       # (nj, 10) P Hᵀ of both ends
    "d",       # (nj,) LDLᵀ pivots
    "f",       # (nj,) off-diagonal
    "y",       # (nj,) solution
])

Scratch = namedtuple("Scratch", [
    "vel0",   # (nb, 3) velocities at the start of the step
    "omg0",   # (nb, 3)
    "v0t",    # (nb, 6) start velocities after this step's transport (recorded steps)
    "row_t",  # (nb, 6) each car's row along T, J = [T, r_m × T]
])

CarRows = namedtuple("CarRows", [
    "target",   # (nb, 3) m/s: section row, ratchet, friction row (all J = f = [T, r_m × T])
    "lo",       # (nb, 3) N·s impulse bounds
    "hi",       # (nb, 3)
    "present",  # (nb, 3) int: rows.PRESENT or ABSENT this step
    "lam",      # (nb, 3) N·s impulses during the solve
    "w",        # (nb, 6) W̃ fᵀ
    "c",        # (nb,) f W̃ fᵀ
    "gamma",    # (nb, 3) softness of each row (rows.ROW_SOFTNESS, HOLD_SOFTNESS × its mobility s²)
    "chained",  # (nb,) int: 1 the car is in a train's chain solved as a rigid train
    "mu",       # (nb,) N·s change of the car's rows' impulse in a pass
    "s",        # (nb,) row velocity change per unit of the train's free motion (couplings.train_mode)
    "v",        # (nb,) row velocity J·u at the start of the scalar solve
    "passes",   # (2,) int: passes of the last solve, most in one solve since the world was built
    "group",    # (nb, 3) int: the row's group of one set point (couplings.group_rows), −1 alone
    "ystar",    # (nb, 3) the group's target of the train's free motion Y
])

Work = namedtuple("Work", ["R", "W", "A", "Ainv", "M", "K", "Kinv", "qf", "theta", "fr2", "rr"])

Temps = namedtuple("Temps", ["trk", "rows", "chains", "scratch", "wk", "crow"])

WorldState = namedtuple("WorldState", ["tracks", "bodies", "cars", "sections", "res", "joints"])


def make_temps(nb: int, nj: int, first, count) -> Temps:
    """Work arrays of ``run_chunk`` for ``nb`` bodies and ``nj`` joints (allocated once)."""
    njx, nbx = max(nj, 1), max(nb, 1)
    z = np.zeros
    trk = TrackRows(z((nbx, 5, 6)), z((nbx, 5)), z((nbx, 5)), z((nbx, 6, 6)), z((nbx, 5, 6)))
    rows = Rows(z((njx, NJR, 12)), z((njx, NJR)), z((njx, NJR)), z((njx, NJR)), z(njx), z(njx, np.int64))
    chains = Chains(np.asarray(first, np.int64), np.asarray(count, np.int64), z((njx, 12)), z((njx, 10)),
                    z(njx), z(njx), z(njx))
    scratch = Scratch(z((nbx, 3)), z((nbx, 3)), z((nbx, 6)), z((nbx, 6)))
    work = Work(z((3, 3)), z((6, 6)), z((5, 5)), z((5, 5)), z((8, 8)), z((NJR, NJR)), z((NJR, NJR)), z(4), z(3),
                z(NCOL), z(16))
    crow = CarRows(z((nbx, 3)), z((nbx, 3)), z((nbx, 3)), np.zeros((nbx, 3), np.int64), z((nbx, 3)), z((nbx, 6)),
                   z(nbx), z((nbx, 3)), np.zeros(nbx, np.int64), z(nbx), z(nbx), z(nbx), np.zeros(2, np.int64),
                   np.zeros((nbx, 3), np.int64), z((nbx, 3)))
    return Temps(trk, rows, chains, scratch, work, crow)


def make_cars(n: int) -> Cars:
    nx = max(n, 1)
    zi = lambda *s: np.zeros(s, np.int64)  # noqa: E731
    z = np.zeros
    return Cars(n, zi(nx), zi(nx), zi(nx), zi(nx), zi(nx), zi(nx), zi(nx), zi(nx), zi(nx),
                z(nx), z(nx), z(nx), z(nx), z(nx), z((nx, 5)), z(nx), z(nx), z(nx), z((nx, 3)), z(nx), z((nx, 9)),
                z((nx, 3)), z(nx), z((nx, NCOL)))
