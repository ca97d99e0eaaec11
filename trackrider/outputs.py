"""One rule for every command that writes (docs/outputs.md, "What is replaced").

* Without ``overwrite`` nothing that exists is replaced: an ``--out`` file that
  exists, or an ``--out`` folder that holds anything but leftovers of an
  interrupted run (``*.part`` files, which never count as results), is refused.
* With ``overwrite`` a single file named by ``--out`` may be replaced; inside a
  folder only the files trackrider itself wrote there are replaced (a results
  folder's ``timeseries.csv``/``summary.json``, a sweep folder's ``plan.json``,
  ``runs.jsonl``, ``sweep.csv`` and ``runs/``). A non-empty folder that
  trackrider does not recognise as its own is refused, ``overwrite`` or not.
* A path that cannot be written (its parent is a file, a read-only or virtual
  file system, no permission) is bad input too.

Every refusal is an ``InputError`` (one ``error:`` line, exit code 2), raised
before anything is created or removed.
"""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from trackrider.errors import InputError

#: suffix of files being written (renamed when complete); a leftover one is not a result
PART_SUFFIX = ".part"
#: the entries of a sweep folder (``trackrider sweep``)
SWEEP_FILES = ("plan.json", "runs.jsonl", "sweep.csv", "runs")
#: the generator a report page names in its <meta> (how a page trackrider wrote is recognised)
REPORT_GENERATOR = "trackrider report"
#: the first columns of a timeseries.csv trackrider wrote
_CSV_HEAD = "t,train,car,"


def _read_head(path: Path, n: int = 4096) -> bytes:
    try:
        if not path.is_file():
            return b""
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def _json_object(path: Path, max_bytes: int = 64 * 2**20) -> dict | None:
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def is_results_dir(path) -> bool:
    """True when ``path`` holds a ``trackrider run`` result (its summary or timeseries)."""
    p = Path(path)
    summary = _json_object(p / "summary.json")
    if summary is not None and "status" in summary and ("columns" in summary or "trackrider_version" in summary):
        return True
    return _read_head(p / "timeseries.csv", len(_CSV_HEAD)).decode("utf-8", "replace") == _CSV_HEAD


def is_sweep_dir(path) -> bool:
    """True when ``path`` holds a sweep trackrider wrote (its ``plan.json`` with a digest)."""
    plan = _json_object(Path(path) / "plan.json")
    return plan is not None and "digest" in plan and "runs" in plan


def _leftovers_only(path: Path) -> bool:
    """Every entry of the folder is an interrupted run's ``*.part`` file (or its
    ``inputs.part`` folder)."""
    return all(e.name.endswith(PART_SUFFIX) and (e.is_file() or e.name == "inputs" + PART_SUFFIX)
               for e in path.iterdir())


def _check_writable(path: Path, where: str, shown: Path | None = None) -> None:
    """``path`` (or, if it does not exist, its nearest existing ancestor) must be a folder we can
    create files in; errors name ``shown`` (default ``path``)."""
    shown = path if shown is None else shown
    probe = path
    while not probe.exists() and not probe.is_symlink():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(f"cannot write here: {probe} is not a folder", path=shown, where=where)
    try:
        fd, name = tempfile.mkstemp(prefix=".trackrider-probe-", dir=probe)
    except OSError as exc:
        raise InputError(f"cannot write in {probe}: {exc.strerror or exc}", path=shown, where=where) from None
    os.close(fd)
    os.unlink(name)


def check_out_file(path, overwrite: bool = False, where: str = "--out", ours=None) -> Path:
    """Check a single output file (``plot``, ``render``, ``report``, ``curve --export``); create nothing.

    Refused: an existing file without ``overwrite``; a folder or other non-file
    at ``path``; a path that cannot be written; with ``ours`` (a predicate on the
    path), an existing file it does not recognise as one trackrider wrote, even
    with ``overwrite``. Returns ``Path(path)``.
    """
    p = Path(path)
    if p.exists() or p.is_symlink():
        if p.is_dir():
            raise InputError("is a folder; give a file name", path=p, where=where)
        if not p.is_file():
            raise InputError("exists and is not a regular file", path=p, where=where)
        if not overwrite:
            raise InputError(f"exists; pass --overwrite to replace it or choose another {where}", path=p, where=where)
        if ours is not None and not ours(p):
            raise InputError("exists and is not a file trackrider wrote: not replaced, even with --overwrite; "
                             f"choose another {where}", path=p, where=where)
    _check_writable(p.parent, where, shown=p)
    return p


