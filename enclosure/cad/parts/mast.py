"""The camera mast: a column standing in the tray's socket, and an arm screwed on its top that
holds the camera plate over the tray's middle; a groove down both for the camera's ribbon
cable. The column prints standing, the arm lying on its side."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part, up_for
from tidetower.enclosure.cad.shapes import Solid, box, cut, rod, teardrop
from tidetower.enclosure.fit import ARM
from tidetower.enclosure.geometry import MAST, layout
from tidetower.enclosure.params import EnclosureParams

COLUMN_BED = (0.0, 0.0, 0.0)
ARM_BED = (90.0, 0.0, 0.0)
"""The arm lies on its -y face, the ribbon groove up."""
GROOVE = (17.0, 1.5)
"""The ribbon cable's groove: width and depth (a camera cable is 16 mm wide at most)."""
GROOVE_EDGE = 2.0
"""The groove's distance from the column's inner face: the Pi plate's pilots go beside it."""
PILOT = 2.5
"""Pilot hole for an M3 screw cutting its own thread."""
M3_HOLE = 3.4
CAMERA_SCREWS = (-5.0, 5.0)
"""x of the camera plate's two screws into the arm."""
JOINT_SCREWS = (6.0, 21.0)
"""The arm's two screws into the column's top, from the column's inner face (mm)."""
PI_SCREWS = (10.0, 56.0)
"""Heights of the Pi plate's two screws into the column, above the plate's bottom."""
PI_BOTTOM_ABOVE_WALL = 4.0
"""The Pi plate's bottom, above the tray wall's top (clear of the socket)."""


def parts(params: EnclosureParams) -> list[Part]:
    """The column in its socket at +x and the arm on its top."""
    column, arm = build_column(params), build_arm(params)
    return [
        Part("camera_mast", "Camera mast (column)", 1, column, COLUMN_BED,
             "standing, brim 5 mm; no supports (side holes are teardrops)", placed=(column,)),
        Part("camera_arm", "Camera arm", 1, arm, ARM_BED,
             "lying on its side, groove up; no supports (teardrop holes)", placed=(arm,)),
    ]  # fmt: skip


def arm_tip(params: EnclosureParams) -> float:
    """x of the arm's end over the tray: it carries the whole camera plate."""
    return -(layout(params).camera.board[0] / 2 + 2 * params.wall)


def pi_bottom(params: EnclosureParams) -> float:
    """z of the Pi plate's bottom edge."""
    return params.tray_wall_height + PI_BOTTOM_ABOVE_WALL


def _groove_x(params: EnclosureParams) -> tuple[float, float]:
    x = layout(params).mast_x + GROOVE_EDGE
    return (x, x + GROOVE[0])


def build_column(params: EnclosureParams) -> Solid:
    """The column in the world frame, from the socket's floor up to the arm."""
    lay, y = layout(params), MAST[1] / 2
    x0, top = lay.mast_x, lay.arm_bottom
    body = box((x0, x0 + MAST[0]), (-y, y), (0.0, top))
    groove = box(_groove_x(params), (y - GROOVE[1], y + 1), (pi_bottom(params) + 30, top + 1))
    mid, lock = x0 + MAST[0] / 2, params.tray_wall_height / 2
    up = up_for(COLUMN_BED)
    holes = [groove, teardrop(M3_HOLE, (mid, -y - 1, lock), (mid, y + 1, lock), up)]
    px = x0 + MAST[0] - 3.5
    holes += [
        teardrop(PILOT, (px, y - 9, pi_bottom(params) + z), (px, y + 1, pi_bottom(params) + z), up)
        for z in PI_SCREWS
    ]
    holes += [rod(PILOT, (x0 + dx, 0.0, top - 12), (x0 + dx, 0.0, top + 1)) for dx in JOINT_SCREWS]
    return cut(body, holes)


def build_arm(params: EnclosureParams) -> Solid:
    """The arm in the world frame, its end over the column's top."""
    lay, y = layout(params), MAST[1] / 2
    low, high = lay.arm_bottom, lay.arm_bottom + ARM
    far = lay.mast_x + MAST[0]
    body = box((arm_tip(params), far), (-y, y), (low, high))
    gx, band = _groove_x(params), (y - GROOVE[1], y + 1)
    gz = (low + (ARM - GROOVE[0]) / 2, low + (ARM + GROOVE[0]) / 2)
    holes = [box((arm_tip(params) + 10, gx[1]), band, gz), box(gx, band, (low - 1, gz[1]))]
    up = up_for(ARM_BED)
    holes += [teardrop(PILOT, (x, 0.0, low - 1), (x, 0.0, low + 10), up) for x in CAMERA_SCREWS]
    joints = [lay.mast_x + dx for dx in JOINT_SCREWS]
    holes += [teardrop(M3_HOLE, (x, 0.0, low - 1), (x, 0.0, high + 1), up) for x in joints]
    return cut(body, holes)
