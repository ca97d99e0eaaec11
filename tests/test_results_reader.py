"""One reader of a results folder (trackrider/results_reader.py): ``report``, ``plot`` and
``render`` accept and refuse the same hand-edited files, each refusal one ``error:`` line
naming the file and the field, exit 2."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A short run of the pendulum (a car on a track and a free body), with two events added."""
    out = tmp_path_factory.mktemp("reader") / "res"
    r = runner.invoke(app, ["run", str(ROOT / "scenarios" / "pendulum.toml"), "--out", str(out), "--duration", "0.3",
                            "-q"])
    assert r.exit_code == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    summary["events"] = [{"t": 0.1, "train": "bead", "car": 1, "kind": "rolled_back"},
                         {"t": 0.2, "train": "bead", "car": 1, "kind": "block_overrun", "section": "s",
                          "speed": 1.5, "block_ahead_held_by": ["x"]}]
    (out / "summary.json").write_text(json.dumps(summary))
    return out


def _edit_summary(change):
    def apply(folder):
        path = folder / "summary.json"
        doc = json.loads(path.read_text())
        doc = change(doc)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return apply


def _set(*keys, value):
    def change(doc):
        node = doc
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
        return doc
    return _edit_summary(change)


def _drop(key):
    return _edit_summary(lambda doc: {k: v for k, v in doc.items() if k != key})


def _edit_csv(change):
    def apply(folder):
        path = folder / "timeseries.csv"
        lines = path.read_text().split("\n")
        path.write_text("\n".join(change(lines)))
    return apply


def _field(line_no, column, value):
    """Line ``line_no`` (0 = the header) with ``column`` set to ``value``."""
    def change(lines):
        header = lines[0].split(",")
        fields = lines[line_no].split(",")
        fields[header.index(column)] = value
        lines[line_no] = ",".join(fields)
        return lines
    return _edit_csv(change)


def _nested(depth):
    def change(doc):
        node = doc["overrides"] = {}
        for _ in range(depth):
            node["a"] = {}
            node = node["a"]
        return doc
    return _edit_summary(change)


