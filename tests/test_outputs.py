"""The one output rule (trackrider/outputs.py) and its use by run, plot, render and sweep."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trackrider.errors import InputError
from trackrider.outputs import check_out_file, check_results_dir, check_sweep_dir, is_results_dir
from trackrider.results_folder import is_leftover

ROOT = Path(__file__).resolve().parents[1]
PENDULUM = ROOT / "scenarios" / "pendulum.toml"


def cli(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "trackrider.cli", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout)


def one_error_line(proc):
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ the rule itself

def test_a_single_file_is_replaced_only_with_overwrite(tmp_path):
    f = tmp_path / "ride.png"
    f.write_bytes(b"mine")
    with pytest.raises(InputError, match="--overwrite"):
        check_out_file(f)
    assert check_out_file(f, overwrite=True) == f
    with pytest.raises(InputError, match="folder"):
        check_out_file(tmp_path, overwrite=True)
    assert f.read_bytes() == b"mine"        # checking writes nothing


@pytest.mark.parametrize("bad", ["afile/sub", "/proc/trackrider-x/out"])
def test_paths_that_cannot_be_written_are_bad_input(tmp_path, bad):
    (tmp_path / "afile").write_text("x")
    path = tmp_path / bad if not bad.startswith("/") else Path(bad)
    with pytest.raises(InputError, match="cannot write"):
        check_results_dir(path)
    with pytest.raises(InputError, match="cannot write"):
        check_out_file(path / "x.png")


def test_a_folder_trackrider_did_not_write_is_refused_even_with_overwrite(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    for check in (check_results_dir, check_sweep_dir):
        with pytest.raises(InputError, match="overwrite"):
            check(mine)
        with pytest.raises(InputError, match="not a .* trackrider wrote"):
            check(mine, overwrite=True)
    assert (mine / "thesis.tex").read_text() == "years of work"


def test_leftover_part_files_do_not_count_as_results(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "timeseries.csv.part").write_text("t,train,car,\n0.01,")
    assert check_results_dir(out) == out           # no --overwrite needed
    assert not is_results_dir(out)


# ------------------------------------------------------------------ the commands

@pytest.mark.slow
def test_run_interrupted_rerun_keeps_the_old_results_and_a_part_file_does_not_block(tmp_path):
    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    out = tmp_path / "r"
    sc = load_scenario(PENDULUM)
    simulate(sc, out, duration=0.5)
    old_csv, old_summary = (out / "timeseries.csv").read_bytes(), (out / "summary.json").read_bytes()

    def interrupt(done, total):
        if done > 0.2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        simulate(sc, out, duration=1.0, overwrite=True, progress=interrupt)
    # the previous results are whole; the interrupted run left only its stage, with its rows so far
    assert (out / "timeseries.csv").read_bytes() == old_csv
    assert (out / "summary.json").read_bytes() == old_summary
    stages = [p for p in out.iterdir() if is_leftover(p)]
    assert len(stages) == 1 and (stages[0] / "timeseries.csv.part").read_text().startswith("t,train,car,")
    assert sorted(p.name for p in out.iterdir() if p not in stages) == ["summary.json", "timeseries.csv"]
    simulate(sc, out, duration=0.2, overwrite=True)   # the next run into the folder removes it
    assert sorted(p.name for p in out.iterdir()) == ["summary.json", "timeseries.csv"]

    fresh = tmp_path / "fresh"
    with pytest.raises(KeyboardInterrupt):
        simulate(sc, fresh, duration=1.0, progress=interrupt)
    (fresh / "timeseries.csv.part").write_text("partial")   # an earlier version's leftover
    r = simulate(sc, fresh, duration=0.2)         # leftovers only: no --overwrite needed
    assert r.status == "completed"
    assert sorted(p.name for p in fresh.iterdir()) == ["summary.json", "timeseries.csv", "timeseries.csv.part"]


def test_run_plot_render_refuse_to_replace_and_name_bad_paths(tmp_path):
    (tmp_path / "afile").write_text("x")
    existing = tmp_path / "ride.png"
    existing.write_bytes(b"mine")
    res = tmp_path / "res"
    res.mkdir()
    (res / "timeseries.csv").write_text("t,train,car,s\n")
    cases = [
        ("plot", res, "--out", existing),
        ("render", PENDULUM, "--out", existing),
        ("run", PENDULUM, "--out", tmp_path / "afile" / "sub"),
        ("run", PENDULUM, "--out", "/proc/trackrider-x"),
        ("plot", res, "--out", tmp_path / "afile" / "x.png"),
    ]
    for args in cases:
        p = cli(*args, timeout=60)
        assert p.returncode == 2, (args, p.stderr)
        assert one_error_line(p), (args, p.stderr)
    assert existing.read_bytes() == b"mine"


def test_sweep_overwrite_never_deletes_a_folder_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "data.csv").write_text("precious")
    (out / "plan.json").write_text(json.dumps({"my": "plan"}))
    p = cli("sweep", ROOT / "scenarios" / "sweep_tiny.toml", "--out", out, "--overwrite", "-j", "1", "--quiet")
    assert p.returncode == 2 and one_error_line(p), p.stderr
    assert (out / "runs" / "data.csv").read_text() == "precious"
    assert json.loads((out / "plan.json").read_text()) == {"my": "plan"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_folder_is_bad_input(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InputError, match="cannot write"):
            check_results_dir(ro / "out")
    finally:
        ro.chmod(0o700)


def test_run_overwrite_drops_the_old_report_and_keeps_foreign_files(tmp_path):
    """A report.html trackrider wrote describes the results it was made from: a rerun with
    --overwrite removes it (run --report writes the new one); a user's own file stays."""
    from typer.testing import CliRunner

    from trackrider.cli import app

    root = Path(__file__).resolve().parents[1]
    scenario = str(root / "scenarios" / "pendulum.toml")
    out = tmp_path / "res"
    runner = CliRunner()
    assert runner.invoke(app, ["run", scenario, "--out", str(out), "--duration", "0.2", "-q", "--report"]).exit_code == 0
    assert (out / "report.html").is_file()
    (out / "notes.txt").write_text("mine")
    assert runner.invoke(app, ["run", scenario, "--out", str(out), "--duration", "0.3", "-q",
                               "--overwrite"]).exit_code == 0
    assert not (out / "report.html").exists()
    assert (out / "notes.txt").read_text() == "mine"


