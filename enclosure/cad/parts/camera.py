"""The camera plate: hangs under the mast's arm, the camera board on four standoffs below it
with the lens looking straight down. One hole pattern fits both boards (21 x 12.5 mm, M2)."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.parts.mast import CAMERA_SCREWS
from tidetower.enclosure.cad.shapes import Solid, box, cut, rod, union
from tidetower.enclosure.cameras import CAMERAS
from tidetower.enclosure.geometry import PLATE, STANDOFF, layout
from tidetower.enclosure.params import EnclosureParams

BED = (180.0, 0.0, 0.0)
"""Flipped: the standoffs point up as it prints."""
M2_HOLE = 2.4
M3_HOLE = 3.4
STANDOFF_DIAMETER = 6.0
MARGIN = 4.5
"""Plate beyond the board on each side (mm)."""


def parts(params: EnclosureParams) -> list[Part]:
    """The camera plate under the arm's end."""
    solid = build(params)
    settings = "standoffs up; no supports"
    return [Part("camera_mount", "Camera plate", 1, solid, BED, settings, placed=(solid,))]


def holes(params: EnclosureParams) -> list[tuple[float, float]]:
    """The board's mounting holes in world (x, y): the board centred over the tray, its top
    edge at -y and its cable edge at +y, towards the mast's arm groove."""
    camera = layout(params).camera
    (_bw, bh), (dx, dy) = camera.board, camera.holes
    top = -bh / 2 + camera.hole_inset
    return [(sx * dx / 2, top + row * dy) for sx in (-1, 1) for row in (0, 1)]


def build(params: EnclosureParams) -> Solid:
    """The plate, its standoffs and holes, in the world frame."""
    lay = layout(params)
    widest = max(c.board for c in CAMERAS.values())
    half = (widest[0] / 2 + MARGIN, widest[1] / 2 + MARGIN)
    top = lay.arm_bottom
    plate = box((-half[0], half[0]), (-half[1], half[1]), (top - PLATE, top))
    posts = [
        rod(STANDOFF_DIAMETER, (x, y, top - PLATE - STANDOFF), (x, y, top - PLATE + 0.5))
        for x, y in holes(params)
    ]
    body = union([plate, *posts])
    through = [
        rod(M2_HOLE, (x, y, top - PLATE - STANDOFF - 1), (x, y, top + 1)) for x, y in holes(params)
    ]
    through += [rod(M3_HOLE, (x, 0.0, top - PLATE - 1), (x, 0.0, top + 1)) for x in CAMERA_SCREWS]
    return cut(body, through)
