"""The physics world: tracks, trains of cars on the six-row track joint, couplings,
sections, resistance, free bodies and joints; ``run`` steps it in numba.

Units SI (m, kg, s, N); angles in radians unless named ``_deg``; gravity acts along −z.
See docs/ARCHITECTURE.md ("The world") for the contract and docs/physics.md for the maths.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from trackrider.curves.compact import C_B, C_DT, C_N, C_P, C_T, NCOL, CompactTrack, eval_track, pack_tracks
from trackrider.errors import InputError
from trackrider.physics import bogies
from trackrider.physics import channels as ch
from trackrider.physics import couplings
from trackrider.physics import kernels as kn
from trackrider.physics import state as st
from trackrider.physics import joints as jk
from trackrider.physics.joints import ball_track, distance, draft_gear
from trackrider.physics.joints import common as jc
from trackrider.physics.sections import SECTIONS
from trackrider.settings import (
    ANCHOR,
    BodyConfig,
    CarSpec,
    CouplingSpec,
    OperationConfig,
    ResistanceConfig,
    SectionConfig,
    SimulationConfig,
    TrackConfig,
    TrainConfig,
    STRING,
    Setting,
    build,
    check,
    check_named,
    check_value,
    joint_params,
)

__all__ = ["World", "CarSpec", "CouplingSpec", "RunStatus"]


@dataclass
class RunStatus:
    """Outcome of ``World.run``: ``status`` is ``"ok"``, ``"diverged"`` or ``"stalled"`` (the blocks
    deadlocked).

    ``t`` (s) and ``entity`` (index) / ``label`` locate a divergence; ``steps`` are the
    steps done by this call; ``message`` is one line.
    """

    status: str = "ok"
    steps: int = 0
    t: float | None = None
    entity: int | None = None
    label: tuple | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _quat_from_axes(T, N, B):
    q = np.zeros(4)
    kn.mat_to_quat(np.ascontiguousarray(np.column_stack([T, N, B])), q)
    return q


def _rot(q):
    R = np.zeros((3, 3))
    kn.quat_to_mat(np.asarray(q, dtype=np.float64), R)
    return R


class World:
    """Rigid bodies, trains on tracks, joints; stepped by a projected Gauss–Seidel solver
    with exact track-joint blocks and an exact chain solve along each train.

    Parameters
    ----------
    gravity, dt, iterations, erp, warm_start
        as ``trackrider.settings.SimulationConfig`` defines them: default, unit (gravity
        m/s² along −z, dt s) and bounds.

    Examples
    --------
    >>> from trackrider.physics import World, CarSpec
    >>> w = World(dt=1e-3)
    >>> w.dt
    0.001
    """

    def __init__(self, gravity: float = SimulationConfig.gravity, dt: float = SimulationConfig.dt,
                 iterations: int = SimulationConfig.iterations, erp: float = SimulationConfig.erp,
                 warm_start: float = SimulationConfig.warm_start):
        v = check_named(SimulationConfig, dict(gravity=gravity, dt=dt, iterations=iterations, erp=erp,
                                               warm_start=warm_start))
        self.gravity, self.dt, self.iterations, self.erp = v["gravity"], v["dt"], v["iterations"], v["erp"]
        self.warm_start = v["warm_start"]
        self._tracks: list[CompactTrack] = []
        self._gauges: list[float] = []
        self.track_names: list[str] = []
        self._track_body: list[int] = []     # per track: the body (add_body index) that carries it, -1 the world
        self._trains: list[dict] = []
        self._sections: list[tuple] = []
        self._bodies: list[dict] = []
        self._joints: list[dict] = []
        self._res = ResistanceConfig()
        self._section_ops: list[dict] = []
        self._operation = OperationConfig()
        self.operation = None   # blocks.Operation once built, when the world has block sections or contacts
        self.railway = None     # rail.Railway once built, when a train has railway vehicles or draft gears
        self.swivels = None     # bogies.SwivelWatch once built, when a train has cars on bogies (split events)
        self.contact_trains: list[tuple[int, int]] = []
        self._connections: list[dict] = []
        self._switches: list[dict] = []
        self.network = None     # network.Network once built, when the world has connections or switches
        self._built = False
        self.step_count = 0

    # ------------------------------------------------------------------ building
    def _check_open(self):
        if self._built:
            raise RuntimeError("the world has started running; add everything before run()")

    def add_track(self, track, gauge: float = TrackConfig.gauge, name: str | None = None,
                  body: int | None = None) -> int:
        """Add a track (a ``Track``, anything with ``.compact()``, or a ``CompactTrack``); returns its index.

        ``gauge`` (m) is the distance between the rails (wheel-load split); ``name`` (default
        ``track<index>``) names it in a network's events. ``body``: the index of a body
        (``add_body``, added before) that carries the track: the track is given where it lies at
        the start and moves rigidly with the body (docs/physics.md §9); None: the world.
        """
        self._check_open()
        gauge = check_named(TrackConfig, {"gauge": gauge})["gauge"]
        if body is not None and (not isinstance(body, (int, np.integer)) or not 0 <= body < len(self._bodies)):
            raise InputError(f"no body with index {body!r} (add the body first)", where="body")
        if isinstance(track, CompactTrack):
            ct = track
        elif hasattr(track, "compact"):
            ct = track.compact()
        else:
            raise InputError(f"not a track: {type(track).__name__}", where="track")
        self._tracks.append(ct)
        self._gauges.append(gauge)
        self.track_names.append(name or f"track{len(self._tracks) - 1}")
        self._track_body.append(-1 if body is None else int(body))
        return len(self._tracks) - 1

    def add_train(self, name: str, track: int = 0, cars: int = TrainConfig.cars, car: CarSpec | None = None,
                  coupling: CouplingSpec | None = None, wheels: str = TrainConfig.wheels,
                  start_s: float = TrainConfig.start_s, start_speed: float = TrainConfig.start_speed, *,
                  vehicles=None, brake=None, driver=None) -> int:
        """Add a train of ``cars`` identical cars on track ``track``; returns its index.

        The lead car's anchor starts at ``start_s`` (m); the others follow behind it
        (towards smaller s), joined by ``coupling``. ``wheels``: ``"coaster"`` (up-stop
        wheels, support both ways) or ``"railway"`` (support one way: the car can lift off).
        ``start_speed`` (m/s) is along the track tangent (relative to the track when a body carries it:
        the cars start moving with it).

        A railway train (docs/physics.md §10) gives instead ``vehicles``: a list of
        ``trackrider.settings.VehicleSpec`` in order from the front (each ``count`` alike
        vehicles: wagons, locomotives, coaches; not with ``car`` or ``cars``), its air brake
        ``brake`` (a ``BrakeSpec``; default when a vehicle has ``brake_rigging``) and its
        ``driver`` (a list of ``DriverStep``).
        """
        self._check_open()
        if vehicles is not None and (car is not None or cars != TrainConfig.cars):
            raise InputError("give either vehicles or car and cars, not both", where="vehicles")
        coupling = coupling or CouplingSpec()
        if not isinstance(track, (int, np.integer)) or not 0 <= track < len(self._tracks):
            raise InputError(f"no track with index {track!r}", where="track")
        if vehicles is not None:
            vehicles = [check(v, f"vehicles[{i}]") for i, v in enumerate(vehicles)]
            car = vehicles[0] if vehicles else CarSpec(mass=600.0)
        car = check(car or CarSpec(mass=600.0), "car")
        coupling = check(coupling, "coupling")
        brake = None if brake is None else check(brake, "brake")
        driver = [check(d, f"driver[{i}]") for i, d in enumerate(driver or [])]
        train = check(TrainConfig(str(name), "", track, car, cars=cars, wheels=wheels, start_s=start_s,
                                  start_speed=start_speed, coupling=coupling, vehicles=vehicles, brake=brake,
                                  driver=driver))
        n = train.cars
        specs = train.car_specs()
        susp = car.suspended
        hang = car.hang if susp else 0.0
        tmass = car.mass * 0.1 if car.trolley_mass is None else car.trolley_mass
        swing_c = car.swing_damping
        inertias = []
        for c in specs:
            if c.inertia is not None:
                inertias.append(np.array(c.inertia))
            else:
                m, L, W, H = c.mass, c.length, c.width, c.height
                inertias.append(m / 12.0 * np.array([W**2 + H**2, L**2 + H**2, L**2 + W**2]))
        cgs = [0.0 if susp else c.cg_height for c in specs]
        lengths = [c.length for c in specs]
        ctype, gap = coupling.type, coupling.gap
        stiff, damp, slack = coupling.stiffness, coupling.damping, coupling.slack
        s0, v0 = train.start_s, train.start_speed
        ct = self._tracks[track]
        # place the cars: lead at s0, each following car so its coupler is at rest (or where its
        # free play starts: coupling.slack_start)
        s_list = [s0]
        offset = coupling.start_offset()
        for i in range(1, n):
            s_list.append(self._place_behind(ct, s_list[-1], lengths[i - 1], lengths[i], gap, ctype, offset))
        too_long = train.step_error(self.dt)
        if too_long:
            raise InputError(too_long, where="coupling.stiffness")
        if not ct.closed:
            for i, s in enumerate(s_list):
                if not 0.0 <= s <= ct.length:
                    raise InputError(f"car {i + 1} would start at s = {s:.3f} m, outside the track [0, "
                                     f"{ct.length:.3f}] m (start_s, cars, car.length, coupling.gap)",
                                     where="start_s")
        self._trains.append(dict(name=str(name), track=track, n=n, mass=car.mass, length=car.length,
                                 inertia=inertias[0], cg=cgs[0], rider=car.rider_height,
                                 railway=train.wheels == "railway", ctype=ctype, gap=gap, stiffness=stiff,
                                 damping=damp, slack=slack, s=s_list, v0=v0, suspended=susp, hang=hang,
                                 trolley_mass=tmass, swing_damping=swing_c, masses=[c.mass for c in specs],
                                 lengths=lengths, inertias=inertias, cgs=cgs, riders=[c.rider_height for c in specs],
                                 rows=[c.row_offsets for c in specs], rider_rows=max(c.rider_rows for c in specs),
                                 coupling=coupling, vehicles=specs if vehicles is not None else None,
                                 blocks=vehicles, brake=train.brake, driver=driver))
        if car.bogies != "none":
            bogies.expand(self, self._trains[-1], ct, car)
        return len(self._trains) - 1

    def _track_end(self, ref, key):
        """(track index, end code) of ``(track, "start" | "end")``."""
        from trackrider.physics.network import ENDS

        if not (isinstance(ref, (tuple, list)) and len(ref) == 2 and ref[1] in ENDS
                and isinstance(ref[0], (int, np.integer)) and 0 <= ref[0] < len(self._tracks)):
            raise InputError(f"must be (track index, 'start' | 'end'), got {ref!r}", where=key)
        if self._tracks[ref[0]].closed:
            raise InputError(f"track {ref[0]} is closed: it has no ends to connect", where=key)
        return int(ref[0]), ENDS[ref[1]]

    def add_connection(self, a, b) -> int:
        """Join two track ends, ``a`` and ``b`` each ``(track index, "start" | "end")``: a car whose
        anchor passes one continues on the other (docs/physics.md §12). The ends must meet within
        1 mm, their tangents (head on for end–end and start–start) and up axes within 0.5°. Tracks
        on different bodies (a turntable's, a transfer table's) join an end to a start and are
        checked as the car reaches the end instead: joined only while aligned so."""
        from trackrider.physics import network as nw

        self._check_open()
        ta, ea = self._track_end(a, "a")
        tb, eb = self._track_end(b, "b")
        if (ta, ea) == (tb, eb):
            raise InputError("joins an end to itself", where="b")
        for key, end in (("a", (ta, ea)), ("b", (tb, eb))):
            self._check_free(end, key)
        flip = ea == eb
        if self._track_body[ta] != self._track_body[tb]:   # a moving side: joined only while aligned
            if flip:
                raise InputError("a connection to a track on another body joins an end to a start", where="b")
        else:
            # an end leaves along +T, a start is entered along +T: end→start keeps T, end–end meets head on
            bad = nw.mismatch(nw.end_frame(self._tracks[ta], a[1]), nw.end_frame(self._tracks[tb], b[1]), flip)
            if bad:
                raise InputError(bad, where="b")
        if self._gauges[ta] != self._gauges[tb]:
            raise InputError(f"joins gauges {self._gauges[ta]:g} m and {self._gauges[tb]:g} m", where="b")
        self._connections.append(dict(a=(ta, ea), b=(tb, eb)))
        return len(self._connections) - 1

    def _check_free(self, end, key):
        """An end (track, END_START | END_END) takes one connection or switch."""
        from trackrider.physics import network as nw

        used = {e for c in self._connections for e in (c["a"], c["b"])}
        used |= {(sw["track"], sw["end"]) for sw in self._switches}
        used |= {e for sw in self._switches for e in sw["branches"] if e[1] != nw.END_POINT}
        if end in used:
            raise InputError(f"{self.track_names[end[0]]}'s {('start', 'end')[end[1]]} is already connected",
                             where=key)

    def add_switch(self, name: str, track: int, at, branches, position: int = 0, throw_time: float = 5.0,
                   program=(), clearance: float | None = None, branch_names=None, label=None,
                   approach: float = 100.0) -> int:
        """A switch on ``track`` at arc length ``at`` (or ``"end"``, ``"start"``). ``branches`` (2 to
        4): the tracks that leave its point the way the track runs on (from its start: the way back),
        each a track index (its start is at the point) or ``(index, "start" | "end")`` (``"end"``: it
        ends there); a switch inside its track has that track itself among them (the straight on). ``position``: the index of the
        branch set at the start; ``throw_time`` s; ``program``: ``[(t, branch index), …]``;
        ``clearance`` m (default the longest car's length): the switch does not move while a car's
        anchor is nearer its point; ``approach`` m: a train with a route asks for its branch from
        this far (docs/physics.md §12)."""
        from trackrider.physics import network as nw

        self._check_open()
        if not (isinstance(track, (int, np.integer)) and 0 <= track < len(self._tracks)):
            raise InputError(f"no track {track!r}", where="track")
        ct = self._tracks[track]
        end = nw.ENDS.get(at, nw.END_POINT)          # a switch at the track's start, end, or inside it
        S = {nw.END_START: 0.0, nw.END_END: ct.length}.get(end, at)
        if ct.closed and end != nw.END_POINT:
            raise InputError("a closed track has no ends", where="at")
        if end == nw.END_POINT and not (isinstance(S, (int, float)) and 0.0 < S < ct.length):
            raise InputError(f"{S!r} m is not inside the track (0 .. {ct.length:.6g} m)", where="at")
        S = float(S)
        ends = []
        for x in branches:
            x, xe = (x, "start") if isinstance(x, (int, np.integer)) else x
            if x == track and xe == "start" and end == nw.END_POINT:
                ends.append((int(x), nw.END_POINT))
                continue
            if not (0 <= x < len(self._tracks)) or self._tracks[x].closed or xe not in nw.ENDS:
                raise InputError(f"branch {x!r}: not an open track's start or end", where="branches")
            ends.append((int(x), nw.ENDS[xe]))
        if not 2 <= len(ends) <= nw.MAX_BRANCHES or len(set(ends)) != len(ends):
            raise InputError(f"2 to {nw.MAX_BRANCHES} different branches, got {list(branches)}", where="branches")
        through = (int(track), nw.END_POINT) in ends
        if (end == nw.END_POINT) != through:
            raise InputError("a switch inside its track has the track itself among its branches; one at its "
                             "start or end does not", where="branches")
        if end != nw.END_POINT and (int(track), end) in ends:
            raise InputError("a branch is the switch's own end", where="branches")
        for e in [(int(track), end)] + ends:
            if e[1] != nw.END_POINT:
                self._check_free(e, "at" if e == (int(track), end) else "branches")
        if any(self._track_body[x] != self._track_body[track] for x, _ in ends):
            raise InputError("a switch's branches are on its track's body (a moving track joins by a "
                             "[[connection]])", where="branches")
        here = nw.end_frame(ct, S)
        for i, (x, xe) in enumerate(ends):
            if xe == nw.END_POINT:
                continue
            # a branch leaves the point the way the through track does (at its start: the other way)
            bad = nw.mismatch(here, nw.end_frame(self._tracks[x], ("start", "end")[xe]),
                              (xe == nw.END_END) != (end == nw.END_START))
            if bad:
                raise InputError(f"branch {i}: {bad}", where="branches")
        if not (isinstance(position, (int, np.integer)) and 0 <= position < len(ends)):
            raise InputError(f"must be a branch index (0 .. {len(ends) - 1}), got {position!r}", where="position")
        prog = []
        for t, i in program:
            if not (isinstance(i, (int, np.integer)) and 0 <= i < len(ends)):
                raise InputError(f"{i!r} is not a branch index", where="program")
            prog.append((float(t), int(i)))
        if throw_time < 0.0 or (clearance is not None and clearance <= 0.0) or approach <= 0.0:
            raise InputError("throw_time must be >= 0 s, clearance and approach > 0 m", where="throw_time")
        names = list(branch_names) if branch_names else [str(x) for x in branches]
        self._switches.append(dict(name=name, track=int(track), s=S, end=end,
                                   at=label or f"{self.track_names[track]}:{at}",
                                   branches=ends, branch_names=names, position=int(position),
                                   throw_time=float(throw_time), clearance=clearance, program=prog,
                                   approach=float(approach)))
        return len(self._switches) - 1

    @staticmethod
    def _frame(ct, s):
        out = np.zeros(NCOL)
        eval_track(ct.data, 0, len(ct.data), ct.ds, ct.length, ct.closed, float(s), out)
        return out

    def _place_behind(self, ct, s_front, length_front, length_back, gap, ctype, offset=0.0):
        """Arc length of the next car so that its coupler point meets the front car's (a bar coupler
        ``offset`` m longer than ``gap``: where its free play starts)."""
        if ctype == "ball":   # the ball's halves ``offset`` apart along the track (its free play)
            off_a, off_b, target = -(length_front / 2.0 + gap / 2.0), length_back / 2.0 + gap / 2.0, offset
        else:
            off_a, off_b, target = -length_front / 2.0, length_back / 2.0, gap + offset
        fa = self._frame(ct, s_front)
        pa = fa[C_P:C_P + 3] + off_a * fa[C_T:C_T + 3]
        s = s_front - ((length_front + length_back) / 2.0 + gap + offset)
        for _ in range(8):
            fb = self._frame(ct, s)
            pb = fb[C_P:C_P + 3] + off_b * fb[C_T:C_T + 3]
            d = pa - pb
            if ctype == "ball":   # along the cars' mean axis, as the ball's row measures it (joints/ball_track.py)
                n = fa[C_T:C_T + 3] + fb[C_T:C_T + 3]
                sep = float(np.dot(d, n)) / float(np.linalg.norm(n))
            else:
                sep = float(np.dot(d, fb[C_T:C_T + 3]))
            s += sep - target
        return s

    def add_section(self, kind: str, track: int, s_from: float, s_to: float, speed: float | None = None,
                    max_force: float | None = None, *, block: bool = False, dwell: float | None = None,
                    name: str = "") -> int:
        """Add a motor section on ``[s_from, s_to]`` (m) of ``track``; returns its index.

        ``kind``: lift (drives to ``speed`` m/s, pulls only, anti-rollback), launch (thrust up
        to ``max_force`` N towards ``speed``), brake (stops/holds, ±max_force), trim (brakes
        only above ``speed``), booster (drives and brakes towards ``speed``), station (stops
        every arriving train, holds it ``dwell`` s, dispatches it at ``speed``). Force per car.
        ``block``: a lift, brake or booster that ends a block (``blocks.py``): it holds a train
        while the block ahead is occupied (a block brake or booster otherwise drives at
        ``speed``); every station is a block section. ``name`` names the section in events.
        ``max_force`` is required, ``speed`` too but for a brake (default 0: a stop brake);
        ``trackrider.settings.SectionConfig`` defines them.
        """
        self._check_open()
        if not isinstance(track, (int, np.integer)) or not 0 <= track < len(self._tracks):
            raise InputError(f"no track with index {track!r}", where="track")
        sec = build(SectionConfig, dict(type=kind, s_from=s_from, s_to=s_to, speed=speed, max_force=max_force,
                                        block=block, dwell=dwell, name=name))
        self._sections.append((SECTIONS[sec.type].code, track, sec.s_from, sec.s_to, sec.speed, sec.max_force))
        self._section_ops.append(dict(kind=sec.type, block=sec.block, dwell=sec.dwell or 0.0, name=sec.name))
        return len(self._sections) - 1

    def set_operation(self, restitution: float = OperationConfig.restitution,
                      max_hold: float = OperationConfig.max_hold) -> None:
        """How trains on one track meet and how long a block may hold a train
        (``trackrider.settings.OperationConfig``): ``restitution`` (0..1) of the closing speed when
        one train runs into another (0: they stay together); ``max_hold`` s: a train held longer
        by a block section is a deadlock (the run ends ``stalled``)."""
        self._check_open()
        self._operation = build(OperationConfig, dict(restitution=restitution, max_hold=max_hold))

    def _section_table(self) -> list[dict]:
        """Every section as a dict: kind, track, from, to, speed, fmax, block, dwell, name."""
        return [dict(kind=o["kind"], track=int(t[1]), **{"from": float(t[2])}, to=float(t[3]), speed=float(t[4]),
                     fmax=float(t[5]), block=o["block"], dwell=o["dwell"], name=o["name"])
                for t, o in zip(self._sections, self._section_ops)]

    def set_resistance(self, rolling: float = ResistanceConfig.rolling, drag_area: float = ResistanceConfig.drag_area,
                       air_density: float = ResistanceConfig.air_density, davis=ResistanceConfig.davis,
                       mode: str = ResistanceConfig.mode, nl2_drag: float = ResistanceConfig.nl2_drag) -> None:
        """Resistance to motion of every car on a track (``trackrider.settings.ResistanceConfig``).

        ``mode="physical"``: rolling-resistance coefficient ``rolling`` × wheel force (a
        bounded friction row along T), aerodynamic drag ½ ``air_density`` ``drag_area`` v|v|
        (m², kg/m³), optional Davis ``(A, B, C)``: A N (friction row), B N/(m/s) and
        C N/(m/s)² explicit. ``mode="nl2"``: friction deceleration ``rolling``·g and drag
        ``nl2_drag``·v² per unit mass (``nl2_drag`` in 1/m), as NoLimits/FVD do.
        """
        self._check_open()
        self._res = check(ResistanceConfig(rolling=rolling, drag_area=drag_area, air_density=air_density,
                                           davis=davis, mode=mode, nl2_drag=nl2_drag))

    def add_body(self, name: str, mass: float, size=None, inertia=None, position=None,
                 orientation=BodyConfig.orientation, velocity=BodyConfig.velocity,
                 angular_velocity=BodyConfig.angular_velocity) -> int:
        """Add a free rigid body; returns its index. ``mass`` kg, ``position`` m (required),
        ``size`` m (a solid box) or ``inertia`` kg·m² (body axes), ``orientation`` a unit
        quaternion (w, x, y, z), ``velocity`` m/s, ``angular_velocity`` rad/s
        (``trackrider.settings.BodyConfig``)."""
        self._check_open()
        bd = build(BodyConfig, dict(mass=mass, size=size, inertia=inertia, position=position, orientation=orientation,
                                    velocity=velocity, angular_velocity=angular_velocity), name=str(name))
        m = bd.mass
        if bd.inertia is not None:
            I = np.array(bd.inertia)
        else:
            sz = np.array(bd.size)
            I = m / 12.0 * np.array([sz[1]**2 + sz[2]**2, sz[0]**2 + sz[2]**2, sz[0]**2 + sz[1]**2])
        q = np.array(bd.orientation)
        self._bodies.append(dict(name=bd.name, mass=m, inertia=I, pos=np.array(bd.position),
                                 q=q / np.linalg.norm(q), v=np.array(bd.velocity), w=np.array(bd.angular_velocity)))
        return len(self._bodies) - 1

    def add_joint(self, kind: str, a, b, anchor_a=None, anchor_b=None, *, name: str | None = None, cycle=None,
                  **params) -> int:
        """Add a joint between ``a`` and ``b``: ``("car", train, car_0_based)``, ``("body", i)`` or ``"world"``.

        Kinds and their ``params`` (each kind's ``Settings`` in its module of ``trackrider.physics.joints``:
        default, unit and bounds of each): ``pulley`` (``ground_a``, ``ground_b`` m, ``ratio`` default 1,
        ``slack`` default True: a rope that only pulls), ``distance`` (``length`` m default: the current
        distance, ``stiffness``, ``damping``, ``min_length``/``max_length`` for a slack range), ``ball``,
        ``hinge`` (``axis`` in a's axes — world axes if a is the world — required;
        ``min_angle``/``max_angle`` rad, the angle of b relative to a about the axis from its start (0);
        ``motor_speed`` rad/s with ``max_torque`` N·m (default unbounded); ``damping`` N·m·s/rad),
        ``prismatic`` (``axis`` as for hinge; b slides along it and may not turn relative to a;
        ``min_travel``/``max_travel`` m from the start; a spring ``stiffness`` N/m, ``damping`` N·s/m, at
        rest at travel ``rest`` m, default 0; a motor ``motor_speed`` m/s with ``max_force`` N). A motor's
        speed and bound may be profiles ``((t, value), …)``; end stops may be buffers (``stop_stiffness``,
        ``stop_damping``). ``cycle`` (hinge, prismatic): phases that hold (lock) and release the joint,
        ``[dict(state="hold"), dict(state="release", stopped="red", **{"for": 1.0}), dict(state="hold",
        at=20.0)]`` (``programs.check_cycle``); ``name`` names it in the outputs (default ``joint[i]``).
        Anchors are in body axes (m); default a car's track anchor or a body's centre; for the
        world an anchor is a world point (default: where the other end's anchor starts); for
        hinge and prismatic the default anchor of b is where a's anchor starts. Returns the
        joint index.
        """
        self._check_open()
        if kind not in jk.USER_KINDS:
            raise InputError(f"must be one of {', '.join(jk.USER_KINDS)}, got {kind!r}", where="type")
        module = jk.kind(kind)
        for end, key in ((a, "a"), (b, "b")):
            self._check_end(end, key)
            if end == "world" and module.NO_WORLD_END:
                raise InputError(module.NO_WORLD_END, where=key)
        if a == "world" and b == "world":
            raise InputError("a joint needs at least one body or car", where="a")
        p = joint_params(build(module.Settings, params))
        if "axis" in p:   # hinge, prismatic: a unit axis
            p["axis"] = np.array(p["axis"]) / float(np.linalg.norm(p["axis"]))
        anchors = [None if v is None else np.array(check_value(ANCHOR, v, key))
                   for v, key in ((anchor_a, "anchor_a"), (anchor_b, "anchor_b"))]
        index = len(self._joints)
        name = f"joint[{index}]" if name is None else check_value(Setting(STRING), name, "name")
        if any(jd.get("name") == name for jd in self._joints):
            raise InputError(f"{name!r} is already the name of a joint", where="name")
        if cycle is not None:
            from trackrider.physics.programs import check_cycle

            if kind not in ("hinge", "prismatic"):
                raise InputError("a cycle holds and releases a hinge's angle or a prismatic joint's travel, "
                                 f"not a {kind}", where="cycle")
            cycle = check_cycle(cycle, [t["name"] for t in self._trains])
        self._joints.append(dict(kind=kind, a=a, b=b, anchor_a=anchors[0], anchor_b=anchors[1], p=p, name=name,
                                 cycle=cycle))
        return index

    def set_route(self, train: int, route) -> None:
        """Train ``train``'s route: the tracks (indices) it runs on, in order, from the one it starts
        on; each switch it approaches is asked for the branch on it (docs/physics.md §12)."""
        self._check_open()
        route = [int(x) for x in route]
        if not route or route[0] != self._trains[train]["track"] or not all(0 <= x < len(self._tracks) for x in route):
            raise InputError("must list track indices, starting with the train's own track", where="route")
        self._trains[train]["route"] = route

    def _check_end(self, end, key):
        if end == "world":
            return
        if isinstance(end, tuple) and len(end) == 3 and end[0] == "car":
            t, c = end[1], end[2]
            if not 0 <= t < len(self._trains) or not 0 <= c < self._trains[t]["n"]:
                raise InputError(f"no car {end!r}", where=key)
            return
        if isinstance(end, tuple) and len(end) == 2 and end[0] == "body":
            if not 0 <= end[1] < len(self._bodies):
                raise InputError(f"no body {end!r}", where=key)
            return
        raise InputError(f"must be ('car', train, car), ('body', index) or 'world', got {end!r}", where=key)

    # ------------------------------------------------------------------ arrays
    def _build(self):
        """The kernels' records, once, before the first run: the bodies, the joints' rows, the
        records, the operation (each a step below)."""
        if self._built:
            return
        self._build_bodies()
        tr_j0, tr_nj = self._build_joints()
        self._build_records(tr_j0, tr_nj)
        self._built = True
        self._build_operation(tr_nj)
        self._build_railway()

    def _build_bodies(self):
        """Every body's arrays: the cars on their tracks (train order), the free bodies, the suspended
        cars' hanging bodies; the entities' labels and trains."""
        ncars = sum(t["n"] for t in self._trains)
        nhang = sum(t["n"] for t in self._trains if t["suspended"])
        nbog = sum(t["bogie"]["cars"] for t in self._trains if "bogie" in t)
        nb = ncars + len(self._bodies) + nhang + nbog
        self.ncars = ncars
        packed = pack_tracks(self._tracks) if self._tracks else pack_tracks([])
        self._packed = packed
        pos = np.zeros((nb, 3))
        quat = np.zeros((nb, 4))
        quat[:, 0] = 1.0
        vel = np.zeros((nb, 3))
        omg = np.zeros((nb, 3))
        inv_mass = np.zeros(nb)
        mass = np.zeros(nb)
        ib = np.ones((nb, 3))
        cars = st.make_cars(ncars)
        labels, etrain = [], []
        self._car0 = []
        self.pos, self.quat, self.vel, self.omg = pos, quat, vel, omg
        self.mass, self.inv_mass, self.ib = mass, inv_mass, ib
        self.cars = cars
        b = self._place_cars(labels, etrain)
        b = self._place_free_bodies(b, labels, etrain)
        b = self._hang_bodies(b, labels, etrain)
        self._swivels = []
        if nbog:
            bogies.place_bodies(self, b, labels, etrain)
        self.inv_ib = 1.0 / ib
        self._entity_labels = labels
        self._entity_train = np.array(etrain, dtype=np.int64)

    def _place_cars(self, labels, etrain) -> int:
        """Each car at its place on its track, in the scheme's steady state; returns the next body."""
        pos, quat, vel, omg = self.pos, self.quat, self.vel, self.omg
        mass, inv_mass, ib, cars = self.mass, self.inv_mass, self.ib, self.cars
        car_frame = cars.frame
        davis = None if self._res.davis is None else np.array(self._res.davis)
        b = 0
        for ti, t in enumerate(self._trains):
            self._car0.append(b)
            ct = self._tracks[t["track"]]
            for c in range(t["n"]):
                fr = self._frame(ct, t["s"][c])
                T, N, B, Om = fr[C_T:C_T + 3], fr[C_N:C_N + 3], fr[C_B:C_B + 3], fr[12:15]
                q = _quat_from_axes(T, N, B)
                quat[b] = q
                R = _rot(q)
                up = R[:, 2]
                cg = t["cgs"][c]
                pos[b] = fr[C_P:C_P + 3] + cg * up
                if self.erp > 0.0:
                    # start in the scheme's steady state on a curve: each step moves the anchor
                    # along the tangent, (h v)² κ/2 off the curve, and the rows' erp feedback pulls it
                    # back; the balance is an offset (h v)² κ/(2 erp) outward (0.16 mm at 25 m/s on
                    # R = 10 m). Starting there avoids a start transient of the recorded G (0.6 g).
                    pos[b] -= fr[C_DT:C_DT + 3] * (self.dt * t["v0"]) ** 2 / (2.0 * self.erp)
                v0 = t["v0"]
                w = Om * v0
                vel[b] = v0 * T + np.cross(w, cg * up)
                if self.erp > 0.0:   # ... moving back towards the curve as the feedback does: h v² κ/2
                    vel[b] += fr[C_DT:C_DT + 3] * self.dt * v0 * v0 / 2.0
                omg[b] = w
                kb = self._track_body[t["track"]]
                if kb >= 0:   # a moving track: the car starts moving with it (start_speed is relative)
                    bd = self._bodies[kb]
                    vel[b] += bd["v"] + np.cross(bd["w"], pos[b] - bd["pos"])
                    omg[b] += bd["w"]
                mt = t["trolley_mass"] if t["suspended"] else t["masses"][c]
                mass[b] = mt
                inv_mass[b] = 1.0 / mt
                ib[b] = t["inertias"][c] * (mt / t["masses"][c])
                cars.hang[b] = -1
                cars.dir[b] = 1.0
                cars.s[b] = t["s"][c] % ct.length if ct.closed else t["s"][c]
                cars.cg[b] = cg
                cars.rider[b] = t["riders"][c]
                cars.rows[b] = t["rows"][c]
                cars.gauge[b] = self._gauges[t["track"]]
                cars.speed0[b] = v0
                if davis is not None and self._res.mode == "physical":
                    cars.davis[b] = davis
                cars.drag[b] = self._res.drag_area, mt    # a wheel frame's share: bogies.place_bodies
                cars.track[b] = t["track"]
                cars.one_sided[b] = 1 if t["railway"] else 0
                cars.on_track[b] = 1
                cars.support[b] = 1
                cars.section[b] = -1
                car_frame[b] = fr
                labels.append((t["name"], c + 1))
                etrain.append(ti)
                b += 1
        return b

    def _place_free_bodies(self, b, labels, etrain) -> int:
        """The free bodies after the cars; returns the next body."""
        pos, quat, vel, omg = self.pos, self.quat, self.vel, self.omg
        mass, inv_mass, ib = self.mass, self.inv_mass, self.ib
        self._body0 = b
        for bd in self._bodies:
            pos[b] = bd["pos"]
            quat[b] = bd["q"]
            vel[b] = bd["v"]
            omg[b] = bd["w"]
            mass[b] = bd["mass"]
            inv_mass[b] = 1.0 / bd["mass"]
            ib[b] = bd["inertia"]
            labels.append((bd["name"], 1))
            etrain.append(-1)
            b += 1
        return b

    def _hang_bodies(self, b, labels, etrain):
        """Each suspended car's hanging body, below its trolley (after the free bodies)."""
        pos, quat, vel, omg = self.pos, self.quat, self.vel, self.omg
        mass, inv_mass, ib, cars = self.mass, self.inv_mass, self.ib, self.cars
        car_frame = cars.frame
        # suspended cars: the hanging bodies, after the free bodies; hinge joints made below
        self._hangs = []
        for ti, t in enumerate(self._trains):
            if not t["suspended"]:
                continue
            for c in range(t["n"]):
                cb = self._car0[ti] + c
                fr = car_frame[cb]
                up = _rot(quat[cb])[:, 2]
                r = -t["hang"] * up
                pos[b] = pos[cb] + r
                quat[b] = quat[cb]
                vel[b] = vel[cb] + np.cross(omg[cb], r)
                omg[b] = omg[cb]
                mass[b] = t["mass"]
                inv_mass[b] = 1.0 / t["mass"]
                ib[b] = t["inertia"]
                cars.hang[cb] = b
                cars.hang_rider[cb] = t["rider"] + t["hang"]
                labels.append((t["name"] + ".body", c + 1))
                etrain.append(-1)
                self._hangs.append((cb, b, t["hang"], t["swing_damping"]))
                b += 1
        return b

    def _build_joints(self):
        """The joints' table rows: each train's couplers (chained ones contiguous), the user's joints,
        the suspended cars' swing hinges. Returns each train's first chained joint and count."""
        ji_rows, jf_rows, tr_j0, tr_nj = self._coupler_rows()
        self._joint_meta = []   # per user joint: its first row, drives (row, column, knots), hold row
        for jd in self._joints:
            base = len(ji_rows)
            rows, created = self._joint_rows(jd, jf_rows)
            ji_rows.extend(rows)
            self._joint_meta.append(dict(base=base, n=len(rows), drives=created.drives,
                                         hold=-1 if created.hold_row is None else base + 1 + created.hold_row))
        susp, hang_j = [], []
        for cb, hb, hang, damp in self._hangs:
            jd = dict(kind="hinge", a=("idx", cb), b=("idx", hb), anchor_a=np.zeros(3),
                      anchor_b=np.array([0.0, 0.0, hang]), p=dict(axis=np.array([1.0, 0.0, 0.0])))
            if damp > 0.0:
                jd["p"].update(motor_speed=0.0, damping=damp)
            hang_j.append((len(ji_rows), len(ji_rows) + 1 if damp > 0.0 else -1))
            ji_rows.extend(self._joint_rows(jd, jf_rows)[0])
            ti = max(k for k in range(len(self._car0)) if self._car0[k] <= cb)
            susp.append(dict(jd, a=("car", ti, cb - self._car0[ti]), b=("body", hb - self._body0), suspension=True))
        swivel_j = []
        for jd in self._swivels:      # cars on bogies: each body on its two frames
            swivel_j.append(len(ji_rows))
            ji_rows.extend(self._joint_rows(jd, jf_rows)[0])
            ends = {k: ("car", jd["train"], jd[k][1] - self._car0[jd["train"]]) if jd[k][1] < self.ncars
                    else ("body", jd[k][1] - self._body0) for k in ("a", "b")}   # as the hinges' (energy groups)
            susp.append(dict(jd, **ends, suspension=True))
        # listed with the user's joints (after them) so that joined entities are known (energy groups)
        self._joints.extend(susp)
        nj = len(ji_rows)
        self.ji = np.array(ji_rows, dtype=np.int64).reshape(nj, jc.NJI) if nj else np.zeros((0, jc.NJI), np.int64)
        self._fold_holding_joints()
        self._groups = self._car_block_groups(swivel_j, tr_j0, tr_nj)
        self._hang_joints = self._hang_blocks(hang_j)
        self.jf = np.array(jf_rows, dtype=np.float64).reshape(nj, jc.NJF) if nj else np.zeros((0, jc.NJF))
        if self.swivels is not None:   # split events: the kernel watches every step (joints/swivel.py)
            self.swivels.bind(self.jf, swivel_j)
        self.jlam = np.zeros((max(nj, 1), st.NJR))
        return tr_j0, tr_nj

    def _car_block_groups(self, swivel_j, tr_j0, tr_nj) -> list:
        """Per train the joints of its row groups for the exact solve of cars on bogies
        (``car_blocks.py``): each car's two swivels and (``bogies = "two"``) the coupler from its body
        to the next one, or -1; [] for a train solved by its chain alone. Their swivels get chain
        column 3 (solved in the blocks; on a moving track the blocks with its body,
        ``carrier.factor_carrier_blocks``)."""
        groups = [[] for _ in self._trains]
        by = {(sw["train"], sw["car"], sw["frame"]): j for sw, j in zip(self._swivels, swivel_j)}
        coupler = dict((car, j) for j, car in self._couplers)
        for ti, t in enumerate(self._trains):
            bg = t.get("bogie")
            if bg is None or tr_nj[ti] != t["n"] - 1:
                continue
            f0 = self._car0[ti]
            for c in range(bg["cars"]):
                pair = (by[(ti, c, 0)], by[(ti, c, 1)])
                self.ji[list(pair), jc.JI_CHAIN] = 3
                # the coupler behind car c: with its swivels (it acts on this body and the next, whose
                # group is the next one: the system stays block tridiagonal)
                groups[ti].append(pair + (coupler.get(f0 + 2 * c + 1, -1) if bg["kind"] == "two" else -1,))
            for c, link in enumerate(bg["links"]):   # the bars between pivots: the bodies carry them (never prepared)
                if link is not None:
                    self.ji[tr_j0[ti] + c, jc.JI_CHAIN] = 5
        return groups

    def _hang_blocks(self, hang_j) -> list:
        """The suspended cars' (hinge, damper or -1) solved exactly with their trolleys
        (``hang_blocks.py``; no other joint acts on a hanging body: ``add_joint`` cannot name one):
        chain column 4. In a world with moving tracks they stay rows of the sweeps (chain column 0)."""
        if self._carriers:
            return []
        for j, d in hang_j:
            self.ji[[j] if d < 0 else [j, d], jc.JI_CHAIN] = 4
        return hang_j

    @property
    def track_carriers(self) -> list:
        """Per track: None (on the world) or (entity, pos0, rot0): the body that carries it and that
        body's centre and rotation matrix at the start, where the track's curve lies (builds the world)."""
        self._build()
        tr = self.records.tracks
        return [None if e < 0 else (int(e), tr.pos0[i].copy(), tr.rot0[i].copy()) for i, e in enumerate(tr.body)]

    def _carrier_entities(self) -> list[int]:
        return sorted({self._body0 + k for k in self._track_body if k >= 0})

    def _fold_holding_joints(self):
        """Each carrier's first hinge, prismatic or ball joint to the world is solved with it exactly
        (``carrier.fold_joint``): its table row's chain column 2."""
        folding = (jk.CODES["hinge"], jk.CODES["prismatic"], jk.CODES["ball"])
        self._carriers = self._carrier_entities()
        self._folds = []
        for e in self._carriers:
            j = next((j for j, r in enumerate(self.ji) if r[jc.JI_KIND] in folding and r[jc.JI_CHAIN] == 0
                      and sorted((int(r[jc.JI_A]), int(r[jc.JI_B]))) == [-1, e]), -1)
            if j >= 0:
                self.ji[j, jc.JI_CHAIN] = 2
            self._folds.append(j)

    def _coupler_rows(self):
        """Every train's couplers: table rows, parameter rows, each train's first chained joint and count
        (chained joints first, train by train; the others after them: slack couplers, and the couplers
        between car bodies). ``self._couplers``: (joint, the car whose ``coupler_force`` it is: the car
        ahead, on bogies its rear frame) of every coupler.

        A train of cars on two bogies each (``bogies = "two"``) lists in its chain its wheel frames'
        links (the bar inside a car, then a link to the next car's front frame, never prepared nor
        solved: the chain names the frames in order, ``couplings.train_car``); its couplers join the
        car bodies, at their ends (``length``/2 from the middle of the pivots, on the pivot line), and
        are solved in the car blocks (chain column 1, ``car_blocks.py``)."""
        rows, tr_nj = [], []     # (chained, table row, parameter row, the coupler's car or -1)
        for ti, t in enumerate(self._trains):
            b0 = self._car0[ti]
            bg = t.get("bogie")
            bodies = bg is not None and bg["kind"] == "two"     # couplers between the car bodies
            nch = 0
            for c in range(t["n"] - 1):
                bar = bogies.link_row(t, c)
                if bar is None and bodies:
                    k = c // 2      # the car ahead: its body's rear end, the next body's front end
                    body, half, e, cg = bg["body"], np.array(bg["length"]) / 2.0, bg["forward"], bg["cg"]
                    i, f = self._coupler_row(t, body[k], -half[k] - e[k], -cg[k],
                                             body[k + 1], half[k + 1] - e[k + 1], -cg[k + 1])
                    i[jc.JI_CHAIN] = 1
                    rows.append((False, i, f, b0 + c))
                    i, f = np.zeros(jc.NJI, np.int64), np.zeros(jc.NJF)   # the frames' link in the chain
                    i[jc.JI_A], i[jc.JI_B], i[jc.JI_KIND], i[jc.JI_CHAIN] = b0 + c, b0 + c + 1, jk.CODES["distance"], 5
                    rows.append((True, i, f, -1))
                    nch += 1
                    continue
                if bar is not None:    # a car on bogies: the bar between its frames' pivots
                    i, f = np.zeros(jc.NJI, np.int64), np.zeros(jc.NJF)
                    i[jc.JI_A], i[jc.JI_B] = b0 + c, b0 + c + 1
                    i[jc.JI_KIND] = jk.CODES["distance"]
                    f[jc.LA:jc.LA + 3], f[jc.LB:jc.LB + 3], f[distance.LENGTH] = bar
                    i[jc.JI_CHAIN] = 1
                else:
                    i, f = self._coupler_row(t, b0 + c, -t["lengths"][c] / 2.0, -t["cgs"][c],
                                             b0 + c + 1, t["lengths"][c + 1] / 2.0, -t["cgs"][c + 1])
                    i[jc.JI_CHAIN] = 0 if t["slack"] is not None and t["ctype"] != "draft_gear" else 1
                chained = i[jc.JI_CHAIN] == 1
                nch += chained
                rows.append((chained, i, f, -1 if bar is not None else b0 + c))
            tr_nj.append(nch)
        # chained joints of each train contiguous, the others after them
        rows = [r for r in rows if r[0]] + [r for r in rows if not r[0]]
        tr_j0 = [sum(tr_nj[:ti]) for ti in range(len(self._trains))]
        self._couplers = [(j, car) for j, r in enumerate(rows) if (car := r[3]) >= 0]
        return [r[1] for r in rows], [r[2] for r in rows], tr_j0, tr_nj

    @staticmethod
    def _coupler_row(t, a, xa, za, b, xb, zb):
        """The table and parameter rows of train ``t``'s coupler between bodies ``a`` and ``b``, its
        ends ``(xa, 0, za)`` in a's axes (the rear end) and ``(xb, 0, zb)`` in b's (the front end)."""
        f = np.zeros(jc.NJF)
        i = np.zeros(jc.NJI, np.int64)
        i[jc.JI_A], i[jc.JI_B] = a, b
        if t["ctype"] == "ball":   # the ball in the gap's middle; its free play along the cars' mean axis
            i[jc.JI_KIND] = jk.CODES["ball_track"]
            if t["stiffness"] is not None or t["damping"] is not None:
                f[ball_track.STIFFNESS] = t["stiffness"] or 0.0
                f[ball_track.DAMPING] = t["damping"] or 0.0
            f[jc.LA:jc.LA + 3] = (xa - t["gap"] / 2.0, 0.0, za)
            f[jc.LB:jc.LB + 3] = (xb + t["gap"] / 2.0, 0.0, zb)
            if t["slack"] is not None:
                i[jc.JI_SLACK] = 1
                f[ball_track.MIN], f[ball_track.MAX] = -t["slack"] / 2.0, t["slack"] / 2.0
        elif t["ctype"] == "draft_gear":
            cp = t["coupling"]
            i[jc.JI_KIND] = jk.CODES["draft_gear"]
            f[jc.LA:jc.LA + 3] = (xa, 0.0, za)
            f[jc.LB:jc.LB + 3] = (xb, 0.0, zb)
            f[draft_gear.LENGTH] = t["gap"]
            f[draft_gear.HALF] = 0.5 * cp.free_play
            f[draft_gear.PRELOAD] = cp.preload
            f[draft_gear.K_LOAD] = cp.stiffness
            f[draft_gear.K_UNLOAD] = cp.unloading_stiffness
            f[draft_gear.TRAVEL] = cp.travel
            f[draft_gear.MODE] = draft_gear.OPEN
            f[draft_gear.SIDE] = 1.0
        else:
            i[jc.JI_KIND] = jk.CODES["distance"]
            gap = t["gap"]
            f[jc.LA:jc.LA + 3] = (xa, 0.0, za)
            f[jc.LB:jc.LB + 3] = (xb, 0.0, zb)
            f[distance.LENGTH] = gap
            if t["stiffness"] is not None or t["damping"] is not None:
                f[distance.STIFFNESS] = t["stiffness"] or 0.0
                f[distance.DAMPING] = t["damping"] or 0.0
            if t["slack"] is not None:
                i[jc.JI_SLACK] = 1
                f[distance.MIN_LENGTH] = max(gap - t["slack"] / 2.0, 0.0)
                f[distance.MAX_LENGTH] = gap + t["slack"] / 2.0
        return i, f

    def _build_records(self, tr_j0, tr_nj):
        """The kernels' records (``state.py``), allocated by name, and the work arrays."""
        nb, nj, packed, cars = self.pos.shape[0], self.ji.shape[0], self._packed, self.cars
        ns = len(self._sections)
        sec = np.array(self._sections, dtype=np.float64).reshape(ns, 6)
        self.sections = st.allocate(st.Sections, {}, kind=sec[:, 0].astype(np.int64), track=sec[:, 1].astype(np.int64),
                                    s_from=sec[:, 2].copy(), s_to=sec[:, 3].copy(), speed=sec[:, 4].copy(),
                                    fmax=sec[:, 5].copy())
        r = self._res
        res = st.allocate(st.Resistance, {}, rolling=r.rolling, drag_area=r.drag_area, air_density=r.air_density,
                          nl2=r.mode == "nl2", nl2_drag=r.nl2_drag)
        ji = self.ji
        self.joint_state = st.allocate(st.Joints, {}, kind=ji[:, jc.JI_KIND].copy(), a=ji[:, jc.JI_A].copy(),
                                       b=ji[:, jc.JI_B].copy(), slack=ji[:, jc.JI_SLACK].copy(),
                                       chain=ji[:, jc.JI_CHAIN].copy(), param=self.jf, lam=self.jlam)
        from trackrider.physics.network import Network

        net = Network(self._connections, self._switches, self._tracks, self.dt, self.track_names)
        longest = max((t["length"] for t in self._trains), default=1.0)
        nt = len(self._tracks)
        tbody = np.array([-1 if k < 0 else self._body0 + k for k in self._track_body], dtype=np.int64)
        pos0, rot0 = np.zeros((nt, 3)), np.tile(np.eye(3), (nt, 1, 1))
        for i, e in enumerate(tbody):
            if e >= 0:
                pos0[i], rot0[i] = self.pos[e], _rot(self.quat[e])
        tracks = st.allocate(st.Tracks, {}, data=packed.data, row0=packed.row0, nrows=packed.nrows, ds=packed.ds,
                             length=packed.length, closed=packed.closed, body=tbody, pos0=pos0, rot0=rot0,
                             **net.tables(nt, longest,
                                          [t.get("route", ()) for t in self._trains for _ in range(t["n"])]))
        self.network = net if (self._connections or self._switches) else None
        self.bodies = st.allocate(st.Bodies, dict(nb=nb), pos=self.pos, quat=self.quat, vel=self.vel, omg=self.omg,
                                  inv_mass=self.inv_mass, inv_ib=self.inv_ib, ib=self.ib, mass=self.mass)
        if nb >= st.LARGE_PAGE_BODIES:   # a long world's arrays on large pages (docs/physics.md "Large pages")
            tracks, cars = st.in_large_pages(tracks), st.in_large_pages(cars)
            self.bodies, self.joint_state = st.in_large_pages(self.bodies), st.in_large_pages(self.joint_state)
            self.cars = cars
            b = self.bodies
            self.pos, self.quat, self.vel, self.omg = b.pos, b.quat, b.vel, b.omg
            self.mass, self.inv_mass, self.ib, self.inv_ib = b.mass, b.inv_mass, b.ib, b.inv_ib
            self.jf, self.jlam = self.joint_state.param, self.joint_state.lam
            if self.swivels is not None:
                self.swivels.bind(self.jf, self.swivels._joint)
        self.programs = self._build_programs()
        self.records = st.WorldState(tracks, self.bodies, cars, self.sections, res, self.joint_state, self.programs)
        members = [[b for b in range(self.ncars) if tbody[cars.track[b]] == e] for e in self._carriers]
        train_carrier = [self._carriers.index(tbody[t["track"]]) if tbody[t["track"]] >= 0 else -1
                         for t in self._trains]
        # room for every car on a carrier when connections may move cars onto moving tracks (network.regroup)
        nkc = self.ncars if self._connections and self._carriers else sum(map(len, members))
        self._temps = st.make_temps(nb, nj, tr_j0, tr_nj, len(self._carriers), nkc, train_carrier, self._groups,
                                    self._hang_joints)
        self._threads = st.ThreadChoice()
        couplings.split_chains(self._temps.chains, nb, self.joint_state, self._temps.blocks.train,
                               len(self._hang_joints), len(self._carriers), jk.CODES["distance"])
        trk = self._temps.trk
        first = 0
        for k, (e, cars_k) in enumerate(zip(self._carriers, members)):
            trk.kbody[k] = e
            trk.kfold[k] = self._folds[k]
            trk.carrier[e] = k
            trk.kfirst[k] = first
            for b in cars_k:
                trk.kcars[first] = b
                trk.carrier[b] = k
                first += 1
            trk.kfirst[k + 1] = first

    def _build_programs(self):
        """The joints' programs (``programs.py``): drives (a motor's profiles), cycles (holds and
        releases) and the joints reported in ``joints.csv`` (each user joint with an end that carries
        tracks)."""
        from trackrider.physics import programs as pg
        from trackrider.physics.joints import hinge_axis, slide

        knots, drives, cycles, phases, rep = [], [], [], [], []
        self._reported, self._cycles = [], []
        self.mechanism_events: list[dict] = []
        for ji, (jd, meta) in enumerate(zip(self._joints, self._joint_meta)):
            base = meta["base"]
            for row, col, kn_ in meta["drives"]:
                drives.append((base + 1 + row, col, len(knots), len(kn_)))
                knots.extend(kn_)
            a, b = self._body_index(jd["a"]), self._body_index(jd["b"])
            carrier = a if a in self._carriers else (b if b in self._carriers else -1)
            if jd.get("cycle") is not None:
                col = slide.ACTIVE if jd["kind"] == "prismatic" else hinge_axis.ACTIVE
                first = jd["cycle"][0]
                self.jf[meta["hold"], col] = (2.0 if first["state"] == pg.HOLD else 0.0) if first["when"] == pg.AT_START \
                    else 0.0
                cycles.append((meta["hold"], col, len(phases), len(jd["cycle"]), 0 if first["when"] == pg.AT_START else -1))
                self._cycles.append(ji)
                for ph in jd["cycle"]:
                    if ph["when"] == pg.WHEN_STOPPED and carrier < 0:
                        raise InputError("a phase that waits for a train to stop needs a joint to a body that carries "
                                         "a track (its train stops on that track)", where=f"joint[{ji}].cycle")
                    t = self._trains[ph["train"]] if ph["train"] >= 0 else None
                    phases.append((ph["state"], ph["when"], ph["t"], self._car0[ph["train"]] if t else 0,
                                   t["n"] if t else 0, ph["for_s"], carrier))
            if carrier >= 0:
                rep.append(self._reported_joint(jd, meta, carrier == a))
                self._reported.append(ji)

        def col(rows, k, dtype=np.int64):
            return np.array([r[k] for r in rows], dtype=dtype)

        knots = np.array(knots, dtype=np.float64).reshape(len(knots), 2)
        return st.allocate(
            st.Programs, dict(nlog=pg.MAX_LOG), knots=knots, dj=col(drives, 0), dcol=col(drives, 1),
            dfirst=col(drives, 2), dcount=col(drives, 3), cj=col(cycles, 0), ccol=col(cycles, 1),
            cfirst=col(cycles, 2), ccount=col(cycles, 3), cphase=col(cycles, 4), ctime=np.zeros(len(cycles)),
            pstate=col(phases, 0), pwhen=col(phases, 1), pt=col(phases, 2, float), pcar0=col(phases, 3),
            pncar=col(phases, 4), pfor=col(phases, 5, float), pbody=col(phases, 6),
            rj=col(rep, 0), rn=col(rep, 1), rkind=col(rep, 2), rside=col(rep, 3),
            raxis=np.array([r[4] for r in rep], dtype=np.float64).reshape(len(rep), 3),
            rref=np.array([r[5] for r in rep], dtype=np.float64).reshape(len(rep), 6), rx0=col(rep, 6, float),
            rhold=col(rep, 7))

    def _reported_joint(self, jd, meta, carrier_is_a):
        """A reported joint's row of the programs: first row, rows, kind, the carrier's side, axis,
        a hinge's reference normals, a prismatic joint's start travel, hold row."""
        kind = {"hinge": 1, "prismatic": 2}.get(jd["kind"], 0)
        axis = np.asarray(jd["p"].get("axis", (1.0, 0.0, 0.0)), dtype=float)
        a, b = self._body_index(jd["a"]), self._body_index(jd["b"])
        Ra = _rot(self.quat[a]) if a >= 0 else np.eye(3)
        Rb = _rot(self.quat[b]) if b >= 0 else np.eye(3)
        ref = np.zeros(6)
        x0 = 0.0
        if kind:
            f = self.jf[meta["base"]]
            pa = self._anchor_world(a, f[jc.LA:jc.LA + 3]) if a >= 0 else f[jc.LA:jc.LA + 3]
            pb = self._anchor_world(b, f[jc.LB:jc.LB + 3]) if b >= 0 else f[jc.LB:jc.LB + 3]
            n1 = jc.axis_normals(Ra @ axis)[0]
            ref = np.concatenate([Ra.T @ n1, Rb.T @ n1])
            x0 = float((pb - pa) @ (Ra @ axis))
        return (meta["base"], meta["n"], kind, 0 if carrier_is_a else 6, axis, ref, x0, meta["hold"])

    @property
    def mechanisms(self) -> list[dict]:
        """The joints reported in ``joints.csv`` (each that holds or drives a body carrying tracks), in
        order: ``name``, ``kind``, ``body`` (the carrier's name) (builds the world)."""
        self._build()
        out = []
        for ji in self._reported:
            jd = self._joints[ji]
            a, b = self._body_index(jd["a"]), self._body_index(jd["b"])
            e = a if a in self._carriers else b
            out.append(dict(name=jd["name"], kind=jd["kind"], body=self._entity_labels[e][0]))
        return out

    def _build_railway(self):
        """The ``Rail`` record (``rail.Railway``) when a train has railway vehicles or draft gears; else
        ``self.railway`` stays None (``run`` passes an idle record: ``railway.py`` does not run)."""
        from trackrider.physics import rail

        self.railway = None
        if any(rail.is_railway(t) for t in self._trains):
            self.railway = rail.Railway(self)

    def _build_operation(self, chain_count):
        """Contacts between consecutive trains on each track and the block logic (``operation.py``,
        ``blocks.py``); ``self.ops`` stays None without either (the kernel compiles without them)."""
        from trackrider.physics import operation as op

        pairs = []      # (behind train, ahead train)
        for tk, ct in enumerate(self._tracks):
            on = [k for k, t in enumerate(self._trains) if t["track"] == tk]
            if len(on) < 2:
                continue
            L = ct.length
            on.sort(key=lambda k: (self.cars.s[self._car0[k]] % L) if ct.closed else self.cars.s[self._car0[k]])
            for i in range(len(on) if ct.closed else len(on) - 1):
                pairs.append((on[i], on[(i + 1) % len(on)]))
        has_blocks = any(o["block"] for o in self._section_ops)
        self.ops = None
        if not pairs and not has_blocks:
            return
        from trackrider.physics.blocks import Operation

        ops = op.make_ops(len(self._sections), self.ncars, len(pairs), Operation.points_count(self),
                          self._operation.restitution)
        for c, (tb, ta) in enumerate(pairs):
            t_b, t_a = self._trains[tb], self._trains[ta]
            ct = self._tracks[t_b["track"]]
            ops.behind[c] = self._car0[tb]
            ops.ahead[c] = self._car0[ta] + t_a["n"] - 1
            ops.touch[c] = 0.5 * (t_b["lengths"][0] + t_a["lengths"][-1])
            ops.cloop[c] = ct.length if ct.closed else 0.0
            ops.chain_b[c] = tb if chain_count[tb] == t_b["n"] - 1 and t_b["n"] > 1 else -1
            ops.chain_a[c] = ta if chain_count[ta] == t_a["n"] - 1 and t_a["n"] > 1 else -1
        self.contact_trains = pairs
        self.ops = ops
        self.operation = Operation(self, ops, self._operation.max_hold)
        self.operation.contact_pairs = pairs

    @property
    def contact_ends(self) -> list:
        """Entity pairs joined by a contact between trains (front car behind, rear car ahead)."""
        self._build()
        return [(self._car0[tb], self._car0[ta] + self._trains[ta]["n"] - 1) for tb, ta in self.contact_trains]

    def _body_index(self, end):
        if end == "world":
            return -1
        if end[0] == "idx":
            return end[1]
        if end[0] == "car":
            return self._car0[end[1]] + end[2]
        return self._body0 + end[1]

    def _anchor_world(self, bi, local):
        R = _rot(self.quat[bi])
        return self.pos[bi] + R @ local

    def _joint_rows(self, jd, jf_rows):
        """Table rows (ji) of one joint, appending their jf rows: the anchors here, the kind's own
        columns by its module's ``columns`` (``joints/``), which also names its extra rows (a
        hinge's or prismatic joint's limit / motor / spring / hold row after its 5-row block).
        Returns the rows and the ``common.Created`` (its drives and hold row)."""
        i = np.zeros(jc.NJI, np.int64)
        f = np.zeros(jc.NJF)
        a, b = self._body_index(jd["a"]), self._body_index(jd["b"])
        kind = jd["kind"]
        i[jc.JI_A], i[jc.JI_B] = a, b
        i[jc.JI_KIND] = jk.CODES[kind]
        module = jk.kind(kind)

        def track_anchor(bi):
            if bi < self.ncars:
                return np.array([0.0, 0.0, -self.cars.cg[bi]])
            return np.zeros(3)

        la, lb = jc.default_anchors(module.ANCHOR_B_AT_A, jd["anchor_a"], jd["anchor_b"], a, b, track_anchor,
                                    self._anchor_world, lambda e, p: _rot(self.quat[e]).T @ (p - self.pos[e]))
        f[jc.LA:jc.LA + 3] = la
        f[jc.LB:jc.LB + 3] = lb
        pa = self._anchor_world(a, la) if a >= 0 else la
        pb = self._anchor_world(b, lb) if b >= 0 else lb
        qa = self.quat[a] if a >= 0 else np.array([1.0, 0.0, 0.0, 0.0])
        qb = self.quat[b] if b >= 0 else np.array([1.0, 0.0, 0.0, 0.0])
        created = jc.Created(i, f, jd["p"], pa, pb, _rot(qa) if a >= 0 else np.eye(3),
                             _rot(qb) if b >= 0 else np.eye(3), qa, qb, hold=jd.get("cycle") is not None)
        extra = [(jk.CODES[k], slack, g) for k, slack, g in module.columns(created)]
        jf_rows.append(f)
        rows = [i]
        for k, slack, g in extra:
            e = i.copy()
            e[jc.JI_KIND] = k
            e[jc.JI_SLACK] = slack
            rows.append(e)
            jf_rows.append(g)
        return rows, created

    def _take_log(self):
        """The programs' log of holds and releases into ``mechanism_events`` (dicts t, joint, kind)."""
        from trackrider.physics import programs as pg

        prog = self.programs
        for step, c, phase in prog.log[:int(prog.nlog[0])]:
            c, phase = int(c), int(phase)
            ji = self._cycles[c]
            state = self._joints[ji]["cycle"][phase]["state"]
            self.mechanism_events.append(dict(t=float(step) * self.dt, joint=self._joints[ji]["name"],
                                              kind="joint_hold" if state == pg.HOLD else "joint_release"))
        prog.nlog[0] = 0

    # ------------------------------------------------------------------ running
    @property
    def entity_labels(self) -> list:
        """``[(train_or_body_name, car_no_1_based), ...]`` in entity order (builds the world)."""
        self._build()
        return self._entity_labels

    @property
    def entity_train(self) -> np.ndarray:
        """(n_entities,) int: train index of each entity, -1 for free bodies (builds the world)."""
        self._build()
        return self._entity_train

    @property
    def trains(self) -> tuple:
        """Read-only view of the trains added, in order: dicts with ``name``, ``track``, ``n`` (cars),
        ``mass``, ``length``, ``cg``, ``rider``, ``railway``, ``suspended``, ``hang``, ... (do not modify)."""
        return tuple(self._trains)

    @property
    def gauges(self) -> tuple:
        """Gauge of each track, m, in track order."""
        return tuple(self._gauges)

    @property
    def joints(self) -> tuple:
        """Read-only view of the joints, in order: dicts with ``kind``, ``a``, ``b`` (ends as
        ``add_joint`` takes them; a suspended car's body is ``("body", i)`` with i counting after the
        free bodies), ``anchor_a``, ``anchor_b``, ``p`` (the parameters). Once the world is built
        the suspended cars' swing hinges follow the user's joints (``suspension=True``)."""
        return tuple(self._joints)

    @property
    def n_entities(self) -> int:
        self._build()
        return self.pos.shape[0]

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self.step_count * self.dt

    @property
    def car_s(self) -> np.ndarray:
        """Arc length of every car's anchor on its track, m (a copy)."""
        self._build()
        return self.cars.s[: self.ncars].copy()

    def _step_records(self, record_every: int) -> dict:
        """The kernel's ``state.Step`` of a run, threaded (True) and serial (False), kept for the next
        run with the same settings: a run of a few steps (a caller stepping the world in a loop) would
        otherwise spend most of its time making them (``bench/solver.py --calls``)."""
        g = self.gravity
        key = (self.dt, g, self.erp, self.iterations, self.warm_start, record_every)
        kept = getattr(self, "_cfgs", None)
        if kept is not None and kept[0] == key:
            return kept[1]
        # gmag as the kernel once computed it, sqrt(gx² + gy² + gz²)
        gmag = math.sqrt(0.0 * 0.0 + 0.0 * 0.0 + (-g) * (-g))
        cfg = st.allocate(st.Step, {}, h=self.dt, gx=0.0, gy=0.0, gz=-g, gmag=gmag, erp_h=self.erp / self.dt,
                          iterations=self.iterations, warm=self.warm_start, record_every=record_every, threaded=1)
        cfgs = {True: cfg, False: cfg._replace(threaded=0)}
        self._cfgs = (key, cfgs)
        return cfgs

    def _idle_records(self):
        """(rail, ops) for ``run_chunk``: the world's own, or idle records (``rail.idle_rail``,
        ``operation.idle_ops``: no railway, no operation; the kernel only reads them), made once."""
        idle = getattr(self, "_idle", None)
        if idle is None:
            from trackrider.physics.operation import idle_ops
            from trackrider.physics.rail import idle_rail

            idle = self._idle = (idle_rail(), idle_ops(len(self._sections), self.ncars))
        return (self.railway.record if self.railway is not None else idle[0],
                self.ops if self.ops is not None else idle[1])

    def run(self, n_steps: int, record_every: int = 1, sink=None, progress=None,
            chunk_records: int | None = None, joint_sink=None) -> RunStatus:
        """Advance ``n_steps`` steps; every ``record_every``-th step is recorded.

        ``sink(t, samples)`` receives, per chunk, ``t`` (m,) s and ``samples``
        (m, n_entities, N_CHANNELS) (columns: ``trackrider.physics.channels``); the first
        sample is taken after ``record_every`` steps. ``joint_sink(t, samples)``, the reported
        joints' (``mechanisms``): (m, n_mechanisms, len(JOINT_CHANNELS)). ``progress(done, total)``
        is called per chunk. Returns a ``RunStatus``; a non-finite state stops the run (``diverged``).
        The joints' holds and releases so far are ``mechanism_events``.
        """
        self._build()
        n_steps = int(n_steps)
        record_every = max(int(record_every), 1)
        ne = self.pos.shape[0]
        if chunk_records is None:
            chunk_records = max(1, min(2000, 2_000_000 // max(ne * ch.N_CHANNELS, 1)))
        steps_per_chunk = chunk_records * record_every
        cfgs = self._step_records(record_every)
        # a world with the per-car stages on all threads times each chunk both ways as it goes
        # (state.ThreadChoice: the same bytes either way; sim.py calls run chunk by chunk)
        choice = self._threads if self._temps.par is not None else None
        free = kn.free_joints_flag(self.joint_state)
        rail, ops = self._idle_records()
        car_rows = kn.car_rows_flag(self.records, rail)
        oper = self.operation
        if oper is not None and self.step_count == 0 and not getattr(self, "_op_started", False):
            oper.start()
            self._op_started = True
        done = 0
        while done < n_steps:
            n = min(steps_per_chunk, n_steps - done)
            net = self.network
            if net is not None:      # a chunk ends where a switch's program asks for a throw
                net.post(self.step_count, self.records.tracks)
                k = net.steps_to_next(self.step_count)
                if k is not None and k > 0:
                    n = min(n, k)
            # records in this chunk: steps k with (step_count + k) % record_every == 0
            m = (self.step_count + n) // record_every - self.step_count // record_every
            nr = len(self._reported)
            out = np.empty((max(m, 0), ne + nr, ch.N_CHANNELS))
            out_t = np.empty(max(m, 0))
            way = choice.next() if choice is not None else True
            t0 = time.perf_counter()
            steps, nrec, status, bad = kn.run_chunk(n, self.step_count, cfgs[way], self.records, self._temps, out_t,
                                                      out, free, car_rows, ops, rail)
            if choice is not None:
                choice.took(way, time.perf_counter() - t0, steps)
            self.step_count += steps
            done += steps
            if net is not None:
                net.drain(self.records.tracks, self._entity_labels.__getitem__)
            if self._cycles:
                self._take_log()
            if sink is not None and nrec > 0:
                sink(out_t[:nrec], out[:nrec, :ne] if nr else out[:nrec])
            if joint_sink is not None and nrec > 0 and nr:
                joint_sink(out_t[:nrec], out[:nrec, ne:, :len(ch.JOINT_CHANNELS)])
            if progress is not None:
                progress(done, n_steps)
            if oper is not None and (status == 2 or self.ops.nhits[0] > 0):
                oper.update(self.step_count)     # the block logic's turn (operation.watch), collisions
                if oper.stalled is not None:
                    return RunStatus("stalled", done, self.time, None, None, oper.stalled[1])
                if status == 2:
                    continue
            if status != 0:
                label = self.entity_labels[bad] if 0 <= bad < len(self.entity_labels) else None
                return RunStatus("diverged", done, self.time, int(bad), label,
                                 f"non-finite state at t = {self.time:.4f} s"
                                 + (f" ({label[0]} car {label[1]})" if label else ""))
        return RunStatus("ok", done)
