"""Sweep files and run plans: the ``[sweep]`` and ``[axes]`` tables, checked, and the runs they plan
(grid, zip, random, lhs) with their ids and seeds (``trackrider.sweep`` runs them)."""
from __future__ import annotations

import hashlib
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError

#: ``[sweep]`` keys accepted in a sweep file
#: most runs one sweep may have (docs/scenarios.md, "Limits")
MAX_SWEEP_RUNS = 10_000
SWEEP_KEYS = ("scenario", "method", "samples", "seed", "duration", "keep_timeseries",
              "description")
METHODS = ("grid", "zip", "random", "lhs")

# --------------------------------------------------------------------------- spec

@dataclass
class Axis:
    """One axis of a sweep.

    key : dotted key of the base scenario.  values : the explicit values
    (a list, or ``num`` points of a range), or None for a continuous range.
    low, high : the range (None for an explicit list).  scale : ``linear``
    (default) or ``log``.
    """

    key: str
    values: list | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"

    def extremes(self) -> list:
        """The values checked up front against the base scenario: a range's ends,
        a list's smallest and largest number and each of its other values."""
        if self.values is None:
            return [self.low, self.high]
        numbers = [v for v in self.values
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]
        others = [v for v in self.values if v not in numbers]
        picked = [min(numbers), max(numbers)] if numbers else []
        for v in others:
            if v not in picked:
                picked.append(v)
        return list(dict.fromkeys(picked))


@dataclass
class SweepSpec:
    """A parsed, validated sweep file (:func:`load_sweep`)."""

    path: Path
    scenario: Path
    method: str
    axes: list[Axis]
    samples: int | None = None
    seed: int = 0
    duration: float | None = None
    keep_timeseries: bool = True
    description: str = ""

    @property
    def stem(self) -> str:
        return self.path.stem


def _where_axis(key: str) -> str:
    return f'axes."{key}"'


def _number(value, path, where, what="a number"):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"must be {what}, got {value!r}", path=path, where=where)
    if not math.isfinite(value):
        raise InputError(f"must be finite, got {value!r}", path=path, where=where)
    return value


def _parse_axis(key: str, raw, path: Path, method: str) -> Axis:
    where = _where_axis(key)
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise InputError("an axis must be a dotted key such as \"train.red.car.mass\"",
                         path=path, where=where)
    if isinstance(raw, list):
        if not raw:
            raise InputError("needs at least one value", path=path, where=where)
        for i, v in enumerate(raw):
            if isinstance(v, (dict, list)):
                raise InputError(f"value {i + 1} must be a number, string or boolean, "
                                 f"got {v!r}", path=path, where=where)
        if len(raw) > MAX_SWEEP_RUNS:
            raise InputError(f"{len(raw)} values is more than a sweep may run ({MAX_SWEEP_RUNS})",
                             path=path, where=where)
        return Axis(key, values=list(raw))
    if not isinstance(raw, dict):
        raise InputError("must be a list of values or a table {min, max, num}, got "
                         f"{raw!r}", path=path, where=where)
    unknown = sorted(set(raw) - {"min", "max", "num", "scale", "values"})
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (allowed: min, max, num, scale, values)",
                         path=path, where=where)
    if "values" in raw:
        if set(raw) != {"values"}:
            raise InputError("give either values or min/max/num, not both",
                             path=path, where=where)
        return _parse_axis(key, raw["values"], path, method)
    for k in ("min", "max"):
        if k not in raw:
            raise InputError(f"missing {k!r} of the range", path=path, where=where)
    low = float(_number(raw["min"], path, f"{where}.min"))
    high = float(_number(raw["max"], path, f"{where}.max"))
    if high < low:
        raise InputError(f"max ({high}) is below min ({low})", path=path, where=where)
    scale = raw.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise InputError(f"must be 'linear' or 'log', got {scale!r}", path=path,
                         where=f"{where}.scale")
    if scale == "log" and low <= 0.0:
        raise InputError(f"a log scale needs min > 0, got {low}", path=path, where=where)
    num = raw.get("num")
    if num is None:
        if method in ("grid", "zip"):
            raise InputError(f"method {method!r} needs 'num' (the number of values) "
                             "for a range", path=path, where=where)
        return Axis(key, low=low, high=high, scale=scale)
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise InputError(f"must be an integer >= 1, got {num!r}", path=path,
                         where=f"{where}.num")
    if num > MAX_SWEEP_RUNS:
        raise InputError(f"{num} values is more than a sweep may run ({MAX_SWEEP_RUNS})", path=path,
                         where=f"{where}.num")
    if scale == "log":
        values = np.geomspace(low, high, num)
    else:
        values = np.linspace(low, high, num)
    return Axis(key, values=[float(v) for v in values], low=low, high=high, scale=scale)


