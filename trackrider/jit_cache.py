"""numba's cache over trackrider's two kernel folders (``trackrider.cache``; used by ``trackrider.jit``).

Imported only when a kernel is compiled or loaded (it imports numba). An entry is loaded without
parsing the LLVM module numba keeps for linking it into later compiles (``_LinkLater``).

Every file is written whole or not at all, and checked when read (``_Entries``): a process killed
while it writes the cache, or two processes compiling into one folder at once (a sweep's workers),
leave entries that are either complete or not found (compiled again); never one that loads the
wrong or a partial machine code.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import struct
import sys
import uuid
import zlib

from llvmlite import binding as ll
from numba.core.caching import Cache, CompileResultCacheImpl, IndexDataCacheFile, _CacheLocator
from numba.core.codegen import JITCodeLibrary

from trackrider.cache import source_fingerprint, sources_as_hashed

__all__ = ["KernelCache", "missing_internals", "link_only"]

#: numba's private classes, methods (with their parameters) and attributes this module builds on
#: (tested with numba 0.68): ``missing_internals`` checks them when trackrider first makes a kernel
_NEEDS = (
    ("numba.core.caching", "IndexDataCacheFile", {"__init__": "self cache_path filename_base source_stamp",
                                                  "_dump": "self obj", "_data_path": "self name"}),
    ("numba.core.caching", "CacheImpl", {"get_filename_base": "self fullname abiflags"}),
    ("numba.core.caching", "CompileResultCacheImpl", {"rebuild": "self target_context payload",
                                                      "reduce": "self cres", "check_cachable": "self cres"}),
    ("numba.core.caching", "Cache", {"_index_key": "self sig codegen", "enable": "self",
                                     "save_overload": "self sig data"}),
    ("numba.core.codegen", "CPUCodeLibrary", {"__init__": "self codegen name", "_finalize_final_module": "self",
                                              "_finalize_dynamic_globals": "self",
                                              "_verify_declare_only_symbols": "self",
                                              "serialize_using_object_code": "self", "_unserialize": "codegen state",
                                              "_get_module_for_linking": "self", "_set_compiled_object": "self value",
                                              "enable_object_caching": "self"}),
    ("numba.core.codegen", "JITCPUCodegen", {"set_env": "self env_name env", "magic_tuple": "self",
                                             "unserialize_library": "self serialized", "_library_class": None}),
    ("numba.core.runtime.nrtdynmod", None, {"create_nrt_module": "ctx"}),
    ("numba.core.runtime._nrt_python", None, {"c_helpers": None}),
    ("numba.core.runtime", "rtsys", {"_init": None, "initialize": "ctx"}),
)


def missing_internals(needs=_NEEDS) -> str | None:
    """What of numba's internals this cache uses (``_NEEDS``) is missing or has other parameters in the
    numba installed, in words; None if all is there. trackrider then compiles its kernels in memory
    (``trackrider.jit``) rather than risk loading or saving them wrong."""
    import importlib
    import inspect

    for module, owner, members in needs:
        try:
            where = importlib.import_module(module)
            if owner is not None:
                where = getattr(where, owner)
        except (ImportError, AttributeError):
            return f"{module}.{owner}" if owner else module
        for name, params in members.items():
            value = getattr(where, name, _NEEDS)
            label = f"{module}.{owner + '.' if owner else ''}{name}"
            if value is _NEEDS:
                return label
            if params is not None:
                try:
                    have = " ".join(inspect.signature(value).parameters)
                except (TypeError, ValueError):
                    return label
                if have != params:
                    return f"{label}({have.replace(' ', ', ')})"
    return None

#: marks an entry saved with its defined symbols (``KernelCache._save_overload``)
_TAG = "trackrider-symbols-1"


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
        self._folders = (user, shipped)
        self._cache_file = _Entries(self._cache_path, name, stamp)
        self._shipped = (_Entries(os.path.join(shipped, sub), name, stamp)
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

        _runtime(target_context, self._folders)
        return self._load_overload(sig, target_context)

    def _load_overload(self, sig, target_context):
        if not self._enabled or not sources_as_hashed():   # a source changed since import: compiled
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
                    return self._rebuild(target_context, data)
        return None

    def _rebuild(self, target_context, data):
        """numba's rebuild of a loaded entry, its library made by ``_LinkLater`` when the entry
        carries its defined symbols (``_save_overload``)."""
        if not (isinstance(data, tuple) and len(data) == 3 and data[0] == _TAG):
            return self._impl.rebuild(target_context, data)
        _, symbols, payload = data
        codegen = target_context.codegen()
        codegen.unserialize_library = lambda state: _LinkLater.load(codegen, state, symbols)
        try:
            return self._impl.rebuild(target_context, payload)
        finally:
            del codegen.unserialize_library

    def _save_overload(self, sig, data):
        """numba's, the entry saved with the names its library defines (what numba's load takes
        from the parsed module for linking: ``_LinkLater``)."""
        if not (self._writable and self._enabled and self._impl.check_cachable(data)) or not sources_as_hashed():
            return
        key = self._index_key(sig, data.codegen)
        payload = self._impl.reduce(data)
        module = data.library._get_module_for_linking()
        symbols = frozenset(gv.name for group in (module.functions, module.global_variables)
                            for gv in group if not gv.is_declaration)
        try:
            os.makedirs(self._cache_path, exist_ok=True)
            self._cache_file.save(key, (_TAG, symbols, payload))
        except OSError:
            pass    # not cached (a full disk, a folder removed meanwhile): compiled again next time


def _runtime(target_context, folders) -> None:
    """numba's runtime (NRT) set up as ``rtsys.initialize`` does, its few compiled helpers
    (reference counts, atomics) loaded from the kernel folders: numba compiles them in every
    process, 70–80 ms of CPU (a twentieth of a warm ``trackrider run``). Compiled and saved in the
    per-user folder the first time, keyed like a kernel by the CPU it was compiled for; on any
    trouble numba's own ``rtsys.initialize`` does it."""
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import rtsys

    if not rtsys._init and not config.NRT_STATS:
        try:
            with global_compiler_lock:
                if not rtsys._init:
                    rtsys._library = _runtime_library(target_context, *folders)
                    rtsys._init = True
        except Exception:  # noqa: BLE001 - numba's own set-up below
            pass
    rtsys.initialize(target_context)    # nothing left to do when loaded above


