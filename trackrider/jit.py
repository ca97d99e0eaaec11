"""numba's ``njit`` for every kernel of trackrider: where its cache goes, and a faster cold compile.

``cache=True`` caches in trackrider's own per-user folder (``trackrider.cache``), never next
to the source. And two things only about compile time (the results are the same):

* ``njit`` here is numba's with ``no_cfunc_wrapper=True`` by default. numba otherwise adds a
  C-callable wrapper to each compiled function (for first-class function use, which
  trackrider does not need) and LLVM inlines the function into it, so every level of calls
  carried a second copy of the code below it: about 2 s of a cold compile's 7 s of LLVM time.

* numba formats an error message, with terminal colours (colorama, when installed), for every
  failed try while it types a kernel — tens of thousands per cold compile, about 5 % of it.
  ``NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING`` is set (unless already set) before numba is
  imported here; it has no effect if numba was imported first, and numba's real error
  messages read the same apart from colour.
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

import numba  # noqa: E402

from trackrider.cache import cached_njit  # noqa: E402

__all__ = ["njit"]


def njit(*args, **options):
    """``numba.njit`` with ``no_cfunc_wrapper=True`` unless given (see the module docstring).

    With ``cache=True`` the compiled code is cached in trackrider's own cache folder
    (``trackrider.cache``), never next to the source (inside ``site-packages``).
    """
    options.setdefault("no_cfunc_wrapper", True)
    if not options.get("cache"):
        return numba.njit(*args, **options)
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):  # bare @njit(cache=True)-style call
        return cached_njit(numba.njit, args[0], (), options)
    return lambda function: cached_njit(numba.njit, function, args, options)
