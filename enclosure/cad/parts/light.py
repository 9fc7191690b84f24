"""The light bars: a white LED strip behind a diffuser along each long side of the tray, far
enough out that its mirror image in the floor falls outside the picture (geometry.py). Each
clips over the tray's wall; one part, printed twice. Prints standing on its end."""

from __future__ import annotations

import build123d as bd

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.shapes import Solid, box, cut, union
from tidetower.enclosure.geometry import CLEARANCE, layout
from tidetower.enclosure.params import EnclosureParams

BED = (0.0, -90.0, 0.0)
"""Standing on its -x end."""
CHANNEL = 4.0
"""Depth of the strip's channel behind the window (mm)."""
LEG = 8.0
"""The clip's legs down the wall (mm)."""
DIFFUSER = (2.0, 1.0)
"""The diffuser's slot: its thickness, and how far it reaches into the lips (mm)."""


def parts(params: EnclosureParams) -> list[Part]:
    """Two light bars, on the +y and -y walls."""
    solid = build(params)
    other = bd.Rot(0, 0, 180) * solid
    settings = "standing on its end, brim 5 mm; no supports"
    return [
        Part(
            "light_bar",
            "Light bar (LED strip and diffuser)",
            2,
            solid,
            BED,
            settings,
            placed=(solid, other),
        )
    ]


def build(params: EnclosureParams) -> Solid:
    """The +y bar in the world frame: a clip over the wall, a bracket out to the LED channel."""
    lay, t, cl = layout(params), params.wall, CLEARANCE
    y0, h = params.tray_depth / 2, params.tray_wall_height
    y1 = y0 + t
    x = (-lay.tray_outer[0], lay.tray_outer[0])
    w0, w1 = lay.window
    r = lay.light_offset
    back = r + CHANNEL
    pieces = [
        box(x, (y0 - cl - t, back + t), (h + cl, h + cl + t)),  # clip's top, on out to the back
        box(x, (y0 - cl - t, y0 - cl), (h - LEG, h + cl + t)),  # inner leg
        box(x, (y1 + cl, y1 + cl + t), (h - LEG, h + cl + t)),  # outer leg
        box(x, (back, back + t), (h + cl, w1 + t + DIFFUSER[1])),  # the channel's back
        box(x, (r, back), (w1, w1 + t + DIFFUSER[1])),  # top lip, its slot cut from it
        box(x, (r, back), (w0 - t - DIFFUSER[1], w0)),  # bottom lip
    ]
    slot = (r + 0.5, r + 0.5 + DIFFUSER[0])
    grooves = [
        box(x, slot, (w1 - 0.1, w1 + DIFFUSER[1])),
        box(x, slot, (w0 - DIFFUSER[1], w0 + 0.1)),
    ]
    return cut(union(pieces), grooves)
