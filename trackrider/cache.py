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

Below it the kernels of one version of the sources live in ``kernels-<hash>``, the hash of
the contents of every ``.py`` file the kernels can depend on (``source_fingerprint``): numba's cache
checks only a kernel's own file, so after an upgrade or a ``git pull`` that changed a kernel
it calls (another file), it would otherwise load stale machine code. The newest
``KEEP_VERSIONS`` such folders are kept, older ones removed when a new one is made. Below
that, one folder per module (``trackrider.physics.kernels``): every copy of the same sources (an
install, a checkout, an editable install) shares the entries, whatever its path
(``trackrider.jit_cache.KernelCache``: keyed by this hash, not by numba's file path and time stamp).

A wheel built by ``pip install .`` ships the kernels compiled at build time
(``trackrider.prebuild``) in ``<package>/_kernel_cache/kernels-<hash>`` (``shipped_dir``); they
are read from there (never written), so the first run loads them; pip removes them with the
package. Anything else compiles on first use into the per-user folder.
``trackrider --version`` prints that folder; deleting it is always safe (the next run compiles
what the install did not ship).

The choice is scoped to trackrider's own kernels (``trackrider.jit.njit``): a user's
numba code in the same process caches where numba would put it anyway. When the folder
cannot be created or written, the kernels not shipped compile in memory on every run and
``cache_problem()`` says why (the CLI prints it once as a warning).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

#: kernel folders of this many versions of the sources are kept (the newest by use)
KEEP_VERSIONS = 3

_PROBLEM: str | None = None
_CHECKED: Path | None = None
_FINGERPRINT: str | None = None
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


#: an import of trackrider at the start of a line (searched in "\n" + the file's text: a pattern that starts
#: with a plain character is searched for several times faster than one that starts with ``^``)
_IMPORT = re.compile(r"\n\s*(?:from\s+(trackrider(?:\.\w+)*)\s+import\s+\(?([\w\s,]*)|import\s+(trackrider(?:\.\w+)*))")


def kernel_sources(pkg: Path) -> list[Path]:
    """The ``.py`` files of the package that compiled kernels can depend on: every file that uses
    ``njit``, and (transitively) every file of the package it imports from (its constants and the
    functions it calls are compiled into the kernels). Sorted by path."""
    def module_file(name: str) -> Path | None:
        rel = Path(*name.split(".")[1:])
        if not rel.parts:           # ``from trackrider import x``: x is a module, a candidate of its own
            return None
        for cand in (pkg / rel.with_suffix(".py"), pkg / rel / "__init__.py"):
            if cand.is_file():
                return cand
        return None

    todo = [p for p in pkg.rglob("*.py") if "njit" in p.read_text(encoding="utf-8")]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for mod, names, plain in _IMPORT.findall("\n" + path.read_text(encoding="utf-8")):
            cands = [plain] if plain else [mod] + [f"{mod}.{n.split()[0]}" for n in names.split(",") if n.strip()]
            for name in cands:
                f = module_file(name)
                if f is not None and f not in seen:
                    todo.append(f)
    return sorted(seen)


def source_fingerprint(package: Path | None = None) -> str:
    """16 hex digits of a hash of the contents (and relative paths) of every file the kernels can
    depend on (``kernel_sources``): a change to any of them gives new kernel folders (the module
    docstring); a change to the report or the command line does not.

    For the running package (``package`` None) it is remembered in the cache folder
    (``_remembered``): reading and hashing the sources costs a process 40–50 ms, stating them 1–2 ms."""
    global _FINGERPRINT
    if package is None and _FINGERPRINT is not None:
        return _FINGERPRINT
    pkg = Path(package) if package is not None else Path(__file__).resolve().parent
    if package is not None:
        return _hash_sources(pkg)
    _FINGERPRINT = _remembered(pkg, running=True)
    return _FINGERPRINT


def _hash_sources(pkg: Path) -> str:
    h = hashlib.sha1()
    for path in kernel_sources(pkg):
        h.update(path.relative_to(pkg).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


#: a source file changed less than this long ago (ns) is not remembered: a later change within the
#: file system's time-stamp resolution could leave its size and time stamps as they were
SETTLED_NS = 2_000_000_000


def _sources_stamp(pkg: Path) -> tuple[str, bool, int]:
    """(a hash of the path, size, inode and time stamps of every ``.py`` file of the package; whether
    every one of them was last changed more than ``SETTLED_NS`` ago; when the last of them was changed,
    ns: ``_changed_ns``)."""
    h = hashlib.sha1(os.fsencode(pkg))
    newest = changed = 0
    for folder, subs, files in os.walk(pkg):
        subs[:] = sorted(d for d in subs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
                changed = max(changed, _changed_ns(st))
                h.update(f"{folder}/{name}\0{st.st_size} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}\n".encode())
    return h.hexdigest()[:16], newest < time.time_ns() - SETTLED_NS, changed


def _changed_ns(st) -> int:
    """When a file was last changed, as the system clock said then (ns): its status change time, which
    no one can set (a modification time can be any: an archive's, a clock ahead), except on Windows,
    whose ``st_ctime`` is when the file was made."""
    return st.st_mtime_ns if os.name == "nt" else st.st_ctime_ns


def _remembered(pkg: Path, running: bool = False) -> str:
    """``_hash_sources(pkg)``, kept in ``<cache root>/sources-<hash of pkg's path>`` beside the
    stamp of the package's files (``_sources_stamp``) and read from there while the stamp is the
    same (any edit, copy or reinstall of a ``.py`` file changes it). Without a usable cache folder,
    or while a file has just changed, it is worked out every time. ``running``: ``pkg`` is this
    process's own package, whose files changed since its import make ``sources_as_hashed`` false
    (another copy's files say nothing about the code this process runs)."""
    root = usable_cache_dir()
    stamp, settled, changed = _sources_stamp(pkg)
    if running:
        _changed_since_import(changed)
    memo = None if root is None else root / f"sources-{hashlib.sha1(os.fsencode(pkg)).hexdigest()[:16]}"
    if memo is not None:
        try:
            kept, digest = memo.read_text(encoding="ascii").split()
            if kept == stamp and re.fullmatch("[0-9a-f]{16}", digest):
                return digest
        except (OSError, ValueError):
            pass
    digest = _hash_sources(pkg)
    if running:
        _changed_since_import(_sources_stamp(pkg)[2])     # a file changed while it was read: hashed new, imported old
    if memo is not None and settled:
        part = None
        try:
            with tempfile.NamedTemporaryFile("w", encoding="ascii", dir=root, prefix=".sources-",
                                             delete=False) as f:
                part = f.name
                f.write(f"{stamp} {digest}\n")
            os.replace(part, memo)
        except OSError:
            if part is not None and os.path.lexists(part):
                os.unlink(part)
    return digest


# ------------------------------------------------------------------ sources changed while running

_CHANGED: str | None = None
_MODULES_SEEN = [0, set()]


def _imported_ns() -> int:
    """When this process first imported the package (``trackrider._IMPORTED_NS``), ns."""
    import trackrider

    return getattr(trackrider, "_IMPORTED_NS", 0)


def _changed_since_import(changed_ns: int) -> None:
    """Note (``sources_as_hashed``) that a source file was changed after the package was imported."""
    global _CHANGED
    if _CHANGED is None and changed_ns >= _imported_ns():
        _CHANGED = ("trackrider's source files changed while this process ran; its kernels compile in memory "
                    "and are not cached")


def sources_as_hashed() -> bool:
    """Whether the code of every trackrider module this process has imported is the code the sources'
    hash (``source_fingerprint``) was made of, so that kernels may be loaded from, and saved in, that
    hash's folders (``trackrider.jit_cache``). Not so once a source file has changed since the package
    was first imported: a module imported before the edit and hashed after it, or (the hash made
    before the edit) imported after it, would tie one version's compiled code to the other's hash,
    and a later process would load code that does not match its own Python (array sizes, record
    layouts: a crash). Every module imported since the last call is checked (a ``stat`` each); the
    files the hash was made of were checked when it was made."""
    if _CHANGED is None and len(sys.modules) != _MODULES_SEEN[0]:
        seen = _MODULES_SEEN[1]
        for name, module in list(sys.modules.items()):
            if name in seen or not name.startswith("trackrider"):
                continue
            seen.add(name)
            path = getattr(module, "__file__", None)
            if path and path.endswith(".py"):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                _changed_since_import(_changed_ns(st))
        _MODULES_SEEN[0] = len(sys.modules)
    return _CHANGED is None


def kernels_dir(root: Path) -> Path:
    """``root/kernels-<source_fingerprint()>``: made (and the oldest other versions' folders
    beyond ``KEEP_VERSIONS`` removed) the first time; its time stamp marks its last use."""
    here = root / f"kernels-{source_fingerprint()}"
    if not here.is_dir():
        here.mkdir(parents=True, exist_ok=True)
        others = sorted((p for p in root.glob("kernels-*") if p.is_dir() and p != here),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[KEEP_VERSIONS - 1:]:
            shutil.rmtree(old, ignore_errors=True)
    return here


def cache_problem() -> str | None:
    """Why the kernels are not cached on disk in this process, or None."""
    return _PROBLEM or _INTERNALS or _CHANGED


_INTERNALS: str | None = None


def note_problem(text: str) -> None:
    """``text`` is why no kernel is cached in this process whatever the folder (``trackrider.jit``:
    the numba installed lacks what the cache builds on); ``cache_problem()`` returns it."""
    global _INTERNALS
    _INTERNALS = text


#: the folder, inside the installed package, of the kernels compiled when its wheel was built
SHIPPED = "_kernel_cache"


_SHIPPED: list = []


def shipped_dir() -> Path | None:
    """``<package>/_kernel_cache/kernels-<source_fingerprint()>`` when the install ships kernels
    compiled for these very sources (``pip install .`` builds them, ``trackrider.prebuild``), else
    None (a checkout, an editable install, or a wheel built without them). Read only; looked for
    once per process (every kernel asks)."""
    if not _SHIPPED:
        here = Path(__file__).resolve().parent / SHIPPED / f"kernels-{source_fingerprint()}"
        _SHIPPED.append(here if here.is_dir() else None)
    return _SHIPPED[0]


def kernel_folders() -> tuple[Path | None, Path | None]:
    """(the per-user folder of this version of the sources, written to; the shipped one, read
    only): either may be None (see ``usable_cache_dir``, ``shipped_dir``)."""
    root = usable_cache_dir()
    return (_kernels_dir_once(root) if root is not None else None), shipped_dir()


_KERNELS: dict = {}


def _kernels_dir_once(root: Path) -> Path | None:
    """``kernels_dir(root)``, worked out once per process and root (its time stamp touched then);
    None if it cannot be made (the kernels then compile in memory)."""
    if root not in _KERNELS:
        try:
            here = kernels_dir(root)
            os.utime(here)
        except OSError:
            here = None
        _KERNELS[root] = here
    return _KERNELS[root]


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
