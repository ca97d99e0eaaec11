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


@pytest.mark.parametrize("make", [
    lambda: Track.from_points(helix_points(8.0, 1.5, 2.0, 300), roll=[[0, 0], [30, 20], [60, -20]]),
    lambda: load_curve(CURVES / "vertical_loop.csv"),
])
def test_shift_frame_is_eval_track_to_first_order(make):
    """A frame moved along s by a small step (the closest-point step of each car, each time step) is
    the table's frame there within d times the interpolants' own mismatch (T's derivative is the
    interpolated P'', not the normalised Hermite's: ~1e-5 on 0.1 m rows at κ 0.16); beyond
    SHIFT_MAX it is eval_track's, bit for bit; the linearly interpolated columns are always eval_track's
    (to their rounding: LLVM may fuse either product of w·a + u·b into a multiply-add)."""
    from numba import njit

    from trackrider.curves.compact import C_DT, SHIFT_MAX, shift_frame

    @njit(cache=False)
    def shifted(data, n, ds, length, closed, s, d, out):
        fr = np.empty(NCOL)
        eval_track(data, 0, n, ds, length, closed, s - d, fr)
        shift_frame(fr, d, data, 0, n, ds, length, closed, s, out)

    ct = make().compact()
    kmax = float(np.max(ct.data[:, C_KAPPA]))
    assert kmax > 0.05   # a tight track: the second derivative is not negligible
    args = (ct.data, len(ct.data), ct.ds, ct.length, ct.closed)
    rng = np.random.default_rng(7)
    got, want = np.empty(NCOL), np.empty(NCOL)
    worst = {}
    for d in (1e-10, 1e-9, SHIFT_MAX, -SHIFT_MAX):
        err = 0.0
        for s in rng.uniform(1.0, ct.length - 1.0, 300):
            shifted(*args, s, d, got)
            eval_track(ct.data, 0, *args[1:], s, want)
            scale = np.ones(C_OMEGA)
            scale[C_P:C_P + 3] = np.abs(want[C_P:C_P + 3]).max()   # a position rounds to its magnitude
            err = max(err, (np.abs(got[:C_OMEGA] - want[:C_OMEGA]) / scale).max())
            assert np.all(np.abs(got[C_OMEGA:] - want[C_OMEGA:]) <= 4e-16 * (1.0 + np.abs(want[C_OMEGA:])))
        worst[d] = err
        assert err <= 2e-15 + 2e-5 * abs(d), (d, err)   # rounding + (the interpolants' mismatch, ~1e-5) · d
    assert worst[1e-10] < 3e-15
    for d in (-2 * SHIFT_MAX, 1e-3, 0.05):   # beyond SHIFT_MAX: a second evaluation
        for s in rng.uniform(1.0, ct.length - 1.0, 50):
            shifted(*args, s, d, got)
            eval_track(ct.data, 0, *args[1:], s, want)
            assert np.array_equal(got, want)
