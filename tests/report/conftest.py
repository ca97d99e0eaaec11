"""Shared results for the report tests: the classic coaster run once per session."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def classic_run(tmp_path_factory):
    """classic_coaster for 32 s (lift, drop, loop, airtime on the crest into the brakes), with its report."""
    out = tmp_path_factory.mktemp("report") / "classic"
    result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / "classic_coaster.toml"), "--out", str(out),
                                      "--duration", "32", "-q", "--report"])
    assert result.exit_code == 0, result.stderr
    return out
