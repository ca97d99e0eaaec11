"""The sweep figure: each headline figure against each axis (matplotlib, Agg)."""
from __future__ import annotations

import math
from pathlib import Path

from .errors import InputError
from .sweep_table import BAD_STATUSES, HEADLINES, _read_json, read_table


def plot_sweep(sweep_dir, out_png, headlines=None) -> Path:
    """Draw each headline figure against each axis of a sweep (matplotlib, Agg).

    Parameters
    ----------
    sweep_dir : path
        A sweep directory (reads ``sweep.csv`` and ``plan.json``).
    out_png : path
        The figure file (PNG; any format matplotlib knows by its suffix).
    headlines : list of str, optional
        Columns to draw; default the :data:`HEADLINES` that have values.

    One panel per (headline, axis): every run a dot; runs that stalled,
    derailed, ran off or failed are drawn in red with a cross.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = Path(sweep_dir)
    if not (d / "sweep.csv").is_file():
        raise InputError("no sweep.csv: not a sweep directory", path=d)
    columns, rows = read_table(d / "sweep.csv")
    plan = _read_json(d / "plan.json") or {}
    axes = plan.get("axes") or columns[2:columns.index("status")]
    if headlines is None:
        headlines = [c for c, _, _ in HEADLINES
                     if any(isinstance(r.get(c), float) for r in rows)]
    labels = {c: label for c, _, label in HEADLINES}
    headlines = headlines or ["status"]
    fig = plt.figure(figsize=(3.2 * len(axes) + 0.8, 2.4 * len(headlines) + 0.6), layout="constrained")
    draw_sweep_panels(fig, rows, axes, headlines, labels, plan.get("scales") or {})
    fig.suptitle(f"sweep {d.name}: {len(rows)} runs", fontsize=10)
    out_png = Path(out_png)
    from trackrider.outputs import atomic_file

    with atomic_file(out_png) as tmp:
        fig.savefig(tmp, dpi=110, format=out_png.suffix.lstrip(".").lower() or "png")
    plt.close(fig)
    return out_png


def draw_sweep_panels(fig, rows, axes, headlines, labels, scales) -> None:
    """One panel per (headline, axis) on ``fig``: every run a dot; runs that valleyed,
    stalled, derailed, ran off or failed a red cross; one legend for the figure.

    ``rows``: the runs (``sweep.csv`` rows as dicts); ``axes``: the swept keys;
    ``headlines``: the columns drawn (``"status"`` draws 1 for a bad run);
    ``labels``: column → axis label; ``scales``: axis → ``"log"`` or not.
    """
    nr, nc = len(headlines), len(axes)
    grid = fig.subplots(nr, nc, squeeze=False)
    bad = [r.get("status") in BAD_STATUSES or r.get("valleyed") is True for r in rows]
    for i, col in enumerate(headlines):
        for j, ax_key in enumerate(axes):
            ax = grid[i][j]
            xs = [r.get(ax_key) for r in rows]
            if any(x is not None and not isinstance(x, float) for x in xs):
                # a categorical axis (strings, booleans): one position per value
                cats = list(dict.fromkeys(str(x) for x in xs if x is not None))
                xs = [float(cats.index(str(x))) if x is not None else None for x in xs]
                ax.set_xticks(range(len(cats)), cats)
            elif scales.get(ax_key) == "log":
                ax.set_xscale("log")
            ys = [r.get(col) if col != "status" else float(b) for r, b in zip(rows, bad)]
            good = [(x, y) for x, y, b in zip(xs, ys, bad)
                    if not b and isinstance(x, float) and isinstance(y, float)]
            worse = [(x, y) for x, y, b in zip(xs, ys, bad)
                     if b and isinstance(x, float) and isinstance(y, float)]
            if good:
                ax.scatter(*zip(*good), s=12, color="tab:blue", label="ok")
            if worse:
                ax.scatter(*zip(*worse), s=24, color="tab:red", marker="x",
                           label="valleyed / stalled / failed")
            if i == nr - 1:
                ax.set_xlabel(ax_key, fontsize=8)
            if j == 0:
                ax.set_ylabel(labels.get(col, col), fontsize=8)
            finite = [y for y in ys if isinstance(y, float) and math.isfinite(y)]
            if finite and max(finite) - min(finite) <= 1e-6 * max(1.0, abs(max(finite))):
                # (nearly) constant: a readable range around it, not 1e-12 ticks
                mid, pad = (max(finite) + min(finite)) / 2, max(1e-3, 0.02 * abs(max(finite)))
                ax.set_ylim(mid - pad, mid + pad)
            ax.tick_params(which="both", labelsize=7)
            try:
                ax.ticklabel_format(axis="y", useOffset=False)
            except AttributeError:  # not a scalar formatter
                pass
            ax.grid(alpha=0.3)
    handles, names = [], []
    for row in grid:
        for ax in row:
            for h, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(h)
                    names.append(name)
    if handles:
        fig.legend(handles, names, loc="outside upper right", fontsize=8)

