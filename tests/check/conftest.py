"""A classic_coaster run checked against the example envelope, shared by the check tests."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "envelope_example.toml"


@pytest.fixture(scope="session")
def checked_run(tmp_path_factory):
    """``trackrider run`` of classic_coaster (the whole 40 s) with the example envelope in its [check]:
    (results folder, what run printed)."""
    d = tmp_path_factory.mktemp("check")
    scen = d / "classic.toml"
    scen.write_text((ROOT / "scenarios" / "classic_coaster.toml").read_text() + f'\n[check]\nenvelope = "{EXAMPLE}"\n')
    out = d / "out"
    r = CliRunner().invoke(app, ["run", str(scen), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out, r.stdout
