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


def test_a_cached_kernel_is_made_when_first_used(tmp_path):
    """A cached kernel's numba dispatcher is made when it is first used (``trackrider.jit._Deferred``),
    and takes its place in its module: a compile makes the kernels it calls as it types them; a kernel
    loaded from the cache (a later process) leaves them unmade."""
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    code = textwrap.dedent("""
        from trackrider.jit import _Deferred, njit

        @njit(cache=True)
        def inner(x):
            return 3.0 * x

        @njit(cache=True)
        def outer(x):
            return inner(x) + 1.0

        def made():
            return [not isinstance(k, _Deferred) for k in (inner, outer)]

        before = made()
        y = outer(2.0)
        print(before, made(), y, outer.__name__)
        """)
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_DISABLE_JIT", None)
    root = Path(__file__).resolve().parents[1]
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env,
                           timeout=600) for _ in range(2)]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
    assert runs[0].stdout.split("\n")[0] == "[False, False] [True, True] 7.0 outer"     # compiled
    assert runs[1].stdout.split("\n")[0] == "[False, False] [False, True] 7.0 outer"    # loaded: inner unmade
