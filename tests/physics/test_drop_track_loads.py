"""The loads of scenarios/drop_track.toml in closed form, from the scenario's
masses and buffer: the station's tyres and the piece's hold while the train
stops on the held piece, nothing while piece and train fall, and the buffer's
brake load — and the wheel load and G it gives the riders — while the
buffer stops them.

The piece (M = 6000 kg) and the train (m = 2 × 900 kg) fall h = 4 m from rest
and meet the buffer at v₀ = √(2gh). On it they move as one mass Mₜ = M + m on
the spring k and damper c (the level track: the train neither slides along it
nor lifts off), the penetration x below the stop obeying
Mₜ ẍ = Mₜ g − k x − c ẋ, x(0) = 0, ẋ(0) = v₀ (docs/physics.md, a joint's
buffer): with ω₀ = √(k/Mₜ), ζ = c / (2√(k Mₜ)) (0.65: under-damped),
ω_d = ω₀√(1 − ζ²), x_s = Mₜ g / k,

    x(τ) = x_s + e^(−ζω₀τ) (A cos ω_d τ + B sin ω_d τ),  A = −x_s,  B = (v₀ − ζω₀ x_s) / ω_d,

and the buffer's force F = k x + c ẋ stays positive (it only pushes). The
train rides on the piece: each car's wheel load is its share of F,
m_car F / Mₜ, its riders feel F / (Mₜ g), and its brake (along the level
track) carries nothing.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from trackrider.scenario import load_scenario
from trackrider.sim import simulate

G = 9.81
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def drop(tmp_path_factory):
    """(scenario, car rows by car number, joints.csv columns, release time, events) of the drop track
    recorded at 1 kHz."""
    sc = load_scenario(ROOT / "scenarios" / "drop_track.toml")
    sc.simulation.record_hz = 1000.0
    out = tmp_path_factory.mktemp("drop") / "out"
    res = simulate(sc, out_dir=out)
    assert res.status == "completed"
    ts = res.load_timeseries()
    cars = {}
    for n in (1, 2):
        sel = (ts["train"] == "car") & (ts["car"] == n)
        cars[n] = {k: np.asarray(v, dtype=float)[sel] for k, v in ts.items() if k != "train"}
    with open(out / "joints.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    joint = {k: np.array([float(r[k]) for r in rows]) for k in ("t", "travel", "speed", "drive", "force")}
    release = [e["t"] for e in res.summary["events"] if e["kind"] == "joint_release"]
    assert len(release) == 1
    return sc, cars, joint, release[0], res.summary["events"]


def _figures(sc):
    M = sc.bodies[0].mass
    m_car = sc.trains[0].car.mass
    Mt = M + sc.trains[0].cars * m_car
    p = sc.joints[0].params
    k, c, h = p["stop_stiffness"], p["stop_damping"], -p["min_travel"]
    return M, m_car, Mt, k, c, h


def _buffer(sc, tau):
    """(x, ẋ, F) of the closed form at τ s after the piece meets its buffer."""
    _M, _m, Mt, k, c, h = _figures(sc)
    v0 = math.sqrt(2.0 * G * h)
    w0 = math.sqrt(k / Mt)
    zeta = c / (2.0 * math.sqrt(k * Mt))
    wd = w0 * math.sqrt(1.0 - zeta * zeta)
    xs = Mt * G / k
    a, b = -xs, (v0 - zeta * w0 * xs) / wd
    e = np.exp(-zeta * w0 * tau)
    cos, sin = np.cos(wd * tau), np.sin(wd * tau)
    x = xs + e * (a * cos + b * sin)
    xd = e * (-zeta * w0 * (a * cos + b * sin) + wd * (-a * sin + b * cos))
    return x, xd, k * x + c * xd


def test_the_station_stops_the_train_on_the_held_piece(drop):
    """Stopping: the station's tyres brake each car at up to its max_force (8 kN, towards −s) and the
    train decelerates at (f₁ + f₂) / m (1e-6 relative); the hold carries the weight of piece and
    train, (M + m) g, and its guide the tyres' reaction along the track as well:
    |force| = √(((M + m) g)² + (f₁ + f₂)²). Standing (the release comes 2 s after the stop), the
    station holds nothing on the level track (< 1e-9 N). Tolerance 1e-6 relative."""
    sc, cars, joint, t0, _events = drop
    _M, m_car, Mt, *_ = _figures(sc)
    fmax = sc.sections[0].max_force
    f = cars[1]["motor_force"] + cars[2]["motor_force"]
    stopping = cars[1]["t"] < t0 - 2.05
    assert np.all(f[stopping] >= -2 * fmax * (1 + 1e-9)) and f[stopping].min() == pytest.approx(-2 * fmax, rel=1e-6)
    nz = stopping & (np.abs(f) > 1.0) & (cars[1]["t"] > 0.01)
    np.testing.assert_allclose(cars[1]["accel"][nz], f[nz] / (2 * m_car), rtol=1e-6, atol=1e-6)
    jb = np.isin(np.round(joint["t"], 6), np.round(cars[1]["t"][stopping], 6))
    np.testing.assert_allclose(joint["drive"][jb], Mt * G, rtol=1e-6)
    np.testing.assert_allclose(joint["force"][jb], np.hypot(Mt * G, f[stopping]), rtol=1e-6)
    standing = (cars[1]["t"] > t0 - 1.95) & (cars[1]["t"] < t0)
    for n in (1, 2):
        assert np.max(np.abs(cars[n]["motor_force"][standing])) < 1e-9
        np.testing.assert_allclose(cars[n]["wheel_load"][standing], m_car * G, rtol=1e-6)


def test_nothing_carries_the_falling_piece_and_train(drop):
    """Falling from the release to the buffer (√(2h/g) = 0.90 s): the joint's drive, the wheel
    loads and the brakes' forces are 0 (< 1e-6 N) and the riders feel 0 g (< 1e-6 g)."""
    sc, cars, joint, t0, _events = drop
    *_, h = _figures(sc)
    t_c = t0 + math.sqrt(2.0 * h / G)
    fj = (joint["t"] > t0 + 0.01) & (joint["t"] < t_c - 0.01)
    assert np.max(np.abs(joint["drive"][fj])) < 1e-6
    for n in (1, 2):
        f = (cars[n]["t"] > t0 + 0.01) & (cars[n]["t"] < t_c - 0.01)
        assert f.sum() > 800
        assert np.max(np.abs(cars[n]["wheel_load"][f])) < 1e-6
        assert np.max(np.abs(cars[n]["motor_force"][f])) < 1e-6
        assert np.max(np.abs(cars[n]["g_vertical"][f])) < 1e-6


