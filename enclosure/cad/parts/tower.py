"""The tower: a hollow column with baffles that tumble the dice, an inner ramp to the exit,
and the break-beam's two sensor pockets at the exit. Prints upright, no supports."""

from __future__ import annotations

import math

from tidetower.enclosure.cad.model import Part
from tidetower.enclosure.cad.shapes import Solid, box, cut, prism, teardrop, union
from tidetower.enclosure.chute import EXIT_HEIGHT, Baffle, Chute, chute
from tidetower.enclosure.params import EnclosureParams

BED = (0.0, 0.0, 0.0)
UP = (0.0, 0.0, 1.0)
BEAM_HOLE = 3.4
"""A 3 mm IR LED with room to slide."""
BEAM_POCKET = (11.0, 8.0)
"""Room for each break-beam half's housing, along the tower (x) and out from the wall (y);
sized for 3 mm break-beam pairs such as Adafruit's 2167: measure yours."""
BOSS = 14.0
"""How far the sensor bosses stand out from the side walls (mm)."""


def parts(params: EnclosureParams) -> list[Part]:
    """The tower, placed beside the tray's -x wall."""
    solid = build(params)
    settings = "upright, as it stands; no supports (baffles slope 45°, the exit has a pointed top)"
    return [Part("tower", "Tower with baffles", 1, solid, BED, settings, placed=(solid,))]


def build(params: EnclosureParams) -> Solid:
    """The tower in the world frame."""
    c = chute(params)
    t, ox, half, w = params.wall, c.origin_x, c.half, c.width / 2
    body = box((ox - half - t, ox + half + t), (-w - t, w + t), (-t, c.top))
    bosses = [_boss(c, t, side) for side in (-1, 1)]
    hollow = prism(_above_ramp(c), "y", (-w, w))
    body = cut(union([body, *bosses]), [hollow])
    body = union([body, *(_baffle(c, b, params.baffle_angle) for b in c.baffles)])
    holes = [_exit(c, t), *(_pocket(c, t, side) for side in (-1, 1))]
    beam = (ox + c.beam[0], c.beam[1])
    span = w + t + BOSS + 1
    holes.append(teardrop(BEAM_HOLE, (beam[0], -span, beam[1]), (beam[0], span, beam[1]), UP))
    return cut(body, holes)


def _above_ramp(c: Chute) -> list[tuple[float, float]]:
    """The inside above the inner ramp, in (x, z), open at the top."""
    ox, half = c.origin_x, c.half
    return [
        (ox - half, c.ramp.z(-half)),
        (ox + half, c.ramp.z(half)),
        (ox + half, c.top + 1),
        (ox - half, c.top + 1),
    ]


def _baffle(c: Chute, baffle: Baffle, angle_deg: float) -> Solid:
    """A baffle plate from its wall to a square-cut tip."""
    a, t, s = math.radians(angle_deg), c.thickness, baffle.side
    tip_x, tip_z = baffle.tip
    wall_x = s * (c.half + t / 2)  # into the wall, so the two fuse
    drop = t / math.cos(a)
    outline = [
        (wall_x, baffle.top.z(wall_x)),
        (tip_x, tip_z),
        (tip_x + s * t * math.sin(a), tip_z - t * math.cos(a)),
        (wall_x, baffle.top.z(wall_x) - drop),
    ]
    shifted = [(x + c.origin_x, z) for x, z in outline]
    return prism(shifted, "y", (-c.width / 2, c.width / 2))


def _exit(c: Chute, t: float) -> Solid:
    """The exit in the +x wall: straight sides the ball clears, then a 45° pointed top."""
    w, x = c.width / 2, c.origin_x + c.half
    side = EXIT_HEIGHT + c.exit_height
    outline = [(-w, EXIT_HEIGHT), (w, EXIT_HEIGHT), (w, side), (0.0, side + w), (-w, side)]
    return prism(outline, "x", (x - 1, x + t + 1))


def _boss(c: Chute, t: float, side: int) -> Solid:
    """A block on a side wall, from the table up past the beam, that holds a sensor half."""
    x = c.origin_x + c.beam[0]
    y0 = c.width / 2 + t - 0.5
    ys = (y0, y0 + BOSS + 0.5) if side > 0 else (-y0 - BOSS - 0.5, -y0)
    return box((x - BEAM_POCKET[0] / 2 - t, x + BEAM_POCKET[0] / 2 + t), ys, (-t, c.beam[1] + 8))


def _pocket(c: Chute, t: float, side: int) -> Solid:
    """The sensor half's pocket, open at the top, its LED against the wall's hole."""
    x = c.origin_x + c.beam[0]
    y0 = c.width / 2 + t
    ys = (y0, y0 + BEAM_POCKET[1]) if side > 0 else (-y0 - BEAM_POCKET[1], -y0)
    return box((x - BEAM_POCKET[0] / 2, x + BEAM_POCKET[0] / 2), ys, (c.beam[1] - 5, c.beam[1] + 9))
