"""Couplings, trains and joints against closed forms (docs/physics.md §3, §6)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from tests.physics.analytic import run
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch
from trackrider.physics import joints as jk
from trackrider.physics import kernels as kn
from trackrider.physics.joints import common as jc
from trackrider.physics.world import _rot

G = 9.81
M = 600.0


def car(**kw):
    spec = dict(mass=M, length=2.0, width=1.2, height=1.0, cg_height=0.3, rider_height=1.1)
    spec.update(kw)
    return CarSpec(**spec)


def _pulley_world(ma, mb, ratio, slack=False, va=0.0):
    w = World(dt=1e-3)
    a = w.add_body("a", ma, size=(0.2, 0.2, 0.2), position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, va))
    b = w.add_body("b", mb, size=(0.2, 0.2, 0.2), position=(3.0, 0.0, 0.0))
    w.add_joint("pulley", ("body", a), ("body", b), ground_a=(0.0, 0.0, 10.0), ground_b=(3.0, 0.0, 10.0),
                ratio=ratio, slack=slack)
    return w


@pytest.mark.parametrize("ratio", [1.0, 2.0, 0.5])
def test_pulley_with_ratio_balances_at_mb_equal_r_ma(ratio):
    ma = 10.0
    w = _pulley_world(ma, ratio * ma, ratio)
    t, r, st = run(w, 2000, 100)
    assert np.all(np.abs(r[:, :, ch.VZ]) < 1e-9)
    assert np.all(np.abs(r[:, :, ch.Z]) < 1e-9)


@pytest.mark.parametrize("ratio, ma, mb", [(1.0, 10.0, 14.0), (2.0, 10.0, 12.0), (0.5, 10.0, 8.0)])
def test_pulley_atwood_accelerations_with_a_ratio(ratio, ma, mb):
    # l_a + r l_b = const  →  ż_a = −r ż_b,  z̈_b = g (r m_a − m_b)/(m_a r² + m_b)
    w = _pulley_world(ma, mb, ratio)
    t, r, st = run(w, 1000, 10)
    ab = G * (ratio * ma - mb) / (ma * ratio**2 + mb)
    vb = r[:, 1, ch.VZ]
    va = r[:, 0, ch.VZ]
    np.testing.assert_allclose(vb, ab * t, rtol=0.01)
    np.testing.assert_allclose(va, -ratio * ab * t, rtol=0.01)


def test_rope_pulley_goes_slack_instead_of_pushing():
    # a (10 kg) thrown upwards at 3 m/s, b (10 kg) at rest: a rope slackens and b falls
    # freely; a rigid link would push b down at once (momentum shared: 1.5 m/s each)
    for slack in (True, False):
        w = _pulley_world(10.0, 10.0, 1.0, slack=slack, va=3.0)
        t, r, st = run(w, 200, 1)
        if slack:
            np.testing.assert_allclose(r[:, 1, ch.VZ], -G * t, rtol=1e-9)
            np.testing.assert_allclose(r[:, 0, ch.VZ], 3.0 - G * t, rtol=1e-9)
            assert w.jlam[0, 0] == 0.0
        else:
            np.testing.assert_allclose(r[:, 1, ch.VZ], -1.5, rtol=1e-6)
            np.testing.assert_allclose(r[:, 0, ch.VZ], 1.5, rtol=1e-6)


def _coupler_forces(w, ntrain_couplers):
    return w.jlam[:ntrain_couplers, 0] / w.dt


@pytest.mark.parametrize("ctype", ["distance", "ball"])
def test_train_held_by_its_lead_car_on_a_grade_has_exact_coupler_forces(ctype):
    n, alpha = 7, np.radians(8.0)
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0, pitch_deg=8.0))
    w.add_train("a", 0, n, car(), coupling=CouplingSpec(ctype, 0.5), start_s=100.0)
    # a stop brake under the lead car only
    w.add_section("brake", 0, 99.0, 101.0, speed=0.0, max_force=1e6)
    t, r, st = run(w, 200, 10)
    F = np.abs(_coupler_forces(w, n - 1))
    expected = M * G * np.sin(alpha) * np.arange(n - 1, 0, -1)
    np.testing.assert_allclose(F, expected, rtol=1e-6)
    assert r[-1, 0, ch.MOTOR_FORCE] == pytest.approx(n * M * G * np.sin(alpha), rel=1e-6)
    assert np.all(np.abs(r[-1, :, ch.SPEED]) < 1e-6)


def test_soft_coupler_stretches_by_force_over_stiffness():
    k, alpha = 2e5, np.radians(10.0)
    w = World(dt=1e-3)
    w.add_track(analytic.straight(200.0, pitch_deg=10.0))
    w.add_train("a", 0, 2, car(cg_height=0.0), coupling=CouplingSpec("distance", 0.5, stiffness=k, damping=5e3),
                start_s=100.0)
    w.add_section("brake", 0, 99.0, 101.0, speed=0.0, max_force=1e6)
    t, r, st = run(w, 4000, 100)
    gap = (r[-1, 0, ch.S] - 1.0) - (r[-1, 1, ch.S] + 1.0)
    assert gap - 0.5 == pytest.approx(M * G * np.sin(alpha) / k, rel=0.01)


def test_slack_coupler_allows_its_play_and_no_more():
    w = World(dt=1e-3)
    w.add_track(analytic.straight(300.0))
    w.add_train("a", 0, 3, car(cg_height=0.0), coupling=CouplingSpec("distance", 0.5, slack=0.1), start_s=100.0)
    w.add_section("launch", 0, 99.0, 130.0, speed=5.0, max_force=6000.0)  # lead car only at first
    t, r, st = run(w, 3000, 10)
    gaps = (r[:, :-1, ch.S] - 1.0) - (r[:, 1:, ch.S] + 1.0)
    assert np.all(gaps <= 0.55 + 2e-3) and np.all(gaps >= 0.45 - 2e-3)
    assert gaps[20:].max() > 0.54  # pulled taut


@pytest.mark.parametrize("gap", [0.0, 0.4])
def test_a_ball_coupler_with_slack_in_a_curve_is_drawn_out_by_half_its_play_along_the_cars_mean_axis(gap):
    """A ball coupler with free play (``slack`` s) keeps the ball's two halves, each at its car's
    end ``gap``/2 into the gap, within ±s/2 of each other along the cars' mean axis
    n = (x̂_a + x̂_b)/|x̂_a + x̂_b| (docs/physics.md "Rows"): the ball coupler's row with a range.
    Two cars 4 m long on a level circle R = 10 m, the coupler started drawn out
    (``slack_start = "stretched"``), the front car pulled forward by a launch section (F = 2 kN) and
    the rear one held by a brake: at rest, (p_a − p_b)·n = s/2 (1e-6 m; p the halves' points, from
    the recorded poses) from the start to the end, and the coupler's pull λ balances F in the front
    car's one free motion along the curve, in which its half of the ball, ℓ = length/2 + gap/2
    behind its anchor, moves as T − (ℓ/R) N: λ (cos(θ/2) + (ℓ/R) sin(θ/2)) = F, θ = Δs/R the angle
    between the cars' tangents (1e-8 relative; measured 4e-10)."""
    R, Lc, s_play, F = 10.0, 4.0, 0.2, 2000.0
    w = World(dt=1e-3)
    w.set_resistance(rolling=0.0, drag_area=0.0)
    k = w.add_track(analytic.flat_circle(R=R, n=2001))
    w.add_train("a", k, 2, car(length=Lc), coupling=CouplingSpec("ball", gap, slack=s_play, slack_start="stretched"),
                start_s=30.0)
    w.add_section("launch", k, 29.0, 40.0, speed=50.0, max_force=F)
    w.add_section("brake", k, 15.0, 28.0, speed=0.0, max_force=1e7)
    t, r, st = run(w, 2000, 100)
    assert st.ok
    for smp in (r[0], r[-1]):
        Ra, Rb = (_rot(smp[e, ch.QW:ch.QZ + 1]) for e in (0, 1))
        pa = smp[0, ch.X:ch.Z + 1] + Ra @ np.array([-Lc / 2.0 - gap / 2.0, 0.0, -0.3])
        pb = smp[1, ch.X:ch.Z + 1] + Rb @ np.array([Lc / 2.0 + gap / 2.0, 0.0, -0.3])
        n = Ra[:, 0] + Rb[:, 0]
        n /= np.linalg.norm(n)
        assert abs((pa - pb) @ n - s_play / 2.0) < 1e-6
    assert np.all(np.abs(r[-1, :, ch.SPEED]) < 1e-6)
    theta, ell = (r[-1, 0, ch.S] - r[-1, 1, ch.S]) / R, Lc / 2.0 + gap / 2.0
    pull = -w.records.joints.lam[0, 0] / w.dt
    assert pull == pytest.approx(F / (np.cos(theta / 2.0) + ell / R * np.sin(theta / 2.0)), rel=1e-8)


