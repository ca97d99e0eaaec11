"""run_world / simulate: streaming, outputs, divergence, interruption, determinism.

The first half drives ``run_world`` with a stand-in world that follows the
``World.run`` contract (docs/ARCHITECTURE.md) with analytic samples, so the
plumbing is tested on its own; the second half runs the real physics end to
end against closed-form answers.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from trackrider.errors import InputError
from trackrider.physics import channels as ch
from trackrider.physics.world import RunStatus
from trackrider.record import CSV_NAME, SUMMARY_NAME, read_summary, read_timeseries
from trackrider.results_folder import is_leftover
from trackrider.sim import Result, run_world

#: the kernels are compiled once, before the first test here (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("warm_kernels")

ROOT = Path(__file__).resolve().parents[1]


class StandInWorld:
    """Implements the whole ``trackrider.sim.World`` protocol: two cars of train "red" and a body "bob".

    The cars move along x at speed 10 + sin t with g_vertical 1 + 0.5 sin 20t;
    ``diverge_at`` (s) makes ``run`` stop with a diverged status there;
    ``sleep`` (s per chunk) slows it down; ``initial_sample`` records t = 0 at
    the start of every call (the sim must not record an instant twice).
    """

    def __init__(self, dt=0.001, diverge_at=None, sleep=0.0, initial_sample=False, interrupt_at=None):
        self.dt = dt
        self.gravity = 9.81
        self.entity_labels = [("red", 1), ("red", 2), ("bob", 1)]
        self.entity_train = [0, 0, -1]
        self.n_entities = 3
        self.trains = ({"name": "red", "track": 0, "n": 2, "cg": 0.0, "railway": False, "suspended": False},)
        self.gauges = (1.0,)
        self.joints = ()
        self.mechanisms, self.mechanism_events = [], []
        self.contact_trains, self.contact_ends = [], []
        self.operation = None
        self.network = None
        self.railway = None
        self.pos, self.quat = np.zeros((3, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
        self.mass = np.array([600.0, 600.0, 10.0])
        self.step_count = 0
        self.time = 0.0
        self.calls = 0
        self.diverge_at = diverge_at
        self.interrupt_at = interrupt_at
        self.sleep = sleep
        self.initial_sample = initial_sample

    def samples(self, t):
        m = len(t)
        s = np.zeros((m, 3, ch.N_CHANNELS))
        v = 10.0 + np.sin(t)
        s[:, :, ch.S] = (10 * t - np.cos(t) + 1)[:, None] - np.array([0.0, 2.5, 0.0])
        s[:, :, ch.X] = s[:, :, ch.S]
        s[:, :, ch.SPEED] = v[:, None]
        s[:, :, ch.ACCEL] = np.cos(t)[:, None]
        s[:, :, ch.G_VERTICAL] = (1.0 + 0.5 * np.sin(20 * t))[:, None]
        s[:, :, ch.WHEEL_LOAD] = 600 * 9.81
        s[:, :, ch.KINETIC_ENERGY] = (0.5 * 600 * v ** 2)[:, None]
        s[:, :, ch.POTENTIAL_ENERGY] = (0.5 * 600 * (11.0 ** 2 - v ** 2))[:, None]   # energy kept (divergence test)
        s[:, :, ch.QW] = 1.0
        s[:, :, ch.SECTION] = -1
        s[:, :, ch.FLAGS] = ch.ON_TRACK
        s[:, 2, list(ch.TRACK_CHANNELS)] = np.nan
        s[:, 2, ch.FLAGS] = ch.FREE_BODY
        s[:, 2, ch.Z] = -1.0
        return s

    def run(self, n_steps, record_every, sink, progress=None):
        self.calls += 1
        if self.sleep:
            time.sleep(self.sleep)
        k0 = self.step_count
        steps = np.arange(k0 + 1, k0 + n_steps + 1)
        steps = steps[steps % record_every == 0]
        t = steps * self.dt
        if self.interrupt_at is not None and len(t) and t[-1] >= self.interrupt_at:
            raise KeyboardInterrupt
        status = RunStatus("ok", n_steps)
        if self.diverge_at is not None and len(t) and t[-1] >= self.diverge_at:
            t = t[t < self.diverge_at]
            status = RunStatus("diverged", n_steps, self.diverge_at, 1, None, "non-finite velocity")
            n_steps = int(round(self.diverge_at / self.dt)) - k0
        if self.initial_sample:
            t0 = np.array([k0 * self.dt])
            sink(t0, self.samples(t0))
        if len(t):
            sink(t, self.samples(t))
        self.step_count = k0 + n_steps
        self.time = self.step_count * self.dt
        return status


def test_in_memory_timeseries_and_summary(tmp_path):
    r = run_world(StandInWorld(), 5.0, 100, meta={"scenario": "/x/y.toml"})
    assert isinstance(r, Result) and r.out_dir is None and r.status == "completed" and r.ok
    ts = r.timeseries
    assert len(ts["t"]) == 500 * 3
    assert np.allclose(ts["t"][::3], 0.01 * np.arange(1, 501))
    assert list(ts["train"][:3]) == ["red", "red", "bob"] and list(ts["car"][:3]) == [1, 2, 1]
    assert np.all(np.isnan(ts["speed"][2::3])) and np.all(np.isfinite(ts["speed"][0::3]))
    s = r.summary
    for key in ("status", "simulated_s", "steps", "wall_s", "events", "trains", "dt", "record_hz"):
        assert key in s
    assert s["simulated_s"] == pytest.approx(5.0) and s["steps"] == 5000
    assert s["scenario"] == "/x/y.toml" and s["trains"]["red"]["cars"] == 2
    red = s["trains"]["red"]
    for key in ("max_speed", "min_speed", "max_g_vertical", "min_g_vertical", "max_abs_g_lateral",
                "max_abs_g_longitudinal", "airtime_s", "energy_drift"):
        assert key in red
    assert red["max_speed"] == pytest.approx(11.0, abs=1e-3)
    # filtered maxima below the raw 1.5 g: 20 rad/s = 3.2 Hz is attenuated by the 5 Hz filter
    assert 1.0 < red["max_g_vertical"] < red["raw_max_g_vertical"] <= 1.5 + 1e-9
    assert s["bodies"]["bob"]["min_z"] == -1.0


def test_csv_matches_in_memory_result(tmp_path):
    mem = run_world(StandInWorld(), 3.0, 50)
    disk = run_world(StandInWorld(), 3.0, 50, out_dir=tmp_path / "o")
    assert disk.timeseries is None and disk.out_dir == tmp_path / "o"
    d = read_timeseries(tmp_path / "o")
    assert list(d) == list(mem.timeseries)
    for name, col in mem.timeseries.items():
        if col.dtype.kind in "US":
            assert list(d[name]) == list(col)
        else:
            assert np.allclose(d[name], col, rtol=1e-6, atol=1e-12, equal_nan=True), name
    assert disk.load_timeseries()["t"].shape == mem.load_timeseries()["t"].shape
    on_disk = read_summary(tmp_path / "o")
    assert on_disk["trains"] == json.loads(json.dumps(mem.summary["trains"]))


def test_record_hz_and_progress_in_seconds():
    calls = []
    r = run_world(StandInWorld(dt=0.002), 4.0, 25, progress=lambda a, b: calls.append((a, b)))
    assert r.summary["record_dt"] == pytest.approx(0.04)
    assert np.allclose(np.diff(r.timeseries["t"][::3]), 0.04)
    assert calls[-1] == (pytest.approx(4.0), pytest.approx(4.0))
    assert all(b == pytest.approx(4.0) for _, b in calls)
    assert [a for a, _ in calls] == sorted(a for a, _ in calls)


def test_an_instant_is_never_recorded_twice():
    r = run_world(StandInWorld(initial_sample=True), 30.0, 100)   # several World.run calls
    t = r.timeseries["t"][::3]
    assert np.all(np.diff(t) > 0)
    assert t[0] == 0.0 and len(t) == 3001


def test_existing_out_dir_refused_before_running(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / SUMMARY_NAME).write_text('{"old": 1, "status": "completed", "trackrider_version": "0"}')
    w = StandInWorld()
    with pytest.raises(InputError, match="overwrite"):
        run_world(w, 1.0, 100, out_dir=out)
    assert w.calls == 0
    assert sorted(p.name for p in out.iterdir()) == [SUMMARY_NAME]
    r = run_world(w, 1.0, 100, out_dir=out, overwrite=True)
    assert r.status == "completed" and "old" not in read_summary(out)


def test_a_diverged_run_keeps_what_was_recorded(tmp_path):
    out = tmp_path / "o"
    r = run_world(StandInWorld(diverge_at=2.5), 10.0, 100, out_dir=out)
    assert r.status == "diverged" and not r.ok
    assert "2.5" in r.message and "red car 2" in r.message
    s = read_summary(out)
    assert s["status"] == "diverged" and s["diverged"]["t"] == 2.5
    assert s["simulated_s"] == pytest.approx(2.49)      # the sane samples: up to the last one written
    assert {"t": 2.5, "train": "red", "car": 2, "kind": "diverged"} in s["events"]
    d = read_timeseries(out)
    assert d["t"].max() == pytest.approx(2.49) and len(d["t"]) == 249 * 3
    from trackrider.errors import SimulationError
    with pytest.raises(SimulationError, match="diverged"):
        r.raise_for_status()


def test_interrupted_run_leaves_no_complete_looking_file(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(KeyboardInterrupt):
        run_world(StandInWorld(interrupt_at=5.0), 10.0, 100, out_dir=out)
    (stage,) = out.iterdir()         # the run's stage, with the rows recorded so far
    assert is_leftover(stage) and sorted(p.name for p in stage.iterdir()) == ["STAGE", CSV_NAME + ".part"]


def test_killed_run_leaves_no_complete_looking_file(tmp_path):
    """SIGKILL in the middle of a run: no timeseries.csv, no summary.json."""
    out = tmp_path / "o"
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.test_sim import StandInWorld
        from trackrider.sim import run_world
        run_world(StandInWorld(sleep=0.05), 600.0, 100, out_dir={str(out)!r})
    """))
    env = dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba_metrics"))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    def part():
        stages = list(out.iterdir()) if out.is_dir() else []
        return stages[0] / (CSV_NAME + ".part") if stages else out / "none"

    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (part().exists() and part().stat().st_size > 10000):
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        assert part().exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (out / CSV_NAME).exists()
    assert not (out / SUMMARY_NAME).exists()
    assert all(is_leftover(p) for p in out.iterdir())


