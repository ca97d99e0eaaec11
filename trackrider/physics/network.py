"""Track networks: connections between track ends and switches (docs/physics.md §12).

A car changes track when its anchor passes a connected end or a switch point: its ``s`` is carried
over to the next track (``s − L`` onwards, ``L' − …`` where the direction of ``s`` flips) and its
body, velocity and everything else are left as they are — the connection is checked when the world
is built to be continuous in position, tangent and up (``World.add_connection``), so the only thing
that changes is which curve the track joint holds the anchor on. Where the direction of ``s`` flips
(an end meeting an end, a start meeting a start) the car's ``dir`` turns to −1: its frame is the
track's turned half a turn about the up axis (T, N, Ω and the roll negate; B, P'' and κ stay).

Tables (``state.Tracks``, filled by ``Network.tables``):

* ``link[t, e]`` (track, end, switch) of track ``t``'s start (e = 0) or end (e = 1): the track and
  end it continues on (end 2: the point of switch ``switch`` inside its through track), −1 none;
* ``sw_*``: each switch's through track and point, its branches (track indices, −1 padded), the
  branch set, a requested branch and the step its throw ends, its clearance and throw time;
* ``log`` (rows: kind, who, a, b, step; ``nlog`` counts): what happened, read by ``Network.drain``
  after each chunk — a track change (car, from track, to track), a run-through (car, switch, branch
  forced), a split (car, switch, branch the moving points were going to), a switch set (switch,
  from branch, to branch), a throw blocked by the interlocking (switch, set branch, requested).

The Python side (``Network``) keeps the switches' programs and turns the log into events.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_B, C_N, C_OMEGA, C_P, C_ROLL, C_T, eval_track
from trackrider.jit import njit
from trackrider.physics.carrier import move_frame
from trackrider.physics.couplings import train_car

LOG_TRACK_CHANGE, LOG_RUN_THROUGH, LOG_SET, LOG_BLOCKED, LOG_SPLIT = 0, 1, 2, 3, 4
END_START, END_END, END_POINT = 0, 1, 2
MAX_BRANCHES = 4
LOG_ROWS = 4096
#: connections and switches are continuous within these (docs/scenarios.md, "Track networks")
POSITION_TOL = 1e-3          # m
ANGLE_TOL = 0.5              # degrees
COS_TOL = float(np.cos(np.radians(ANGLE_TOL)))
#: a train asks a switch for its route's branch only while it moves towards the point faster than
#: this (m/s): a train at rest — held in a station, stored, creeping on a hold — asks nothing
CLAIM_SPEED = 0.1


# ----------------------------------------------------------------------------- kernels
@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def car_frame(tracks, t, s, d, out):
    """The frame of a car on track ``t`` at ``s``: the track's, turned half a turn about B when the
    car runs against the direction of ``s`` (``d`` < 0)."""
    eval_track(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], tracks.length[t], tracks.closed[t], s,
               out)
    if d < 0.0:
        reverse_frame(out)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def reverse_frame(out):
    """A track's frame ``out`` turned half a turn about B: a car's that runs against s."""
    for k in range(3):
        out[C_T + k] = -out[C_T + k]
        out[C_N + k] = -out[C_N + k]
        out[C_OMEGA + k] = -out[C_OMEGA + k]
    out[C_ROLL] = -out[C_ROLL]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def log_event(tracks, kind, who, a, b):
    """One row of the log (dropped, still counted, when it is full)."""
    n = tracks.nlog[0]
    if n < tracks.log.shape[0]:
        row = tracks.log[n]
        row[0], row[1], row[2], row[3], row[4] = kind, who, a, b, tracks.clock[0]
    tracks.nlog[0] = n + 1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _branch_index(tracks, k, t, e):
    """Index of the branch of switch ``k`` that is track ``t``'s end ``e`` (END_POINT: the through
    track), −1 none."""
    for i in range(tracks.sw_branch.shape[1]):
        if tracks.sw_branch[k, i] == t and tracks.sw_bend[k, i] == e:
            return i
    return -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _trail(tracks, k, b, t, e):
    """Car ``b`` trails through switch ``k`` from its branch (track ``t``, end ``e``): a switch set
    against it is forced over (a spring switch), with a run-through row in the log."""
    i = _branch_index(tracks, k, t, e)
    if i >= 0 and tracks.sw_set[k] != i:
        log_event(tracks, LOG_RUN_THROUGH, b, k, i)
        tracks.sw_set[k] = i
        tracks.sw_req[k] = -1
        tracks.sw_until[k] = -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _facing(tracks, k, b):
    """The branch car ``b`` takes facing switch ``k``: its index, −1 when the points are moving (the
    car derails: a ``split`` row in the log)."""
    if tracks.sw_until[k] >= 0:
        log_event(tracks, LOG_SPLIT, b, k, tracks.sw_req[k])
        return -1
    return tracks.sw_set[k]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _enter(b, t, e, t2, e2, over, S, cars, tracks, bodies, carrier, E):
    """Car ``b`` leaves track ``t`` through ``e`` (START towards −s; END or a switch's POINT towards
    +s) ``over`` metres and enters ``t2`` through ``e2`` (START: runs towards +s; END, or a switch's
    POINT reached from a branch: towards −s). Returns its s there; ``dir`` turns where the sense of
    s does; a track on another body makes it a member of that body's carrier (``_change_carrier``)."""
    if e2 == END_START:
        s2 = over
    elif e2 == END_END:
        s2 = tracks.length[t2] - over
    else:
        s2 = S - over
    if (e == END_START) != (e2 != END_START):
        cars.dir[b] = -cars.dir[b]
    if b < tracks.route_at.shape[0]:
        i = tracks.route_at[b]
        if i + 1 < tracks.route.shape[1] and tracks.route[b, i + 1] == t2:
            tracks.route_at[b] = i + 1
    log_event(tracks, LOG_TRACK_CHANGE, b, t, t2)
    cars.track[b] = t2
    if tracks.body[t2] != tracks.body[t]:
        _change_carrier(b, t, t2, tracks, bodies, cars, carrier, E)
    return s2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _change_carrier(b, t, t2, tracks, bodies, cars, carrier, E):
    """Car ``b`` moved from track ``t`` to ``t2`` on another body: it becomes a member of ``t2``'s
    carrier (−1: the world). Its last frame axes (``cars.prev_frame``, which the next step's
    transport turns from) go from ``t``'s table to world axes (its frame, still the old one) and
    into ``t2``'s table (rot0 R_tᵀ e); its body columns are cleared (``regroup`` rebuilds the
    carriers' member lists before the next step)."""
    fr, pf = cars.frame[b], cars.prev_frame[b]
    if carrier[b] >= 0:
        for a in range(3):
            c = C_T if a == 0 else (C_N if a == 1 else C_B)
            for i in range(3):
                pf[3 * a + i] = fr[c + i]
        for i in range(6):
            for q in range(6):
                E[b, i, q] = 0.0
    k = tracks.body[t2]
    carrier[b] = -1 if k < 0 else carrier[k]
    if k >= 0:
        R, R0 = bodies.rot[k], tracks.rot0[t2]
        for a in range(3):
            e0, e1, e2 = pf[3 * a], pf[3 * a + 1], pf[3 * a + 2]
            l0 = R[0, 0] * e0 + R[1, 0] * e1 + R[2, 0] * e2
            l1 = R[0, 1] * e0 + R[1, 1] * e1 + R[2, 1] * e2
            l2 = R[0, 2] * e0 + R[1, 2] * e1 + R[2, 2] * e2
            for i in range(3):
                pf[3 * a + i] = R0[i, 0] * l0 + R0[i, 1] * l1 + R0[i, 2] * l2


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _end_now(tracks, bodies, t, e, fr):
    """Track ``t``'s start (e = 0) or end frame where its body has it now, into ``fr``."""
    L = tracks.length[t]
    eval_track(tracks.data, tracks.row0[t], tracks.nrows[t], tracks.ds[t], L, tracks.closed[t],
               0.0 if e == END_START else L, fr)
    if tracks.body[t] >= 0:
        move_frame(fr, t, tracks, bodies)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def aligned(tracks, bodies, t, e, t2, e2, fr):
    """True while track ``t``'s end ``e`` and ``t2``'s end ``e2`` (on different bodies) meet as a
    connection must: positions within POSITION_TOL, tangents (an end continuing into a start) and up
    axes within ANGLE_TOL, at the bodies' poses now (``fr``: scratch of a frame)."""
    _end_now(tracks, bodies, t, e, fr)
    p0, p1, p2 = fr[C_P], fr[C_P + 1], fr[C_P + 2]
    tx, ty, tz = fr[C_T], fr[C_T + 1], fr[C_T + 2]
    b0, b1, b2 = fr[C_B], fr[C_B + 1], fr[C_B + 2]
    _end_now(tracks, bodies, t2, e2, fr)
    d0, d1, d2 = fr[C_P] - p0, fr[C_P + 1] - p1, fr[C_P + 2] - p2
    sign = 1.0 if e != e2 else -1.0
    return (d0 * d0 + d1 * d1 + d2 * d2 <= POSITION_TOL * POSITION_TOL
            and sign * (tx * fr[C_T] + ty * fr[C_T + 1] + tz * fr[C_T + 2]) >= COS_TOL
            and b0 * fr[C_B] + b1 * fr[C_B + 1] + b2 * fr[C_B + 2] >= COS_TOL)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def regroup(cars, joints, tmp):
    """After cars changed between tracks on different bodies (``_change_carrier``): each carrier's
    member list (``trk.kfirst``, ``kcars``, in car order), each train's carrier (that of its first
    car on a moving track, −1 none), and no body columns in the rows along T of a car now on the
    world (``crow.moving``, ``crow.a``). Nothing when no car changed carrier."""
    trk, chains, crow = tmp.trk, tmp.chains, tmp.crow
    nk = trk.kbody.shape[0]
    same = True
    for k in range(nk):
        m = trk.kfirst[k]
        for b in range(cars.n):
            if trk.carrier[b] == k:
                if m >= trk.kfirst[k + 1] or trk.kcars[m] != b:
                    same = False
                m += 1
        if m != trk.kfirst[k + 1]:
            same = False
    if same:
        return
    first = 0
    for k in range(nk):
        trk.kfirst[k] = first
        for b in range(cars.n):
            if trk.carrier[b] == k:
                trk.kcars[first] = b
                first += 1
        trk.kfirst[k + 1] = first
    for tr in range(chains.first.shape[0]):
        c = -1
        if chains.count[tr] > 0:
            for i in range(chains.count[tr] + 1):
                k = trk.carrier[train_car(tr, i, chains, joints, -1)]
                if c < 0:
                    c = k
        chains.carrier[tr] = c
    for b in range(cars.n):
        if trk.carrier[b] < 0:
            crow.moving[b] = -1
            for i in range(6):
                crow.a[b, i] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def pass_junction(b, s0, s, cars, tracks, bodies, carrier, E, fr):
    """Car ``b`` moved from ``s0`` to ``s`` on its track: the track and ``s`` it is on after any
    connection or switch it passed (``cars.track``, ``cars.dir`` updated, a track-change row in
    the log). Returns (s, ok): ok False when it ran into moving points. A connection between
    tracks on different bodies is there only while its ends are ``aligned`` now (else the end is
    open and the car runs off it); ``fr``: scratch of a frame."""
    t = cars.track[b]
    L = tracks.length[t]
    for k in range(tracks.sw_track.shape[0]):
        S = tracks.sw_s[k]
        if tracks.sw_track[k] != t or tracks.sw_at[k] != END_POINT:
            continue
        if s0 < S <= s:                       # facing the switch, towards +s
            i = _facing(tracks, k, b)
            if i < 0:
                return s, False
            x, xe = tracks.sw_branch[k, i], tracks.sw_bend[k, i]
            if xe != END_POINT:
                return _enter(b, t, END_POINT, x, xe, s - S, S, cars, tracks, bodies, carrier, E), True
        elif s <= S < s0:                     # trailing through it from the through track
            _trail(tracks, k, b, t, END_POINT)
    if tracks.closed[t] or 0.0 <= s <= L:
        return s, True
    e = END_START if s < 0.0 else END_END
    over = -s if s < 0.0 else s - L
    t2, e2, k = tracks.link[t, e, 0], tracks.link[t, e, 1], tracks.link[t, e, 2]
    S = 0.0
    if k >= 0:
        S = tracks.sw_s[k]
        if t == tracks.sw_track[k] and e == tracks.sw_at[k]:     # facing a switch at its track's end
            i = _facing(tracks, k, b)
            if i < 0:
                return s, False
            t2, e2 = tracks.sw_branch[k, i], tracks.sw_bend[k, i]
        else:                                                    # trailing from a branch
            _trail(tracks, k, b, t, e)
    if t2 < 0 or (tracks.body[t2] != tracks.body[t] and not aligned(tracks, bodies, t, e, t2, e2, fr)):
        return s, True                                  # an open end: the caller lets the car run off
    return _enter(b, t, e, t2, e2, over, S, cars, tracks, bodies, carrier, E), True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _occupied(tracks, cars, k):
    """True while a car's anchor is within switch ``k``'s clearance of its point, on its through
    track or on a branch."""
    S, c, th = tracks.sw_s[k], tracks.sw_clear[k], tracks.sw_track[k]
    for b in range(cars.n):
        if not cars.on_track[b]:
            continue
        t = cars.track[b]
        if t == th:
            if abs(cars.s[b] - S) < c:
                return True
        else:
            for i in range(tracks.sw_branch.shape[1]):
                x, xe = tracks.sw_branch[k, i], tracks.sw_bend[k, i]
                if x == t and ((xe == END_START and cars.s[b] < c)
                               or (xe == END_END and cars.s[b] > tracks.length[t] - c)):
                    return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _route_branch(tracks, cars, k, b):
    """The branch of switch ``k`` car ``b``'s route asks for, −1 none: the car approaches the switch
    (within ``sw_approach``, moving towards its point faster than ``CLAIM_SPEED``) facing it — the
    branch of the next track of its route (the through track itself when its route goes on along
    it) — or trailing from a branch: that branch, when the switch's through track is the next
    track of its route (a train whose route ends on the branch asks for nothing beyond it). A car
    with no route (a stored train's is cleared: ``blocks.Operation``) asks for nothing."""
    if b >= tracks.route_at.shape[0] or tracks.route[b, 0] < 0:
        return -1
    t, s, D = cars.track[b], cars.s[b], tracks.sw_approach[k]
    v = cars.speed0[b] * cars.dir[b]          # d s / d t
    if abs(v) < CLAIM_SPEED:
        return -1
    L, S, at = tracks.length[t], tracks.sw_s[k], tracks.sw_at[k]
    if t == tracks.sw_track[k]:
        facing = ((at == END_POINT and v > 0.0 and 0.0 <= S - s < D) or (at == END_END and v > 0.0 and L - s < D)
                  or (at == END_START and v < 0.0 and s < D))
        if facing:
            i = tracks.route_at[b]
            nxt = tracks.route[b, i + 1] if i + 1 < tracks.route.shape[1] else -1
            for j in range(tracks.sw_branch.shape[1]):
                x = tracks.sw_branch[k, j]
                if x >= 0 and x == nxt and tracks.sw_bend[k, j] != END_POINT:
                    return j
            return _branch_index(tracks, k, t, END_POINT)     # straight on (−1 at an end)
        if at == END_POINT and v < 0.0 and 0.0 < s - S < D:
            return _branch_index(tracks, k, t, END_POINT)
        return -1
    i = tracks.route_at[b]                    # trailing from a branch: only onto the route's next track
    if i + 1 >= tracks.route.shape[1] or tracks.route[b, i + 1] != tracks.sw_track[k]:
        return -1
    for j in range(tracks.sw_branch.shape[1]):
        if tracks.sw_branch[k, j] == t:
            xe = tracks.sw_bend[k, j]
            if (xe == END_START and v < 0.0 and s < D) or (xe == END_END and v > 0.0 and L - s < D):
                return j
    return -1


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def _claimed_against(tracks, cars, k, r):
    """True while a car with a route approaches switch ``k`` (``_route_branch``) needing another
    branch than ``r``: the switch is locked for it (approach locking) and moves for ``r`` only once
    it has passed — a train is never sent the wrong way, nor into moving points, by a throw it
    did not ask for."""
    for b in range(cars.n):
        if cars.on_track[b]:
            j = _route_branch(tracks, cars, k, b)
            if j >= 0 and j != r:
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def stage_switches(step, cars, tracks):
    """The step's clock for the log; each requested throw started once its switch is clear (the
    interlocking: no car within its clearance, no routed car approaching that needs another
    branch; a blocked row the first time it waits) and finished ``sw_throw`` steps later."""
    tracks.clock[0] = step
    for k in range(tracks.sw_track.shape[0]):
        if tracks.sw_until[k] < 0:           # routes: a train that approaches asks for its branch
            for b in range(cars.n):
                if cars.on_track[b]:
                    j = _route_branch(tracks, cars, k, b)
                    if j >= 0 and j != tracks.sw_set[k] and j != tracks.sw_req[k]:
                        tracks.sw_req[k] = j
                        tracks.sw_blocked[k] = 0
                        break
        r = tracks.sw_req[k]
        if r < 0:
            continue
        if tracks.sw_until[k] < 0:
            if _occupied(tracks, cars, k) or _claimed_against(tracks, cars, k, r):
                if tracks.sw_blocked[k] == 0:
                    log_event(tracks, LOG_BLOCKED, k, tracks.sw_set[k], r)
                    tracks.sw_blocked[k] = 1
                continue
            tracks.sw_until[k] = step + tracks.sw_throw[k]
        if step >= tracks.sw_until[k]:
            log_event(tracks, LOG_SET, k, tracks.sw_set[k], r)
            tracks.sw_set[k] = r
            tracks.sw_req[k] = -1
            tracks.sw_until[k] = -1
            tracks.sw_blocked[k] = 0


