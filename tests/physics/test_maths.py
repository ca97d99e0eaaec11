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
