"""Front and rear rider rows in the outputs (``[train.car] rider_rows = 2``, docs/outputs.md): their
columns only when a car has them, filtered as the rider point's G, their figures in ``summary.json``
and the report; bad values refused with one error line. The rows' physics: tests/physics/test_rider_rows.py."""
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

