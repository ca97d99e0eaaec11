"""Fixtures of the scenario tests (the shared texts live in scenario_texts.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def write(tmp_path):
    """write(text, name="s.toml") -> path of a scenario file in a fresh tmp dir."""

    def _write(text: str, name: str = "s.toml"):
        p = tmp_path / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return p

    return _write
