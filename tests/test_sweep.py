"""Parameter sweeps (trackrider/sweep.py): parsing, sampling, executors, resume."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from trackrider import sweep as sw
from trackrider import sweep_plan
from trackrider.errors import InputError


# ----------------------------------------------------------------- plumbing task

def arithmetic_task(task: dict) -> dict:
    """A module-level stand-in for run_one: figures computed from the axis values.

    Runs whose rolling value is 0.003 raise, as a crashing task would.
    """
    v = task["values"]
    rolling = float(v["resistance.rolling"])
    if rolling == 0.003:
        raise RuntimeError("boom in the task")
    drag = float(v.get("resistance.drag_area", 0.0))
    speed = 10.0 - 1000.0 * rolling - 2.0 * drag
    summary = {"status": "stalled" if speed < 6.0 else "completed", "simulated_s": 1.0,
               "events": [{"kind": "wheel_lift"}] if drag > 0.9 else [],
               "trains": {"red": {"min_crest_speed": speed, "max_g_vertical": 1 + drag}}}
    return {"run": task["run"], "seed": task["seed"], **v,
            **sw.summary_row(summary), "error": "", "wall_s": 0.0}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def plumbing(tmp_path, monkeypatch):
    """A 12-run grid over a base file that is not checked (no scenario loader needed)."""
    monkeypatch.setattr(sweep_plan, "check_axes", lambda spec: None)
    write(tmp_path / "base.toml", "[simulation]\nduration = 1.0\n")
    return write(tmp_path / "sweep.toml", """
