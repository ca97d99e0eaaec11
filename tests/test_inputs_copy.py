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
