"""numba's ``njit`` for every kernel of trackrider: where its cache goes, and a faster cold compile.

``cache=True`` caches in trackrider's own folders (``trackrider.cache``), never next to the
source: the per-user folder of this version of the sources, and the kernels shipped in the
package by its wheel (``trackrider.jit_cache``). And three things only about compile time (the results are
the same):

* ``njit`` here is numba's with ``no_cfunc_wrapper=True`` by default. numba otherwise adds a
  C-callable wrapper to each compiled function (for first-class function use, which
  trackrider does not need) and LLVM inlines the function into it, so every level of calls
  carried a second copy of the code below it: about 2 s of a cold compile's 7 s of LLVM time.

* A kernel's callee is compiled once per set of argument types, not per constant value passed
  to it (``_one_signature_per_type``): numba would otherwise compile a helper again for every
  column index or flag it is called with as a literal (25 of the 165 compiles of a cold compile
  were such repeats).

* numba formats an error message, with terminal colours (colorama, when installed), for every
  failed try while it types a kernel — tens of thousands per cold compile, about 5 % of it.
  ``NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING`` is set (unless already set) when this module is
  imported, before it imports numba; it has no effect if numba was imported first, and numba's
  real error messages read the same apart from colour.

Every kernel releases the interpreter's lock while it runs (``nogil=True``): while ``run_chunk``
steps, another thread formats and writes the rows recorded before (``trackrider.record``).

A cached kernel's numba dispatcher is made when the kernel is first used, not when its module is
imported (``_Deferred``): a warm run calls a dozen kernels from Python and loads them from the
cache; the ~200 others are compiled into those and are made only if one has to be compiled.

Every kernel is compiled with ``fastmath={"contract"}`` unless it asks otherwise (the track's
geometry kernels and the G filter ask for ``fastmath=False``: their results equal their Python
originals' and scipy's to the bit): LLVM
may fuse a multiply and an add into one instruction with one rounding where the CPU has it (a step
of a 7-, 100- or 1000-car train costs ~20 % less CPU). Nothing else of fast math: no reassociation,
no assumptions about NaN, infinities or signed zeros; results stay deterministic on one machine,
and differ from an unfused build in their last digits (docs/physics.md, "Speed and compile time").

``trackrider validate`` builds a world once and never steps it: in a process of its own it makes
the kernels lazy (``lazy_kernels``). A kernel then runs its Python original, and numba is never
imported (importing it and loading compiled kernels costs a process 0.3–0.5 s, more than checking
a ride); a call with a large output array (``LAZY_ELEMENTS``), or Python kernels that have taken
``LAZY_SECONDS`` of CPU time already (a long point track), switch every kernel to its compiled,
cached version at once.
"""
from __future__ import annotations

import os
import time

from trackrider.cache import kernel_folders

# A long train's track rows run on all threads (docs/physics.md, "Both cores"). OpenMP's threads
# spin while they wait by default (up to ~1 ms), which on a machine whose cores are busy makes every
# step wait for a thread that is not scheduled; waiting passively costs a wake-up per parallel region
# (~50 µs, measured), which ate the threads' gain below 2000 cars. So a waiting thread spins briefly
# (GOMP_SPINCOUNT 30000) and then sleeps; a world times both ways as it runs and takes the serial
# stages when the threads lose (state.ThreadChoice). The user's own settings win.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("GOMP_SPINCOUNT", "30000")
# before numba is imported (by the first kernel made here: see the module docstring)
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

__all__ = ["njit", "prange", "lazy_kernels", "LAZY_ELEMENTS", "LAZY_SECONDS"]

#: in lazy mode the kernels run their Python originals while none is asked for more results
#: (elements of its output array) than this and they have taken no more than ``LAZY_SECONDS``
LAZY_ELEMENTS = 50_000
LAZY_SECONDS = 0.5

_lazy = False
_depth = 0
_python_seconds = 0.0
_switched = False
_lazies: list = []


def njit(*args, **options):
    """``numba.njit`` with ``no_cfunc_wrapper=True``, ``nogil=True`` and ``fastmath={"contract"}``
    unless given (see the module docstring).

    With ``cache=True`` the compiled code is cached in trackrider's own cache folders
    (``trackrider.cache``), never next to the source (inside ``site-packages``).
    """
    options.setdefault("no_cfunc_wrapper", True)
    options.setdefault("nogil", True)
    options.setdefault("fastmath", {"contract"})
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):  # bare @njit-style call
        return _make(args[0], (), options)
    return lambda function: _make(function, args, options)


