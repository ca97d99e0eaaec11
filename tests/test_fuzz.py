"""Seeded fuzzing of the bundled scenarios, curves and results (issue: every input answered in seconds).

Mutants of ``scenarios/*.toml`` (a number scaled to an absurd value, a value of the
wrong type, a key dropped or misspelt) and of ``curves/*`` (a coordinate made huge,
lines dropped, repeated or garbled) go through ``validate`` and ``curve``; mutants of a
results folder (a ``summary.json`` field of the wrong type or absurd, a ``timeseries.csv``
field garbled, lines dropped, repeated, swapped or cut) go through ``plot`` and ``report``,
which must give the same answer (and what they refuse, ``render`` refuses too). Every case
must end in ``ok`` (exit 0, at most ``warning:`` lines besides) or in one ``error:`` line
with exit code 2, within ``CASE_LIMIT_S`` of CPU and with the worker's peak memory under
``MEMORY_LIMIT``. A few valid mutants are run for a couple of seconds: each reports
finite, physically bounded figures or ends ``diverged`` (exit 1).

The cases run in one worker process (this file as a script), so its peak memory is
the largest any case needed; the same seed gives the same cases. CI runs a few hundred
cases (the test below); ``python bench/fuzz.py`` runs 10 000.
"""
from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261124
N_SCENARIO_CASES = 300
N_CURVE_CASES = 100
N_RESULT_CASES = 30
N_RUNS = 12
RUN_SECONDS = 3.0
#: CPU seconds a case may take (its wall time on a loaded shared machine is no measure of the work)
CASE_LIMIT_S = 20.0
#: wall seconds after which a case counts as hung
HANG_S = 6 * CASE_LIMIT_S
MEMORY_LIMIT = 3 * 2**30
ABSURD = [0.0, -1.0, 1e-9, 8e-6, 1e-3, 1e3, 1e6, 1e9, 1e300, -1e300, float("nan"), float("inf")]


# ------------------------------------------------------------------ mutants

def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    else:
        yield path, node


def _set(doc, path, value):
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def _delete(doc, path):
    node = doc
    for p in path[:-1]:
        node = node[p]
    if isinstance(node, dict):
        del node[path[-1]]
    else:
        node.pop(path[-1])


