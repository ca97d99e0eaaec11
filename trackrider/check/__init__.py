"""Is the ride acceptable, and is the model right? (docs/checking.md)

* :mod:`trackrider.check.design` — design checks of a track without an
  envelope: G steps at segment joints, jerk, loops and helices entered without
  a transition (warnings in ``validate``, ``curve`` and ``run``).
* :mod:`trackrider.check.envelope` — acceleration envelopes the user supplies
  (level against duration per axis, onset rates, combined ellipses) checked
  against every car's filtered rider G (``trackrider check``, ``[check]``).
* :mod:`trackrider.check.compare` — a run against a measured ride
  (``trackrider compare``).

This package imports nothing heavy; each module imports what it uses.
"""