#: (name, edit, refused: (file, field or line named in the message)) — None: a file every reader accepts
CASES = [
    ("events of ints", _set("events", value=[1, 2, 3]), ("summary.json", "events[0]")),
    ("samples a string", _set("samples", value="4000"), ("summary.json", "samples")),
    ("scenario an int", _set("scenario", value=5), ("summary.json", "scenario")),
    ("trains a string", _set("trains", value="bead"), ("summary.json", "trains")),
    ("a train a string", _set("trains", "bead", value="x"), ("summary.json", "trains.bead")),
    ("a figure a word", _set("trains", "bead", "max_speed", value="fast"), ("summary.json", "trains.bead.max_speed")),
    ("a figure NaN", _edit_summary(lambda d: json.dumps(d).replace('"max_speed": ', '"max_speed": NaN, "x": ', 1)),
     ("summary.json", "max_speed")),
    ("at a list", _set("trains", "bead", "at", value=[1]), ("summary.json", "trains.bead.at")),
    ("a place with a word for t", _set("trains", "bead", "at", "max_speed", value={"t": "x"}),
     ("summary.json", "trains.bead.at.max_speed.t")),
    ("a place's car 0", _set("trains", "bead", "at", "max_speed", value={"t": 0.1, "car": 0}),
     ("summary.json", "at.max_speed.car")),
    ("cars 0", _set("trains", "bead", "cars", value=0), ("summary.json", "trains.bead.cars")),
    ("wheels a number", _set("trains", "bead", "wheels", value=3), ("summary.json", "trains.bead.wheels")),
    ("energy_group a string", _set("trains", "bead", "energy_group", value="x"),
     ("summary.json", "trains.bead.energy_group")),
    ("an event's t a word", _set("events", value=[{"t": "x", "kind": "stalled"}]), ("summary.json", "events[0].t")),
    ("an event's car a word", _set("events", 0, "car", value="two"), ("summary.json", "events[0].car")),
    ("an event without a kind", _set("events", value=[{"t": 1.0}]), ("summary.json", "events[0].kind")),
    ("a train's event at car 0", _set("events", value=[{"t": 1.0, "train": "bead", "car": 0, "kind": "lap"}]),
     ("summary.json", "events[0].car")),
    ("an event's section a list", _set("events", 1, "section", value=["a"]), ("summary.json", "events[1].section")),
    ("an event holding an object", _set("events", 1, "speed", value={"a": 1}), ("summary.json", "events[1].speed")),
    ("events an object", _set("events", value={"t": 1}), ("summary.json", "events")),
    ("events_dropped negative", _set("events_dropped", value=-1), ("summary.json", "events_dropped")),
    ("no status", _drop("status"), ("summary.json", "status")),
    ("status a number", _set("status", value=3), ("summary.json", "status")),
    ("a list, not an object", _edit_summary(lambda d: [d]), ("summary.json", "top level")),
    ("a string, not an object", _edit_summary(lambda d: '"text"'), ("summary.json", "top level")),
    ("not JSON", _edit_summary(lambda d: "{not json"), ("summary.json", "JSON")),
    ("empty", _edit_summary(lambda d: ""), ("summary.json", "JSON")),
    ("title a number", _set("title", value=7), ("summary.json", "title")),
    ("filter a word", _set("filter", value="on"), ("summary.json", "filter")),
    ("a cut-off a word", _set("filter", "cutoff_hz", value="5"), ("summary.json", "filter.cutoff_hz")),
    ("applied a word", _set("filter", "applied", value="yes"), ("summary.json", "filter.applied")),
    ("operation a number", _set("operation", value=1), ("summary.json", "operation")),
    ("laps a word", _set("operation", value={"trains": {"bead": {"laps": "many"}}}),
     ("summary.json", "operation.trains.bead.laps")),
    ("bodies a list", _set("bodies", value=[]), ("summary.json", "bodies")),
    ("a body's figure a word", _set("bodies", "bob", "max_speed", value="x"), ("summary.json", "bodies.bob.max_speed")),
    ("warnings a string", _set("warnings", value="w"), ("summary.json", "warnings")),
    ("overrides a number", _set("overrides", value=3), ("summary.json", "overrides")),
    ("nested 100 deep", _nested(100), ("summary.json", "nested")),
    ("message an object", _set("message", value={}), ("summary.json", "message")),
    ("diverged's t a word", _set("diverged", value={"t": "x", "entity": 0}), ("summary.json", "diverged.t")),
    ("text in car", _field(1, "car", "x"), ("timeseries.csv", "line 2, column car")),
    ("car 0", _field(1, "car", "0"), ("timeseries.csv", "line 2, column car")),
    ("a NaN position", _field(3, "x", "nan"), ("timeseries.csv", "line 4, column x")),
    ("an empty position", _field(5, "z", ""), ("timeseries.csv", "line 6, column z")),
    ("an empty orientation", _field(5, "qw", ""), ("timeseries.csv", "line 6, column qw")),
    ("an infinite time", _field(3, "t", "inf"), ("timeseries.csv", "line 4, column t")),
    ("a word for a speed", _field(3, "speed", "abc"), ("timeseries.csv", "line 4, column speed")),
    ("a short row", _edit_csv(lambda ls: ls[:4] + [",".join(ls[4].split(",")[:5])] + ls[5:]),
     ("timeseries.csv", "line 5")),
    ("no x column", _edit_csv(lambda ls: [",".join(f for i, f in enumerate(l.split(",")) if i != 4) for l in ls]),
     ("timeseries.csv", "line 1")),
    ("a column twice", _edit_csv(lambda ls: [ls[0].replace(",accel,", ",speed,")] + ls[1:]),
     ("timeseries.csv", "line 1")),
    ("time going back", _edit_csv(lambda ls: ls[:1] + ls[3:5] + ls[1:3] + ls[5:]), ("timeseries.csv", "column t")),
    ("an instant cut short", _edit_csv(lambda ls: ls[:-2] + [""]), ("timeseries.csv", "instants")),
    ("a stranger in an instant", _field(4, "train", "ghost"), ("timeseries.csv", "line 5, column train")),
    ("header only", _edit_csv(lambda ls: ls[:1] + [""]), ("timeseries.csv", "no data rows")),
    ("an empty file", _edit_csv(lambda ls: []), ("timeseries.csv", "line 1")),
    ("a blank line", _edit_csv(lambda ls: ls[:3] + [""] + ls[3:]), ("timeseries.csv", "line 4")),
    # edits every reader accepts
    ("another title", _set("title", value="my ride"), None),
    ("no events", _set("events", value=[]), None),
    ("a switch's event (train \"\", car 0)", _set("events", value=[{"t": 10.67, "train": "", "car": 0,
                                                                    "kind": "switch_set", "switch": "west points",
                                                                    "from": "main", "to": "loop"}]), None),
    ("a key of our own", _set("notes", value={"by": "me", "n": [1, {"x": 2}]}), None),
    ("a figure null", _set("trains", "bead", "max_speed", value=None), None),
]


@pytest.fixture(scope="module")
def can_render():
    from trackrider.render.probe import check_rendering

    return check_rendering() is None


def _invoke(args):
    r = runner.invoke(app, [str(a) for a in args])
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    return r.exit_code, lines


@pytest.mark.parametrize("name,edit,refused", CASES, ids=[c[0] for c in CASES])
def test_report_plot_and_render_accept_and_refuse_the_same_results(base, can_render, tmp_path, name, edit, refused):
    folder = tmp_path / "res"
    shutil.copytree(base, folder)
    edit(folder)
    outcomes = {
        "report": _invoke(["report", folder, "--out", tmp_path / "page.html"]),
        "plot": _invoke(["plot", folder, "--out", tmp_path / "plot.png"]),
    }
    if refused is not None and can_render:     # refused before anything is drawn (rendering a still is slow)
        outcomes["render"] = _invoke(["render", folder, "--out", tmp_path / "still.png"])
    for command, (code, lines) in outcomes.items():
        if refused is None:
            assert code == 0, (command, lines)
            continue
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (command, lines)
        assert "internal error" not in lines[0], (command, lines)
        file, field = refused
        assert str(folder / file) in lines[0] and field in lines[0], (command, lines[0])
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())    # no temporary left behind
