"""The one reader of every input file (scenarios, sweeps, curves): bounded and non-blocking.

A path that is not a regular file (``/dev/zero``, a named pipe, a socket) is
refused before it is opened, so it can neither fill memory nor block; a file
larger than its kind's limit is refused from its size, before it is read
(docs/scenarios.md, "Limits"). Every refusal is an ``InputError`` naming the
file.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from trackrider.errors import InputError

#: largest scenario or sweep file, bytes
MAX_SCENARIO_BYTES = 4 * 2**20
#: largest curve file, bytes (2 M points, the most a curve may have, at ~30 bytes a line)
MAX_CURVE_BYTES = 64 * 2**20


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