def test_run_overwrite_refuses_a_foreign_inputs_or_report_before_running(tmp_path):
    from typer.testing import CliRunner

    from trackrider.cli import app

    root = Path(__file__).resolve().parents[1]
    scenario = str(root / "scenarios" / "pendulum.toml")
    out = tmp_path / "res"
    runner = CliRunner()
    assert runner.invoke(app, ["run", scenario, "--out", str(out), "--duration", "0.2", "-q"]).exit_code == 0
    before = (out / "summary.json").read_bytes()
    (out / "report.html").write_text("<html>my notes</html>")
    r = runner.invoke(app, ["run", scenario, "--out", str(out), "--duration", "0.3", "-q", "--overwrite", "--report"])
    assert r.exit_code == 2 and "report.html is not a report trackrider wrote" in r.stderr
    assert (out / "summary.json").read_bytes() == before
    (out / "report.html").unlink()
    shutil.rmtree(out / "inputs")
    (out / "inputs").write_text("mine")
    r = runner.invoke(app, ["run", scenario, "--out", str(out), "--duration", "0.3", "-q", "--overwrite"])
    assert r.exit_code == 2 and "inputs is not the copy" in r.stderr
    assert (out / "summary.json").read_bytes() == before and (out / "inputs").read_text() == "mine"


def test_sweep_overwrite_drops_the_old_sweeps_report(tmp_path):
    from typer.testing import CliRunner

    from trackrider.cli import app

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "sw"
    sweep = str(root / "scenarios" / "sweep_tiny.toml")
    runner = CliRunner()
    assert runner.invoke(app, ["sweep", sweep, "--out", str(out), "-j", "1", "-q"]).exit_code == 0
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    assert (out / "report.html").is_file()
    assert runner.invoke(app, ["sweep", sweep, "--out", str(out), "-j", "1", "-q", "--overwrite"]).exit_code == 0
    assert not (out / "report.html").exists()
