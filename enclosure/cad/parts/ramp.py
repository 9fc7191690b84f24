"""The ramp from the tower's exit into the tray: a wedge with two cheeks, standing on the table
and reaching through the notch in the tray's wall to the floor's edge. Prints as it sits."""

from __future__ import annotations

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.shapes import Solid, prism, union
from tidetower.enclosure.chute import chute
from tidetower.enclosure.geometry import CLEARANCE
from tidetower.enclosure.params import EnclosureParams

CHEEK = 20.0
"""Cheeks above the ramp's top (mm)."""


def parts(params: EnclosureParams) -> list[Part]:
    """The ramp, between the tower and the tray."""
    solid = build(params)
    settings = "as it sits, bottom down; no supports"
    return [
        Part("ramp", "Ramp into the tray", 1, solid, (0.0, 0.0, 0.0), settings, placed=(solid,))
    ]


def outline(params: EnclosureParams, rise: float) -> list[tuple[float, float]]:
    """The ramp's side outline in world (x, z), `rise` above its rolling surface: on the table
    from the tower's face to the tray floor's edge, through the notch in the tray's wall."""
    c, t = chute(params), params.wall
    start = c.origin_x + c.half + t + CLEARANCE
    end = -params.tray_width / 2 - CLEARANCE
    return [
        (start, -t),
        (end, -t),
        (end, c.outer_ramp.z(end - c.origin_x) + rise),
        (start, c.outer_ramp.z(start - c.origin_x) + rise),
    ]


def build(params: EnclosureParams) -> Solid:
    """The wedge and its cheeks in the world frame."""
    c, t = chute(params), params.wall
    w = c.width / 2
    wedge = prism(outline(params, 0.0), "y", (-w, w))
    cheeks = [prism(outline(params, CHEEK), "y", span) for span in ((-w - t, -w), (w, w + t))]
    return union([wedge, *cheeks])
