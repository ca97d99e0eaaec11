"""Segments with transitions: arcs and helices eased in and out, and the clothoid loop.

Where a straight meets an arc the curvature jumps, and so does the G a rider
feels (docs/checking.md). A **transition** is a clothoid: its curvature changes
linearly with arc length, so at constant speed the G it adds ramps linearly in
time. The pieces here are those of :mod:`trackrider.curves.segments` (a tangent
turning about a fixed axis at a rate linear in arc length), so every shape is
evaluated exactly:

* ``arc`` with ``transition = L``: a clothoid of ``L`` m from straight to the
  arc's radius, the arc, a clothoid of ``L`` m back to straight, about the
  arc's own axis; ``angle`` is the whole turn, transitions included.
* ``helix`` with ``transition = L``: the same about the helix's axis (its grade
  against the axis is kept throughout); ``turns`` counts the transitions too.
* ``loop`` with ``transition = "clothoid"``: a clothoid loop. Its curvature
  ramps linearly from ``1 / entry_radius`` at the entry (default: straight,
  curvature 0) to ``1 / radius`` at the top — the point where the tangent is
  level, pointing back — and down again to ``1 / entry_radius`` at the exit,
  one whole turn about a horizontal axis tilted (as the circular loop's) so
  that the exit is ``offset`` m beside the entry. Its length is
  ``4π / (cos α (1/entry_radius + 1/radius))``, α the tilt; its top is
  ``radius`` m round, its bottom as gentle as the entry radius.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

#: the ``transition`` words of a loop
LOOP_TRANSITIONS = ("none", "clothoid")


def _err(message, i, key, source):
    return InputError(message, path=source, where=f"segments[{i}].{key}")


def _chain(Piece, P, t, k, rates):
    """Pieces turning about ``k`` one after the other: ``rates`` are ``(w0, w1, length)``."""
    pieces = []
    for w0, w1, length in rates:
        if length <= 1e-12:
            continue
        piece = Piece(P, t, k, w0, w1, length)
        pieces.append(piece)
        P, t, _ = piece.end_state()
    return pieces


def eased(Piece, P, t, k, w, turn, transition, i, source, what):
    """A constant-rate piece of rate ``w`` (rad/m about ``k``) turning ``turn`` rad in all,
    eased in and out by clothoids of ``transition`` m (rates 0 → w → 0)."""
    ease = abs(w) * transition          # the two clothoids together turn by |w| L
    if ease > abs(turn) * (1.0 + 1e-12):
        most = abs(turn) / abs(w)
        raise _err(f"transitions of {transition:g} m turn {what} by {math.degrees(ease):.4g}° between them, "
                   f"more than its {math.degrees(abs(turn)):.4g}° in all (at most {most:.4g} m)",
                   i, "transition", source)
    body = max(0.0, abs(turn) - ease) / abs(w)
    return _chain(Piece, P, t, k, [(0.0, w, transition), (w, w, body), (w, 0.0, transition)])


def loop_top_turn(t, a, w_sign) -> float:
    """|θ| from the entry to the loop's top: where the tangent, turning about ``a``, is level going down.

    T(θ) = t∥ + cos θ t⊥ + sin θ (a × t⊥) (θ of sign ``w_sign``); its height component is
    ``A + B cos θ + C sin θ``, zero at two angles; the top is the one where it falls.
    """
    tpar = np.dot(t, a) * a
    tperp = t - tpar
    axt = np.cross(a, tperp)
    A, B, C = tpar[2], tperp[2], w_sign * axt[2]      # with θ = w_sign · φ, φ ≥ 0
    rho = math.hypot(B, C)
    if rho < 1e-12 or abs(A) >= rho:
        return math.pi
    delta = math.atan2(C, B)
    best = math.pi
    for root in (delta + math.acos(-A / rho), delta - math.acos(-A / rho)):
        phi = root % (2.0 * math.pi)
        slope = -B * math.sin(phi) + C * math.cos(phi)          # d height / dφ
        if slope < 0.0 and 1e-9 < phi < 2.0 * math.pi - 1e-9:
            best = phi
    return best


def clothoid_loop(Piece, P, t, left, R, entry_radius, offset, sign, i, source):
    """The two pieces of a clothoid loop (module docstring); ``sign`` +1 exits left, −1 right."""
    if not entry_radius >= R:
        raise _err(f"must be at least the loop's radius ({R:g} m) at its top, got {entry_radius:g}",
                   i, "entry_radius", source)
    inv = 1.0 / R + (0.0 if math.isinf(entry_radius) else 1.0 / entry_radius)
    alpha = math.atan(offset * inv / (4.0 * math.pi))         # drift along the axis: L sin α = offset
    a = math.sin(alpha) * t + sign * math.cos(alpha) * left
    a /= np.linalg.norm(a)
    c = math.cos(alpha)
    w_top = -sign * c / R
    w_entry = 0.0 if math.isinf(entry_radius) else -sign * c / entry_radius
    top = loop_top_turn(t, a, -sign)
    mean = 0.5 * (abs(w_top) + abs(w_entry))
    return _chain(Piece, P, t, a, [(w_entry, w_top, top / mean), (w_top, w_entry, (2.0 * math.pi - top) / mean)])


def loop_length(radius, offset, entry_radius=math.inf) -> float:
    """Arc length of a clothoid loop, m (module docstring)."""
    inv = 1.0 / radius + (0.0 if math.isinf(entry_radius) else 1.0 / entry_radius)
    alpha = math.atan(offset * inv / (4.0 * math.pi))
    return 4.0 * math.pi / (math.cos(alpha) * inv)
