"""Compile the kernels a run needs when the wheel is built, and ship them in it.

``pip install .`` builds a wheel (``setup.py`` runs this after copying the package): the kernels
a ``trackrider run`` uses are compiled then, into ``<package>/_kernel_cache/kernels-<hash>``
(``trackrider.cache.shipped_dir``), so the first run after the install loads them rather than
compiling for tens of seconds. pip installs them with the package and removes them with it.

    python -m trackrider.prebuild PACKAGE_DIR [SCENARIO.toml ...]

``PACKAGE_DIR`` is the built package (``build/lib/trackrider``); it is imported from there. Two
processes compile side by side: the physics kernel (``run_chunk``, one compiled variant for every
world) on a small train, and the track, filter and output kernels of each scenario given (the
bundled ones); then one more pass runs every scenario for a few steps and loads them all, to
compile anything the first two missed. Code is compiled for this machine's CPU, like a compile
at run time (the wheel ``pip install .`` builds is installed where it is built); with
``NUMBA_CPU_NAME=generic`` set it is portable across x86-64 CPUs (a few per cent slower per step).
Any failure leaves the wheel without kernels: they then compile on first use, as from a checkout.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trackrider.cache import SHIPPED


def _small_train() -> None:
    """``run_chunk`` compiled on a three-car train (every world runs the same compiled kernel: its
    optional parts are switched by data, not compiled per world)."""
    import numpy as np

    from trackrider.curves import Track
    from trackrider.physics import CarSpec, CouplingSpec, World

    x = np.linspace(0.0, 200.0, 41)
    w = World()
    w.add_track(Track.from_points(np.column_stack([x, 0.0 * x, 0.05 * x])))
    w.add_train("a", 0, 3, CarSpec(mass=500.0, length=2.0, width=1.2, height=1.0),
                coupling=CouplingSpec("distance", 0.5), start_s=100.0)
    w.run(2, 1)


def _scenarios(paths: list[str], steps: int | None) -> None:
    """Each scenario loaded and built (its track and setup kernels); with ``steps``, also run for
    that many steps with its outputs written (every kernel a run of it uses)."""
    from trackrider.scenario import build_world, load_scenario
    from trackrider.sim import simulate

    for path in paths:
        try:
            scenario = load_scenario(path)
        except Exception:  # noqa: BLE001 - not a scenario (a sweep file), or one this build refuses
            continue
        if steps is None:
            build_world(scenario)
            continue
        with tempfile.TemporaryDirectory() as out:
            simulate(scenario, out_dir=Path(out) / "r", duration=steps * scenario.simulation.dt, progress=None)


def build(package: Path, scenarios: list[str]) -> Path:
    """Compile into a temporary cache and copy this version's folder to ``package/_kernel_cache``.
    Returns that folder."""
    with tempfile.TemporaryDirectory(prefix="trackrider-prebuild-") as tmp:
        path = os.pathsep.join(filter(None, [str(package.parent), os.environ.get("PYTHONPATH")]))
        env = dict(os.environ, TRACKRIDER_CACHE_DIR=tmp, PYTHONPATH=path)
        env.pop("NUMBA_DISABLE_JIT", None)
        me = [sys.executable, "-m", "trackrider.prebuild", "--part"]
        here = dict(env=env, cwd=str(package.parent))   # the package imported is this one
        parts = [subprocess.Popen(me + ["train"], **here), subprocess.Popen(me + ["setup", *scenarios], **here)]
        try:
            codes = [p.wait() for p in parts]
        finally:
            for p in parts:
                if p.poll() is None:    # this process was stopped: so are the compiles
                    p.kill()
        if any(codes):
            raise RuntimeError("compiling the kernels failed")
        subprocess.run(me + ["runs", *scenarios], check=True, **here)
        found = sorted(Path(tmp).glob("kernels-*"))
        if len(found) != 1:
            raise RuntimeError(f"expected one kernel folder, found {len(found)}")
        return ship(found[0], package)


def ship(folder: Path, package: Path) -> Path:
    """``folder`` (a ``kernels-<hash>`` folder) copied to ``package/_kernel_cache/``, without
    temporary or lock files, under a temporary name first and then renamed: a build stopped while
    copying leaves no folder of kernels that looks complete (every file is checked when read
    anyway). Returns the copy."""
    shipped = package / SHIPPED
    shutil.rmtree(shipped, ignore_errors=True)
    part = package / f".{SHIPPED}.part"
    shutil.rmtree(part, ignore_errors=True)
    shutil.copytree(folder, part / folder.name, ignore=shutil.ignore_patterns("*.tmp.*", ".lock"))
    os.replace(part, shipped)
    return shipped / folder.name


def main(argv: list[str]) -> int:
    if argv[:1] == ["--part"]:
        part, paths = argv[1], argv[2:]
        if part == "train":
            _small_train()
        else:
            _scenarios(paths, None if part == "setup" else 5)
        return 0
    if not argv:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    package = Path(argv[0]).resolve()
    if not (package / "__init__.py").is_file():
        print(f"error: {package} is not a package folder", file=sys.stderr)
        return 2
    dest = build(package, argv[1:])
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"trackrider: compiled kernels shipped in {dest} ({size / 1e6:.1f} MB, {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
