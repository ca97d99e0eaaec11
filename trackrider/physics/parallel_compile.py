"""Cold-cache compile of the run loop on two cores.

numba compiles one function at a time under a process-wide lock, and ``run_chunk`` pulls in
the whole kernel (about 16 s of compiling from an empty cache). Its stages are independent
functions that ``cache=True`` stores one by one, so when the cache holds no ``run_chunk`` for
the argument types at hand, ``prepare`` splits the work: a helper process compiles
``HELPER_STAGES`` into the on-disk cache while this process compiles ``MAIN_STAGES``; then
``run_chunk`` compiles here and loads every stage from the cache. The machine code is the
same either way (the helper compiles the same functions for the same types; cached
libraries are linked from their LLVM bitcode), so results stay bit-identical.

``warm_up`` (called when a World is made) starts the helper early when the cache holds no
``run_chunk`` at all, so that its imports overlap the building of the world; ``prepare``
hands it its stages once the argument types are known.

The stages' argument types are read from ``run_chunk``'s own source (its call expressions)
and the types of the arguments it is called with, so this module holds no list of
signatures to keep in step with the kernel.

The split is off when ``TRACKRIDER_COMPILE_JOBS`` is 0 or 1, with fewer than two CPUs, with
numba's JIT or cache disabled, or if anything here fails (then everything compiles in this
process, as before). ``prepare`` also times the compile (or the cache load) of ``run_chunk``
into ``kernel_seconds``, which the CLI reports on a first run.
"""
from __future__ import annotations

import ast
import inspect
import os
import pickle
import subprocess
import sys
import textwrap
import time

# about equal halves of the compile (measured: each ~6–7 s of CPU on a cold cache; the helper's
# imports overlap the building of the world, so it takes finish_step as well)
HELPER_STAGES = ("stage_solve", "record_sample", "keep_start_velocities", "has_bounded_rows", "finish_step")
MAIN_STAGES = ("stage_frames", "stage_velocities", "stage_prepare", "stage_supports")
HELPER_TIMEOUT_S = 600.0

# The helper imports the kernels, then waits for its work on stdin: it may be started early (``warm_up``)
# so that its imports overlap this process's. An empty list (or a closed pipe) ends it.
_HELPER_CODE = """\
import pickle, sys
sys.path.insert(0, {root!r})
from trackrider.physics import kernels as kn
for name, sig in pickle.load(sys.stdin.buffer):
    getattr(kn, name).compile(sig)
"""

_helper = None  # a helper started by warm_up and not yet given its work

_done: set = set()


def _typeof(value):
    from numba import typeof
    return typeof(value)


def stage_signatures(run_chunk, args) -> dict:
    """Argument types of every stage call in ``run_chunk`` when it is called with ``args``."""
    from numba import types

    fn = ast.parse(textwrap.dedent(inspect.getsource(run_chunk.py_func))).body[0]
    params = [a.arg for a in fn.args.args]
    env = {p: _typeof(v) for p, v in zip(params, args)}
    scratch = args[params.index("scratch")]
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == "scratch"):
            for i, e in enumerate(node.targets[0].elts):
                env[e.id] = _typeof(scratch[i])
    out_t = env["out"]
    # the few locals and expressions run_chunk passes on, typed as numba types them there
    env.update({"erp_h": types.float64, "gmag": types.float64, "any_bounded": types.boolean,
                "res[0]": env["res"].dtype, "out[nrec]": out_t.copy(ndim=out_t.ndim - 1, layout="C")})
    sigs = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in HELPER_STAGES + MAIN_STAGES:
            sigs[node.func.id] = tuple(env[ast.unparse(a)] for a in node.args)
    return sigs


def _jobs() -> int:
    """Processes for a cold compile: 2, or 1 with ``TRACKRIDER_COMPILE_JOBS`` ≤ 1 or one CPU."""
    jobs = 2
    text = os.environ.get("TRACKRIDER_COMPILE_JOBS", "").strip()
    if text:
        try:
            jobs = int(text)
        except ValueError:
            pass
    return min(jobs, os.cpu_count() or 1)


