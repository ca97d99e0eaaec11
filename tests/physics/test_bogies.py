"""Cars on bogies (docs/physics.md "Bogies"): a car body on two wheel frames, each on its own track
joint, joined by swivels. Checked against geometry and statics in closed form."""
from __future__ import annotations

import numpy as np
import pytest

from tests.scenario.conftest import write  # noqa: F401  (fixture)

from tests.physics import analytic
from trackrider.errors import InputError
from trackrider.physics import CarSpec, CouplingSpec, World
from trackrider.physics import channels as ch
from trackrider.physics.joints.common import JI_CHAIN
from trackrider.physics.world import _rot
from trackrider.settings import DriverStep, VehicleSpec
from trackrider.sim import run_world

G = 9.81


def _wagon(**kw):
    args = dict(mass=40000.0, length=24.0, width=3.0, height=3.0, cg_height=1.5, bogies="two", bogie_spacing=18.0,
                bogie_mass=4000.0)
    args.update(kw)
    return CarSpec(**args)


def test_lever_rule_splits_the_static_wheel_loads_between_the_frames():
    """Level straight, at rest: the front frame carries its own weight and (L/2 + e)/L of the body's,
    the rear frame (L/2 − e)/L (e = cg_forward = 1.5 m, L = 18 m): within 1 N of 392 kN. The body's
    centre lies e ahead of the pivots' middle and cg_height above it (1 mm)."""
    m, mb, L, e = 40000.0, 4000.0, 18.0, 1.5
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(100.0))
    w.add_train("b", track=k, car=_wagon(cg_forward=e), cars=1, start_s=50.0, wheels="railway")
    assert w.entity_labels == [("b", 1), ("b", 2), ("b.body", 1)]
    t, s, st = analytic.run(w, 2000, 100)
    assert st.ok
    body = (m - 2 * mb) * G
    front, rear = s[-1, 0, ch.WHEEL_LOAD], s[-1, 1, ch.WHEEL_LOAD]
    assert abs(front - (mb * G + body * (L / 2 + e) / L)) < 1.0
    assert abs(rear - (mb * G + body * (L / 2 - e) / L)) < 1.0
    mid = 0.5 * (s[-1, 0, ch.X:ch.Z + 1] + s[-1, 1, ch.X:ch.Z + 1])
    np.testing.assert_allclose(s[-1, 2, ch.X:ch.Z + 1], mid + [e, 0.0, 1.5], atol=1e-3)
    np.testing.assert_allclose(s[-1, 0, ch.S] - s[-1, 1, ch.S], L, atol=1e-6)


def test_body_on_a_circle_is_the_chord_between_its_pivots():
    """Level circle R = 150 m, pivots L = 18 m apart, running at 10 m/s: the body's forward axis
    makes asin(L/2R) with the tangent at each pivot (1e-4 rad), its centre (cg_forward 0, seen
    from above) lies R − √(R² − L²/4) inside the curve and its ends, e beyond the pivots, swing out
    to √(R² − L²/4 + (L/2 + e)²) (1 mm); each wheel frame reports its own loads."""
    R, L = 150.0, 18.0
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("b", track=k, car=_wagon(), cars=2, coupling=CouplingSpec(gap=1.0), start_s=60.0,
                start_speed=10.0, wheels="railway")
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    # each bogie's own loads: by symmetry each frame carries half the car's centripetal force and
    # half its weight, (m/2) v²/R and m g/2 (1e-4); the body's roll moment about the pivot line,
    # M (v²/R²) √(R² − L²/4) cg_height, half on each frame (the lever rule, cg_forward 0):
    # about the frame's tangent, at asin(L/2R) to the chord, cos φ = √(R² − L²/4)/R of it
    m, mb, v = 40000.0, 4000.0, s[-1, :4, ch.SPEED]
    np.testing.assert_allclose(np.abs(s[-1, :4, ch.LATERAL_LOAD]), m / 2 * v * v / R, rtol=1e-4)
    np.testing.assert_allclose(s[-1, :4, ch.WHEEL_LOAD], m / 2 * G, rtol=1e-4)
    roll = (m - 2 * mb) * v[0] ** 2 * (R * R - L * L / 4) / R ** 3 * 1.5
    np.testing.assert_allclose(np.abs(s[-1, :4, ch.ROLL_TORQUE]), roll / 2, rtol=1e-4)
    for body in (4, 5):
        fwd = _rot(s[-1, body, ch.QW:ch.QZ + 1])[:, 0]
        for frame in (2 * (body - 4), 2 * (body - 4) + 1):
            th = s[-1, frame, ch.S] / R
            tangent = np.array([np.cos(th), np.sin(th), 0.0])
            assert abs(np.arccos(np.clip(fwd @ tangent, -1, 1)) - np.arcsin(L / (2 * R))) < 1e-4
        r = np.hypot(s[-1, body, ch.X], s[-1, body, ch.Y] - R)
        assert abs((R - r) - (R - np.sqrt(R * R - L * L / 4))) < 1e-3
        # the body's ends, e = 3 m beyond each pivot, swing out to √(R² − L²/4 + (L/2 + e)²)
        for sign in (1.0, -1.0):
            end = s[-1, body, ch.X:ch.Z + 1] + sign * (L / 2 + 3.0) * fwd
            out = np.hypot(end[0], end[1] - R) - R
            assert abs(out - (np.sqrt(R * R - L * L / 4 + (L / 2 + 3.0) ** 2) - R)) < 1e-3


