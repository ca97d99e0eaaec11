"""The one reader of a results folder (``summary.json`` and ``timeseries.csv``), which checks
what it reads: ``report``, ``plot`` and ``render`` all read a folder through it, so they accept
and refuse the same files (docs/outputs.md, "Reading results back").

A file that is not what ``trackrider run`` writes — hand-edited, truncated, another program's —
is an ``InputError`` (one ``error:`` line, exit 2) naming the file and the field
(``summary.json: events[3].car: must be a whole number ≥ 1, got 'two'``) or the line and
column of the CSV (``timeseries.csv: line 12, column x: must be a finite number, got 'nan'``).

``summary.json`` (docs/outputs.md, "summary.json"): an object; ``status`` a string;
``scenario``, ``title``, ``message`` strings (or null); times and rates finite numbers (or
null); ``steps``, ``samples``, ``events_dropped`` whole numbers ≥ 0; ``events`` a list of
objects with a finite ``t``, a ``kind`` and ``train`` string, a ``car`` number ≥ 1 (or null; 0 when ``train`` is ``""``: a switch's events)
and only strings, numbers, booleans, nulls or lists of them besides; ``trains`` and ``bodies``
objects of objects whose figures are finite numbers or null (a train's ``cars`` a whole
number ≥ 1, ``wheels`` and ``role`` strings, ``energy_group`` lists of names, ``at`` an object
of places: ``t``, ``car``, ``s``, ``section``, ``duration_s``); ``filter``, ``overrides``,
``operation`` and ``diverged`` objects of their own fields; ``warnings`` and ``columns`` lists
of strings. Other keys are ignored.

``timeseries.csv``: a header naming every column of ``trackrider.record.COLUMNS``, once each; then rows of as many fields: ``t`` a finite number, ``train`` a name,
``car`` a whole number ≥ 1, ``x, y, z, qw, qx, qy, qz`` finite numbers, every other field a
finite number or empty (undefined). Rows come an instant at a time, the same cars and bodies in
the same order at every instant (their labels distinct), ``t`` increasing from instant to instant.
"""
from __future__ import annotations

import csv
import json
import math
import operator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trackrider.errors import InputError
from trackrider.record import COLUMNS

SUMMARY = "summary.json"
TIMESERIES = "timeseries.csv"
#: the largest summary.json read (a run's is a few kB; 1000 events ~ 100 kB)
MAX_SUMMARY_BYTES = 16 * 2**20
#: columns every timeseries.csv has (``trackrider.record.COLUMNS``; ``block`` only with block sections)
REQUIRED = COLUMNS
#: columns that are never empty: time, and where each car or body is
DEFINED = ("t", "x", "y", "z", "qw", "qx", "qy", "qz")
#: rows parsed at a time
_CHUNK = 5_000
#: the deepest nesting of a summary.json (trackrider's is 5 deep)
MAX_DEPTH = 32


@dataclass
class Results:
    """A results folder as read: ``summary`` (checked), ``labels`` (train or body name, car
    number) of the entities of an instant, ``t`` (m,) s, and ``columns``: name → (m, n_entities)
    float arrays (NaN where a field is empty) of the numeric columns asked for."""

    path: Path
    summary: dict
    labels: list
    t: np.ndarray
    columns: dict
    header: tuple

    def flat(self) -> dict:
        """The columns one row per entity per instant, as ``timeseries.csv`` has them (``train``
        str, ``car`` int, the rest float): what ``trackrider.record.read_timeseries`` returns."""
        m, n = len(self.t), len(self.labels)
        out = {"t": np.repeat(self.t, n)}
        out["train"] = np.tile(np.array([a for a, _ in self.labels], dtype=str), m)
        out["car"] = np.tile(np.array([b for _, b in self.labels], dtype=int), m)
        for name, v in self.columns.items():
            out[name] = v.reshape(-1)
        return {c: out[c] for c in self.header if c in out}


# --------------------------------------------------------------------------- the folder

def read_results(folder, columns=None) -> Results:
    """Read and check results folder ``folder``; ``columns``: the numeric columns to keep
    (default all; every field is checked either way). A commit another run left cut short is
    finished first (``trackrider.results_folder.settle``)."""
    from trackrider.results_folder import settle

    d = Path(folder)
    if not d.is_dir():
        raise InputError("not a results folder (not found or not a directory)", path=d)
    settle(d)
    csv_path, summary_path = d / TIMESERIES, d / SUMMARY
    for p in (summary_path, csv_path):
        if not p.is_file():
            raise InputError(f"no {p.name} here: not a results folder written by 'trackrider run' (a sweep "
                             "run that kept only its summary has no timeseries)", path=d)
    summary = read_summary_checked(summary_path)
    header, labels, t, cols = read_timeseries_checked(csv_path, columns)
    return Results(path=d, summary=summary, labels=labels, t=t, columns=cols, header=header)


