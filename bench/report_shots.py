"""Screenshots of the report for docs/report.md: classic_coaster, two_train_coaster, freight and passing_loop.

Runs each scenario with ``--report`` into a temporary folder, renders the page in Debian's
chromium (headless, off the network, a fresh profile) and keeps the top of it as a PNG in docs/:

    python bench/report_shots.py    # docs/report_classic.png, report_two_train.png, report_freight.png, report_network.png
    python bench/report_shots.py --only freight

Prints each file with its size. Needs ``chromium``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: scenario → (PNG in docs/, seconds simulated, window height in px shown)
SHOTS = {"classic_coaster": ("report_classic.png", None, 2300),
         "two_train_coaster": ("report_two_train.png", None, 1900),
         "freight": ("report_freight.png", None, 2600),
         "passing_loop": ("report_network.png", None, 1500)}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def shoot(name: str, work: Path) -> Path:
    png_name, seconds, height = SHOTS[name]
    out = work / name
    cmd = [sys.executable, "-m", "trackrider.cli", "run", str(ROOT / "scenarios" / f"{name}.toml"), "--out", str(out),
           "-q", "--report"] + (["--duration", str(seconds)] if seconds else [])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(cmd, check=True, cwd=work, env=env)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (Debian package 'chromium')")
    png = ROOT / "docs" / png_name
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                        f"--window-size=1280,{height}", (out / "report.html").as_uri()],
                       check=True, capture_output=True, timeout=300)
    return png


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(SHOTS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for name in args.only or SHOTS:
            png = shoot(name, Path(work))
            print(f"{png.relative_to(ROOT)}: {png.stat().st_size / 1024:.0f} kB")


if __name__ == "__main__":
    main()