@pytest.mark.parametrize("e", [0.0, 1.5])
def test_each_frame_carries_its_lever_share_of_the_bodys_roll_moment_in_a_curve(e):
    """Level circle R = 150 m, pivots L = 18 m apart, one wagon at v ≈ 10 m/s, body mass
    M = m − 2 m_f, its centre of mass h = cg_height = 1.5 m above the pivots (on the rail plane),
    gauge b = 1.435 m, cg_forward e. Statics of the steady turn (rate ω = v/R, the body level, no
    angular acceleration): the body's centre lies on the chord, √(R² − L²/4) from the centre
    across it whatever e, so the pivots' forces across the chord sum to M ω² √(R² − L²/4) =
    M (v²/R) cos θ, cos θ = √(1 − L²/4R²) (θ = asin(L/2R), the chord to each frame's tangent);
    acting h below the centre of mass their roll moment about the chord, M (v²/R) h cos θ, is
    held by the swivels, frame i taking its lever weight w_i of it (front (L/2 + e)/L, rear
    (L/2 − e)/L: docs/physics.md "Bogies"), cos θ of that about its own tangent. The frame's own
    mass and the pivot force act on the rail plane, so

        Q_outer − Q_inner = 2 w_i M v² h cos²θ / (R b)        for the front AND the rear frame

    (within 1e-4 relative: the frames slow slightly under their resistance, v is each frame's own
    speed at the sample). Before this rule the rear frame showed equal inner and outer loads."""
    from trackrider.metrics import wheel_split

    R, L, m, mb, h, b = 150.0, 18.0, 40000.0, 4000.0, 1.5, 1.435
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("b", track=k, car=_wagon(cg_forward=e), cars=1, start_s=60.0, start_speed=10.0, wheels="railway")
    t, s, st = analytic.run(w, 2000, 100)
    assert st.ok
    inner, outer, _ = wheel_split(s[-1:, :2], np.full((1, 2), b))
    v = s[-1, :2, ch.SPEED]
    weights = np.array([L / 2 + e, L / 2 - e]) / L
    exact = 2 * weights * (m - 2 * mb) * v * v * h * (1 - L * L / (4 * R * R)) / (R * b)
    np.testing.assert_allclose(outer[0] - inner[0], exact, rtol=1e-4)
    assert np.all(exact > 1000.0)   # a split worth measuring: over 1 kN on each frame


