"""Recording: reading a timeseries, interpolating poses to frame times."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from trackrider.errors import InputError
from trackrider.render.recording import Recording, quat_to_matrix
from trackrider.render.synthetic import matrix_to_quat, recording_columns, synthetic_ride
from trackrider.render.video import frame_times


def _write_csv(path, cols, extra=True):
    names = list(cols)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        head = ["t", "train", "car", "s"] + [n for n in names if n not in ("t", "train", "car")]
        w.writerow(head)
        n = len(cols["t"])
        for i in range(n):
            w.writerow([repr(float(cols["t"][i])), cols["train"][i], int(cols["car"][i]), ""] +
                       [repr(float(cols[k][i])) for k in head[4:]])


def test_csv_round_trip_is_exact(tmp_path):
    rec, _ = synthetic_ride(cars=3, duration=0.2)
    _write_csv(tmp_path / "timeseries.csv", recording_columns(rec))
    back = Recording.from_csv(tmp_path / "timeseries.csv")
    assert back.labels == rec.labels
    np.testing.assert_array_equal(back.times, rec.times)
    np.testing.assert_array_equal(back.positions, rec.positions)
    np.testing.assert_allclose(back.quaternions, rec.quaternions, atol=1e-15)


def test_interpolation_hits_samples_and_midpoints():
    rec, _ = synthetic_ride(cars=2, duration=0.5)
    pos, quat = rec.poses_at(rec.times[[3, 10]])
    np.testing.assert_allclose(pos, rec.positions[[3, 10]], atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(quat * rec.quaternions[[3, 10]], axis=-1)), 1.0, atol=1e-12)
    mid = 0.5 * (rec.times[4] + rec.times[5])
    pos, _ = rec.poses_at([mid])
    np.testing.assert_allclose(pos[0], 0.5 * (rec.positions[4] + rec.positions[5]), atol=1e-12)
    # clamped outside the recording
    pos, _ = rec.poses_at([-5.0, 99.0])
    np.testing.assert_allclose(pos, rec.positions[[0, -1]])


def test_quaternion_interpolation_takes_the_short_way():
    # the same rotation stored with opposite signs must not flip through identity
    q = np.array([np.cos(0.4), 0.0, 0.0, np.sin(0.4)])
    rec = Recording(np.array([0.0, 1.0]), [("a", 1)], np.zeros((2, 1, 3)), np.array([[q], [-q]]))
    _, qi = rec.poses_at([0.5])
    np.testing.assert_allclose(np.abs(qi[0, 0]), np.abs(q), atol=1e-12)


def test_matrix_quaternion_round_trip():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    r = quat_to_matrix(q)
    np.testing.assert_allclose(np.einsum("nij,nik->njk", r, r), np.broadcast_to(np.eye(3), r.shape), atol=1e-12)
    back = matrix_to_quat(r)
    np.testing.assert_allclose(np.abs(np.sum(back * q, axis=1)), 1.0, atol=1e-12)


def test_frame_times_cover_the_window_at_the_video_rate():
    t = frame_times(0.0, 2.0, 30.0, 1.0)
    assert len(t) == 61 and t[-1] == pytest.approx(2.0)
    t = frame_times(1.0, 2.0, 10.0, 2.0)  # twice as fast: 0.2 s of ride per frame
    np.testing.assert_allclose(t, [1.0, 1.2, 1.4, 1.6, 1.8, 2.0])


def test_missing_columns_and_ragged_rows_are_input_errors(tmp_path):
    p = tmp_path / "timeseries.csv"
    p.write_text("t,train,car,x,y,z\n0,a,1,0,0,0\n")
    with pytest.raises(InputError, match=r"timeseries.csv.*qw, qx, qy, qz missing"):
        Recording.from_csv(p)
    p.write_text("t,train,car,x,y,z,qw,qx,qy,qz\n0,a,1,0,0,0,1,0,0,0\n0,a,2,0,0,0,1,0,0,0\n0.1,a,1,0,0,0,1,0,0,0\n")
    with pytest.raises(InputError, match="whole number of instants"):
        Recording.from_csv(p)
    p.write_text("t,train,car,x,y,z,qw,qx,qy,qz\n0,a,1,0,zero,0,1,0,0,0\n")
    with pytest.raises(InputError, match="could not be read"):
        Recording.from_csv(p)