def _make(function, args, options):
    if _lazy and not _switched:
        kernel = _Lazy(function, args, options)
        _lazies.append(kernel)
        return kernel
    if options.get("cache"):
        return _Deferred(function, args, options)
    return _compiled(function, args, options)


def _compiled(function, args, options):
    """The numba dispatcher of ``function``, with a ``KernelCache`` for ``cache=True`` (none when
    neither kernel folder can be had: it compiles in memory then)."""
    dispatcher = _dispatcher(function, args, options)
    _signatures(dispatcher, args, options)
    return dispatcher


def _dispatcher(function, args, options, folders=None):
    """``_compiled``'s dispatcher before its signatures (if any) are compiled; its cache in ``folders``
    (``kernel_folders()``, worked out now if not given)."""
    import numba

    options = dict(options)
    cache = options.pop("cache", False)
    if numba.config.DISABLE_JIT:
        return numba.njit(*args, **options)(function)
    jit_cache = _jit_cache()
    dispatcher = _one_signature_per_type(numba.njit(*([] if cache else args), **options)(function))
    if jit_cache is not None and options.get("no_cpython_wrapper") and not options.get("parallel"):
        jit_cache.link_only(dispatcher)   # called only by other kernels: no machine code of its own
    if not cache or jit_cache is None:
        return dispatcher
    user, shipped = kernel_folders() if folders is None else folders
    if user is not None or shipped is not None:
        dispatcher._cache = jit_cache.KernelCache(dispatcher.py_func, None if user is None else str(user),
                                                  None if shipped is None else str(shipped))
    return dispatcher


_JIT_CACHE: list = []


def _jit_cache():
    """``trackrider.jit_cache``, or None when the numba installed lacks (or has changed) an internal it
    builds on (``jit_cache.missing_internals``): the kernels then compile in memory on every run, as
    when the cache folder cannot be written, and ``cache.cache_problem()`` says why (the CLI warns
    once). Checked once per process."""
    if not _JIT_CACHE:
        import numba

        from trackrider.cache import note_problem

        try:
            import trackrider.jit_cache as jit_cache

            missing = jit_cache.missing_internals()
        except (ImportError, AttributeError) as exc:
            jit_cache, missing = None, str(exc)
        if missing is not None:
            jit_cache = None
            note_problem(f"numba {numba.__version__} lacks or has changed what trackrider's kernel cache "
                               f"uses ({missing}); the kernels compile in memory on every run (trackrider is "
                               "tested with numba 0.68)")
        _JIT_CACHE.append(jit_cache)
    return _JIT_CACHE[0]


def _signatures(dispatcher, args, options) -> None:
    """A cached kernel given its signature(s) (``njit(signature)``) compiled for them (loaded from the
    cache), and for no other."""
    if args and options.get("cache") and hasattr(dispatcher, "disable_compile"):
        for sig in args[0] if isinstance(args[0], list) else [args[0]]:
            dispatcher.compile(sig)
        dispatcher.disable_compile()


class _Deferred:
    """A cached kernel whose numba dispatcher is made when it is first used: called from Python,
    an attribute asked for, or typed by numba in a kernel being compiled (``_typeof_deferred``).

    A warm run calls a dozen of trackrider's ~200 kernels from Python and loads their machine code
    from the cache; the kernels they call are compiled into it and never needed by themselves.
    Making every dispatcher when its module is imported cost a run 50–60 ms of CPU (numba inspects
    each function, and a kernel given its signature was loaded from the cache then). A compile (a
    cache miss) makes the dispatchers of the callees it types as it meets them."""

    def __init__(self, function, args, options):
        self.dispatcher = None
        self.py_func, self._args, self._options = function, args, options
        self._folders = kernel_folders()        # the cache folders of when it was defined, as a dispatcher's
        self.__name__, self.__qualname__ = function.__name__, function.__qualname__
        self.__module__, self.__doc__ = function.__module__, function.__doc__
        _typeof_deferred()

    def __call__(self, *args, **kwargs):
        dispatcher = self.dispatcher
        if dispatcher is None:
            dispatcher = self.made()
        return dispatcher(*args, **kwargs)

    def __getattr__(self, name):
        if name == "dispatcher":          # not yet set (a copy being made)
            raise AttributeError(name)
        return getattr(self.made(), name)

    def made(self):
        """The dispatcher, made now if not yet, and put in place of this in the kernel's module."""
        if self.dispatcher is None:
            self.dispatcher = _dispatcher(self.py_func, self._args, self._options, self._folders)
            space = self.py_func.__globals__
            if space.get(self.__name__) is self:
                space[self.__name__] = self.dispatcher
            _signatures(self.dispatcher, self._args, self._options)
        return self.dispatcher


