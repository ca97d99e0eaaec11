"""The bounds on the work a small file may ask for (trackrider/limits.py; docs/scenarios.md,
"Limits"): at each bound a scenario is answered within seconds and a few hundred MB, and just
beyond it is refused at once with one line naming the file and the key.

Each case loads and builds the scenario's world (what ``validate`` checks) in a process of its
own, which reports its CPU time (the machine's load does not change it), its wall time and its peak
resident memory (``VmHWM``: Linux's ``ru_maxrss`` of a process started from a large one, such as a
test runner late in a full run, counts the parent's memory too)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what "a few hundred MB" means here (the process with numpy, scipy and numba loaded is ~100 MB)
PEAK_LIMIT = 700 * 2**20
#: "within seconds" of CPU, with room for a slow CI machine (a refusal: REFUSE_LIMIT)
CPU_LIMIT = 60.0
REFUSE_LIMIT = 15.0

CHILD = textwrap.dedent("""
    import json, resource, sys, time

    def peak():
        try:
            with open("/proc/self/status") as fh:
                return next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmHWM:"))
        except (OSError, StopIteration):
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    sys.path.insert(0, sys.argv[2])
    t0, c0 = time.perf_counter(), time.process_time()
    from trackrider.errors import InputError
    from trackrider.scenario import build_world, load_scenario
    try:
        build_world(load_scenario(sys.argv[1]))
        answer = "ok"
    except InputError as exc:
        answer = "error: " + str(exc)
    print(json.dumps({"answer": answer, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                      "peak": peak()}))
""")


#: ``trackrider validate`` as a user runs it (its kernels lazy: Python originals until the work is large),
#: in a process of its own, measured from the small one that starts it (so its ``ru_maxrss`` is its own):
#: exit code, stderr, CPU s, peak bytes
VALIDATE = textwrap.dedent("""
    import json, resource, subprocess, sys
    p = subprocess.run([sys.executable, "-m", "trackrider.cli", "validate", sys.argv[1]], cwd=sys.argv[2],
                       capture_output=True, text=True)
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"code": p.returncode, "stderr": p.stderr, "cpu": r.ru_utime + r.ru_stime,
                      "peak": r.ru_maxrss * 1024}))
""")


def validate_cli(path):
    p = subprocess.run([sys.executable, "-c", VALIDATE, str(path), str(ROOT)], capture_output=True, text=True,
                       timeout=900)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"validate {Path(path).name}: exit {out['code']} in {out['cpu']:.1f} s CPU, peak {out['peak'] / 2**20:.0f} MB")
    return out


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    """The kernels compiled and cached first: compiling them peaks far above answering."""
    answer(ROOT / "scenarios" / "pendulum.toml")


def answer(path):
    p = subprocess.run([sys.executable, "-c", CHILD, str(path), str(ROOT)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"{Path(path).name}: {out['answer'][:100]} in {out['cpu']:.1f} s CPU ({out['wall']:.1f} s), peak {out['peak'] / 2**20:.0f} MB")
    return out


def curve_file(path, n, spacing):
    s = np.arange(n) * spacing
    np.savetxt(path, np.column_stack([s, 50.0 * np.sin(s / 400.0), 10.0 + 0.001 * s]), fmt="%.4f", delimiter=",",
               header="x,y,z", comments="")
    return path


def scenario(path, tracks, trains='[[train]]\nstart_s = 20.0\n[train.car]\nmass = 500.0\n', simulation=""):
    text = "[simulation]\n" + ("" if "duration" in simulation else "duration = 1.0\n") + simulation
    for i, track in enumerate(tracks):
        text += f'[[track]]\nname = "t{i}"\n{track}\n'
    path.write_text(text + trains.replace("[[train]]\n", '[[train]]\ntrack = "t0"\n'))
    return path


def straight(length):
    return f'segments = [{{type = "straight", length = {length}}}]'


def many_trains(cars, extra=""):
    """Four trains of ``cars // 4`` cars (2 m, gaps 0.5 m) on one 3 km straight."""
    return "".join(f'[[train]]\nname = "r{k}"\ncars = {cars // 4}\nstart_s = {630 + k * 650}\n'
                   f'[train.car]\nmass = 500.0\nlength = 2.0\n[train.coupling]\ngap = 0.5\n'
                   for k in range(4)) + extra


def check_ok(out):
    assert out["answer"] == "ok", out
    assert out["cpu"] < CPU_LIMIT and out["peak"] < PEAK_LIMIT, out


def check_refused(out, *words):
    assert out["answer"].startswith("error: ") and all(w in out["answer"] for w in words), out
    assert out["cpu"] < REFUSE_LIMIT and out["peak"] < PEAK_LIMIT, out


