"""The kernels' small linear algebra (``physics/maths.py``) against numpy, run as Python (no compile)."""
from __future__ import annotations

import numpy as np

from trackrider.physics.maths import cholesky


def test_cholesky_in_place_both_ways():
    """The lower triangle of an SPD block inside a wider table factored in place: L Lᵀ = A to rounding,
    L equal to numpy's; with ``reciprocal`` the diagonal holds 1/L_kk; the rest of the table untouched."""
    rng = np.random.default_rng(3)
    n, col = 6, 4
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    L_np = np.linalg.cholesky(A)
    for reciprocal in (False, True):
        fac = rng.normal(size=(3, n + 1, col + n + 2))
        before = fac.copy()
        fac[1, :n, col:col + n] = A
        cholesky.py_func(fac, 1, n, col, reciprocal)
        L = np.tril(fac[1, :n, col:col + n])
        if reciprocal:
            np.fill_diagonal(L, 1.0 / np.diag(L))
        np.testing.assert_allclose(L, L_np, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(L @ L.T, A, rtol=1e-12)
        lower = np.zeros(fac.shape, bool)
        lower[1, :n, col:col + n] = np.tri(n, dtype=bool)
        before[1, :n, col:col + n] = A
        assert np.array_equal(fac[~lower], before[~lower])


def test_cholesky_dependent_row():
    """A row that depends on the others (a zero pivot) gets L_kk = 1e-150 (1/L_kk = 1e150): its impulse
    stays ~0 instead of a division by zero."""
    A = np.array([[4.0, 2.0], [2.0, 1.0]])
    for reciprocal, pivot in ((False, 1e-150), (True, 1e150)):
        fac = np.zeros((1, 2, 2))
        fac[0] = A
        cholesky.py_func(fac, 0, 2, 0, reciprocal)
        assert fac[0, 1, 1] == pivot
        assert fac[0, 0, 0] == (0.5 if reciprocal else 2.0)


def test_a_rank_one_mobility_read_entry_by_entry_has_the_bits_of_the_stored_one():
    """``mobility_at`` of a body with W̃ = n nᵀ/μ kept as n and 1/μ gives every entry ``form_mobility``
    stores; a body without (1/μ = 0) reads its stored W̃."""
    from trackrider.jit import njit
    from trackrider.physics.maths import form_mobility, mobility_at

    @njit(error_model="numpy", _nrt=False)
    def entries(Wt, Wn, b, out):
        for i in range(6):
            for k in range(6):
                out[i, k] = mobility_at(Wt, Wn, b, i, k)

    @njit(error_model="numpy", _nrt=False)
    def form(Wt, Wn, b):
        form_mobility(Wt, Wn, b)

    rng = np.random.default_rng(5)
    Wn = np.zeros((2, 7))
    Wn[0, :6] = rng.normal(size=6)
    Wn[0, 6] = 1.0 / 617.3
    Wt = rng.normal(size=(2, 6, 6))   # body 0's: stale, never read; body 1's: its own
    got = np.empty((6, 6))
    entries(Wt, Wn, 0, got)
    form(Wt, Wn, 0)
    assert got.tobytes() == Wt[0].tobytes()
    np.testing.assert_allclose(got, np.outer(Wn[0, :6], Wn[0, :6]) * Wn[0, 6], rtol=1e-15, atol=0)
    entries(Wt, Wn, 1, got)
    assert got.tobytes() == Wt[1].tobytes()
