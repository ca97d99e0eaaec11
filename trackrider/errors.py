"""Errors that the command line turns into one-line messages and exit codes.

``InputError`` is bad input (exit code 2): its message is complete and names the
file and the key or line, e.g. ``scenarios/x.toml: train[0].car.mass: must be > 0, got -1``.
``SimulationError`` is a run that failed numerically (exit code 1).
"""
from __future__ import annotations


class TrackriderError(Exception):
    """Base class of trackrider's own errors."""


class InputError(TrackriderError, ValueError):
    """Bad input: a missing or malformed file, an unknown key, a value out of range.

    Parameters
    ----------
    message : str
        What is wrong, one line.
    path : str or os.PathLike, optional
        The file at fault; prefixed to the message as ``path: ``.
    where : str, optional
        The key (``train[0].car.mass``) or line (``line 12``) at fault.
    """

    def __init__(self, message: str, path=None, where: str | None = None):
        self.path = None if path is None else str(path)
        self.where = where
        self.detail = message
        parts = [p for p in (self.path, where) if p]
        text = ": ".join(parts + [message]) if parts else message
        super().__init__(" ".join(text.split()))  # always one line


class SimulationError(TrackriderError, RuntimeError):
    """The simulation failed (for example a non-finite state); carries time and car."""

    def __init__(self, message: str, t: float | None = None, entity: str | None = None):
        self.t = t
        self.entity = entity
        super().__init__(message)