def test_seven_car_train_coasting_60_s_round_a_hilly_circuit_keeps_its_energy():
    w = World(dt=1e-3)
    w.add_track(analytic.hilly_circle(R=40.0, amp=2.0, waves=3))
    w.add_train("a", 0, 7, car(), coupling=CouplingSpec("distance", 0.5), start_s=20.0, start_speed=10.0)
    t, r, st = run(w, 60000, 100)
    assert st.ok
    E = (r[:, :, ch.KINETIC_ENERGY] + r[:, :, ch.POTENTIAL_ENERGY]).sum(axis=1)
    KE = r[:, :, ch.KINETIC_ENERGY].sum(axis=1)
    assert abs(E[-1] - E[0]) / KE[0] < 1e-3
    assert np.ptp(E) / KE[0] < 1e-3
    assert r[-1, 0, ch.S] != r[0, 0, ch.S]  # it went round (several laps)


def test_thousand_car_train_runs_60_s_on_a_grade_without_diverging():
    n, alpha = 1000, np.radians(2.0)
    w = World(dt=5e-3)
    L = n * 2.5 + 1000.0
    w.add_track(analytic.straight(L, pitch_deg=-2.0, n=int(L) + 1))
    w.add_train("a", 0, n, car(), coupling=CouplingSpec("distance", 0.5), start_s=n * 2.5 + 10.0, start_speed=2.0)
    t, r, st = run(w, 12000, 1000)
    assert st.ok
    a = G * np.sin(alpha)
    np.testing.assert_allclose(r[:, :, ch.SPEED], np.broadcast_to(2.0 + a * t[:, None], (len(t), n)), rtol=1e-6)
    # coasting freely downhill: the couplers carry (almost) no force
    assert np.max(np.abs(w.jlam[: n - 1, 0])) / w.dt < 1e-3 * M * G