# --------------------------------------------------------------------------- summary.json

def _describe(v) -> str:
    text = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


class _Check:
    def __init__(self, path):
        self.path = path

    def fail(self, where, what, value):
        raise InputError(f"must be {what}, got {_describe(value)}", path=self.path, where=where)

    def obj(self, v, where):
        if not isinstance(v, dict):
            self.fail(where, "an object", v)
        return v

    def string(self, v, where, null=True):
        if not (isinstance(v, str) or (null and v is None)):
            self.fail(where, "a string" + (" or null" if null else ""), v)

    def number(self, v, where, null=True):
        if v is None and null:
            return
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(where, "a finite number" + (" or null" if null else ""), v)

    def whole(self, v, where, low=0, null=False):
        if v is None and null:
            return
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            self.fail(where, f"a whole number ≥ {low}" + (" or null" if null else ""), v)

    def boolean(self, v, where):
        if not isinstance(v, bool):
            self.fail(where, "true or false", v)

    def strings(self, v, where):
        if not isinstance(v, list):
            self.fail(where, "a list of strings", v)
        for i, x in enumerate(v):
            self.string(x, f"{where}[{i}]", null=False)

    def scalar(self, v, where):
        if isinstance(v, list):
            for i, x in enumerate(v):
                self.scalar(x, f"{where}[{i}]")
        elif not (v is None or isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v))):
            self.fail(where, "a string, a finite number, true, false, null or a list of them", v)

    def fields(self, table, where, kinds):
        """Check the keys of ``table`` named in ``kinds`` (key → checker(value, where))."""
        for key, check in kinds.items():
            if key in table:
                check(table[key], f"{where}.{key}" if where else key)


def check_summary(doc, path) -> dict:
    """``doc`` (a parsed summary.json) if it is one trackrider could have written; else an
    ``InputError`` naming ``path`` and the field."""
    c = _Check(path)
    c.obj(doc, "top level")
    if "status" not in doc:
        raise InputError("missing 'status': not a summary trackrider wrote", path=path, where="status")
    string = c.string
    number = c.number
    c.fields(doc, "", {
        "status": lambda v, w: string(v, w, null=False),
        "scenario": string, "title": string, "message": string, "trackrider_version": string,
        "simulated_s": number, "wall_s": number, "dt": number, "record_hz": number, "record_dt": number,
        "steps": c.whole, "samples": c.whole, "events_dropped": c.whole,
        "events": lambda v, w: _events(c, v, w),
        "trains": lambda v, w: _named(c, v, w, _train),
        "bodies": lambda v, w: _named(c, v, w, _figures),
        "filter": lambda v, w: c.fields(c.obj(v, w), w, {"type": string, "order": c.whole,
                                                         "zero_phase": c.boolean, "cutoff_hz": number,
                                                         "applied": c.boolean}),
        "warnings": c.strings, "columns": c.strings,
        "float_format": lambda v, w: _named(c, v, w, lambda c_, x, w_: c_.string(x, w_, null=False)),
        "overrides": c.obj,          # values as --set gave them: the scenario's loader checks them
        "diverged": lambda v, w: c.fields(c.obj(v, w), w, {
            "t": number, "entity": lambda x, w_: None if x is None or isinstance(x, str) else c.whole(x, w_)}),
        "operation": lambda v, w: _operation(c, v, w),
    })
    return doc


def _named(c, v, where, check):
    for name, item in c.obj(v, where).items():
        check(c, item, f"{where}.{name}")


def _events(c, v, where):
    if not isinstance(v, list):
        c.fail(where, "a list of events", v)
    for i, ev in enumerate(v):
        w = f"{where}[{i}]"
        c.obj(ev, w)
        for key in ("t", "kind"):
            if key not in ev:
                raise InputError(f"missing {key!r}", path=c.path, where=f"{w}.{key}")
        c.number(ev["t"], f"{w}.t", null=False)
        c.string(ev["kind"], f"{w}.kind", null=False)
        c.fields(ev, w, {"train": c.string, "section": c.string,
                         # car 0: an event of no train (train "": a switch's switch_set, switch_blocked)
                         "car": lambda x, w_: c.whole(x, w_, low=0 if ev.get("train") == "" else 1, null=True)})
        for key, x in ev.items():
            c.scalar(x, f"{w}.{key}")


