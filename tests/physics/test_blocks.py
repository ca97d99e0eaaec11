"""Operating a ride (physics/blocks.py): stations, block sections, laps and capacity, on the bundled
``two_train_coaster`` and on layouts that must fail (a deadlock, bad block layouts)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.scenario import load_scenario
from trackrider.sim import simulate

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "scenarios" / "two_train_coaster.toml"


@pytest.fixture(scope="module")
def ten_minutes():
    return simulate(load_scenario(TWO))


@pytest.mark.slow
def test_the_blocks_keep_the_trains_apart_for_ten_minutes(ten_minutes):
    res = ten_minutes
    assert res.status == "completed"
    ts = res.timeseries
    t, train, block = ts["t"], ts["train"], ts["block"]
    assert np.all(np.isfinite(block)) and block.min() >= 0 and block.max() <= 3
    # at no recorded instant do two trains have cars in one block
    owners = {}
    for k, name in zip(zip(np.round(t, 6).tolist(), block.tolist()), train.tolist()):
        owners.setdefault(k, set()).add(name)
    assert len(owners) >= len(np.unique(t))
    assert max(len(v) for v in owners.values()) == 1
    kinds = [e["kind"] for e in res.summary["events"]]
    assert "collision" not in kinds
    assert res.summary["simulated_s"] == pytest.approx(600.0)


@pytest.mark.slow
def test_dispatches_laps_and_throughput_agree(ten_minutes):
    s = ten_minutes.summary
    op = s["operation"]
    ev = s["events"]
    dispatch = [e for e in ev if e["kind"] == "dispatch"]
    assert op["stations"]["station"]["dispatches"] == len(dispatch)
    for name in ("red", "blue"):
        laps = [e for e in ev if e["kind"] == "lap" and e["train"] == name]
        n_disp = sum(1 for e in dispatch if e["train"] == name)
        assert op["trains"][name]["laps"] == len(laps) >= 3      # every train completes its laps
        # a lap ends at the station (block 0's start) and starts at the previous one
        assert n_disp - 1 <= len(laps) <= n_disp
        assert op["trains"][name]["mean_lap_time"] == pytest.approx(np.mean([e["lap_time"] for e in laps]))
    # trains alternate at the station
    assert all(a["train"] != b["train"] for a, b in zip(dispatch, dispatch[1:]))
    t0 = max(min(e["t"] for e in dispatch if e["train"] == n) for n in ("red", "blue"))
    after = sum(1 for e in dispatch if e["t"] > t0)
    tph = 3600.0 * after / (600.0 - t0)
    assert op["throughput_trains_per_hour"] == pytest.approx(tph)
    assert op["riders_per_hour"] == pytest.approx(tph * 12)     # 3 cars × 2 rows × 2 seats
    # holds and releases alternate per section and add up to the time held (a hold still on at the
    # end counts up to the end of the run)
    for name, info in op["block_sections"].items():
        marks = [e for e in ev if e["kind"] in ("block_hold", "block_release") and e["section"] == name]
        assert [e["kind"] for e in marks] == ["block_hold", "block_release"] * (len(marks) // 2) + (
            ["block_hold"] if len(marks) % 2 else [])
        total = sum(e["held_s"] for e in marks if e["kind"] == "block_release")
        if len(marks) % 2:
            total += 600.0 - marks[-1]["t"]
        assert info["held_s"] == pytest.approx(total, abs=1e-6)
    mean_iv = op["stations"]["station"]["mean_dispatch_interval"]
    assert mean_iv == pytest.approx(np.mean(np.diff([e["t"] for e in dispatch])))


def test_a_dwell_longer_than_max_hold_ends_stalled_naming_the_held_train():
    """The station keeps red for 400 s while blue waits on the final brake: blue's hold passes
    max_hold (300 s) and the run ends ``stalled`` at t ≈ 300 s, not at the end of the hour."""
    res = simulate(load_scenario(TWO, overrides={"section.station.dwell": 400.0, "simulation.duration": 3600.0}))
    assert res.status == "stalled"
    assert "blue" in res.message and "final brake" in res.message
    assert res.summary["simulated_s"] == pytest.approx(300.0, abs=0.01)
    stall = [e for e in res.summary["events"] if e["kind"] == "stalled"]
    assert stall and stall[0]["train"] == "blue" and stall[0]["section"] == "final brake"


def _variant(tmp_path, old, new, count=1):
    text = TWO.read_text(encoding="utf-8")
    assert text.count(old) == count, old
    p = tmp_path / "variant.toml"
    p.write_text(text.replace(old, new), encoding="utf-8")
    return p


@pytest.mark.parametrize("old,new,says", [
    ("from = 219.0\nto = 251.0", "from = 219.0\nto = 224.0", "shorter than train 'red'"),
    ("start_s = 27.0", "start_s = 640.0", "starts in the block of final brake"),
    ("start_s = 664.0", "start_s = 20.0", "starts in the block of station"),
    ('type = "brake"\nfrom = 219.0', 'type = "trim"\nfrom = 219.0',
     "cannot end a block: block sections are lift, brake, booster, station"),
    ('name = "lift"\ntype = "lift"', 'name = "lift"\ntype = "lift"\ndwell = 3.0',
     "applies to stations only"),
])
def test_bad_block_layouts_are_one_line_errors(tmp_path, old, new, says):
    p = _variant(tmp_path, old, new)
    r = CliRunner().invoke(app, ["validate", str(p)])
    assert r.exit_code == 2
    line = r.output.strip()
    assert line.startswith("error:") and "\n" not in line and str(p) in line and says in line, line


def test_as_many_trains_as_blocks_is_refused(tmp_path):
    third = ('\n[[train]]\nname = "green"\ntrack = "circuit"\ncars = 3\nstart_s = 240.0\n[train.car]\n'
             'mass = 600.0\nlength = 2.0\n[train.coupling]\ngap = 0.5\n\n[[train]]\nname = "white"\n'
             'track = "circuit"\ncars = 3\nstart_s = 100.0\n[train.car]\nmass = 600.0\nlength = 2.0\n')
    p = _variant(tmp_path, "\n[[section]]\nname = \"station\"", third + "\n[[section]]\nname = \"station\"")
    r = CliRunner().invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and "4 trains" in r.output and "more than 4 blocks" in r.output, r.output


def test_scenarios_without_block_sections_have_no_block_column_or_operation(tmp_path):
    res = simulate(load_scenario(ROOT / "scenarios" / "pendulum.toml"), duration=0.2)
    assert "block" not in res.timeseries and "operation" not in res.summary
    assert "block" not in res.summary["columns"]


def _open_line(a_speed, b_start, b_speed, signal_force, n_steps):
    """A 700 m level line, two block boosters ("signal 1" 80–130 m, ``signal_force`` N a car, and
    "signal 2" 400–450 m), train A (2 × 500 kg) from 470 m at ``a_speed``, train B from ``b_start``
    at ``b_speed``. Returns (world, t, samples, status) after ``n_steps`` of 1 ms."""
    from tests.physics import analytic
    from tests.physics.analytic import run
    from trackrider.physics import CarSpec, World

    w = World(dt=1e-3)
    k = w.add_track(analytic.straight(700.0))
    car = CarSpec(mass=500.0, length=2.0, width=1.2, height=1.0)
    w.add_train("A", k, 2, car, start_s=470.0, start_speed=a_speed)
    w.add_train("B", k, 2, car, start_s=b_start, start_speed=b_speed)
    w.add_section("booster", k, 80.0, 130.0, speed=10.0, max_force=signal_force, block=True, name="signal 1")
    w.add_section("booster", k, 400.0, 450.0, speed=10.0, max_force=5000.0, block=True, name="signal 2")
    return (w, *run(w, n_steps, 100))


def test_on_an_open_line_a_train_that_runs_off_the_end_frees_its_block():
    """A railway-like line: B waits in its block section (a block booster) while A is in the next
    block, and goes on at the section's speed once A has run off the end of the line; no laps."""
    from trackrider.physics import channels as ch

    w, t, r, st = _open_line(10.0, 110.0, 10.0, 5000.0, 60000)
    assert st.ok
    a_off = t[np.argmax(np.isnan(r[:, 1, ch.S]) | ((r[:, 1, ch.FLAGS].astype(int) & ch.RAN_OFF) != 0))]
    assert 20.0 < a_off < 25.0                       # A's last car leaves the line at s = 700
    held = (t > 5.0) & (t < a_off - 0.5)
    assert np.all(r[held, 2, ch.S] <= 130.0 - 0.5)  # B's lead stops short of its section's end ...
    assert np.all(np.abs(r[held & (t > 15.0), 2, ch.SPEED]) < 0.01)
    # ... and goes on, driven by the last metres of its booster (a frictionless line: it coasts)
    assert r[-1, 2, ch.S] > 300.0 and r[-1, 2, ch.SPEED] > 2.0
    kinds = [e["kind"] for e in w.operation.events]
    assert "lap" not in kinds and "collision" not in kinds and "block_overrun" not in kinds
    assert [e["kind"] for e in w.operation.events if e["train"] == "B"][:2] == ["block_hold", "block_release"]