def test_the_buffer_load_and_the_riders_load_while_the_buffer_stops_them(drop):
    """Over the 4 s from meeting the buffer: the buffer's load (the joint's drive) is the closed
    form's F = k x + c ẋ within 0.5 % of its peak c v₀ = 354 kN (the contact falls between steps of
    1 ms: 9 mm of travel); the piece's travel is −h − x within 2 cm; each car's wheel load is
    m_car F / Mₜ within 0.5 % of its peak, its riders' vertical G F / (Mₜ g) within 0.02 g and its
    brake's force 0 (< 1e-6 N). The peak load is c v₀ (the damper at the moment of contact) within
    0.5 %, the piece comes to rest x_s = Mₜ g / k = 0.64 m into the buffer."""
    sc, cars, joint, t0, _events = drop
    _M, m_car, Mt, k, c, h = _figures(sc)
    t_c = t0 + math.sqrt(2.0 * h / G)
    peak = c * math.sqrt(2.0 * G * h)
    tau = joint["t"] - t_c
    on = (tau > 0.0) & (tau < 4.0)
    x, _xd, force = _buffer(sc, tau[on])
    assert force.min() > 0.0   # the buffer only pushes: the closed form holds throughout
    np.testing.assert_allclose(joint["drive"][on], force, atol=5e-3 * peak)
    np.testing.assert_allclose(joint["travel"][on], -h - x, atol=0.02)
    assert joint["drive"].max() == pytest.approx(peak, rel=5e-3)
    assert joint["travel"][-1] == pytest.approx(-h - Mt * G / k, abs=2e-3)
    for n in (1, 2):
        tc = cars[n]["t"] - t_c
        sel = (tc > 0.0) & (tc < 4.0)
        _x, _v, f = _buffer(sc, tc[sel])
        np.testing.assert_allclose(cars[n]["wheel_load"][sel], m_car * f / Mt, atol=5e-3 * m_car * peak / Mt)
        np.testing.assert_allclose(cars[n]["g_vertical"][sel], f / (Mt * G), atol=0.02)
        assert np.max(np.abs(cars[n]["motor_force"][sel])) < 1e-6


def test_the_train_leaves_the_resting_piece_onto_the_run_out(drop):
    """The piece is locked where it rests on its buffer (9 s: x within 1 mm of x_s = Mₜ g / k, its
    end then level with the run-out's start, 1 mm); the station dispatches the train after its
    dwell and each car changes track from the piece to the run-out as its anchor reaches the end,
    its speed unchanged across the end (1e-6 m/s); the hold then carries the piece and the cars
    still on it: (M + m_car) g after the first car has left (1e-5 relative: the coupler to the car on
    the run-out), M g after the second (1e-6 relative)."""
    sc, cars, joint, t0, events = drop
    M, m_car, Mt, k, _c, h = _figures(sc)
    hold = [e["t"] for e in events if e["kind"] == "joint_hold"]
    assert hold == [9.0]
    assert abs(joint["travel"][-1] + h + Mt * G / k) < 1e-3
    moves = [(e["car"], e["from"], e["to"], e["t"]) for e in events if e["kind"] == "track_change"]
    assert [m[:3] for m in moves] == [(1, "piece", "runout"), (2, "piece", "runout")]
    (_, _, _, t1), (_, _, _, t2) = moves
    assert 10.0 < t1 < t2
    for n, tn in ((1, t1), (2, t2)):
        i = np.searchsorted(cars[n]["t"], tn)
        assert cars[n]["track"][i - 2] == 0 and cars[n]["track"][i + 1] == 1   # piece, then the run-out
        assert abs(cars[n]["speed"][i + 1] - cars[n]["speed"][i - 2]) < 1e-6 + 3e-3 * abs(cars[n]["accel"][i])
    one = (joint["t"] > t1 + 0.01) & (joint["t"] < t2 - 0.01)
    none = joint["t"] > t2 + 0.01
    np.testing.assert_allclose(joint["drive"][one], (M + m_car) * G, rtol=1e-5)
    np.testing.assert_allclose(joint["drive"][none], M * G, rtol=1e-6)