def test_identical_runs_give_identical_outputs(tmp_path):
    for d in ("a", "b"):
        run_world(StandInWorld(), 4.0, 100, out_dir=tmp_path / d)
    assert (tmp_path / "a" / CSV_NAME).read_bytes() == (tmp_path / "b" / CSV_NAME).read_bytes()
    sa, sb = read_summary(tmp_path / "a"), read_summary(tmp_path / "b")
    sa.pop("wall_s"), sb.pop("wall_s")
    assert sa == sb


def test_absurd_step_count_refused():
    with pytest.raises(InputError, match="steps"):
        run_world(StandInWorld(dt=1e-6), 1e4, 100)


def test_memory_stays_flat_with_run_length(tmp_path):
    """Peak traced memory of a 20-minute run is that of a 5-minute run (bench/memory.py: 1 h), within
    10 % + 0.5 MB: 60 bytes more a sample (22 500 more samples) would fail. Measured 9.23 and 9.17 MB.
    A 1-minute run peaks lower (5.8 MB: its buffers are not yet full), which left a 15-minute run
    0.4 MB under a bound of 1.5× that: in a full suite the garbage collector's timing moved a peak
    by 0.6 MB."""
    import tracemalloc

    def peak(duration, name):
        tracemalloc.start()
        run_world(StandInWorld(dt=0.04), duration, 25, out_dir=tmp_path / name)
        _, p = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return p

    short, long = peak(300.0, "short"), peak(1200.0, "long")
    assert read_summary(tmp_path / "long")["samples"] == 30000
    assert long < 1.1 * short + 0.5e6, (short, long)


