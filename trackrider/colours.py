"""Colour names and ``#rrggbb`` hex for ``train.color`` (no dependencies)."""
from __future__ import annotations

import re

#: the names ``train.color`` accepts, RGB 0..255
NAMED = {
    "red": (205, 30, 35), "blue": (30, 90, 220), "green": (30, 150, 60), "yellow": (240, 200, 20),
    "orange": (240, 120, 20), "purple": (130, 55, 180), "pink": (235, 90, 160), "teal": (20, 160, 170),
    "cyan": (40, 190, 230), "white": (235, 235, 235), "black": (30, 30, 32), "grey": (128, 128, 132),
    "gray": (128, 128, 132), "silver": (190, 192, 198), "brown": (120, 75, 40), "navy": (25, 35, 110),
    "lime": (120, 210, 40), "maroon": (120, 20, 30), "gold": (215, 170, 40),
}
_HEX = re.compile(r"^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$")


def parse_colour(text: str) -> tuple[int, int, int] | None:
    """RGB 0..255 of a colour name (``NAMED``) or hex (``#1e5adc``, ``#15d``); None if neither."""
    if not isinstance(text, str):
        return None
    t = text.strip().lower()
    if t in NAMED:
        return NAMED[t]
    m = _HEX.match(t)
    if not m:
        return None
    h = m.group(1)
    if len(h) == 3:
        h = "".join(c + c for c in h)
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))
