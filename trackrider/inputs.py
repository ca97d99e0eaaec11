"""The one reader of every input file (scenarios, sweeps, curves): bounded and non-blocking.

A path that is not a regular file (``/dev/zero``, a named pipe, a socket) is
refused before it is opened, so it can neither fill memory nor block; a file
larger than its kind's limit is refused from its size, before it is read
(docs/scenarios.md, "Limits"). Every refusal is an ``InputError`` naming the
file.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from trackrider.errors import InputError

#: largest scenario or sweep file, bytes
MAX_SCENARIO_BYTES = 4 * 2**20
#: largest curve file, bytes (100 000 points, the most a curve may have, at up to ~300 bytes a line)
MAX_CURVE_BYTES = 32 * 2**20
#: deepest nesting of arrays and tables in a scenario or sweep file (a scenario's is 4 deep)
MAX_TOML_DEPTH = 32


def read_input_bytes(path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of regular file ``path`` (at most ``max_bytes``); ``InputError`` otherwise.

    ``what`` names the kind in messages ("scenario file", "curve file").
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError("file not found", path=p) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=p) from None
    except ValueError:                  # a NUL character in the path
        raise InputError("not a usable file name (it holds a NUL character)", path=repr(str(p))) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"is a directory, not a {what}", path=p)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"not a regular file (a device, pipe or socket), not a {what}", path=p)
    if st.st_size > max_bytes:
        raise InputError(f"{st.st_size / 2**20:.1f} MB is larger than a {what} may be "
                         f"({max_bytes / 2**20:g} MB)", path=p)
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=p) from None
    if len(data) > max_bytes:   # grew while we looked
        raise InputError(f"larger than a {what} may be ({max_bytes / 2**20:g} MB)", path=p)
    return data


def read_toml(path, what: str = "scenario file") -> dict:
    """Read and parse the TOML file ``path`` (at most ``MAX_SCENARIO_BYTES``, UTF-8, nested at most
    ``MAX_TOML_DEPTH`` deep); every failure is an ``InputError`` naming it (and TOML's line and
    column)."""
    import tomllib

    raw = read_input_bytes(path, MAX_SCENARIO_BYTES, what)
    if b"\x00" in raw[:8192]:
        raise InputError("not a TOML text file (binary data)", path=path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError("not a TOML text file (invalid UTF-8)", path=path, where=f"line {line}") from None
    if text.startswith("\ufeff"):  # a byte-order mark some editors write
        text = text[1:]
    try:
        doc = parse_nested(tomllib.loads, text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", msg)
        if m:
            where = f"line {m.group(1)}, column {m.group(2)}"
            msg = msg[: m.start()]
        else:
            m = re.search(r"\s*\(at end of document\)\s*$", msg)
            where = "end of file"
            if m:
                msg = msg[: m.start()]
        raise InputError(f"malformed TOML: {msg}", path=path, where=where) from None
    deep = _too_deep(doc) if doc is not TOO_DEEP else ""
    if doc is TOO_DEEP or deep:
        raise InputError(f"arrays or tables nested more than {MAX_TOML_DEPTH} deep", path=path, where=deep or None)
    return doc


#: what ``parse_nested`` returns for a text nested deeper than Python's recursion limit
TOO_DEEP = object()


def parse_nested(parse, text):
    """``parse(text)`` (a recursive parser: ``tomllib.loads``, ``json.loads``), or ``TOO_DEEP`` when the text
    nests deeper than Python's recursion limit. Cyclic garbage collection is paused meanwhile: a
    collection run at the bottom of that recursion would call finalizers with no stack left, and
    their errors would be printed as "Exception ignored" lines beside the one ``error:`` line."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        return parse(text)
    except RecursionError:
        return TOO_DEEP
    finally:
        if was:
            gc.enable()


def _too_deep(doc) -> str:
    """The key (``a.b[0]``) where ``doc`` nests deeper than ``MAX_TOML_DEPTH``, else ""."""
    todo = [(doc, "", 0)]
    while todo:
        node, key, depth = todo.pop()
        if depth > MAX_TOML_DEPTH:
            return key.lstrip(".")
        if isinstance(node, dict):
            todo.extend((v, f"{key}.{k}" if depth < 4 else key, depth + 1) for k, v in node.items())
        elif isinstance(node, list):
            todo.extend((v, f"{key}[{i}]" if depth < 4 else key, depth + 1) for i, v in enumerate(node))
    return ""