@pytest.mark.slow
def test_the_geometry_bounds_hold_at_the_bound_and_just_beyond(tmp_path):
    from trackrider import limits

    # points: a curve of 100 000 points (10 km, 0.1 m apart) loads; one more point is refused while reading
    pts = curve_file(tmp_path / "p.csv", limits.MAX_POINTS, 0.1)
    check_ok(answer(scenario(tmp_path / "points.toml", ['curve = "p.csv"'])))
    over = curve_file(tmp_path / "p1.csv", limits.MAX_POINTS + 1, 0.1)
    check_refused(answer(scenario(tmp_path / "points1.toml", ['curve = "p1.csv"'])), str(over), "100,000")
    # ... for all the scenario's curves together: the second curve is refused before it is fitted
    curve_file(tmp_path / "q.csv", 20, 1.0)
    check_refused(answer(scenario(tmp_path / "two.toml", ['curve = "p.csv"', 'curve = "q.csv"'])),
                  "q.csv", "tracks together")
    # length: a curve of 100 000 points over 45 km; 50 km of straight segments; 50.01 km refused from its values
    curve_file(tmp_path / "long.csv", limits.MAX_POINTS, 0.45)
    check_ok(answer(scenario(tmp_path / "long.toml", ['curve = "long.csv"'])))
    # ... and through `trackrider validate` (its lazy kernels): seconds of CPU, not minutes
    v = validate_cli(tmp_path / "long.toml")
    assert v["code"] == 0 and v["cpu"] < CPU_LIMIT and v["peak"] < PEAK_LIMIT, v
    check_ok(answer(scenario(tmp_path / "straight.toml", [straight(49_999.0)])))
    check_refused(answer(scenario(tmp_path / "straight1.toml", [straight(50_010.0)])), "track[0].segments",
                  "50 km")
    check_refused(answer(scenario(tmp_path / "two_straights.toml", [straight(30_000.0), straight(30_000.0)])),
                  "track[1].segments", "tracks together")
    # frame nodes: a tight helix near the bound, and one beyond it
    helix = 'segments = [{{type = "helix", radius = 2.0, pitch = 3.0, turns = {}}}]'
    check_ok(answer(scenario(tmp_path / "helix.toml", [helix.format(780)])))
    check_refused(answer(scenario(tmp_path / "helix1.toml", [helix.format(900)])), "track[0].segments",
                  "frame nodes", "250,000")
    # segments: 5 000 short ones build; 5 001 are refused before any is
    segs = "segments = [" + ", ".join(['{type = "straight", length = 0.5}'] * limits.MAX_SEGMENTS) + "]"
    check_ok(answer(scenario(tmp_path / "segs.toml", [segs])))
    check_refused(answer(scenario(tmp_path / "segs1.toml", [segs.replace("[{", "[{type = \"straight\", length = 0.5}, {", 1)])),
                  "track[0].segments", "5,000")
    # 120 000 short segments (3.5 MB of TOML): refused from their count, before any is built
    many = "segments = [" + ",".join(['{type="straight",length=0.1}'] * 120_000) + "]"
    check_refused(answer(scenario(tmp_path / "segs120k.toml", [many])), "120,000 segments")


@pytest.mark.slow
def test_the_cars_and_output_bounds_hold_at_the_bound_and_just_beyond(tmp_path):
    track = [straight(3000.0)]
    check_ok(answer(scenario(tmp_path / "cars.toml", track, many_trains(1000))))
    body = '[[body]]\nname = "b"\nmass = 1.0\nsize = [0.1, 0.1, 0.1]\nposition = [0, 50, 5]\n'
    check_refused(answer(scenario(tmp_path / "cars1.toml", track, many_trains(1000, body))), "body",
                  "1,001 cars and bodies")
    check_refused(answer(scenario(tmp_path / "cars_big.toml", track, many_trains(40_000))), "train[0].cars")
    # output: 1 000 cars for 3 125 samples is 1 GB of CSV by the count (320 bytes a row); one sample more is not
    check_ok(answer(scenario(tmp_path / "out.toml", track, many_trains(1000), "duration = 31.25\n")))
    check_refused(answer(scenario(tmp_path / "out1.toml", track, many_trains(1000), "duration = 31.26\n")),
                  "simulation.duration", "GB of timeseries.csv", "max_output_gb")
    check_ok(answer(scenario(tmp_path / "out2.toml", track, many_trains(1000),
                             "duration = 31.26\nmax_output_gb = 2.0\n")))
    check_refused(answer(scenario(tmp_path / "steps.toml", track, simulation="duration = 1e6\nrecord_hz = 1000\n")),
                  "simulation.duration")


def test_a_run_or_sweep_asking_for_too_much_output_is_refused_before_it_starts(tmp_path):
    from typer.testing import CliRunner

    from trackrider.cli import app

    runner = CliRunner()
    pendulum = ROOT / "scenarios" / "pendulum.toml"
    r = runner.invoke(app, ["run", str(pendulum), "--duration", "1e5", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "--duration" in r.stderr and "GB of timeseries.csv" in r.stderr, r.stderr
    assert not (tmp_path / "r").exists()
    base = tmp_path / "base.toml"
    base.write_text(pendulum.read_text())
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('[sweep]\nscenario = "base.toml"\nmethod = "random"\nsamples = 10000\nduration = 600\n'
                     '[axes]\n"train.bead.car.mass" = {min = 1.0, max = 2.0}\n')
    r = runner.invoke(app, ["sweep", str(sweep), "--out", str(tmp_path / "sw")])
    assert r.exit_code == 2 and "sweep.keep_timeseries" in r.stderr and "10,000 runs" in r.stderr, r.stderr
    assert not (tmp_path / "sw").exists()
    sweep.write_text(sweep.read_text().replace("duration = 600\n", "duration = 600\nkeep_timeseries = false\n"))
    from trackrider.sweep import load_sweep

    assert load_sweep(sweep).keep_timeseries is False      # no timeseries kept: nothing to bound
