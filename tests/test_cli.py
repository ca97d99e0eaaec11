"""The command line: help, version, run outputs, no-overwrite, determinism, exit codes.

Through typer's CliRunner (in process) and as real subprocesses (``python
cli.py`` from the checkout and ``python -m trackrider.cli``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import trackrider
from trackrider.cli import app
from trackrider.errors import SimulationError

ROOT = Path(__file__).resolve().parents[1]
PENDULUM = ROOT / "scenarios" / "pendulum.toml"
runner = CliRunner()


def one_error_line(result, code=2):
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    err = result.stderr
    assert err.startswith("error: ") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err + result.stdout
    return err


# --------------------------------------------------------------------------- help and version


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    first, second = result.stdout.strip().splitlines()
    assert first == f"trackrider {trackrider.__version__}"
    assert second.startswith("compiled kernels: ")


@pytest.mark.parametrize("command", ["run", "validate", "curve", "plot", "render", "sweep"])
def test_every_command_has_help_with_an_example(command):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout
    assert f"trackrider {command} " in result.stdout


def test_top_level_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "validate", "curve", "plot", "render", "sweep"):
        assert command in result.stdout


# --------------------------------------------------------------------------- run


def test_run_writes_outputs_and_summary_table(tmp_path):
    out = tmp_path / "res"
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", "1.0"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    assert header[:17] == ["t", "train", "car", "s", "x", "y", "z", "speed", "accel", "g_vertical", "g_lateral",
                           "g_longitudinal", "wheel_load", "lateral_load", "motor_force", "kinetic_energy",
                           "potential_energy"]
    assert {"qw", "qx", "qy", "qz"} <= set(header)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["simulated_s"] == pytest.approx(1.0)
    assert summary["steps"] == 1000
    assert summary["scenario"] == str(PENDULUM)
    for key in ("max_speed", "min_speed", "max_g_vertical", "min_g_vertical", "max_abs_g_lateral",
                "max_abs_g_longitudinal", "airtime_s", "energy_drift"):
        assert key in summary["trains"]["bead"]
    # the summary table: speed, G extremes, airtime, events, status, wall time, × real time
    text = result.stdout
    for piece in ("bead", "top speed", "G vertical", "airtime", "status: completed", "events: 0",
                  "wall time", "real time"):
        assert piece in text, piece
    bead = summary["trains"]["bead"]      # the pendulum swings towards −s: its top speed is −min_speed
    assert f"{max(bead['max_speed'], -bead['min_speed']):.1f} m/s" in text
    assert not list(out.glob("*.part"))


def test_run_quiet_prints_nothing(tmp_path):
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "q"), "--duration", "0.1", "-q"])
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""


def test_default_output_dir_is_results_stem(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", str(PENDULUM), "--duration", "0.1", "-q"])
    assert result.exit_code == 0
    assert (tmp_path / "results" / "pendulum" / "summary.json").is_file()


def test_no_overwrite_without_flag(tmp_path):
    out = tmp_path / "res"
    assert runner.invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", "0.2", "-q"]).exit_code == 0
    before = {str(p): p.read_bytes() for p in out.rglob("*") if p.is_file()}  # inputs/ too
    err = one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", "0.1", "-q"]))
    assert "--overwrite" in err and str(out) in err
    assert {str(p): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", "0.1", "-q", "--overwrite"])
    assert result.exit_code == 0
    assert json.loads((out / "summary.json").read_text())["simulated_s"] == pytest.approx(0.1)


def test_out_is_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("keep me")
    one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(target), "-q", "--duration", "0.1"]))
    assert target.read_text() == "keep me"


def test_deterministic_byte_identical_csv(tmp_path):
    for name in ("a", "b"):
        result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "weight_drop.toml"), "--out",
                                     str(tmp_path / name), "--duration", "1.5", "-q"])
        assert result.exit_code == 0
    a = (tmp_path / "a" / "timeseries.csv").read_bytes()
    assert a == (tmp_path / "b" / "timeseries.csv").read_bytes()
    sa = json.loads((tmp_path / "a" / "summary.json").read_text())
    sb = json.loads((tmp_path / "b" / "summary.json").read_text())
    for s in (sa, sb):
        s.pop("wall_s")
    assert sa == sb


@pytest.mark.parametrize("duration", ["0", "-1", "nan", "inf", "1e12"])
def test_bad_duration(duration, tmp_path):
    err = one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "o"), "--duration",
                                             duration, "-q"]))
    assert "duration" in err
    assert not (tmp_path / "o").exists()


def test_missing_scenario_file(tmp_path):
    err = one_error_line(runner.invoke(app, ["run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")]))
    assert "nope.toml" in err and "not found" in err
    assert not (tmp_path / "o").exists()


def test_a_build_error_is_exit_2_naming_the_joint(tmp_path):
    path = tmp_path / "hinge.toml"
    path.write_text(PENDULUM.read_text() + textwrap.dedent("""
        [[body]]
        name = "door"
        mass = 5.0
        size = [1.0, 0.1, 2.0]
        position = [0.0, 5.0, 1.0]

        [[joint]]
        type = "hinge"
        a = "door"
        b = "world"
        axis = [0.0, 0.0, 0.0]
        """))
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "o"), "-q"])
    err = one_error_line(result)                          # a zero hinge axis
    assert "joint[1]" in err and str(path) in err      # the pendulum has its rod as joint[0]
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- exit 1 paths


def test_simulation_error_is_exit_1_one_line(tmp_path, monkeypatch):
    import trackrider.sim

    def boom(*args, **kwargs):
        raise SimulationError("non-finite state", t=1.25, entity="red car 2")

    monkeypatch.setattr(trackrider.sim, "simulate", boom)
    err = one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "o"), "-q"]), code=1)
    assert "t = 1.2500 s" in err and "red car 2" in err


def test_diverged_result_is_exit_1(tmp_path, monkeypatch):
    import trackrider.sim

    class Diverged:
        status = "diverged"
        message = "simulation diverged at t = 0.5 s (bead car 1)"
        summary = {"status": "diverged", "simulated_s": 0.5, "steps": 500, "wall_s": 0.1, "events": [],
                   "trains": {}}

    monkeypatch.setattr(trackrider.sim, "simulate", lambda *a, **k: Diverged())
    err = one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "o"), "-q"]), code=1)
    assert "t = 0.5 s" in err and "kept" in err


def test_unexpected_exception_is_one_line_internal_error(tmp_path, monkeypatch):
    import trackrider.sim

    def bug(*args, **kwargs):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(trackrider.sim, "simulate", bug)
    err = one_error_line(runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "o"), "-q"]), code=1)
    assert "internal error" in err and "ZeroDivisionError" in err
    monkeypatch.setenv("TRACKRIDER_DEBUG", "1")
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "o2"), "-q"])
    assert isinstance(result.exception, ZeroDivisionError)


# --------------------------------------------------------------------------- curve, plot, render input errors


def test_curve_report(tmp_path):
    """The figures printed are the curve's own: its point count, length, height range, closedness."""
    import re

    import numpy as np

    from trackrider.curves.io import load_curve

    path = ROOT / "curves" / "first_drop.csv"
    result = runner.invoke(app, ["curve", str(path)])
    assert result.exit_code == 0, result.stderr
    track = load_curve(path)
    fields = dict(re.findall(r"^([a-z |]+):\s+(.*)$", result.stdout, re.M))
    assert f"{len(track.points)} points" in fields["curve"]
    assert float(fields["length"].split()[0]) == pytest.approx(track.length, abs=5e-4)
    z = track.frames(np.linspace(0.0, track.length, 20001)).position[:, 2]
    lo, hi = (float(v) for v in fields["height range"].split()[0:3:2])
    assert lo == pytest.approx(z.min(), abs=2e-3) and hi == pytest.approx(z.max(), abs=2e-3)
    assert fields["closed"] == ("yes" if track.closed else "no")


