"""Draft gear: a railway coupler with free play and a friction draft gear (docs/physics.md §10).

The coupler is a bar between the cars' ends (``distance.py``'s row): extension ``x = |p_b − p_a| −
L``, ``ẋ = J u``, ``J = [−n, −(r_a × n), n, r_b × n]`` (an impulse λ > 0 pushes the cars apart: the
coupler force is −λ/h, + in draft). Free play ``±e`` (``e`` = slack/2); beyond it the gear
deflects by ``y = σ x − e ≥ 0`` (σ = +1 in draft, −1 in buff) and pushes back with a force ``G``
between its unloading and loading curves:

    loading   L(y) = F_pre + k_l y        unloading   U(y) = k_u y      (k_u ≤ k_l)

``G = L`` while the deflection grows, ``G = U`` while it shrinks, and in between the gear's
friction holds it: locked, ``U(y*) ≤ G ≤ L(y*)`` at a fixed ``y*`` (at ``y* = 0``: ``0 ≤ G ≤
F_pre``, the preload; at ``y* = travel`` the gear is solid: ``G ≥ U``). A cycle 0 → y_m → 0 costs
the area between the curves, ``F_pre y_m + (k_l − k_u) y_m²/2``.

Each step the coupler is in one of four modes (``MODE`` column):

    OPEN       no force: the chain's row is decoupled (J = 0, γ = 1, target 0: λ = 0)
    LOADING    G = L(y) at the step's start, an explicit force (``impulse``, applied with gravity and
               traction before the track rows: ``railway.apply_gear_forces``); the row decoupled
    UNLOADING  G = U(y) likewise
    LOCKED     rigid at y* (``LOCK``), solved exactly with the train's chain (``couplings.py``):
               target ẏ = (y* − y)/h while short of it (the gap closes exactly in the step),
               erp/h (y* − y) once there

After each solve ``check_mode`` tests the mode against the result and changes it (the step is then
redone, at most a few times): OPEN → LOCKED(0) when the gear would close; LOADING → LOCKED(y) when
ẏ < 0 (→ UNLOADING without hysteresis), → LOCKED(travel) beyond the travel; UNLOADING → LOCKED(y)
when ẏ > 0, → OPEN when y < 0; LOCKED → LOADING when G > L(y*), → UNLOADING (OPEN at y* = 0) when
G < U(y*). The locked and open modes are exact; the deflecting ones are a force element of
symplectic Euler (force at the step's start, positions from the new velocities), which keeps the
gear's elastic energy without numerical damping and is stable for ``h ω_max < 2``, ω_max² ≤
max over cars of 2 Σ k_l / m (the chain's highest mode, 2√(k/m) for equal cars): ``World`` refuses
a larger step (``settings.TrainConfig.step_error``).

Parameters: LA, LB, LENGTH, HALF, PRELOAD, K_LOAD, K_UNLOAD, TRAVEL; state MODE, SIDE, LOCK, X0 and
XD0 (x and ẋ at the step's start) and FORCE (the explicit impulse of the step, N·s), written by
``prepare``, ``railway.stage_rail``, ``impulse`` and ``check_mode``.
"""
from __future__ import annotations

from trackrider.jit import njit
from trackrider.physics.joints.common import param_columns, set_row
from trackrider.physics.joints.distance import bar

