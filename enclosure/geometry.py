"""Where the camera, tray, light and mast go, worked out from the parameters: pure math, no CAD,
so the tower on the Pi can know the die size in pixels its camera should see.

World frame: x along the tray's long side (the picture's rows), y along its short side, z up;
the origin is the centre of the tray floor's top, where the dice lie. The camera looks straight
down from above the origin; the tower stands at -x, the camera mast at +x."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from tidetower.enclosure.cameras import CAMERAS, CameraSpec
from tidetower.enclosure.params import EnclosureParams

SPREAD = 4.0
"""The tray floor is at least this many times the dice's own footprint, so they settle apart."""
CLEARANCE = 0.3
"""Gap between printed parts that slide together (mm)."""
MAST = (26.0, 12.0)
"""The camera mast's section: across (x) and thick (y) (mm)."""
PLATE = 3.0
"""The camera plate's thickness (mm)."""
STANDOFF = 4.0
"""The camera board's standoffs under the plate, clear of its connector (mm)."""
WINDOW_SPARE = 2.0
"""The light bar's window is this much taller than its LED strip (mm)."""


@dataclass(frozen=True)
class Layout:
    """The numbers every part and check shares, derived once from the parameters."""

    params: EnclosureParams
    camera: CameraSpec
    tan_h: float
    """tan of half the field of view along x, at the capture size (cropped to its aspect)."""
    tan_v: float
    """The same along y."""
    lens_height: float
    """The lens front above the tray floor (mm)."""
    light_offset: float
    """|y| of the light bars' windows (mm)."""
    mast_x: float
    """x of the mast's inner face (mm): outside the picture at floor level."""

    @property
    def tray_outer(self) -> tuple[float, float]:
        """Half-extents of the tray's outside walls (mm)."""
        p = self.params
        return (p.tray_width / 2 + p.wall, p.tray_depth / 2 + p.wall)

    @property
    def window(self) -> tuple[float, float]:
        """Bottom and top of the light bars' windows above the floor (mm)."""
        half = (self.params.light_strip_width + WINDOW_SPARE) / 2
        return (self.params.light_height - half, self.params.light_height + half)

    @property
    def arm_bottom(self) -> float:
        """The camera arm's underside above the floor: lens + module + standoffs + plate."""
        return self.lens_height + self.camera.depth + STANDOFF + PLATE

    def footprint(self, z: float = 0.0) -> tuple[float, float]:
        """Half-extents of what the camera sees at height z (mm)."""
        reach = self.lens_height - z
        return (reach * self.tan_h, reach * self.tan_v)

    def pixel(self, x: float, y: float, z: float = 0.0) -> tuple[float, float]:
        """Where a world point lands in the picture (column, row), at the capture size."""
        w, h = self.params.capture
        reach = self.lens_height - z
        return (w / 2 + x / reach * (w / 2) / self.tan_h, h / 2 + y / reach * (h / 2) / self.tan_v)

    def die_px(self, size: float | None = None) -> float:
        """Pixels a die spans lying on the floor (its top is nearer, so larger: a lower bound)."""
        size = self.params.min_die if size is None else size
        return size * self.params.capture[0] / (2 * self.lens_height * self.tan_h)


@dataclass(frozen=True)
class DieSize:
    """The die size calibration expects from the enclosure and the one it measures."""

    expected: float
    """Pixels a min_die die spans, from the camera's height and lens."""
    measured: float
    """The same from the tray floor calibration found: its pixels over its millimetres."""
    tolerance: float

    @property
    def off_by(self) -> float:
        """The measured size's difference from the expected, as a fraction of it."""
        return self.measured / self.expected - 1

    @property
    def agrees(self) -> bool:
        return abs(self.off_by) <= self.tolerance


def die_size_check(
    params: EnclosureParams,
    tray: tuple[float, float, float, float],
    frame: tuple[int, int],
) -> DieSize:
    """Compare the die size the enclosure promises with what a calibration frame shows: the
    tray region found (normalised x0, y0, x1, y1) against the tray floor's millimetres."""
    lay = layout(params)
    scale = frame[0] / params.capture[0]  # a frame of another size, the same picture
    width_px, depth_px = (tray[2] - tray[0]) * frame[0], (tray[3] - tray[1]) * frame[1]
    per_mm = (width_px / params.tray_width + depth_px / params.tray_depth) / 2
    return DieSize(lay.die_px() * scale, per_mm * params.min_die, params.die_px_tolerance)


def field_of_view(camera: CameraSpec, capture: tuple[int, int]) -> tuple[float, float]:
    """tan of the half-angles seen at a capture size: the sensor is scaled to the capture's
    aspect by cropping the side that is too long (a 4:3 capture of the 16:9 Camera Module 3
    loses width)."""
    tan_h, tan_v = (math.tan(math.radians(a) / 2) for a in camera.fov)
    aspect = capture[0] / capture[1]
    if aspect < tan_h / tan_v:
        return (tan_v * aspect, tan_v)
    return (tan_h, tan_h / aspect)


