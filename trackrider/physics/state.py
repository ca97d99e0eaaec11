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
    Rail        a railway world's locomotives, air brakes, driver, couplers (None in other worlds)
Inputs (fixed while running)
    Tracks      the packed track tables (``curves/compact.py``), the bodies that carry tracks
    Programs    joint parameters that follow profiles in time, holds and releases, reported joints
    Sections    motor sections (lift, launch, brake, trim, booster)
    Resistance  rolling resistance, drag (scalars)
    Step        step settings and recording (scalars)
Work (``Temps``: overwritten each step; ``WorldState`` groups the records above for ``run_chunk``)
    TrackRows   the five track rows of every car, every body's mobility W̃ and the map P
    Rows        the rows of every joint (J, target, bounds, softness, row count)
    Chains      each train's chain of couplers and its factorisation
    CarBlocks   trains of cars on bogies: each car's swivel rows and the couplers as blocks of one chain
    CarRows     each car's bounded rows along T (section, ratchet, friction) for their exact solve
    Hangs       suspended cars: each hanging body's rows folded into its trolley for the exact solve
    Scratch     per-body copies of the step's start velocities, the cars' row along T
    Work        small fixed-size temporaries (3×3, 6×6, 5×5 …)
    Lanes       a long train's ``Work`` once per chunk of bodies, for its per-car stages on all threads
