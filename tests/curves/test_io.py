"""Curve files: points CSV, NoLimits 2 CSV, JSON, NL2 export, reports and every bad-file case."""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from trackrider.curves import Track, curve_report, format_curve_report, load_curve, save_nl2
from trackrider.curves.io import NL2_HEADER
from trackrider.errors import InputError

from tests.curves.curves_helpers import CURVES, helix_points

ZUP_TO_NL2 = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])  # (x, y, z) -> (X, Y, Z) with Y up


def write_nl2(path, P, F, L, U):
    """Write an NL2 spline export from z-up arrays (converted to NL2's Y-up by a proper rotation)."""
    rows = ["\t".join(f'"{h}"' for h in NL2_HEADER)]
    for i in range(len(P)):
        vals = np.concatenate([ZUP_TO_NL2 @ P[i], ZUP_TO_NL2 @ F[i], ZUP_TO_NL2 @ L[i], ZUP_TO_NL2 @ U[i]])
        rows.append(f"{i + 1}\t" + "\t".join(f"{v:.9f}" for v in vals))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_nl2_helix_keeps_handedness(tmp_path):
    r, c = 8.0, 1.2
    t = np.linspace(0, 4 * np.pi, 300)
    P = np.column_stack([r * np.cos(t), r * np.sin(t), c * t])
    F = np.column_stack([-r * np.sin(t), r * np.cos(t), np.full_like(t, c)]) / math.hypot(r, c)
    U = np.array([0, 0, 1.0]) - F[:, 2:3] * F
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    L = np.cross(U, F)
    tr = load_curve(write_nl2(tmp_path / "helix.csv", P, F, L, U))
    assert tr.frame_kind == "file"
    f = tr.frames(np.linspace(1, tr.length - 1, 200))
    # a right-handed helix keeps τ > 0 (a mirror would flip the sign)
    assert np.allclose(f.torsion, c / (r * r + c * c), rtol=1e-2)
    assert np.allclose(f.curvature, r / (r * r + c * c), rtol=2e-3)
    # z up, and positions match the z-up original
    assert tr.frame(0.0).position == pytest.approx(P[0], abs=1e-8)
    assert f.position[:, 2].min() > -1e-6
    # the file's up vectors are reproduced at its points
    g = tr.frames(tr.point_s)
    assert np.abs(g.binormal - U).max() < 1e-6


def test_nl2_banked_straight(tmp_path):
    x = np.linspace(0, 30, 31)
    P = np.column_stack([x, np.zeros_like(x), np.full_like(x, 2.0)])
    bank = math.radians(30.0)
    F = np.tile([1.0, 0, 0], (31, 1))
    U = np.tile([0.0, -math.sin(bank), math.cos(bank)], (31, 1))  # up leans right: right rail lower
    L = np.cross(U, F)
    tr = load_curve(write_nl2(tmp_path / "banked.csv", P, F, L, U))
    f = tr.frames(np.linspace(0, tr.length, 50))
    assert f.roll == pytest.approx(np.full(50, 30.0), abs=1e-6)  # positive = right rail lower
    assert np.abs(f.binormal - U[0]).max() < 1e-9
    assert np.abs(f.darboux).max() < 1e-9
    # frame="up" ignores the file's bank
    assert load_curve(tmp_path / "banked.csv", frame="up").frame(5.0).roll == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("name", ["helix_nl2.csv", "classic_coaster.csv", "hilly_circuit.csv"])
def test_nl2_round_trip(tmp_path, name):
    tr = load_curve(CURVES / name)
    out = save_nl2(tr, tmp_path / "rt.csv", spacing=0.5)
    back = load_curve(out)
    assert back.closed == tr.closed
    assert back.length == pytest.approx(tr.length, abs=1e-3)
    s = np.linspace(0, tr.length, 3000)
    a, b = tr.frames(s), back.frames(s * back.length / tr.length)
    assert np.linalg.norm(a.position - b.position, axis=1).max() < 1e-3  # within 1 mm
    for axis in ("tangent", "binormal"):
        dots = np.clip(np.sum(getattr(a, axis) * getattr(b, axis), axis=1), -1, 1)
        assert np.degrees(np.arccos(dots)).max() < 0.1  # within 0.1°


def test_points_csv_with_roll_and_comments(tmp_path):
    p = tmp_path / "c.csv"
    x = np.linspace(0, 50, 26)
    lines = ["# a comment", "x,y,z,roll"] + [f"{v},0,0,{20.0 * v / 50}" for v in x]
    p.write_text("\n".join(lines) + "\n")
    tr = load_curve(p)
    assert not tr.closed and tr.length == pytest.approx(50.0, rel=1e-12)
    assert tr.frame(25.0).roll == pytest.approx(10.0, abs=1e-6)
    assert tr.frame(50.0).roll == pytest.approx(20.0, abs=1e-9)
    # explicit roll knots override the column
    assert load_curve(p, roll=[[0, 5.0]]).frame(40.0).roll == pytest.approx(5.0, abs=1e-12)


