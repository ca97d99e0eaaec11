"""The run command's summary table: track positions of the extremes, and --units."""
from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from trackrider.cli import _summary_table, app
from trackrider.report.units import FT, KMH, MPH, Units

ROOT = Path(__file__).resolve().parents[2]


def _render(summary, units):
    table, lines = _summary_table(summary, 1.0, None, 0.0, units)
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def test_summary_table_shows_where(classic_run):
    summary = json.loads((classic_run / "summary.json").read_text())
    red = summary["trains"]["red"]
    text = _render(summary, "metric")
    v = red["max_speed"]
    assert f"{v:.1f} m/s ({v * KMH:.1f} km/h) (s {red['at']['max_speed']['s']:.0f} m)" in text
    assert f"{red['max_g_vertical']:.2f} (s {red['at']['max_g_vertical']['s']:.0f} m)" in text
    text = _render(summary, "imperial")
    assert f"{v * MPH:.1f} mph (s {red['at']['max_speed']['s'] * FT:.0f} ft)" in text
    assert "m/s" not in text


def test_run_units_imperial_and_bad_units(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "classic_coaster.toml"), "--out",
                                 str(tmp_path / "a"), "--duration", "3", "--units", "imperial"])
    assert result.exit_code == 0, result.stderr
    assert "mph" in result.stdout and " ft)" in result.stdout
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "classic_coaster.toml"), "--out",
                                 str(tmp_path / "b"), "--units", "parsecs"])
    assert result.exit_code == 2 and result.stderr.startswith("error: --units must be one of")
    assert not (tmp_path / "b").exists()


def test_units():
    assert abs(Units("imperial").speed(1609.344 / 3600.0) - 1.0) < 1e-15      # 1 mph
    assert abs(Units("imperial").length(0.3048) - 1.0) < 1e-15      # 1 ft
    assert Units("metric").speed(10.0) == 36.0 and Units().length(5.0) == 5.0


def test_the_summary_table_does_not_wrap_into_a_file(tmp_path, capsys):
    """stdout is not a terminal: the table is printed at its own width (here wider than 130 columns),
    every train on one line, every cell whole."""
    from trackrider.cli import _print_summary

    at = {k: {"t": 1.0, "car": 1, "s": 123456.7} for k in ("max_speed", "min_g_vertical", "max_g_vertical",
                                                          "max_abs_g_lateral", "max_abs_g_longitudinal", "airtime_s")}
    train = {"max_speed": 33.3, "min_g_vertical": -0.51, "max_g_vertical": 4.2, "max_abs_g_lateral": 1.25,
             "max_abs_g_longitudinal": 0.55, "airtime_s": 1.5, "at": at}
    summary = {"simulated_s": 60.0, "steps": 1, "status": "completed",
               "trains": {"the_long_named_express_train": train, "second_train": train}}
    _print_summary(*_summary_table(summary, 1.0, None, 0.0, "imperial"))
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("│")]
    assert [r.split()[1] for r in rows] == ["the_long_named_express_train", "second_train"], out
    assert all(r.count(" ft)") == 6 and r.rstrip().endswith("│") for r in rows), rows
    widths = {len(line) for line in out if line[:1] in "┏┃┡│└"}
    assert len(widths) == 1 and widths.pop() > 130


def test_the_timing_line_says_what_the_wall_time_was_spent_on():
    summary = {"simulated_s": 40.0, "steps": 40000, "status": "completed", "trains": {}}
    _, lines = _summary_table(summary, 73.2, None, 71.7)
    assert ("simulated 40.00 s in 73.20 s wall time: 71.7 s compiling the kernels (first run only), then 1.50 s "
            "simulating (26.7× real time), 40000 steps") in lines
    _, lines = _summary_table(summary, 2.0, None, 0.2)         # nothing worth naming: the plain ratio
    assert "simulated 40.00 s in 2.00 s wall time (20.0× real time), 40000 steps" in lines


def test_the_operation_line_names_sections_and_an_unmeasured_throughput():
    op = {"throughput_trains_per_hour": None, "riders_per_hour": None,
          "block_sections": {"section[0]": {"held_s": 12.4, "type": "station"}, "lift": {"held_s": 0.0}}}
    summary = {"simulated_s": 60.0, "steps": 1, "status": "completed", "trains": {}, "operation": op}
    _, lines = _summary_table(summary, 1.0, None, 0.0, "metric", {"section[0]": "station"})
    assert "operation: throughput not measured (no train dispatched a second time); held: station 12 s" in lines