[sweep]
scenario = "base.toml"
seed = 7
[axes]
"resistance.rolling" = {min = 0.001, max = 0.004, num = 4}
"resistance.drag_area" = [0.1, 0.5, 1.0]
""")


# ----------------------------------------------------------------- parsing

def sweep_file(tmp_path, body, sweep='scenario = "base.toml"'):
    write(tmp_path / "base.toml", "[simulation]\nduration = 1.0\n")
    return write(tmp_path / "s.toml", f"[sweep]\n{sweep}\n{body}")


@pytest.mark.parametrize("sweep, body, match", [
    ('scenario = "base.toml"\nmethod = "spiral"', '[axes]\n"a.b" = [1]', r"sweep\.method: must be one of"),
    ('scenario = "nope.toml"', '[axes]\n"a.b" = [1]', r"sweep\.scenario: no such scenario file"),
    ('scenario = "base.toml"\nmethod = "random"', '[axes]\n"a.b" = [1]', r"sweep\.samples: .*needs"),
    ('scenario = "base.toml"\nsamples = 3', '[axes]\n"a.b" = [1]', r"sweep\.samples: samples is for"),
    ('scenario = "base.toml"\ncolour = 1', '[axes]\n"a.b" = [1]', r"sweep\.colour: unknown key"),
    ('scenario = "base.toml"', '', r"axes: needs at least one axis"),
    ('scenario = "base.toml"', '[axes]\n"a.b" = []', r'axes\."a\.b": needs at least one value'),
    ('scenario = "base.toml"', '[axes]\n"a.b" = {min = 2, max = 1, num = 3}', r"max \(1\.0\) is below min"),
    ('scenario = "base.toml"', '[axes]\n"a.b" = {min = 1, max = 2}', r"needs 'num'"),
    ('scenario = "base.toml"', '[axes]\n"a.b" = {min = 1, max = 2, num = 0}', r"num: must be an integer >= 1"),
    ('scenario = "base.toml"\nmethod = "zip"', '[axes]\n"a.b" = [1, 2]\n"c.d" = [1, 2, 3]', r'axes\."c\.d": zip needs axes of equal length'),
    ('scenario = "base.toml"', '[axes]\na.b = [1, 2]', r'quote dotted axis keys'),
    ('scenario = "base.toml"', '[axes]\n"a.b" = = 1', r"s\.toml: line 4, column \d+: malformed TOML"),
    ('scenario = "base.toml"', '[axes]\n"a.b" = [1, 2', r"s\.toml: end of file: malformed TOML"),
])
def test_sweep_file_errors_are_one_line_and_name_file_and_key(tmp_path, sweep, body, match):
    path = sweep_file(tmp_path, body, sweep)
    with pytest.raises(InputError, match=match) as info:
        sw.load_sweep(path, check_scenario=False)
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path))


def test_grid_zip_plans(tmp_path):
    path = sweep_file(tmp_path, '[axes]\n"a.b" = [1.0, 2.0]\n"c.d" = {min = 0.0, max = 1.0, num = 3}')
    plan = sw.plan_runs(sw.load_sweep(path, check_scenario=False))
    assert [p["run"] for p in plan] == [f"{i:04d}" for i in range(6)]
    assert [tuple(p["values"].values()) for p in plan] == [
        (1.0, 0.0), (1.0, 0.5), (1.0, 1.0), (2.0, 0.0), (2.0, 0.5), (2.0, 1.0)]
    seeds = [c.generate_state(1, dtype=np.uint32)[0] for c in np.random.SeedSequence(0).spawn(6)]
    assert [p["seed"] for p in plan] == [int(s) for s in seeds]
    path = sweep_file(tmp_path, '[axes]\n"a.b" = [1.0, 2.0, 3.0]\n"c.d" = {min = 0.0, max = 1.0, num = 3}',
                      'scenario = "base.toml"\nmethod = "zip"')
    plan = sw.plan_runs(sw.load_sweep(path, check_scenario=False))
    assert [tuple(p["values"].values()) for p in plan] == [(1.0, 0.0), (2.0, 0.5), (3.0, 1.0)]


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_random_and_lhs_plans_are_deterministic_and_in_range(tmp_path, method):
    path = sweep_file(tmp_path, '[axes]\n"a.b" = {min = 1.0, max = 3.0}\n'
                      '"c.d" = {min = 0.01, max = 1.0, scale = "log"}\n"e.f" = ["x", "y"]',
                      f'scenario = "base.toml"\nmethod = "{method}"\nsamples = 40\nseed = 5')
    spec = sw.load_sweep(path, check_scenario=False)
    plan, again = sw.plan_runs(spec), sw.plan_runs(spec)
    assert plan == again and len(plan) == 40
    a = np.array([p["values"]["a.b"] for p in plan])
    c = np.array([p["values"]["c.d"] for p in plan])
    assert a.min() >= 1.0 and a.max() <= 3.0 and c.min() >= 0.01 and c.max() <= 1.0
    assert {p["values"]["e.f"] for p in plan} == {"x", "y"}
    if method == "lhs":
        # Latin hypercube: each of the 40 equal strata of each axis holds one point
        strata = np.floor((a - 1.0) / 2.0 * 40).astype(int)
        assert sorted(strata) == list(range(40))
        log_strata = np.floor(np.log(c / 0.01) / np.log(100.0) * 40).astype(int)
        assert sorted(log_strata) == list(range(40))
    other = sw.plan_runs(sw.SweepSpec(**{**spec.__dict__, "seed": 6}))
    assert [p["values"] for p in other] != [p["values"] for p in plan]


def test_summary_row_has_the_operation_figures_of_a_ride_with_block_sections():
    """Throughput and time held at block boundaries come from summary["operation"]
    (empty cells without it); collisions are counted in their own column."""
    summary = {"status": "completed", "simulated_s": 600.0,
               "trains": {"red": {"min_speed": 0.0}, "blue": {"min_speed": 0.5}},
               "events": [{"kind": "collision"}, {"kind": "dispatch"}, {"kind": "lap"}],
               "operation": {"throughput_trains_per_hour": 55.75, "riders_per_hour": 669.0,
                             "block_sections": {"lift": {"held_s": 29.0, "type": "lift"},
                                                "brake": {"held_s": 12.5, "type": "brake"},
                                                "station": {"held_s": 0.0, "type": "station"}}}}
    row = sw.summary_row(summary)
    assert (row["trains_per_hour"], row["riders_per_hour"], row["held_s"]) == (55.75, 669.0, 41.5)
    assert row["n_collision"] == 1 and row["n_other_events"] == 2 and row["n_events"] == 3
    assert row["min_speed"] == 0.0
    plain = sw.summary_row({"status": "completed", "trains": {"red": {"min_speed": 1.0}}})
    assert plain["trains_per_hour"] is None and plain["riders_per_hour"] is None and plain["held_s"] is None
    assert list(plain) == list(row)  # the same columns with or without operation


# ----------------------------------------------------------------- executors

def test_failing_task_is_recorded_and_sweep_goes_on(plumbing, tmp_path):
    res = sw.run_sweep(plumbing, out_dir=tmp_path / "out", jobs=2, progress=False,
                       task=arithmetic_task)
    assert len(res.rows) == 12 and res.n_run == 12
    failed = [r for r in res.rows if r["status"] == "error"]
    assert [r["resistance.rolling"] for r in failed] == [0.003] * 3
    assert all("RuntimeError: boom in the task" in r["error"] for r in failed)
    columns, rows = sw.read_table(res.csv_path)
    assert len(rows) == 12 and [r["run"] for r in rows] == sorted(r["run"] for r in rows)
    assert "wall_s" not in columns
    # a task that raised is the executor's failure, not the run's result: in the
    # table, not in the append log, so a resume runs exactly those again
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == 9
    rerun = []
    again = sw.run_sweep(plumbing, out_dir=tmp_path / "out", jobs=2, resume=True,
                         progress=lambda done, total, row: rerun.append(row["run"]),
                         task=arithmetic_task)
    assert sorted(rerun) == [r["run"] for r in failed] and again.n_resumed == 9
    text = sw.format_sweep_summary(res)
    assert "error: 3 run(s)" in text and "stalled:" in text and "wheel lift events in 3" in text


def test_existing_directory_needs_resume_or_overwrite(plumbing, tmp_path):
    sw.run_sweep(plumbing, out_dir=tmp_path / "out", jobs=1, progress=False,
                 task=arithmetic_task)
    with pytest.raises(InputError, match="exists; pass --resume"):
        sw.run_sweep(plumbing, out_dir=tmp_path / "out", jobs=1, progress=False,
                     task=arithmetic_task)
    res = sw.run_sweep(plumbing, out_dir=tmp_path / "out", jobs=1, progress=False,
                       task=arithmetic_task, resume=True)
    assert res.n_run == 3 and res.n_resumed == 9      # the 3 tasks that raised
    plumbing.write_text(plumbing.read_text().replace("seed = 7", "seed = 8"))
    with pytest.raises(InputError, match="no longer describes the runs"):
        sw.run_sweep(plumbing, out_dir=tmp_path / "out", progress=False,
                     task=arithmetic_task, resume=True)


def test_dask_missing_names_install_command(plumbing, tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.split(".")[0] in ("distributed", "dask"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(InputError, match=r"pip install trackrider\[dask\]"):
        sw.run_sweep(plumbing, out_dir=tmp_path / "out", scheduler="local",
                     progress=False, task=arithmetic_task)
    assert not (tmp_path / "out").exists()


def test_same_table_from_process_pool_and_dask_local_cluster(plumbing, tmp_path):
    distributed = pytest.importorskip("distributed")
    pool = sw.run_sweep(plumbing, out_dir=tmp_path / "pool", jobs=2, progress=False,
                        task=arithmetic_task)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = sw.run_sweep(plumbing, out_dir=tmp_path / "dask",
                            scheduler=cluster.scheduler_address, progress=False,
                            task=arithmetic_task)
    assert dask.backend.startswith("Dask scheduler inproc://")
    # DASK_SCHEDULER_ADDRESS stands in for --scheduler
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        os.environ["DASK_SCHEDULER_ADDRESS"] = cluster.scheduler_address
        try:
            env = sw.run_sweep(plumbing, out_dir=tmp_path / "env", progress=False,
                               task=arithmetic_task)
        finally:
            del os.environ["DASK_SCHEDULER_ADDRESS"]
    assert env.backend == f"Dask scheduler {cluster.scheduler_address}"
    assert env.csv_path.read_bytes() == pool.csv_path.read_bytes()
    one = sw.run_sweep(plumbing, out_dir=tmp_path / "one", jobs=1, progress=False,
                       task=arithmetic_task)
    table = pool.csv_path.read_bytes()
    assert len(table.splitlines()) == 13
    assert dask.csv_path.read_bytes() == table
    assert one.csv_path.read_bytes() == table


def test_resume_after_interruption_reruns_nothing_that_finished(plumbing, tmp_path):
    out = tmp_path / "out"

    def stop_after_five(done, total, row):
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sw.run_sweep(plumbing, out_dir=out, jobs=1, progress=stop_after_five,
                     task=arithmetic_task)
    logged = {json.loads(line)["run"] for line in (out / "runs.jsonl").read_text().splitlines()}
    assert len(logged) == 5
    _, partial = sw.read_table(out / "sweep.csv")
    assert {r["run"] for r in partial} == logged
    rerun = []
    res = sw.run_sweep(plumbing, out_dir=out, jobs=2, resume=True,
                       progress=lambda done, total, row: rerun.append(row["run"]),
                       task=arithmetic_task)
    assert res.n_resumed == 5 and res.n_run == 7
    assert sorted(rerun) == sorted(set(res.run_ids) - logged)
    full = sw.run_sweep(plumbing, out_dir=tmp_path / "full", jobs=2, progress=False,
                        task=arithmetic_task)
    assert res.csv_path.read_bytes() == full.csv_path.read_bytes()


# ----------------------------------------------------------------- real runs

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
TINY = SCENARIOS / "sweep_tiny.toml"
TINY_BASE = SCENARIOS / "sweep_tiny_base.toml"


def test_axis_naming_no_key_of_the_base_is_one_line_and_writes_nothing(tmp_path):
    path = write(tmp_path / "s.toml", f"""
