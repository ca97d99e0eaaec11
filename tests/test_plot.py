"""``trackrider plot`` / ``plot_results``: a readable PNG of G and speed for one car."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.errors import InputError
from trackrider.plot import plot_results, read_car_series

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("plot") / "res"
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "weight_drop.toml"), "--out", str(out),
                                 "--duration", "1.0", "-q"])
    assert result.exit_code == 0, result.stderr
    return out


def test_plot_writes_a_png(results, tmp_path):
    png = tmp_path / "ride.png"
    result = runner.invoke(app, ["plot", str(results), "--out", str(png), "--car", "2"])
    assert result.exit_code == 0, result.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert not list(tmp_path.glob(".*tmp*"))


def test_plot_picks_train_and_car(results):
    name, d = read_car_series(results / "timeseries.csv", car=1, train="weight")
    assert name == "weight"
    assert np.all(np.diff(d["t"]) > 0)
    # the weight falls along its vertical track: s grows by ½ a t² from 2 m
    assert d["s"][-1] > d["s"][0]
    name, d2 = read_car_series(results / "timeseries.csv", car=3)
    assert name == "sled" and len(d2["t"]) == len(d["t"])
    assert "g_vertical_filtered" in d2


def test_plot_errors_name_the_problem(results, tmp_path):
    with pytest.raises(InputError, match="no rows for car 9"):
        plot_results(results, tmp_path / "x.png", car=9)
    with pytest.raises(InputError, match="no train or body named 'blue'"):
        plot_results(results, tmp_path / "x.png", train="blue")
    with pytest.raises(InputError, match="folder does not exist"):
        plot_results(results, tmp_path / "missing" / "x.png")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "timeseries.csv").write_text("a,b,c\n1,2,3\n")
    with pytest.raises(InputError, match="missing columns"):
        plot_results(bad, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
    result = runner.invoke(app, ["plot", str(results), "--out", str(tmp_path / "x.png"), "--car", "0"])
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_plot_height_profile_has_the_tracks_sections(results):
    from trackrider.plot import _profile

    name, d = read_car_series(results / "timeseries.csv", car=1, train="sled")
    s, z, sections, what = _profile(results, name, d)
    # the sled's track, not the tower's: only its own brake run (the file's second, unnamed brake)
    assert what == "height of the track" and s[0] == 0.0 and len(s) == len(z) > 100
    assert [(sec.label, sec.type, sec.s_from) for sec in sections] == [("brake 2", "brake", 200.0)]
    name, d = read_car_series(results / "timeseries.csv", car=1, train="weight")
    assert [sec.s_from for sec in _profile(results, name, d)[2]] == [12.0]


def test_plot_units_and_the_profile_without_a_scenario(results, tmp_path):
    import json
    import shutil

    png = tmp_path / "imperial.png"
    result = runner.invoke(app, ["plot", str(results), "--out", str(png), "--units", "imperial"])
    assert result.exit_code == 0, result.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    result = runner.invoke(app, ["plot", str(results), "--out", str(png), "--units", "yards"])
    assert result.exit_code == 2 and "--units must be one of metric, imperial" in result.stderr
    # the scenario is gone, but run kept a copy: the track's own profile
    moved = tmp_path / "moved"
    shutil.copytree(results, moved)
    summary = json.loads((moved / "summary.json").read_text())
    summary["scenario"] = str(tmp_path / "gone.toml")
    (moved / "summary.json").write_text(json.dumps(summary))
    from trackrider.plot import _profile

    name, d = read_car_series(moved / "timeseries.csv", car=1)
    assert _profile(moved, name, d)[3] == "height of the track"
    shutil.rmtree(moved / "inputs")
    # and no copy either: the car's own path gives the profile
    s, z, sections, what = _profile(moved, name, d)
    assert sections == [] and "no scenario" in what and np.all(np.diff(s) >= 0)
    assert plot_results(moved, tmp_path / "moved.png").is_file()


def test_plot_of_a_counterweight_shows_no_rider_g(results, tmp_path):
    """weight_drop's falling weight is a counterweight: its G panels say so instead of
    plotting G at a rider point nobody sits at; the sled's are plotted."""
    from trackrider.plot import _summary, has_riders

    summary = _summary(results)
    assert summary["trains"]["weight"]["role"] == "counterweight"
    assert not has_riders(summary, "weight") and has_riders(summary, "sled")
    assert has_riders({}, "weight")  # no summary to tell: plotted as a train with riders
    png = plot_results(results, tmp_path / "weight.png", train="weight")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