def _runtime_library(target_context, user, shipped):
    """numba's NRT helpers as ``nrtdynmod.compile_nrt_functions`` makes them, from the shipped
    folder, else the per-user one, else compiled (and saved in the per-user folder)."""
    import llvmlite
    from numba.core.runtime import _nrt_python, nrtdynmod

    for name, address in _nrt_python.c_helpers.items():    # what the helpers call (numba's C runtime)
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    codegen = target_context.codegen()
    triple, cpu, features = codegen.magic_tuple()
    key = ((triple, cpu, features), llvmlite.__version__)
    generic = ((triple, "generic", ""), llvmlite.__version__)
    files = [(_Entries(os.path.join(folder, _RUNTIME), "nrt", source_fingerprint()), folder == shipped)
             for folder in (shipped, user) if folder is not None]
    for f, is_shipped in files:
        for k in (key, generic) if is_shipped else (key,):
            state = f.load(k)
            if state is not None:
                return codegen.unserialize_library(state)
    module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(module)
    library.finalize()
    if user is not None:
        try:
            os.makedirs(os.path.join(user, _RUNTIME), exist_ok=True)
            files[-1][0].save(key, library.serialize_using_object_code())
        except OSError:
            pass    # compiled again by the next process
    return library


#: the folder, beside the modules' ones, of numba's runtime helpers (``_runtime``)
_RUNTIME = "numba.runtime"

#: the first bytes of every index and data file: then the length and CRC-32 of the rest (``_pack``)
_MAGIC = b"trackrider-kernel-cache-2\n"
_HEADER = struct.Struct("<QI")