@cache
def layout(params: EnclosureParams) -> Layout:
    """The derived layout: the camera just high enough to see the floor and its margin."""
    camera = CAMERAS[params.camera]
    tan_h, tan_v = field_of_view(camera, params.capture)
    half_x = params.tray_width / 2 + params.frame_margin
    half_y = params.tray_depth / 2 + params.frame_margin
    lens = max(half_x / tan_h, half_y / tan_v)
    window_top = params.light_height + (params.light_strip_width + WINDOW_SPARE) / 2
    light = (lens + window_top) * tan_v + params.glare_margin
    tray_x = params.tray_width / 2 + params.wall
    mast_x = max(tray_x + 2 * params.wall, lens * tan_h + 2.0)
    return Layout(params, camera, tan_h, tan_v, lens, light, mast_x)


def glare_pixels(lay: Layout, lights: list[Rect], grid: int = 64) -> int:
    """Rays from the camera through a grid x grid sample of the picture, mirrored by a flat
    floor: how many meet a light. Each is a glare spot in the picture."""
    w, h = lay.params.capture
    seen = 0
    for i in range(grid):
        for j in range(grid):
            u, v = (i + 0.5) * w / grid, (j + 0.5) * h / grid
            ray = ((u - w / 2) / (w / 2) * lay.tan_h, (v - h / 2) / (h / 2) * lay.tan_v)
            if any(light.mirrored_hit(lay.lens_height, ray) for light in lights):
                seen += 1
    return seen


def glare_in_picture(lay: Layout, light: Rect) -> bool:
    """Whether the light's mirror image in the floor overlaps the picture at all: exact, where
    the ray sample could slip past a thin sliver."""
    w, h = lay.params.capture
    image = [lay.pixel(x, y, -z) for x, y, z in light.corners()]
    frame = [(0.0, 0.0), (float(w), 0.0), (float(w), float(h)), (0.0, float(h))]
    return _overlap(image, frame)


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
    """Whether two convex polygons share more than an edge (separating axes)."""
    for poly in (a, b):
        for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True):
            normal = (y0 - y1, x1 - x0)
            pa = [normal[0] * x + normal[1] * y for x, y in a]
            pb = [normal[0] * x + normal[1] * y for x, y in b]
            if max(pa) <= min(pb) + 1e-9 or max(pb) <= min(pa) + 1e-9:
                return False
    return True


@dataclass(frozen=True)
class Rect:
    """A light's emitting face: an axis-aligned rectangle square to x, y or z."""

    axis: int
    """0, 1, 2: the face lies in the plane x, y or z = at."""
    at: float
    spans: tuple[tuple[float, float], tuple[float, float]]
    """Its extent along the other two axes, in x-y-z order (mm)."""

    def corners(self) -> list[tuple[float, float, float]]:
        """Its four corners, in order round it."""
        (a0, a1), (b0, b1) = self.spans
        out = []
        for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1)):
            point = [a, b]
            point.insert(self.axis, self.at)
            out.append((point[0], point[1], point[2]))
        return out

    def mirrored_hit(self, lens: float, ray: tuple[float, float]) -> bool:
        """Whether the camera ray (dx, dy per unit fall), mirrored by the floor z = 0, meets
        this face: after the floor the ray climbs at the same slope."""
        if self.axis == 2:
            travel = lens + self.at  # down to the floor, then up to the face
        else:
            slope = ray[self.axis]
            if slope == 0 or (self.at > 0) != (slope > 0):
                return False
            travel = self.at / slope
        point = [ray[0] * travel, ray[1] * travel, travel - lens]
        if point[2] < 0:
            return False  # the ray meets the face's plane before the floor: no mirror
        del point[self.axis]
        (a0, a1), (b0, b1) = self.spans
        return a0 <= point[0] <= a1 and b0 <= point[1] <= b1


def light_windows(lay: Layout) -> list[Rect]:
    """The two light bars' windows, along the tray's long sides."""
    half = lay.tray_outer[0]
    return [Rect(1, side * lay.light_offset, ((-half, half), lay.window)) for side in (-1, 1)]


def shadow_band(lay: Layout) -> float:
    """Width of the floor band along each long wall that its own bar, looking over the wall,
    cannot light (the other bar does) (mm)."""
    p = lay.params
    wall_y = p.tray_depth / 2
    rise = lay.params.light_height - p.tray_wall_height
    return p.tray_wall_height * (lay.light_offset - wall_y) / rise if rise > 0 else math.inf