def test_frictionless_bogie_train_conserves_energy():
    """Three cars on bogies (coaster wheels, no friction, no drag) on a hilly circle: the total
    energy of frames and bodies stays within 1e-3 of its start over 20 s."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.hilly_circle(R=60.0, amp=1.5, waves=3, n=6001))
    w.add_train("b", track=k, car=_wagon(mass=3000.0, length=4.0, width=1.5, height=1.2, cg_height=0.5,
                                         bogie_spacing=2.5, bogie_mass=200.0),
                cars=3, coupling=CouplingSpec(gap=0.5), start_s=30.0, start_speed=12.0)
    t, s, st = analytic.run(w, 20000, 100)
    assert st.ok
    e = np.sum(s[:, :, ch.KINETIC_ENERGY] + s[:, :, ch.POTENTIAL_ENERGY], axis=1)
    assert np.max(np.abs(e - e[0])) / e[0] < 1e-3


def _held_on_grade(car, n=3, pitch=2.0):
    """A train of ``n`` cars at rest on a ``pitch``° grade, its lead car held by a stop brake; the
    force in each coupler (N, tension +; the joints of chain column 1: on bogies not the links
    between frames, never solved) after 3 s."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(300.0, pitch_deg=pitch))
    w.add_train("g", track=k, car=car, cars=n, coupling=CouplingSpec(gap=1.0), start_s=250.0)
    w.add_section(kind="brake", track=k, s_from=235.0, s_to=265.0, speed=0.0, max_force=1e7)
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    lam = w.records.joints.lam[w.ji[:, JI_CHAIN] == 1, 0] / w.dt
    return lam, s


def test_a_bogie_wagons_steady_coupler_forces_on_a_grade_equal_the_plain_wagons():
    """Three 40 t cars held at the front on a 2° grade: coupler k carries the weight component of
    the cars behind it, (n − k) m g sin θ, on plain cars and on cars on bogies alike (1e-6
    relative; on bogies the couplers join the car bodies)."""
    n, m, th = 3, 40000.0, np.radians(2.0)
    exact = np.array([(n - k) * m * G * np.sin(th) for k in range(1, n)])
    plain, _ = _held_on_grade(CarSpec(mass=m, length=24.0, width=3.0, height=3.0, cg_height=1.5))
    bogie, s = _held_on_grade(_wagon(mass=m))
    assert s[-1, 0, ch.S] - s[-1, 1, ch.S] == pytest.approx(18.0, abs=1e-6)
    np.testing.assert_allclose(np.abs(plain[:n - 1]), exact, rtol=1e-6)
    np.testing.assert_allclose(np.abs(bogie), exact, rtol=1e-6)


def test_a_jacobs_set_shares_its_frames_by_the_lever_rule_and_follows_a_circle_as_chords():
    """Three bodies on four shared frames (``bogies = "jacobs"``), at rest on a level straight: an
    end frame carries its own weight and its body's share by the lever rule, a shared frame its own
    and both neighbours' shares, (L/2 − e)/L + (L/2 + e)/L = 1 body (1 N). Running on a level circle
    R = 150 m each body is the chord between its frames (asin(L/2R), 1e-4 rad)."""
    m, mb, L, e = 30000.0, 3000.0, 18.0, 1.0
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(100.0))
    w.add_train("j", track=k, car=_wagon(mass=m, length=19.0, bogies="jacobs", bogie_mass=mb, cg_forward=e),
                cars=3, start_s=70.0, wheels="railway")
    assert [lab for lab in w.entity_labels] == [("j", c) for c in range(1, 5)] + [("j.body", c) for c in range(1, 4)]
    t, s, st = analytic.run(w, 2000, 100)
    assert st.ok
    body = (m - mb) * G
    exact = [mb * G + body * (L / 2 + e) / L, mb * G + body, mb * G + body, mb * G + body * (L / 2 - e) / L]
    np.testing.assert_allclose(s[-1, :4, ch.WHEEL_LOAD], exact, atol=1.0)
    np.testing.assert_allclose(-np.diff(s[-1, :4, ch.S]), L, atol=1e-6)
    R = 150.0
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=R, n=4001))
    w.add_train("j", track=k, car=_wagon(mass=m, length=19.0, bogies="jacobs", bogie_mass=mb), cars=3,
                start_s=60.0, start_speed=10.0, wheels="railway")
    t, s, st = analytic.run(w, 3000, 100)
    assert st.ok
    for c in range(3):
        fwd = _rot(s[-1, 4 + c, ch.QW:ch.QZ + 1])[:, 0]
        for frame in (c, c + 1):
            th = s[-1, frame, ch.S] / R
            tangent = np.array([np.cos(th), np.sin(th), 0.0])
            assert abs(np.arccos(np.clip(fwd @ tangent, -1, 1)) - np.arcsin(L / (2 * R))) < 1e-4


