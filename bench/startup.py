"""How long the commands take from the shell: wall time of whole processes, median of N.

Run: ``python bench/startup.py [--repeat 5] [--cold 3]``

Measures this checkout (put first on ``PYTHONPATH``), each command as the ``trackrider``
console script runs it (``from trackrider.cli import app; app()`` in a new interpreter);
with ``--against OTHER_CHECKOUT`` that one too, the two taking turns run by run:

* ``trackrider --help``
* ``trackrider validate scenarios/classic_coaster.toml``
* a warm ``trackrider run scenarios/classic_coaster.toml --overwrite --quiet`` (kernels in
  the cache, which the first, unmeasured run fills)
* a cold run: the same with an empty kernel cache (``TRACKRIDER_CACHE_DIR`` a new folder)

* ``trackrider validate`` of a long point track (``--long-track KM``: a winding, hilly track of
  points 1 m apart, written to a temporary folder; its kernels loaded once first, like the run's)

``--cache DIR`` (and ``--against-cache DIR``) time the checkouts with a kernel cache of their own
that is already warm, rather than a new one filled by a first, unmeasured run (a cold compile of
every kernel); ``--all-scenarios`` also times a warm ``trackrider run`` of every bundled scenario
(every one but the sweeps'), each loaded once first.

With ``--breakdown`` it also prints where a warm run of classic_coaster spends its CPU and wall
time, stage by stage, in one process (medians): starting Python with numpy, importing numba, the
CLI, the kernels' modules; then within the run, loading the scenario (its track built), building
the world, loading the compiled kernels from the cache, stepping; the rest of the run (outputs).

With ``--install`` it measures what a new user sees instead, for this checkout (and
``--against``): a clean copy of the checkout's files (``git ls-files``) installed with
``pip install`` into a new virtual environment (not the machine's packages), the wall and CPU time of
that install, then for each scenario (``--scenarios``, default every bundled one) its first
``trackrider run`` with an empty per-user kernel cache and the run after it, then
``pip uninstall`` and whatever of trackrider it left in ``site-packages``.

With ``--sweep`` it also times the runs of ``scenarios/sweep_tiny.toml`` after the driver's warm-up
(``trackrider.sweep.warm_up``), in one process one after another and on the sweep's process pool
(two workers): runs per second, the median CPU time of a run, and how many kernels the runs
loaded or compiled themselves (0: the warm-up readied every one before the workers forked).

Targets (issue 30, quiet 2-core machine): the first run of any bundled scenario after
``pip install .`` ≤ 5 s more than its later runs, the install at most 60 s longer than
before; a later run of classic_coaster ≤ 0.8 s; validate ≤ 0.4 s, of a 50 km point track ≤ 5 s.
Wall time is the target; the last column, the median CPU time (user + system) of the same
processes, moves less when other work shares the machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = "import sys; sys.argv[0] = 'trackrider'; from trackrider.cli import app; app()"


def _env(cache_dir: Path, root: Path = ROOT) -> dict:
    """The environment of a timed command: this checkout first on the path, its own kernel cache, and
    Python's compiled bytecode kept (beside that cache, never in the checkout) as an installed package
    has it, even where ``PYTHONDONTWRITEBYTECODE`` is set."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TRACKRIDER_CACHE_DIR"] = str(cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache_dir.with_name(cache_dir.name + "-bytecode"))
    return env


_CPU = []   # CPU seconds (user + system) of each timed process, in the order timed


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _time(args, env, cwd) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *args], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    _CPU.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall


#: ``--breakdown``: a warm ``trackrider run`` in one process, each stage timed (CPU, wall), printed as a dict
BREAKDOWN = r"""
import sys, time
c0, w0 = time.process_time(), time.perf_counter()
marks = []
def mark(name):
    marks.append((name, time.process_time(), time.perf_counter()))
import numpy; mark("interpreter, numpy")
import numba; mark("import numba")
import trackrider.cli; mark("import trackrider.cli (typer, rich)")
import trackrider.scenario, trackrider.physics.world, trackrider.sim; mark("import the kernels' modules")
from trackrider import jit_cache, scenario
from trackrider.physics import world
spent = {}
def timed(owner, name, label):
    f = getattr(owner, name)
    def wrapper(*a, **k):
        c, w = time.process_time(), time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            sc, sw = spent.get(label, (0.0, 0.0))
            spent[label] = (sc + time.process_time() - c, sw + time.perf_counter() - w)
    setattr(owner, name, wrapper)
timed(scenario, "load_scenario", "load the scenario (track build)")
timed(scenario, "build_world", "build the world")
timed(jit_cache.KernelCache, "load_overload", "load kernels from the cache")
timed(world.World, "run", "step (and load kernels)")
sys.argv = ["trackrider", *sys.argv[1:]]
try:
    trackrider.cli.app()
except SystemExit:
    pass
mark("trackrider run")
out, (pc, pw) = {}, (c0, w0)
for name, c, w in marks:
    out[name] = (c - pc, w - pw)
    pc, pw = c, w
out.update(spent)
sc, sw = out.pop("step (and load kernels)")
lc, lw = out["load kernels from the cache"]
out["step"] = (sc - lc, sw - lw)
out["total"] = (time.process_time(), time.perf_counter() - w0)
print(repr(out))
"""


