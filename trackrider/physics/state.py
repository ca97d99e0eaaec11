"""The named records the kernels take (numba compiles named tuples of arrays as such).

A record is a ``namedtuple`` of arrays (and a few scalars): a kernel reads ``cars.s[b]`` or
``bodies.vel[b, 0]``, never a column number. Each record is declared once, below: a table of
``Field(name, shape, dtype, unit, meaning)``, from which its class is made (``record``) and its
arrays are allocated by name (``allocate``: zeros of each field's shape, sizes by name, or the
arrays given by name). ``World`` builds the records once (``_build``); ``make_temps`` allocates
the work arrays of a step. Units SI. A new field: its line in its record's table, and its use.

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
from typing import NamedTuple

import numpy as np

from trackrider.curves.compact import NCOL

NJR = 5   # rows per joint at most

F, I, B = np.float64, np.int64, np.bool_


class Field(NamedTuple):
    name: str
    shape: tuple | None   # sizes by name or number; None: a scalar, given when the record is made
    dtype: type | None    # of the array (None: any, given)
    unit: str
    meaning: str


def record(name: str, fields: tuple):
    """The record class of a table of ``Field`` (a namedtuple; ``FIELDS`` keeps the table)."""
    cls = namedtuple(name, [f.name for f in fields])
    cls.FIELDS = fields
    return cls


def allocate(cls, sizes: dict, **given):
    """A record of class ``cls`` by name: the arrays ``given``, zeros for the others (each field's
    shape, its sizes looked up in ``sizes``). A given array must have its field's dtype and rank."""
    values = []
    for f in cls.FIELDS:
        if f.name in given:
            v = given.pop(f.name)
            if f.shape is not None and f.dtype is not None:
                a = np.asarray(v)
                if a.dtype != f.dtype or a.ndim != len(f.shape):
                    raise TypeError(f"{cls.__name__}.{f.name}: expected {len(f.shape)}-d {np.dtype(f.dtype)}, "
                                    f"got {a.ndim}-d {a.dtype}")
            values.append(v)
        elif f.shape is None:
            raise TypeError(f"{cls.__name__}.{f.name}: a scalar, to be given")
        else:
            values.append(np.zeros(tuple(sizes[d] if isinstance(d, str) else d for d in f.shape), f.dtype))
    if given:
        raise TypeError(f"{cls.__name__} has no field {', '.join(given)}")
    return cls(*values)


# ----------------------------------------------------------------------------- state
Bodies = record("Bodies", (
    Field("pos", ("nb", 3), F, "m", "centre of mass"),
    Field("quat", ("nb", 4), F, "", "w, x, y, z body → world"),
    Field("vel", ("nb", 3), F, "m/s", "velocity of the centre of mass"),
    Field("omg", ("nb", 3), F, "rad/s", "angular velocity, world axes"),
    Field("inv_mass", ("nb",), F, "1/kg", "inverse mass"),
    Field("inv_ib", ("nb", 3), F, "1/(kg·m²)", "inverse inertia, body axes (forward, left, up)"),
    Field("ib", ("nb", 3), F, "kg·m²", "inertia, body axes"),
    Field("mass", ("nb",), F, "kg", "mass"),
    Field("rot", ("nb", 3, 3), F, "", "rotation matrix of quat (kept with it: update_rotations, stage_integrate)"),
))

Cars = record("Cars", (
    Field("n", None, None, "", "number of cars (bodies 0 … n−1)"),
    Field("track", ("n",), I, "", "track index"),
    Field("one_sided", ("n",), I, "", "1 railway (support row one-sided)"),
    Field("on_track", ("n",), I, "", "1 held by its track joint"),
    Field("support", ("n",), I, "", "1 support row active this step"),
    Field("section", ("n",), I, "", "active section, -1 none"),
    Field("has_prev", ("n",), I, "", "1 prev_frame holds a frame"),
    Field("ran_off", ("n",), I, "", "1 ran off an open track's end"),
    Field("hang", ("n",), I, "", "suspended car's hanging body, -1 none"),
    Field("held", ("n",), I, "", "on_track at the start of this step (work)"),
    Field("s", ("n",), F, "m", "arc length of the anchor"),
    Field("cg", ("n",), F, "m", "centre of mass above the curve"),
    Field("rider", ("n",), F, "m", "rider point above the curve"),
    Field("gauge", ("n",), F, "m", "gauge of its track"),
    Field("speed0", ("n",), F, "m/s", "anchor speed along T at the start of the step (accel channel)"),
    Field("lam_track", ("n", 5), F, "N·s", "track rows 1–5 impulses of the last step"),
    Field("lam_motor", ("n",), F, "N·s", "section row (row 6)"),
    Field("lam_ratchet", ("n",), F, "N·s", "anti-rollback ratchet"),
    Field("lam_friction", ("n",), F, "N·s", "rolling-friction row"),
    Field("transport", ("n", 3), F, "N·s, N·m·s", "transport impulse along N, B and torque about T"),
    Field("f_explicit", ("n",), F, "N", "explicit resistance along T last step"),
    Field("prev_frame", ("n", 9), F, "", "T, N, B of the last step's frame"),
    Field("davis", ("n", 3), F, "N, N·s/m, N·s²/m²", "Davis A, B, C"),
    Field("hang_rider", ("n",), F, "m", "suspended car: rider point above the hanging body's cg"),
    Field("frame", ("n", NCOL), F, "", "the track frame at s (curves/compact.py columns)"),
))

