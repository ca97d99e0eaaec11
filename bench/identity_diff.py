"""How far two recorded sets of outputs are apart, per scenario: the largest absolute difference
of each numeric column of ``timeseries.csv`` (for when ``bench/identity.py check`` says "differs").

    python bench/identity.py record /tmp/before      # in the old checkout
    python bench/identity.py record /tmp/after       # in the new one
    python bench/identity_diff.py /tmp/before /tmp/after [--columns speed g_vertical ...]

Prints one line per scenario: ``identical``, or the max |Δ| of the chosen columns (default:
speed m/s, s m and the three G columns, raw and filtered) and of every numeric column.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

DEFAULT = ["s", "speed", "g_vertical", "g_lateral", "g_longitudinal",
           "g_vertical_filtered", "g_lateral_filtered", "g_longitudinal_filtered"]


def _read(path: Path):
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    cols = {}
    for j, name in enumerate(head):
        try:
            cols[name] = np.array([float(r[j]) for r in body])
        except ValueError:
            continue        # a text column (train name)
    return cols


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--columns", nargs="+", default=DEFAULT)
    opts = ap.parse_args(argv)
    for d in sorted(p for p in opts.before.iterdir() if p.is_dir()):
        a, b = d / "timeseries.csv", opts.after / d.name / "timeseries.csv"
        if not b.exists():
            print(f"{d.name:24s} missing in {opts.after}")
            continue
        if a.read_bytes() == b.read_bytes():
            print(f"{d.name:24s} identical")
            continue
        ca, cb = _read(a), _read(b)
        if any(len(ca[k]) != len(cb.get(k, ())) for k in ca):
            print(f"{d.name:24s} different row counts")
            continue
        diffs = {k: float(np.max(np.abs(ca[k] - cb[k]))) for k in ca if k in cb and len(ca[k])}
        worst = max(diffs, key=diffs.get)
        chosen = "  ".join(f"{k} {diffs[k]:.2e}" for k in opts.columns if k in diffs)
        print(f"{d.name:24s} max |Δ|: {chosen}  (largest: {worst} {diffs[worst]:.2e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
