"""numba's ``njit`` for every kernel of trackrider, set up to compile faster from a cold cache.

Three things, all only about compile time (the results are the same):

* ``njit`` here is numba's with ``no_cfunc_wrapper=True`` by default. numba otherwise adds a
  C-callable wrapper to each compiled function (for first-class function use, which
  trackrider does not need) and LLVM inlines the function into it, so every level of calls
  carried a second copy of the code below it: about 2 s of a cold compile's 7 s of LLVM time.

* numba formats an error message, with terminal colours (colorama, when installed), for every
  failed try while it types a kernel — tens of thousands per cold compile, about 5 % of it.
  ``NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING`` is set (unless already set) before numba is
  imported here; it has no effect if numba was imported first, and numba's real error
  messages read the same apart from colour.
* the typing of repeated operations is memoised, below.

Typing a kernel, numba resolves each operation (``a[i, k]``, ``x * y``, ``a[i] = v`` …) by trying
the templates registered for it one after another: for an array index about eight
(strings, char sequences, lists, dicts, … then arrays), and each failed try builds an error
message and hashes the compile flags. The answer depends only on the operation, the argument
types and the flags numba passes on to overloads, yet it is worked out afresh at each of the
~8600 operations of the run loop, for ~270 distinct questions: about 15 % of a cold compile.

``_memoise_call_typing`` keeps the answers (per process) and is installed when this module is
imported, before anything is compiled. The compiled code is the same (the same signature and
implementation are chosen; the outputs stay byte-identical, see
``tests/physics/test_physics_parallel_compile.py``). Failed resolutions are not kept, so
errors read as before. It patches one numba method (``BaseFunction.get_call_type``): if numba
changes shape, the patch is left out and nothing else changes. ``TRACKRIDER_TYPING_MEMO=0``
leaves it out too.
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

_INHERITED = ("nrt", "fastmath", "error_model", "forceinline")  # flags an overload inherits from its caller


def _memoise_call_typing() -> bool:
    """Install the memo on numba's function typing; False if it is left out."""
    if os.environ.get("TRACKRIDER_TYPING_MEMO", "").strip() == "0":
        return False
    try:
        from numba.core import targetconfig
        from numba.core.types.functions import BaseFunction
    except ImportError:
        return False
    original = getattr(BaseFunction, "get_call_type", None)
    top = getattr(getattr(targetconfig, "ConfigStack", None), "top_or_none", None)
    if original is None or top is None or getattr(original, "_trackrider_memo", False):
        return False
    memo: dict = {}

    def flags_key():
        flags = top()
        if flags is None:
            return None
        out = []
        for name in _INHERITED:
            v = getattr(flags, name, None)
            out.append(tuple(sorted(v.flags)) if hasattr(v, "flags") else v)
        return tuple(out)

    def get_call_type(self, context, args, kws):
        try:
            key = (self, context, tuple(args), tuple(sorted(kws.items())), flags_key())
            sig = memo.get(key)
        except TypeError:  # something unhashable: no memo
            return original(self, context, args, kws)
        if sig is not None and sig.args in getattr(self, "_impl_keys", ()):
            return sig
        sig = original(self, context, args, kws)
        if sig is not None:
            memo[key] = sig
        return sig

    get_call_type._trackrider_memo = True
    get_call_type.__wrapped__ = original
    BaseFunction.get_call_type = get_call_type
    return True


MEMO_INSTALLED = _memoise_call_typing()