# ----------------------------------------------------------------------------- Python side
ENDS = {"start": END_START, "end": END_END}


def _angle(a, b) -> float:
    """Angle between unit vectors, degrees."""
    return float(np.degrees(np.arccos(np.clip(np.dot(a, b), -1.0, 1.0))))


def end_frame(ct, end_or_s) -> np.ndarray:
    """The frame (curves/compact.py columns) of a ``CompactTrack`` at ``"start"``, ``"end"`` or an
    arc length."""
    from trackrider.curves.compact import NCOL

    s = {"start": 0.0, "end": ct.length}.get(end_or_s, end_or_s)
    out = np.zeros(NCOL)
    eval_track(ct.data, 0, len(ct.data), ct.ds, ct.length, ct.closed, float(s), out)
    return out


def mismatch(fa, fb, flip: bool) -> str | None:
    """What keeps two frames from being one point of a connection (``flip``: the tangents meet
    head on, an end–end or start–start connection), or None when they are within the tolerances."""
    from trackrider.curves.compact import C_B, C_P

    d = float(np.linalg.norm(fa[C_P:C_P + 3] - fb[C_P:C_P + 3]))
    if d > POSITION_TOL:
        return f"the ends are {d * 1000:.4g} mm apart (at most {POSITION_TOL * 1000:g} mm)"
    sign = -1.0 if flip else 1.0
    a = _angle(fa[C_T:C_T + 3], sign * fb[C_T:C_T + 3])
    if a > ANGLE_TOL:
        return f"the tangents differ by {a:.3g}° (at most {ANGLE_TOL:g}°)"
    a = _angle(fa[C_B:C_B + 3], fb[C_B:C_B + 3])
    if a > ANGLE_TOL:
        return f"the up axes differ by {a:.3g}° (at most {ANGLE_TOL:g}°)"
    return None