CURVE_CASES = [
    ("garbage.csv", "this is not a curve\nat all\n", "points"),
    ("binary.csv", b"\x00\x01\x02\x03\xff\xfe" * 20, "auto"),
    ("empty.csv", "", "auto"),
    ("one_point.csv", "x,y,z\n0,0,0\n", "points"),
    ("nan.csv", "x,y,z\n0,0,0\n1,0,nan\n2,0,0\n3,0,0\n4,0,0\n5,0,0\n6,0,0\n", "points"),
    ("short_row.csv", "x,y,z\n0,0,0\n1,0\n2,0,0\n3,0,0\n4,0,0\n5,0,0\n6,0,0\n", "points"),
    ("bad.json", "{\"points\": [[0, 0, 0], [1, 0", "json"),
    ("nopoints.json", "{\"closed\": false}", "json"),
    ("garbage_nl2.csv", "No.,PosX\n1,abc\n", "nl2"),
    ("repeated.csv", "x,y,z\n" + "1,1,1\n" * 10, "points"),
]


@pytest.mark.parametrize("name,content,fmt", CURVE_CASES, ids=[c[0] for c in CURVE_CASES])
def test_malformed_curve_files_exit_2(name, content, fmt, tmp_path):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    err = one_error_line(runner.invoke(app, ["curve", str(path), "--format", fmt]))
    assert name in err
    # the same file named by a scenario: validate and run fail the same way, nothing written
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(f"""
        [simulation]
        duration = 1.0
        [[track]]
        curve = "{name}"
        format = "{fmt}"
        [[train]]
        [train.car]
        mass = 500.0
        """))
    err = one_error_line(runner.invoke(app, ["validate", str(scenario)]))
    assert name in err
    one_error_line(runner.invoke(app, ["run", str(scenario), "--out", str(tmp_path / "o"), "-q"]))
    assert not (tmp_path / "o").exists()


