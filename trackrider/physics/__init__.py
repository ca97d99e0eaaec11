"""Physics core: rigid-body cars on the six-row track joint, couplings, joints, and the
numba solver (exact track blocks, exact chain solve along trains, PGS for bounded rows).

Public: ``World``, ``CarSpec``, ``CouplingSpec``, ``RunStatus``, and ``channels`` (the
recorded column indices). See docs/ARCHITECTURE.md and docs/physics.md. ``World`` and its
specs load numba when first asked for (``channels`` and ``blocks.block_order`` do not).
"""
from trackrider.physics import channels

__all__ = ["World", "CarSpec", "CouplingSpec", "RunStatus", "channels"]


def __getattr__(name):
    if name in ("World", "CarSpec", "CouplingSpec", "RunStatus"):
        from trackrider.physics import world

        return getattr(world, name)
    raise AttributeError(f"module 'trackrider.physics' has no attribute {name!r}")