# ------------------------------------------------------------------ with the real physics

G = 9.81


def _world(track, gauge=1.0, dt=0.002):
    from trackrider.physics import World

    w = World(dt=dt)
    return w, w.add_track(track, gauge=gauge)


def _circle(radius, n=300):
    from trackrider.curves import Track

    a = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return Track.from_points(np.c_[radius * np.cos(a), radius * np.sin(a), np.zeros(n)], closed=True)


def test_coasting_on_a_flat_circle_keeps_its_energy():
    from trackrider.physics import CarSpec

    w, k = _world(_circle(30.0))
    w.add_train("red", track=k, cars=1, car=CarSpec(600.0, 1.0, 1.0, 0.5, rider_height=0.0),
                start_s=5.0, start_speed=10.0)
    r = run_world(w, 6.0, 100)
    s = r.summary["trains"]["red"]
    assert r.status == "completed" and r.summary["events"] == []
    assert s["energy_quiet_s"] == pytest.approx(5.99)
    assert abs(s["energy_drift"]) < 1e-5
    assert s["max_speed"] == pytest.approx(10.0, abs=1e-3) and s["min_speed"] == pytest.approx(10.0, abs=1e-3)
    late = r.timeseries["t"] > 1.0
    # steady turn: lateral G = v² / (g R), vertical 1 g (filtered as raw)
    assert np.median(r.timeseries["g_lateral_filtered"][late]) == pytest.approx(100.0 / (G * 30.0), abs=0.005)
    assert np.allclose(r.timeseries["g_vertical_filtered"][late], 1.0, atol=1e-3)


