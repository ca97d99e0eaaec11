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
