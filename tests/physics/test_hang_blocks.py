"""Suspended cars solved exactly (``physics/hang_blocks.py``, docs/physics.md "Suspended cars"): each
hanging body's hinge (and damper) rows folded into its trolley, the train's couplers solved with it.
The kernel's impulses of one step are compared with a direct (sparse LU) solve of the same step's
rows assembled independently (``reference.exact_joint_impulses``; with a brake's bounded rows,
``reference.exact_bounded_solve``), and the swing with the physical pendulum's period."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.reference import exact_bounded_solve, exact_joint_impulses, hang_joints
from trackrider.physics import CarSpec, World
from trackrider.physics import channels as ch
from trackrider.physics.joints.common import JI_CHAIN
from trackrider.physics.world import _rot

#: largest impulse error relative to the largest impulse of its kind (the issue's bar: 1e-6)
TOL = 1e-6
G = 9.81


def _car(**kw):
    args = dict(mass=500.0, length=2.0, width=1.4, height=1.6, rider_height=-1.3, suspended=True, hang=1.5,
                trolley_mass=80.0, swing_damping=4000.0)
    args.update(kw)
    return CarSpec(**args)


def _error(kernel, exact, joints):
    k = np.concatenate([np.ravel(kernel[j]) for j in joints])
    e = np.concatenate([np.ravel(exact[j]) for j in joints])
    return float(np.max(np.abs(k - e)) / np.max(np.abs(e)))


def test_hinges_are_solved_with_their_trolleys():
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(100.0))
    w.add_train("s", track=k, car=_car(), cars=3, start_s=50.0)
    w.run(1, 1)
    couplers, hinges, dampers = hang_joints(w)
    assert len(couplers) == 2 and len(hinges) == 3 and len(dampers) == 3
    assert np.all(w.ji[hinges + dampers, JI_CHAIN] == 4)


@pytest.mark.parametrize("damping", [4000.0, 0.0])
def test_hinge_and_coupler_impulses_on_a_hilly_curve_equal_a_direct_solve(damping):
    """Three suspended cars coasting round a hilly circle (R 40 m, ±2 m hills), 0.7 s in with the bodies
    swinging: every hinge, damper and coupler impulse of the step within 1e-6 of the largest of its
    kind against a direct solve of all the step's equality rows (trolleys' track rows, hinges,
    dampers, couplers). Without a damper a hang has the hinge's 5 rows."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, waves=3, n=4001))
    w.add_train("s", track=k, car=_car(swing_damping=damping), cars=3, start_s=30.0, start_speed=12.0)
    w.run(700, 700)
    couplers, hinges, dampers = hang_joints(w)
    assert len(dampers) == (3 if damping else 0)
    up = np.array([_rot(q)[:, 2] for q in w.records.bodies.quat[3:6]])
    assert np.degrees(np.arccos(up[:, 2])).max() > 5.0          # swinging
    kernel, exact = exact_joint_impulses(w, couplers + hinges + dampers)
    assert max(abs(exact[j][0]) for j in couplers) > 10.0 * w.dt   # the couplers carry load (> 10 N)
    assert _error(kernel, exact, couplers) < TOL
    assert _error(kernel, exact, hinges) < TOL
    if damping:
        assert _error(kernel, exact, dampers) < TOL


def test_a_brake_on_suspended_cars_equals_an_exact_bounded_solve():
    """Three suspended cars at 8 m/s entering a brake (2 kN per trolley, less than it takes to stop
    them in a step: the brake rows at their bound; 20 MN: the train stopped and held, the rows free): the brake, coupler,
    hinge and damper impulses within 1e-6 of an independent solve (sparse Schur complement onto the
    bounded rows and bounded-variable least squares), the hanging bodies' inertia in the train's
    motion."""
    for fmax in (2000.0, 2e7):
        w = World(dt=1e-3)
        k = w.add_track(analytic.straight(200.0))
        w.add_train("s", track=k, car=_car(), cars=3, start_s=60.0, start_speed=8.0)
        w.add_section("brake", k, 10.0, 150.0, max_force=fmax)
        w.run(50, 50)
        couplers, hinges, dampers = hang_joints(w)
        joints = couplers + hinges + dampers
        kernel, exact = exact_bounded_solve(w, joint_list=joints)
        scale = np.max(np.abs(exact["section"]))
        assert scale > 0.0
        assert np.max(np.abs(kernel["section"] - exact["section"])) / scale < TOL
        assert np.max(np.abs(kernel["coupler"] - exact["coupler"])) / np.max(np.abs(exact["coupler"])) < TOL