def test_one_g_at_rest_on_level_track_filtered():
    from trackrider.curves import Track
    from trackrider.physics import CarSpec

    x = np.linspace(0.0, 50.0, 101)
    w, k = _world(Track.from_points(np.c_[x, np.zeros_like(x), np.zeros_like(x)]))
    w.add_train("red", track=k, cars=1, car=CarSpec(600.0, 2.0, 1.2, 1.0), start_s=20.0)
    r = run_world(w, 2.0, 100)
    s = r.summary["trains"]["red"]
    assert s["max_g_vertical"] == pytest.approx(1.0, abs=1e-3)
    assert s["min_g_vertical"] == pytest.approx(1.0, abs=1e-3)
    assert s["max_wheel_load"] == pytest.approx(600.0 * G, rel=1e-3)
    assert s["airtime_s"] == 0.0 and r.status == "completed"
    # a train that never moved has no energy drift to speak of (no warning about dt)
    assert s["energy_drift"] is None and s["energy_drift_max_abs"] is None and not r.summary["warnings"]


class TestParabolicHill:
    """A crest shaped as the free-fall parabola of speed v0 (zero G at v0).

    z = −x² / (2 R0), R0 = v0² / g, for |x| ≤ L, with straight tangent lead-in
    and run-out. At apex speed v the vertical G on the hill is
    κ (v0² − v²) / g: below zero everywhere on the hill when v > v0, zero at v0.
    """

    v0, L, Ls = 10.0, 8.0, 20.0

    @classmethod
    def track(cls):
        from trackrider.curves import Track

        r0 = cls.v0 ** 2 / G
        m = cls.L / r0
        z_l = -cls.L ** 2 / (2 * r0)
        x = np.arange(-cls.L - cls.Ls, cls.L + cls.Ls + 1e-9, 0.1)
        z = np.where(np.abs(x) <= cls.L, -x ** 2 / (2 * r0), z_l - m * (np.abs(x) - cls.L))
        return Track.from_points(np.c_[x, np.zeros_like(x), z])

    @classmethod
    def analytic_airtime(cls, v_apex, hz, cutoff_hz=5.0):
        """Time with the filtered analytic vertical G below 0 (energy conservation)."""
        from tests.filter_oracle import filtfilt_reference

        r0 = cls.v0 ** 2 / G
        m = cls.L / r0
        x = np.linspace(-cls.L - 10, cls.L + 10, 100001)
        on_hill = np.abs(x) <= cls.L
        z = np.where(on_hill, -x ** 2 / (2 * r0), -cls.L ** 2 / (2 * r0) - m * (np.abs(x) - cls.L))
        dz = np.where(on_hill, -x / r0, -m * np.sign(x))
        kappa = np.where(on_hill, (1 / r0) / (1 + dz ** 2) ** 1.5, 0.0)
        v = np.sqrt(v_apex ** 2 - 2 * G * z)
        ds_v = np.sqrt(1 + dz ** 2) / v
        t = np.concatenate([[0.0], np.cumsum(0.5 * (ds_v[1:] + ds_v[:-1]) * np.diff(x))])
        gv = 1 / np.sqrt(1 + dz ** 2) - v ** 2 * kappa / G
        ts = np.arange(0.0, t[-1], 1.0 / hz)
        return float(np.sum(filtfilt_reference(np.interp(ts, t, gv), cutoff_hz, hz) < 0) / hz)

    def ride(self, track, v_apex, hz=200):
        from trackrider.physics import CarSpec

        s0 = 10.0
        z0 = track.frame(s0).position[2]
        w, k = _world(track)
        w.add_train("red", track=k, cars=1, car=CarSpec(600.0, 0.5, 0.5, 0.5, rider_height=0.0),
                    start_s=s0, start_speed=float(np.sqrt(v_apex ** 2 - 2 * G * z0)))
        return run_world(w, 3.0, hz)

    def test_airtime_and_zero_g(self):
        track = self.track()
        fast = self.ride(track, 1.1 * self.v0)
        assert fast.status == "completed"
        ts = fast.timeseries
        apex = np.argmin(np.abs(ts["x"]))
        v = ts["speed"][apex]
        assert ts["g_vertical"][apex] == pytest.approx(1 - v ** 2 / self.v0 ** 2, abs=0.01)
        airtime = fast.summary["trains"]["red"]["airtime_s"]
        assert airtime == pytest.approx(self.analytic_airtime(v, 200), abs=0.03)
        assert 1.2 < airtime < 1.6
        # at the design speed the hill is weightless
        exact = self.ride(track, self.v0)
        inner = np.abs(exact.timeseries["x"]) < self.L - 1.0
        assert np.max(np.abs(exact.timeseries["g_vertical"][inner])) < 0.01
        # slower: no airtime at all
        slow = self.ride(track, 0.9 * self.v0)
        assert slow.summary["trains"]["red"]["airtime_s"] == 0.0
        assert slow.summary["trains"]["red"]["min_g_vertical"] > 0.0


