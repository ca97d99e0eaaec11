"""The sweep table: one row per run from its ``summary.json`` (``summary_row``), ``sweep.csv``
written and read (``write_table``, ``read_table``)."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import uuid
from pathlib import Path
from typing import Any

from .events import COUNTED, STATUSES
from .sweep_plan import SweepSpec

#: statuses a row can have: the simulation's own, or ``error`` (the run failed)
FAILED = ("error",)

#: per-train summary figures copied into the table; combined over trains with
#: the function given (worst case)
TRAIN_FIGURES = {
    "min_crest_speed": min,
    "max_speed": max,
    "min_speed": min,
    "max_g_vertical": max,
    "min_g_vertical": min,
    "max_abs_g_lateral": max,
    "max_abs_g_longitudinal": max,
    "airtime_s": max,
    "min_inner_wheel_load": min,
    "max_l_over_v": max,
    "energy_drift": lambda xs: max(xs, key=abs),
}
#: event kinds counted into ``n_<kind>`` columns (``events.EVENTS``' ``counted``); others
#: go to ``n_other_events``
EVENT_KINDS = COUNTED

#: headline figures of the summary and the plot: (column, "min" | "max", label)
HEADLINES = (
    ("min_crest_speed", "min", "lowest crest speed, m/s"),
    ("min_speed", "min", "lowest speed, m/s"),
    ("max_g_vertical", "max", "highest vertical G"),
    ("min_g_vertical", "min", "lowest vertical G"),
    ("max_abs_g_lateral", "max", "largest lateral G"),
    ("max_abs_g_longitudinal", "max", "largest longitudinal G"),
    ("trains_per_hour", "min", "lowest throughput, trains/h"),
)
#: statuses reported in the summary run by run
BAD_STATUSES = tuple(s for s in reversed(STATUSES) if s != "completed") + FAILED


def summary_row(summary: dict) -> dict:
    """Headline figures of one run's ``summary.json`` as flat table columns.

    Per-train figures (:data:`TRAIN_FIGURES`) are combined over the trains to
    the worst case (lowest minimum, highest maximum); events are counted by
    kind into ``n_<kind>`` columns; ``n_events`` is the total. A ride with
    stations or block sections adds its throughput (``trains_per_hour``,
    ``riders_per_hour``) and ``held_s``, the time trains spent held at block
    boundaries, summed over the block sections (``summary["operation"]``;
    empty cells for a run without them).
    """
    row: dict[str, Any] = {"status": summary.get("status", ""),
                           "simulated_s": summary.get("simulated_s")}
    trains = summary.get("trains") or {}
    for name, combine in TRAIN_FIGURES.items():
        xs = [t[name] for t in trains.values()
              if isinstance(t, dict) and isinstance(t.get(name), (int, float))
              and t.get(name) is not None and math.isfinite(t[name])]
        row[name] = float(combine(xs)) if xs else None
    events = summary.get("events") or []
    counts = {kind: 0 for kind in EVENT_KINDS}
    other = 0
    for ev in events:
        kind = ev.get("kind") if isinstance(ev, dict) else None
        if kind in counts:
            counts[kind] += 1
        else:
            other += 1
    row["n_events"] = len(events)
    for kind in EVENT_KINDS:
        row[f"n_{kind}"] = counts[kind]
    row["n_other_events"] = other
    op = summary.get("operation")
    op = op if isinstance(op, dict) else {}

    def number(v):
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    row["trains_per_hour"] = number(op.get("throughput_trains_per_hour"))
    row["riders_per_hour"] = number(op.get("riders_per_hour"))
    held = [number(b.get("held_s")) for b in (op.get("block_sections") or {}).values() if isinstance(b, dict)]
    held = [h for h in held if h is not None]
    row["held_s"] = float(sum(held)) if held else None
    # valleyed: the train failed a hill. A train that rolls back (no motor
    # acting) oscillates in the valley for minutes before it comes to rest and
    # the run reports ``stalled``; either counts.
    row["valleyed"] = (None if row["status"] in FAILED + ("",) else
                       bool(row["status"] == "stalled" or counts["stalled"]
                            or counts["rolled_back"]))
    return row


# --------------------------------------------------------------------------- table

def _read_json(path: Path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value).lower()
    return str(value)


def table_columns(spec: SweepSpec) -> list[str]:
    """Columns of ``sweep.csv``, in order."""
    figures = list(summary_row({}).keys())
    figures.remove("status")
    return (["run", "seed"] + [ax.key for ax in spec.axes] + ["status", "error"]
            + figures)


def write_table(path: Path, columns: list[str], rows: list[dict]) -> None:
    """Write rows (sorted by run id) as CSV, atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in sorted(rows, key=lambda r: r["run"]):
        writer.writerow([_cell(row.get(c)) for c in columns])
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)


def read_table(path) -> tuple[list[str], list[dict]]:
    """Read a ``sweep.csv``: (columns, rows), numbers as floats, empty cells None."""
    path = Path(path)
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        columns = next(reader)
        rows = []
        for values in reader:
            row = {}
            for c, v in zip(columns, values):
                if v == "":
                    row[c] = None
                elif c in ("run", "status", "error"):
                    row[c] = v
                elif v in ("true", "false"):
                    row[c] = v == "true"
                else:
                    try:
                        row[c] = float(v)
                    except ValueError:
                        row[c] = v
            rows.append(row)
    return columns, rows

