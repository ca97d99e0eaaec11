"""The couplers of cars on two bogies join the car bodies at their ends (docs/physics.md "Bogies"):
in a curve the coupler bar's angle to each body, and the lateral force it puts on the body under a
buff (compressive) load, are the body-mounted ones, checked against the geometry in closed form."""
from __future__ import annotations

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch
from trackrider.physics.joints import CODES
from trackrider.physics.joints import draft_gear as dg
from trackrider.physics.joints.common import JI_A, JI_B, JI_CHAIN, JI_KIND
from trackrider.physics.world import _rot

R, L, LENGTH, GAP, CG = 150.0, 18.0, 24.0, 1.0, 1.5


def _wagon(**kw):
    args = dict(mass=40000.0, length=LENGTH, width=3.0, height=3.0, cg_height=CG, bogies="two", bogie_spacing=L,
                bogie_mass=4000.0)
    args.update(kw)
    return CarSpec(**args)


def _bar_angle(gap):
    """The angle between the coupler bar and each of two equal bodies on a level circle of radius R,
    the bar ``gap`` long between their ends. Each body is the chord between its pivots (L apart), its
    middle d = √(R² − L²/4) from the centre and its ends ℓ/2 = LENGTH/2 from the middle along it. By
    symmetry the bar is perpendicular to the bisector of the two bodies' middles; with ψ each middle's
    angle from the bisector, a body's end lies d sin ψ − (ℓ/2) cos ψ from the bisector, so
    2 (d sin ψ − (ℓ/2) cos ψ) = gap: ψ = atan(ℓ/2d) + asin(gap / 2√(d² + ℓ²/4)), and the bar (along the
    bisector's normal) makes ψ with each body's axis (its tangent there is turned by ψ)."""
    d = np.sqrt(R * R - L * L / 4.0)
    return np.arctan(LENGTH / (2.0 * d)) + np.arcsin(gap / (2.0 * np.hypot(d, LENGTH / 2.0)))


def _buffed(coupling, cg_forward=0.0):
    """Two wagons at rest on a level circle R = 150 m, the front one held by a stop brake, the rear one
    pushed forward by a launch section (40 kN per frame): the coupler between them in buff. Returns
    the world and its samples after 3 s."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.set_resistance(rolling=0.0, drag_area=0.0)
    w.add_train("b", track=k, car=_wagon(cg_forward=cg_forward), cars=2, coupling=coupling, start_s=100.0,
                wheels="railway")
    w.add_section(kind="brake", track=k, s_from=88.0, s_to=115.0, speed=0.0, max_force=1e7)
    w.add_section(kind="launch", track=k, s_from=55.0, s_to=87.0, speed=50.0, max_force=4e4)
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    return w, s


def _coupler(w):
    (j,) = [j for j in range(w.ji.shape[0]) if w.ji[j, JI_CHAIN] == 1]
    return j


@pytest.mark.parametrize("coupling,e", [(CouplingSpec(gap=GAP), 0.0), (CouplingSpec(gap=GAP), 1.2),
                                        (CouplingSpec(type="draft_gear", gap=GAP, slack=0.025), 0.0)])
def test_a_coupler_in_buff_in_a_curve_joins_the_body_ends_and_pushes_them_sideways(coupling, e):
    """The coupler joins the two bodies (not their frames) at their ends, (∓ℓ/2 − e, 0, −cg) in body
    axes: the kernel's bar runs between the bodies' ends (its direction within 1e-5 of theirs, a rigid
    bar ``gap`` long to 1e-5 m), makes the closed-form angle ψ (``_bar_angle``: 4.77°) with each
    body's axis (1e-8 rad; measured 2e-12), and under buff pushes each body sideways by F sin ψ
    (1e-6 relative), which that body's swivels hold (their forces along the body's left axis, 1e-6
    relative; measured 1e-8): the body-mounted coupler angle and lateral force a railway engineer
    reads against L/V. A coupler between the frames (anchored (length − L)/2 along each frame's
    tangent, here 0.18 m off the body ends) would put that push on the frames, none on the body."""
    w, s = _buffed(coupling, e)
    j = _coupler(w)
    bodies = (4, 5)
    assert (w.ji[j, JI_A], w.ji[j, JI_B]) == bodies
    h = w.dt
    lam = w.records.joints.lam
    J = w._temps.rows.J
    # the coupler's force: its row's impulse and a draft gear's explicit one (railway.coupler_impulse)
    force = (lam[j, 0] + (w.jf[j, dg.FORCE] if w.ji[j, JI_KIND] == CODES["draft_gear"] else 0.0)) / h
    assert force > 10e3          # buff: the impulse pushes the bodies apart (λ > 0), over 10 kN
    # the body ends from the recorded positions and orientations
    ends = []
    for body, x in zip(bodies, (-LENGTH / 2.0 - e, LENGTH / 2.0 - e)):
        Rb = _rot(s[-1, body, ch.QW:ch.QZ + 1])
        ends.append((s[-1, body, ch.X:ch.Z + 1] + Rb @ np.array([x, 0.0, -CG]), Rb))
    (pa, Ra), (pb, Rb) = ends
    bar = np.linalg.norm(pb - pa)
    if coupling.type != "draft_gear":     # a rigid bar (a draft gear: its free play taken up in buff)
        assert abs(bar - GAP) < 1e-5
    psi = _bar_angle(bar)
    n = (pb - pa) / np.linalg.norm(pb - pa)             # from the front body's rear end to the rear body's front
    np.testing.assert_allclose(J[j, 0, 6:9], n, atol=1e-5)   # the kernel's bar: J = [−n, …, n, …]
    for Rk in (Ra, Rb):
        assert abs(np.arccos(abs(n @ Rk[:, 0])) - psi) < 1e-8
    # each body's swivels hold the coupler's push across it: Σ swivel forces · y_body = −(coupler force · y_body)
    for body, Rk, sign in ((bodies[0], Ra, -1.0), (bodies[1], Rb, 1.0)):
        push = sign * force * n                          # the coupler's force on this body (λ n on b, −λ n on a)
        lateral = push @ Rk[:, 1]
        assert abs(abs(lateral) - force * np.sin(psi)) < 1e-6 * force * np.sin(psi)
        held = np.zeros(3)
        for q in range(w.ji.shape[0]):
            if w.ji[q, JI_KIND] == CODES["swivel"] and w.ji[q, JI_B] == body:
                held += J[q, :, 6:9].T @ lam[q] / h
        assert abs(held @ Rk[:, 1] + lateral) < 1e-6 * abs(lateral)


@pytest.mark.parametrize("coupling", [CouplingSpec(gap=GAP), CouplingSpec(type="ball", gap=GAP),
                                      CouplingSpec(type="draft_gear", gap=GAP, slack=0.025, slack_start="bunched")])
def test_cars_on_bogies_start_with_their_couplers_at_rest_between_the_body_ends(coupling):
    """Three wagons placed on a level circle R = 150 m: each next car's frames are placed so that the
    bodies' ends (the chords between their pivots, extended ℓ/2 from the middle) are the coupler's
    length apart (a bar: ``gap``, a draft gear bunched: ``gap − free_play/2``; a ball: its two halves
    ``gap``/2 each meet along the bodies' mean axis), within 1e-9 m: no start transient."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("b", track=k, car=_wagon(cg_forward=0.7), cars=3, coupling=coupling, start_s=100.0,
                wheels="railway")
    assert w.n_entities == 9      # builds the world
    for front, back in ((6, 7), (7, 8)):
        Ra, Rb = _rot(w.quat[front]), _rot(w.quat[back])
        pa = w.pos[front] + Ra @ np.array([-LENGTH / 2.0 - 0.7, 0.0, -CG])
        pb = w.pos[back] + Rb @ np.array([LENGTH / 2.0 - 0.7, 0.0, -CG])
        if coupling.type == "ball":
            n = (Ra[:, 0] + Rb[:, 0]) / np.linalg.norm(Ra[:, 0] + Rb[:, 0])
            assert abs((pa - 0.5 * GAP * Ra[:, 0] - pb - 0.5 * GAP * Rb[:, 0]) @ n) < 1e-9
        else:
            assert abs(np.linalg.norm(pa - pb) - (GAP + coupling.start_offset())) < 1e-9