def test_a_body_swings_with_the_physical_pendulums_period():
    """A suspended car at rest on a level straight, its body given a small swing (0.02 rad/s): the
    trolley is held by its track, so the body is a physical pendulum about the hinge, period
    2π √((I_xx + m d²)/(m g d)) — within 1e-3 over three swings — and the trolley's track rows hold
    it in place (it does not move sideways) against the swing's lateral force, amplitude m d Ω ω₀
    (Ω = 2π/period) within 1 %."""
    m, d, W, H = 500.0, 1.5, 1.4, 1.6
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(100.0))
    w.add_train("s", track=k, car=_car(swing_damping=0.0), cars=1, start_s=50.0)
    w.run(1, 1)
    b = int(w.records.cars.hang[0])
    bodies = w.records.bodies
    w0 = 0.02
    bodies.omg[b] = (w0, 0.0, 0.0)                     # about T (+x), the hinge's axis
    bodies.vel[b] = np.cross(bodies.omg[b], bodies.pos[b] - bodies.pos[0])
    t, s, st = analytic.run(w, 12000, 1)
    assert st.ok
    ups = np.array([_rot(q)[:, 2] for q in s[:, 1, ch.QW:ch.QZ + 1]])
    phi = np.arctan2(-ups[:, 1], ups[:, 2])             # the swing angle about +x
    up_cross = np.flatnonzero((phi[:-1] < 0.0) & (phi[1:] >= 0.0))
    tc = t[up_cross] - phi[up_cross] * (t[up_cross + 1] - t[up_cross]) / (phi[up_cross + 1] - phi[up_cross])
    period = np.diff(tc).mean()
    I_xx = m / 12.0 * (W * W + H * H)
    expect = 2.0 * np.pi * np.sqrt((I_xx + m * d * d) / (m * G * d))
    assert len(tc) >= 4
    assert abs(period / expect - 1.0) < 1e-3
    assert np.max(np.abs(s[:, 0, ch.Y])) < 1e-6
    Om = 2.0 * np.pi / expect
    assert abs(np.max(np.abs(s[:, 0, ch.LATERAL_LOAD])) / (m * d * Om * w0) - 1.0) < 1e-2


def test_cars_that_ran_off_their_track_keep_their_hinges_exact():
    """Two suspended cars run off an open track's end and fall: their trolleys are free bodies, the
    hangs solved by K's Cholesky factor (no longer the trolley's one motion): hinge, damper and coupler
    impulses of a step in free fall within 1e-6 of a direct solve; the bodies still hang on their pivots."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(30.0))
    w.add_train("s", track=k, car=_car(), cars=2, start_s=26.0, start_speed=6.0)
    w.run(1200, 1200)
    cars = w.records.cars
    assert np.all(cars.ran_off[:2] == 1)
    couplers, hinges, dampers = hang_joints(w)
    # give the trolleys some spin so that the rows carry load in free fall
    w.records.bodies.omg[:2] += (0.3, -0.2, 0.5)
    kernel, exact = exact_joint_impulses(w, couplers + hinges + dampers)
    assert _error(kernel, exact, hinges + dampers + couplers) < TOL
    bodies = w.records.bodies
    for c in range(2):
        g = int(cars.hang[c])
        pivot = bodies.pos[g] + _rot(bodies.quat[g]) @ np.array([0.0, 0.0, 1.5])
        assert np.linalg.norm(pivot - bodies.pos[c]) < 1e-3