def test_curve_missing_and_bad_format(tmp_path):
    one_error_line(runner.invoke(app, ["curve", str(tmp_path / "nope.csv")]))
    one_error_line(runner.invoke(app, ["curve", str(ROOT / "curves" / "first_drop.csv"), "--format", "dxf"]))


def test_plot_input_errors(tmp_path):
    one_error_line(runner.invoke(app, ["plot", str(tmp_path / "nothing"), "--out", str(tmp_path / "p.png")]))
    (tmp_path / "empty").mkdir()
    one_error_line(runner.invoke(app, ["plot", str(tmp_path / "empty"), "--out", str(tmp_path / "p.png")]))
    one_error_line(runner.invoke(app, ["plot", str(tmp_path / "empty"), "--out", str(tmp_path / "p.jpg")]))
    assert not (tmp_path / "p.png").exists()


def test_render_input_errors(tmp_path):
    one_error_line(runner.invoke(app, ["render", str(tmp_path / "none"), "--out", str(tmp_path / "v.mp4")]))
    one_error_line(runner.invoke(app, ["render", str(PENDULUM), "--out", str(tmp_path / "v.avi")]))
    one_error_line(runner.invoke(app, ["render", str(PENDULUM), "--out", str(tmp_path / "v.mp4"),
                                       "--camera", "drone"]))
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- real subprocesses


def _env():
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_tests")
    env.pop("TRACKRIDER_DEBUG", None)
    return env


def test_subprocess_checkout_shim_run_and_errors(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.run([sys.executable, "cli.py", "run", str(PENDULUM), "--out", str(out), "--duration", "0.5"],
                          cwd=ROOT, capture_output=True, text=True, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "status: completed" in proc.stdout
    assert proc.stderr == ""          # no progress bar when stderr is not a terminal
    assert (out / "timeseries.csv").is_file()
    bad = tmp_path / "bad.toml"
    bad.write_text("[simulation]\nduration = -1\n")
    proc = subprocess.run([sys.executable, "-m", "trackrider.cli", "run", str(bad), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, env=_env(), timeout=600)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {bad}: simulation.duration: must be > 0 s, got -1\n"
    assert proc.stdout == "" and not (tmp_path / "o").exists()


def test_subprocess_run_never_imports_vtk(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from trackrider.cli import app
        try:
            app(["run", {str(PENDULUM)!r}, "--out", {str(tmp_path / "r")!r}, "--duration", "0.1", "-q"])
        except SystemExit as exc:
            assert not exc.code, exc.code
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("vtk", "vtkmodules", "pyvista", "matplotlib"))
        print(heavy)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_progress_bar_on_a_terminal_only(tmp_path, monkeypatch):
    import trackrider.cli as cli
    import trackrider.sim

    calls = []
    real = trackrider.sim.simulate

    def spy(*args, progress=None, **kwargs):
        calls.append(progress)
        return real(*args, progress=progress, **kwargs)

    monkeypatch.setattr(trackrider.sim, "simulate", spy)
    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "a"), "--duration", "0.5"])
    assert result.exit_code == 0, result.stderr
    assert callable(calls[-1])
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "b"), "--duration", "0.5", "-q"])
    assert result.exit_code == 0 and calls[-1] is None          # --quiet: no bar
    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: False)
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(tmp_path / "c"), "--duration", "0.5"])
    assert result.exit_code == 0 and calls[-1] is None and result.stderr == ""


