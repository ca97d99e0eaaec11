"""A results folder written by one run at a time and changed in one step (docs/outputs.md,
"The results directory").

* **One writer.** A run (or a sweep) holds an exclusive ``flock`` on the folder itself
  (an open descriptor of the directory) while it writes there; a second one is refused
  at once (``InputError``: one ``error:`` line, exit 2, nothing written). The kernel
  drops the lock when the process ends however it ends (``kill -9`` included), so a
  lock is never stale. Where the file system cannot lock (some network file systems)
  or on a system without ``flock``, runs go unlocked.
* **One step.** Everything a run writes goes first into a fresh stage folder inside
  ``DIR``, ``.trackrider-<random>.part/``: created exclusively, readable only by its
  owner, named as trackrider's by the marker file ``STAGE`` in it. When the results
  (``timeseries.csv``, ``summary.json``) and the ``inputs/`` copy are complete, the
  marker ``COMMIT`` is written into the stage — the one step: before it the old results
  stand, after it the new ones — and the entries are moved into ``DIR`` (a stale
  ``inputs/`` or ``joints.csv``, and a ``report.html`` or ``compare.json`` trackrider wrote for the old
  results, are moved into the stage first) and the stage removed. A commit cut short (the
  process killed between two renames) is finished by the next command that takes the
  folder (``run``, ``report``, ``plot``, ``render``, ``check``, ``compare``); a stage without
  ``COMMIT`` is an interrupted run's (its rows so far) and the next run into the folder
  removes it. ``check --save`` and ``compare --save`` hold the folder while they read the
  results and write beside them (``held``).
* **No links followed.** Files are created exclusive and no-follow (``O_EXCL|O_NOFOLLOW``)
  in the private stage; renames replace a link at a result's name, never what it points
  at; nothing is deleted but trackrider's own stage folders (a real directory holding the
  ``STAGE`` marker) and entries trackrider recognised as its own.
* **A full disk** (any ``OSError`` while writing the stage) removes the stage and is one
  ``error:`` line naming the file: the folder is left as it was.
"""
from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path

from trackrider.errors import InputError

try:                                    # POSIX; elsewhere runs go unlocked
    import fcntl
except ImportError:                     # pragma: no cover - Windows
    fcntl = None

STAGE_PREFIX = ".trackrider-"
STAGE_SUFFIX = ".part"
#: the marker file that names a stage folder as trackrider's, and its text
STAGE_MARK = "STAGE"
STAGE_TEXT = b"trackrider: results being written (docs/outputs.md)\n"
#: the marker file whose presence means the stage's results replace the folder's
COMMIT_MARK = "COMMIT"
#: inside a stage: what the commit moved out of the folder (removed with the stage)
OLD = "old"
#: the entries a commit brings into the folder, in the order it moves them
ENTRIES = ("inputs", "timeseries.csv", "joints.csv", "summary.json")
#: a page trackrider wrote for the old results: moved out by the commit (it would describe the old run)
REPORT = "report.html"
#: a comparison with a measured ride trackrider wrote for the old results (``compare --save``): moved out alike
COMPARE = "compare.json"
#: partial files an earlier trackrider left in the folder itself (regular files only)
OLD_PARTS = ("timeseries.csv.part", "summary.json.part")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class OutputWriteError(InputError):
    """Writing an output failed in the operating system (a full disk, a quota, a lost
    mount): one ``error:`` line naming the file, exit 2."""


def write_failed(exc: OSError, path) -> OutputWriteError:
    """The one-line error of an ``OSError`` raised while writing ``path``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return OutputWriteError(f"cannot write: {reason}", path=path)


# --------------------------------------------------------------------------- files, no links followed

def open_new(path, mode: str = "w", **kw):
    """Open a file that must not exist yet, for writing (``mode`` "w" or "wb"): created
    exclusive and no-follow, so neither a planted link nor an existing file is written through."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        return os.fdopen(fd, mode, **kw)
    except BaseException:
        os.close(fd)
        raise


