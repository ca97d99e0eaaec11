"""The block logic of a ride: stations, block sections, laps (Python, between kernel calls).

A *block section* is every ``station`` and every lift/brake/booster with ``block = True``. On each
track the block sections, in order of ``from`` along +s, start the *blocks*: block k runs from
the start of block section k to the start of the next (wrapping on a closed track; on an open
track the stretch before the first block section is in no block, −1). Blocks are numbered from
the first station along the track, else from the first block section.

Rule: a train may leave a block section (its lead car pass ``to``) only when the next block has
no car of another train. The logic sets each block section's mode (``operation.py``): *hold*
(stop the train's lead car at ``hold_s``, a little before ``to``) while the next block is not
clear, else the section's own behaviour (a block brake or booster then drives towards +s at
``speed``). A station holds every arriving train, counts ``dwell`` from its stop, and dispatches
(mode *drive*) when the dwell is over and the next block is clear.

Both ways: a train running towards −s (its lead car the one in front that way) is held, driven and
dispatched towards −s — it stops at ``from`` + the margin, leaves through ``from``, and its next
block is the one before (k − 1; it waits besides for a train running +s in block k − 2, which
may have been let into k − 1 from the other end). Each block section takes the way from the train
as it comes in (``Operation._take_way``).

It runs when the kernel's watch (``operation.watch``) stops a call: a car crossed a block start,
a block section's end or a station's stop mark, or a timer (dwell, ``max_hold``) ran out.
Occupancy is recomputed from the cars' positions each time, so the logic has no state that can
drift from the physics other than the stations' dwell clocks and the holds' start times.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.physics import channels as ch
from trackrider.physics.sections import SECTIONS

#: the lead car stops this far before a held block section's ``to`` (m, at most)
HOLD_MARGIN = 1.0
#: a station's stop mark: its dwell starts when the lead car is this close to the stop point (m)
STOP_MARK = 0.02
#: deceleration of the stopping profile (m/s², at most half what the section's force gives a car)
HOLD_DECEL = 1.5
#: while a block section holds a train for a moving track's end to come into line, the logic looks
#: again this often (s)
ALIGN_POLL = 0.05

MODE_OWN, MODE_HOLD, MODE_DRIVE = 0, 1, 2


def block_order(starts, kinds, closed: bool) -> list[int]:
    """The numbering of a track's blocks: the indices of its block sections (``starts``: their
    ``from``, ``kinds``: their types) in block order — along +s, and on a closed track counted
    from the first station. The scenario loader, the block logic and the report share it."""
    order = sorted(range(len(starts)), key=lambda i: (starts[i], i))
    if closed:
        first = next((k for k, i in enumerate(order) if SECTIONS[kinds[i]].block == "station"), 0)
        order = order[first:] + order[:first]
    return order


def blocks_along(starts, loop: float, s) -> np.ndarray:
    """Block of points at arc lengths ``s`` on one track: ``starts`` the blocks' starts in block
    order (``block_order``), ``loop`` the track's length if closed, else 0 (then −1 before the
    first block)."""
    s = np.asarray(s, dtype=float)
    starts = np.asarray(starts, dtype=float)
    if loop > 0.0:
        rel = (starts - starts[0]) % loop
        return np.searchsorted(rel, (s - starts[0]) % loop, side="right").astype(np.int64) - 1
    return np.searchsorted(starts, s, side="right").astype(np.int64) - 1


class Paths:
    """Blocks on a track network (docs/physics.md, "Block sections"): the block of a block section
    is the stretch of the network reached from its ``from`` along +s — through connections and
    every branch of a switch — up to the next block section met (its ``from`` going +s, its ``to``
    going −s) or an open end; stretches reached from two block sections (after a switch where two
    lines merge) are in both blocks. A train's *path* from a block section is the stretch from its
    ``to`` along its route (at a facing switch the branch of the next track of its route, else the
    branch set) to the next block section: the switches on it (facing and trailing, with the
    branch the train needs) and that section. For a train running towards −s the path runs from
    the section's ``from`` along −s, and a block section met going −s has the block ``back``: from
    its ``to`` along −s to the next block section."""

    def __init__(self, tables, lengths, closed, sections, block_sections):
        """``tables``: the network's tables (``state.Tracks``' ``link`` and ``sw_*``: the world's
        ``records.tracks``, or ``network.Network.tables`` when a scenario loads); ``lengths``,
        ``closed``: each track's; ``sections``: dicts with ``track``, ``from`` and ``to``."""
        from trackrider.physics import network as nw

        self.nw = nw
        tr = tables
        self.tr = tr
        self.length = [float(x) for x in lengths]
        self.closed = [bool(x) for x in closed]
        self.sections = sections
        self.on_track: dict[int, list[int]] = {}
        for i in block_sections:
            self.on_track.setdefault(sections[i]["track"], []).append(i)
        self.points = [(k, int(tr.sw_track[k]), float(tr.sw_s[k])) for k in range(tr.sw_track.shape[0])
                       if tr.sw_at[k] == nw.END_POINT]
        self.pieces = {i: self.walk(sections[i]["track"], sections[i]["from"], 1, False, None, None)[0]
                       for i in block_sections}
        # the block of a section for a train running towards −s: from its ``to`` along −s
        self.back = {i: self.walk(sections[i]["track"], sections[i]["to"], -1, False, None, None)[0]
                     for i in block_sections}

    def _dist(self, t, x, d, p, inclusive):
        """Distance from ``x`` to ``p`` on track ``t`` going ``d`` (±1); None behind (or at ``x``
        unless ``inclusive``)."""
        dist = (p - x) * d
        if self.closed[t]:
            dist %= self.length[t]
            if dist == 0.0 and not inclusive:
                dist = self.length[t]
        if dist < 0.0 or (dist == 0.0 and not inclusive):
            return None
        return dist

    def _piece(self, t, x, d, dist, out):
        """The stretch from ``x`` over ``dist`` going ``d`` as (track, lo, hi) pieces."""
        L = self.length[t]
        y = x + d * dist
        if self.closed[t] and not 0.0 <= y <= L:
            out.append((t, x, L) if d > 0 else (t, 0.0, x))
            y %= L
            out.append((t, 0.0, y) if d > 0 else (t, y, L))
        else:
            out.append((t, min(x, y), max(x, y)))

    def _branches(self, k, route, at):
        """Branches (index, route position) a walk facing switch ``k`` follows: all of them for a
        block (``route`` None); for a train with a route the one of the route's next track, else
        the straight on (as ``network._route_branch`` asks); without a route (empty) the one set."""
        nb = self.tr.sw_branch[k]
        if route is None:
            return [(j, at) for j in range(nb.shape[0]) if nb[j] >= 0]
        if route:
            nxt = route[at + 1] if at + 1 < len(route) else -1
            for j in range(nb.shape[0]):
                if nb[j] >= 0 and nb[j] == nxt and self.tr.sw_bend[k, j] != self.nw.END_POINT:
                    return [(j, at + 1)]
            for j in range(nb.shape[0]):
                if self.tr.sw_bend[k, j] == self.nw.END_POINT:
                    return [(j, at)]
        return [(int(self.tr.sw_set[k]), at)]

    def walk(self, t, x, d, inclusive, route, at):
        """Follow the network from ``x`` on track ``t`` going ``d``: (pieces, sections met as
        (section, the way along its track it was met: ±1; −1, 0 an open end), switches passed as
        (switch, branch needed), connections passed as (track, end, next track, its end));
        ``route``/``at``: a train's route (track indices) and its place in it, None for a block's
        whole stretch."""
        nw, tr = self.nw, self.tr
        pieces, stops, passed, joins, seen = [], [], [], [], set()
        todo = [(t, x, d, inclusive, at)]
        while todo:
            t, x, d, inc, at = todo.pop()
            if (t, round(x, 9), d) in seen:
                continue
            seen.add((t, round(x, 9), d))
            L = self.length[t]
            stop, j_stop = math.inf, -1
            for j in self.on_track.get(t, ()):
                dist = self._dist(t, x, d, self.sections[j]["from" if d > 0 else "to"], inc)
                if dist is not None and dist < stop:
                    stop, j_stop = dist, j
            end = math.inf if self.closed[t] else ((L - x) if d > 0 else x)
            ahead = sorted((dist, k, S) for k, tk, S in self.points if tk == t
                           for dist in [self._dist(t, x, d, S, False)] if dist is not None and dist < min(stop, end))
            if d < 0:                      # trailing through points inside the track: the straight on
                passed += [(k, self._through(k)) for _, k, _ in ahead]
            elif ahead:                    # facing the first points ahead
                dist, k, S = ahead[0]
                self._piece(t, x, d, dist, pieces)
                for j, a in self._branches(k, route, at):
                    passed.append((k, j))
                    b, e = int(tr.sw_branch[k, j]), int(tr.sw_bend[k, j])
                    todo.append((t, S, 1, False, a) if e == nw.END_POINT else self._entry(b, e, route, a))
                continue
            if stop <= end:
                self._piece(t, x, d, stop, pieces)
                stops.append((j_stop, d))
                continue
            self._piece(t, x, d, end, pieces)
            e = nw.END_END if d > 0 else nw.END_START
            t2, e2, k = (int(v) for v in tr.link[t, e])
            if k >= 0 and int(tr.sw_track[k]) == t and int(tr.sw_at[k]) == e:      # facing points at the end
                for j, a in self._branches(k, route, at):
                    passed.append((k, j))
                    todo.append(self._entry(int(tr.sw_branch[k, j]), int(tr.sw_bend[k, j]), route, a))
            elif k >= 0:                                                             # trailing from a branch
                passed.append((k, self._branch_of(k, t, e)))
                th, at_e = int(tr.sw_track[k]), int(tr.sw_at[k])
                if at_e == nw.END_POINT:
                    todo.append((th, float(tr.sw_s[k]), -1, True, self._step(route, at, th)))
                else:
                    todo.append(self._entry(th, at_e, route, at))
            elif t2 >= 0:
                joins.append((t, e, t2, e2))
                todo.append(self._entry(t2, e2, route, at))
            else:
                stops.append((-1, 0))
        return pieces, stops, passed, joins

    def _step(self, route, at, t):
        return at + 1 if route is not None and at + 1 < len(route) and route[at + 1] == t else at

    def _entry(self, t, e, route, at):
        """A walk entering track ``t`` through its start (going +s) or end (going −s)."""
        if e == self.nw.END_START:
            return (t, 0.0, 1, True, self._step(route, at, t))
        return (t, self.length[t], -1, True, self._step(route, at, t))

    def _through(self, k):
        return next(j for j in range(self.tr.sw_bend.shape[1]) if self.tr.sw_bend[k, j] == self.nw.END_POINT)

    def _branch_of(self, k, t, e):
        return next(j for j in range(self.tr.sw_branch.shape[1])
                    if self.tr.sw_branch[k, j] == t and self.tr.sw_bend[k, j] == e)

    def contains(self, pieces, t, s) -> bool:
        return any(tk == t and lo <= s <= hi for tk, lo, hi in pieces)

    @staticmethod
    def part_at(cuts, t, s) -> int:
        """The part (``parts``' ``cuts``) at ``s`` on track ``t``: −1 none."""
        edges, part = cuts[t]
        if not len(part):
            return -1
        return int(part[min(max(int(np.searchsorted(edges, s, side="right")) - 1, 0), len(part) - 1)])

    def parts(self, order):
        """The network cut into the blocks' stretches: ``(parts, cuts)``. ``order``: the block
        sections in block order. ``parts``: the block sections (tuples of section indices) of each
        part, numbered as ``order`` numbers the blocks — a stretch in one block only is that
        block's part — then each stretch in several blocks (after a merge) as a part of its own.
        ``cuts``: per track, (edges, part of each interval between them, −1 none)."""
        ntr = len(self.length)
        edges = [{0.0, self.length[t]} for t in range(ntr)]
        for i in order:
            for t, lo, hi in self.pieces[i]:
                edges[t].update((lo, hi))
        keys, cuts = {(i,): n for n, i in enumerate(order)}, {}
        for t in range(ntr):
            e = np.array(sorted(edges[t]))
            part = np.full(max(len(e) - 1, 0), -1, np.int64)
            for m in range(len(part)):
                mid = 0.5 * (e[m] + e[m + 1])
                owners = tuple(i for i in order if self.contains(self.pieces[i], t, mid))
                if owners:
                    part[m] = keys.setdefault(owners, len(keys))
            cuts[t] = (e, part)
        return sorted(keys, key=keys.get), cuts