def test_a_block_section_too_weak_to_stop_a_train_reports_its_overrun():
    """B comes at 20 m/s into a block booster (50 m, 500 N a car) that must hold it (A stands in
    the block ahead): it cannot stop B, whose lead car passes the section's end at the speed work
    and energy give, v² = v0² − 2 F (50 + 50 − d) / M (the second car, d behind, brakes for
    50 − d of it). One ``block_overrun`` event, naming the section, that speed and the train ahead;
    B then runs into A (a collision)."""
    from trackrider.physics import channels as ch

    w, t, r, st = _open_line(0.0, 60.0, 20.0, 500.0, 30000)
    d = float(r[0, 2, ch.S] - r[0, 3, ch.S])     # B's car spacing
    over = [e for e in w.operation.events if e["kind"] == "block_overrun"]
    assert len(over) == 1 and over[0]["train"] == "B" and over[0]["section"] == "signal 1"
    assert over[0]["block_ahead_held_by"] == "A"
    v1 = np.sqrt(20.0**2 - 2 * 500.0 * (100.0 - d) / 1000.0)
    assert over[0]["speed"] == pytest.approx(v1, rel=2e-3)
    j = int(np.argmax(r[:, 2, ch.S] > 130.0))   # the lead passes 130 m between samples j − 1 and j
    assert over[0]["t"] == pytest.approx(np.interp(130.0, r[j - 1:j + 1, 2, ch.S], t[j - 1:j + 1]), abs=2e-3)
    kinds = [e["kind"] for e in w.operation.events if e["train"] == "B"]
    assert kinds.index("block_hold") < kinds.index("block_overrun") < kinds.index("collision")
