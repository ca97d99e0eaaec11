"""trackrider.jit: numba's njit with the typing of repeated operations memoised."""
import os
import subprocess
import sys

import numpy as np

import trackrider.jit as tj
from trackrider.jit import njit


def test_memo_is_installed_and_keeps_numbas_answers():
    from numba.core.types.functions import BaseFunction

    assert tj.MEMO_INSTALLED
    assert BaseFunction.get_call_type._trackrider_memo

    @njit(cache=False, no_cfunc_wrapper=True)
    def f(a, i):
        return a[i, 1] * 2.0 + a[i, 0]  # the same getitem twice: the second is a memo hit

    a = np.arange(6.0).reshape(3, 2)
    assert f(a, 2) == 5.0 * 2.0 + 4.0
    assert f(np.arange(6).reshape(3, 2), 1) == 3 * 2.0 + 2  # other types: another answer


def test_typing_errors_still_raise():
    import pytest
    from numba.core.errors import TypingError

    @njit(cache=False)
    def g(a):
        return a["x"]

    for _ in range(2):  # failures are not memoised: the second call fails the same way
        with pytest.raises(TypingError):
            g(np.zeros(3))


def test_memo_can_be_left_out():
    code = "import trackrider.jit as tj; print(tj.MEMO_INSTALLED)"
    env = dict(os.environ, TRACKRIDER_TYPING_MEMO="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
