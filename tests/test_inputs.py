"""The one input reader (trackrider/inputs.py): regular files only, sizes checked before reading."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trackrider.errors import InputError
from trackrider.inputs import read_input_bytes

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, timeout=60):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "trackrider.cli", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    return p, time.perf_counter() - t0


def test_devices_and_pipes_are_refused_before_they_are_opened(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        with pytest.raises(InputError, match="not a regular file"):
            read_input_bytes(path, 1000, "curve file")


def test_a_file_larger_than_its_limit_is_refused_from_its_size(tmp_path):
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 5000)
    with pytest.raises(InputError, match="larger than a scenario file may be"):
        read_input_bytes(big, 4096, "scenario file")
    assert read_input_bytes(big, 5000) == b"#" * 5000


@pytest.mark.parametrize("command", ["curve", "validate"])
def test_dev_zero_and_a_pipe_as_curve_answer_at_once(tmp_path, command):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for curve in ("/dev/zero", fifo):
        if command == "curve":
            args = ("curve", curve)
        else:
            sc = tmp_path / "s.toml"
            sc.write_text(f'[simulation]\nduration = 1.0\n[[track]]\ncurve = "{curve}"\n'
                          '[[train]]\n[train.car]\nmass = 500.0\n')
            args = ("validate", sc)
        p, wall = cli(*args, timeout=30)
        assert p.returncode == 2 and p.stderr.startswith("error:") and "regular file" in p.stderr, p.stderr
        assert wall < 20


def test_a_file_that_is_not_a_curve_is_not_quoted(tmp_path):
    p, _ = cli("curve", "/etc/passwd")
    assert p.returncode == 2
    assert "root" not in p.stderr and "header must be" in p.stderr


def test_deep_nesting_and_a_nul_in_a_path_are_one_error_line_each(tmp_path):
    """TOML nested 500 or 5000 deep (the parser's recursion), a NUL character in a curve's or a
    sweep's path: one ``error:`` line naming the file (and key), exit 2, no internal error."""
    from typer.testing import CliRunner

    from trackrider.cli import app

    cases = []
    for depth in (40, 500, 5000):
        for kind, (a, b) in (("array", ("[", "]")), ("table", ("{a=", "}"))):
            p = tmp_path / f"deep_{kind}_{depth}.toml"
            p.write_text("[simulation]\nduration = 1.0\nx = " + a * depth + ("1" if kind == "table" else "")
                         + b * depth + "\n")
            cases.append((["validate", p], str(p), "nested more than 32 deep"))
            sweep = tmp_path / f"deep_sweep_{kind}_{depth}.toml"
            sweep.write_text(p.read_text().replace("[simulation]\nduration = 1.0", "[sweep]"))
            cases.append((["sweep", sweep, "--out", tmp_path / "sw"], str(sweep), "nested more than 32 deep"))
    nul = tmp_path / "nul.toml"
    nul.write_text('[simulation]\nduration = 1.0\n[[track]]\ncurve = "a\\u0000b.csv"\n'
                   '[[train]]\n[train.car]\nmass = 500.0\n')
    cases.append((["validate", nul], f"{nul}: track[0].curve", "NUL"))
    cases.append((["run", nul, "--out", tmp_path / "r"], f"{nul}: track[0].curve", "NUL"))
    nul_sweep = tmp_path / "nul_sweep.toml"
    nul_sweep.write_text('[sweep]\nscenario = "a\\u0000b.toml"\n[axes]\n"simulation.duration" = [1.0]\n')
    cases.append((["sweep", nul_sweep, "--out", tmp_path / "sw"], f"{nul_sweep}: sweep.scenario", "NUL"))
    deep_set = "simulation.duration=" + "[" * 600 + "]" * 600
    cases.append((["validate", ROOT / "scenarios" / "pendulum.toml", "--set", deep_set], "simulation.duration",
                  "must be a number"))
    runner = CliRunner()
    for args, where, what in cases:
        r = runner.invoke(app, [str(a) for a in args])
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (args, r.stderr)
        assert where in lines[0] and what in lines[0] and "internal error" not in lines[0], (args, lines[0])
    assert not (tmp_path / "sw").exists() and not (tmp_path / "r").exists()


def test_a_deep_parse_runs_without_cyclic_collection():
    """``parse_nested`` pauses the garbage collector while a recursive parser runs (a collection at the
    bottom of a 5000-deep recursion runs finalizers with no stack left: CI once printed 23 "Exception
    ignored" lines beside the ``error:`` line), restores it afterwards, and answers ``TOO_DEEP`` for
    a text deeper than the recursion limit."""
    import gc
    import json

    from trackrider.inputs import TOO_DEEP, parse_nested

    seen = []

    def parser(text):
        seen.append(gc.isenabled())
        return json.loads(text)

    assert gc.isenabled()
    assert parse_nested(parser, "[" * 100_000 + "]" * 100_000) is TOO_DEEP
    assert parse_nested(parser, "null") is None and parse_nested(parser, "[[1]]") == [[1]]
    assert seen == [False, False, False] and gc.isenabled()
    gc.disable()
    try:
        parse_nested(parser, "1")
        assert not gc.isenabled()      # left as the caller had it
    finally:
        gc.enable()
