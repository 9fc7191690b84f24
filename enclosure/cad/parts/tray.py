"""The tray the camera reads: a floor with low walls, a notch for the ramp at -x and the
camera mast's socket at +x. Prints floor down, no supports."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.shapes import Solid, box, cut, teardrop, union
from tidetower.enclosure.chute import chute
from tidetower.enclosure.geometry import CLEARANCE, MAST, layout
from tidetower.enclosure.params import EnclosureParams

LOCK_SCREW = 3.4
"""The mast's M3 locking screw, with room."""


def parts(params: EnclosureParams) -> list[Part]:
    """The tray, centred on the world origin."""
    solid = build(params)
    settings = "floor down; no supports (the lock-screw hole has a 45° pointed top)"
    return [Part("tray", "Dice tray", 1, solid, (0.0, 0.0, 0.0), settings, placed=(solid,))]


def build(params: EnclosureParams) -> Solid:
    """The tray in the world frame."""
    lay, t, h = layout(params), params.wall, params.tray_wall_height
    ox, oy = lay.tray_outer
    ix, iy = params.tray_width / 2, params.tray_depth / 2
    shell = box((-ox, ox), (-oy, oy), (-t, h))
    socket_y = MAST[1] / 2 + CLEARANCE
    socket_x = (ox - 1, lay.mast_x + MAST[0] + CLEARANCE + t)
    socket = box(socket_x, (-socket_y - t, socket_y + t), (-t, h))
    notch_y = chute(params).width / 2 + t + CLEARANCE
    holes = [
        box((-ix, ix), (-iy, iy), (0.0, h + 1)),
        box((-ox - 1, -ix), (-notch_y, notch_y), (-t - 1, h + 1)),  # the wall only, to the table
        box(
            (lay.mast_x - CLEARANCE, lay.mast_x + MAST[0] + CLEARANCE),
            (-socket_y, socket_y),
            (0.0, h + 1),
        ),
        _lock(lay.mast_x + MAST[0] / 2, socket_y + t + 1, h / 2),
    ]
    return cut(union([shell, socket]), holes)


def _lock(x: float, y: float, z: float) -> Solid:
    """The locking screw's hole across the socket (and the mast in it)."""
    return teardrop(LOCK_SCREW, (x, -y, z), (x, y, z), (0.0, 0.0, 1.0))
