"""Trains of cars on bogies solved exactly (``physics/car_blocks.py``, docs/physics.md "The car
blocks"): each car's swivel rows and the couplers as one block tridiagonal system along the train.
The kernel's impulses of one step are compared with a direct (sparse LU) solve of the same step's rows,
assembled independently (``reference.exact_joint_impulses``; with the cars' bounded rows,
``reference.exact_bounded_solve``)."""
from __future__ import annotations

import numpy as np

from tests.physics import analytic
from tests.physics.reference import exact_bounded_solve, exact_joint_impulses
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics.joints import CODES
from trackrider.physics.joints.common import JI_A, JI_B, JI_CHAIN, JI_KIND

#: largest impulse error relative to the largest impulse of its kind (the issue's bar: 1e-6)
TOL = 1e-6


def _car(**kw):
    args = dict(mass=3000.0, length=4.0, width=1.5, height=1.2, cg_height=0.5, bogies="two", bogie_spacing=2.5,
                bogie_mass=200.0, cg_forward=0.2)
    args.update(kw)
    return CarSpec(**args)


def _rows(w):
    """(couplers, swivels, bars) of a world with one train: joint indices (a Jacobs set: no couplers;
    bars: the chain's links between frames, never prepared nor solved)."""
    ji = w.ji
    swivels = [j for j in range(ji.shape[0]) if ji[j, JI_KIND] == CODES["swivel"]]
    couplers = [j for j in range(ji.shape[0]) if ji[j, JI_CHAIN] == 1]
    bars = [j for j in range(ji.shape[0]) if ji[j, JI_CHAIN] == 5]   # never prepared nor solved
    return couplers, swivels, bars


def _errors(kernel, exact, joints):
    k = np.concatenate([np.ravel(kernel[j]) for j in joints])
    e = np.concatenate([np.ravel(exact[j]) for j in joints])
    return float(np.max(np.abs(k - e)) / np.max(np.abs(e)))


def test_swivels_are_solved_in_the_car_blocks_not_by_sweeps():
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(200.0))
    w.add_train("b", track=k, car=_car(), cars=3, coupling=CouplingSpec(gap=0.5), start_s=100.0)
    w.run(1, 1)
    couplers, swivels, bars = _rows(w)
    assert len(couplers) == 2 and len(swivels) == 6 and len(bars) == 5
    assert np.all(w.ji[swivels, JI_CHAIN] == 3)
    # the couplers join the car bodies (entities 6, 7, 8 after the six frames), body k to body k + 1
    assert [tuple(w.ji[j, [JI_A, JI_B]]) for j in couplers] == [(6, 7), (7, 8)]


def test_coupler_and_swivel_impulses_on_a_hilly_curve_equal_a_direct_solve():
    """Four cars on bogies coasting round a hilly circle (R 60 m, ±1.5 m hills: curves, grades and
    their changes at once), 0.5 s in: every coupler and swivel impulse of the step within 1e-6 of
    the largest against a direct solve of all the step's equality rows (frames' track rows, swivels,
    couplers), and the bar inside each car carries nothing (its body keeps the pivots apart)."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=60.0, amp=1.5, waves=3, n=6001))
    w.add_train("b", track=k, car=_car(), cars=4, coupling=CouplingSpec(gap=0.5), start_s=40.0, start_speed=12.0)
    w.run(500, 500)
    couplers, swivels, bars = _rows(w)
    kernel, exact = exact_joint_impulses(w, couplers + swivels)
    assert max(abs(exact[j][0]) for j in couplers) > 10.0 * w.dt   # the couplers carry load (> 10 N)
    assert _errors(kernel, exact, couplers) < TOL
    assert _errors(kernel, exact, swivels) < TOL
    assert np.all(w.records.joints.lam[bars] == 0.0)


def test_a_jacobs_set_on_a_banked_curve_equals_a_direct_solve():
    """Three bodies on four shared frames on a banked circle (R 80 m, 8°) at 15 m/s: the swivels'
    impulses within 1e-6 of the largest against the direct solve."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=80.0, n=4001, bank_deg=8.0))
    w.add_train("j", track=k, car=_car(bogies="jacobs", length=3.0), cars=3, start_s=30.0, start_speed=15.0)
    w.run(300, 300)
    _, swivels, bars = _rows(w)
    kernel, exact = exact_joint_impulses(w, swivels)
    assert _errors(kernel, exact, swivels) < TOL
    assert np.all(w.records.joints.lam[bars] == 0.0)


def test_held_on_a_grade_the_brake_couplers_and_swivels_equal_an_exact_bounded_solve():
    """Three cars on bogies held at the front by a stop brake on a 2° grade, 1 s in (the brake rows
    bounded, solved with the train's one free motion, ``car_blocks.block_train_mode``): the brake
    rows, couplers and swivels of one step within 1e-6 of an independent exact solve of the same
    step (sparse elimination of the equality rows, bounded-variable least squares), and the
    couplers carry the weight component of the cars behind them, (n − k) m g sin θ (1e-6)."""
    n, m, th = 3, 3000.0, np.radians(2.0)
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(300.0, pitch_deg=2.0))
    w.add_train("g", track=k, car=_car(), cars=n, coupling=CouplingSpec(gap=0.5), start_s=250.0)
    w.add_section(kind="brake", track=k, s_from=248.0, s_to=255.0, speed=0.0, max_force=1e7)   # the lead car
    w.run(1000, 1000)
    couplers, swivels, bars = _rows(w)
    kernel, exact = exact_bounded_solve(w, joint_list=couplers + swivels)
    ke, ee = kernel["coupler"], exact["coupler"]
    nc = 0
    for j in couplers:
        assert abs(ke[nc] - ee[nc]) < TOL * np.max(np.abs(ee[:len(couplers)]))
        nc += 1
    assert np.max(np.abs(ke[nc:] - ee[nc:])) < TOL * np.max(np.abs(ee[nc:]))
    assert np.max(np.abs(kernel["section"] - exact["section"])) < TOL * np.max(np.abs(exact["section"]))
    f = np.abs(w.records.joints.lam[couplers, 0]) / w.dt
    np.testing.assert_allclose(f, [(n - c) * m * 9.81 * np.sin(th) for c in range(1, n)], rtol=1e-6)
    assert np.all(w.records.joints.lam[bars] == 0.0)