[sweep]
scenario = "{TINY_BASE}"
[axes]
"train.red.car.mas" = [300.0, 500.0]
""")
    with pytest.raises(InputError, match=r's\.toml: axes\."train\.red\.car\.mas": not a key of '
                       r"the base scenario sweep_tiny_base\.toml: .*'mass'") as info:
        sw.run_sweep(path, out_dir=tmp_path / "out", progress=False)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "out").exists()
    path.write_text(path.read_text().replace('"train.red.car.mas" = [300.0, 500.0]',
                                             '"train.blue.car.mass" = [300.0]'))
    with pytest.raises(InputError, match=r'axes\."train\.blue\.car\.mass": .*no train named'):
        sw.load_sweep(path)
    path.write_text(path.read_text().replace('"train.blue.car.mass" = [300.0]',
                                             '"train.red.car.mass" = {min = -5.0, max = 500.0, num = 2}'))
    with pytest.raises(InputError, match=r'axes\."train\.red\.car\.mass": value -5\.0 rejected'):
        sw.load_sweep(path)


def test_real_sweep_same_table_through_process_pool_and_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    pool = sw.run_sweep(TINY, out_dir=tmp_path / "pool", jobs=2, progress=False)
    assert pool.n_run == 12 and pool.n_failed == 0
    assert {r["status"] for r in pool.rows} == {"completed"}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = sw.run_sweep(TINY, out_dir=tmp_path / "dask",
                            scheduler=cluster.scheduler_address, progress=False)
    assert dask.csv_path.read_bytes() == pool.csv_path.read_bytes()
    # the row is the run's summary.json, and the physics is ordered as it must be:
    # more rolling resistance -> lower top speed; more mass against the same drag
    # area -> higher top speed
    rows = {(r["train.red.car.mass"], r["resistance.rolling"], r["train.red.start_speed"]): r
            for r in pool.rows}
    for r in pool.rows:
        summary = json.loads((tmp_path / "pool" / "runs" / r["run"] / "summary.json").read_text())
        assert r["max_speed"] == summary["trains"]["red"]["max_speed"]
        assert math.isfinite(r["max_g_vertical"]) and r["simulated_s"] == pytest.approx(2.0)
    for mass in (300.0, 500.0):
        for v0 in (2.0, 6.0):
            speeds = [rows[(mass, mu, v0)]["max_speed"] for mu in (0.0, 0.01, 0.02)]
            assert speeds[0] > speeds[1] > speeds[2]
    for mu in (0.0, 0.01, 0.02):
        assert rows[(500.0, mu, 6.0)]["max_speed"] > rows[(300.0, mu, 6.0)]["max_speed"]


WARM_THEN_RUN = """
import json, sys
from trackrider import jit_cache, sweep as sw
keep = sys.argv[3] == "1"
values = {"train.red.car.mass": 300.0, "resistance.rolling": 0.01, "train.red.start_speed": 6.0}
sw.warm_up(sys.argv[1], values, keep)
loads = []
load = jit_cache.KernelCache.load_overload
jit_cache.KernelCache.load_overload = lambda self, *a: loads.append(self._name) or load(self, *a)
row = sw.run_one({"run": "r0", "seed": 0, "values": values, "scenario": sys.argv[1], "sweep_dir": sys.argv[2],
                  "duration": None, "keep_timeseries": keep})