def _place(c, v, where):
    if v is None:
        return
    c.fields(c.obj(v, where), where, {"t": c.number, "s": c.number, "duration_s": c.number,
                                      "section": c.string,
                                      "car": lambda x, w: c.whole(x, w, low=1, null=True)})


def _figures(c, v, where, own=None):
    """A table of figures: every value a finite number or null, but the keys in ``own``."""
    own = own or {}
    for key, x in c.obj(v, where).items():
        (own.get(key) or c.number)(x, f"{where}.{key}")


def _train(c, v, where):
    _figures(c, v, where, {
        "cars": lambda x, w: c.whole(x, w, low=1), "wheels": c.string, "role": c.string,
        "energy_group": lambda x, w: c.fields(c.obj(x, w), w, {"trains": c.strings, "bodies": c.strings}),
        "at": lambda x, w: _places(c, x, w), "rider_rows": lambda x, w: _rider_rows(c, x, w)})


def _places(c, v, where):
    for key, p in c.obj(v, where).items():
        _place(c, p, f"{where}.{key}")


def _rider_rows(c, v, where):
    """A train's ``rider_rows`` (cars with ``rider_rows = 2``): the front and rear rows' figures with
    their places, and per car the figures of its rider point and rows."""
    at = {"at": lambda x, w: _places(c, x, w)}
    c.fields(c.obj(v, where), where, {
        "front": lambda x, w: _figures(c, x, w, at), "rear": lambda x, w: _figures(c, x, w, at),
        "cars": lambda x, w: [_figures(c, car, f"{w}[{i}]", {"car": lambda y, w_: c.whole(y, w_, low=1),
                                                              **{p: lambda y, w_: _figures(c, y, w_)
                                                                 for p in ("rider", "front", "rear")}})
                              for i, car in enumerate(x if isinstance(x, list) else c.fail(w, "a list", x))]})


def _operation(c, v, where):
    c.obj(v, where)
    for key in ("trains", "stations", "block_sections"):
        if key in v:
            _named(c, v[key], f"{where}.{key}", lambda c_, x, w: _figures(c_, x, w, {
                "laps": c.whole, "riders": c.whole, "dispatches": c.whole, "type": c.string}))
    c.fields(v, where, {"throughput_trains_per_hour": c.number, "riders_per_hour": c.number})


def read_summary_checked(path) -> dict:
    """Read and check a ``summary.json`` (``check_summary``)."""
    path = Path(path)
    from trackrider.inputs import TOO_DEEP, parse_nested, read_input_bytes

    raw = read_input_bytes(path, MAX_SUMMARY_BYTES, "summary.json")
    try:
        doc = parse_nested(json.loads, raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("not a summary.json (not UTF-8 text)", path=path) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", path=path) from None
    if doc is TOO_DEEP:
        raise InputError("not a summary.json (nested too deeply)", path=path)
    if _depth(doc) > MAX_DEPTH:
        raise InputError(f"not a summary.json trackrider wrote (nested more than {MAX_DEPTH} deep)", path=path)
    return check_summary(doc, path)


def _depth(doc) -> int:
    """How deep lists and objects nest in ``doc`` (without recursion)."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        node, d = todo.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            todo.extend((x, d + 1) for x in (node.values() if isinstance(node, dict) else node))
    return deepest


# --------------------------------------------------------------------------- timeseries.csv

def read_timeseries_checked(path, keep=None):
    """Read and check a ``timeseries.csv``: ``(header, labels, t (m,), {column: (m, n) float})``
    for the numeric columns in ``keep`` (default all)."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
    with fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError("empty file, expected a header line", path=path, where="line 1")
            parser = _Parser(path, header, keep)
            chunk = []
            for row in reader:
                chunk.append(row)
                if len(chunk) == _CHUNK:
                    parser.add(chunk)
                    chunk = []
            parser.add(chunk)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"not a timeseries.csv trackrider wrote ({type(exc).__name__}: {exc})",
                             path=path, where=f"line {reader.line_num}") from None
    return parser.finish()


