"""numba's cache over trackrider's two kernel folders (``trackrider.cache``; used by ``trackrider.jit``).

Imported only when a kernel is compiled or loaded (it imports numba).
"""
from __future__ import annotations

import os
import sys

from numba.core.caching import Cache, CompileResultCacheImpl, IndexDataCacheFile, _CacheLocator

from trackrider.cache import source_fingerprint

__all__ = ["KernelCache"]


class _Folder(_CacheLocator):
    """numba's cache locator for one folder, stamped with the sources' hash (not a file's path
    and time stamp: the folder is already that hash's, ``trackrider.cache``)."""

    def __init__(self, path: str, lineno: int):
        self._path, self._lineno = path, lineno

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return source_fingerprint()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):  # pragma: no cover - never searched for
        raise NotImplementedError


class _Impl(CompileResultCacheImpl):
    def __init__(self, py_func, folder: str):  # numba's, without its search for a locator
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Folder(folder, self._lineno)
        qualname = getattr(py_func, "__qualname__", py_func.__name__)
        module = py_func.__module__.rsplit(".", 1)[-1]
        self._filename_base = self.get_filename_base(f"{module}.{qualname}", getattr(sys, "abiflags", ""))


class KernelCache(Cache):
    """numba's per-function cache over trackrider's two folders (``trackrider.cache``): an entry is
    looked up in the kernels shipped with the package (read only), then in the per-user folder,
    where a new compile is saved. Each module has a folder of its own in either.

    An entry's key is numba's: the signature, the target (its CPU name and features) and the
    function's bytecode. Shipped kernels compiled for the generic x86-64 CPU (a portable wheel,
    ``NUMBA_CPU_NAME=generic`` at build time) are found too."""

    _impl_class = _Impl

    def __init__(self, py_func, user, shipped):
        sub = py_func.__module__
        self._name = repr(py_func)
        self._py_func = py_func
        base = user if user is not None else shipped
        self._impl = _Impl(py_func, os.path.join(base, sub))
        self._cache_path = self._impl.locator.get_cache_path()
        stamp, name = source_fingerprint(), self._impl.filename_base
        self._writable = user is not None
        self._cache_file = IndexDataCacheFile(self._cache_path, name, stamp)
        self._shipped = (IndexDataCacheFile(os.path.join(shipped, sub), name, stamp)
                         if shipped is not None and user is not None else None)
        self.enable()

    def load_overload(self, sig, target_context):
        """numba's, without refreshing ``target_context`` first. numba's refresh loads every typing
        and lowering registry it has (importing ``numba.np.arraymath``, whose BLAS check imports
        ``scipy.linalg``): 0.5 s of CPU, a quarter of a warm ``trackrider run``, and none of it
        needed to load machine code; a compile (a cache miss) refreshes the contexts itself. What
        loaded code does need is set up here: numba's runtime (NRT: its memory functions) and the
        hash secrets that ``numba.cpython.hashing`` gives the linker when imported. (Code of
        ``parallel=True`` kernels starts its threads itself when loaded: numba's ``reload_init``.)"""
        import numba.cpython.hashing  # noqa: F401 - its symbols, for code that hashes
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
        return self._load_overload(sig, target_context)

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        codegen = target_context.codegen()
        key = self._index_key(sig, codegen)
        generic = (key[0], (key[1][0], "generic", ""), key[2])
        tiers = [(self._shipped, True)] if self._shipped is not None else []
        tiers.append((self._cache_file, not self._writable))
        for f, shipped in tiers:
            for k in (key, generic) if shipped else (key,):
                data = f.load(k)
                if data is not None:
                    return self._impl.rebuild(target_context, data)
        return None

    def _save_overload(self, sig, data):
        if self._writable:
            super()._save_overload(sig, data)