@pytest.mark.parametrize("factor, lifts", [(0.9, False), (1.1, True)])
def test_railway_wheel_lift_event_on_a_flat_curve(factor, lifts):
    """Inner wheels unload at v² = g R (gauge/2) / h_cg (docs/physics.md §6)."""
    from trackrider.physics import CarSpec

    radius, gauge, h_cg, mass = 30.0, 1.435, 1.5, 20000.0
    v = factor * np.sqrt(G * radius * (gauge / 2) / h_cg)
    w, k = _world(_circle(radius), gauge=gauge)
    w.add_train("rail", track=k, cars=1, car=CarSpec(mass, 10.0, 3.0, 3.0, cg_height=h_cg),
                wheels="railway", start_s=5.0, start_speed=v)
    r = run_world(w, 2.0, 100)
    kinds = [e["kind"] for e in r.summary["events"]]
    assert ("wheel_lift" in kinds) is lifts
    assert r.status == ("derailed" if lifts else "completed")
    late = r.timeseries["t"] > 1.0
    q_inner = mass * G / 2 - mass * v ** 2 / radius * h_cg / gauge
    assert np.median(r.timeseries["wheel_load_inner"][late]) == pytest.approx(q_inner, abs=0.01 * mass * G)


class DivergingWorld:
    """A real World whose run reports a divergence once ``at`` seconds are reached."""

    def __init__(self, world, at):
        self.world, self.at = world, at

    def __getattr__(self, name):
        return getattr(self.world, name)

    def run(self, n_steps, record_every, sink, progress=None):
        from trackrider.physics.world import RunStatus

        left = int(round(self.at / self.world.dt)) - self.world.step_count
        if left <= n_steps:
            self.world.run(max(left, 0), record_every, sink)
            return RunStatus("diverged", max(left, 0), self.world.time, 0, ("red", 1),
                             "non-finite state")
        return self.world.run(n_steps, record_every, sink)