def test_distance_joint_between_a_car_and_the_world_holds_it_on_a_grade():
    # a car on a 5° downhill propped by a rigid strut to a world point 10 m further down:
    # it stays put, the strut in compression (λ > 0 pushes the ends apart) with m g sin α
    w = World(dt=1e-3)
    w.add_track(analytic.straight(100.0, pitch_deg=-5.0))
    w.add_train("a", 0, 1, car(), start_s=50.0)
    w.add_joint("distance", ("car", 0, 0), "world", anchor_b=(60.0 * np.cos(np.radians(5)), 0.0,
                                                              -60.0 * np.sin(np.radians(5))))
    t, r, st = run(w, 2000, 100)
    assert np.all(np.abs(r[:, 0, ch.SPEED]) < 1e-6)
    assert w.jlam[0, 0] / w.dt == pytest.approx(M * G * np.sin(np.radians(5.0)), rel=1e-4)


@pytest.mark.parametrize("ctype", ["distance", "ball"])
def test_chain_solve_equals_a_direct_solve_of_the_whole_step_on_a_hilly_curve(ctype):
    from tests.physics.reference import exact_coupler_impulses, one_step_rows

    w = World(dt=1e-3)
    w.add_track(analytic.hilly_circle(R=60.0, amp=3.0, waves=4, n=6001))
    w.add_train("a", 0, 60, car(), coupling=CouplingSpec(ctype, 0.5), start_s=160.0, start_speed=12.0)
    w.run(300, 300)
    rows = one_step_rows(w)
    lam_exact, lamT_exact = exact_coupler_impulses(rows)
    assert np.max(np.abs(lam_exact)) * 1e3 > 1.0  # the couplers do carry force (> 1 N)
    np.testing.assert_allclose(rows["lam_c"], lam_exact, rtol=0, atol=1e-8 * np.max(np.abs(lam_exact)))
    np.testing.assert_allclose(rows["lamT"], lamT_exact, rtol=0, atol=1e-8 * np.max(np.abs(lamT_exact)))


@pytest.mark.parametrize("coupling, extra, flag", [
    (CouplingSpec("distance", 0.5), None, False),
    (CouplingSpec("ball", 0.5), None, False),
    (CouplingSpec("distance", 0.5, stiffness=1e6, damping=1e3), None, False),
    (CouplingSpec("distance", 0.5, slack=0.1), None, True),    # slack couplers are solved by PGS
    (CouplingSpec("distance", 0.5), "hinge", True),            # a joint of the user's
])
def test_free_joints_flag_is_false_only_for_chained_couplers(coupling, extra, flag):
    """run_chunk skips the other joints' code only when no joint needs it."""
    w = World()
    w.add_track(analytic.straight(200.0))
    w.add_train("a", 0, 3, car(), coupling=coupling, start_s=100.0)
    if extra:
        b = w.add_body("door", 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 5.0, 0.0))
        w.add_joint(extra, "world", ("body", b), anchor_a=(0.0, 5.0, 1.0), anchor_b=(0.0, 0.0, 1.0),
                    axis=(1.0, 0.0, 0.0))
    w.run(1, 1)
    assert kn.free_joints_flag(w.joint_state) is flag