def head_contains(path, marker: bytes, n: int = 4096) -> bool:
    """Whether the first ``n`` bytes of ``path`` contain ``marker`` (how a file trackrider
    wrote is recognised)."""
    return marker in _read_head(Path(path), n)


def drop_stale_report(folder) -> None:
    """Remove a ``report.html`` trackrider wrote in ``folder`` for the results just
    replaced: it would describe the old run or sweep (``--report``/``report`` write anew)."""
    page = Path(folder) / "report.html"
    if page.is_file() and head_contains(page, f'<meta name="generator" content="{REPORT_GENERATOR}">'.encode()):
        page.unlink()


@contextmanager
def atomic_file(final):
    """Yield a temporary path beside ``final``; rename it onto ``final`` when the block
    completes, remove it when the block fails: a reader never sees half a file, and an
    interrupted write leaves what was there before. Missing parent folders are created."""
    final = Path(final)
    make_dir(final.parent)                        # --out may name a new folder, as for run
    tmp = final.with_name(f".{final.name}.tmp{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            tmp.unlink()


def check_results_dir(path, overwrite: bool = False, where: str = "--out", report: bool = False) -> Path:
    """Check a ``trackrider run`` output folder before anything is built or written.

    Accepted: a folder that does not exist (its parent must be writable), an
    empty folder, one holding only ``*.part`` leftovers, and with ``overwrite``
    a folder trackrider recognises as a results folder (only its
    ``timeseries.csv`` and ``summary.json`` are replaced, and only when the
    new run completes, with the ``inputs/`` copy and a ``report.html`` trackrider
    wrote; other files in it are left alone). An ``inputs`` (or, with ``report``,
    a ``report.html``) that trackrider did not write is refused before the run.
    """
    p = Path(path)
    if p.exists() or p.is_symlink():
        if not p.is_dir():
            raise InputError("exists and is not a directory", path=p, where=where)
        if not _leftovers_only(p):
            if not overwrite:
                raise InputError("output folder exists and is not empty; pass --overwrite to replace the "
                                 f"results trackrider wrote there, or choose another {where}", path=p, where=where)
            if not is_results_dir(p):
                raise InputError("not a results folder trackrider wrote (no summary.json or timeseries.csv of "
                                 f"a run): refusing to write into it, even with --overwrite; choose another {where}",
                                 path=p, where=where)
            from trackrider.inputs_copy import INPUTS, is_inputs_copy

            mine = p / INPUTS
            if (mine.exists() or mine.is_symlink()) and not is_inputs_copy(mine):
                raise InputError(f"{INPUTS} is not the copy of the inputs trackrider keeps there: not replaced, "
                                 f"even with --overwrite; move it or choose another {where}", path=p, where=where)
            page = p / "report.html"
            if report and page.exists() and not (page.is_file() and head_contains(page, REPORT_GENERATOR.encode())):
                raise InputError("report.html is not a report trackrider wrote: not replaced, even with "
                                 f"--overwrite; move it or choose another {where}", path=p, where=where)
    _check_writable(p, where)
    return p


def check_sweep_dir(path, overwrite: bool = False, resume: bool = False, where: str = "--out") -> Path:
    """Check a sweep folder: as ``check_results_dir``, for a sweep's own files."""
    p = Path(path)
    if p.exists() or p.is_symlink():
        if not p.is_dir():
            raise InputError("exists and is not a directory", path=p, where=where)
        if any(p.iterdir()):
            if resume:
                if not is_sweep_dir(p):
                    raise InputError("not a sweep folder (no plan.json of a sweep) to resume", path=p, where=where)
            elif not overwrite:
                raise InputError("exists; pass --resume to continue it or --overwrite", path=p, where=where)
            elif not is_sweep_dir(p):
                raise InputError("not a sweep folder trackrider wrote (no plan.json of a sweep): refusing to "
                                 f"replace anything in it, even with --overwrite; choose another {where}",
                                 path=p, where=where)
    _check_writable(p, where)
    return p


def make_dir(path, where: str = "--out") -> Path:
    """Create the output folder (and parents); an OS refusal is bad input."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the folder: {exc.strerror or exc}", path=p, where=where) from None
    return p