def test_a_diverged_physics_run_keeps_its_outputs(tmp_path):
    from trackrider.physics import CarSpec

    w, k = _world(_circle(30.0))
    w.add_train("red", track=k, cars=1, car=CarSpec(600.0, 1.0, 1.0, 0.5), start_s=5.0, start_speed=10.0)
    r = run_world(DivergingWorld(w, 1.5), 5.0, 100, out_dir=tmp_path / "o")
    assert r.status == "diverged" and "1.5" in r.message
    s = read_summary(tmp_path / "o")
    assert s["status"] == "diverged" and s["simulated_s"] == pytest.approx(1.5)
    d = read_timeseries(tmp_path / "o")
    assert d["t"][-1] == pytest.approx(1.5) and len(d["t"]) == 150
    assert np.all(np.isfinite(d["g_vertical_filtered"]))


SCENARIO = """
[simulation]
duration = 1.5
dt = 0.002
record_hz = 50

[[track]]
name = "main"
segments = [{type = "straight", length = 20.0}, {type = "arc", radius = 15.0, angle = 90.0, axis = "yaw"},
            {type = "straight", length = 30.0}]

[[train]]
name = "red"
track = "main"
cars = 2
start_s = 12.0
start_speed = 8.0
[train.car]
mass = 500.0
length = 2.0
"""


def test_simulate_writes_byte_identical_outputs_and_refuses_overwrite(tmp_path, monkeypatch):
    from trackrider.scenario import load_scenario
    from trackrider.sim import simulate

    path = tmp_path / "ride.toml"
    path.write_text(SCENARIO)
    sc = load_scenario(path)
    a = simulate(sc, out_dir=tmp_path / "a")
    simulate(sc, out_dir=tmp_path / "b")
    assert (tmp_path / "a" / CSV_NAME).read_bytes() == (tmp_path / "b" / CSV_NAME).read_bytes()
    sa, sb = read_summary(tmp_path / "a"), read_summary(tmp_path / "b")
    assert sa.pop("wall_s") >= 0 and sb.pop("wall_s") >= 0 and sa == sb
    assert sa["scenario"] == str(path.resolve()) and sa["trains"]["red"]["cars"] == 2
    assert sa["dt"] == 0.002 and sa["record_hz"] == 50 and sa["steps"] == 750
    assert a.status == "completed" and sa["trains"]["red"]["max_abs_g_lateral"] > 0.3
    # an existing results directory: refused before the world is even built
    import trackrider.scenario as scenario_pkg

    monkeypatch.setattr(scenario_pkg, "build_world",
                        lambda *a, **k: pytest.fail("built a world for a refused out_dir"))
    before = (tmp_path / "a" / CSV_NAME).read_bytes()
    with pytest.raises(InputError, match="overwrite"):
        simulate(sc, out_dir=tmp_path / "a")
    assert (tmp_path / "a" / CSV_NAME).read_bytes() == before


def test_killed_cli_run_leaves_no_complete_looking_file(tmp_path):
    """The real command, killed while it records: no timeseries.csv, no summary.json."""
    scenario = tmp_path / "circuit.toml"
    scenario.write_text(textwrap.dedent(f"""
        [simulation]
        duration = 100000.0
        dt = 0.002
        record_hz = 100
        max_output_gb = 10           # killed long before: the run may be long

        [[track]]
        name = "loop"
        curve = {str(ROOT / "curves" / "hilly_circuit.csv")!r}
        closed = true

        [[train]]
        name = "red"
        track = "loop"
        cars = 2
        start_s = 10.0
        start_speed = 15.0
        [train.car]
        mass = 500.0
    """))
    out = tmp_path / "o"
    env = dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba_metrics"))
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "run", str(scenario), "--out", str(out),
                             "--quiet"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    def part():           # in the run's stage folder
        stages = list(out.iterdir()) if out.is_dir() else []
        return stages[0] / (CSV_NAME + ".part") if stages else out / "none"

    try:
        deadline = time.time() + 240
        while time.time() < deadline and not (part().exists() and part().stat().st_size > 200_000):
            if proc.poll() is not None:
                pytest.fail(proc.stderr.read().decode())
            time.sleep(0.1)
        part = part()
        assert part.exists() and part.stat().st_size > 200_000
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (out / CSV_NAME).exists() and not (out / SUMMARY_NAME).exists()
    # what was recorded is there, under a name that does not look whole, with whole rows up to
    # the last flushed block
    lines = part.read_text().splitlines()
    assert lines[0].startswith("t,train,car,s,x,y,z,speed")