Joints = record("Joints", (
    Field("kind", ("nj",), I, "", "joints.KINDS code"),
    Field("a", ("nj",), I, "", "body index, -1 the world"),
    Field("b", ("nj",), I, "", "body index, -1 the world"),
    Field("slack", ("nj",), I, "", "1 one-sided (rope, slack range, limit)"),
    Field("chain", ("nj",), I, "", "1 solved exactly by its train's chain solve"),
    Field("param", ("nj", "NJF"), F, "", "parameters: anchors (joints/common.py), then the kind's own columns"),
    Field("lam", ("nj", NJR), F, "N·s, N·m·s", "accumulated impulses"),
))

# ----------------------------------------------------------------------------- inputs
Tracks = record("Tracks", (
    Field("data", ("rows", NCOL), F, "", "the packed track tables (curves/compact.py)"),
    Field("row0", ("ntracks",), I, "", "first row of each track"),
    Field("nrows", ("ntracks",), I, "", "rows of each track"),
    Field("ds", ("ntracks",), F, "m", "row spacing"),
    Field("length", ("ntracks",), F, "m", "track length"),
    Field("closed", ("ntracks",), B, "", "a closed circuit"),
))

Sections = record("Sections", (
    Field("kind", ("ns",), I, "", "section type code (physics/sections.py)"),
    Field("track", ("ns",), I, "", "track index"),
    Field("s_from", ("ns",), F, "m", "start"),
    Field("s_to", ("ns",), F, "m", "end"),
    Field("speed", ("ns",), F, "m/s", "target speed"),
    Field("fmax", ("ns",), F, "N", "force per car"),
))

Resistance = record("Resistance", (
    Field("rolling", None, None, "", "μ (physical) or friction deceleration / g (nl2)"),
    Field("drag_area", None, None, "m²", "drag area"),
    Field("air_density", None, None, "kg/m³", "air density"),
    Field("nl2", None, None, "", "True: NoLimits-style resistance"),
    Field("nl2_drag", None, None, "1/m", "NoLimits-style drag"),
))

Step = record("Step", (
    Field("h", None, None, "s", "time step"),
    Field("gx", None, None, "m/s²", "gravity"),
    Field("gy", None, None, "m/s²", "gravity"),
    Field("gz", None, None, "m/s²", "gravity"),
    Field("gmag", None, None, "m/s²", "|gravity|"),
    Field("erp_h", None, None, "1/s", "erp / h"),
    Field("iterations", None, None, "", "solver iterations with bounded rows"),
    Field("warm", None, None, "", "warm-start factor"),
    Field("record_every", None, None, "", "record every n-th step"),
))

# ----------------------------------------------------------------------------- work
TrackRows = record("TrackRows", (
    Field("J", ("nb", 5, 6), F, "", "rows 1–5 of each car's track joint"),
    Field("target", ("nb", 5), F, "m/s, rad/s", "targets"),
    Field("lam", ("nb", 5), F, "N·s", "this step's impulses"),
    Field("mobility", ("nb", 6, 6), F, "", "W̃: a car's mobility with its track rows enforced; a free body's W"),
    Field("to_track", ("nb", 5, 6), F, "", "P = A⁻¹ G W: generalised impulse → track-row impulses (−P f)"),
))