class Network:
    """A world's connections and switches: the kernels' tables, the switches' programs, the log
    read into events (``events``: dicts as ``blocks.Operation``'s) and each switch's throws."""

    def __init__(self, connections, switches, tracks, dt, names=None):
        self.connections, self.switches, self.dt = connections, switches, dt
        self.names = names or [f"track{i}" for i in range(len(tracks))]
        self.events: list[dict] = []
        self.throws = [[] for _ in switches]
        self.dropped = 0
        # program steps: (step the request is posted before, switch, branch index)
        prog = []
        for k, sw in enumerate(switches):
            for t, br in sw["program"]:
                prog.append((max(int(round(t / dt)), 1), k, br))
        self.program = sorted(prog)
        self._next = 0

    def tables(self, ntracks: int, car_length: float, car_routes) -> dict:
        """The network's fields of ``state.Tracks``; ``car_routes``: each car's train's route (track
        indices, empty: none)."""
        n = max((len(r) for r in car_routes), default=0)
        route = np.full((len(car_routes), max(n, 1)), -1, np.int64)
        for b, r in enumerate(car_routes):
            route[b, :len(r)] = r
        link = np.full((ntracks, 2, 3), -1, np.int64)
        for c in self.connections:
            (ta, ea), (tb, eb) = c["a"], c["b"]
            link[ta, ea] = (tb, eb, -1)
            link[tb, eb] = (ta, ea, -1)
        nsw = len(self.switches)
        br = np.full((nsw, MAX_BRANCHES), -1, np.int64)
        bend = np.full((nsw, MAX_BRANCHES), -1, np.int64)
        tr, ss, at = np.zeros(nsw, np.int64), np.zeros(nsw), np.zeros(nsw, np.int64)
        for k, sw in enumerate(self.switches):
            tr[k], ss[k] = sw["track"], sw["s"]
            at[k] = sw["end"]
            if sw["end"] != END_POINT:
                link[sw["track"], sw["end"]] = (-1, -1, k)
            for i, (x, xe) in enumerate(sw["branches"]):
                br[k, i], bend[k, i] = x, xe
                if xe != END_POINT:
                    link[x, xe] = (sw["track"], sw["end"], k)
        return dict(net=np.array([1 if (self.connections or self.switches) else 0], np.int64), link=link,
                    sw_track=tr, sw_s=ss, sw_at=at, sw_branch=br, sw_bend=bend,
                    sw_set=np.array([sw["position"] for sw in self.switches], np.int64),
                    sw_req=np.full(nsw, -1, np.int64), sw_until=np.full(nsw, -1, np.int64),
                    sw_blocked=np.zeros(nsw, np.int64),
                    sw_throw=np.array([int(round(sw["throw_time"] / self.dt)) for sw in self.switches], np.int64),
                    sw_clear=np.array([sw["clearance"] if sw["clearance"] is not None else car_length
                                       for sw in self.switches]),
                    sw_approach=np.array([sw["approach"] for sw in self.switches]),
                    route=route, route_at=np.zeros(len(route), np.int64),
                    clock=np.zeros(1, np.int64), log=np.zeros((LOG_ROWS, 5)), nlog=np.zeros(1, np.int64))

    def steps_to_next(self, step: int) -> int | None:
        """Steps to run before the next program request is posted (None: no more)."""
        if self._next >= len(self.program):
            return None
        return max(self.program[self._next][0] - 1 - step, 0)

    def post(self, step: int, tracks) -> None:
        """Post the program's requests due at step ``step + 1``."""
        while self._next < len(self.program) and self.program[self._next][0] <= step + 1:
            _, k, i = self.program[self._next]
            self.request(k, i, tracks)
            self._next += 1

    def request(self, k: int, i: int, tracks) -> None:
        """Ask switch ``k`` for its branch ``i`` (thrown by the kernel once the switch is clear)."""
        if tracks.sw_req[k] == i or (tracks.sw_req[k] < 0 and tracks.sw_set[k] == i):
            return
        tracks.sw_req[k] = i
        tracks.sw_until[k] = -1
        tracks.sw_blocked[k] = 0

    def drain(self, tracks, car_label) -> None:
        """The log's rows since the last call as events (``car_label(b)`` → (train name, car no));
        a switch's own events have train "" and car 0."""
        n = int(tracks.nlog[0])
        rows = tracks.log[:min(n, tracks.log.shape[0])]
        self.dropped += max(n - tracks.log.shape[0], 0)
        tracks.nlog[0] = 0
        for kind, who, a, b, step in rows:
            kind, who, a, b = int(kind), int(who), int(a), int(b)
            t = float(step) * self.dt
            if kind == LOG_TRACK_CHANGE:
                train, car = car_label(who)
                self._event(t, train, "track_change", car, **{"from": self.names[a], "to": self.names[b]})
            elif kind == LOG_RUN_THROUGH:
                train, car = car_label(who)
                sw = self.switches[a]
                self._event(t, train, "switch_run_through", car, switch=sw["name"],
                            branch=sw["branch_names"][b])
                self.throws[a].append({"t": t, "to": sw["branch_names"][b], "by": "run_through"})
            elif kind == LOG_SPLIT:
                train, car = car_label(who)
                self._event(t, train, "split", car, switch=self.switches[a]["name"])
            else:
                sw = self.switches[who]
                kw = dict(switch=sw["name"], **{"from": sw["branch_names"][a], "to": sw["branch_names"][b]})
                if kind == LOG_SET:
                    self._event(t, "", "switch_set", 0, **kw)
                    self.throws[who].append({"t": t, "to": sw["branch_names"][b], "by": "throw"})
                else:
                    self._event(t, "", "switch_blocked", 0, **kw)

    def _event(self, t, train, kind, car, **extra):
        ev = {"t": t, "train": train, "car": car, "kind": kind}
        ev.update(extra)
        self.events.append(ev)

    def summary(self, tracks) -> dict:
        """``summary.json``'s ``switches``: each switch's branch at the end and its throws."""
        return {sw["name"]: {"at": sw["at"], "branches": list(sw["branch_names"]),
                             "position": sw["branch_names"][int(tracks.sw_set[k])], "throws": self.throws[k]}
                for k, sw in enumerate(self.switches)}
