"""The CSV and JSON writers: columns, formats, atomic renames, output directories."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trackrider.errors import InputError
from trackrider.physics import channels as ch
from trackrider.record import (COLUMNS, CSV_NAME, FLOAT_FORMAT, SUMMARY_NAME, TimeseriesWriter,
                               check_out_dir, read_summary, read_timeseries,
                               write_summary)
from trackrider.results_folder import ResultsFolder

#: docs/outputs.md: these columns first, in this order, then at least the quaternion
INTERFACE_COLUMNS = ["t", "train", "car", "s", "x", "y", "z", "speed", "accel", "g_vertical",
                     "g_lateral", "g_longitudinal", "wheel_load", "lateral_load", "motor_force",
                     "kinetic_energy", "potential_energy"]


def block(m, labels, seed=0, t0=0.0):
    rng = np.random.default_rng(seed)
    n = len(labels)
    t = t0 + 0.01 * np.arange(1, m + 1)
    s = rng.normal(size=(m, n, ch.N_CHANNELS)) * 100.0
    s[:, :, ch.SECTION] = -1
    s[:, :, ch.FLAGS] = ch.ON_TRACK
    s[:, :, ch.WHEEL_LOAD] = np.abs(s[:, :, ch.WHEEL_LOAD]) + 1.0
    for j, (name, _) in enumerate(labels):
        if name == "bob":   # a free body
            s[:, j, list(ch.TRACK_CHANNELS)] = np.nan
            s[:, j, ch.FLAGS] = ch.FREE_BODY
    fg = rng.normal(size=(m, n, 3))
    return t, s, fg


LABELS = [("red", 1), ("red", 2), ("bob", 1)]


def test_header_is_the_interface_columns_then_quaternion_then_extras(tmp_path):
    w = TimeseriesWriter(tmp_path, LABELS)
    w.write(*block(3, LABELS))
    w.close()
    header = (tmp_path / CSV_NAME).read_text().splitlines()[0].split(",")
    assert header[:17] == INTERFACE_COLUMNS
    assert header[17:21] == ["qw", "qx", "qy", "qz"]
    assert header == list(COLUMNS)
    for extra in ("g_vertical_filtered", "g_lateral_filtered", "g_longitudinal_filtered",
                  "wheel_load_inner", "wheel_load_outer", "l_over_v"):
        assert extra in header


def test_rows_round_trip_at_the_stated_precision(tmp_path):
    t, s, fg = block(50, LABELS, seed=3)
    w = TimeseriesWriter(tmp_path, LABELS, gauge_per_entity=1.5)
    w.write(t[:20], s[:20], fg[:20])
    w.write(t[20:], s[20:], fg[20:])
    w.close()
    d = read_timeseries(tmp_path)
    assert len(d["t"]) == 150 == w.rows
    assert list(d["train"][:3]) == ["red", "red", "bob"] and list(d["car"][:3]) == [1, 2, 1]
    assert np.allclose(d["t"], np.repeat(t, 3), rtol=1e-10)
    for name in ("x", "speed", "g_vertical", "qw", "wheel_load", "flags"):
        ref = s[:, :, ch.INDEX[name]].reshape(-1)
        ok = ~np.isnan(ref)
        assert np.allclose(d[name][ok], ref[ok], rtol=1e-6, atol=0), name
    assert np.allclose(d["g_vertical_filtered"], fg[:, :, 0].reshape(-1), rtol=1e-6)
    # free body: track columns empty
    bob = d["train"] == "bob"
    for name in ("s", "speed", "wheel_load", "lateral_load", "motor_force", "wheel_load_inner"):
        assert np.all(np.isnan(d[name][bob])), name
    assert np.all(np.isfinite(d["x"][bob]))
    # inner/outer split: F2/2 ∓ |M_T|/gauge
    red = ~bob
    f2 = s[:, :2, ch.WHEEL_LOAD].reshape(-1)
    mt = np.abs(s[:, :2, ch.ROLL_TORQUE].reshape(-1)) / 1.5
    assert np.allclose(d["wheel_load_inner"][red], f2 / 2 - mt, rtol=1e-5, atol=1e-3)
    assert np.allclose(d["wheel_load_outer"][red], f2 / 2 + mt, rtol=1e-5, atol=1e-3)


def test_free_body_row_has_empty_track_fields(tmp_path):
    w = TimeseriesWriter(tmp_path, LABELS)
    w.write(*block(1, LABELS))
    w.close()
    rows = (tmp_path / CSV_NAME).read_text().splitlines()
    bob = rows[3].split(",")
    assert bob[1] == "bob" and bob[2] == "1"
    for name in ("s", "speed", "wheel_load", "lateral_load", "motor_force"):
        assert bob[COLUMNS.index(name)] == "", name
    assert "nan" not in (tmp_path / CSV_NAME).read_text()


def test_awkward_train_names_are_quoted(tmp_path):
    labels = [("a,b", 1), ('say "hi" 100%', 1)]
    w = TimeseriesWriter(tmp_path, labels)
    w.write(*block(2, labels))
    w.close()
    d = read_timeseries(tmp_path / CSV_NAME)
    assert list(d["train"]) == ["a,b", 'say "hi" 100%'] * 2


def test_csv_is_only_named_timeseries_csv_when_complete(tmp_path):
    w = TimeseriesWriter(tmp_path, LABELS)
    w.write(*block(10, LABELS))
    assert not (tmp_path / CSV_NAME).exists()
    assert (tmp_path / (CSV_NAME + ".part")).exists()
    w.close()
    assert (tmp_path / CSV_NAME).exists() and not (tmp_path / (CSV_NAME + ".part")).exists()


def test_an_exception_aborts_and_leaves_no_timeseries_csv(tmp_path):
    with pytest.raises(RuntimeError):
        with TimeseriesWriter(tmp_path, LABELS) as w:
            w.write(*block(10, LABELS))
            raise RuntimeError("interrupted")
    assert not (tmp_path / CSV_NAME).exists()
    assert (tmp_path / (CSV_NAME + ".part")).exists()   # what was recorded, not looking whole


def test_identical_input_gives_identical_bytes(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        w = TimeseriesWriter(tmp_path / d, LABELS)
        w.write(*block(40, LABELS, seed=9))
        w.close()
    a = (tmp_path / "a" / CSV_NAME).read_bytes()
    assert a == (tmp_path / "b" / CSV_NAME).read_bytes()
    # the stated format: seven significant digits
    assert FLOAT_FORMAT == "%.7g"
    x = a.decode().splitlines()[1].split(",")[COLUMNS.index("x")]
    assert len(x.replace("-", "").replace(".", "").split("e")[0].lstrip("0")) <= 7


def test_summary_json_is_strict_json_with_nulls(tmp_path):
    p = write_summary(tmp_path, {"status": "completed", "a": math.nan, "b": [np.float64(1.5), math.inf],
                                 "n": np.int64(3), "ok": np.bool_(True)})
    assert p.name == SUMMARY_NAME and not (tmp_path / (SUMMARY_NAME + ".part")).exists()
    text = p.read_text()
    d = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    assert d == {"status": "completed", "a": None, "b": [1.5, None], "n": 3, "ok": True}
    assert read_summary(tmp_path) == d


def test_existing_directory_is_refused_without_overwrite(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / SUMMARY_NAME).write_text("{}")
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(InputError, match="overwrite"):
        check_out_dir(out)
    with pytest.raises(InputError, match="overwrite"):
        ResultsFolder(out)
    assert sorted(p.name for p in out.iterdir()) == before
    assert (out / SUMMARY_NAME).read_text() == "{}"


def test_a_file_is_not_an_output_directory(tmp_path):
    f = tmp_path / "x"
    f.write_text("hello")
    with pytest.raises(InputError, match="not a directory"):
        check_out_dir(f, overwrite=True)


def test_check_creates_nothing_and_taking_the_folder_creates_it(tmp_path):
    out = tmp_path / "a" / "b"
    assert check_out_dir(out) == out
    assert not (tmp_path / "a").exists()
    folder = ResultsFolder(out)
    assert out.is_dir() and [p.name for p in out.iterdir()] == [folder.stage.name]
    folder.close()                # a run that wrote nothing leaves no folder it created
    assert not out.exists()
    out.mkdir()
    ResultsFolder(out).close()    # an empty directory may be used as it is, and stays
    assert out.is_dir() and not any(out.iterdir())


def test_overwrite_keeps_old_results_until_the_new_ones_are_whole(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / CSV_NAME).write_text("t,train,car,old\n")
    (out / SUMMARY_NAME).write_text("old")
    (out / "notes.txt").write_text("mine")
    folder = ResultsFolder(out, overwrite=True)
    # nothing removed before the run: the new results are written in a stage inside the folder
    assert sorted(p.name for p in out.iterdir() if p != folder.stage) == sorted([CSV_NAME, "notes.txt", SUMMARY_NAME])
    folder.close()
    assert sorted(p.name for p in out.iterdir()) == sorted([CSV_NAME, "notes.txt", SUMMARY_NAME])


def test_read_errors_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_timeseries(tmp_path)
    (tmp_path / CSV_NAME).write_text("t,train,car\n1,a\n")
    with pytest.raises(InputError, match="line 1: missing columns: s, x"):
        read_timeseries(tmp_path)
    (tmp_path / CSV_NAME).write_text(",".join(COLUMNS) + "\n1,a\n")
    with pytest.raises(InputError, match=f"line 2: expected {len(COLUMNS)} fields, got 2"):
        read_timeseries(tmp_path)
    (tmp_path / SUMMARY_NAME).write_text("{not json")
    with pytest.raises(InputError, match="JSON"):
        read_summary(tmp_path)


def test_a_train_called_nan_is_written_as_its_name(tmp_path):
    labels = [("nan", 1), ("banana,nan", 2), ("bob", 1)]
    w = TimeseriesWriter(tmp_path, labels)
    t, s, fg = block(4, labels)
    s[:, 2, list(ch.TRACK_CHANNELS)] = np.nan
    w.write(t, s, fg)
    w.close()
    d = read_timeseries(tmp_path)
    assert list(d["train"][:3]) == ["nan", "banana,nan", "bob"]
    assert np.all(np.isnan(d["s"][2::3])) and np.all(np.isfinite(d["s"][0::3]))


def test_fast_and_row_by_row_formats_agree(tmp_path):
    labels = [("red", 1), ("bob", 1)]
    t, s, fg = block(30, labels)          # "bob" is a free body: NaN track columns
    for name, fast in (("fast", True), ("slow", False)):
        (tmp_path / name).mkdir()
        w = TimeseriesWriter(tmp_path / name, labels)
        w._fast = fast
        w.write(t, s, fg)
        w.close()
    assert (tmp_path / "fast" / CSV_NAME).read_bytes() == (tmp_path / "slow" / CSV_NAME).read_bytes()


def test_blocks_written_by_the_thread_come_out_in_order_and_alike(tmp_path):
    """Blocks handed over one after another (each formatted and written by the writer's thread, in
    pieces of ``FORMAT_ROWS`` rows) give the bytes of the same rows written at once."""
    from trackrider import record

    blocks = [block(m, LABELS, seed=k, t0=k) for k, m in enumerate((1, 700, 3, 260))]
    for d in ("parts", "whole"):
        (tmp_path / d).mkdir()
    w = TimeseriesWriter(tmp_path / "parts", LABELS)
    for b in blocks:
        w.write(*b)
    w.close()
    whole = TimeseriesWriter(tmp_path / "whole", LABELS)
    table = np.concatenate([record.block_table(*b)[:, whole._value_cols] for b in blocks])
    whole._write_table(table, len(table) // len(LABELS), len(LABELS))
    whole.close()
    assert (tmp_path / "parts" / CSV_NAME).read_bytes() == (tmp_path / "whole" / CSV_NAME).read_bytes()
    assert w.rows == len(table)


def test_a_failed_write_in_the_thread_is_raised_and_leaves_no_timeseries_csv(tmp_path, monkeypatch):
    """An error while the thread writes a block (a full disk) is raised by the next ``write`` or by
    ``close``, naming the file; no ``timeseries.csv`` is left, the ``.part`` file is closed."""
    def full(self, table, m, ne):
        raise OSError(28, "No space left on device")

    for last in ("write", "close"):
        folder = tmp_path / last
        folder.mkdir()
        w = TimeseriesWriter(folder, LABELS)
        monkeypatch.setattr(TimeseriesWriter, "_write_table", full)
        w.write(*block(5, LABELS))
        with pytest.raises(OSError) as err:
            if last == "write":
                w.write(*block(5, LABELS, t0=1.0))
            else:
                w.close()
        monkeypatch.undo()
        assert err.value.filename == str(folder / CSV_NAME)
        w.abort()
        assert w.closed and w._file.closed
        assert not (folder / CSV_NAME).exists() and (folder / (CSV_NAME + ".part")).exists()
