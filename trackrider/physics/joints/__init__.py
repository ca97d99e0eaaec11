"""Joint kinds: one module each, and this registry (light: it imports a kind's module when asked).

A kind's module holds everything about it:

* its derivation (the module docstring) and ``prepare(j, joints, bodies, h, erp_h, rows)`` in
  numba: the rows of joint ``j`` (``rows.J``, ``target``, bounds ``lo``/``hi``, softness
  ``gamma``, the row count ``m``) from the bodies' state and its parameter row
  (``joints.param``: the anchors ``common.LA``, ``common.LB``, then its own columns, named in
  the module with ``common.param_columns``). ``reset_rows`` has already cleared rows 0–2. The
  solve is generic over rows (``rows.py``: a PGS block per joint; ``couplings.py``: the exact
  chain solve of a train's couplers), so a kind has no solve of its own.

A kind users add (``USER`` in ``KINDS``: ``World.add_joint``, ``[[joint]]``) also has, in Python:

* ``Settings``: its parameters' dataclass (``trackrider.settings.setting`` fields: default,
  unit, bounds; its ``_rules``), which the loader and ``World`` check;
* ``columns(created)``: its parameter columns when ``World`` creates it (``common.Created``),
  returning the extra rows it needs (a hinge's limit or motor row) as ``(kind, one-sided, row)``;
* ``ANCHOR_B_AT_A``: b's default anchor is where a's starts (``common.default_anchors``, the one
  rule ``World`` and ``checks`` use); ``NO_WORLD_END``: why an end may not be the world, or None;
* ``position_error(pa, pb, p, pa0, pb0)``: how far its anchors break its position constraint, m
  (None: nothing to check), and ``START_WORDS``: how ``checks.check_start`` says it;
* ``unrecorded_energy(p)``: it does work or stores energy the recorded channels do not hold (a
  motor, a spring that may start stretched): the divergence test skips its group's energy.

Adding a kind: its module, one line in ``KINDS`` and its branch in ``dispatch.prepare_joint``
(numba dispatches by code at compile time); ``tests/test_registries.py`` fails until every
consumer has it.
"""
from __future__ import annotations

from importlib import import_module

USER, INNER = True, False
#: every joint kind in code order (``Joints.kind``): its name (its module's) and whether users add it
KINDS = (
    ("distance", USER),
    ("ball", USER),
    ("pulley", USER),
    ("ball_track", INNER),    # a train's ball coupler: its row along the track
    ("hinge", USER),
    ("prismatic", USER),
    ("hinge_axis", INNER),    # a hinge's limit or motor row
    ("slide", INNER),         # a prismatic joint's limit or spring row
    ("draft_gear", INNER),    # a railway train's coupler: free play and a friction draft gear
    ("swivel", INNER),        # a car body on a wheel frame (bogies)
)
#: name → code
CODES = {name: code for code, (name, _) in enumerate(KINDS)}
#: the kinds users add, by name
USER_KINDS = tuple(name for name, user in KINDS if user)


def kind(name: str):
    """The module of joint kind ``name`` (imports numba)."""
    if name not in CODES:
        raise ValueError(f"unknown joint kind {name!r}: not in trackrider.physics.joints.KINDS")
    return import_module(f"{__name__}.{name}")


def settings(name: str):
    """The settings class of user joint kind ``name``."""
    if name not in USER_KINDS:
        raise ValueError(f"{name!r} is not a joint kind users add ({', '.join(USER_KINDS)})")
    return kind(name).Settings