def _toml(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        if isinstance(value, float) and math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def dump_toml(doc):
    """A TOML text of ``doc`` (tables and arrays of tables at top level, the rest inline)."""
    lines = []
    for key, value in doc.items():
        if not isinstance(value, (dict, list)) or (isinstance(value, list) and not all(isinstance(v, dict)
                                                                                     for v in value)):
            lines.append(f"{json.dumps(key)} = {_toml(value)}")
    for key, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"[{key}]")
            lines += [f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                lines.append(f"[[{key}]]")
                lines += [f"{json.dumps(k)} = {_toml(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def mutate_scenario(doc, rng):
    doc = copy.deepcopy(doc)
    leaves = [(p, v) for p, v in _leaves(doc) if p and p[0] != "title" and p[0] != "description"]
    path, value = rng.choice(leaves)
    kind = rng.random()
    if kind < 0.6 and isinstance(value, (int, float)) and not isinstance(value, bool):
        new = rng.choice(ABSURD) * (1 if rng.random() < 0.5 else value if value else 1)
        if isinstance(value, int) and math.isfinite(new) and abs(new) < 1e15 and rng.random() < 0.5:
            new = int(new)
        _set(doc, path, new)
    elif kind < 0.75:
        _set(doc, path, rng.choice(["", "x", True, [], {"a": 1}, [1.0, 2.0], -7]))
    elif kind < 0.9 and len(path) > 1:
        _delete(doc, path)
    else:
        node = doc
        for p in path[:-1]:
            node = node[p]
        if isinstance(node, dict):
            node[str(path[-1]) + "s"] = value if not isinstance(value, float) or math.isfinite(value) else 1.0
    return doc


def mutate_curve(text, rng):
    lines = text.splitlines()
    n = len(lines)
    kind = rng.randrange(6)
    i = rng.randrange(1, n) if n > 1 else 0
    if kind == 0:                       # a coordinate made absurd
        parts = lines[i].replace("\t", ",").split(",")
        j = rng.randrange(len(parts))
        parts[j] = repr(rng.choice([1e300, -1e9, 1e6, 8e-6, float("nan")]))
        lines[i] = ("\t" if "\t" in lines[i] else ",").join(parts)
    elif kind == 1:                     # lines dropped
        del lines[i:i + rng.randrange(1, max(2, n // 2))]
    elif kind == 2:                     # a line repeated
        lines.insert(i, lines[i])
    elif kind == 3:                     # garbage
        lines[i] = rng.choice(["", "nan,nan,nan", "1,2", "a,b,c", "\x00\x01", "1e999,0,0", "{", "]"])
    elif kind == 4:                     # a kink: one point moved sideways
        parts = lines[i].replace("\t", ",").split(",")
        try:
            parts[1] = repr(float(parts[1]) + rng.choice([-1, 1]) * rng.choice([0.5, 5.0, 50.0]))
        except (ValueError, IndexError):
            pass
        lines[i] = ("\t" if "\t" in lines[i] else ",").join(parts)
    else:                               # truncated
        lines = lines[: rng.randrange(1, max(2, n))]
    return "\n".join(lines) + "\n"


#: garbage for a timeseries.csv field
FIELD_GARBAGE = ["", "x", "nan", "inf", "-inf", "1e400", "-0", "1e-320", "1e300", "\u00e9", '"', "1,2", " 1", "0x10"]


def mutate_results(folder, rng):
    """Change one thing in a copy of a results folder, as a hand edit (or a cut) might."""
    folder = Path(folder)
    if rng.random() < 0.5:
        path = folder / "summary.json"
        doc = json.loads(path.read_text())
        leaves = [(p, v) for p, v in _leaves(doc) if p]
        where, value = rng.choice(leaves)
        kind = rng.random()
        if kind < 0.4 and isinstance(value, (int, float)) and not isinstance(value, bool):
            _set(doc, where, rng.choice(ABSURD) * (value or 1))
        elif kind < 0.75:
            _set(doc, where, rng.choice(["", "x", True, None, [], {"a": 1}, [1.0, "b"], -7, 1e308]))
        elif kind < 0.9:
            _delete(doc, where[: rng.randrange(1, len(where) + 1)])
        else:
            _set(doc, where[:1], rng.choice([[], "x", 3, None, {}]))
        path.write_text(json.dumps(doc))
        return
    path = folder / "timeseries.csv"
    lines = path.read_text().split("\n")
    n = len(lines)
    i, j = rng.randrange(0, n - 1), rng.randrange(1, n - 1)
    kind = rng.randrange(6)
    if kind == 0:                                   # a field garbled
        fields = lines[i].split(",")
        fields[rng.randrange(len(fields))] = rng.choice(FIELD_GARBAGE)
        lines[i] = ",".join(fields)
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[j])
    elif kind == 3:
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 4:                                 # a column gone from every line
        c = rng.randrange(len(lines[0].split(",")))
        lines = [",".join(f for k, f in enumerate(ln.split(",")) if k != c) if ln else ln for ln in lines]
    text = "\n".join(lines)
    if kind == 5:                                   # cut at a byte
        text = text[: rng.randrange(len(text))]
    path.write_text(text)


def make_cases(tmp, n_scenarios=N_SCENARIO_CASES, n_curves=N_CURVE_CASES, n_results=N_RESULT_CASES, seed=SEED):
    import tomllib

    rng = random.Random(seed)
    scenarios = sorted(p for p in (ROOT / "scenarios").glob("*.toml") if not p.name.startswith("sweep"))
    curves = sorted((ROOT / "curves").glob("*.*"))
    cases = []
    for k in range(n_scenarios):
        base = rng.choice(scenarios)
        doc = tomllib.loads(base.read_text())
        for track in doc.get("track", []):        # curve paths relative to the bundled file
            if "curve" in track:
                track["curve"] = str((base.parent / track["curve"]).resolve())
        path = tmp / f"s{k:03d}_{base.stem}.toml"
        path.write_text(dump_toml(mutate_scenario(doc, rng)))
        cases.append(["validate", str(path)])
    for k in range(n_curves):
        base = rng.choice(curves)
        path = tmp / f"c{k:03d}_{base.name}"
        path.write_text(mutate_curve(base.read_text(), rng))
        cases.append(["curve", str(path)])
    for k in range(n_results):     # the worker makes the folders: ["results", base, mutation seed]
        cases.append(["results", rng.choice(RESULT_BASES), str(rng.randrange(2**32))])
    return cases


# ------------------------------------------------------------------ the worker (this file as a script)

def _speed_bound(path):
    """A speed no run of this scenario can honestly reach within RUN_SECONDS, m/s."""
    from trackrider.scenario import load_scenario

    sc = load_scenario(path)
    g = sc.simulation.gravity
    v = [abs(t.start_speed) for t in sc.trains] + [s.speed for s in sc.sections]
    v += [math.sqrt(sum(c * c for c in b.velocity)) for b in sc.bodies]
    # free fall for the whole run plus every motor's target speed: far above any honest ride
    return 2.0 * max(v + [0.0]) + 2.0 * g * RUN_SECONDS + 50.0


#: the runs whose results are mutated: (scenario, seconds)
RESULT_BASES = ["pendulum", "weight_drop", "two_train_coaster"]
_RESULT_SECONDS = {"pendulum": 0.5, "weight_drop": 1.0, "two_train_coaster": 3.0}


def _results_base(runner, app, base, tmp) -> Path:
    """The results of a short run of the bundled scenario ``base`` (made once, before the cases)."""
    made = tmp / f"base_{base}"
    if not made.exists():
        r = runner.invoke(app, ["run", str(ROOT / "scenarios" / f"{base}.toml"), "--out", str(made),
                                "--duration", str(_RESULT_SECONDS[base]), "-q"])
        assert r.exit_code == 0, r.stderr
    return made


_RENDER_OK: list = []


def _can_render() -> bool:
    """Whether this machine renders off screen (probed once, in a subprocess)."""
    if not _RENDER_OK:
        from trackrider.render.probe import check_rendering

        _RENDER_OK.append(check_rendering() is None)
    return _RENDER_OK[0]


def _results_case(runner, app, base, seed, tmp):
    """``plot`` and ``report`` of a mutated copy of ``base``'s results: one outcome for both
    (their exit codes and stderr joined) when they agree, else a disagreement (code -2). What
    both refuse, ``render`` must refuse too where this machine renders (before drawing: a still
    of what they accept would take seconds a case)."""
    import shutil

    made = _results_base(runner, app, base, tmp)
    folder = tmp / f"res_{seed}"
    shutil.copytree(made, folder)
    mutate_results(folder, random.Random(int(seed)))
    outcomes, cpus = [], []
    for command, out in (("plot", folder / "p.png"), ("report", folder / "r.html")):
        c0 = time.process_time()
        r = runner.invoke(app, [command, str(folder), "--out", str(out)])
        outcomes.append((r.exit_code, r.stderr, r.stdout))
        cpus.append(time.process_time() - c0)
    (c1, e1, o1), (c2, e2, o2) = outcomes
    if c1 and c2 and _can_render():
        c0 = time.process_time()
        r = runner.invoke(app, ["render", str(folder), "--out", str(folder / "still.png")])
        cpus.append(time.process_time() - c0)
        if r.exit_code != 2:
            shutil.rmtree(folder)
            return -2, f"plot refuses ({e1.strip()[-300:]}), render {r.exit_code}: {r.stderr.strip()[-300:]}", \
                "", max(cpus)
    shutil.rmtree(folder)
    if (c1 == 0) != (c2 == 0):
        return -2, f"plot and report disagree: plot {c1}: {e1.strip()[-300:]} | report {c2}: {e2.strip()[-300:]}", \
            "", max(cpus)
    return (c1 if c1 else c2), (e1 if c1 else e2), o1 + o2, max(cpus)


def worker(case_file, out_file):
    import resource
    import signal

    from typer.testing import CliRunner

    from trackrider.cli import app

    def alarm(signum, frame):
        raise TimeoutError("case took too long")

    signal.signal(signal.SIGALRM, alarm)
    runner = CliRunner()
    cases = json.loads(Path(case_file).read_text())
    for base in sorted({args[1] for args in cases if args[0] == "results"}):
        _results_base(runner, app, base, Path(out_file).parent)
        _can_render()                  # probed before the cases' clocks start
    results = []
    ok_scenarios = []
    for args in cases:
        t0 = time.perf_counter()
        c0 = time.process_time()
        cpu = None
        signal.alarm((2 if args[0] == "results" else 1) * int(HANG_S))
        try:
            if args[0] == "results":     # its CPU time: the slower of plot, report (and render)
                code, err, out, cpu = _results_case(runner, app, args[1], args[2], Path(out_file).parent)
            else:
                r = runner.invoke(app, args)
                code, err, out = r.exit_code, r.stderr, r.stdout
        except TimeoutError:
            code, err, out = -1, "timeout", ""
        finally:
            signal.alarm(0)
        results.append({"args": args, "code": code, "stderr": err, "stdout": out[-200:],
                        "wall": time.perf_counter() - t0,
                        "cpu": time.process_time() - c0 if cpu is None else cpu})
        if args[0] == "validate" and code == 0:
            ok_scenarios.append(args[1])
    import trackrider

    assert Path(trackrider.__file__).resolve().parent == ROOT / "trackrider", trackrider.__file__
    runs = []
    rng = random.Random(SEED + 1)
    for path in rng.sample(ok_scenarios, min(N_RUNS, len(ok_scenarios))):
        out_dir = Path(out_file).parent / ("run_" + Path(path).stem)
        t0 = time.perf_counter()
        r = runner.invoke(app, ["run", path, "--out", str(out_dir), "--duration", str(RUN_SECONDS), "--quiet"])
        summary = None
        if (out_dir / "summary.json").exists():
            summary = json.loads((out_dir / "summary.json").read_text())
        runs.append({"path": path, "code": r.exit_code, "stderr": r.stderr, "summary": summary,
                     "bound": _speed_bound(path), "wall": time.perf_counter() - t0})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    Path(out_file).write_text(json.dumps({"cases": results, "runs": runs, "peak_bytes": peak}))


# ------------------------------------------------------------------ the test

def _finite_numbers(node):
    if isinstance(node, dict):
        return all(_finite_numbers(v) for v in node.values())
    if isinstance(node, list):
        return all(_finite_numbers(v) for v in node)
    if isinstance(node, float):
        return math.isfinite(node)
    return True


def run_cases(cases, tmp, timeout=600):
    """Run ``cases`` in one worker process under ``tmp``: ``(worker's results, wall s)``."""
    case_file = tmp / "cases.json"
    case_file.write_text(json.dumps(cases))
    out_file = tmp / "results.json"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, str(case_file), str(out_file)], cwd=ROOT, check=True,
                   timeout=timeout)
    return json.loads(out_file.read_text()), time.perf_counter() - t0


def unexpected(case) -> str:
    """Why the outcome of a case is not an answer (empty when it is one): ``ok`` (exit 0, only
    warnings) or one ``error:`` line with exit 2, within ``CASE_LIMIT_S`` of CPU."""
    lines = [ln for ln in case["stderr"].splitlines() if ln.strip()]
    if case["cpu"] > CASE_LIMIT_S:
        return f"took {case['cpu']:.1f} s of CPU ({case['wall']:.1f} s)"
    if case["code"] == 0:
        return "" if all(ln.startswith("warning:") for ln in lines) else f"ok with: {case['stderr'][-500:]}"
    if case["code"] == 2 and len(lines) == 1 and lines[0].startswith("error:") and "internal error" not in lines[0]:
        return ""
    return f"exit {case['code']}: {case['stderr'][-500:]}"


def impossible(run) -> str:
    """Why a run of a valid mutant did not report possible numbers (empty when it did): exit 0
    with finite figures and speeds below the run's bound, or ``diverged`` with exit 1."""
    s = run["summary"]
    if run["code"] not in (0, 1) or s is None or not _finite_numbers(s):
        return f"exit {run['code']}, summary {'missing' if s is None else 'not finite'}: {run['stderr'][-300:]}"
    if s["status"] == "diverged":
        return "" if run["code"] == 1 else "diverged with exit 0"
    if run["code"] != 0:
        return f"{s['status']} with exit {run['code']}"
    for name, fig in list(s["trains"].items()) + list(s["bodies"].items()):
        for key in ("max_speed", "min_speed"):
            if fig.get(key) is not None and abs(fig[key]) > run["bound"]:
                return f"{name}.{key} = {fig[key]} m/s beyond {run['bound']:.0f}"
    return ""


@pytest.mark.slow
@pytest.mark.fuzz
def test_fuzzed_inputs_are_answered_in_seconds_and_runs_report_only_possible_numbers(tmp_path):
    res, wall = run_cases(make_cases(tmp_path), tmp_path)
    bad = [(c["args"], why) for c in res["cases"] if (why := unexpected(c))]
    assert not bad, bad
    assert res["peak_bytes"] < MEMORY_LIMIT, res["peak_bytes"]
    codes = [c["code"] for c in res["cases"]]
    assert codes.count(0) >= 5 and codes.count(2) >= 20       # the mutants exercise both answers
    assert {0, 2} <= {c["code"] for c in res["cases"] if c["args"][0] == "results"}
    assert len(res["runs"]) >= 3
    bad = [(run["path"], why) for run in res["runs"] if (why := impossible(run))]
    assert not bad, bad
    print(f"fuzz: {len(res['cases'])} cases, {len(res['runs'])} runs, {wall:.1f} s, "
          f"peak {res['peak_bytes'] / 2**20:.0f} MB")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))     # the checkout's trackrider, as pytest imports it
    worker(sys.argv[1], sys.argv[2])
