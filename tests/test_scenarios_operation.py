"""The bundled rides are operated as real rides are: dispatch and block-brake stops are gentle (peak
longitudinal G, filtered, at most 0.6 g), as their headers say."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import trackrider as tr

ROOT = Path(__file__).resolve().parents[1]
#: the most a dispatch, a lift restart or a brake stop may push a rider along the track, g
GENTLE = 0.6


def _run(name: str, duration: float):
    sc = tr.load_scenario(ROOT / "scenarios" / f"{name}.toml")
    return sc, tr.simulate(sc, duration=duration)


def _peak_on_sections(res) -> float:
    """Largest |filtered longitudinal G| of any car while a section (lift, brake, station) acts on it."""
    ts = res.timeseries
    on = ts["section"] >= 0
    return float(np.max(np.abs(ts["g_longitudinal_filtered"][on])))


def _header(name: str) -> str:
    text = (ROOT / "scenarios" / f"{name}.toml").read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if line.startswith("#"))


@pytest.mark.slow
def test_classic_coaster_dispatches_and_brakes_gently():
    sc, res = _run("classic_coaster", 40.0)
    ts = res.timeseries
    assert res.status == "completed"
    peak = _peak_on_sections(res)
    assert peak <= GENTLE, peak
    # the dispatch itself: the chain starts the train from rest at about 0.5 g (3 kN a car of 600 kg)
    first = ts["t"] < 2.0
    assert 0.4 < float(np.max(ts["g_longitudinal_filtered"][first])) <= GENTLE
    # and the brake run still stops it inside itself
    lead = (ts["car"] == 1)
    assert abs(ts["speed"][lead][-1]) < 0.05 and 233.0 <= ts["s"][lead][-1] <= 290.0
    assert "0.6 g" in _header("classic_coaster")


@pytest.mark.slow
def test_two_train_coaster_is_gentle_everywhere():
    """Four minutes: both trains dispatched, lifted, slowed and stopped by the block brakes and the
    station; no G along the track above 0.6 g anywhere on the ride, and still no overrun."""
    sc, res = _run("two_train_coaster", 240.0)
    ts = res.timeseries
    assert res.status == "completed"
    kinds = [ev["kind"] for ev in res.summary["events"]]
    assert {"dispatch", "block_hold", "block_release", "lap"} <= set(kinds)
    assert "block_overrun" not in kinds and "collision" not in kinds
    peak = float(np.max(np.abs(ts["g_longitudinal_filtered"])))
    assert peak <= GENTLE, peak
    assert "0.6 g" in _header("two_train_coaster")