def breakdown(env, run, cwd, repeat: int) -> None:
    """``--breakdown``: medians over ``repeat`` processes of each stage of a warm run (CPU, wall)."""
    rows = {}
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", BREAKDOWN, *run], env=env, cwd=cwd, capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise SystemExit(f"breakdown failed: {proc.stderr.strip()}")
        for name, pair in eval(proc.stdout.strip().splitlines()[-1]).items():  # noqa: S307 - our own output
            rows.setdefault(name, []).append(pair)
    print(f"{'stage of a warm run (median of ' + str(repeat) + ')':48s} {'cpu s':>6s} {'wall s':>7s}")
    for name, pairs in rows.items():
        print(f"{name:48s} {statistics.median(c for c, _ in pairs):6.3f} {statistics.median(w for _, w in pairs):7.3f}")


#: ``--sweep``: the tiny sweep's runs after the warm-up, in this process and on the pool, printed as a dict
SWEEP = r"""
import gc, shutil, statistics, sys, tempfile, time
from pathlib import Path
from trackrider import sweep as sw
spec = sw.load_sweep(Path(sys.argv[1]))
plan = sw.plan_runs(spec)
sw.warm_up(spec.scenario, plan[0]["values"], spec.keep_timeseries)
from numba.core.registry import CPUDispatcher
from trackrider.jit import _Deferred
kernels = [o for o in gc.get_objects() if isinstance(o, (CPUDispatcher, _Deferred))]
def loaded():    # compiled or loaded versions of every kernel (a deferred one's once its dispatcher is made)
    made = {id(d): d for d in (k.dispatcher if isinstance(k, _Deferred) else k for k in kernels) if d is not None}
    return sum(len(d.overloads) for d in made.values())
def probe(task):
    c, n = time.process_time(), loaded()
    sw.run_one(task)
    return time.process_time() - c, loaded() - n
def tasks(folder):
    (folder / "runs").mkdir(parents=True)
    return [dict(item, scenario=str(spec.scenario), sweep_dir=str(folder), duration=spec.duration,
                 keep_timeseries=spec.keep_timeseries) for item in plan]
tmp = Path(tempfile.mkdtemp(prefix="trackrider-startup-sweep-"))
try:
    todo = tasks(tmp / "one")
    t0 = time.perf_counter()
    rows = {"one process": ([probe(t) for t in todo], time.perf_counter() - t0)}
    executor, close, _, _ = sw.make_executor(2)
    list(executor.map(time.sleep, [0.01, 0.01]))            # both workers up
    todo = tasks(tmp / "pool")
    t0 = time.perf_counter()
    rows["process pool, 2 workers"] = (list(executor.map(probe, todo)), time.perf_counter() - t0)
    close()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(repr({k: (len(v) / w, statistics.median(c for c, _ in v), sum(n for _, n in v)) for k, (v, w) in rows.items()}))
"""


def sweep_rates(env, cwd, root: Path, repeat: int) -> None:
    """``--sweep``: medians over ``repeat`` processes of the tiny sweep's runs per second, CPU per run and
    kernels its runs loaded, in one process and on the pool."""
    rows = {}
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", SWEEP, str(root / "scenarios" / "sweep_tiny.toml")], env=env,
                              cwd=cwd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"sweep failed: {proc.stderr.strip()}")
        for name, triple in eval(proc.stdout.strip().splitlines()[-1]).items():  # noqa: S307 - our own output
            rows.setdefault(name, []).append(triple)
    print(f"{'sweep_tiny after the warm-up (median of ' + str(repeat) + ')':44s} {'runs/s':>7s} {'cpu s/run':>9s}"
          f"  kernels loaded by the runs")
    for name, triples in rows.items():
        print(f"{name:44s} {statistics.median(r for r, _, _ in triples):7.2f} "
              f"{statistics.median(c for _, c, _ in triples):9.4f}  {max(n for _, _, n in triples)}")


