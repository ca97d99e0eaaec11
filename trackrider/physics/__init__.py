"""Physics core: rigid-body cars on the six-row track joint, couplings, joints, and the
numba solver (exact track blocks, exact chain solve along trains, PGS for bounded rows).

Public: ``World``, ``CarSpec``, ``CouplingSpec``, ``RunStatus``, and ``channels`` (the
recorded column indices). See docs/ARCHITECTURE.md and docs/physics.md.
"""
from trackrider.physics import channels
from trackrider.physics.world import CarSpec, CouplingSpec, RunStatus, World

__all__ = ["World", "CarSpec", "CouplingSpec", "RunStatus", "channels"]
