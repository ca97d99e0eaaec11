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