Rows = record("Rows", (
    Field("J", ("nj", NJR, 12), F, "", "[lin a, ang a, lin b, ang b]"),
    Field("target", ("nj", NJR), F, "", "targets"),
    Field("lo", ("nj", NJR), F, "N·s", "impulse bounds"),
    Field("hi", ("nj", NJR), F, "N·s", "impulse bounds"),
    Field("gamma", ("nj",), F, "", "softness"),
    Field("m", ("nj",), I, "", "rows in use"),
))

Chains = record("Chains", (
    Field("first", ("ntrains",), I, "", "first joint of each train's chain"),
    Field("count", ("ntrains",), I, "", "chained couplers"),
    Field("w", ("nj", 12), F, "", "W̃ Hᵀ of both ends"),
    Field("p", ("nj", 10), F, "", "P Hᵀ of both ends"),
    Field("d", ("nj",), F, "", "LDLᵀ pivots"),
    Field("f", ("nj",), F, "", "off-diagonal"),
    Field("y", ("nj",), F, "", "solution"),
))

Scratch = record("Scratch", (
    Field("vel0", ("nb", 3), F, "m/s", "velocities at the start of the step"),
    Field("omg0", ("nb", 3), F, "rad/s", "angular velocities at the start of the step"),
    Field("v0t", ("nb", 6), F, "", "start velocities after this step's transport (recorded steps)"),
    Field("row_t", ("nb", 6), F, "", "each car's row along T, J = [T, r_m × T]"),
))

CarRows = record("CarRows", (
    Field("target", ("nb", 3), F, "m/s", "section row, ratchet, friction row (all J = f = [T, r_m × T])"),
    Field("lo", ("nb", 3), F, "N·s", "impulse bounds"),
    Field("hi", ("nb", 3), F, "N·s", "impulse bounds"),
    Field("present", ("nb", 3), I, "", "rows.PRESENT or ABSENT this step"),
    Field("lam", ("nb", 3), F, "N·s", "impulses during the solve"),
    Field("w", ("nb", 6), F, "", "W̃ fᵀ"),
    Field("c", ("nb",), F, "", "f W̃ fᵀ"),
    Field("gamma", ("nb", 3), F, "", "softness of each row (rows.ROW_SOFTNESS, HOLD_SOFTNESS × its mobility s²)"),
    Field("chained", ("nb",), I, "", "1: the car is in a train's chain solved as a rigid train"),
    Field("mu", ("nb",), F, "N·s", "change of the car's rows' impulse in a pass"),
    Field("s", ("nb",), F, "", "row velocity change per unit of the train's free motion (couplings.train_mode)"),
    Field("v", ("nb",), F, "m/s", "row velocity J·u at the start of the scalar solve"),
    Field("passes", (2,), I, "", "passes of the last solve, most in one solve since the world was built"),
    Field("group", ("nb", 3), I, "", "the row's group of one set point (couplings.group_rows), −1 alone"),
    Field("ystar", ("nb", 3), F, "", "the group's target of the train's free motion Y"),
))

Work = record("Work", (
    Field("R", (3, 3), F, "", ""), Field("W", (6, 6), F, "", ""), Field("A", (5, 5), F, "", ""),
    Field("Ainv", (5, 5), F, "", ""), Field("M", (8, 8), F, "", ""), Field("K", (NJR, NJR), F, "", ""),
    Field("Kinv", (NJR, NJR), F, "", ""), Field("qf", (4,), F, "", ""), Field("theta", (3,), F, "", ""),
    Field("fr2", (NCOL,), F, "", ""), Field("rr", (16,), F, "", ""),
))

Temps = namedtuple("Temps", ["trk", "rows", "chains", "scratch", "wk", "crow"])

WorldState = namedtuple("WorldState", ["tracks", "bodies", "cars", "sections", "res", "joints"])


def make_temps(nb: int, nj: int, first, count) -> Temps:
    """Work arrays of ``run_chunk`` for ``nb`` bodies and ``nj`` joints (allocated once)."""
    sizes = dict(nb=max(nb, 1), nj=max(nj, 1))
    chains = allocate(Chains, sizes, first=np.asarray(first, np.int64), count=np.asarray(count, np.int64))
    return Temps(allocate(TrackRows, sizes), allocate(Rows, sizes), chains, allocate(Scratch, sizes),
                 allocate(Work, sizes), allocate(CarRows, sizes))


def make_cars(n: int) -> Cars:
    """The ``Cars`` record of ``n`` cars, zeros (at least one row)."""
    return allocate(Cars, dict(n=max(n, 1)), n=n)
