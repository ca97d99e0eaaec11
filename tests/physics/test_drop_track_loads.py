"""The loads of scenarios/drop_track.toml in closed form, from the scenario's
masses and buffer: the train's brake and the piece's hold while the train
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
    """(scenario, car rows by car number, joints.csv columns, release time) of the drop track recorded at 1 kHz."""
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
    return sc, cars, joint, release[0]


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


def test_the_brake_stops_the_train_on_the_held_piece(drop):
    """Braking: each car's brake at its max_force (8 kN, towards −s), the train decelerating at
    2 · 8 kN / 1800 kg = 8.9 m/s²; the hold carries the weight of piece and train, (M + m) g, and its
    guide the brakes' reaction along the track as well: |force| = √(((M + m) g)² + (2 · 8 kN)²).
    Standing, the brake holds nothing on the level track (< 1e-9 N). Tolerance 1e-6 relative."""
    sc, cars, joint, t0 = drop
    _M, m_car, Mt, *_ = _figures(sc)
    fmax = sc.sections[0].max_force
    braking = cars[1]["t"] < 0.4   # 4 m/s takes 0.45 s
    for n in (1, 2):
        np.testing.assert_allclose(cars[n]["motor_force"][braking], -fmax, rtol=1e-6)
        np.testing.assert_allclose(cars[n]["accel"][braking], -2 * fmax / (2 * m_car), rtol=1e-6)
    jb = joint["t"] < 0.4
    np.testing.assert_allclose(joint["drive"][jb], Mt * G, rtol=1e-6)
    np.testing.assert_allclose(joint["force"][jb], math.hypot(Mt * G, 2 * fmax), rtol=1e-6)
    standing = (cars[1]["t"] > 1.0) & (cars[1]["t"] < t0)
    for n in (1, 2):
        assert np.max(np.abs(cars[n]["motor_force"][standing])) < 1e-9
        np.testing.assert_allclose(cars[n]["wheel_load"][standing], m_car * G, rtol=1e-6)


def test_nothing_carries_the_falling_piece_and_train(drop):
    """Falling from the release to the buffer (√(2h/g) = 0.90 s): the joint's drive, the wheel
    loads and the brakes' forces are 0 (< 1e-6 N) and the riders feel 0 g (< 1e-6 g)."""
    sc, cars, joint, t0 = drop
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
    sc, cars, joint, t0 = drop
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
