"""trackrider.jit: numba's njit with trackrider's defaults; no patch of numba itself."""
import numpy as np

from trackrider.jit import njit


def test_njit_compiles_without_a_cfunc_wrapper_and_leaves_numba_unpatched():
    from numba.core.types.functions import BaseFunction

    assert not getattr(BaseFunction.get_call_type, "_trackrider_memo", False)

    @njit(cache=False)
    def f(a, i):
        return a[i, 1] * 2.0 + a[i, 0]

    a = np.arange(6.0).reshape(3, 2)
    assert f(a, 2) == 5.0 * 2.0 + 4.0
    assert f.targetoptions.get("no_cfunc_wrapper") is True


def test_typing_errors_still_raise():
    import pytest
    from numba.core.errors import TypingError

    @njit(cache=False)
    def g(a):
        return a["x"]

    with pytest.raises(TypingError):
        g(np.zeros(3))