print(json.dumps({"status": row["status"], "loads": loads}))
"""


@pytest.mark.parametrize("keep", [False, True])
def test_a_run_after_the_warm_up_loads_no_kernel(tmp_path, keep):
    """The driver's warm-up readies every kernel a run of the sweep uses (its outputs too, when the
    sweep keeps them): a worker forked after it loads none itself (each costs it time)."""
    import subprocess
    import sys

    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("kernels run as Python")
    proc = subprocess.run([sys.executable, "-c", WARM_THEN_RUN, str(TINY_BASE), str(tmp_path), "1" if keep else "0"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got == {"status": "completed", "loads": []}
    assert (tmp_path / "runs" / "r0" / "timeseries.csv").is_file() == keep


def test_warm_up_falls_back_to_the_base_scenario_when_the_first_run_is_bad(monkeypatch):
    from trackrider import sim

    seen = []
    monkeypatch.setattr(sim, "simulate", lambda scenario, **kw: seen.append((scenario, kw)))
    sw.warm_up(TINY_BASE, {"train.red.car.mass": 420.0}, False)
    sw.warm_up(TINY_BASE, {"train.red.car.mass": -1.0}, True)    # a bad run: the base is warmed
    assert [sc.trains[0].car.mass for sc, _ in seen] == [420.0, 400.0]
    assert seen[0][1]["out_dir"] is None and seen[1][1]["out_dir"] is not None
    assert seen[0][1]["duration"] == pytest.approx(3 / seen[0][0].simulation.record_hz)


def test_real_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    # 14 cars fit behind start_s = 40 m, and 2 cars behind 10 m, but 14 cars
    # behind 10 m do not: only that combination fails, inside its task
    base = write(tmp_path / "base.toml", TINY_BASE.read_text()
                 .replace("cars = 2", "cars = 2").replace("start_s = 20.0", "start_s = 40.0")
                 .replace("duration = 2.0", "duration = 0.5"))
    path = write(tmp_path / "s.toml", f"""
