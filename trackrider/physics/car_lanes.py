"""The integration of plain cars eight at a time, in the CPU's vector lanes (docs/physics.md, "Cars in lanes").

A car on a fixed track, held by it and facing +s, in a world without a network or a moving track
(a "plain" car) is integrated by the same arithmetic as ``kernels.integrate_body`` and
``kernels.integrate_car`` — its pose, the predictor, the track's frame at the predicted s
(``curves.compact.eval_track``), the Newton step and the frame moved by it
(``curves.compact.shift_frame``) — but ``NB`` cars at once: each car's numbers are copied into
one flat buffer (``Work.lx``: word ``k`` of lane ``l`` at ``k·NB + l``), the arithmetic runs in
loops over the lanes that LLVM turns into vector instructions (eight doubles to an instruction
where the CPU has AVX-512), and the results are copied back. The table's rows, the wrap of s on a
closed track and the row of an s are looked up lane by lane in between. The results are the scalar
stages' to the bit (the same operations in the same order, each lane its own car;
``tests/physics/test_car_lanes.py``).

A block whose cars are not all plain, or of fewer than ``MIN_CARS`` cars (a short train, a train's
last few), goes through the scalar stages; so do the cars of a block in
which one car leaves an open track's end or takes a Newton step too large to shift its frame by
(``SHIFT_MAX``) — after their bodies moved here, as the scalar stage would have moved them. A short
last block repeats its last car in the lanes left over and writes back only its own cars.
"""
from __future__ import annotations

import numpy as np

from trackrider.curves.compact import C_DT, C_N, C_OMEGA, C_P, C_T, NCOL, SHIFT_MAX, hermite_weights, left_axis
from trackrider.jit import njit
from trackrider.physics.maths import closest_newton, closest_predictor, quat_step, rotation_of

#: cars per block (the lanes of an AVX-512 register of doubles)
NB = 8
#: a block of fewer cars goes through the scalar stages: the lanes would cost it as much as ``NB`` cars
#: (``bench/car_lanes.py``: 1 car 423 ns in the lanes against 95 scalar, 6 cars 84 against 81 a car)
MIN_CARS = NB - 1