class Operation:
    """Block sections, stations and laps of one world; updates ``ops`` and logs events.

    ``events``: dicts with ``t``, ``train``, ``car``, ``kind`` and the kind's own keys, in time
    order. ``stalled``: None, or (t, message) once a hold lasted longer than ``max_hold``.
    """

    def __init__(self, world, ops, max_hold: float):
        self.world = world
        self.ops = ops
        self.dt = world.dt
        self.max_hold = float(max_hold)
        self.events: list[dict] = []
        self.stalled = None
        trains = world.trains
        self.train_names = [t["name"] for t in trains]
        self.train_cars = [list(range(world._car0[k], world._car0[k] + t["n"])) for k, t in enumerate(trains)]
        self.car_train = np.full(world.ncars, -1, np.int64)
        for k, cars in enumerate(self.train_cars):
            self.car_train[cars] = k
        self.sections = world._section_table()      # dicts: kind, track, from, to, speed, fmax, block, dwell, name
        self.block_sections = [i for i, s in enumerate(self.sections) if s["block"]]
        # blocks per track: ordered block-section indices along +s, numbered from the first station
        self.track_blocks: dict[int, list[int]] = {}
        for i in self.block_sections:
            self.track_blocks.setdefault(self.sections[i]["track"], []).append(i)
        self.block_of_section: dict[int, tuple[int, int]] = {}
        self.loop = {tk: (world._tracks[tk].length if world._tracks[tk].closed else 0.0)
                     for tk in range(len(world._tracks))}
        for tk, lst in self.track_blocks.items():
            order = block_order([self.sections[i]["from"] for i in lst], [self.sections[i]["kind"] for i in lst],
                                self.loop[tk] > 0.0)
            lst[:] = [lst[j] for j in order]
            for k, i in enumerate(lst):
                self.block_of_section[i] = (tk, k)
        self.length = {tk: world._tracks[tk].length for tk in range(len(world._tracks))}
        # trains running both ways (a network, or a train that starts towards −s): each block section
        # holds and drives the train in it the way it came in (``sdir``), and each train's way along
        # its cars (``fwd``: +1 car 1 in front, −1 backwards, its last car in front) is kept
        self.both_ways = self.runs_both_ways(world)
        self.fwd = [-1 if t["v0"] < 0.0 else 1 for t in trains]
        # per section state
        n = len(self.sections)
        self.sdir = [1] * n                # the way (±1 along s) the section holds and drives
        self.sdir_train = [-1] * n         # the train ``sdir`` was taken from
        self.held_train = [-1] * n        # the train a hold acts on (block_hold logged), −1 none
        self.overran: set[tuple[int, int]] = set()   # (section, train): its lead car passed ``to`` on a hold
        self.hold_since = [math.nan] * n
        self.held_total = [0.0] * n
        self.station_state = ["empty"] * n   # empty | arriving | dwelling | waiting | dispatching
        self.station_train = [-1] * n
        self.dwell_end = [math.nan] * n
        self.dispatches: dict[int, list[float]] = {i: [] for i in self.block_sections
                                                   if SECTIONS[self.sections[i]["kind"]].block == "station"}
        self.dispatch_train: list[tuple[float, int]] = []
        # laps: the line is the start of block 0 of the train's track
        self.lap_line = {tk: self.sections[lst[0]]["from"] for tk, lst in self.track_blocks.items()}
        self.lap_prev = [math.nan] * len(trains)
        self.laps: list[list[float]] = [[] for _ in trains]
        self.contact_pairs = []   # (behind train, ahead train) per contact, set by World
        # a network's blocks and paths (None: every block is a stretch of one track)
        self.paths = Paths(world.records.tracks, [ct.length for ct in world._tracks],
                           [ct.closed for ct in world._tracks], self.sections, self.block_sections) if (
            world.network is not None and self.block_sections) else None
        self.why: dict[int, dict] = {}     # section -> what a hold waits for: {"switch": name} or {"track_end": …}
        self.align_wait: set = set()       # sections holding a train for a moving track's end to come into line
        # section -> (train, parts): a train let go into those parts of the network and still in its
        # section (not yet seen there): no other train is let into them (two from either end at once)
        self.claims: dict[int, tuple[int, set]] = {}
        self.parts_ahead: set = set()      # the parts the last ``_path_ahead`` let its train into
        # a network's ``block`` column: the parts of the network its blocks cover (Paths.parts)
        self.net_parts, self.net_cuts = (self.paths.parts([i for tk in sorted(self.track_blocks)
                                                           for i in self.track_blocks[tk]])
                                         if self.paths is not None else (None, None))
        self._init_ops()

    # ------------------------------------------------------------------ geometry
    def _wrap(self, tk, d):
        L = self.loop[tk]
        return d % L if L > 0.0 else d

    @staticmethod
    def runs_both_ways(world) -> bool:
        """True when a train may run towards −s of a track with block sections: on a network, or
        when a train starts towards −s."""
        return world.network is not None or any(t["v0"] < 0.0 for t in world.trains)

    def lead(self, k) -> int:
        """The lead car of train ``k``: the one in front the way it runs."""
        return self.train_cars[k][0 if self.fwd[k] > 0 else -1]

    def _take_way(self, i, train, s, on, first):
        """Section ``i`` holds and drives ``train``, just come into it, the way it runs (``sdir``:
        from its speed along s, or at rest its way along its cars), and the train's cars measure
        their distance to its lead car that way (``ops.lead_off``)."""
        w, cars, tk = self.world, self.world.cars, self.sections[i]["track"]
        b = next((b for b in self.train_cars[train]
                  if on[b] and cars.track[b] == tk and self.in_section(i, float(s[b]))), self.train_cars[train][0])
        v = 0.0 if first else float(cars.speed0[b])
        if abs(v) > 1e-3:
            self.fwd[train] = 1 if v > 0.0 else -1
        d = self.fwd[train] * int(cars.dir[b])
        self.sdir[i], self.sdir_train[i] = d, train
        self.ops.sdir[i] = float(d)
        self.ops.hold_s[i] = self.hold_at[i][d]
        t = w.trains[train]
        cs = self.train_cars[train]
        for c, bc in enumerate(cs):
            u = t["s"][0] - t["s"][c]
            if self.fwd[train] < 0:
                u -= t["s"][0] - t["s"][-1]
            self.ops.lead_off[bc] = float(cars.dir[bc]) * u

    def in_section(self, i, s):
        sec = self.sections[i]
        d = self._wrap(sec["track"], s - sec["from"])
        return 0.0 <= d <= sec["to"] - sec["from"]

    def blocks_at(self, tk, s) -> np.ndarray:
        """Block (numbered from block 0 of track ``tk``) of points at ``s`` (array); −1 none."""
        lst = self.track_blocks.get(tk)
        if not lst:
            return np.full(np.shape(s), -1, np.int64)
        return blocks_along([self.sections[i]["from"] for i in lst], self.loop[tk], s)

    def block_index(self, tk, s):
        return int(self.blocks_at(tk, [s])[0])

    def car_blocks(self, s, on_track) -> np.ndarray:
        """(ncars,) block of every car (−1 none / off its track)."""
        s = np.asarray(s, dtype=float)
        out = np.full(len(s), -1, np.int64)
        tracks = np.asarray(self.world.cars.track[: len(s)])
        for tk in self.track_blocks:
            sel = (tracks == tk) & (np.asarray(on_track[: len(s)]) != 0)
            out[sel] = self.blocks_at(tk, s[sel])
        return out

    @property
    def has_blocks(self) -> bool:
        return bool(self.block_sections)

    def block_column(self, samples) -> np.ndarray:
        """(m, n_entities) the ``block`` column of recorded samples: each car's block from its ``s``
        (−1 none), NaN for free bodies and cars off their track."""
        s = samples[:, :, ch.S]
        out = np.full(s.shape, np.nan)
        nc = self.world.ncars
        out[:, :nc] = np.where(np.isfinite(s[:, :nc]), -1.0, np.nan)
        tracks = samples[:, :nc, ch.TRACK]
        if self.net_cuts is not None:            # a network: the part of the network (``network_blocks``)
            for tk, (edges, part) in self.net_cuts.items():
                ok = (tracks == tk) & np.isfinite(s[:, :nc])
                if ok.any() and len(part):
                    m = np.clip(np.searchsorted(edges, np.where(ok, s[:, :nc], 0.0), side="right") - 1,
                                0, len(part) - 1)
                    out[:, :nc] = np.where(ok, part[m].astype(float), out[:, :nc])
            return out
        for tk in self.track_blocks:
            on = tracks == tk
            if on.any():
                ok = on & np.isfinite(s[:, :nc])
                val = self.blocks_at(tk, np.where(ok, s[:, :nc], 0.0))
                out[:, :nc] = np.where(ok, val, out[:, :nc])
        return out

    def _init_ops(self):
        w, ops = self.world, self.ops
        self.hold_at = {}
        for i, sec in enumerate(self.sections):
            ops.loop[i] = self.loop[sec["track"]]
            if not sec["block"]:
                continue
            mine = [k for k in range(len(self.train_cars))          # on a network, any train may come
                    if w.network is not None or w.trains[k]["track"] == sec["track"]]
            longest = max([self._train_length(k) for k in mine] or [0.0])
            span = sec["to"] - sec["from"]
            margin = min(HOLD_MARGIN, max(0.0, 0.5 * (span - longest)))
            ops.hold_s[i] = sec["to"] - margin
            self.hold_at[i] = {1: ops.hold_s[i], -1: sec["from"] + margin}   # a train running +s, −s
            mass = max([max(w.trains[k].get("masses", [w.trains[k]["mass"]])) for k in mine] or [1.0])
            ops.decel[i] = max(1e-3, min(HOLD_DECEL, 0.5 * sec["fmax"] / mass))
        for k, t in enumerate(w.trains):
            for c, b in enumerate(self.train_cars[k]):
                ops.lead_off[b] = t["s"][0] - t["s"][c]
        pts, ptr = [], []
        for i in self.block_sections:
            sec = self.sections[i]
            pts += [sec["from"], sec["to"]]
            ptr += [sec["track"], sec["track"]]
            if SECTIONS[sec["kind"]].block == "station":
                pts.append(ops.hold_s[i] - STOP_MARK)
                ptr.append(sec["track"])
                if self.both_ways:
                    pts.append(self.hold_at[i][-1] + STOP_MARK)
                    ptr.append(sec["track"])
        ops.points[:] = pts
        ops.ptrack[:] = ptr

    def _train_length(self, k):
        t = self.world.trains[k]
        lengths = t.get("lengths", [t["length"]])
        return t["s"][0] - t["s"][-1] + 0.5 * (lengths[0] + lengths[-1])

    @staticmethod
    def points_count(world) -> int:
        station = 4 if Operation.runs_both_ways(world) else 3
        return sum(station if SECTIONS[s["kind"]].block == "station" else 2
                   for s in world._section_table() if s["block"])

    # ------------------------------------------------------------------ events
    def _event(self, t, train, kind, car=1, **extra):
        ev = {"t": float(t), "train": self.train_names[train], "car": int(car), "kind": kind}
        ev.update(extra)
        self.events.append(ev)

    def section_name(self, i):
        return self.sections[i]["name"] or f"section[{i}]"

    # ------------------------------------------------------------------ the logic
    def update(self, step: int, first: bool = False):
        """Run the logic at the end of step ``step`` (``first``: before the first step)."""
        w, ops = self.world, self.ops
        t = step * self.dt
        cars = w.cars
        s = cars.s[: w.ncars]
        on = cars.on_track[: w.ncars]
        blocks = self.car_blocks(s, on)
        if not first:
            self._hits(t)
            self._laps(t, s, on)
        # occupancy: block (track, k) -> set of trains
        occ: dict[tuple[int, int], set] = {}
        for b in range(w.ncars):
            if blocks[b] >= 0:
                occ.setdefault((int(cars.track[b]), int(blocks[b])), set()).add(int(self.car_train[b]))
        for i in self.block_sections:
            sec = self.sections[i]
            tk, k = self.block_of_section[i]
            inside = sorted({int(self.car_train[b]) for b in range(w.ncars)
                             if on[b] and cars.track[b] == tk and self.in_section(i, float(s[b]))})
            train = inside[0] if inside else -1
            self.claims.pop(i, None)
            if self.both_ways and train >= 0 and train != self.sdir_train[i]:
                self._take_way(i, train, s, on, first)
            elif train < 0:
                self.sdir_train[i] = -1
            if self.station_state[i] == "stored" and train == self.station_train[i]:
                ops.mode[i] = MODE_HOLD          # a stored train asks for no way and is never dispatched
                continue
            if self.paths is not None and train >= 0 and self._stores(i, train):
                others, switch, clear = set(), None, False     # it stays: the station asks for no way out
            elif self.paths is not None:
                others, why = self._path_ahead(i, train, s, on)
                self.why[i] = why
                clear = not others and why is None
            else:
                others = self._next_block(tk, k, i, occ) - {train}
                clear = not others
            if train >= 0 and ops.mode[i] == MODE_HOLD:
                self._overrun(i, t, train, tk, others, s, on)
            self.overran = {(j, k) for j, k in self.overran if j != i or k == train}
            if SECTIONS[sec["kind"]].block == "station":
                mode = self._station(i, t, train, clear, s, first)
            else:
                mode = MODE_OWN if clear else MODE_HOLD
                if clear and SECTIONS[sec["kind"]].block == "drive":
                    mode = MODE_DRIVE   # drive tyres towards ``sdir`` (a booster's own rule reads the sign of v)
                lead_inside = train >= 0 and self.in_section(i, float(s[self.lead(train)]))
                self._hold_log(i, t, train if (mode == MODE_HOLD and lead_inside) else -1)
            ops.mode[i] = mode
            if self.paths is not None and train >= 0 and clear and mode != MODE_HOLD:
                self.claims[i] = (train, self.parts_ahead)
        self._timers(step)

    def _next_block(self, tk, k, i, occ) -> set:
        """On one track: the trains in the block that section ``i`` (the start of block ``k``) lets
        its train into — block k + 1, or k − 1 for a train running towards −s, which besides waits
        for a train running +s in the block beyond (it may have been let go into that block: of
        two trains let into one block from either end, the one running +s goes first)."""
        nb = len(self.track_blocks[tk])
        d = self.sdir[i]

        def block(m):
            m = m % nb if self.loop[tk] > 0.0 else m
            return occ.get((tk, m), set()) if 0 <= m < nb else set()   # an open track's end: nothing
        if d > 0:
            return set(block(k + 1))
        return block(k - 1) | {x for x in block(k - 2) if self._sdir_of(x, tk) > 0}

    def _sdir_of(self, k, tk) -> int:
        """The way (±1 along s) train ``k`` runs on track ``tk``."""
        cars = self.world.cars
        b = next((b for b in self.train_cars[k] if cars.track[b] == tk), self.lead(k))
        return self.fwd[k] * int(cars.dir[b])

    def _path_ahead(self, i, train, s, on):
        """On a network: (the other trains on the path from section ``i`` to the next block section
        or in that section's block, the name of the first switch on the path not yet set for it —
        or moving — None when all are). The switches are asked for their branches (interlocked:
        ``network.py``) once no other train is ahead."""
        w = self.world
        tr, cars, sec = w.records.tracks, w.cars, self.sections[i]
        route, at = [], 0
        if train >= 0:
            b = next((b for b in self.train_cars[train] if on[b] and cars.track[b] == sec["track"]),
                     self.train_cars[train][-1])
            if b < tr.route.shape[0] and tr.route[b, 0] >= 0:
                route, at = [int(x) for x in tr.route[b] if x >= 0], int(tr.route_at[b])
        d = self.sdir[i]
        pieces, stops, passed, joins = self.paths.walk(sec["track"], sec["to" if d > 0 else "from"], d, True,
                                                       route, at)
        # the parts of the network (the ``block`` column) the train runs into: the way's, the next section's
        parts = self._parts_of(pieces + [(self.sections[j]["track"], self.sections[j]["from"], self.sections[j]["to"])
                                         for j, _ in stops if j >= 0])
        for j, dj in stops:            # and the next block sections' blocks, the way the train meets them
            if j >= 0:
                pieces = pieces + (self.paths.pieces if dj > 0 else self.paths.back)[j]
        ahead = {k for j, (k, p) in self.claims.items() if j != i and k != train and p & parts}

        for b in range(w.ncars):
            k = int(self.car_train[b])
            if on[b] and k != train and k not in ahead:
                tk, sb = int(cars.track[b]), float(s[b])
                if self.paths.contains(pieces, tk, sb) or Paths.part_at(self.net_cuts, tk, sb) in parts:
                    ahead.add(k)
        pending = [(k, j) for k, j in passed if tr.sw_set[k] != j or tr.sw_until[k] >= 0]
        self.parts_ahead = parts
        if train >= 0 and not ahead:
            for k, j in pending:
                if tr.sw_until[k] < 0 and tr.sw_req[k] != j:
                    w.network.request(k, j, tr)
        apart = [(ta, ea) for ta, ea, tb, eb in joins if tr.body[ta] != tr.body[tb] and self._apart(ta, ea, tb, eb)]
        self.align_wait.discard(i)
        if pending:
            return ahead, {"switch": w.network.switches[pending[0][0]]["name"]}
        if apart and train >= 0:
            self.align_wait.add(i)
            ta, ea = apart[0]
            return ahead, {"track_end": f"{w.track_names[ta]}:{'end' if ea == self.paths.nw.END_END else 'start'}"}
        return ahead, None

    def _apart(self, ta, ea, tb, eb) -> bool:
        """True while the ends of a connection between tracks on different bodies are not in line
        (``network.aligned``'s tolerances, with the bodies where they are now)."""
        from trackrider.physics.network import mismatch

        return mismatch(self._end_now(ta, ea), self._end_now(tb, eb), False) is not None

    def _end_now(self, t, e):
        """Track ``t``'s start (e = 0) or end frame where its body has it now (``carrier.move_frame``:
        P = X + Q (P₀ − pos0), T and B turned by Q = R rot0ᵀ)."""
        from trackrider.curves.compact import C_B, C_P, C_T
        from trackrider.physics.network import END_END, end_frame

        w, tr = self.world, self.world.records.tracks
        fr = end_frame(w._tracks[t], "end" if e == END_END else "start")
        k = int(tr.body[t])
        if k >= 0:
            Q = w.bodies.rot[k] @ tr.rot0[t].T
            fr[C_P:C_P + 3] = w.bodies.pos[k] + Q @ (fr[C_P:C_P + 3] - tr.pos0[t])
            for c in (C_T, C_B):
                fr[c:c + 3] = Q @ fr[c:c + 3]
        return fr

    def _parts_of(self, pieces) -> set:
        """The parts of the network (≥ 0) that stretches ``pieces`` run into (by more than a point)."""
        out = set()
        for t, lo, hi in pieces:
            edges, part = self.net_cuts[t]
            for m in range(len(part)):
                if part[m] >= 0 and edges[m] < hi and edges[m + 1] > lo:
                    out.add(int(part[m]))
        return out

    def _station(self, i, t, train, clear, s, first):
        state = self.station_state[i]
        if train < 0:
            self.station_state[i], self.station_train[i] = "empty", -1
            self._hold_log(i, t, -1)
            return MODE_HOLD
        if state in ("empty", "dispatching") and train != self.station_train[i]:
            state = "dwelling" if first else "arriving"
            self.station_train[i] = train
            if first:
                self.dwell_end[i] = self.sections[i]["dwell"]
                if self._stores(i, train):
                    self._store(i, t, train)
                    return MODE_HOLD
        if state == "arriving":
            tk = self.sections[i]["track"]
            d = self.sdir[i] * (self.ops.hold_s[i] - float(s[self.lead(train)]))
            if self.loop[tk] > 0.0:
                d = (d + 0.5 * self.loop[tk]) % self.loop[tk] - 0.5 * self.loop[tk]
            if d <= STOP_MARK + 1e-9:
                state = "dwelling"
                self.dwell_end[i] = t + self.sections[i]["dwell"]
                if self._stores(i, train):
                    self._store(i, t, train)
                    return MODE_HOLD
        if state == "dwelling" and t >= self.dwell_end[i] - 0.5 * self.dt:
            state = "waiting"
        if state == "waiting":
            if clear:
                self._hold_log(i, t, -1)
                state = "dispatching"
                self._event(t, train, "dispatch", section=self.section_name(i))
                self.dispatches[i].append(t)
                self.dispatch_train.append((t, train))
            else:
                self._hold_log(i, t, train)
        self.station_state[i] = state
        return MODE_DRIVE if state == "dispatching" else MODE_HOLD

    def _stores(self, i, train) -> bool:
        """True when section ``i`` is a station on the last track of ``train``'s route: it will store
        the train (``_store``) once it stops."""
        return (SECTIONS[self.sections[i]["kind"]].block == "station"
                and self._route_ends_at(train, self.sections[i]["track"]))

    def _route_ends_at(self, train, tk) -> bool:
        """True when ``train`` has a route and its lead car is on the route's last track, ``tk``."""
        tr = self.world.records.tracks
        b = self.lead(train)
        if b >= tr.route.shape[0] or tr.route[b, 0] < 0:
            return False
        n = int(np.count_nonzero(tr.route[b] >= 0))
        return int(tr.route_at[b]) == n - 1 and int(tr.route[b, n - 1]) == tk

    def _store(self, i, t, train):
        """Station ``i`` stores ``train`` (stopped there at the end of its route): it holds it for
        good — no dwell, no dispatch, no ``max_hold`` — and the train's route is cleared, so that
        it asks no switch for a branch (``network._route_branch``)."""
        self.station_state[i] = "stored"
        self.world.records.tracks.route[self.train_cars[train]] = -1
        self._event(t, train, "stored", section=self.section_name(i))

    def _overrun(self, i, t, train, tk, ahead, s, on):
        """An overrun: the section was holding ``train`` (the block ahead, held by the trains
        ``ahead``, not clear when the logic last ran) and the train's lead car has passed ``to``:
        the section could not stop it (too short, or too weak for the train's speed). One
        ``block_overrun`` event a pass."""
        lead = self.lead(train)
        if ((i, train) in self.overran or not on[lead] or self.world.cars.track[lead] != tk
                or self.in_section(i, float(s[lead]))):
            return
        self.overran.add((i, train))
        self._event(t, train, "block_overrun", section=self.section_name(i),
                    speed=float(np.linalg.norm(self.world.bodies.vel[lead])),
                    block_ahead_held_by=", ".join(sorted(self.train_names[k] for k in ahead)))

    def _hold_log(self, i, t, train):
        """Keep the hold of section ``i`` on ``train`` (−1: none) and log its start and end."""
        cur = self.held_train[i]
        if cur == train:
            return
        if cur >= 0:
            held = t - self.hold_since[i]
            self.held_total[i] += held
            self._event(t, cur, "block_release", section=self.section_name(i), held_s=held)
        if train >= 0:
            self.hold_since[i] = t
            extra = self.why.get(i) or {}
            self._event(t, train, "block_hold", section=self.section_name(i), **extra)
        self.held_train[i] = train

    def _timers(self, step):
        """The step at which the logic must run again: the next dwell end or max_hold."""
        nxt = math.inf
        for i in self.block_sections:
            if self.station_state[i] == "dwelling":
                nxt = min(nxt, self.dwell_end[i])
            if self.held_train[i] >= 0:
                t_stall = self.hold_since[i] + self.max_hold
                if step * self.dt >= t_stall - 0.5 * self.dt and self.stalled is None:
                    name = self.train_names[self.held_train[i]]
                    self.stalled = (step * self.dt, f"{name} held at {self.section_name(i)} for more than "
                                                    f"max_hold = {self.max_hold:g} s: the blocks are deadlocked")
                    self._event(step * self.dt, self.held_train[i], "stalled", section=self.section_name(i))
                nxt = min(nxt, t_stall)
        if any(self.held_train[i] >= 0 for i in self.align_wait):
            nxt = min(nxt, step * self.dt + ALIGN_POLL)
        self.ops.until[0] = -1 if not math.isfinite(nxt) else max(step + 1, int(math.ceil(nxt / self.dt - 1e-9)))

    def _hits(self, t):
        ops = self.ops
        n = int(ops.nhits[0])
        for h in range(n):
            step, c, vc = int(ops.hits[h, 0]), int(ops.hits[h, 1]), float(ops.hits[h, 2])
            tb, ta = self.contact_pairs[c]
            th = step * self.dt
            na = len(self.train_cars[ta])
            self._event(th, tb, "collision", car=1, other_train=self.train_names[ta], other_car=na,
                        closing_speed=vc)
            self._event(th, ta, "collision", car=na, other_train=self.train_names[tb], other_car=1,
                        closing_speed=vc)
        ops.nhits[0] = 0

    def _laps(self, t, s, on):
        """A lap: the lead car crossed its track's lap line forwards in the last step."""
        for k, cars in enumerate(self.train_cars):
            b = cars[0]
            tk = int(self.world.cars.track[b])
            if tk not in self.lap_line or not on[b] or self.loop[tk] <= 0.0:
                continue
            L = self.loop[tk]
            s0, s1 = float(self.ops.s_old[b]), float(s[b])
            dmove = (s1 - s0 + 0.5 * L) % L - 0.5 * L
            x = (self.lap_line[tk] - s0 + 0.5 * L) % L - 0.5 * L
            if dmove > 0.0 and 0.0 < x <= dmove:
                if not math.isnan(self.lap_prev[k]):
                    lap = t - self.lap_prev[k]
                    self.laps[k].append(lap)
                    self._event(t, k, "lap", lap_time=lap)
                self.lap_prev[k] = t

    def start(self):
        """Before the first step: trains that start in block 0 start their first lap at t = 0."""
        w = self.world
        for k, cars in enumerate(self.train_cars):
            b = cars[0]
            tk = int(w.cars.track[b])
            if tk in self.track_blocks and self.loop[tk] > 0.0 and self.block_index(tk, float(w.cars.s[b])) == 0:
                self.lap_prev[k] = 0.0
        self.update(0, first=True)

    def finish(self, t_end):
        """Close the holds still on at the end of the run (their time counts up to ``t_end``)."""
        for i in self.block_sections:
            if self.held_train[i] >= 0:
                self.held_total[i] += t_end - self.hold_since[i]

    # ------------------------------------------------------------------ summary
    def summary(self, t_end: float, riders: list[int]) -> dict:
        """``summary.json``'s ``operation``: laps, dispatches, holds, throughput."""
        trains = {}
        for k, name in enumerate(self.train_names):
            laps = self.laps[k]
            trains[name] = {"laps": len(laps), "mean_lap_time": (sum(laps) / len(laps)) if laps else None,
                            "riders": int(riders[k])}
        stations = {}
        for i, times in self.dispatches.items():
            iv = np.diff(times)
            stations[self.section_name(i)] = {"dispatches": len(times),
                                              "mean_dispatch_interval": float(iv.mean()) if iv.size else None}
        blocks = {self.section_name(i): {"held_s": float(self.held_total[i]), "type": self.sections[i]["kind"]}
                  for i in self.block_sections}
        firsts = {}
        for tt, k in self.dispatch_train:
            firsts.setdefault(k, tt)
        throughput = riders_per_hour = None
        if firsts and len(firsts) == len(self.train_names) and t_end > max(firsts.values()):
            t0 = max(firsts.values())
            after = [k for tt, k in self.dispatch_train if tt > t0]
        else:
            after = []
        if after:       # no dispatch after every train's first (one train on an open track): not measured
            throughput = 3600.0 * len(after) / (t_end - t0)
            riders_per_hour = 3600.0 * sum(int(riders[k]) for k in after) / (t_end - t0)
        out = {"trains": trains, "stations": stations, "block_sections": blocks,
               "throughput_trains_per_hour": throughput,
               "riders_per_hour": riders_per_hour}
        if self.net_parts is not None:
            out["network_blocks"] = self.network_blocks()
        return out

    def network_blocks(self) -> list[list[str]]:
        """On a network, the ``block`` column's numbers: for each, the block sections whose blocks
        cover it (one: that section's block less what it shares; several: a stretch they share,
        after a merge)."""
        return [[self.section_name(i) for i in part] for part in self.net_parts]

