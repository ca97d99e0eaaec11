"""A run compared with a measured ride (trackrider/check/compare.py): the run against itself shifted,
rotated and noisy; the inputs it must refuse."""
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from trackrider.check.compare import _align, kabsch, rotation_words
from trackrider.errors import InputError
from trackrider.cli import app
from tests.filter_oracle import filtfilt_reference
from trackrider.record import read_timeseries

SHIFT = 1.3
ANGLE = 5.0


def _about_lateral(deg):
    a = math.radians(deg)
    return np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])


def _write(path, t, acc, extra=None, name="alt"):
    with open(path, "w") as f:
        f.write("# a measured ride\ntime,ax,ay,az" + (f",{name}" if extra is not None else "") + "\n")
        for i in range(len(t)):
            row = f"{t[i]:.4f},{acc[i, 0]:.7f},{acc[i, 1]:.7f},{acc[i, 2]:.7f}"
            f.write(row + (f",{extra[i]:.4f}" if extra is not None else "") + "\n")


@pytest.fixture(scope="module")
def raw(checked_run):
    """The lead car's raw G (forward, left, up), its time and z, from 3 s to 38 s of the run."""
    out, _ = checked_run
    ts = read_timeseries(out)
    m = (ts["train"] == "red") & (ts["car"] == 1) & (ts["t"] >= 3.0) & (ts["t"] <= 38.0)
    acc = np.column_stack([ts["g_longitudinal"][m], ts["g_lateral"][m], ts["g_vertical"][m]])
    return out, ts["t"][m], acc, ts["z"][m]


def test_compare_finds_the_shift_the_rotation_and_the_noise(raw, tmp_path):
    out, t, acc, z = raw
    rng = np.random.default_rng(3)
    noise = 0.1 * rng.standard_normal(acc.shape)
    noise -= noise.mean(axis=0)
    sensor = acc @ _about_lateral(ANGLE).T + noise       # the sensor turned 5° about the car's lateral axis
    p = tmp_path / "m.csv"
    _write(p, t + SHIFT, sensor, extra=z + 250.0)           # its clock 1.3 s ahead; altitude above sea level
    r = CliRunner().invoke(app, ["compare", str(out), str(p), "--time", "time", "--accel", "ax,ay,az", "--rotate",
                                 "--altitude", "alt", "--json"])
    assert r.exit_code == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["offset_s"] == pytest.approx(-SHIFT, abs=0.01)                  # within one sample (100 Hz)
    rot = c["rotation"]
    assert rot["angle_deg"] == pytest.approx(ANGLE, abs=0.5)
    assert abs(rot["axis"][1]) > 0.99                                        # about the lateral axis
    filtered = filtfilt_reference(noise, 5.0, 100.0)                         # the noise as the run's filter leaves it
    for k, axis in enumerate(("longitudinal", "lateral", "vertical")):
        expected = float(np.sqrt(np.mean(filtered[:, k] ** 2)))
        assert c["whole"][axis]["rms_g"] == pytest.approx(expected, rel=0.10), axis
    assert c["altitude"]["rms"] < 0.01                                       # up to its datum, the car's z
    assert "chain lift" in c["sections"] and "brake run" in c["sections"]


def test_kabsch_recovers_a_rotation_exactly():
    rng = np.random.default_rng(1)
    P = rng.standard_normal((50, 3))
    R = _about_lateral(-30.0) @ np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    found = kabsch(P, P @ R.T)
    assert found == pytest.approx(R, abs=1e-12)
    assert rotation_words(_about_lateral(ANGLE))["angle_deg"] == pytest.approx(ANGLE, abs=1e-12)