[sweep]
scenario = "{base.name}"
[axes]
"train.red.cars" = [2, 14]
"train.red.start_s" = [10.0, 40.0]
""")
    res = sw.run_sweep(path, out_dir=tmp_path / "out", jobs=2, progress=False)
    assert len(res.rows) == 4 and res.n_failed == 1
    bad = [r for r in res.rows if r["status"] == "error"][0]
    assert (bad["train.red.cars"], bad["train.red.start_s"]) == (14, 10.0)
    assert "does not fit" in bad["error"] and "\n" not in bad["error"]
    assert sum(r["status"] == "completed" for r in res.rows) == 3
    for r in res.rows:                         # each run's own outputs, complete
        files = sorted(p.name for p in (tmp_path / "out" / "runs" / r["run"]).iterdir())
        if r["status"] == "error":
            assert files == ["row.json"]
        else:
            assert files == ["row.json", "summary.json", "timeseries.csv"]
    assert "error: 1 run(s)" in sw.format_sweep_summary(tmp_path / "out")


def test_real_resume_reruns_nothing_that_finished(tmp_path):
    out = tmp_path / "out"

    def stop_after_four(done, total, row):
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sw.run_sweep(TINY, out_dir=out, jobs=2, progress=stop_after_four)
    finished = {p.name: (p / "row.json").stat().st_mtime_ns
                for p in (out / "runs").iterdir() if (p / "row.json").exists()}
    assert 4 <= len(finished) < 12
    res = sw.run_sweep(TINY, out_dir=out, jobs=2, resume=True, progress=False)
    assert res.n_resumed == len(finished) and res.n_run == 12 - len(finished)
    for run, mtime in finished.items():       # untouched: not run again
        assert (out / "runs" / run / "row.json").stat().st_mtime_ns == mtime
    assert [r["run"] for r in res.rows] == sw.run_ids(12)
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]
    again = sw.run_sweep(TINY, out_dir=tmp_path / "again", jobs=1, progress=False)
    assert again.csv_path.read_bytes() == res.csv_path.read_bytes()
    png = sw.plot_sweep(out, tmp_path / "sweep.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_command_prints_the_summary_and_the_table(tmp_path):
    lines = []
    code = sw.sweep_command(str(TINY), jobs=2, out=str(tmp_path / "cli"), quiet=False,
                            echo=lines.append)
    assert code == 0
    text = "\n".join(lines)
    assert "sweep sweep_tiny: 12 runs" in text and "lowest speed, m/s:" in text
    assert f"wrote {tmp_path / 'cli' / 'sweep.csv'} (12 runs, 12 run now, 0 failed" in text
    assert sw.is_sweep_dir(tmp_path / "cli") and not sw.is_sweep_dir(tmp_path)


# ----------------------------------------------------------------- the bundled rollback sweep

ROLLBACK = SCENARIOS / "sweep_rollback.toml"


def _rollback_runs():
    spec = sw.load_sweep(ROLLBACK)
    plan = sw.plan_runs(spec)
    return spec, {tuple(p["values"].values()): p for p in plan}


def test_rollback_sweep_full_calm_train_crests_and_empty_windy_worn_train_valleys(tmp_path):
    spec, runs = _rollback_runs()
    assert len(runs) == 27 and [ax.key for ax in spec.axes] == [
        "train.red.car.mass", "resistance.rolling", "resistance.drag_area"]
    rows = {}
    for key in [(550.0, 0.003, 0.3), (250.0, 0.011, 1.3)]:
        task = dict(runs[key], scenario=str(spec.scenario), sweep_dir=str(tmp_path),
                    duration=spec.duration, keep_timeseries=False)
        rows[key] = sw.run_one(task)
    full, empty = rows[(550.0, 0.003, 0.3)], rows[(250.0, 0.011, 1.3)]
    assert full["status"] == "completed" and full["valleyed"] is False
    assert full["n_rolled_back"] == 0 and full["min_crest_speed"] > 0.5
    assert empty["valleyed"] is True and empty["n_rolled_back"] >= 1
    assert empty["min_speed"] < -1.0            # it ran backwards down the second hill


@pytest.mark.slow
def test_rollback_sweep_valleys_are_monotone_in_load_resistance_and_wind(tmp_path):
    res = sw.run_sweep(ROLLBACK, out_dir=tmp_path / "rb", jobs=2, progress=False)
    assert res.n_failed == 0
    key = lambda r: (r["train.red.car.mass"], r["resistance.rolling"], r["resistance.drag_area"])
    valley = {key(r): r["valleyed"] for r in res.rows}
    assert 0 < sum(valley.values()) < len(valley)
    # a lighter train, more rolling resistance or more drag never does better
    for (m, mu, cda), v in valley.items():
        if v:
            for (m2, mu2, cda2), v2 in valley.items():
                if m2 <= m and mu2 >= mu and cda2 >= cda:
                    assert v2, ((m, mu, cda), (m2, mu2, cda2))


def _sweep_files():
    import tomllib

    return [p for p in sorted(SCENARIOS.glob("*.toml"))
            if "sweep" in tomllib.loads(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("path", _sweep_files(), ids=lambda p: p.name)
def test_every_bundled_sweep_file_validates_and_plans(path):
    spec = sw.load_sweep(path)                 # axes checked against the base
    plan = sw.plan_runs(spec)
    assert plan and len({p["run"] for p in plan}) == len(plan)
    assert len({tuple(p["values"].values()) for p in plan}) == len(plan)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_pool_workers_exit_when_their_driver_is_killed(tmp_path):
    """``kill -9`` of a sweep's driver leaves no pool worker behind (``sweep.exit_with_parent``)."""
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]

    def children(pid):
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
        return out

    # two runs long enough to outlast the polling below (sweep_tiny's whole pool lives about 0.6 s on a
    # warm cache, so the driver could finish between two looks): the bundled coaster held 3000 s
    sweep_file = tmp_path / "long.toml"
    sweep_file.write_text(f"""[sweep]
scenario = {str(root / "scenarios" / "classic_coaster.toml")!r}
method = "grid"
duration = 3000.0
keep_timeseries = false

[axes]
"train.red.car.mass" = [550.0, 600.0]
""", encoding="utf-8")
    log = tmp_path / "driver.log"
    with open(log, "wb") as err:
        driver = subprocess.Popen([sys.executable, "-m", "trackrider.cli", "sweep", str(sweep_file),
                                   "-j", "2", "--out", str(tmp_path / "sw")], cwd=root,
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 240
        workers = []
        while len(workers) < 2 and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.2)
            workers = children(driver.pid)
        assert len(workers) >= 2, (f"the pool's workers did not start (driver exit code {driver.poll()}): "
                                   + log.read_text(errors="replace")[-2000:])
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(Path(f"/proc/{w}").exists() for w in workers):
            time.sleep(0.2)
        alive = [w for w in workers if Path(f"/proc/{w}").exists()
                 and Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
        assert not alive, f"workers {alive} outlived their driver"
    finally:
        if driver.poll() is None:
            driver.kill()


def test_a_sweep_of_trains_long_enough_for_the_threads_runs_them_serially(tmp_path, monkeypatch):
    """A world of ``state.PARALLEL_BODIES`` bodies or more runs its per-car stages on the threads, but
    not in a sweep (``sweep.serial_stages``): its pool is forked from a driver whose warm-up would have
    started OpenMP's threads, which a forked worker cannot use (GNU OpenMP is not fork-safe: every
    worker died, BrokenProcessPool). Here every 2-car world counts as long; the setting is restored."""
    from trackrider.physics import state

    monkeypatch.setattr(state, "PARALLEL_BODIES", 2)
    monkeypatch.setattr(state, "MIN_THREADS", 1)
    res = sw.run_sweep(TINY, out_dir=tmp_path / "sw", jobs=2, progress=False)
    assert res.n_failed == 0 and len(res.rows) == 12
    assert state.PARALLEL_BODIES == 2