def bundled(root: Path) -> list[str]:
    """The names of the bundled scenarios that ``trackrider run`` runs (every one but the sweeps')."""
    return sorted(p.stem for p in (root / "scenarios").glob("*.toml") if not p.stem.startswith("sweep_"))


def _commands(root: Path, out: Path, long_track: Path | None, every: bool = False):
    scenario = root / "scenarios" / "classic_coaster.toml"
    run = ["run", str(scenario), "--out", str(out), "--overwrite", "--quiet"]
    commands = (("trackrider --help", ["--help"]),
                ("trackrider validate classic_coaster", ["validate", str(scenario)]),
                ("trackrider run classic_coaster (warm)", run))
    if every:       # the others, each warm (its first run, unmeasured, loads what it needs)
        commands += tuple((f"run {name} (warm)", ["run", str(root / "scenarios" / f"{name}.toml"), "--out",
                                                   str(out), "--overwrite", "--quiet"])
                          for name in bundled(root) if name != "classic_coaster")
    if long_track is not None:
        commands += ((f"trackrider validate {long_track.stem}", ["validate", str(long_track)]),)
    return run, commands


def long_track(folder: Path, km: float) -> Path:
    """A scenario on a winding, hilly open track of points 1 m apart (in space), ``km`` long less 10 m
    (50: just under the longest track a scenario may have), its CSV beside it."""
    import numpy as np

    s = np.arange(int(km * 1000) - 9, dtype=float)
    heading = 0.9 * np.sin(s / 900.0) + 0.5 * np.sin(s / 2300.0 + 1.0)
    z = 20.0 + 8.0 * np.sin(s / 400.0) + 3.0 * np.sin(s / 130.0)
    step = np.sqrt(1.0 - np.diff(z) ** 2)              # horizontal run of each 1 m step
    x = np.concatenate([[0.0], np.cumsum(step * np.cos(heading[:-1]))])
    y = np.concatenate([[0.0], np.cumsum(step * np.sin(heading[:-1]))])
    folder.mkdir(parents=True, exist_ok=True)
    np.savetxt(folder / "long.csv", np.column_stack([x, y, z]), fmt="%.6f", delimiter=",", header="x,y,z",
               comments="")
    path = folder / f"long_{km:g}km.toml"
    path.write_text(f"""title = "A {km:g} km point track"
[simulation]
duration = 1.0
[[track]]
name = "main"
curve = "long.csv"
format = "points"
[[train]]
name = "car"
track = "main"
cars = 1
start_s = 100.0
[train.car]
mass = 500.0
length = 2.0
width = 1.2
height = 1.0
""")
    return path


def _clean_copy(root: Path, dest: Path) -> Path:
    """The checkout's files (tracked and new, as git lists them) copied to ``dest``."""
    files = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard"], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for name in files:
        if (root / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, dest / name)
    return dest


