"""The numba table (compact.py) against the exact frame it samples."""
import numpy as np
import pytest

from trackrider.curves import Track, load_curve, pack_tracks
from trackrider.curves.compact import C_B, C_KAPPA, C_N, C_OMEGA, C_P, C_T, NCOL, eval_track

from tests.curves.curves_helpers import CURVES, helix_points


def _eval_many(ct, s):
    p = pack_tracks([ct])
    out = np.empty((len(s), NCOL))
    buf = np.empty(NCOL)
    for i, si in enumerate(s):
        eval_track(p.data, p.row0[0], p.nrows[0], p.ds[0], p.length[0], p.closed[0], si, buf)
        out[i] = buf
    return out


@pytest.mark.parametrize("make", [
    lambda: Track.from_points(helix_points(8.0, 1.5, 2.0, 300), roll=[[0, 0], [30, 20], [60, -20]]),
    lambda: load_curve(CURVES / "vertical_loop.csv"),
    lambda: load_curve(CURVES / "hilly_circuit.csv"),
])
def test_compact_table_matches_exact_frame(make):
    tr = make()
    ct = tr.compact()
    assert ct.ds <= 0.1 + 1e-12
    assert ct.data.shape == (int(round(tr.length / ct.ds)) + 1, NCOL)
    rng = np.random.default_rng(1)
    s = np.sort(rng.uniform(0, tr.length, 2000))
    got = _eval_many(ct, s)
    f = tr.frames(s)
    assert np.abs(got[:, C_P : C_P + 3] - f.position).max() < 1e-6  # m
    for c, name in ((C_T, "tangent"), (C_N, "normal"), (C_B, "binormal")):
        assert np.abs(got[:, c : c + 3] - getattr(f, name)).max() < 1e-6, name
    # linearly interpolated columns: Darboux vector and curvature within ds²·|Ω''|/8
    assert np.abs(got[:, C_OMEGA : C_OMEGA + 3] - f.darboux).max() < 1e-3
    assert np.abs(got[:, C_KAPPA] - f.curvature).max() < 1e-3


def test_closed_table_wraps_and_open_clamps():
    tr = load_curve(CURVES / "hilly_circuit.csv")
    ct = tr.compact()
    assert np.abs(ct.data[0] - ct.data[-1]).max() < 1e-12  # last row repeats the first
    a = _eval_many(ct, np.array([3.0, 3.0 + tr.length, 3.0 - tr.length]))
    assert np.abs(a[1] - a[0]).max() < 1e-9 and np.abs(a[2] - a[0]).max() < 1e-9
    op = Track.from_points(helix_points()).compact(0.05)
    b = _eval_many(op, np.array([-5.0, 0.0, op.length, op.length + 5.0]))
    assert np.abs(b[0] - b[1]).max() < 1e-12 and np.abs(b[2] - b[3]).max() < 1e-12