class _Entries(IndexDataCacheFile):
    """numba's index and data files of one function, written so that a process killed at any moment,
    or processes writing at once, leave no entry that loads wrong:

    * every file is written to a temporary file in the same folder, flushed to the disk (``fsync``)
      and renamed over its name (``_write``): it is whole or absent, never partly written;
    * a data file is named by its key (numba numbers them: two processes saving different
      signatures at once took the same number, and the index could name the other one's code) and
      holds its key, checked when loaded; it is written before the index names it;
    * the index is read, merged and replaced under a lock (``_locked``; another process's entries are
      kept), and any file whose length, checksum, key or format is not right is not loaded: its
      entry is compiled again (and saved over it)."""

    def save(self, key, data):
        name = f"{self._index_name[:-4]}.{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}.nbc"
        _write(self._data_path(name), _pack(self._dump((key, data))))
        with _locked(self._cache_path):
            overloads = self._load_index()
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    def load(self, key):
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            with open(self._data_path(name), "rb") as f:
                saved, data = pickle.loads(_unpack(f.read()))
            return data if saved == key else None
        except Exception:  # noqa: BLE001 - missing, partial or foreign: compiled again
            return None

    def _load_index(self):
        try:
            with open(self._index_path, "rb") as f:
                version, stamp, overloads = pickle.loads(_unpack(f.read()))
        except FileNotFoundError:
            return {}
        except Exception:  # noqa: BLE001 - partial or foreign: an empty index (its entries compile again)
            return {}
        if version != self._version or stamp != self._source_stamp or not isinstance(overloads, dict):
            return {}
        return overloads

    def _save_index(self, overloads):
        _write(self._index_path, _pack(self._dump((self._version, self._source_stamp, overloads))))


def _pack(payload: bytes) -> bytes:
    return _MAGIC + _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _unpack(blob: bytes) -> bytes:
    """The payload of a ``_pack``ed file; ValueError if it is not one, or not whole."""
    start = len(_MAGIC) + _HEADER.size
    if blob[:len(_MAGIC)] != _MAGIC or len(blob) < start:
        raise ValueError("not a kernel cache file")
    size, crc = _HEADER.unpack_from(blob, len(_MAGIC))
    payload = blob[start:]
    if len(payload) != size or zlib.crc32(payload) != crc:
        raise ValueError("a partly written or damaged kernel cache file")
    return payload


