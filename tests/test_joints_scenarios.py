"""The bundled issue-7 scenarios: the double pendulum (free bodies on ball joints) and the
suspended coaster (cars swinging below their trolleys) run and give physical figures."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from trackrider.scenario import load_scenario
from trackrider.sim import simulate

#: the kernels are compiled once, before the first test here (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("warm_kernels")

ROOT = Path(__file__).resolve().parents[1]
G = 9.81


def series(result, name, car=1):
    ts = result.timeseries
    m = (ts["train"] == name) & (ts["car"] == car)
    return {k: np.asarray(v)[m] for k, v in ts.items() if k != "train"}


def test_double_pendulum_scenario_conserves_energy_and_holds_its_joints():
    """20 s of the chaotic double pendulum: ball joints hold to 1e-4 m; the recorded KE + PE stays
    within 0.3 % of the swing energy (the integrator's O(h ω) band; its step-centred energy is
    checked to 0.1 % in tests/physics/test_joints.py)."""
    sc = load_scenario(ROOT / "scenarios" / "double_pendulum.toml")
    res = simulate(sc)
    assert res.summary["status"] == "completed"
    up, lo = series(res, "upper"), series(res, "lower")
    pivot = np.array([0.0, 0.0, 3.0])
    p_up = np.column_stack([up["x"], up["y"], up["z"]])
    p_lo = np.column_stack([lo["x"], lo["y"], lo["z"]])
    assert np.max(np.abs(np.linalg.norm(p_up - pivot, axis=1) - 1.0)) < 1e-4
    assert np.max(np.abs(np.linalg.norm(p_lo - p_up, axis=1) - 0.8)) < 1e-4
    E = up["kinetic_energy"] + up["potential_energy"] + lo["kinetic_energy"] + lo["potential_energy"]
    rest = 2.0 * G * 2.0 + 1.0 * G * 1.2           # both bobs hanging straight down (z = 2.0, 1.2)
    e0 = 2.0 * G * 2.1339746 + 1.0 * G * 1.7339746   # released at rest
    swing = e0 - rest
    assert abs(E[0] - e0) / swing < 2e-3
    assert np.max(np.abs(E - e0)) / swing < 3e-3
    assert np.ptp(p_lo[:, 0]) > 2.0                # it really swings


def test_suspended_coaster_scenario_swings_out_in_the_turns_and_stops():
    """The suspended coaster runs to its brake run and stops; in the middle of the left turn
    (R = 20 m) the bodies hang out to near atan(v²/(g R)) (within 3°: the swing is still settling
    there; measured 1–2°) and the rider feels < 0.1 g lateral where a rigid car would feel v²/(g R) ≈ 1.4 g."""
    sc = load_scenario(ROOT / "scenarios" / "suspended_coaster.toml")
    res = simulate(sc)
    assert res.summary["status"] == "completed"
    d = series(res, "cars", 2)
    assert abs(d["speed"][-1]) < 1e-3
    assert 270.0 < d["s"][-1] < 320.0
    assert np.all(np.isfinite(d["g_lateral"]))
    b = series(res, "cars.body", 2)
    # middle of the left turn's arc: s between the two clothoids
    s0 = 12 + 3 * 8 + 20 + 3 * 8 + 10 + 35          # start of the arc (m of track; train starts s 8)
    arc = (d["s"] > s0 + 5.0) & (d["s"] < s0 + 20 * math.radians(79.73) - 5.0)
    assert arc.sum() > 10
    v = d["speed"][arc]
    q = np.column_stack([b["qw"], b["qx"], b["qy"], b["qz"]])[arc]
    w, x, y, z = q.T
    up_z = 1.0 - 2.0 * (x * x + y * y)
    phi = np.degrees(np.arccos(np.clip(up_z, -1, 1)))
    expect = np.degrees(np.arctan(v * v / (G * 20.0)))
    assert np.max(np.abs(phi - expect)) < 3.0
    assert np.max(np.abs(d["g_lateral"][arc])) < 0.1
    assert np.min(v * v / (G * 20.0)) > 1.0


def test_hinge_and_prismatic_keys_reach_the_world(tmp_path):
    """[[joint]] hinge angles are degrees in the file and radians in the World; prismatic keys pass
    through; the world builds (a spring-hung body settles at its sag m g/k)."""
    from trackrider.scenario import build_world
    text = """
[simulation]
duration = 3.0
dt = 0.001
record_hz = 100

[[body]]
name = "door"
mass = 10.0
size = [1.0, 0.05, 2.0]
position = [0.5, 0.0, 0.0]

[[body]]
name = "weight"
mass = 2.0
size = [0.1, 0.1, 0.1]
position = [3.0, 0.0, 0.0]

[[joint]]
type = "hinge"
a = "world"
b = "door"
anchor_a = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
min_angle = -45.0
max_angle = 90.0
motor_speed = 30.0
max_torque = 50.0

[[joint]]
type = "prismatic"
a = "world"
b = "weight"
axis = [0.0, 0.0, 1.0]
stiffness = 800.0
damping = 40.0
min_travel = -1.0
"""
    path = tmp_path / "j.toml"
    path.write_text(text, encoding="utf-8")
    sc = load_scenario(path)
    w = build_world(sc)
    p = w.joints[0]["p"]
    assert math.isclose(p["min_angle"], math.radians(-45.0)) and math.isclose(p["max_angle"], math.radians(90.0))
    assert math.isclose(p["motor_speed"], math.radians(30.0))
    res = simulate(sc)
    assert res.summary["status"] == "completed"
    wt = series(res, "weight")
    assert abs(wt["z"][-1] + 2.0 * G / 800.0) < 1e-3
    door = series(res, "door")
    assert abs(door["wz"][-1] - math.radians(30.0)) < 1e-6   # the motor turns it at 30°/s ...
    ang = np.degrees(np.arctan2(door["y"], door["x"]))
    assert ang.max() < 90.0 + 0.5                            # ... and the 90° limit is not reached in 3 s
