"""Shared results for the report tests: a run with its report; the classic coaster run once per session."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def run_with_report(tmp_path_factory):
    """``make(name, seconds)``: ``trackrider run scenarios/NAME.toml --duration SECONDS --report`` into
    a fresh folder; returns the results folder."""

    def make(name: str, seconds: float) -> Path:
        out = tmp_path_factory.mktemp("report") / name
        result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / f"{name}.toml"), "--out", str(out),
                                          "--duration", str(seconds), "-q", "--report"])
        assert result.exit_code == 0, result.stderr
        return out

    return make


@pytest.fixture(scope="session")
def classic_run(run_with_report):
    """classic_coaster for 32 s (lift, drop, loop, airtime on the crest into the brakes), with its report."""
    return run_with_report("classic_coaster", 32)


@pytest.fixture(scope="session")
def two_train_run(run_with_report):
    """scenarios/two_train_coaster.toml for 160 s: three dispatches (so a throughput), holds on the lift and
    the final brake, a lap."""
    return run_with_report("two_train_coaster", 160)
