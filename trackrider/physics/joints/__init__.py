"""Joint kinds: one module each (its derivation, its rows), this registry and the dispatch.

A joint kind is a module here with ``prepare(j, joints, bodies, h, erp_h, rows)``: it fills
the rows of joint ``j`` (``rows.J``, ``target``, bounds ``lo``/``hi``, softness ``gamma``, the
row count ``m``) from the bodies' state and its parameters (``joints.param``, columns in
``common.py``). ``reset_rows`` has already cleared rows 0–2 (unbounded, rigid). The solve is
generic over rows (``rows.py``: a PGS block update per joint; ``couplings.py``: the exact chain
solve of a train's couplers), so a kind has no solve of its own.

A module also has ``columns(created)``, plain Python run when ``World`` creates the joint: it
fills the kind's parameter columns from its settings and the bodies' start (``common.Created``)
and returns the extra rows it needs (a hinge's limit or motor, a prismatic joint's limit or
spring) as ``(kind name, one-sided, columns)``.

Adding a kind: its module (``prepare``, ``columns``), one line in ``KINDS`` and ``USER_KINDS``
and one branch in ``prepare_joint`` below, its settings class in ``trackrider/settings.py``
(``JOINTS``: its parameters, defaults and bounds), and its tests.
"""
from __future__ import annotations

from trackrider.jit import njit
from trackrider.physics.joints import ball, ball_track, distance, hinge, hinge_axis, prismatic, pulley, slide
from trackrider.physics.joints.common import reset_rows

# kind codes (Joints.kind); the names are those of World.add_joint where a user adds them
KINDS = {
    "distance": 0,      # distance.py
    "ball": 1,          # ball.py
    "pulley": 2,        # pulley.py
    "ball_track": 3,    # ball_track.py: a train's ball coupler, its row along the track
    "hinge": 4,         # hinge.py
    "prismatic": 5,     # prismatic.py
    "hinge_axis": 6,    # hinge_axis.py: a hinge's limit or motor row
    "slide": 7,         # slide.py: a prismatic joint's limit or spring row
}
J_DISTANCE, J_BALL, J_PULLEY, J_BALL_TRACK = KINDS["distance"], KINDS["ball"], KINDS["pulley"], KINDS["ball_track"]
J_HINGE, J_PRISMATIC, J_HINGE_AXIS, J_SLIDE = KINDS["hinge"], KINDS["prismatic"], KINDS["hinge_axis"], KINDS["slide"]
# the kinds a train's chain solve takes (one equality row each); the others need free_joints
CHAIN_KINDS = (J_DISTANCE, J_BALL_TRACK)
#: the kinds users add (``World.add_joint``): each module's ``columns`` fills its parameter columns
#: when the joint is created (``common.Created``)
USER_KINDS = {"distance": distance, "ball": ball, "pulley": pulley, "hinge": hinge, "prismatic": prismatic}


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare_joint(j, joints, bodies, h, erp_h, rows, free_joints):
    """Rows of joint ``j`` by its kind. ``free_joints`` is False when every joint of the world is a
    train's chained coupler (the kinds above; the others are then skipped)."""
    kind = joints.kind[j]
    reset_rows(j, rows)
    if kind == J_DISTANCE:
        distance.prepare(j, joints, bodies, h, erp_h, rows, free_joints)
    elif kind == J_BALL_TRACK:
        ball_track.prepare(j, joints, bodies, h, erp_h, rows)
    elif not free_joints:
        pass  # only chained couplers in this world (the kinds above)
    elif kind == J_BALL:
        ball.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_HINGE:
        hinge.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_PRISMATIC:
        prismatic.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_HINGE_AXIS:
        hinge_axis.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_SLIDE:
        slide.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_PULLEY:
        pulley.prepare(j, joints, bodies, h, erp_h, rows)