@pytest.mark.parametrize("args", [["run", str(PENDULUM), "--duration", "abc"], ["runn"], ["validate"],
                                  ["run", str(PENDULUM), "--bogus"], ["plot", "x"],
                                  ["plot", "x", "--out", "x.png", "--car", "1.5"]])
def test_usage_errors_are_one_line_exit_2(args):
    err = one_error_line(runner.invoke(app, args))
    assert "--help" in err


def test_values_are_converted_without_pydantic(tmp_path):
    """typer would convert every option's value through pydantic (0.2–0.4 s to import and set up);
    the CLI converts its str, int, float and list values itself, with the same messages."""
    from typer.core import TyperGroup

    from trackrider import cli

    code = ("import sys; sys.argv = ['trackrider', 'validate', sys.argv[1], '--set', 'train.bead.car.mass=80']\n"
            "from trackrider.cli import app\n"
            "try:\n    app()\nexcept SystemExit as e:\n    print(e.code, 'pydantic' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(PENDULUM)], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout.split()[-2:] == ["0", "False"], proc.stderr
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    ctx = group.make_context("trackrider", ["plot", "x", "--out", "y.png"], resilient_parsing=True)
    plot = group.get_command(ctx, "plot")
    by_name = {p.name: p for p in plot.get_params(ctx)}
    assert by_name["car"].get_runtime_param().coerce("3.0", param=by_name["car"], ctx=ctx) == 3
    assert by_name["out"].get_runtime_param().coerce("a.png", param=by_name["out"], ctx=ctx) == "a.png"
    assert type(by_name["help"].get_runtime_param()).__name__ == type(by_name["car"].get_runtime_param()).__name__
    assert cli._PLAIN_CLASS is not None


def test_no_arguments_shows_help():
    result = runner.invoke(app, [])
    assert result.exit_code == 2 and "Usage:" in result.stdout + result.stderr


def test_running_off_the_track_is_a_result_not_a_failure(tmp_path):
    out = tmp_path / "off"
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "first_drop.toml"), "--out", str(out),
                                 "--duration", "8", "-q"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ran_off_track"
    assert any(e["kind"] == "ran_off_track" and e["train"] == "car" for e in summary["events"])


def test_set_overrides_keys_from_the_command_line(tmp_path):
    out = tmp_path / "heavy"
    result = runner.invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", "0.5", "-q",
                                 "--set", "train.bead.car.mass=2.5", "--set", "simulation.record_hz=100"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["record_hz"] == 100
    err = one_error_line(runner.invoke(app, ["validate", str(PENDULUM), "--set", "train.bead.car.mass=-1"]))
    assert "train[0].car.mass: must be > 0" in err
    err = one_error_line(runner.invoke(app, ["validate", str(PENDULUM), "--set", "train.bead.car.colour=red"]))
    assert "no key" in err
    one_error_line(runner.invoke(app, ["validate", str(PENDULUM), "--set", "oops"]))


# --------------------------------------------------------------------------- sweep


def test_sweep_with_a_bad_axis_is_one_error_line_and_writes_nothing(tmp_path):
    base = ROOT / "scenarios" / "sweep_tiny_base.toml"
    sweep = tmp_path / "bad_sweep.toml"
    sweep.write_text(textwrap.dedent(f"""\
        [sweep]
        scenario = "{base.as_posix()}"
        method = "grid"
        [axes]
        "train.red.car.mas" = [300.0, 500.0]
        """))
    out = tmp_path / "sweep_out"
    err = one_error_line(runner.invoke(app, ["sweep", str(sweep), "--out", str(out), "-j", "1"]))
    assert "train.red.car.mas" in err and "bad_sweep.toml" in err
    assert not out.exists()


def test_sweep_runs_through_the_cli_and_plot_draws_it(tmp_path):
    out = tmp_path / "tiny"
    result = runner.invoke(app, ["sweep", str(ROOT / "scenarios" / "sweep_tiny.toml"), "--out", str(out),
                                 "-j", "1", "--quiet"])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    rows = (out / "sweep.csv").read_text().splitlines()
    assert len(rows) == 1 + 12
    png = tmp_path / "sweep.png"
    result = runner.invoke(app, ["plot", str(out), "--out", str(png)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert png.stat().st_size > 10_000