# the words of a lane in ``Work.lx`` (each ``NB`` doubles: one per lane)
X_POS, X_VEL, X_QUAT, X_OMG, X_CG, X_S = 0, 3, 6, 10, 13, 14      # body and car at the step's start
X_FP, X_FT, X_FDT = 15, 18, 21                                    # the car's frame: P, T, P''
X_LEN, X_CLOSED, X_DS, X_LAST, X_ROW0 = 24, 25, 26, 27, 28        # its track: length, closed, ds, rows − 2, row0
X_ROT, X_ANC, X_SP = 29, 38, 41                                   # new rotation, anchor, predicted s
X_BAD, X_ROW, X_U = 42, 43, 44                                    # off the rows' range; its row and place in it
X_RA, X_RB = 45, 60                                               # its rows a, a + 1: P, T, N, OMEGA, P''
X_P, X_T, X_N, X_B, X_O, X_D = 75, 78, 81, 84, 87, 90             # the frame at the predicted s
X_STEP, X_S2 = 93, 94                                             # the Newton step, the new s
X_BAD2, X_ROW2, X_U2 = 95, 96, 97                                 # ... off range or too large; the new s's row
X_LA, X_LB = 98, 106                                              # its rows' columns OMEGA … ROLL
X_FR = 114                                                        # the new frame (NCOL words)
#: words per lane
LANE_WORDS = X_FR + NCOL


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def chunk_edge(c, nb, nc):
    """The first body of chunk ``c`` of ``nb`` bodies in ``nc`` chunks (``c`` = ``nc``: ``nb``), a multiple of
    ``NB``: the chunks of the threads (``kernels.par_step``) split the bodies where the serial stages'
    blocks of cars begin, so that each car goes through the lanes or not whatever the threads
    (``row_lanes.py``)."""
    if c >= nc:
        return nb
    return (c * nb // nc) // NB * NB


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def at(k, l):
    """The index of word ``k`` of lane ``l`` (unsigned: LLVM then sees plain affine addresses)."""
    return np.uint64(k * NB + l)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def plain_block(j0, n, cars, carrier):
    """True when cars ``j0`` … ``j0 + n − 1`` are all held by a fixed track and face +s."""
    for b in range(j0, j0 + n):
        if not cars.held[b] or carrier[b] >= 0 or not cars.dir[b] > 0.0:
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_motion_in(b, l, pos, vel, omg, X):
    """Lane ``l``: body ``b``'s position and velocities."""
    for i in range(3):
        X[at(X_POS + i, l)] = pos[b, i]
        X[at(X_VEL + i, l)] = vel[b, i]
        X[at(X_OMG + i, l)] = omg[b, i]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_in(j0, n, tracks, bodies, cars, X):
    """Each lane's body, car and the car's track (lane ``l`` ≥ ``n``: car ``j0 + n − 1`` again)."""
    pos, vel, quat, omg, fr = bodies.pos, bodies.vel, bodies.quat, bodies.omg, cars.frame
    for l in range(NB):
        b = j0 + min(l, n - 1)
        copy_motion_in(b, l, pos, vel, omg, X)
        for i in range(3):
            X[at(X_FP + i, l)] = fr[b, C_P + i]
            X[at(X_FT + i, l)] = fr[b, C_T + i]
            X[at(X_FDT + i, l)] = fr[b, C_DT + i]
        for i in range(4):
            X[at(X_QUAT + i, l)] = quat[b, i]
        X[at(X_CG, l)] = cars.cg[b]
        X[at(X_S, l)] = cars.s[b]
        t = cars.track[b]
        X[at(X_LEN, l)] = tracks.length[t]
        X[at(X_CLOSED, l)] = 1.0 if tracks.closed[t] else 0.0
        X[at(X_DS, l)] = tracks.ds[t]
        X[at(X_LAST, l)] = tracks.nrows[t] - 2
        X[at(X_ROW0, l)] = tracks.row0[t]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lanes_pose(h, X):
    """Vector: each body's new position, orientation and rotation (``kernels.integrate_body``), the
    anchor and the predicted s (``kernels.predict_step``)."""
    hw = 0.5 * h
    for l in range(NB):
        px = X[at(X_POS, l)] + h * X[at(X_VEL, l)]
        py = X[at(X_POS + 1, l)] + h * X[at(X_VEL + 1, l)]
        pz = X[at(X_POS + 2, l)] + h * X[at(X_VEL + 2, l)]
        w, x, y, z = quat_step(X[at(X_QUAT, l)], X[at(X_QUAT + 1, l)], X[at(X_QUAT + 2, l)], X[at(X_QUAT + 3, l)],
                               X[at(X_OMG, l)], X[at(X_OMG + 1, l)], X[at(X_OMG + 2, l)], hw)
        X[at(X_POS, l)], X[at(X_POS + 1, l)], X[at(X_POS + 2, l)] = px, py, pz
        X[at(X_QUAT, l)], X[at(X_QUAT + 1, l)], X[at(X_QUAT + 2, l)], X[at(X_QUAT + 3, l)] = w, x, y, z
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_of(w, x, y, z)
        X[at(X_ROT, l)], X[at(X_ROT + 1, l)], X[at(X_ROT + 2, l)] = r00, r01, r02
        X[at(X_ROT + 3, l)], X[at(X_ROT + 4, l)], X[at(X_ROT + 5, l)] = r10, r11, r12
        X[at(X_ROT + 6, l)], X[at(X_ROT + 7, l)], X[at(X_ROT + 8, l)] = r20, r21, r22
        # the anchor and the predictor from the car's frame (kernels.predict_step)
        cg = X[at(X_CG, l)]
        ax, ay, az = px - cg * r02, py - cg * r12, pz - cg * r22
        X[at(X_ANC, l)], X[at(X_ANC + 1, l)], X[at(X_ANC + 2, l)] = ax, ay, az
        sp = X[at(X_S, l)] + closest_predictor(ax - X[at(X_FP, l)], ay - X[at(X_FP + 1, l)], az - X[at(X_FP + 2, l)],
                                               X[at(X_FT, l)], X[at(X_FT + 1, l)], X[at(X_FT + 2, l)],
                                               X[at(X_FDT, l)], X[at(X_FDT + 1, l)], X[at(X_FDT + 2, l)])
        X[at(X_SP, l)] = sp
        place(sp, l, X, X_BAD, X_ROW, X_U)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def place(s, l, X, bad, row, u):
    """Lane ``l``: the row of the table about ``s`` and where ``s`` lies in it (``curves.compact.segment``
    of ``s`` wrapped as ``wrap_arc_length`` does) into words ``row`` and ``u``; word ``bad`` 1 when
    ``s`` is not inside the track (0 … length: open; strictly inside: closed, where an ``s`` on or past
    the ends is wrapped by the scalar stages) or not a number, else 0."""
    L, last = X[at(X_LEN, l)], X[at(X_LAST, l)]
    inside = ((s > 0.0) & (s < L)) | ((X[at(X_CLOSED, l)] == 0.0) & (s >= 0.0) & (s <= L))
    X[at(bad, l)] = 0.0 if inside else 1.0
    x = s / X[at(X_DS, l)]
    i = x if inside else 0.0   # (a number; not used when bad)
    i = float(int(i))
    if i > last:
        i = last
    X[at(row, l)] = X[at(X_ROW0, l)] + i
    X[at(u, l)] = x - i


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_bodies_out(j0, n, bodies, X):
    """Each car's body's new position, orientation and rotation."""
    pos, quat, rot = bodies.pos, bodies.quat, bodies.rot
    for l in range(n):
        b = j0 + l
        for i in range(3):
            pos[b, i] = X[at(X_POS + i, l)]
        for i in range(4):
            quat[b, i] = X[at(X_QUAT + i, l)]
        for i in range(3):
            for k in range(3):
                rot[b, i, k] = X[at(X_ROT + 3 * i + k, l)]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def any_lane(X, k):
    """Whether word ``k`` (a flag, 0 or 1) is set in any lane."""
    n = 0.0
    for l in range(NB):
        n += X[at(k, l)]
    return n != 0.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rows_at_prediction(data, X):
    """Lane by lane: the two rows of the table about the predicted s; False (and none copied) when a
    car's predicted s is off its track's rows (``place``)."""
    if any_lane(X, X_BAD):
        return False
    for l in range(NB):
        a = int(X[at(X_ROW, l)])
        for i in range(9):   # P, T, N
            X[at(X_RA + i, l)] = data[a, C_P + i]
            X[at(X_RB + i, l)] = data[a + 1, C_P + i]
        for i in range(3):
            X[at(X_RA + 9 + i, l)] = data[a, C_OMEGA + i]
            X[at(X_RB + 9 + i, l)] = data[a + 1, C_OMEGA + i]
            X[at(X_RA + 12 + i, l)] = data[a, C_DT + i]
            X[at(X_RB + 12 + i, l)] = data[a + 1, C_DT + i]
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lanes_frame(X):
    """Vector: the track's frame at the predicted s (``curves.compact.eval_track``: P, T, N, B,
    OMEGA and P'') and the Newton step from there (``kernels.newton_step``)."""
    for l in range(NB):
        u = X[at(X_U, l)]
        h00, h10, h01, h11 = hermite_weights(u, X[at(X_DS, l)])
        # rows a (A) and a + 1 (B): P 0-2, T 3-5, N 6-8, OMEGA 9-11, P'' 12-14
        p0 = h00 * X[at(X_RA, l)] + h10 * X[at(X_RA + 3, l)] + h01 * X[at(X_RB, l)] + h11 * X[at(X_RB + 3, l)]
        p1 = (h00 * X[at(X_RA + 1, l)] + h10 * X[at(X_RA + 4, l)] + h01 * X[at(X_RB + 1, l)]
              + h11 * X[at(X_RB + 4, l)])
        p2 = (h00 * X[at(X_RA + 2, l)] + h10 * X[at(X_RA + 5, l)] + h01 * X[at(X_RB + 2, l)]
              + h11 * X[at(X_RB + 5, l)])
        t0 = (h00 * X[at(X_RA + 3, l)] + h10 * X[at(X_RA + 12, l)] + h01 * X[at(X_RB + 3, l)]
              + h11 * X[at(X_RB + 12, l)])
        t1 = (h00 * X[at(X_RA + 4, l)] + h10 * X[at(X_RA + 13, l)] + h01 * X[at(X_RB + 4, l)]
              + h11 * X[at(X_RB + 13, l)])
        t2 = (h00 * X[at(X_RA + 5, l)] + h10 * X[at(X_RA + 14, l)] + h01 * X[at(X_RB + 5, l)]
              + h11 * X[at(X_RB + 14, l)])
        tn = 0.0
        tn += t0 * t0
        tn += t1 * t1
        tn += t2 * t2
        tn = 1.0 / np.sqrt(tn)
        t0 *= tn
        t1 *= tn
        t2 *= tn
        oa0, oa1, oa2 = X[at(X_RA + 9, l)], X[at(X_RA + 10, l)], X[at(X_RA + 11, l)]
        ob0, ob1, ob2 = X[at(X_RB + 9, l)], X[at(X_RB + 10, l)], X[at(X_RB + 11, l)]
        na0, na1, na2 = X[at(X_RA + 6, l)], X[at(X_RA + 7, l)], X[at(X_RA + 8, l)]
        nb0, nb1, nb2 = X[at(X_RB + 6, l)], X[at(X_RB + 7, l)], X[at(X_RB + 8, l)]
        n0, n1, n2 = left_axis(h00, h10, h01, h11, na0, na1, na2, oa0, oa1, oa2, nb0, nb1, nb2, ob0, ob1, ob2,
                               t0, t1, t2)
        w = 1.0 - u
        o0 = w * oa0 + u * ob0
        o1 = w * oa1 + u * ob1
        o2 = w * oa2 + u * ob2
        e0 = w * X[at(X_RA + 12, l)] + u * X[at(X_RB + 12, l)]
        e1 = w * X[at(X_RA + 13, l)] + u * X[at(X_RB + 13, l)]
        e2 = w * X[at(X_RA + 14, l)] + u * X[at(X_RB + 14, l)]
        X[at(X_P, l)], X[at(X_P + 1, l)], X[at(X_P + 2, l)] = p0, p1, p2
        X[at(X_T, l)], X[at(X_T + 1, l)], X[at(X_T + 2, l)] = t0, t1, t2
        X[at(X_N, l)], X[at(X_N + 1, l)], X[at(X_N + 2, l)] = n0, n1, n2
        X[at(X_B, l)], X[at(X_B + 1, l)], X[at(X_B + 2, l)] = t1 * n2 - t2 * n1, t2 * n0 - t0 * n2, t0 * n1 - t1 * n0
        X[at(X_O, l)], X[at(X_O + 1, l)], X[at(X_O + 2, l)] = o0, o1, o2
        X[at(X_D, l)], X[at(X_D + 1, l)], X[at(X_D + 2, l)] = e0, e1, e2
        # kernels.newton_step
        step = closest_newton(X[at(X_ANC, l)] - p0, X[at(X_ANC + 1, l)] - p1, X[at(X_ANC + 2, l)] - p2, t0, t1, t2,
                              e0, e1, e2)
        X[at(X_STEP, l)] = step
        s2 = X[at(X_SP, l)] + step
        X[at(X_S2, l)] = s2
        place(s2, l, X, X_BAD2, X_ROW2, X_U2)
        if abs(step) > SHIFT_MAX:
            X[at(X_BAD2, l)] = 1.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def rows_at_step(data, X):
    """Lane by lane: the linear columns of the rows about the new s (``shift_frame``); False when a
    car's new s is off its track's rows (``place``) or its step is too large to shift the frame by."""
    if any_lane(X, X_BAD2):
        return False
    for l in range(NB):
        a = int(X[at(X_ROW2, l)])
        for i in range(NCOL - C_OMEGA):
            X[at(X_LA + i, l)] = data[a, C_OMEGA + i]
            X[at(X_LB + i, l)] = data[a + 1, C_OMEGA + i]
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lanes_shift(X):
    """Vector: the frame at the predicted s moved by the Newton step (``curves.compact.shift_frame``)."""
    for l in range(NB):
        d, u = X[at(X_STEP, l)], X[at(X_U2, l)]
        w = 1.0 - u
        for k in range(NCOL - C_OMEGA):
            X[at(X_FR + C_OMEGA + k, l)] = w * X[at(X_LA + k, l)] + u * X[at(X_LB + k, l)]
        for k in range(3):
            X[at(X_FR + C_P + k, l)] = X[at(X_P + k, l)] + d * X[at(X_T + k, l)]
            X[at(X_FR + C_T + k, l)] = X[at(X_T + k, l)] + d * X[at(X_D + k, l)]
        o0, o1, o2 = X[at(X_O, l)], X[at(X_O + 1, l)], X[at(X_O + 2, l)]
        n0, n1, n2 = X[at(X_N, l)], X[at(X_N + 1, l)], X[at(X_N + 2, l)]
        X[at(X_FR + C_N, l)] = n0 + d * (o1 * n2 - o2 * n1)
        X[at(X_FR + C_N + 1, l)] = n1 + d * (o2 * n0 - o0 * n2)
        X[at(X_FR + C_N + 2, l)] = n2 + d * (o0 * n1 - o1 * n0)
        n0, n1, n2 = X[at(X_B, l)], X[at(X_B + 1, l)], X[at(X_B + 2, l)]
        X[at(X_FR + C_N + 3, l)] = n0 + d * (o1 * n2 - o2 * n1)
        X[at(X_FR + C_N + 4, l)] = n1 + d * (o2 * n0 - o0 * n2)
        X[at(X_FR + C_N + 5, l)] = n2 + d * (o0 * n1 - o1 * n0)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def copy_cars_out(j0, n, cars, lam, X):
    """Each car's s, frame, the axes of its frame before (``prev_frame``) and its track-row impulses
    kept (``lam_track``), as ``kernels.integrate_car``."""
    fr = cars.frame
    for l in range(n):
        b = j0 + l
        for k in range(9):
            cars.prev_frame[b, k] = fr[b, C_T + k]
        cars.has_prev[b] = 1
        for r in range(5):
            cars.lam_track[b, r] = lam[b, r]
        for k in range(NCOL):
            fr[b, k] = X[at(X_FR + k, l)]
        cars.s[b] = X[at(X_S2, l)]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def integrate_block(j0, n, h, tracks, bodies, cars, lam, X):
    """Cars ``j0`` … ``j0 + n − 1`` (``n`` ≤ ``NB``, all plain) and their bodies integrated in the lanes;
    False when their cars still need the scalar ``integrate_car`` (their bodies have moved)."""
    copy_in(j0, n, tracks, bodies, cars, X)
    lanes_pose(h, X)
    copy_bodies_out(j0, n, bodies, X)
    if not rows_at_prediction(tracks.data, X):
        return False
    lanes_frame(X)
    if not rows_at_step(tracks.data, X):
        return False
    lanes_shift(X)
    copy_cars_out(j0, n, cars, lam, X)
    return True


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, inline="always")
def lanes_allowed(tracks):
    """Cars may go through the lanes: no network, no track on a moving body."""
    if tracks.net[0]:
        return False
    for t in range(tracks.body.shape[0]):
        if tracks.body[t] >= 0:
            return False
    return True
