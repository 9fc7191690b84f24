"""The Raspberry Pi 4/5 plate: screwed to the camera mast's side, the Pi on four standoffs
(58 x 49 mm, M2.5), a slot where the camera's ribbon comes out of the mast's groove, and
slots for cable ties. Prints flat, standoffs up."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.parts.mast import GROOVE, GROOVE_EDGE, PI_SCREWS, pi_bottom
from tidetower.enclosure.cad.shapes import Solid, box, cut, rod, union
from tidetower.enclosure.geometry import MAST, layout
from tidetower.enclosure.params import EnclosureParams

BED = (90.0, 0.0, 0.0)
"""Lying on its mast side, standoffs up."""
SIZE = (95.0, 66.0)
"""The plate, along x and z (mm): a Pi is 85 x 56."""
PI_HOLES = ((3.5, 3.5), (61.5, 3.5), (3.5, 52.5), (61.5, 52.5))
"""The Pi 4's and Pi 5's mounting holes from the board's corner (58 x 49 mm)."""
PI_CORNER = (8.0, 5.0)
"""The Pi board's corner on the plate, from the plate's corner (mm)."""
STANDOFF = (6.0, 6.0)
"""Standoff diameter and height (mm)."""
M25_PILOT = 2.2
"""Pilot for an M2.5 screw cutting its own thread."""
TIE_SLOT = (3.0, 5.0)


def parts(params: EnclosureParams) -> list[Part]:
    """The Pi plate on the mast's +y face."""
    solid = build(params)
    settings = "flat, standoffs up; no supports"
    return [Part("pi_mount", "Raspberry Pi 4/5 plate", 1, solid, BED, settings, placed=(solid,))]


def corner(params: EnclosureParams) -> tuple[float, float]:
    """The plate's lower corner nearest the tray, in world (x, z)."""
    return (layout(params).mast_x - 2.0, pi_bottom(params))


def build(params: EnclosureParams) -> Solid:
    """The plate in the world frame: in the x-z plane against the mast's +y face."""
    t, lay = params.wall, layout(params)
    (x0, z0), y0 = corner(params), MAST[1] / 2
    plate = box((x0, x0 + SIZE[0]), (y0, y0 + t), (z0, z0 + SIZE[1]))
    spots = [(x0 + PI_CORNER[0] + hx, z0 + PI_CORNER[1] + hz) for hx, hz in PI_HOLES]
    posts = [rod(STANDOFF[0], (x, y0 + t - 0.5, z), (x, y0 + t + STANDOFF[1], z)) for x, z in spots]
    holes = [rod(M25_PILOT, (x, y0 - 1, z), (x, y0 + t + STANDOFF[1] + 1, z)) for x, z in spots]
    screw_x = lay.mast_x + MAST[0] - 3.5
    holes += [rod(3.4, (screw_x, y0 - 1, z0 + z), (screw_x, y0 + t + 1, z0 + z)) for z in PI_SCREWS]
    gx = lay.mast_x + GROOVE_EDGE
    holes.append(box((gx, gx + GROOVE[0]), (y0 - 1, y0 + t + 1), (z0 + 30, z0 + 34)))  # ribbon
    for z in (z0 + 20, z0 + 46):  # cable ties, at the far edge
        tx = x0 + SIZE[0] - 6
        holes.append(box((tx, tx + TIE_SLOT[0]), (y0 - 1, y0 + t + 1), (z, z + TIE_SLOT[1])))
    return cut(union([plate, *posts]), holes)