def _cached(dispatcher, sig) -> bool:
    """True if numba's on-disk cache holds ``dispatcher`` for ``sig`` (numba internals; any
    surprise counts as cached, which leaves the compile to numba as usual)."""
    try:
        cache = dispatcher._cache
        if not getattr(cache, "_enabled", False):
            return True
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:
        return True


kernel_seconds = 0.0  # time this process spent compiling or loading run_chunk (the CLI reports it)


def prepare(run_chunk, args) -> None:
    """Before ``run_chunk(*args)``: make sure it is compiled (or loaded from numba's cache) for
    these argument types, timing it into ``kernel_seconds``; on a cold cache, compile its stages
    in two processes first (see the module docstring)."""
    global kernel_seconds
    try:
        if not hasattr(run_chunk, "overloads"):
            return  # NUMBA_DISABLE_JIT
        sig = tuple(_typeof(a) for a in args)
        if sig in run_chunk.overloads:
            return
    except Exception:
        return
    t0 = time.perf_counter()
    try:
        _split_compile(run_chunk, args, sig)
        run_chunk.compile(sig)
    finally:
        kernel_seconds += time.perf_counter() - t0


def _split_compile(run_chunk, args, sig) -> None:
    """Compile run_chunk's stages in two processes if the cache holds no run_chunk for ``sig``."""
    helper = None
    try:
        if _jobs() >= 2 and sys.executable and sig not in _done and not _cached(run_chunk, sig):
            _done.add(sig)
            from trackrider.physics import kernels as kn

            sigs = stage_signatures(run_chunk, args)
            todo = [(n, sigs[n]) for n in HELPER_STAGES if n in sigs and sigs[n] not in getattr(kn, n).overloads
                    and not _cached(getattr(kn, n), sigs[n])]
            if todo:
                helper = _take_helper() or _start_helper()
    except Exception:
        helper = None
    if helper is None:
        _dismiss_helper()
        return
    finished = False
    try:
        helper.stdin.write(pickle.dumps(todo))
        helper.stdin.close()
        for n in MAIN_STAGES:
            if n in sigs:
                getattr(kn, n).compile(sigs[n])
        finished = True
    except Exception:
        finished = True  # run_chunk compiles what is missing (and reports any real error itself)
    finally:
        try:
            if finished:
                helper.wait(timeout=HELPER_TIMEOUT_S)
        finally:
            if helper.poll() is None:  # interrupted, or the helper hangs
                helper.kill()
                helper.wait()


def _start_helper():
    from trackrider.physics import kernels as kn

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(kn.__file__))))
    return subprocess.Popen([sys.executable, "-c", _HELPER_CODE.format(root=root)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _take_helper():
    """The helper warm_up started, if it is still waiting for work."""
    global _helper
    helper, _helper = _helper, None
    if helper is not None and helper.poll() is not None:
        return None
    return helper


def _dismiss_helper() -> None:
    """End a helper warm_up started that has no work after all."""
    helper = _take_helper()
    if helper is not None:
        try:
            helper.stdin.close()  # EOF: it stops waiting
            helper.wait(timeout=HELPER_TIMEOUT_S)
        except Exception:
            helper.kill()


def warm_up(run_chunk) -> None:
    """Start the helper now if numba's cache holds no ``run_chunk`` at all (a first run).

    Called when a World is made: the helper's imports (about a second) then overlap the
    building of the world, and ``prepare`` hands it its stages when the argument types are
    known. If the world never runs, the helper ends when this process does (its stdin closes).
    """
    global _helper
    try:
        if _helper is not None or _done or _jobs() < 2 or not sys.executable:
            return
        cache = getattr(run_chunk, "_cache", None)
        if cache is None or not getattr(cache, "_enabled", False) or run_chunk.overloads:
            return
        if cache._cache_file._load_index():
            return  # compiled before (perhaps for these types): prepare decides
        _helper = _start_helper()
    except Exception:
        _helper = None
