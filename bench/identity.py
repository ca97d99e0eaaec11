"""Byte-identity check of every bundled scenario's outputs against a stored baseline.

Runs each scenario in ``scenarios/`` (not the sweep files) with this checkout's CLI, then
compares ``timeseries.csv`` byte for byte and ``summary.json`` byte for byte after dropping its
timing-only fields (``wall_s`` and any key that times the run: ``TIMING_KEYS``) and the
scenario's path (``PLACE_KEYS``: so that two checkouts can be compared).

    python bench/identity.py record DIR      # store the outputs of the current code in DIR
    python bench/identity.py check DIR       # run again, compare with DIR: one line per scenario
    python bench/identity.py check DIR --only freight pendulum

``check`` prints ``identical`` or ``differs`` (with the file and its first differing line) per
scenario and exits 1 if any differs. A refactor that must change no number passes this check.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
TIMING_KEYS = {"wall_s", "compile_s", "kernel_s", "realtime_factor", "x_real_time"}
#: where the checkout is, not a result: dropped so that two checkouts can be compared
PLACE_KEYS = {"scenario"}


def scenarios(only=None):
    out = sorted(p for p in SCENARIOS.glob("*.toml") if not p.stem.startswith("sweep"))
    if only:
        out = [p for p in out if p.stem in only]
    return out


def run(path: Path, out_dir: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    p = subprocess.run([sys.executable, "-m", "trackrider.cli", "run", str(path), "--out", str(out_dir), "-q",
                        "--overwrite"], cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: diverged (outputs kept): still compared
        raise RuntimeError(f"{path.name}: exit {p.returncode}\n{p.stderr}")


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in TIMING_KEYS | PLACE_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def summary_text(path: Path) -> str:
    return json.dumps(_strip(json.loads(path.read_text())), indent=1, sort_keys=True) + "\n"


def keep(run_dir: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run_dir / "timeseries.csv", dest / "timeseries.csv")
    (dest / "summary.json").write_text(summary_text(run_dir / "summary.json"))


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: {x[:120]!r} != {y[:120]!r}"
    return f"length {len(la)} lines != {len(lb)} lines"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] not in ("record", "check"):
        print(__doc__)
        return 2
    mode, base = argv[0], Path(argv[1])
    only = argv[argv.index("--only") + 1:] if "--only" in argv else None
    bad = new_ones = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sc in scenarios(only):
            run_dir = Path(tmp) / sc.stem
            run(sc, run_dir)
            if mode == "record":
                keep(run_dir, base / sc.stem)
                print(f"{sc.stem:24s} recorded")
                continue
            ref = base / sc.stem
            if not ref.is_dir():          # a scenario added since the baseline was recorded
                new_ones += 1
                print(f"{sc.stem:24s} new (not in the baseline)")
                continue
            new = {"timeseries.csv": (run_dir / "timeseries.csv").read_bytes(),
                   "summary.json": summary_text(run_dir / "summary.json").encode()}
            diffs = []
            for name, data in new.items():
                old = (ref / name).read_bytes()
                if old != data:
                    diffs.append(f"{name} {first_difference(old, data)}")
            if diffs:
                bad += 1
                print(f"{sc.stem:24s} differs ({'; '.join(diffs)})")
            else:
                print(f"{sc.stem:24s} identical")
    if mode == "check":
        print(f"{len(scenarios(only)) - bad - new_ones} identical, {bad} differ"
              + (f", {new_ones} new" if new_ones else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
