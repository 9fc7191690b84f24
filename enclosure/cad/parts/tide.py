"""The Tide bar's channel along the table's edge: a WS2812 strip under a diffuser, in
sections that fit the printer, joined by printed dovetail keys slid into a groove along the
back. Not part of the tower's assembly: it lies on the table's edge."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.shapes import Solid, box, cut, prism, union
from tidetower.enclosure.fit import tide_sections
from tidetower.enclosure.geometry import CLEARANCE
from tidetower.enclosure.params import EnclosureParams

BASE = 4.0
"""The channel's floor (mm): the key's groove takes half."""
SIDE = 10.0
"""Side walls above the floor (mm)."""
DOVETAIL = (6.0, 9.0, 2.0)
"""The key's groove: width at the back face, width inside, depth (mm)."""
KEY_LENGTH = 30.0
DIFFUSER = (2.0, 1.0)
"""The diffuser strip's slot near the top: thickness, and reach into each wall (mm)."""


def parts(params: EnclosureParams) -> list[Part]:
    """The channel's sections (all alike) and the keys between them."""
    count, length = tide_sections(params)
    channel = section(params, length)
    parts = [Part("tide_channel", f"Tide bar channel, {length:.0f} mm section", count, channel,
                  (0.0, -90.0, 0.0), "standing on its end, brim 5 mm; no supports")]  # fmt: skip
    if count > 1:
        parts.append(Part("tide_key", "Tide bar key", count - 1, key(), (180.0, 0.0, 0.0),
                          "wide face down; no supports"))  # fmt: skip
    return parts


def inner_half(params: EnclosureParams) -> float:
    """Half the strip's room across (mm)."""
    return params.tide_strip_width / 2 + 0.5


def section(params: EnclosureParams, length: float) -> Solid:
    """One section along x from 0, its back on the table's edge at z = 0."""
    t, half = params.wall + DIFFUSER[1], inner_half(params)  # the slot cuts into the sides
    x = (0.0, length)
    floor = box(x, (-half - t, half + t), (0.0, BASE))
    sides = [box(x, y, (0.0, BASE + SIDE)) for y in ((-half - t, -half), (half, half + t))]
    top = BASE + SIDE - 1.0
    slot = [box(x, (-half - DIFFUSER[1], half + DIFFUSER[1]), (top - DIFFUSER[0], top))]
    return cut(union([floor, *sides]), [*slot, dovetail(x, 0.0)])


def dovetail(x: tuple[float, float], shrink: float) -> Solid:
    """The dovetail's solid along x: the groove (shrink 0) or the key that fits it."""
    narrow, wide, deep = DOVETAIL[0] / 2 - shrink, DOVETAIL[1] / 2 - shrink, DOVETAIL[2] - shrink
    outline = [
        (-narrow, -0.01 if shrink == 0 else 0.0),
        (narrow, -0.01 if shrink == 0 else 0.0),
        (wide, deep),
        (-wide, deep),
    ]
    return prism(outline, "x", (x[0] - 0.01, x[1] + 0.01) if shrink == 0 else x)


def key() -> Solid:
    """A key: half of it in each of two sections' grooves."""
    return dovetail((0.0, KEY_LENGTH), CLEARANCE / 2)
