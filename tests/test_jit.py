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


def _fresh_cache_module(monkeypatch, tmp_path):
    """trackrider.jit asks again whether numba has what the kernel cache needs; a clean cache state."""
    from trackrider import cache, jit

    monkeypatch.setattr(jit, "_JIT_CACHE", [])
    monkeypatch.setattr(cache, "_INTERNALS", None)
    monkeypatch.setattr(cache, "_CHECKED", None)
    monkeypatch.setattr(cache, "_PROBLEM", None)
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "kernels"))
    return cache


def _compiles_in_memory(cache, tmp_path):
    @njit(cache=True)
    def halve(x):
        return 0.5 * x

    @njit(cache=True, no_cpython_wrapper=True)
    def inner(x):
        return x + 1.0

    @njit(cache=True)
    def outer(x):
        return inner(x) * 2.0

    assert halve(3.0) == 1.5 and outer(1.0) == 4.0
    assert halve.dispatcher._cache.__class__.__name__ == "NullCache"     # numba's: nothing on disk
    assert not list((tmp_path / "kernels").rglob("*.nb*")), "a kernel was cached"
    problem = cache.cache_problem()
    assert problem is not None and "compile in memory" in problem
    return problem


def test_a_numba_whose_cache_internals_changed_compiles_in_memory_with_a_warning(monkeypatch, tmp_path):
    """The kernel cache (trackrider.jit_cache) builds on numba internals: one with other parameters
    (a newer numba) is seen when the first kernel is made, and the kernels compile in memory."""
    from numba.core.caching import IndexDataCacheFile

    cache = _fresh_cache_module(monkeypatch, tmp_path)
    monkeypatch.setattr(IndexDataCacheFile, "_data_path", lambda self, name, version: name)
    problem = _compiles_in_memory(cache, tmp_path)
    assert "IndexDataCacheFile._data_path(self, name, version)" in problem


def test_a_numba_without_the_cache_internals_compiles_in_memory(monkeypatch, tmp_path):
    import sys

    cache = _fresh_cache_module(monkeypatch, tmp_path)
    monkeypatch.setitem(sys.modules, "trackrider.jit_cache", None)      # its numba imports fail
    _compiles_in_memory(cache, tmp_path)


def test_missing_internals_names_what_is_missing():
    from trackrider.jit_cache import missing_internals

    assert missing_internals() is None                  # the numba installed has all of them
    assert missing_internals((("numba.core.caching", "NoSuchCache", {}),)) == "numba.core.caching.NoSuchCache"
    assert missing_internals((("numba.core.caching", "Cache", {"_no_such": None}),)) == \
        "numba.core.caching.Cache._no_such"
    assert missing_internals((("numba.no_such_module", None, {}),)) == "numba.no_such_module"