"""
from __future__ import annotations

import os
import sys
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from trackrider.curves.compact import NCOL
from trackrider.physics.car_lanes import NB
from trackrider.physics.row_lanes import ROW_WORDS

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


#: a world of at least this many bodies keeps its records' arrays on the CPU's large pages (``in_large_pages``)
LARGE_PAGE_BODIES = 500
#: the size of a large page (x86-64 and most Linux systems: 2 MiB)
LARGE_PAGE = 2 << 20


def in_large_pages(rec):
    """A copy of record ``rec`` whose arrays lie in one block of memory that the system is asked to back
    with large pages (Linux: ``madvise(MADV_HUGEPAGE)``, the transparent huge pages of a system that
    has them "always" or on "madvise"), each array 64-byte aligned; ``rec`` itself where Python offers
    no such advice. A long train's step reads a few words of many arrays per car, and the cars' rows
    of a fine track ~5 KB apart: on 4 KiB pages the addresses outrun the CPU's tables of pages (its
    TLB), more so on a virtual machine, where each miss walks two tables (docs/physics.md "Large
    pages"). Changes no number: the arrays, their types and their values are the same."""
    import mmap

    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    arrays = [v for v in rec if isinstance(v, np.ndarray)]
    total = sum(-(-a.nbytes // 64) * 64 for a in arrays)
    if advice is None or total == 0:
        return rec
    block = mmap.mmap(-1, total + LARGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        block.madvise(advice)
    except OSError:   # (a kernel without transparent huge pages: small pages, as before)
        pass
    at = -np.frombuffer(block, np.uint8, 1).ctypes.data % LARGE_PAGE   # the first large page's start
    values = []
    for v in rec:
        if isinstance(v, np.ndarray):
            a = np.frombuffer(block, v.dtype, v.size, at).reshape(v.shape)
            a[...] = v
            at += -(-v.nbytes // 64) * 64
            v = a
        values.append(v)
    return type(rec)(*values)


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
    Field("dir", ("n",), F, "", "+1: faces +s of its track; −1: faces −s (physics/network.py)"),
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
    Field("prev_frame", ("n", 9), F, "", "T, N, B of the last step's frame (on a moving track: in its table)"),
    Field("davis", ("n", 3), F, "N, N·s/m, N·s²/m²", "Davis A, B, C"),
    Field("drag", ("n", 2), F, "m², kg", "its drag area and the mass of its nl2 resistance (a wheel frame: its share)"),
    Field("hang_rider", ("n",), F, "m", "suspended car: rider point above the hanging body's cg"),
    Field("rows", ("n", 2), F, "m", "front, rear rider row from the rider point along the body's forward axis (0, 0: none)"),
    Field("frame", ("n", NCOL), F, "", "the track frame at s (curves/compact.py columns), world axes"),
    Field("brake", ("n",), F, "N", "air-brake force available this step (railway.py), in the friction row's bound"),
))

Joints = record("Joints", (
    Field("kind", ("nj",), I, "", "joints.KINDS code"),
    Field("a", ("nj",), I, "", "body index, -1 the world"),
    Field("b", ("nj",), I, "", "body index, -1 the world"),
    Field("slack", ("nj",), I, "", "1 one-sided (rope, slack range, limit)"),
    Field("chain", ("nj",), I, "", "1 solved by its train's chain solve, 2 with its carrier, 3 in its car blocks, "
          "4 a suspended car's hinge or damper, with its trolley (hang_blocks.py), 5 a bar between the pivots of a train "
          "on bogies in car blocks (never prepared nor solved: car_blocks.py)"),
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
    # the network (physics/network.py); a world without connections and switches has net[0] = 0
    Field("net", (1,), I, "", "1: the world has connections or switches"),
    Field("link", ("ntracks", 2, 3), I, "", "track, end (0 start, 1 end, 2 a switch's point), switch of each end; −1"),
    Field("sw_track", ("nsw",), I, "", "switch: its through track"),
    Field("sw_s", ("nsw",), F, "m", "switch: its point on the through track"),
    Field("sw_at", ("nsw",), I, "", "switch: at its track's start (0), end (1) or inside it (2)"),
    Field("sw_branch", ("nsw", "nbr"), I, "", "switch: its branches' tracks, −1 padded"),
    Field("sw_bend", ("nsw", "nbr"), I, "", "switch: the end of each branch at its point (0 start, 1 end, 2 through)"),
    Field("sw_set", ("nsw",), I, "", "switch: the branch set (index into sw_branch)"),
    Field("sw_req", ("nsw",), I, "", "switch: the branch requested, −1 none"),
    Field("sw_until", ("nsw",), I, "", "switch: step its throw ends, −1 not moving"),
    Field("sw_blocked", ("nsw",), I, "", "switch: 1 once a waiting request was logged"),
    Field("sw_throw", ("nsw",), I, "", "switch: throw time, steps"),
    Field("sw_clear", ("nsw",), F, "m", "switch: clearance of its point"),
    Field("sw_approach", ("nsw",), F, "m", "switch: a train on a route asks for it from this far"),
    Field("route", ("nroute", "nrt"), I, "", "each car's train's route (track indices, −1 padded; none: −1)"),
    Field("route_at", ("nroute",), I, "", "each car's place in its route"),
    Field("clock", (1,), I, "", "the step, for the log"),
    Field("log", ("nlog", 5), F, "", "kind, who, a, b, step (physics/network.py)"),
    Field("nlog", (1,), I, "", "rows logged since the log was read"),
    Field("body", ("ntracks",), I, "", "body that carries the track, -1 the world (docs/physics.md §9)"),
    Field("pos0", ("ntracks", 3), F, "m", "that body's centre at the start (the table is where the track starts)"),
    Field("rot0", ("ntracks", 3, 3), F, "", "that body's rotation at the start"),
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
    Field("threaded", None, None, "", "1: a world with ``tmp.par`` runs its per-car stages on all threads, "
          "0: serially (``ThreadChoice``)"),
))

Rail = record("Rail", (
    # per car: locomotive, air brake, coupler behind it (railway.py; docs/physics.md §10)
    Field("train", ("n",), I, "", "train index of the car"),
    Field("loco", ("n",), I, "", "1 a locomotive"),
    Field("braked", ("n",), I, "", "1 in a train with an air brake (a brake pipe)"),
    Field("notch", ("n",), F, "", "the locomotive's power notch now"),
    Field("notches", ("n",), F, "", "its notches"),
    Field("dyn", ("n",), F, "", "its dynamic-brake setting now, 0 … 1"),
    Field("power", ("n",), F, "W", "constant-power curve: power (0: the tractive_effort curve)"),
    Field("te_max", ("n",), F, "N", "constant-power curve: largest tractive effort"),
    Field("curve", ("n", 4, 2), I, "", "first knot and count of its curves: tractive effort, dynamic brake, "
          "adhesion, shoe friction (CURVE_*)"),
    Field("adh_mass", ("n",), F, "kg", "mass on the driven axles"),
    Field("grip_mass", ("n",), F, "kg", "mass its wheels carry at rest (its own; a wheel frame's: its share of its car)"),
    Field("unit", ("n",), I, "", "the car's first body (a vehicle on bogies: its front frame; else itself)"),
    Field("slip_factor", ("n",), F, "", "force while slipping / adhesion limit"),
    Field("slipping", ("n",), I, "", "1 the wheels slip"),
    Field("rigging", ("n",), F, "N/bar", "brake-shoe force per bar of cylinder pressure"),
    Field("dist", ("n",), F, "m", "along the train to the nearest locomotive (the lead car without one)"),
    Field("pipe", ("n",), F, "bar", "brake-pipe pressure at the car"),
    Field("cyl", ("n",), F, "bar", "brake-cylinder pressure"),
    Field("cmd", ("n",), I, "", "driver step whose brake command the car's pipe has reached, -1 none"),
    Field("f_trac", ("n",), F, "N", "traction (+) or dynamic brake (−) along T this step"),
    Field("f_brake", ("n",), F, "N", "air-brake force along T this step (the friction row's share)"),
    Field("coupler", ("n",), I, "", "the joint of the coupler behind the car, -1 none"),
    Field("f_coupler", ("n",), F, "N", "force in it this step, + draft (tension)"),
    Field("energy", ("n", 3), F, "J", "work so far: traction (+), dynamic brake and air brake dissipated (ENERGY_*)"),
    # per train
    Field("p0", ("nt",), F, "bar", "charged brake pipe"),
    Field("full_service", ("nt",), F, "bar", "pipe reduction of full cylinder pressure"),
    Field("cyl_max", ("nt",), F, "bar", "cylinder pressure at full service"),
    Field("c_service", ("nt",), F, "m/s", "service (and release) propagation speed"),
    Field("c_emergency", ("nt",), F, "m/s", "emergency propagation speed"),
    Field("fill_rate", ("nt",), F, "bar/s", "cylinder filling rate"),
    Field("release_rate", ("nt",), F, "bar/s", "cylinder release rate"),
    Field("lead", ("nt",), I, "", "the train's lead car"),
    Field("pending", ("nt",), I, "", "driver step of the brake application awaiting the stop, -1 none"),
    # per driver step (the train's steps in file order)
    Field("d_train", ("nd",), I, "", "train"),
    Field("d_time", ("nd",), F, "s", "when (NaN: at a position)"),
    Field("d_pos", ("nd",), F, "m", "lead car's arc length where (NaN: at a time)"),
    Field("d_notch", ("nd",), F, "", "notch to set (-1: none)"),
    Field("d_dyn", ("nd",), F, "", "dynamic-brake setting (-1: none)"),
    Field("d_brake", ("nd",), I, "", "brake handle: 0 none, BRAKE_RELEASE, BRAKE_SERVICE, BRAKE_EMERGENCY"),
    Field("d_reduction", ("nd",), F, "bar", "service reduction"),
    Field("d_loco", ("nd",), I, "", "the one locomotive (car) it is for, -1 every one"),
    Field("d_fired", ("nd", 5), F, "s, m, m/s", "when taken (NaN: not yet), lead's s and speed; then the stop's "
          "t and s (FIRED_*)"),
    # per joint: the couplers' extremes and the draft gears' work
    Field("peak", ("nj", 6), F, "N, s, m", "largest draft force, its t and s; largest buff force, t, s"),
    Field("e_gear", ("nj",), F, "J", "work done on the draft gear so far"),
    Field("gears", ("ng",), I, "", "the draft-gear joints"),
    # curves, the wheel-slip log
    Field("knots", ("nk", 2), F, "m/s, …", "the curves' points (speed, value)"),
    Field("slips", ("nlog", 2), F, "s, car", "wheel-slip onsets: t, car (body)"),
    Field("nslip", (1,), I, "", "onsets so far (more than the log holds are counted)"),
))

Programs = record("Programs", (
    # drives: a joint parameter that follows a profile in time (physics/programs.py)
    Field("knots", ("nknots", 2), F, "s, …", "every profile's knots (t, value), profile by profile"),
    Field("dj", ("nd",), I, "", "the joint row of each drive"),
    Field("dcol", ("nd",), I, "", "... its parameter column"),
    Field("dfirst", ("nd",), I, "", "... its first knot"),
    Field("dcount", ("nd",), I, "", "... its knots"),
    # cycles: a joint held and released in phases
    Field("cj", ("nc",), I, "", "the hold row of each cycle"),
    Field("ccol", ("nc",), I, "", "... its ACTIVE column"),
    Field("cfirst", ("nc",), I, "", "... its first phase"),
    Field("ccount", ("nc",), I, "", "... its phases"),
    Field("cphase", ("nc",), I, "", "... the phase it is in (state)"),
    Field("ctime", ("nc",), F, "s", "... how long the next phase's condition has held (state)"),
    Field("pstate", ("np",), I, "", "each phase: 1 hold, 0 release"),
    Field("pwhen", ("np",), I, "", "... begins 0 at the start, 1 at time pt, 2 when a train has stopped"),
    Field("pt", ("np",), F, "s", "... its time"),
    Field("pcar0", ("np",), I, "", "... the train's first car"),
    Field("pncar", ("np",), I, "", "... and its cars"),
    Field("pfor", ("np",), F, "s", "... how long it must have stood still"),
    Field("pbody", ("np",), I, "", "... on the tracks of this body"),
    Field("log", ("nlog", 3), F, "", "phase changes: step, cycle, phase"),
    Field("nlog", (1,), I, "", "entries in log"),
    # reported joints: those that hold or drive a body that carries tracks (joints.csv)
    Field("rj", ("nr",), I, "", "each reported joint's first row"),
    Field("rn", ("nr",), I, "", "... its rows (the block and its extra rows)"),
    Field("rkind", ("nr",), I, "", "... 1 hinge, 2 prismatic, 0 another kind"),
    Field("rside", ("nr",), I, "", "... 0 the carrier is its end a, 6 its end b"),
    Field("raxis", ("nr", 3), F, "", "... its axis in a's axes"),
    Field("rref", ("nr", 6), F, "", "... a hinge's reference normals in a's and b's axes"),
    Field("rx0", ("nr",), F, "m", "... a prismatic joint's travel at the start"),
    Field("rhold", ("nr",), I, "", "... its hold row, -1 none"),
))

# ----------------------------------------------------------------------------- work
TrackRows = record("TrackRows", (
    Field("J", ("nb", 5, 6), F, "", "rows 1–5 of each car's track joint"),
    Field("target", ("nb", 5), F, "m/s, rad/s", "targets"),
    Field("lam", ("nb", 5), F, "N·s", "this step's impulses"),
    Field("mobility", ("nb", 6, 6), F, "", "W̃: a car's mobility with its track rows enforced; a free body's W "
          "(not stored where rank1 holds it: read through maths.mobility_at)"),
    Field("to_track", ("nb", 5, 6), F, "", "P = A⁻¹ G W: generalised impulse → track-row impulses (−P f) "
          "(not stored where rank1 holds W̃: read through track_joint.closed_to_track)"),
    Field("zr", ("nb", 8), F, "", "a car whose W̃ rank1 holds: Zᵀ M n/μ (0–4) and its arm r_m (5–7), "
          "P = Zᵀ − (Zᵀ M n/μ) nᵀ"),
    Field("rank1", ("nb", 7), F, "", "a supported car on a fixed track, W̃ = n nᵀ/μ: n (0–5), 1/μ (6); "
          "1/μ = 0: W̃ as it is (any other body, a trolley with its hang folded in)"),
    # a track carried by a body (docs/physics.md §9): the body's columns of rows 1–5, the coupling of a car
    # to its track body, and the carriers (a body with tracks and the cars on them)
    Field("H", ("nb", 5, 6), F, "", "a car on a moving track: the track body's columns of rows 1–5"),
    Field("Y", ("nb", 5, 6), F, "", "A⁻¹ H: the track rows' impulses per unit of the track body's velocity"),
    Field("E", ("nb", 6, 6), F, "", "E = −Pᵀ H: the car's velocity per unit of the track body's velocity"),
    Field("z", ("nb", 5), F, "N·s", "A⁻¹ r: the track rows' residual at the projection"),
    Field("carrier", ("nb",), I, "", "carrier of a body that carries tracks, and of each car on them; -1 none"),
    Field("kbody", ("nk",), I, "", "each carrier's body"),
    Field("kfirst", ("nk1",), I, "", "each carrier's first entry in kcars (CSR, nk + 1)"),
    Field("kcars", ("nkc",), I, "", "the cars on each carrier's tracks"),
    Field("kfold", ("nk",), I, "", "the joint that holds the carrier to the world, solved with it exactly; -1 none"),
    Field("kP", ("nk", 5, 6), F, "", "that joint's impulses per generalised impulse on the carrier (−P g)"),
    Field("klam", ("nk", 5), F, "N·s", "that joint's impulses this step"),
    Field("kK", ("nk", 6, 6), F, "", "work: the carrier's mass matrix with its cars attached"),
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
    Field("carrier", ("ntrains",), I, "", "carrier of the train's track, -1 the world (its chain solved with the body)"),
    Field("u", ("nj", 6), F, "", "a chain on a moving track: the coupler row's velocity per unit of the body's"),
    Field("zu", ("nj", 6), F, "", "... S⁻¹ U (Woodbury: S = S_tridiagonal + U W̃_t Uᵀ)"),
    Field("kC", ("nk", 6, 6), F, "", "per carrier: I + Σ Uᵀ S⁻¹ U W̃_t of its chains"),
    Field("inner", ("nj",), I, "", "1: a coupler of a chain made in blocks (couplings.split_chains)"),
    Field("jr", ("ntrains", "nc", 2), I, "", "... each chunk of bodies' block of its couplers (first, end)"),
))

GR = 8               # rows of a car block at most (a car's swivels, 4 + 3, and its coupler)
GI, GF = 6 + 2 * GR, 2 * GR + 1   # columns of CarBlocks.group and .fac

CarBlocks = record("CarBlocks", (
    # a train of cars on bogies (physics/car_blocks.py): its rows in groups along the train, block
    # tridiagonal; few arrays (each array of a record passed to a stage costs every step)
    Field("train", ("ntrains", 2), I, "", "first group and groups of each train (0: its chain is couplings.py's)"),
    Field("group", ("ng", "GI"), I, "", "each group: its joints (a car's two swivels and its coupler or -1), rows "
          "this step, the rear swivel whose roll row shares the front one's (-1 none), the first nonzero column of its "
          "coupling E to the group before, then joint and row of each row "
          "(car_blocks.G_*)"),
    Field("wp", ("ng", "GR", 45), F, "", "W̃ Jᵀ (12) and P Jᵀ (10) of both ends of each row, then (11) of a shared "
          "roll row's third body; on a moving track the row's U and S⁻¹ U (6 each, carrier.py)"),
    Field("fac", ("ng", "GR", "GF"), F, "", "Cholesky factor L of the pivot block, E = B L⁻ᵀ (the group's coupling "
          "to the one before), right-hand side and solution y (car_blocks.F_*)"),
    Field("dv", ("nb",), F, "", "work: row velocity change per body (car_blocks.block_train_mode)"),
))

HR = 6               # rows of a hang at most (a hinge's 5 and its damper's)
HF = 2 * HR + 29     # columns of Hangs.fac

Hangs = record("Hangs", (
    # suspended cars whose hinge is solved with the trolley (physics/hang_blocks.py)
    Field("joint", ("nh", 2), I, "", "the hinge of each hang and its damper (hinge_axis), -1 none"),
    Field("fac", ("nh", HR, HF), F, "", "per row: Cholesky factors of K and M, W̃ Jᵀ and P Jᵀ of the trolley, "
          "W Jᵀ of the body, the fold's work, the solution (hang_blocks.H_*)"),
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
    Field("moving", ("nb",), I, "", "a car on a moving track: its track's body (its rows act on it too), else -1"),
    Field("g", ("nb", 6), F, "", "... the rows' columns of that body, −[T, (P − X_t) × T]"),
    Field("a", ("nb", 6), F, "", "... the generalised impulse on that body per unit of the rows' impulse, E_bᵀ f + g"),
    Field("cf", ("nb",), F, "", "... the rows' mobility with that body free, f W̃ fᵀ + aᵀ W̃_t a"),
))

Work = record("Work", (
    Field("R", (3, 3), F, "", ""), Field("W", (6, 6), F, "", ""), Field("A", (5, 5), F, "", ""),
    Field("Ainv", (5, 5), F, "", ""), Field("M", (8, 8), F, "", ""), Field("K", (NJR, NJR), F, "", ""),
    Field("Kinv", (NJR, NJR), F, "", ""), Field("fr2", (NCOL,), F, "", ""), Field("rr", (16,), F, "", ""),
    Field("lx", (ROW_WORDS * NB,), F, "", "the cars in lanes, NB at a time (car_lanes.py, row_lanes.py)"),
))

#: a world of at least this many bodies (and no carriers) runs its per-car stages on all threads (``Lanes``)
PARALLEL_BODIES = 500
#: ... when numba has at least this many threads (on one, the parallel regions only cost)
MIN_THREADS = 2


class ThreadChoice:
    """Which way a world with ``tmp.par`` runs its next chunk of steps: the per-car stages on all
    threads, or serially (``Step.threaded``). Both give the same bytes (docs/physics.md, "Both
    cores"), so the choice is by speed alone, measured as the run goes: the first timed chunks try
    each way in turn, ``FIRST`` each, or one each when the serial chunk cost more than ``CLEAR`` times
    the threaded one (a world this large is expected to gain on the threads, and a clear gain needs
    no second look: at 1000 cars a serial chunk costs ~110 µs a step more); then the faster one runs
    (each way's cost: the least wall-clock seconds per step among its latest ``RECENT`` chunks, so one
    chunk slowed by other work on the machine does not turn the choice, and three in a row do), and
    the other is tried again after ``PROBE_EVERY`` chunks, so a machine whose cores fill up or empty
    during a run is followed; each try that changes nothing doubles the wait, up to ``PROBE_MOST``.
    The world's first chunk is not timed (it may load kernels)."""

    PROBE_EVERY = 16
    PROBE_MOST = 256
    RECENT = 3
    FIRST = 2
    CLEAR = 1.25

    def __init__(self):
        self.recent = {True: [], False: []}     # s per step of each way's latest RECENT chunks
        self.every = self.PROBE_EVERY            # chunks between two tries of the slower way
        self.since = 0                           # chunks the faster way has run since the last try
        self.started = False                     # the first chunk (not timed) has run

    @property
    def cost(self):
        """{way: s per step, the least of its latest chunks (None before one is timed)}."""
        return {way: min(t) if t else None for way, t in self.recent.items()}

    def best(self):
        """The faster way so far (None before both are timed ``FIRST`` times, or once each if the serial
        way's chunk cost more than ``CLEAR`` times the threads')."""
        n = min(len(self.recent[True]), len(self.recent[False]))
        if n == 0:
            return None
        cost = self.cost
        if n < self.FIRST and cost[False] <= self.CLEAR * cost[True]:
            return None
        return cost[True] <= cost[False]

    def next(self) -> bool:
        """True: the next chunk on all threads."""
        best = self.best()
        if best is None:
            return len(self.recent[True]) <= len(self.recent[False])
        return (not best) if self.since >= self.every else best

    def took(self, threaded: bool, seconds: float, steps: int) -> None:
        """A chunk ran ``steps`` steps ``threaded`` or not in ``seconds`` (wall)."""
        if not self.started or steps <= 0:
            self.started = True
            return
        before = self.best()
        recent = self.recent[threaded]
        recent.append(seconds / steps)
        del recent[:-self.RECENT]
        if before is None:
            return
        if threaded == before:
            self.since += 1
        else:                                    # a try of the slower way
            self.since = 0
            self.every = self.PROBE_EVERY if self.best() != before else min(2 * self.every, self.PROBE_MOST)


# per chunk of bodies of the parallel stages (kernels.par_rows, par_integrate) its own ``Work``: one chunk
# per thread of numba (its OpenMP layer hands each thread an equal share of the chunks anyway; each chunk
# more is a call with whole records per region). How the bodies are split changes no number: every
# body's arithmetic is its own.
Lanes = record("Lanes", tuple(Field(f.name, ("nc",) + f.shape, f.dtype, f.unit, f.meaning) for f in Work.FIELDS))

Temps = namedtuple("Temps", ["trk", "rows", "chains", "scratch", "wk", "crow", "blocks", "hangs", "par"])

WorldState = namedtuple("WorldState", ["tracks", "bodies", "cars", "sections", "res", "joints", "programs"])


def threads() -> int:
    """numba's number of threads (``numba.get_num_threads``; before numba is imported,
    ``NUMBA_NUM_THREADS`` or the CPUs this process may run on, as numba will count them)."""
    numba = sys.modules.get("numba")
    if numba is not None:
        return numba.get_num_threads()
    if os.environ.get("NUMBA_NUM_THREADS"):
        return int(os.environ["NUMBA_NUM_THREADS"])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def make_temps(nb: int, nj: int, first, count, nk: int = 0, nkc: int = 0, carrier=None, groups=None,
               hangs=()) -> Temps:
    """Work arrays of ``run_chunk`` for ``nb`` bodies and ``nj`` joints (allocated once); ``nk``
    carriers (bodies that carry tracks) with ``nkc`` cars on them; ``carrier``: each train's;
    ``groups``: per train the joint triples of its row groups (``car_blocks.py``; empty: its chain);
    ``hangs``: (hinge, damper or -1) of each suspended car solved with its trolley (``hang_blocks.py``);
    ``par``: the ``Lanes`` (one chunk per thread of numba) of a world of ``PARALLEL_BODIES`` bodies or more
    without carriers, when numba has ``MIN_THREADS`` threads or more, else None (its kernel is compiled
    without the parallel stages)."""
    nt = threads()
    parallel = nb >= PARALLEL_BODIES and nk == 0 and nt >= MIN_THREADS
    nc = nt if parallel else 1
    sizes = dict(nb=max(nb, 1), nj=max(nj, 1), nk=nk, nk1=nk + 1, nkc=nkc,
                 ntrains=max(len(first), 1), nc=nc)
    carrier = np.full(len(first), -1, np.int64) if carrier is None else np.asarray(carrier, np.int64)
    chains = allocate(Chains, sizes, first=np.asarray(first, np.int64), count=np.asarray(count, np.int64),
                      carrier=carrier)
    trk = allocate(TrackRows, sizes, carrier=np.full(sizes["nb"], -1, np.int64), kfold=np.full(nk, -1, np.int64))
    groups = [[] for _ in first] if groups is None else groups
    pairs = [pair for g in groups for pair in g]
    train = np.zeros((sizes["ntrains"], 2), np.int64)
    for t, g in enumerate(groups):
        train[t] = sum(map(len, groups[:t])), len(g)
    group = np.full((max(len(pairs), 1), GI), -1, np.int64)
    group[:len(pairs), :3] = np.array(pairs, np.int64).reshape(len(pairs), 3)
    blocks = allocate(CarBlocks, dict(sizes, ng=max(len(pairs), 1), GR=GR, GI=GI, GF=GF), train=train, group=group)
    hang = allocate(Hangs, dict(nh=len(hangs), HF=HF), joint=np.array(hangs, np.int64).reshape(len(hangs), 2))
    par = allocate(Lanes, dict(nc=nt)) if parallel else None
    house = in_large_pages if nb >= LARGE_PAGE_BODIES else (lambda r: r)
    return Temps(house(trk), house(allocate(Rows, sizes)), house(chains), house(allocate(Scratch, sizes)),
                 allocate(Work, sizes), house(allocate(CarRows, sizes, moving=np.full(sizes["nb"], -1, np.int64))),
                 house(blocks), hang, par)


def make_cars(n: int) -> Cars:
    """The ``Cars`` record of ``n`` cars, zeros (at least one row)."""
    return allocate(Cars, dict(n=max(n, 1)), n=n)
