"""Plots of a finished run: G-forces and speed against time and track position.

Reads ``RESULTS_DIR/timeseries.csv`` (columns: docs/outputs.md) and draws, for one
car, the height profile of its track with the sections shaded and named (from
the scenario named in ``summary.json``; the car's own path when the scenario is
gone), then vertical, lateral and longitudinal G (in g) and speed (km/h, or mph
with ``units="imperial"``) against time (s, left column) and against track
position ``s`` (m or ft, right column), with the sign conventions written on
the figure; matplotlib's Agg backend (no display needed).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from trackrider.errors import InputError
from trackrider.outputs import atomic_file
from trackrider.physics.sections import colour as section_colour

#: the columns the plot needs
NEEDED = ("t", "train", "car", "s", "speed", "g_vertical", "g_lateral", "g_longitudinal")
_G_ROWS = (("g_vertical", "vertical G"), ("g_lateral", "lateral G"), ("g_longitudinal", "longitudinal G"))


def _float(text: str) -> float:
    try:
        return float(text) if text != "" else math.nan
    except ValueError:
        return math.nan


def read_car_series(csv_path, car: int = 1, train: str | None = None) -> tuple[str, dict[str, np.ndarray]]:
    """Rows of one car from ``timeseries.csv`` as ``(train name, {column: array})``.

    ``train`` None picks the first train (or body) in the file; ``car`` is 1-based.
    Filtered G columns (``<name>_filtered``) are returned too when the file has them.
    """
    csv_path = Path(csv_path)
    try:
        handle = open(csv_path, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no timeseries.csv here (is this a folder written by 'trackrider run'?)",
                         path=csv_path.parent) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=csv_path) from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError("empty file", path=csv_path) from None
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"not a trackrider CSV ({type(exc).__name__})", path=csv_path, where="line 1") from None
        missing = [c for c in NEEDED if c not in header]
        if missing:
            raise InputError(f"missing columns: {', '.join(missing)}", path=csv_path, where="line 1")
        wanted = list(NEEDED[3:]) + [f"{g}_filtered" for g, _ in _G_ROWS if f"{g}_filtered" in header]
        wanted += [c for c in ("z",) if c in header]
        idx = {c: header.index(c) for c in (*NEEDED, *wanted)}
        i_t, i_train, i_car = idx["t"], idx["train"], idx["car"]
        names: list[str] = []
        t_vals: list[float] = []
        cols: dict[str, list[float]] = {c: [] for c in wanted}
        try:
            for line_no, row in enumerate(reader, start=2):
                if len(row) < len(header):
                    if not row:
                        continue
                    raise InputError(f"row has {len(row)} fields, expected {len(header)}", path=csv_path,
                                     where=f"line {line_no}")
                name = row[i_train]
                if name not in names:
                    names.append(name)
                if train is None:
                    train = name
                if name != train or row[i_car] != str(car):
                    continue
                t_vals.append(_float(row[i_t]))
                for c in wanted:
                    cols[c].append(_float(row[idx[c]]))
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"not a trackrider CSV ({type(exc).__name__})", path=csv_path) from None
    if not t_vals:
        if train is not None and train not in names:
            raise InputError(f"no train or body named {train!r} (the file has: {', '.join(names) or 'no rows'})",
                             path=csv_path)
        raise InputError(f"no rows for car {car} of {train!r}" if train else "no data rows", path=csv_path)
    out = {"t": np.asarray(t_vals)}
    out.update({c: np.asarray(v) for c, v in cols.items()})
    return str(train), out


#: written on the figure: what the signs of the G columns mean
SIGN_CONVENTIONS = ("G: specific force at the rider point in car axes, in g.  vertical: + presses into the seat "
                    "(1 at rest on level track), < 0 is airtime;\nlateral: + towards the rider's left;  "
                    "longitudinal: + forwards (speeding up);  speed: + towards increasing s.")


def _summary(results_dir: Path) -> dict:
    """The results folder's ``summary.json``, or {} when it cannot be read."""
    import json

    try:
        summary = json.loads((results_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return summary if isinstance(summary, dict) else {}


def has_riders(summary: dict, train: str) -> bool:
    """Whether ``train`` carries riders (G at a rider point means something): False for a
    ``role = "counterweight"`` train of the run's summary, True otherwise."""
    figures = (summary.get("trains") or {}).get(train) if isinstance(summary, dict) else None
    return not (isinstance(figures, dict) and figures.get("role") == "counterweight")


def _profile(results_dir: Path, train: str, d: dict, summary: dict | None = None):
    """(s, z, sections, note) of the car's track: the scenario's track, else the car's own path."""
    from trackrider.report.data import load_scenario_of, track_profile

    summary = _summary(results_dir) if summary is None else summary
    scenario, _ = load_scenario_of(summary, results_dir) if summary else (None, "")
    found = track_profile(scenario, train) if scenario is not None else None
    if found is not None:
        _, _, s, xyz, sections = found
        return s, xyz[:, 2], sections, "height of the track"
    if "z" in d:
        ok = np.isfinite(d["s"]) & np.isfinite(d["z"])
        order = np.argsort(d["s"][ok], kind="stable")
        return d["s"][ok][order], d["z"][ok][order], [], "height of the car (no scenario to read the track from)"
    return None


def plot_results(results_dir, out_png, car: int = 1, train: str | None = None, units: str = "metric") -> Path:
    """Write a PNG of G-forces and speed against time and track position for one car.

    Parameters
    ----------
    results_dir : str or os.PathLike
        A folder written by ``trackrider run`` (holds ``timeseries.csv``).
    out_png : str or os.PathLike
        The PNG to write (written to a temporary name, then renamed).
    car : int, default 1
        Car number in its train, 1 = lead car.
    train : str, optional
        Train (or free body) name; default the first one in the file.
    units : str, default "metric"
        ``metric`` (m, km/h) or ``imperial`` (ft, mph): the axes' units.

    Returns
    -------
    pathlib.Path
        ``out_png``.
    """
    results_dir = Path(results_dir)
    out_png = Path(out_png)
    if not results_dir.is_dir():
        raise InputError("not a results folder (not found or not a directory)", path=results_dir)
    if isinstance(car, bool) or not isinstance(car, int) or car < 1:
        raise InputError(f"car must be a car number ≥ 1, got {car!r}", path=results_dir)
    if out_png.suffix.lower() != ".png":
        raise InputError("the plot is a PNG: give a file name ending in .png", path=out_png)
    if out_png.parent and not out_png.parent.exists():
        raise InputError("folder does not exist", path=out_png.parent)
    from trackrider.report.units import SYSTEMS, Units

    if units not in SYSTEMS:
        raise InputError(f"units must be one of {', '.join(SYSTEMS)}, got {units!r}")
    u = Units(units)
    name, d = read_car_series(results_dir / "timeseries.csv", car=car, train=train)
    summary = _summary(results_dir)
    profile = _profile(results_dir, name, d, summary) if np.isfinite(d["s"]).any() else None
    riders = has_riders(summary, name)
    d = dict(d)
    d["speed"] = d["speed"] * u.speed_factor
    d["s"] = d["s"] * u.length_factor

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 14), dpi=100, constrained_layout=True)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(5, 2, height_ratios=[1.2, 1, 1, 1, 1])
    top = fig.add_subplot(grid[0, :])
    if profile is None:
        top.text(0.5, 0.5, "not on a track: no height profile", ha="center", va="center", transform=top.transAxes)
    else:
        ps, pz, sections, what = profile
        for sec in sections:
            lo, hi = sec.s_from * u.length_factor, sec.s_to * u.length_factor
            colour = section_colour(sec.type)
            top.axvspan(lo, hi, color=colour, alpha=0.15, lw=0)
            top.text(0.5 * (lo + hi), 0.97, f"{sec.label} ({sec.type})", transform=top.get_xaxis_transform(),
                     ha="center", va="top", fontsize=8, color=colour)
        top.plot(ps * u.length_factor, pz * u.length_factor, color="0.2", lw=1.4, label=what)
        top.legend(loc="lower right", fontsize=8)
    top.set_xlabel(f"track position s ({u.length_unit})")
    top.set_ylabel(f"height z ({u.length_unit})")
    top.set_title("height profile and sections")
    top.grid(True, alpha=0.3)
    axes = np.empty((4, 2), dtype=object)
    for r in range(4):
        for c in range(2):
            axes[r, c] = fig.add_subplot(grid[r + 1, c], sharex=axes[0, c] if r else None)
    on_track = np.isfinite(d["s"])
    rows = list(_G_ROWS) + [("speed", "speed")]
    for r, (col, label) in enumerate(rows):
        unit = u.speed_unit if col == "speed" else "g"
        for c, (x, xlabel) in enumerate(((d["t"], "time (s)"), (d["s"], f"track position s ({u.length_unit})"))):
            ax = axes[r, c]
            mask = np.ones_like(x, dtype=bool) if c == 0 else on_track
            if c == 1 and not mask.any():
                ax.text(0.5, 0.5, "not on a track", ha="center", va="center", transform=ax.transAxes)
            elif col != "speed" and not riders:
                ax.text(0.5, 0.5, "a counterweight: no riders, no rider G", ha="center", va="center",
                        transform=ax.transAxes)
            else:
                filtered = d.get(f"{col}_filtered")
                ax.plot(x[mask], d[col][mask], lw=0.7, color="0.55" if filtered is not None else "C0",
                        label="raw" if filtered is not None else None)
                if filtered is not None:
                    ax.plot(x[mask], filtered[mask], lw=1.2, color="C0", label="filtered")
                    ax.legend(loc="upper right", fontsize=8)
            if col == "g_vertical":
                ax.axhline(1.0, color="0.7", lw=0.6, ls="--")
                ax.axhline(0.0, color="C3", lw=0.6, ls=":")
            elif col != "speed":
                ax.axhline(0.0, color="0.7", lw=0.6, ls="--")
            ax.set_ylabel(f"{label} ({unit})")
            ax.grid(True, alpha=0.3)
            if r == len(rows) - 1:
                ax.set_xlabel(xlabel)
            else:
                ax.tick_params(labelbottom=False)
    axes[0, 0].set_title("against time")
    axes[0, 1].set_title("against track position")
    fig.suptitle(f"{results_dir.name}: {name}, car {car}")
    fig.supxlabel(SIGN_CONVENTIONS, fontsize=8, color="0.3")
    with atomic_file(out_png) as tmp:
        fig.savefig(tmp, format="png")
    return out_png