def test_json_points_roll_closed(tmp_path):
    t = np.linspace(0, 2 * np.pi, 41)[:-1]
    pts = np.column_stack([20 * np.cos(t), 20 * np.sin(t), np.zeros_like(t)])
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"points": pts.tolist(), "roll": [-10.0] * 40, "closed": True}))
    tr = load_curve(p)
    assert tr.closed and tr.length == pytest.approx(40 * np.pi, rel=1e-6)
    assert tr.frame(7.0).roll == pytest.approx(-10.0, abs=1e-9)
    p.write_text(json.dumps({"points": pts.tolist(), "roll": [[0.0, 0.0], [30.0, 15.0]]}))
    assert load_curve(p, closed=False).frame(30.0).roll == pytest.approx(15.0, abs=1e-9)


def test_auto_closed_detection(tmp_path):
    t = np.linspace(0, 2 * np.pi, 41)  # last point repeats the first
    p = tmp_path / "c.csv"
    p.write_text("x,y,z\n" + "".join(f"{10 * math.cos(a)},{10 * math.sin(a)},0\n" for a in t))
    assert load_curve(p).closed
    assert not load_curve(p, closed=False).closed


@pytest.mark.parametrize("text", [
    "x,y,z\n0,0,0\n1,0,0.5\n",
    "# a comment\n\n X , y,Z,Roll\r\n 0, 0,0, 5 \r\n# between\r\n1,2,3,-4\r\n\r\n2,2,3,1e1\r\n",
    '"x","y","z"\r1_0, 2e3,-0\r3,4,5',
])
def test_points_csv_read_at_once_as_line_by_line(monkeypatch, text):
    """A well-formed points CSV is converted in one go: the same points, roll and line numbers as
    reading it line by line (which names the line of anything wrong)."""
    from trackrider.curves import io

    fast = io._points_csv_at_once(text)
    monkeypatch.setattr(io, "_points_csv_at_once", lambda text: None)
    slow = io._parse_points_csv(Path("c.csv"), text)
    assert fast is not None
    for a, b in zip(fast, slow):
        assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b))


# ---------------------------------------------------------------------------- bad files
def _points(n=10):
    return "".join(f"{i},0,{0.1 * i * i}\n" for i in range(n))


@pytest.mark.parametrize("content,where,match", [
    ("x,y,z\n" + _points(3) + "3,zero,1\n", "line 5", "column y: not a number"),
    ("x,y,z\n" + _points(4) + "4,0,nan\n", "line 6", "not finite"),
    ("x,y,z\n" + _points(4) + "4,0,inf\n" + _points(3), "line 6", "not finite"),
    ("x,y,z\n" + _points(4) + "4,0\n", "line 6", "expected 3 values"),
    ("x,y,z\n" + _points(4), "points", "at least 6 distinct points"),
    ("a,b,c\n" + _points(8), "line 1", "header must be"),
    ("x,y,z\n", "line 2", "no points"),
    ("", "line 1", "empty file"),
    ("x,y,z\n0,0,0\n1,0,0\n2,0,0\n3,0,0\n2.5,0,0\n1.5,0,0\n0.5,0,0\n", "line 5", "reverses direction"),  # turns back at (3, 0, 0)
])
def test_bad_points_files(tmp_path, content, where, match):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(InputError, match=match) as e:
        load_curve(p)
    assert e.value.where == where
    assert str(e.value).startswith(f"{p}: {where}: ")
    assert "\n" not in str(e.value)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="file not found") as e:
        load_curve(tmp_path / "nope.csv")
    assert str(tmp_path / "nope.csv") in str(e.value)
    p = tmp_path / "garbage.csv"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match="not a text file") as e:
        load_curve(p)
    assert e.value.where == "line 1"
    p.write_bytes(b"x,y,z\n0,0,0\n\xff\xfe\x81,1,1\n")
    with pytest.raises(InputError, match="not a UTF-8 text file") as e:
        load_curve(p)
    assert e.value.where == "line 3"
    with pytest.raises(InputError, match="unknown curve format"):
        load_curve(CURVES / "first_drop.csv", format="dxf")


def test_repeated_points_are_dropped_with_a_warning(tmp_path):
    p = tmp_path / "rep.csv"
    rows = [f"{i},0,{0.1 * i * i}" for i in range(10)]
    rows.insert(5, rows[4])  # line 7 repeats line 6
    p.write_text("x,y,z\n" + "\n".join(rows) + "\n")
    with pytest.warns(UserWarning, match=r"line 7: dropped 1 exact repeat"):
        tr = load_curve(p)
    assert len(tr.points) == 10