_TYPEOF: list = []


def _typeof_deferred() -> None:
    """numba types a deferred kernel (a global of a kernel it compiles, or an argument) as its
    dispatcher, made then. Registered once, when the first deferred kernel is made."""
    if _TYPEOF:
        return
    from numba.core.typing.typeof import typeof_impl

    @typeof_impl.register(_Deferred)
    def _typeof(value, context):
        return typeof_impl(value.made(), context)

    _TYPEOF.append(_typeof)


def _one_signature_per_type(dispatcher):
    """``dispatcher`` compiled for the types of its arguments when a kernel calls it, not their
    values: numba types a constant argument (a column index, a flag, −1) as a literal of its value
    and would compile the callee once per value it is called with (the result is the same; the
    compile is not). A callee that needs a constant's value (none does now) is still compiled for
    it: when its plain types do not type."""
    from numba.core import errors, types

    template = dispatcher.get_call_template

    def get_call_template(args, kws):
        plain = tuple(types.unliteral(a) for a in args)
        if plain == tuple(args) and not kws:
            return template(args, kws)
        try:
            return template(plain, {k: types.unliteral(v) for k, v in kws.items()})
        except errors.TypingError:
            return template(args, kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher


def __getattr__(name):
    """``prange``: numba's (a kernel compiled with ``parallel=True`` runs its iterations on all threads),
    or ``range`` in lazy mode (numba is not imported; the kernels then run serially: the same results)."""
    if name == "prange":
        if _lazy and not _switched:
            return range
        import numba

        return numba.prange
    raise AttributeError(name)


def lazy_kernels() -> None:
    """Kernels defined from now on are lazy (see the module docstring): ``trackrider validate``
    calls this before it imports anything with kernels."""
    global _lazy
    _lazy = True


class _Lazy:
    """A kernel in lazy mode: its Python original for small arrays, else (from then on, for every
    kernel) its compiled version."""

    def __init__(self, function, args, options):
        self.py_func, self._args, self._options = function, args, options
        self.compiled = None
        self.__name__, self.__doc__ = function.__name__, function.__doc__

    def __call__(self, *args):
        global _depth, _python_seconds
        if not _switched:
            if _depth:                      # called by a kernel running in Python
                return self.py_func(*args)
            if _python_seconds <= LAZY_SECONDS and _work(args) <= LAZY_ELEMENTS:
                _depth = 1
                t0 = time.process_time()
                try:
                    return self.py_func(*args)
                finally:
                    _depth = 0
                    _python_seconds += time.process_time() - t0
            _switch()
        return self.compiled(*args)


def _work(args) -> int:
    """Elements of the last array among ``args``: the kernels write their results into it (the
    others may be large tables read at a few places)."""
    for a in reversed(args):
        if getattr(a, "ndim", 0):
            return a.size
    return 0


def _switch() -> None:
    """Every lazy kernel compiled (or loaded from the cache), and put in place of the lazy one in
    every module that names it (numba compiles a kernel's callees from its module's names)."""
    global _switched
    import sys

    spaces = [kernel.py_func.__globals__ for kernel in _lazies]
    spaces += [vars(m) for name, m in list(sys.modules.items()) if name.split(".")[0] == "trackrider"]
    # kernels given a signature compile when made: after the others are in place (their callees)
    for eager in (False, True):
        for kernel in _lazies:
            if bool(kernel._args) == eager:
                kernel.compiled = _compiled(kernel.py_func, kernel._args, kernel._options)
        for space in spaces:
            for name, value in list(space.items()):
                if isinstance(value, _Lazy) and value.compiled is not None:
                    space[name] = value.compiled
    _switched = True
