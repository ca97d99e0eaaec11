"""The kernels' dispatch of a joint's rows by its kind code (numba chooses the branch at compile time).

One branch per kind of ``joints.KINDS``; a code without one is an error here, never another
kind's rows (``tests/test_registries.py`` walks every code).
"""
from __future__ import annotations

from trackrider.jit import njit
from trackrider.physics.joints import (CODES, ball, ball_track, distance, draft_gear, hinge, hinge_axis, prismatic,
                                       pulley, slide, swivel)
from trackrider.physics.joints.common import reset_rows

J_DISTANCE, J_BALL, J_PULLEY, J_BALL_TRACK = CODES["distance"], CODES["ball"], CODES["pulley"], CODES["ball_track"]
J_HINGE, J_PRISMATIC, J_HINGE_AXIS, J_SLIDE = CODES["hinge"], CODES["prismatic"], CODES["hinge_axis"], CODES["slide"]
J_DRAFT_GEAR, J_SWIVEL = CODES["draft_gear"], CODES["swivel"]


@njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
def prepare_joint(j, joints, bodies, h, erp_h, rows, free_joints):
    """Rows of joint ``j`` by its kind. ``free_joints`` is False when every joint of the world is a
    train's chained coupler (the kinds above; the others are then skipped)."""
    kind = joints.kind[j]
    if kind == J_DISTANCE:   # (clears only its one row: every train's couplers, each step)
        distance.prepare(j, joints, bodies, h, erp_h, rows, free_joints)
        return
    reset_rows(j, rows)
    if kind == J_BALL_TRACK:
        ball_track.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_DRAFT_GEAR:
        draft_gear.prepare(j, joints, bodies, h, erp_h, rows)
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
    elif kind == J_SWIVEL:
        swivel.prepare(j, joints, bodies, h, erp_h, rows)
    elif kind == J_PULLEY:
        pulley.prepare(j, joints, bodies, h, erp_h, rows)
    else:
        raise ValueError("a joint kind without its branch in joints.dispatch.prepare_joint")