def test_one_compiled_kernel_serves_every_world():
    """run_chunk's optional parts (joints of the user's, the cars' bounded rows, trains that meet)
    are switched by data, not by type: every world runs the one compiled kernel (compiled or
    shipped once, docs/cli.md), a railway world's too."""
    worlds = []
    for extra in (None, "hinge", "section", "trains", "railway"):
        w = World()
        w.add_track(analytic.straight(200.0))
        w.add_train("a", 0, 3, car(), coupling=CouplingSpec("distance", 0.5), start_s=100.0)
        if extra == "hinge":
            b = w.add_body("door", 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 5.0, 0.0))
            w.add_joint("hinge", "world", ("body", b), anchor_a=(0.0, 5.0, 1.0), anchor_b=(0.0, 0.0, 1.0),
                        axis=(1.0, 0.0, 0.0))
        elif extra == "section":
            w.add_section("booster", 0, 90.0, 110.0, speed=5.0, max_force=1e4)
        elif extra == "trains":
            w.add_train("b", 0, 2, car(), start_s=150.0)
        elif extra == "railway":   # a draft gear, a locomotive, air brakes and a driver (docs/physics.md §10)
            from trackrider.settings import DriverStep, VehicleSpec

            w.add_train("r", 0, coupling=CouplingSpec("draft_gear", 1.0), wheels="railway", start_s=60.0,
                        vehicles=[VehicleSpec(mass=8e4, length=15.0, kind="locomotive", power=1e6,
                                              max_tractive_effort=2e5, brake_rigging=1e4),
                                  VehicleSpec(mass=5e4, length=15.0, brake_rigging=1e4)],
                        driver=[DriverStep(time=0.0, notch=8, brake=0.5)])
        w.run(2, 1)
        worlds.append(w)
    assert worlds[3].ops is not None and worlds[0].ops is None
    # (a world of state.PARALLEL_BODIES bodies or more has a variant of its own, its track rows on all threads)
    assert len([sig for sig in kn.run_chunk.overloads if str(sig[4].types[-1]) == "none"]) == 1


def test_a_long_worlds_plain_chains_are_made_in_blocks_of_the_couplers_inside_each_chunk_of_bodies(monkeypatch):
    """``couplings.split_chains``: in a world of ``state.PARALLEL_BODIES`` bodies or more, a train of rigid
    distance couplers has its couplers made in blocks (``chains.inner``), each chunk of bodies
    (``car_lanes.chunk_edge``) the run of those whose two cars are both in it (``chains.jr``); a train of
    ball couplers, and every train of a shorter world, is factored as before (docs/physics.md "Both
    cores")."""
    from trackrider.physics import state as st
    from trackrider.physics.car_lanes import chunk_edge

    monkeypatch.setattr(st, "MIN_THREADS", 1)
    monkeypatch.setattr(st, "threads", lambda: 3)
    car = CarSpec(600.0, 2.0, 1.2, 1.0, cg_height=0.3, rider_height=1.1)

    def built(n_plain, n_ball):
        w = World(dt=1e-3)
        for i, (n, coupling) in enumerate([(n_plain, CouplingSpec("distance", 0.5)),
                                           (n_ball, CouplingSpec("ball", 0.5))]):
            k = w.add_track(analytic.hilly_circle(R=500.0 + 20.0 * i, amp=3.0, waves=12, n=4001))
            w.add_train("t%d" % i, k, n, car, coupling=coupling, start_s=n * 2.5 + 200.0, start_speed=12.0)
        w._build()
        return w._temps.chains, w.joint_state, w.pos.shape[0]

    chains, joints, nb = built(400, 150)
    assert chains.jr.shape[1:] == (3, 2) and nb >= st.PARALLEL_BODIES
    j0, n = chains.first[0], chains.count[0]
    assert n == 399 and chains.inner[j0:j0 + n].all() and not chains.inner[chains.first[1]:].any()
    for c in range(3):
        b0, b1 = chunk_edge.py_func(c, nb, 3), chunk_edge.py_func(c + 1, nb, 3)
        inside = [j for j in range(j0, j0 + n) if b0 <= joints.a[j] < b1 and b0 <= joints.b[j] < b1]
        s, e = chains.jr[0, c]
        assert list(range(s, e)) == inside and chains.jr[1, c].tolist() == [0, 0]
    # between two blocks the one coupler across two chunks (made serially); the last block ends the chain
    assert [chains.jr[0, c + 1, 0] - chains.jr[0, c, 1] for c in range(2)] == [1, 1] and chains.jr[0, 2, 1] == j0 + n
    chains, _, nb = built(300, 150)
    assert nb < st.PARALLEL_BODIES and not chains.inner.any() and not chains.jr.any()