def test_bad_bogie_settings_name_their_key():
    w = World()
    k = w.add_track(analytic.straight(100.0))
    for kw, key in ((dict(bogie_spacing=None), "car.bogie_spacing"), (dict(bogie_spacing=30.0), "car.bogie_spacing"),
                    (dict(cg_forward=9.0), "car.cg_forward"), (dict(bogie_mass=20000.0), "car.bogie_mass")):
        with pytest.raises(InputError) as e:
            w.add_train("b", track=k, car=_wagon(**kw), start_s=50.0)
        assert e.value.where == key
    # slack only as a draft gear's free play
    with pytest.raises(InputError, match="slack only as a draft gear's free play") as e:
        w.add_train("b", track=k, car=_wagon(), cars=2, coupling=CouplingSpec(gap=1.0, slack=0.1), start_s=50.0)
    assert e.value.where == "coupling.slack"
    # a railway train's vehicles are all on two bogies or none
    for kinds in (("two", "none"), ("jacobs", "jacobs")):
        vehicles = [VehicleSpec(**dict(_WAGON, bogies=b, bogie_spacing=10.0 if b != "none" else None))
                    for b in kinds]
        with pytest.raises(InputError, match="all run on two bogies") as e:
            w.add_train("v", track=k, vehicles=vehicles, start_s=80.0, wheels="railway")
        assert e.value.where == "vehicle"


def test_a_scenario_with_cars_on_bogies_runs_and_reports_frames_and_bodies(write):
    """``[train.car] bogies = "two"`` from a file: the rows are the frames, the free bodies, then the car
    bodies; a bogie
    key without bogies is an error naming it."""
    from tests.scenario.scenario_texts import BASE
    from trackrider.sim import simulate
    from trackrider.scenario import load_scenario

    text = BASE.replace("mass = 500.0\n", "mass = 500.0\nlength = 3.0\nbogies = \"two\"\nbogie_spacing = 2.0\n")
    res = simulate(load_scenario(write(text)))
    assert res.summary["status"] == "completed"
    n_rows = len(res.timeseries["t"])
    # the frames, the scenario's free body, then the car bodies
    assert n_rows % 7 == 0 and list(res.timeseries["train"][:8]) == ["red"] * 4 + ["bob"] + ["red.body"] * 2 + ["red"]
    assert list(res.timeseries["car"][:7]) == [1, 2, 3, 4, 1, 1, 2]
    with pytest.raises(InputError, match=r"train\[0\]\.car\.cg_forward: applies to cars on bogies only"):
        load_scenario(write(BASE.replace("mass = 500.0\n", "mass = 500.0\ncg_forward = 0.2\n")))


# ----------------------------------------------------------------------------- railway vehicles on bogies
_WAGON = dict(mass=60000.0, length=15.0, width=3.0, height=3.5, cg_height=1.5)


def _vehicle(**kw):
    """A railway wagon on two bogies 10 m apart (4.8 t each)."""
    return VehicleSpec(**dict(_WAGON, bogies="two", bogie_spacing=10.0, bogie_mass=4800.0, **kw))


def _railway(vehicles, pitch=0.0, start_s=250.0, driver=(), coupling=None):
    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(300.0, pitch_deg=pitch), gauge=1.435)
    w.add_train("f", track=k, vehicles=list(vehicles), coupling=coupling or CouplingSpec(gap=1.0), start_s=start_s,
                wheels="railway", driver=list(driver))
    return w