def _write(path: str, blob: bytes) -> None:
    """``blob`` as the file ``path``, whole or not at all (a temporary file beside it, flushed to the
    disk, renamed over it); the temporary file removed on failure."""
    part = f"{path}.tmp.{uuid.uuid4().hex[:16]}"
    try:
        with open(part, "xb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise


@contextlib.contextmanager
def _locked(folder: str):
    """An exclusive lock on ``folder`` (its ``.lock`` file) between processes, where the platform has
    ``flock``; held while an index is read, merged and replaced."""
    try:
        import fcntl
    except ImportError:     # Windows: no lock; a lost index update only compiles that entry again
        yield
        return
    fd = os.open(os.path.join(folder, ".lock"), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


#: names (``__qualname__``) of the kernels that are only ever called by other kernels (``link_only``)
_LINK_ONLY: set = set()


def link_only(dispatcher) -> None:
    """``dispatcher``'s compiles make no machine code (``_Library``): it has no entry point for
    Python (``no_cpython_wrapper``), so its code only ever runs linked into a caller's."""
    codegen = dispatcher.targetctx.codegen()
    if codegen._library_class is not _Library:
        codegen._library_class = _Library
        set_env = codegen.set_env

        def set_env_if_defined(env_name, env):     # a library without machine code defines no env
            if codegen._engine.get_global_value_address(env_name):
                set_env(env_name, env)

        codegen.set_env = set_env_if_defined
    _LINK_ONLY.add(dispatcher.py_func.__qualname__)


class _Library(JITCodeLibrary):
    """numba's library of a compiled function, without machine code for a kernel that only other
    kernels call (``link_only``). numba makes the machine code of every function it compiles, and
    of everything linked into it: a kernel called only by ``run_chunk`` was made into machine code
    once by itself and once more in every caller up the tree, none of which ever ran (the callers
    link its optimized LLVM module, not its machine code). The module is optimized exactly as
    before, so the callers' code, and every result, is the same. Its cache entry is that module
    (``"link"``: ``_LinkLater`` loads it). A library that does become machine code first drops the
    arguments its linked kernels never read (``drop_dead_arguments``)."""

    _link_only = False

    def _finalize_final_module(self):
        # (a library named as a link-only kernel that defines a CPython wrapper is another function's:
        # numba names the wrapper ``cpython.<name>``, or from 0.68 on mangles it, ``_ZN7cpython…``)
        if self.name in _LINK_ONLY and not any(f.name.startswith(("cpython.", "_ZN7cpython")) and not f.is_declaration
                                               for f in self._final_module.functions):
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._link_only = self._finalized = True
            return
        drop_dead_arguments(self._final_module, self._codegen._tm)
        super()._finalize_final_module()

    def serialize_using_object_code(self):
        if self._link_only:
            return (self.name, "link", self._get_module_for_linking().as_bitcode())
        return super().serialize_using_object_code()

    @classmethod
    def _unserialize(cls, codegen, state):
        if state[1] == "link":
            return _LinkLater.load(codegen, state, frozenset())
        return super()._unserialize(codegen, state)


def drop_dead_arguments(module, target_machine) -> int:
    """Drop the arguments that the kernels linked into ``module`` (an optimized module about to become
    machine code) never read; returns how many kernels it looked at. numba passes every array of every
    record a kernel takes as words of their own, and keeps a linked kernel ``linkonce_odr``, whose
    signature LLVM may not change: a stage called with whole records paid for hundreds of words a call
    (docs/physics.md "Speed and compile time"). The linked copies are this module's own (a library that
    links this one links its own copy), so they are made ``internal``, and LLVM's dead argument
    elimination removes the arguments and return values no caller uses. No instruction of a kernel's
    arithmetic changes: every result is the same."""
    if not hasattr(ll, "create_new_module_pass_manager"):   # an llvmlite without the new pass manager
        return 0
    n = 0
    for fn in module.functions:
        if not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr:
            fn.linkage = ll.Linkage.internal
            n += 1
    if n:
        mpm = ll.create_new_module_pass_manager()
        mpm.add_dead_arg_elimination_pass()
        mpm.run(module, ll.create_pass_builder(target_machine, ll.create_pipeline_tuning_options()))
    return n


class _LinkLater(JITCodeLibrary):
    """numba's library of machine code loaded from a cache, its LLVM module for linking (the
    bitcode beside the machine code) parsed only if another compile in this process links it.
    numba parses it on every load, to learn the names the library defines: 0.25 s of the 1.8 s of
    CPU a warm ``trackrider run`` of classic_coaster took (bench/startup.py --breakdown); the names
    are saved with the entry instead. The machine code loaded, and so every result, is the same."""

    _bitcode = None

    @property
    def _shared_module(self):
        if self._bitcode is not None:
            self.__dict__["_shared"], self._bitcode = ll.parse_bitcode(self._bitcode), None
        return self.__dict__.get("_shared")

    @_shared_module.setter
    def _shared_module(self, module):
        self.__dict__["_shared"], self._bitcode = module, None

    @classmethod
    def load(cls, codegen, state, symbols):
        """numba's ``CPUCodeLibrary._unserialize`` of an object-code entry, less the parse; or a
        ``"link"`` entry (``_Library``): its module only, no machine code."""
        name, kind, data = state
        self = cls(codegen, name)
        if kind == "link":
            self._bitcode, self._finalized = data, True
            return self
        assert kind == "object", kind
        object_code, shared_bitcode = data
        self.enable_object_caching()
        self._set_compiled_object(object_code)
        self._bitcode = shared_bitcode
        self._finalize_final_module()
        codegen._engine._defined_symbols |= symbols
        return self