def test_a_draft_gear_between_bodies_dissipates_what_the_impact_loses():
    """Two wagons on bogies on a level straight, no resistance, the rear one (its frames and body) at
    2 m/s into the front one at rest through a friction draft gear between their bodies, until the
    buff is over (the gear back in its free play): the summary's draft-gear energy is the kinetic energy lost (1e-6 relative; the gear's joint
    is found by its train from the car ahead, not from its ends, which are bodies), and momentum is
    kept (1e-9)."""
    from trackrider.settings import VehicleSpec
    from trackrider.sim import run_world

    v0 = 2.0
    w = World(dt=5e-4)
    k = w.add_track(analytic.straight(200.0), gauge=1.435)
    w.set_resistance(rolling=0.0, drag_area=0.0)
    wagon = VehicleSpec(mass=60000.0, length=15.0, width=3.0, height=3.5, cg_height=1.5, bogies="two",
                        bogie_spacing=10.0, bogie_mass=4800.0, count=2)
    w.add_train("t", track=k, vehicles=[wagon], wheels="railway", start_s=100.0,
                coupling=CouplingSpec(type="draft_gear", gap=1.0, slack=0.05, stiffness=2e7, unloading_stiffness=5e6,
                                      preload=5e4, travel=1.0))
    assert w.n_entities == 6
    for e in (2, 3, 5):                      # the rear wagon: its frames and its body
        w.vel[e] = (v0, 0.0, 0.0)
    r = run_world(w, 0.2, 2000)
    cf = r.timeseries["coupler_force"].reshape(-1, 6)[:, 1]
    assert np.min(cf) < -1e5 and cf[-1] == 0.0        # the buff is over: the gear back in its free play
    ke = r.timeseries["kinetic_energy"].reshape(-1, 6).sum(axis=1)
    e0 = 0.5 * 60000.0 * v0 ** 2
    lost = e0 - ke[-1]
    assert lost > 0.1 * e0
    assert r.summary["railway"]["t"]["energy"]["draft_gear"] == pytest.approx(lost, rel=1e-6)
    v = r.timeseries["speed"].reshape(-1, 6)[-1, :4]      # the frames' (a body moves with its frames here)
    assert v[0] == v[1] and v[2] == v[3] and v[0] > v[2]
    assert 60000.0 * (v[0] + v[2]) == pytest.approx(60000.0 * v0, rel=1e-9)