def test_railway_vehicles_on_bogies_split_their_static_wheel_loads_by_the_lever_rule():
    """Two wagons on bogies (``[[train.vehicle]] bogies = "two"``), the first with its centre of mass
    e = 1.2 m ahead of its pivots' middle, at rest on a level straight: each frame carries its own
    weight and its body's share, front (L/2 + e)/L, rear (L/2 − e)/L (1 N of 294 kN); the second
    wagon (e = 0) halves its body. The frames' rows are front, rear, wagon by wagon."""
    L, e, m, mb = 10.0, 1.2, 60000.0, 4800.0
    w = _railway([_vehicle(cg_forward=e), _vehicle()])
    assert w.entity_labels == [("f", c) for c in range(1, 5)] + [("f.body", 1), ("f.body", 2)]
    t, s, st = analytic.run(w, 2000, 100)
    assert st.ok
    wl = s[-1, :4, ch.WHEEL_LOAD]
    body = (m - 2 * mb) * G
    exact = [mb * G + body * (L / 2 + e) / L, mb * G + body * (L / 2 - e) / L, mb * G + body / 2, mb * G + body / 2]
    np.testing.assert_allclose(wl[:4], exact, atol=1.0)


def test_a_bogie_railway_trains_steady_coupler_forces_on_a_grade_equal_the_plain_trains():
    """Three 60 t wagons held by a brake section at the front on a 1° grade, rigid couplers: the
    coupler behind wagon k carries (n − k) m g sin θ on plain wagons and on wagons on bogies alike
    (1e-6 relative). On bogies ``coupler_force`` is the rear frame's (the coupler behind the wagon);
    a front frame's is empty (the bar to its rear frame is no coupler), and summary.json lists the
    wagons' two couplers."""
    n, m, th = 3, 60000.0, np.radians(1.0)
    exact = np.array([(n - k) * m * G * np.sin(th) for k in range(1, n)])
    forces = []
    for vehicles in ([VehicleSpec(**dict(_WAGON, count=n))], [_vehicle(count=n)]):
        w = _railway(vehicles, pitch=1.0)
        w.add_section(kind="brake", track=0, s_from=242.0, s_to=270.0, speed=0.0, max_force=1e7)
        r = run_world(w, 3.0, 10)
        rows = 2 * n if len(w.entity_labels) > n else n
        cf = r.timeseries["coupler_force"].reshape(-1, len(w.entity_labels))[-1, :rows]
        forces.append(cf)
    plain, bogie = forces
    np.testing.assert_allclose(np.abs(plain[:n - 1]), exact, rtol=1e-6)
    np.testing.assert_allclose(np.abs(bogie[1:2 * n - 1:2]), exact, rtol=1e-6)
    assert np.all(np.isnan(bogie[0::2])) and np.isnan(bogie[-1])
    couplers = r.summary["railway"]["f"]["couplers"]
    assert [c["cars"] for c in couplers] == [[1, 2], [2, 3]]


def test_a_locomotive_on_bogies_pulls_with_both_and_the_driver_reaches_both():
    """A locomotive on two bogies (constant tractive effort F at notch 8, set by a driver step for
    locomotive 1) and a wagon on bogies, rigid couplers, level, no resistance: each frame pulls F/2
    (``tractive_force``), the train accelerates at F / Σm (1e-6 relative)
    and the coupler carries F m_wagon / Σm."""
    F, m = 100e3, 60000.0
    loco = _vehicle(kind="locomotive", tractive_effort=((0.0, F),), adhesion=2.0)
    w = _railway([loco, _vehicle()], start_s=200.0, driver=[DriverStep(time=0.0, notch=8, locomotive=1)])
    r = run_world(w, 2.0, 10)
    ts = r.timeseries
    tf = ts["tractive_force"].reshape(-1, 6)[-1]
    np.testing.assert_allclose(tf[:2], F / 2, rtol=1e-12)
    assert np.all(np.isnan(tf[2:4]))
    accel = ts["accel"].reshape(-1, 6)[-1]
    np.testing.assert_allclose(accel[:4], F / (2 * m), rtol=1e-6)
    cf = ts["coupler_force"].reshape(-1, 6)[-1]
    assert cf[1] == pytest.approx(F / 2, rel=1e-6)
