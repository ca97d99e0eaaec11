"""Results that stand alone: run keeps the scenario and its curve files in
DIR/inputs/; readers use the copy when the original moved or changed."""
from __future__ import annotations

import json
from types import SimpleNamespace

from trackrider.inputs_copy import keep_inputs, scenario_for_results


def _scenario(tmp_path):
    d = tmp_path / "proj"
    (d / "curves").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (d / "curves" / "a.csv").write_text("x,y,z\n0,0,0\n1,0,0\n")
    (tmp_path / "shared" / "b.csv").write_text("x,y,z\n0,0,1\n2,0,1\n")
    scen = d / "ride.toml"
    scen.write_text('[[track]]\ncurve = "curves/a.csv"\n[[track]]\ncurve = "../shared/b.csv"\n')
    tracks = [SimpleNamespace(curve=d / "curves" / "a.csv"), SimpleNamespace(curve=tmp_path / "shared" / "b.csv")]
    return SimpleNamespace(path=scen, tracks=tracks), scen


def test_run_keeps_the_scenario_and_its_curves(tmp_path):
    scenario, scen = _scenario(tmp_path)
    res = tmp_path / "res"
    res.mkdir()
    copy = keep_inputs(scenario, res)
    assert copy == res / "inputs" / "ride.toml"
    assert (res / "inputs" / "curves" / "a.csv").read_text() == (scen.parent / "curves" / "a.csv").read_text()
    # a path leaving the scenario's folder: copied under curves/ and the copy's string rewritten
    assert (res / "inputs" / "curves" / "b.csv").is_file()
    assert '"curves/b.csv"' in copy.read_text() and "../shared" not in copy.read_text()
    manifest = json.loads((res / "inputs" / "manifest.json").read_text())
    assert manifest["scenario"]["original"] == str(scen.resolve())
    assert len(manifest["curves"]) == 2
    # unchanged originals: use them, say nothing
    assert scenario_for_results(res, scen) == (scen, None)


def test_a_moved_or_changed_original_gives_the_copy_and_a_note(tmp_path):
    scenario, scen = _scenario(tmp_path)
    res = tmp_path / "res"
    res.mkdir()
    keep_inputs(scenario, res)
    (scen.parent / "curves" / "a.csv").write_text("x,y,z\n0,0,0\n5,0,0\n")  # a curve changed
    use, note = scenario_for_results(res, scen)
    assert use == res / "inputs" / "ride.toml"
    assert "a.csv" in note and "changed or moved" in note and str(res / "inputs") in note
    scen.unlink()  # the scenario moved away
    use, note = scenario_for_results(res, scen)
    assert use == res / "inputs" / "ride.toml" and "no longer exists" in note


def test_results_without_a_copy_use_the_original(tmp_path):
    scen = tmp_path / "x.toml"
    scen.write_text("")
    assert scenario_for_results(tmp_path, scen) == (scen, None)
    scen.unlink()
    assert scenario_for_results(tmp_path, scen) == (None, None)


def test_two_curves_of_one_name_from_different_folders_are_both_kept(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    for sub, text in (("c1", "x,y,z\n0,0,0\n1,0,0\n"), ("c2", "x,y,z\n0,0,5\n3,0,5\n")):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "loop.csv").write_text(text)
    scen = d / "s.toml"
    scen.write_text('[[track]]\ncurve = "../c1/loop.csv"\n[[track]]\ncurve = "../c2/loop.csv"\n')
    tracks = [SimpleNamespace(curve=tmp_path / "c1" / "loop.csv"), SimpleNamespace(curve=tmp_path / "c2" / "loop.csv")]
    res = tmp_path / "res"
    res.mkdir()
    copy = keep_inputs(SimpleNamespace(path=scen, tracks=tracks), res)
    manifest = json.loads((res / "inputs" / "manifest.json").read_text())
    copies = [c["copy"] for c in manifest["curves"]]
    assert len(set(copies)) == 2
    for c in manifest["curves"]:
        assert (res / "inputs" / c["copy"]).read_text() == open(c["original"]).read()
        assert f'"{c["copy"]}"' in copy.read_text()


def test_readers_rebuild_the_ride_as_run_with_its_overrides(tmp_path):
    """summary.json keeps the run's --set overrides; report, plot and render rebuild that ride,
    from the copy when the original changed."""
    from pathlib import Path

    from typer.testing import CliRunner

    from trackrider.cli import app
    from trackrider.inputs_copy import load_results_scenario

    root = Path(__file__).resolve().parents[1]
    scen = tmp_path / "p.toml"
    scen.write_text((root / "scenarios" / "pendulum.toml").read_text())
    out = tmp_path / "r"
    result = CliRunner().invoke(app, ["run", str(scen), "--out", str(out), "--duration", "0.2", "-q",
                                      "--set", "track.0.segments.1.radius=5.0"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overrides"] == {"track.0.segments.1.radius": 5.0}
    sc, note = load_results_scenario(out, summary)
    assert abs(sc.tracks[0].track.length - 2 * 3.141592653589793 * 5.0) < 1e-6 and not note
    scen.write_text(scen.read_text().replace("radius = 2.0", "radius = 7.0"))   # the original changes
    seen = []
    sc, note = load_results_scenario(out, summary, notice=seen.append)
    assert abs(sc.tracks[0].track.length - 2 * 3.141592653589793 * 5.0) < 1e-6
    assert seen and "using the copy" in seen[0]