def test_plot_save_and_report(raw, tmp_path):
    import shutil

    out, t, acc, _ = raw
    run = shutil.copytree(out, tmp_path / "run")
    p = tmp_path / "m.csv"
    _write(p, t - 0.4, acc * 9.81)
    args = ["compare", str(run), str(p), "--time", "time", "--accel", "ax,ay,az", "--units", "m/s2"]
    r = CliRunner().invoke(app, args + ["--plot", str(tmp_path / "c.png"), "--save"])
    assert r.exit_code == 0, r.stderr
    assert "offset +0.400 s" in r.stdout and (tmp_path / "c.png").stat().st_size > 10_000
    saved = json.loads((run / "compare.json").read_text())
    assert saved["whole"]["vertical"]["rms_g"] < 1e-3 and len(saved["series"]["t"]) > 100
    r = CliRunner().invoke(app, args + ["--save"])
    assert r.exit_code == 2 and "compare.json" in r.stderr and "--overwrite" in r.stderr
    # the report's section (trackrider/report/checks.py): the design warnings, the check, the comparison
    from types import SimpleNamespace

    from trackrider.record import read_summary
    from trackrider.report.checks import checks_html

    section = checks_html(SimpleNamespace(summary=read_summary(run), path=run))
    assert section.startswith('<h2 id="checks">Design checks</h2>')
    assert "Compared with a measured ride: m.csv" in section and "Envelope: illustrative example" in section
    assert section.count("<svg") == 2                   # the envelope's figure and the comparison's


@pytest.mark.slow
def test_the_report_page_has_the_section(checked_run, tmp_path):
    import shutil

    run = shutil.copytree(checked_run[0], tmp_path / "run")
    r = CliRunner().invoke(app, ["report", str(run)])
    assert r.exit_code == 0, r.stderr
    page = (run / "report.html").read_text()
    assert 'id="checks"' in page and "Envelope: illustrative example (not a standard) — passed" in page


def test_reversed_axis_by_a_minus_sign(raw, tmp_path):
    out, t, acc, _ = raw
    p = tmp_path / "m.csv"
    flipped = acc.copy()
    flipped[:, 1] *= -1.0
    _write(p, t, flipped)
    r = CliRunner().invoke(app, ["compare", str(out), str(p), "--time", "time", "--accel=ax,-ay,az", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["whole"]["lateral"]["rms_g"] < 1e-3


def test_inputs_it_cannot_align_are_refused(raw, tmp_path):
    out, t, acc, _ = raw
    rng = np.random.default_rng(0)
    cases = []
    p = tmp_path / "noise.csv"                                # not the same ride
    _write(p, t, 1.0 + rng.standard_normal(acc.shape))
    cases.append((p, [], "cannot align the measured trace with the run: its best match correlates only"))
    p = tmp_path / "slow.csv"                                 # 8 Hz: the 5 Hz filter cannot act on it
    _write(p, t[::12], acc[::12])
    cases.append((p, [], "too slowly to be filtered like the run"))
    p = tmp_path / "back.csv"
    t2 = t.copy()
    t2[50] = t2[49]
    _write(p, t2, acc)
    cases.append((p, [], "line 53: time"))
    cases.append((tmp_path / "noise.csv", ["--accel", "ax,ay"], "three columns"))
    cases.append((tmp_path / "noise.csv", ["--accel", "ax,ay,aw"], "no column 'aw'"))
    for path, extra, words in cases:
        args = ["compare", str(out), str(path), "--time", "time", "--accel", "ax,ay,az"] + extra
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2, (path, r.stdout, r.stderr)
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1 and words in r.stderr, r.stderr


def test_a_trace_that_matches_two_places_equally_is_refused():
    """A ride with the same hill twice, a trace of one hill: which one is not for compare to guess."""
    t = np.arange(0.0, 30.0, 0.01)
    hill = lambda c: np.exp(-((t - c) / 0.7) ** 2)     # noqa: E731
    part = (t >= 5.0) & (t <= 11.0)
    run = np.column_stack([0.2 * (hill(8.0) + hill(20.0)), np.zeros_like(t), 1.0 + hill(8.0) + hill(20.0)])
    with pytest.raises(InputError, match=r"matches [+-]12.00 s away as well as at its best"):
        _align(t, run, t[part], run[part], min_overlap=300, apart=100)
    # a difference the trace carries tells the hills apart (a brake before the first one)
    run[:, 0] = 0.2 * (hill(8.0) + hill(20.0)) - 0.8 * hill(6.0)
    offset, r = _align(t, run, t[part] - 2.0, run[part], 300, 100)
    assert offset == pytest.approx(2.0, abs=1e-5) and r == pytest.approx(1.0, abs=1e-9)