def open_append(path, **kw):
    """Open a file for appending (created when missing) without following a link at ``path``;
    a link or a non-file there is an ``InputError``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError("is a link: trackrider does not write through links", path=path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError("is not a regular file", path=path)
    return os.fdopen(fd, "a", **kw)


@contextmanager
def naming(path):
    """An ``OSError`` raised inside the block without a file name gets ``path`` (a failed
    ``write`` names no file; the one-line error must)."""
    try:
        yield
    except OSError as exc:
        if not exc.filename:
            exc.filename = str(path)
        raise


def temp_name(final) -> Path:
    """A fresh, unguessable temporary name beside ``final`` (``.<name>.<random>.tmp``)."""
    final = Path(final)
    return final.with_name(f".{final.name}.{secrets.token_hex(8)}.tmp")


def is_plain_dir(path) -> bool:
    """A real directory (not a link to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def is_plain_file(path) -> bool:
    """A regular file (not a link to one)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def lexists(path) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def is_stage(path) -> bool:
    """Whether ``path`` is a stage folder trackrider made (its name, a real directory,
    its ``STAGE`` marker a regular file with trackrider's text)."""
    p = Path(path)
    if not (p.name.startswith(STAGE_PREFIX) and p.name.endswith(STAGE_SUFFIX) and is_plain_dir(p)):
        return False
    mark = p / STAGE_MARK
    if not is_plain_file(mark):
        return False
    try:
        with open(mark, "rb") as fh:
            return fh.read(len(STAGE_TEXT) + 1) == STAGE_TEXT
    except OSError:
        return False


def is_leftover(path) -> bool:
    """An interrupted run's leftover, which never counts as results: a stage folder
    trackrider made, or an earlier version's ``timeseries.csv.part``/``summary.json.part``
    (regular files; a link of that name is not trackrider's)."""
    p = Path(path)
    return is_stage(p) or (p.name in OLD_PARTS and is_plain_file(p))


def _fsync_dir(path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_tree(path) -> None:
    """Remove a stage folder of ours (``rmtree`` unlinks the links inside it, never their targets)."""
    if is_plain_dir(path):
        shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- the lock

class FolderLock:
    """An exclusive lock on the folder ``path`` (created, with its parents, when missing)
    for one writer at a time; ``release()`` (or the end of the process) drops it.

    A folder another process holds is an ``InputError``. ``created``: whether this
    lock created the folder (``release(remove_created=True)`` then removes it if it is
    still empty: a refused command leaves nothing behind)."""

    def __init__(self, path, where: str = "--out", blocking: bool = False):
        self.path = Path(path)
        self.fd = None
        self.created = False
        if not lexists(self.path):
            try:
                self.path.mkdir(parents=True)
                self.created = True
            except FileExistsError:
                pass
            except OSError as exc:
                raise InputError(f"cannot create the folder: {exc.strerror or exc}", path=self.path,
                                 where=where) from None
        try:
            self.fd = os.open(self.path, os.O_RDONLY | _DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise InputError(f"cannot open the folder: {exc.strerror or exc}", path=self.path, where=where) from None
        if fcntl is None:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            self.release(remove_created=True)
            raise InputError("another trackrider command (a run or a sweep) is writing into this folder: "
                             f"wait for it to end, or choose another {where}", path=self.path, where=where) from None
        except OSError:
            pass                        # a file system without locks: unlocked, as without flock

    def release(self, remove_created: bool = False) -> None:
        if self.fd is not None:
            if remove_created and self.created:
                try:
                    os.rmdir(self.path)          # only if still empty
                except OSError:
                    pass
            os.close(self.fd)                    # drops the flock
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.release(remove_created=exc_type is not None)
        return False

    def __del__(self):                  # a holder that failed before releasing: the lock goes with it
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


def try_lock(path) -> FolderLock | None:
    """The lock of folder ``path`` when no one holds it, else None (never creates the folder)."""
    if not is_plain_dir(path) and not Path(path).is_dir():
        return None
    try:
        return FolderLock(path)
    except InputError:
        return None


# --------------------------------------------------------------------------- stage and commit

def finish_commits(folder) -> None:
    """Finish every committed stage in ``folder`` (a commit cut short); call with the lock held."""
    folder = Path(folder)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        if e.name.startswith(STAGE_PREFIX) and is_stage(e.path) and is_plain_file(Path(e.path) / COMMIT_MARK):
            _finish(folder, Path(e.path))


def remove_stale_stages(folder) -> None:
    """Remove the stages of interrupted runs (no ``COMMIT``) in ``folder``; call with the lock
    held (no one else is writing, so their runs have ended)."""
    folder = Path(folder)
    for e in list(os.scandir(folder)):
        if e.name.startswith(STAGE_PREFIX) and is_stage(e.path) and not lexists(Path(e.path) / COMMIT_MARK):
            _remove_tree(e.path)


def settle(folder) -> None:
    """Before reading a results folder: finish a commit cut short, when no one is writing there
    (a reader without write permission leaves the folder as it is)."""
    lock = try_lock(folder)
    if lock is None:
        return
    try:
        finish_commits(folder)
    except OSError:
        pass
    finally:
        lock.release()


@contextmanager
def held(folder, where: str = "RESULTS_DIR"):
    """Hold the results folder ``folder`` while a command reads its results and writes a file
    into it (``check --save``, ``compare --save``): refused (one ``error:`` line) while a run
    writes there, so the file written describes the results read; a commit cut short is
    finished first. An ``OSError`` inside (a full disk) becomes an ``OutputWriteError`` naming
    its file. A folder that is not there is left to the reader to report."""
    if not is_plain_dir(folder):
        yield
        return
    lock = FolderLock(folder, where=where)
    try:
        finish_commits(folder)
        yield
    except OSError as exc:
        raise write_failed(exc, exc.filename or folder) from None
    finally:
        lock.release()


def _own_old_entry(folder: Path, name: str) -> bool:
    """Whether the folder's ``name`` is trackrider's, to be moved out by a commit that brings
    no new one (a stale ``inputs/`` copy, a report page of the old results)."""
    p = folder / name
    if name == "inputs":
        from trackrider.inputs_copy import is_inputs_copy

        return is_inputs_copy(p)
    if name == REPORT:
        from trackrider.outputs import REPORT_GENERATOR, head_contains

        return is_plain_file(p) and head_contains(p, REPORT_GENERATOR.encode())
    if name == COMPARE:
        from trackrider.outputs import is_compare_json

        return is_compare_json(p)
    if name == "joints.csv":            # the mechanisms of an old run (a new run without them brings none)
        from trackrider.mechanisms import is_joints_csv

        return is_joints_csv(p)
    return False


def _finish(folder: Path, stage: Path) -> None:
    """Move a committed stage's entries into ``folder`` (idempotent: resumes a cut-short finish)."""
    try:
        brings = set((stage / COMMIT_MARK).read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return
    old = stage / OLD
    if not is_plain_dir(old):
        old.mkdir()
    for name in ENTRIES + (REPORT, COMPARE):
        new, dest = stage / name, folder / name
        if name in brings:
            if not lexists(new):
                continue                          # moved in already
            if is_plain_dir(new) and lexists(dest):   # a folder cannot replace a folder in one rename
                os.rename(dest, old / name)
            os.replace(new, dest)                 # a file: the old one (or a link there) replaced, not followed
        elif lexists(dest) and not lexists(old / name) and _own_old_entry(folder, name):
            os.rename(dest, old / name)
    _fsync_dir(folder)
    _remove_tree(stage)


class ResultsFolder:
    """``DIR`` taken for one run: locked, checked, and a fresh stage made in it.

    ``stage`` is where the run writes (``timeseries.csv``, ``summary.json``, ``inputs/``);
    ``commit()`` swaps them into ``DIR`` in one step; ``close(exc)`` ends the run's hold
    (``exc``: the failure, if any — the stage of an interrupted run is kept with its rows,
    that of a failed write removed, and an ``OSError`` becomes an ``OutputWriteError``).
    Usable as a context manager.
    """

    def __init__(self, path, overwrite: bool = False, report: bool = False, where: str = "--out"):
        from trackrider.outputs import check_results_dir

        self.path = Path(path)
        self.stage = None
        self.committed = False
        check_results_dir(self.path, overwrite, where, report)     # at once, before taking it
        self.lock = FolderLock(self.path, where)
        try:
            finish_commits(self.path)
            check_results_dir(self.path, overwrite, where, report)   # again: no one else writes now
            remove_stale_stages(self.path)
            self.stage = self._new_stage()
        except OSError as exc:
            self.lock.release(remove_created=True)
            raise InputError(f"cannot write in the folder: {exc.strerror or exc}", path=self.path,
                             where=where) from None
        except BaseException:
            self.lock.release(remove_created=True)
            raise

    def _new_stage(self) -> Path:
        for _ in range(100):
            stage = self.path / f"{STAGE_PREFIX}{secrets.token_hex(6)}{STAGE_SUFFIX}"
            try:
                stage.mkdir(mode=0o700)
            except FileExistsError:
                continue
            with open_new(stage / STAGE_MARK, "wb") as fh:
                fh.write(STAGE_TEXT)
            return stage
        raise FileExistsError(errno.EEXIST, "no free stage name", str(self.path))

    def final(self, stage_path) -> Path:
        """The name a stage entry will have in the folder (for messages)."""
        try:
            return self.path / Path(stage_path).relative_to(self.stage)
        except ValueError:
            return Path(stage_path)

    def commit(self) -> None:
        """Swap the stage's entries into the folder: the ``COMMIT`` marker is the one step."""
        brings = [name for name in ENTRIES if lexists(self.stage / name)]
        try:
            with open_new(self.stage / COMMIT_MARK, "w", encoding="utf-8") as fh:
                fh.write("\n".join(brings) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            _fsync_dir(self.stage)
        except OSError as exc:
            self._drop_stage()
            raise write_failed(exc, self.path / COMMIT_MARK) from None
        self.committed = True
        _finish(self.path, self.stage)

    def _drop_stage(self) -> None:
        if self.stage is not None:
            _remove_tree(self.stage)

    def close(self, exc: BaseException | None = None) -> None:
        """Release the folder. After a failure (``exc``) the stage is removed, except an
        interrupted run's (``KeyboardInterrupt``: its rows so far stay until the next run);
        an ``OSError`` is raised as an ``OutputWriteError`` naming the file."""
        if self.lock.fd is None:
            return
        if not self.committed and not isinstance(exc, KeyboardInterrupt):
            self._drop_stage()
        self.lock.release(remove_created=not self.committed and not (self.stage and lexists(self.stage)))
        if isinstance(exc, OSError) and not isinstance(exc, OutputWriteError):
            raise write_failed(exc, self.final(exc.filename) if exc.filename else self.path) from None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(exc)
        return False