(LENGTH, HALF, PRELOAD, K_LOAD, K_UNLOAD, TRAVEL, MODE, SIDE, LOCK, X0, XD0, FORCE,
 END) = param_columns(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
OPEN, LOADING, UNLOADING, LOCKED = 0.0, 1.0, 2.0, 3.0


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def rate(j, joints, bodies):
    """ẋ = J u of joint ``j``'s bar now (m/s, + drawing apart)."""
    _, n, c, d = bar(j, joints, bodies)
    a, b = joints.a[j], joints.b[j]
    v, w = bodies.vel, bodies.omg
    s = 0.0
    for i in range(3):
        s += n[i] * (v[b, i] - v[a, i]) + d[i] * w[b, i] - c[i] * w[a, i]
    return s


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare(j, joints, bodies, h, erp_h, rows):
    """Row, target and softness of draft gear ``j`` in its mode (the module docstring)."""
    jf = joints.param
    ln, n, c, d = bar(j, joints, bodies)
    rows.m[j] = 1
    x = ln - jf[j, LENGTH]
    jf[j, X0] = x
    if jf[j, MODE] != LOCKED:
        set_row(rows.J, j, 0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        rows.gamma[j] = 1.0
        rows.target[j, 0] = 0.0
        return
    set_row(rows.J, j, 0, (-n[0], -n[1], -n[2]), (-c[0], -c[1], -c[2]), n, d)
    gap = jf[j, LOCK] - (jf[j, SIDE] * x - jf[j, HALF])
    rows.target[j, 0] = jf[j, SIDE] * (gap / h if gap > 0.0 else erp_h * gap)


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def impulse(j, joints, bodies, h):
    """The explicit impulse of draft gear ``j`` this step (N·s along its row: −σ h G(y) while it
    deflects, 0 open or locked), kept in ``FORCE``; the deflection from the bar now (positions do
    not move within a step)."""
    jf = joints.param
    mode = jf[j, MODE]
    lam = 0.0
    if mode == LOADING or mode == UNLOADING:
        ln, n, c, d = bar(j, joints, bodies)
        side = jf[j, SIDE]
        y = max(side * (ln - jf[j, LENGTH]) - jf[j, HALF], 0.0)
        g = loading(jf, j, y) if mode == LOADING else unloading(jf, j, y)
        lam = -side * h * g
    jf[j, FORCE] = lam
    return lam


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def loading(jf, j, y):
    """L(y), N."""
    return jf[j, PRELOAD] + jf[j, K_LOAD] * y


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def unloading(jf, j, y):
    """U(y), N."""
    return jf[j, K_UNLOAD] * y


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def lock(jf, j, side, y):
    """Lock draft gear ``j`` at deflection ``y`` on ``side``."""
    jf[j, MODE] = LOCKED
    jf[j, SIDE] = side
    jf[j, LOCK] = y


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def check_mode(j, joints, bodies, h):
    """Draft gear ``j``'s mode against the solve just done (the module docstring); True if changed."""
    jf = joints.param
    mode, side, e = jf[j, MODE], jf[j, SIDE], jf[j, HALF]
    x = jf[j, X0]
    xd = rate(j, joints, bodies)
    x1 = x + h * xd
    if mode == OPEN:
        if x1 - e > 0.0:
            lock(jf, j, 1.0, 0.0)
            return True
        if -x1 - e > 0.0:
            lock(jf, j, -1.0, 0.0)
            return True
        return False
    y = side * x - e
    y1 = side * x1 - e
    yd = side * xd
    travel = jf[j, TRAVEL]
    if mode == LOADING:
        if y1 > travel:
            lock(jf, j, side, travel)
            return True
        if yd < 0.0:
            y = max(y, 0.0)
            if unloading(jf, j, y) >= loading(jf, j, y):   # no hysteresis: the same spring back
                jf[j, MODE] = UNLOADING
            else:
                lock(jf, j, side, y)
            return True
        return False
    if mode == UNLOADING:
        if y1 < 0.0:
            jf[j, MODE] = OPEN
            return True
        if yd > 0.0:
            y = max(y, 0.0)
            if unloading(jf, j, y) >= loading(jf, j, y):
                jf[j, MODE] = LOADING
            else:
                lock(jf, j, side, y)
            return True
        return False
    ys = jf[j, LOCK]
    g = -side * (joints.lam[j, 0] + jf[j, FORCE]) / h
    if ys < travel and g > loading(jf, j, ys):
        jf[j, MODE] = LOADING
        return True
    if g < unloading(jf, j, ys):
        jf[j, MODE] = UNLOADING if ys > 0.0 else OPEN
        return True
    return False