def _nl2_rows(bad_row=None):
    x = np.linspace(0, 20, 11)
    lines = ["\t".join(f'"{h}"' for h in NL2_HEADER)]
    for i, v in enumerate(x):
        vec = [v, 1.0, 0.0, 1, 0, 0, 0, 0, -1, 0, 1, 0]  # NL2: front +X, left −Z, up +Y
        if i == bad_row:
            vec[9:12] = [0.0, 1.0, 0.3]  # up not orthogonal to left and not unit
        lines.append(f"{i + 1}\t" + "\t".join(str(a) for a in vec))
    return "\n".join(lines) + "\n"


def test_nl2_bad_files(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text(_nl2_rows())
    tr = load_curve(p)
    assert tr.frame(3.0).binormal == pytest.approx([0, 0, 1], abs=1e-12)
    assert tr.frame(3.0).position == pytest.approx([3.0, 0.0, 1.0], abs=1e-12)
    p.write_text(_nl2_rows(bad_row=4))
    with pytest.raises(InputError, match="not unit length|not orthogonal") as e:
        load_curve(p)
    assert e.value.where == "line 6"
    left_handed = _nl2_rows().replace("\t0\t0\t-1\t", "\t0\t0\t1\t")
    p.write_text(left_handed)
    with pytest.raises(InputError, match="left-handed") as e:
        load_curve(p)
    assert e.value.where == "line 2"
    p.write_text(_nl2_rows().replace('"PosY"', '"PosQ"'))
    with pytest.raises(InputError, match="not a NoLimits 2 track spline export") as e:
        load_curve(p, format="nl2")
    assert e.value.where == "line 1"


def test_json_bad_files(tmp_path):
    p = tmp_path / "j.json"
    p.write_text('{"points": [[0,0,0],\n [1,0,0]')
    with pytest.raises(InputError, match="invalid JSON") as e:
        load_curve(p)
    assert e.value.where == "line 2"
    p.write_text(json.dumps({"points": [[0, 0, 0], [1, 0, "a"]]}))
    with pytest.raises(InputError, match="must be") as e:
        load_curve(p)
    assert e.value.where == "points[1]"
    p.write_text(json.dumps({"points": [[i, 0, 0] for i in range(8)], "colour": "red"}))
    with pytest.raises(InputError, match="unknown key") as e:
        load_curve(p)
    assert e.value.where == "colour"


# ---------------------------------------------------------------------------- bundled examples and report
EXPECT = {  # name: (closed, z_min, z_max, min radius lower bound m)
    "first_drop.csv": (False, 0.9, 33.3, 10.0),
    "classic_coaster.csv": (False, 0.9, 33.3, 5.0),
    "vertical_loop.csv": (False, -0.01, 20.3, 5.0),
    "helix_nl2.csv": (False, 1.5, 20.01, 14.0),
    "banked_helix.json": (False, 1.5, 20.01, 14.0),
    "railway_curve.csv": (False, -1e-6, 1e-6, 590.0),
    "hilly_circuit.csv": (True, 1.99, 11.01, 24.0),
}


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_every_bundled_curve_loads_and_reports(name):
    closed, zmin, zmax, rmin = EXPECT[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bundled files are clean: no dropped points
        rep = curve_report(CURVES / name)
    assert rep["closed"] is closed
    assert zmin <= rep["z_min"] and rep["z_max"] <= zmax
    assert rep["min_radius"] >= rmin and rep["max_curvature"] == pytest.approx(1 / rep["min_radius"])
    assert rep["length"] > 100
    text = format_curve_report(rep)
    for word in ("length", "height range", "minimum radius", "max curvature", "max |torsion|", "closed"):
        assert word in text


def test_report_figures_of_a_known_helix(tmp_path):
    r, c = 12.0, 2.0
    p = tmp_path / "h.csv"
    p.write_text("x,y,z\n" + "".join(f"{x},{y},{z}\n" for x, y, z in helix_points(r, c, 2.0, 300)))
    rep = curve_report(p)
    assert rep["length"] == pytest.approx(4 * np.pi * math.hypot(r, c), rel=1e-6)
    assert rep["min_radius"] == pytest.approx((r * r + c * c) / r, rel=2e-3)
    assert rep["max_abs_torsion"] == pytest.approx(c / (r * r + c * c), rel=1e-2)
    assert rep["z_min"] == pytest.approx(0.0, abs=1e-9) and rep["z_max"] == pytest.approx(4 * np.pi * c, abs=1e-6)
    assert rep["closed"] is False and rep["format"] == "points"


def test_closed_with_distant_ends_is_refused(tmp_path):
    p = tmp_path / "open.csv"
    p.write_text("x,y,z\n" + "".join(f"{i},0,{0.01 * i * i}\n" for i in range(30)))
    with pytest.raises(InputError, match="closed, but the last point is") as e:
        load_curve(p, closed=True)
    assert e.value.where == "closed"