class _Parser:
    def __init__(self, path, header, keep):
        self.path = path
        self.header = tuple(header)
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputError(f"missing columns: {', '.join(missing)} (not a timeseries.csv trackrider wrote)",
                             path=path, where="line 1")
        seen = set()
        for name in header:
            if name in seen:
                raise InputError(f"column {name!r} appears twice", path=path, where="line 1")
            seen.add(name)
        self.i_train, self.i_car = header.index("train"), header.index("car")
        self.numeric = [j for j, c in enumerate(header) if c not in ("train", "car")]
        keep = None if keep is None else set(keep) | {"t"}
        self.keep = [j for j in self.numeric if keep is None or header[j] in keep]
        self.defined = [self.numeric.index(header.index(c)) for c in DEFINED]   # positions among the numbers
        self._numeric_of = operator.itemgetter(*self.numeric)
        self.kept: dict = {j: [] for j in self.keep}
        self.labels = None         # (train, car) of the entities of an instant
        self.line = 1              # the last line read
        self.rows = 0

    def fail(self, line, column, message):
        raise InputError(message, path=self.path, where=f"line {line}" + (f", column {column}" if column else ""))

    def add(self, rows):
        if not rows:
            return
        first_line = self.line + 1
        n = len(self.header)
        for k, row in enumerate(rows):
            if len(row) != n:
                self.fail(first_line + k, None, f"expected {n} fields, got {len(row)}")
        self.line += len(rows)
        if self.labels is None:
            self._first_instant(rows, first_line)
        ne = len(self.labels)
        for k, row in enumerate(rows):
            want = self.labels[(self.rows + k) % ne]
            if row[self.i_train] != want[0] or row[self.i_car] != want[1]:
                self.fail(first_line + k, "train", f"expected {want[0]!r} car {want[1]} here (the cars and bodies "
                          "of every instant in the order of the first), got "
                          f"{row[self.i_train]!r} car {row[self.i_car]!r}")
        fields = [x for row in rows for x in self._numeric_of(row)]
        try:
            values = np.array([float(x) if x else math.nan for x in fields])
        except ValueError:
            self._locate(rows, first_line)
            raise                                       # pragma: no cover
        width = len(self.numeric)
        values = values.reshape(len(rows), width)
        bad = ~np.isfinite(values)
        if bad.any():                                   # an empty field is NaN: tell it from bad numbers
            empty = np.array([x == "" for x in fields]).reshape(len(rows), width)
            bad &= ~empty
            bad[:, self.defined] |= empty[:, self.defined]
            if bad.any():
                k, i = (int(v) for v in np.argwhere(bad)[0])
                j = self.numeric[i]
                what = "a finite number" if i in self.defined else "a finite number or empty"
                self.fail(first_line + k, self.header[j], f"must be {what}, got {rows[k][j][:40]!r}")
        for i, j in enumerate(self.numeric):
            if j in self.kept:
                self.kept[j].append(values[:, i].copy())
        self.rows += len(rows)

    def _locate(self, rows, first_line):
        for k, row in enumerate(rows):
            for j in self.numeric:
                try:
                    float(row[j] or "nan")
                except ValueError:
                    self.fail(first_line + k, self.header[j], f"must be a number, got {row[j][:40]!r}")

    def _first_instant(self, rows, first_line):
        t0 = rows[0][self.header.index("t")]
        labels, seen = [], set()
        for k, row in enumerate(rows):
            if row[self.header.index("t")] != t0:
                break
            car = row[self.i_car]
            if not (car.isascii() and car.isdigit() and int(car) >= 1):
                self.fail(first_line + k, "car", f"must be a car number ≥ 1, got {car!r}")
            label = (row[self.i_train], car)
            if label in seen:
                self.fail(first_line + k, "train", f"{label[0]!r} car {car} appears twice in one instant")
            seen.add(label)
            labels.append(label)
        self.labels = labels

    def finish(self):
        if not self.rows:
            raise InputError("no data rows", path=self.path, where="line 2")
        ne = len(self.labels)
        if self.rows % ne:
            raise InputError(f"{self.rows} rows are not whole instants of {ne} cars and bodies (the last "
                             "instant is cut short)", path=self.path, where=f"line {self.line}")
        m = self.rows // ne
        cols = {self.header[j]: np.concatenate(v).reshape(m, ne) for j, v in self.kept.items()}
        t = cols["t"]
        if np.any(t != t[:, :1]):
            i, e = np.argwhere(t != t[:, :1])[0]
            self.fail(2 + i * ne + e, "t", "the rows of one instant must have the same t")
        t = t[:, 0].copy()
        if m > 1 and not np.all(np.diff(t) > 0):
            i = int(np.argmax(~(np.diff(t) > 0))) + 1
            self.fail(2 + i * ne, "t", f"time must increase from instant to instant, got {t[i]:.10g} after "
                      f"{t[i - 1]:.10g}")
        labels = [(a, int(b)) for a, b in self.labels]
        return self.header, labels, t, {k: v for k, v in cols.items() if k != "t"}