def install_plan(roots, tmp: Path, scenarios: list[str]) -> None:
    """``--install``: a new virtual environment per checkout, ``pip install`` of a clean copy
    (timed), each scenario's first run on an empty kernel cache and the run after it, the checkouts
    taking turns; then ``pip uninstall`` and what it left behind."""
    envs = []
    for k, root in enumerate(roots):
        venv = tmp / f"venv-{k}"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        src = _clean_copy(root, tmp / f"src-{k}")
        r0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(src)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"{root}: pip install {time.perf_counter() - t0:.1f} s wall, {_children_cpu() - r0:.1f} s cpu",
              flush=True)
        envs.append((venv, src))
    rows = []
    for name in scenarios:
        for k, (venv, src) in enumerate(envs):
            env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp / f"user-cache-{k}-{name}"))
            for var in ("PYTHONPATH", "NUMBA_CACHE_DIR"):
                env.pop(var, None)
            args = [str(venv / "bin" / "trackrider"), "run", str(src / "scenarios" / f"{name}.toml"),
                    "--out", str(tmp / f"out-{k}"), "--overwrite", "--quiet"]
            times, cpus = [], []
            for _ in range(2):
                r0, t0 = _children_cpu(), time.perf_counter()
                proc = subprocess.run(args, env=env, cwd=tmp, capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                cpus.append(_children_cpu() - r0)
                if proc.returncode != 0:
                    raise SystemExit(f"{name} failed: {proc.stderr.strip()}")
            rows.append((k, name, times[0], times[1]))
            print(f"{roots[k].name:12s} {name:22s} first {times[0]:6.2f} s  later {times[1]:6.2f} s  "
                  f"first − later {times[0] - times[1]:6.2f} s  (cpu {cpus[0]:.2f}, {cpus[1]:.2f} s)", flush=True)
    for k, (venv, _) in enumerate(envs):
        subprocess.run([str(venv / "bin" / "pip"), "uninstall", "-q", "-y", "trackrider"], check=True)
        site = next(venv.glob("lib/python*/site-packages"))
        left = sorted(p.name for p in site.iterdir() if p.name.lower().startswith("trackrider"))
        print(f"{roots[k]}: after pip uninstall, site-packages holds {left or 'nothing of trackrider'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per warm command (median)")
    parser.add_argument("--cold", type=int, default=3, help="cold runs (each compiles from empty; 0: none)")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout to time too, run for run in turn with this one (on a busy "
                             "machine the load then falls on both alike)")
    parser.add_argument("--caches", type=Path, metavar="DIR",
                        help="keep the warm kernel caches (and bytecode) in DIR/warm-cache-K, one per checkout, "
                             "for the next time (default: a temporary folder; its first run compiles)")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="this checkout's warm kernel cache: an existing folder used as it is (default: --caches)")
    parser.add_argument("--against-cache", type=Path, metavar="DIR",
                        help="the --against checkout's warm kernel cache, used as it is")
    parser.add_argument("--all-scenarios", action="store_true",
                        help="also time a warm run of every bundled scenario (but the sweeps), in turn")
    parser.add_argument("--long-track", type=float, default=0.0, metavar="KM",
                        help="also time validate of a point track this long (e.g. 50)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the stages of a warm run of this checkout in one process (CPU and wall)")
    parser.add_argument("--sweep", action="store_true",
                        help="also time the tiny sweep's runs in one process and on the pool (runs/s, CPU per run)")
    parser.add_argument("--install", action="store_true",
                        help="time pip install into a new environment and each scenario's first run after it")
    parser.add_argument("--scenarios", nargs="*", metavar="NAME",
                        help="with --install: the bundled scenarios to run (default: all but the sweeps)")
    opts = parser.parse_args()
    roots = [ROOT] + ([opts.against.resolve()] if opts.against else [])
    with tempfile.TemporaryDirectory(prefix="trackrider-startup-") as tmp:
        tmp = Path(tmp)
        if opts.install:
            names = opts.scenarios or bundled(ROOT)
            install_plan(roots, tmp, names)
            return
        track = long_track(tmp / "long", opts.long_track) if opts.long_track else None
        plans = []
        for k, root in enumerate(roots):
            given = [opts.cache, opts.against_cache][k]
            env = _env(given.resolve() if given else (opts.caches or tmp) / f"warm-cache-{k}", root)
            run, commands = _commands(root, tmp / f"results-{k}", track, opts.all_scenarios)
            _time(run, env, tmp)                  # fills the kernel cache
            for label, args in commands[3:]:      # and with every scenario's kernels (--all-scenarios)
                if label.startswith("run "):
                    _time(args, env, tmp)
            if track is not None:                 # and with the kernels of a point track
                _time(["validate", str(track)], env, tmp)
            plans.append((env, run, commands))
        if opts.breakdown:
            for k, (env, run, _) in enumerate(plans):
                if len(roots) > 1:
                    print(f"{roots[k]}:")
                breakdown(env, run, tmp, opts.repeat)
        if opts.sweep:
            for k, (env, _, _) in enumerate(plans):
                if len(roots) > 1:
                    print(f"{roots[k]}:")
                sweep_rates(env, tmp, roots[k], opts.repeat)
        times = {(k, label): [] for k in range(len(roots)) for label, _ in plans[0][2]}
        cpu = {}
        for c in range(len(plans[0][2])):
            once = plans[0][2][c][0].startswith("trackrider validate long")  # tens of seconds before
            for _ in range(1 if once else opts.repeat):
                for k, (env, _, commands) in enumerate(plans):
                    label, args = commands[c]
                    times[(k, label)].append(_time(args, env, tmp))
                    cpu.setdefault((k, label), []).append(_CPU[-1])
        label_cold = "trackrider run classic_coaster (cold)"
        for i in range(opts.cold):
            for k, (_, run, _) in enumerate(plans):
                times.setdefault((k, label_cold), []).append(_time(run, _env(tmp / f"cold-cache-{k}-{i}", roots[k]), tmp))
                cpu.setdefault((k, label_cold), []).append(_CPU[-1])
    for k, root in enumerate(roots):
        if len(roots) > 1:
            print(f"{root}:")
        print(f"{'command':40s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  runs  {'cpu s':>6s}")
        for (kk, label), ts in times.items():
            if kk == k:
                print(f"{label:40s} {statistics.median(ts):9.2f} {min(ts):7.2f} {max(ts):7.2f}  {len(ts):4d}  "
                      f"{statistics.median(cpu[(kk, label)]):6.2f}")


if __name__ == "__main__":
    main()