def load_sweep(path, check_scenario: bool = True) -> SweepSpec:
    """Read and validate a sweep file.

    Parameters
    ----------
    path : str or os.PathLike
        The sweep TOML file.
    check_scenario : bool, default True
        Also check every axis against the base scenario: each axis value at its
        extremes (a list's every value; a range's min and max) is applied alone
        to the base through ``load_scenario(base, overrides=...)``, so an axis
        naming a key absent from the base, or a value the scenario rejects, is
        reported here.

    Raises
    ------
    InputError
        One line naming the sweep file and the key at fault.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such sweep file", path=path)
    try:
        from .inputs import MAX_SCENARIO_BYTES, read_input_bytes

        doc = tomllib.loads(read_input_bytes(path, MAX_SCENARIO_BYTES, "sweep file").decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        text = str(exc)
        where = None
        if "(at line " in text:
            where = "line " + text.split("(at line ", 1)[1].split(",")[0].rstrip(")")
            text = text.split(" (at line ")[0]
        elif "(at end of document)" in text:
            where = "end of file"
            text = text.replace(" (at end of document)", "")
        raise InputError(f"malformed TOML: {text}", path=path, where=where) from None
    except UnicodeDecodeError:
        raise InputError("not a TOML text file (invalid UTF-8)", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None

    unknown = sorted(set(doc) - {"sweep", "axes"})
    if unknown:
        raise InputError("unknown table (allowed: [sweep], [axes])", path=path,
                         where=unknown[0])
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict):
        raise InputError("missing [sweep] table", path=path, where="sweep")
    unknown = sorted(set(sweep) - set(SWEEP_KEYS))
    if unknown:
        raise InputError(f"unknown key (allowed: {', '.join(SWEEP_KEYS)})", path=path,
                         where=f"sweep.{unknown[0]}")
    if "scenario" not in sweep:
        raise InputError("missing the base scenario file", path=path, where="sweep.scenario")
    if not isinstance(sweep["scenario"], str):
        raise InputError("must be a file path (string)", path=path, where="sweep.scenario")
    scenario = (path.parent / sweep["scenario"]).resolve()
    if not scenario.is_file():
        raise InputError(f"no such scenario file: {sweep['scenario']}", path=path,
                         where="sweep.scenario")
    method = sweep.get("method", "grid")
    if method not in METHODS:
        raise InputError(f"must be one of {', '.join(METHODS)}, got {method!r}", path=path,
                         where="sweep.method")
    samples = sweep.get("samples")
    if method in ("random", "lhs"):
        if samples is None:
            raise InputError(f"method {method!r} needs the number of samples", path=path,
                             where="sweep.samples")
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise InputError(f"must be an integer >= 1, got {samples!r}", path=path,
                             where="sweep.samples")
        if samples > MAX_SWEEP_RUNS:
            raise InputError(f"{samples} runs is more than a sweep may have ({MAX_SWEEP_RUNS}); "
                             "split it into several sweeps", path=path, where="sweep.samples")
    elif samples is not None:
        raise InputError(f"samples is for random and lhs; method {method!r} runs every "
                         "value given", path=path, where="sweep.samples")
    seed = sweep.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", path=path,
                         where="sweep.seed")
    duration = sweep.get("duration")
    if duration is not None:
        duration = float(_number(duration, path, "sweep.duration"))
        if duration <= 0.0:
            raise InputError(f"must be > 0, got {duration}", path=path,
                             where="sweep.duration")
    keep = sweep.get("keep_timeseries", True)
    if not isinstance(keep, bool):
        raise InputError(f"must be true or false, got {keep!r}", path=path,
                         where="sweep.keep_timeseries")
    description = sweep.get("description", "")
    if not isinstance(description, str):
        raise InputError("must be a string", path=path, where="sweep.description")

    raw_axes = doc.get("axes")
    if not isinstance(raw_axes, dict) or not raw_axes:
        raise InputError("needs at least one axis, e.g. \"resistance.rolling\" = "
                         "[0.001, 0.002]", path=path, where="axes")
    axes = []
    for key, raw in raw_axes.items():
        if isinstance(raw, dict) and not ({"min", "max", "num", "scale", "values"} & set(raw)):
            # an unquoted dotted key (train.red.car.mass = ...) parses as nested tables
            raise InputError("quote dotted axis keys: \"" + key + ".…\" = [...]", path=path,
                             where=_where_axis(key))
        axes.append(_parse_axis(key, raw, path, method))
    if method == "grid":
        n_runs = math.prod(len(ax.values) for ax in axes)
        if n_runs > MAX_SWEEP_RUNS:
            raise InputError(f"the grid has {n_runs:,} runs, more than a sweep may have "
                             f"({MAX_SWEEP_RUNS:,}); use fewer values or method = \"lhs\"", path=path,
                             where="axes")
    if method == "zip":
        n = len(axes[0].values)
        for ax in axes[1:]:
            if len(ax.values) != n:
                raise InputError(f"zip needs axes of equal length: {len(ax.values)} values "
                                 f"here, {n} in \"{axes[0].key}\"", path=path,
                                 where=_where_axis(ax.key))
    spec = SweepSpec(path=path, scenario=scenario, method=method, axes=axes,
                     samples=samples, seed=seed, duration=duration,
                     keep_timeseries=keep, description=description)
    if check_scenario:
        check_axes(spec)
    return spec


def check_axes(spec: SweepSpec) -> None:
    """Check every axis against the base scenario (see :func:`load_sweep`).

    The base scenario itself is loaded first (its own errors name its own file);
    then each axis value at its extremes, alone. Raises InputError naming the
    sweep file, the axis and the base scenario's complaint.
    """
    from .scenario import load_scenario

    load_scenario(spec.scenario)
    for ax in spec.axes:
        for value in ax.extremes():
            try:
                load_scenario(spec.scenario, overrides={ax.key: value})
            except InputError as exc:
                base = spec.scenario.name
                if (exc.where or "").startswith("override"):
                    message = f"not a key of the base scenario {base}: {exc.detail}"
                else:
                    inner = ": ".join(p for p in (exc.where, exc.detail) if p)
                    message = f"value {value!r} rejected by the base scenario {base}: {inner}"
                raise InputError(message, path=spec.path, where=_where_axis(ax.key)) from None


# --------------------------------------------------------------------------- plan

def run_ids(n: int) -> list[str]:
    """Run ids ``0000, 0001, …`` (at least 4 digits, all the same width)."""
    width = max(4, len(str(max(n - 1, 0))))
    return [f"{i:0{width}d}" for i in range(n)]


def _from_unit(ax: Axis, u: float):
    """Map ``u`` in [0, 1) onto the axis: a value of its list, or a point of its range."""
    if ax.values is not None and ax.low is None:
        return ax.values[min(int(u * len(ax.values)), len(ax.values) - 1)]
    if ax.scale == "log":
        return float(math.exp(math.log(ax.low) + u * (math.log(ax.high) - math.log(ax.low))))
    return float(ax.low + u * (ax.high - ax.low))


def plan_runs(spec: SweepSpec) -> list[dict]:
    """The runs of a sweep, in run-id order: ``[{"run", "seed", "values"}, ...]``.

    ``grid``: every combination, the last axis varying fastest. ``zip``: the
    axes side by side. ``random``: each run draws every axis uniformly (a list:
    one of its values; a range: a point of it, on its scale) from its own
    generator. ``lhs``: a Latin hypercube of ``samples`` points
    (``scipy.stats.qmc.LatinHypercube``) scaled onto the axes (a range with
    ``num`` counts as the continuous range here). Per-run seeds are
    ``numpy.random.SeedSequence(seed).spawn(n)``, recorded as a 32-bit integer
    in each row. Deterministic: the same sweep file gives the same plan.
    """
    axes = spec.axes
    if spec.method == "grid":
        import itertools

        combos = [list(c) for c in itertools.product(*(ax.values for ax in axes))]
    elif spec.method == "zip":
        combos = [list(c) for c in zip(*(ax.values for ax in axes))]
    else:
        combos = None
    n = len(combos) if combos is not None else spec.samples
    children = np.random.SeedSequence(spec.seed).spawn(n)
    seeds = [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]
    if spec.method == "random":
        combos = []
        for child in children:
            rng = np.random.default_rng(child)
            combos.append([_from_unit(ax, float(rng.random())) for ax in axes])
    elif spec.method == "lhs":
        from scipy.stats import qmc

        root = np.random.default_rng(np.random.SeedSequence(spec.seed))
        unit = qmc.LatinHypercube(d=len(axes), seed=root).random(n)
        continuous = [Axis(ax.key, low=ax.low, high=ax.high, scale=ax.scale)
                      if ax.low is not None else ax for ax in axes]
        combos = [[_from_unit(ax, float(u)) for ax, u in zip(continuous, row)]
                  for row in unit]
    ids = run_ids(n)
    return [{"run": ids[i], "seed": seeds[i],
             "values": {ax.key: combos[i][j] for j, ax in enumerate(axes)}}
            for i in range(n)]


def _plan_digest(spec: SweepSpec, plan: list[dict]) -> str:
    doc = {"scenario": str(spec.scenario), "duration": spec.duration,
           "keep_timeseries": spec.keep_timeseries, "runs": plan}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()

