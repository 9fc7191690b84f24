"""The dice's way down: the tower's baffles, its inner ramp and exit, the ramp into the tray,
and a path a ball 1.5 times the largest die's diagonal follows through them. Pure math.

The tower's own frame: x across its depth (the baffles' direction; +x faces the tray), z up
from the tray floor (world z), y across its width. Each surface is a line in (x, z)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

from tidetower.enclosure.geometry import layout
from tidetower.enclosure.params import EnclosureParams

ICOSAHEDRON = 1.2584
"""A d20's vertex-to-vertex size over its face-to-face size."""
PASS = 2.0
"""Room left around the ball on its path (mm)."""
OVERLAP = 5.0
"""How far each baffle reaches past the tower's middle: no straight drop past them (mm)."""
EXIT_HEIGHT = 12.0
"""The inner ramp's lowest point, at the exit, above the tray floor (mm)."""
RAMP_ANGLE = 25.0
"""The inner ramp's slope (degrees)."""
RAMP_RUN = 25.0
"""Gap between the tower and the tray that the ramp part bridges (mm)."""
LIP = 2.0
"""The ramp's end, where dice drop onto the tray floor (mm)."""
RIM = 15.0
"""Tower wall above the top baffle's high end (mm)."""
BEAM_HEIGHT = 6.0
"""The break-beam above the inner ramp: every die sliding or rolling out breaks it (mm)."""
BEAM_SET_BACK = 12.0
"""The beam's distance inside the exit wall (mm)."""


@dataclass(frozen=True)
class Line:
    """z = z0 + slope * (x - x0): a surface in the tower's frame, or a path segment's line."""

    x0: float
    z0: float
    slope: float

    def z(self, x: float) -> float:
        return self.z0 + self.slope * (x - self.x0)

    def raised(self, by: float) -> Line:
        """The line `by` above this one, measured square to it."""
        return Line(self.x0, self.z0 + by * math.hypot(1.0, self.slope), self.slope)


@dataclass(frozen=True)
class Baffle:
    """One baffle: fixed to the wall on `side` (-1: -x, +1: +x), sloping down to its tip."""

    side: int
    tip: tuple[float, float]
    """The tip's top corner (x, z)."""
    top: Line


@dataclass(frozen=True)
class Chute:
    """The tower's inside, the ramp part and the path, all in the tower's frame."""

    ball: float
    """1.5 x the largest die's diagonal: what must pass (mm)."""
    gap: float
    """Each baffle's tip to the opposite wall (mm)."""
    depth: float
    """Inside, along x (mm)."""
    width: float
    """Inside, along y (mm)."""
    thickness: float
    baffles: tuple[Baffle, ...]
    ramp: Line
    """The inner ramp's top, falling to the exit wall at x = depth / 2."""
    outer_ramp: Line
    """The ramp part's top, from the tower's exit to the tray's inner wall."""
    exit_height: float
    """The exit opening's straight sides, above the inner ramp at the wall (mm)."""
    top: float
    """The tower's rim (z, mm)."""
    beam: tuple[float, float]
    """The break-beam's (x, z)."""
    origin_x: float
    """World x of the tower's middle."""
    tray_inner_x: float
    """World x of the tray's inner wall at the tower's side, in the tower's frame."""

    @property
    def half(self) -> float:
        return self.depth / 2

    def path(self) -> list[tuple[float, float]]:
        """Ball centres (x, z) from above the mouth to the tray floor, in the tower's frame."""
        r = self.ball / 2 + PASS
        steps: list[Line | float] = [0.0]  # a float is a vertical drop at that x
        for baffle in self.baffles:
            steps += [baffle.top.raised(r), -baffle.side * (self.half - self.gap / 2)]
        steps += [self.ramp.raised(r), self.outer_ramp.raised(r), Line(0.0, r, 0.0)]
        points = [(0.0, self.top + self.ball)]
        points += [_meet(a, b) for a, b in itertools.pairwise(steps)]
        points.append((self.tray_inner_x + self.ball, r))
        return points


def _meet(a: Line | float, b: Line | float) -> tuple[float, float]:
    """Where two path steps meet: a vertical drop and a line, or two lines."""
    if isinstance(a, float) and isinstance(b, Line):
        return (a, b.z(a))
    if isinstance(a, Line) and isinstance(b, float):
        return (b, a.z(b))
    assert isinstance(a, Line) and isinstance(b, Line)
    x = (b.z0 - a.z0 + a.slope * a.x0 - b.slope * b.x0) / (a.slope - b.slope)
    return (x, a.z(x))


def die_diagonal(params: EnclosureParams) -> float:
    """The largest die's longest span: a cube's space diagonal or a d20 vertex to vertex."""
    return max(params.die_size * math.sqrt(3), params.d20_size * ICOSAHEDRON)


def _baffles(params: EnclosureParams, ball: float, gap: float, ramp: Line) -> list[Baffle]:
    """The baffles from the top down, each as low as the ball's room over the one below (or the
    inner ramp) allows: the perpendicular from its tip's lower corner to the surface below is
    the ball plus PASS on each side."""
    half, t = gap + OVERLAP, params.wall
    angle = math.radians(params.baffle_angle)
    below, below_cos = ramp, math.cos(math.radians(RAMP_ANGLE))
    baffles: list[Baffle] = []
    for k in range(params.baffles):
        side = 1 if k % 2 == 0 else -1  # counted from the bottom: the lowest hangs at +x
        tip_x = -side * (half - gap)
        corner_x = tip_x + side * t * math.sin(angle)
        tip_z = below.z(corner_x) + (ball + 2 * PASS) / below_cos + t * math.cos(angle)
        top = Line(tip_x, tip_z, side * math.tan(angle))
        baffles.append(Baffle(side, (tip_x, tip_z), top))
        below, below_cos = top, math.cos(angle)
    return baffles[::-1]


@cache
def chute(params: EnclosureParams) -> Chute:
    """The tower's inside: room for the ball everywhere, from the inner ramp upwards."""
    ball = 1.5 * die_diagonal(params)
    gap = ball + 2 * PASS
    half, t, r = gap + OVERLAP, params.wall, ball / 2 + PASS
    ramp = Line(half, EXIT_HEIGHT, -math.tan(math.radians(RAMP_ANGLE)))
    baffles = _baffles(params, ball, gap, ramp)
    high = baffles[0].top.z(baffles[0].side * half)
    origin_x = -(layout(params).tray_outer[0] + RAMP_RUN + t + half)
    tray_inner = -params.tray_width / 2 - origin_x
    outer = _outer_ramp(half + t, tray_inner)
    at_wall = max(ramp.raised(r).z(half), outer.raised(r).z(half))
    exit_height = at_wall + r - EXIT_HEIGHT  # the ball's top, PASS under the opening's top
    beam_x = half - BEAM_SET_BACK
    beam = (beam_x, ramp.z(beam_x) + BEAM_HEIGHT)
    return Chute(
        ball, gap, 2 * half, gap + 20.0, t, tuple(baffles), ramp, outer, exit_height,
        high + RIM, beam, origin_x, tray_inner,
    )  # fmt: skip


def _outer_ramp(start: float, end: float) -> Line:
    """From the exit's floor at the tower's outside face down to the lip at the tray's wall."""
    return Line(start, EXIT_HEIGHT, (LIP - EXIT_HEIGHT) / (end - start))
