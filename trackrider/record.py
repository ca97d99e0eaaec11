"""Writing (and reading back) the outputs users keep: ``timeseries.csv`` and ``summary.json``.

``timeseries.csv`` has one row per entity (cars in train order, lead car first,
then free bodies) per recorded instant, with ``COLUMNS`` as header. Numbers are
written with fixed formats so that identical runs give byte-identical files:
``t`` with ``TIME_FORMAT`` (``%.10g``), every other number with ``FLOAT_FORMAT``
(``%.7g``: seven significant digits, e.g. 0.1 mm at 1 km). NaN (a free body's
track columns, an undefined L/V) is written as an empty field. Train names are
quoted as the csv module quotes them (only when they contain ``,``, ``"`` or a
line break).

Both files are written under temporary names, created exclusive and no-follow,
and renamed when complete, so a file called ``timeseries.csv`` is always whole; a
run writes them into its stage folder and swaps them into the results folder with
the ``inputs/`` copy in one step (``trackrider.results_folder``). The CSV streams
to disk chunk by chunk: memory does not grow with the length of the run. A block's rows are
formatted and written by a thread of the writer's own while the run steps on (the compiled step
releases the interpreter's lock): one block at a time, in order, so the file is the same.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
from pathlib import Path

import numpy as np

from trackrider.errors import InputError
from trackrider.metrics import FILTERED_G, FILTERED_ROW_G, ROW_G, wheel_split
from trackrider.physics import channels as ch
from trackrider.results_folder import is_plain_file, naming, open_new, temp_name

#: the columns docs/outputs.md fixes, in order
BASE_COLUMNS = (
    "t", "train", "car", "s", "x", "y", "z", "speed", "accel",
    "g_vertical", "g_lateral", "g_longitudinal", "wheel_load", "lateral_load",
    "motor_force", "kinetic_energy", "potential_energy",
)
#: orientation, body to world
QUATERNION_COLUMNS = ("qw", "qx", "qy", "qz")
#: extras after them
EXTRA_COLUMNS = FILTERED_G + (
    "wheel_load_inner", "wheel_load_outer", "l_over_v", "roll_torque", "resistance_force",
    "vx", "vy", "vz", "wx", "wy", "wz", "section", "flags",
)
COLUMNS = BASE_COLUMNS + QUATERNION_COLUMNS + EXTRA_COLUMNS
#: after them, only when a car has front and rear rider rows (``rider_rows = 2``): their raw and filtered G
ROW_COLUMNS = ROW_G + FILTERED_ROW_G
#: after them, in a railway world only (docs/physics.md §10): couplers, locomotives, air brakes
RAIL_COLUMNS = tuple(ch.NAMES[i] for i in ch.RAIL)
#: the numeric columns (all but ``train``), in CSV order
NUMERIC_COLUMNS = tuple(c for c in COLUMNS if c != "train")

TIME_FORMAT = "%.10g"
FLOAT_FORMAT = "%.7g"

CSV_NAME = "timeseries.csv"
SUMMARY_NAME = "summary.json"
PART_SUFFIX = ".part"
#: rows formatted at once (``TimeseriesWriter``): a few hundred, so the thread that formats them lets
#: the run's own thread have the interpreter's lock every few milliseconds
FORMAT_ROWS = 512

# numeric columns taken straight from the recorded channels
_DIRECT = {name: ch.INDEX[name] for name in NUMERIC_COLUMNS if name in ch.INDEX}


def block_table(t, samples, filtered_g, gauge_per_entity=1.0, extra=None):
    """The numeric CSV columns of one block, rows per instant then per entity.

    t (m,) s; samples (m, n_entities, N_CHANNELS); filtered_g (m, n_entities, 3) in g;
    gauge_per_entity m; extra (m, n_entities, k) or None: columns after ``COLUMNS`` (the
    ``block`` column of a run with block sections). Returns a float array
    (m * n_entities, len(NUMERIC_COLUMNS) + k); the ``car`` column is filled by the caller's
    labels (NaN here).
    """
    t = np.asarray(t, dtype=float)
    m, ne, _ = samples.shape
    gauge = np.broadcast_to(np.asarray(gauge_per_entity, dtype=float), (ne,))
    table = np.empty((m, ne, len(NUMERIC_COLUMNS)))
    q_inner, q_outer, lv = wheel_split(samples, gauge[None, :])
    derived = {"wheel_load_inner": q_inner, "wheel_load_outer": q_outer, "l_over_v": lv}
    for j, name in enumerate(NUMERIC_COLUMNS):
        if name == "t":
            table[:, :, j] = t[:, None]
        elif name == "car":
            table[:, :, j] = np.nan
        elif name in _DIRECT:
            table[:, :, j] = samples[:, :, _DIRECT[name]]
        elif name in FILTERED_G:
            table[:, :, j] = filtered_g[:, :, FILTERED_G.index(name)]
        else:
            table[:, :, j] = derived[name]
    # free bodies: the track-only derived columns are undefined too
    free = np.isnan(samples[:, :, ch.S])
    for name in ("wheel_load_inner", "wheel_load_outer", "l_over_v"):
        j = NUMERIC_COLUMNS.index(name)
        table[:, :, j] = np.where(free, np.nan, table[:, :, j])
    if extra is not None:
        table = np.concatenate([table, np.asarray(extra, dtype=float).reshape(m, ne, -1)], axis=2)
    return table.reshape(m * ne, table.shape[2])


def _quote(name: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([name])
    return buf.getvalue()


class TimeseriesWriter:
    """Streams ``timeseries.csv`` into ``directory``, atomically.

    Rows go to ``timeseries.csv.part``; ``close()`` flushes, syncs and renames it
    to ``timeseries.csv``. ``abort()`` leaves the ``.part`` file (what was
    recorded, under a name that does not look whole) and no ``timeseries.csv``.
    Usable as a context manager: an exception aborts.

    Parameters
    ----------
    directory : path
        An existing directory.
    entity_labels : list of (name, car_no)
        One label per entity, in entity order.
    gauge_per_entity : float or array
        Rail gauge per entity, m (for the inner/outer wheel loads; default 1.0).
    extra_columns : sequence of str
        Names of columns after ``COLUMNS`` (``write`` then takes their values).
    """

    def __init__(self, directory, entity_labels, gauge_per_entity=1.0, extra_columns=()):
        self.directory = Path(directory)
        self.path = self.directory / CSV_NAME
        self.part = self.directory / (CSV_NAME + PART_SUFFIX)
        self.labels = [(str(a), int(b)) for a, b in entity_labels]
        self.gauge = gauge_per_entity
        self.rows = 0
        self.extra_columns = tuple(extra_columns)
        j_car = NUMERIC_COLUMNS.index("car")
        numeric = NUMERIC_COLUMNS + self.extra_columns
        # one format per entity, its label and car number literal
        self._formats = []
        for name, car in self.labels:
            parts = []
            for j, col in enumerate(numeric):
                if col == "t":
                    parts.append(TIME_FORMAT)
                    parts.append(_quote(name).replace("%", "%%"))
                elif j == j_car:
                    parts.append(str(car))
                else:
                    parts.append(FLOAT_FORMAT)
            self._formats.append(",".join(parts) + "\n")
        self._value_cols = [j for j, c in enumerate(numeric) if c != "car"]
        self._instant_format = "".join(self._formats)
        self._fast = not any("nan" in _quote(name) for name, _ in self.labels)
        # created exclusive and no-follow: never written through a link or over a file
        with naming(self.path):
            self._file = open_new(self.part, "w", encoding="utf-8", newline="")
            self._file.write(",".join(COLUMNS + self.extra_columns) + "\n")
        self.closed = False
        self._thread = None         # writing the last block handed over
        self._failed = None         # what stopped it

    def write(self, t, samples, filtered_g, extra=None):
        """Append one block (as ``RideMetrics`` hands it out); ``extra`` (m, n_entities, k): the
        values of ``extra_columns``. Its rows are formatted and written by a thread (the module
        docstring) once the block before is; an error writing that one is raised here."""
        m, ne, _ = samples.shape
        if m == 0:
            return
        table = block_table(t, samples, filtered_g, self.gauge, extra)[:, self._value_cols]
        self._wait()
        self._thread = threading.Thread(target=self._write_block, args=(table, m, ne), daemon=True,
                                        name="trackrider-csv")
        self._thread.start()

    def _write_block(self, table, m, ne):
        try:
            with naming(self.path):
                self._write_table(table, m, ne)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread (``_wait``)
            self._failed = exc

    def _wait(self):
        """The block handed over last written; its error raised."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._failed is not None:
            exc, self._failed = self._failed, None
            raise exc

    def _write_table(self, table, m, ne):
        if self._fast:
            # one %-format per few hundred rows (each holds the interpreter's lock while it formats);
            # NaN ('nan', never part of a number or, here, of a label) becomes an empty field
            step = max(1, FORMAT_ROWS // ne)
            for a in range(0, m, step):
                part = table[a * ne:(a + step) * ne]
                text = (self._instant_format * (len(part) // ne)) % tuple(part.ravel().tolist())
                if np.isnan(part).any():
                    text = text.replace(",nan", ",")
                self._file.write(text)
            self.rows += len(table)
            return
        has_nan = np.isnan(table).any(axis=1)
        rows = table.tolist()
        formats = self._formats
        lines = []
        for r, row in enumerate(rows):
            e = r % ne
            if has_nan[r]:
                lines.append(self._format_nan_row(e, row))
            else:
                lines.append(formats[e] % tuple(row))
        self._file.write("".join(lines))
        self.rows += len(rows)

    def _format_nan_row(self, e, row):
        name, car = self.labels[e]
        fields = [TIME_FORMAT % row[0], _quote(name), str(car)]
        for v in row[1:]:
            fields.append("" if v != v else FLOAT_FORMAT % v)
        return ",".join(fields) + "\n"

    def close(self):
        """Finish: flush, sync and rename to ``timeseries.csv``. Returns its path."""
        if self.closed:
            return self.path
        try:
            self._wait()
        except BaseException:
            self.abort()
            raise
        with naming(self.path):
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.part, self.path)
        self.closed = True
        return self.path

    def abort(self):
        """Stop writing; keep the ``.part`` file, never a ``timeseries.csv``."""
        if self.closed:
            return
        if self._thread is not None:    # the block being written finished (what was recorded is kept)
            self._thread.join()
            self._thread = None
        try:
            self._file.flush()
        finally:
            self._file.close()
            self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def _json_clean(value):
    """Replace NaN/inf by None and numpy scalars by Python ones, recursively."""
    if isinstance(value, dict):
        return {str(k): _json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, Path):
        return str(value)
    return value


def write_summary(directory, summary: dict) -> Path:
    """Write ``summary.json`` into ``directory`` atomically (a fresh temporary name, created
    exclusive and no-follow, renamed when complete); returns its path.

    NaN and infinities become ``null``; keys keep the dict's order; 2-space indent.
    """
    path = Path(directory) / SUMMARY_NAME
    part = temp_name(path)
    text = json.dumps(_json_clean(summary), indent=2, allow_nan=False) + "\n"
    with naming(path):
        try:
            with open_new(part, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(part, path)
        except BaseException:
            if is_plain_file(part):
                os.unlink(part)
            raise
    return path


def check_out_dir(out_dir, overwrite: bool = False) -> Path:
    """Refuse an output folder that would lose the user's files; create nothing.

    The rule of ``trackrider.outputs.check_results_dir``: a new, empty or
    leftovers-only (``*.part``) folder is fine; an existing results folder
    needs ``overwrite=True``; a folder trackrider does not recognise, a file,
    or a path that cannot be written is refused. Raises ``InputError`` (exit 2).
    """
    from trackrider.outputs import check_results_dir

    return check_results_dir(out_dir, overwrite)


def read_timeseries(path) -> dict:
    """Read a ``timeseries.csv`` (or a results directory's) into column → numpy array.

    ``train`` is an array of str, ``car`` of int, every other column float (empty
    fields are NaN); extra columns (``block``) are read as floats too. The file is
    checked as every reader of results checks it (``trackrider.results_reader``).
    """
    from trackrider.results_reader import Results, read_timeseries_checked

    path = Path(path)
    if path.is_dir():
        path = path / CSV_NAME
    if not path.is_file():
        raise InputError("no such file", path=path)
    header, labels, t, cols = read_timeseries_checked(path)
    return Results(path=path.parent, summary={}, labels=labels, t=t, columns=cols, header=header).flat()


def read_summary(path) -> dict:
    """Read a ``summary.json`` (or a results directory's), checked as every reader of results
    checks it (``trackrider.results_reader``)."""
    from trackrider.results_reader import read_summary_checked

    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_NAME
    if not path.is_file():
        raise InputError("no such file", path=path)
    return read_summary_checked(path)
