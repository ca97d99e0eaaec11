"""Railway longitudinal dynamics against closed forms (docs/physics.md §10): locomotives, the driver,
the automatic air brake, draft gears with slack. Every tolerance is stated where it is asserted."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from tests.physics import analytic
from trackrider.curves.compact import C_T
from trackrider.physics import CouplingSpec, World
from trackrider.settings import BrakeSpec, DriverStep, VehicleSpec
from trackrider.sim import run_world

G = 9.81


def railway(vehicles, coupling=None, start_s=2000.0, start_speed=0.0, driver=(), brake=None, dt=1e-3,
            davis=None, length=6000.0):
    """A world of one railway train on a level straight."""
    w = World(dt=dt)
    w.add_track(analytic.straight(length), gauge=1.435)
    if davis is not None:
        w.set_resistance(davis=davis)
    w.add_train("t", 0, coupling=coupling or CouplingSpec(gap=1.0), wheels="railway", start_s=start_s,
                start_speed=start_speed, vehicles=list(vehicles), brake=brake, driver=list(driver))
    return w


def columns(result, n, *names):
    """(instants, cars) arrays of the columns ``names`` and the time (instants,)."""
    ts = result.timeseries
    return (ts["t"].reshape(-1, n)[:, 0],) + tuple(ts[c].reshape(-1, n) for c in names)


def loco(force, **kw):
    """A locomotive of constant tractive effort ``force`` N at full notch (8)."""
    spec = dict(mass=100e3, length=20.0, kind="locomotive", tractive_effort=((0.0, force),), adhesion=2.0)
    spec.update(kw)
    return VehicleSpec(**spec)


# ----------------------------------------------------------------------------- locomotives
def test_a_force_on_the_first_of_rigid_vehicles_accelerates_them_all_and_each_coupler_carries_the_rest():
    """N rigidly coupled vehicles, tractive force F on the first, no resistance: a = F / Σm and the
    coupler behind vehicle j carries F × (mass behind it) / Σm (F (N − j)/N for equal masses);
    within 1e-9 (the chain solve is exact)."""
    F, m, n = 120e3, 50e3, 8
    w = railway([loco(F, mass=m, length=15.0), VehicleSpec(mass=m, length=15.0, count=n - 1)],
                driver=[DriverStep(time=0.0, notch=8)])
    r = run_world(w, 3.0, 10)
    t, accel, cf, tf = columns(r, n, "accel", "coupler_force", "tractive_force")
    np.testing.assert_allclose(accel[-1], F / (n * m), rtol=1e-9)
    np.testing.assert_allclose(cf[-1, :-1], F * (n - 1 - np.arange(n - 1)) / n, rtol=1e-9)
    assert np.isnan(cf[-1, -1])                        # the last car has no coupler behind it
    assert tf[-1, 0] == pytest.approx(F) and np.all(np.isnan(tf[-1, 1:]))
    ev = [e for e in r.summary["events"] if e["kind"] == "driver"]
    assert ev == [{"t": 0.0, "train": "t", "car": 1, "kind": "driver", "command": "notch 8", "s": 2000.0,
                   "speed": 0.0, "notch": 8}]


def test_a_locomotive_on_the_level_reaches_the_balance_speed_of_its_curve_and_the_davis_resistance():
    """Constant power P up to F_max: the train settles where P / v = N (A + B v + C v²) (Davis per
    vehicle); within 1e-4 after 7 time constants."""
    from scipy.optimize import brentq

    P, n, (A, B, C) = 2.0e6, 10, (1500.0, 30.0, 5.0)
    vb = brentq(lambda v: P / v - n * (A + B * v + C * v * v), 1.0, 200.0)
    w = railway([VehicleSpec(mass=100e3, length=20.0, kind="locomotive", power=P, max_tractive_effort=3e5),
                 VehicleSpec(mass=40e3, length=15.0, count=n - 1)], start_s=500.0, start_speed=0.95 * vb,
                davis=(A, B, C), dt=5e-3, length=30000.0, driver=[DriverStep(time=0.0, notch=8)])
    r = run_world(w, 600.0, 1)
    t, v, f = columns(r, n, "speed", "tractive_force")
    assert v[-1, 0] == pytest.approx(vb, rel=1e-4)
    assert f[-1, 0] == pytest.approx(P / v[-1, 0], rel=1e-6)     # on the constant-power part (speed of a step before)


def test_beyond_the_adhesion_limit_the_wheels_slip_and_the_force_drops_until_the_demand_does():
    """μ m_adh g = 0.25 × 100 t × g = 245 kN: 300 kN at notch 8 slips (a wheel_slip event) and the
    force drops to slip_factor × the limit; at notch 4 (150 kN) the wheels grip again."""
    mu, m, F = 0.25, 100e3, 300e3
    grip = mu * m * G
    w = railway([loco(F, mass=m, adhesion=mu), VehicleSpec(mass=500e3, length=15.0)],
                driver=[DriverStep(time=0.0, notch=8), DriverStep(time=1.0, notch=4)])
    r = run_world(w, 2.0, 100)
    t, f, flags = columns(r, 2, "tractive_force", "flags")
    slipping = (flags[:, 0].astype(int) & 64) != 0
    assert np.all(slipping[t < 1.0]) and not np.any(slipping[t > 1.0 + 1e-9])
    np.testing.assert_allclose(f[t < 1.0, 0], 0.75 * grip, rtol=1e-9)
    np.testing.assert_allclose(f[t > 1.0 + 1e-9, 0], F / 2, rtol=1e-9)
    slips = [e for e in r.summary["events"] if e["kind"] == "wheel_slip"]
    assert slips == [{"t": 0.0, "train": "t", "car": 1, "kind": "wheel_slip"}]
    assert r.summary["railway"]["t"]["wheel_slips"] == 1


# ----------------------------------------------------------------------------- the air brake
def _braked_train(n=20, m=50e3, rig=20e3, v0=20.0, brake=1.5, when=1.0, then=()):
    wagons = VehicleSpec(mass=m, length=15.0, count=n, brake_rigging=rig, shoe_friction=0.25, adhesion=1.0)
    return railway([wagons], start_s=1000.0, start_speed=v0, brake=BrakeSpec(),
                   driver=[DriverStep(time=when, brake=brake), *then])


def test_the_brake_reaches_each_vehicle_at_its_distance_over_the_propagation_speed():
    """No locomotive: the pipe is vented at the lead vehicle; vehicle i (16 i m behind) starts to
    brake at t₀ + 16 i / c (service 250 m/s, emergency 290 m/s), its cylinder filling at
    cylinder_pressure / fill_time; within one step."""
    n, h = 20, 1e-3
    for brake, c in ((1.5, 250.0), ("emergency", 290.0)):
        r = run_world(_braked_train(n=n, brake=brake), 3.0, 1000)
        t, p, pipe = columns(r, n, "brake_pressure", "pipe_pressure")
        start = np.array([t[np.argmax(p[:, i] > 0.0)] for i in range(n)])
        expect = 1.0 + 16.0 * np.arange(n) / c
        np.testing.assert_allclose(start, expect + h, atol=h * 1.01)
        # 4 s to fill 3.8 bar: 0.95 bar/s after its start (within a step's worth)
        i = np.searchsorted(t, 2.5)
        np.testing.assert_allclose(p[i], 3.8 / 4.0 * (t[i] - expect), atol=0.95 * h * 1.01)
        assert pipe[i, 0] == pytest.approx(5.0 - 1.5 if brake == 1.5 else 0.0)


def test_a_release_runs_down_the_pipe_likewise_and_empties_the_cylinders():
    """Applied at t = 0, released at t = 3 s: cylinder i fills for 3 s from its τ_i = 16 i / 250 s and
    empties from 3 + τ_i at 3.8/15 bar/s (within a step's worth)."""
    n, h = 10, 1e-3
    r = run_world(_braked_train(n=n, when=0.0, then=[DriverStep(time=3.0, brake="release")]), 6.0, 1000)
    t, p = columns(r, n, "brake_pressure")
    i = np.searchsorted(t, 5.0)
    tau = 16.0 * np.arange(n) / 250.0
    np.testing.assert_allclose(p[i], 3.8 / 4.0 * 3.0 - 3.8 / 15.0 * (t[i] - 3.0 - tau), atol=0.95 * h * 2.02)


def test_a_train_braking_from_v_stops_in_v2_over_2d_plus_the_share_of_the_brakes_delays():
    """Uniform deceleration d once every brake is on; vehicle i's force ramps in over [τ_i, τ_i +
    t_f] (τ_i = its propagation delay, t_f the fill time). With T the mixture of those delays
    (mean τ̄ + t_f/2, variance var(τ) + t_f²/12) the train stops after
    s = v²/(2d) + v E[T] − d Var[T]/2 (docs/physics.md §10); within 2e-4."""
    n, m, rig, v0, mu = 20, 50e3, 20e3, 20.0, 0.25
    r = run_world(_braked_train(n=n, m=m, rig=rig, v0=v0), 60.0, 10)
    d = 3.8 * rig * mu / m
    tau = 16.0 * np.arange(n) / 250.0
    mean, var = tau.mean() + 2.0, tau.var() + 4.0**2 / 12.0
    s = v0**2 / (2 * d) + v0 * mean - d * var / 2
    stops = r.summary["railway"]["t"]["stops"]
    assert len(stops) == 1 and stops[0]["t_brake"] == 1.0 and stops[0]["speed"] == pytest.approx(v0)
    assert stops[0]["distance"] == pytest.approx(s, rel=2e-4)
    assert r.summary["railway"]["t"]["stopping_distance"] == stops[0]["distance"]
    assert r.status == "completed"            # held by its brakes: stopped, not stalled
    energy = r.summary["railway"]["t"]["energy"]
    assert energy["air_brakes"] == pytest.approx(0.5 * n * m * v0**2, rel=1e-3)


def test_the_brake_force_is_limited_by_adhesion():
    """μ_shoe × cylinder × rigging = 0.25 × 3.8 bar × 100 kN/bar = 95 kN above μ_adh m g = 0.1 × 50 t
    × g = 49 kN: the wagon decelerates at 0.1 g."""
    w = railway([VehicleSpec(mass=50e3, length=15.0, brake_rigging=100e3, adhesion=0.1)], start_speed=10.0,
                driver=[DriverStep(time=0.0, brake="emergency")], brake=BrakeSpec(fill_time=0.01))
    r = run_world(w, 1.0, 100)
    t, accel, f = columns(r, 1, "accel", "brake_force")
    np.testing.assert_allclose(accel[t > 0.05, 0], -0.1 * G, rtol=1e-6)
    np.testing.assert_allclose(f[t > 0.05, 0], -0.1 * 50e3 * G, rtol=1e-6)


# ----------------------------------------------------------------------------- draft gear
def gear(**kw):
    spec = dict(type="draft_gear", gap=1.0)
    spec.update(kw)
    return CouplingSpec(**spec)


@pytest.mark.parametrize("kind, dt, rel", [("draft_gear", 1e-3, 0.01), ("soft", 2e-4, 0.02)])
def test_a_step_load_runs_down_a_spring_coupled_chain_and_doubles_at_the_held_tail(kind, dt, rel):
    """N = 40 vehicles of m on springs k (no slack, no damping), the tail held by a brake, a step
    force F on the first: the front reaches the last coupler after (N − 1)√(m/k) (its force rises
    through F, half the doubled wave) within 5 % — the discrete chain's own dispersion delays it
    by 3 % — and the reflection from the held end makes a first peak of about twice the static F
    (2.45 F: the discrete chain's overshoot; between 2 and 2.6). Both against a direct integration
    of the chain (numpy, 10 µs steps): a draft gear within 1 % at 1 ms, a soft coupler (an implicit
    spring, damped numerically by ζ ≈ h ω/2: 6 % lower peak at 1 ms) within 2 % at 0.2 ms."""
    n, m, k, F = 40, 50e3, 2e7, 100e3
    cp = (gear(slack=0.0, stiffness=k, unloading_stiffness=k, preload=0.0, travel=1.0) if kind == "draft_gear"
          else CouplingSpec(gap=1.0, stiffness=k))
    w = railway([loco(F, mass=m, length=15.0), VehicleSpec(mass=m, length=15.0, count=n - 1)], coupling=cp,
                start_s=3000.0, driver=[DriverStep(time=0.0, notch=8)], dt=dt)
    tail = 3000.0 - (n - 1) * 16.0
    w.add_section("brake", 0, tail - 5.0, tail + 5.0, max_force=1e9)
    T0 = (n - 1) * math.sqrt(m / k)
    r = run_world(w, 2.2 * T0, 1 / dt)
    t, cf = columns(r, n, "coupler_force")
    last = cf[:, n - 2]
    arrival, peak = t[np.argmax(last >= F)], last[t < 2.0 * T0].max()
    assert arrival == pytest.approx(T0, rel=0.05)
    assert 2.0 <= peak / F <= 2.6
    ref_t, ref_f = _chain(n, m, k, F, 2.2 * T0)
    assert arrival == pytest.approx(ref_t[np.argmax(ref_f >= F)], rel=0.01)
    assert peak == pytest.approx(ref_f[ref_t < 2.0 * T0].max(), rel=rel)


@functools.lru_cache(maxsize=None)
def _chain(n, m, k, F, duration, h=1e-5):
    """The last spring's force of a chain of n masses m on springs k, the last mass held, a step force
    F on the first: symplectic Euler at ``h``."""
    x, v = np.zeros(n), np.zeros(n)
    ts, fs = [], []
    for s in range(int(duration / h)):
        f = k * (x[:-1] - x[1:])
        a = np.zeros(n)
        a[0] = F
        a[:-1] -= f
        a[1:] += f
        a[-1] = 0.0
        v += h * a / m
        x += h * v
        if s % 10 == 9:
            ts.append((s + 1) * h)
            fs.append(f[-1])
    return np.array(ts), np.array(fs)


def test_a_slack_run_in_closes_at_root_2_a_delta_and_peaks_at_v_root_k_mu():
    """Two vehicles with free play δ drawn out; the front one brakes (dynamic brake F_d): their
    relative acceleration a_r = F_d/m₁ closes the play at v = √(2 a_r δ) (within 1e-3), then the
    gear (k, no preload, no hysteresis) peaks at μ a_r + √((μ a_r)² + k μ v²), μ = m₁m₂/(m₁+m₂):
    v√(kμ) plus the brake's share (within 1e-4; v√(kμ) alone is 10 % below here)."""
    m1, m2, Fd, k, delta, h = 40e3, 60e3, 20e3, 1e7, 0.06, 5e-4
    front = VehicleSpec(mass=m1, length=15.0, kind="locomotive", tractive_effort=((0.0, 1.0),),
                        dynamic_brake=((0.0, Fd),), adhesion=1.0)
    cp = gear(slack=delta, stiffness=k, unloading_stiffness=k, preload=0.0, travel=1.0, slack_start="stretched")
    w = railway([front, VehicleSpec(mass=m2, length=15.0)], coupling=cp, start_speed=10.0, dt=h,
                driver=[DriverStep(time=0.0, dynamic_brake=1.0)])
    r = run_world(w, 1.0, 1 / h)
    t, v, cf = columns(r, 2, "speed", "coupler_force")
    ar, mu = Fd / m1, m1 * m2 / (m1 + m2)
    i = np.argmax(cf[:, 0] < 0.0)              # the first sample with the gear loaded
    closing = math.sqrt(2 * ar * delta)
    assert v[i - 1, 1] - v[i - 1, 0] == pytest.approx(closing, rel=1e-3)
    fr = mu * ar
    peak = r.summary["railway"]["t"]["max_buff"]["force"]
    assert peak == pytest.approx(fr + math.sqrt(fr**2 + k * mu * closing**2), rel=1e-4)
    assert -cf[:, 0].min() == pytest.approx(peak, rel=1e-3)


def _impact(v0, slack=0.05, k=2e7, ku=5e6, fp=5e4, m1=40e3, m2=60e3, h=5e-4, duration=0.2):
    """Two wagons with a friction draft gear, the rear one running at v0 into the front one at rest."""
    cp = gear(slack=slack, stiffness=k, unloading_stiffness=ku, preload=fp, travel=1.0)
    w = railway([VehicleSpec(mass=m1, length=15.0), VehicleSpec(mass=m2, length=15.0)], coupling=cp, dt=h)
    w.n_entities                                     # built: give the rear wagon its speed
    w.vel[1] = v0 * w.cars.frame[1][C_T:C_T + 3]
    return run_world(w, duration, 1 / h)


def test_a_two_wagon_impact_conserves_momentum_and_loses_the_area_between_the_gears_curves():
    """The rear wagon (m₂) at v₀ closes the play into the front one (m₁) at rest. The gear loads along
    L = F_pre + k y to y_m (½ μ v₀² = F_pre y_m + ½ k y_m²), friction locks it, it unloads along
    U = k_u y and the wagons part: the load–unload cycle costs the area between the curves,
    F_pre y_m + ½ (k − k_u) y_m² (within 5e-4 of the kinetic energy lost), momentum is kept (1e-12),
    the peak force is L(y_m) (1e-3) and the summary's draft-gear energy is the energy lost (1e-9)."""
    m1, m2, k, ku, fp, v0 = 40e3, 60e3, 2e7, 5e6, 5e4, 2.0
    r = _impact(v0)
    t, v, cf = columns(r, 2, "speed", "coupler_force")
    mu = m1 * m2 / (m1 + m2)
    ym = (-fp + math.sqrt(fp**2 + k * mu * v0**2)) / k
    area = fp * ym + 0.5 * (k - ku) * ym**2
    i0 = np.argmax(cf[:, 0] < 0.0)
    i1 = i0 + np.argmax(cf[i0:, 0] >= 0.0)        # the gear back at rest: the wagons part
    assert t[i1] < t[-1] and np.all(cf[i1:, 0] == 0.0)
    p = m1 * v[:, 0] + m2 * v[:, 1]
    np.testing.assert_allclose(p, m2 * v0, rtol=1e-12)
    ke = 0.5 * m1 * v[:, 0] ** 2 + 0.5 * m2 * v[:, 1] ** 2
    lost = 0.5 * m2 * v0**2 - ke[-1]
    assert lost == pytest.approx(area, rel=5e-4)
    assert -cf[:, 0].min() == pytest.approx(fp + k * ym, rel=1e-3)
    assert r.summary["railway"]["t"]["energy"]["draft_gear"] == pytest.approx(lost, rel=1e-9)


def test_a_preloaded_gear_holds_rigid_below_its_preload():
    """A pull of 30 kN through a gear preloaded to 50 kN (no slack): the gear stays locked at y = 0,
    the wagons move as one and the coupler carries F m₂/(m₁+m₂) exactly."""
    F, m = 30e3, 50e3
    cp = gear(slack=0.0, preload=5e4)
    w = railway([loco(F, mass=m, length=15.0), VehicleSpec(mass=m, length=15.0)], coupling=cp,
                driver=[DriverStep(time=0.0, notch=8)])
    r = run_world(w, 1.0, 100)
    t, v, cf = columns(r, 2, "speed", "coupler_force")
    np.testing.assert_allclose(cf[5:, 0], F / 2, rtol=1e-6)
    np.testing.assert_allclose(v[:, 0], v[:, 1], atol=1e-6)


def test_a_step_above_the_draft_gears_stable_step_is_refused():
    """Two 1 t wagons on 2e7 N/m gears: ω² = 2k/m (exact for two: the reduced mass m/2), the stable
    step 2/ω = 10 ms; 10.5 ms is refused naming the stiffness, 9.5 ms is taken."""
    from trackrider.errors import InputError
    from trackrider.settings import TrainConfig

    wagons = [VehicleSpec(mass=1e3, length=15.0, count=2)]
    train = TrainConfig("t", "", 0, wagons[0], coupling=CouplingSpec(type="draft_gear", stiffness=2e7), vehicles=wagons)
    assert train.stable_step() == pytest.approx(0.01, rel=1e-12)
    with pytest.raises(InputError, match=r"dt = 0\.0105 s is above the draft gears' stable step 0\.01 s") as e:
        railway(wagons, coupling=gear(), dt=0.0105)
    assert e.value.where == "coupling.stiffness"
    railway(wagons, coupling=gear(), dt=0.0095)
