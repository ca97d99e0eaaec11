"""The chase camera: where it can stand and what it can see.

The static scene is turned into capsules (a segment and a radius: rails,
spine, ties, columns, arms, piers, ballast, decks) in a uniform grid over the
ground, so that a sight line or a camera position is checked against the few
near it (numba). The moving bodies are capsules too, per frame.

``plan_chase`` computes, for every frame, several candidate shots of the
followed car (behind it to the left and right, high behind, beside it, above
it): each an offset in the car's own (smoothed) axes followed by a critically
damped spring, pushed clear of the structure, of the space the cars sweep
along every track, and above the ground. Each shot is scored a few times a
second by the share of sight lines from the camera to points of the followed
car that nothing blocks; a shortest path through (time, shot) picks the shot
for each moment (a change of shot costs, a blocked view costs more, the
first shot is preferred), and the camera cuts from shot to shot. No VTK here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trackrider.jit import njit
from trackrider.render import geometry as geo
from trackrider.render.cameras import CHASE_OMEGA, _smooth, _unit, critically_damped

#: how far the camera keeps from any structure's surface, and from a track's
#: curve (where the cars pass), m (times the train's scale for small cars)
CLEAR_OF_STRUCTURE, CLEAR_OF_TRACK = 1.0, 1.8
#: grid cell of the capsules, m
CELL = 4.0
#: shots scored this many times a second of ride
SCORE_HZ = 8.0
#: the cost of a sample where no sight line reaches the followed car, where none reaches the
#: train ahead of it, and of a change of shot (a shot's own costs: ``SHOTS``, per second)
HIDDEN_CAR, HIDDEN_AHEAD, SWITCH_COST = 4.0, 1.0, 1.0
#: a sight line passing closer than this to the structure counts as blocked (a beam just beside
#: it would fill the picture), m (times the scale)
SIGHT_PAD = 0.6


@dataclass
class Capsules:
    """Segments ``a`` → ``b`` (n, 3) with radii ``r`` (n,), m, binned in a grid of
    ``cell`` m squares over x, y: capsules of cell (i, j) are
    ``items[start[j * nx + i]:start[j * nx + i + 1]]``."""

    a: np.ndarray
    b: np.ndarray
    r: np.ndarray
    x0: float
    y0: float
    nx: int
    ny: int
    start: np.ndarray
    items: np.ndarray
    cell: float = CELL

    @classmethod
    def build(cls, a, b, r, cell: float = CELL) -> "Capsules":
        a = np.ascontiguousarray(np.asarray(a, dtype=float).reshape(-1, 3))
        b = np.ascontiguousarray(np.asarray(b, dtype=float).reshape(-1, 3))
        r = np.ascontiguousarray(np.broadcast_to(np.asarray(r, dtype=float), (len(a),)))
        if len(a) == 0:
            return cls(a, b, r, 0.0, 0.0, 1, 1, np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64), cell)
        lo = np.minimum(a, b)[:, :2] - r[:, None]
        hi = np.maximum(a, b)[:, :2] + r[:, None]
        x0, y0 = lo.min(axis=0) - cell
        nx = int(math.ceil((hi[:, 0].max() - x0) / cell)) + 2
        ny = int(math.ceil((hi[:, 1].max() - y0) / cell)) + 2
        i0 = np.floor((lo[:, 0] - x0) / cell).astype(np.int64)
        i1 = np.floor((hi[:, 0] - x0) / cell).astype(np.int64)
        j0 = np.floor((lo[:, 1] - y0) / cell).astype(np.int64)
        j1 = np.floor((hi[:, 1] - y0) / cell).astype(np.int64)
        counts = (i1 - i0 + 1) * (j1 - j0 + 1)
        owner = np.repeat(np.arange(len(a)), counts)
        k = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        w = np.repeat(i1 - i0 + 1, counts)
        ci = np.repeat(i0, counts) + k % w
        cj = np.repeat(j0, counts) + k // w
        key = cj * nx + ci
        order = np.argsort(key, kind="stable")
        start = np.searchsorted(key[order], np.arange(nx * ny + 1)).astype(np.int64)
        return cls(a, b, r, float(x0), float(y0), nx, ny, start, owner[order].astype(np.int64), cell)

    def args(self):
        return self.a, self.b, self.r, self.x0, self.y0, self.cell, self.nx, self.ny, self.start, self.items


def static_capsules(static, spec) -> tuple[Capsules, Capsules]:
    """(the structure's capsules: what blocks a view and what the camera keeps
    ``CLEAR_OF_STRUCTURE`` from; the space the cars sweep, which it stays out
    of: ``CLEAR_OF_TRACK`` around each track's curve, or around where its
    hanging cars hang, times the scale of its cars) of a
    ``layout.StaticScene`` drawn for ``spec``."""
    A, B, R = [], [], []
    SA, SB, SR = [], [], []

    def add(a, b, r):
        a = np.asarray(a, dtype=float).reshape(-1, 3)
        b = np.asarray(b, dtype=float).reshape(-1, 3)
        A.append(a)
        B.append(b)
        R.append(np.broadcast_to(np.asarray(r, dtype=float), (len(a),)))

    for k, tr in enumerate(spec.tracks):
        if spec.carried(k):  # it moves with its body: not where it starts
            continue
        lay = static.layouts[k]
        length = float(tr.geometry.length)
        n = max(int(math.ceil(length / 1.0)) + 1, 2)
        s = np.linspace(0.0, length, n)
        P, _T, N, Bv = geo._frames(tr.geometry, s)
        # the space its cars sweep: around the curve (hanging cars: around their centres, below it), smaller
        # for small cars
        on = spec.trains_on(k)
        scale = max([float(np.clip(max(t.length, t.width, t.height) / 2.0, 0.1, 1.0)) for t in on], default=1.0)
        hang = max([t.hang for t in on if t.suspended], default=0.0)
        c = P - hang * Bv
        SA.append(c[:-1])
        SB.append(c[1:])
        SR.append(np.full(n - 1, CLEAR_OF_TRACK * scale))
        if static.simple:
            continue
        rr, g = lay.rail_radius, lay.gauge
        if lay.style == "railway":
            top_d, hb, _wt, wb = geo._ballast(lay)
            for off in (-0.5 * wb, 0.0, 0.5 * wb):  # the ballast bank
                c = P + off * N - (top_d + 0.5 * hb) * Bv
                add(c[:-1], c[1:], 0.3)
            for side in (1.0, -1.0):
                c = P + side * 0.5 * g * N - (lay.rail_depth + rr) * Bv
                add(c[:-1], c[1:], rr)
            continue
        rail_off = lay.rail_up if lay.style == "hanging" else -(lay.rail_depth + rr)
        for side in (1.0, -1.0):
            c = P + side * 0.5 * g * N + rail_off * Bv
            add(c[:-1], c[1:], rr)
        c = P + lay.spine_offset() * Bv
        add(c[:-1], c[1:], lay.spine_radius)
        # ties from the rails to the spine, every metre here (they are every 1.6 m: a little more blocking)
        for side in (1.0, -1.0):
            add(P + side * 0.5 * g * N + rail_off * Bv, P + side * 0.6 * lay.spine_radius * N
                + lay.spine_offset() * Bv, 0.06)
    for sp in static.supports:
        if sp.kind == "pier":
            add(sp.foot, sp.top, 0.7)
            continue
        if sp.kind == "column":
            add(sp.foot, sp.top, sp.radius)
        else:  # a column beside the track, its arm over it and the drop into the spine
            top = np.array([sp.foot[0], sp.foot[1], sp.quads.points[:, 2].max()])
            add(sp.foot, top, sp.radius)
            add(top, np.array([sp.top[0], sp.top[1], top[2]]), 0.25)
            add(np.array([sp.top[0], sp.top[1], top[2]]), sp.top, 0.15)
    for bed in static.beds:  # decks of viaducts (their quads' centres, as balls)
        deck = np.all(bed.colours == geo.DECK_COLOUR, axis=1)
        if deck.any():
            c = bed.points[bed.quads[deck]].mean(axis=1)
            add(c, c, 0.6)
    cat = (lambda xs: np.concatenate(xs) if xs else np.zeros((0, 3)))
    structure = Capsules.build(cat(A), cat(B), np.concatenate(R) if R else np.zeros(0))
    space = Capsules.build(cat(SA), cat(SB), np.concatenate(SR) if SR else np.zeros(0))
    return structure, space


@njit(cache=True, nogil=True, inline="always")
def _seg_seg(p0, p1, q0, q1):
    """Squared distance between segments p0–p1 and q0–q1 (3-tuples unpacked as arrays)."""
    d1x, d1y, d1z = p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]
    d2x, d2y, d2z = q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]
    rx, ry, rz = p0[0] - q0[0], p0[1] - q0[1], p0[2] - q0[2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    eps = 1e-12
    if a <= eps and e <= eps:
        return rx * rx + ry * ry + rz * rz
    if a <= eps:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= eps:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            den = a * e - b * b
            s = min(max((b * f - c * e) / den, 0.0), 1.0) if den > eps else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / a, 0.0), 1.0)
    dx = rx + d1x * s - d2x * t
    dy = ry + d1y * s - d2y * t
    dz = rz + d1z * s - d2z * t
    return dx * dx + dy * dy + dz * dz


@njit(cache=True, nogil=True)
def _blocked(a, b, r, x0, y0, cell, nx, ny, start, items, p, q, pad, stamp, mark):
    """True when a capsule (radius + ``pad``) meets the segment p–q."""
    lo_x = min(p[0], q[0]) - 1.0
    hi_x = max(p[0], q[0]) + 1.0
    lo_y = min(p[1], q[1]) - 1.0
    hi_y = max(p[1], q[1]) + 1.0
    i0 = max(int(math.floor((lo_x - x0) / cell)), 0)
    i1 = min(int(math.floor((hi_x - x0) / cell)), nx - 1)
    j0 = max(int(math.floor((lo_y - y0) / cell)), 0)
    j1 = min(int(math.floor((hi_y - y0) / cell)), ny - 1)
    for j in range(j0, j1 + 1):
        for i in range(i0, i1 + 1):
            c = j * nx + i
            for k in range(start[c], start[c + 1]):
                m = items[k]
                if stamp[m] == mark:
                    continue
                stamp[m] = mark
                rr = r[m] + pad
                if _seg_seg(p, q, a[m], b[m]) < rr * rr:
                    return True
    return False


@njit(cache=True, nogil=True)
def _push(a, b, r, x0, y0, cell, nx, ny, start, items, eye, clear):
    """Move ``eye`` (3,) in place out to ``clear`` m from the surface of every capsule near it
    (a few passes: moving away from one may bring it near another)."""
    for _ in range(4):
        i = int(math.floor((eye[0] - x0) / cell))
        j = int(math.floor((eye[1] - y0) / cell))
        best, bk, bt = 0.0, -1, 0.0
        for jj in range(max(j - 1, 0), min(j + 2, ny)):
            for ii in range(max(i - 1, 0), min(i + 2, nx)):
                c = jj * nx + ii
                for k in range(start[c], start[c + 1]):
                    m = items[k]
                    dx, dy, dz = b[m, 0] - a[m, 0], b[m, 1] - a[m, 1], b[m, 2] - a[m, 2]
                    ll = dx * dx + dy * dy + dz * dz
                    t = 0.0
                    if ll > 1e-12:
                        t = ((eye[0] - a[m, 0]) * dx + (eye[1] - a[m, 1]) * dy + (eye[2] - a[m, 2]) * dz) / ll
                        t = min(max(t, 0.0), 1.0)
                    ex = eye[0] - a[m, 0] - t * dx
                    ey = eye[1] - a[m, 1] - t * dy
                    ez = eye[2] - a[m, 2] - t * dz
                    d = math.sqrt(ex * ex + ey * ey + ez * ez)
                    short = r[m] + clear - d
                    if short > best:
                        best, bk, bt = short, m, t
        if bk < 0:
            return
        cx = a[bk, 0] + bt * (b[bk, 0] - a[bk, 0])
        cy = a[bk, 1] + bt * (b[bk, 1] - a[bk, 1])
        cz = a[bk, 2] + bt * (b[bk, 2] - a[bk, 2])
        ex, ey, ez = eye[0] - cx, eye[1] - cy, eye[2] - cz
        d = math.sqrt(ex * ex + ey * ey + ez * ez)
        if d < 1e-9:
            ex, ey, ez, d = 0.0, 0.0, 1.0, 1.0
        want = r[bk] + clear + 0.02
        eye[0] = cx + ex / d * want
        eye[1] = cy + ey / d * want
        eye[2] = cz + ez / d * want


@njit(cache=True, nogil=True)
def _push_all(a, b, r, x0, y0, cell, nx, ny, start, items, eyes, clear):
    for f in range(eyes.shape[0]):
        _push(a, b, r, x0, y0, cell, nx, ny, start, items, eyes[f], clear)


@njit(cache=True, nogil=True)
def _visibility(a, b, r, x0, y0, cell, nx, ny, start, items, eyes, targets, movers_a, movers_b, movers_r, pad):
    """Share of the sight lines from ``eyes`` (ns, 3) to ``targets`` (ns, nt, 3) that no capsule
    (static, or moving: ``movers_*`` (ns, nm, 3) / (ns, nm)) blocks; the last metre at each
    end is not checked (the car itself, and what the camera was pushed clear of)."""
    ns, nt = targets.shape[0], targets.shape[1]
    out = np.zeros(ns)
    stamp = np.zeros(max(a.shape[0], 1), dtype=np.int64)
    mark = 0
    p = np.empty(3)
    q = np.empty(3)
    for s in range(ns):
        seen = 0
        for k in range(nt):
            dx = targets[s, k, 0] - eyes[s, 0]
            dy = targets[s, k, 1] - eyes[s, 1]
            dz = targets[s, k, 2] - eyes[s, 2]
            ln = math.sqrt(dx * dx + dy * dy + dz * dz)
            if ln < 1e-6:
                seen += 1
                continue
            u0 = min(0.3 / ln, 0.5)
            u1 = max(1.0 - 0.6 / ln, u0)
            p[0], p[1], p[2] = eyes[s, 0] + u0 * dx, eyes[s, 1] + u0 * dy, eyes[s, 2] + u0 * dz
            q[0], q[1], q[2] = eyes[s, 0] + u1 * dx, eyes[s, 1] + u1 * dy, eyes[s, 2] + u1 * dz
            mark += 1
            hit = _blocked(a, b, r, x0, y0, cell, nx, ny, start, items, p, q, pad, stamp, mark)
            if not hit:
                for m in range(movers_r.shape[1]):
                    rr = movers_r[s, m]
                    if rr > 0.0 and _seg_seg(p, q, movers_a[s, m], movers_b[s, m]) < rr * rr:
                        hit = True
                        break
            if not hit:
                seen += 1
        out[s] = seen / nt
    return out


#: the shots: (back, side, up) in units of the default offset's (``CHASE_BACK`` +
#: 1.5 car lengths, ``CHASE_SIDE``, chase height + a car height), and the cost of
#: using it for a second (the first is the usual view)
SHOTS = (
    ((1.0, 1.0, 1.0), 0.0),     # behind, to the left, above
    ((1.0, -1.0, 1.0), 0.15),   # behind, to the right, above
    ((0.7, 0.4, 2.0), 0.3),     # high behind
    ((0.35, 2.2, 0.55), 0.4),   # beside, on the left
    ((0.35, -2.2, 0.55), 0.45),  # beside, on the right
    ((1.1, 0.5, 0.45), 0.5),    # low behind
    ((0.25, 0.2, 3.2), 0.6),    # above
)


def choose(scores: np.ndarray, costs, switch: float, full: float = 1.0) -> np.ndarray:
    """The shot for each sample (ns,): the cheapest path through the samples,
    ``scores`` (ns, nshots) how much is seen (``full`` − it is the cost of a
    sample), ``costs`` (nshots,) each shot's own cost per sample, ``switch`` the
    cost of a change of shot."""
    ns, nk = scores.shape
    cost = (full - scores) + np.asarray(costs)[None, :]
    total = cost[0].copy()
    back = np.zeros((ns, nk), dtype=np.int64)
    for s in range(1, ns):
        best = int(np.argmin(total))
        stay = total
        move = total[best] + switch
        back[s] = np.where(stay <= move, np.arange(nk), best)
        total = np.minimum(stay, move) + cost[s]
    path = np.empty(ns, dtype=np.int64)
    path[-1] = int(np.argmin(total))
    for s in range(ns - 1, 0, -1):
        path[s - 1] = back[s, path[s]]
    return path


@dataclass
class ChaseScene:
    """What the chase camera plans against: ``structure`` and ``space`` capsules
    (``static_capsules``), the ``ground`` (``ground.Ground``), and per recorded
    entity its size (length, width, height) m or None (a moving obstacle)."""

    structure: Capsules
    space: Capsules
    ground: object
    sizes: list


def _movers(positions, rotations, sizes, skip):
    """Capsules (nf, ne, 3) ×2 and radii (nf, ne) of the moving bodies (0 radius: none)."""
    nf, ne = positions.shape[:2]
    a = np.zeros((nf, ne, 3))
    b = np.zeros((nf, ne, 3))
    r = np.zeros((nf, ne))
    for e in range(ne):
        if e in skip or sizes[e] is None:
            continue
        ln, wd, ht = sizes[e]
        rad = 0.4 * min(wd, ht)
        half = max(0.5 * ln - rad, 0.0)
        fwd = rotations[:, e, :, 0]
        a[:, e] = positions[:, e] - half * fwd
        b[:, e] = positions[:, e] + half * fwd
        r[:, e] = rad
    return a, b, r


def plan_chase(positions, rotations, follow, scene: ChaseScene, fps: float, speed: float,
               base_offset, car_size):
    """Eye positions (nf, 3) of the chase camera and the shot used at each frame (nf,).

    positions, rotations : (nf, ne, 3), (nf, ne, 3, 3) every entity, every frame.
    follow : ``cameras.Follow`` (``chase``: the entity the camera is anchored to,
        ``ride``: the entity that must be seen, ``free``: a free body, followed in the
        world's axes).
    base_offset : (back, side, up) m of the first shot; car_size : (length, width, height) m.
    """
    nf = len(positions)
    fps_sim = fps / max(speed, 1e-9)
    dt = max(speed, 1e-9) / fps
    anchor = follow.chase
    p_anchor = positions[:, anchor]
    if follow.free:
        fwd = np.tile([1.0, 0.0, 0.0], (nf, 1))
        up = np.tile([0.0, 0.0, 1.0], (nf, 1))
    else:
        fwd = _unit(_smooth(rotations[:, anchor, :, 0], 0.5 * fps_sim))
        up = _unit(_smooth(rotations[:, anchor, :, 2], 0.5 * fps_sim))
    left = _unit(np.cross(up, fwd))
    scale = follow.scale
    back, side, upd = base_offset
    eyes = np.empty((len(SHOTS), nf, 3))
    for k, ((sb, ss, su), _cost) in enumerate(SHOTS):
        off = -back * sb * fwd + side * ss * left + upd * su * up
        eyes[k] = p_anchor + critically_damped(off, dt, CHASE_OMEGA)
    st, sp = scene.structure, scene.space
    for k in range(len(SHOTS)):
        e = np.ascontiguousarray(eyes[k])
        for _ in range(2):
            _push_all(*st.args(), e, CLEAR_OF_STRUCTURE * scale)
            _push_all(*sp.args(), e, 0.0)
            floor = scene.ground.height(e[:, 0], e[:, 1]) + 1.5 * scale
            e[:, 2] = np.maximum(e[:, 2], floor)
        eyes[k] = e
    # score the shots a few times a second: the share of sight lines to the followed car left free
    step = max(int(round(fps_sim / SCORE_HZ)), 1)
    samples = np.arange(0, nf, step)
    tgt = follow.ride
    ln, wd, ht = car_size
    r = rotations[samples, tgt]
    c = positions[samples, tgt]
    targets = np.stack([c + 0.3 * ht * r[:, :, 2], c + 0.35 * ln * r[:, :, 0], c - 0.35 * ln * r[:, :, 0],
                        c + 0.45 * ht * r[:, :, 2] + 0.3 * wd * r[:, :, 1]], axis=1)
    # and the train ahead of it, which the camera looks towards (a lesser part of the score)
    ahead = positions[samples, follow.ahead if follow.ahead is not None else tgt]
    towards = np.stack([0.5 * (c + ahead) + 0.3 * ht * r[:, :, 2], ahead + 0.3 * ht * r[:, :, 2]], axis=1)
    ma, mb, mr = _movers(positions[samples], rotations[samples], scene.sizes, {tgt})
    ma2, mb2, mr2 = _movers(positions[samples], rotations[samples], scene.sizes,
                            {tgt, follow.ahead if follow.ahead is not None else tgt})
    scores = np.empty((len(samples), len(SHOTS)))
    for k in range(len(SHOTS)):
        e = np.ascontiguousarray(eyes[k, samples])
        scores[:, k] = (HIDDEN_CAR * _visibility(*st.args(), e, targets, ma, mb, mr, SIGHT_PAD * scale)
                        + HIDDEN_AHEAD * _visibility(*st.args(), e, np.ascontiguousarray(towards), ma2, mb2, mr2,
                                                     SIGHT_PAD * scale))
    # a sample's costs: the car (and the train ahead of it) hidden, the shot's own cost; a change of shot
    costs = [cost / SCORE_HZ for _shot, cost in SHOTS]
    shot_of_sample = choose(scores, costs, SWITCH_COST, HIDDEN_CAR + HIDDEN_AHEAD)
    shot = np.repeat(shot_of_sample, step)[:nf]
    out = eyes[shot, np.arange(nf)]
    return out, shot
