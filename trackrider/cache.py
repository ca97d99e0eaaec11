"""Where trackrider keeps its compiled kernels, and how long compiling them took.

numba's ``cache=True`` writes next to the source file when it can: for an installed
package that is inside ``site-packages``, where ``pip`` cannot remove what it did not
install (a leftover ``trackrider/`` folder then shadows the next install), and a
read-only install cannot cache at all. trackrider's kernels are cached instead in

1. ``TRACKRIDER_CACHE_DIR`` if set, else
2. ``NUMBA_CACHE_DIR`` if set, else
3. the user's cache directory: ``$XDG_CACHE_HOME/trackrider`` (``~/.cache/trackrider``)
   on Linux, ``~/Library/Caches/trackrider`` on macOS, ``%LOCALAPPDATA%\\trackrider\\Cache``
   on Windows.

Below it, each copy of the package (a site-packages install, a checkout) has its own
folder, so that two copies never overwrite each other's entries. ``trackrider --version``
prints the folder; deleting it is always safe (the next run compiles again, ~10 s).

The choice is scoped to trackrider's own kernels (``trackrider.jit.njit``): a user's
numba code in the same process caches where numba would put it anyway. When the folder
cannot be created or written, the kernels compile in memory on every run and
``cache_problem()`` says why (the CLI prints it once as a warning).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

_PROBLEM: str | None = None
_CHECKED: Path | None = None
_compile_seconds = 0.0
_listener_installed = False


def cache_root() -> Path:
    """The folder holding trackrider's compiled kernels (see the module docstring)."""
    for var in ("TRACKRIDER_CACHE_DIR", "NUMBA_CACHE_DIR"):
        value = os.environ.get(var, "").strip()
        if value:
            return Path(value).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "trackrider" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "trackrider"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trackrider"


def usable_cache_dir() -> Path | None:
    """``cache_root()`` if it can be created and written, else None (and ``cache_problem()``
    says why). Checked once per process and folder."""
    global _PROBLEM, _CHECKED
    root = cache_root()
    if _CHECKED == root:
        return root if _PROBLEM is None else None
    _CHECKED = root
    try:
        root.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=root).close()
    except OSError as exc:
        _PROBLEM = (f"cannot cache the compiled kernels in {root} ({exc.strerror or exc}); "
                    "they compile in memory on every run (set TRACKRIDER_CACHE_DIR to a writable folder)")
        return None
    _PROBLEM = None
    return root


def cache_problem() -> str | None:
    """Why the kernels are not cached on disk in this process, or None."""
    return _PROBLEM


def cached_njit(numba_njit, function, args: tuple, options: dict):
    """``numba_njit(*args, **options)(function)`` with numba's cache in ``cache_root()``.

    numba reads ``config.CACHE_DIR`` when the decorator runs (it fixes the cache folder
    of that one function then), so setting it around this call alone leaves every other
    function's cache where numba would put it.
    """
    import numba

    root = usable_cache_dir()
    if root is None:
        return numba_njit(*args, **dict(options, cache=False))(function)
    saved = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(root)
    try:
        return numba_njit(*args, **options)(function)
    finally:
        numba.config.CACHE_DIR = saved


# ----------------------------------------------------------------------------- compile time

def compile_seconds() -> float:
    """Wall seconds this process has spent compiling numba functions (not loading them
    from a cache) since ``watch_compiles()`` was first called."""
    return _compile_seconds


def watch_compiles(on_start=None) -> None:
    """Count the time numba spends compiling (numba's ``numba:compile`` event, which
    fires only on a cache miss: loading from the cache is not counted). ``on_start()`` is called when an outermost
    compile begins (the progress bar says "compiling" then)."""
    global _listener_installed, _on_start
    _on_start = on_start
    if _listener_installed:
        return
    from numba.core import event

    class _Timer(event.Listener):
        depth = 0
        t0 = 0.0

        def on_start(self, ev):
            if self.depth == 0:
                self.t0 = time.perf_counter()
                if _on_start is not None:
                    _on_start()
            self.depth += 1

        def on_end(self, ev):
            global _compile_seconds
            self.depth -= 1
            if self.depth == 0:
                _compile_seconds += time.perf_counter() - self.t0

    event.register("numba:compile", _Timer())
    _listener_installed = True


_on_start = None
