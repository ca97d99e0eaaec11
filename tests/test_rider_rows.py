"""Front and rear rider rows in the outputs (``[train.car] rider_rows = 2``, docs/outputs.md): their
columns only when a car has them, filtered as the rider point's G, their figures in ``summary.json``
and the report; bad values refused with one error line; a suspended car's rows against the closed form of its
swung-out body. The rows' physics otherwise: tests/physics/test_rider_rows.py."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfiltfilt
from typer.testing import CliRunner

from tests.physics import analytic
from tests.scenario.scenario_texts import BASE
from tests.test_cli import one_error_line
from trackrider.cli import app
from trackrider.physics import CarSpec, World
from trackrider.record import COLUMNS, ROW_COLUMNS, read_timeseries
from trackrider.metrics import ROW_G
from trackrider.sim import run_world


def _world(rows_b):
    """Two trains on a level circle R = 20 m at 8 m/s: ``a`` without rows, ``b`` with ``rows_b``."""
    w = World(dt=1e-3)
    k = w.add_track(analytic.flat_circle(R=20.0, n=4001))
    w.add_train("a", k, cars=2, car=CarSpec(mass=600.0, length=2.0), start_s=5.0, start_speed=8.0)
    w.add_train("b", k, cars=2, car=CarSpec(mass=600.0, length=3.0, rider_rows=rows_b), start_s=70.0,
                start_speed=8.0)
    return w


def test_row_columns_only_when_a_car_has_rows(tmp_path):
    one = run_world(_world(1), 2.0, 100, out_dir=tmp_path / "one")
    two = run_world(_world(2), 2.0, 100, out_dir=tmp_path / "two")
    head = [(tmp_path / d / "timeseries.csv").read_text().splitlines()[0].split(",") for d in ("one", "two")]
    assert head[0] == list(COLUMNS) and one.summary["columns"] == list(COLUMNS)
    assert head[1] == list(COLUMNS + ROW_COLUMNS) and two.summary["columns"] == head[1]
    assert all("rider_rows" not in tr for tr in one.summary["trains"].values())
    a, b = read_timeseries(tmp_path / "one"), read_timeseries(tmp_path / "two")
    # the rows change no other column: the rider point's G and everything else as without them
    for col in COLUMNS:
        if col != "train":
            np.testing.assert_array_equal(a[col], b[col])
    in_a = b["train"] == "a"
    for col in ROW_COLUMNS:
        assert np.all(np.isnan(b[col][in_a])) and np.all(np.isfinite(b[col][~in_a]))
    # filtered as the rider point's G: sosfiltfilt of the whole series (written to 7 digits)
    sos = butter(4, 5.0, fs=100.0, output="sos")
    for car in (1, 2):
        sel = ~in_a & (b["car"] == car)
        for col in ROW_G:
            np.testing.assert_allclose(b[col + "_filtered"][sel], sosfiltfilt(sos, b[col][sel]), atol=2e-6)
    rows = two.summary["trains"]["b"]["rider_rows"]
    assert "rider_rows" not in two.summary["trains"]["a"]
    for part in ("front", "rear"):
        lat = b[f"g_lateral_{part}_filtered"][~in_a]
        assert rows[part]["max_abs_g_lateral"] == pytest.approx(np.max(np.abs(lat)), abs=1e-6)
        vert = b[f"g_vertical_{part}_filtered"][~in_a]
        assert rows[part]["min_g_vertical"] == pytest.approx(np.min(vert), abs=1e-6)
        at = rows[part]["at"]["max_g_vertical"]
        assert at["car"] in (1, 2) and 0.0 < at["t"] <= 2.0
    assert [c["car"] for c in rows["cars"]] == [1, 2]
    for c in rows["cars"]:
        sel = ~in_a & (b["car"] == c["car"])
        for part, col in (("rider", "g_lateral_filtered"), ("front", "g_lateral_front_filtered"),
                          ("rear", "g_lateral_rear_filtered")):
            assert c[part]["max_g_lateral"] == pytest.approx(np.max(b[col][sel]), abs=1e-6)
            assert c[part]["min_g_lateral"] == pytest.approx(np.min(b[col][sel]), abs=1e-6)


def test_a_tampered_rider_rows_summary_is_refused(tmp_path):
    import json

    from trackrider.errors import InputError
    from trackrider.record import read_summary

    run_world(_world(2), 0.2, 100, out_dir=tmp_path / "o")
    path = tmp_path / "o" / "summary.json"
    doc = json.loads(path.read_text())
    doc["trains"]["b"]["rider_rows"]["cars"][1]["front"]["max_g_lateral"] = "high"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"trains\.b\.rider_rows\.cars\[1\]\.front\.max_g_lateral"):
        read_summary(tmp_path / "o")


@pytest.mark.parametrize("value,words", [("3", "rider_rows"), ("0", "rider_rows"), ('"two"', "rider_rows"),
                                         ("2\nlength = 0.8", "length > 0.9 m")])
def test_bad_rider_rows_is_one_error_line(tmp_path, value, words):
    path = tmp_path / "s.toml"
    path.write_text(BASE.replace("mass = 500.0\n", f"mass = 500.0\nrider_rows = {value}\n"))
    runner = CliRunner()
    err = one_error_line(runner.invoke(app, ["validate", str(path)]))
    assert "train[0].car.rider_rows" in err and words in err and str(path.name) in err
    one_error_line(runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "o"), "-q"]))
    assert not (tmp_path / "o").exists()



def test_rows_of_a_suspended_car_on_a_level_circle_feel_the_swung_out_resultant(tmp_path):
    """Suspended cars (``suspended = true``, docs/scenarios.md) report their swinging body's rows: 0.45 m
    inside each end of its ``length``, on the rider point's level, in the body's axes (docs/outputs.md).

    A level circle R = 30 m, the trolley at v ≈ 11.6 m/s (12 at the start; the swing takes some), the
    body 1.5 m below it on a damped hinge, the riders 1.3 m below it: once the swing has settled
    (2.6 s) the whole car turns rigidly about the circle's axis at ω = v/R, its body hanging out at φ,
    tan φ = ω² (R + 1.5 sin φ)/g (within 0.05°; measured 0.010°). A point of it at ρ from the axis feels
    g up and ω² ρ inwards: in the body's axes (up tilted in by φ) ``g_vertical`` = cos φ + ω² ρ sin φ/g and
    ``g_lateral`` = ω² ρ cos φ/g − sin φ, ρ = R + 1.3 sin φ for the rider point and both rows (1e-5 g with
    the body's recorded φ, measured 6e-7; 5e-4 g with the closed-form φ, measured 2e-4): the rows feel
    √(1 + (v²/gR)²) within 0.5 % (they ride outside R: measured 0.32 %) and almost no lateral G (the
    body swung to the resultant: −0.0014 g, where a rigid car pulls 0.46 g). α = 0, so the rows differ
    from the rider point only along the body's forward axis, by ∓ ω² d/g (d = 0.55 m; 1e-6 g, measured
    1e-8). A train on a straight at constant speed: 1 g vertical and nothing else, in its rows and in
    summary.json's ``rider_rows`` (1e-6 g). The bodies' own rows (``<train>.body``) have no row columns,
    and the damped swing is no reason for a dt warning (docs/outputs.md, "Choosing dt")."""
    from trackrider.physics.world import _rot

    G, R, v0, hang, below, d = 9.81, 30.0, 12.0, 1.5, 1.3, 2.0 / 2 - 0.45
    w = World(dt=1e-3)
    circle = w.add_track(analytic.flat_circle(R=R, n=4001))
    line = w.add_track(analytic.straight(300.0, n=601))
    car = CarSpec(mass=500.0, length=2.0, width=1.4, height=1.6, rider_height=-below, suspended=True, hang=hang,
                  trolley_mass=80.0, swing_damping=6000.0, rider_rows=2)
    w.add_train("circle", circle, cars=2, car=car, start_s=10.0, start_speed=v0)
    w.add_train("line", line, cars=2, car=car, start_s=20.0, start_speed=v0)
    res = run_world(w, 8.0, 100, out_dir=tmp_path / "o")
    ts = read_timeseries(tmp_path / "o")
    assert res.summary["warnings"] == []
    for body in ("circle.body", "line.body"):
        assert all(np.all(np.isnan(ts[c][ts["train"] == body])) for c in ROW_COLUMNS)
    for k in (1, 2):
        sel = (ts["train"] == "circle") & (ts["car"] == k) & (ts["t"] > 5.0)
        body = (ts["train"] == "circle.body") & (ts["car"] == k) & (ts["t"] > 5.0)
        assert sel.sum() == body.sum() == 300
        v = ts["speed"][sel]
        w2 = (v / R) ** 2
        q = np.column_stack([ts[c][body] for c in ("qw", "qx", "qy", "qz")])
        phi = np.array([np.arccos(_rot(x)[2, 2]) for x in q])
        phi_eq = np.full_like(v, 0.4)
        for _ in range(60):             # tan φ = ω² (R + hang sin φ)/g: a contraction (rate ≈ 0.02)
            phi_eq = np.arctan(w2 * (R + hang * np.sin(phi_eq)) / G)
        np.testing.assert_allclose(np.degrees(phi), np.degrees(phi_eq), atol=0.05)
        assert np.all(np.degrees(phi) > 24.0)
        for angle, tol in ((phi, 1e-5), (phi_eq, 5e-4)):
            rho = R + below * np.sin(angle)
            vertical = np.cos(angle) + w2 * rho * np.sin(angle) / G
            lateral = w2 * rho * np.cos(angle) / G - np.sin(angle)
            for part in ("", "_front", "_rear"):
                np.testing.assert_allclose(ts["g_vertical" + part][sel], vertical, atol=tol)
                np.testing.assert_allclose(ts["g_lateral" + part][sel], lateral, atol=tol)
        for part, sign in (("front", -1.0), ("rear", 1.0)):
            np.testing.assert_allclose(ts[f"g_vertical_{part}"][sel], np.sqrt(1 + (v * v / (G * R)) ** 2), rtol=5e-3)
            assert np.max(np.abs(ts[f"g_lateral_{part}"][sel])) < 2e-3
            np.testing.assert_allclose(ts[f"g_longitudinal_{part}"][sel] - ts["g_longitudinal"][sel],
                                       sign * w2 * d / G, atol=1e-6)
        # on the straight: 1 g, and nothing else
        sel = (ts["train"] == "line") & (ts["car"] == k)
        for part in ("front", "rear"):
            np.testing.assert_allclose(ts[f"g_vertical_{part}"][sel], 1.0, atol=1e-6)
            np.testing.assert_allclose(ts[f"g_lateral_{part}"][sel], 0.0, atol=1e-6)
            np.testing.assert_allclose(ts[f"g_longitudinal_{part}"][sel], 0.0, atol=1e-6)
    rows = res.summary["trains"]["line"]["rider_rows"]
    assert [c["car"] for c in rows["cars"]] == [1, 2]
    for part in ("front", "rear"):
        assert rows[part]["max_g_vertical"] == pytest.approx(1.0, abs=1e-6)
        assert rows[part]["min_g_vertical"] == pytest.approx(1.0, abs=1e-6)
        assert rows[part]["max_abs_g_lateral"] == pytest.approx(0.0, abs=1e-6)
        assert rows[part]["max_abs_g_longitudinal"] == pytest.approx(0.0, abs=1e-6)
